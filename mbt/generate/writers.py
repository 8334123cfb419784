"""Skeleton writers (jinja2): pytest modules and golden-case JSONL stubs, with every inserted value escaped.

Templates never splice text: each `{{ ... }}` must go through a filter that turns the value into a Python literal
(`py`, via repr), a docstring (`doc`), a one-line comment (`comment`) or a checked identifier (`ident`). A value that
reaches the output without one is an error (the `finalize` hook), so ids, user text, quotes, newlines, triple quotes,
backslashes and Python code in the model or the goldens end up as inert data.
"""

from __future__ import annotations

import json
import keyword
from typing import Any, TypedDict

import jinja2

from mbt.generate.files import comment_safe
from mbt.generate.skeleton import Skeleton, Step
from mbt.generate.support import driver_methods


class DriverCall(TypedDict):
    """One call a generated test makes on the driver (`sut`): a Driver method, its arguments, its keyword arguments
    in order, and a comment written above it (or None)."""

    method: str
    args: list[object]
    kwargs: list[tuple[str, object]]
    comment: str | None


class GeneratedFunction(TypedDict):
    """One test function of a generated pytest module: its name, its docstring and the driver calls it makes."""

    name: str
    doc: str
    calls: list[DriverCall]


class Code(str):
    """Text already made safe for the generated file by a filter."""


def _finalize(value: Any) -> Any:
    if isinstance(value, Code):
        return value
    raise TypeError(f"a template inserted {value!r} without an escaping filter (py, doc, comment, ident)")


def py_flat(value: Any) -> str:
    """A Python literal for plain data (None, bool, int, finite float, str, lists, dicts with str keys), one line."""
    if value is None or isinstance(value, (bool, int, str)):
        return repr(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise TypeError("cannot write a non-finite number into generated code")
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(py_flat(v) for v in value) + "]"
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise TypeError("only str keys can be written")
        return "{" + ", ".join(f"{py_flat(k)}: {py_flat(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot write a {type(value).__name__} into generated code")


def py_literal(value: Any, indent: int = 0, width: int = 100) -> str:
    """py_flat, broken over lines (one item per line, block-indented from `indent`, the indentation of the line the
    literal starts on) when it would not fit in `width` columns."""
    flat = py_flat(value)
    if indent + 16 + len(flat) <= width or not isinstance(value, (list, tuple, dict)) or not value:
        return flat
    pad = " " * (indent + 4)
    if isinstance(value, dict):
        items = [f"{pad}{py_flat(k)}: {py_literal(v, indent + 4, width)}," for k, v in value.items()]
        return "{\n" + "\n".join(items) + "\n" + " " * indent + "}"
    items = [f"{pad}{py_literal(v, indent + 4, width)}," for v in value]
    return "[\n" + "\n".join(items) + "\n" + " " * indent + "]"


def doc_literal(text: str, indent: int = 0) -> str:
    """A docstring literal: triple-quoted when the text allows it, else repr() (always a valid, inert literal)."""
    plain = all(line.isprintable() for line in text.split("\n"))
    if plain and '"""' not in text and "\\" not in text and not text.endswith('"') and "\r" not in text:
        pad = " " * indent
        lines = text.split("\n")
        body = lines[0] + "".join("\n" + (pad + line if line else "") for line in lines[1:])
        return '"""' + body + ("\n" + pad if len(lines) > 1 else "") + '"""'
    return repr(text)


def identifier(name: str) -> str:
    if not name.isidentifier() or keyword.iskeyword(name) or not name.isascii():
        raise ValueError(f"{name!r} is not a safe Python identifier")
    return name


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False, trim_blocks=True,
                             lstrip_blocks=True, keep_trailing_newline=True, finalize=_finalize)
    env.filters["py"] = lambda value, indent=0: Code(py_literal(value, indent))
    env.filters["doc"] = lambda text, indent=0: Code(doc_literal(str(text), indent))
    env.filters["comment"] = lambda text: Code(comment_safe(str(text)))
    env.filters["ident"] = lambda name: Code(identifier(str(name)))
    return env


