"""`mbt eval`'s report formats (`--format NAME[:PATH]`, repeatable, as `mbt coverage` takes them): text (seed 001's
overview and each case), json (schema `eval`) and xlsx (seed 001's export: overview and detail sheets)."""

from __future__ import annotations

from mbt.answers.results import EvalReport
from mbt.report.core import Body
from mbt.report.formats import Format

EVAL_FORMATS: dict[str, Format] = {f.name: f for f in [
    Format("text", "seed 001's overview, then each case (default)", None),
    Format("json", "the full report (docs/schemas/eval.schema.json)", None),
    Format("xlsx", "seed 001's Excel export: an overview and a detail sheet (--format xlsx:PATH)", None, binary=True),
]}


def eval_body(name: str, report: EvalReport, pretty: bool = True) -> Body:
    """The report in the format named (one of EVAL_FORMATS)."""
    if name == "json":
        return report.model_dump_json(indent=2 if pretty else None) + "\n"
    if name == "xlsx":
        from mbt.report.eval_xlsx import eval_xlsx  # on use: openpyxl

        return eval_xlsx(report)
    from mbt.report.eval_text import eval_text  # on use: start-up time

    return eval_text(report)
