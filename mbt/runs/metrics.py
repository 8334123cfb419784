"""Run metrics (seed 000's release gate figures), the first-deviation distribution and usage-weighted coverage.

Each figure follows a rule in docs/runs.md; tests/judge/runs.py computes them a second way from the per-run results.
The figures that add up over runs are gathered where a piece of the runs is judged (`RunFigures`) and merged.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Callable
from math import fsum

from mbt.measure.coverage import ModelCoverage
from mbt.runs.marks import MARKS, UNMARKED, marks_of
from mbt.runs.results import (
    DeviationOut,
    Distribution,
    Group,
    MarkedRuns,
    Metrics,
    RunResult,
    Separate,
    UsageCoverage,
    UsageRow,
)
from mbt.runs.steps import GROUP_KEYS

FREQUENT_LIMIT = 10  # rows of the "frequent in runs, verified by no golden" view


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


class Sums:
    """What runs add up to for `metrics`: counts, and the recorded times kept as given (`metrics` sums them exactly,
    math.fsum), so that sums of pieces merged (`merge`) give the figures of all the runs at once, byte for byte,
    however the runs were split. A run's hand-off counts as completing its task only in a hand-off suite, which the
    gate names after the runs are judged: hand-offs are kept per suite."""

    def __init__(self) -> None:
        self.runs = self.passed = self.deviations = self.not_judged = self.intent_runs = self.intent_correct = 0
        self.completion_runs = self.completed = self.escalation_runs = self.escalated = self.critical = 0
        self.retrieval_runs = self.grounding_runs = self.grounding_failed = self.hallucination_runs = 0
        self.hallucinated = self.usage_runs = self.input_tokens = self.output_tokens = self.retries = 0
        self.handed_off: Counter[str | None] = Counter()  # fully judged runs not completed but handed off, by suite
        self.wall: array[float] = array("d")
        self.model: array[float] = array("d")
        self.tool: array[float] = array("d")
        self.retry: array[float] = array("d")

    def add(self, r: RunResult) -> None:
        """One run (invalid runs are left out: they are counted apart)."""
        verdict = r.verdict
        if verdict == "invalid":
            return
        self.runs += 1
        if verdict == "pass":
            self.passed += 1
        elif verdict == "deviation":
            self.deviations += 1
        elif verdict == "not_judged":
            self.not_judged += 1
        if r.expected_intent is not None:
            self.intent_runs += 1
            self.intent_correct += r.intent == r.expected_intent
        if verdict in ("pass", "deviation"):  # fully judged
            if r.path_judged:
                self.completion_runs += 1
                if r.completed:
                    self.completed += 1
                elif r.handed_off:
                    self.handed_off[r.suite] += 1
            self.escalation_runs += r.escalation_expected
            self.escalated += r.escalation_expected and r.escalated
        self.critical += r.critical
        g = r.grounding
        if g is not None:
            self.retrieval_runs += 1
            if g.judged:
                self.grounding_runs += 1
                self.grounding_failed += bool(g.failures)
            if g.hallucinations_judged:
                self.hallucination_runs += 1
                self.hallucinated += g.critical_hallucinations > 0
        c = r.context
        if c.input_tokens is not None or c.output_tokens is not None:
            self.usage_runs += 1
            self.input_tokens += c.input_tokens or 0
            self.output_tokens += c.output_tokens or 0
        if c.wall_ms is not None:
            self.wall.append(c.wall_ms or 0.0)
            self.model.append(c.model_ms or 0.0)
            self.tool.append(c.tool_ms or 0.0)
            self.retries += c.retries
            self.retry.append(c.retry_ms or 0.0)

    def merge(self, other: Sums) -> None:
        for name in _COUNTS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.handed_off.update(other.handed_off)
        for times in ("wall", "model", "tool", "retry"):
            getattr(self, times).extend(getattr(other, times))

    def metrics(self, handoff_suites: frozenset[str] = frozenset()) -> Metrics:
        completed = self.completed + sum(n for suite, n in self.handed_off.items() if suite in handoff_suites)
        return Metrics(
            runs=self.runs, passed=self.passed, deviations=self.deviations, not_judged=self.not_judged,
            fully_judged=self.passed + self.deviations, intent_runs=self.intent_runs,
            intent_correct=self.intent_correct, intent_accuracy=_ratio(self.intent_correct, self.intent_runs),
            completion_runs=self.completion_runs, completed=completed,
            task_completion_rate=_ratio(completed, self.completion_runs), escalation_runs=self.escalation_runs,
            escalated=self.escalated, escalation_success_rate=_ratio(self.escalated, self.escalation_runs),
            critical_failures=self.critical, retrieval_runs=self.retrieval_runs, grounding_runs=self.grounding_runs,
            grounding_failures=self.grounding_failed if self.grounding_runs else None,
            hallucination_runs=self.hallucination_runs,
            critical_hallucinations=self.hallucinated if self.hallucination_runs else None,
            usage_runs=self.usage_runs, input_tokens=self.input_tokens, output_tokens=self.output_tokens,
            timed_runs=len(self.wall), wall_ms=fsum(self.wall), model_ms=fsum(self.model), tool_ms=fsum(self.tool),
            retries=self.retries, retry_ms=fsum(self.retry))


_COUNTS = ("runs", "passed", "deviations", "not_judged", "intent_runs", "intent_correct", "completion_runs",
           "completed", "escalation_runs", "escalated", "critical", "retrieval_runs", "grounding_runs",
           "grounding_failed", "hallucination_runs", "hallucinated", "usage_runs", "input_tokens", "output_tokens",
           "retries")


def metrics(results: list[RunResult], handoff_suites: frozenset[str] = frozenset()) -> Metrics:
    """The figures over the runs read (invalid runs are left out; they are counted apart). Task completion and
    escalation success are measured on the fully judged runs (passed or deviating): a run whose evidence is missing
    cannot show either. In a suite of `handoff_suites` a correct hand-off completes the task. The sums of times are
    exact (math.fsum: the same whatever the order of the runs)."""
    sums = Sums()
    for r in results:
        sums.add(r)
    return sums.metrics(handoff_suites)


def signature(d: DeviationOut) -> str:
    """type, element and the recorded source: `forbidden_call at forbidden:cancel_other_order, source
    model_inference`."""
    text = d.type + (f" at {d.element}" if d.element else "")
    return text + (f", source {d.source}" if d.source else "")


class Deviations:
    """The first deviations of runs, counted by type, element and signature (`distribution`); mergeable."""

    def __init__(self) -> None:
        self.types: Counter[str] = Counter()
        self.elements: Counter[str] = Counter()
        self.signatures: Counter[str] = Counter()

    def add(self, d: DeviationOut) -> None:
        self.types[d.type] += 1
        self.elements[d.element or "(no model element)"] += 1
        self.signatures[signature(d)] += 1

    def merge(self, other: Deviations) -> None:
        self.types.update(other.types)
        self.elements.update(other.elements)
        self.signatures.update(other.signatures)

    def distribution(self) -> Distribution:
        order = lambda c: dict(sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))  # noqa: E731 - most frequent first
        return Distribution(by_type=order(self.types), by_element=order(self.elements),
                            by_signature=order(self.signatures))


def distribution(results: list[RunResult]) -> Distribution:
    devs = Deviations()
    for r in results:
        if r.deviation is not None:
            devs.add(r.deviation)
    return devs.distribution()


class RunFigures:
    """Every figure of the runs report that adds up over runs — the metrics (all runs, per suite, per mark), the
    first-deviation distribution, the `report_separately` counts — gathered in one pass over a piece's rows (`add`,
    in run order) where the piece is judged, and merged piece by piece in file order (`merge`): mbt's process never
    passes over every row again (mbt.runs.parts). The result is the same however the runs were split.

    A row is added once, to the sums of its suite and marks (`groups`); the figures of all runs, of a suite or of a
    mark add up the groups they take (a handful), when the report asks for them."""

    def __init__(self) -> None:
        # (suite, marks) -> the sums and first deviations of those runs; marks None for invalid runs (in no mark's row)
        self.groups: dict[tuple[str | None, tuple[str, ...] | None], tuple[Sums, Deviations]] = {}
        self.ids: dict[str, list[str]] = {}  # the ids of each mark's runs (and UNMARKED's), in run order
        self.path_judged_escalations = 0  # fully judged runs with a path (not judged on a contract) the model hands off
        self.wrong_state = 0  # those whose first deviation is wrong_state

    def add(self, r: RunResult) -> None:
        invalid = r.verdict == "invalid"
        marks = None if invalid else tuple(marks_of(r.tags)) if r.tags else ()
        key = (r.suite, marks)
        group = self.groups.get(key)
        if group is None:
            group = self.groups[key] = (Sums(), Deviations())
        group[0].add(r)
        d = r.deviation
        if d is not None:
            group[1].add(d)
        if invalid:
            return
        for mark in marks or (UNMARKED,):
            ids = self.ids.get(mark)
            if ids is None:
                ids = self.ids[mark] = []
            ids.append(r.id)
        if r.path_judged and r.verdict in ("pass", "deviation"):
            self.path_judged_escalations += r.escalation_expected
            self.wrong_state += d is not None and d.type == "wrong_state"

    def merge(self, later: RunFigures) -> None:
        """Add the figures of runs judged after these (a later piece's)."""
        for key, (sums, devs) in later.groups.items():
            group = self.groups.get(key)
            if group is None:
                group = self.groups[key] = (Sums(), Deviations())
            group[0].merge(sums)
            group[1].merge(devs)
        for mark, ids in later.ids.items():
            self.ids.setdefault(mark, []).extend(ids)
        self.path_judged_escalations += later.path_judged_escalations
        self.wrong_state += later.wrong_state

    def _sums(self, chosen: Callable[[str | None, tuple[str, ...] | None], bool]) -> tuple[Sums, Deviations]:
        sums, devs = Sums(), Deviations()
        for (suite, marks), (group_sums, group_devs) in self.groups.items():
            if chosen(suite, marks):
                sums.merge(group_sums)
                devs.merge(group_devs)
        return sums, devs

    def metrics(self, handoff_suites: frozenset[str] = frozenset()) -> Metrics:
        return self._sums(lambda suite, marks: True)[0].metrics(handoff_suites)

    def by_suite(self, handoff_suites: frozenset[str] = frozenset()) -> dict[str, Metrics]:
        suites = sorted({suite for suite, _ in self.groups if suite is not None})
        return {s: self._sums(_in_suite(s))[0].metrics(handoff_suites) for s in suites}

    def distribution(self) -> Distribution:
        return self._sums(lambda suite, marks: True)[1].distribution()

    def marked(self, handoff_suites: frozenset[str] = frozenset()) -> list[MarkedRuns]:
        """Every run metric and the first-deviation distribution of the runs of each mark (mbt.runs.marks: incident,
        adversarial), and of the unmarked runs, when some run is marked; nothing when none is. Invalid runs are left
        out, as `metrics` leaves them; a run with both marks counts in both rows."""
        if not any(mark in self.ids for mark in MARKS):
            return []
        out = []
        for mark in (*MARKS, UNMARKED):
            if mark not in self.ids:
                continue
            sums, devs = self._sums(_with_mark(mark))
            out.append(MarkedRuns(mark=mark, runs=list(self.ids[mark]), metrics=sums.metrics(handoff_suites),
                                  first_deviations=devs.distribution()))
        return out

    def separately(self, names: list[str], tool_errors: int) -> list[Separate]:
        """What mbt can say about seed 000's `report_separately` names, and why not for the others."""
        every = self._sums(lambda suite, marks: True)[0]
        judged = every.completion_runs  # fully judged runs with a path: a contract's runs have none that hands off
        fully = every.passed + every.deviations
        pathless = f"; {fully - judged} run(s) judged on a contract left out" if fully > judged else ""
        out = []
        for name in names:
            if name == "fallback_rate":
                out.append(Separate(name=name, value=_ratio(self.path_judged_escalations, judged),
                                    note=f"runs the model hands off / fully judged runs ({judged}{pathless})"))
            elif name == "integration_failures":
                out.append(Separate(name=name, value=tool_errors, note="tool results that are errors"))
            elif name in GROUNDING_FIGURES:
                out.append(_grounding_figure(name, every.metrics()))
            elif name == "context_failures":
                out.append(Separate(name=name, value=self.wrong_state,
                                    note="runs whose exported state disagrees with the model (wrong_state)"))
            else:
                out.append(Separate(name=name, note="not measured: no rule for it in docs/runs.md"))
        return out


def _in_suite(wanted: str) -> Callable[[str | None, tuple[str, ...] | None], bool]:
    return lambda suite, marks: suite == wanted


def _with_mark(mark: str) -> Callable[[str | None, tuple[str, ...] | None], bool]:
    """The runs of `mark`, or of none (UNMARKED); invalid runs (marks None) are in no mark's row."""
    if mark == UNMARKED:
        return lambda suite, marks: marks == ()
    return lambda suite, marks: marks is not None and mark in marks


def groups(results: list[RunResult], key: str, handoff_suites: frozenset[str] = frozenset()) -> list[Group]:
    """Every run metric and the first-deviation distribution per value of `key` (GROUP_KEYS), values in order,
    runs that do not say last."""
    def value(r: RunResult) -> str | None:
        field = GROUP_KEYS[key]
        return r.suite if field is None else getattr(r.context, field)

    said: list[str] = sorted({v for r in results if (v := value(r)) is not None})
    values: list[str | None] = [*said, *([None] if any(value(r) is None for r in results) else [])]
    out = []
    for v in values:
        chosen = [r for r in results if value(r) == v]
        out.append(Group(key=key, value=v, metrics=metrics(chosen, handoff_suites),
                         first_deviations=distribution(chosen)))
    return out


GROUNDING_FIGURES = ("grounding_failures", "critical_hallucinations")


def _grounding_figure(name: str, m: Metrics) -> Separate:
    """`grounding_failures` or `critical_hallucinations` over the runs that measured it (docs/runs.md, "Grounding");
    not measured, and why, when no run did."""
    value = getattr(m, name)
    runs = m.grounding_runs if name == "grounding_failures" else m.hallucination_runs
    what = ("runs with a grounding failure / runs whose grounding was judged" if name == "grounding_failures"
            else "runs with a critical hallucination / runs whose claims were judged")
    if value is not None:
        return Separate(name=name, value=value, runs=runs, note=f"{what} ({value} of {runs})")
    if m.retrieval_runs == 0:
        return Separate(name=name, note="not measured: no run had retrieval evidence")
    return Separate(name=name, runs=0, note=f"not measured: {m.retrieval_runs} run(s) with retrieval evidence, none "
                                            "of them judged on it (each says what it lacked)")


def usage(model: ModelCoverage, runs_through: list[int]) -> UsageCoverage:
    """`runs_through[i]`: how many runs exercised element i (the model's element order). One pass over the elements
    (a model may have hundreds of thousands)."""
    feasible = [(ec, n, ec.verified) for ec, n in zip(model.elements, runs_through) if ec.element.feasible]
    out = UsageCoverage(model=model.model, elements=len(feasible), seen_in_runs=sum(n > 0 for _, n, _ in feasible))
    per_criterion: dict[str, list[int]] = {}  # criterion -> [elements, seen in runs, verified], in first-seen order
    for ec, n, verified in feasible:
        counts = per_criterion.get(ec.element.criterion)
        if counts is None:
            counts = per_criterion[ec.element.criterion] = [0, 0, 0]
        counts[0] += 1
        counts[1] += n > 0
        counts[2] += verified
    for criterion, (elements, seen, verified_count) in per_criterion.items():
        out.run_coverage[criterion] = _ratio(seen, elements)
        out.golden_coverage[criterion] = _ratio(verified_count, elements)
    out.verified_coverage = _ratio(sum(verified for _, _, verified in feasible), len(feasible))
    total = sum(n for _, n, _ in feasible)
    out.usage_weighted_verified = _ratio(sum(n for _, n, verified in feasible if verified), total)
    frequent = sorted(((ec, n) for ec, n, verified in feasible if n > 0 and not verified),
                      key=lambda x: (-x[1], x[0].element.id))
    out.frequent_unverified = [UsageRow(element=ec.element.id, criterion=ec.element.criterion, runs=n,
                                        goldens_verifying=0) for ec, n in frequent[:FREQUENT_LIMIT]]
    out.verified_unseen = sorted(ec.element.id for ec, n, verified in feasible if n == 0 and verified)
    return out
