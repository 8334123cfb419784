"""A fifth model kind plugs in through the registry alone (issue 12): tests/plugin_kind/ registers `checklist`
with its own grammar, rules, resolver, elements, replayer and checks, editing no file of mbt, and the whole
pipeline takes it: parsed, checked, enumerated, measured, gated, reported as text and JSON."""

from __future__ import annotations

import json

import pytest

from mbt import api
from mbt import kind as kinds
from tests.cli_runner import run_mbt
from tests.json_report import expanded
from tests.plugin_kind import kind as checklist_kind

MODEL = 'checklist release {\n  item notes "release notes written"\n  item tag\n}\n'
GOLDENS = [{"id": "C1", "checklist": "release", "ticked": ["notes"]},
           {"id": "C2", "checklist": "release", "untouched": ["tag"]},
           {"id": "C3", "checklist": "other", "ticked": ["notes"]}]


@pytest.fixture
def checklist(tmp_path):
    checklist_kind.install()
    (tmp_path / "release.chk").write_text(MODEL, encoding="utf-8")
    (tmp_path / "g.jsonl").write_text("".join(json.dumps(c) + "\n" for c in GOLDENS), encoding="utf-8")
    yield tmp_path
    kinds.unregister("checklist")


def test_parsed_and_checked(checklist):
    files, models = api.load_models([str(checklist)])  # found in the folder by the kind's own suffix
    (model,) = models
    assert (model.kind, model.name, [i.name for i in model.items]) == ("checklist", "release", ["notes", "tag"])
    report = api.check([str(checklist)])
    assert [(f.code, f.location.line) for f in report.findings] == [("CHK001", 3)]


def test_enumerated_measured_gated_and_reported(checklist):
    elements = api.elements([str(checklist / "release.chk")])
    assert [e.id for e in elements.models[0].elements] == ["item:notes", "item:tag"]
    gate = checklist / "gate.yaml"
    gate.write_text('checklist.item: ">= 1.0"\n', encoding="utf-8")
    result = run_mbt("coverage", "--model", checklist / "release.chk",
                     "--goldens", checklist / "g.jsonl", "--gate", gate, "--format", "json")
    assert result.returncode == 1, result.stderr
    report = expanded(json.loads(result.stdout))
    (m,) = report["models"]
    assert m["kind"] == "checklist"
    by_id = {e["element"]["id"]: e for e in m["elements"]}
    assert by_id["item:notes"]["verified_by"] == ["C1"]
    assert by_id["item:tag"]["exercised_by"] == ["C2"] and by_id["item:tag"]["verified_by"] == []
    assert [f["rule"] for f in report["gate"]["failures"]] == ["checklist.item"]
    assert report["goldens"]["not_applicable"] == 1  # C3 names another checklist
    text = run_mbt("coverage", "--model", checklist / "release.chk", "--goldens", checklist / "g.jsonl",
                   "--no-gate")
    assert text.returncode == 0
    assert "release  (checklist" in text.stdout and "item:tag" in text.stdout


def test_a_syntax_error_names_the_new_keyword(checklist):
    (checklist / "bad.chk").write_text("checklst x {\n}\n", encoding="utf-8")
    result = run_mbt("check", checklist / "bad.chk")
    assert result.returncode == 2 and "did you mean `checklist`" in result.stderr


def test_the_kind_is_gone_once_unregistered(tmp_path):
    (tmp_path / "a.chk").write_text(MODEL, encoding="utf-8")
    result = run_mbt("check", tmp_path / "a.chk")
    assert result.returncode == 2 and "not a model file" in result.stderr


def test_the_keys_the_kind_declares_are_read_and_any_other_is_a_note(checklist):
    """KindSupport.golden_keys: `checklist`, `ticked`, `untouched` are the kind's own; `ticket` nobody reads."""
    (checklist / "g.jsonl").write_text(json.dumps({"id": "C4", "checklist": "release", "ticked": ["notes"],
                                                   "ticket": "T-1"}) + "\n", encoding="utf-8")
    report = api.coverage([str(checklist / "release.chk")], [str(checklist / "g.jsonl")])
    assert [(n.case, n.where, n.message) for n in report.notes] == [
        ("C4", f"{checklist / 'g.jsonl'}:1", "`ticket` is not checked (mbt does not read this key)")]
