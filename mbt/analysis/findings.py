"""A finding of `mbt check`: a code, a severity, a location, a message, and optionally related places and a witness."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal

from pydantic import BaseModel, field_validator

from mbt.analysis.counterexample import Counterexample
from mbt.model.common import Location

FindingSeverity = Literal["error", "warning", "info"]


@dataclass(frozen=True)
class Check:
    """One check of `mbt check`: its stable code and name, its severity, and one sentence of what it finds (the first
    of its section in docs/checks.md, where a bad and a good example show it)."""

    code: str
    name: str
    severity: str
    doc: str


CHECKS: dict[str, Check] = {}  # code -> the check, every kind's: docs/checks.md lists exactly these


def check(code: str, name: str, severity: str, doc: str) -> Check:
    """Declare a check (at import of its module). A code may be declared again under another severity (TBL001 is
    info where the outputs' defaults answer), never under another name."""
    found = Check(code, name, severity, doc)
    known = CHECKS.setdefault(code, found)
    if known.name != name:
        raise ValueError(f"check {code} is declared as `{known.name}` and as `{name}`")
    return found


@dataclass(frozen=True)
class CheckOptions:
    """Settings of `mbt check` from the command line: every kind's check receives them (KindSupport.check), and the
    kind that explores (the invariant checks) owns their defaults: None is "the kind's own" (20 steps, 200,000
    configurations for the invariants; docs/checks.md)."""

    depth: int | None = None  # how many steps an exploration goes (`mbt check --depth N`)
    max_configurations: int | None = None  # where an exploration stops (INV004)


class Finding(BaseModel):
    code: str  # stable, e.g. "FSM003"; documented in docs/checks.md
    name: str  # readable slug, e.g. "unreachable-state"
    severity: FindingSeverity
    location: Location
    message: str
    model: str | None = None
    related: list[Location] = []  # e.g. the forbid that a transition matches
    witness: dict[str, Any] | None = None  # a satisfying valuation for solver findings

    @field_validator("witness")
    @classmethod
    def _plain_numbers(cls, witness: dict[str, Any] | None) -> dict[str, Any] | None:
        """A policy's decimal numbers become JSON numbers (int when whole), so every report format can write them;
        two-place amounts keep their digits (float's shortest repr of 1000.01 is 1000.01)."""
        if not witness or not any(isinstance(v, Decimal) for v in witness.values()):
            return witness
        return {k: (int(v) if v == v.to_integral_value() else float(v)) if isinstance(v, Decimal) else v
                for k, v in witness.items()}
    counterexample: Counterexample | None = None  # a run that violates an invariant (INV001)

    def render(self) -> str:
        text = f"{self.location}: {self.severity}: {self.message} [{self.code} {self.name}]"
        for place in self.related:
            text += f"\n    see {place}"
        if self.witness:
            shown = ", ".join(f"{k} = {_show(v)}" for k, v in sorted(self.witness.items()))
            text += f"\n    witness: {shown}"
        if self.counterexample is not None:
            text += "".join(f"\n    {line}" for line in self.counterexample.lines())
        return text


def _show(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace('"', '\\"') + '"'
    return str(value)


SCHEMA_VERSION = "1.0"


class CheckReport(BaseModel):
    schema_version: str = SCHEMA_VERSION
    files: list[str]
    models: list[str]
    findings: list[Finding]

    def count(self, severity: str) -> int:
        return sum(1 for f in self.findings if f.severity == severity)
