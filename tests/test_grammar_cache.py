"""The lark parser is built once per grammar and cached in mbt's private cache folder; a broken cache is rebuilt."""

from __future__ import annotations

from mbt.parsing import grammar


def test_parser_tables_are_cached_by_grammar_content_and_survive_corruption(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    built = grammar._parser.__wrapped__(0)  # bypass the in-process memo
    (cached,) = (tmp_path / "mbt").glob("grammar-*.lark-cache")
    assert (tmp_path / "mbt").stat().st_mode & 0o077 == 0  # private: a pickle nobody else may plant
    cached.write_bytes(b"not a pickle")
    again = grammar._parser.__wrapped__(0)
    text = 'fsm m {\n  state s initial\n}\n'
    assert again.parse(text) == built.parse(text)
    assert cached.read_bytes() != b"not a pickle"  # rebuilt and rewritten


def test_no_cache_when_the_folder_cannot_be_written(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))  # a file where a folder should be
    assert grammar._parser.__wrapped__(0).parse('fsm m {\n  state s initial\n}\n') is not None
