"""`mbt results` as text: the list of result sets, one set's overview and case list (seed 001's screens), one case in
detail with its session, and a comparison of two sets. Formats only: mbt.store computes every figure."""

from __future__ import annotations

from typing import Any

from mbt.report.llm_cost import budget_line, judge_lines, totals_line
from mbt.store.model import (
    CaseDetail,
    Comparison,
    Delta,
    DeviationColumn,
    SetInfo,
    SetList,
    SetUsage,
    SetView,
    UsageDelta,
)

LIST_TEXT = 80  # characters of a question or an answer in a list line (the detail shows them whole)


def _short(text: str | None, width: int = LIST_TEXT) -> str:
    if text is None:
        return "(no answer recorded)"
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[:width - 1] + "…"


def _percent(rate: float | None) -> str:
    return "n/a" if rate is None else f"{rate:g}%"


def _time(iso: str | None) -> str:
    return "-" if not iso else iso.replace("T", " ")


def _duration(info: SetInfo) -> str:
    if not info.ended_at:
        return "-"
    import datetime as dt

    seconds = int((dt.datetime.fromisoformat(info.ended_at) - dt.datetime.fromisoformat(info.started_at))
                  .total_seconds())
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    return ["  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() for line in [header, *rows]]


def list_text(result: SetList) -> str:
    head = f"result sets in {result.store}: {result.matching} matching"
    if len(result.sets) < result.matching:
        head += f", the newest {len(result.sets)} shown"
    if not result.sets:
        return head + "\n"
    rows = [[s.name, "interrupted" if s.interrupted else s.status, s.run_type, _time(s.started_at), _duration(s),
             s.executor, str(s.cases_total),
             _percent(s.pass_rate)] for s in result.sets]
    return "\n".join([head, *_table(["NAME", "STATUS", "TYPE", "STARTED (UTC)", "TOOK", "EXECUTOR", "CASES",
                                     "PASS RATE"], rows)]) + "\n"


def _judge_line(info: SetInfo) -> str:
    judge = info.judge
    if info.run_type == "eval":
        criteria = judge.get("criteria")
        weights = (", ".join(f"{k}={v}" for k, v in criteria.items()) if isinstance(criteria, dict)
                   else str(criteria) if criteria else "the default")
        threshold = f", threshold {judge['threshold']}" if judge.get("threshold") is not None else ""
        return f"judge {judge.get('judge', '?')}, criteria {weights}{threshold}"
    models = ", ".join(judge.get("models") or []) or "?"
    return f"judged on {models}" + (f", gate {judge['gate']}" if judge.get("gate") else "")


def set_header(info: SetInfo) -> list[str]:
    lines = [f"{info.name}  ({info.run_type}, {'interrupted' if info.interrupted else info.status})",
             f"  started {_time(info.started_at)}, ended {_time(info.ended_at)}, executor {info.executor}",
             f"  agent version {info.agent_version or '-'}, model {info.model_version or '-'}, "
             f"prompt version {info.prompt_version or '-'}",
             f"  {_judge_line(info)}"]
    if info.error:
        lines.append(f"  {info.status}: {info.error}")
    if info.interrupted:
        lines.append("  interrupted: its writer stopped before the end (`mbt eval --resume NAME` continues it); its "
                     "cases may be incomplete")
    elif info.status == "running":
        lines.append(f"  still running: {info.writer}; its cases may be incomplete")
    return lines


def usage_lines(usage: SetUsage | None) -> list[str]:
    """What a set's LLM judges cost: a line per judge over the runs that wrote the set, each run's budget, and the
    totals when there are several judges (nothing for a set without an LLM judge's usage)."""
    if usage is None:
        return []
    over = f" (over {usage.runs} runs: the first, then each resumed or retried one)" if usage.runs > 1 else ""
    lines = [f"  LLM judges{over}:", *judge_lines(usage.judges, "    ")]
    lines += [budget_line(b, "    ", f"budget of run {b.run}" if usage.runs > 1 else "budget") for b in usage.budgets]
    if len(usage.judges) > 1:
        lines.append(totals_line(usage.totals, "    "))
    return lines


def show_text(view: SetView) -> str:
    o = view.overview
    lines = set_header(view.set)
    lines += [f"  run successfully: {o.cases_ok}   with errors: {o.cases_with_errors}   "
              f"single-turn: {o.single_turn}   multi-turn: {o.multi_turn}",
              f"  overall: {o.overall.passed} pass, {o.overall.failed} fail, {o.overall.not_judged} not judged, "
              f"{o.overall.errors} error (pass rate {_percent(o.overall.pass_rate)} of the cases run successfully)"]
    for c in o.criteria:
        weight = f" (weight {c.weight})" if c.weight is not None else ""
        lines.append(f"  {c.key}{weight}: {c.passed} pass, {c.failed} fail, {c.not_judged} not judged, "
                     f"{c.errors} error (pass rate {_percent(c.pass_rate)})")
    lines += usage_lines(view.usage)
    given = {k: v for k, v in view.filters.items() if v}
    shown = ", ".join(f"{k} {','.join(v) if isinstance(v, list) else v}" for k, v in given.items())
    lines += ["", f"cases: {view.matching} matching" + (f" ({shown})" if shown else "")
              + (f", {len(view.cases)} shown from no. {view.offset + 1}" if len(view.cases) < view.matching else "")]
    for case in view.cases:
        lines.append(f"{case.seq:>5} {case.overall.upper():10} {case.key}  {case.kind}-turn  {case.where}")
        lines.append(f"      Q: {_short(case.question)}")
        lines.append(f"      A: {_short(case.answer)}")
        extra = [f"{k} {v}" for k, v in case.criteria.items()]
        if case.first_deviation:
            extra.append(f"first deviation {case.first_deviation}")
        if case.agent_version:
            extra.append(f"agent {case.agent_version}")
        if extra:
            lines.append("      " + "; ".join(extra))
        if case.error:
            lines.append(f"      error: {_short(case.error, 200)}")
    if len(view.cases) < view.matching:
        lines.append(f"(--limit and --offset page through the other {view.matching - len(view.cases)})")
    return "\n".join(lines) + "\n"


def _session_lines(turns: list[dict[str, Any]] | None) -> list[str]:
    if turns is None:
        return ["  (no session recorded: no run answered this case)"]
    lines = []
    for n, turn in enumerate(turns, start=1):
        lines.append(f"  turn {n}: {turn.get('prompt')!r}")
        lines.append(f"    answer: {turn.get('answer')!r}" if turn.get("answer") is not None else "    answer: (none)")
        for call in turn.get("calls") or []:
            lines.append(f"    call: {call}")
        for key, label in (("matched_tools", "matched tools"), ("commands", "commands"),
                           ("stop_reason", "stop reason"), ("tokens", "tokens")):
            if turn.get(key) is not None:
                lines.append(f"    {label}: {turn[key]}")
    return lines


def case_text(detail: CaseDetail) -> str:
    case, doc = detail.case, detail.doc
    lines = [f"case {case.key} of {detail.set}: {case.overall.upper()} ({case.kind}-turn, {case.turns} turn(s)) "
             f"{case.where}", "explanation:"]
    for v in detail.verdicts:
        lines.append(f"  {v.criterion}: {v.verdict} [{v.judge}] {v.reason}")
    overall = doc.get("overall")
    if isinstance(overall, dict) and overall.get("reason"):
        lines.append(f"  overall: {overall['reason']}")
    deviation = doc.get("deviation")
    if isinstance(deviation, dict):
        lines.append(f"  first deviation: {deviation.get('type')} at {deviation.get('where')}: "
                     f"{deviation.get('message')}")
    if case.error:
        lines.append(f"  error: {case.error}")
    turns = doc.get("turns")
    if isinstance(turns, list) and turns and isinstance(turns[0], dict):
        lines.append("questions and answers:")
        for n, t in enumerate(turns, start=1):
            lines.append(f"  turn {n}: {t.get('question')!r}")
            for expected in t.get("expected") or []:
                lines.append(f"    expected: {expected!r}")
            lines.append(f"    actual:   {t.get('actual')!r}" if t.get("actual") is not None
                         else "    actual:   (no answer recorded)")
    lines.append("history (the session):")
    lines += _session_lines(doc.get("transcript"))
    return "\n".join(lines) + "\n"


def _points(value: float | None) -> str:
    if value is None:
        return "n/a"
    if value != 0 and round(value, 1) == 0:  # "-0.0" would hide which side of zero a bound lies on
        return f"{value:+.2g}"
    return f"{value:+.1f}"


def _delta_line(d: Delta) -> str:
    a = f"A {_percent(None if d.a_rate is None else round(d.a_rate, 2))} ({d.a_passed}/{d.a_n})"
    b = f"B {_percent(None if d.b_rate is None else round(d.b_rate, 2))} ({d.b_passed}/{d.b_n})"
    if d.delta is None:
        return f"  {d.metric}: {a}, {b}; {d.method}"
    text = f"  {d.metric}: {a}, {b}; change {_points(d.delta)} points, 95% CI [{_points(d.low)}, {_points(d.high)}]"
    if d.pairs:
        text += (f"; {d.pairs} paired cases, {d.discordant[0]} yes only in A, {d.discordant[1]} yes only in B, "
                 f"McNemar exact p = {d.mcnemar_p:.4g}")
    else:
        text += "; unpaired (no case in both sets)"
    return text


def _usage_value(metric: str, value: float | None) -> str:
    if value is None:
        return "not measured"
    return f"${value:.4f}" if metric == "cost" else f"{value}"


def _usage_delta_line(d: UsageDelta) -> str:
    if d.delta is None:
        change = "not measured"
    elif d.metric == "cost":
        change = f"{'+' if d.delta >= 0 else '-'}${abs(d.delta):.4f}"
    else:
        change = f"{d.delta:+}"
    return f"  {d.metric}: A {_usage_value(d.metric, d.a)}, B {_usage_value(d.metric, d.b)}; change {change}"


def _column_name(column: DeviationColumn) -> str:
    if not column.versions_split:
        return column.side + (f" ({column.agent_version})" if column.agent_version else "")
    return f"{column.side} ({column.agent_version or 'no version'})"


def compare_text(result: Comparison) -> str:
    a, b = result.a, result.b
    lines = [f"A: {a.name} ({a.run_type}, {a.status}, {a.cases_total} cases, started {_time(a.started_at)}, "
             f"agent version {a.agent_version or '-'})",
             f"B: {b.name} ({b.run_type}, {b.status}, {b.cases_total} cases, started {_time(b.started_at)}, "
             f"agent version {b.agent_version or '-'})",
             f"cases in both: {result.matched}; only in A: {len(result.only_a)}; only in B: {len(result.only_b)}"]
    for label, status in (("A", a.status), ("B", b.status)):
        if status != "done":
            lines.append(f"note: set {label} is {status}, not done: its cases may be incomplete")
    lines += ["", f"flipped cases ({len(result.flips)}):" if result.flips else "flipped cases: none"]
    for f in result.flips:
        lines.append(f"  {f.before} -> {f.after}".ljust(26) + f" {f.key}  {f.where}  {_short(f.question, 60)}")
    lines += ["", "metrics (B - A in percentage points; docs/results.md says how each interval is computed):"]
    lines += [_delta_line(d) for d in result.metrics]
    if result.a_usage is None and result.b_usage is None:
        lines += ["", "LLM judges' cost: not measured in either set (neither holds an LLM judge's usage)"]
    else:
        lines += ["", "LLM judges' cost (B - A; not measured: a set without an LLM judge's usage, or a cost without "
                      "a price):"]
        lines += [_usage_delta_line(d) for d in result.usage]
    lines += ["", "first deviations (count per type) and metrics; a column per agent version where a set holds several:"]
    types = sorted({t for c in result.deviations for t in c.by_type},
                   key=lambda t: (-sum(c.by_type.get(t, 0) for c in result.deviations), t))
    header = ["TYPE"] + [_column_name(c) for c in result.deviations]
    rows = [[t] + [str(c.by_type.get(t, 0)) for c in result.deviations] for t in types]
    rows.append(["(cases)"] + [str(c.cases) for c in result.deviations])
    rows.append(["(pass rate)"] + [_percent(None if c.pass_rate is None else round(c.pass_rate, 2))
                                   for c in result.deviations])
    for metric in dict.fromkeys(m for c in result.deviations for m in c.metrics):
        rows.append([f"({metric})"] + [_percent(None if c.metrics.get(metric) is None
                                                else round(c.metrics[metric] or 0.0, 2)) for c in result.deviations])
    lines += ["  " + line for line in _table(header, rows)]
    if not types:
        lines.append("  no first deviation recorded in either set")
    for diff in result.sessions:
        lines += ["", f"session {diff.key}: A {diff.a_where or '(not in A)'}, B {diff.b_where or '(not in B)'}"]
        if not diff.recorded:
            lines.append("  not compared: a side kept no session")
            continue
        for turn in diff.turns:
            if turn.same:
                lines.append(f"  turn {turn.turn}: same")
                continue
            lines.append(f"  turn {turn.turn}:")
            for name, (before, after) in turn.changed.items():
                lines.append(f"    {name}: {before!r} -> {after!r}")
    return "\n".join(lines) + "\n"
