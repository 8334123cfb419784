"""Plain-text reports for people: coverage tables, uncovered elements with their spans, findings, element lists."""

from __future__ import annotations

from mbt.analysis.findings import CheckReport
from mbt.elements.base import Element, ElementsReport
from mbt.measure.answer_models import ModelAnswers
from mbt.measure.coverage import CoverageReport, ElementCoverage, GateResult, ModelCoverage, Note, WaiverState
from mbt.measure.numbers import Numbers, in_goldens, percent
from mbt.report.style import PLAIN, Style


def _fraction(n: Numbers) -> str:
    return f"{n.covered:>5}/{n.total:<5} {percent(n.ratio)}"


def _cite(e: Element) -> str:
    if e.span is None:
        return f"({e.status.value})"
    return f"cites {e.span.describe()} ({e.status.value})"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def coverage_text(report: CoverageReport, style: Style = PLAIN, show_covering: bool = False,
                  uncovered_limit: int | None = 25, quiet: bool = False) -> str:
    """The human summary; `quiet` (-q): the numbers, the findings' counts and the gate, without the lists."""
    g = report.goldens
    lines = [
        style(f"mbt coverage: {_plural(len(report.models), 'model')}, {_plural(g.read, 'golden case')} read "
              f"({g.valid} valid, {g.invalid} invalid); {g.bound} bound, {g.unbound} with unbound turns, "
              f"{g.not_applicable} for no loaded model", "bold"),
        "Coverage counts elements a golden *verifies* (drives there and checks the outcome); "
        "exercised = reached without a check.",
    ]
    waived = report.waived()
    answers = report.answers
    for m in report.models:
        answered = answers.model(m.model) if answers is not None else None
        section = _model_section(m, style, show_covering, uncovered_limit, waived, answered)
        head = 2 + len(m.criteria)  # the model's line and its criteria: what -q keeps
        if answers is not None and answered is not None:  # their figures below the goldens', elements at the end
            figures = _answer_figures(answered)
            section[head:head] = figures
            head += len(figures)
            section += _answer_elements(answered, uncovered_limit)
        lines += [""] + (section[:head] if quiet else section)
    lines += _findings_counts(report) if quiet else _findings_sections(report, style)
    if answers is not None and answers.notes and not quiet:
        lines += ["", f"Answers not counted ({len(answers.notes)}): what the eval reports name that the loaded "
                      "models do not have"]
        lines += [f"  {n.report}: {n.message}" for n in answers.notes]
    if report.levels is not None:  # seed 004's levels: what was measured at each, before the verdict
        from mbt.report.levels_text import levels_text  # on use: start-up time

        lines.append(levels_text(report.levels, quiet, uncovered_limit).rstrip("\n"))
    if report.gate is not None:
        lines += [""] + _gate_section(report.gate, style)
    return "\n".join(lines) + "\n"


def _answer_figures(answered: ModelAnswers) -> list[str]:
    """Per criterion, the elements an answer can verify that judged answers verified: a figure of its own."""
    named = _plural(len(answered.named_by), 'eval report') if answered.named_by else "no eval report names the model"
    lines = [f"  verified by a judged answer ({named}; never added into verified or exercised):"]
    for f in answered.criteria:
        said = [f"{f.failed} failed: a failure found, not coverage lost"] if f.failed else []
        said += [f"{f.undecided} undecided"] if f.undecided else []
        lines.append(f"    {f.criterion:<18} {f.verified.covered} of {f.verified.total}"
                     + (f" ({'; '.join(said)})" if said else ""))
    return lines


_ANSWER_STATE = {"verified": "verified by a judged answer", "undecided": "judged, undecided",
                 "no_answer": "no judged answer"}
_ANSWERS_SHOWN = 5  # judged answers listed per element (all with --show-uncovered all)


