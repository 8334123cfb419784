"""The gate: what fails CI. Default: any uncovered forbidden element. A YAML gate file adds thresholds and limits."""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from mbt.errors import LocatedError, Problem
from mbt.measure.coverage import CoverageReport, GateFailure, GateResult
from mbt.parsing.loader import read_text

_OPS = {">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt, "==": operator.eq}
_CONDITION = re.compile(r"^\s*(>=|<=|==|>|<)?\s*([0-9]*\.?[0-9]+)\s*(%)?\s*$")
# Counted things a gate may limit (a bare number means "at most").
COUNTS = ("forbidden_uncovered", "contradictions", "divergences", "unbound_turns", "invalid_cases")


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


DEFAULT_GATE = Gate([Rule("forbidden_uncovered", "<=", 0, 0)])


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
            if key in ("required_suites", "report_separately", "critical_failures_allowed", "waivers"):
                continue  # seed 000 release-gate keys about other test suites: not coverage rules
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
            if key in COUNTS:
                rules.append(Rule(key, op or "<=", value, line))
            elif "." in key:
                if value > 1 and not pct:
                    problems.append(Problem(path, line, col, f"`{key}` is a ratio between 0 and 1 (or a percentage)"))
                    continue
                rules.append(Rule(key, op or ">=", value, line))
            else:
                problems.append(Problem(path, line, col, f"unknown gate key `{key}`",
                                        "use kind.criterion (fsm.transition), model.criterion, or one of "
                                        + ", ".join(COUNTS)))

    if root is not None:
        walk(root)
    if problems:
        raise LocatedError(problems)
    if not any(r.key == "forbidden_uncovered" for r in rules):
        rules.insert(0, DEFAULT_GATE.rules[0])
    return Gate(rules, path)


def evaluate_gate(gate: Gate, report: CoverageReport) -> GateResult:
    failures: list[GateFailure] = []
    for rule in gate.rules:
        if rule.key in COUNTS:
            actual, elements = _count(rule.key, report)
            if not _OPS[rule.op](actual, rule.threshold):
                failures.append(GateFailure(rule=rule.key, expected=f"{rule.op} {rule.threshold:g}", actual=actual,
                                            message=f"{rule.key} is {actual}, the gate requires {rule.op} {rule.threshold:g}",
                                            elements=elements))
            continue
        parts = rule.key.split(".")
        weighted = parts[-1] == "weighted"
        if weighted:
            parts = parts[:-1]
        if len(parts) != 2:
            failures.append(GateFailure(rule=rule.key, expected=rule.describe(), actual=None,
                                        message=f"gate key `{rule.key}` is not kind.criterion or model.criterion"))
            continue
        scope, criterion = parts
        matched = False
        for m in report.models:
            if scope not in (m.kind, m.model):
                continue
            c = m.criterion(criterion)
            if c is None:
                continue
            matched = True
            ratio = c.verified.weighted_ratio if weighted else c.verified.ratio
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
    return GateResult(enabled=True, passed=not failures, source=gate.source, failures=failures)


def _count(key: str, report: CoverageReport) -> tuple[int, list[str]]:
    if key == "forbidden_uncovered":
        ids = [e.element.id for m in report.models for e in m.uncovered("forbidden")]
        return len(ids), ids
    if key == "contradictions":
        return len(report.contradictions), []
    if key == "divergences":
        return len(report.divergences), []
    if key == "unbound_turns":
        return len(report.unbound_turns), []
    return len(report.invalid_cases), []
