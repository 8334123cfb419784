"""Mutation, redundancy and marginal-value reports as text and Markdown (formatting only: the numbers come computed)."""

from __future__ import annotations

from mbt.measure.mutation import CompareReport, ModelMutation, MutationReport, Redundancy
from mbt.measure.numbers import percent_text
from mbt.report.markdown import cell, code

SURVIVORS_SHOWN = 25


def _score(m: ModelMutation) -> str:
    judged = m.mutants - m.equivalent
    return f"{percent_text(m.score)} ({m.killed}/{judged})"


def mutation_text(report: MutationReport, limit: int | None = SURVIVORS_SHOWN) -> str:
    lines = [f"mbt mutate: mutation score {percent_text(report.score)} over {len(report.models)} model(s); "
             f"{report.goldens_read} golden(s) read ({report.goldens_valid} valid, {report.goldens_invalid} invalid)"]
    for kind, value in report.kinds.items():
        lines.append(f"  {kind}.mutation: {percent_text(value)}")
    lines += _invalid_lines(report)
    for m in report.models:
        lines.append("")
        lines.append(f"model `{m.model}` ({m.kind}, {m.file})")
        if m.note:
            lines.append(f"  {m.note}")
            continue
        lines.append(f"  mutation score {_score(m)}: {m.mutants} mutants, {m.equivalent} equivalent, {m.killed} "
                     f"killed, {m.survived} surviving; {m.clean_goldens} of {m.goldens} golden(s) agree with the "
                     f"model; {m.replays} mutant x golden replays")
        if m.sampled:
            lines.append(f"  sampled: {m.sampled}")
        if limit == 0:  # the summary: the score lines only
            continue
        lines.append(f"  {'operator':<8} {'mutants':>7} {'equiv':>5} {'killed':>6} {'survived':>8}  score   what it does")
        for op in m.operators:
            if op.mutants:
                lines.append(f"  {op.operator:<8} {op.mutants:>7} {op.equivalent:>5} {op.killed:>6} "
                             f"{op.survived:>8}  {percent_text(op.score):>6}  {op.doc}")
        survivors = [r for r in m.results if r.status == "survived"]
        if survivors:
            lines.append(f"  surviving mutants ({len(survivors)}):")
            for r in survivors[:limit]:
                lines.append(f"    {r.id}  {r.at}")
                lines.append(f"      {r.description}; element {r.element}" + (f", cites {r.span}" if r.span else ""))
                lines.append(f"      {r.reason}" + (_witness_hint(m.kind) if r.witness else ""))
            if limit is not None and len(survivors) > limit:
                lines.append(f"    ... {len(survivors) - limit} more (--show-survivors all)")
        equivalent = [r for r in m.results if r.status == "equivalent"]
        if equivalent:
            lines.append(f"  equivalent mutants, left out of the score ({len(equivalent)}):")
            for r in equivalent[:limit]:
                lines.append(f"    {r.id}  {r.at}: {r.description}: {r.reason}")
    if report.redundancy is not None:
        lines.append("")
        lines.extend(redundancy_lines(report.redundancy)[:1 if limit == 0 else None])
    return "\n".join(lines) + "\n"


def _witness_hint(kind: str) -> str:
    # An invariant mutant changes no step of the FSM: no test on a reference machine tells it apart, its witness
    # golden does (by replay), and `mbt generate --kill` writes no test for it.
    if kind == "invariant":
        return "; its witness golden (`--format json`, `witness`) kills it by replay"
    return "; `mbt generate --kill` writes the test that kills it"


