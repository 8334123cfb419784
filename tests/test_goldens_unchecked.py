"""Never dropped (issue 32, item 6): every part of a golden mbt does not check is a "Not checked" note with the case
and its file:line, on goldens written in seed 000's own shapes (tests/data/seed000)."""

from __future__ import annotations

import json
from pathlib import Path

from mbt.api import coverage
from mbt.goldens.cases import parse_case
from mbt.goldens.loader import GoldenSet
from mbt.measure.run import measure
from mbt.parsing.loader import load_file
from tests.cli_runner import run_mbt

SEED = Path(__file__).parent / "data" / "seed000"
MODEL = str(SEED / "recovery.fsm")
GOLDENS = str(SEED / "goldens")
JSONL = f"{GOLDENS}/golden.jsonl"
YAML = f"{GOLDENS}/multi-turn.yaml"

# Every part of the seed-shaped goldens that nothing checks, and nothing else: (case, file:line, turn, message).
EXPECTED = [
    ("ACC-REC-001", f"{JSONL}:1", None, "final assertions: `allowed_source` is not checked (mbt does not read this key)"),
    ("ACC-REC-001", f"{JSONL}:1", None, "final assertions: `must_have` \"批准的重置入口\" names no forbid of the model "
                                        "(not checked)"),
    ("ACC-REC-001", f"{JSONL}:1", None, "final assertions: `must_have` \"查看注册邮箱\" names no forbid of the model "
                                        "(not checked)"),
    ("ACC-REC-001", f"{JSONL}:1", None, "`recovery` is not checked (mbt does not read this key)"),
    ("ACC-REC-001", f"{JSONL}:1", None, "`evidence` is not checked (mbt does not read this key)"),
    ("ACC-REC-001", f"{JSONL}:1", None, "`failure_owner` is not checked (mbt does not read this key)"),
    ("RAG-REC-002", f"{JSONL}:2", 1, "turn 1: `route` is not checked (mbt does not read this key)"),
    ("RAG-REC-002", f"{JSONL}:2", None, "`selected_source` is not checked (mbt does not read this key)"),
    ("RAG-REC-002", f"{JSONL}:2", None, "`must_not` outside `assertions` is not checked: put it under `assertions` "
                                        "(or on a turn)"),
    ("CTX-CORR-001", f"{YAML}:1", None, "final assertions: `must_not` \"同时保留两个当前邮箱\" names no forbid of the "
                                        "model (not checked)"),
    ("CTX-CORR-001", f"{YAML}:1", None, "final assertions: `claimed_success` is not checked (mbt does not read this "
                                        "key)"),
]


def notes_of(report):
    return [(n.case, n.where, n.turn, n.message) for n in report.notes]


def test_every_part_of_seed_000_goldens_the_model_cannot_check_is_a_note_with_its_place():
    report = coverage([MODEL], [GOLDENS])
    assert report.goldens.valid == 5 and report.goldens.invalid == 0  # the hand-off goldens add no note
    assert sorted(notes_of(report), key=str) == sorted(EXPECTED, key=str)


def test_the_notes_are_in_the_text_json_and_html_reports(tmp_path):
    done = run_mbt("coverage", "--model", MODEL, "--goldens", GOLDENS, "--no-gate",
                   "--format", f"json:{tmp_path / 'r.json'}", "--format", f"html:{tmp_path / 'html'}", "--format", "text")
    assert done.returncode == 0, done.stderr
    assert f"Not checked ({len(EXPECTED)})" in done.stdout
    assert f"ACC-REC-001 ({JSONL}:1): `recovery` is not checked" in done.stdout
    assert f"RAG-REC-002 ({JSONL}:2): turn 1: `route` is not checked" in done.stdout  # the turn said once
    assert f"CTX-CORR-001 ({YAML}:1) on seed_recovery: final assertions: `must_not`" in done.stdout
    written = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert sorted(((n["case"], n["where"], n["turn"], n["message"]) for n in written["notes"]), key=str) \
        == sorted(EXPECTED, key=str)
    findings = (tmp_path / "html" / "findings.html").read_text(encoding="utf-8")
    assert "allowed_source" in findings and "failure_owner" in findings


def test_a_case_without_unread_keys_has_no_key_notes():
    (model,) = load_file(Path(MODEL)).models
    case = parse_case({"id": "C", "turns": [{"user": "forgot pwd", "assert_state": {"state": "collecting"}}]}, "g", 3)
    assert measure([model], GoldenSet([case])).notes == []


def test_mbt_generate_annotations_are_not_notes():
    """A stub `mbt generate` writes names the element it was made for (`element`, `also_covers`, `source`): words
    about the case, not expectations."""
    (model,) = load_file(Path(MODEL)).models
    case = parse_case({"id": "gen:1", "element": "state:collecting", "also_covers": ["state:idle"],
                       "source": {"cites": "policy:3", "status": "stated"},
                       "turns": [{"event": "request_reset", "assert_state": {"state": "collecting"}}]}, "g", 1)
    assert measure([model], GoldenSet([case])).notes == []


CLAIMING = '''fsm shop {
  state idle initial
  state done final
  event buy
  idle -> done on buy / call pay(amount = 1)
  claim done matching "is paid"
  forbid any on * effect say "asks for the card PIN" matching "pin"
}
'''


def test_a_phrase_naming_no_forbid_or_claim_is_a_note_at_its_turn_and_one_naming_a_claim_is_checked(tmp_path):
    """A phrase naming a claim is checked against the model's state (tests/test_sayings_replay.py): here the model
    is in `done` after `buy`, so the golden agrees and there is nothing to note."""
    (tmp_path / "shop.fsm").write_text(CLAIMING, encoding="utf-8")
    (model,) = load_file(tmp_path / "shop.fsm").models
    case = parse_case({"id": "P", "turns": [
        {"event": "buy", "must_have": ["The order is paid"], "must_not": ["ask for the PIN", "swear"]}]}, "g", 4)
    report = measure([model], GoldenSet([case]))
    assert [(n.turn, n.message) for n in report.notes] == [
        (1, "turn 1: `must_not` \"swear\" names no forbid or claim of the model (not checked)")]
    assert report.contradictions == []
