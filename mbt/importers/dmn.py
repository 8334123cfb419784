"""DMN XML (1.1 to 1.5) -> mbt's `table` DSL: for `mbt import dmn` and for reading `--model FILE.dmn` directly.

Each decision table becomes a `table` model: inputs with their `inputValues`, outputs with their `outputValues` and
default, the hit policy and aggregation, rules with their ids and annotations. Entries are S-FEEL unary tests,
read with the DSL's own grammar and written back canonically (strings escaped), so any text in the XML is safe in
the DSL. FEEL beyond simple unary tests (`date and time(...)`, arithmetic, names of other inputs, functions) is
reported as an error naming the rule and the entry; nothing is dropped silently. The XML is read with defusedxml:
DTDs, entity expansion and external references are refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Literal
from xml.etree.ElementTree import Element

from lark import Lark
from lark.exceptions import LarkError

from mbt.errors import LocatedError, Problem, problem_at
from mbt.importers.xmlread import parse_xml, position
from mbt.model.common import Location
from mbt.model.expr import Lit
from mbt.parsing.grammar import grammar_text, parser, reserved_words
from mbt.parsing.loader import FileTransformer, ModelFile, read_text
from mbt.parsing.table_resolve import resolve_table
from mbt.parsing.table_rules import DateText, RawEntry, RawInterval, RawTable, RawTest

# One entry of a rule as read: an input entry's tests, an output entry's literal, "empty" for `-` or no text, None
# for an entry that could not be read (reported).
_Cell = RawEntry | Lit | Literal["empty"] | None
_Row = tuple[list[_Cell], list[_Cell]]  # a rule's input entries, then its output entries

MAX_DMN_BYTES = 20 * 1024 * 1024

# The DMN namespaces by version (the scheme is compared loosely: tools write both http and https).
NAMESPACES = {
    "www.omg.org/spec/DMN/20151101/dmn.xsd": "1.1",
    "www.omg.org/spec/DMN/20180521/MODEL/": "1.2",
    "www.omg.org/spec/DMN/20191111/MODEL/": "1.3",
    "www.omg.org/spec/DMN/20211108/MODEL/": "1.4",
    "www.omg.org/spec/DMN/20230324/MODEL/": "1.5",
}
TYPE_KINDS = {"string": "string", "number": "number", "integer": "integer", "int": "integer", "long": "integer",
              "double": "number", "boolean": "boolean", "date": "date"}
HIT_WORDS = {"UNIQUE": "unique", "ANY": "any", "PRIORITY": "priority", "FIRST": "first", "RULE ORDER": "rule_order",
             "OUTPUT ORDER": "output_order", "COLLECT": "collect"}
RESERVED = reserved_words()  # read from the grammar, so it never drifts from it
FEEL_HINT = "mbt reads S-FEEL unary tests: -, < 18, [18..65], \"a\",\"b\", not(...), literals, date(\"YYYY-MM-DD\")"


# ------------------------------------------------------------------ reading the XML


def _local(tag: str) -> tuple[str, str]:
    if tag.startswith("{"):
        ns, _, local = tag[1:].partition("}")
        return ns, local
    return "", tag


def _children(el: Element, name: str) -> list[Element]:
    return [c for c in el if _local(c.tag)[1] == name]


def _child(el: Element, name: str) -> Element | None:
    found = _children(el, name)
    return found[0] if found else None


def _text(el: Element | None, name: str = "text") -> str | None:
    child = _child(el, name) if el is not None else None
    return child.text or "" if child is not None else None


# ------------------------------------------------------------------ FEEL unary tests via the DSL grammar


@lru_cache(maxsize=1)
def _feel_parser() -> Lark:
    return Lark(grammar_text(), parser="lalr", start=["input_entry", "output_entry"], propagate_positions=True,
                maybe_placeholders=True)


def _feel_to_dsl_tokens(text: str) -> str:
    """FEEL's `null` is the DSL's `none`; everything else an S-FEEL entry may hold is spelled alike."""
    out, i = [], 0
    for match in re.finditer(r'"[^"\\]*(?:\\.[^"\\]*)*"|\bnull\b', text):
        out.append(text[i:match.start()])
        out.append("none" if match.group(0) == "null" else match.group(0))
        i = match.end()
    out.append(text[i:])
    return "".join(out)


class _EntryReader:
    """Transforms a parsed entry with the DSL's own rules (positions are irrelevant here)."""

    def __init__(self) -> None:
        self.transformer = FileTransformer("<dmn>")

    def read(self, text: str, start: str) -> _Cell:
        cleaned = _feel_to_dsl_tokens(text.strip())
        if "#" in re.sub(r'"[^"\\]*(?:\\.[^"\\]*)*"', "", cleaned):
            return None  # a `#` outside a string would start a DSL comment: not S-FEEL anyway
        value = self.transformer.transform(_feel_parser().parse(cleaned, start=start))
        if start == "output_entry":
            return "empty" if value[0] is None else value[0]  # (literal, location) -> the literal
        return value


