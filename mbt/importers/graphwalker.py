"""GraphWalker JSON models into mbt's DSL: vertices -> states, edges -> transitions, requirements -> tags.

GraphWalker (and AltWalker) keep models as JSON: per model, vertices and edges with names, `requirements`, an edge
`guard` and `actions` in a JavaScript subset, model-level `actions` that initialise variables, and a
`startElementId`. mbt translates guards and actions when they are simple comparisons, boolean logic and assignments
(`x = 1`, `x++`, `x += 2`, `!a && (b || c == 'x')`); anything else is reported (which edge, which text) and the
transition is kept without it, marked `unspecified` with the original text, never silently dropped. Every state and
transition cites the JSON file (`source graphwalker`) at the line of its element, so `mbt check` traces it back.

The way through: `convert` takes the files read (`_Doc`, with where each value is) and a `_Converter` writes the DSL
lines; each fsm is one `_FsmBuilder`, which reads its models in file order (`read_model`: vertices, start actions,
edges) and then writes it (`write`: heading, variables, states, events, transitions, each guard and action
translated by `_Expr`). The text is read back with the DSL's parser before it is returned.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from mbt.errors import LocatedError, Problem, problem_at
from mbt.importers.graphml import read_graphml
from mbt.importers.jsonread import Ends, Path_, Positions, long_number, read_json
from mbt.model.common import Location
from mbt.parsing.grammar import EXPRESSION_PREFIXES, reserved_words
from mbt.parsing.loader import ModelFile, parse_text, read_text

RESERVED = reserved_words() | EXPRESSION_PREFIXES  # from the grammar: model keywords such as `table` are fine names
# Words that are keywords where an element's annotations may follow (a state named so could not start a line).
SOFT_KEYWORDS = {"title", "contract", "complete", "stated", "inferred", "unspecified", "severity", "id", "tag",
                 "initial", "final", "source"}


@dataclass
class Note:
    """Something in the GraphWalker file that was not translated as such, with where it is."""

    line: int
    message: str
    file: str = ""
    column: int | None = None  # given where the line holds several elements (a minified file)

    def render(self, path: str | None = None) -> str:
        where = f"{path or self.file}:{self.line}" + (f":{self.column}" if self.column is not None else "")
        return f"{where}: note: {self.message}"


@dataclass
class GraphWalkerImport:
    """An import's result: the DSL text, the fsm names, and what was not translated as such (notes)."""

    text: str  # the DSL
    models: list[str]
    locate: Callable[[int, int], Location]  # a DSL position -> where it is in the GraphWalker file
    model_file: ModelFile  # the DSL read back, every position in the GraphWalker file
    notes: list[Note] = field(default_factory=list)


_Object = dict[str, Any]  # a JSON object as json.loads gives it: each value is checked where it is read
Token = tuple[str, str]  # (kind, text): kind is "num", "str", "name" or "op"
Scalar = bool | int | float | str  # a JavaScript literal's value
_Literal = tuple[str, Scalar]  # ("num" | "str" | "bool", its value)
_Place = tuple[int, *tuple[str | int, ...]]  # a file's index, then a place in its document (jsonread.Path_)


class Untranslatable(Exception):
    """A guard or action outside the translated JavaScript subset."""


# ---------------------------------------------------------------- the JavaScript subset

_TOKEN = re.compile(r"""\s*(?:(?P<num>\d+(?:\.\d+)?)|(?P<str>"[^"\\]*(?:\\.[^"\\]*)*"|'[^'\\]*(?:\\.[^'\\]*)*')|"""
                    r"""(?P<name>(?:global\.)?[A-Za-z_$][A-Za-z0-9_$]*)|(?P<op>===|!==|==|!=|<=|>=|&&|\|\||\+\+|--|\+=|-=|"""
                    r"""[-+<>!()=;]))""")


def tokens(text: str) -> list[Token]:
    out: list[Token] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            rest = text[pos:].strip()
            if not rest:
                break
            raise Untranslatable(f"`{rest[0]}` is outside the translated subset")
        kind = m.lastgroup
        assert kind is not None  # every alternative of _TOKEN is a named group
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


MAX_NESTING = 48  # `(` and `!` levels a guard may nest: deeper ones are reported, never a RecursionError


class _Expr:
    """Recursive descent over a token list: JavaScript precedence, DSL text out; records names and constants.
    The recursion is bounded: nesting deeper than MAX_NESTING is reported as outside the subset."""

    def __init__(self, toks: list[Token], names: Names):
        self.toks, self.i, self.names = toks, 0, names
        self.depth = 0
        self.used: list[str] = []  # variables read
        self.constants: dict[str, list[Scalar]] = {}  # variable -> literals it is compared with

    def peek(self) -> str | None:
        return self.toks[self.i][1] if self.i < len(self.toks) else None

    def take(self) -> Token:
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
            self.nest()
            inner = self.not_()
            self.depth -= 1
            return f"not ({inner})"
        return self.comparison()

    def nest(self) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise Untranslatable(f"the expression nests deeper than {MAX_NESTING} levels of `(` and `!`")

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
            self.nest()
            inner = self.or_()
            if self.peek() != ")":
                raise Untranslatable("a `(` is not closed")
            self.take()
            self.depth -= 1
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


def _literal_value(tok: Token) -> Scalar:
    kind, value = tok
    if kind == "num":
        return int(value) if "." not in value else float(value)
    if kind == "str":
        return _js_string(value)
    return value == "true"


# ---------------------------------------------------------------- names


class Names:
    """GraphWalker names as DSL names: identifiers, not reserved, unique per kind of thing.

    Variables live in a scope: each GraphWalker model has its own JavaScript context, `global.x` is shared by all
    of a file's models. When models are merged (shared states), a local name used by several models is prefixed
    with its model's name (`collide`); `global.x` becomes `global_x`."""

    def __init__(self) -> None:
        self.vars: dict[str | tuple[str, str], str] = {}  # `global.x`, or (scope, x) -> DSL name
        self.taken: set[str] = set()
        self.scope = ""  # the model whose guards are being read
        self.collide: set[str] = set()

    @staticmethod
    def clean(raw: str, fallback: str) -> str:
        name = re.sub(r"[^A-Za-z0-9_]", "_", raw or "").strip("_") or re.sub(r"[^A-Za-z0-9_]", "_", fallback)
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
        key = raw if raw.startswith("global.") else (self.scope, raw)
        if key not in self.vars:
            wanted = f"{self.scope}_{raw}" if raw in self.collide else raw
            self.vars[key] = self.unique(wanted, "v", self.taken)
        return self.vars[key]


# ---------------------------------------------------------------- the files


@dataclass
class _Doc:
    """One GraphWalker file read: its document, where each value starts and ends, and the lines holding parts of
    more than one element (a minified file: there, spans and notes carry columns to tell the elements apart)."""

    shown: str
    text: str
    data: object  # as decoded; checked where it is read
    positions: Positions
    ends: Ends
    title: str  # the document's `name`, else the file's stem
    source: str = "graphwalker"  # the DSL `source` that cites it
    source_path: str = ""  # relative to where the DSL lives
    shared_lines: set[int] = field(default_factory=set)


