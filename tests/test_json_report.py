"""The JSON coverage report (schema 3.0, mbt/report/jsonout.py): expanded by the rule docs/user-guide.md states (rows
as arrays of element_columns' cells, the inferred cells at a row's end left out, covering goldens as indices into
golden_ids) it is exactly what pydantic's model_dump_json writes for the in-memory report; it validates against the
published schema; and it is written the same in pieces of any size, compact or indented."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import jsonschema
import pytest

from mbt import api
from mbt.goldens.cases import parse_case
from mbt.goldens.loader import GoldenSet
from mbt.measure.coverage import CoverageReport, ElementCoverage
from mbt.model.common import Severity, Status
from mbt.report import jsonout
from mbt.report.jsonout import coverage_json, coverage_json_body, with_coverage_json
from tests.json_report import ALWAYS, COLUMNS, cells, expanded

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted(str(p) for p in (ROOT / "models").iterdir() if p.suffix in (".fsm", ".inv", ".dt", ".policy"))
# Each example model with what it needs (invariants read their FSM; the policy enforces one).
GROUPS = [[p] if not p.endswith(".inv") else [p[:-4] + ".fsm", p] for p in EXAMPLES]
SCHEMA = json.loads((ROOT / "docs" / "schemas" / "coverage.schema.json").read_text(encoding="utf-8"))
def assert_faithful(report: CoverageReport) -> dict:
    document = json.loads(coverage_json(report))
    jsonschema.validate(document, SCHEMA)
    assert expanded(document) == json.loads(report.model_dump_json())
    assert list(document)[:3] == ["schema_version", "element_columns", "models"]  # the columns before the rows
    rows = [row for m in document["models"] for row in m["elements"]]
    for m in document["models"]:
        for row in m["elements"]:  # nothing a reader can infer ends a row
            if len(row) > ALWAYS:
                last = COLUMNS[len(row) - 1]
                assert row[-1] != cells(row[:-1], m)[last], (row, last)
    seen = -1  # golden_ids in the order the rows first name them
    for row in rows:
        for i in [*(row[4] if len(row) > 4 else []), *(row[5] if len(row) > 5 else [])]:
            assert i <= seen + 1
            seen = max(seen, i)
    assert seen + 1 == len(document["golden_ids"])
    indented = coverage_json(report, 2)
    assert json.loads(indented) == document
    assert indented == json.dumps(document, indent=2, ensure_ascii=False)  # pydantic's layout: 2 spaces, ": "
    return document


@pytest.mark.parametrize("models", GROUPS, ids=lambda paths: Path(paths[-1]).name)
def test_each_example_model_and_its_goldens(models):
    report = api.coverage(models, [str(ROOT / "models" / "goldens")], covering_cap=2)
    assert report.models and report.models[0].elements
    assert any(e.exercised_more for m in report.models for e in m.elements)  # the capped counts are written too
    document = assert_faithful(report)
    assert document["schema_version"] == "3.2"


def test_every_example_together_with_the_gate_and_review_parts():
    run = api.coverage_run(EXAMPLES, [str(ROOT / "models" / "goldens")], review=True,
                           gate_path=str(ROOT / "models" / "gates" / "release.yaml"))
    assert run.report.gate is not None and run.report.traceability
    document = assert_faithful(run.report)
    # spans, statuses, severities and weights other than the defaults are on the rows that have them
    rows = [cells(row, m) for m in document["models"] for row in m["elements"]]
    for name, default in (("span", None), ("status", "inferred"), ("severity", "medium"), ("weight", 2.0)):
        assert any(row[name] != default for row in rows), name


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
    assert_faithful(report)


def test_an_element_of_another_file_model_or_kind_or_with_tags_says_so_on_its_row():
    report = api.coverage([str(ROOT / "models" / "recovery.fsm")], [str(ROOT / "models" / "goldens")])
    row = report.models[0].elements[0]
    moved = row.element.location.model_copy(update={"file": "elsewhere.fsm"})
    report.models[0].elements[0] = ElementCoverage(
        element=dataclasses.replace(row.element, model="other", kind="table", location=moved, tags=["REQ-1"],
                                    feasible=False, reason="why", criterion="mcdc"),
        exercised_by=row.exercised_by, verified_by=row.verified_by)
    document = assert_faithful(report)
    first = dict(zip(COLUMNS, document["models"][0]["elements"][0]))
    assert len(first) == len(COLUMNS)  # its kind is another: every cell is written
    assert (first["file"], first["model"], first["kind"]) == ("elsewhere.fsm", "other", "table")
    assert (first["tags"], first["feasible"], first["reason"]) == (["REQ-1"], False, "why")
    assert first["criterion"] == "mcdc" and first["id"].startswith("state:")  # not the id's prefix: written
    # the other rows' criterion is their id's prefix, and their file, model and kind the model's: left out
    assert all(len(row) <= COLUMNS.index("criterion") for row in document["models"][0]["elements"][1:])


# One value per column that a reader cannot infer (the model is recovery.fsm, its rows' criterion their id's prefix).
NOT_INFERRED = {"exercised_by": ["g-1"], "verified_by": ["g-1"], "exercised_more": 2, "verified_more": 3,
                "severity": Severity.high, "weight": 3.0, "status": Status.stated, "feasible": False,
                "reason": "why", "tags": ["REQ-1"], "criterion": "mcdc", "file": "elsewhere.fsm", "model": "other",
                "kind": "table"}


@pytest.mark.parametrize("column", COLUMNS[ALWAYS:])
def test_a_row_ends_with_its_last_cell_that_a_reader_cannot_infer(column):
    report = api.coverage([str(ROOT / "models" / "recovery.fsm")], [str(ROOT / "models" / "goldens")])
    rows = report.models[0].elements
    plain = dataclasses.replace(rows[0].element, span=None, status=Status.inferred, severity=Severity.medium,
                                weight=2.0, feasible=True, reason=None, tags=[])
    value = NOT_INFERRED[column] if column != "span" else next(r.element.span for r in rows if r.element.span)
    if column in ("exercised_by", "verified_by", "exercised_more", "verified_more"):
        rows[0] = ElementCoverage(element=plain, **{column: value})
    elif column == "file":
        rows[0] = ElementCoverage(element=dataclasses.replace(plain, location=plain.location.model_copy(
            update={"file": value})))
    else:
        rows[0] = ElementCoverage(element=dataclasses.replace(plain, **{column: value}))
    rows[1] = ElementCoverage(element=plain)  # nothing but what every row holds
    written = assert_faithful(report)["models"][0]["elements"]
    assert len(written[0]) == COLUMNS.index(column) + 1
    assert len(written[1]) == ALWAYS


def test_rows_are_plain_objects_that_pydantic_takes_as_they_are():
    report = api.coverage([str(ROOT / "models" / "recovery.fsm")], [str(ROOT / "models" / "goldens")])
    row = report.models[0].elements[0]
    assert type(row) is ElementCoverage and not hasattr(row, "model_dump")
    again = CoverageReport.model_validate_json(report.model_dump_json())  # read back: rows again, equal
    assert type(again.models[0].elements[0]) is ElementCoverage
    assert again.models[0].elements == report.models[0].elements


def test_the_written_bytes_are_the_same_in_pieces_of_any_size(monkeypatch):
    report = api.coverage(EXAMPLES, [str(ROOT / "models" / "goldens")])
    assert len(report.models) > 1 and any(len(m.elements) > 3 for m in report.models)
    whole = (coverage_json(report) + "\n").encode()
    for rows in (1, 3, 10_000):  # pieces of one row, of a few, and the whole model in one
        monkeypatch.setattr(jsonout, "ROWS_PER_PIECE", rows)
        pieces = list(coverage_json_body(report))
        assert b"".join(pieces) == whole
        assert rows > 3 or len(pieces) > sum(len(m.elements) for m in report.models) // rows
    indented = coverage_json_body(report, 2)
    assert bytes(indented) == (coverage_json(report, 2) + "\n").encode()  # type: ignore[arg-type]
    empty = api.coverage(EXAMPLES[:1], [str(ROOT / "models" / "goldens")])
    empty.models = []
    document = json.loads(b"".join(coverage_json_body(empty)))
    assert document["models"] == [] and document["golden_ids"] == []
    assert expanded(document) == json.loads(empty.model_dump_json())


def test_the_runs_report_holds_the_coverage_report_as_mbt_coverage_writes_it():
    report = api.runs([str(ROOT / "models" / "recovery.fsm")], [str(ROOT / "models" / "runs")],
                      [str(ROOT / "models" / "goldens")])
    assert report.coverage is not None
    document = json.loads(with_coverage_json(report, indent=2))
    assert document["coverage"] == json.loads(coverage_json(report.coverage))
    assert {k: v for k, v in document.items() if k != "coverage"} == json.loads(
        report.model_dump_json(exclude={"coverage"}))
    jsonschema.validate(document, json.loads((ROOT / "docs" / "schemas" / "runs.schema.json").read_text()))
    report.coverage = None
    assert with_coverage_json(report) == report.model_dump_json().encode("utf-8")
