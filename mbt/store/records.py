"""What a result set keeps of an `mbt eval` or `mbt runs` report: one CaseRecord per case, the set's name, who ran
it and with what.

A record's columns are what the store indexes, filters and compares on; the case itself is kept whole as the JSON
its report gives (`doc`), with the session's turns beside it (`doc["transcript"]`), so fields a report gains later are
kept without a change here.

A case's key pairs it across result sets (`mbt results compare`, `--baseline-set`):
- eval: `STEM/ID`, the golden file's name without suffix (and its sheet) and the case's id, as `mbt eval` names a
  case (`card-qna/3`, `book[QNA]/3`); when two golden files of a set share a stem, their full paths are used;
- runs: the case id the run declares (a transcript's `case_id`), else the file's name without suffix when the file
  holds one run, else the run's id (its conversation, session or trace id); the same rules `mbt eval` matches runs
  to cases by.
"""

from __future__ import annotations

import datetime as dt
import getpass
import json
import os
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mbt.answers.results import CaseResult, EvalReport
from mbt.judges.usage import EvalBudget, JudgeUsage
from mbt.runs.results import RunResult, RunsReport
from mbt.runs.steps import ObservedRun
from mbt.store.sessions import session_turns

RUN_TYPES = ("eval", "runs", "coverage")
STATUSES = ("running", "done", "failed", "cancelled")
VERDICTS = ("pass", "fail", "not_judged", "error")
# `mbt runs` verdicts as a result set's overall verdicts: a deviation fails, an invalid run is an error.
RUN_VERDICTS = {"pass": "pass", "deviation": "fail", "not_judged": "not_judged", "invalid": "error"}
MAX_NAME = 255
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass
class CaseRecord:
    case_key: str
    case_id: str
    location: str
    turns: int
    question: str
    answer: str | None
    overall: str  # pass | fail | not_judged | error
    search: str
    doc: dict[str, Any]
    verdicts: list[tuple[str, str, str, str]] = field(default_factory=list)  # (criterion, verdict, reason, judge)
    agent_version: str | None = None
    model: str | None = None
    prompt_version: str | None = None
    wall_ms: float | None = None
    error: str | None = None
    first_deviation: str | None = None
    first_deviation_element: str | None = None
    flags: dict[str, bool | None] | None = None


@dataclass
class NewSet:
    """A result set about to be written: its name and what it was run with."""

    name: str
    suite: str
    run_type: str
    executor: str
    judge: dict[str, Any]
    meta: dict[str, Any]
    started_at: str = ""


