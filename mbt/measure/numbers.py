"""Coverage numbers that add up: covered/total counts and severity weights; ratios computed in one place."""

from __future__ import annotations

from pydantic import BaseModel, computed_field


class Numbers(BaseModel):
    covered: int = 0
    total: int = 0
    covered_weight: float = 0.0
    total_weight: float = 0.0

    def __add__(self, other: Numbers) -> Numbers:
        return Numbers(covered=self.covered + other.covered, total=self.total + other.total,
                       covered_weight=self.covered_weight + other.covered_weight,
                       total_weight=self.total_weight + other.total_weight)

    def __radd__(self, other):  # lets sum() start from 0
        return self if other == 0 else self.__add__(other)

    @computed_field  # type: ignore[prop-decorator]  # pydantic's documented way; mypy cannot see through it
    @property
    def ratio(self) -> float | None:
        """Plain count ratio; None when there is nothing to cover."""
        return round(self.covered / self.total, 4) if self.total else None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def weighted_ratio(self) -> float | None:
        """Risk-weighted ratio (severity weights)."""
        return round(self.covered_weight / self.total_weight, 4) if self.total_weight else None


def percent_text(value: float | None) -> str:
    """A ratio as people read it (`66.7%`, or `n/a` when there is nothing to cover): every format uses this."""
    return "n/a" if value is None else f"{value * 100:.1f}%"


def percent(value: float | None) -> str:
    """percent_text right-aligned for the text tables."""
    return f"{percent_text(value):>6}"



def goldens_text(count: int) -> str:
    """`1 golden`, `8 goldens`."""
    return f"{count} golden{'' if count == 1 else 's'}"


def in_goldens(count: int, goldens: int, noun: str = "") -> str:
    """A finding counted per expectation beside the goldens that hold one, as every format says it: `13
    contradictions in 8 goldens` (`noun` "contradiction"), or `13 in 8 goldens` without a noun."""
    what = f" {noun}{'' if count == 1 else 's'}" if noun else ""
    return f"{count}{what} in {goldens_text(goldens)}"
