"""The gate: what fails CI. Default: any uncovered forbidden element. A YAML gate file adds thresholds and limits."""

from __future__ import annotations

import datetime as dt
import json
import operator
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from mbt.errors import LocatedError, Problem
from mbt.measure.baseline import ratchet, ratcheted
from mbt.measure.coverage import CoverageReport, GateFailure, GateResult, numbers_for
from mbt.measure.numbers import goldens_text
from mbt.measure.sources import parse_exclusions
from mbt.measure.waivers import Waiver, active_waivers, parse_waivers, waiver_states
from mbt.reader import read_text

_OPS = {">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt, "==": operator.eq}
_CONDITION = re.compile(r"^\s*(>=|<=|==|>|<)?\s*([0-9]*\.?[0-9]+)\s*(%)?\s*$")
# Counted things a gate may limit (a bare number means "at most").
COUNTS = ("forbidden_uncovered", "forbidden_expected", "contradictions", "divergences", "unbound_turns",
          "invalid_cases", "duplicates")
NEEDS_MUTANTS = ("duplicates",)  # counts that `coverage --mutants` computes
# What fails without a gate file, and what a gate file keeps failing on unless it names the key with its own limit:
# untested forbidden behaviour, goldens expecting forbidden behaviour, goldens contradicting the model, broken cases.
DEFAULT_COUNTS = ("forbidden_uncovered", "forbidden_expected", "contradictions", "invalid_cases")
# Counts of findings per expectation, and the GoldenSummary field counting the goldens that hold them.
GOLDENS_HOLDING = {"contradictions": "contradicting", "forbidden_expected": "expecting_forbidden"}
# Observed-run figures (mbt runs, docs/runs.md): ratios, and counts a bare number limits.
RUN_METRICS = ("intent_accuracy", "task_completion_rate", "escalation_success_rate")
# Counts of runs measured only on runs with retrieval evidence (docs/runs.md, "Grounding"): a written limit fails
# when no run measured it.
GROUNDING_COUNTS = ("grounding_failures", "critical_hallucinations")
RUN_COUNTS = ("critical_failures", "deviations", "invalid_runs", "not_judged_runs", *GROUNDING_COUNTS)
# What fails `mbt runs` without a gate file, and what a gate file keeps failing on unless it names the key:
# a run whose evidence is missing is never green unseen.
DEFAULT_RUN_COUNTS = ("critical_failures", "invalid_runs", "not_judged_runs")
# `MODEL.requirement` / `KIND.requirement`: the share of requirement tags whose every element is verified.
REQUIREMENT = "requirement"
# Judged answers (mbt eval, mbt.answers.gate): counts a bare number limits, and the pass rates `answers.pass_rate`
# and `answers.CRITERION.pass_rate`. mbt coverage and mbt runs leave them to mbt eval, so one gate file serves all.
ANSWER_COUNTS = ("must_not_violated", "judge_errors", "agent_errors")
ANSWER_RATE = re.compile(r"answers\.(?:([a-z][a-z0-9_-]{0,63})\.)?pass_rate\Z")


def is_answer_rule(key: str) -> bool:
    """Whether a gate key is measured on judged answers (mbt eval)."""
    return key in ANSWER_COUNTS or key.startswith("answers.")


# `KIND.CRITERION.answer_verified` / `MODEL.CRITERION.answer_verified` (and `.weighted` after it): the share of a
# criterion's elements an answer can verify that judged answers verify (`mbt coverage --answers EVAL.json`,
# mbt.answers.coverage); `claim` is the criterion of a state machine's claims. mbt runs leaves them to mbt coverage.
ANSWER_VERIFIED = "answer_verified"


def is_answer_verified_rule(key: str) -> bool:
    parts = key.split(".")
    return ANSWER_VERIFIED in parts[-2:] and parts[-1] in (ANSWER_VERIFIED, "weighted")


# The keys a gate file may hold besides `kind.criterion` rules (load_gate reads each).
GATE_FILE_KEYS = frozenset({"gate", "release_gate", "thresholds", "waivers", "exclude_units", "required_suites",
                            "report_separately", "handoff_suites", "turn_loop", "critical_failures_allowed",
                            *COUNTS, *RUN_METRICS, *RUN_COUNTS, *ANSWER_COUNTS})


def is_gate_file(value: object) -> bool:
    """Whether a decoded YAML document is a gate file: a mapping whose every key is a gate key (`thresholds`,
    `waivers`, a limit, or a `kind.criterion` rule). A golden case always has keys of its own (`id`, `turns`)."""
    if not isinstance(value, dict) or not value:
        return False
    return all(isinstance(key, str) and (key in GATE_FILE_KEYS or re.fullmatch(r"[A-Za-z_][\w-]*\.[\w.-]+", key)
                                         is not None) for key in value)


@dataclass(frozen=True)
class Rule:
    key: str  # e.g. fsm.transition, password_reset.guard.weighted, contradictions
    op: str
    threshold: float
    line: int

    def describe(self) -> str:
        return f"{self.key} {self.op} {self.threshold:g}"


@dataclass
class Gate:
    rules: list[Rule]
    source: str | None = None
    waivers: list[Waiver] = field(default_factory=list)
    exclusions: list = field(default_factory=list)  # mbt.measure.sources.Exclusion: source units left out
    # The default limits (DEFAULT_COUNTS) that were added, not written: with a baseline, its figures replace them.
    implicit: tuple[str, ...] = ()
    required_suites: list[str] = field(default_factory=list)  # seed 000: every one needs runs, and meets the thresholds
    report_separately: list[str] = field(default_factory=list)  # seed 000: figures shown, never gated
    handoff_suites: list[str] = field(default_factory=list)  # suites whose task a correct hand-off completes
    turn_loop: dict = field(default_factory=dict)  # seed 003's loop budgets (mbt.runs.loop.LoopRules fields)

    def run_rules(self) -> list[Rule]:
        return [r for r in self.rules if r.key in RUN_METRICS or r.key in RUN_COUNTS]

    def coverage_rules(self) -> list[Rule]:
        """The rules measured on goldens (mbt runs gates its goldens' coverage with them): not the run metrics, and
        not the rules on judged answers (mbt eval's, and mbt coverage --answers')."""
        return [r for r in self.rules if r.key not in RUN_METRICS and r.key not in RUN_COUNTS
                and not is_answer_rule(r.key) and not is_answer_verified_rule(r.key)]


DEFAULT_GATE = Gate([Rule(key, "<=", 0, 0) for key in DEFAULT_COUNTS], implicit=DEFAULT_COUNTS)


def load_gate(path: str) -> Gate:
    """Read a gate file; keys may sit at the top, under `thresholds:`, or under `gate:`/`release_gate:` (seed 000)."""
    text = read_text(Path(path), path)
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        raise LocatedError([Problem(path, (mark.line + 1) if mark else 1, (mark.column + 1) if mark else 1,
                                    f"gate file is not valid YAML: {getattr(err, 'problem', err)}")]) from None
    rules: list[Rule] = []
    problems: list[Problem] = []
    waivers: list[Waiver] = []
    exclusions: list = []  # mbt.measure.sources.Exclusion (imported where a file has them: sources is heavy)
    lists: dict[str, list[str]] = {"required_suites": [], "report_separately": [], "handoff_suites": []}
    turn_loop: dict = {}

    def walk(node) -> None:
        if not isinstance(node, yaml.MappingNode):
            problems.append(Problem(path, node.start_mark.line + 1, node.start_mark.column + 1,
                                    "expected a mapping of `kind.criterion: \">= 0.9\"` entries"))
            return
        for key_node, value_node in node.value:
            key = str(key_node.value)
            line, col = key_node.start_mark.line + 1, key_node.start_mark.column + 1
            if key in ("gate", "release_gate", "thresholds"):
                walk(value_node)
                continue
            if key == "waivers":
                found, bad = parse_waivers(value_node, path)
                waivers.extend(found)
                problems.extend(bad)
                continue
            if key == "exclude_units":
                excluded, bad = parse_exclusions(value_node, path)
                exclusions.extend(excluded)
                problems.extend(bad)
                continue
            if key in lists:  # seed 000: suites of observed runs, and figures reported beside the gate
                if not isinstance(value_node, yaml.SequenceNode) or not all(
                        isinstance(n, yaml.ScalarNode) for n in value_node.value):
                    problems.append(Problem(path, line, col, f"`{key}` needs a list of names"))
                    continue
                lists[key].extend(str(n.value) for n in value_node.value)
                continue
            if key == "turn_loop":
                loop_rules, loop_problems = parse_turn_loop(value_node, path)
                turn_loop.update(loop_rules)
                problems.extend(loop_problems)
                continue
            if key == "critical_failures_allowed":
                key = "critical_failures"  # seed 000's name for the limit
            if not isinstance(value_node, yaml.ScalarNode):
                problems.append(Problem(path, line, col, f"`{key}` needs a condition such as \">= 0.9\""))
                continue
            match = _CONDITION.match(str(value_node.value))
            if not match:
                problems.append(Problem(path, value_node.start_mark.line + 1, value_node.start_mark.column + 1,
                                        f"cannot read condition {value_node.value!r}", 'write e.g. ">= 0.9" or 0'))
                continue
            op, number, pct = match.groups()
            value = float(number) / (100 if pct else 1)
            if key in COUNTS or key in RUN_COUNTS or key in ANSWER_COUNTS:
                rules.append(Rule(key, op or "<=", value, line))
            elif key in RUN_METRICS:
                if value > 1 and not pct:
                    problems.append(Problem(path, line, col, f"`{key}` is a ratio between 0 and 1 (or a percentage)"))
                    continue
                rules.append(Rule(key, op or ">=", value, line))
            elif key.startswith("answers.") and not ANSWER_RATE.match(key):
                problems.append(Problem(path, line, col, f"unknown answers key `{key}`",
                                        "use answers.pass_rate or answers.CRITERION.pass_rate (mbt eval)"))
            elif "." in key:
                if value > 1 and not pct:
                    problems.append(Problem(path, line, col, f"`{key}` is a ratio between 0 and 1 (or a percentage)"))
                    continue
                rules.append(Rule(key, op or ">=", value, line))
            else:
                problems.append(Problem(path, line, col, f"unknown gate key `{key}`",
                                        "use kind.criterion (fsm.transition), model.criterion, or one of "
                                        + ", ".join(COUNTS + RUN_METRICS + RUN_COUNTS + ANSWER_COUNTS)))

    if root is not None:
        walk(root)
    if problems:
        raise LocatedError(problems)
    written = {r.key for r in rules}
    rules = [r for r in DEFAULT_GATE.rules if r.key not in written] + rules
    return Gate(rules, path, waivers, exclusions, tuple(key for key in DEFAULT_COUNTS if key not in written),
                lists["required_suites"], lists["report_separately"], lists["handoff_suites"], turn_loop)


# `turn_loop:` keys (docs/runs.md): whole numbers, flags, and a JSON Schema file for structured answers.
_LOOP_NUMBERS = ("max_turns", "max_budget_tokens")
_LOOP_FLAGS = ("structured_output", "calls_within_candidates", "stable_commands")


def parse_turn_loop(node, path: str) -> tuple[dict, list[Problem]]:
    """The gate file's `turn_loop:` section as LoopRules fields; the schema file is read relative to the gate."""
    out: dict = {}
    problems: list[Problem] = []
    if not isinstance(node, yaml.MappingNode):
        return out, [Problem(path, node.start_mark.line + 1, node.start_mark.column + 1,
                             "`turn_loop` needs a mapping (max_turns, max_budget_tokens, structured_output, ...)")]
    for key_node, value_node in node.value:
        key, value = str(key_node.value), value_node.value if isinstance(value_node, yaml.ScalarNode) else None
        at = (path, value_node.start_mark.line + 1, value_node.start_mark.column + 1)
        if key in _LOOP_NUMBERS and isinstance(value, str) and value.isdigit():
            out[key] = int(value)
        elif key in _LOOP_FLAGS and value in ("true", "false"):
            out[key] = value == "true"
        elif key == "output_schema" and isinstance(value, str):
            schema_path = Path(path).parent / value
            try:
                out["output_schema"] = json.loads(read_text(schema_path, str(schema_path)))
            except LocatedError as err:
                problems.extend(err.problems)
                continue
            except ValueError as err:
                problems.append(Problem(*at, f"output schema {value} is not JSON: {err}"))
                continue
            out["schema_source"], out["structured_output"] = value, True
        else:
            problems.append(Problem(*at, f"`turn_loop.{key}`: expected " + (
                "a whole number" if key in _LOOP_NUMBERS else "true or false" if key in _LOOP_FLAGS
                else "a JSON Schema file" if key == "output_schema" else
                "one of " + ", ".join(_LOOP_NUMBERS + _LOOP_FLAGS + ("output_schema",)))))
    return out, problems


def with_fail_under(gate: Gate, percent: float) -> Gate:
    """The gate plus `--fail-under PCT`: every model's every criterion verified at PCT percent or more (kinds and
    models are never summed, so there is no total to compare, as coverage.py has)."""
    return Gate([*gate.rules, Rule(FAIL_UNDER, ">=", percent / 100, 0)], gate.source, gate.waivers, gate.exclusions,
                gate.implicit)


FAIL_UNDER = "fail_under"


def evaluate_gate(gate: Gate, report: CoverageReport, today: dt.date | None = None,
                  baseline=None, baseline_source: str | None = None) -> GateResult:
    """Apply the rules; waived elements (in force) neither fail a rule nor count against a threshold.
    With a baseline (mbt.measure.baseline) the ratchet replaces the default limits the gate file did not write, each
    by the baseline's figure (a baseline without the figure leaves its default limit in force); limits written in a
    gate file still apply as written."""
    failures: list[GateFailure] = []
    states = waiver_states(gate.waivers, report, today or dt.date.today())
    waived = active_waivers(states)
    for w in states:
        if w.status == "expired":
            failures.append(GateFailure(rule="waivers", expected=f"expires {w.expires}", actual=w.element,
                                        elements=[w.element],
                                        message=f"the waiver for {w.element} expired on {w.expires} "
                                                f"({gate.source}:{w.line}); cover the element or renew the waiver"))
        elif w.status == "unknown":
            failures.append(GateFailure(rule="waivers", expected="an element of a loaded model", actual=w.element,
                                        elements=[w.element],
                                        message=f"the waiver at {gate.source}:{w.line} names {w.element}"
                                                f"{' in model ' + w.model if w.model else ''}, which no loaded model "
                                                "has (renamed or removed?)"))
    rules = gate.rules
    if baseline is not None:
        replaced = ratcheted(baseline) & set(gate.implicit)
        rules = [r for r in rules if r.key not in replaced]
        failures.extend(ratchet(baseline, baseline_source or "baseline", report, waived))
    for rule in rules:
        if is_answer_rule(rule.key):
            continue  # measured on judged answers by mbt eval, which reads the same gate file
        if rule.key in RUN_METRICS or rule.key in RUN_COUNTS:
            # Measured on observed runs only: `mbt coverage` cannot tell, so the rule is not met (never green unseen).
            failures.append(GateFailure(rule=rule.key, expected=rule.describe(), actual=None,
                                        message=f"gate rule `{rule.key}` is measured on observed runs: "
                                                "use `mbt runs --runs PATH`"))
        if (rule.key in NEEDS_MUTANTS or rule.key.endswith(".mutation")) and report.mutation is None:
            failures.append(GateFailure(rule=rule.key, expected=rule.describe(), actual=None,
                                        message=f"gate rule `{rule.key}` needs the mutation run: add --mutants"))
            continue
        if rule.key in COUNTS:
            actual, elements = _count(rule.key, report, waived)
            if not _OPS[rule.op](actual, rule.threshold):
                # Counted per expectation; the goldens holding them are said beside (a golden may hold several).
                holding = GOLDENS_HOLDING.get(rule.key)
                held = f" (in {goldens_text(getattr(report.goldens, holding))})" if holding else ""
                failures.append(GateFailure(rule=rule.key, expected=f"{rule.op} {rule.threshold:g}", actual=actual,
                                            message=f"{rule.key} is {actual}{held}, the gate requires {rule.op} "
                                                    f"{rule.threshold:g}",
                                            elements=elements))
            continue
        if rule.key == FAIL_UNDER:
            failures.extend(_fail_under(rule, report, waived))
            continue
        parts = rule.key.split(".")
        weighted = parts[-1] == "weighted"
        if weighted:
            parts = parts[:-1]
        if parts[-1] == ANSWER_VERIFIED:
            failures.extend(_answer_verified_failures(rule, parts[:-1], weighted, report))
            continue
        if len(parts) != 2:
            failures.append(GateFailure(rule=rule.key, expected=rule.describe(), actual=None,
                                        message=f"gate key `{rule.key}` is not kind.criterion or model.criterion"))
            continue
        scope, criterion = parts
        if criterion == "mutation" and report.mutation is not None:
            failures.extend(_mutation_failures(rule, scope, report))
            continue
        matched = False
        for m in report.models:
            if scope not in (m.kind, m.model):
                continue
            if criterion == REQUIREMENT:
                counted = [r for r in m.requirements if r.status != "infeasible"]
                if not counted:
                    continue
                matched = True
                share = sum(1 for r in counted if r.status == "verified") / len(counted)
                if not _OPS[rule.op](share, rule.threshold):
                    missed = [r.requirement for r in counted if r.status != "verified"]
                    failures.append(GateFailure(
                        rule=rule.key, expected=f"{rule.op} {rule.threshold:g}", actual=share, elements=missed,
                        message=f"{m.model}: {share:.1%} of its requirements are verified (every element carrying "
                                f"the tag), the gate requires {rule.op} {rule.threshold:.1%}; not verified: "
                                + ", ".join(missed[:10]) + (" ..." if len(missed) > 10 else "")))
                continue
            numbers = _verified(m, criterion, waived)
            if numbers is None:
                continue
            matched = True
            ratio = numbers.weighted_ratio if weighted else numbers.ratio
            if ratio is None:
                continue  # nothing to cover
            if not _OPS[rule.op](ratio, rule.threshold):
                failures.append(GateFailure(
                    rule=rule.key, expected=f"{rule.op} {rule.threshold:g}", actual=ratio,
                    message=f"{m.model}: {criterion}{' (weighted)' if weighted else ''} coverage is "
                            f"{ratio:.1%}, the gate requires {rule.op} {rule.threshold:.1%}"))
        if not matched:
            failures.append(GateFailure(rule=rule.key, expected=rule.describe(), actual=None,
                                        message=f"gate rule `{rule.key}` matches no loaded model and criterion"))
    return GateResult(enabled=True, passed=not failures, source=gate.source, failures=failures, waivers=states,
                      baseline=baseline_source if baseline is not None else None)


def _verified(m, criterion: str, waived: dict[str, set[str]]):
    c = m.criterion(criterion)
    if c is None:
        return None
    if waived.get(m.model):  # waived elements leave the threshold's numerator and denominator
        return numbers_for([ec for ec in m.elements if ec.element.criterion == criterion
                            and ec.element.id not in waived[m.model]], True)
    return c.verified


def _fail_under(rule: Rule, report: CoverageReport, waived: dict[str, set[str]]) -> list[GateFailure]:
    failures = []
    for m in report.models:
        for c in m.criteria:
            numbers = _verified(m, c.criterion, waived)
            ratio = numbers.ratio if numbers is not None else None
            if ratio is not None and not _OPS[rule.op](ratio, rule.threshold):
                failures.append(GateFailure(
                    rule=FAIL_UNDER, expected=f">= {rule.threshold:g}", actual=ratio,
                    message=f"{m.model}: {c.criterion} coverage is {ratio:.1%}, --fail-under requires "
                            f">= {rule.threshold:.1%}"))
    return failures


def _answer_verified_failures(rule: Rule, parts: list[str], weighted: bool,
                              report: CoverageReport) -> list[GateFailure]:
    """`SCOPE.CRITERION.answer_verified >= x`: each matching model's share of the criterion's elements an answer
    can verify that a judged answer verified (mbt.answers.coverage). Without eval reports the rule is not met."""
    def failed(message: str, actual: float | None = None, elements: list[str] | None = None) -> GateFailure:
        return GateFailure(rule=rule.key, expected=rule.describe() if actual is None else
                           f"{rule.op} {rule.threshold:g}", actual=actual, message=message, elements=elements or [])

    if len(parts) != 2:
        return [failed(f"gate key `{rule.key}` is not kind.criterion.answer_verified or "
                       "model.criterion.answer_verified")]
    if report.answers is None:
        return [failed(f"gate rule `{rule.key}` needs judged answers: add --answers EVAL.json (an `mbt eval "
                       "--model` report)")]
    scope, criterion = parts
    found = [(m, figure) for m in report.answers.models if scope in (m.kind, m.model)
             for figure in [m.figure(criterion)] if figure is not None]
    if not found:
        return [failed(f"gate rule `{rule.key}` matches no loaded model whose `{criterion}` elements an answer "
                       "can verify")]
    out = []
    for m, figure in found:
        ratio = figure.verified.weighted_ratio if weighted else figure.verified.ratio
        if ratio is None or _OPS[rule.op](ratio, rule.threshold):
            continue  # nothing to verify (every such element infeasible), or met
        missed = [e.element for e in m.elements if e.criterion == criterion and e.status != "verified"]
        out.append(failed(f"{m.model}: {criterion}{' (weighted)' if weighted else ''} verified by a judged answer "
                          f"is {ratio:.1%}, the gate requires {rule.op} {rule.threshold:.1%} (not verified: "
                          + ", ".join(missed[:10]) + (" ..." if len(missed) > 10 else "") + ")", ratio, missed))
    return out


def _mutation_failures(rule: Rule, scope: str, report: CoverageReport) -> list[GateFailure]:
    """`<kind>.mutation >= x` / `<model>.mutation >= x`: each matching model's mutation score."""
    assert report.mutation is not None
    found = [m for m in report.mutation.models if scope in (m.kind, m.model) and m.score is not None]
    if not found:
        return [GateFailure(rule=rule.key, expected=rule.describe(), actual=None,
                            message=f"gate rule `{rule.key}` matches no model with a mutation score")]
    return [GateFailure(rule=rule.key, expected=f"{rule.op} {rule.threshold:g}", actual=m.score,
                        message=f"{m.model}: mutation score is {m.score:.1%}, the gate requires {rule.op} "
                                f"{rule.threshold:.1%}")
            for m in found if m.score is not None and not _OPS[rule.op](m.score, rule.threshold)]


def _count(key: str, report: CoverageReport, waived: dict[str, set[str]] | None = None) -> tuple[int, list[str]]:
    if key == "forbidden_uncovered":  # the uncovered elements of every alarm criterion (mbt.kind.Criterion.alarm)
        waived = waived or {}
        ids = [e.element.id for m in report.models for e in m.uncovered_alarms()
               if e.element.id not in waived.get(m.model, set())]
        return len(ids), ids
    if key == "contradictions":
        return report.count("contradictions"), []
    if key == "forbidden_expected":
        return report.count("forbidden_expected"), sorted({f.element for f in report.forbidden_expected})
    if key == "divergences":
        return report.count("divergences"), []
    if key == "unbound_turns":
        return report.count("unbound_turns"), []
    if key == "duplicates":
        red = report.mutation.redundancy if report.mutation is not None else None
        ids = [d.id for d in red.duplicates] if red is not None else []
        return len(ids), ids
    return report.count("invalid_cases"), []
