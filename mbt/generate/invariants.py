"""Witness runs for invariant triggers: the shortest run of the FSM that makes an invariant's antecedent (or scope)
true, with the checks that assert its consequent there.

The run comes from the same exploration `mbt check` uses for invariants (mbt/analysis/invariant_checks.py: the FSM's
configurations within `--depth` steps, arguments from the constants the model and its invariants use), searched
breadth first over (configuration, monitor state) until the monitor says the invariant fired. Its expectations come
from the FSM replay engine (mbt/generate/skeleton.py); every turn asserts the whole configuration and the tool calls,
and the invariant's `matching` phrases. A run (or, for response patterns, the run continued a few steps)
is kept only when the invariant replayer says the stub verifies the trigger.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Any

from mbt.analysis.explore import Edge
from mbt.analysis.invariant_checks import analyse
from mbt.elements.base import Element
from mbt.elements.fsm import enumerate_fsm
from mbt.elements.invariant import trigger_id
from mbt.engine.temporal import Monitor
from mbt.generate.skeleton import SkeletonBuilder
from mbt.generate.witnesses import NoWitness
from mbt.goldens.cases import parse_case
from mbt.goldens.replay_invariant import InvariantReplayer
from mbt.kind import narrow
from mbt.model.fsm import FsmModel
from mbt.model.invariant import CallMade, Invariant, InvariantModel

EXTENSION_STEPS = 4  # steps a run may continue past the trigger, to reach the consequent of a response pattern
CANDIDATES = 200


def fsm_of(model: InvariantModel) -> FsmModel:
    """The FSM the invariants constrain (linked by the loader)."""
    return narrow(model.fsm_model, FsmModel, "fsm")


class InvariantWitnesses:
    def __init__(self, model: InvariantModel, elements: list[Element], depth: int):
        self.model = model
        self.fsm = fsm_of(model)
        self.index = {e.id: i for i, e in enumerate(elements)}
        self.replayer = InvariantReplayer(model, elements)
        self.graph = analyse(model, depth).graph  # explored to `--max-depth`, the bound the messages cite
        self.monitors = {trigger_id(inv): Monitor(inv) for inv in model.invariants}
        self.invariants = {trigger_id(inv): inv for inv in model.invariants}
        self.builder = SkeletonBuilder(self.fsm, enumerate_fsm(self.fsm))

    def find(self, element: str) -> tuple[dict[str, Any], list[tuple[str, dict]]] | NoWitness:
        """(stub, events) verifying the trigger, or why there is none."""
        monitor = self.monitors.get(element)
        if monitor is None:
            return NoWitness(element, "unusable", "not an element of this model")
        tried, unverified = 0, 0
        broken: dict[str, int] = {}  # invariant -> how many of the runs tried break it
        for events in self.runs(monitor):
            tried += 1
            stub = self.stub(events, self.invariants[element].matching)
            if stub is not None:
                verified, breaks = self.verifies(stub, element)
                if verified:
                    return stub, events
                for key in breaks:
                    broken[key] = broken.get(key, 0) + 1
                unverified += not breaks
            if tried >= CANDIDATES:
                break
        if tried == 0:
            return NoWitness(element, *self.not_triggered())
        return NoWitness(element, *self.not_usable(element, tried, unverified, broken))

    def not_triggered(self) -> tuple[str, str]:
        """(reason, message) when no explored run triggers the invariant: what bounded the exploration, if anything.
        (A trigger no value can make true is infeasible and never asked for: mbt.analysis.invariant_checks.)"""
        graph = self.graph
        runs = "makes its antecedent (or scope) true"
        if graph.complete:
            return "unsatisfiable", (f"unsatisfiable: no run of the model {runs} (all {len(graph.nodes):,} reachable "
                                     "configurations explored)")
        sampled = "; some int parameters were sampled, so this is not a proof" if graph.sampled else ""
        if graph.truncated:
            return "limit", (f"exploration limit: no run found {runs} among the {len(graph.nodes):,} configurations "
                             f"explored before the exploration stopped at its limit{sampled}")
        if not graph.exhausted:
            return "depth", (f"no run of at most {graph.depth} steps {runs}{sampled}; raise --max-depth")
        return "sampled", (f"not found: no run {runs} among the {len(graph.nodes):,} configurations reachable with "
                           "the sampled values of the int parameters (their bounds, the model's constants and "
                           "their neighbours); not a proof")

    def not_usable(self, element: str, tried: int, unverified: int, broken: dict[str, int]) -> tuple[str, str]:
        """(reason, message) when runs trigger the invariant but no stub of them verifies it."""
        runs = f"{tried} run{'s' if tried != 1 else ''}"
        names = ", ".join(f"`{key}`" for key in sorted(broken, key=lambda k: (-broken[k], k)))
        if not unverified and broken:
            # Every run breaks an invariant of the block: a golden following one contradicts the model.
            return "model", (f"the model breaks invariant {names} on every run tried that triggers it ({runs}, "
                             "shortest first): a golden following one would contradict the block; `mbt check` "
                             "shows the counterexample (INV001)")
        inv = self.invariants[element]
        hint = "" if inv.matching else "; an invariant about calls or words is asserted through `matching` phrases"
        also = f" ({sum(broken.values())} of them break invariant {names})" if broken else ""
        return "unusable", (f"{runs} trigger it{also}, but on none of them can a golden's checks assert the "
                            f"consequent in the same scope{hint}")

    def runs(self, monitor) -> Iterator[list[tuple[str, dict]]]:
        """Runs (as events) that make the monitor fire: shortest first, then each continued a few steps."""
        graph = self.graph
        start_vals = monitor.values(graph.position(0))
        state, _ = monitor.step(monitor.initial(), start_vals, 0)
        parents: dict[tuple, tuple[tuple, Any] | None] = {(0, state): None}
        layer = [(0, state)]
        fired: list[tuple] = [(0, state)] if monitor.fires(state, start_vals) else []
        for depth in range(graph.depth):
            if fired:
                break
            following = []
            for key in layer:
                node, before = key
                for edge in graph.edges[node] or ():
                    after, verdict = monitor.step(before, monitor.values(graph.position(node, edge)), depth + 1)
                    target = (edge.target, after)
                    if target in parents:
                        continue
                    parents[target] = (key, edge)
                    following.append(target)
                    if verdict is None and monitor.fires(after, monitor.values(graph.position(node, edge))):
                        fired.append(target)
            layer = following
            if not layer:
                break
        tools = self.tools_of(monitor.inv)
        for key in fired:
            path = _path(parents, key)
            if path and (not tools or any(c.tool in tools for c in path[-1].calls)):
                yield [(e.event, dict(e.args)) for e in path]
            # Continue: the consequent may come later (response), a trigger at the start needs a step, and an
            # invariant about a tool's calls is asserted where a call is made: the shortest continuation to each
            # configuration (to each one making such a call, when the invariant speaks of calls).
            seen = {key[0]}
            queue: deque[tuple[int, list[Edge]]] = deque([(key[0], [])])  # (node, the steps after the trigger)
            while queue:
                node, more = queue.popleft()
                if len(more) >= (graph.depth if tools else EXTENSION_STEPS):
                    continue
                for edge in graph.edges[node] or ():
                    longer = more + [edge]
                    if not tools or any(c.tool in tools for c in edge.calls):
                        yield [(e.event, dict(e.args)) for e in path + longer]
                    if edge.target not in seen:
                        seen.add(edge.target)
                        queue.append((edge.target, longer))

    def tools_of(self, inv: Invariant) -> set[str]:
        """The tools an invariant without `matching` phrases speaks of (its checks are those calls' arguments)."""
        if inv.matching:
            return set()
        return {node.tool for expr in inv.props().values() for node in expr.walk() if isinstance(node, CallMade)}

    def stub(self, events: list[tuple[str, dict]], phrases: list[str]) -> dict[str, Any] | None:
        try:
            run = self.builder.replay_events({}, events)
        except ValueError:
            return None
        turns = []
        for (event, args), snap in zip(events, run.snapshots):
            turn: dict[str, Any] = {"event": event}
            if args:
                turn["args"] = dict(args)
            state = {"state": snap.state, **snap.variables}
            state.update({f"discarded.{k}": v for k, v in snap.discarded.items()})
            turn["assert_state"] = state
            latest = {c.tool: dict(c.args) for c in snap.calls}
            if latest:
                turn["tool_arguments"] = latest
            # The tools the step does not call: an invariant about calls is evaluated at the steps without them too.
            quiet = sorted(set(self.fsm.tools()) - latest.keys())
            if quiet:
                turn["must_not_call"] = quiet
            if snap.transition is None:
                turn["rejected"] = True
            turns.append(turn)
        for turn in turns:
            if phrases:  # a run that keeps the invariant never shows what its phrases name: at no turn
                turn["must_not"] = list(phrases)
        return {"model": self.fsm.name, "turns": turns}

    def verifies(self, stub: dict[str, Any], element: str) -> tuple[bool, list[str]]:
        """Does the stub verify the trigger; and the invariants its run breaks (each a contradiction)."""
        run = self.replayer.replay(parse_case({"id": "witness", **stub}, "generated", 1))
        breaks = sorted({c.path.removeprefix("invariant:") for c in run.contradictions
                         if c.path.startswith("invariant:")})
        if run.contradictions or run.invalid or run.divergences:
            return False, breaks
        return self.index[element] in run.verified, breaks


def _path(parents: dict, key: tuple) -> list:
    steps = []
    while parents[key] is not None:
        key, edge = parents[key]
        steps.append(edge)
    return steps[::-1]
