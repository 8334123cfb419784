"""Source-document coverage: documents split into units, units matched to the model parts that cite them, shaded by coverage."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import BaseModel

from mbt.errors import Problem
from mbt.measure.coverage import ModelCoverage
from mbt.measure.numbers import Numbers
from mbt.measure.review import DocumentCoverage, SilentPart, SourceCoverage, SourceUnit, UnitStatus, UnusedExclusion
from mbt.model.common import Annotated, ModelBase, Span, Status
from mbt.sources import SourceError, load_document, quote_pattern, source_path

YAML_SUFFIXES = (".yaml", ".yml")
MARKDOWN_SUFFIXES = (".md", ".markdown")


# ------------------------------------------------------------------ units


@dataclass
class RawUnit:
    kind: str
    start: int  # character offsets in the document text, end exclusive
    end: int
    key: str | None = None


_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_FENCE = re.compile(r"^\s*(```|~~~)")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}")
# Letters only Vietnamese uses among the Latin scripts (with its tone marks on them): such a paragraph is split
# with sentencex's Vietnamese rules (abbreviations, initials); CJK and other text with its English ones, which also
# know the CJK stops 。！？.
_VIETNAMESE = re.compile("[ăâđêôơưĂÂĐÊÔƠƯạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ]")


def sentences(chunk: str) -> list[tuple[int, int]]:
    """The sentences of a paragraph as (start, end) offsets, without the spaces between them (sentencex, the
    Wikimedia segmenter: English, Chinese, Vietnamese and ~300 more languages)."""
    from sentencex import segment  # a compiled extension, needed only for source-document coverage

    language = "vi" if _VIETNAMESE.search(chunk) else "en"
    out: list[tuple[int, int]] = []
    pos = 0
    for piece in segment(language, chunk):
        start = chunk.find(piece, pos)
        if start < 0:  # never seen: the segmenter returns pieces of the text in order
            start = pos
        end = start + len(piece)
        text = chunk[start:end]
        a, b = start + len(text) - len(text.lstrip()), start + len(text.rstrip())
        if b > a:
            out.append((a, b))
        pos = end
    return out


def _line_starts(text: str) -> list[int]:
    starts, pos = [0], 0
    for line in text.splitlines(keepends=True):
        pos += len(line)
        starts.append(pos)
    return starts


def text_units(text: str, markdown: bool) -> list[RawUnit]:
    """Headings, list items (with their continuation lines), table rows, code blocks, and paragraph sentences."""
    lines = text.splitlines(keepends=True)
    starts = _line_starts(text)
    units: list[RawUnit] = []
    paragraph: list[int] = []  # line indices
    item: list[int] = []
    fence_start: int | None = None

    def span_of(indices: list[int]) -> tuple[int, int]:
        a = starts[indices[0]] + (len(lines[indices[0]]) - len(lines[indices[0]].lstrip()))
        last = lines[indices[-1]]
        return a, starts[indices[-1]] + len(last.rstrip())

    def flush() -> None:
        if item:
            a, b = span_of(item)
            units.append(RawUnit("list-item", a, b))
            item.clear()
        if paragraph:
            a, b = span_of(paragraph)
            units.extend(RawUnit("sentence", a + start, a + end) for start, end in sentences(text[a:b]))
            paragraph.clear()

    for i, line in enumerate(lines):
        stripped = line.strip()
        if fence_start is not None:
            if _FENCE.match(line):
                units.append(RawUnit("code", starts[fence_start], starts[i] + len(line.rstrip())))
                fence_start = None
            continue
        if markdown and _FENCE.match(line):
            flush()
            fence_start = i
            continue
        if not stripped:
            flush()
            continue
        if markdown and _HEADING.match(line):
            flush()
            a, b = span_of([i])
            units.append(RawUnit("heading", a, b))
        elif markdown and stripped.startswith("|"):
            flush()
            if not _TABLE_RULE.match(stripped):
                a, b = span_of([i])
                units.append(RawUnit("table-row", a, b))
        elif _ITEM.match(line):
            flush()
            item.append(i)
        elif item and (line[:1].isspace() or not paragraph):
            item.append(i)  # a continuation line of the list item
        else:
            paragraph.append(i)
    if fence_start is not None:
        units.append(RawUnit("code", starts[fence_start], len(text.rstrip())))
    flush()
    return units


def yaml_units(text: str) -> list[RawUnit]:
    """Every scalar value of the YAML document (a leaf), with its key path; comments are not units."""
    starts = _line_starts(text)
    units: list[RawUnit] = []

    def offset(mark) -> int:
        return starts[min(mark.line, len(starts) - 1)] + mark.column

    def walk(node, key: str, key_node=None) -> None:
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                walk(v, f"{key}.{k.value}" if key else str(k.value), k)
        elif isinstance(node, yaml.SequenceNode):
            for i, v in enumerate(node.value):
                walk(v, f"{key}[{i}]")
        elif isinstance(node, yaml.ScalarNode):
            a = offset(key_node.start_mark) if key_node is not None else offset(node.start_mark)
            b = offset(node.end_mark)
            while b > a and text[b - 1].isspace():
                b -= 1
            units.append(RawUnit("yaml-leaf", a, b, key or None))

    try:
        for document in yaml.compose_all(text, Loader=yaml.SafeLoader):
            if document is not None:
                walk(document, "")
    except yaml.YAMLError:
        return text_units(text, markdown=False)  # not YAML after all: fall back to lines and sentences
    return units


def document_format(path: str) -> str:
    suffix = Path(path).suffix.lower()
    return "yaml" if suffix in YAML_SUFFIXES else "markdown" if suffix in MARKDOWN_SUFFIXES else "text"


# ------------------------------------------------------------------ spans resolved to characters


@dataclass
class Resolved:
    start: int
    end: int
    line_start: int
    line_end: int
    found: bool  # False: the quote is not in the document (lines used instead, when given)
    column_start: int | None = None  # a span with columns: the first and last column it cites
    column_end: int | None = None


def resolve_span(span: Span, text: str, starts: list[int]) -> Resolved | None:
    """The characters a span cites. A range of several lines cites those lines (its quote is evidence, which
    `mbt check` verifies); a single line or no line with a quote cites the quote's occurrence (the one inside
    the line, else the nearest), because one line can hold several sentences; lines alone cite those lines."""
    line_count = len(starts) - 1

    def line_of(offset: int) -> int:
        return max(1, min(bisect.bisect_right(starts, offset), line_count))

    lines = None
    if span.has_columns and span.line_start is not None and 1 <= span.line_start <= line_count:
        # Columns cite exactly those characters (a minified file holds every element on one line).
        first = span.line_start
        last = max(first, min(span.line_end or first, line_count))
        lo = min(starts[first - 1] + (span.column_start or 1) - 1, starts[first])
        end_of_last = starts[last - 1] + len(text[starts[last - 1]:starts[last]].rstrip("\r\n"))
        hi = max(lo, min(starts[last - 1] + span.column_end, end_of_last) if span.column_end is not None
                 else end_of_last)
        pattern = quote_pattern(span.quote) if span.quote else None
        return Resolved(lo, hi, first, last, pattern is None or pattern.search(text, lo, hi) is not None,
                        lo - starts[first - 1] + 1, hi - starts[last - 1])
    if span.line_start is not None:
        first = max(1, min(span.line_start, line_count))
        last = max(first, min(span.line_end or span.line_start, line_count))
        lines = (first, last)
    if span.quote and lines is not None and lines[1] > lines[0]:
        pattern = quote_pattern(span.quote)
        inside = pattern.search(text, starts[lines[0] - 1], starts[lines[1]]) if pattern else None
        return Resolved(starts[lines[0] - 1], starts[lines[1]], lines[0], lines[1], inside is not None)
    if span.quote:
        pattern = quote_pattern(span.quote)
        found = list(pattern.finditer(text)) if pattern else []
        if found:
            def distance(m):
                a, b = line_of(m.start()), line_of(m.end() - 1)
                if lines is None:
                    return (0, a)
                inside = lines[0] <= a and b <= lines[1]
                return (0 if inside else 1, abs(a - lines[0]))

            best = min(found, key=distance)
            return Resolved(best.start(), best.end(), line_of(best.start()), line_of(best.end() - 1), True)
        if lines is None:
            return None
        return Resolved(starts[lines[0] - 1], starts[lines[1]], lines[0], lines[1], False)
    if lines is None:
        return None
    return Resolved(starts[lines[0] - 1], starts[lines[1]], lines[0], lines[1], True)


# ------------------------------------------------------------------ exclusions (gate file `exclude_units:`)


class Exclusion(BaseModel):
    source: str  # a declared source name or the document's path
    reason: str
    lines: tuple[int, int] | None = None
    quote: str | None = None
    key: str | None = None  # a YAML key path or its prefix
    line: int  # in the gate file

    def matches(self, unit: SourceUnit, text: str, start: int, end: int) -> bool:
        if self.lines is not None and not (unit.line_start <= self.lines[1] and self.lines[0] <= unit.line_end):
            return False
        if self.key is not None and not (unit.key is not None and (unit.key == self.key
                                                                  or unit.key.startswith(self.key + ".")
                                                                  or unit.key.startswith(self.key + "["))):
            return False
        if self.quote is not None:
            pattern = quote_pattern(self.quote)
            if pattern is None or not pattern.search(text[start:end]):
                return False
        return True


def parse_exclusions(node, path: str) -> tuple[list[Exclusion], list[Problem]]:
    """`exclude_units: [{source: policy, lines: 3-5 | quote: "..." | key: soft_rubric, reason: "..."}]`."""
    out: list[Exclusion] = []
    problems: list[Problem] = []

    def problem(n, message):
        problems.append(Problem(path, n.start_mark.line + 1, n.start_mark.column + 1, message,
                                hint="e.g. {source: policy, lines: 12-14, reason: \"opening hours: not behaviour\"}"))

    if not isinstance(node, yaml.SequenceNode):
        problem(node, "`exclude_units` must be a list of {source, lines|quote|key, reason} entries")
        return out, problems
    for item in node.value:
        if not isinstance(item, yaml.MappingNode):
            problem(item, "an exclusion is a mapping with `source`, `reason` and one of `lines`, `quote`, `key`")
            continue
        fields = {str(k.value): v for k, v in item.value}
        unknown = [k for k in fields if k not in ("source", "reason", "lines", "quote", "key")]
        if unknown:
            problem(item, f"unknown exclusion field `{unknown[0]}` (source, reason, lines, quote, key)")
            continue
        if not all(isinstance(fields.get(k), yaml.ScalarNode) and str(fields[k].value).strip()
                   for k in ("source", "reason")):
            problem(item, "the exclusion needs `source` and `reason`")
            continue
        if not any(k in fields for k in ("lines", "quote", "key")):
            problem(item, "the exclusion needs `lines`, `quote` or `key` to say which units")
            continue
        lines = None
        if "lines" in fields:
            raw = str(fields["lines"].value).strip()
            m = re.fullmatch(r"(\d+)\s*(?:-\s*(\d+))?", raw)
            if not m or int(m.group(1)) < 1 or (m.group(2) and int(m.group(2)) < int(m.group(1))):
                problem(fields["lines"], f"`lines` must be N or N-M (1-based, ascending), not {raw!r}")
                continue
            lines = (int(m.group(1)), int(m.group(2) or m.group(1)))
        out.append(Exclusion(source=str(fields["source"].value).strip(), reason=str(fields["reason"].value).strip(),
                             lines=lines, quote=str(fields["quote"].value) if "quote" in fields else None,
                             key=str(fields["key"].value).strip() if "key" in fields else None,
                             line=item.start_mark.line + 1))
    return out, problems


# ------------------------------------------------------------------ the measurement


def annotated_parts(model: ModelBase):
    """Every annotated part of a model at any depth (the model first), in a stable order; kind-agnostic."""
    seen: set[int] = set()

    def walk(value):
        if isinstance(value, Annotated):
            if id(value) in seen:
                return
            seen.add(id(value))
            yield value
            for name in type(value).model_fields:
                yield from walk(getattr(value, name))
        elif isinstance(value, BaseModel):
            for name in type(value).model_fields:
                yield from walk(getattr(value, name))
        elif isinstance(value, dict):
            for v in value.values():
                yield from walk(v)
        elif isinstance(value, (list, tuple)):
            for v in value:
                yield from walk(v)

    yield from walk(model)


def part_name(part: Annotated) -> str:
    kind = "model" if isinstance(part, ModelBase) else type(part).__name__.lower()
    name = getattr(part, "name", None)
    if isinstance(part, ModelBase):
        return f"{part.kind} {part.name}"
    if name is None and hasattr(part, "pattern") and hasattr(part, "event"):
        return f'bind {getattr(part, "how", "")} "{part.pattern}" -> {part.event}'
    if name is None and hasattr(part, "key") and part.key:
        return f"{kind} {part.key}"
    return f"{kind} {name}" if name is not None else f"{kind} at line {part.loc.line}"


def _unit_status(elements: list[tuple[bool, bool, bool]], parts: int, excluded: bool) -> UnitStatus:
    """elements: (feasible, verified, exercised) of the coverage elements citing a unit."""
    if excluded:
        return "excluded"
    feasible = [e for e in elements if e[0]]
    if not elements:
        return "modelled" if parts else "not-modelled"
    if not feasible:
        return "modelled"
    verified = sum(1 for e in feasible if e[1])
    if verified == len(feasible):
        return "covered"
    if verified:
        return "partial"
    return "exercised" if any(e[2] for e in feasible) else "uncovered"


@dataclass
class _Doc:
    source: str
    path: str
    text: str | None
    error: str | None
    raw: list[RawUnit]
    units: list[SourceUnit]
    starts: list[int]


def measure_sources(models: list[ModelBase], coverage: list[ModelCoverage], exclusions: list | None = None,
                    extra: list[str] | None = None) -> tuple[SourceCoverage, dict[tuple[str, str], Resolved]]:
    """Units of every declared source document, which model parts and elements cite them, and how covered those are.
    `extra`: documents no model declares (`--source DOC`: the goldens are aligned to their units directly, level 1),
    named by their file name without its suffix.

    Also returns each element's span resolved in its document, keyed by (model, element id), for the traceability
    matrix and the HTML report's links.
    """
    exclusions = exclusions or []
    by_model = {m.model: m for m in coverage}
    docs: dict[str, _Doc] = {}
    names: dict[tuple[str, str], str] = {}  # (model file, source name) -> document path

    def add(name: str, located: Path, shown: str) -> None:
        try:
            text = load_document(located, shown).text
            error = None
        except SourceError as err:
            text, error = None, str(err)
        fmt = document_format(shown)
        units = [] if text is None else yaml_units(text) if fmt == "yaml" else text_units(text, fmt == "markdown")
        starts = _line_starts(text) if text is not None else [0]
        docs[shown] = _Doc(name, shown, text, error, units, [], starts)

    for model in models:
        for name, decl in model.sources.items():
            located = source_path(model.file, decl)
            shown = _shown(located)
            names[(model.file, name)] = shown
            if shown not in docs:
                add(name, located, shown)
    for path in extra or []:
        shown = _shown(Path(path))
        if shown not in docs:
            add(Path(path).stem, Path(path), shown)
    for doc in docs.values():
        doc.units = _make_units(doc)

    # Which units each element / other part cites.
    element_cites: dict[str, list[list[str]]] = {p: [[] for _ in d.units] for p, d in docs.items()}
    part_cites: dict[str, list[list[str]]] = {p: [[] for _ in d.units] for p, d in docs.items()}
    states: dict[str, list[list[tuple[bool, bool, bool]]]] = {p: [[] for _ in d.units] for p, d in docs.items()}
    resolved: dict[tuple[str, str], Resolved] = {}
    silent: list[SilentPart] = []
    for model in models:
        mc = by_model.get(model.name)
        element_span_locs = set()
        elements_at: dict[tuple[int, int], list[str]] = {}
        if mc is not None:
            for ec in mc.elements:
                e = ec.element
                elements_at.setdefault((e.location.line, e.location.column), []).append(e.id)
                if e.span is None:
                    continue
                element_span_locs.add((e.span.loc.line, e.span.loc.column))
                cited = _cited(names, docs, model.file, e.span.source)
                if cited is None:
                    continue
                path, doc, text = cited
                r = resolve_span(e.span, text, doc.starts)
                if r is None:
                    continue
                resolved[(model.name, e.id)] = r
                for i in _overlapping(doc, r):
                    element_cites[path][i].append(f"{model.name}/{e.id}")
                    states[path][i].append((e.feasible, bool(ec.verified_by), bool(ec.exercised_by)))
        for part in annotated_parts(model):
            if part.status == Status.unspecified:
                silent.append(SilentPart(model=model.name, part=part_name(part), location=part.loc,
                                         reason=part.status_reason,
                                         span=part.span.describe() if part.span is not None else None,
                                         elements=elements_at.get((part.loc.line, part.loc.column), [])))
            span = part.span
            if span is None or (span.loc.line, span.loc.column) in element_span_locs:
                continue
            cited = _cited(names, docs, model.file, span.source)
            if cited is None:
                continue
            path, doc, text = cited
            r = resolve_span(span, text, doc.starts)
            if r is None:
                continue
            for i in _overlapping(doc, r):
                part_cites[path][i].append(f"{model.name}/{part_name(part)}")

    for path, doc in docs.items():
        _headings_from_sections(doc, element_cites[path], part_cites[path])
    used: set[int] = set()
    out_docs = []
    for path, doc in docs.items():
        modelled = tested = total = 0
        for i, unit in enumerate(doc.units):
            raw = doc.raw[i]
            for k, ex in enumerate(exclusions):
                if ex.source in (doc.source, path) or Path(ex.source) == Path(path) or _declares(models, ex.source, path, names):
                    if ex.matches(unit, doc.text or "", raw.start, raw.end):
                        unit.exclusion = ex.reason
                        used.add(k)
                        break
            unit.cited_by = sorted(set(element_cites[path][i]))
            unit.cited_by_parts = sorted(set(part_cites[path][i]))
            unit.status = _unit_status(states[path][i], len(unit.cited_by_parts), unit.exclusion is not None)
            if unit.status == "excluded":
                continue
            total += 1
            if unit.status != "not-modelled":
                modelled += 1
            if unit.status in ("covered", "partial"):
                tested += 1
        out_docs.append(DocumentCoverage(source=doc.source, path=path, format=document_format(path), error=doc.error,
                                         lines=(doc.text or "").splitlines(), units=doc.units,
                                         modelled=Numbers(covered=modelled, total=total,
                                                          covered_weight=modelled, total_weight=total),
                                         tested=Numbers(covered=tested, total=total,
                                                        covered_weight=tested, total_weight=total)))
    unused = [UnusedExclusion(source=ex.source, line=ex.line,
                              message=f"the exclusion of {ex.source} ({ex.reason}) matches no unit")
              for k, ex in enumerate(exclusions) if k not in used]
    return SourceCoverage(documents=out_docs, silent=silent, unused_exclusions=unused), resolved


def _cited(names: dict[tuple[str, str], str], docs: dict[str, _Doc], model_file: str,
           source: str) -> tuple[str, _Doc, str] | None:
    """The document a model's span cites (its path, the document and its text), or None when it could not be read."""
    path = names.get((model_file, source))
    doc = docs.get(path) if path is not None else None
    if path is None or doc is None or doc.text is None:
        return None
    return path, doc, doc.text


