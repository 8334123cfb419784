"""Judges every observed run on its model and gathers the runs report (verdicts, distribution, metrics, usage)."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

from mbt.elements.base import Element
from mbt.kind import elements_of, support
from mbt.measure.coverage import CoverageReport
from mbt.model.common import ModelBase
from mbt.runs import metrics as figures
from mbt.runs.contract_judge import GroundedVerdict
from mbt.runs.grounding import GroundingResult
from mbt.runs.judge import Deviation, Verdict, is_critical
from mbt.runs.loop import LoopRules, judge_loop
from mbt.runs.redact import Redaction
from mbt.runs.regression import RegressionTally
from mbt.runs.results import (
    DeviationOut,
    DocumentOut,
    Evidence,
    GroundingFailureOut,
    GroundingOut,
    ItemOut,
    RunResult,
    RunsReport,
)
from mbt.runs.steps import ObservedRun, Retrieval, RunSet
from mbt.runs.undocumented import Sightings


def evidence_of(run: ObservedRun) -> Evidence:
    """What the run exposed, counted (the evidence contract of docs/runs.md)."""
    users = assistants = calls = with_arguments = with_sources = results = states = 0
    for s in run.steps:
        kind = s.kind
        if kind == "user":
            users += 1
        elif kind == "assistant":
            assistants += 1
        elif kind == "tool_call":
            calls += 1
            with_arguments += s.args is not None
            with_sources += bool(s.sources)
        else:
            results += 1
        states += s.state_after is not None or s.state_before is not None
    context = run.context
    return Evidence(
        steps=len(run.steps), user_texts=users, assistant_texts=assistants, tool_calls=calls,
        tool_calls_with_arguments=with_arguments, argument_sources=with_sources, tool_results=results,
        state_exports=states, turn_records=len(run.turns), stop_reasons=sum(t.stop_reason is not None for t in run.turns),
        usage=context.input_tokens is not None or context.output_tokens is not None,
        records_tool_calls=run.records_tool_calls)


def grounding_out(retrieval: Retrieval, g: GroundingResult | None, why_not: str = "") -> GroundingOut:
    """A run's retrieval evidence and, when it was judged (`g`), what the grounding rules found."""
    out = GroundingOut(route=retrieval.route, queries=list(retrieval.queries),
                       documents=[DocumentOut(id=d.id, score=d.score, approved=d.approved, status=d.status)
                                  for d in retrieval.documents],
                       selected=list(retrieval.selected) if retrieval.selected is not None else None,
                       claims=len(retrieval.claims) if retrieval.claims is not None else None)
    if g is None:
        out.not_judged = [why_not]
        return out
    out.used, out.claims_grounded = list(g.used), g.claims_grounded
    out.judged, out.hallucinations_judged = g.judged, g.hallucinations_judged
    out.failures = [GroundingFailureOut(type=f.type, where=f.where, message=f.message, source=f.source, claim=f.claim,
                                        kinds=list(f.kinds)) for f in g.failures]
    out.critical_hallucinations = len(g.critical)
    out.must_not = [ItemOut(item=f"{i.where}: {i.text}", verdict={"violated": "fail", "kept": "pass"}.get(
        i.verdict, "not_judged"), reason=i.reason) for i in g.must_not]
    out.not_judged = list(g.gaps)
    return out


