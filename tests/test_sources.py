"""Source documents: loading and caching, whitespace-tolerant quote search, and span findings with their messages."""

from __future__ import annotations

import os

import pytest

from mbt.analysis.spans import check_spans
from mbt.model.common import Location, SourceDecl
from mbt.parsing.loader import load_file
from mbt.sources import SourceDocument, SourceError, load_document, normalise, source_path

POLICY = """\
# Account recovery

The assistant asks for the registered
recovery   e-mail address and repeats it back.

It never asks for the current password.
It never asks for the current password again.
"""


def test_normalise_collapses_whitespace_and_keeps_case():
    assert normalise("  The\tassistant \n\n asks  ") == "The assistant asks"
    assert normalise("\u3000全角\u3000空格 ") == "全角 空格"
    assert normalise("Case") != normalise("case")


def test_quote_search_spans_line_breaks_and_reports_lines():
    doc = SourceDocument(path="p.md", text=POLICY)
    assert doc.line_count == 7
    assert doc.find_quote("registered recovery e-mail address") == [(3, 4)]
    assert doc.find_quote("registered\n   recovery e-mail") == [(3, 4)]
    assert doc.find_quote("asks for the current password") == [(6, 6), (7, 7)]
    assert doc.find_quote("eats it") == [(4, 4)]  # inside a word is still text of the document
    assert doc.find_quote("the Current password") == []
    assert doc.find_quote("   ") == []


def test_quote_within_and_nearest():
    doc = SourceDocument(path="p.md", text=POLICY)
    assert doc.quote_within("registered recovery", 3, 4)
    assert not doc.quote_within("registered recovery", 3, 3)  # it runs onto line 4
    assert not doc.quote_within("registered recovery", 4, 7)
    assert doc.nearest_quote("asks for the current password", 7) == (7, 7)
    assert doc.nearest_quote("asks for the current password", 1) == (6, 6)
    assert doc.nearest_quote("not there", 1) is None


def test_documents_are_cached_per_path_and_reloaded_when_changed(tmp_path):
    path = tmp_path / "p.md"
    path.write_text("first\n", encoding="utf-8")
    doc = load_document(path)
    assert load_document(path) is doc
    path.write_text("first\nsecond line\n", encoding="utf-8")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    again = load_document(path)
    assert again is not doc and again.line_count == 2


@pytest.mark.parametrize("content, message", [
    (None, "no such file"),
    (b"\x00\x01binary", "binary file"),
    (b"caf\xe9\n", "not valid UTF-8"),
])
def test_unusable_documents_raise_a_plain_error(tmp_path, content, message):
    path = tmp_path / "doc.md"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(SourceError, match=message):
        load_document(path)


def test_source_paths_are_relative_to_the_model_folder(tmp_path):
    decl = SourceDecl(name="p", path="docs/p.md", loc=Location(file="m.fsm", line=1, column=1))
    assert source_path(tmp_path / "models" / "m.fsm", decl) == tmp_path / "models" / "docs" / "p.md"


# ---------------------------------------------------------------- span findings

def write(tmp_path, model: str, **docs: str):
    for name, text in docs.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    path = tmp_path / "m.fsm"
    path.write_text(model, encoding="utf-8")
    return load_file(path)


def test_a_moved_quote_says_where_it_is_now(tmp_path):
    file = write(tmp_path, 'source policy "policy.md"\nfsm m {\n'
                           '  state a initial @policy:2 "registered recovery e-mail address"\n'
                           '  state b final\n  event go\n  a -> b on go\n}\n', **{"policy.md": POLICY})
    (f,) = check_spans(file)
    assert (f.code, f.severity, f.location.line, f.location.column) == ("SPN003", "warning", 3, 19)
    assert f.message.startswith("quote moved: now at lines 3-4 of `policy` (policy.md), the span cites line 2")
    assert f.model == "m"


