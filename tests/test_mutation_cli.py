"""The mutation commands at the command line: reports, exit codes, bad input (exit 2, one line, no traceback)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_runner import run_mbt

DATA = Path(__file__).parent / "data" / "mutation"


def test_mutate_text_and_json():
    r = run_mbt("mutate", "--model", DATA / "tiny.fsm", "--goldens", DATA / "tiny.jsonl")
    assert r.returncode == 0, r.stderr
    assert "mutation score 82.4% (14/17): 18 mutants, 1 equivalent, 14 killed, 3 surviving" in r.stdout
    assert "smallest equivalent set (exact): 3 of 4 golden(s)" in r.stdout
    r = run_mbt("mutate", "--model", DATA / "tiny.fsm", "--goldens", DATA / "tiny.jsonl", "--format", "json")
    report = json.loads(r.stdout)
    assert report["models"][0]["killed"] == 14 and report["redundancy"]["kept"] == ["g1", "g2", "g3"]
    assert report["redundancy"]["idle"] == ["g4"]


def test_coverage_mutants_and_the_gate(tmp_path):
    gate = tmp_path / "gate.yaml"
    gate.write_text('fsm.mutation: ">= 0.9"\nduplicates: 0\n', encoding="utf-8")
    r = run_mbt("coverage", "--model", DATA / "tiny.fsm", "--goldens", DATA / "tiny.jsonl", "--mutants", "--gate", gate)
    assert r.returncode == 1
    assert "tiny: mutation score is 82.4%, the gate requires >= 90.0%" in r.stdout
    gate.write_text('fsm.mutation: ">= 0.8"\nduplicates: 0\n', encoding="utf-8")
    r = run_mbt("coverage", "--model", DATA / "tiny.fsm", "--goldens", DATA / "tiny.jsonl", "--mutants", "--gate", gate)
    assert "mutation score" not in "".join(line for line in r.stdout.splitlines() if "requires" in line)
    r = run_mbt("coverage", "--model", DATA / "tiny.fsm", "--goldens", DATA / "tiny.jsonl", "--gate", gate)
    assert r.returncode == 1 and "needs the mutation run: add --mutants" in r.stdout


def test_compare_reports_duplicates(tmp_path):
    new = tmp_path / "new.jsonl"
    new.write_text('{"id": "n1", "model": "tiny", "precondition": {"state": "idle"}, "turns": [{"event": "go", '
                   '"args": {"k": 2}, "assert_state": {"n": 1, "state": "busy"}}]}\n'
                   '{"id": "n2", "model": "tiny", "turns": [{"event": "go", "args": {"k": 1}, "rejected": true, '
                   '"assert_state": {"state": "idle", "n": 0}}]}\n', encoding="utf-8")
    r = run_mbt("compare", "--model", DATA / "tiny.fsm", "--baseline-goldens", DATA / "tiny.jsonl", "--goldens", new)
    assert r.returncode == 0, r.stderr
    assert "1 add kills, 1 add nothing (1 duplicate(s) of a baseline golden)" in r.stdout
    assert "n1 (" in r.stdout and "adds nothing: it verifies the same elements and kills the same mutants as g1" \
        in r.stdout
    assert "+ kills tiny:FBS@transition:idle.go->busy" in r.stdout
    new.write_text('{"id": "n3", "model": "tiny", "precondition": {"state": "nowhere"}, "turns": [{"event": "go"}]}\n',
                   encoding="utf-8")
    r = run_mbt("compare", "--model", DATA / "tiny.fsm", "--baseline-goldens", DATA / "tiny.jsonl", "--goldens", new)
    assert "n3 (" in r.stdout and "adds nothing: the case is invalid on model `tiny`: precondition names unknown " \
        "state `nowhere`" in r.stdout


def test_bad_input_exits_2_without_a_traceback(tmp_path):
    r = run_mbt("mutate", "--model", tmp_path / "missing.fsm", "--goldens", DATA / "tiny.jsonl")
    assert r.returncode == 2 and "Traceback" not in r.stderr and r.stdout == ""
    r = run_mbt("compare", "--model", DATA / "tiny.fsm", "--baseline-goldens", DATA / "tiny.jsonl",
                "--goldens", DATA / "tiny.jsonl")
    assert r.returncode == 2 and "are baseline ids too" in r.stderr and r.stdout == ""
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x1", "model": "tiny", "turns": [{"event": "go", "args": {"k": 2}, '
                   '"assert_state": {"state": "busy"}}]}\n{broken\n', encoding="utf-8")
    r = run_mbt("mutate", "--model", DATA / "tiny.fsm", "--goldens", bad)
    assert r.returncode == 0 and "2 golden(s) read (1 valid, 1 invalid)" in r.stdout  # the broken line reported, the rest run


def test_coverage_mutants_reads_standard_input_once():
    import subprocess
    import sys

    text = (DATA / "tiny.jsonl").read_text(encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "mbt", "coverage", "--model", str(DATA / "tiny.fsm"), "--goldens", "-",
                        "--mutants", "--no-gate"], input=text, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "4 of 4 golden(s) agree with the model" in r.stdout and "14 killed" in r.stdout
