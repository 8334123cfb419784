"""The invocations people type (issue 13): several paths after one flag, shell and quoted globs, standard input,
positional models and goldens, no goldens at all (the 0% baseline), `-o FILE` naming the format by its suffix."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_runner import run_mbt

ROOT = Path(__file__).resolve().parents[1]
MODEL = "models/recovery.fsm"
TWO = ["models/goldens/golden.jsonl", "models/goldens/single-turn.jsonl"]


def read_count(result) -> int:
    return json.loads(result.stdout)["goldens"]["read"]


def coverage_json(*args, **kw):
    result = run_mbt("coverage", *args, "--no-gate", "--format", "json", cwd=ROOT, **kw)
    assert result.returncode == 0, result.stderr
    return result


def test_several_goldens_after_one_flag_equal_repeated_flags():
    one_flag = coverage_json("--model", MODEL, "--goldens", *TWO)
    repeated = coverage_json("--model", MODEL, "--goldens", TWO[0], "--goldens", TWO[1])
    assert json.loads(one_flag.stdout) == json.loads(repeated.stdout)
    assert json.loads(one_flag.stdout)["goldens"]["files"] == TWO


def test_a_quoted_glob_is_expanded_sorted():
    result = coverage_json("--model", MODEL, "--goldens", "models/goldens/*.jsonl")
    files = json.loads(result.stdout)["goldens"]["files"]
    assert files == sorted(str(p.relative_to(ROOT)) for p in (ROOT / "models/goldens").glob("*.jsonl"))
    missing = run_mbt("coverage", "--model", MODEL, "--goldens", "nowhere/*.jsonl", cwd=ROOT)
    assert missing.returncode == 2 and "no file matches" in missing.stderr


def test_positional_models_and_goldens_are_told_apart():
    positional = coverage_json(MODEL, *TWO)
    flags = coverage_json("--model", MODEL, "--goldens", *TWO)
    assert json.loads(positional.stdout) == json.loads(flags.stdout)
    # A folder holding both (the examples with their goldens) gives both.
    both = json.loads(coverage_json("models/").stdout)
    # seven DSL models and seed 000's contract (models/contracts/password-reset.yaml), found by its content
    assert len(both["models"]) == 8 and both["goldens"]["read"] > 40
    assert "password-reset-v1" in [m["model"] for m in both["models"]]


def test_a_golden_file_reached_twice_is_read_once():
    # `--goldens models/` reads every golden-shaped file there, the answers example's sheet (models/answers/) too.
    once = json.loads(coverage_json("--model", MODEL, "--goldens", "models/goldens/", "models/answers/").stdout)
    twice = json.loads(coverage_json("--model", MODEL, "--goldens", "models/goldens/", "models/goldens/golden.jsonl",
                                     "models/").stdout)
    duplicates = [i for i in twice["invalid_cases"] if "duplicate case id" in i["message"]]
    assert duplicates == [] and twice["models"] == once["models"]
    assert twice["goldens"]["files"][:len(once["goldens"]["files"])] == once["goldens"]["files"]


def test_elements_takes_a_positional_model():
    result = run_mbt("elements", MODEL, "--format", "json", cwd=ROOT)
    assert result.returncode == 0 and json.loads(result.stdout)["models"][0]["model"] == "recovery"


def test_no_goldens_is_the_zero_baseline_not_an_error():
    report = json.loads(coverage_json("--model", MODEL).stdout)
    assert report["goldens"]["read"] == 0
    state = next(c for c in report["models"][0]["criteria"] if c["criterion"] == "state")
    assert state["verified"]["covered"] == 0 and state["verified"]["ratio"] == 0.0
    gated = run_mbt("coverage", "--model", MODEL, cwd=ROOT)
    assert gated.returncode == 1  # every forbidden element is untested


def test_a_goldens_folder_without_cases_says_so(tmp_path):
    (tmp_path / "empty").mkdir()
    report = json.loads(coverage_json("--model", MODEL, "--goldens", str(tmp_path / "empty")).stdout)
    assert any("holds no golden file" in n["message"] for n in report["notes"])


def test_goldens_from_standard_input():
    text = (ROOT / TWO[0]).read_text(encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "mbt", "coverage", "--model", MODEL, "--goldens", "-", "--no-gate",
                             "--format", "json"], input=text, capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["goldens"]["files"] == ["<stdin>"]
    assert report["goldens"]["read"] == sum(1 for line in text.splitlines() if line.strip().startswith("{"))


@pytest.mark.parametrize("name,check", [
    ("cov.json", lambda text: json.loads(text)["schema_version"]),
    ("cov.md", lambda text: text.startswith("## mbt coverage")),
    ("cov.xml", lambda text: text.startswith("<?xml")),
    ("cov.sarif", lambda text: json.loads(text)["version"] == "2.1.0"),
])
def test_the_output_suffix_names_the_format(tmp_path, name, check):
    out = tmp_path / name
    result = run_mbt("coverage", "--model", MODEL, "--goldens", *TWO, "--no-gate", "-o", out, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert check(out.read_text(encoding="utf-8"))


def test_quiet_keeps_the_numbers_and_the_gate_and_counts_the_findings():
    goldens = "models/goldens/"
    quiet = run_mbt("coverage", MODEL, goldens, "-q", cwd=ROOT)
    full = run_mbt("coverage", MODEL, goldens, cwd=ROOT)
    report = json.loads(run_mbt("coverage", MODEL, goldens, "--format", "json", cwd=ROOT).stdout)
    assert quiet.returncode == full.returncode == 1  # the same gate verdict
    assert "Uncovered elements" in full.stdout and "Uncovered" not in quiet.stdout
    # The criterion table and the gate section are the full report's lines, unchanged.
    table = [line for line in full.stdout.splitlines() if line.startswith("  ") and "%" in line]
    assert table and all(line in quiet.stdout.splitlines() for line in table)
    assert full.stdout[full.stdout.index("Gate ("):] == quiet.stdout[quiet.stdout.index("Gate ("):]
    findings = next(line for line in quiet.stdout.splitlines() if line.startswith("Findings: "))
    assert f"{len(report['contradictions'])} contradiction" in findings
    assert f"{len(report['invalid_cases'])} invalid case" in findings


def test_verbose_lists_everything_and_quiet_silences_notes(tmp_path):
    verbose = run_mbt("coverage", MODEL, "models/goldens/", "-v", cwd=ROOT)
    spelled = run_mbt("coverage", MODEL, "models/goldens/", "--show-uncovered", "all", "--show-covering", cwd=ROOT)
    assert verbose.stdout == spelled.stdout and "verified by:" in verbose.stdout
    both = run_mbt("coverage", MODEL, "-q", "-v", cwd=ROOT)
    assert both.returncode == 2 and "-q and -v" in both.stderr and both.stdout == ""
    loud = run_mbt("render", "--model", MODEL, "-o", tmp_path / "a.dot", cwd=ROOT)
    silent = run_mbt("render", "--model", MODEL, "-o", tmp_path / "b.dot", "-q", cwd=ROOT)
    assert "wrote" in loud.stderr and silent.stderr == "" and silent.returncode == 0
    checked = run_mbt("check", "models/", "-q", cwd=ROOT)
    assert "warning:" not in checked.stdout and checked.stdout.startswith("mbt check:")


def test_a_positional_folder_leaves_gate_files_runs_and_source_documents_out_and_says_so():
    """`mbt coverage models/`: the gate files (gates/), the observed runs (runs/) and the contract YAML the recovery
    model cites as a source (a model of its own too, the `contract` kind) are not golden cases; they are left out, and
    one note per folder says which and why."""
    positional = json.loads(coverage_json("models/").stdout)
    flags = json.loads(coverage_json("--model", "models/", "--goldens", "models/goldens/").stdout)
    assert positional["goldens"] == {**flags["goldens"], "files": positional["goldens"]["files"]}
    assert positional["invalid_cases"] == flags["invalid_cases"]  # the broken line of broken.jsonl, nothing else
    assert not [f for f in positional["goldens"]["files"] if not f.startswith("models/goldens/")]
    (note,) = [n["message"] for n in positional["notes"] if n["message"].startswith("not read as goldens")]
    for said in ("models/gates/release.yaml", "models/runs/orders-spans.jsonl",
                 "models/runs/transcripts/chat-ORD-0031.json", "in a `gates/` folder", "in a `runs/` folder",
                 "models/contracts/password-reset.yaml", "a source document of model `recovery`", "--goldens",
                 "models/answers/agent/password-reset.yaml", "in an `answers/` folder"):
        assert said in note, (said, note)
    # mutate and compare sort a positional folder the same way, and say so too.
    mutation = run_mbt("mutate", "models/refund-chat.fsm", "models/", "--show-survivors", "none", cwd=ROOT)
    assert "not read as goldens" in mutation.stdout
    mutated = json.loads(run_mbt("mutate", "models/refund-chat.fsm", "models/", "--format", "json", cwd=ROOT).stdout)
    assert (mutated["goldens_read"], mutated["goldens_invalid"]) == (flags["goldens"]["read"], flags["goldens"]["invalid"])


def test_gate_files_and_traces_are_told_by_their_content_in_a_positional_folder(tmp_path):
    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "m.fsm").write_text((ROOT / "tests/data/refund-cancel/refund-cancel.fsm").read_text(encoding="utf-8"),
                                  encoding="utf-8")
    (folder / "cases.jsonl").write_text('{"id": "A", "model": "refund_cancel", "turns": [{"event": "ask", "args": '
                                        '{"customer": "c"}, "assert_state": {"state": "looking_up"}}]}\n',
                                        encoding="utf-8")
    (folder / "release.yaml").write_text('thresholds:\n  fsm.state: ">= 0.5"\ncontradictions: 0\n'
                                         'handoff_suites: [human_handoff]\nturn_loop: {max_turns: 8}\n', encoding="utf-8")
    (folder / "trace.jsonl").write_text((ROOT / "models/runs/orders-spans.jsonl").read_text(encoding="utf-8"),
                                        encoding="utf-8")
    report = json.loads(coverage_json(str(folder)).stdout)
    assert report["goldens"]["read"] == 1 and report["goldens"]["invalid"] == 0
    (note,) = [n["message"] for n in report["notes"] if n["message"].startswith("not read as goldens")]
    assert "release.yaml (a gate file" in note and "trace.jsonl (an OpenTelemetry trace" in note
    # Given with --goldens, a folder is read whole: the user said these are goldens.
    named = json.loads(coverage_json("--model", str(folder / "m.fsm"), "--goldens", str(folder)).stdout)
    assert named["goldens"]["invalid"] > 0
