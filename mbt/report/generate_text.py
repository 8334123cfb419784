"""Plain-text report of `mbt generate`: per model, the tests written, the elements left without a witness (with the
reason), suite figures against their bounds, and what happened to each file."""

from __future__ import annotations

from mbt.generate.report import GenerateReport, ModelGeneration, SuiteFigures
from mbt.measure.coverage import GoldenSummary
from mbt.report.style import PLAIN, Style


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def generate_text(report: GenerateReport, style: Style = PLAIN, with_files: bool = True) -> str:
    lines = [style(f"mbt generate: {_plural(len(report.models), 'model')} -> {report.out} "
                   f"(--max-depth {report.max_depth})", "bold")]
    lines += goldens_lines(report.goldens, report.invalid_cases, style)
    for m in report.models:
        lines += [""] + _model(m, style)
    if with_files and report.files:
        lines += ["", "Files:"]
        for f in report.files:
            if f.status == "beside":
                lines.append(style(f"  kept   {f.path}: edited since mbt wrote it; the new version is {f.beside} "
                                   "(compare and merge, or use --force)", "yellow"))
            else:
                lines.append(f"  {f.status:<11} {f.path}")
    return "\n".join(lines) + "\n"


def goldens_lines(goldens: GoldenSummary | None, invalid_cases: list[str], style: Style = PLAIN) -> list[str]:
    """The goldens' figures as mbt coverage counts them (read = valid + invalid), and the invalid cases, which
    count nowhere (also mbt mutate's and mbt compare's)."""
    if goldens is None:
        return []
    lines = [f"goldens: {goldens.read} golden case(s) read ({goldens.valid} valid, {goldens.invalid} invalid)"]
    if invalid_cases:
        lines.append(style(f"Invalid cases ({len(invalid_cases)}): reported and skipped; the rest were processed",
                           "yellow"))
        lines += [f"  {line}" for line in invalid_cases]
    return lines


def _model(m: ModelGeneration, style: Style) -> list[str]:
    head = f"{m.model}  ({m.kind}, {m.file})"
    if m.note:
        return [style(head, "bold"), f"  {m.note}"]
    lines = [style(head, "bold")]
    if m.suite is not None:
        s = m.suite
        shape = "strongly connected: Chinese-postman tour" if s.method == "chinese-postman" else \
            "strongly connected, but runs with resets are shorter: path cover" if s.strongly_connected else \
            "not strongly connected: path cover with resets"
        lines += [
            f"  {s.criterion} suite ({shape})",
            f"    {s.criterion}s to cover (lower bound on steps): {s.lower_bound} of {s.elements}",
            f"    optimum ignoring guards (min-cost flow): {s.optimum_steps} steps in {_plural(s.optimum_tests, 'test')}",
            f"    suite respecting guards: {s.steps} steps in {_plural(s.tests, 'test')}  ({_excess(s)})",
        ]
    else:
        what = ("surviving " + ("mutant" if m.uncovered == 1 else "mutants") if m.mode == "kill" else
                "uncovered " + ("element" if m.uncovered == 1 else "elements"))
        lines.append(f"  {_plural(len(m.tests), 'test')} for {m.uncovered} {what}"
                     + (f"; {len(m.missing)} without a witness" if m.missing else ""))
        for t in m.tests:
            lines.append(f"    {t.name}  {t.elements[0]}  ({_plural(t.steps, 'step')})")
    if m.missing:
        lines.append(style(f"  Without a witness ({len(m.missing)}):", "yellow"))
        for x in m.missing:
            lines.append(f"    {x.element}  [{x.reason}]  {x.location}")
            lines.append(f"        {x.message}")
    return lines


def _excess(s: SuiteFigures) -> str:
    """How the suite compares with the bounds, said only as far as it is known."""
    if s.exact:
        extra = s.steps - s.optimum_steps
        return ("the exact optimum respecting guards, all " f"{s.configurations} configurations explored"
                + (f"; the guards cost {extra} step{'s' if extra != 1 else ''} over the guard-free bound"
                   if extra > 0 else ""))
    if s.steps == s.optimum_steps:
        return "= the optimum"
    if s.steps < s.optimum_steps:  # pragma: no cover - a suite that respects the guards is a guard-free cover too
        return f"{s.optimum_steps - s.steps} steps under the guard-free figure: an mbt bug, please report it"
    extra = s.steps - s.optimum_steps
    over = f"+{_plural(extra, 'step')} over the guard-free bound"
    if s.guarded_lower_bound is not None:
        # The exact search stopped early, but what it proved is said: a lower bound respecting the guards.
        low = s.guarded_lower_bound
        cost = (f"; the guards cost at least {_plural(low - s.optimum_steps, 'step')}" if low > s.optimum_steps
                else "")
        if s.steps <= low:
            return f"{over}, the optimum respecting guards: no suite takes fewer steps{cost}"
        return (f"{over}; a suite respecting guards takes at least {low} steps{cost}, so up to "
                f"{_plural(s.steps - low, 'step')} may be a shorter order not found (the exact search stopped after "
                f"{s.searched:,} states)")
    why = f" ({s.no_exact})" if s.no_exact else ""
    return (f"{over}; the exact optimum respecting guards was not computed{why}, so whether the guards or the order "
            "found cost them is not known")
