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

from mbt.elements.base import Element
from mbt.elements.fsm import enumerate_fsm
from mbt.elements.invariant import trigger_id
from mbt.generate.skeleton import SkeletonBuilder
from mbt.generate.witnesses import NoWitness
from mbt.goldens.cases import parse_case

EXTENSION_STEPS = 4  # steps a run may continue past the trigger, to reach the consequent of a response pattern
CANDIDATES = 200


class InvariantWitnesses:
    def __init__(self, model, elements: list[Element]):
        from mbt.analysis.invariant_checks import analyse
        from mbt.engine.temporal import Monitor
        from mbt.kinds import support

        self.model = model
        self.fsm = model.fsm_model
        self.index = {e.id: i for i, e in enumerate(elements)}
        self.replayer = support("invariant").replayer(model, elements)
        self.graph = analyse(model).graph
        self.monitors = {trigger_id(inv): Monitor(inv) for inv in model.invariants}
        self.invariants = {trigger_id(inv): inv for inv in model.invariants}
        self.builder = SkeletonBuilder(self.fsm, enumerate_fsm(self.fsm))

    def find(self, element: str) -> tuple[dict[str, Any], list[tuple[str, dict]]] | NoWitness:
        """(stub, events) verifying the trigger, or why there is none."""
        monitor = self.monitors.get(element)
        if monitor is None:
            return NoWitness(element, "unusable", "not an element of this model")
        tried = 0
        for events in self.runs(monitor):
            tried += 1
            stub = self.stub(events, self.invariants[element].matching)
            if stub is not None and self.verifies(stub, element):
                return stub, events
            if tried >= CANDIDATES:
                break
        if tried == 0:
            depth = self.graph.depth
            return NoWitness(element, "unsatisfiable" if self.graph.complete else "depth",
                             f"no run {'of the model' if self.graph.complete else f'of at most {depth} steps'} "
                             "makes its antecedent (or scope) true" + ("" if self.graph.complete else
                                                                      "; raise `mbt check --depth`"))
        inv = self.invariants[element]
        hint = "" if inv.matching else "; an invariant about calls or words is asserted through `matching` phrases"
        return NoWitness(element, "unusable", f"{tried} runs trigger it, but on none of them can a golden's checks "
                                              f"assert the consequent in the same scope{hint}")

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
            queue = deque([(key[0], [])])
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

    def tools_of(self, inv) -> set[str]:
        """The tools an invariant without `matching` phrases speaks of (its checks are those calls' arguments)."""
        from mbt.model.invariant import CallMade

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

    def verifies(self, stub: dict[str, Any], element: str) -> bool:
        run = self.replayer.replay(parse_case({"id": "witness", **stub}, "generated", 1))
        if run.contradictions or run.invalid or run.divergences:
            return False
        return self.index[element] in run.verified


def _path(parents: dict, key: tuple) -> list:
    steps = []
    while parents[key] is not None:
        key, edge = parents[key]
        steps.append(edge)
    return steps[::-1]
