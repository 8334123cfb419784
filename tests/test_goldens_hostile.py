"""Issue 14, hostile golden files: wrong-typed fields, deep nesting, huge integers, lone surrogates, bad bytes on
one line, UTF-16, duplicate keys, broken YAML items and .json line numbers. Each one is reported as an invalid case
with its file and line, and every other case of the file is still read (read = valid + invalid)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mbt.goldens.loader import load_goldens
from tests.cli_runner import run_mbt

GOOD = '{"id": "OK-1", "turns": [{"user": "hello"}]}'
GOOD2 = '{"id": "OK-2", "turns": [{"user": "bye"}]}'

# (line 2 of a three-line JSONL file, a fragment of the message it must get)
BAD_LINES = [
    ('{"id": "T1", "turns": 5}', "turns"),
    ('{"id": "T2", "turns": 1.5}', "turns"),
    ('{"id": "T3", "turns": true}', "turns"),
    ('{"id": "T4", "turns": [{"user": "x"}], "assertions": 5}', "assertions"),
    ('{"id": "T5", "turns": [{"user": "x"}], "assertions": [1]}', "assertions"),
    ('{"id": "T6", "turns": [{"user": "x"}], "final_assertions": 5}', "final_assertions"),
    ('{"id": "T7", "turns": [{"user": "x"}], "final_assertions": [1]}', "final_assertions"),
    ('{"id": "T8", "turns": [{"user": "x"}], "decisions": 5}', "decisions"),
    ('{"id": "T9", "turns": [{"user": "x"}], "precondition": {"state": ["a"]}}', "state"),
    ('{"id": "T10", "turns": [{"user": "x"}], "precondition": {"state": {"a": 1}}}', "state"),
    ('{"id": "T11", "turns": [{"user": "x", "assert_state": 5}]}', "assert_state"),
    ('{"id": "T12", "turns": [{"user": "x"}], "assertions": {"state": [1]}}', "state"),
    ('{"id": "D1", "turns": [' + "[" * 1000 + "]" * 1000 + "]}", "nested"),
    ('{"id": "D2", "turns": [{"user": "x", "args": {"n": ' + "1" * 5000 + "}}]}", "digits"),
    ('{"id": "S1", "turns": [{"user": "x\\ud800y"}]}', "surrogate"),
    ('{"id": "S2\\udfff", "turns": [{"user": "x"}]}', "surrogate"),
    ('{"id": "K1", "id": "K2", "turns": [{"user": "x"}]}', "duplicate key `id`"),
    ('{"id": "K3", "turns": [{"user": "x", "user": "y"}]}', "duplicate key `user`"),
]


@pytest.mark.parametrize("line,fragment", BAD_LINES, ids=[b[0][:40] for b in BAD_LINES])
def test_a_bad_case_is_reported_with_its_line_and_the_rest_is_read(tmp_path, line, fragment):
    path = tmp_path / "g.jsonl"
    path.write_text("\n".join([GOOD, line, GOOD2]) + "\n", encoding="utf-8")
    loaded = load_goldens([str(path)])
    assert [c.id for c in loaded.cases] == ["OK-1", "OK-2"]
    assert [(i.line, fragment in i.message) for i in loaded.invalid] == [(2, True)], loaded.invalid[0].message


@pytest.mark.parametrize("raw,fragment", [
    (b'{"id": "B1", "turns": [{"user": "caf\xe9"}]}', "not valid UTF-8"),
    (b'{"id": "B2", "turns": [{"user": "a\x00b"}]}', "NUL"),
])
def test_a_bad_byte_on_one_line_invalidates_that_line_only(tmp_path, raw, fragment):
    path = tmp_path / "g.jsonl"
    path.write_bytes(GOOD.encode() + b"\n" + raw + b"\n" + GOOD2.encode() + b"\n")
    loaded = load_goldens([str(path)])
    assert [c.id for c in loaded.cases] == ["OK-1", "OK-2"]
    assert [i.line for i in loaded.invalid] == [2] and fragment in loaded.invalid[0].message


def test_a_bad_byte_in_a_yaml_case_invalidates_that_case_only(tmp_path):
    path = tmp_path / "g.yaml"
    path.write_bytes(b"- id: Y1\n  turns: [{user: a}]\n- id: Y2\n  turns: [{user: \"caf\xe9\"}]\n"
                     b"- id: Y3\n  turns: [{user: c}]\n")
    loaded = load_goldens([str(path)])
    assert [c.id for c in loaded.cases] == ["Y1", "Y3"]
    assert [i.line for i in loaded.invalid] == [3] and "line 4" in loaded.invalid[0].message


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-be", "utf-16-le"])
def test_utf16_with_a_bom_is_read(tmp_path, codec):
    path = tmp_path / "g.jsonl"
    text = GOOD + "\n" + '{"id": "OK-2", "turns": [{"user": "Tiếng Việt"}]}' + "\n"
    bom = {"utf-16": b"", "utf-16-be": b"\xfe\xff", "utf-16-le": b"\xff\xfe"}[codec]
    path.write_bytes(bom + text.encode(codec))
    loaded = load_goldens([str(path)])
    assert [c.id for c in loaded.cases] == ["OK-1", "OK-2"] and not loaded.invalid
    assert loaded.cases[1].turns[0].user == "Tiếng Việt"


def test_yaml_duplicate_keys_are_reported(tmp_path):
    path = tmp_path / "g.yaml"
    path.write_text("- id: A\n  turns: [{user: a}]\n- id: B\n  id: C\n  turns: [{user: b}]\n", encoding="utf-8")
    loaded = load_goldens([str(path)])
    assert [c.id for c in loaded.cases] == ["A"]
    (bad,) = loaded.invalid
    assert bad.line == 3 and "duplicate key `id`" in bad.message and "(line 4)" in bad.message


def test_yaml_syntax_error_loses_only_the_broken_item(tmp_path):
    path = tmp_path / "g.yaml"
    path.write_text("- id: A\n  turns: [{user: a}]\n- id: B\n  turns: [{user: b\n- id: C\n  turns: [{user: c}]\n"
                    "---\nid: D\nturns: [{user: d}]\n", encoding="utf-8")
    loaded = load_goldens([str(path)])
    assert [c.id for c in loaded.cases] == ["A", "C", "D"]
    assert [i.line for i in loaded.invalid] == [3] and "not valid YAML" in loaded.invalid[0].message


def test_yaml_error_in_a_document_that_cannot_be_split_says_how_many_cases_were_lost(tmp_path):
    path = tmp_path / "g.yaml"
    path.write_text("id: A\nturns: [{user: a}]\n---\nid: B\nturns: [{user: b}\n---\nid: C\nturns: [{user: c}]\n",
                    encoding="utf-8")
    loaded = load_goldens([str(path)])
    assert [c.id for c in loaded.cases] == ["A", "C"]
    assert [i.line for i in loaded.invalid] == [4] and "1 case" in loaded.invalid[0].message


def test_yaml_nested_a_thousand_deep_is_one_invalid_case(tmp_path):
    path = tmp_path / "g.yaml"
    path.write_text("- id: A\n  turns: [{user: a}]\n- id: B\n  turns: " + "[" * 1000 + "]" * 1000 + "\n"
                    "- id: C\n  turns: [{user: c}]\n", encoding="utf-8")
    loaded = load_goldens([str(path)])
    assert [c.id for c in loaded.cases] == ["A", "C"] and [i.line for i in loaded.invalid] == [3]


def test_json_cases_have_their_real_lines(tmp_path):
    path = tmp_path / "g.json"
    cases = [json.loads(GOOD), {"id": "X", "turns": 5}, json.loads(GOOD2), json.loads(GOOD)]
    path.write_text(json.dumps(cases, indent=2), encoding="utf-8")
    loaded = load_goldens([str(path)])
    text = path.read_text().split("\n")
    starts = [n for n, line in enumerate(text, start=1) if line == "  {"]
    assert [c.line for c in loaded.cases] == [starts[0], starts[2]]
    assert sorted(i.line for i in loaded.invalid) == [starts[1], starts[3]]
    assert f"first at {path}:{starts[0]}" in [i for i in loaded.invalid if i.line == starts[3]][0].message


def test_coverage_with_a_hostile_golden_file_exits_normally_and_counts_every_case(tmp_path):
    path = tmp_path / "g.jsonl"
    path.write_text("\n".join([GOOD] + [b[0] for b in BAD_LINES] + [GOOD2]) + "\n", encoding="utf-8")
    for fmt in ("text", "json", "html:" + str(tmp_path / "html")):
        result = run_mbt("coverage", "--model", "models/recovery.fsm", "--goldens", str(path), "--no-gate",
                         "--format", fmt, "--show-covering")
        assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    report = json.loads(run_mbt("coverage", "--model", "models/recovery.fsm", "--goldens", str(path), "--no-gate",
                                "--format", "json").stdout)
    assert (report["goldens"]["read"], report["goldens"]["invalid"]) == (len(BAD_LINES) + 2, len(BAD_LINES))


def test_decisions_naming_no_loaded_table_are_a_note(tmp_path):
    path = tmp_path / "g.jsonl"
    path.write_text('{"id": "C1", "turns": [{"user": "hi"}], "decisions": [{"table": "refnd", "inputs": {}}]}\n'
                    '{"id": "C2", "turns": [{"user": "hi"}], "decisions": [{"table": "refnd", "inputs": {}}]}\n',
                    encoding="utf-8")
    result = run_mbt("coverage", "--model", "models/recovery.fsm", "--model", "models/refund.dt", "--goldens",
                     str(path), "--no-gate", "--format", "json")
    notes = [n["message"] for n in json.loads(result.stdout)["notes"]]
    assert [n for n in notes if "`refnd`" in n] == [
        "2 case(s) check decision table `refnd`, which no loaded file declares (did you mean `refund`?); "
        "those checks were not replayed"]


def test_a_quoted_number_is_not_a_number(tmp_path):
    """Issue 14 listed `"10"` accepted for an integer column: a table input, an FSM precondition and a policy
    attribute each refuse it (the case is invalid, with the value and the type it is not)."""
    path = tmp_path / "g.jsonl"
    cases = [
        {"id": "T", "table": "refund", "inputs": {"region": "EU", "amount": 10, "account_type": "standard",
                                                  "days_since_payment": "10", "risk_score": 10}},
        {"id": "F", "model": "recovery", "precondition": {"retries": "1"}, "turns": [{"user": "hi"}]},
        {"id": "P", "policy": "refund_access", "expect": "permit", "request": {
            "subject": {"id": "a", "role": "agent", "approval_limit": "100", "suspended": False},
            "resource": {"owner": "b", "requested_by": "c", "amount": 10, "status": "pending"},
            "action": {"id": "approve"}, "environment": {"business_hours": True}}},
    ]
    path.write_text("\n".join(json.dumps(c) for c in cases) + "\n", encoding="utf-8")
    report = json.loads(run_mbt("coverage", "--model", "models/refund.dt", "--model", "models/recovery.fsm",
                                "--model", "models/refund.policy", "--goldens", str(path), "--no-gate",
                                "--format", "json").stdout)
    messages = {i["line"]: i["message"] for i in report["invalid_cases"]}
    assert sorted(messages) == [1, 2, 3]
    assert '"10" is a string, not a number' in messages[1]
    assert "`retries: '1'` is not a value of int[0..1]" in messages[2]
    assert "`subject.approval_limit: '100'` is not a value of number" in messages[3]


def test_a_yaml_merge_key_may_be_overridden(tmp_path):
    path = tmp_path / "g.yaml"
    path.write_text("- &base\n  id: A\n  turns: [{user: a}]\n- <<: *base\n  id: B\n", encoding="utf-8")
    loaded = load_goldens([str(path)])
    assert [c.id for c in loaded.cases] == ["A", "B"] and not loaded.invalid


def test_file_names_that_are_not_utf8_are_shown_escaped_in_every_report(tmp_path):
    """A file name with a byte that is not UTF-8 reaches Python as a lone surrogate: reports show it escaped."""
    import os

    folder = tmp_path / "g"
    folder.mkdir()
    golden = Path(os.fsdecode(bytes(folder) + b"/caf\xe9.jsonl"))
    golden.write_text(GOOD + "\n{broken\n", encoding="utf-8")
    model = Path(os.fsdecode(bytes(tmp_path) + b"/m\xff.fsm"))
    model.write_text("fsm m {\n  state a initial\n  state b final\n  event go\n  a -> b on go\n}\n", encoding="utf-8")
    for fmt in ("json", "text", "markdown", "sarif", f"html:{tmp_path / 'site'}"):
        result = run_mbt("coverage", "--model", model, "--goldens", folder, "--no-gate", "--format", fmt)
        assert result.returncode == 0, result.stderr
    report = json.loads(run_mbt("coverage", "--model", model, "--goldens", folder, "--no-gate",
                                "--format", "json").stdout)
    assert report["invalid_cases"][0]["file"] == f"{folder}/caf\\xe9.jsonl"
    assert run_mbt("check", model, "--format", "json").returncode in (0, 1)


@pytest.mark.parametrize("text,cases,lines", [
    ("[", [], [1]), ('[\n  {"id": "A", "turns": [{"user": "a"}]},\n', ["A"], [3]),
    ('[{"id": "A", "turns": [{"user": "a"}]}] x', ["A"], [1]), ('{"id": "A", "turns": [{"user": "a"}]}', ["A"], []),
])
def test_a_json_file_that_ends_early_or_late_says_so(tmp_path, text, cases, lines):
    path = tmp_path / "g.json"
    path.write_text(text, encoding="utf-8")
    loaded = load_goldens([str(path)])
    assert [c.id for c in loaded.cases] == cases and [i.line for i in loaded.invalid] == lines
