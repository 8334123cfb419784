"""Writers: hostile ids, user text and values become valid, inert Python and valid JSONL; nothing is spliced."""

from __future__ import annotations

import ast
import importlib.util
import inspect
import json
import sys
from pathlib import Path

import jinja2
import pytest

from mbt import api
from mbt.generate.adapter import ReferenceAdapter
from mbt.generate.support import Driver
from mbt.generate.writers import _environment, doc_literal, identifier, py_literal, render_jsonl
from mbt.goldens.loader import load_goldens
from mbt.parsing.loader import load_file

HOSTILE = [
    'a"b', "a'b", '"""', "'''", 'x"""; import os; os.system("echo pwned") #', "back\\slash\\", "\\", "\\n",
    "line\nbreak", "cr\rlf", "tab\t", "nul\x00", "sep\u2028para\u2029nel\x85", "}}{{ x }}{% if %}", "# comment",
    "😀 中文 tiếng Việt", "\\\"\"\"", "'); import os; os.system('x'); ('", "",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_a_python_literal_reads_back_as_the_same_value(text: str):
    value = {"k": [text, {"n": None, "b": True, "i": -3}], text: text}
    assert ast.literal_eval(py_literal(value)) == value
    assert ast.literal_eval(py_literal(value, indent=8, width=20)) == value  # broken over lines too


@pytest.mark.parametrize("text", HOSTILE)
def test_a_docstring_holds_any_text_inertly(text: str):
    source = f"def f():\n    {doc_literal(text, 4)}\n    return 1\n"
    namespace: dict = {}
    exec(compile(source, "<test>", "exec"), namespace)  # noqa: S102 - the point is that this is inert
    assert inspect.cleandoc(namespace["f"].__doc__) == inspect.cleandoc(text)
    assert namespace["f"]() == 1
    tree = ast.parse(source)
    assert [type(n).__name__ for n in tree.body[0].body] == ["Expr", "Return"]


@pytest.mark.parametrize("name", ["x y", "1abc", "import", "a-b", "é", "a;b", ""])
def test_only_plain_identifiers_become_names(name: str):
    with pytest.raises(ValueError):
        identifier(name)


def test_a_template_cannot_insert_a_value_without_a_filter():
    env = _environment()
    with pytest.raises(TypeError, match="without an escaping filter"):
        env.from_string("x = {{ value }}").render(value="1; import os")
    assert env.from_string("x = {{ value | py }}").render(value="1; import os") == "x = '1; import os'"
    with pytest.raises((jinja2.UndefinedError, TypeError)):
        env.from_string("{{ missing | py }}").render()


def test_jsonl_lines_stay_lines_whatever_the_text():
    cases = [{"id": text, "turns": [{"user": text}]} for text in HOSTILE]
    body = render_jsonl(cases)
    lines = body.splitlines()  # what mbt's reader splits on, \u2028 and \x85 included
    assert len(lines) == len(cases)
    assert [json.loads(line)["id"] for line in lines] == HOSTILE


HOSTILE_MODEL = r"""
source doc "doc.md"

fsm hostile @doc "a title with \"\"\" quotes" {
  var note: string? = none
  state start initial
  state done final
  event say(text: string)
  bind text "hello \"\"\" there" -> say
  start -> done on say(text) [text == "a\"\"\"b\\c\nd'); import os; os.system('echo pwned') #"]
    / note := text, call tool(arg = "x\"\"\"y\\", copy = text)
    @doc "quote with \"\"\" and \\ and ''' and \n a newline"
  forbid any on * effect say "ask for a \"\"\"password" matching "pass\"\"\"word"
}
"""
HOSTILE_ID = 'x"""; import os; os.system("echo pwned") #\n\\\'; {{ id }}'


def load_module(path: Path):
    spec = importlib.util.spec_from_file_location(f"generated_{abs(hash(str(path)))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def assert_inert(source: str) -> None:
    """Only docstrings, `from __future__`, two constant assignments, and test functions calling sut.start/step with
    literal arguments."""
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.Expr):
            assert isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
        elif isinstance(node, ast.ImportFrom):
            assert node.module == "__future__"
        elif isinstance(node, ast.Assign):
            assert [t.id for t in node.targets] in (["MODEL"], ["MODEL_FILE"])
            ast.literal_eval(node.value)
        else:
            assert isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
            assert [a.arg for a in node.args.args] == ["sut"]
            doc, *calls = node.body
            assert isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant)
            for statement in calls:
                call = statement.value
                assert isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                assert call.func.value.id == "sut" and call.func.attr in ("start", "step")
                for arg in [*call.args, *(k.value for k in call.keywords)]:
                    ast.literal_eval(arg)


def test_hostile_strings_in_the_model_and_golden_ids_give_inert_working_tests(tmp_path: Path):
    model = tmp_path / "hostile.fsm"
    model.write_text(HOSTILE_MODEL, encoding="utf-8")
    goldens = tmp_path / "goldens.jsonl"
    # Reaches the forbidden `say` (exercised) without checking it, so its id lands in the test's docstring.
    goldens.write_text(json.dumps({"id": HOSTILE_ID, "turns": [{"event": "say", "args": {"text": "zz"}}]}) + "\n",
                       encoding="utf-8")
    out = tmp_path / "out"
    report = api.generate([str(model)], [str(goldens)], str(out))
    tests = report.models[0].tests
    assert {t.elements[0] for t in tests} >= {"transition:start.say->done", "forbidden:any.*!say"}
    source = (out / "tests" / "test_hostile_gaps.py").read_text(encoding="utf-8")
    assert_inert(source.split("\n", 2)[2])
    assert "Reached, but not checked, by goldens" in source
    assert "pwned" in source  # present, as data
    sys.path.insert(0, str(out / "tests"))
    try:
        module = load_module(out / "tests" / "test_hostile_gaps.py")
    finally:
        sys.path.remove(str(out / "tests"))
    fsm = load_file(model).models[0]
    for name in [n for n in vars(module) if n.startswith("test_")]:
        getattr(module, name)(Driver(ReferenceAdapter(fsm)))
    docs = [getattr(module, n).__doc__ for n in vars(module) if n.startswith("test_")]
    assert any(HOSTILE_ID in d for d in docs)
    stubs = load_goldens([str(out / "goldens" / "hostile.gaps.jsonl")])
    assert not stubs.invalid and len(stubs.cases) == len(tests)
    say = next(c for c in stubs.cases if c.id == "gen:hostile:transition:start.say->done")
    assert say.turns[0].args["text"] == "a\"\"\"b\\c\nd'); import os; os.system('echo pwned') #"
    assert say.turns[0].user.startswith("TODO(mbt):")
