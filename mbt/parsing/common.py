"""Transformer rules for common.lark: literals, expressions, annotations, spans and source declarations."""

from __future__ import annotations

from decimal import Decimal

from lark import Token, v_args

from mbt.model.common import Location, Severity, SourceDecl, Span, Status
from mbt.model.expr import And, Arith, Compare, EnumLit, Lit, Member, Not, Or, Ref


def unquote(token: Token | str) -> str:
    """The text of a STRING token: quotes removed; \\" \\\\ \\n \\t resolved, other backslashes kept (regexes)."""
    body = str(token)[1:-1]
    out, i = [], 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            out.append({"n": "\n", "t": "\t", '"': '"', "\\": "\\"}.get(nxt, "\\" + nxt))
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def pos(meta_or_token) -> dict:
    return {"line": getattr(meta_or_token, "line", 0) or 0, "column": getattr(meta_or_token, "column", 0) or 0}


class Annotations(dict):
    """The annotations written after an element, collected before they are applied to it."""


class CommonRules:
    """Mixin for the file transformer; `self.path` is the model file as given by the user."""

    path: str

    def loc(self, meta_or_token) -> Location:
        return Location(file=self.path, line=getattr(meta_or_token, "line", 1) or 1,
                        column=getattr(meta_or_token, "column", 1) or 1)

    def _pos(self, meta_or_token) -> dict:
        # An expression's position goes through `loc` too, so an importer's `locate` maps it into the user's file.
        found = pos(meta_or_token)
        if found["line"] and getattr(self, "locate", None) is not None:
            where = self.loc(meta_or_token)
            return {"line": where.line, "column": where.column}
        return found

    # ---- literals
    def string_lit(self, children):
        (tok,) = children
        return Lit(unquote(tok), **self._pos(tok))

    def int_lit(self, children):
        (tok,) = children
        return Lit(int(tok), **self._pos(tok))

    def neg_int_lit(self, children):
        (tok,) = children
        return Lit(-int(tok), **self._pos(tok))

    def decimal_lit(self, children):
        (tok,) = children
        return Lit(Decimal(str(tok)), **self._pos(tok))

    def neg_decimal_lit(self, children):
        (tok,) = children
        return Lit(-Decimal(str(tok)), **self._pos(tok))

    @v_args(meta=True)
    def true_lit(self, meta, children):
        return Lit(True, **self._pos(meta))

    @v_args(meta=True)
    def false_lit(self, meta, children):
        return Lit(False, **self._pos(meta))

    @v_args(meta=True)
    def none_lit(self, meta, children):
        return Lit(None, **self._pos(meta))

    def enum_lit(self, children):
        (tok,) = children
        return EnumLit(str(tok), **self._pos(tok))

    # ---- expressions
    def dotted_name(self, children):
        return Token("NAME", ".".join(str(c) for c in children), line=children[0].line, column=children[0].column)

    def ref(self, children):
        (tok,) = children
        return Ref(str(tok), **self._pos(tok))

    @v_args(meta=True)
    def or_(self, meta, children):
        left, right = children
        items = (left.items if isinstance(left, Or) else (left,)) + (right,)
        return Or(items, **self._pos(meta))

    @v_args(meta=True)
    def and_(self, meta, children):
        left, right = children
        items = (left.items if isinstance(left, And) else (left,)) + (right,)
        return And(items, **self._pos(meta))

    @v_args(meta=True)
    def not_(self, meta, children):
        return Not(children[0], **self._pos(meta))

    @v_args(meta=True)
    def compare(self, meta, children):
        left, op, right = children
        return Compare(str(op), left, right, **self._pos(meta))

    @v_args(meta=True)
    def member(self, meta, children):
        return Member(children[0], tuple(children[1:]), False, **self._pos(meta))

    @v_args(meta=True)
    def not_member(self, meta, children):
        return Member(children[0], tuple(children[1:]), True, **self._pos(meta))

    @v_args(meta=True)
    def add(self, meta, children):
        return Arith("+", children[0], children[1], **self._pos(meta))

    @v_args(meta=True)
    def sub(self, meta, children):
        return Arith("-", children[0], children[1], **self._pos(meta))

    # ---- annotations
    @v_args(meta=True)
    def span(self, meta, children):
        source, start, end, quote = children
        return ("span", Span(
            source=str(source),
            line_start=int(start) if start is not None else None,
            line_end=int(end) if end is not None else (int(start) if start is not None else None),
            quote=unquote(quote) if quote is not None else None,
            loc=self.loc(meta),
        ))

    def status_stated(self, children):
        return ("status", (Status.stated, None))

    def status_inferred(self, children):
        return ("status", (Status.inferred, None))

    def status_unspecified(self, children):
        return ("status", (Status.unspecified, unquote(children[0])))

    def severity(self, children):
        return ("severity", Severity(str(children[0])))

    def explicit_id(self, children):
        return ("id", str(children[0]))

    def tag(self, children):
        return ("tag", unquote(children[0]))

    def annotations(self, children):
        found = Annotations()
        for key, value in children:
            if key == "tag":  # the one annotation that may be repeated: it adds up
                found.setdefault("tags", []).append(value)
            else:
                found[key] = value
        return found

    @v_args(meta=True)
    def source_decl(self, meta, children):
        name, path = children
        return SourceDecl(name=str(name), path=unquote(path), loc=self.loc(meta))


def annotation_fields(annotations: Annotations) -> dict:
    """Keyword arguments for an `Annotated` element: status defaults to `stated` when a span is given."""
    fields: dict = {}
    span = annotations.get("span")
    if span is not None:
        fields["span"] = span
        fields["status"] = Status.stated
    if "status" in annotations:
        fields["status"], fields["status_reason"] = annotations["status"]
    if "severity" in annotations:
        fields["severity"] = annotations["severity"]
    if "id" in annotations:
        fields["explicit_id"] = annotations["id"]
    if "tags" in annotations:
        fields["tags"] = list(dict.fromkeys(annotations["tags"]))
    return fields
