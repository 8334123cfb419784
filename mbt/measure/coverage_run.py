"""CoverageRun: what the coverage reporters read, a coverage report and what the review formats need beside it.

It is defined here, below the reporters, so that every reporter names the type it formats (mbt/report/formats.py);
the api fills it (`coverage_run`, and `add_diagrams` with each model's diagram or table drawn by mbt/render/).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mbt.measure.baseline import BaselineDelta
from mbt.measure.cases import CaseResult
from mbt.measure.coverage import CoverageReport
from mbt.model.common import ModelBase
from mbt.provenance import Provenance

if TYPE_CHECKING:  # a floor up: the api draws the tables (mbt/render/) after the run; annotations only
    from mbt.render.table import TableView


@dataclass
class CoverageRun:
    """A coverage report plus what review formats need beside it: each drawable model's diagram as inline SVG."""

    report: CoverageReport
    diagrams: dict[str, str] = field(default_factory=dict)  # model name -> <svg ...>
    diagram_errors: dict[str, str] = field(default_factory=dict)  # model name -> why there is no diagram
    tables: dict[str, TableView] = field(default_factory=dict)  # model name -> its table view (table-shaped kinds)
    diagram_notes: dict[str, str] = field(default_factory=dict)  # model name -> how a large diagram was bounded
    models: list[ModelBase] = field(default_factory=list)  # the loaded models (add_diagrams draws them later)
    provenance: Provenance | None = None  # date, version, commit, command line (the HTML report's header)
    comparison: list[BaselineDelta] = field(default_factory=list)  # gained and lost against --baseline
    cases: list[CaseResult] = field(default_factory=list)  # per-case results, when a format asks for them