def _answer_elements(answered: ModelAnswers, limit: int | None) -> list[str]:
    """Each element an answer can verify: its state, and its judged answers (judge, verdict, case, where, why)."""
    lines = ["", "  Elements an answer can verify, and the judged answers on them:"]
    for e in answered.elements:
        lines.append(f"    {e.element}: {_ANSWER_STATE[e.status]}" + (f", {e.verdict}" if e.verdict else ""))
        shown = e.answers if limit is None else e.answers[:_ANSWERS_SHOWN]
        for a in shown:
            lines.append(f"      {a.verdict} [{a.judge}] case {a.case} ({a.where or a.report}): {a.reason}")
        more = len(e.answers) - len(shown) + e.answers_more
        if more:
            lines.append(f"      ... and {more} more (--format json)")
    return lines


def _answer_state(answered: ModelAnswers | None, element: str) -> str:
    """An element's answer state beside its golden state, or nothing."""
    found = answered.element(element) if answered is not None else None
    if found is None or found.status == "no_answer":
        return ""
    return f"; {_ANSWER_STATE[found.status]}" + (f": {found.verdict}" if found.verdict else "")


def _model_section(m: ModelCoverage, style: Style, show_covering: bool, limit: int | None,
                   waived: dict[tuple[str, str], WaiverState], answered: ModelAnswers | None = None) -> list[str]:
    lines = [style(f"{m.model}  ({m.kind}, {m.file}), {_plural(m.goldens_replayed, 'golden')} replayed", "bold"),
             f"  {'criterion':<16} {'verified':>18} {'weighted':>9}   {'exercised':>18}"]
    for c in m.criteria:
        extra = f"   ({c.infeasible} infeasible, not counted)" if c.infeasible else ""
        lines.append(f"  {c.criterion:<16} {_fraction(c.verified):>18} {percent(c.verified.weighted_ratio):>9}"
                     f"   {_fraction(c.exercised):>18}{extra}")
    if m.requirements:
        done = sum(1 for r in m.requirements if r.status == "verified")
        lines.append(f"  {'requirements':<16} {f'{done} of {len(m.requirements)}':>18}   (a requirement is verified "
                     "when every element carrying its tag is)")
        for r in m.requirements:
            if r.status != "verified":
                lines.append(f"    {r.requirement}: {r.status}, {r.verified} of {r.elements} elements verified"
                             + (f" (first not verified: {r.not_verified[0]})" if r.not_verified else ""))
    # What each criterion means is its kind's (CriterionCoverage.alarm, .findings): alarms first, in full; the
    # labels of findings' elements shown.
    alarms, findings = m.alarm_criteria(), m.findings_criteria()
    forbidden = m.uncovered_alarms()
    if forbidden:
        lines += ["", style(f"  Uncovered forbidden elements ({len(forbidden)}): behaviour that must never happen "
                            "and no golden checks", "red")]
        lines += _element_lines(forbidden, show_covering, None, m.model, waived, findings, answered)
    others = [e for e in m.uncovered() if e.element.criterion not in alarms]
    if others:
        lines += ["", f"  Uncovered elements ({len(others)}; verified by no golden), by criterion:"]
        for c in m.criteria:
            mine = [e for e in others if e.element.criterion == c.criterion]
            if mine:
                lines.append(f"   {c.criterion} ({len(mine)})")
                lines += _element_lines(mine, show_covering, limit, m.model, waived, findings, answered)
    if show_covering:
        covered = [e for e in m.elements if e.verified or e.exercised]
        if covered:
            lines += ["", "  Covered elements and the goldens that cover them:"]
            for ec in covered:
                lines.append(f"    {ec.element.id}")
                if ec.verified_by:
                    lines.append(f"        verified by:  {', '.join(ec.verified_by)}{_more(ec.verified_more)}")
                only = [c for c in ec.exercised_by if c not in set(ec.verified_by)]
                if only:
                    lines.append(f"        exercised by: {', '.join(only)}{_more(ec.exercised_more)}")
    infeasible = [e for e in m.elements if not e.element.feasible]
    if infeasible:
        lines += ["", f"  Infeasible elements ({len(infeasible)}; no run can cover them, not counted):"]
        lines += [f"    {e.element.id}: {e.element.reason}" for e in infeasible]
    return lines


