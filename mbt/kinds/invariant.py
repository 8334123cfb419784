"""The `invariant` kind: Dwyer's patterns over an FSM, from parsing/invariant_*.py, engine/temporal.py, replay_invariant."""

from __future__ import annotations

from mbt.analysis.invariant_checks import check_invariants, never_triggered
from mbt.elements.invariant import CRITERIA, enumerate_invariants
from mbt.generate.generation import InvariantGeneration
from mbt.goldens.replay_invariant import InvariantReplayer
from mbt.kind import KindSupport, MutationSupport, register
from mbt.kinds.views import ELEMENT_TABLE
from mbt.mutate import invariant as mutate_invariant
from mbt.parsing.grammar import grammar_dir
from mbt.parsing.invariant_resolve import resolve_invariants
from mbt.parsing.invariant_rules import InvariantRules, RawInvariants


def _resolve(raw, models, path, text, sources):
    """Invariants are resolved once every file is read: the FSM they constrain may live in another file."""
    fsms = {name: m for name, m in models.items() if m.kind == "fsm"}
    return resolve_invariants(raw, fsms, path, text, sources)


register(KindSupport(
    kind="invariant", keyword="invariants", grammar=grammar_dir() / "invariant.lark", rule="invariants_model",
    rules=InvariantRules, raw=RawInvariants, resolve=_resolve, late=True, suffixes=(".inv",),
    criteria=CRITERIA, enumerate=lambda model: enumerate_invariants(model, never_triggered(model)),
    replayer=InvariantReplayer,
    check=check_invariants, view=ELEMENT_TABLE, generation=InvariantGeneration,
    mutation=MutationSupport(mutate_invariant.OPERATORS, mutate_invariant.invariant_mutants,
                             mutate_invariant.mutant_replayer, mutate_invariant.distinguish)))
