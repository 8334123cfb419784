"""Builds mbt's optional compiled modules (issue 37): the hot modules of `mbt runs` compiled with mypyc into
mbt/runs/_native/ (ignored by git), which mbt/runs/__init__.py loads in place of the .py files only while every
source the build saw is unchanged.

Usage: `python -m mbt.native_build` (the Makefile's setup step runs it after `pip install -e`). It always exits 0
and prints one line: the build made, the build already up to date, or that mbt runs in pure Python (no compiler, no
mypyc: the .py modules are the source of truth, the compiled ones only run faster and give the same results).

How it stays never stale: the build compiles a snapshot of the whole package (copied to a temporary folder first, so
an edit made while it compiles cannot slip in) and writes, last, `manifest.json` with the sha256 of every .py file of
the snapshot — every module mypy could have read, since mypyc bakes in what it learnt from them (types, constants).
At import, mbt.runs compares those hashes with the files on disk and uses the compiled modules only when all match.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "mbt"
NATIVE = PACKAGE / "runs" / "_native"

# Chosen by measurement (docs/runs.md "Scale"). Never a module that defines msgspec Structs (mypyc breaks their
# defaults: mbt/runs/decoding.py) nor one whose objects cross processes with `--jobs`/`--engine dask` (mypyc's native
# classes do not pickle: mbt/runs/regression.py's RegressionTally travels in parts.Judged). contract_judge is in because
# its GroundedVerdict subclasses judge.Verdict, and an interpreted class cannot inherit from a compiled one.
MODULES = ["genai", "otlp", "judge", "contract_judge", "measure", "engine", "reader"]


def source_hashes(package: Path) -> dict[str, str]:
    """The sha256 of every .py file of the package, by its path relative to the package's parent (`mbt/runs/x.py`)."""
    return {path.relative_to(package.parent).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(package.rglob("*.py")) if "_native" not in path.parts}


def interpreter_tag() -> str:
    """What a compiled module is tied to: the interpreter's ABI (its extension-module suffix)."""
    return importlib.machinery.EXTENSION_SUFFIXES[0]


def up_to_date() -> bool:
    manifest = NATIVE / "manifest.json"
    try:
        recorded = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (recorded.get("interpreter") == interpreter_tag() and recorded.get("modules") == MODULES
            and recorded.get("sources") == source_hashes(PACKAGE))


def build() -> str:
    """Compiles the modules; returns the line to print. Raises on failure (the caller prints the pure-Python line)."""
    with tempfile.TemporaryDirectory(prefix="mbt-native-") as scratch:
        tree = Path(scratch)
        shutil.copytree(PACKAGE, tree / "mbt", ignore=shutil.ignore_patterns("__pycache__", "_native", "*.so"))
        shutil.copy(ROOT / "pyproject.toml", tree / "pyproject.toml")  # mypy's configuration (the pydantic plugin)
        hashes = source_hashes(tree / "mbt")
        files = [f"mbt/runs/{name}.py" for name in MODULES]
        done = subprocess.run([sys.executable, "-m", "mypyc", *files], cwd=tree, capture_output=True, text=True,
                              env={**os.environ, "MYPY_CACHE_DIR": str(tree / ".mypy_cache")})
        if done.returncode != 0:
            said = (done.stdout + done.stderr).strip().splitlines()
            raise RuntimeError(said[-1] if said else f"mypyc exited with {done.returncode}")
        suffix = interpreter_tag()
        shims = {f"mbt.runs.{name}": f"{name}{suffix}" for name in MODULES}
        libraries = [path for path in tree.glob(f"*__mypyc{suffix}")]
        if len(libraries) != 1 or not all((tree / "mbt" / "runs" / shim).is_file() for shim in shims.values()):
            raise RuntimeError("mypyc did not write the expected extension modules")
        staging = NATIVE.with_name("_native.new")
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir()
        for shim in shims.values():
            shutil.copy(tree / "mbt" / "runs" / shim, staging / shim)
        shutil.copy(libraries[0], staging / libraries[0].name)
        manifest = {"interpreter": suffix, "modules": MODULES, "shims": shims,
                    "library": {"name": libraries[0].name.removesuffix(suffix), "file": libraries[0].name},
                    "sources": hashes}
        # Written last: a build cut short leaves no manifest, and so no compiled modules in use.
        (staging / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        shutil.rmtree(NATIVE, ignore_errors=True)
        staging.rename(NATIVE)
    return f"== compiled {len(MODULES)} modules of mbt/runs with mypyc into {NATIVE.relative_to(ROOT)}/"


def main() -> int:
    if up_to_date():
        print(f"== mbt's compiled modules are up to date ({NATIVE.relative_to(ROOT)}/)")
        return 0
    shutil.rmtree(NATIVE, ignore_errors=True)  # a stale build is never used; do not leave it lying around
    try:
        if not sysconfig.get_config_var("CC"):
            raise RuntimeError("no C compiler configured")
        print(build())
    except Exception as error:  # noqa: BLE001 - any failure means the same thing: no compiled build
        print(f"== mbt runs in pure Python: the compiled build failed ({error}); results are identical, only slower")
    return 0


if __name__ == "__main__":
    sys.exit(main())
