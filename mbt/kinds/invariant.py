"""The `invariant` kind: Dwyer's patterns over an FSM, from parsing/invariant_*.py, engine/temporal.py, replay_invariant."""

from __future__ import annotations

from collections.abc import Mapping

from mbt.analysis.findings import CheckOptions
from mbt.analysis.invariant_checks import check_invariants, never_triggered
from mbt.elements.invariant import CRITERIA, enumerate_invariants
from mbt.errors import Problem
from mbt.generate.generation import InvariantGeneration
from mbt.goldens.replay_invariant import InvariantReplayer
from mbt.kind import Criterion, KindSupport, MutationSupport, narrow, register
from mbt.kinds.views import ELEMENT_TABLE
from mbt.model.common import ModelBase, SourceDecl
from mbt.model.fsm import FsmModel
from mbt.model.invariant import InvariantModel
from mbt.mutate import invariant as mutate_invariant
from mbt.parsing import grammar_dir
from mbt.parsing.invariant_resolve import resolve_invariants
from mbt.parsing.invariant_rules import InvariantRules, RawInvariants

# Triggers are listed one by one in the text report.
MEANINGS = {"trigger": Criterion("trigger", findings=True)}


def _invariants(model: object) -> InvariantModel:
    return narrow(model, InvariantModel, "invariant")


def _replayer(base: object) -> InvariantReplayer:
    return narrow(base, InvariantReplayer, "invariant")


def _resolve(raw: object, models: Mapping[str, ModelBase], path: str, text: str, sources: dict[str, SourceDecl]
             ) -> tuple[ModelBase | None, list[Problem]]:
    """Invariants are resolved once every file is read: the FSM they constrain may live in another file."""
    fsms = {name: m for name, m in models.items() if isinstance(m, FsmModel)}
    return resolve_invariants(narrow(raw, RawInvariants, "invariant"), fsms, path, text, sources)


def _check(model: ModelBase, options: CheckOptions) -> list:
    return check_invariants(_invariants(model), options)


register(KindSupport(
    kind="invariant", keyword="invariants", grammar=grammar_dir() / "invariant.lark", rule="invariants_model",
    rules=InvariantRules, raw=RawInvariants, resolve_late=_resolve, suffixes=(".inv",),
    criteria=tuple(MEANINGS.get(name, Criterion(name)) for name in CRITERIA),
    enumerate=lambda model: enumerate_invariants(_invariants(model), never_triggered(_invariants(model))),
    replayer=lambda model, elements: InvariantReplayer(_invariants(model), elements),
    check=_check, view=ELEMENT_TABLE,
    generation=lambda model, options, out: InvariantGeneration(_invariants(model), options, out),
    mutation=MutationSupport(
        mutate_invariant.OPERATORS, lambda model: mutate_invariant.invariant_mutants(_invariants(model)),
        lambda base, mutant: mutate_invariant.mutant_replayer(_replayer(base), mutant),
        lambda base, replayer, mutant: mutate_invariant.distinguish(_replayer(base), _replayer(replayer), mutant))))
