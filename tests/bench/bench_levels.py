"""The calibrations of seed 004's levels 0 and 1 on mbt's labelled set (tests/data/levels/alignment.yaml): the level-1
alignment rule's thresholds and the level-0 threshold τ, with their precision and recall on the calibration pairs and
on the held-out ones. docs/levels.md shows this output (tests/test_levels.py compares them).

    python tests/bench/bench_levels.py
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from mbt.measure import alignment, embedding  # noqa: E402 - after the path
from mbt.measure.alignment import labelled_pairs, score  # noqa: E402

LABELLED = ROOT / "tests" / "data" / "levels" / "alignment.yaml"


def _ratio(right: int, total: int) -> str:
    return f"{right / total:.3f} ({right}/{total})" if total else "n/a (0/0)"


def report_lines() -> list[str]:
    pairs = labelled_pairs(yaml.safe_load(LABELLED.read_text(encoding="utf-8")))
    parts = {name: [p for p in pairs if p.split == name] for name in ("calibration", "heldout")}
    labels = Counter((p.split, p.label) for p in pairs)
    lines = [f"labelled set {LABELLED.relative_to(ROOT)}: {len(pairs)} (unit, golden) pairs in English, Chinese, "
             "Vietnamese"]
    for name, part in parts.items():
        lines.append(f"  {name:<11} {len(part):>3} pairs: " + ", ".join(
            f"{labels[(name, label)]} {label}" for label in ("covers", "partial", "related", "unrelated")))
    rule = alignment.calibrate(parts["calibration"])
    lines += ["", f"level 1, {alignment.RULE_VERSION}: calibrated thresholds FACT_OVERLAP {rule.fact_overlap}, "
                  f"UNIT_OVERLAP {rule.unit_overlap}, GOLDEN_OVERLAP {rule.golden_overlap}",
              f"  {'pairs':<11} {'aligned: precision':>22} {'not aligned: precision':>26} {'decided':>16}"]
    for name, part in parts.items():
        s = score(rule, part)
        lines.append(f"  {name:<11} {_ratio(s.aligned_right, s.aligned):>22} {_ratio(s.apart_right, s.apart):>26} "
                     f"{_ratio(s.decided, s.pairs):>16}")
    tau = embedding.calibrate_tau(parts["calibration"])
    lines += ["", f"level 0, {embedding.EMBEDDING}: τ = {tau:.2f} (the largest with precision >= "
                  f"{embedding.TARGET_PRECISION:.2f} on the calibration pairs; near = covers or partial)",
              f"  {'pairs':<11} {'precision':>16} {'recall':>16}"]
    for name, part in parts.items():
        within, right, positives = embedding.precision_recall(part, tau)
        lines.append(f"  {name:<11} {_ratio(right, within):>16} {_ratio(right, positives):>16}")
    return lines


if __name__ == "__main__":
    print("\n".join(report_lines()))