def test_a_quote_nowhere_and_lines_out_of_range(tmp_path):
    file = write(tmp_path, 'source policy "policy.md"\nfsm m {\n'
                           '  state a initial @policy:6 "asks for the old password"\n'
                           '  state b final @policy:20-21 "repeats it back"\n  event go\n  a -> b on go\n}\n',
                 **{"policy.md": POLICY})
    missing, out_of_range = check_spans(file)
    assert (missing.code, missing.location.line) == ("SPN004", 3)
    assert missing.message == 'quote not found anywhere in `policy` (policy.md): "asks for the old password"'
    assert (out_of_range.code, out_of_range.location.line) == ("SPN002", 4)
    assert out_of_range.message == ("span cites lines 20-21 of `policy` (policy.md), but the document has 7 lines; "
                                    "the quote is now at line 4")


def test_the_models_own_span_is_checked(tmp_path):
    file = write(tmp_path, 'source policy "policy.md"\nfsm m @policy:9 {\n  state a initial\n  state b final\n'
                           '  event go\n  a -> b on go\n}\n', **{"policy.md": POLICY})
    (f,) = check_spans(file)
    assert (f.code, f.location.line) == ("SPN002", 2)


def test_an_unusable_source_is_reported_once_with_every_citing_span(tmp_path):
    file = write(tmp_path, 'source policy "nowhere.md"\nfsm m {\n  state a initial @policy:1 "x"\n'
                           '  state b final @policy:2\n  event go\n  a -> b on go @policy "y"\n}\n')
    (f,) = check_spans(file)
    assert (f.code, f.severity, f.location.line) == ("SPN001", "error", 1)
    assert f.message == 'source `policy` ("nowhere.md"): no such file; 3 span(s) cite it and cannot be verified'
    assert [loc.line for loc in f.related] == [3, 4, 6]


def test_an_uncited_source_is_still_checked_and_a_good_one_is_silent(tmp_path):
    file = write(tmp_path, 'source policy "policy.md"\nsource old "gone.md"\nfsm m {\n'
                           '  state a initial @policy:6 "never asks for the current password."\n'
                           '  state b final\n  event go\n  a -> b on go\n}\n', **{"policy.md": POLICY})
    (f,) = check_spans(file)
    assert (f.code, f.location.line, f.related) == ("SPN001", 2, [])


def test_quote_within_searches_only_its_lines_and_agrees_with_every_occurrence():
    # The judge: quote_within as the definition says, from every occurrence find_quote lists.
    import random

    rnd = random.Random(3)
    words = ["e_Login", "v_Home", "a", "b c", "", "  ", "e_Login v_Home"]
    for _ in range(300):
        text = "\n".join(" ".join(rnd.choice(words) for _ in range(rnd.randint(0, 4))) for _ in range(rnd.randint(1, 9)))
        doc = SourceDocument("d.txt", text)
        quote = rnd.choice(words[:4] + ["Login v_", "e_Login v_Home e_Login", "c e_Login"])
        first, last = rnd.randint(0, 10), rnd.randint(0, 10)
        expected = any(first <= a and b <= last for a, b in doc.find_quote(quote))
        assert doc.quote_within(quote, first, last) == expected, (text, quote, first, last)


# ---------------------------------------------------------------- spans with columns

ONE_LINE = 'He said "e_Login v_Home" twice: e_Login v_Home, then stopped.\nsecond line\n'


def test_a_span_with_columns_is_read_and_described(tmp_path):
    file = write(tmp_path, 'source d "d.txt"\nfsm m {\n  state a initial @d:1:33-1:46 "e_Login v_Home"\n'
                           '  state b final @d:1:10-2:3\n  event go\n  a -> b on go @d:2\n}\n', **{"d.txt": ONE_LINE})
    (model,) = file.models
    a, b = model.states["a"].span, model.states["b"].span
    assert (a.line_start, a.column_start, a.line_end, a.column_end) == (1, 33, 1, 46)
    assert a.describe() == 'd:1:33-1:46 "e_Login v_Home"'
    assert (b.line_start, b.column_start, b.line_end, b.column_end) == (1, 10, 2, 3)
    assert model.transitions[0].span.describe() == "d:2"  # a span without columns reads as before
    assert check_spans(file) == []


