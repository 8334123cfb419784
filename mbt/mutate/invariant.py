"""Invariant mutation operators (the scope changed, the antecedent weakened: Dwyer's property patterns), and the
search that decides each unkilled mutant by bounded model checking, as `mbt check` checks an invariant.

A mutant of an invariant changes no step of its FSM, only which runs break the invariant, and a golden kills it when
its run breaks the mutant but not the original (a golden that breaks the original contradicts the model and kills
nothing). So the distinguishing search walks the runs of the FSM from its initial state — the state graph `mbt
check` explores (mbt.analysis.invariant_checks.analyse, depth DEFAULT_DEPTH) — with both invariants' monitors in step,
breadth first over (configuration, original's monitor state, mutant's monitor state): the first run found that
breaks the mutant and not the original is a shortest witness. A run is complete, and owes what `eventually` and
`leads to` promise, only in a final state, as a golden's replay judges it.

No such run within the bound, and the mutant is equivalent: on every run when the exploration exhausted the state
space (every reachable configuration expanded, no parameter sampled), else only within the bound, which the reason
says (runs longer than the bound were not searched). A mutant told apart only by runs that break the original stays
surviving without a witness: it is not equivalent, but no golden agreeing with the model can kill it (fix the
model: `mbt check` shows the run). An exploration that sampled int parameters or stopped at its configuration limit
decides nothing: the mutant survives, "not decided".
"""

from __future__ import annotations

from typing import Any

from mbt.analysis.explore import Edge, StateGraph
from mbt.analysis.invariant_checks import DEFAULT_DEPTH, analyse
from mbt.engine.temporal import Monitor, State
from mbt.goldens.replay_invariant import InvariantReplayer
from mbt.kind import narrow, support
from mbt.model.expr import And
from mbt.model.invariant import InvariantModel, Scope
from mbt.mutate.mutant import Distinction, Mutant, Operators

OPERATORS = {
    "ISC": "scope changed: a scoped invariant is required over the whole run (global)",
    "IAW": "antecedent weakened: one conjunct of `always A -> P`'s A is dropped (or A, when it is one condition)",
}


def invariant_mutants(model: InvariantModel) -> list[Mutant]:
    ops = Operators(OPERATORS)
    for i, inv in enumerate(model.invariants):
        el = f"trigger:{inv.name}"

        def change(i=i, **update):
            def build() -> InvariantModel:
                invariants = list(model.invariants)
                invariants[i] = invariants[i].model_copy(update=update)
                return model.model_copy(update={"invariants": invariants})
            return build

        if inv.scope.kind != "global":
            ops.add("ISC", el, inv.loc, f"{inv.name}: scope `{inv.scope.text()}` -> global", change(scope=Scope()),
                    data={"index": i})
        a = inv.antecedent
        if a is not None:
            parts = list(a.items) if isinstance(a, And) else [a]
            for k, part in enumerate(parts):
                rest = parts[:k] + parts[k + 1:]
                weaker = None if not rest else rest[0] if len(rest) == 1 else And(tuple(rest))
                what = f"without `{part.text()}`" if rest else "removed"
                ops.add("IAW", el, inv.loc, f"{inv.name}: antecedent `{a.text()}` {what}", change(antecedent=weaker),
                        data={"index": i})
    return ops.found


def mutant_replayer(base: InvariantReplayer, mutant: Mutant) -> InvariantReplayer:
    """The mutant's replayer: the invariant kind's, over the mutant's own elements."""
    model = narrow(mutant.model, InvariantModel, "invariant")
    return InvariantReplayer(model, support("invariant").elements(model))