def read_document(path: str | Path) -> _Doc:
    """A GraphWalker JSON or yEd GraphML file, read into GraphWalker's JSON document shape with its positions."""
    shown = str(path)
    text = read_text(Path(path), shown)
    data: object
    if Path(path).suffix.lower() == ".graphml":
        data, positions, ends = read_graphml(text, shown)
    else:
        data, positions, ends = read_json(text, shown)
    name = data.get("name") if isinstance(data, dict) else None
    doc = _Doc(shown, text, data, positions, ends, name if isinstance(name, str) and name else Path(path).stem)
    doc.shared_lines = _shared_lines(doc)
    return doc


def _model_places(doc: _Doc) -> list[tuple[object, Path_]]:
    """The document's models, each with its place (not yet checked to be objects)."""
    data = doc.data
    models = data.get("models") if isinstance(data, dict) else None
    if isinstance(data, dict) and models is None and "vertices" in data:
        return [(data, ())]  # a single model object, without the outer wrapper
    if not isinstance(models, list) or not models:
        raise LocatedError([Problem(doc.shown, 1, 1, "not a GraphWalker model: expected `models: [...]` with "
                                                     "vertices and edges")])
    return [(m, ("models", i)) for i, m in enumerate(models)]


def _items(model: object, key: str) -> list[object]:
    """The list a model holds under `key` (vertices, edges), or none when it holds something else."""
    value = model.get(key) if isinstance(model, dict) else None
    return value if isinstance(value, list) else []


def _parts(model: object, key: str) -> list[_Object]:
    """The objects of that list (what is not an object is refused where the model is converted)."""
    return [item for item in _items(model, key) if isinstance(item, dict)]


def _shared_lines(doc: _Doc) -> set[int]:
    """Lines where the ids or names of two elements (models, vertices, edges) are: one linear pass."""
    try:
        models = _model_places(doc)
    except LocatedError:
        return set()  # conversion reports it
    owner: dict[int, Path_] = {}
    shared: set[int] = set()
    for model, place in models:
        places = [place] + [(*place, key, i) for key in ("vertices", "edges") for i in range(len(_items(model, key)))]
        for p in places:
            for key in ("id", "name"):
                at = doc.positions.get((*p, key))
                if at is not None and owner.setdefault(at[0], p) != p:
                    shared.add(at[0])
    return shared


def _shared_names(doc: _Doc) -> set[str]:
    try:
        models = _model_places(doc)
    except LocatedError:
        return set()
    return {v["sharedState"] for model, _ in models for v in _parts(model, "vertices")
            if isinstance(v.get("sharedState"), str) and v["sharedState"] and not _is_blocked(v)}