def _headings_from_sections(doc: _Doc, element_cites: list[list[str]], part_cites: list[list[str]]) -> None:
    """A heading nobody cites is modelled when something in its section is: a red heading then means that the
    whole section is missing from the model, which is what a reviewer wants to see at a glance."""
    heads = [i for i, u in enumerate(doc.units) if u.kind == "heading"]
    for i in heads:
        if element_cites[i] or part_cites[i]:
            continue
        level = len(doc.units[i].text) - len(doc.units[i].text.lstrip("#"))
        end = next((j for j in heads if j > i and
                    len(doc.units[j].text) - len(doc.units[j].text.lstrip("#")) <= level), len(doc.units))
        if any(element_cites[j] or part_cites[j] for j in range(i + 1, end)):
            part_cites[i].append("(its section is modelled)")


def _declares(models: list[ModelBase], name: str, path: str, names: dict[tuple[str, str], str]) -> bool:
    """True when some model declares `name` as a source living at `path` (models may name a document differently)."""
    return any(names.get((m.file, name)) == path for m in models)


def _shown(path: Path) -> str:
    """The document path as the user will read it: relative to the working folder when it is inside it."""
    resolved = path.resolve()  # one document, however each model's folder reaches it (`sub/../doc.md`)
    try:
        return str(resolved.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(resolved)


def _make_units(doc: _Doc) -> list[SourceUnit]:
    if doc.text is None:
        return []
    units: list[SourceUnit] = []
    per_line: dict[int, int] = {}
    for raw in doc.raw:
        first = bisect.bisect_right(doc.starts, raw.start)
        last = bisect.bisect_right(doc.starts, max(raw.start, raw.end - 1))
        n = per_line.get(first, 0) + 1
        per_line[first] = n
        uid = f"{doc.source}:{first}" + (f"#{n}" if n > 1 else "")
        units.append(SourceUnit(id=uid, kind=raw.kind, line_start=first, line_end=last,
                                col_start=raw.start - doc.starts[first - 1] + 1,
                                col_end=raw.end - doc.starts[last - 1] + 1,
                                text=" ".join(doc.text[raw.start:raw.end].split()), key=raw.key,
                                status="not-modelled"))
    return units


def _overlapping(doc: _Doc, r: Resolved) -> list[int]:
    return [i for i, raw in enumerate(doc.raw) if raw.start < r.end and r.start < raw.end]