def now() -> str:
    """UTC now as the store writes times (SOURCE_DATE_EPOCH honoured, as for every report's date)."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "")
    when = dt.datetime.fromtimestamp(int(epoch), dt.UTC) if epoch.isdigit() else dt.datetime.now(dt.UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def default_name(suite: str, started_at: str) -> str:
    """Seed 001's `<suite>_TestResult_<timestamp>`, the timestamp in UTC to the second: `card-qna_TestResult_
    20250106-083000`."""
    stamp = started_at.replace("-", "").replace(":", "").replace("T", "-").rstrip("Z")
    return f"{suite}_TestResult_{stamp}"


def check_name(name: str, what: str = "a result set's name") -> str:
    """A name as the store keeps it; MbtError-worthy text when it cannot be one."""
    from mbt.errors import MbtError

    if not name.strip():
        raise MbtError(f"{what} is empty")
    if name != name.strip():
        raise MbtError(f"{what} `{name}` starts or ends with a space")
    if _CONTROL.search(name):
        raise MbtError(f"{what} {json.dumps(name)} holds a control character")
    if len(name) > MAX_NAME:
        raise MbtError(f"{what} is {len(name)} characters long; at most {MAX_NAME}")
    return name


def suite_name(paths: Sequence[str]) -> str:
    """A suite's name from its inputs: the first golden (or run) file's or folder's name without suffix."""
    if not paths:
        return "results"
    first = Path(paths[0].rstrip("/\\"))
    return (first.stem if first.suffix else first.name) or "results"


def executor() -> str:
    """Who ran the set: the CI job when a CI's variables say so, else the user."""
    env = os.environ
    if env.get("GITHUB_ACTIONS") == "true":
        run = env.get("GITHUB_RUN_ID", "?")
        attempt = env.get("GITHUB_RUN_ATTEMPT")
        job = f"github:{env.get('GITHUB_REPOSITORY', '?')} run {run}" + (f".{attempt}" if attempt else "")
        return job + (f" ({env['GITHUB_ACTOR']})" if env.get("GITHUB_ACTOR") else "")
    if env.get("GITLAB_CI") == "true" or env.get("CI_JOB_ID"):
        job = f"gitlab:{env.get('CI_PROJECT_PATH', '?')} job {env.get('CI_JOB_ID', '?')}"
        return job + (f" ({env['GITLAB_USER_LOGIN']})" if env.get("GITLAB_USER_LOGIN") else "")
    if env.get("CI") in ("true", "1"):
        return "ci" + (f":{env['BUILD_ID']}" if env.get("BUILD_ID") else "")
    try:
        return f"user:{getpass.getuser()}"
    except (KeyError, OSError):  # no name for this uid (a container)
        return f"user:uid {os.getuid()}" if hasattr(os, "getuid") else "user:?"


def fold(text: str) -> str:
    """Text as --search compares it: Unicode NFC (a Vietnamese letter typed composed or decomposed is one letter),
    then case-folded (beyond ASCII: Ễ and ễ, ß and ss)."""
    return unicodedata.normalize("NFC", text).casefold()


def _fold(parts: Iterable[str | None]) -> str:
    return "\n".join(fold(p) for p in parts if p)


def case_scope(file: str) -> str:
    """A golden file's name without suffix, with its sheet: what qualifies a case id (`card-qna`, `book[QNA]`)."""
    found = re.fullmatch(r"(.*?)(\[[^\]]*\])?", file)
    base, sheet = (found.group(1), found.group(2) or "") if found else (file, "")
    return Path(base).stem + sheet


def _unique_keys(wanted: list[str], fallback: list[str]) -> list[str]:
    """Each wanted key, or its fallback where two cases want the same one (then the fallback must tell them apart)."""
    counts = Counter(wanted)
    return [w if counts[w] == 1 else f for w, f in zip(wanted, fallback)]


def _context_of(run: ObservedRun | None) -> dict[str, Any]:
    if run is None:
        return {}
    c = run.context
    return {"service_name": c.service_name, "service_version": c.service_version, "request_model": c.request_model,
            "response_model": c.response_model, "prompt_version": c.prompt_version,
            "conversation_id": c.conversation_id, "input_tokens": c.input_tokens, "output_tokens": c.output_tokens,
            "wall_ms": c.wall_ms, "model_ms": c.model_ms, "tool_ms": c.tool_ms}


def _answering_run(case: CaseResult, by_where: Mapping[str, list[ObservedRun]]) -> ObservedRun | None:
    """The run that answered a case, among the runs read from where the case says (a file may hold several)."""
    found = by_where.get(case.run or "", [])
    if len(found) == 1:
        return found[0]
    names = {case.id, f"{case_scope(case.file)}/{case.id}"}
    chosen = [r for r in found if r.case_id in names or r.context.conversation_id in names or r.id in names]
    return chosen[0] if len(chosen) == 1 else None


def eval_keys(cases: Sequence[tuple[str, str]]) -> list[str]:
    """Each eval case's key from its golden file and id, in order: `STEM/ID` (the file's name without suffix, with
    its sheet), or `FILE/ID` with the file's path where two cases would share a key (module docstring)."""
    return _unique_keys([f"{case_scope(file)}/{case_id}" for file, case_id in cases],
                        [f"{file}/{case_id}" for file, case_id in cases])


def eval_record(key: str, case: CaseResult, answering: ObservedRun | None) -> CaseRecord:
    """One case of an `mbt eval` report as the store keeps it; `answering`, the run that answered it, gives its
    session (the history) and the agent's versions."""
    doc = case.model_dump(mode="json")
    doc["transcript"] = session_turns(answering) if answering is not None else None
    doc["context"] = _context_of(answering)
    errors = ([f"agent: {case.agent_error}"] if case.agent_error is not None else []) + [
        f"{k}: {v.reason}" for k, v in case.criteria.items() if v.verdict == "error"]
    model = getattr(case, "model", None)
    deviation = model.reason.split(" at ", 1)[0] if model is not None and model.verdict == "deviation" else None
    first = case.turns[0] if case.turns else None
    context = answering.context if answering is not None else None
    return CaseRecord(
        case_key=key, case_id=case.id, location=case.where, turns=len(case.turns),
        question=first.question if first else "", answer=first.actual if first else None,
        overall=case.overall.verdict,
        search=_fold([t.question for t in case.turns] + [t.actual for t in case.turns]), doc=doc,
        verdicts=[(k, v.verdict, v.reason, v.judge) for k, v in case.criteria.items()],
        agent_version=context.service_version if context else None,
        model=(context.response_model or context.request_model) if context else None,
        prompt_version=context.prompt_version if context else None,
        wall_ms=context.wall_ms if context else None, error="; ".join(errors) or None,
        first_deviation=deviation)


def eval_records(report: EvalReport, runs: Sequence[ObservedRun] = ()) -> list[CaseRecord]:
    """One record per case of an `mbt eval` report; `runs`, the runs it read, give each case its session."""
    by_where: dict[str, list[ObservedRun]] = {}
    for run in runs:
        by_where.setdefault(run.where, []).append(run)
    keys = eval_keys([(c.file, c.id) for c in report.cases])
    return [eval_record(key, case, _answering_run(case, by_where) if case.run else None)
            for key, case in zip(keys, report.cases)]


@dataclass(frozen=True)
class Outcome:
    """A case's key, where it is and its overall verdict: what a baseline set's regressions are found from."""

    case_key: str
    location: str
    overall: str


def eval_outcomes(report: EvalReport) -> list[Outcome]:
    """Every case of an `mbt eval` report by its key (eval_records' keys), without its document."""
    keys = eval_keys([(c.file, c.id) for c in report.cases])
    return [Outcome(key, case.where, case.overall.verdict) for key, case in zip(keys, report.cases)]


def _run_flags(r: RunResult, handoff_suites: frozenset[str]) -> dict[str, bool | None]:
    """The run's part in each run metric (mbt.runs.metrics' rules): None where the metric does not count it."""
    judged = r.verdict in ("pass", "deviation")
    return {
        "fully_judged": judged,
        "completed": bool(r.completed or (r.handed_off and r.suite in handoff_suites)) if judged else None,
        "intent_correct": (r.intent == r.expected_intent) if r.expected_intent is not None and r.verdict != "invalid"
        else None,
        "escalated": bool(r.escalated) if judged and r.escalation_expected else None,
        "critical": bool(r.critical) if r.verdict != "invalid" else None,
    }


def runs_records(report: RunsReport, runs: Sequence[ObservedRun] = (),
                 handoff_suites: frozenset[str] = frozenset()) -> list[CaseRecord]:
    """One record per judged run of an `mbt runs` report; `runs`, the runs it read, give each its session and key."""
    observed = {(r.where, r.id): r for r in runs}
    per_file = Counter(r.file for r in runs) if runs else Counter(r.file for r in report.runs)
    wanted, fallback = [], []
    for result in report.runs:
        run = observed.get((result.where, result.id))
        declared = run.case_id if run is not None else None
        if declared:
            wanted.append(declared)
        elif per_file[result.file] == 1:
            wanted.append(Path(result.file).stem)
        else:
            wanted.append(result.id)
        fallback.append(f"{result.where}/{result.id}")
    out = []
    for key, result in zip(_unique_keys(wanted, fallback), report.runs):
        run = observed.get((result.where, result.id))
        turns = session_turns(run) if run is not None else []
        doc = result.model_dump(mode="json")
        doc["transcript"] = turns if run is not None else None
        first = turns[0] if turns else None
        deviation = result.deviation
        verdict = RUN_VERDICTS.get(result.verdict, "error")
        reason = (f"{deviation.type} at {deviation.where}: {deviation.message}" if deviation is not None
                  else "; ".join(result.not_judged) or result.invalid or "no deviation from the model")
        out.append(CaseRecord(
            case_key=key, case_id=result.id, location=result.where, turns=len(turns),
            question=first["prompt"] if first else "", answer=first["answer"] if first else None, overall=verdict,
            search=_fold([t["prompt"] for t in turns] + [t["answer"] for t in turns]), doc=doc,
            verdicts=[("model", verdict, reason, result.model or "mbt runs")],
            agent_version=result.context.service_version,
            model=result.context.response_model or result.context.request_model,
            prompt_version=result.context.prompt_version, wall_ms=result.context.wall_ms,
            error=result.invalid, first_deviation=deviation.type if deviation else None,
            first_deviation_element=deviation.element if deviation else None,
            flags=_run_flags(result, handoff_suites)))
    return out


def eval_judge(report: EvalReport) -> dict[str, Any]:
    """The judge configuration of an eval set: the default judge, the threshold, the criteria with their weights,
    the judge deciding each criterion, and the judge versions the verdicts name."""
    versions = sorted({v.judge_version for c in report.cases for v in c.criteria.values() if v.judge_version})
    per_criterion = {c.key: getattr(c, "judge", "") for c in report.criteria if getattr(c, "judge", "")}
    return {"judge": report.judge, "threshold": report.threshold,
            "criteria": {c.key: c.weight for c in report.criteria}, "judges": per_criterion,
            "judge_versions": versions, "models": list(report.models)}


def report_summary(report: EvalReport | RunsReport) -> dict[str, Any]:
    """The report without its cases (and without the goldens' coverage, which `mbt coverage` keeps, and what its LLM
    judges cost, which the store keeps in tables of its own: report_usage): totals, metrics, the gate, inputs that
    could not be used."""
    if isinstance(report, EvalReport):
        return report.model_dump(mode="json", exclude={"cases", "judge_usage", "budget"})
    return report.model_dump(mode="json", exclude={"runs", "coverage", "judge_usage", "budget"})


def report_usage(report: EvalReport | RunsReport) -> tuple[list[JudgeUsage], EvalBudget | None]:
    """What the report's LLM judges cost, and its budget, as the store keeps them (mbt.store.write.write_usage)."""
    return list(report.judge_usage), report.budget
