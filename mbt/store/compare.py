"""`mbt results compare A B`: what changed from result set A to result set B, and `--baseline-set`'s regressions.

- Cases are paired by their key (mbt.store.records). The flips come first: pass -> fail, then fail -> pass, then
  every change to or from not_judged or error; each group in A's order.
- Metric deltas, B - A, with a 95% confidence interval (mbt.store.stats): the overall pass rate and each criterion's,
  and for `runs` sets task completion, intent accuracy, escalation success and the critical-failure rate, each over
  the cases it counts. When the sets share cases the change is measured on the cases with a value in both (paired:
  Newcombe's paired interval and McNemar's exact p), else on all cases of each set (unpaired: Newcombe's interval).
- The first-deviation distribution side by side: a column per set, or per agent version of a set that holds several
  (seed 002: which release introduced the failure).
- Session diffs (seed 003's compare_turns) for the cases asked for.
- What the LLM judges of each set cost (mbt.store.query.set_usage) and the change B - A of each total: verdicts
  asked, requests, input and output tokens, cost. A set without an LLM judge's usage, or a cost without a price, is
  not measured (None), and so is the change: never taken as 0, since a cost not measured is not a free run.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Connection

from mbt.errors import MbtError, did_you_mean
from mbt.store.db import Store
from mbt.store.model import (
    Comparison,
    Delta,
    DeviationColumn,
    Flip,
    Regression,
    SessionDiff,
    SetInfo,
    SetUsage,
    TurnChange,
    UsageDelta,
)
from mbt.store.query import set_info, set_row, set_usage
from mbt.store.records import CaseRecord, Outcome
from mbt.store.schema import case_docs, cases, verdicts
from mbt.store.sessions import compare_turns
from mbt.store.stats import mcnemar_exact, newcombe_paired, newcombe_unpaired

# The flips' order after pass -> fail and fail -> pass (seed 002: regressions first).
_FLIP_ORDER = [("pass", "fail"), ("fail", "pass"), ("pass", "error"), ("pass", "not_judged"), ("error", "pass"),
               ("not_judged", "pass"), ("fail", "error"), ("fail", "not_judged"), ("error", "fail"),
               ("not_judged", "fail"), ("error", "not_judged"), ("not_judged", "error")]
FLIP_RANK = {pair: n for n, pair in enumerate(_FLIP_ORDER)}
# Run metrics of `runs` sets: (name, flag, True is good). A flag is None where the metric does not count the run.
RUN_METRICS = (("task completion", "completed", True), ("intent accuracy", "intent_correct", True),
               ("escalation success", "escalated", True), ("critical failures", "critical", False))
PAIRED = "paired: Newcombe (1998) method 10 on the cases in both sets; McNemar exact p"
UNPAIRED = "unpaired: Newcombe (1998) hybrid score interval (no case in both sets)"


@dataclass
class _Case:
    seq: int
    key: str
    id: str
    where: str
    question: str
    overall: str
    agent_version: str | None
    first_deviation: str | None
    flags: dict[str, bool | None]
    criteria: dict[str, str] = field(default_factory=dict)


def _load(conn: Connection, set_id: int) -> dict[str, _Case]:
    found: dict[str, _Case] = {}
    rows = conn.execute(select(cases.c.id, cases.c.seq, cases.c.case_key, cases.c.case_id, cases.c.location,
                               cases.c.question, cases.c.overall, cases.c.agent_version, cases.c.first_deviation,
                               cases.c.flags).where(cases.c.set_id == set_id).order_by(cases.c.seq))
    by_row: dict[int, _Case] = {}
    for row_id, seq, key, case_id, where, question, overall, version, deviation, flags in rows:
        item = _Case(seq, key, case_id, where, question, overall, version, deviation,
                     json.loads(flags) if flags else {})
        found.setdefault(key, item)  # keys are unique within a set (records.py); the first wins if not
        by_row[row_id] = item
    judged = conn.execute(select(verdicts.c.case_row, verdicts.c.criterion, verdicts.c.verdict)
                          .where(verdicts.c.set_id == set_id))
    for row_id, criterion, verdict in judged:
        if row_id in by_row:
            by_row[row_id].criteria[criterion] = verdict
    return found


def _rate(part: int, whole: int) -> float | None:
    """In percent, as every pass rate of mbt's reports."""
    return round(100.0 * part / whole, 4) if whole else None


def _points(proportion: float) -> float:
    return round(100.0 * proportion, 4)


