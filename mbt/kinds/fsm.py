"""The `fsm` kind: state machines, from mbt/parsing/fsm_*.py, elements/fsm.py, goldens/replay_fsm.py and analysis.

Each hook imports its stage when it is called (on use: start-up time): judging runs on a model from the compiled-model
cache needs neither the model checker (z3, networkx), nor the generator, nor the renderer."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mbt.elements.fsm import CRITERIA, SUITE_CRITERIA
from mbt.kind import Criterion, KindSupport, MutationSupport, Replayer, View, narrow, register
from mbt.model.fsm import FsmModel
from mbt.mutate import fsm as mutate_fsm
from mbt.parsing import grammar_dir

if TYPE_CHECKING:
    from mbt.elements.base import Element
    from mbt.goldens.replay_fsm import FsmReplayer
    from mbt.judges.verdicts import Judge
    from mbt.runs.judge import RunJudge

# Forbidden transitions are behaviour that must never happen: an uncovered one fails the default gate. Guards and
# forbids are listed one by one in the text report.
MEANINGS = {"forbidden": Criterion("forbidden", alarm=True, findings=True), "guard": Criterion("guard", findings=True)}


def _fsm(model: object) -> FsmModel:
    return narrow(model, FsmModel, "fsm")


def _replayer(base: Replayer) -> FsmReplayer:
    from mbt.goldens.replay_fsm import FsmReplayer

    return narrow(base, FsmReplayer, "fsm")


def _resolve(raw, path, text, sources):
    from mbt.parsing.fsm_resolve import resolve_fsm
    from mbt.parsing.fsm_rules import RawFsm

    return resolve_fsm(narrow(raw, RawFsm, "fsm"), path, text, sources)


def _enumerate(model: object) -> list[Element]:
    from mbt.analysis.feasibility import infeasible_fsm_elements
    from mbt.elements.fsm import enumerate_fsm

    return enumerate_fsm(_fsm(model), infeasible_fsm_elements(_fsm(model)))


def _replayer_of(model: object, elements: list[Element]) -> FsmReplayer:
    from mbt.engine.fsm import CompiledFsm
    from mbt.goldens.replay_fsm import FsmReplayer

    return FsmReplayer(CompiledFsm(_fsm(model), elements))


def _check(model, options):
    from mbt.analysis.fsm_checks import check_fsm

    return check_fsm(_fsm(model))


def _graph(model, coverage, options):
    from mbt.render.graph import fsm_graph

    return fsm_graph(_fsm(model), coverage, options)


def _expected(model):
    from mbt.measure.trace import fsm_expected

    return fsm_expected(_fsm(model))


def _generation(model, options, out):
    from mbt.generate.generation import FsmGeneration

    return FsmGeneration(_fsm(model), options, out)


def _reference(model):
    from mbt.generate.drive_fsm import FsmReference

    return FsmReference(_fsm(model))


def _run_judge(model: object, elements: list[Element], answers: Judge | None = None) -> RunJudge:
    from mbt.runs.judge import RunJudge

    return RunJudge(_fsm(model), elements, answers)


register(KindSupport(
    kind="fsm", keyword="fsm", grammar=grammar_dir() / "fsm.lark", rule="fsm_model", rules="mbt.parsing.fsm_rules:FsmRules",
    raw="mbt.parsing.fsm_rules:RawFsm",
    resolve=_resolve, suffixes=(".model", ".fsm"),
    criteria=tuple(MEANINGS.get(name, Criterion(name)) for name in CRITERIA),
    enumerate=_enumerate, replayer=_replayer_of, check=_check,
    view=View("graph", _graph, (".dot", ".svg", ".png")),
    expected=_expected, generation=_generation, suites=SUITE_CRITERIA, reference=_reference,
    mutation=MutationSupport(
        mutate_fsm.OPERATORS, lambda model: mutate_fsm.fsm_mutants(_fsm(model)),
        lambda base, mutant: mutate_fsm.mutant_replayer(_replayer(base), mutant),
        lambda base, replayer, mutant: mutate_fsm.distinguish(_replayer(base), _replayer(replayer), mutant),
        lambda base, case: mutate_fsm.footprint(_replayer(base), case)),
    # a requirement tag on a state or transition (GraphWalker's vertex and edge requirements) is met by visiting the
    # state and taking the transition; the guard elements that inherit the tag do not count for it
    requirement_criteria=("state", "transition"),
    run_judge=_run_judge))
