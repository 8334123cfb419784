"""Issue 14, volume: goldens are streamed. A JSON Lines file is read line by line from the disk (never held whole,
whatever its size), a YAML list is composed one item at a time, and what the reader keeps per case (the ids seen,
for duplicates) is a few machine words."""

from __future__ import annotations

import json

from mbt.goldens import loader
from mbt.goldens.loader import GoldenStream, load_goldens
from mbt.goldens.seen import SeenIds
from tests.memory import peak_while

CASE = '{{"id": "C{0}", "turns": [{{"user": "hello {0}"}}]}}'


def test_a_jsonl_file_is_never_held_in_memory_whole(tmp_path):
    path = tmp_path / "big.jsonl"
    filler = "// " + "x" * 200
    with path.open("w", encoding="utf-8") as out:
        for i in range(20_000):  # 4 MB: a case every 500 lines, comments between (cheap to read)
            out.write((CASE.format(i) if i % 500 == 0 else filler) + "\n")
    size = path.stat().st_size
    counted: list[int] = []

    def read() -> None:
        stream = GoldenStream([str(path)])
        counted.append(sum(1 for _ in stream.cases))

    peak = peak_while(read)
    assert counted == [40]
    assert peak < size / 4, f"{peak:,} bytes allocated for a {size:,}-byte file"


def test_a_jsonl_file_larger_than_the_whole_file_limit_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(loader, "MAX_GOLDEN_BYTES", 100)
    path = tmp_path / "g.jsonl"
    path.write_text("\n".join(CASE.format(i) for i in range(10)) + "\n", encoding="utf-8")
    assert [c.id for c in load_goldens([str(path)]).cases] == [f"C{i}" for i in range(10)]
    whole = tmp_path / "g.json"  # a JSON array is read whole: the limit holds, with a message
    whole.write_text("[" + ",".join(CASE.format(i) for i in range(10)) + "]", encoding="utf-8")
    try:
        load_goldens([str(whole)])
    except loader.LocatedError as err:
        assert "file is too large" in err.render() and "read whole" in err.render()
    else:
        raise AssertionError("a .json file over the limit was read")


def test_a_yaml_list_is_composed_one_case_at_a_time(tmp_path):
    path = tmp_path / "g.yaml"
    path.write_text("".join(f"- id: Y{i}\n  turns:\n    - user: hello {i}\n      assert_state: {{state: s{i}}}\n"
                            for i in range(400)), encoding="utf-8")
    size = path.stat().st_size
    counted: list[int] = []
    peak = peak_while(lambda: counted.append(sum(1 for _ in GoldenStream([str(path)]).cases)))
    assert counted == [400]
    # The text (as bytes and as str) and one case's nodes; the whole node tree alone is some 90 times the text.
    assert peak < 10 * size, f"{peak:,} bytes allocated for a {size:,}-byte file"


def test_a_yaml_syntax_error_after_streamed_cases_loses_only_its_piece(tmp_path):
    path = tmp_path / "g.yaml"
    path.write_text("- id: A\n  turns: [{user: a}]\n- id: B\n  turns: [{user: b}]\n- id: C\n  turns: [{user: c\n"
                    "- id: D\n  turns: [{user: d}]\n", encoding="utf-8")
    loaded = load_goldens([str(path)])
    assert [c.id for c in loaded.cases] == ["A", "B", "D"]  # A and B were read before the error: not read twice
    assert [i.line for i in loaded.invalid] == [5] and "not valid YAML" in loaded.invalid[0].message


def test_a_file_that_changes_during_the_run_is_refused(tmp_path):
    path = tmp_path / "g.jsonl"
    path.write_text(CASE.format(1) + "\n", encoding="utf-8")
    stream = GoldenStream([str(path)])
    path.write_text(CASE.format(1) + "\n" + CASE.format(2) + "\n", encoding="utf-8")
    try:
        list(stream.cases)
    except loader.LocatedError as err:
        assert "changed while mbt was reading it" in err.render()
    else:
        raise AssertionError("a changed file was read")


def test_split_parts_are_ranges_of_the_file_not_its_text(tmp_path):
    path = tmp_path / "g.jsonl"
    path.write_text("\n".join(CASE.format(i) for i in range(100)) + "\n", encoding="utf-8")
    stream = GoldenStream([str(path)])
    later = stream.split(0.5)
    assert later is not None
    assert all(isinstance(p[2], loader.FileRange) for p in stream.pieces + later.pieces)
    early = [(c.id, c.line) for c in stream.cases]
    assert early + [(c.id, c.line) for c in later.all_cases()] == [(f"C{i}", i + 1) for i in range(100)]


def test_seen_ids_tell_every_id_apart_and_say_where_it_was_first():
    seen = SeenIds()
    for i in range(5000):  # past several growths of the table
        assert seen.first(f"id-{i}", f"f{i % 3}.jsonl", i + 1) is None
    assert len(seen) == 5000
    assert seen.first("id-4", "other.jsonl", 9) == "f1.jsonl:5"
    assert seen.first("id-4999", "x", 1) == "f1.jsonl:5000"
    assert seen.first("\ud800", "x", 2) is None  # not text, but still an id the table can hold
    assert json.dumps(len(seen)) == "5001"