def _result(run: ObservedRun, v: Verdict | None, model: str | None, invalid: str | None = None) -> RunResult:
    # Every field given at once: pydantic checks them in one call (setting them one by one afterwards costs ~1 µs
    # each, ten times what a run's judgement spends on a field).
    fields: dict[str, Any] = dict(
        id=run.id, where=run.where, format=run.format, model=model, suite=run.suite, file=run.file,
        verdict="invalid", steps=len(run.steps), expected_intent=run.expected_intent, intent=run.intent,
        invalid=invalid, evidence=evidence_of(run), context=replace(run.context), notes=list(run.notes),
        tags=list(run.tags))
    if v is None or v.invalid is not None:
        fields["invalid"] = invalid or (v.invalid if v is not None else None)
        return RunResult(**fields)
    d = v.deviation
    verdict = "deviation" if d is not None else "not_judged" if v.not_judged else "pass"
    fields.update(verdict=verdict, not_judged=list(v.gaps), critical=is_critical(v), completed=v.completed,
                  final_state=v.final_state, escalation_expected=v.escalation_expected, escalated=v.escalated,
                  handed_off=(verdict == "pass" and v.escalation_expected and v.escalated
                              and v.final_state is not None and v.final_state in v.finals),
                  intent=v.intent, unbound=list(v.unbound))
    if d is not None:
        fields["deviation"] = DeviationOut(
            type=d.type, where=d.where, step=d.step, element=d.element, severity=d.severity, message=d.message,
            tool=d.tool, argument=d.argument, expected=d.expected, actual=d.actual, source=d.source,
            sources=dict(d.sources))
        if d.type == "step_not_allowed" and d.turn is not None and 0 <= d.turn < len(v.path):
            fields["deviation"].event = v.path[d.turn].get("event")  # the refused turn (mbt.runs.undocumented reads it)
    if isinstance(v, GroundedVerdict):  # judged on a contract: its grounding and items (docs/runs.md, "Grounding")
        fields["path_judged"] = v.path_judged
        fields["items"] = [ItemOut(item=key, verdict=verdict, reason=reason) for key, verdict, reason in v.items]
    if run.retrieval is not None:
        g = v.grounding if isinstance(v, GroundedVerdict) else None
        fields["grounding"] = grounding_out(run.retrieval, g, f"{run.where}: retrieval evidence is judged on a "
                                                             f"contract model; `{model}` is not one")
    return RunResult(**fields)


def judge_run(judge: Any, run: ObservedRun, loop: LoopRules) -> Verdict:
    """One run judged on its model and, beside it, seed 003's loop criteria: the earlier deviation (by step) is the
    first one; on the same step the loop's, its cause (a call outside the router's candidates is also one the model
    does not make)."""
    v = judge.judge(run)
    if v.invalid is not None:
        return v
    finding, gaps = judge_loop(run, loop)
    v.gaps.extend(gaps)
    if finding is not None and (v.deviation is None or finding.step <= v.deviation.step):
        v.deviation = Deviation(finding.type, finding.where, finding.step, None, "medium", finding.message,
                                expected=finding.expected, actual=finding.actual, turn=None)
        v.completed = False
    return v