def _element_lines(rows: list[ElementCoverage], show_covering: bool, limit: int | None, model: str,
                   waived: dict[tuple[str, str], WaiverState], findings: frozenset[str],
                   answered: ModelAnswers | None = None) -> list[str]:
    """Uncovered elements, each with its state, severity and place; a waived one says so, with its waiver; one of
    the `findings` criteria with its label; one judged answers verified says so after its severity."""
    out = []
    shown = rows if limit is None else rows[:limit]
    for ec in shown:
        e = ec.element
        state = "exercised, not verified" if ec.exercised else "not reached"
        waiver = waived.get((model, e.id))
        if waiver is not None:
            state += f"; waived until {waiver.expires}: {waiver.reason}"
        out.append(f"    {e.id}  ({state}; {e.severity.value}{_answer_state(answered, e.id)})  {e.location}")
        if e.criterion in findings:
            out.append(f"        {e.label}")
        if e.span is not None:
            out.append(f"        {_cite(e)}")
        if show_covering and ec.exercised_by:
            out.append(f"        exercised by: {', '.join(ec.exercised_by)}{_more(ec.exercised_more)}")
    if limit is not None and len(rows) > limit:
        out.append(f"    ... and {len(rows) - limit} more (--show-uncovered all, or --format json)")
    return out


def _more(count: int) -> str:
    return f" ... and {count:,} more (--show-covering all)" if count else ""


def _findings_sections(report: CoverageReport, style: Style) -> list[str]:
    lines: list[str] = []
    if report.contradictions:
        found = in_goldens(report.count("contradictions"), report.goldens.contradicting)
        lines += ["", style(f"Contradictions ({found}): the golden and the model disagree; one of them is wrong",
                            "red")]
        for c in report.contradictions:
            lines.append(f"  {c.case} ({c.where}) on {c.model}: {c.message}")
            lines.append(f"      expected {_value(c.expected)}, model gives {_value(c.actual)}")
        lines += _listed_more(report.contradictions_more)
    if report.forbidden_expected:
        found = in_goldens(report.count("forbidden_expected"), report.goldens.expecting_forbidden)
        lines += ["", style(f"Goldens expecting forbidden behaviour ({found}): they verify nothing; the golden or the "
                            "forbid is wrong", "red")]
        for f in report.forbidden_expected:
            lines.append(f"  {f.case} ({f.where}) on {f.model}: {f.message}")
        lines += _listed_more(report.forbidden_expected_more)
    if report.divergences:
        lines += ["", style(f"Divergences ({report.count('divergences')}): events the model does not allow there", "yellow")]
        for d in report.divergences:
            lines.append(f"  {d.case} ({d.where}) turn {d.turn}: {d.message}")
        lines += _listed_more(report.divergences_more)
    if report.unbound_turns:
        lines += ["", style(f"Unbound turns ({report.count('unbound_turns')}): no event could be bound (never guessed)",
                            "yellow")]
        for u in report.unbound_turns:
            said = f' "{u.user}"' if u.user else ""
            lines.append(f"  {u.case} ({u.where}) turn {u.turn}{said}: {u.reason}")
        lines += _listed_more(report.unbound_turns_more)
    unchecked = [n for n in report.notes if not n.compared]
    if unchecked or report.notes_more:
        lines += ["", f"Not checked ({len(unchecked) + report.notes_more}): parts of goldens nothing checks (listed, "
                      "never dropped)"]
        lines += _note_lines(unchecked)
        lines += _listed_more(report.notes_more)
    compared = report.notes_compared()
    if compared:
        lines += ["", f"Read with a note ({len(compared)}): the outcome is compared all the same"]
        lines += _note_lines(compared)
    if report.invalid_cases:
        lines += ["", style(f"Invalid cases ({report.count('invalid_cases')}): reported and skipped; the rest were "
                            "processed", "yellow")]
        lines += [f"  {i.file}:{i.line}: {i.message}" for i in report.invalid_cases]
        lines += _listed_more(report.invalid_cases_more)
    return lines


