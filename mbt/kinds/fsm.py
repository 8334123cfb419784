"""The `fsm` kind: state machines, from mbt/parsing/fsm_*.py, elements/fsm.py, goldens/replay_fsm.py and analysis."""

from __future__ import annotations

from mbt.analysis.feasibility import infeasible_fsm_elements
from mbt.analysis.fsm_checks import check_fsm
from mbt.elements.fsm import CRITERIA, enumerate_fsm
from mbt.engine.fsm import CompiledFsm
from mbt.generate.drive_fsm import FsmReference
from mbt.generate.generation import FsmGeneration
from mbt.generate.suites import CRITERIA as SUITE_CRITERIA
from mbt.goldens.replay_fsm import FsmReplayer
from mbt.kind import Criterion, KindSupport, MutationSupport, Replayer, View, narrow, register
from mbt.measure.trace import fsm_expected
from mbt.model.fsm import FsmModel
from mbt.mutate import fsm as mutate_fsm
from mbt.parsing.fsm_resolve import resolve_fsm
from mbt.parsing.fsm_rules import FsmRules, RawFsm
from mbt.parsing.grammar import grammar_dir
from mbt.render.graph import fsm_graph
from mbt.runs.judge import RunJudge

# Forbidden transitions are behaviour that must never happen: an uncovered one fails the default gate. Guards and
# forbids are listed one by one in the text report.
MEANINGS = {"forbidden": Criterion("forbidden", alarm=True, findings=True), "guard": Criterion("guard", findings=True)}


def _fsm(model: object) -> FsmModel:
    return narrow(model, FsmModel, "fsm")


def _replayer(base: Replayer) -> FsmReplayer:
    return narrow(base, FsmReplayer, "fsm")


register(KindSupport(
    kind="fsm", keyword="fsm", grammar=grammar_dir() / "fsm.lark", rule="fsm_model", rules=FsmRules, raw=RawFsm,
    resolve=lambda raw, path, text, sources: resolve_fsm(narrow(raw, RawFsm, "fsm"), path, text, sources),
    suffixes=(".model", ".fsm"),
    criteria=tuple(MEANINGS.get(name, Criterion(name)) for name in CRITERIA),
    enumerate=lambda model: enumerate_fsm(_fsm(model), infeasible_fsm_elements(_fsm(model))),
    replayer=lambda model, elements: FsmReplayer(CompiledFsm(_fsm(model), elements)),
    check=lambda model, options: check_fsm(_fsm(model)),
    view=View("graph", lambda model, cov, options: fsm_graph(_fsm(model), cov, options), (".dot", ".svg", ".png")),
    expected=lambda model: fsm_expected(_fsm(model)),
    generation=lambda model, options, out: FsmGeneration(_fsm(model), options, out), suites=SUITE_CRITERIA,
    reference=lambda model: FsmReference(_fsm(model)),
    mutation=MutationSupport(
        mutate_fsm.OPERATORS, lambda model: mutate_fsm.fsm_mutants(_fsm(model)),
        lambda base, mutant: mutate_fsm.mutant_replayer(_replayer(base), mutant),
        lambda base, replayer, mutant: mutate_fsm.distinguish(_replayer(base), _replayer(replayer), mutant),
        lambda base, case: mutate_fsm.footprint(_replayer(base), case)),
    # a requirement tag on a state or transition (GraphWalker's vertex and edge requirements) is met by visiting the
    # state and taking the transition; the guard elements that inherit the tag do not count for it
    requirement_criteria=("state", "transition"),
    run_judge=lambda model, elements, answers=None: RunJudge(_fsm(model), elements, answers)))
