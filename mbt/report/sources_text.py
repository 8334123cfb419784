"""Source-document coverage as plain text: the three gaps (not modelled, the document is silent, no golden covers it)."""

from __future__ import annotations

from mbt.measure.numbers import percent
from mbt.measure.review import SourceCoverage


def sources_text(sources: SourceCoverage, limit: int | None = None) -> str:
    lines = ["", "Source documents (units: headings, sentences, list items, YAML leaves)"]
    for d in sources.documents:
        if d.error:
            lines.append(f"  {d.path}: cannot be read: {d.error}")
            continue
        excluded = sum(1 for u in d.units if u.status == "excluded")
        lines.append(f"  {d.path} ({d.source}): {d.modelled.covered}/{d.modelled.total} units modelled "
                     f"{percent(d.modelled.ratio)}, {d.tested.covered}/{d.tested.total} tested by a golden "
                     f"{percent(d.tested.ratio)}" + (f", {excluded} excluded" if excluded else ""))
        missing = [u for u in d.units if u.status == "not-modelled"]
        if missing:
            lines.append(f"    Not modelled ({len(missing)}): no model element cites these")
            for u in missing[:limit] if limit else missing:
                where = f"{u.line_start}" + (f"-{u.line_end}" if u.line_end != u.line_start else "")
                key = f" [{u.key}]" if u.key else ""
                lines.append(f"      {d.source}:{where}{key}  {_short(u.text)}")
    if sources.silent:
        lines.append(f"  The document is silent ({len(sources.silent)}): parts marked `unspecified`")
        for s in sources.silent:
            lines.append(f"    {s.model}: {s.part}  {s.location}" + (f"  — {s.reason}" if s.reason else ""))
    for unused in sources.unused_exclusions:
        lines.append(f"  warning: {unused.message} (gate file line {unused.line})")
    lines.append("  No golden covers it: the uncovered elements listed above.")
    return "\n".join(lines) + "\n"


def _short(text: str, width: int = 100) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."
