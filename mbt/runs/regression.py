"""Failing run -> regression golden (seed 002's fifth layer): the run's path in mbt's golden format, with the
model's expected outcome where the run deviated; runs with the same path and deviation collapse into one golden."""

from __future__ import annotations

import hashlib
import json
import pickle
from pathlib import Path
from typing import Any

from mbt.errors import MbtError
from mbt.files import new_folder_mode, write_file
from mbt.model.fsm import FsmModel
from mbt.runs.judge import Verdict
from mbt.runs.loop import LOOP_DEVIATIONS
from mbt.runs.redact import Redaction

# Deviations whose golden asserts the model's call at the turn that should have made it.
_CALL_EXPECTED = ("wrong_argument", "missing_argument", "missing_call")
_CALL_FORBIDDEN = ("unexpected_call", "forbidden_call")


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _record(v: Verdict) -> bytes | None:
    """Everything a failing run's golden key is made of, as the judge recorded it (the model, the precondition, the
    turns up to the deviation with all their fields, the deviation and the calls the model made up to it), pickled:
    two runs with the same record have the same golden key (redaction is a function of the values). The record holds
    more than the key reads, never less, and pickling tells apart whatever differs (1, 1.0, True and "1" too); it may
    also tell apart equal records (a key order, an object shared or not), which only costs building that golden
    again. None when something in it does not pickle."""
    d = v.deviation
    if d is None or d.turn is None:
        return None
    parts = (v.model, v.run.precondition, v.path[: d.turn + 1], d.type, d.tool, d.argument, d.expected, d.element,
             [call for call in v.expected_calls if call[2] <= d.turn])
    try:
        return pickle.dumps(parts, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
        return None


def regression_case(v: Verdict, model: FsmModel, redaction: Redaction) -> dict[str, Any] | None:
    """The golden for one failing run; None when it has no bound path to replay (an unbound first step)."""
    d = v.deviation
    if d is None or d.type == "unbound_step" or d.turn is None or not v.path:
        return None
    r = redaction
    turns: list[dict[str, Any]] = []
    for turn in v.path[: d.turn + 1]:
        out: dict[str, Any] = {}
        if "user" in turn:
            out["user"] = r.text(turn["user"])
        out["event"] = turn["event"]
        if turn.get("args"):
            out["args"] = r.value(turn["args"])
        if turn.get("rejected"):
            out["rejected"] = True
        turns.append(out)
    last = turns[-1]
    source = v.path[d.turn]
    state: dict[str, Any] = dict(source.get("assert_state") or {"state": source["_state"]})
    if d.type in _CALL_EXPECTED and d.tool is not None:
        made = next((a for t, a, at in v.expected_calls if t == d.tool and at == d.turn), {})
        last["tool_arguments"] = {d.tool: r.value(made)}  # the model's whole call
    elif d.type in _CALL_FORBIDDEN and d.tool is not None:
        last["must_not_call"] = [d.tool]
    elif d.type == "forbidden_saying" and d.expected:
        last["must_not"] = [str(d.expected)]
    elif d.type == "wrong_state" and d.argument is not None:
        state[d.argument] = r.value(d.expected)
    last["assert_state"] = state
    calls = [(tool, args) for tool, args, at in v.expected_calls if at <= d.turn]
    forbidden = sorted({f.effect.tool for f in model.forbids
                        if f.effect is not None and f.effect.kind == "call" and f.effect.tool}
                       | ({d.tool} if d.type in _CALL_FORBIDDEN and d.tool else set()))
    first_user = next((t["user"] for t in v.path if "user" in t), None)
    summary = r.text(first_user) if first_user is not None else None
    return {
        "model": model.name,
        "severity": d.severity,
        "precondition": r.value(dict(v.run.precondition)),
        "input_summary": summary if summary is None or len(summary) <= 120 else summary[:117] + "...",
        "turns": turns,
        "allowed_tools": sorted({tool for tool, _ in calls}),
        "forbidden_tools": forbidden,
        "expected_side_effects": [f"{tool}({', '.join(f'{k}={r.value(a)!r}' for k, a in args.items())})"
                                  for tool, args in calls],
        "first_deviation": {"type": d.type, "element": d.element, "message": r.value(d.message)},
    }


class RegressionTally:
    """Regression goldens gathered run by run (`add`, in run order), mergeable part by part (`merge`, in part order):
    runs with the same golden collapse into it, the first run's golden kept, every run's place listed."""

    def __init__(self) -> None:
        self.collapsed: dict[str, dict[str, Any]] = {}
        self.skipped: list[str] = []  # failing runs without a golden, and why
        # What a failing run's golden is made of, as the judge recorded it -> the golden's key. Failing runs repeat
        # (24,000 of the order example's 28,000 runs collapse into a handful of goldens): a run whose record was seen
        # gets its golden's key without the golden being built, redacted and canonicalised again.
        self._known: dict[bytes, str] = {}

    def __getstate__(self) -> dict[str, Any]:
        return {"collapsed": self.collapsed, "skipped": self.skipped}  # the cache stays in the process that made it

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.collapsed, self.skipped, self._known = state["collapsed"], state["skipped"], {}

    def add(self, v: Verdict, models: dict[str, Any], redaction: Redaction) -> None:
        if v.deviation is None or v.invalid is not None:
            return
        if v.deviation.type in LOOP_DEVIATIONS:  # the turn loop's, not the model's: a golden cannot assert it
            self.skipped.append(f"{v.run.where} ({v.run.id}): {v.deviation.type} is a turn-loop deviation, which a "
                                "golden of the model cannot assert: no golden")
            return
        if not isinstance(models[v.model], FsmModel):  # a contract's deviations: no path of events to replay
            self.skipped.append(f"{v.run.where} ({v.run.id}): {v.deviation.type} on {models[v.model].kind} "
                                f"`{v.model}`: regression goldens are written for fsm models only")
            return
        ref = {"run": v.run.id, "where": v.run.where, "step": v.deviation.where}
        record = _record(v)
        known = self._known.get(record) if record is not None else None
        if known is not None:
            self.collapsed[known]["traces"].append(ref)
            return
        case = regression_case(v, models[v.model], redaction)
        if case is None:
            self.skipped.append(f"{v.run.where} ({v.run.id}): {v.deviation.type} before any bound step: no golden")
            return
        key = _canonical([case["model"], case["precondition"], case["turns"], case["first_deviation"]["type"],
                          case["first_deviation"]["element"]])
        if record is not None:
            self._known[record] = key
        if key in self.collapsed:
            self.collapsed[key]["traces"].append(ref)
            return
        digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:8]
        kind = v.deviation.type.upper().replace("_", "-")
        self.collapsed[key] = {"id": f"REG-{kind}-{digest}", **case, "traces": [ref]}

    def merge(self, later: RegressionTally) -> None:
        """Add the goldens of runs judged after this tally's (a later part's)."""
        for key, case in later.collapsed.items():
            if key in self.collapsed:
                self.collapsed[key]["traces"].extend(case["traces"])
            else:
                self.collapsed[key] = case
        self.skipped.extend(later.skipped)

    def goldens(self) -> tuple[dict[str, list[dict[str, Any]]], list[str]]:
        """Goldens per model (sorted by id, each one's runs by place) and the failing runs that got none."""
        out: dict[str, list[dict[str, Any]]] = {}
        for case in sorted(self.collapsed.values(), key=lambda c: c["id"]):
            case["traces"].sort(key=lambda t: (t["where"], t["run"]))
            out.setdefault(case["model"], []).append(case)
        return out, list(self.skipped)


def regression_goldens(verdicts: list[Verdict], models: dict[str, Any], redaction: Redaction
                       ) -> tuple[dict[str, list[dict[str, Any]]], list[str]]:
    """Goldens per model (sorted by id) and the failing runs that got none (with the reason)."""
    tally = RegressionTally()
    for v in verdicts:
        tally.add(v, models, redaction)
    return tally.goldens()


def as_jsonl(cases: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(c, ensure_ascii=False, sort_keys=False, default=str) + "\n" for c in cases)


def write_regressions(folder: str, goldens: dict[str, list[dict[str, Any]]]) -> list[str]:
    """One JSONL file per model in `folder` (created when missing; its parent must exist), through the one writer."""
    root = Path(folder)
    if root.exists() and not root.is_dir():
        raise MbtError(f"--regressions {folder} is a file; give a folder")
    if not root.exists():
        if not root.parent.is_dir():
            raise MbtError(f"cannot write {folder}: folder {root.parent} does not exist")
        root.mkdir(mode=new_folder_mode())
    written = []
    for model in sorted(goldens):
        target = root / f"regressions-{model}.jsonl"  # model names are DSL names: no separators
        write_file(target, as_jsonl(goldens[model]))
        written.append(str(target))
    return written
