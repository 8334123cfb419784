"""The ratchet: a saved baseline of coverage per model and criterion; the gate fails only when a run falls below it."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ValidationError

from mbt.errors import LocatedError, Problem
from mbt.kind import support
from mbt.measure.coverage import CoverageReport, GateFailure
from mbt.reader import read_text

BASELINE_VERSION = "1.0"
_EPS = 1e-9  # ratios are rounded to 4 places; compare with a tolerance so equal stays equal
COUNTED = ("contradictions", "forbidden_expected", "divergences", "unbound_turns", "invalid_cases")


class CriterionBaseline(BaseModel):
    covered: int
    total: int
    ratio: float | None
    weighted_ratio: float | None


class ModelBaseline(BaseModel):
    kind: str
    criteria: dict[str, CriterionBaseline]
    forbidden_uncovered: list[str] = []  # the uncovered elements of its alarm criteria (the FSM's forbidden ones)


class Baseline(BaseModel):
    schema_version: str = BASELINE_VERSION
    tool: str = "mbt"
    models: dict[str, ModelBaseline]
    counts: dict[str, int] = {}


def baseline_of(report: CoverageReport, waived: dict[str, set[str]] | None = None) -> Baseline:
    """The baseline to save from a run (verified coverage; waived forbidden elements are not recorded as gaps)."""
    waived = waived or {}
    models = {}
    for m in report.models:
        models[m.model] = ModelBaseline(
            kind=m.kind,
            criteria={c.criterion: CriterionBaseline(covered=c.verified.covered, total=c.verified.total,
                                                     ratio=c.verified.ratio, weighted_ratio=c.verified.weighted_ratio)
                      for c in m.criteria},
            forbidden_uncovered=sorted(e.element.id for e in m.uncovered_alarms()
                                       if e.element.id not in waived.get(m.model, set())))
    counts = {name: report.count(name) for name in COUNTED}
    return Baseline(models=models, counts=counts)


def ratcheted(baseline: Baseline) -> set[str]:
    """The gate's counts this baseline ratchets: the uncovered forbidden elements always (as its gap list), the other
    counts when it recorded them (a baseline saved before mbt counted `forbidden_expected` has no figure for it).
    A default limit of these is replaced by the baseline's figure: an unchanged run passes its own ratchet."""
    return {"forbidden_uncovered"} | {key for key in COUNTED if key in baseline.counts}


def baseline_text(report: CoverageReport, waived: dict[str, set[str]] | None = None) -> str:
    return baseline_of(report, waived).model_dump_json(indent=2) + "\n"


