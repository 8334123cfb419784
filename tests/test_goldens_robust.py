"""Issue 14, golden files: no case lost or miscounted by line splitting, a BOM mid-file, or upper-case suffixes."""

from __future__ import annotations

import json

from mbt.goldens.loader import load_goldens


def test_unicode_line_separators_inside_strings_do_not_split_a_case(tmp_path):
    golden = tmp_path / "g.jsonl"
    cases = [{"id": "A", "turns": [{"user": "pasted\u2028text\u2029with\u0085breaks"}]}, {"id": "B", "turns": [{}]},
             {"id": "C", "turns": [{"user": "x"}]}]
    golden.write_text("\n".join(json.dumps(c, ensure_ascii=False) for c in cases) + "\n", encoding="utf-8")
    loaded = load_goldens([str(golden)])
    assert [c.id for c in loaded.cases] == ["A", "B", "C"] and not loaded.invalid
    assert [c.line for c in loaded.cases] == [1, 2, 3]
    assert loaded.cases[0].turns[0].user == "pasted\u2028text\u2029with\u0085breaks"


def test_a_bom_at_the_start_of_a_later_line_is_ignored(tmp_path):
    golden = tmp_path / "g.jsonl"
    golden.write_text('{"id": "A", "turns": [{"user": "x"}]}\n\ufeff{"id": "B", "turns": [{"user": "y"}]}\n',
                      encoding="utf-8")
    loaded = load_goldens([str(golden)])
    assert [c.id for c in loaded.cases] == ["A", "B"] and not loaded.invalid


def test_upper_case_suffixes_are_golden_files_too(tmp_path):
    (tmp_path / "A.JSONL").write_text('{"id": "A", "turns": [{"user": "x"}]}\n', encoding="utf-8")
    (tmp_path / "B.YML").write_text("id: B\nturns: [{user: y}]\n", encoding="utf-8")
    loaded = load_goldens([str(tmp_path)])
    assert sorted(c.id for c in loaded.cases) == ["A", "B"]
