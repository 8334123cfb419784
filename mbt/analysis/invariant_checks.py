"""`mbt check` for invariants: explore the FSM, judge every run with each invariant's monitor, and report each
invariant as holding (up to the depth bound, or on every run) or violated, with the shortest counterexample.

Why explicit-state search rather than z3 bounded model checking: business FSMs have few control states and small
variable domains, strings are handled exactly by data independence (mbt/analysis/explore.py), a breadth-first
search over (configuration, monitor state) pairs finds the *shortest* violating run by construction, and each step
is computed by the replay engine's own compiled transitions, so the counterexample means what replay means. Every
counterexample is then replayed through the replay engine (mbt.goldens.replay_fsm.run_events) and judged again
before it is shown.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mbt.analysis.counterexample import CallShown, Counterexample, TraceStep
from mbt.analysis.explore import MAX_CONFIGURATIONS, Edge, Explorer, StateGraph
from mbt.analysis.findings import CheckOptions, Finding, check
from mbt.analysis.smt import Solver, Symbols, encode_term, truth
from mbt.elements.base import Element
from mbt.elements.fsm import enumerate_fsm
from mbt.elements.invariant import trigger_id
from mbt.engine.fsm import CompiledFsm, Snapshot, run_events
from mbt.engine.temporal import OPEN, Monitor, Verdict, judge
from mbt.goldens.cases import GoldenCase
from mbt.goldens.replay_invariant import config_of, positions_of
from mbt.goldens.results import CaseRun
from mbt.model.common import Location
from mbt.model.expr import And, Expr, Not, Or, Ref, refs
from mbt.model.fsm import FsmModel
from mbt.model.invariant import CallMade, EventIs, Invariant, InvariantModel, given
from mbt.model.types import ValueType

# Check(code, name, severity, doc), registered in mbt.analysis.findings.CHECKS; stable, documented with a bad and a
# good example each in docs/checks.md (doc: its first sentence there).
INVARIANT_VIOLATED = check("INV001", "invariant-violated", "error",
                           "Some run of the state machine breaks the invariant.")
INVARIANT_HOLDS = check("INV002", "invariant-holds", "info",
                        "No explored run breaks the invariant, and some run triggers it: \"holds on every run (N "
                        "reachable configurations explored)\" when the exploration was complete, else \"holds on "
                        "every run of up to N steps\".")
INVARIANT_VACUOUS = check("INV003", "invariant-vacuous", "warning",
                          "The invariant can never be broken because it is never *triggered*: no explored run opens "
                          "its scope, makes its antecedent true (`always A -> P`, `every call T`), makes P true (`S "
                          "precedes P`) or S true (`S leads to P`) — or, for `before`/`between` scopes, no run ever "
                          "closes an open interval with R.")
EXPLORATION_LIMITED = check("INV004", "exploration-limited", "warning",
                            "The exploration reached 200,000 configurations before the depth bound and stopped; the "
                            "invariants were judged on the part explored only.")

DEFAULT_DEPTH = 20  # steps; `mbt check --depth N` changes it


@dataclass
class Outcome:
    """What the search found for one invariant."""

    inv: Invariant
    verdict: Verdict | None = None
    path: list[Edge] = field(default_factory=list)  # the counterexample's steps
    every_run: bool = False  # the search saturated on a complete state graph: holds for runs of any length
    fired: bool = False  # some explored position triggers the invariant
    closed: bool = True  # for `before`/`between` scopes: some explored run closes an open interval with R
    explored: int = 0  # (configuration, monitor state) pairs visited


@dataclass
class Analysis:
    graph: StateGraph
    outcomes: list[Outcome]


_CACHE: dict[tuple[int, int, int], tuple[InvariantModel, Analysis]] = {}


def analyse(model: InvariantModel, depth: int = DEFAULT_DEPTH, limit: int = MAX_CONFIGURATIONS) -> Analysis:
    """Explore the model's FSM once and search each invariant; cached per model object, depth and limit."""
    key = (id(model), depth, limit)
    cached = _CACHE.get(key)
    if cached is not None and cached[0] is model:
        return cached[1]
    exprs = [e for inv in model.invariants for e in inv.props().values()]
    graph = Explorer(model.fsm_model, exprs).explore(depth, limit)
    analysis = Analysis(graph, [search(graph, Monitor(inv), depth) for inv in model.invariants])
    if len(_CACHE) > 32:
        _CACHE.clear()
    _CACHE[key] = (model, analysis)
    return analysis