def delta(metric: str, a: dict[str, bool], b: dict[str, bool]) -> Delta:
    """B - A for one yes/no metric given per case key (cases the metric does not count are absent)."""
    a_yes, b_yes = sum(a.values()), sum(b.values())
    out = Delta(metric=metric, a_passed=a_yes, a_n=len(a), a_rate=_rate(a_yes, len(a)), b_passed=b_yes,
                b_n=len(b), b_rate=_rate(b_yes, len(b)), delta=None, low=None, high=None, method="")
    common = [k for k in a if k in b]
    if common:
        both = sum(a[k] and b[k] for k in common)
        b_only = sum(b[k] and not a[k] for k in common)
        a_only = sum(a[k] and not b[k] for k in common)
        neither = len(common) - both - a_only - b_only
        interval = newcombe_paired(both, b_only, a_only, neither)  # first proportion: B's
        out.pairs, out.discordant, out.mcnemar_p = len(common), [a_only, b_only], mcnemar_exact(a_only, b_only)
        out.method = PAIRED
    elif a and b:
        interval = newcombe_unpaired(b_yes, len(b), a_yes, len(a))
        out.method = UNPAIRED
    else:
        out.method = "not measured: " + ("neither set counts" if not a and not b else
                                         f"set {'A' if not a else 'B'} counts no case") + " for this metric"
        return out
    out.delta, out.low, out.high = _points(interval.estimate), _points(interval.low), _points(interval.high)
    return out


def _metrics(a: dict[str, _Case], b: dict[str, _Case], run_type: str) -> list[Delta]:
    out = [delta("overall pass rate", {k: c.overall == "pass" for k, c in a.items()},
                 {k: c.overall == "pass" for k, c in b.items()})]
    criteria = list(dict.fromkeys([k for c in a.values() for k in c.criteria] + [k for c in b.values() for k in c.criteria]))
    if not (run_type == "runs" and criteria == ["model"]):  # a runs set's one criterion is its overall verdict
        for criterion in criteria:
            out.append(delta(f"{criterion} pass rate",
                             {k: c.criteria[criterion] == "pass" for k, c in a.items() if criterion in c.criteria},
                             {k: c.criteria[criterion] == "pass" for k, c in b.items() if criterion in c.criteria}))
    if run_type == "runs":
        for name, flag, _good in RUN_METRICS:
            out.append(delta(name, {k: bool(c.flags[flag]) for k, c in a.items() if c.flags.get(flag) is not None},
                             {k: bool(c.flags[flag]) for k, c in b.items() if c.flags.get(flag) is not None}))
    return out


def _flips(a: dict[str, _Case], b: dict[str, _Case]) -> list[Flip]:
    changed = [(FLIP_RANK.get((ca.overall, b[k].overall), len(FLIP_RANK)), ca.seq, k) for k, ca in a.items()
               if k in b and ca.overall != b[k].overall]
    return [Flip(key=k, id=b[k].id, where=b[k].where, question=b[k].question, before=a[k].overall,
                 after=b[k].overall) for _, _, k in sorted(changed)]


def _column_metrics(members: list[_Case]) -> dict[str, float | None]:
    """A runs column's run metrics (seed 002: metrics per version), each over the runs it counts."""
    out: dict[str, float | None] = {}
    for metric, flag, _good in RUN_METRICS:
        counted = [bool(c.flags[flag]) for c in members if c.flags.get(flag) is not None]
        out[metric] = _rate(sum(counted), len(counted))
    return out


def _columns(side: str, name: str, items: dict[str, _Case], run_type: str) -> list[DeviationColumn]:
    versions = sorted({c.agent_version for c in items.values()}, key=lambda v: (v is None, v or ""))
    split = len(versions) > 1
    groups = [(v, [c for c in items.values() if c.agent_version == v]) for v in versions] if split \
        else [(versions[0] if versions else None, list(items.values()))]
    out = []
    for version, members in groups:
        counted = Counter(c.first_deviation for c in members if c.first_deviation)
        passed = sum(c.overall == "pass" for c in members)
        out.append(DeviationColumn(side=side, set=name, agent_version=version, versions_split=split,
                                   cases=len(members), passed=passed,
                                   pass_rate=_rate(passed, len(members)),
                                   metrics=_column_metrics(members) if run_type == "runs" else {},
                                   by_type=dict(sorted(counted.items(), key=lambda kv: (-kv[1], kv[0])))))
    return out


