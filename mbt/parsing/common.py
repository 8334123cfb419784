"""Transformer rules for common.lark: literals, expressions, annotations, spans and source declarations."""

from __future__ import annotations

from decimal import Decimal

from lark import Token, v_args

from mbt.model.common import Location, Severity, SourceDecl, Span, Status
from mbt.model.expr import And, Arith, Compare, EnumLit, Expr, Lit, Member, Not, Or, Ref


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


CHAIN_LEFT_NESTED = 16  # up to this many terms a `+`/`-` chain nests to the left, as written; longer ones balance


def arith_chain(terms: list[tuple[str, Expr]], where: dict) -> Expr:
    """`t0 ± t1 ± ...` as Arith nodes: nested to the left (as it reads) for short chains, and balanced for long
    ones, so the tree is log2(n) deep and every later stage (typing, compiling, z3) recurses only that deep.
    `a - b + c - d` becomes `(a - b) + (c - d)`: the right half's signs are relative to the operator joining it."""
    if len(terms) <= CHAIN_LEFT_NESTED:
        node = terms[0][1]
        for op, term in terms[1:]:
            node = Arith(op, node, term, **where)
        return node
    middle = len(terms) // 2
    op, head = terms[middle]
    flip = {"+": "-", "-": "+"}
    right = [("+", head)] + [(s if op == "+" else flip[s], t) for s, t in terms[middle + 1:]]
    return Arith(op, arith_chain(terms[:middle], where), arith_chain(right, where), **where)


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

    # Chains arrive flat (the grammar reads `a or b or c` as one rule): the nodes are built without recursion, and
    # as they always were for chains people write, so element ids and generated code do not change.
    @v_args(meta=True)
    def or_(self, meta, children):
        first, *rest = children
        return Or((first.items if isinstance(first, Or) else (first,)) + tuple(rest), **self._pos(meta))

    @v_args(meta=True)
    def and_(self, meta, children):
        first, *rest = children
        return And((first.items if isinstance(first, And) else (first,)) + tuple(rest), **self._pos(meta))

    def negations(self, children):
        return list(children)

    @v_args(meta=True)
    def not_(self, meta, children):
        nots, operand = children
        # `not not not x` is `not x`: beyond two, pairs cancel (two stay two, so a non-boolean is still refused).
        if len(nots) > 2:
            nots = nots[-1:] if len(nots) % 2 else nots[-2:]
        for token in reversed(nots):
            operand = Not(operand, **self._pos(token))
        return operand

    def sum_op(self, children):
        return str(children[0])

    @v_args(meta=True)
    def arith_chain(self, meta, children):
        terms = [("+", children[0])] + [(str(children[i]), children[i + 1]) for i in range(1, len(children), 2)]
        return arith_chain(terms, self._pos(meta))

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


    # ---- annotations
    @v_args(meta=True)
    def span(self, meta, children):
        source, start, start_column, end, end_column, quote = children
        return ("span", Span(
            source=str(source),
            line_start=int(start) if start is not None else None,
            line_end=int(end) if end is not None else (int(start) if start is not None else None),
            column_start=int(start_column) if start_column is not None else None,
            column_end=int(end_column) if end_column is not None else None,
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
