"""The gate on judged answers (`mbt eval --gate FILE`, or `gate:` in the configuration file).

A gate file is read by mbt.measure.gate (the one reader of gate files and their conditions); `mbt eval` applies its
answer rules and leaves the rest (`fsm.transition`, `intent_accuracy` ...) to `mbt coverage` and `mbt runs`, so one
file can gate all three:

- `answers.pass_rate` — the share of the cases run successfully (no criterion in error) that pass overall: seed
  001's rate, a ratio (`>= 0.9`) or a percentage (`>= 90%`);
- `answers.CRITERION.pass_rate` — the same for one enabled criterion (`answers.accuracy.pass_rate`);
- `must_not_violated` — the must_not phrases said, over every case (default `<= 0`);
- `judge_errors` — the verdicts in error, over every case and criterion (default `<= 0`: a judge error is never a
  pass; `--retry-errors` asks again);
- `agent_errors` — the cases the agent did not answer (`mbt eval --agent`: a time-out, an HTTP error; default
  `<= 0`; `--retry-errors NAME` drives them again);
- `invalid_cases` — golden cases that could not be used (default `<= 0`, as for `mbt coverage`).

Without a gate file, or with one that writes no `answers.*` rule, every case must pass overall: `answers.pass_rate
>= 1`, each case that does not pass named. A rate with no case run successfully to measure it on fails (never green
unseen); so does a rule naming a criterion that is not enabled. With --model, a case whose run did not pass on the
behaviour model fails the gate whatever the rules say.
"""

from __future__ import annotations

from mbt.answers.results import EvalGate, EvalReport, GateCheck
from mbt.measure.gate import _OPS, ANSWER_COUNTS, ANSWER_RATE, Gate, Rule, is_answer_rule

EVERY_CASE = Rule("answers.pass_rate", ">=", 1.0, 0)  # the default: every case passes overall
DEFAULT_COUNTS = (*ANSWER_COUNTS, "invalid_cases")


def answer_rules(gate: Gate | None) -> list[tuple[Rule, bool]]:
    """The rules `mbt eval` applies, each with whether it is a default (not written in the gate file)."""
    written = [r for r in gate.rules if is_answer_rule(r.key)] if gate is not None else []
    implicit = set(gate.implicit) if gate is not None else set(DEFAULT_COUNTS)
    invalid = [r for r in gate.rules if r.key == "invalid_cases"] if gate is not None else []
    out: list[tuple[Rule, bool]] = []
    if not any(r.key.startswith("answers.") for r in written):
        out.append((EVERY_CASE, True))
    named = {r.key for r in written}
    out += [(Rule(key, "<=", 0, 0), True) for key in ANSWER_COUNTS if key not in named]
    out += [(r, False) for r in written]
    out += [(r, r.key in implicit) for r in invalid] or [(Rule("invalid_cases", "<=", 0, 0), True)]
    return out


def _percent(value: float) -> str:
    return f"{value * 100:.1f}%".replace(".0%", "%")


def answers_gate(report: EvalReport, gate: Gate | None) -> EvalGate:
    """Every answer rule measured on the report, and the failures as lines (cases named where they help)."""
    checks: list[GateCheck] = []
    failures: list[str] = []
    ok = [case for case in report.cases if case.run_successfully]
    enabled = {c.key: c for c in report.criteria}
    for rule, default in answer_rules(gate):
        expected = f"{rule.op} {rule.threshold:g}"
        actual: float | None
        if rule.key in DEFAULT_COUNTS:
            actual = {"must_not_violated": report.must_not_violated, "judge_errors": report.judge_errors,
                      "agent_errors": report.agent_errors, "invalid_cases": len(report.invalid_cases)}[rule.key]
            passed = _OPS[rule.op](actual, rule.threshold)
            if not passed:
                failures.append(f"{rule.key} is {actual:g}{_count_detail(rule.key, report)}, the gate requires "
                                f"{expected}")
            checks.append(GateCheck(key=rule.key, expected=expected, actual=actual, passed=passed, default=default))
            continue
        found = ANSWER_RATE.match(rule.key)
        criterion = found.group(1) if found else None
        if criterion is not None and criterion not in enabled:
            failures.append(f"gate rule `{rule.key}` names no enabled criterion (enabled: {', '.join(enabled)})")
            checks.append(GateCheck(key=rule.key, expected=expected, actual=None, passed=False, default=default))
            continue
        passes = enabled[criterion].passed_ok if criterion is not None else report.passed_ok
        actual = passes / len(ok) if ok else None
        passed = actual is not None and _OPS[rule.op](actual, rule.threshold)
        checks.append(GateCheck(key=rule.key, expected=expected, actual=actual, passed=passed, default=default))
        if passed:
            continue
        if actual is None:
            failures.append(f"{rule.key}: no case run successfully to measure it on")
        elif rule is EVERY_CASE:  # the default gate names each case that does not pass
            failures += [f"{case.where}: case `{case.id}` is {case.overall.verdict}: {case.overall.reason}"
                         for case in ok if case.overall.verdict != "pass"]
        else:
            failures.append(f"{rule.key} is {_percent(actual)} ({passes} of {len(ok)} cases run successfully "
                            f"pass{' ' + criterion if criterion else ''}), the gate requires {rule.op} "
                            f"{_percent(rule.threshold)}")
    failures += [f"{case.where}: case `{case.id}`: its run is {case.model.verdict} on the model: {case.model.reason}"
                 for case in report.cases if case.model is not None and case.model.verdict != "pass"]
    return EvalGate(passed=not failures, failures=failures, source=gate.source if gate is not None else None,
                    checks=checks)


def _count_detail(key: str, report: EvalReport) -> str:
    """Which cases a count comes from (the first few), for its failure line."""
    if key == "must_not_violated":
        hits = [f"case `{c.id}` says {', '.join(repr(p) for p in c.must_not_violated)}" for c in report.cases
                if c.must_not_violated]
    elif key == "judge_errors":
        hits = [f"case `{c.id}` {k}" for c in report.cases for k, v in c.criteria.items() if v.verdict == "error"]
    elif key == "agent_errors":
        hits = [f"case `{c.id}`: {c.agent_error}" for c in report.cases if c.agent_error is not None]
    else:
        hits = [i.where for i in report.invalid_cases]
    shown = "; ".join(hits[:5]) + (f"; {len(hits) - 5} more" if len(hits) > 5 else "")
    why = {"judge_errors": " (a judge error is never a pass: --retry-errors asks again)",
           "agent_errors": " (the agent did not answer: --retry-errors NAME drives them again)"}.get(key, "")
    return f" ({shown}){why}" if shown else ""
