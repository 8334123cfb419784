"""Symbolic execution of FSM runs: event arguments are z3 symbols, variables hold concrete values or z3 terms.

A run is a sequence of planned steps (an event and the transition it must take, or a refusal). Variables start
concrete (the initial values or a precondition) and become terms only when an action assigns something computed from
an event argument, so most guards are decided by mbt's own evaluator and only the rest reach z3. The same code runs
fully concretely when the arguments are plain values: that is how a solver's answer is checked (and made canonical)
before anything is written.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import z3

from mbt.analysis.smt import NONE, Solver, Symbols, Term, encode_term, literal, model_to_valuation, truth
from mbt.model.expr import Arith, EnumLit, Expr, Lit, Ref, compile_expr
from mbt.model.fsm import Assign, Discard, FsmModel, ToolCall
from mbt.model.types import ValueType

if TYPE_CHECKING:  # a cycle: the enforced calls are conditions on this engine's steps
    from mbt.generate.enforced import EnforcedCalls

# A planned step's outcome: the index of the transition it takes, a refusal, or whatever the model does (last step).
REFUSED = "refused"
ANY = "any"


@dataclass(frozen=True)
class Constraint:
    """One symbolic condition of a path: its z3 formula and the argument symbols it reads."""

    formula: z3.BoolRef
    leaves: frozenset[str]

    @cached_property
    def text(self) -> str:
        """The formula as z3 prints it (symbolic_key compares run prefixes by it; a path's constraints are shared
        by every run that extends it, so each is printed once)."""
        return self.formula.sexpr()


Cond = bool | Constraint  # a condition decided concretely, or left to the solver


class PathSymbols(Symbols):
    """Symbols whose scope grows as a path is explored (one symbol per argument of each step)."""

    def declare(self, name: str, vtype: ValueType) -> Term:
        if name not in self.scope:
            self.scope[name] = vtype
        return self[name]


@dataclass
class Extra:
    """A condition a planned step must also meet (an atom's value, a forbid's guard, ...); `why` names it."""

    why: str
    build: Callable[[SymbolicFsm, dict, dict], list[Cond]]  # (engine, store before the step, arguments)


@dataclass
class PlannedStep:
    event: str
    outcome: int | str  # transition index, REFUSED or ANY
    extras: list[Extra] = field(default_factory=list)


class SymbolicFsm:
    """One model prepared for symbolic runs; one z3 solver and one answer cache serve every query."""

    def __init__(self, model: FsmModel, solver: Solver | None = None):
        self.model = model
        self.solver = solver or Solver()
        self.symbols = PathSymbols({})
        self.var_types: dict[str, ValueType] = {name: v.type for name, v in model.variables.items()}
        for name in model.discardable:
            vt = model.variables[name].type
            self.var_types[f"discarded.{name}"] = ValueType(vt.kind, vt.lo, vt.hi, vt.values, optional=True)
        self.declared = {name: [p.name for p in e.params] for name, e in model.events.items()}
        self.param_types = {name: {p.name: p.type for p in e.params} for name, e in model.events.items()}
        self.transitions = model.transitions
        self.groups: dict[tuple[str, str], list[int]] = {}
        self.outgoing: dict[str, list[int]] = {s: [] for s in model.states}
        for i, t in enumerate(model.transitions):
            self.groups.setdefault((t.source, t.event), []).append(i)
            self.outgoing[t.source].append(i)
        self.local_names = [t.params or self.declared[t.event] for t in model.transitions]
        self._compiled: dict[int, Callable] = {}
        self._refs: dict[int, tuple[str, ...]] = {}
        self._keep: list[Expr] = []
        self._answers: dict[frozenset[int], tuple[str, list]] = {}
        self._local_types: dict[int, dict[str, ValueType]] = {}
        self._arguments: dict[tuple[int, str], dict[str, Term]] = {}
        self.queries = 0
        # The policies enforcing this model's tool calls (mbt/generate/enforced.py's EnforcedCalls), when a witness
        # must make requests they accept; None: the model alone decides.
        self.enforced: EnforcedCalls | None = None

    # ------------------------------------------------------------ configurations
    def start(self, precondition: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """The initial configuration, with a precondition's state and values on top (validated by the caller)."""
        store: dict[str, Any] = {name: v.initial for name, v in self.model.variables.items()}
        for name in self.model.discardable:
            store[f"discarded.{name}"] = None
        state = self.model.initial_state
        for key, value in (precondition or {}).items():
            if key == "state":
                state = value
            else:
                store[key] = value
        return state, store

    def arguments(self, depth: int, event: str) -> dict[str, Term]:
        """Fresh symbols for the arguments of the event fired at step `depth` (named `@depth:event:param`)."""
        key = (depth, event)
        found = self._arguments.get(key)
        if found is None:
            found = self._arguments[key] = {p: self.symbols.declare(f"@{depth}:{event}:{p}", vtype)
                                            for p, vtype in self.param_types[event].items()}
        return found  # shared: callers never change it

    # ------------------------------------------------------------ expressions
    def compiled(self, expr: Expr) -> Callable:
        fn = self._compiled.get(id(expr))
        if fn is None:
            fn = self._compiled[id(expr)] = compile_expr(expr)
            self._keep.append(expr)  # an id() key is only safe while its object lives
        return fn

    def refs(self, expr: Expr) -> tuple[str, ...]:
        # Keyed by identity (model expressions live as long as the model): hashing a frozen dataclass tree on
        # every evaluation costs more than the evaluation.
        names = self._refs.get(id(expr))
        if names is None:
            names = tuple(sorted({n.name for n in expr.walk() if isinstance(n, Ref)}))
            self._refs[id(expr)] = names
            self._keep.append(expr)
        return names

    def term_of(self, name: str, value: Any, types: dict[str, ValueType] | None = None) -> Term:
        """A concrete value as a z3 term of its variable's or argument's type (`types`: names beyond variables)."""
        if isinstance(value, Term):
            return value
        if value is None:
            return NONE
        vtype = self.var_types.get(name) or (types or {}).get(name)
        if vtype is not None and vtype.kind == "enum":
            return Term(z3.BoolVal(True), z3.IntVal(self.symbols.enums.code(value)), "enum")
        return literal(value)

    def value(self, expr: Expr, env: dict[str, Any], types: dict[str, ValueType] | None = None) -> Any:
        """The expression's value in `env` (names -> values or terms): concrete when everything it reads is."""
        names = self.refs(expr)
        if not any(isinstance(env.get(n), Term) for n in names):
            return self.compiled(expr)(env)
        view = self.symbols.view(values={n: self.term_of(n, env[n], types) for n in names if n in env})
        return encode_term(expr, view)

    def condition(self, expr: Expr, env: dict[str, Any], want: bool = True,
                  types: dict[str, ValueType] | None = None) -> Cond:
        """`expr` is `want`: True/False when decided concretely, else a Constraint for the solver."""
        result = self.value(expr, env, types)
        if not isinstance(result, Term):
            return bool(result) == want
        # Simplified: `recovery_email != none` over a value that is surely set is just true, and decided here;
        # simplified formulas also print alike, which the prefix keys rely on.
        formula = z3.simplify(truth(result) if want else z3.Not(truth(result)))
        if z3.is_true(formula) or z3.is_false(formula):
            return z3.is_true(formula)
        return Constraint(formula, result.leaves)

    def type_of(self, expr: Expr, types: dict[str, ValueType]) -> ValueType | None:
        """The value type of an expression (what a concrete value computed from it should be encoded as)."""
        if isinstance(expr, Ref):
            return self.var_types.get(expr.name) or types.get(expr.name)
        if isinstance(expr, EnumLit):
            return ValueType("enum", values=(expr.value,))
        if isinstance(expr, Lit):
            kind = {bool: "bool", int: "int", str: "string"}.get(type(expr.value))
            return ValueType(kind) if kind else None
        if isinstance(expr, Arith):
            return ValueType("int", lo=-(2 ** 31), hi=2 ** 31)
        return ValueType("bool")

    # ------------------------------------------------------------ steps
    def local_env(self, store: dict[str, Any], t_index: int, args: dict[str, Any], copy: bool = False
                  ) -> dict[str, Any]:
        """What transition `t_index`'s guard and actions see: the store and the arguments under its local names.
        Without parameters that is the store itself, unless `copy` (the caller writes to it)."""
        if not args and not copy:
            return store
        env = dict(store)
        for local, declared in zip(self.local_names[t_index], self.declared[self.transitions[t_index].event]):
            env[local] = args[declared]
        return env

    def local_types(self, t_index: int) -> dict[str, ValueType]:
        """The types of transition `t_index`'s local parameter names."""
        found = self._local_types.get(t_index)
        if found is None:
            event = self.transitions[t_index].event
            found = self._local_types[t_index] = {
                local: self.param_types[event][declared]
                for local, declared in zip(self.local_names[t_index], self.declared[event])}
        return found

    def named_env(self, store: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
        """The store with the arguments under the event's declared names (what a forbid's guard sees)."""
        env = dict(store)
        env.update(args)
        return env

    def takes(self, store: dict[str, Any], t_index: int, args: dict[str, Any]) -> list[Cond]:
        """Conditions for the event to take transition `t_index`: its guard holds, no earlier branch's does; and,
        where policies enforce a tool it calls (`enforced`), what they ask of the call's request."""
        t = self.transitions[t_index]
        out: list[Cond] = []
        for j in self.groups[(t.source, t.event)]:
            guard = self.transitions[j].guard
            if j == t_index:
                if guard is not None:
                    out.append(self.condition(guard, self.local_env(store, j, args), True, self.local_types(j)))
                break
            out.append(False if guard is None else
                       self.condition(guard, self.local_env(store, j, args), False, self.local_types(j)))
        if self.enforced is not None and t_index in self.enforced.calling:
            out += self.enforced.conditions(store, t_index, args)
        return out

    def refuses(self, store: dict[str, Any], state: str, event: str, args: dict[str, Any]) -> list[Cond]:
        """Conditions for the event to be refused in `state`: no branch's guard holds."""
        out: list[Cond] = []
        for j in self.groups.get((state, event), ()):
            guard = self.transitions[j].guard
            out.append(False if guard is None else
                       self.condition(guard, self.local_env(store, j, args), False, self.local_types(j)))
        return out

    def apply(self, store: dict[str, Any], t_index: int, args: dict[str, Any],
              on_call: Callable[[ToolCall, dict[str, Any], dict[str, Any], dict[str, ValueType]], None] | None = None
              ) -> dict[str, Any]:
        """The store after transition `t_index`'s actions (each action sees the ones before it).

        `on_call(call, arguments, env, types)` is told about every tool call, with the environment at that moment
        and the types of the arguments (`args.NAME`).
        """
        env = self.local_env(store, t_index, args, copy=True)
        types = self.local_types(t_index)
        out = dict(store)
        for action in self.transitions[t_index].actions:
            if isinstance(action, Assign):
                env[action.target] = out[action.target] = self.value(action.value, env, types)
            elif isinstance(action, Discard):
                key = f"discarded.{action.target}"
                env[key] = out[key] = env.get(action.target)
                env[action.target] = out[action.target] = None
            elif on_call is not None:
                values = {name: self.value(expr, env, types) for name, expr in action.args}
                arg_types = {f"args.{name}": t for name, expr in action.args
                             if (t := self.type_of(expr, types)) is not None}
                on_call(action, values, dict(env), {**types, **arg_types})
        return out

    # ------------------------------------------------------------ solving
    def satisfiable(self, constraints: Sequence[Constraint], new: Sequence[Constraint] = ()) -> str:
        """"sat" / "unsat" / "unknown" for `constraints` + `new`, asking z3 only about the part `new` touches.

        Constraints over disjoint arguments are independent (KLEE's constraint independence), so when the path so far
        was satisfiable only the constraints connected to the new ones through shared symbols need checking.
        """
        if not new:
            chosen = list(constraints)
        else:
            leaves = set().union(*(c.leaves for c in new))
            chosen, rest = list(new), list(constraints)
            grew = True
            while grew:
                grew = False
                keep = []
                for c in rest:
                    if c.leaves & leaves:
                        chosen.append(c)
                        leaves |= c.leaves
                        grew = True
                    else:
                        keep.append(c)
                rest = keep
        if not chosen:
            return "sat"
        key = frozenset(c.formula.get_id() for c in chosen)
        cached = self._answers.get(key)
        if cached is not None:
            return cached[0]
        status = self._check(chosen, want_model=False)[0]
        # The formulas are kept with the answer: z3 may reuse the id of a freed AST for another one.
        self._answers[key] = (status, [c.formula for c in chosen])
        return status

    def _check(self, constraints: Sequence[Constraint], want_model: bool):
        self.queries += 1
        leaves: set[str] = set()
        for c in constraints:
            leaves |= c.leaves
        outcome = self.solver.check_formulas([c.formula for c in constraints] + self.symbols.domain(leaves),
                                             want_model)
        return outcome.status, outcome.model

    def solve(self, constraints: Sequence[Constraint], names: Iterable[str]) -> dict[str, Any] | None:
        """Values of the named argument symbols satisfying every constraint (None unless "sat")."""
        status, model = self._check(list(constraints), want_model=True)
        if status != "sat":
            return None
        return model_to_valuation(model, self.symbols, list(names))


def split(conds: Iterable[Cond]) -> tuple[bool, list[Constraint]]:
    """(False, _) when a condition is concretely false; else (True, the symbolic ones)."""
    symbolic = []
    for c in conds:
        if c is False:
            return False, []
        if c is not True:
            symbolic.append(c)
    return True, symbolic


def concrete(value: Any) -> bool:
    return not isinstance(value, Term)


def store_key(state: str, store: dict[str, Any]) -> Hashable | None:
    """A hashable key for a fully concrete configuration (None when some value is symbolic)."""
    for value in store.values():
        if isinstance(value, Term):
            return None
    return state, tuple(sorted(store.items()))  # names are unique: the sort never compares two values


_LEAF = re.compile(r"\|@(\d+):([^|]*)\|")


def symbolic_key(state: str, store: dict[str, Any], constraints: Sequence[Constraint]) -> Hashable:
    """A key equal for two run prefixes exactly when their futures are the same: the same state, the same concrete
    values, and symbolic values (with the path conditions that constrain them) equal up to renaming the steps their
    symbols come from. Constraints on symbols the store no longer holds cannot change the future (they were
    satisfiable and nothing later reads those symbols), so they are left out.

    This is what makes the search finite on models that copy event arguments into variables and loop.
    """
    leaves: set[str] = set()
    texts: list[tuple[object, ...]] = []  # (name, value), or (name, kind, is_set, value) of a symbolic one
    for name in sorted(store):
        value = store[name]
        if isinstance(value, Term):
            leaves |= value.leaves
            texts.append((name, value.kind, value.is_set.sexpr(), value.value.sexpr() if value.value is not None else ""))
        else:
            texts.append((name, value))
    related: list[Constraint] = []
    rest = list(constraints)
    grew = bool(leaves)
    while grew:
        grew = False
        keep = []
        for c in rest:
            if c.leaves & leaves:
                related.append(c)
                leaves |= c.leaves
                grew = True
            else:
                keep.append(c)
        rest = keep
    numbers: dict[str, str] = {}

    def rename(match: re.Match) -> str:
        depth = match.group(1)
        if depth not in numbers:
            numbers[depth] = str(len(numbers))
        return f"|@#{numbers[depth]}:{match.group(2)}|"

    store_part = tuple(tuple(_LEAF.sub(rename, part) if isinstance(part, str) else part for part in item)
                       for item in texts)
    # Constraints are sorted with the symbols not yet numbered masked, then numbered in that order: equal keys
    # still mean equal formulas under a renaming.
    masked = sorted(((_LEAF.sub(lambda m: f"|@{numbers.get(m.group(1), '?')}:{m.group(2)}|", c.text), c)
                     for c in related), key=lambda pair: pair[0])
    constraint_part = tuple(_LEAF.sub(rename, c.text) for _, c in masked)
    return state, store_part, constraint_part
