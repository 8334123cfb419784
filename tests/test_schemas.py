"""The JSON Schemas published under docs/schemas/ match the report models (regenerate with `python -m mbt.schemas`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbt.schemas import REPORTS, schema_text

SCHEMAS = Path(__file__).resolve().parents[1] / "docs" / "schemas"


@pytest.mark.parametrize("name", sorted(REPORTS))
def test_published_schema_is_current(name):
    published = (SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8")
    assert published == schema_text(name), "run: python -m mbt.schemas docs/schemas"
