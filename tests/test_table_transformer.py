"""mbt's TableTransformer transforms as lark's Transformer does (the reference, called on the same transformer): the
same result for every model file of the examples and the test cases, and the same callbacks, defaults, discards and
VisitErrors on a small grammar that uses each of them."""

from __future__ import annotations

from pathlib import Path

import pytest
from lark import Lark, Token, Transformer, Tree, v_args
from lark.exceptions import UnexpectedInput, VisitError
from lark.visitors import Discard

from mbt.parsing import grammar, loader
from mbt.parsing.transformer import TableTransformer
from tests.model_files import MODEL_FILES as FILES
from tests.model_files import ROOT


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_model_file_transforms_as_with_lark(path: Path):
    try:
        tree = grammar.parser().parse(path.read_text(encoding="utf-8"))
    except UnexpectedInput:
        return  # a file written to fail parsing never reaches a transformer
    ours, stock = loader.FileTransformer(str(path)), loader.FileTransformer(str(path))
    try:
        expected = Transformer.transform(stock, tree)
    except VisitError as err:
        with pytest.raises(VisitError) as raised:
            ours.transform(tree)
        assert (raised.value.rule, raised.value.obj, repr(raised.value.orig_exc)) == (
            err.rule, err.obj, repr(err.orig_exc))
        return
    got = ours.transform(tree)
    assert got == expected and got


TOY = Lark(r"""
start: item+
item: pair | word | dropped | broken | plain
pair: "(" NUMBER "," NUMBER ")"
word: WORD
dropped: "drop" WORD
broken: "boom" NUMBER
plain: "plain" WORD
NUMBER: /[0-9]+/
WORD: /[a-z]+/
%ignore /\s+/
""", parser="lalr", propagate_positions=True)


class Rules:
    def __init__(self, explode_token: bool = False):
        super().__init__()
        self.explode_token = explode_token

    def NUMBER(self, token):  # noqa: N802 - lark names token callbacks by the token type
        if self.explode_token and token == "13":
            raise ValueError("unlucky")
        return int(token)

    @v_args(inline=True)
    def pair(self, a, b):
        return (a, b)

    @v_args(meta=True)
    def word(self, meta, children):
        return (str(children[0]), meta.line, meta.column)

    def dropped(self, children):
        return Discard

    def broken(self, children):
        raise KeyError(children[0])

    def item(self, children):
        return children[0] if children else "gone"


class Ours(Rules, TableTransformer):
    pass


class Theirs(Rules, Transformer):
    pass


@pytest.mark.parametrize("text", ["(1, 2) abc plain xyz", "drop q (3,4) drop r", "x\ny (5, 6)", "abc boom 7",
                                  "(13, 1)"])
@pytest.mark.parametrize("explode", [False, True])
def test_callbacks_defaults_discards_and_errors_as_with_lark(text: str, explode: bool):
    tree = TOY.parse(text)
    try:
        expected = Theirs(explode).transform(tree)
    except VisitError as err:
        with pytest.raises(VisitError) as raised:
            Ours(explode).transform(tree)
        assert (raised.value.rule, raised.value.obj, type(raised.value.orig_exc)) == (
            err.rule, err.obj, type(err.orig_exc))
        assert isinstance(err.obj, Token if explode and "13" in text else Tree)
        return
    got = Ours(explode).transform(tree)
    assert got == expected
    assert isinstance(got, Tree) and got.data == "start"  # __default__ builds the trees without a method


def test_a_discarded_root_and_a_lone_token():
    class Gone(TableTransformer):
        def start(self, children):
            return Discard

    assert Gone().transform(TOY.parse("abc")) is None
    assert Ours().transform(Token("NUMBER", "4")) == Theirs().transform(Token("NUMBER", "4"))


def test_an_overridden_default_token_callback_as_with_lark():
    class Shouting:
        def __default_token__(self, token):
            if token == "boom":
                raise ValueError("no")
            return token.upper()

    class OursShouting(Shouting, Ours):
        pass

    class TheirsShouting(Shouting, Theirs):
        pass

    tree = TOY.parse("abc (1, 2) plain xyz")
    got = OursShouting().transform(tree)
    assert got == TheirsShouting().transform(tree)
    assert ("ABC", 1, 1) in got.children  # WORD has no callback of its own: the default shouts it
    broken = Tree("word", [Token("WORD", "boom")])  # an error in the default is not wrapped, as lark does not wrap it
    with pytest.raises(ValueError):
        TheirsShouting().transform(broken)
    with pytest.raises(ValueError):
        OursShouting().transform(broken)
