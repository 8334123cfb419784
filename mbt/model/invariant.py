"""The typed invariant model: Dwyer's property patterns and scopes over an FSM's states, variables, events and calls."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from mbt.model.common import Annotated, ModelBase
from mbt.model.expr import And, Expr, Or
from mbt.model.fsm import FsmModel

# ---------------------------------------------------------------- propositions
# A proposition is an expression over the variables (as in guards) plus three atoms that only invariants have.
# It is evaluated at a *position* of a run: the initial configuration, or the configuration right after an
# accepted event (refused events are not steps of the system: they change nothing and call nothing).


@dataclass(frozen=True)
class EventIs(Expr):
    """`on EVENT [cond]`: the event taken to reach this position is EVENT, and `cond` holds over its parameters
    (under their declared names) and the variables at this position."""

    event: str
    condition: Expr | None = None

    def children(self):
        return (self.condition,) if self.condition is not None else ()

    def text(self) -> str:
        return f"on {self.event}" + (f" [{self.condition.text()}]" if self.condition is not None else "")


@dataclass(frozen=True)
class CallMade(Expr):
    """`call TOOL [cond]`: the step that reached this position called TOOL with arguments making `cond` true.
    `cond` reads `args.NAME` and the variables at the moment of the call (like a forbid's effect condition).
    With `every`, all calls of TOOL in the step must satisfy `cond` (the consequent of `every call`)."""

    tool: str
    condition: Expr | None = None
    every: bool = False

    def children(self):
        return (self.condition,) if self.condition is not None else ()

    def text(self) -> str:
        return f"call {self.tool}" + (f" [{self.condition.text()}]" if self.condition is not None else "")


def prop_text(expr: Expr) -> str:
    """A proposition as written, parenthesised where an `or` would otherwise bind differently."""
    return f"({expr.text()})" if isinstance(expr, Or) else expr.text()


def given(expr: Expr | None, what: str) -> Expr:
    """A proposition its pattern or scope always has (the parser writes `before R` with its R, `S leads to P` with
    its S): one missing is a bug in whatever built the model, not an absent condition."""
    if expr is None:
        raise ValueError(f"the invariant's {what} is missing")
    return expr


# ---------------------------------------------------------------- patterns and scopes

Pattern = Literal["universality", "absence", "existence", "bounded-existence", "precedence", "response"]
ScopeKind = Literal["global", "before", "after", "between", "after-until"]


class Scope(BaseModel):
    """Where in a run the pattern must hold (Dwyer's scopes). `open` is Q, `close` is R."""

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    kind: ScopeKind = "global"
    open: Expr | None = None
    close: Expr | None = None

    def text(self) -> str:
        if self.kind == "global":
            return ""
        if self.kind == "before":
            return f"before {prop_text(given(self.close, 'R'))}"
        if self.kind == "after":
            return f"after {prop_text(given(self.open, 'Q'))}"
        if self.kind == "after-until":
            return f"after {prop_text(given(self.open, 'Q'))} until {prop_text(given(self.close, 'R'))}"
        # Q is one condition: an `and` inside it would read as the `and` before R.
        opening = given(self.open, "Q")
        opening_text = f"({opening.text()})" if isinstance(opening, (And, Or)) else opening.text()
        return f"between {opening_text} and {prop_text(given(self.close, 'R'))}"

    @property
    def needs_close(self) -> bool:
        """Dwyer's `before R` and `between Q and R` speak only of intervals that R closes."""
        return self.kind in ("before", "between")


class Invariant(Annotated):
    """One named invariant: a pattern over propositions, within a scope.

    * universality `always P` (or `always A -> P`, or `every call T [C]`: A = `call T`, P = all calls satisfy C)
    * absence `never P` · existence `eventually P` · bounded existence `at most N P`
    * precedence `S precedes P` (P only once S has happened) · response `S leads to P` (every S is followed by P)
    """

    name: str
    pattern: Pattern
    p: Expr
    s: Expr | None = None  # the cause (response) or the precondition (precedence)
    antecedent: Expr | None = None  # universality `always A -> P`
    bound: int | None = None  # bounded existence
    scope: Scope = Field(default_factory=Scope)
    matching: list[str] = []  # phrases a golden's must_not may use to assert it
    written: str = ""  # the `every call` form, kept to show the invariant as the modeller wrote it
    key: str = ""

    def text(self) -> str:
        if self.written:
            body = self.written
        elif self.pattern == "universality":
            body = f"always {prop_text(self.antecedent)} -> {prop_text(self.p)}" if self.antecedent is not None \
                else f"always {prop_text(self.p)}"
        elif self.pattern == "absence":
            body = f"never {prop_text(self.p)}"
        elif self.pattern == "existence":
            body = f"eventually {prop_text(self.p)}"
        elif self.pattern == "bounded-existence":
            body = f"at most {self.bound} {prop_text(self.p)}"
        elif self.pattern == "precedence":
            body = f"{prop_text(given(self.s, 'S'))} precedes {prop_text(self.p)}"
        else:
            body = f"{prop_text(given(self.s, 'S'))} leads to {prop_text(self.p)}"
        scope = self.scope.text()
        return f"{body} {scope}" if scope else body

    def props(self) -> dict[str, Expr]:
        """The propositions a monitor evaluates at each position, by role."""
        out = {"p": self.p}
        for role, expr in (("s", self.s), ("a", self.antecedent), ("q", self.scope.open), ("r", self.scope.close)):
            if expr is not None:
                out[role] = expr
        return out


class InvariantModel(ModelBase):
    """`invariants [NAME] for FSM { ... }`: invariants over one FSM, which may be declared in another file."""

    kind: Literal["invariant"] = "invariant"
    fsm: str  # the FSM's name; goldens for the FSM (by `model` or `contract`) apply here too
    invariants: list[Invariant] = []
    fsm_model: FsmModel = Field(exclude=True, repr=False)  # the FSM, resolved by the loader

    def invariant(self, name: str) -> Invariant | None:
        return next((i for i in self.invariants if i.name == name), None)


__all__ = ["EventIs", "CallMade", "Scope", "Invariant", "InvariantModel", "prop_text", "given"]
