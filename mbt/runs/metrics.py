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
    cannot show either. In a suite of `handoff_suites` a correct hand-off completes the task."""
    read = [r for r in results if r.verdict != "invalid"]
    judged = [r for r in read if r.verdict in ("pass", "deviation")]
    m = Metrics(runs=len(read))
    m.passed = sum(r.verdict == "pass" for r in read)
    m.deviations = sum(r.verdict == "deviation" for r in read)
    m.not_judged = sum(r.verdict == "not_judged" for r in read)
    m.fully_judged = len(judged)
    with_intent = [r for r in read if r.expected_intent is not None]
    m.intent_runs = len(with_intent)
    m.intent_correct = sum(r.intent == r.expected_intent for r in with_intent)
    m.intent_accuracy = _ratio(m.intent_correct, m.intent_runs)
    completion = [r for r in judged if r.path_judged]
    m.completion_runs = len(completion)
    m.completed = sum(r.completed or (r.handed_off and r.suite in handoff_suites) for r in completion)
    m.task_completion_rate = _ratio(m.completed, m.completion_runs)
    m.escalation_runs = sum(r.escalation_expected for r in judged)
    m.escalated = sum(r.escalation_expected and r.escalated for r in judged)
    m.escalation_success_rate = _ratio(m.escalated, m.escalation_runs)
    m.critical_failures = sum(r.critical for r in read)
    grounded = [r.grounding for r in read if r.grounding is not None]
    m.retrieval_runs = len(grounded)
    measured = [g for g in grounded if g.judged]
    m.grounding_runs = len(measured)
    m.grounding_failures = sum(bool(g.failures) for g in measured) if measured else None
    checked = [g for g in grounded if g.hallucinations_judged]
    m.hallucination_runs = len(checked)
    m.critical_hallucinations = sum(g.critical_hallucinations > 0 for g in checked) if checked else None
    used = [r.context for r in read if r.context.input_tokens is not None or r.context.output_tokens is not None]
    m.usage_runs = len(used)
    m.input_tokens = sum(c.input_tokens or 0 for c in used)
    m.output_tokens = sum(c.output_tokens or 0 for c in used)
    timed = [r.context for r in read if r.context.wall_ms is not None]
    m.timed_runs = len(timed)
    m.wall_ms = sum(c.wall_ms or 0.0 for c in timed)
    m.model_ms = sum(c.model_ms or 0.0 for c in timed)
    m.tool_ms = sum(c.tool_ms or 0.0 for c in timed)
    m.retries = sum(c.retries for c in timed)
    m.retry_ms = sum(c.retry_ms or 0.0 for c in timed)
    return m


def by_suite(results: list[RunResult], handoff_suites: frozenset[str] = frozenset()) -> dict[str, Metrics]:
    suites = sorted({r.suite for r in results if r.suite is not None})
    return {s: metrics([r for r in results if r.suite == s], handoff_suites) for s in suites}


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
    """`runs_through[i]`: how many runs exercised element i (the model's element order)."""
    feasible = [(ec, n) for ec, n in zip(model.elements, runs_through) if ec.element.feasible]
    out = UsageCoverage(model=model.model, elements=len(feasible), seen_in_runs=sum(n > 0 for _, n in feasible))
    for criterion in dict.fromkeys(ec.element.criterion for ec, _ in feasible):
        rows = [n for ec, n in feasible if ec.element.criterion == criterion]
        out.run_coverage[criterion] = _ratio(sum(n > 0 for n in rows), len(rows))
        verified = [ec.verified for ec, _ in feasible if ec.element.criterion == criterion]
        out.golden_coverage[criterion] = _ratio(sum(verified), len(verified))
    out.verified_coverage = _ratio(sum(ec.verified for ec, _ in feasible), len(feasible))
    total = sum(n for _, n in feasible)
    out.usage_weighted_verified = _ratio(sum(n for ec, n in feasible if ec.verified), total)
    frequent = sorted(((ec, n) for ec, n in feasible if n > 0 and not ec.verified),
                      key=lambda x: (-x[1], x[0].element.id))
    out.frequent_unverified = [UsageRow(element=ec.element.id, criterion=ec.element.criterion, runs=n,
                                        goldens_verifying=0) for ec, n in frequent[:FREQUENT_LIMIT]]
    out.verified_unseen = sorted(ec.element.id for ec, n in feasible if n == 0 and ec.verified)
    return out
