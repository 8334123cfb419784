"""What every kind's judge shares: the campaign tally, and mbt's own statuses for one golden, read from its report."""

from __future__ import annotations

from dataclasses import dataclass, field

from mbt.api import measure
from mbt.goldens.cases import GoldenCase
from mbt.goldens.loader import GoldenSet
from mbt.model.common import ModelBase

EXERCISED, VERIFIED = "exercised", "verified"


@dataclass
class Campaign:
    """One differential campaign: how many goldens and element statuses were compared, and every disagreement."""

    kind: str
    cases: int = 0
    elements: int = 0
    disagreements: list[str] = field(default_factory=list)

    def compare(self, label: str, judged: dict[str, str], measured: dict[str, str]) -> None:
        """Judge and mbt must give every element the same status (absent = neither exercised nor verified)."""
        self.cases += 1
        for element in sorted(set(judged) | set(measured)):
            self.elements += 1
            if judged.get(element) != measured.get(element):
                self.disagreements.append(f"{label}: {element}: judge says {judged.get(element)}, "
                                          f"mbt says {measured.get(element)}")

    def line(self) -> str:
        return (f"{self.kind}: {self.cases} goldens, {self.elements} element statuses compared, "
                f"{len(self.disagreements)} disagreements")


def mbt_statuses(model: ModelBase, case: GoldenCase) -> dict[str, str]:
    """Element id -> "verified" / "exercised" as `mbt coverage` reports them for this one golden on this model."""
    return mbt_statuses_many(model, [case])[case.id]


def mbt_statuses_many(model: ModelBase, cases: list[GoldenCase]) -> dict[str, dict[str, str]]:
    """`mbt_statuses` for several goldens (ids unique) in one coverage run: the model is prepared once."""
    return statuses_by_case(measure([model], GoldenSet(cases=cases)), cases)


def statuses_by_case(report, cases: list[GoldenCase]) -> dict[str, dict[str, str]]:
    """Case id -> element id -> "verified" / "exercised", read from a one-model coverage report."""
    out: dict[str, dict[str, str]] = {case.id: {} for case in cases}
    for row in report.models[0].elements:
        for case_id in row.exercised_by:
            out[case_id][row.element.id] = EXERCISED
        for case_id in row.verified_by:
            out[case_id][row.element.id] = VERIFIED
    return out