class RunTally:
    """Judges runs as they come, keeping per model how many runs passed through each element (sparse: element index ->
    runs), the tool errors, and the regression goldens of the failing runs (`redaction` applies to them)."""

    def __init__(self, models: list[ModelBase], coverage: CoverageReport | None,
                 judges: dict[str, Any] | None = None, loop: LoopRules | None = None,
                 redaction: Redaction | None = None, answers: Any = None):
        """`coverage`: the models' coverage report, whose element lists index the counts and whose usage view the
        report shows; None for a part judged elsewhere (the elements enumerated, in the same order). `judges`: those of
        another tally of the same models, shared (a judge is built once: it compiles a model). `answers`: the answer
        judge (mbt.judges) that decides what assistant texts say (`mbt runs --judge`); None: each kind's default."""
        self.judges = {}
        self.through: dict[str, Counter[int]] = {}
        self.elements: dict[str, list[Element]] = {}
        self.coverage = {mc.model: mc for mc in coverage.models} if coverage is not None else {}
        for m in models:
            factory = support(m.kind).run_judge
            if factory is None or (coverage is not None and m.name not in self.coverage):
                continue
            elements = ([ec.element for ec in self.coverage[m.name].elements] if coverage is not None
                        else elements_of(m))
            self.elements[m.name] = elements
            self.judges[m.name] = judges[m.name] if judges is not None else \
                factory(m, elements) if answers is None else factory(m, elements, answers=answers)
            self.through[m.name] = Counter()
        self._models, self._report = models, coverage
        self.loop = loop or LoopRules()
        self.answers = answers  # sent with each piece a worker judges (mbt.runs.parts)
        self.redaction = redaction or Redaction()
        self.models = {m.name: m for m in models if m.name in self.judges}
        self.results: list[RunResult] = []
        self.regressions = RegressionTally()
        self.figures = figures.RunFigures()  # the report's sums over the results, gathered as they come
        self.sightings = Sightings()  # undocumented behaviour among them
        self.tool_errors = 0

    def fresh(self) -> RunTally:
        """A tally of the same models with no run yet, sharing this one's judges and element lists."""
        # Each attribute named (no __dict__ copy): compiled by mypyc (mbt/native_build.py), a tally has no __dict__.
        new = RunTally([], None, loop=self.loop, redaction=self.redaction, answers=self.answers)
        new.judges, new.elements, new.coverage, new.models = self.judges, self.elements, self.coverage, self.models
        new._models, new._report = self._models, self._report
        new.through = {name: Counter() for name in self.through}
        return new

    def add(self, run: ObservedRun) -> RunResult:
        name = run.model
        if name is None:
            if len(self.judges) != 1:
                found = ", ".join(sorted(self.judges)) or "none"
                return self._keep(_result(run, None, None, f"the run names no model (`mbt.model`) and "
                                                           f"{len(self.judges)} models can judge runs ({found})"))
            name = next(iter(self.judges))
        judge = self.judges.get(name)
        if judge is None:
            return self._keep(_result(run, None, name, f"the run names model `{name}`, which is not loaded (or whose "
                                                       "kind judges no run)"))
        v = judge_run(judge, run, self.loop)
        result = self._keep(_result(run, v, name))
        if v.invalid is None:
            self.through[name].update(v.exercised)
            self.tool_errors += sum(s.kind == "tool_result" and not s.ok for s in run.steps)
            if v.deviation is not None:
                self.regressions.add(v, self.models, self.redaction)
        return result

    def _keep(self, result: RunResult) -> RunResult:
        """The run's row, and what it adds to the report's figures."""
        self.results.append(result)
        self.figures.add(result)
        if result.deviation is not None:
            self.sightings.add(result, self.models)
        return result

    def measured(self, coverage: CoverageReport) -> None:
        """The models' coverage report, measured after the tally was made (without one): the element lists are the
        same (each model's, in its order), the report gives the usage view its goldens' side."""
        self.coverage = {mc.model: mc for mc in coverage.models}
        self._report = coverage

    def runs_through(self, name: str) -> list[int]:
        """How many runs passed through each element of the model, in its element order."""
        dense = [0] * len(self.elements[name])
        for index, count in self.through[name].items():
            dense[index] = count
        return dense

    def report(self, runset: RunSet, coverage: CoverageReport | None, separately: list[str],
               required: list[str], handoff_suites: frozenset[str] = frozenset(),
               group_by: str | None = None) -> RunsReport:
        results, sums = self.results, self.figures
        out = RunsReport(files=runset.files, unread=list(runset.unread), runs=results,
                         invalid=[i.render() for i in runset.invalid], metrics=sums.metrics(handoff_suites),
                         suites=sums.by_suite(handoff_suites), required_suites=list(required),
                         first_deviations=sums.distribution(), separately=sums.separately(separately, self.tool_errors),
                         coverage=coverage)
        out.usage = [figures.usage(self.coverage[name], self.runs_through(name)) for name in self.judges]
        out.marked = sums.marked(handoff_suites)
        out.undocumented = self.sightings.candidates()
        out.goldens_given = coverage is not None
        if group_by is not None:
            out.group_by, out.groups = group_by, figures.groups(results, group_by, handoff_suites)
        return out
