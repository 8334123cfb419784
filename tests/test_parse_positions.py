"""mbt's parser records where each parse-tree node starts as lark's propagate_positions does (the reference): every
model file of the examples and the test cases, and a synthetic model with every construct nested, give the same
(rule, line, column) for every node."""

from __future__ import annotations

from pathlib import Path

import pytest
from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedInput

from mbt.parsing import grammar
from tests.model_files import MODEL_FILES as FILES
from tests.model_files import ROOT


@pytest.fixture(scope="module")
def reference() -> Lark:
    return Lark(grammar.grammar_text(), parser="lalr", propagate_positions=True, maybe_placeholders=True)


def starts(tree: Tree) -> list[tuple]:
    """(rule, line, column) of every node, or (rule, None) where it has no position; tokens with theirs."""
    out: list[tuple] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, Token):
            out.append((node.type, node.line, node.column))
            continue
        if not isinstance(node, Tree):
            out.append((repr(node),))
            continue
        meta = node.meta
        out.append((node.data, None) if meta.empty else (node.data, meta.line, meta.column))
        stack.extend(reversed(node.children))
    return out


def test_the_files_are_found():
    assert len(FILES) >= 20 and {p.suffix for p in FILES} >= {".fsm", ".dt", ".policy", ".inv"}


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_node_starts_where_lark_puts_it(path: Path, reference: Lark):
    text = path.read_text(encoding="utf-8")
    try:
        expected = starts(reference.parse(text))
    except UnexpectedInput:  # a file written to fail parsing: both parsers refuse it
        with pytest.raises(UnexpectedInput):
            grammar.parser().parse(text)
        return
    got = starts(grammar.parser().parse(text))
    assert got == expected
    assert any(len(s) == 3 and isinstance(s[0], str) and s[1] is not None for s in got)


def test_nested_and_inlined_rules_start_at_their_first_token(reference: Lark):
    # `(` is left out of the tree, yet the parenthesised guard starts there; a `?rule` passed up keeps its own start
    text = ('fsm m {\n  var n: int[0..9] = 0\n  var f: bool = false\n  state a initial\n  state b\n'
            '  a -> b on go [ ( (n >= 2) and not (f or n < 3) ) ] / n := (n + 1)\n'
            '  forbid b on go [((f))]\n}\n')
    got = starts(grammar.parser().parse(text))
    assert got == starts(reference.parse(text))
    # `and` starts at the `(` of `(n >= 2)`, its first operand; the outer parentheses pass it up with that start
    paren = text.splitlines()[5].index("(n") + 1
    assert [s[1:] for s in got if s[0] == "and_"] == [(6, paren)]