def test_a_quote_outside_its_columns_has_moved_and_says_to_which_columns(tmp_path):
    # The quote is on line 1 twice; the span cites columns 1-8 ("He said "), where it is not.
    file = write(tmp_path, 'source d "d.txt"\nfsm m {\n  state a initial @d:1:1-1:8 "e_Login v_Home"\n'
                           '  state b final\n  event go\n  a -> b on go\n}\n', **{"d.txt": ONE_LINE})
    (f,) = check_spans(file)
    assert f.code == "SPN003"
    assert f.message.startswith("quote moved: now at 1:10-1:23 of `d` (d.txt), the span cites 1:1-1:8")


def test_columns_past_the_end_of_a_line_or_running_backwards_are_reported(tmp_path):
    file = write(tmp_path, 'source d "d.txt"\nfsm m {\n  state a initial @d:2:5-2:40\n'
                           '  state b final\n  event go\n  a -> b on go\n}\n', **{"d.txt": ONE_LINE})
    (f,) = check_spans(file)
    assert f.code == "SPN002"
    assert f.message == "span cites 2:5-2:40 of `d` (d.txt), but line 2 has 11 characters"
    from mbt.errors import LocatedError

    with pytest.raises(LocatedError, match="span range 1:9-1:3 runs backwards"):
        write(tmp_path, 'source d "d.txt"\nfsm m {\n  state a initial @d:1:9-1:3\n  state b final\n'
                        '  event go\n  a -> b on go\n}\n', **{"d.txt": ONE_LINE})


def test_quote_within_columns_agrees_with_every_occurrence():
    # The judge: the quote (its words, any white space between them) occurs inside the cited characters.
    import random
    import re

    rnd = random.Random(5)
    words = ["e_Login", "v_Home", "a", "b c", "", "  ", "e_Login v_Home"]
    for _ in range(400):
        text = "\n".join(" ".join(rnd.choice(words) for _ in range(rnd.randint(0, 4))) for _ in range(rnd.randint(1, 5)))
        doc = SourceDocument("d.txt", text)
        quote = rnd.choice(words[:4] + ["Login v_", "e_Login v_Home e_Login", "c e_Login"])
        lines = text.split("\n")
        count = len(doc.lines)  # a last line break ends a line, it starts none
        if count == 0:
            continue
        l1 = rnd.randint(1, count)
        l2 = rnd.randint(l1, count)
        c1 = rnd.randint(1, len(lines[l1 - 1]) + 1)
        c2 = rnd.randint(c1 if l2 == l1 else 1, len(lines[l2 - 1]) + 1)
        offset = [0]
        for line in lines:
            offset.append(offset[-1] + len(line) + 1)
        lo, hi = offset[l1 - 1] + c1 - 1, offset[l2 - 1] + c2  # c2 included
        pattern = re.compile(r"\s+".join(re.escape(w) for w in quote.split())) if quote.split() else None
        expected = pattern is not None and pattern.search(text[lo:hi]) is not None
        assert doc.quote_within_columns(quote, l1, c1, l2, c2) == expected, (text, quote, l1, c1, l2, c2)


def test_a_span_with_columns_resolves_to_exactly_its_characters():
    from mbt.measure.sources import _line_starts, resolve_span
    from mbt.model.common import Span

    here = Location(file="m.fsm", line=1, column=1)
    span = Span(source="d", line_start=1, column_start=33, line_end=1, column_end=46, quote="e_Login v_Home", loc=here)
    resolved = resolve_span(span, ONE_LINE, _line_starts(ONE_LINE))
    assert (resolved.start, resolved.end, resolved.found) == (32, 46, True)
    assert ONE_LINE[resolved.start:resolved.end] == "e_Login v_Home"
    # Without columns the single-line quote resolves to its first occurrence on the line.
    plain = Span(source="d", line_start=1, line_end=1, quote="e_Login v_Home", loc=here)
    assert resolve_span(plain, ONE_LINE, _line_starts(ONE_LINE)).start == 9
