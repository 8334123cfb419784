"""Source-document coverage: units of markdown, text and YAML; citations; the three gap kinds; exclusions."""

from __future__ import annotations

import json
from pathlib import Path

from mbt import api
from mbt.measure.gate import load_gate
from mbt.measure.sources import text_units, yaml_units

ROOT = Path(__file__).resolve().parents[1]


def units(text, markdown=True):
    return [(u.kind, text[u.start:u.end]) for u in text_units(text, markdown)]


def test_markdown_units_are_headings_sentences_items_rows_and_code():
    text = ("# Title\n\nFirst sentence. Second one! A third? 中文句子。后一句。\n\n"
            "1. An item\n   that continues.\n2. Another item.\n- bullet\n\n"
            "| a | b |\n|---|---|\n| 1 | 2 |\n\n```\ncode\n```\n")
    assert units(text) == [
        ("heading", "# Title"),
        ("sentence", "First sentence."), ("sentence", "Second one!"), ("sentence", "A third?"),
        ("sentence", "中文句子。"), ("sentence", "后一句。"),
        ("list-item", "1. An item\n   that continues."), ("list-item", "2. Another item."), ("list-item", "- bullet"),
        ("table-row", "| a | b |"), ("table-row", "| 1 | 2 |"),
        ("code", "```\ncode\n```"),
    ]
    assert units("e.g. this stays one. Next", markdown=False) == [("sentence", "e.g. this stays one."),
                                                                   ("sentence", "Next")]


def test_yaml_leaves_have_key_paths_and_lines():
    text = "id: x\nmust_not:\n  - a\n  - b  # comment\nnested:\n  deep: {k: v}\n"
    found = [(u.key, text[u.start:u.end]) for u in yaml_units(text)]
    assert found == [("id", "id: x"), ("must_not[0]", "a"), ("must_not[1]", "b"), ("nested.deep.k", "k: v")]


def write_example(tmp_path):
    (tmp_path / "doc.md").write_text(
        "# Policy\n\nThe user asks. The bot answers. Nobody cares.\n\n## Unmodelled\n\n1. Opening hours.\n",
        encoding="utf-8")
    (tmp_path / "c.yaml").write_text("goal: help\nmust_not:\n  - lie\n", encoding="utf-8")
    (tmp_path / "m.fsm").write_text(
        'source doc "doc.md"\nsource c "c.yaml"\n'
        'fsm m @c:1 "goal: help" {\n'
        '  state a initial @doc:3 "The user asks"\n'
        '  state b @doc:3 "The bot answers" unspecified "the doc never says b is a state"\n'
        '  event go @doc:3 "Nobody cares"\n'
        '  a -> b on go @doc:3 "The bot answers"\n'
        '}\n', encoding="utf-8")
    (tmp_path / "g.jsonl").write_text(
        json.dumps({"id": "G", "turns": [{"event": "go", "assert_state": {"state": "b"}}]}) + "\n", encoding="utf-8")


def test_units_are_shaded_by_the_elements_citing_them(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_example(tmp_path)
    report = api.coverage_run(["m.fsm"], ["g.jsonl"], review=True).report
    doc, yaml_doc = report.sources.documents
    status = {u.text: u.status for u in doc.units}
    assert status == {
        "# Policy": "modelled",  # not cited, but its section is
        "The user asks.": "covered",  # state a: verified
        "The bot answers.": "covered",  # state b and the transition: both verified
        "Nobody cares.": "modelled",  # only an event cites it: no coverage element
        "## Unmodelled": "not-modelled",
        "1. Opening hours.": "not-modelled",
    }
    assert (doc.modelled.covered, doc.modelled.total, doc.tested.covered) == (4, 6, 2)
    unit = next(u for u in doc.units if u.text == "The bot answers.")
    assert unit.cited_by == ["m/state:b", "m/transition:a.go->b"]
    assert (unit.line_start, unit.col_start, unit.col_end) == (3, 16, 32)
    assert {u.key: u.status for u in yaml_doc.units} == {"goal": "modelled", "must_not[0]": "not-modelled"}
    (silent,) = report.sources.silent
    assert silent.part == "state b" and silent.elements == ["state:b"]
    assert silent.reason == "the doc never says b is a state"
    rows = {r.element: r for r in report.traceability}
    assert (rows["state:b"].line_start, rows["state:b"].status, rows["state:b"].expected) == (3, "unspecified",
                                                                                              "in state b")
    assert rows["transition:a.go->b"].verified_by == ["G"]


def test_uncovered_and_exercised_units(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_example(tmp_path)
    (tmp_path / "g.jsonl").write_text(json.dumps({"id": "G", "turns": [{"event": "go"}]}) + "\n", encoding="utf-8")
    doc = api.coverage_run(["m.fsm"], ["g.jsonl"], review=True).report.sources.documents[0]
    status = {u.text: u.status for u in doc.units}
    assert status["The user asks."] == "exercised"  # nothing asserted: state a is reached, not verified
    assert status["The bot answers."] == "exercised"
    (tmp_path / "g.jsonl").write_text(json.dumps({"id": "G", "model": "other", "turns": [{"event": "go"}]}) + "\n",
                                      encoding="utf-8")
    doc = api.coverage_run(["m.fsm"], ["g.jsonl"], review=True).report.sources.documents[0]
    assert {u.text: u.status for u in doc.units}["The bot answers."] == "uncovered"


def test_exclusions_leave_units_out_with_their_reason(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_example(tmp_path)
    (tmp_path / "gate.yaml").write_text(
        "forbidden_uncovered: 5\nexclude_units:\n"
        "  - {source: doc, lines: 5-7, reason: opening hours are not behaviour}\n"
        "  - {source: c.yaml, key: must_not, reason: checked by a rubric}\n"
        "  - {source: doc, quote: nothing like this, reason: stale}\n", encoding="utf-8")
    assert len(load_gate("gate.yaml").exclusions) == 3
    report = api.coverage_run(["m.fsm"], ["g.jsonl"], gate_path="gate.yaml", review=True).report
    doc, yaml_doc = report.sources.documents
    excluded = {u.text: u.exclusion for u in doc.units if u.status == "excluded"}
    assert excluded == {"## Unmodelled": "opening hours are not behaviour",
                        "1. Opening hours.": "opening hours are not behaviour"}
    assert (doc.modelled.covered, doc.modelled.total) == (4, 4)
    assert [u.status for u in yaml_doc.units] == ["modelled", "excluded"]
    (unused,) = report.sources.unused_exclusions
    assert "stale" in unused.message


def test_a_missing_document_is_reported_not_fatal(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_example(tmp_path)
    (tmp_path / "c.yaml").unlink()
    report = api.coverage_run(["m.fsm"], ["g.jsonl"], review=True).report
    missing = next(d for d in report.sources.documents if d.path == "c.yaml")
    assert missing.error and missing.units == []


def test_the_example_gaps():
    """The shipped policy: its opening-hours, retention, link-expiry and tone sentences are deliberately unmodelled."""
    import os

    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        report = api.coverage_run(["models/recovery.fsm"], ["models/goldens/"], review=True).report
    finally:
        os.chdir(cwd)
    policy = next(d for d in report.sources.documents if d.source == "policy")
    missing = {u.line_start for u in policy.units if u.status == "not-modelled"}
    assert {9, 10, 50, 71, 72} <= missing  # hours, retention, link expiry, language, length
    assert 17 not in missing and 31 not in missing