def _note_lines(notes: list[Note]) -> list[str]:
    lines = []
    for n in notes:
        # A note's message usually names its turn itself ("turn 2: ..."): said once.
        turn = f" turn {n.turn}" if n.turn and not n.message.startswith(f"turn {n.turn}:") else ""
        model = f" on {n.model}" if n.model and n.case else ""  # a golden replayed on several models
        lines.append(f"  {n.case} ({n.where}){model}{turn}: {n.message}")
    return lines


def _listed_more(count: int) -> list[str]:
    return [f"  ... and {count:,} more (--show-covering all lists every one)"] if count else []


def _findings_counts(report: CoverageReport) -> list[str]:
    g = report.goldens
    found = [in_goldens(n, goldens, what) for n, goldens, what in (
        (report.count("contradictions"), g.contradicting, "contradiction"),
        (report.count("forbidden_expected"), g.expecting_forbidden, "forbidden expectation")) if n]
    counts = [(report.count("divergences"), "divergence"), (report.count("unbound_turns"), "unbound turn"),
              (report.unchecked_notes(), "unchecked part"), (report.count("invalid_cases"), "invalid case")]
    found += [_plural(n, what) for n, what in counts if n]
    return ["", "Findings: " + ", ".join(found) + " (listed without -q)"] if found else []


def _gate_section(gate: GateResult, style: Style) -> list[str]:
    source = gate.source or "default gate: no uncovered forbidden element"
    if gate.baseline:  # the ratchet replaced the default limits the gate file did not write
        source = f"{gate.source + '; ' if gate.source else ''}ratchet on baseline {gate.baseline}: no worse than it"
    if gate.passed:
        return [style(f"Gate ({source}): passed", "green")]
    lines = [style(f"Gate ({source}): FAILED", "red")]
    for f in gate.failures:
        lines.append(f"  x {f.message}")
        lines += [f"      {e}" for e in f.elements]
    return lines


def _value(v: object) -> str:
    if v is None:
        return "none"
    return repr(v) if isinstance(v, str) else str(v)


def check_text(report: CheckReport, style: Style = PLAIN, quiet: bool = False) -> str:
    """Every finding, then the counts; `quiet` (-q): the errors only, then the counts."""
    lines = [f.render() for f in report.findings if not quiet or f.severity == "error"]
    errors, warnings, infos = report.count("error"), report.count("warning"), report.count("info")
    summary = (f"mbt check: {_plural(len(report.files), 'file')}, {_plural(len(report.models), 'model')}: "
               f"{_plural(errors, 'error')}, {_plural(warnings, 'warning')}, {infos} info")
    lines.append(style(summary, "red" if errors else "green"))
    return "\n".join(lines) + "\n"


def elements_text(report: ElementsReport) -> str:
    lines = []
    for m in report.models:
        lines.append(f"{m.model}  ({m.kind}, {m.file}): {_plural(len(m.elements), 'element')}")
        for criterion in m.criteria:
            mine = [e for e in m.elements if e.criterion == criterion]
            if not mine:
                continue
            lines.append(f"  {criterion} ({len(mine)})")
            for e in mine:
                flag = "" if e.feasible else f"  INFEASIBLE: {e.reason}"
                lines.append(f"    {e.id}  w={e.weight:g} {e.severity.value}  {e.location}{flag}")
                lines.append(f"        {e.label}")
                lines.append(f"        {_cite(e)}")
        lines.append("")
    return "\n".join(lines)
