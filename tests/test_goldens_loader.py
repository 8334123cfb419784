"""Loading golden cases in seed 000's formats; broken lines and cases are reported with file:line and skipped."""

from __future__ import annotations

import json

import pytest

from mbt.errors import LocatedError
from mbt.goldens.loader import load_goldens


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_single_turn_jsonl_becomes_one_turn_with_intent(tmp_path):
    path = write(tmp_path, "single.jsonl", json.dumps(
        {"id": "INT-001", "input": "I forgot my password", "expected_intent": "PASSWORD_RESET",
         "contract": "password-reset-v1"}) + "\n")
    (case,) = load_goldens([path]).cases
    assert (case.id, case.contract, case.line) == ("INT-001", "password-reset-v1", 1)
    assert [(t.user, t.intent) for t in case.turns] == [("I forgot my password", "PASSWORD_RESET")]


def test_multi_turn_yaml_keeps_assert_state_discarded_and_final_assertions(tmp_path):
    path = write(tmp_path, "multi.yaml", """\
id: CTX-CORR-001
precondition:
  active_task: password_reset
turns:
  - user: "账户邮箱是 li@example.com"
    assert_state:
      recovery_email: li@example.com
  - user: "邮箱说错了，是 lin@example.com"
    assert_state:
      recovery_email: lin@example.com
      discarded.recovery_email: li@example.com
final_assertions:
  tool_arguments:
    recovery_email: lin@example.com
  must_not:
    - 同时保留两个当前邮箱
""")
    (case,) = load_goldens([path]).cases
    assert case.precondition == {"active_task": "password_reset"}
    assert case.turns[1].expect.variables == {"recovery_email": "lin@example.com"}
    assert case.turns[1].expect.discarded == {"recovery_email": "li@example.com"}
    assert case.final.tool_arguments == {"recovery_email": "lin@example.com"}
    assert case.final.must_not == ["同时保留两个当前邮箱"]


def test_golden_jsonl_assertions_state_map_and_control_state(tmp_path):
    lines = [
        {"id": "A", "turns": [{"user": "x"}], "assertions": {"state": {"recovery_email": "a@b"}, "intent": "I"}},
        {"id": "B", "turns": [{"user": "x"}], "assertions": {"state": "done"}},
    ]
    path = write(tmp_path, "g.jsonl", "\n".join(json.dumps(x) for x in lines) + "\n")
    a, b = load_goldens([path]).cases
    assert a.final.variables == {"recovery_email": "a@b"} and a.final.intent == "I" and a.final.state is None
    assert b.final.state == "done" and b.final.variables == {}


def test_broken_lines_are_reported_and_the_rest_processed(tmp_path):
    text = "\n".join([
        json.dumps({"id": "OK-1", "turns": [{"user": "a"}]}),
        '{"id": "BROKEN", "turns": [',
        json.dumps({"turns": [{"user": "no id"}]}),
        json.dumps({"id": "NO-TURNS"}),
        json.dumps({"id": "OK-1", "turns": [{"user": "duplicate id"}]}),
        json.dumps([1, 2]),
        json.dumps({"id": "OK-2", "turns": [{"user": "b"}]}),
    ]) + "\n"
    path = write(tmp_path, "mixed.jsonl", text)
    result = load_goldens([path])
    assert [c.id for c in result.cases] == ["OK-1", "OK-2"]
    assert [i.line for i in result.invalid] == [2, 3, 4, 5, 6]
    expected = ["not valid JSON", "the case has no `id`", "the case has no turns (and no `input`)",
                f"duplicate case id `OK-1` (first at {path}:1)", "a case must be a mapping, not list"]
    assert all(i.message.startswith(e) for i, e in zip(result.invalid, expected)), result.invalid
    assert all(i.file == path for i in result.invalid)


def test_yaml_list_of_cases_reports_line_of_each_bad_case(tmp_path):
    path = write(tmp_path, "list.yaml", """\
- id: Y-1
  turns: [{user: a}]
- id: Y-2
  turns: "not a list"
- id: Y-3
  turns: [{event: e}]
""")
    result = load_goldens([path])
    assert [c.id for c in result.cases] == ["Y-1", "Y-3"]
    assert [(i.line) for i in result.invalid] == [3]
    assert result.cases[1].line == 5


def test_invalid_yaml_reports_the_line_and_skips_the_file(tmp_path):
    path = write(tmp_path, "bad.yaml", "id: Z\nturns: [\n  - user: a\n")
    result = load_goldens([path])
    (bad,) = result.invalid  # the case starting at line 1 is lost; the message says where YAML broke
    assert result.cases == [] and bad.line == 1
    assert "not valid YAML at line 3" in bad.message and "1 case lost" in bad.message


def test_folders_are_read_recursively_in_sorted_order(tmp_path):
    (tmp_path / "sub").mkdir()
    write(tmp_path, "b.jsonl", json.dumps({"id": "B", "turns": [{"user": "b"}]}) + "\n")
    write(tmp_path, "sub/a.yaml", "id: A\nturns: [{user: a}]\n")
    write(tmp_path, "notes.txt", "ignored: not a golden file")
    result = load_goldens([str(tmp_path)])
    assert [c.id for c in result.cases] == ["B", "A"]


@pytest.mark.parametrize("content,fragment", [
    (b"\x00\x01\x02binary", "binary file"),
    (b"\xff\xfe\x00\xd8", "not valid UTF-16"),  # FF FE: a UTF-16 byte-order mark, then half a pair
])
def test_unreadable_golden_files_are_unusable_input(tmp_path, content, fragment):
    path = tmp_path / "x.jsonl"
    path.write_bytes(content)
    with pytest.raises(LocatedError) as err:
        load_goldens([str(path)])
    assert fragment in err.value.render()


def test_missing_golden_file_is_unusable_input(tmp_path):
    with pytest.raises(LocatedError) as err:
        load_goldens([str(tmp_path / "nope.jsonl")])
    assert "no such file" in err.value.render()
