"""GraphWalker JSON models into mbt's DSL: vertices -> states, edges -> transitions, requirements -> tags.

GraphWalker (and AltWalker) keep models as JSON: per model, vertices and edges with names, `requirements`, an edge
`guard` and `actions` in a JavaScript subset, model-level `actions` that initialise variables, and a
`startElementId`. mbt translates guards and actions when they are simple comparisons, boolean logic and assignments
(`x = 1`, `x++`, `x += 2`, `!a && (b || c == 'x')`); anything else is reported (which edge, which text) and the
transition is kept without it, marked `unspecified` with the original text, never silently dropped. Every state and
transition cites the JSON file (`source graphwalker`) at the line of its element, so `mbt check` traces it back.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mbt.errors import LocatedError, Problem
from mbt.parsing.grammar import EXPRESSION_PREFIXES, reserved_words

RESERVED = reserved_words() | EXPRESSION_PREFIXES  # from the grammar: model keywords such as `table` are fine names
# Words that are keywords where an element's annotations may follow (a state named so could not start a line).
SOFT_KEYWORDS = {"title", "contract", "complete", "stated", "inferred", "unspecified", "severity", "id", "tag",
                 "initial", "final", "source"}


@dataclass
class Note:
    """Something in the GraphWalker file that was not translated as such, with where it is."""

    line: int
    message: str

    def render(self, path: str) -> str:
        return f"{path}:{self.line}: note: {self.message}"


@dataclass
class GraphWalkerImport:
    text: str  # the DSL
    models: list[str]
    notes: list[Note] = field(default_factory=list)


class Untranslatable(Exception):
    """A guard or action outside the translated JavaScript subset."""


# ---------------------------------------------------------------- the JavaScript subset

_TOKEN = re.compile(r"""\s*(?:(?P<num>\d+(?:\.\d+)?)|(?P<str>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')|"""
                    r"""(?P<name>[A-Za-z_$][A-Za-z0-9_$]*)|(?P<op>===|!==|==|!=|<=|>=|&&|\|\||\+\+|--|\+=|-=|"""
                    r"""[-+<>!()=;]))""")


def tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            rest = text[pos:].strip()
            if not rest:
                break
            raise Untranslatable(f"`{rest[0]}` is outside the translated subset")
        kind = m.lastgroup
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


def _js_string(raw: str) -> str:
    body, out, i = raw[1:-1], [], 0
    while i < len(body):
        if body[i] == "\\" and i + 1 < len(body):
            out.append({"n": "\n", "t": "\t"}.get(body[i + 1], body[i + 1]))
            i += 2
        else:
            out.append(body[i])
            i += 1
    return "".join(out)


def dsl_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t") + '"'


class _Expr:
    """Recursive descent over a token list: JavaScript precedence, DSL text out; records names and constants."""

    def __init__(self, toks: list[tuple[str, str]], names: Names):
        self.toks, self.i, self.names = toks, 0, names
        self.used: list[str] = []  # variables read
        self.constants: dict[str, list[Any]] = {}  # variable -> literals it is compared with

    def peek(self) -> str | None:
        return self.toks[self.i][1] if self.i < len(self.toks) else None

    def take(self) -> tuple[str, str]:
        if self.i >= len(self.toks):
            raise Untranslatable("the expression ends too early")
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def parse(self) -> str:
        text = self.or_()
        if self.i != len(self.toks):
            raise Untranslatable(f"`{self.toks[self.i][1]}` is outside the translated subset")
        return text

    def or_(self) -> str:
        parts = [self.and_()]
        while self.peek() == "||":
            self.take()
            parts.append(self.and_())
        return " or ".join(parts) if len(parts) == 1 else "(" + " or ".join(parts) + ")"

    def and_(self) -> str:
        parts = [self.not_()]
        while self.peek() == "&&":
            self.take()
            parts.append(self.not_())
        return parts[0] if len(parts) == 1 else "(" + " and ".join(parts) + ")"

    def not_(self) -> str:
        if self.peek() == "!":
            self.take()
            return f"not ({self.not_()})"
        return self.comparison()

    def comparison(self) -> str:
        left_start = self.i
        left = self.sum_()
        op = self.peek()
        if op in ("==", "===", "!=", "!==", "<", "<=", ">", ">="):
            self.take()
            right_start = self.i
            right = self.sum_()
            self._note_constant(left_start, right_start)
            dsl_op = {"===": "==", "!==": "!="}.get(op, op)
            return f"{left} {dsl_op} {right}"
        return left

    def _note_constant(self, left_start: int, right_start: int) -> None:
        # `x < 3`: the constant tells the variable's type and range.
        a, b = self.toks[left_start], self.toks[right_start]
        for var, lit in ((a, b), (b, a)):
            if var[0] == "name" and var[1] not in ("true", "false") and lit[0] in ("num", "str"):
                self.constants.setdefault(var[1], []).append(_literal_value(lit))
            if var[0] == "name" and lit[0] == "name" and lit[1] in ("true", "false"):
                self.constants.setdefault(var[1], []).append(lit[1] == "true")

    def sum_(self) -> str:
        text = self.atom()
        while self.peek() in ("+", "-"):
            op = self.take()[1]
            text = f"{text} {op} {self.atom()}"
        return text

    def atom(self) -> str:
        kind, value = self.take()
        if value == "(":
            inner = self.or_()
            if self.peek() != ")":
                raise Untranslatable("a `(` is not closed")
            self.take()
            return f"({inner})"
        if value == "-" and self.peek() is not None and self.toks[self.i][0] == "num":
            return "-" + self.number(self.take()[1])
        if kind == "num":
            return self.number(value)
        if kind == "str":
            return dsl_string(_js_string(value))
        if kind == "name":
            if value in ("true", "false"):
                return value
            if value in ("null", "undefined"):
                return "none"
            if self.peek() == "(":
                raise Untranslatable(f"`{value}(...)` calls a function")
            self.used.append(value)
            return self.names.variable(value)
        raise Untranslatable(f"`{value}` is outside the translated subset")

    @staticmethod
    def number(text: str) -> str:
        if "." in text:
            raise Untranslatable(f"`{text}` is a decimal number (fsm variables are whole numbers)")
        return text


def _literal_value(tok: tuple[str, str]) -> Any:
    kind, value = tok
    if kind == "num":
        return int(value) if "." not in value else float(value)
    if kind == "str":
        return _js_string(value)
    return value == "true"


# ---------------------------------------------------------------- names


class Names:
    """GraphWalker names as DSL names: identifiers, not reserved, unique per kind of thing."""

    def __init__(self):
        self.vars: dict[str, str] = {}
        self.taken: set[str] = set()

    @staticmethod
    def clean(raw: str, fallback: str) -> str:
        name = re.sub(r"[^A-Za-z0-9_]", "_", raw or "").strip("_") or fallback
        if name[0].isdigit():
            name = "_" + name
        if name in RESERVED or name in SOFT_KEYWORDS:
            name += "_"
        return name

    def unique(self, raw: str, fallback: str, used: set[str]) -> str:
        base = self.clean(raw, fallback)
        name, n = base, 2
        while name in used:
            name, n = f"{base}_{n}", n + 1
        used.add(name)
        return name

    def variable(self, raw: str) -> str:
        if raw not in self.vars:
            self.vars[raw] = self.unique(raw, "v", self.taken)
        return self.vars[raw]


# ---------------------------------------------------------------- conversion


def import_graphwalker(path: str | Path, relative_to: str | Path | None = None) -> GraphWalkerImport:
    """Convert a GraphWalker JSON file. `relative_to`: the folder the DSL will live in (for the `source` path)."""
    from mbt.parsing.loader import parse_text, read_text

    shown = str(path)
    text = read_text(Path(path), shown)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise LocatedError([Problem(shown, err.lineno, err.colno, f"not valid JSON: {err.msg}")]) from None
    models = data.get("models") if isinstance(data, dict) else None
    if isinstance(data, dict) and models is None and "vertices" in data:
        models = [data]  # a single model object, without the outer wrapper
    if not isinstance(models, list) or not models:
        raise LocatedError([Problem(shown, 1, 1, "not a GraphWalker model: expected `models: [...]` with vertices "
                                                 "and edges")])
    folder = Path(relative_to) if relative_to is not None else Path(path).resolve().parent
    source_path = os.path.relpath(Path(path).resolve(), folder.resolve()).replace(os.sep, "/")
    converter = _Converter(shown, text)
    parts = [f"# Imported from GraphWalker: {Path(path).name}. Guards and actions outside the translated JavaScript",
             "# subset are kept as `unspecified` notes with their original text.",
             f"source graphwalker {dsl_string(source_path)}", ""]
    names: list[str] = []
    used_models: set[str] = set()
    for index, model in enumerate(models):
        if not isinstance(model, dict):
            raise LocatedError([Problem(shown, 1, 1, f"model {index + 1} is not a JSON object")])
        dsl, name = converter.model(model, index, used_models)
        parts += dsl + [""]
        names.append(name)
    converter.shared_states(models)
    out = "\n".join(parts)
    try:
        parse_text(out, shown)
    except LocatedError as err:
        # E.g. a variable used as a number in one place and as text in another: say what and where.
        first = err.problems[0]
        line = out.splitlines()[first.line - 1].strip() if 0 < first.line <= len(out.splitlines()) else ""
        raise LocatedError([Problem(shown, 1, 1, f"the converted model does not type-check: {first.message} "
                                                 f"(in the converted line `{line}`)")]) from None
    return GraphWalkerImport(out, names, converter.notes)


def load_graphwalker(path: str | Path):
    """A GraphWalker JSON file read as a model file (`mbt coverage --model FILE.json`)."""
    from mbt.parsing.loader import parse_text

    imported = import_graphwalker(path)
    return parse_text(imported.text, str(path))


class _Converter:
    def __init__(self, path: str, text: str):
        self.path, self.text = path, text
        self.lines = text.splitlines()
        self.notes: list[Note] = []

    def line_of(self, element_id: Any) -> int:
        """The line of `"id": "<id>"` in the JSON text (1 when it cannot be found)."""
        if element_id is None:
            return 1
        pattern = re.compile(r'"id"\s*:\s*' + re.escape(json.dumps(element_id)))
        for number, line in enumerate(self.lines, start=1):
            if pattern.search(line):
                return number
        return 1

    def span(self, element: dict) -> str:
        line = self.line_of(element.get("id"))
        name = element.get("name")
        if isinstance(name, str) and name and line <= len(self.lines):
            # Quote the name when it is written near the id (mbt check verifies the quote at those lines).
            near = [n for n in range(max(1, line - 3), min(len(self.lines), line + 3) + 1)
                    if json.dumps(name)[1:-1] in self.lines[n - 1]]
            near.sort(key=lambda n: (abs(n - line), n))
            if near and "\\" not in json.dumps(name):
                lo, hi = min(line, near[0]), max(line, near[0])
                where = f"{lo}-{hi}" if hi != lo else f"{lo}"
                return f"@graphwalker:{where} {dsl_string(name)}"
        return f"@graphwalker:{line}"

    def note(self, element: dict, message: str) -> None:
        self.notes.append(Note(self.line_of(element.get("id")), message))

    def model(self, model: dict, index: int, used_models: set[str]) -> tuple[list[str], str]:
        names = Names()
        title = model.get("name") or f"model {index + 1}"
        name = names.unique(str(title), f"model{index + 1}", used_models)
        vertices = [v for v in model.get("vertices") or [] if isinstance(v, dict)]
        edges = [e for e in model.get("edges") or [] if isinstance(e, dict)]
        if not vertices:
            raise LocatedError([Problem(self.path, self.line_of(model.get("id")), 1,
                                        f"GraphWalker model `{title}` has no vertices")])
        states: dict[Any, str] = {}
        used_states: set[str] = set()
        for v in vertices:
            states[v.get("id")] = names.unique(str(v.get("name") or ""), f"v_{v.get('id')}", used_states)
        events: dict[str, str] = {}
        used_events: set[str] = set()
        variables: dict[str, dict] = {}  # DSL name -> {"init": value, "types": set, "consts": list, "incr": bool}

        def var(raw: str) -> dict:
            return variables.setdefault(names.variable(raw), {"init": None, "types": [], "consts": [], "incr": False})

        # Model-level actions initialise variables.
        for statement in _statements(model.get("actions") or []):
            try:
                target, value, kind = _assignment(statement)
            except Untranslatable as err:
                self.note(model, f"model `{title}`: start action `{statement}` not translated: {err}")
                continue
            if kind == "set" and value[0] in ("num", "str", "bool"):
                info = var(target)
                info["init"] = value
                info["types"].append(value[0])
                info["consts"].append(value[1])
            else:
                self.note(model, f"model `{title}`: start action `{statement}` not translated: only `x = literal` "
                                 "initialises a variable")
        lines_out: list[str] = []
        transitions: list[str] = []
        has_out = {e.get("sourceVertexId") for e in edges if e.get("sourceVertexId") is not None}
        start_id = model.get("startElementId")
        initial = None
        if start_id in states:
            initial = states[start_id]
        for e in edges:
            source, target = e.get("sourceVertexId"), e.get("targetVertexId")
            edge_label = f"edge {e.get('id')} ({e.get('name') or 'unnamed'})"
            if target not in states:
                raise LocatedError([Problem(self.path, self.line_of(e.get("id")), 1,
                                            f"{edge_label}: targetVertexId {target!r} is not a vertex of `{title}`")])
            if source is not None and source not in states:
                raise LocatedError([Problem(self.path, self.line_of(e.get("id")), 1,
                                            f"{edge_label}: sourceVertexId {source!r} is not a vertex of `{title}`")])
            event = events.get(str(e.get("name") or ""))
            if event is None:
                event = names.unique(str(e.get("name") or ""), f"e_{e.get('id')}", used_events)
                events[str(e.get("name") or "")] = event
            if source is None:
                if e.get("id") == start_id or initial is None:
                    # GraphWalker starts before its start edge: an initial state of our own leads into it.
                    initial_state = names.unique("start", "start", used_states)
                    lines_out.append(f"  state {initial_state} initial inferred")
                    source_name, initial = initial_state, initial_state
                else:
                    self.note(e, f"{edge_label} has no source vertex and is not the start element; not imported")
                    continue
            else:
                source_name = states[source]
            guard_text, action_texts, untranslated = "", [], []
            guard = e.get("guard")
            if isinstance(guard, str) and guard.strip():
                try:
                    parser = _Expr(tokens(guard), names)
                    guard_text = f" [{parser.parse()}]"
                    for raw in parser.used:
                        var(raw)
                    for raw, consts in parser.constants.items():
                        info = var(raw)
                        info["consts"] += consts
                        info["types"] += [_kind_of(c) for c in consts]
                except Untranslatable as err:
                    self.note(e, f"{edge_label}: guard `{guard}` not translated: {err}; the transition is kept "
                                 "without it")
                    untranslated.append(f"guard `{guard}`")
            for statement in _statements(e.get("actions") or []):
                try:
                    action, raw, info_update = self.action(statement, names)
                    info = var(raw)
                    for key, value in info_update.items():
                        info[key] = info[key] + value if isinstance(value, list) else value or info[key]
                    action_texts.append(action)
                except Untranslatable as err:
                    self.note(e, f"{edge_label}: action `{statement}` not translated: {err}")
                    untranslated.append(f"action `{statement}`")
            annotations = [self.span(e)] if e.get("id") is not None else []
            if untranslated:
                reason = "GraphWalker " + "; ".join(untranslated) + " not translated"
                annotations.append(f"unspecified {dsl_string(reason)}")
            annotations += [f"tag {dsl_string(str(r))}" for r in e.get("requirements") or []]
            actions = f" / {', '.join(action_texts)}" if action_texts else ""
            transitions.append(f"  {source_name} -> {states[target]} on {event}{guard_text}{actions}"
                               + (" " + " ".join(annotations) if annotations else ""))
        if initial is None:
            initial = states[vertices[0].get("id")]
            self.note(model, f"model `{title}` names no start element; its first vertex `{initial}` is the initial state")
        out = [f"fsm {name} {self.span(model) if model.get('id') is not None else ''}".rstrip() + " {",
               f"  title {dsl_string(str(title) + ' (imported from GraphWalker)')}"]
        if model.get("generator"):
            out.append(f"  # GraphWalker generator: {_comment(str(model['generator']))}")
        for dsl_name, info in sorted(variables.items()):
            out.append(f"  var {dsl_name}: {_type_text(info)}{_initial_text(info)}")
        out += lines_out
        for v in vertices:
            flags = " initial" if states[v.get("id")] == initial else ""
            if v.get("id") not in has_out and states[v.get("id")] != initial:
                flags += " final"
            annotations = [self.span(v)] + [f"tag {dsl_string(str(r))}" for r in v.get("requirements") or []]
            if v.get("sharedState"):
                out.append(f"  # shared state {_comment(str(v['sharedState']))}: GraphWalker may jump to another model "
                           "here; mbt measures each model on its own")
            if v.get("actions"):
                self.note(v, f"vertex {v.get('id')} ({v.get('name')}): vertex actions are not translated")
            out.append(f"  state {states[v.get('id')]}{flags} {' '.join(annotations)}")
        for event in events.values():
            out.append(f"  event {event}")
        out += transitions
        out.append("}")
        return out, name

    def action(self, statement: str, names: Names) -> tuple[str, str, dict]:
        target, value, kind = _assignment(statement)
        dsl_target = names.variable(target)
        if kind == "incr":
            return f"{dsl_target} := {dsl_target} {value}", target, {"types": ["num"], "incr": True}
        if value[0] in ("num", "str", "bool"):
            return f"{dsl_target} := {_literal_text(value)}", target, {"types": [value[0]], "consts": [value[1]]}
        parser = _Expr(value[1], names)
        return f"{dsl_target} := {parser.parse()}", target, {}

    def shared_states(self, models: list) -> None:
        shared: dict[str, list[str]] = {}
        for model in models:
            if not isinstance(model, dict):
                continue
            for v in model.get("vertices") or []:
                if isinstance(v, dict) and v.get("sharedState"):
                    shared.setdefault(str(v["sharedState"]), []).append(f"{model.get('name')}/{v.get('name')}")
        for name, where in sorted(shared.items()):
            self.notes.append(Note(1, f"shared state `{name}` links {', '.join(where)}; mbt imports each model on its "
                                      "own (runs do not jump between models)"))


def _statements(actions: list) -> list[str]:
    """GraphWalker actions: a list of strings, each holding one or more `;`-separated statements."""
    out = []
    for item in actions if isinstance(actions, list) else [actions]:
        for part in re.split(r";(?=(?:[^'\"]|'[^']*'|\"[^\"]*\")*$)", str(item)):
            if part.strip():
                out.append(part.strip())
    return out


def _assignment(statement: str) -> tuple[str, Any, str]:
    """(variable, value, kind): kind "set" with a literal ("num"/"str"/"bool", value) or ("expr", tokens); "incr"
    with "+ N" / "- N"."""
    toks = tokens(statement)
    if toks and toks[0] == ("name", "var") or toks and toks[0] == ("name", "let"):
        toks = toks[1:]
    if len(toks) == 2 and toks[0][0] == "name" and toks[1][1] in ("++", "--"):
        return toks[0][1], "+ 1" if toks[1][1] == "++" else "- 1", "incr"
    if len(toks) == 2 and toks[1][0] == "name" and toks[0][1] in ("++", "--"):
        return toks[1][1], "+ 1" if toks[0][1] == "++" else "- 1", "incr"
    if len(toks) >= 3 and toks[0][0] == "name" and toks[1][1] in ("+=", "-=") and len(toks) == 3 and toks[2][0] == "num":
        if "." in toks[2][1]:
            raise Untranslatable(f"`{toks[2][1]}` is a decimal number")
        return toks[0][1], f"{'+' if toks[1][1] == '+=' else '-'} {toks[2][1]}", "incr"
    if len(toks) >= 3 and toks[0][0] == "name" and toks[1][1] == "=":
        rest = toks[2:]
        if len(rest) == 1 and rest[0][0] in ("num", "str"):
            if rest[0][0] == "num" and "." in rest[0][1]:
                raise Untranslatable(f"`{rest[0][1]}` is a decimal number")
            return toks[0][1], (rest[0][0], _literal_value(rest[0])), "set"
        if len(rest) == 2 and rest[0][1] == "-" and rest[1][0] == "num" and "." not in rest[1][1]:
            return toks[0][1], ("num", -int(rest[1][1])), "set"
        if len(rest) == 1 and rest[0] in (("name", "true"), ("name", "false")):
            return toks[0][1], ("bool", rest[0][1] == "true"), "set"
        return toks[0][1], ("expr", rest), "set"
    raise Untranslatable("only `x = value`, `x++`, `x--`, `x += n` and `x -= n` are translated")


def _kind_of(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "num"
    return "str"


def _literal_text(value: tuple[str, Any]) -> str:
    kind, v = value
    if kind == "bool":
        return "true" if v else "false"
    if kind == "num":
        return str(v)
    return dsl_string(v)


def _type_text(info: dict) -> str:
    kinds = info["types"] or (["bool"] if info["init"] is None else [info["init"][0]])
    kind = kinds[0]
    if kind == "bool":
        return "bool"
    if kind == "str":
        return "string"
    numbers = [c for c in info["consts"] if isinstance(c, int) and not isinstance(c, bool)]
    lo, hi = min(numbers + [0]), max(numbers + [0])
    if info["incr"]:
        hi += 1  # a counter compared with `< n` reaches n
    return f"int[{lo}..{max(hi, lo + 1)}]"


def _initial_text(info: dict) -> str:
    if info["init"] is None:
        return ""
    return f" = {_literal_text(info['init'])}"


def _comment(text: str) -> str:
    return "".join(c if c.isprintable() else " " for c in text)
