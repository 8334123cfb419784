"""Judges every observed run on its model and gathers the runs report (verdicts, distribution, metrics, usage)."""

from __future__ import annotations

from typing import Any

from mbt.elements.base import Element
from mbt.kinds import elements_of, support
from mbt.measure.coverage import CoverageReport
from mbt.model.common import ModelBase
from mbt.runs import metrics as figures
from mbt.runs.judge import Verdict, is_critical
from mbt.runs.results import DeviationOut, RunResult, RunsReport
from mbt.runs.steps import ObservedRun, RunSet

RUN_JUDGE = "run_judge"  # the KindSupport.extra hook: (model, elements) -> a judge with judge(run) -> Verdict


def _result(run: ObservedRun, v: Verdict | None, model: str | None, invalid: str | None = None) -> RunResult:
    out = RunResult(id=run.id, where=run.where, format=run.format, model=model, suite=run.suite,
                    verdict="invalid", steps=len(run.steps), expected_intent=run.expected_intent, intent=run.intent,
                    invalid=invalid)
    if v is None or v.invalid is not None:
        out.invalid = invalid or (v.invalid if v is not None else None)
        return out
    d = v.deviation
    out.verdict = "pass" if d is None else "deviation"
    if d is not None:
        out.deviation = DeviationOut(type=d.type, where=d.where, step=d.step, element=d.element, severity=d.severity,
                                     message=d.message, tool=d.tool, argument=d.argument, expected=d.expected,
                                     actual=d.actual, source=d.source)
    out.critical = is_critical(v)
    out.completed, out.final_state = v.completed, v.final_state
    out.escalation_expected, out.escalated = v.escalation_expected, v.escalated
    out.intent, out.unbound = v.intent, list(v.unbound)
    return out


class RunTally:
    """Judges runs as they come, keeping per model how many runs passed through each element."""

    def __init__(self, models: list[ModelBase], coverage: CoverageReport | None,
                 judges: dict[str, Any] | None = None):
        """`coverage`: the models' coverage report, whose element lists index the counts and whose usage view the
        report shows; None for a part judged elsewhere (the elements enumerated, in the same order). `judges`: those of
        another tally of the same models, shared (a judge is built once: it compiles a model)."""
        self.judges = {}
        self.through: dict[str, list[int]] = {}
        self.elements: dict[str, list[Element]] = {}
        self.coverage = {mc.model: mc for mc in coverage.models} if coverage is not None else {}
        for m in models:
            factory = support(m.kind).extra.get(RUN_JUDGE)
            if factory is None or (coverage is not None and m.name not in self.coverage):
                continue
            elements = ([ec.element for ec in self.coverage[m.name].elements] if coverage is not None
                        else elements_of(m))
            self.elements[m.name] = elements
            self.judges[m.name] = judges[m.name] if judges is not None else factory(m, elements)
            self.through[m.name] = [0] * len(elements)
        self._models, self._report = models, coverage
        self.models = {m.name: m for m in models if m.name in self.judges}
        self.results: list[RunResult] = []
        self.verdicts: list[Verdict] = []
        self.tool_errors = 0

    def fresh(self) -> RunTally:
        """A tally of the same models with no run yet, sharing this one's judges."""
        return RunTally(self._models, self._report, self.judges)

    def add(self, run: ObservedRun, keep_verdict: bool = True) -> RunResult:
        name = run.model
        if name is None:
            if len(self.judges) != 1:
                found = ", ".join(sorted(self.judges)) or "none"
                result = _result(run, None, None, f"the run names no model (`mbt.model`) and {len(self.judges)} "
                                                  f"models can judge runs ({found})")
                self.results.append(result)
                return result
            name = next(iter(self.judges))
        judge = self.judges.get(name)
        if judge is None:
            result = _result(run, None, name, f"the run names model `{name}`, which is not loaded (or not an FSM)")
            self.results.append(result)
            return result
        v = judge.judge(run)
        result = _result(run, v, name)
        self.results.append(result)
        if v.invalid is None:
            through = self.through[name]
            for i in v.exercised:
                through[i] += 1
            self.tool_errors += sum(s.kind == "tool_result" and not s.ok for s in run.steps)
            if keep_verdict and v.deviation is not None:
                self.verdicts.append(v)
        return result

    def report(self, runset: RunSet, coverage: CoverageReport | None, separately: list[str],
               required: list[str]) -> RunsReport:
        results = self.results
        out = RunsReport(files=runset.files, runs=results, invalid=[i.render() for i in runset.invalid],
                         metrics=figures.metrics(results), suites=figures.by_suite(results),
                         required_suites=list(required), first_deviations=figures.distribution(results),
                         separately=figures.separately(separately, results, self.tool_errors), coverage=coverage)
        out.usage = [figures.usage(self.coverage[name], self.through[name]) for name in self.judges]
        return out
