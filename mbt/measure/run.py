"""The coverage engine: every applicable golden replayed on every model, outcomes tallied per element.

Each case is replayed on every model as soon as it is read (a GoldenStream is never held in memory whole); a
large stream is split between worker processes (mbt.measure.parallel, `--jobs`). A case is valid or invalid once:
invalid on any model it applies to, it counts nowhere.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from mbt.errors import MbtError, did_you_mean
from mbt.goldens.cases import GoldenCase
from mbt.goldens.loader import GoldenSet, GoldenStream
from mbt.goldens.results import Contradiction, Divergence, ForbiddenExpected, Note, UnboundTurn
from mbt.goldens.routing import applies
from mbt.kinds import elements_of, support
from mbt.measure import parallel
from mbt.measure.coverage import (
    CoverageReport,
    ElementCoverage,
    GoldenSummary,
    InvalidCaseReport,
    ModelCoverage,
    criterion_table,
    requirement_table,
)
from mbt.model.common import ModelBase


@dataclass(slots=True)
class Outcome:
    """What replaying one case on one model found, in the compact form that crosses processes."""

    invalid: str | None
    exercised: set[int] = field(default_factory=set)  # element indices
    verified: set[int] = field(default_factory=set)
    contradictions: list[Contradiction] = field(default_factory=list)
    divergences: list[Divergence] = field(default_factory=list)
    unbound: list[UnboundTurn] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    forbidden_expected: list[ForbiddenExpected] = field(default_factory=list)


class ModelTally:
    """One model's part of a coverage run, filled in case by case."""

    def __init__(self, model: ModelBase, covering_cap: int | None = None):
        self.model, self.kind = model, support(model.kind)
        self.cap = covering_cap  # at most this many golden ids kept per element and list (None: all)
        self.elements = elements_of(model)
        if self.kind.replayer is None:
            raise MbtError(f"error: mbt cannot measure {model.kind} models yet (`{model.name}`)")
        self.replayer = self.kind.replayer(model, self.elements)
        # Element index -> ids of the goldens; plain lists, as millions of ids are appended in a large run.
        self.exercised_by: list[list[str]] = [[] for _ in self.elements]
        self.verified_by: list[list[str]] = [[] for _ in self.elements]
        self.exercised_more = [0] * len(self.elements)  # ids beyond the cap, counted only
        self.verified_more = [0] * len(self.elements)
        self.replayed = 0
        self.contradictions: list[Contradiction] = []
        self.divergences: list[Divergence] = []
        self.unbound: list[UnboundTurn] = []
        self.notes: list[Note] = []
        self.forbidden_expected: list[ForbiddenExpected] = []

    def accepts(self, case: GoldenCase) -> bool:
        kind = self.kind
        return kind.accepts(self.model, case) if kind.accepts is not None else applies(self.model, case)

    def outcome(self, case: GoldenCase) -> Outcome | None:
        """What replaying the case found; None: not this model's case."""
        if not self.accepts(case):
            return None
        run = self.replayer.replay(case)
        return Outcome(run.invalid, run.exercised, run.verified, run.contradictions, run.divergences, run.unbound,
                       run.notes, getattr(run, "forbidden_expected", []))

    def record(self, case_id: str, outcome: Outcome) -> None:
        """Count a valid case's outcome (an invalid case is counted once, by `measure`, and nowhere else)."""
        self.replayed += 1
        exercised_by, verified_by, cap = self.exercised_by, self.verified_by, self.cap
        if cap is None:
            for i in outcome.exercised:
                exercised_by[i].append(case_id)
            for i in outcome.verified:
                verified_by[i].append(case_id)
        else:
            for i in outcome.exercised:
                if len(exercised_by[i]) < cap:
                    exercised_by[i].append(case_id)
                else:
                    self.exercised_more[i] += 1
            for i in outcome.verified:
                if len(verified_by[i]) < cap:
                    verified_by[i].append(case_id)
                else:
                    self.verified_more[i] += 1
        self.contradictions.extend(outcome.contradictions)
        self.divergences.extend(outcome.divergences)
        self.unbound.extend(outcome.unbound)
        self.notes.extend(outcome.notes)
        self.forbidden_expected.extend(outcome.forbidden_expected)

    def report(self) -> ModelCoverage:
        model = self.model
        rows = [ElementCoverage(element=e, exercised_by=exercised, verified_by=verified, exercised_more=more_e,
                                verified_more=more_v)
                for e, exercised, verified, more_e, more_v in zip(self.elements, self.exercised_by, self.verified_by,
                                                                  self.exercised_more, self.verified_more)]
        return ModelCoverage(model=model.name, kind=model.kind, file=model.file, goldens_replayed=self.replayed,
                             criteria=criterion_table(self.kind.criteria, rows), elements=rows,
                             requirements=requirement_table(rows, self.kind.extra.get("requirement_criteria")))