def search(graph: StateGraph, monitor: Monitor, depth: int) -> Outcome:
    """Breadth first over (configuration, monitor state): the first violation found is a shortest one."""
    out = Outcome(monitor.inv, closed=not monitor.inv.scope.needs_close)
    values: list[tuple | None] = [None] * graph.edge_count
    closing = monitor.scope in ("before", "between", "after-until")
    start_vals = monitor.values(graph.position(0))
    state, verdict = monitor.step(monitor.initial(), start_vals, 0)
    out.fired = monitor.fires(state, start_vals)
    if closing and start_vals[4] and monitor.initial()[0] == OPEN:
        out.closed = True
    if verdict is None and graph.terminal(0):
        verdict = monitor.finish(state, 0)
    if verdict is not None:
        out.verdict = verdict
        return out
    parents: dict[tuple, tuple[tuple, Edge] | None] = {(0, state): None}
    layer = [(0, state)]
    for d in range(depth):
        following = []
        for key in layer:
            node, before = key
            for edge in graph.edges[node] or ():
                vals = values[edge.id]
                if vals is None:
                    vals = values[edge.id] = monitor.values(graph.position(node, edge))
                after, verdict = monitor.step(before, vals, d + 1)
                if not out.fired and monitor.fires(after, vals):
                    out.fired = True
                if closing and vals[4] and before[0] == OPEN:
                    out.closed = True
                target = (edge.target, after)
                if verdict is None and target not in parents and graph.terminal(edge.target):
                    verdict = monitor.finish(after, d + 1)
                if verdict is not None:
                    out.verdict, out.path = verdict, _path(parents, key) + [edge]
                    out.explored = len(parents)
                    return out
                if target not in parents:
                    parents[target] = (key, edge)
                    following.append(target)
        layer = following
        if not layer:
            break
    out.explored = len(parents)
    out.every_run = graph.complete and not layer
    return out


def _path(parents: dict, key: tuple) -> list[Edge]:
    steps = []
    while parents[key] is not None:
        key, edge = parents[key]
        steps.append(edge)
    return steps[::-1]


# ---------------------------------------------------------------- counterexamples, replayed