PYTEST_TEMPLATE = '''\
{{ module_doc | doc }}

from __future__ import annotations

MODEL = {{ model | py }}
MODEL_FILE = {{ model_file | py }}  # relative to this file; MBT_ADAPTER=reference runs the tests on it
{% for t in tests %}


def {{ t.name | ident }}(sut):
    {{ t.doc | doc(4) }}
{% for c in t.calls %}
{% if c.comment %}
    # {{ c.comment | comment }}
{% endif %}
{% if c.kwargs %}
    sut.{{ c.method | ident }}(
{% for a in c.args %}
        {{ a | py(8) }},
{% endfor %}
{% for k, v in c.kwargs %}
        {{ k | ident }}={{ v | py(8) }},
{% endfor %}
    )
{% else %}
    sut.{{ c.method | ident }}({% for a in c.args %}{{ a | py(4) }}{% if not loop.last %}, {% endif %}{% endfor %})
{% endif %}
{% endfor %}
{% endfor %}
'''

CONFTEST = '''\
"""pytest fixture for tests generated by `mbt generate`: `sut` drives the system under test through an adapter.

Choose the adapter with the environment variable MBT_ADAPTER:
    MBT_ADAPTER=package.module:factory   factory(model_name, model_path) returns your system's adapter
    MBT_ADAPTER=reference                mbt's reference machine for the model (the tests then check the model itself)
MBT_OBSERVABLE_ONLY=1 asserts only what a black box shows; MBT_TRANSCRIPTS=DIR records each test's run as a transcript
(`mbt runs --runs DIR` reads them back). The adapter protocol is described in mbt_support.py.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import pytest

from mbt_support import Driver


@pytest.fixture
def sut(request):
    spec = os.environ.get("MBT_ADAPTER", "")
    module = request.module
    model_path = str((Path(module.__file__).parent / module.MODEL_FILE).resolve())
    if not spec:
        pytest.fail("set MBT_ADAPTER=package.module:factory to test your system (or MBT_ADAPTER=reference to run "
                    "these tests on mbt's reference machine for the model)", pytrace=False)
    if spec == "reference":
        from mbt.generate.adapter import ReferenceAdapter

        driver = Driver(ReferenceAdapter.from_file(model_path, module.MODEL))
    else:
        name, _, attr = spec.partition(":")
        factory = getattr(importlib.import_module(name), attr or "make_adapter")
        driver = Driver(factory(module.MODEL, model_path))
    yield driver
    folder = os.environ.get("MBT_TRANSCRIPTS", "")
    if folder:
        driver.save_transcript(folder, request.node.nodeid, module.MODEL)
'''


def fsm_calls(sk: Skeleton) -> list[DriverCall]:
    """An FSM skeleton as driver calls: start from the precondition, then one checked step per event."""
    calls: list[DriverCall] = [{"method": "start", "args": [dict(sk.precondition)], "kwargs": [], "comment": None}]
    for step in sk.steps:
        kwargs: list[tuple[str, object]] = [("expect", step.expect())]
        if step.forbid is not None:
            kwargs.append(("forbid", step.forbid.data()))
        kwargs.append(("user", step.user))
        calls.append({"method": "step", "args": [step.event, dict(step.args)], "kwargs": kwargs,
                      "comment": todo_comment(step)})
    return calls


def render_pytest(tests: list[GeneratedFunction], model_name: str, model_file: str, module_doc: str) -> str:
    """A pytest module: one test per entry (`name`, `doc`, `calls`: driver method, arguments, keyword arguments)."""
    methods = driver_methods()  # the conversation's and every registered kind's (KindSupport.driver)
    for test in tests:
        for call in test["calls"]:
            if call["method"] not in methods:
                raise ValueError(f"unknown driver call {call['method']!r}")
    template = _environment().from_string(PYTEST_TEMPLATE)
    return template.render(module_doc=module_doc, model=model_name, model_file=model_file, tests=tests)


def todo_comment(step: Step) -> str | None:
    if step.utterance and step.user is None:
        return f"TODO: the words a user says for `{step.event}` (pass them as user=... for a conversational adapter)"
    if not step.observable:
        return (f"`{step.event}` is neither said by a user nor a tool result a `bind tool` declares: a recorded "
                "transcript does not show it")
    return None


def render_jsonl(cases: list[dict[str, Any]]) -> str:
    """One JSON object per line. Line and paragraph separators are escaped too: str.splitlines() would split there."""
    lines = []
    for case in cases:
        text = json.dumps(case, ensure_ascii=False, separators=(",", ":"))
        for ch in ("\x85", "\u2028", "\u2029"):
            text = text.replace(ch, f"\\u{ord(ch):04x}")
        lines.append(text)
    return "".join(line + "\n" for line in lines)


def conftest_source() -> str:
    return CONFTEST