def _input_name(el: Element) -> str | None:
    """An input's name: its input expression (usually a plain name), else its label or id."""
    expression = _child(el, "inputExpression")
    return (_text(expression) if expression is not None else None) or el.get("label") or el.get("id")


def lit_text(lit: Lit) -> str:
    if isinstance(lit.value, DateText):
        return f"date({Lit(str(lit.value)).text()})"
    return lit.text()


def entry_text(entry: RawEntry) -> str:
    if not entry.tests:
        return "-"
    parts = []
    for t in entry.tests:
        if t.op == "=":
            parts.append(lit_text(t.value))
        elif t.op == "range":
            r: RawInterval = t.value
            opening, closing = "[" if r.lo_closed else "(", "]" if r.hi_closed else ")"
            parts.append(f"{opening}{lit_text(r.lo)}..{lit_text(r.hi)}{closing}")
        else:
            parts.append(f"{t.op} {lit_text(t.value)}")
    inner = ", ".join(parts)
    return f"not({inner})" if entry.negated else inner


# ------------------------------------------------------------------ conversion


@dataclass
class DmnImport:
    path: str
    version: str
    text: str  # the DSL
    segments: dict[int, list[tuple[int, int, int]]]  # DSL line -> [(DSL column, XML line, XML column)]
    tables: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # decisions that hold no decision table
    not_imported: list[str] = field(default_factory=list)  # decision tables mbt cannot read: "name (line N: why)"
    not_imported_problems: list[Problem] = field(default_factory=list)  # what stopped them, located in the XML
    not_imported_names: list[str] = field(default_factory=list)  # each table not imported, by its decision's name
    not_imported_first: list[Problem] = field(default_factory=list)  # the first problem of each

    def xml_position(self, line: int, column: int) -> tuple[int, int]:
        found = (1, 1)
        for start, xml_line, xml_column in self.segments.get(line, []):
            if start <= column:
                found = (xml_line, xml_column)
        return found


def safe_name(raw: str | None, fallback: str, taken: set[str]) -> str:
    """A DSL name for a DMN name or id (letters, digits, `_`; not a reserved word), unique among `taken`."""
    name = re.sub(r"[^A-Za-z0-9_]+", "_", (raw or "").strip()).strip("_") or fallback
    if name[0].isdigit():
        name = f"_{name}"
    if name in RESERVED:
        name += "_"
    base, n = name, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    taken.add(name)
    return name


def _quote(text: str) -> str:
    return Lit(text).text()


def _comment(text: str) -> str:
    return " ".join(text.split())


def _literals(tests: list[RawTest]) -> list[Lit]:
    """The literals of an input column's tests (both ends of a range)."""
    return [lit for t in tests for lit in ([t.value.lo, t.value.hi] if t.op == "range" else [t.value])]


def _literal_kind(value: object) -> str:
    """The column type a literal's value tells."""
    if isinstance(value, DateText):
        return "date"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, str):
        return "string"
    return "number"


