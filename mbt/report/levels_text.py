"""Seed 004's levels as plain text and Markdown: per level what was measured (each figure on its own denominator)
and what was not, and why; the quality dimensions apart; the opt-in levels' details (blank regions, units no golden
covers, propositions) when they were measured."""

from __future__ import annotations

from mbt.measure.answer_models import ANSWER_DENOMINATOR, ANSWERED
from mbt.measure.level_models import Figure, LevelsReport
from mbt.measure.numbers import percent
from mbt.report.probes_text import probes_text
from mbt.report.runs_text import undocumented_lines


def figure_text(f: Figure) -> str:
    if f.covered is None and f.value is None:  # a pointer, not a number ("see level 1, level 3")
        return f.name + (f" ({f.note})" if f.note else "")
    amount = f"{f.covered}/{f.total} " if f.covered is not None and f.total is not None else ""
    share = percent(f.ratio).strip() if f.ratio is not None else "n/a"
    on = f" of {f.denominator}" if f.denominator else ""
    return f"{f.name}: {amount}{share}{on}" + (f" ({f.note})" if f.note else "")


def _short(text: str, width: int = 90) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def levels_text(levels: LevelsReport, quiet: bool = False, limit: int | None = 25) -> str:
    lines = ["", "Levels of coverage (seed 004): what each level measured, each figure on its own denominator "
                 "(never summed)"]
    for lv in levels.levels:
        state = "" if lv.measured else ": not measured"
        lines.append(f"  level {lv.level}  {lv.name}{state}")
        if quiet:
            continue
        if lv.level == 3:
            lines += _level3(lv.figures)
        else:
            lines += [f"      {figure_text(f)}" for f in lv.figures]
        lines += [f"      not measured: {why}" for why in lv.not_measured]
    lines.append("Quality dimensions (seed 004: kept apart)")
    for d in levels.dimensions:
        if d.measured:
            lines.append(f"  {d.name}: " + "; ".join(figure_text(f) for f in d.figures))
        else:
            lines.append(f"  {d.name}: not measured: {d.not_measured}")
    if quiet:
        return "\n".join(lines) + "\n"
    lines += _embedding(levels, limit) + _units(levels, limit) + _probes(levels, limit) + _propositions(levels, limit)
    lines += undocumented_lines(levels.undocumented, "Level 4: u")
    return "\n".join(lines) + "\n"


def _level3(figures: list[Figure]) -> list[str]:
    """One line per model: its criteria, verified of feasible (the table above has them in full); then, with
    --answers, one per model with the elements judged answers verified (figures of their own)."""
    by_model: dict[str, list[str]] = {}
    answered: dict[str, list[str]] = {}
    for f in figures:
        if f.denominator == ANSWER_DENOMINATOR:
            model, _, criterion = f.name.removesuffix(ANSWERED).rpartition(" ")
            answered.setdefault(model, []).append(f"{criterion} {f.covered}/{f.total}")
            continue
        model, _, criterion = f.name.rpartition(" ")
        by_model.setdefault(model, []).append(f"{criterion} {f.covered}/{f.total}")
    return [f"      {model}: {', '.join(parts)} verified" for model, parts in by_model.items()] + [
        f"      {model}: {', '.join(parts)}{ANSWERED}" for model, parts in answered.items()]


def _embedding(levels: LevelsReport, limit: int | None) -> list[str]:
    e = levels.embedding
    if e is None:
        return []
    lines = ["", f"Level 0: embedding neighbourhood ({e.embedding}; {e.calibration})",
             f"  {e.caveat}",
             f"  {e.covered}/{e.total} units within τ of one of {e.goldens} golden(s) "
             f"{percent(e.covered / e.total if e.total else None).strip()}",
             f"  {'cluster':>7} {'units':>5} {'goldens':>7} {'p_D':>6} {'p_Q':>6} {'within τ':>9}"]
    for c in e.clusters:
        p_q = f"{c.golden_share:.2f}" if c.golden_share is not None else "-"
        lines.append(f"  {c.cluster:>7} {len(c.units):>5} {len(c.goldens):>7} {c.unit_share:>6.2f} {p_q:>6} "
                     f"{c.covered:>4}/{len(c.units):<4}")
    if e.blank:
        by_id = {u.unit: u for u in e.units}
        lines.append(f"  Blank regions ({len(e.blank)}): units farther than τ from every golden, farthest first")
        for unit in e.blank[:limit] if limit else e.blank:
            u = by_id[unit]
            r = f"{u.distance:.2f}" if u.distance is not None else "-"
            lines.append(f"    {u.unit}  r = {r}  cluster {u.cluster}  {_short(u.text)}")
        if limit and len(e.blank) > limit:
            lines.append(f"    ... and {len(e.blank) - limit} more (--format json)")
    return lines


