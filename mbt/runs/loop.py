"""Seed 003's turn loop judged as it runs: stop reasons, budgets, structured output and routing, per run.

These criteria speak of the loop, not of the business model, so they judge any run whatever model it is judged on:

- a turn that stops with anything but `completed` (`max_turns_reached`, `max_budget_reached`, ...) ends the loop; a
  later turn is `continued_after_stop`;
- more turns than a declared `max_turns` is `over_turn_budget`; more tokens (input + output) than a declared
  `max_budget_tokens` is `over_token_budget`, at the turn whose usage passes it (at the run's end when only totals
  are recorded);
- with structured output declared, every answer must parse as JSON (`invalid_structured_output`) and, with a
  schema, validate against it;
- with `calls_within_candidates`, a call the agent made (a permission denial records one) must be among the router's
  candidates of its turn (`matched_tools`): else `call_outside_candidates`;
- with `stable_commands`, every turn's `matched_commands` equal the first turn's: else `unstable_routing`.

Budgets come from the run's own configuration (a session's `config`) or the gate file's `turn_loop:` section; the
run's own wins. A declared criterion whose evidence the run lacks (no usage, no answers, no turn records) is a gap.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from mbt.runs.steps import ObservedRun

LOOP_DEVIATIONS = ("continued_after_stop", "over_turn_budget", "over_token_budget", "invalid_structured_output",
                   "call_outside_candidates", "unstable_routing")
COMPLETED = "completed"


@dataclass(frozen=True)
class LoopRules:
    """The gate file's `turn_loop:` section (docs/runs.md): what every run's loop is held to."""

    max_turns: int | None = None
    max_budget_tokens: int | None = None
    structured_output: bool = False
    output_schema: dict[str, Any] | None = None  # a JSON Schema every structured answer validates against
    schema_source: str | None = None
    calls_within_candidates: bool = False
    stable_commands: bool = False


_NO_RULES = LoopRules()


@dataclass
class LoopFinding:
    type: str
    step: int  # 1-based index of the observed step it concerns
    where: str
    message: str
    expected: Any = None
    actual: Any = None


def _turn_of_step(run: ObservedRun, step: int) -> int | None:
    """The index of the turn record that the (1-based) observed step belongs to."""
    found = None
    for i, t in enumerate(run.turns):
        if t.step < step:
            found = i
    return found


def judge_loop(run: ObservedRun, rules: LoopRules) -> tuple[LoopFinding | None, list[str]]:
    """The run's first loop finding (by step) and the gaps: declared criteria the run shows no evidence for."""
    if not run.turns and run.max_turns is None and run.max_budget_tokens is None and not run.structured_output and \
            rules == _NO_RULES:  # nothing declared and no turn records: nothing to judge (most traces)
        return None, []
    findings: list[LoopFinding] = []
    gaps: list[str] = []
    turns = run.turns
    for i, t in enumerate(turns[:-1]):
        if t.stop_reason is not None and t.stop_reason != COMPLETED:
            nxt = turns[i + 1]
            findings.append(LoopFinding("continued_after_stop", nxt.step + 1, nxt.where,
                                        f"turn {i + 1} stopped with `{t.stop_reason}`; the loop went on to turn "
                                        f"{i + 2}", expected="the loop ends", actual=nxt.prompt))
            break
    max_turns = run.max_turns if run.max_turns is not None else rules.max_turns
    if max_turns is not None and turns and len(turns) > max_turns:
        t = turns[max_turns]
        findings.append(LoopFinding("over_turn_budget", t.step + 1, t.where,
                                    f"{len(turns)} turns; the budget is {max_turns}", expected=max_turns,
                                    actual=len(turns)))
    budget = run.max_budget_tokens if run.max_budget_tokens is not None else rules.max_budget_tokens
    if budget is not None:
        finding = _token_budget(run, budget)
        if isinstance(finding, str):
            gaps.append(finding)
        elif finding is not None:
            findings.append(finding)
    if run.structured_output or (run.structured_output is None and rules.structured_output):
        answers = [(n, s) for n, s in enumerate(run.steps, start=1) if s.kind == "assistant"]
        if not answers or not run.records_assistant_texts:
            gaps.append(f"{run.where}: structured output is declared and the run records no answer: not judged")
        for n, s in answers:
            problem = _structured_problem(s.text or "", rules)
            if problem is not None:
                findings.append(LoopFinding("invalid_structured_output", n, s.where, problem, actual=s.text))
                break
    if rules.calls_within_candidates:
        for n, s in enumerate(run.steps, start=1):
            if s.kind != "tool_call":
                continue
            index = _turn_of_step(run, n)
            candidates = run.turns[index].matched_tools if index is not None else None
            if candidates is None:
                gaps.append(f"{s.where}: the run records no router candidates: `calls_within_candidates` not judged")
                break
            if s.tool not in candidates:
                findings.append(LoopFinding("call_outside_candidates", n, s.where,
                                            f"{s.tool} is called; the router's candidates this turn are "
                                            f"{', '.join(candidates) or 'none'}", expected=list(candidates),
                                            actual=s.tool))
                break
    if rules.stable_commands:
        recorded = [t for t in turns if t.matched_commands is not None]
        if not recorded:
            gaps.append(f"{run.where}: the run records no matched commands: `stable_commands` not judged")
        for t in recorded[1:]:
            if t.matched_commands != recorded[0].matched_commands:
                findings.append(LoopFinding("unstable_routing", t.step + 1, t.where,
                                            f"matched commands {list(t.matched_commands or ())} differ from the "
                                            f"first turn's {list(recorded[0].matched_commands or ())}",
                                            expected=list(recorded[0].matched_commands or ()),
                                            actual=list(t.matched_commands or ())))
                break
    first = min(findings, key=lambda f: f.step, default=None)
    return first, gaps


def _token_budget(run: ObservedRun, budget: int) -> LoopFinding | str | None:
    """The turn whose usage passes the budget, the run's end when only totals say so, or a gap (no usage)."""
    spent = 0
    per_turn = [t for t in run.turns if t.input_tokens is not None or t.output_tokens is not None]
    for t in per_turn:
        spent += (t.input_tokens or 0) + (t.output_tokens or 0)
        if spent > budget:
            return LoopFinding("over_token_budget", t.step + 1, t.where,
                               f"{spent} tokens used by this turn; the budget is {budget}", expected=budget,
                               actual=spent)
    ctx = run.context
    if ctx.input_tokens is None and ctx.output_tokens is None and not per_turn:
        return f"{run.where}: a token budget is declared and the run records no usage: not judged"
    total = (ctx.input_tokens or 0) + (ctx.output_tokens or 0)
    if total > budget:
        where = run.steps[-1].where if run.steps else run.where
        return LoopFinding("over_token_budget", max(len(run.steps), 1), where,
                           f"{total} tokens used in all; the budget is {budget}", expected=budget, actual=total)
    return None


def _structured_problem(text: str, rules: LoopRules) -> str | None:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as err:
        return f"the answer is not JSON ({str(err)[:120]}): {text[:80]!r}"
    if rules.output_schema is not None:
        from jsonschema import Draft202012Validator  # only where a schema is declared

        error = next(iter(Draft202012Validator(rules.output_schema).iter_errors(value)), None)
        if error is not None:
            where = "/".join(str(p) for p in error.absolute_path) or "(the answer)"
            return f"the answer does not match {rules.schema_source or 'the output schema'} at {where}: " \
                   f"{error.message[:160]}"
    return None