@dataclass(slots=True)
class CaseEntry:
    """A valid case as the per-case views show it: where it is, its first question, and the models that took it."""

    id: str
    file: str
    line: int
    first_question: str
    turns: int
    models: list[str]


# Golden text (characters) from which worker processes pay off: forking and passing results back cost ~0.1 s each.
PARALLEL_MIN_CHARS = 4_000_000


class Engine(Protocol):
    """Where the later parts of a stream are replayed instead of forked workers (mbt.measure.distributed)."""

    workers: int  # how many parts it takes at once

    def start(self, tallies: list[ModelTally], parts: list[GoldenStream]) -> Started: ...


class Started(Protocol):
    def results(self) -> list[tuple[list, list]]: ...  # `_replay_all` of each part, in order


def _parts(stream: GoldenStream | None, jobs: int, min_chars: int | None = None) -> list[GoldenStream]:
    """The later parts of a large stream, split off it for `jobs - 1` workers (cut between cases; in order). This
    process keeps the first part, a little smaller than the others: it also records every part's results.
    `min_chars`: the size from which to split (default: PARALLEL_MIN_CHARS)."""
    least = PARALLEL_MIN_CHARS if min_chars is None else min_chars
    if stream is None or jobs < 2 or stream.size < max(1, least):
        return []
    parts: list[GoldenStream] = []
    rest = stream
    for remaining in range(jobs, 1, -1):  # `remaining` parts are still in `rest`
        first_share = 0.9 / jobs if rest is stream else 1 / remaining
        later = rest.split(1 - first_share)
        if later is None:
            break
        parts.append(later)
        rest = later
    return parts


def _replay_all(tallies: list[ModelTally], stream: GoldenStream) -> tuple[list, list]:
    """Every case of the stream (repeated ids included) and what each model makes of it; and the broken cases."""
    replayed = [(case.id, case.file, case.line, case.where, case.model, _tables(case),
                 [tally.outcome(case) for tally in tallies], first_question(case), len(case.turns))
                for case in stream.all_cases()]
    return stream.broken, replayed


def first_question(case: GoldenCase) -> str:
    """The first thing the user says in the case (seed 001's "first question" of a multi-turn case), or ""."""
    return next((t.user for t in case.turns if t.user), "")