def load_baseline(path: str) -> Baseline:
    text = read_text(Path(path), path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise LocatedError([Problem(path, err.lineno, err.colno, f"baseline is not valid JSON: {err.msg}")]) from None
    try:
        baseline = Baseline.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise LocatedError([Problem(path, 1, 1, f"not an mbt baseline ({where}: {first['msg']})",
                                    hint="write one with `mbt coverage ... --save-baseline FILE`")]) from None
    if baseline.schema_version.split(".")[0] != BASELINE_VERSION.split(".")[0]:
        raise LocatedError([Problem(path, 1, 1, f"baseline schema {baseline.schema_version} is not supported "
                                                f"(this mbt reads {BASELINE_VERSION})")])
    return baseline


def ratchet(baseline: Baseline, source: str, report: CoverageReport,
            waived: dict[str, set[str]] | None = None) -> list[GateFailure]:
    """Failures where this run is worse than the baseline: a lower ratio (plain or weighted) for a model and
    criterion both runs have, a newly uncovered forbidden element, or more contradictions/divergences/...;
    models and criteria new since the baseline are held only to the uncovered-forbidden rule."""
    waived = waived or {}
    failures: list[GateFailure] = []
    for m in report.models:
        base = baseline.models.get(m.model)
        known = set(base.forbidden_uncovered) if base is not None else set()
        new_gaps = [e.element.id for e in m.uncovered_alarms()
                    if e.element.id not in known and e.element.id not in waived.get(m.model, set())]
        if new_gaps:
            failures.append(GateFailure(rule="baseline.forbidden_uncovered", expected="no new uncovered forbidden element",
                                        actual=len(new_gaps), elements=new_gaps,
                                        message=f"{m.model}: {len(new_gaps)} forbidden element(s) uncovered that the "
                                                f"baseline ({source}) had covered or did not have"))
        if base is None:
            continue
        for c in m.criteria:
            was = base.criteria.get(c.criterion)
            if was is None:
                continue
            for label, now, before in (("", c.verified.ratio, was.ratio),
                                       (" (weighted)", c.verified.weighted_ratio, was.weighted_ratio)):
                if now is None or before is None or now + _EPS >= before:
                    continue
                failures.append(GateFailure(
                    rule=f"baseline.{m.model}.{c.criterion}{'.weighted' if label else ''}", expected=f">= {before:g}",
                    actual=now, message=f"{m.model}: {c.criterion}{label} coverage fell from {before:.1%} to "
                                        f"{now:.1%} (baseline {source})"))
    now_counts = baseline_of(report).counts
    for key in COUNTED:
        before = baseline.counts.get(key)
        if before is not None and now_counts[key] > before:
            failures.append(GateFailure(rule=f"baseline.{key}", expected=f"<= {before}", actual=now_counts[key],
                                        message=f"{key} rose from {before} to {now_counts[key]} (baseline {source})"))
    return failures


class BaselineDelta(BaseModel):
    """One model and criterion, then and now (the HTML report's comparison with the baseline)."""

    model: str
    criterion: str
    before: CriterionBaseline | None  # None: new since the baseline
    now: CriterionBaseline | None  # None: gone since the baseline
    change: str  # gained | lost | same | new | gone
    # Beside the model's (first) alarm criterion, the model's alarm elements (the FSM's forbidden ones):
    forbidden_gained: list[str] = []  # verified now, uncovered in the baseline
    forbidden_lost: list[str] = []  # uncovered now, not in the baseline's gaps


def compare(baseline: Baseline, report: CoverageReport, waived: dict[str, set[str]] | None = None) -> list[BaselineDelta]:
    """What this run gained and lost against the baseline, per model and criterion: more or fewer verified
    elements (`covered`) decides; a criterion only one side has is new or gone."""
    now = baseline_of(report, waived)
    out: list[BaselineDelta] = []
    for name in sorted(set(baseline.models) | set(now.models)):
        old_m, new_m = baseline.models.get(name), now.models.get(name)
        either = new_m if new_m is not None else old_m
        alarm = _first_alarm_criterion(either.kind) if either is not None else None
        old_c = old_m.criteria if old_m else {}
        new_c = new_m.criteria if new_m else {}
        gained = sorted(set(old_m.forbidden_uncovered if old_m else []) - set(new_m.forbidden_uncovered if new_m else []))
        lost = sorted(set(new_m.forbidden_uncovered if new_m else []) - set(old_m.forbidden_uncovered if old_m else []))
        for criterion in list(new_c) + [c for c in old_c if c not in new_c]:
            before, after = old_c.get(criterion), new_c.get(criterion)
            if before is None:
                change = "new"
            elif after is None:
                change = "gone"
            else:
                change = "gained" if after.covered > before.covered else "lost" if after.covered < before.covered \
                    else "same"
            forbidden = criterion == alarm
            out.append(BaselineDelta(model=name, criterion=criterion, before=before, now=after, change=change,
                                     forbidden_gained=gained if forbidden else [],
                                     forbidden_lost=lost if forbidden else []))
    return out


def _first_alarm_criterion(kind: str) -> str | None:
    """The first criterion the kind declares an alarm (mbt.kind.Criterion.alarm), where a comparison lists the
    model's alarm gaps gained and lost (the baseline records them per model). Asked of the kind, not of the report:
    a model of the baseline may be gone from this run. A kind no longer registered has none."""
    try:
        criteria = support(kind).criteria
    except KeyError:
        return None
    return next((c.name for c in criteria if c.alarm), None)