def _units(levels: LevelsReport, limit: int | None) -> list[str]:
    a = levels.units
    if a is None:
        return []
    lines = ["", f"Level 1: source units aligned to goldens directly (judge: {a.judge})", f"  rule {a.rule}",
             f"  {a.covered} covered, {a.uncovered} covered by no golden, {a.not_judged} not judged, of "
             f"{a.total} units"]
    reasons = {(x.golden, x.unit): x for x in a.alignments}
    for title, status in (("Covered by no golden", "uncovered"), ("Not judged (a golden may cover them)",
                                                                   "not_judged")):
        rows = [u for u in a.units if u.status == status]
        if not rows:
            continue
        lines.append(f"  {title} ({len(rows)}):")
        for u in rows[:limit] if limit else rows:
            lines.append(f"    {u.unit}  {_short(u.text)}")
            for g in u.undecided[:3]:
                lines.append(f"        {g}: {reasons[(g, u.unit)].reason}")
        if limit and len(rows) > limit:
            lines.append(f"    ... and {len(rows) - limit} more (--format json)")
    covered = [u for u in a.units if u.status == "covered"]
    if covered:
        lines.append(f"  Covered ({len(covered)}), per unit:")
        for u in covered[:limit] if limit else covered:
            lines.append(f"    {u.unit}  {', '.join(u.goldens)}  {_short(u.text, 60)}")
    lines.append("  Per golden:")
    speaking = [g for g in a.goldens if g.text]
    for ga in speaking[:limit] if limit else speaking:
        found = ", ".join(ga.units) if ga.units else "no unit"
        undecided = f"; not judged: {', '.join(ga.undecided)}" if ga.undecided else ""
        lines.append(f"    {ga.golden}: {found}{undecided}")
    if limit and len(speaking) > limit:
        lines.append(f"    ... and {len(speaking) - limit} more (--format json)")
    silent = [g.golden for g in a.goldens if not g.text]
    if silent:
        shown = ", ".join(silent[:10]) + (f" ... and {len(silent) - 10} more" if len(silent) > 10 else "")
        lines.append(f"    {len(silent)} golden(s) with no question or expected answer to align (events and checks "
                     f"only): {shown}")
    return lines


def _probes(levels: LevelsReport, limit: int | None) -> list[str]:
    """The probe file's report, as `mbt probes` prints it (its first line said here as the title)."""
    r = levels.probes
    if r is None:
        return []
    body = probes_text(r, units_shown=limit).splitlines()[1:]
    return ["", f"Level 1: probe coverage ({r.probes_read} probe(s) of {r.file}; {len(r.generators)} generator(s); "
                f"{r.confidence * 100:g}% intervals, {r.resamples} bootstrap resamples, seed {r.seed})"] + \
        [f"  {line}" if line else "" for line in body]


def _propositions(levels: LevelsReport, limit: int | None) -> list[str]:
    p = levels.propositions
    if p is None:
        return []
    lines = ["", f"Level 2: atomic propositions ({p.extractor}; judge: {p.judge})",
             f"  {p.covered} covered, {p.uncovered} not covered, {p.not_judged} not judged, of {p.total} "
             "propositions"]
    if p.stale:
        lines.append(f"  Stale entries in {p.file} (their unit's text changed; split by the rules): "
                     f"{', '.join(p.stale)}")
    for u in p.units[:limit] if limit else p.units:
        lines.append(f"  {u.unit}  {u.covered}/{len(u.propositions)}  {_short(u.text, 70)}")
        for prop in u.propositions:
            under = f" [if {prop.condition}]" if prop.condition else ""
            role = f" ({prop.role})" if prop.role != "statement" else ""
            state = (f"covered by {', '.join(prop.goldens)}" if prop.status == "covered" else
                     f"not covered: {prop.reason}" if prop.status == "uncovered" else f"not judged: {prop.reason}")
            lines.append(f"    {prop.id}{role}{under} {_short(prop.text, 60)}  — {state}")
    if limit and len(p.units) > limit:
        lines.append(f"  ... and {len(p.units) - limit} more units (--format json)")
    return lines


def levels_markdown(levels: LevelsReport) -> str:
    """The levels as a Markdown table and the dimensions as a list (the details stay in the text and JSON reports)."""
    lines = ["", "## Levels of coverage (seed 004)", "",
             "Each figure on its own denominator; levels, kinds and dimensions are never summed.", "",
             "| level | | measured | not measured |", "|---|---|---|---|"]
    for lv in levels.levels:
        measured = "<br>".join(_md(figure_text(f)) for f in lv.figures) or "—"
        missing = "<br>".join(_md(w) for w in lv.not_measured) or "—"
        lines.append(f"| {lv.level} | {lv.name} | {measured} | {missing} |")
    lines += ["", "**Quality dimensions** (kept apart):", ""]
    for d in levels.dimensions:
        if d.measured:
            lines.append(f"- {d.name}: " + "; ".join(_md(figure_text(f)) for f in d.figures))
        else:
            lines.append(f"- {d.name}: not measured: {_md(d.not_measured)}")
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|")