def distinguish(base: InvariantReplayer, replayer: InvariantReplayer, mutant: Mutant,
                depth: int = DEFAULT_DEPTH) -> Distinction:
    """A shortest run that breaks the mutant and no invariant of the original (the witness), or why there is none."""
    original = base.model
    index = mutant.data["index"]
    before, after = Monitor(original.invariants[index]), Monitor(replayer.model.invariants[index])
    graph = analyse(original, depth).graph  # the mutant reads no constant the original does not: the same graph
    if graph.sampled or graph.truncated:
        why = ("some int parameters were sampled" if graph.sampled else
               f"the exploration stopped at its limit of {len(graph.nodes):,} configurations")
        return Distinction(False, f"not decided: no run of up to {depth} steps told it apart, but {why}",
                           exhaustive=False)
    # A golden kills the mutant when its run breaks the mutated invariant and no invariant of the original (the
    # others are the mutant's too): one breaking any of them contradicts the model and kills nothing.
    everything = [before] + [Monitor(inv) for k, inv in enumerate(original.invariants) if k != index]
    path, _ = _breaking(graph, depth, broken=after, kept=everything)
    if path is not None:
        steps = f"{len(path)} step{'s' if len(path) != 1 else ''}"
        return Distinction(False, f"told apart by a run of {steps} ({_events(path)}): it breaks the mutant, not the "
                                  "original", _golden(original, mutant, path), exhaustive=False)
    # No golden kills it: is that because the two invariants agree on every run, or because every run on which
    # they differ breaks the original model?
    more, saturated = _breaking(graph, depth, broken=after, kept=[before])
    fewer, saturated_too = _breaking(graph, depth, broken=before, kept=[after])
    differing = more if more is not None else fewer
    if differing is not None:
        return Distinction(False, f"told apart only by runs that break the original model ({_events(differing)}; "
                                  "`mbt check` reports the invariant it breaks): a golden on them contradicts the "
                                  "model, so none can kill this mutant until the model is fixed", exhaustive=False)
    if graph.complete and saturated and saturated_too:
        return Distinction(True, f"equivalent on every run: no run of any length tells it apart (the state space was "
                                 f"exhausted: {len(graph.nodes):,} reachable configurations explored)")
    return Distinction(True, f"no run of up to {depth} steps tells it apart: equivalent within the bound only (the "
                             f"state space was not exhausted at that depth: {len(graph.nodes):,} configurations "
                             "explored; longer runs were not searched)", exhaustive=False)


def _breaking(graph: StateGraph, depth: int, broken: Monitor, kept: list[Monitor]
              ) -> tuple[list[Edge] | None, bool]:
    """A shortest run from the initial configuration on which `broken` reports a violation and no monitor of `kept`
    does, judged as a golden's replay judges it (a run owes `eventually` only when it ends in a final state; a golden
    has at least one turn, so a run has at least one step); and whether the search saturated (no new (configuration,
    monitor states) tuple was left to follow within the bound)."""
    start = graph.position(0)
    first_b, verdict_b = broken.step(broken.initial(), broken.values(start), 0)
    first_k = []
    for monitor in kept:
        state, verdict = monitor.step(monitor.initial(), monitor.values(start), 0)
        if verdict is not None:
            return None, True  # every run breaks a kept invariant from the start
        first_k.append(state)
    broken_at_start = verdict_b is not None  # then any first step that keeps the others is a witness
    key: tuple = (0, first_b, tuple(first_k))
    parents: dict[tuple, tuple[tuple, Edge] | None] = {key: None}
    layer = [key]
    for d in range(depth):
        following = []
        for key in layer:
            node, state_b, states_k = key
            for edge in graph.edges[node] or ():
                pos = graph.position(node, edge)
                next_k = []
                for monitor, state in zip(kept, states_k):
                    after, verdict = monitor.step(state, monitor.values(pos), d + 1)
                    if verdict is not None or _owes(monitor, graph, edge.target, after):
                        break  # a golden along this run contradicts the model: it kills nothing, nor do longer ones
                    next_k.append(after)
                else:
                    next_b, verdict_b = broken.step(state_b, broken.values(pos), d + 1)
                    if broken_at_start or verdict_b is not None or _owes(broken, graph, edge.target, next_b):
                        return _path(parents, key) + [edge], False
                    target = (edge.target, next_b, tuple(next_k))
                    if target not in parents:
                        parents[target] = (key, edge)
                        following.append(target)
        layer = following
        if not layer:
            return None, True
    return None, False


def _owes(monitor: Monitor, graph: StateGraph, node: int, state: State) -> bool:
    """Whether a run ending here breaks the invariant at its end: only in a final state is a golden's run complete."""
    final = graph.model.states[graph.nodes[node][0]].final
    return final and monitor.finish(state, 0) is not None


def _path(parents: dict, key: tuple) -> list[Edge]:
    steps = []
    while parents[key] is not None:
        key, edge = parents[key]
        steps.append(edge)
    return steps[::-1]


def _turns(path: list[Edge]) -> list[dict[str, Any]]:
    turns = []
    for edge in path:
        turn: dict[str, Any] = {"event": edge.event}
        args = {k: v for k, v in edge.args.items() if v is not None}
        if args:
            turn["args"] = args
        turns.append(turn)
    return turns


def _events(path: list[Edge]) -> str:
    return ", ".join(edge.event + (f"({', '.join(f'{k}={v!r}' for k, v in edge.args.items() if v is not None)})"
                                   if any(v is not None for v in edge.args.values()) else "") for edge in path)


def _golden(model: InvariantModel, mutant: Mutant, path: list[Edge]) -> dict[str, Any]:
    """The witness as a golden case of the FSM: its events in order (the invariant is judged on the run itself)."""
    return {"id": f"kill:{model.name}:{mutant.id}", "model": model.fsm, "turns": _turns(path)}