class _Converter:
    def __init__(self, shown: str, xml_text: str) -> None:
        self.shown, self.xml_text = shown, xml_text
        self.problems: list[Problem] = []
        self.lines: list[str] = []
        self.segments: dict[int, list[tuple[int, int, int]]] = {}
        self.reader = _EntryReader()
        self.items: dict[str, tuple[str | None, Element | None]] = {}  # itemDefinition -> (base typeRef, allowedValues)
        self.input_data: dict[str, str] = {}  # inputData name -> its variable's typeRef

    def problem(self, el: Element, message: str, hint: str | None = None) -> None:
        line, column = position(el)
        self.problems.append(problem_at(self.shown, self.xml_text, line, column, message, hint))

    def emit(self, text: str, el: Element | None = None, cells: list[tuple[int, Element]] | None = None) -> None:
        self.lines.append(text)
        number = len(self.lines)
        if el is not None:
            segs = [(1, *position(el))]
            segs += [(col, *position(cell)) for col, cell in cells or []]
            self.segments[number] = segs

    def entry(self, el: Element, start: str, what: str) -> _Cell:
        text = _text(el)
        if text is None or not text.strip():
            return "empty"
        try:
            value = self.reader.read(text, start)
        except LarkError:
            value = None
        if value is None or (isinstance(value, RawEntry) and any(t.op in ("==", "!=") for t in value.tests)):
            self.problem(el, f"{what}: FEEL `{_comment(text)}` is beyond simple unary tests", FEEL_HINT)
            return None
        return value

    def convert(self, root: Element) -> DmnImport:
        ns, local = _local(root.tag)
        version = NAMESPACES.get(re.sub(r"^https?://", "", ns))
        if local != "definitions" or version is None:
            self.problem(root, f"not a DMN file: the root element is `{local}` in namespace `{ns or 'none'}`",
                         "mbt reads DMN 1.1-1.5 (<definitions xmlns=\"https://www.omg.org/spec/DMN/...\">)")
            raise LocatedError(self.problems)
        self.emit(f"# Imported by mbt from {_comment(Path(self.shown).name)} (DMN {version}).")
        self.items = _item_definitions(root)
        self.input_data = _input_data_types(root)
        names: set[str] = set()
        tables: list[str] = []
        skipped: list[str] = []
        first_skipped: Element | None = None
        not_imported: list[str] = []
        not_names: list[str] = []
        firsts: list[Problem] = []
        failed: list[Problem] = []
        for decision in (d for d in root.iter() if _local(d.tag)[1] == "decision"):
            table = _child(decision, "decisionTable")
            label = decision.get("name") or decision.get("id") or "decision"
            line = position(decision)[0]
            if table is None:
                skipped.append(label)
                first_skipped = first_skipped if first_skipped is not None else decision
                continue
            # One table that cannot be imported does not cost the others: its lines are taken back, and it is
            # reported by name and line with what stopped it.
            mark = (len(self.lines), dict(self.segments), len(self.problems), set(names))
            name = safe_name(decision.get("name") or decision.get("id"), "decision", names)
            self.table(decision, table, name)
            if len(self.problems) > mark[2]:
                problems = self.problems[mark[2]:]
                del self.lines[mark[0]:]
                self.segments, self.problems, names = mark[1], self.problems[:mark[2]], mark[3]
                failed.extend(problems)
                not_imported.append(f"{label} (line {line}: {problems[0].message})")
                not_names.append(label)
                firsts.append(problems[0])
                continue
            tables.append(name)
        if not tables:
            self.problems.extend(failed)
            if not failed and first_skipped is not None:
                # At the first such decision, naming a few: a file of a thousand decisions is one short line.
                self.problem(first_skipped, f"no decision table in this DMN file: {_some(skipped)}")
            elif not failed:
                self.problem(root, "no decision table in this DMN file")
        if self.problems:
            raise LocatedError(self.problems)
        return DmnImport(self.shown, version, "\n".join(self.lines) + "\n", self.segments, tables, skipped,
                         not_imported, failed, not_names, firsts)

    def table(self, decision: Element, table: Element, name: str) -> None:
        """One decision table as a `table` model: its heading, columns and rules (what is wrong, as problems)."""
        self.emit("")
        decision_id, decision_name = decision.get("id"), decision.get("name")
        if decision_id:
            self.emit(f"# DMN decision id: {_comment(decision_id)}")
        self.emit(f"table {name} {{", decision)
        if decision_name:
            self.emit(f"  title {_quote(decision_name)}", decision)
        if not self.hit_policy(table):
            return
        inputs, outputs = _children(table, "input"), _children(table, "output")
        rules = _children(table, "rule")
        # Read every entry first: the column types are inferred from them when typeRef is missing.
        rows = self.rows(rules, inputs, outputs)
        columns: set[str] = set()
        for k, el in enumerate(inputs):
            self.input_column(el, k, [row[0][k] for row in rows if row is not None], columns)
        for k, el in enumerate(outputs):
            self.output_column(el, k, [row[1][k] for row in rows if row is not None], columns)
        rule_names: set[str] = set()
        for r_index, (rule, row) in enumerate(zip(rules, rows)):
            if row is None or any(v is None for v in row[0] + row[1]):
                continue
            self.rule(rule, r_index, row, rule_names)
        self.emit("}")

    def hit_policy(self, table: Element) -> bool:
        """The `hit` line; False (and a problem) for a hit policy or aggregation DMN does not define."""
        hit = (table.get("hitPolicy") or "UNIQUE").strip().upper()
        if hit not in HIT_WORDS:
            self.problem(table, f"unknown hitPolicy `{hit}`", "DMN hit policies: " + ", ".join(HIT_WORDS))
            return False
        aggregation = (table.get("aggregation") or "").strip().upper()
        if aggregation and aggregation not in ("SUM", "MIN", "MAX", "COUNT"):
            self.problem(table, f"unknown aggregation `{aggregation}`", "DMN aggregations: SUM, MIN, MAX, COUNT")
            return False
        self.emit(f"  hit {HIT_WORDS[hit]}" + (f" {aggregation.lower()}" if aggregation else ""), table)
        return True

    def rows(self, rules: list[Element], inputs: list[Element], outputs: list[Element]) -> list[_Row | None]:
        """Each rule's entries read, input entries then output entries; None for a rule of the wrong width."""
        in_names = [_comment(_input_name(el) or f"{k + 1}") for k, el in enumerate(inputs)]
        out_names = [_comment(el.get("name") or el.get("label") or f"{k + 1}") for k, el in enumerate(outputs)]
        rows: list[_Row | None] = []
        for r_index, rule in enumerate(rules):
            rid = rule.get("id") or f"rule {r_index + 1}"
            ins, outs = _children(rule, "inputEntry"), _children(rule, "outputEntry")
            if len(ins) != len(inputs) or len(outs) != len(outputs):
                self.problem(rule, f"rule `{rid}` has {len(ins)} input and {len(outs)} output entries; the table has "
                                   f"{len(inputs)} inputs and {len(outputs)} outputs")
                rows.append(None)
                continue
            row_in = [self.entry(e, "input_entry", f"rule `{rid}`, input `{name}`") for e, name in zip(ins, in_names)]
            row_out = [self.entry(e, "output_entry", f"rule `{rid}`, output `{name}`")
                       for e, name in zip(outs, out_names)]
            rows.append((row_in, row_out))
        return rows

    def input_column(self, el: Element, k: int, values: list[_Cell], columns: set[str]) -> None:
        """`input NAME: TYPE[?] [DOMAIN]`, the type from typeRef or else from the column's entries."""
        expression = _child(el, "inputExpression")
        raw_name = _input_name(el)
        cname = safe_name(raw_name, f"input{k + 1}", columns)
        type_ref = (expression.get("typeRef") if expression is not None else None) or el.get("typeRef") \
            or self.input_data.get((raw_name or "").strip())
        tests = [t for v in values if isinstance(v, RawEntry) for t in v.tests]
        kind = self.kind(type_ref, _literals(tests), el, cname)
        optional = any(t.op == "=" and t.value.value is None for t in tests)
        domain = self.domain(_first(_child(el, "inputValues"), self.allowed(type_ref)), cname)
        label = el.get("label")
        if raw_name and raw_name != cname or label and label != raw_name:
            self.emit(f"  # DMN input: {_comment(label or raw_name or '')}"
                      + (f" ({_comment(raw_name)})" if label and raw_name and raw_name != label else ""))
        self.emit(f"  input {cname}: {kind}{'?' if optional else ''}{domain}", el)

    def output_column(self, el: Element, k: int, values: list[_Cell], columns: set[str]) -> None:
        """`output NAME: TYPE [DOMAIN] [default VALUE]`, the type from typeRef or else from the column's values."""
        raw_name = el.get("name") or el.get("label") or el.get("id")
        cname = safe_name(raw_name, f"output{k + 1}", columns)
        kind = self.kind(el.get("typeRef"), [v for v in values if isinstance(v, Lit)], el, cname)
        domain = self.domain(_first(_child(el, "outputValues"), self.allowed(el.get("typeRef"))), cname)
        default = _child(el, "defaultOutputEntry")
        default_text = ""
        if default is not None:
            value = self.entry(default, "output_entry", f"output `{cname}`, default")
            if isinstance(value, Lit):
                default_text = f" default {lit_text(value)}"
        self.emit(f"  output {cname}: {kind}{domain}{default_text}", el)

    def rule(self, rule: Element, r_index: int, row: _Row, rule_names: set[str]) -> None:
        """`rule NAME: IN | IN -> OUT [note "..."]`, each cell located at its entry in the XML."""
        rule_id = rule.get("id")
        rname = safe_name(rule_id, f"r{r_index + 1}", rule_names)
        if rule_id and rname != rule_id:
            self.emit(f"  # DMN rule id: {_comment(rule_id)}")
        text = f"  rule {rname}: "
        cells: list[tuple[int, Element]] = []
        for e_el, value in zip(_children(rule, "inputEntry"), row[0]):
            if cells:
                text += " | "
            cells.append((len(text) + 1, e_el))
            text += entry_text(value) if isinstance(value, RawEntry) else "-"  # else "empty"
        text += " -> "
        for i, (e_el, value) in enumerate(zip(_children(rule, "outputEntry"), row[1])):
            if i:
                text += " | "
            cells.append((len(text) + 1, e_el))
            text += lit_text(value) if isinstance(value, Lit) else "-"  # else "empty"
        notes = [(_text(rule, "description") or "").strip()]
        notes += [(_text(a) or "").strip() for a in _children(rule, "annotationEntry")]
        for note in notes:
            if note:
                text += f" note {_quote(note)}"
        self.emit(text, rule, cells)

    def kind(self, type_ref: str | None, literals: list[Lit], el: Element, cname: str) -> str:
        """A column's type: its typeRef (an itemDefinition's base type), else the one kind all its literals have."""
        item = self.items.get((type_ref or "").strip().split(":")[-1])
        if item is not None:
            type_ref = item[0]  # an itemDefinition: its base type
        if type_ref:
            key = type_ref.strip().split(":")[-1].lower()
            if key in TYPE_KINDS:
                return TYPE_KINDS[key]
            self.problem(el, f"`{cname}`: typeRef `{type_ref}` is not supported",
                         "mbt's column types: number, integer, string, boolean, date")
            return "string"
        seen = {_literal_kind(lit.value) for lit in literals if lit.value is not None}  # `none` tells no type
        return seen.pop() if len(seen) == 1 else "string"

    def allowed(self, type_ref: str | None) -> Element | None:
        """The allowedValues of the itemDefinition a typeRef names, if any."""
        item = self.items.get((type_ref or "").strip().split(":")[-1])
        return item[1] if item is not None else None

    def domain(self, el: Element | None, cname: str) -> str:
        if el is None:
            return ""
        value = self.entry(el, "input_entry", f"allowed values of `{cname}`")
        if not isinstance(value, RawEntry) or value.negated or not value.tests:
            return ""
        if all(t.op == "=" for t in value.tests):
            return " {" + ", ".join(lit_text(t.value) for t in value.tests) + "}"
        if len(value.tests) == 1 and value.tests[0].op == "range":
            return " " + entry_text(value)
        self.problem(el, f"allowed values of `{cname}`: only a list of values or one range can be a domain")
        return ""


