"""The gate on observed runs: seed 000's thresholds (overall and per required suite), critical failures, suites."""

from __future__ import annotations

from mbt.measure.coverage import GateFailure
from mbt.measure.gate import _OPS, DEFAULT_RUN_COUNTS, GROUNDING_COUNTS, RUN_METRICS, Gate, Rule
from mbt.runs.results import Metrics


def run_rules(gate: Gate | None) -> list[Rule]:
    """The gate file's run rules, plus the default counts it does not name (all of them without a gate file)."""
    written = gate.run_rules() if gate is not None else []
    named = {r.key for r in written}
    return [Rule(key, "<=", 0, 0) for key in DEFAULT_RUN_COUNTS if key not in named] + written


def evaluate_runs(gate: Gate | None, overall: Metrics, suites: dict[str, Metrics], invalid_runs: int
                  ) -> list[GateFailure]:
    failures: list[GateFailure] = []
    required = gate.required_suites if gate is not None else []
    for suite in required:
        if suite not in suites or suites[suite].runs == 0:
            failures.append(GateFailure(rule="required_suites", expected=f"runs of suite {suite}", actual=0,
                                        message=f"required suite `{suite}` has no judged run"))
    for rule in run_rules(gate):
        if rule.key in RUN_METRICS:
            scopes = [("all runs", overall)] + [(f"suite {s}", suites[s]) for s in required if s in suites]
            for label, m in scopes:
                value = getattr(m, rule.key)
                if value is None:
                    if label == "all runs":  # nothing to measure is not a pass
                        failures.append(GateFailure(rule=rule.key, expected=rule.describe(), actual=None,
                                                    message=f"{rule.key}: no run to measure it on"))
                    continue  # a suite without, e.g., hand-offs: the figure does not apply to it
                if not _OPS[rule.op](value, rule.threshold):
                    failures.append(GateFailure(rule=rule.key, expected=f"{rule.op} {rule.threshold:g}", actual=value,
                                                message=f"{label}: {rule.key} is {value:.1%}, the gate requires "
                                                        f"{rule.op} {rule.threshold:.1%}"))
            continue
        actual = invalid_runs if rule.key == "invalid_runs" else overall.not_judged \
            if rule.key == "not_judged_runs" else getattr(overall, rule.key)
        if rule.key in GROUNDING_COUNTS and actual is None:  # not measured is not a pass
            what = "no run had retrieval evidence" if overall.retrieval_runs == 0 else \
                f"none of the {overall.retrieval_runs} run(s) with retrieval evidence was judged on it"
            failures.append(GateFailure(rule=rule.key, expected=f"{rule.op} {rule.threshold:g}", actual=None,
                                        message=f"{rule.key} is not measured ({what}), the gate requires "
                                                f"{rule.op} {rule.threshold:g}"))
            continue
        if not _OPS[rule.op](actual, rule.threshold):
            why = " (runs whose evidence is missing: each says what it lacked)" if rule.key == "not_judged_runs" \
                else f" of {overall.grounding_runs} run(s) judged on their grounding" \
                if rule.key == "grounding_failures" else \
                f" of {overall.hallucination_runs} run(s) whose claims were judged" \
                if rule.key == "critical_hallucinations" else ""
            failures.append(GateFailure(rule=rule.key, expected=f"{rule.op} {rule.threshold:g}", actual=actual,
                                        message=f"{rule.key} is {actual}{why}, the gate requires {rule.op} "
                                                f"{rule.threshold:g}"))
    return failures
