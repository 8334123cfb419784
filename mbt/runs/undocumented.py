"""Undocumented behaviour seen in observed runs (seed 004's level 4: 未文档化行为): steps the model neither allows nor
forbids, listed as candidates for the model with where each was seen (docs/runs.md, "Marked runs and undocumented
behaviour").

Read from each run's first deviation (the judgement stops there: later steps are not seen), on an FSM model:

    step_not_allowed   an event the model refuses in a state where no transition on it leaves and no forbid names
                       it (not a `complete` model's generated forbid): kind `event`. A step refused by a guard, or
                       by a forbid, is behaviour the model documents, and not a candidate
    unexpected_call    a tool call the model makes in no transition there and no forbid names: kind `call`
    unbound_step       a user text or tool result no binding of the model reads: kind `text`

Candidates are grouped by model, kind, state and event or tool; the most runs first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from mbt.measure.level_models import Sighting, Undocumented
from mbt.model.fsm import FsmModel
from mbt.runs.marks import marks_of
from mbt.runs.results import RunResult

Kind = Literal["event", "call", "text"]


def documented(model: FsmModel, state: str, event: str) -> bool:
    """Whether the model says what `event` does in `state`: a transition on it leaves the state (its guard may still
    refuse), or a forbid written by the model's author names the state and the event."""
    if any(t.source == state and t.event == event for t in model.transitions):
        return True
    return any(not f.sneak and f.source in (None, state) and f.event in (None, event) for f in model.forbids)


def _candidate(r: RunResult, model: FsmModel) -> tuple[Kind, str | None, str | None] | None:
    """(kind, event, tool) of the undocumented behaviour the run's first deviation shows, or None."""
    d = r.deviation
    if d is None or r.final_state is None:
        return None
    if d.type == "step_not_allowed" and d.event is not None:
        return None if documented(model, r.final_state, d.event) else ("event", d.event, None)
    if d.type == "unexpected_call":
        return "call", None, d.tool
    if d.type == "unbound_step":
        return "text", None, d.tool
    return None


class Sightings:
    """The candidates of runs' first deviations, gathered run by run (`add`, in run order) where a piece is judged and
    merged piece by piece in file order (`merge`): the same candidates, runs and sightings as all the runs at once."""

    def __init__(self) -> None:
        self.found: dict[tuple[str, str, str, str, str], Undocumented] = {}

    def add(self, r: RunResult, models: Mapping[str, object]) -> None:
        if r.deviation is None:
            return
        model = models.get(r.model or "")
        if not isinstance(model, FsmModel):
            return
        candidate = _candidate(r, model)
        if candidate is None:
            return
        kind, event, tool = candidate
        key = (model.name, kind, r.final_state or "", event or "", tool or "")
        entry = self.found.get(key)
        if entry is None:
            entry = self.found[key] = Undocumented(model=model.name, kind=kind, state=r.final_state, event=event,
                                                   tool=tool, deviation=r.deviation.type,
                                                   example=r.deviation.message, runs=0)
        marks = marks_of(r.tags)
        entry.runs += 1
        where = r.deviation.where  # a trace's `trace T span S` with its file: where to find it
        entry.seen.append(Sighting(run=r.id, where=where if where.startswith(r.file) or not r.file
                                   else f"{r.file}: {where}", marks=marks))
        for mark in marks:
            entry.marked[mark] = entry.marked.get(mark, 0) + 1

    def merge(self, later: Sightings) -> None:
        """Add the candidates of runs judged after these (a later piece's): the first sighting's example is kept."""
        for key, entry in later.found.items():
            known = self.found.get(key)
            if known is None:
                self.found[key] = entry
                continue
            known.runs += entry.runs
            known.seen.extend(entry.seen)
            for mark, count in entry.marked.items():
                known.marked[mark] = known.marked.get(mark, 0) + count

    def candidates(self) -> list[Undocumented]:
        """Most runs first."""
        return sorted(self.found.values(), key=lambda c: (-c.runs, c.model, c.kind, c.state or "", c.event or "",
                                                          c.tool or ""))


def undocumented(results: list[RunResult], models: Mapping[str, object]) -> list[Undocumented]:
    """The candidates the runs' first deviations show on the FSM models among `models` (by name)."""
    sightings = Sightings()
    for r in results:
        sightings.add(r, models)
    return sightings.candidates()