def measure(models: list[ModelBase], goldens: GoldenSet | GoldenStream, jobs: int | None = None,
            covering_cap: int | None = None, cases: list[CaseEntry] | None = None,
            engine: Engine | None = None) -> CoverageReport:
    """Replay every applicable case on every model and count what it exercised and verified.

    Each case is replayed on every model as soon as it is read, so a GoldenStream is never held in memory whole;
    what each model finds is kept apart and reported model by model. A large stream is split into `jobs` parts
    (default: the machine's cores) replayed by worker processes at the same time; with an `engine` (`--engine
    dask`), whatever its size, into one part here and one per Dask worker. The report is the same.
    `covering_cap` bounds the golden ids kept per element (the rest are counted): memory then grows with the model,
    not with the cases. Given a `cases` list, one small CaseEntry per valid case is appended to it (the per-case
    views read them; the report itself stays per element).
    """
    tallies = [ModelTally(model, covering_cap) for model in models]
    applicable_anywhere: set[str] = set()
    unbound_cases: set[str] = set()
    invalid_at_replay: list[InvalidCaseReport] = []
    known_models = {name for m in models for name in (m.name, getattr(m, "fsm", None)) if name}
    unknown_models: dict[str, list[Any]] = {}  # model name no loaded file declares -> [cases, first id, where]
    unknown_tables: dict[str, list[Any]] = {}  # the same for tables a conversation's `decisions` name
    valid = 0

    def take(case_id: str, file: str, line: int, model_name: str | None, tables: tuple[str, ...],
             outcomes: list, question: str, turns: int) -> None:
        nonlocal valid
        # A case is valid or invalid once: invalid on any model it applies to, it counts nowhere.
        problems = [(tally, outcome.invalid) for tally, outcome in zip(tallies, outcomes)
                    if outcome is not None and outcome.invalid is not None]
        if problems:
            invalid_at_replay.append(InvalidCaseReport(file=file, line=line, message=f"case `{case_id}` " + "; ".join(
                f"on model `{tally.model.name}`: {problem}" for tally, problem in problems)))
            return
        valid += 1
        if cases is not None:
            cases.append(CaseEntry(case_id, file, line, question, turns,
                                   [t.model.name for t, o in zip(tallies, outcomes) if o is not None]))
        if model_name is not None and model_name not in known_models:
            entry = unknown_models.setdefault(model_name, [0, case_id, f"{file}:{line}"])
            entry[0] += 1
        for table in tables:
            if table not in known_models and table != model_name:
                unknown_tables.setdefault(table, [0, case_id, f"{file}:{line}"])[0] += 1
        for tally, outcome in zip(tallies, outcomes):
            if outcome is None:
                continue
            applicable_anywhere.add(case_id)
            tally.record(case_id, outcome)
            if outcome.unbound:
                unbound_cases.add(case_id)

    # A large stream: worker processes replay its later parts meanwhile (same results, taken in the same order).
    stream = goldens if isinstance(goldens, GoldenStream) else None
    workers: Started
    if engine is not None:  # asked for by name: split even a small stream (a part here, one per Dask worker)
        parts = _parts(stream, engine.workers + 1, 0)
        workers = engine.start(tallies, parts)
    else:
        parts = _parts(stream, parallel.default_jobs() if jobs is None else jobs) if parallel.available() else []
        workers = parallel.Workers(lambda i: _replay_all(tallies, parts[i - 1]), len(parts) + 1)
    for case in goldens.cases:
        take(case.id, case.file, case.line, case.model, _tables(case), [tally.outcome(case) for tally in tallies],
             first_question(case), len(case.turns))
    if stream is not None:
        for broken_later, replayed in workers.results():
            stream.adopt(broken_later)
            for case_id, file, line, where, model_name, tables, outcomes, question, turns in replayed:
                if not stream.repeats(case_id, file, line, where):
                    take(case_id, file, line, model_name, tables, outcomes, question, turns)
    broken = goldens.invalid
    invalid_all = [InvalidCaseReport(file=i.file, line=i.line, message=i.message) for i in broken] + invalid_at_replay
    summary = GoldenSummary(
        files=goldens.files, read=valid + len(invalid_all), valid=valid, invalid=len(invalid_all),
        bound=len(applicable_anywhere - unbound_cases), unbound=len(unbound_cases),
        not_applicable=valid - len(applicable_anywhere))
    notes = [n for tally in tallies for n in tally.notes]
    notes += [Note(case="", where=folder, model="", turn=None,
                   message=f"the goldens folder {folder} holds no golden file (.jsonl, .json, .yaml, .yml, .xlsx, .csv)")
              for folder in (stream.empty_folders if stream is not None else [])]
    notes += _not_read_notes(stream.skipped_files if stream is not None else [])
    notes += [_unknown_model_note(name, count, first_id, first_where, known_models)
              for name, (count, first_id, first_where) in sorted(unknown_models.items())]
    notes += [_unknown_model_note(name, count, first_id, first_where, known_models, "check decision table")
              for name, (count, first_id, first_where) in sorted(unknown_tables.items())]
    return CoverageReport(models=[tally.report() for tally in tallies], goldens=summary, invalid_cases=invalid_all,
                          contradictions=[c for tally in tallies for c in tally.contradictions],
                          forbidden_expected=[f for tally in tallies for f in tally.forbidden_expected],
                          divergences=[d for tally in tallies for d in tally.divergences],
                          unbound_turns=[u for tally in tallies for u in tally.unbound],
                          notes=notes)


def _not_read_notes(skipped: list[tuple[str, str]]) -> list[Note]:
    """One note per goldens folder naming the files in it that are not golden files (the first five, and a count)."""
    by_folder: dict[str, list[str]] = {}
    for folder, path in skipped:
        by_folder.setdefault(folder, []).append(path)
    notes = []
    for folder, paths in by_folder.items():
        named = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
        notes.append(Note(case="", where=folder, model="", turn=None,
                          message=f"not read: {len(paths)} file(s) in {folder} that are not golden files ({named}); "
                                  "mbt reads .jsonl, .json, .yaml, .yml, .xlsx and .csv (save an .xls or .ods sheet "
                                  "as .xlsx)"))
    return notes


def _tables(case: Any) -> tuple[str, ...]:
    """The decision tables a case's checks name (a decision case's own table is its `model`)."""
    return tuple(sorted({d.table for d in case.decisions})) if case.decisions else ()


def _unknown_model_note(name: str, count: int, first_id: str, first_where: str, known: set[str],
                        what: str = "name model") -> Note:
    checks = "those checks were" if what != "name model" else "they were"
    return Note(case=first_id, where=first_where, model=name, turn=None,
                message=f"{count} case(s) {what} `{name}`, which no loaded file declares"
                        f"{did_you_mean(name, sorted(known))}; {checks} not replayed")