def counterexample(model: InvariantModel, graph: StateGraph, outcome: Outcome,
                   engine: tuple[list, CompiledFsm] | None = None) -> Counterexample:
    """The violating run, rebuilt from the replay engine's own configurations, and judged again on them.
    `engine`: the FSM's elements and compiled form, when several counterexamples share them."""
    verdict = outcome.verdict
    if verdict is None:
        raise ValueError(f"invariant `{outcome.inv.key}` is not violated: it has no counterexample")
    fsm = model.fsm_model
    events = [(e.event, e.args) for e in outcome.path]
    elements, compiled = engine or replay_engine(fsm)
    state, variables = compiled.initial_config()
    start = Snapshot(state, {k: v for k, v in variables.items() if not k.startswith("discarded.")},
                     {k[10:]: v for k, v in variables.items() if k.startswith("discarded.")}, None)
    replayed = False
    try:
        snapshots = run_events(fsm, elements, events, compiled=compiled)
    except ValueError:
        snapshots = None
    steps = [TraceStep(step=0, state=start.state, changed=config_of(start))]
    if snapshots is not None and all(s.transition is not None for s in snapshots):
        run = CaseRun(GoldenCase(id="counterexample"), snapshots=snapshots, start=start)
        positions, _, problems = positions_of(compiled, run)
        end = outcome.path[-1].target if outcome.path else 0
        judgement = judge(Monitor(outcome.inv), positions, graph.terminal(end))
        same_configs = all(graph.nodes[e.target] == (s.state, tuple(config_of(s)[n] for n in graph.names))
                           for e, s in zip(outcome.path, snapshots))
        replayed = (not problems and same_configs and judgement.verdict is not None
                    and judgement.verdict.position == verdict.position)
        previous = config_of(start)
        for number, (edge, snap) in enumerate(zip(outcome.path, snapshots), start=1):
            now = config_of(snap)
            steps.append(TraceStep(step=number, event=edge.event, args=dict(edge.args), transition=snap.transition,
                                   state=snap.state, changed={k: v for k, v in now.items() if previous.get(k) != v},
                                   calls=[CallShown(tool=c.tool, args=c.args) for c in snap.calls]))
            previous = now
    else:  # the replay engine refused the run: show what the exploration computed, marked as not replayed
        previous = graph.variables(0)
        for number, edge in enumerate(outcome.path, start=1):
            now = graph.variables(edge.target)
            steps.append(TraceStep(step=number, event=edge.event, args=dict(edge.args), transition=edge.transition,
                                   state=graph.nodes[edge.target][0],
                                   changed={k: v for k, v in now.items() if previous.get(k) != v},
                                   calls=[CallShown(tool=c.tool, args=c.args) for c in edge.calls]))
            previous = now
    turns = []
    for edge in outcome.path:
        turn: dict = {"event": edge.event}
        args = {k: v for k, v in edge.args.items() if v is not None}
        if args:
            turn["args"] = args
        turns.append(turn)
    golden = {"id": f"CE-{outcome.inv.key}", "model": fsm.name, "turns": turns}
    return Counterexample(invariant=outcome.inv.key, reason=verdict.reason, violated_at=verdict.position,
                          depth=graph.depth, replayed=replayed, steps=steps, golden=golden)


def replay_engine(fsm: FsmModel) -> tuple[list[Element], CompiledFsm]:
    elements = enumerate_fsm(fsm)
    return elements, CompiledFsm(fsm, elements)


# ---------------------------------------------------------------- findings


def check_invariants(model: InvariantModel, options: CheckOptions | None = None) -> list[Finding]:
    given = options or CheckOptions()
    depth = given.depth if given.depth is not None else DEFAULT_DEPTH  # the invariant kind's own defaults
    analysis = analyse(model, depth, given.max_configurations if given.max_configurations is not None
                       else MAX_CONFIGURATIONS)
    graph = analysis.graph
    findings: list[Finding] = []
    engine = None  # built on the first counterexample, shared by the others

    def report(kind, loc: Location, message: str, example: Counterexample | None = None) -> None:
        code, name, severity = kind.code, kind.name, kind.severity
        findings.append(Finding(code=code, name=name, severity=severity, location=loc, message=message,
                                model=model.name, counterexample=example))

    if graph.truncated:
        report(EXPLORATION_LIMITED, model.loc,
               f"exploring fsm `{model.fsm}` stopped at {len(graph.nodes):,} configurations before depth {depth}; "
               "the invariants below were checked on the part explored only")
    for outcome in analysis.outcomes:
        inv = outcome.inv
        if outcome.verdict is not None:
            engine = engine or replay_engine(model.fsm_model)
            example = counterexample(model, graph, outcome, engine)
            report(INVARIANT_VIOLATED, inv.loc, f"invariant `{inv.key}` is violated: {outcome.verdict.reason}",
                   example)
            continue
        vacuous = vacuity(outcome, graph.complete)
        if vacuous is not None:
            report(INVARIANT_VACUOUS, inv.loc, f"invariant `{inv.key}` holds only vacuously: {vacuous}")
            continue
        notes = ["some int parameters were sampled"] if graph.sampled else []
        if outcome.every_run:
            where = f"on every run ({len(graph.nodes):,} reachable configurations explored)"
        elif graph.truncated:
            # Not "every run of up to N steps": the search stopped at its limit, so say what was checked (INV004).
            where = (f"on the runs explored before the exploration stopped at its limit of {len(graph.nodes):,} "
                     f"configurations (runs of up to {depth} steps through the other configurations were not "
                     "checked" + "".join(f"; {n}" for n in notes) + ")")
        else:
            where = (f"on every run of up to {depth} steps ({len(graph.nodes):,} configurations explored"
                     + "".join(f"; {n}" for n in notes) + ")")
        report(INVARIANT_HOLDS, inv.loc, f"invariant `{inv.key}` holds {where}")
    return findings