def _some(names: list[str], shown: int = 3) -> str:
    """Decisions holding other expressions, said in one short line however many there are: `decision `a` holds
    other expressions`, `1,087 decisions hold other expressions (`a`, `b`, `c` and 1,084 more; the first is here)`."""
    if len(names) == 1:
        return f"decision `{names[0]}` holds other expressions"
    listed = ", ".join(f"`{n}`" for n in names[:shown])
    more = f" and {len(names) - shown:,} more" if len(names) > shown else ""
    return f"{len(names):,} decisions hold other expressions ({listed}{more}; the first is here)"


def _first(*elements: Element | None) -> Element | None:
    """The first element that is there (an XML element without children is falsy, so `or` would skip it)."""
    return next((el for el in elements if el is not None), None)


def _item_definitions(root: Element) -> dict[str, tuple[str | None, Element | None]]:
    """itemDefinition name -> (its base typeRef, its allowedValues element or None)."""
    out: dict[str, tuple[str | None, Element | None]] = {}
    for item in (el for el in root.iter() if _local(el.tag)[1] == "itemDefinition"):
        name = item.get("name")
        if not name:
            continue
        base = _child(item, "typeRef")
        out[name] = ((base.text or "").strip() if base is not None else None, _child(item, "allowedValues"))
    return out


