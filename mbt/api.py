"""The facade: load -> check -> enumerate -> replay goldens -> measure -> gate. The CLI calls only these functions."""

from __future__ import annotations

import functools
import gc
from collections import defaultdict

from pydantic import BaseModel

from mbt.analysis.findings import Finding
from mbt.elements.base import Element
from mbt.goldens.cases import GoldenCase
from mbt.goldens.loader import GoldenSet, load_goldens
from mbt.kinds import support
from mbt.measure.coverage import (CoverageReport, ElementCoverage, GoldenSummary, InvalidCaseReport, ModelCoverage,
                                  criterion_table)
from mbt.measure.gate import DEFAULT_GATE, evaluate_gate, load_gate
from mbt.model.common import ModelBase
from mbt.parsing.loader import ModelFile, load_paths

SCHEMA_VERSION = "1.0"


class CheckReport(BaseModel):
    schema_version: str = SCHEMA_VERSION
    files: list[str]
    models: list[str]
    findings: list[Finding]

    def count(self, severity: str) -> int:
        return sum(1 for f in self.findings if f.severity == severity)


class ModelElements(BaseModel):
    model: str
    kind: str
    file: str
    criteria: list[str]
    elements: list[Element]


class ElementsReport(BaseModel):
    schema_version: str = SCHEMA_VERSION
    models: list[ModelElements]


def collector_paused(func):
    """Run `func` with Python's cyclic garbage collector paused.

    A run builds millions of small acyclic objects (parse nodes, elements, golden cases); reference counting frees
    them, but the cyclic collector re-scans the survivors again and again, which made a 100,000-golden run three
    times slower (tests/bench). Afterwards what was built is frozen (left out of later scans) and collection resumes.
    """

    @functools.wraps(func)
    def paused(*args, **kwargs):
        if not gc.isenabled():
            return func(*args, **kwargs)
        gc.disable()
        try:
            return func(*args, **kwargs)
        finally:
            gc.freeze()
            gc.enable()

    return paused


def load_models(paths: list[str]) -> tuple[list[ModelFile], list[ModelBase]]:
    files = load_paths(paths)
    return files, [m for f in files for m in f.models]


@collector_paused
def check(paths: list[str]) -> CheckReport:
    from mbt.analysis.check import run_checks

    files, models = load_models(paths)
    return CheckReport(files=[f.path for f in files], models=[m.name for m in models], findings=run_checks(files))


@collector_paused
def elements(paths: list[str], criteria: list[str] | None = None) -> ElementsReport:
    _, models = load_models(paths)
    out = []
    for m in models:
        kind = support(m.kind)
        found = [e for e in kind.enumerate(m) if not criteria or e.criterion in criteria]
        out.append(ModelElements(model=m.name, kind=m.kind, file=m.file, criteria=list(kind.criteria), elements=found))
    return ElementsReport(models=out)


def applies(model: ModelBase, case: GoldenCase) -> bool:
    """A case names its model, or its contract (seed 000's `contract`), or neither (then it applies to every model)."""
    if case.model is not None:
        return case.model == model.name
    if case.contract is not None and model.contracts:
        return case.contract in model.contracts
    return True


@collector_paused
def coverage(model_paths: list[str], golden_paths: list[str], gate_path: str | None = None,
             use_gate: bool = True) -> CoverageReport:
    gate = load_gate(gate_path) if gate_path else DEFAULT_GATE
    _, models = load_models(model_paths)
    goldens = load_goldens(golden_paths)
    report = measure(models, goldens)
    if use_gate:
        report.gate = evaluate_gate(gate, report)
    return report


def measure(models: list[ModelBase], goldens: GoldenSet) -> CoverageReport:
    """Replay every applicable case on every model and count what it exercised and verified."""
    contradictions, divergences, unbound, notes, invalid = [], [], [], [], []
    applicable_anywhere: set[str] = set()
    unbound_cases: set[str] = set()
    model_reports = []
    for model in models:
        kind = support(model.kind)
        elements = kind.enumerate(model)
        replayer = kind.replayer(model, elements)
        exercised_by: dict[int, list[str]] = defaultdict(list)
        verified_by: dict[int, list[str]] = defaultdict(list)
        replayed = 0
        for case in goldens.cases:
            if not applies(model, case):
                continue
            applicable_anywhere.add(case.id)
            run = replayer.replay(case)
            if run.invalid is not None:
                invalid.append(InvalidCaseReport(file=case.file, line=case.line,
                                                 message=f"case `{case.id}` on model `{model.name}`: {run.invalid}"))
                continue
            replayed += 1
            for i in run.exercised:
                exercised_by[i].append(case.id)
            for i in run.verified:
                verified_by[i].append(case.id)
            contradictions.extend(run.contradictions)
            divergences.extend(run.divergences)
            unbound.extend(run.unbound)
            notes.extend(run.notes)
            if run.unbound:
                unbound_cases.add(case.id)
        coverage_rows = [ElementCoverage(element=e, exercised_by=exercised_by.get(i, []),
                                         verified_by=verified_by.get(i, []))
                         for i, e in enumerate(elements)]
        model_reports.append(ModelCoverage(model=model.name, kind=model.kind, file=model.file,
                                           goldens_replayed=replayed,
                                           criteria=criterion_table(kind.criteria, coverage_rows),
                                           elements=coverage_rows))
    valid = len(goldens.cases)
    summary = GoldenSummary(
        files=goldens.files, read=valid + len(goldens.invalid), valid=valid, invalid=len(goldens.invalid),
        bound=len(applicable_anywhere - unbound_cases), unbound=len(unbound_cases),
        not_applicable=valid - len(applicable_anywhere))
    invalid_all = [InvalidCaseReport(file=i.file, line=i.line, message=i.message) for i in goldens.invalid] + invalid
    return CoverageReport(models=model_reports, goldens=summary, invalid_cases=invalid_all,
                          contradictions=contradictions, divergences=divergences, unbound_turns=unbound, notes=notes)