# The LLM judges' totals compared: (metric, UsageTotals' field).
USAGE_METRICS = (("verdicts asked", "asked"), ("requests", "requests"), ("input tokens", "prompt_tokens"),
                 ("output tokens", "completion_tokens"), ("cost", "cost"))


def usage_deltas(a: SetUsage | None, b: SetUsage | None) -> list[UsageDelta]:
    """Each total of A's and B's LLM judges and B - A; None where a side is not measured. The cost's change is
    rounded to 10 decimal places (a dollar figure: float noise such as 0.0026000000000000003 is none of it)."""
    out = []
    for metric, name in USAGE_METRICS:
        before = getattr(a.totals, name) if a is not None else None
        after = getattr(b.totals, name) if b is not None else None
        change = None if before is None or after is None else after - before
        if change is not None and name == "cost":
            change = round(change, 10)
        out.append(UsageDelta(metric=metric, a=before, b=after, delta=change))
    return out


def _session(conn: Connection, set_id: int, key: str) -> tuple[str | None, list[dict[str, Any]] | None]:
    row = conn.execute(select(cases.c.location, case_docs.c.doc).join(case_docs, case_docs.c.case_row == cases.c.id)
                       .where(cases.c.set_id == set_id, cases.c.case_key == key)).first()
    if row is None:
        return None, None
    return row[0], json.loads(row[1]).get("transcript")


def compare(store: Store, first: str, second: str, sessions: Sequence[str] = (), flipped_sessions: bool = False
            ) -> Comparison:
    """Result set `first` (A) against `second` (B); `sessions`: case keys whose sessions are diffed turn by turn
    (`flipped_sessions`: every flipped case's too)."""
    with store.read() as conn:
        row_a, row_b = set_row(conn, first, store), set_row(conn, second, store)
        info_a, info_b = set_info(row_a), set_info(row_b)
        if info_a.run_type != info_b.run_type:
            raise MbtError(f"`{first}` is a {info_a.run_type} set and `{second}` a {info_b.run_type} set: compare "
                           "sets of one run type")
        a, b = _load(conn, row_a["id"]), _load(conn, row_b["id"])
        flips = _flips(a, b)
        wanted = list(dict.fromkeys([*sessions, *([f.key for f in flips] if flipped_sessions else [])]))
        for key in wanted:
            if key not in a and key not in b:
                raise MbtError(f"--case {key}: no case of that key in `{first}` or `{second}`"
                               + did_you_mean(key, [*a, *b]))
        usage_a, usage_b = set_usage(conn, row_a["id"]), set_usage(conn, row_b["id"])
        diffs = []
        for key in wanted:
            where_a, turns_a = _session(conn, row_a["id"], key)
            where_b, turns_b = _session(conn, row_b["id"], key)
            recorded = turns_a is not None and turns_b is not None
            diffs.append(SessionDiff(key=key, a_where=where_a, b_where=where_b, recorded=recorded,
                                     turns=[TurnChange(**t) for t in compare_turns(turns_a or [], turns_b or [])]
                                     if recorded else []))
    return Comparison(store=store.url.shown, a=info_a, b=info_b, matched=sum(k in b for k in a),
                      only_a=[k for k in a if k not in b], only_b=[k for k in b if k not in a], flips=flips,
                      metrics=_metrics(a, b, info_a.run_type), deviations=(_columns("A", first, a, info_a.run_type)
                                  + _columns("B", second, b, info_b.run_type)),
                      sessions=diffs, a_usage=usage_a, b_usage=usage_b, usage=usage_deltas(usage_a, usage_b))


def baseline(store: Store, name: str, run_type: str) -> SetInfo:
    """The baseline set, checked: finished (`done`) and of the run's type."""
    with store.read() as conn:
        info = set_info(set_row(conn, name, store))
    if info.status != "done":
        raise MbtError(f"--baseline-set {name}: the set is {info.status}, not done; a baseline must be a finished set")
    if info.run_type != run_type:
        raise MbtError(f"--baseline-set {name}: a {info.run_type} set; this run is {run_type}")
    return info


def regressions(store: Store, name: str, records: Sequence[CaseRecord | Outcome]) -> list[Regression]:
    """The cases that passed in the baseline set and do not pass now (fail, error or not judged: never green on
    missing evidence), in this run's order. A baseline case this run does not have is not one."""
    with store.read() as conn:
        before = _load(conn, set_row(conn, name, store)["id"])
    return [Regression(key=r.case_key, where=r.location, before="pass", after=r.overall) for r in records
            if r.overall != "pass" and r.case_key in before and before[r.case_key].overall == "pass"]
