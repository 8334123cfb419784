"""Start-up of `mbt runs` (issue 37): judging runs into a JSON report, with the compiled model in the cache, imports
only what that path uses. Model checking (z3, networkx), the parser (lark), the goldens loader, test generation
(jinja2), the Markdown reporter and the protobuf decoder are loaded when a path needs them, and each of those paths
still gives the same report.

These start real processes: what a command imports is only seen in a fresh interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MODEL = "models/orders.fsm"
RUNS = "models/runs/orders-traces.json"
GOLDENS = "models/goldens/orders/"

# Modules (a name, or a package and everything under it) a JSON report of runs on a cached model does not use.
NOT_NEEDED = ("z3", "networkx", "jinja2", "lark", "google.protobuf", "mbt.goldens.loader", "mbt.report.markdown",
              "mbt.analysis", "mbt.generate", "mbt.parsing.grammar")

# Runs mbt.cli.main with argv[1:] in this interpreter, then prints which modules ended up imported.
_WRAPPER = ("import json, sys\nfrom mbt import cli\n"
            "try:\n    cli.main(sys.argv[1:])\nexcept SystemExit as stop:\n    code = stop.code\nelse:\n    code = 0\n"
            "print(json.dumps({'code': code, 'modules': sorted(sys.modules)}))")


def _env(cache: Path, use_cache: bool = True) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "MBT_NO_CACHE"}  # conftest turns the cache off for tests
    env["XDG_CACHE_HOME"] = str(cache)
    if not use_cache:
        env["MBT_NO_CACHE"] = "1"
    return env


def _runs(out: Path, *extra: str) -> list[str]:
    return ["runs", "--model", MODEL, "--runs", RUNS, "--no-gate", "--jobs", "1", "--format", "json", "-o", str(out),
            *extra]


def _mbt(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mbt", *args], capture_output=True, text=True, cwd=ROOT, env=env)


def _imported(args: list[str], env: dict[str, str]) -> tuple[object, list[str]]:
    done = subprocess.run([sys.executable, "-c", _WRAPPER, *args], capture_output=True, text=True, cwd=ROOT,
                          env=env, check=True)
    found = json.loads(done.stdout.splitlines()[-1])
    return found["code"], found["modules"]


def _unneeded(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == name or m.startswith(name + ".") for name in NOT_NEEDED)]


def test_a_json_report_of_runs_on_a_cached_model_imports_only_what_it_uses(tmp_path):
    env = _env(tmp_path / "cache")
    cold = _mbt(_runs(tmp_path / "cold.json"), env)  # fills the compiled-model cache
    assert cold.returncode == 0, cold.stderr
    code, modules = _imported(_runs(tmp_path / "warm.json"), env)
    assert code == 0
    assert _unneeded(modules) == []
    assert "mbt.runs.judge" in modules  # the run was judged, on the cached model
    assert (tmp_path / "warm.json").read_text(encoding="utf-8") == (tmp_path / "cold.json").read_text(encoding="utf-8")


@pytest.mark.parametrize("extra", [(), ("--goldens", GOLDENS)], ids=["runs", "with-goldens"])
def test_the_report_is_the_same_with_a_cold_cache_a_warm_one_and_none(tmp_path, extra):
    cache = tmp_path / "cache"
    reports = []
    for name, use_cache in (("cold", True), ("warm", True), ("none", False)):
        out = tmp_path / f"{name}.json"
        done = _mbt(_runs(out, *extra), _env(cache, use_cache))
        assert done.returncode == 0, done.stderr
        reports.append(json.loads(out.read_text(encoding="utf-8")))
    assert reports[0] == reports[1] == reports[2]
    assert reports[0]["goldens_given"] is bool(extra) and reports[0]["runs"]


def test_goldens_load_the_goldens_reader_when_given(tmp_path):
    env = _env(tmp_path / "cache")
    assert _mbt(_runs(tmp_path / "cold.json", "--goldens", GOLDENS), env).returncode == 0
    code, modules = _imported(_runs(tmp_path / "warm.json", "--goldens", GOLDENS), env)
    assert code == 0 and "mbt.goldens.loader" in modules
    assert json.loads((tmp_path / "warm.json").read_text(encoding="utf-8"))["goldens_given"] is True


def test_the_registry_names_each_built_in_kinds_suffixes_as_its_assembly_registers_them():
    # Which files are models is answered from mbt.kind.BUILTIN_KINDS before any assembly loads: it must say what
    # the assemblies register, in their order.
    from mbt import kind

    registered = {k.kind: k for k in kind.all_kinds()}
    assert list(kind.BUILTIN_KINDS) == [k for k in registered if k in kind.BUILTIN_KINDS]
    for name, (module, dsl, own) in kind.BUILTIN_KINDS.items():
        support = registered[name]
        assert support.suffixes == dsl, module
        assert (support.file_format.suffixes if support.file_format is not None else ()) == own, module


def test_a_kind_given_by_name_loads_no_other_kind(tmp_path):
    code = ("import sys\nfrom mbt import kind\nkind.support('fsm')\nsuffixes = kind.model_suffixes()\n"
            "print(sorted(m for m in sys.modules if m.startswith('mbt.kinds.')), suffixes, kind.format_suffixes())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.strip() == "['mbt.kinds.fsm'] ('.model', '.fsm', '.dt', '.policy', '.inv') ('.yaml', '.yml')"


@pytest.mark.parametrize("path", sorted(str(p) for p in (ROOT / "models" / "runs").glob("*.json")))
def test_a_resource_in_the_common_shape_reads_as_protobuf_reads_it(path):
    from mbt.runs import otlp

    document = json.loads(Path(path).read_text(encoding="utf-8"))
    resources = [rs["resource"] for rs in document.get("resourceSpans", []) if "resource" in rs]
    resources += [{"attributes": [{"key": "n", "value": {"intValue": "7"}}, {"key": "b", "value": {"boolValue": True}},
                                  {"key": "n", "value": {"doubleValue": 1.5}}], "droppedAttributesCount": 2},
                  {"attributes": []}, {}]
    for resource in resources:
        assert otlp.resource_attributes(resource) == otlp.proto_resource(resource)
