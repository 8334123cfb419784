"""The seam between the pipeline and the model kinds: what each kind contributes (criteria, elements, replay)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol

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


def _fsm() -> KindSupport:
    from mbt.elements.fsm import CRITERIA, enumerate_fsm
    from mbt.goldens.replay_fsm import CompiledFsm, FsmReplayer

    def enumerate_with_feasibility(model):
        from mbt.analysis.feasibility import infeasible_fsm_elements

        return enumerate_fsm(model, infeasible_fsm_elements(model))

    return KindSupport("fsm", CRITERIA, enumerate_with_feasibility,
                       lambda model, elements: FsmReplayer(CompiledFsm(model, elements)))


_FACTORIES = {"fsm": _fsm}
_CACHE: dict[str, KindSupport] = {}


def support(kind: str) -> KindSupport:
    if kind not in _CACHE:
        _CACHE[kind] = _FACTORIES[kind]()
    return _CACHE[kind]