def redundancy_lines(r: Redundancy) -> list[str]:
    lines = [f"redundancy: {r.goldens} golden(s): {len(r.idle)} verify and kill nothing, {len(r.duplicates)} "
             f"duplicate(s), {len(r.subsumed)} subsumed"]
    for d in r.duplicates:
        lines.append(f"  {d.id}: {d.reason}")
    for s in r.subsumed:
        lines.append(f"  {s.id}: subsumed by {s.by}")
    lines.append(f"smallest equivalent set ({r.method}): {len(r.kept)} of {r.goldens} golden(s) keep every "
                 f"verified element and every kill; lower bound {r.lower_bound}; {r.method_note}")
    lines.append("  kept: " + (", ".join(r.kept) or "none"))
    for d in r.dropped:
        lines.append(f"  dropped {d.id}: {d.reason}")
    return lines


def mutation_markdown(report: MutationReport) -> str:
    lines = [f"## mbt mutation score: {percent_text(report.score)}", "",
             "| model | kind | score | mutants | equivalent | killed | surviving |", "|---|---|---:|---:|---:|---:|---:|"]
    for m in report.models:
        lines.append(f"| {cell(m.model)} | {m.kind} | {_score(m) if not m.note else cell(m.note)} | {m.mutants} | "
                     f"{m.equivalent} | {m.killed} | {m.survived} |")
    survivors = report.survivors()
    if survivors:
        lines += ["", f"### Surviving mutants ({len(survivors)})", "", "| model | mutant | at | change | element |",
                  "|---|---|---|---|---|"]
        for m, r in survivors[:SURVIVORS_SHOWN]:
            lines.append(f"| {cell(m.model)} | {code(r.id, True)} | {cell(r.at)} | {cell(r.description)} | "
                         f"{code(r.element, True)} |")
        if len(survivors) > SURVIVORS_SHOWN:
            lines.append(f"\n... {len(survivors) - SURVIVORS_SHOWN} more")
    if report.redundancy is not None:
        red = report.redundancy
        lines += ["", "### Redundancy", "", f"- {len(red.idle)} golden(s) verify and kill nothing; "
                  f"{len(red.duplicates)} duplicate(s); {len(red.subsumed)} subsumed",
                  f"- smallest equivalent set ({red.method}): {len(red.kept)} of {red.goldens}, lower bound "
                  f"{red.lower_bound}"]
    return "\n".join(lines) + "\n"


def _invalid_lines(report: MutationReport) -> list[str]:
    """The invalid cases, as mbt coverage lists them: they count nowhere; and the files not read as goldens."""
    lines = [f"  note: {note}" for note in report.notes]
    if not report.invalid_cases:
        return lines
    return lines + ([f"  invalid cases ({report.goldens_invalid}): reported and skipped; the rest were processed"]
                    + [f"    {line}" for line in report.invalid_cases])


def compare_text(report: CompareReport) -> str:
    lines = [f"mbt compare: {len(report.candidates)} candidate golden(s) against {report.baseline} valid baseline "
             f"golden(s): {report.adds_coverage} add coverage, {report.adds_kills} add kills, {report.adds_nothing} "
             f"add nothing ({report.duplicates} duplicate(s) of a baseline golden)"]
    if report.mutation is not None:
        m = report.mutation
        lines.append(f"  {m.goldens_read} golden(s) read ({m.goldens_valid} valid, {m.goldens_invalid} invalid)")
        lines += _invalid_lines(m)
    for c in report.candidates:
        lines.append(f"  {c.id} ({c.where}): {c.message}")
        for e in c.new_elements:
            lines.append(f"    + verifies {e}")
        for k in c.new_kills:
            lines.append(f"    + kills {k}")
    return "\n".join(lines) + "\n"


def compare_markdown(report: CompareReport) -> str:
    lines = [f"## mbt compare: {report.adds_coverage} add coverage, {report.adds_kills} add kills, "
             f"{report.adds_nothing} add nothing", "", "| candidate | verdict | new elements | new kills | note |",
             "|---|---|---:|---:|---|"]
    for c in report.candidates:
        lines.append(f"| {cell(c.id)} | {c.verdict} | {len(c.new_elements)} | {len(c.new_kills)} | {cell(c.message)} |")
    return "\n".join(lines) + "\n"
