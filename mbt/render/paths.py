"""Reads a path to highlight (`mbt render --path`): transition keys, or a JSON file of keys or events (a counterexample)."""

from __future__ import annotations

import json
from pathlib import Path

from mbt.engine.fsm import CompiledFsm
from mbt.errors import LocatedError, MbtError, Problem
from mbt.goldens.cases import GoldenCase, Turn
from mbt.goldens.replay_fsm import FsmReplayer
from mbt.kind import elements_of
from mbt.model.common import ModelBase
from mbt.model.fsm import FsmModel
from mbt.reader import read_text


def read_path(spec: str, model: ModelBase) -> list[str]:
    """`spec` is a file (`.json`) or a comma-separated list of transition keys; returns transition keys in order.

    A JSON file may be a list, or an object with `path`, `steps`, `transitions`, `events` or `counterexample`
    (the shape of mbt's counterexample output: steps with `transition`, or with `event` + `args`). Steps that only
    name events are replayed on the model from its initial state (or the object's `precondition`) to find the
    transitions they take, so guards decide the branch exactly as in coverage.
    """
    if spec.endswith(".json") or Path(spec).is_file():
        text = read_text(Path(spec), spec)
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise LocatedError([Problem(spec, err.lineno, err.colno, f"not valid JSON: {err.msg}")]) from None
        return _from_json(data, model, spec)
    keys = [part.strip() for part in spec.split(",") if part.strip()]
    if not keys:
        raise MbtError("--path is empty; give transition keys separated by commas, or a JSON file")
    return keys


def _from_json(data: object, model: ModelBase, where: str) -> list[str]:
    precondition: dict = {}
    steps = data
    if isinstance(data, dict):
        if isinstance(data.get("counterexample"), (dict, list)):
            return _from_json(data["counterexample"], model, where)
        precondition = data.get("precondition") or {}
        if not isinstance(precondition, dict):
            raise MbtError(f"{where}: `precondition` must be an object")
        steps = next((data[k] for k in ("path", "steps", "transitions", "events") if k in data), None)
    if not isinstance(steps, list) or not steps:
        raise MbtError(f"{where}: expected a list of steps (transition keys, or events), or an object with "
                       "`path`, `steps`, `transitions` or `events`")
    keys: list[str | None] = []
    events: list[dict] = []
    for i, step in enumerate(steps, start=1):
        if isinstance(step, dict) and step.get("step") == 0 and step.get("event") is None \
                and step.get("transition") is None:
            continue  # a counterexample's step 0 is its start configuration, not a move
        if isinstance(step, str):
            keys.append(step if step.startswith("transition:") or "->" in step or step in _keys(model) else None)
            events.append({"event": step})
        elif isinstance(step, dict) and isinstance(step.get("transition"), str):
            keys.append(step["transition"])
            events.append({})
        elif isinstance(step, dict) and isinstance(step.get("event"), str):
            keys.append(None)
            events.append({"event": step["event"], "args": step.get("args") or {}})
        else:
            raise MbtError(f"{where}: step {i} names neither a `transition` nor an `event`")
    if all(k is not None for k in keys):
        return [k for k in keys if k is not None]
    if any(k is not None for k in keys):
        raise MbtError(f"{where}: give every step as a transition key, or every step as an event, not a mix")
    return _replay_events(model, events, precondition, where)


def _keys(model: ModelBase) -> set[str]:
    return {t.key for t in model.transitions} if isinstance(model, FsmModel) else set()


def _replay_events(model: ModelBase, events: list[dict], precondition: dict, where: str) -> list[str]:
    """Replay the events on the model (the same engine as coverage) and return the transitions taken."""
    if not isinstance(model, FsmModel):
        raise MbtError(f"--path highlights paths on state machines; `{model.name}` is a {model.kind}")
    # the FSM's own replayer: a path is the transitions its snapshots record
    replayer = FsmReplayer(CompiledFsm(model, elements_of(model)))
    case = GoldenCase(id="path", file=where, line=1, precondition=precondition,
                      turns=[Turn(event=e["event"], args=e.get("args") or {}) for e in events])
    run = replayer.replay(case, keep_snapshots=True)
    if run.invalid:
        raise MbtError(f"{where}: {run.invalid}")
    if run.unbound:
        raise MbtError(f"{where}: step {run.unbound[0].turn}: {run.unbound[0].reason}")
    keys = []
    for number, snap in enumerate(run.snapshots, start=1):
        if snap.transition is None:
            raise MbtError(f"{where}: step {number} (`{events[number - 1]['event']}`) is refused by the model "
                           f"in state `{snap.state}`")
        keys.append(snap.transition)
    return keys