def link_groups(docs: list[_Doc]) -> list[list[int]]:
    """The files GraphWalker would link, as groups of indices in the order given: files are linked when they share
    a state name (directly or through another file); a file that shares none with the others is a group alone."""
    parent = list(range(len(docs)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict[str, int] = {}
    for i, doc in enumerate(docs):
        for name in sorted(_shared_names(doc)):
            if name in first:
                a, b = find(first[name]), find(i)
                parent[max(a, b)] = min(a, b)
            else:
                first[name] = i
    groups: dict[int, list[int]] = {}
    for i in range(len(docs)):
        groups.setdefault(find(i), []).append(i)
    return list(groups.values())


def _read_all(paths: list[str | Path]) -> list[_Doc]:
    """Every file read; the problems of all of them reported together."""
    docs: list[_Doc] = []
    problems: list[Problem] = []
    for path in paths:
        try:
            docs.append(read_document(path))
        except LocatedError as err:
            problems.extend(err.problems)
    if problems:
        raise LocatedError(problems)
    return docs


def _cite(docs: list[_Doc], folder: Path) -> None:
    """Each file's `source` name and path relative to `folder`: `graphwalker` for one file, else one per file."""
    used: set[str] = set()
    for doc in docs:
        doc.source = "graphwalker" if len(docs) == 1 else Names().unique(f"graphwalker_{Path(doc.shown).stem}",
                                                                          "graphwalker", used)
        doc.source_path = os.path.relpath(Path(doc.shown).resolve(), folder.resolve()).replace(os.sep, "/")


# ---------------------------------------------------------------- conversion


def import_graphwalker(path: str | Path, relative_to: str | Path | None = None) -> GraphWalkerImport:
    """Convert a GraphWalker JSON (or yEd GraphML) file. `relative_to`: the folder the DSL will live in (for the
    `source` path)."""
    return import_graphwalker_files([path], relative_to)


def import_graphwalker_files(paths: list[str | Path], relative_to: str | Path | None = None) -> GraphWalkerImport:
    """Convert GraphWalker files given together (GraphWalker's `-m a.json ... -m b.json ...`) into one DSL text:
    files linked by shared states become one fsm, the others are converted each on its own."""
    docs = _read_all(paths)
    _cite(docs, Path(relative_to) if relative_to is not None else Path(paths[0]).resolve().parent)
    return convert(docs, link_groups(docs))


def load_graphwalker(path: str | Path) -> ModelFile:
    """A GraphWalker JSON or GraphML file read as a model file (`mbt coverage --model FILE.json`): every position
    is the JSON's (or GraphML's), not the converted DSL's."""
    return load_graphwalker_files([path])[0]


def load_graphwalker_files(paths: Sequence[str | Path]) -> list[ModelFile]:
    """GraphWalker files given together (`--model a.json b.graphml`, a folder), read as model files: one per group
    of files linked by shared states, named after the group's first file; every position is in its own file."""
    docs = _read_all(list(paths))
    out = []
    for group in link_groups(docs):
        members = [docs[i] for i in group]
        _cite(members, Path(members[0].shown).resolve().parent)
        out.append(convert(members, [list(range(len(members)))]).model_file)  # read back once, with real positions
    return out


def looks_like_graphwalker(path: Path) -> bool:
    """Whether a `.json` or `.graphml` file found in a folder is a GraphWalker model (other JSON files there are
    goldens or runs; other GraphML files another tool's): its first 64 KB show a JSON object with `vertices`, or
    yEd's GraphML namespace."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(65536).decode("utf-8", "ignore")
    except OSError:
        return False
    if path.suffix.lower() == ".graphml":
        return "<graphml" in head and "http://www.yworks.com/xml/graphml" in head
    return re.match(r"(?:\s|/\*.*?\*/|//[^\n]*)*\{", head, re.S) is not None and \
        re.search(r'"vertices"\s*:\s*\[', head) is not None


def convert(docs: list[_Doc], groups: list[list[int]]) -> GraphWalkerImport:
    """GraphWalker documents (JSON data, with where each value is) into one DSL text, a group of linked files as
    one fsm; read back before it is returned, so what `mbt import graphwalker` writes is a valid model."""
    converter = _Converter(docs)
    models = [converter.models(d) for d in range(len(docs))]
    title = ", ".join(Path(doc.shown).name for doc in docs)
    converter.emit([f"# Imported from GraphWalker: {title}. Guards and actions outside the translated JavaScript",
                    "# subset are kept as `unspecified` notes with their original text."]
                   + [f"source {doc.source} {dsl_string(doc.source_path)}" for doc in docs] + [""])
    names: list[str] = []
    for group in groups:
        if len(group) > 1:
            # Files linked by shared states: every model of them is one member of one fsm, as in one file.
            converter.note((group[0],), f"{', '.join(Path(docs[d].shown).name for d in group)}: linked through "
                                        "shared states into one fsm (a run goes on in any model that shares a state)")
            names.append(converter.fsm([m for d in group for m in models[d]],
                                       "_".join(Names.clean(docs[d].title, "model") for d in group)))
            continue
        (d,) = group
        data = docs[d].data
        shared = any(v.get("sharedState") for m, _ in models[d] for v in _parts(m, "vertices"))
        if shared and len(models[d]) > 1:
            # Shared states are where GraphWalker's runs cross models: the models become one fsm, each shared state
            # one state, so a run can go on in any model that shares it.
            names.append(converter.fsm(models[d], data.get("name") if isinstance(data, dict) else None))
        else:
            for member in models[d]:
                names.append(converter.fsm([member], None))
    out = "\n".join(text_ for text_, _ in converter.out)
    located = {n: where for n, (_, where) in enumerate(converter.out, start=1) if where is not None}
    main = docs[groups[0][0]]

    def locate(line: int, column: int) -> Location:
        where = located.get(line)
        if where is None:
            return Location(file=main.shown, line=1, column=1)
        return Location(file=docs[where[0]].shown, line=where[1], column=where[2])

    try:
        read_back = parse_text(out, main.shown, locate=locate, shown_text=main.text)
    except LocatedError:
        raise converter.explain(out, located) from None
    order = {doc.shown: i for i, doc in enumerate(docs)}
    notes = sorted(converter.notes, key=lambda n: (order.get(n.file, 0), n.line, n.column or 0))
    return GraphWalkerImport(out, names, locate, read_back, notes)


@dataclass
class _Edge:
    """One GraphWalker edge, read and checked, before it becomes a transition."""

    place: _Place
    raw: _Object
    name: str
    source: str | None  # DSL state; None: the start edge, which leaves no vertex
    target: str
    model: str  # the scope its guard and actions are read in


class _Vertex(NamedTuple):
    """The first vertex a DSL state comes from, and the tags of every vertex merged into it."""

    place: _Place
    raw: _Object
    tags: list[str]


@dataclass
class _Variable:
    """What the models tell of one variable: where it is first mentioned (its `var` line cites that), its start
    value, the kinds and constants it is set to or compared with, and each step a counter takes (with what the
    guard of that step's edge says of its range, and the edge)."""

    place: _Place
    init: _Literal | None = None
    types: list[str] = field(default_factory=list)  # "num", "str", "bool"
    consts: list[Scalar] = field(default_factory=list)
    steps: list[tuple[int, tuple[float, float] | None, _Place]] = field(default_factory=list)


class _Converter:
    """One conversion: the files, the notes, and the DSL lines written so far, each with where it comes from."""

    def __init__(self, docs: list[_Doc]):
        self.docs = docs
        self.notes: list[Note] = []
        # DSL lines, each with the place it comes from: (file index, line, column)
        self.out: list[tuple[str, tuple[int, int, int] | None]] = []
        self.used_models: set[str] = set()

    # ---- where things are (a place starts with its file's index: (0, "models", 2, "edges", 5, "id"))

    def where(self, place: _Place) -> tuple[_Doc, int, int]:
        """The file, line and column of the value at `place`, or of the nearest enclosing one."""
        doc = self.docs[place[0]]
        inner: Path_ = place[1:]
        while inner not in doc.positions and inner:
            inner = inner[:-1]
        line, column = doc.positions.get(inner, (1, 1))
        return doc, line, column

    def at(self, place: _Place) -> tuple[int, int]:
        return self.where(place)[1:]

    def fail(self, place: _Place, message: str) -> LocatedError:
        doc, line, column = self.where(place)
        return LocatedError([problem_at(doc.shown, doc.text, line, column, message)])

    def need(self, place: _Place, value: object, kind: type | tuple[type, ...], message: str) -> None:
        if not isinstance(value, kind) or isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple)
                                                                                   else (kind,)):
            raise self.fail(place, message)
        if isinstance(value, str):
            self.readable(place, value)

    def readable(self, place: _Place, text: str) -> None:
        """A string the importer reads as code (a guard, an action) holds no number past the JSON's own limit: it
        is refused where it is rather than converted without bound."""
        problem = long_number(text)
        if problem is not None:
            raise self.fail(place, problem)

    def note(self, place: _Place, message: str) -> None:
        doc, line, column = self.where(place)
        self.notes.append(Note(line, message, doc.shown, column if line in doc.shared_lines else None))

    def emit(self, lines: list[str], place: _Place | None = None) -> None:
        where = (place[0], *self.at(place)) if place is not None else None
        self.out += [(line, where) for line in lines]

    def span(self, place: _Place, element: _Object) -> str:
        """`@SOURCE:LINES "name"` from the element's id to its name; with columns where its lines hold another
        element too (a minified file), so each element cites its own characters."""
        doc, inner = self.docs[place[0]], place[1:]
        id_at = doc.positions.get((*inner, "id")) if "id" in element else None
        first = id_at or self.at(place)
        last = doc.ends.get((*inner, "id"), first) if "id" in element else first
        name, name_at = element.get("name"), doc.positions.get((*inner, "name"))
        quote = None
        # Quote the name when the file spells it as is (mbt check finds the quote in those lines).
        if isinstance(name, str) and name and name_at is not None and \
                json.dumps(name, ensure_ascii=False)[1:-1] == name and abs(name_at[0] - first[0]) <= 20:
            quote = name
            first, last = min(first, name_at), max(last, doc.ends.get((*inner, "name"), name_at))
        if any(n in doc.shared_lines for n in range(first[0], last[0] + 1)):
            cited = f"{first[0]}:{first[1]}-{last[0]}:{last[1]}"
        else:
            cited = f"{first[0]}" + (f"-{last[0]}" if last[0] != first[0] else "")
        return f"@{doc.source}:{cited}" + (f" {dsl_string(quote)}" if quote else "")

    def explain(self, out: str, located: dict[int, tuple[int, int, int]]) -> LocatedError:
        """The converted text failed to read back (e.g. a variable used as a number in one place and as text in
        another): the problem at the GraphWalker element the failing line comes from, in that element's file.
        The text is read once more without positions to know which converted line that is."""
        try:
            parse_text(out, "converted")
        except LocatedError as err:
            first = err.problems[0]
        else:  # pragma: no cover - the same text fails the same way
            first = Problem("converted", 0, 0, "unknown problem")
        where = located.get(first.line)
        doc, line, column = (self.docs[where[0]], where[1], where[2]) if where else (self.docs[0], 1, 1)
        shown_line = out.splitlines()[first.line - 1].strip() if 1 <= first.line <= len(out.splitlines()) else ""
        return LocatedError([problem_at(doc.shown, doc.text, line, column,
                                        f"the converted model does not type-check: {first.message}"
                                        + (f" (in the converted line `{shown_line}`)" if shown_line else ""))])

    def models(self, d: int) -> list[tuple[_Object, _Place]]:
        """The models of file `d`, each an object, with their places."""
        out: list[tuple[_Object, _Place]] = []
        for model, place in _model_places(self.docs[d]):
            if not isinstance(model, dict):
                raise self.fail((d, *place), "a model must be a JSON object")
            out.append((model, (d, *place)))
        return out

    # ---- shapes

    def element_id(self, place: _Place, element: _Object, what: str) -> str | None:
        value = element.get("id")
        if value is None:
            return None
        self.need((*place, "id"), value, (str, int), f"{what}: `id` must be a string")
        return str(value)

    def strings(self, place: _Place, value: object, what: str) -> list[str]:
        """A list of strings (a lone string is read as a list of one)."""
        if value is None:
            return []
        if isinstance(value, str):
            self.readable(place, value)
            return [value]
        if not isinstance(value, list):
            raise self.fail(place, f"{what} must be a list of strings")
        for i, item in enumerate(value):
            self.need((*place, i), item, str, f"{what} must be a list of strings")
        return list(value)

    def elements(self, model: _Object, place: _Place, key: str, title: str) -> list[tuple[_Place, _Object]]:
        value = model.get(key)
        if value is None:
            return []
        self.need((*place, key), value, list, f"model `{title}`: `{key}` must be a list")
        for i, item in enumerate(value):
            self.need((*place, key, i), item, dict, f"model `{title}`: {key[:-1]} {i + 1} must be a JSON object")
        return [((*place, key, i), item) for i, item in enumerate(value)]

    # ---- one fsm from one model, or from models linked by shared states

    def fsm(self, members: list[tuple[_Object, _Place]], file_name: object) -> str:
        """Write one fsm (see _FsmBuilder); its DSL name. `file_name`: the document's `name`, which names an fsm of
        several models."""
        build = _FsmBuilder(self, members, file_name)
        for k in range(len(members)):
            build.read_model(k)
        build.settle_start()
        build.note_unused_properties()
        build.write()
        return build.name


class _FsmBuilder:
    """One fsm built from its members: one GraphWalker model, or the models linked by shared states, each a
    JavaScript scope of its own. read_model reads a member's vertices (states), start actions (the variables'
    initial values) and edges; write writes the fsm, its transitions' guards and actions translated. Names and
    notes are taken in the order the files hold them, so the same files always give the same text."""

    def __init__(self, conv: _Converter, members: list[tuple[_Object, _Place]], file_name: object):
        self.conv, self.members = conv, members
        self.names = Names()
        self.titles = [str(m.get("name") or f"model {_number(p)}") for m, p in members]
        self.merged = len(members) > 1
        if self.merged:
            self.title = str(file_name) if file_name else " + ".join(self.titles)
        else:
            self.title = self.titles[0]
        self.name = self.names.unique(self.title, "model", conv.used_models)
        for (model, place), model_title in zip(members, self.titles):
            conv.need((*place, "name"), _text_or_empty(model.get("name")), str,
                      f"model `{model_title}`: `name` must be a string")
        # Each model is a JavaScript context of its own, named after the model (two files may both hold `Login`).
        used_scopes: set[str] = set()
        self.scopes = [self.names.unique(model_title, "model", used_scopes) for model_title in self.titles]
        self.sharers = _sharers(members)
        if self.merged:
            # Local variables used by more than one model are told apart by their model's name.
            self.names.collide = _colliding_names(members)
        self.states: dict[tuple[int, str], str] = {}  # (member, vertex id) -> DSL state
        self.vertex_of: dict[str, _Vertex] = {}  # DSL state -> its first vertex, and all tags
        self.shared_state: dict[str, str] = {}  # sharedState name -> DSL state
        self.used_states: set[str] = set()
        self.edges: list[_Edge] = []
        self.variables: dict[str, _Variable] = {}  # DSL name -> what the models tell of it
        self.initial: str | None = None
        self.start_edge: _Edge | None = None
        self.start_ids: list[str | None] = []  # each member's startElementId
        self.edge_of: dict[tuple[int, str], _Edge] = {}  # (member, edge id) -> the edge read
        # (member, id) -> why an element is left out (blocked, or touching a blocked vertex): a start there is noted
        self.left_out: dict[tuple[int, str], tuple[_Place, str]] = {}
        self.start_note = False  # the start element was left out, and noted
        self.started_var = ""  # the variable that makes a start edge leaving a vertex come first (see start)
        self.unused: dict[tuple[str, str], list[_Place]] = {}  # (model title, property not imported) -> where

    def variable(self, raw: str, where: _Place) -> _Variable:
        """The variable's record; `where`: the value that mentions it (its declaration is located at the first)."""
        return self.variables.setdefault(self.names.variable(raw), _Variable(where))

    # ---- reading a member

    def read_model(self, k: int) -> None:
        """Member k's vertices, start actions and edges (where the fsm starts is settled once all are read)."""
        (model, place), model_title = self.members[k], self.titles[k]
        self.names.scope = self.scopes[k]
        blocked_ids = _blocked_ids(model)
        vertices = self.conv.elements(model, place, "vertices", model_title)
        if not vertices:
            raise self.conv.fail(place, f"GraphWalker model `{model_title}` has no vertices")
        for vplace, v in vertices:
            self.read_vertex(k, vplace, v)
        self.read_start_actions(k)
        self.start_ids.append(self.start_id(k))
        if model.get("predefinedPathEdgeIds"):
            self.unused.setdefault((model_title, "predefinedPathEdgeIds"), []).append(
                (*place, "predefinedPathEdgeIds"))
        seen_edges: set[str] = set()
        for eplace, e in self.conv.elements(model, place, "edges", model_title):
            self.read_edge(k, eplace, e, seen_edges, blocked_ids)

    def read_vertex(self, k: int, vplace: _Place, v: _Object) -> None:
        """A vertex as a state; a vertex sharing a state already read (merged models) is that state. A blocked
        vertex is left out, as GraphWalker leaves it out."""
        model_title = self.titles[k]
        vid = self.conv.element_id(vplace, v, f"model `{model_title}`: vertex {_number(vplace)}")
        if vid is None:
            raise self.conv.fail(vplace, f"model `{model_title}`: vertex {_number(vplace)} has no `id`")
        if (k, vid) in self.states:
            raise self.conv.fail((*vplace, "id"), f"model `{model_title}`: vertex id `{vid}` is used twice")
        self.conv.need((*vplace, "name"), _text_or_empty(v.get("name")), str, f"vertex {vid}: `name` must be a string")
        if _is_blocked(v):
            self.conv.note(vplace, f"vertex {vid} ({v.get('name')}) is BLOCKED: not imported, nor the edges "
                                   "that touch it (GraphWalker filters blocked elements by default)")
            self.left_out[(k, vid)] = (vplace, f"vertex {vid} ({v.get('name')}) is BLOCKED")
            return
        tags = [t for t in self.conv.strings((*vplace, "requirements"), v.get("requirements"),
                                             f"vertex {vid}: `requirements`") if t.strip()]
        share = v.get("sharedState")
        if share is not None:
            self.conv.need((*vplace, "sharedState"), share, str, f"vertex {vid}: `sharedState` must be a string")
        if share and share in self.shared_state and self.merged:
            self.states[(k, vid)] = self.shared_state[share]
            merged_tags = self.vertex_of[self.shared_state[share]].tags
            merged_tags.extend(t for t in tags if t not in merged_tags)
            return
        raw_name = str(_text_or_empty(v.get("name")))
        if not raw_name:
            self.conv.note(vplace, f"model `{model_title}`: vertex {vid} has no name (GraphWalker's checker "
                                   f"rejects it); imported as `{self.names.clean('', f'v_{vid}')}`")
        wanted = raw_name
        if self.merged and self.names.clean(raw_name, f"v_{vid}") in self.used_states:
            wanted = f"{model_title}_{raw_name}"
        state = self.names.unique(wanted, f"v_{vid}", self.used_states)
        self.states[(k, vid)] = state
        self.vertex_of[state] = _Vertex(vplace, v, tags)
        if share and self.merged:
            self.shared_state[share] = state
        self.note_vertex(vplace, v, vid, raw_name)

    def note_vertex(self, vplace: _Place, v: _Object, vid: str, raw_name: str) -> None:
        """What an imported vertex holds that is not translated: a state shared with no other model, actions."""
        share = v.get("sharedState")
        if share and len(self.sharers.get(share, ())) < 2:
            self.conv.note((*vplace, "sharedState"), f"vertex {vid} ({raw_name}): shared state `{share}` is shared "
                           "with no other model of this file or of the files given with it, so it is an ordinary "
                           "state here (GraphWalker links models only through a state two of them share: give the "
                           "file that shares it too, `mbt import graphwalker a.json b.json` or `--model` on both)")
        if v.get("actions"):
            self.conv.note(vplace, f"vertex {vid} ({raw_name}): vertex actions are not translated")

    def read_start_actions(self, k: int) -> None:
        """Model-level actions: `x = literal` gives a variable its initial value; anything else is noted."""
        (model, place), model_title = self.members[k], self.titles[k]
        for statement in _statements(self.conv.strings((*place, "actions"), model.get("actions"),
                                                       f"model `{model_title}`: `actions`")):
            try:
                assignment = _assignment(statement)
            except Untranslatable as err:
                self.conv.note(place, f"model `{model_title}`: start action `{statement}` not translated: {err}")
                continue
            if assignment.literal is not None:
                info = self.variable(assignment.target, (*place, "actions"))
                info.init = assignment.literal
                info.types.append(assignment.literal[0])
                info.consts.append(assignment.literal[1])
            else:
                self.conv.note(place, f"model `{model_title}`: start action `{statement}` not translated: only "
                                      "`x = literal` initialises a variable")

    def start_id(self, k: int) -> str | None:
        """The member's `startElementId`, checked to be an id."""
        (model, place), model_title = self.members[k], self.titles[k]
        start_id = model.get("startElementId")
        if start_id is None:
            return None
        self.conv.need((*place, "startElementId"), start_id, (str, int),
                       f"model `{model_title}`: `startElementId` must be a string")
        return str(start_id)

    def read_edge(self, k: int, eplace: _Place, e: _Object, seen_edges: set[str], blocked_ids: set[str]) -> None:
        """An edge between two states read, kept for its transition. Left out with a note: a blocked edge, and
        (once the start is settled) an edge without a source vertex unless it is the start element (GraphWalker
        walks that one first)."""
        model_title = self.titles[k]
        eid = self.conv.element_id(eplace, e, f"model `{model_title}`: edge {_number(eplace)}")
        self.conv.need((*eplace, "name"), _text_or_empty(e.get("name")), str, f"edge {eid}: `name` must be a string")
        label = f"edge {eid} ({e.get('name') or 'unnamed'})"
        self.note_edge_properties(k, eplace, e, eid, label, seen_edges)
        source, target = (self.edge_end(eplace, e, end_key, label) for end_key in ("sourceVertexId", "targetVertexId"))
        if (target is None or (k, target) not in self.states) and target not in blocked_ids:
            raise self.conv.fail((*eplace, "targetVertexId"),
                                 f"{label}: targetVertexId {target!r} is not a vertex of `{model_title}`")
        if _is_blocked(e) or target in blocked_ids or source in blocked_ids:
            if _is_blocked(e):
                self.conv.note(eplace, f"{label} is BLOCKED: not imported (GraphWalker filters blocked elements "
                                       "by default)")
            if eid is not None:
                blocked_end = target if target in blocked_ids else source
                why = f"{label} is BLOCKED" if _is_blocked(e) else \
                    f"{label} touches the BLOCKED vertex {self.blocked_label(k, blocked_end)}"
                self.left_out.setdefault((k, eid), (eplace, why))
            return
        assert target is not None  # refused above: None is no blocked id
        if source is not None and (k, source) not in self.states:
            self.conv.note((*eplace, "sourceVertexId"), f"{label}: sourceVertexId {source!r} is not a vertex of "
                                                        f"`{model_title}`; GraphWalker walks it as a start edge")
            source = None
        edge = _Edge(eplace, e, str(_text_or_empty(e.get("name"))),
                     self.states[(k, source)] if source is not None else None, self.states[(k, target)],
                     self.names.scope)
        if eid is not None:
            self.edge_of.setdefault((k, eid), edge)
        self.edges.append(edge)

    def blocked_label(self, k: int, vid: str | None) -> str:
        """`ID (NAME)` of a blocked vertex of member k."""
        names = {str(v.get("id")): v.get("name") for v in _parts(self.members[k][0], "vertices")}
        return f"{vid} ({names.get(str(vid)) or 'unnamed'})"

    def note_edge_properties(self, k: int, eplace: _Place, e: _Object, eid: str | None, label: str,
                             seen_edges: set[str]) -> None:
        """A repeated edge id is refused; weights and dependencies are counted, to be noted once per model."""
        model_title = self.titles[k]
        if eid is not None and eid in seen_edges:
            # GraphWalker's checker rejects the file: an edge id names one edge (a start, a predefined path).
            raise self.conv.fail((*eplace, "id"), f"model `{model_title}`: {label}: edge id `{eid}` is used twice "
                                                  "(GraphWalker rejects the file: each edge needs an id of its own)")
        if eid is not None:
            seen_edges.add(eid)
        for key in ("weight", "dependency"):
            if e.get(key) is not None:
                self.unused.setdefault((model_title, key), []).append((*eplace, key))

    def edge_end(self, eplace: _Place, e: _Object, end_key: str, label: str) -> str | None:
        """The vertex id an edge's `sourceVertexId` or `targetVertexId` names, checked to be an id."""
        value = e.get(end_key)
        if value is None:
            return None
        self.conv.need((*eplace, end_key), value, (str, int), f"{label}: `{end_key}` must be a string")
        return str(value)

    def settle_start(self) -> None:
        """Where the fsm starts: the start element of the first member that names one, a vertex (the initial
        state) or an edge (walked first). It is looked for in that member, then in the other models of its file:
        GraphWalker Studio files name, in every model, an edge of one model (PetClinic). A start element left out
        (BLOCKED, or an edge into a blocked vertex) is noted and the fsm starts at its first vertex, as GraphWalker
        goes on after its dead-end warning. Then edges without a source vertex that are not the start are dropped."""
        first = next((k for k, sid in enumerate(self.start_ids) if sid is not None), None)
        if first is not None:
            start_id = self.start_ids[first]
            assert start_id is not None
            self.find_start(first, start_id)
            for k, sid in enumerate(self.start_ids):
                if sid is not None and sid != start_id:
                    self.conv.note((*self.members[k][1], "startElementId"),
                                   f"model `{self.titles[k]}`: its start element is not used; the merged model "
                                   "starts where the first model does")
        kept = []
        for e in self.edges:
            if e.source is None and e is not self.start_edge:
                self.conv.note(e.place, f"edge {e.raw.get('id')} ({e.name or 'unnamed'}) has no source vertex and "
                                        "is not the start element; not imported")
            else:
                kept.append(e)
        self.edges = kept

    def find_start(self, first: int, start_id: str) -> None:
        """The start element `start_id` of member `first`, in it or in another model of the same file."""
        file_index = self.members[first][1][0]
        order = [first] + [k for k in range(len(self.members))
                           if k != first and self.members[k][1][0] == file_index]
        for k in order:
            if (k, start_id) in self.states:
                self.initial = self.states[(k, start_id)]
                return
            if (k, start_id) in self.edge_of:
                self.start_edge = self.edge_of[(k, start_id)]
                return
            if (k, start_id) in self.left_out:
                place, why = self.left_out[(k, start_id)]
                self.start_note = True
                self.conv.note(place, f"{why}, and it is the start element: GraphWalker reaches a dead end there; "
                                      "not imported, and the model starts at its first vertex")
                return
        place = (*self.members[first][1], "startElementId")
        raise self.conv.fail(place, f"model `{self.titles[first]}`: startElementId {start_id!r} names no vertex or "
                                    "edge of the models of this file")

    def note_unused_properties(self) -> None:
        """Once per model and property: weights, dependencies and predefined paths are not imported, and why."""
        for (model_title, key), where in sorted(self.unused.items()):
            why = {"weight": "edge weights steer GraphWalker's random generator; mbt's suites cover every edge",
                   "dependency": "edge dependencies steer GraphWalker's weighted generators",
                   "predefinedPathEdgeIds": "a predefined path is one walk; mbt builds its own suites (a golden "
                                            "case can replay that walk)"}[key]
            self.conv.note(where[0], f"model `{model_title}`: {len(where)} `{key}` value(s) not imported: {why}")

    # ---- writing the fsm

    def write(self) -> None:
        """The fsm's DSL lines, each citing the GraphWalker value it comes from: the heading, variables, the
        states, the events, then the transitions."""
        start_line = self.start()
        transitions = self.transitions()
        events = self.event_names(transitions)
        body: list[tuple[str, _Place | None]] = []
        for (e, source), event in zip(transitions, events):
            self.names.scope = e.model
            body.append((self.transition(e, source, event), (*e.place, "id")))
        lines = self.heading() + self.variable_lines()
        if start_line is not None:
            lines.append(start_line)
        lines += self.state_lines(transitions) + self.event_lines(transitions, events) + body + [("}", None)]
        for line, place in lines:
            self.conv.emit([line], place)
        self.conv.emit([""])

    def start(self) -> tuple[str, _Place | None] | None:
        """Settle the initial state: the start vertex; or, when GraphWalker starts on an edge (it walks that edge
        first), a state of our own that leads into it, whose line is returned; or, without a start element, the
        first vertex (noted).

        A start edge that leaves a vertex (ShoppingCart's self-loop `e_EnterBaseURL`) is one edge GraphWalker walks
        first and may walk again from its vertex: one transition, not a copy from a state of our own (which made
        every suite cover it twice). The fsm starts at its source vertex; when that vertex has other ways out, a
        variable of our own (`gw_started`, false until the start edge is taken) guards them, so the start edge is
        still walked first."""
        line: tuple[str, _Place | None] | None = None
        if self.start_edge is not None and self.start_edge.source is not None:
            self.initial = self.start_edge.source
            if any(e.source == self.initial and e is not self.start_edge for e in self.edges):
                avoid = self.names.taken | {raw for model, _ in self.members for raw in _identifiers(model)}
                self.started_var = self.names.unique("gw_started", "gw_started", avoid)
                self.names.taken.add(self.started_var)
                self.variables[self.started_var] = _Variable((*self.start_edge.place, "id"), ("bool", False),
                                                             ["bool"], [False])
                self.conv.note(self.start_edge.place, f"edge {self.start_edge.raw.get('id')} ({self.start_edge.name}) "
                                                      f"is the start element and leaves `{self.initial}`: the fsm "
                                                      f"starts there, and `{self.started_var}` (false until the "
                                                      "start edge is taken) guards the state's other edges, so it "
                                                      "is walked first, as in GraphWalker")
        elif self.start_edge is not None:
            self.initial = self.names.unique("start", "start", self.used_states)
            line = (f"  state {self.initial} initial inferred", (*self.start_edge.place, "id"))
        if self.initial is None:
            first = next(iter(self.vertex_of))
            self.initial = first
            if not self.start_note:  # the left-out start element is noted where it is
                self.conv.note(self.members[0][1], f"model `{self.titles[0]}` names no start element; its first "
                                                   f"vertex `{first}` is the initial state")
        return line

    def transitions(self) -> list[tuple[_Edge, str]]:
        """Each transition's edge and source state: the start edge first (from the state of our own, when it
        leaves no vertex), then every edge in the order read."""
        out = [(self.start_edge, self.initial)] if self.start_edge is not None and self.initial is not None \
            and self.start_edge.source is None else []
        return out + [(e, e.source) for e in self.edges if e.source is not None]

    def event_names(self, transitions: list[tuple[_Edge, str]]) -> list[str]:
        """Each transition's event. Edges with one name are one event, except where two of them leave the same
        state: those are distinct edges GraphWalker chooses between, so each gets an event of its own, NAME_ID."""
        leaving: dict[tuple[str, str], int] = {}
        for e, source in transitions:
            leaving[(source, e.name)] = leaving.get((source, e.name), 0) + 1
        events: dict[str, str] = {}
        used_events: set[str] = set()
        event_of: list[str] = []
        for e, source in transitions:
            eid = e.raw.get("id")
            if not e.name or leaving[(source, e.name)] > 1:
                event = self.names.unique(f"{e.name}_{eid}" if e.name else "", f"e_{eid}", used_events)
            else:
                if e.name not in events:
                    events[e.name] = self.names.unique(e.name, f"e_{eid}", used_events)
                event = events[e.name]
            event_of.append(event)
        distinct = sorted({e.name for e, source in transitions if e.name and leaving[(source, e.name)] > 1})
        if distinct:
            self.conv.note(self.members[0][1], f"model `{self.title}`: {len(distinct)} edge name(s) label several "
                                               f"edges leaving one vertex ({', '.join(f'`{n}`' for n in distinct[:5])}"
                                               f"{', ...' if len(distinct) > 5 else ''}): each such edge is an event "
                                               "of its own, `NAME_ID`")
        return event_of

    def heading(self) -> list[tuple[str, _Place | None]]:
        """`fsm NAME @span {`, its title, and the generator GraphWalker would run it with (as a comment)."""
        model, place = self.members[0]
        span = self.conv.span(place, model) if model.get("id") is not None else ""
        lines: list[tuple[str, _Place | None]] = [
            (f"fsm {self.name} {span}".rstrip() + " {", place),
            (f"  title {dsl_string(self.title + ' (imported from GraphWalker)')}", place)]
        generator = model.get("generator")
        if generator:
            lines.append((f"  # GraphWalker generator: {_comment(str(generator))}", None))
        return lines

    def variable_lines(self) -> list[tuple[str, _Place | None]]:
        return [(f"  var {dsl_name}: {self.type_text(dsl_name, info)}{_initial_text(info)}", info.place)
                for dsl_name, info in sorted(self.variables.items())]

    def state_lines(self, transitions: list[tuple[_Edge, str]]) -> list[tuple[str, _Place | None]]:
        """One line per state; a state no transition leaves is `final`."""
        has_out = {source for _, source in transitions}
        lines: list[tuple[str, _Place | None]] = []
        for state, (vplace, v, tags) in self.vertex_of.items():
            flags = " initial" if state == self.initial else ""
            if state not in has_out and state != self.initial:
                flags += " final"
            annotations = [self.conv.span(vplace, v)] + [f"tag {dsl_string(t)}" for t in tags]
            lines.append((f"  state {state}{flags} {' '.join(annotations)}", (*vplace, "id")))
        return lines

    @staticmethod
    def event_lines(transitions: list[tuple[_Edge, str]], events: list[str]) -> list[tuple[str, _Place | None]]:
        """Each event once, in the order of the transitions, located at its first edge."""
        first_edge: dict[str, _Place] = {}
        for (e, _), event in zip(transitions, events):
            first_edge.setdefault(event, (*e.place, "id"))
        return [(f"  event {event}", place) for event, place in first_edge.items()]

    # ---- one transition: its guard and actions translated

    def transition(self, e: _Edge, source: str, event: str) -> str:
        """`SOURCE -> TARGET on EVENT [GUARD] / ACTIONS` with the edge's span and tags. A guard or action outside
        the translated subset is left out, noted, and the transition marked `unspecified` with its text."""
        label = f"edge {e.raw.get('id')} ({e.name or 'unnamed'})"
        untranslated: list[str] = []
        guard_text, bounds = self.guard(e, label, untranslated)
        action_texts = self.actions(e, label, bounds, untranslated)
        if self.started_var and e is self.start_edge:
            action_texts.append(f"{self.started_var} := true")
        elif self.started_var and source == self.initial:  # the start edge is walked before the others
            guard_text = f" [{self.started_var}]" if not guard_text else f" [{self.started_var} and ({guard_text[2:-1]})]"
        annotations = [self.conv.span(e.place, e.raw)] if e.raw.get("id") is not None else []
        if untranslated:
            reason = "GraphWalker " + "; ".join(untranslated) + " not translated"
            annotations.append(f"unspecified {dsl_string(reason)}")
        tags = self.conv.strings((*e.place, "requirements"), e.raw.get("requirements"), f"{label}: `requirements`")
        annotations += [f"tag {dsl_string(t)}" for t in tags if t.strip()]
        actions = f" / {', '.join(action_texts)}" if action_texts else ""
        return (f"  {source} -> {e.target} on {event}{guard_text}{actions}"
                + (" " + " ".join(annotations) if annotations else ""))

    def guard(self, e: _Edge, label: str, untranslated: list[str]) -> tuple[str, dict[str, tuple[float, float]]]:
        """The guard as DSL (` [...]`, or "" without one or when it is not translated) and what its top-level
        conjuncts bound (for the counters it guards); the variables it reads and compares are recorded."""
        guard = e.raw.get("guard")
        if guard is not None:
            self.conv.need((*e.place, "guard"), guard, str, f"{label}: `guard` must be a string")
        if not isinstance(guard, str) or not guard.strip():
            return "", {}
        try:
            toks = tokens(guard)
            parser = _Expr(toks, self.names)
            guard_text = f" [{parser.parse()}]"
            for raw in parser.used:
                self.variable(raw, (*e.place, "guard"))
            for raw, consts in parser.constants.items():
                info = self.variable(raw, (*e.place, "guard"))
                info.consts += consts
                info.types += [_kind_of(c) for c in consts]
            return guard_text, _conjunct_bounds(toks)
        except Untranslatable as err:
            self.conv.note(e.place, f"{label}: guard `{guard}` not translated: {err}; the transition is kept "
                                    "without it")
            untranslated.append(f"guard `{guard}`")
            return "", {}

    def actions(self, e: _Edge, label: str, bounds: dict[str, tuple[float, float]],
                untranslated: list[str]) -> list[str]:
        """The edge's actions as DSL assignments; what they set and step is recorded for the variables' types."""
        texts: list[str] = []
        for statement in _statements(self.conv.strings((*e.place, "actions"), e.raw.get("actions"),
                                                       f"{label}: `actions`")):
            try:
                text, assignment = self.action(statement)
            except Untranslatable as err:
                self.conv.note(e.place, f"{label}: action `{statement}` not translated: {err}")
                untranslated.append(f"action `{statement}`")
                continue
            info = self.variable(assignment.target, (*e.place, "actions"))
            if assignment.increment:
                info.types.append("num")
                info.steps.append((assignment.step, bounds.get(assignment.target), e.place))
            elif assignment.literal is not None:
                info.types.append(assignment.literal[0])
                info.consts.append(assignment.literal[1])
            texts.append(text)
        return texts

    def action(self, statement: str) -> tuple[str, _Assignment]:
        """One statement as a DSL assignment (`x := ...`), with the statement as read."""
        assignment = _assignment(statement)
        dsl_target = self.names.variable(assignment.target)
        if assignment.increment:
            return f"{dsl_target} := {dsl_target} {assignment.increment}", assignment
        if assignment.literal is not None:
            return f"{dsl_target} := {_literal_text(assignment.literal)}", assignment
        parser = _Expr(assignment.expression, self.names)
        return f"{dsl_target} := {parser.parse()}", assignment

    def type_text(self, dsl_name: str, info: _Variable) -> str:
        """The DSL type of a variable. A counter's range is sound when every step of it is guarded (`x < 3` before
        `x++` bounds it by 3); an unguarded counter is unbounded in GraphWalker, so mbt explores a window of it
        (COUNTER_WINDOW steps past its constants) and says so."""
        kinds = info.types or (["bool"] if info.init is None else [info.init[0]])
        kind = kinds[0]
        if kind == "bool":
            return "bool"
        if kind == "str":
            return "string"
        lo, hi, unbounded = _counter_range(info)
        if unbounded is not None:
            self.conv.note(unbounded, f"counter `{dsl_name}` changes without a guard that bounds it, so it is "
                                      f"unbounded in GraphWalker; mbt explores it within {lo}..{hi} (runs that would "
                                      "leave that range are not generated, and a golden case that leaves it is "
                                      "reported out of range)")
        return f"int[{lo}..{max(hi, lo + 1)}]"


COUNTER_WINDOW = 5


def _counter_range(info: _Variable) -> tuple[int, int, _Place | None]:
    """A whole-number variable's range: its constants and 0, widened by each guarded step to the bound its guard
    sets plus the step, and by COUNTER_WINDOW in each direction some step takes unguarded; with the first such
    unguarded step (None when every step is guarded)."""
    numbers = [c for c in info.consts if isinstance(c, int) and not isinstance(c, bool)]
    lo, hi = min(numbers + [0]), max(numbers + [0])
    free_up = free_down = False
    for step, bound, _ in info.steps:
        if step > 0:
            if bound is None or bound[1] == float("inf"):
                free_up = True
            else:
                hi = max(hi, int(bound[1]) + step)
        elif step < 0:
            if bound is None or bound[0] == float("-inf"):
                free_down = True
            else:
                lo = min(lo, int(bound[0]) + step)
    if not free_up and not free_down:
        return lo, hi, None
    if free_up:
        hi += COUNTER_WINDOW
    if free_down:
        lo -= COUNTER_WINDOW
    where = next(p for s, b, p in info.steps if (s > 0 and free_up and (b is None or b[1] == float("inf")))
                 or (s < 0 and free_down and (b is None or b[0] == float("-inf"))))
    return lo, hi, where


def _number(place: _Place) -> int:
    """The position (from 1) of the element at `place` in its list: a vertex, an edge, a model (a file holding
    one model object, not a list, has model 1)."""
    last = place[-1]
    return last + 1 if len(place) > 1 and isinstance(last, int) else 1


def _text_or_empty(value: object) -> object:
    """A name as checked for its shape: JSON `null` is no name (as a missing key is), anything else must be text."""
    return "" if value is None else value


def _is_blocked(element: _Object) -> bool:
    """Whether the element is BLOCKED (GraphWalker leaves those out by default)."""
    props = element.get("properties")
    return isinstance(props, dict) and props.get("blocked") in (True, "true")


def _blocked_ids(model: _Object) -> set[str]:
    return {str(v.get("id")) for v in _parts(model, "vertices") if _is_blocked(v)}


def _sharers(members: list[tuple[_Object, _Place]]) -> dict[str, set[int]]:
    """sharedState name -> the members with a (not blocked) vertex sharing it."""
    sharers: dict[str, set[int]] = {}
    for k, (model, _) in enumerate(members):
        for v in _parts(model, "vertices"):
            if isinstance(v.get("sharedState"), str) and v["sharedState"] and not _is_blocked(v):
                sharers.setdefault(v["sharedState"], set()).add(k)
    return sharers


def _colliding_names(members: list[tuple[_Object, _Place]]) -> set[str]:
    """The names that more than one member's guards and actions mention."""
    seen: dict[str, set[int]] = {}
    for k, (model, _) in enumerate(members):
        for raw in _identifiers(model):
            seen.setdefault(raw, set()).add(k)
    return {raw for raw, where in seen.items() if len(where) > 1}


_IDENT = re.compile(r"(?<![\w$.])[A-Za-z_$][\w$]*")


def _identifiers(model: _Object) -> set[str]:
    """The names a model's guards and actions mention (to tell its local variables from another model's)."""
    texts = [model.get("actions")] + [e.get(k) for e in _parts(model, "edges") for k in ("guard", "actions")]
    found: set[str] = set()
    for t in texts:
        for item in t if isinstance(t, list) else [t]:
            if isinstance(item, str):
                found.update(_IDENT.findall(re.sub(r"global\.[\w$]+", " ", item)))
    return found


def _top_conjuncts(toks: list[Token]) -> list[list[Token]]:
    """A guard's top-level conjuncts (`a && (b || c)`: `a`, `(b || c)`); none when `||` joins it at the top."""
    depth = 0
    parts: list[list[Token]] = []
    current: list[Token] = []
    for tok in toks:
        if tok[1] == "(":
            depth += 1
        elif tok[1] == ")":
            depth -= 1
        if depth == 0 and tok[1] == "||":
            return []
        if depth == 0 and tok[1] == "&&":
            parts.append(current)
            current = []
        else:
            current.append(tok)
    parts.append(current)
    return parts


def _conjunct_bounds(toks: list[Token]) -> dict[str, tuple[float, float]]:
    """What a guard's top-level conjuncts (`x < 3 && ...`) say about variables: name -> (lowest, highest) value
    the variable can have when the guard holds. Anything under `||` or `!` says nothing."""
    parts = _top_conjuncts(toks)
    out: dict[str, tuple[float, float]] = {}
    flip = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "===": "==="}
    for part in parts:
        if len(part) != 3:
            continue
        (ka, a), (_, op), (kb, b) = part
        if ka == "num" and kb == "name":
            (ka, a), op, (kb, b) = (kb, b), flip.get(op, ""), (ka, a)
        if ka != "name" or kb != "num" or "." in b:
            continue
        n = int(b)
        lo, hi = out.get(a, (float("-inf"), float("inf")))
        if op == "<":
            hi = min(hi, n - 1)
        elif op == "<=":
            hi = min(hi, n)
        elif op == ">":
            lo = max(lo, n + 1)
        elif op == ">=":
            lo = max(lo, n)
        elif op in ("==", "==="):
            lo, hi = max(lo, n), min(hi, n)
        out[a] = (lo, hi)
    return out


