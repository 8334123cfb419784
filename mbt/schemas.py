"""JSON Schemas of the reports (check, elements, coverage, generate, runs, mutation, compare), generated from the pydantic
models; published in docs/schemas/."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mbt.analysis.findings import CheckReport
from mbt.elements.base import ElementsReport
from mbt.generate.report import GenerateReport  # noqa: E402 - grouped with the report it adds
from mbt.measure.coverage import CoverageReport
from mbt.mutate.results import CompareReport, MutationReport
from mbt.runs.results import RunsReport

REPORTS = {"check": CheckReport, "elements": ElementsReport, "coverage": CoverageReport, "generate": GenerateReport,
           "runs": RunsReport, "mutation": MutationReport, "compare": CompareReport}


def schema_text(name: str) -> str:
    schema = REPORTS[name].model_json_schema(mode="serialization")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://mbt.dev/schemas/{name}-1.0.json"
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


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
