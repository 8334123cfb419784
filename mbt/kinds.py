"""The seam between the pipeline and the model kinds: what each kind contributes (criteria, elements, replay)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from mbt.elements.base import Element
from mbt.goldens.cases import GoldenCase
from mbt.model.common import ModelBase


class Replayer(Protocol):
    def replay(self, case: GoldenCase): ...


@dataclass(frozen=True)
class KindSupport:
    kind: str
    criteria: tuple[str, ...]  # in increasing strength where they nest
    enumerate: Callable[[ModelBase], list[Element]]
    replayer: Callable[[ModelBase, list[Element]], Replayer]
    # Which cases the kind replays; None: those that name the model or its contract, or neither (mbt.api.applies).
    accepts: Callable[[ModelBase, GoldenCase], bool] | None = None


def _fsm() -> KindSupport:
    from mbt.elements.fsm import CRITERIA, enumerate_fsm
    from mbt.goldens.replay_fsm import CompiledFsm, FsmReplayer

    def enumerate_with_feasibility(model):
        from mbt.analysis.feasibility import infeasible_fsm_elements

        return enumerate_fsm(model, infeasible_fsm_elements(model))

    return KindSupport("fsm", CRITERIA, enumerate_with_feasibility,
                       lambda model, elements: FsmReplayer(CompiledFsm(model, elements)))


def _table() -> KindSupport:
    from mbt.elements.table import CRITERIA, enumerate_table
    from mbt.goldens.replay_table import CompiledTable, TableReplayer, accepts

    return KindSupport("table", CRITERIA, enumerate_table,
                       lambda model, elements: TableReplayer(CompiledTable(model, elements)), accepts)


def _invariant() -> KindSupport:
    from mbt.elements.invariant import CRITERIA, enumerate_invariants
    from mbt.goldens.replay_invariant import InvariantReplayer

    return KindSupport("invariant", CRITERIA, enumerate_invariants, InvariantReplayer)


def _policy() -> KindSupport:
    from mbt.elements.policy import CRITERIA, enumerate_policy
    from mbt.goldens.replay_policy import CompiledPolicy, PolicyReplayer, accepts

    def enumerate_with_analysis(model):
        from mbt.analysis.policy_checks import analysis_of

        return enumerate_policy(model, analysis_of(model))

    return KindSupport("policy", CRITERIA, enumerate_with_analysis,
                       lambda model, elements: PolicyReplayer(CompiledPolicy(model, elements)), accepts)


_FACTORIES = {"fsm": _fsm, "table": _table, "invariant": _invariant, "policy": _policy}
_CACHE: dict[str, KindSupport] = {}


def support(kind: str) -> KindSupport:
    if kind not in _CACHE:
        _CACHE[kind] = _FACTORIES[kind]()
    return _CACHE[kind]