def _statements(actions: list[str]) -> list[str]:
    """GraphWalker actions: a list of strings, each holding one or more `;`-separated statements."""
    out = []
    for item in actions:
        for part in re.split(r";(?=(?:[^'\"]|'[^']*'|\"[^\"]*\")*$)", str(item)):
            if part.strip():
                out.append(part.strip())
    return out


@dataclass(frozen=True)
class _Assignment:
    """One statement of GraphWalker actions as read: `x = literal`, `x = expression` or a step `x++`, `x -= 2`
    (exactly one of literal, expression and increment is given)."""

    target: str  # the JavaScript name
    literal: _Literal | None = None
    expression: list[Token] = field(default_factory=list)  # the tokens after `=`
    increment: str = ""  # "+ 1", "- 2": as the DSL writes it after `x := x`

    @property
    def step(self) -> int:
        return int(self.increment.replace(" ", "")) if self.increment else 0


def _assignment(statement: str) -> _Assignment:
    """The statement read, or Untranslatable: only `x = value`, `x++`, `x--`, `x += n` and `x -= n` are."""
    toks = tokens(statement)
    if toks and toks[0] == ("name", "var") or toks and toks[0] == ("name", "let"):
        toks = toks[1:]
    if len(toks) == 2 and toks[0][0] == "name" and toks[1][1] in ("++", "--"):
        return _Assignment(toks[0][1], increment="+ 1" if toks[1][1] == "++" else "- 1")
    if len(toks) == 2 and toks[1][0] == "name" and toks[0][1] in ("++", "--"):
        return _Assignment(toks[1][1], increment="+ 1" if toks[0][1] == "++" else "- 1")
    if len(toks) >= 3 and toks[0][0] == "name" and toks[1][1] in ("+=", "-=") and len(toks) == 3 and toks[2][0] == "num":
        if "." in toks[2][1]:
            raise Untranslatable(f"`{toks[2][1]}` is a decimal number")
        return _Assignment(toks[0][1], increment=f"{'+' if toks[1][1] == '+=' else '-'} {toks[2][1]}")
    if len(toks) >= 3 and toks[0][0] == "name" and toks[1][1] == "=":
        return _set(toks[0][1], toks[2:])
    raise Untranslatable("only `x = value`, `x++`, `x--`, `x += n` and `x -= n` are translated")


