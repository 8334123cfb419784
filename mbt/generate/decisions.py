"""Witness inputs for decision tables and requests for policies: one per uncovered element, checked by replay.

Tables: candidate inputs come from the table's region lattice (mbt/tables/regions.py: one representative value per
elementary region of each column): for a rule, the points of its region box; for a partition or a boundary, that
region or value in the column and, in the others, the boxes of the rules that allow it; for MC/DC, points where only
the one condition fails. Policies: the policy analysis's own witnesses (a request where a rule applies, decides, two
rules conflict, an action gets a decision) and its deterministic sample requests, boundary values set on them.

Whatever the source, a candidate is kept only when its stub -- inputs or request, with the outputs or decision the
evaluator computes as the expectation -- is replayed as `mbt coverage` reads it and verifies the element.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from typing import Any, Generic, Protocol, TypeVar

from mbt.analysis.policy_checks import analysis_of, on_point
from mbt.elements import policy as policy_ids
from mbt.elements import table as table_ids
from mbt.elements.base import Element
from mbt.generate.witnesses import NoWitness
from mbt.generate.writers import DriverCall
from mbt.goldens.cases import parse_case
from mbt.goldens.replay_policy import CompiledPolicy, PolicyReplayer
from mbt.goldens.replay_table import CompiledTable, TableReplayer
from mbt.kind import Replayer
from mbt.model.common import ModelBase
from mbt.model.policy import PolicyModel
from mbt.model.table import TableModel, plain

CANDIDATES = 2000  # per element: candidates are cheap, but a table's region boxes multiply

M = TypeVar("M", bound=ModelBase)
R = TypeVar("R", bound=Replayer)
C = TypeVar("C")  # a candidate: a table's input values, a policy's request


class DecisionSearch(Protocol):
    """What the generation of a decision's tests asks of its witness search (mbt.generate.generation)."""

    def find(self, element: str, /) -> dict[str, Any] | NoWitness: ...

    def call(self, stub: dict[str, Any], /) -> DriverCall: ...


class DecisionWitnesses(Generic[M, R, C]):
    """Common part: elements, the kind's replayer, and the search over candidates checked by replay."""

    kind = ""
    what = ""  # what a candidate is called: input, request
    origin = ""  # where the candidates come from

    def __init__(self, model: M, elements: list[Element], replayer: R):
        self.model = model
        self.elements = elements
        self.index = {e.id: i for i, e in enumerate(elements)}
        self.by_id = {e.id: e for e in elements}
        self.replayer = replayer

    def find(self, element: str) -> dict[str, Any] | NoWitness:
        """A stub (without the id and annotations) that verifies `element`, or why there is none."""
        target = self.index.get(element)
        if target is None:
            return NoWitness(element, "unusable", "not an element of this model")
        seen: set[str] = set()
        tried = 0
        for candidate in itertools.islice(self.candidates(element), CANDIDATES):
            key = repr(candidate)
            if key in seen:
                continue
            seen.add(key)
            tried += 1
            if target not in self.touched(candidate):
                continue
            stub = self.stub(candidate)
            if self.verifies(stub, [element]):
                return stub
        if tried < CANDIDATES and self.exhaustive(element):
            return NoWitness(element, "unsatisfiable", f"unsatisfiable: none of the {tried:,} candidate {self.what}s "
                                                       f"covers it (every one from the {self.origin})")
        # The candidates were a sample: finding nothing among them proves nothing (the element stays feasible).
        return NoWitness(element, "sampled", f"not found in {tried:,} sampled {self.what}s (from the {self.origin}); "
                                             "not a proof that none exists")

    def exhaustive(self, element: str) -> bool:
        """Were the candidates for `element` every one that could cover it (so finding none proves it)?"""
        return False

    def verifies(self, stub: dict[str, Any], elements: list[str]) -> bool:
        case = parse_case({"id": "witness", **stub}, "generated", 1)
        run = self.replayer.replay(case)
        if run.contradictions or run.invalid:
            return False
        return all(self.index[e] in run.verified for e in elements)

    # kind-specific
    def candidates(self, element: str) -> Iterator[C]:
        raise NotImplementedError

    def touched(self, candidate: C) -> list[int]:
        raise NotImplementedError

    @staticmethod
    def call(stub: dict[str, Any]) -> DriverCall:
        """The driver call a generated pytest test makes to check the stub."""
        raise NotImplementedError

    def stub(self, candidate: C) -> dict[str, Any]:
        raise NotImplementedError


# ---------------------------------------------------------------- tables


Values = tuple[object, ...]  # a table's input values, column by column


