"""Run metrics (seed 000's release gate figures), the first-deviation distribution and usage-weighted coverage.

Each figure follows a rule in docs/runs.md; tests/judge/runs.py computes them a second way from the per-run results.
"""

from __future__ import annotations

from collections import Counter

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


def metrics(results: list[RunResult], handoff_suites: frozenset[str] = frozenset()) -> Metrics:
    """The figures over the runs read (invalid runs are left out; they are counted apart). Task completion and
    escalation success are measured on the fully judged runs (passed or deviating): a run whose evidence is missing
    cannot show either. In a suite of `handoff_suites` a correct hand-off completes the task. One pass over the runs;
    the sums of times are taken in run order (floats)."""
    runs = passed = deviations = not_judged = intent_runs = intent_correct = completion_runs = completed = 0
    escalation_runs = escalated = critical = retrieval_runs = grounding_runs = grounding_failed = 0
    hallucination_runs = hallucinated = usage_runs = input_tokens = output_tokens = retries = 0
    wall: list[float] = []
    model: list[float] = []
    tool: list[float] = []
    retry: list[float] = []
    for r in results:
        verdict = r.verdict
        if verdict == "invalid":
            continue
        runs += 1
        if verdict == "pass":
            passed += 1
        elif verdict == "deviation":
            deviations += 1
        elif verdict == "not_judged":
            not_judged += 1
        if r.expected_intent is not None:
            intent_runs += 1
            intent_correct += r.intent == r.expected_intent
        if verdict in ("pass", "deviation"):  # fully judged
            if r.path_judged:
                completion_runs += 1
                completed += bool(r.completed or (r.handed_off and r.suite in handoff_suites))
            escalation_runs += r.escalation_expected
            escalated += r.escalation_expected and r.escalated
        critical += r.critical
        g = r.grounding
        if g is not None:
            retrieval_runs += 1
            if g.judged:
                grounding_runs += 1
                grounding_failed += bool(g.failures)
            if g.hallucinations_judged:
                hallucination_runs += 1
                hallucinated += g.critical_hallucinations > 0
        c = r.context
        if c.input_tokens is not None or c.output_tokens is not None:
            usage_runs += 1
            input_tokens += c.input_tokens or 0
            output_tokens += c.output_tokens or 0
        if c.wall_ms is not None:
            wall.append(c.wall_ms or 0.0)
            model.append(c.model_ms or 0.0)
            tool.append(c.tool_ms or 0.0)
            retries += c.retries
            retry.append(c.retry_ms or 0.0)
    return Metrics(
        runs=runs, passed=passed, deviations=deviations, not_judged=not_judged, fully_judged=passed + deviations,
        intent_runs=intent_runs, intent_correct=intent_correct, intent_accuracy=_ratio(intent_correct, intent_runs),
        completion_runs=completion_runs, completed=completed,
        task_completion_rate=_ratio(completed, completion_runs), escalation_runs=escalation_runs, escalated=escalated,
        escalation_success_rate=_ratio(escalated, escalation_runs), critical_failures=critical,
        retrieval_runs=retrieval_runs, grounding_runs=grounding_runs,
        grounding_failures=grounding_failed if grounding_runs else None, hallucination_runs=hallucination_runs,
        critical_hallucinations=hallucinated if hallucination_runs else None, usage_runs=usage_runs,
        input_tokens=input_tokens, output_tokens=output_tokens, timed_runs=len(wall), wall_ms=sum(wall),
        model_ms=sum(model), tool_ms=sum(tool), retries=retries, retry_ms=sum(retry))


def by_suite(results: list[RunResult], handoff_suites: frozenset[str] = frozenset()) -> dict[str, Metrics]:
    per_suite: dict[str, list[RunResult]] = {}
    for r in results:
        if r.suite is not None:
            per_suite.setdefault(r.suite, []).append(r)
    return {s: metrics(per_suite[s], handoff_suites) for s in sorted(per_suite)}


def signature(d: DeviationOut) -> str:
    """type, element and the recorded source: `forbidden_call at forbidden:cancel_other_order, source
    model_inference`."""
    text = d.type + (f" at {d.element}" if d.element else "")
    return text + (f", source {d.source}" if d.source else "")


def distribution(results: list[RunResult]) -> Distribution:
    devs = [r.deviation for r in results if r.deviation is not None]
    types = Counter(d.type for d in devs)
    elements = Counter(d.element or "(no model element)" for d in devs)
    signatures = Counter(signature(d) for d in devs)
    order = lambda c: dict(sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))  # noqa: E731 - most frequent first
    return Distribution(by_type=order(types), by_element=order(elements), by_signature=order(signatures))


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


def marked(results: list[RunResult], handoff_suites: frozenset[str] = frozenset()) -> list[MarkedRuns]:
    """Every run metric and the first-deviation distribution of the runs of each mark (mbt.runs.marks: incident,
    adversarial), and of the unmarked runs, when some run is marked; nothing when none is. Invalid runs are left out,
    as `metrics` leaves them; a run with both marks counts in both rows."""
    read = [r for r in results if r.verdict != "invalid"]
    marks = [marks_of(r.tags) for r in read]
    if not any(marks):
        return []
    out = []
    for mark in (*MARKS, UNMARKED):
        chosen = [r for r, its in zip(read, marks) if (mark in its if mark != UNMARKED else not its)]
        if chosen:
            out.append(MarkedRuns(mark=mark, runs=[r.id for r in chosen], metrics=metrics(chosen, handoff_suites),
                                  first_deviations=distribution(chosen)))
    return out


# What mbt can say about seed 000's `report_separately` names, and why not for the others.
def separately(names: list[str], results: list[RunResult], tool_errors: int) -> list[Separate]:
    fully = [r for r in results if r.verdict in ("pass", "deviation")]
    judged = [r for r in fully if r.path_judged]  # a contract's runs have no path that could hand off
    pathless = f"; {len(fully) - len(judged)} run(s) judged on a contract left out" if len(fully) > len(judged) else ""
    out = []
    for name in names:
        if name == "fallback_rate":
            out.append(Separate(name=name, value=_ratio(sum(r.escalation_expected for r in judged), len(judged)),
                                note=f"runs the model hands off / fully judged runs ({len(judged)}{pathless})"))
        elif name == "integration_failures":
            out.append(Separate(name=name, value=tool_errors, note="tool results that are errors"))
        elif name in GROUNDING_FIGURES:
            out.append(_grounding_figure(name, results))
        elif name == "context_failures":
            out.append(Separate(name=name, value=sum(r.deviation is not None and r.deviation.type == "wrong_state"
                                                     for r in judged),
                                note="runs whose exported state disagrees with the model (wrong_state)"))
        else:
            out.append(Separate(name=name, note="not measured: no rule for it in docs/runs.md"))
    return out


GROUNDING_FIGURES = ("grounding_failures", "critical_hallucinations")


def _grounding_figure(name: str, results: list[RunResult]) -> Separate:
    """`grounding_failures` or `critical_hallucinations` over the runs that measured it (docs/runs.md, "Grounding");
    not measured, and why, when no run did."""
    m = metrics(results)
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