def vacuity(outcome: Outcome, complete: bool) -> str | None:
    """Why the invariant can never be violated nor triggered, or None when some run triggers it."""
    inv = outcome.inv
    runs = "no run from the initial state" if complete and outcome.every_run else \
        "no run from the initial state within the depth bound"  # (INV004 says when the search stopped earlier)
    if not outcome.fired:
        if inv.pattern == "universality" and inv.antecedent is not None:
            return f"{runs} makes its antecedent `{inv.antecedent.text()}` true in scope"
        if inv.pattern == "precedence":
            return f"{runs} makes `{inv.p.text()}` true in scope, so the order is never tested"
        if inv.pattern == "response":
            return f"{runs} makes `{given(inv.s, 'S').text()}` true in scope, so nothing ever needs an answer"
        return f"{runs} opens its scope (`{inv.scope.open.text()}` never holds)" if inv.scope.open is not None \
            else f"{runs} opens its scope"
    if not outcome.closed:
        # (only a scope that needs closing, `before R` or `between Q and R`, starts unclosed)
        return f"{runs} closes its scope (`{given(inv.scope.close, 'R').text()}` never ends an open interval)"
    return None


def never_triggered(model: InvariantModel) -> dict[str, str]:
    """Per trigger element id, why no run of any length can trigger the invariant: a condition the trigger needs
    (its antecedent, the P of `precedes`, the S of `leads to`, the scope's Q, or the R that must close a
    `before`/`between` interval) that no value of the FSM's variables satisfies. Decided by z3 with every `on`,
    `call` and `state` atom left free (true or false at will), so "no value" is a proof whatever the runs do. Such
    triggers are infeasible, for coverage and generation alike (as FSM guards that can never hold are)."""
    fsm = model.fsm_model
    out: dict[str, str] = {}
    for inv in model.invariants:
        needed: list[tuple[str, Expr]] = []
        if inv.pattern == "universality" and inv.antecedent is not None:
            needed.append(("its antecedent", inv.antecedent))
        elif inv.pattern == "precedence":
            needed.append(("P, which `precedes` orders", inv.p))
        elif inv.pattern == "response":
            needed.append(("S, which `leads to` answers", given(inv.s, "S")))
        if inv.scope.open is not None:
            needed.append(("its scope's opening", inv.scope.open))
        if inv.scope.needs_close and inv.scope.close is not None:
            needed.append(("the end of its scope", inv.scope.close))
        for what, expr in needed:
            if _never_holds(expr, fsm.state_scope()):
                out[trigger_id(inv)] = (f"`{expr.text()}` ({what}) is unsatisfiable: no value of the variables "
                                        "makes it true, so no run can trigger the invariant")
                break
    return out


def _never_holds(expr: Expr, scope: dict[str, ValueType]) -> bool:
    """z3 proves that no values of the variables make `expr` true, its run atoms (`on`, `call`, `state`) free."""
    free: dict[str, ValueType] = {}

    def relax(node: Expr) -> Expr:
        if isinstance(node, (And, Or)):
            return type(node)(tuple(relax(item) for item in node.items))
        if isinstance(node, Not):
            return Not(relax(node.operand))
        if isinstance(node, (EventIs, CallMade)) or "state" in refs(node) or refs(node) - set(scope):
            name = f"?free{len(free)}"  # no variable name has a `?`
            free[name] = ValueType("bool")
            return Ref(name)
        return node

    relaxed = relax(expr)
    symbols = Symbols({**scope, **free})
    try:
        term = encode_term(relaxed, symbols)
        formula = truth(term)
    except TypeError:
        return False  # not encodable: never claimed impossible
    return Solver().check_formulas([formula, *symbols.domain(term.leaves)], want_model=False).unsat


__all__ = ["check_invariants", "analyse", "search", "counterexample", "never_triggered", "DEFAULT_DEPTH"]
