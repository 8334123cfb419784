"""Waivers in the gate file: an element accepted as uncovered for a reason until an expiry date (expired ones fail)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import yaml

from mbt.errors import Problem
from mbt.measure.coverage import CoverageReport, WaiverState


@dataclass(frozen=True)
class Waiver:
    element: str
    reason: str
    expires: dt.date
    model: str | None  # None: the element id in any loaded model
    line: int


def parse_waivers(node, path: str) -> tuple[list[Waiver], list[Problem]]:
    """`waivers:` is a list of {element, reason, expires: YYYY-MM-DD, model?}; every problem is located."""
    problems: list[Problem] = []
    out: list[Waiver] = []

    def problem(n, message, hint=None):
        problems.append(Problem(path, n.start_mark.line + 1, n.start_mark.column + 1, message, hint=hint))

    if not isinstance(node, yaml.SequenceNode):
        problem(node, "`waivers` must be a list of {element, reason, expires} entries")
        return out, problems
    for item in node.value:
        if not isinstance(item, yaml.MappingNode):
            problem(item, "a waiver is a mapping with `element`, `reason` and `expires`")
            continue
        fields = {str(k.value): v for k, v in item.value}
        bad = False
        for required in ("element", "reason", "expires"):
            if required not in fields or not isinstance(fields[required], yaml.ScalarNode) \
                    or not str(fields[required].value).strip():
                problem(item, f"the waiver needs `{required}`",
                        "e.g. {element: forbidden:claim_reset_done, reason: ..., expires: 2026-12-31}")
                bad = True
        for key in fields:
            if key not in ("element", "reason", "expires", "model", "owner", "ticket"):
                problem(item, f"unknown waiver field `{key}` (element, reason, expires, model, owner, ticket)")
                bad = True
        if bad:
            continue
        raw_date = str(fields["expires"].value).strip()
        try:
            expires = dt.date.fromisoformat(raw_date)
        except ValueError:
            problem(fields["expires"], f"`expires` must be a date YYYY-MM-DD, not {raw_date!r}")
            continue
        model = fields.get("model")
        out.append(Waiver(element=str(fields["element"].value).strip(), reason=str(fields["reason"].value).strip(),
                          expires=expires, model=str(model.value).strip() if model is not None else None,
                          line=item.start_mark.line + 1))
    return out, problems


def waiver_states(waivers: list[Waiver], report: CoverageReport, today: dt.date) -> list[WaiverState]:
    """What each waiver does in this run: active, expired (fails the gate), unused (covered now) or unknown."""
    states = []
    for w in waivers:
        matches = [(m.model, ec) for m in report.models if w.model in (None, m.model)
                   for ec in m.elements if ec.element.id == w.element]
        if not matches:
            status = "unknown"
        elif w.expires < today:
            status = "expired"
        elif all(ec.verified_by for _, ec in matches):
            status = "unused"
        else:
            status = "active"
        states.append(WaiverState(element=w.element, model=w.model, reason=w.reason, expires=w.expires.isoformat(),
                                  status=status, line=w.line,
                                  models=sorted({name for name, _ in matches})))
    return states


def active_waivers(states: list[WaiverState]) -> dict[str, set[str]]:
    """Model name -> element ids whose waiver is in force (an uncovered element there does not fail the gate)."""
    out: dict[str, set[str]] = {}
    for s in states:
        if s.status == "active":
            for m in s.models:
                out.setdefault(m, set()).add(s.element)
    return out
