"""Gold-file comparison: UPDATE_GOLD=1 pytest rewrites tests/gold/; a mismatch leaves the actual text in tests/actual/."""

from __future__ import annotations

import os
from pathlib import Path

GOLD = Path(__file__).parent / "gold"
ACTUAL = Path(__file__).parent / "actual"


def compare_gold(name: str, actual: str) -> None:
    gold = GOLD / name
    if os.environ.get("UPDATE_GOLD"):
        gold.parent.mkdir(parents=True, exist_ok=True)
        gold.write_text(actual, encoding="utf-8")
        return
    expected = gold.read_text(encoding="utf-8") if gold.exists() else None
    if expected != actual:
        (ACTUAL / name).parent.mkdir(parents=True, exist_ok=True)
        (ACTUAL / name).write_text(actual, encoding="utf-8")
        raise AssertionError(f"{name} differs from tests/gold/{name}; the actual output is in tests/actual/{name}. "
                             "If the change is intended, regenerate with: UPDATE_GOLD=1 pytest tests/test_ci_reports.py "
                             "tests/test_render.py")
