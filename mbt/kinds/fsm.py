"""The `fsm` kind: state machines, from mbt/parsing/fsm_*.py, elements/fsm.py, goldens/replay_fsm.py and analysis."""

from __future__ import annotations

from mbt.analysis.feasibility import infeasible_fsm_elements
from mbt.analysis.fsm_checks import check_fsm
from mbt.elements.fsm import CRITERIA, enumerate_fsm
from mbt.engine.fsm import CompiledFsm
from mbt.generate.generation import FsmGeneration
from mbt.goldens.replay_fsm import FsmReplayer
from mbt.kind import KindSupport, MutationSupport, View, register
from mbt.measure.trace import fsm_expected
from mbt.mutate import fsm as mutate_fsm
from mbt.parsing.fsm_resolve import resolve_fsm
from mbt.parsing.fsm_rules import FsmRules, RawFsm
from mbt.parsing.grammar import grammar_dir
from mbt.render.graph import fsm_graph
from mbt.runs.judge import RunJudge

register(KindSupport(
    kind="fsm", keyword="fsm", grammar=grammar_dir() / "fsm.lark", rule="fsm_model", rules=FsmRules, raw=RawFsm,
    resolve=resolve_fsm, suffixes=(".model", ".fsm"),
    criteria=CRITERIA, enumerate=lambda model: enumerate_fsm(model, infeasible_fsm_elements(model)),
    replayer=lambda model, elements: FsmReplayer(CompiledFsm(model, elements)),
    check=check_fsm, view=View("graph", fsm_graph, (".dot", ".svg", ".png")), expected=fsm_expected,
    generation=FsmGeneration, suites=True,
    mutation=MutationSupport(mutate_fsm.OPERATORS, mutate_fsm.fsm_mutants, mutate_fsm.mutant_replayer,
                             mutate_fsm.distinguish, mutate_fsm.footprint),
    # run_judge: observed runs (mbt/runs/measure.py). requirement_criteria: a requirement tag on a state or
    # transition (GraphWalker's vertex and edge requirements) is met by visiting the state and taking the
    # transition; the guard elements that inherit the tag do not count for it.
    extra={"run_judge": RunJudge, "requirement_criteria": ("state", "transition")}))
