"""Every model file of the examples and the test cases (models/, tests/cases, tests/data), for tests that compare mbt's
parsing with lark's own on all of them."""

from __future__ import annotations

from pathlib import Path

from mbt.parsing.loader import model_suffixes

ROOT = Path(__file__).resolve().parents[1]
MODEL_FILES = sorted(p for folder in ("models", "tests/cases", "tests/data") for p in (ROOT / folder).rglob("*")
                     if p.suffix in model_suffixes())