class TableWitnesses(DecisionWitnesses[TableModel, TableReplayer, Values]):
    kind = "table"
    what = "input"
    origin = "region lattice"

    @staticmethod
    def call(stub: dict[str, Any]) -> DriverCall:
        """The driver call checking the table's decision on the stub's inputs (`decide`)."""
        kwargs: list[tuple[str, object]] = ([("error", True)] if stub.get("expect_error")
                                            else [("expect", stub.get("expect"))])
        return {"method": "decide", "args": [stub["table"], dict(stub["inputs"])], "kwargs": kwargs, "comment": None}

    def __init__(self, model: TableModel, elements: list[Element]):
        super().__init__(model, elements, TableReplayer(CompiledTable(model, elements)))
        c = self.replayer.c
        self.partition = c.partition
        self.evaluator = c.evaluator
        self.recipes: dict[str, tuple] = {}
        for i, rule in enumerate(model.rules):
            self.recipes[table_ids.rule_id(rule)] = ("rule", i)
            self.recipes[table_ids.mcdc_id(rule)] = ("rule", i)
            for k, column in enumerate(model.inputs):
                self.recipes[table_ids.mcdc_id(rule, column.name)] = ("mcdc-false", i, k)
        for k, (column, part) in enumerate(zip(model.inputs, self.partition.columns)):
            for region in part.regions:
                self.recipes[table_ids.partition_id(column.name, region.label)] = ("value", k, region.rep)
        for k, (column, points) in enumerate(zip(model.inputs, table_ids.boundary_points(model,
                                                                                         self.partition.columns))):
            for value in points:
                self.recipes[table_ids.boundary_id(column.name, value)] = ("value", k, value)

    def exhaustive(self, element: str) -> bool:
        # A rule's (or an MC/DC flip's) box is walked region by region; values and boundaries are sampled per rule.
        recipe = self.recipes.get(element)
        return recipe is not None and recipe[0] in ("rule", "mcdc-false")

    def _reps(self, k: int, mask: int) -> list[Any]:
        regions = self.partition.columns[k].regions
        return [regions[r].rep for r in range(len(regions)) if mask >> r & 1]

    def _box(self, masks: Iterable[int], fixed: dict[int, list[Any]] | None = None) -> Iterator[Values]:
        choices = [(fixed or {}).get(k) or self._reps(k, m) for k, m in enumerate(masks)]
        if all(choices):
            yield from itertools.product(*choices)

    def candidates(self, element: str) -> Iterator[Values]:
        recipe = self.recipes.get(element)
        if recipe is None:
            return
        p = self.partition
        everything = [col.all_mask for col in p.columns]
        if recipe[0] == "rule":
            yield from self._box(p.rule_masks[recipe[1]])
        elif recipe[0] == "mcdc-false":
            _, i, k = recipe
            masks = list(p.rule_masks[i])
            masks[k] = p.columns[k].all_mask & ~masks[k]
            yield from self._box(masks)
        else:
            _, k, value = recipe
            region = p.columns[k].region_of(value)
            for rule_masks in p.rule_masks:
                if region is not None and rule_masks[k] >> region & 1:
                    yield from itertools.islice(self._box(rule_masks, {k: [value]}), 50)
            yield from self._box(everything, {k: [value]})

    def touched(self, values: Values) -> list[int]:
        return self.replayer._exercised(values, self.evaluator.decide(values))

    def stub(self, values: Values) -> dict[str, Any]:
        decision = self.evaluator.decide(values)
        stub: dict[str, Any] = {"table": self.model.name,
                                "inputs": {c.name: plain(v) for c, v in zip(self.model.inputs, values)}}
        if decision.error:
            stub["expect_error"] = True
        else:
            stub["expect"] = plain(decision.result)
        return stub


# ---------------------------------------------------------------- policies


class PolicyWitnesses(DecisionWitnesses[PolicyModel, PolicyReplayer, dict[str, Any]]):
    kind = "policy"
    what = "request"
    origin = "analysis witnesses and samples"

    @staticmethod
    def call(stub: dict[str, Any]) -> DriverCall:
        """The driver call checking the policy's decision (and reasons) on the stub's request (`authorize`)."""
        kwargs: list[tuple[str, object]] = [("expect", stub["expect"])]
        if stub.get("reason"):
            kwargs.append(("reasons", list(stub["reason"])))
        return {"method": "authorize", "args": [stub["policy"], dict(stub["request"])], "kwargs": kwargs,
                "comment": None}

    def __init__(self, model: PolicyModel, elements: list[Element]):
        super().__init__(model, elements, PolicyReplayer(CompiledPolicy(model, elements)))
        self.analysis = analysis_of(model)
        self.evaluator = self.analysis.evaluator
        self.rules = {r.name: i for i, r in enumerate(model.rules)}
        self.points = {b.id: b for b in policy_ids.boundaries(model)}

    def candidates(self, element: str) -> Iterator[dict[str, Any]]:
        a, kind = self.analysis, element.split(":", 1)[0]
        if kind == "rule":
            name, which = element.split(":")[1:3]
            i = self.rules.get(name)
            if i is not None and a.applicable[i].sat:
                if which == "decisive" and i in a.decisive and a.decisive[i].request is not None:
                    # Made readable the way `mbt check` shows witnesses: plainer values where the rule still decides.
                    tidy = a.tidy(a.decisive[i], lambda r: name in self.evaluator.evaluate(r).decisive).request
                    if tidy is not None:
                        yield tidy
                if a.applicable[i].request is not None:
                    applies = a.applies_witness(i).request
                    if applies is not None:
                        yield applies
        elif kind == "conflict":
            first, second = element.removeprefix("conflict:").split("|")
            yield from (c.request for c in a.conflicts
                        if (self.model.rules[c.first].name, self.model.rules[c.second].name) == (first, second))
        elif kind == "effect":
            parts = element.split(":")
            action, decision = (parts[1], parts[2]) if len(parts) == 3 else (None, parts[1])
            answer = a.decision_possible(decision.capitalize(), action)
            if answer.request is not None:
                yield answer.request
        samples = [request for request, _ in a.samples]
        if kind == "boundary":
            point = self.points.get(element)
            if point is None:
                return
            answer = a.boundary_verifiable(point)  # a sample or the solver's request that verifies it, if any
            if answer.request is not None:
                yield answer.request
            for request in samples:
                placed = on_point(request, point)
                if placed is not None:
                    yield placed
            return
        yield from samples

    def touched(self, request: dict[str, Any]) -> list[int]:
        return self.replayer.c.elements_of(self.evaluator.evaluate(request), request)

    def stub(self, request: dict[str, Any]) -> dict[str, Any]:
        outcome = self.evaluator.evaluate(request)
        stub = {"policy": self.model.name, "request": {k: plain(v) for k, v in sorted(request.items())},
                "expect": outcome.decision}
        if outcome.reasons:
            stub["reason"] = list(outcome.reasons)
        return stub