def _input_data_types(root: Element) -> dict[str, str]:
    """inputData name -> its variable's typeRef: an input expression that is only that name and gives no typeRef
    of its own has that type (0088's `Grade`, typed `tGrade` only there)."""
    out: dict[str, str] = {}
    for data in (el for el in root.iter() if _local(el.tag)[1] == "inputData"):
        variable = _child(data, "variable")
        type_ref = variable.get("typeRef") if variable is not None else None
        name = data.get("name") or (variable.get("name") if variable is not None else None)
        if name and type_ref:
            out.setdefault(name.strip(), type_ref)
    return out


def read_dmn(path: str | Path) -> tuple[str, Element]:
    shown = str(path)
    text = read_text(Path(path), shown, MAX_DMN_BYTES)
    return text, parse_xml(text, shown, "DMN")


def convert_dmn(path: str | Path) -> DmnImport:
    """The DSL text of every decision table of a DMN file (LocatedError listing every problem otherwise)."""
    xml_text, root = read_dmn(path)
    return _Converter(str(path), xml_text).convert(root)


def load_dmn(path: str | Path) -> ModelFile:
    """A DMN file as a ModelFile of `table` models whose locations point into the XML. A decision table mbt cannot
    read is left out, as `mbt import dmn` leaves it out, but never quietly: it is one of the file's `warnings`,
    at what stopped it (`mbt check` reports it, coverage notes it). A file with no readable table is refused."""
    shown = str(path)
    xml_text, root = read_dmn(path)
    imported = _Converter(shown, xml_text).convert(root)

    def locate(line: int, column: int) -> Location:
        line, column = imported.xml_position(line, column)
        return Location(file=shown, line=line, column=column)

    try:
        items = FileTransformer(shown, locate).transform(parser().parse(imported.text))
    except LarkError as err:  # pragma: no cover - the converter writes only text the grammar reads
        problem = Problem(shown, 1, 1, f"internal error: the converted DMN does not parse ({err})")
        raise LocatedError([problem]) from None
    problems: list[Problem] = []
    result = ModelFile(path=shown, text=xml_text, sources={}, warnings=left_out(imported))
    for raw in items:
        if isinstance(raw, RawTable):
            model, found = resolve_table(raw, shown, xml_text, {}, mapped=True)
            problems.extend(found)
            result.models.append(model)
    if problems:
        raise LocatedError(sorted(problems, key=lambda p: (p.line, p.column)))
    return result


def left_out(imported: DmnImport) -> list[Problem]:
    """Each table not imported, at the first thing that stopped it, as one warning naming the table."""
    out = []
    for name, problem in zip(imported.not_imported_names, imported.not_imported_first):
        message = f"decision table `{name}` is not imported (the file's other tables are): {problem.message}"
        out.append(replace(problem, message=message, level="warning"))
    return out


def import_dmn(path: str | Path) -> DmnImport:
    """Convert, then read the DSL back the way `--model FILE.dmn` does, so what is written is a valid model."""
    imported = convert_dmn(path)
    load_dmn(path)
    return imported
