"""The JSON coverage report (mbt/report/jsonout.py) is byte for byte what pydantic's model_dump_json writes for the same
report, compact and indented, on every shipped example and on reports with the values that format differently."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbt import api
from mbt.goldens.cases import parse_case
from mbt.goldens.loader import GoldenSet
from mbt.measure.coverage import CoverageReport, ElementCoverage
from mbt.report import jsonout
from mbt.report.jsonout import coverage_json, coverage_json_body

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted(str(p) for p in (ROOT / "models").iterdir() if p.suffix in (".fsm", ".inv", ".dt", ".policy"))
# Each example model with what it needs (invariants read their FSM; the policy enforces one).
GROUPS = [[p] if not p.endswith(".inv") else [p[:-4] + ".fsm", p] for p in EXAMPLES]


def assert_same(report: CoverageReport) -> None:
    for indent in (None, 2):
        assert coverage_json(report, indent) == report.model_dump_json(indent=indent)


@pytest.mark.parametrize("models", GROUPS, ids=lambda paths: Path(paths[-1]).name)
def test_each_example_model_and_its_goldens(models):
    report = api.coverage(models, [str(ROOT / "models" / "goldens")], covering_cap=2)
    assert report.models and report.models[0].elements
    assert any(e.exercised_more for m in report.models for e in m.elements)  # the capped counts are written too
    assert_same(report)


def test_every_example_together_with_the_gate_and_review_parts():
    run = api.coverage_run(EXAMPLES, [str(ROOT / "models" / "goldens")], review=True,
                           gate_path=str(ROOT / "models" / "gates" / "release.yaml"))
    assert run.report.gate is not None and run.report.traceability
    assert_same(run.report)


def test_values_that_json_writers_format_differently():
    """Large and tiny floats (1e+16, 5e-324), non-ASCII and control characters in ids and messages, empty lists."""
    _, models = api.load_models([str(ROOT / "tests" / "data" / "reset.fsm")])
    cases = [parse_case({"id": case_id, "turns": [{"event": "request_reset",
                                                   "assert_state": {"state": "collecting", "retries": value}}]},
                        "g\u00e9.jsonl", n)
             for n, (case_id, value) in enumerate([("caf\u00e9-\u4e2d\U0001f600", 1e16), ("tab\tquote\"nul\x00", 5e-324),
                                                   ("line\u2028sep", -0.0), ("big", 1.5e300)], start=1)]
    report = api.measure(models, GoldenSet(cases=cases))
    assert report.contradictions
    assert "1e+16" in coverage_json(report) and "caf\u00e9-\u4e2d\U0001f600" in coverage_json(report)
    assert_same(report)


def test_rows_are_plain_objects_that_pydantic_takes_as_they_are():
    report = api.coverage([str(ROOT / "models" / "recovery.fsm")], [str(ROOT / "models" / "goldens")])
    row = report.models[0].elements[0]
    assert type(row) is ElementCoverage and not hasattr(row, "model_dump")
    again = CoverageReport.model_validate_json(report.model_dump_json())  # read back: rows again, equal
    assert type(again.models[0].elements[0]) is ElementCoverage
    assert again.models[0].elements == report.models[0].elements


def test_the_written_bytes_are_pydantics_with_a_newline_in_pieces_of_any_size(monkeypatch):
    report = api.coverage(EXAMPLES, [str(ROOT / "models" / "goldens")])
    assert len(report.models) > 1 and any(len(m.elements) > 3 for m in report.models)
    for rows in (1, 3, 10_000):  # pieces of one row, of a few, and the whole model in one
        monkeypatch.setattr(jsonout, "ROWS_PER_PIECE", rows)
        pieces = list(coverage_json_body(report))
        assert b"".join(pieces) == (report.model_dump_json() + "\n").encode()
        assert rows > 3 or len(pieces) > sum(len(m.elements) for m in report.models) // rows
    indented = coverage_json_body(report, 2)
    assert bytes(indented) == (report.model_dump_json(indent=2) + "\n").encode()  # type: ignore[arg-type]
    empty = api.coverage(EXAMPLES[:1], [str(ROOT / "models" / "goldens")])
    empty.models = []
    assert b"".join(coverage_json_body(empty)) == (empty.model_dump_json() + "\n").encode()
    rows = [row for m in report.models for row in m.elements]
    assert coverage_json(report).count('"location":') == len(rows)  # a shared location is written on every row
