"""Judge the judge (issue 34, item 7), part one: a judge's verdicts against human labels.

Per criterion: how many labelled answers, how many the judge decided (pass or fail), the agreement on those, Cohen's
kappa on those, and the confusion table (human pass/fail × judge pass/fail/not_judged/error). Kappa is computed on the
decided answers only: a `not_judged` is no vote, and counting it either way would make an honest judge look worse or
better than it is; the decided share is printed beside it so a judge cannot look good by deciding little.

Cohen's kappa: κ = (p_o − p_e) / (1 − p_e), p_o the observed agreement, p_e the agreement expected by chance from each
rater's own pass rate. Undefined (None) when p_e is 1 (both raters always gave one and the same label).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from mbt.errors import LocatedError, Problem
from mbt.judges.verdicts import VERDICTS, Judge, JudgeInput, VerdictValue

HUMAN = ("pass", "fail")


@dataclass(frozen=True)
class Label:
    """One answer labelled by a human, beside the judge's verdict on it."""

    case_id: str
    criterion: str
    human: str  # pass | fail
    judge: VerdictValue


@dataclass(frozen=True)
class CriterionCalibration:
    """One criterion's figures."""

    criterion: str
    total: int
    decided: int
    agreement: float | None
    kappa: float | None
    confusion: Mapping[tuple[str, str], int]  # (human, judge) -> count

    @property
    def agreement_text(self) -> str:
        return "n/a" if self.agreement is None else f"{self.agreement:.3f}"

    @property
    def kappa_text(self) -> str:
        return "undefined" if self.kappa is None else f"{self.kappa:.3f}"

    def table(self) -> list[str]:
        """The confusion table as text lines: rows human pass/fail, columns the judge's four verdicts."""
        lines = ["human \\ judge " + " ".join(f"{v:>10}" for v in VERDICTS)]
        for human in HUMAN:
            lines.append(f"{human:<14}" + " ".join(f"{self.confusion.get((human, v), 0):>10}" for v in VERDICTS))
        return lines


@dataclass(frozen=True)
class Calibration:
    criteria: tuple[CriterionCalibration, ...]


def cohen_kappa(pairs: Sequence[tuple[str, str]]) -> float | None:
    """Cohen's kappa of two raters' labels (any categories); None when undefined."""
    if not pairs:
        return None
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    first, second = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    chance = sum(first[c] * second[c] for c in set(first) | set(second)) / (n * n)
    if chance == 1:
        return None
    return (observed - chance) / (1 - chance)


def calibrate(labels: Iterable[Label]) -> Calibration:
    """Agreement, Cohen's kappa and the confusion table per criterion (criteria in name order)."""
    by_criterion: dict[str, list[Label]] = {}
    for label in labels:
        by_criterion.setdefault(label.criterion, []).append(label)
    out = []
    for criterion in sorted(by_criterion):
        rows = by_criterion[criterion]
        decided = [(r.human, r.judge) for r in rows if r.judge in HUMAN]
        agreement = sum(h == j for h, j in decided) / len(decided) if decided else None
        out.append(CriterionCalibration(criterion, len(rows), len(decided), agreement, cohen_kappa(decided),
                                        dict(Counter((r.human, r.judge) for r in rows))))
    return Calibration(tuple(out))


def judge_labelled(judge: Judge, labelled: Sequence[tuple[JudgeInput, str]]) -> list[Label]:
    """Run `judge` on human-labelled inputs ((input, human label) pairs) and pair each verdict with its label."""
    verdicts = judge.judge_many([item for item, _ in labelled])
    return [Label(item.case_id, item.criterion.key, human, verdict.verdict)
            for (item, human), verdict in zip(labelled, verdicts)]


def labels_from_rows(rows: Iterable[Mapping[str, object]], judge_field: str = "judge") -> list[Label]:
    """Labels from mappings with `id`, optional `criterion` (accuracy), `label` or `human`, and the judge's verdict."""
    out = []
    for row in rows:
        human = str(row.get("human", row.get("label", "")))
        out.append(Label(str(row.get("id", "")), str(row.get("criterion", "accuracy")), human,
                         row[judge_field]))  # type: ignore[arg-type]
    return out


def read_labels(path: Path) -> list[dict[str, object]]:
    """A JSON Lines file of labelled answers: each line an object with `id`, `expected`, `actual`, `label` (or
    `human`: pass | fail), optionally `criterion`, `question`, `judge` (a recorded verdict). Bad lines are reported
    together, `file:line:1`, as one LocatedError."""
    return [row for _, row in read_labelled(path)]


def read_labelled(path: Path, shown: str | None = None) -> list[tuple[int, dict[str, object]]]:
    """read_labels' rows with their line numbers. `actual` is a text (absent where only a recorded verdict is
    calibrated), `expected` a text or a list of texts (or absent: safety and fluency need none), `criterion` a
    criterion key; a missing or unreadable file is a located error too."""
    from mbt.judges.criteria import KEY
    from mbt.reader import read_text

    where = shown or str(path)
    problems: list[Problem] = []
    rows: list[tuple[int, dict[str, object]]] = []
    text = read_text(path, where)
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue

        def bad(message: str) -> None:
            problems.append(Problem(where, number, 1, message, line))  # noqa: B023 - used at once, in this turn

        try:
            row = json.loads(line)
        except ValueError as error:
            bad(f"not a JSON object: {error}")
            continue
        if not isinstance(row, dict):
            bad("each line is a JSON object")
            continue
        human = row.get("human", row.get("label"))
        expected = row.get("expected")
        if human not in HUMAN:
            bad(f"`label` must be pass or fail, not {human!r}")
        elif "judge" in row and row["judge"] not in VERDICTS:
            bad(f"`judge` must be one of {', '.join(VERDICTS)}")
        elif "actual" in row and not isinstance(row["actual"], str):
            bad("`actual` (the answer that was labelled) must be a text")
        elif expected is not None and not isinstance(expected, str) and not (
                isinstance(expected, list) and all(isinstance(e, str) for e in expected)):
            bad("`expected` must be a text or a list of texts")
        elif "criterion" in row and not (isinstance(row["criterion"], str) and KEY.match(row["criterion"])):
            bad(f"`criterion` must be a criterion key such as accuracy, not {row['criterion']!r}")
        else:
            rows.append((number, row))
    if problems:
        raise LocatedError(problems)
    return rows
