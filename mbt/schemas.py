"""JSON Schemas of the reports (check, elements, coverage, generate, runs, mutation, compare, eval, calibration,
sensitivity, probes, and `mbt results`' list, show, case, export and compare), generated from the pydantic models;
published in docs/schemas/."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import msgspec
from pydantic import BaseModel

from mbt.analysis.findings import CheckReport
from mbt.answers.results import EvalReport
from mbt.answers.selftest import CalibrationReport, SensitivityReport
from mbt.elements.base import ElementsReport
from mbt.generate.report import GenerateReport  # noqa: E402 - grouped with the report it adds
from mbt.measure.coverage import CoverageReport
from mbt.measure.mutation import CompareReport, MutationReport
from mbt.measure.probes import ProbeReport
from mbt.report.jsonout import ELEMENT_COLUMNS, REQUIRED_CELLS, ElementRow
from mbt.runs.results import RunsReport
from mbt.store.model import CaseDetail, Comparison, ExportDoc, SetList, SetView

REPORTS: dict[str, type[BaseModel]] = {
    "check": CheckReport, "elements": ElementsReport, "coverage": CoverageReport, "generate": GenerateReport,
    "runs": RunsReport, "mutation": MutationReport, "compare": CompareReport,
    "eval": EvalReport, "calibration": CalibrationReport, "sensitivity": SensitivityReport, "probes": ProbeReport,
    "results-list": SetList, "results-show": SetView, "results-case": CaseDetail, "results-export": ExportDoc,
    "results-compare": Comparison}


def schema_text(name: str) -> str:
    report = REPORTS[name]
    schema = report.model_json_schema(mode="serialization")
    if report is CoverageReport:
        _as_written(schema, schema)
    elif "CoverageReport" in schema.get("$defs", {}):  # a report holding one (runs) writes it as `mbt coverage` does
        _as_written(schema, schema["$defs"]["CoverageReport"])
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    versioned = report.model_fields.get("schema_version")
    schema["$id"] = f"https://mbt.dev/schemas/{name}-{versioned.default if versioned else '1.0'}.json"
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def _as_written(schema: dict, coverage: dict) -> None:
    """The coverage report (`coverage`, in `schema`) as mbt/report/jsonout.py writes it: each element's row an array
    of the cells ElementRow declares (in place of the in-memory ElementCoverage), the element_columns that name
    them, and the golden_ids table their covering lists index."""
    _, components = msgspec.json.schema_components((ElementRow,), ref_template="#/$defs/{name}")
    defs = schema["$defs"]
    cells = components["ElementRow"]["properties"]
    row = {"description": "An element's row: the values of element_columns in order; the cells at its end that hold "
                          "what a reader infers (each cell's default or description says what) are left out.",
           "type": "array", "prefixItems": [{"title": name, **cells[name]} for name in ELEMENT_COLUMNS], "items": False,
           "minItems": REQUIRED_CELLS, "title": "Element Row"}
    defs["ModelCoverage"]["properties"]["elements"]["items"] = {"$ref": "#/$defs/ElementRow"}
    defs["ElementRow"] = row
    for name in ("Status", "Severity"):  # the enums pydantic's defs hold already: the same values
        if {*components[name]["enum"]} != {*defs[name]["enum"]}:
            raise ValueError(f"the row's {name} and the report's differ")
    coverage["properties"]["element_columns"] = {
        "description": "The names of an element row's cells, in order.", "const": list(ELEMENT_COLUMNS),
        "title": "Element Columns", "type": "array", "items": {"type": "string"}}
    coverage.setdefault("required", []).append("element_columns")
    coverage["properties"]["golden_ids"] = {
        "description": "Every golden an element row names, once, in the order the rows first name them; the rows' "
                       "exercised_by and verified_by are indices into it.",
        "items": {"type": "string"}, "title": "Golden Ids", "type": "array"}
    coverage.setdefault("required", []).append("golden_ids")
    while True:  # the defs no longer referenced (the in-memory row and what only it used)
        text = json.dumps(schema)
        unused = [name for name in defs if f'"#/$defs/{name}"' not in text]
        if not unused:
            return
        for name in unused:
            del defs[name]


def write_schemas(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name in REPORTS:
        path = folder / f"{name}.schema.json"
        path.write_text(schema_text(name), encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":  # python -m mbt.schemas docs/schemas
    for p in write_schemas(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/schemas")):
        print(p)
