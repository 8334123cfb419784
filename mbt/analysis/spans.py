"""Span verification: every cited source exists and still says what the model quotes, at the lines it cites."""

from __future__ import annotations

from mbt.analysis.findings import Check, Finding, check
from mbt.model.common import Location, ModelBase, SourceDecl, Span
from mbt.parsing.loader import ModelFile, annotated_elements
from mbt.sources import SourceDocument, SourceError, load_document, normalise, source_path

# Codes are stable and documented in docs/checks.md.
SOURCE_UNUSABLE = check("SPN001", "source-unusable", "error",
                        "The declared source document is missing, a folder, binary, not UTF-8 or too large.")
LINES_OUT_OF_RANGE = check("SPN002", "span-lines-out-of-range", "error",
                           "The span cites lines the document does not have (it got shorter, or the numbers are "
                           "wrong), or columns its lines do not have (`@doc:1:900-1:950` on a line of 400 "
                           "characters; a line's end counts as one character).")
QUOTE_MOVED = check("SPN003", "quote-moved", "warning",
                    "The quote is not inside the cited lines, but it is elsewhere in the document: `quote moved: now "
                    "at lines 14-15`.")
QUOTE_NOT_FOUND = check("SPN004", "quote-not-found", "error",
                        "The quote occurs nowhere in the document: the document no longer says it (or the quote has "
                        "a typo).")
EMPTY_QUOTE = check("SPN005", "empty-quote", "warning",
                    "The quote is empty or only whitespace, so it says nothing (it would match anywhere).")


def finding(kind: Check, location: Location, message: str, model: str | None,
            related: list[Location] | None = None) -> Finding:
    code, name, severity = kind.code, kind.name, kind.severity
    return Finding(code=code, name=name, severity=severity, location=location, message=message, model=model,
                   related=related or [])


def lines_text(first: int, last: int) -> str:
    return f"line {first}" if first == last else f"lines {first}-{last}"


def check_spans(file: ModelFile) -> list[Finding]:
    """Findings for every span of every model in the file; an unusable source is reported once, at its declaration."""
    cited: dict[str, list[tuple[ModelBase, Span]]] = {}
    for model in file.models:
        for element in annotated_elements(model):
            if element.span is not None:
                cited.setdefault(element.span.source, []).append((model, element.span))
    findings: list[Finding] = []
    for name, decl in file.sources.items():
        uses = cited.get(name, [])
        try:
            document = load_document(source_path(file.path, decl), decl.path)
        except SourceError as err:
            findings.append(unusable_source(decl, str(err), uses))
            continue
        for model, span in uses:
            findings.extend(check_span(span, document, decl, model.name))
    return findings


def unusable_source(decl: SourceDecl, reason: str, uses: list[tuple[ModelBase, Span]]) -> Finding:
    cited = f"; {len(uses)} span(s) cite it and cannot be verified" if uses else ""
    return finding(SOURCE_UNUSABLE, decl.loc, f'source `{decl.name}` ("{decl.path}"): {reason}{cited}',
                   uses[0][0].name if uses else None, [span.loc for _, span in uses])


def check_span(span: Span, document: SourceDocument, decl: SourceDecl, model: str | None = None) -> list[Finding]:
    """Findings for one span: line range inside the document, quote found inside the cited lines."""
    where = f"`{decl.name}` ({decl.path})"
    if span.has_columns:
        return check_column_span(span, document, where, model)
    has_lines = span.line_start is not None
    if span.line_start is not None:
        first = span.line_start
        last = span.line_end if span.line_end is not None else first
    else:
        first, last = 1, document.line_count
    if has_lines and (first < 1 or last > document.line_count):
        size = document.line_count
        message = (f"span cites {lines_text(first, last)} of {where}, but the document has "
                   f"{size} line{'s' if size != 1 else ''}")
        found = document.nearest_quote(span.quote, first) if span.quote else None
        if found:
            message += f'; the quote is now at {lines_text(*found)}'
        return [finding(LINES_OUT_OF_RANGE, span.loc, message, model)]
    if span.quote is None:
        return []
    if not normalise(span.quote):
        return [finding(EMPTY_QUOTE, span.loc, f"span quotes an empty text from {where}; quote a sentence or drop "
                                               "the quote", model)]
    if document.quote_within(span.quote, first, last):
        return []
    shown = short(span.quote)
    found = document.nearest_quote(span.quote, first)
    if found is not None:
        return [finding(QUOTE_MOVED, span.loc, f'quote moved: now at {lines_text(*found)} of {where}, the span '
                                               f'cites {lines_text(first, last)}: "{shown}"', model)]
    return [finding(QUOTE_NOT_FOUND, span.loc, f'quote not found anywhere in {where}: "{shown}"', model)]


def check_column_span(span: Span, document: SourceDocument, where: str, model: str | None) -> list[Finding]:
    """A span from line:column to line:column: the characters exist, and the quote is among them."""
    first = span.line_start or 1
    last = span.line_end if span.line_end is not None else first
    cited = span.range_text()
    if first < 1 or last > document.line_count:
        size = document.line_count
        return [finding(LINES_OUT_OF_RANGE, span.loc, f"span cites {cited} of {where}, but the document has "
                                                      f"{size} line{'s' if size != 1 else ''}", model)]
    for line, column in ((first, span.column_start), (last, span.column_end)):
        length = len(document.lines[line - 1])
        if column is not None and not 1 <= column <= length + 1:  # the line's end counts as a character
            return [finding(LINES_OUT_OF_RANGE, span.loc, f"span cites {cited} of {where}, but line {line} has "
                                                          f"{length} character{'s' if length != 1 else ''}", model)]
    if span.quote is None:
        return []
    if not normalise(span.quote):
        return [finding(EMPTY_QUOTE, span.loc, f"span quotes an empty text from {where}; quote a sentence or drop "
                                               "the quote", model)]
    if document.quote_within_columns(span.quote, first, span.column_start, last, span.column_end):
        return []
    shown = short(span.quote)
    found = document.nearest_quote_columns(span.quote, document.characters(first, span.column_start, first,
                                                                           span.column_start)[0])
    if found is not None:
        now = f"{found[0]}:{found[1]}-{found[2]}:{found[3]}"
        return [finding(QUOTE_MOVED, span.loc, f'quote moved: now at {now} of {where}, the span cites {cited}: '
                                               f'"{shown}"', model)]
    return [finding(QUOTE_NOT_FOUND, span.loc, f'quote not found anywhere in {where}: "{shown}"', model)]


def short(quote: str, limit: int = 60) -> str:
    text = normalise(quote)
    return text if len(text) <= limit else text[: limit - 1] + "…"
