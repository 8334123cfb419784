"""Decision cases: a table's inputs and the expected outputs, as a case of their own or inside a conversation case.

    {"id": "RF-001", "table": "refund", "inputs": {"region": "EU", "amount": 120.5}, "expect": {"decision": "approve"}}

A conversation case may carry `decisions: [{table, inputs, expect}, ...]` (or one `decision:` on a turn): the
table's replayer checks them, so a conversation golden can cover table rules too (the FSM replayer ignores them).
"""

from __future__ import annotations

from typing import Any

import msgspec

# Keys a decision case might use for its expected outputs by mistake: refused rather than kept as unchecked extras.
LIKELY_TYPOS = {"expected", "expects", "output", "outputs", "expected_output", "expected_outputs", "result",
                "expected_result", "input"}


class DecisionCheck(msgspec.Struct):
    """One evaluation of a table: the inputs, and what the golden expects (if it says). Built by decision_from,
    which checks every field (a struct, as the cases are: mbt.goldens.cases)."""

    table: str
    inputs: dict[str, Any] = {}
    expect: Any = None  # {output: value}, a bare value for a one-output table, or a list for multi-hit tables
    expect_given: bool = False  # `expect: null` (no result expected) differs from no `expect` at all
    expect_error: bool = False  # the golden expects the hit policy to fail (UNIQUE / ANY violated)
    turn: int | None = None  # for a check written on a turn of a conversation


def decision_from(raw: Any, where: str, default_table: str | None = None, turn: int | None = None) -> DecisionCheck:
    if not isinstance(raw, dict):
        raise ValueError(f"{where} must be a mapping with `table`, `inputs` and `expect`")
    data = dict(raw)
    table = data.pop("table", None) or default_table
    if not table:
        raise ValueError(f"{where} has no `table`")
    inputs = data.pop("inputs", {})
    if not isinstance(inputs, dict):
        raise ValueError(f"{where}: `inputs` must map input names to values")
    out: dict[str, Any] = {"table": str(table), "inputs": {str(k): v for k, v in inputs.items()}, "turn": turn}
    if "expect" in data:
        out["expect"], out["expect_given"] = data.pop("expect"), True
    if "expect_error" in data:
        flag = data.pop("expect_error")
        if not isinstance(flag, bool):
            raise ValueError(f"{where}: `expect_error` must be true or false")
        out["expect_error"] = flag
    if data:
        raise ValueError(f"{where}: unknown key(s) {', '.join(sorted(map(str, data)))} "
                         "(a decision has table, inputs, expect, expect_error)")
    return DecisionCheck(**out)


def normalise_decisions(data: dict[str, Any], out: dict[str, Any]) -> bool:
    """Move a case's decision fields from `data` into `out` (GoldenCase fields); True for a decision case."""
    checks: list[DecisionCheck] = []
    is_decision_case = "table" in data
    if is_decision_case:
        misspelt = sorted(k for k in data if k in LIKELY_TYPOS)
        if misspelt:
            raise ValueError(f"unknown key `{misspelt[0]}` in a decision case; the expected outputs go under `expect`")
        single = {k: data.pop(k) for k in ("table", "inputs", "expect", "expect_error") if k in data}
        checks.append(decision_from(single, "the decision"))
        out.setdefault("model", checks[0].table)
    listed = data.pop("decisions", None)
    if listed is not None and not isinstance(listed, list):
        raise ValueError("`decisions` must be a list of {table, inputs, expect} mappings")
    for i, raw in enumerate(listed or []):
        checks.append(decision_from(raw, f"decision {i + 1}"))
    turns = data.get("turns")
    if isinstance(turns, list) and any(isinstance(t, dict) and "decision" in t for t in turns):
        turns = data["turns"] = [dict(t) if isinstance(t, dict) else t for t in turns]  # the caller's data stays
        for number, turn in enumerate(turns, start=1):
            if isinstance(turn, dict) and "decision" in turn:
                checks.append(decision_from(turn.pop("decision"), f"the decision of turn {number}", turn=number))
    if checks:
        out["decisions"] = checks
    return is_decision_case
