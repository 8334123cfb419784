"""Same input, byte-identical output, whatever PYTHONHASHSEED (issue 9): generation and coverage are run under two
hash seeds, and every file they write is compared byte for byte.

The seed is fixed when an interpreter starts, so each seed gets a process of its own; inside it, every command runs
in-process (tests/cli_runner.py) one after the other, in a folder of its own. Two interpreters instead of two per
command: the comparison is the same, without paying Python's and z3's start-up eighteen times."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SEEDS = ("1", "3")  # 1 and 3 gave two witnesses for state:suspended before the fix

COMMANDS = {
    "gaps": ("generate", "--model", "MODELS", "--goldens", "GOLDENS", "--out", "out"),
    "everything": ("generate", "--model", "MODELS/recovery.fsm", "--out", "out"),  # no goldens: every element a gap
    "every-kind-everything": ("generate", "--model", "MODELS", "--out", "out"),  # every kind, every element a gap
    "suite": ("generate", "--model", "MODELS/recovery.fsm", "--all", "--criterion", "transition", "--out", "out"),
    "pair-suite": ("generate", "--model", "MODELS/recovery.fsm", "--all", "--criterion", "transition-pair",
                   "--out", "out"),
    "coverage": ("coverage", "--model", "MODELS", "--goldens", "GOLDENS", "--no-gate", "--format", "json:out/c.json",
                 "--format", "sarif:out/c.sarif", "--format", "markdown:out/c.md", "--format", "junit:out/c.xml"),
    "runs": ("runs", "--model", "MODELS/orders.fsm", "--runs", "MODELS/runs", "--goldens", "GOLDENS/orders", "--gate",
             "MODELS/gates/seed-000-release.yaml", "--format", "json", "-o", "out/r.json", "--regressions",
             "out/reg"),
    "mutate": ("mutate", "--model", "MODELS", "--goldens", "GOLDENS", "--format", "json", "-o", "out/m.json"),
    "kill": ("generate", "--kill", "--model", "MODELS", "--goldens", "GOLDENS", "--out", "out"),
}

# Runs inside the interpreter started with the seed: argv[1] is the folder, argv[2] the commands as JSON.
DRIVER = """
import json, sys
from pathlib import Path
from tests.cli_runner import run_mbt
root, commands = Path(sys.argv[1]), json.loads(sys.argv[2])
codes = {}
for name, args in commands.items():
    folder = root / name
    (folder / "out").mkdir(parents=True)
    result = run_mbt(*args, cwd=folder)
    codes[name] = [result.returncode, result.stderr[-2000:]]
print(json.dumps(codes))
"""


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> dict[str, tuple[dict[str, bytes], ...]]:
    """Every command's output tree under each seed: {command: (tree under seed 1, tree under seed 3)}."""
    commands = {name: [a.replace("MODELS", str(ROOT / "models")).replace("GOLDENS", str(ROOT / "models" / "goldens"))
                       for a in args] for name, args in COMMANDS.items()}
    trees: dict[str, list[dict[str, bytes]]] = {name: [] for name in COMMANDS}
    for seed in SEEDS:
        root = tmp_path_factory.mktemp(f"seed{seed}")
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([sys.executable, "-c", DRIVER, str(root), json.dumps(commands)], cwd=ROOT, env=env,
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        for name, (code, stderr) in json.loads(done.stdout).items():
            assert code in (0, 1), f"{name} under seed {seed}: {stderr}"
            trees[name].append(tree(root / name / "out"))
    return {name: tuple(made) for name, made in trees.items()}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_output_does_not_depend_on_the_hash_seed(outputs, command):
    made = outputs[command]
    assert made[0], "nothing was written"
    differing = sorted(name for name in set(made[0]) | set(made[1]) if made[0].get(name) != made[1].get(name))
    assert differing == []