def _set(target: str, rest: list[Token]) -> _Assignment:
    """`target = ...`: a literal (a whole number, a string, true or false) or an expression."""
    if len(rest) == 1 and rest[0][0] in ("num", "str"):
        if rest[0][0] == "num" and "." in rest[0][1]:
            raise Untranslatable(f"`{rest[0][1]}` is a decimal number")
        return _Assignment(target, literal=(rest[0][0], _literal_value(rest[0])))
    if len(rest) == 2 and rest[0][1] == "-" and rest[1][0] == "num" and "." not in rest[1][1]:
        return _Assignment(target, literal=("num", -int(rest[1][1])))
    if len(rest) == 1 and rest[0] in (("name", "true"), ("name", "false")):
        return _Assignment(target, literal=("bool", rest[0][1] == "true"))
    return _Assignment(target, expression=rest)


def _kind_of(value: Scalar) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "num"
    return "str"


def _literal_text(value: _Literal) -> str:
    kind, v = value
    if kind == "bool":
        return "true" if v else "false"
    if kind == "num":
        return str(v)
    return dsl_string(str(v))


def _initial_text(info: _Variable) -> str:
    if info.init is None:
        return ""
    return f" = {_literal_text(info.init)}"


def _comment(text: str) -> str:
    return "".join(c if c.isprintable() else " " for c in text)
