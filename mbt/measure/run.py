"""The coverage engine: every applicable golden replayed on every model, outcomes tallied per element.

Each case is replayed on every model as soon as it is read (a GoldenStream is never held in memory whole); a
large stream is split between worker processes (mbt.measure.parallel, `--jobs`). A case is valid or invalid once:
invalid on any model it applies to, it counts nowhere.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from mbt.elements.base import Element
from mbt.errors import MbtError, did_you_mean
from mbt.goldens.cases import GoldenCase, GoldenSet, InvalidCase, has_unread_keys, unchecked_key_notes
from mbt.goldens.results import Contradiction, Divergence, ForbiddenExpected, Note, UnboundTurn
from mbt.goldens.routing import applies
from mbt.kind import elements_of, support
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

if TYPE_CHECKING:  # read only from a stream given: without goldens, no reader loads (start-up time)
    from mbt.goldens.loader import GoldenStream


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

    def findings(self) -> tuple[tuple[str, list[Any]], ...]:
        """Each kind of finding with its list, in ModelTally.FINDINGS order."""
        return (("contradictions", self.contradictions), ("divergences", self.divergences),
                ("unbound", self.unbound), ("notes", self.notes), ("forbidden_expected", self.forbidden_expected))


class PackedStrings:
    """Strings kept as UTF-8 in one buffer, each known by its index: a golden id costs its length and 8 bytes
    instead of a str object of some 60 bytes (a large run keeps hundreds of thousands of them)."""

    def __init__(self) -> None:
        self._text = bytearray()
        self._ends = array("Q")

    def add(self, text: str) -> int:
        """Keep `text`; its index."""
        self._text += text.encode("utf-8", "surrogatepass")
        self._ends.append(len(self._text))
        return len(self._ends) - 1

    def __len__(self) -> int:
        return len(self._ends)

    def __getitem__(self, i: int) -> str:
        start = self._ends[i - 1] if i > 0 else 0
        return self._text[start:self._ends[i]].decode("utf-8", "surrogatepass")

    def strings(self) -> list[str]:
        """Every string, in index order."""
        return [self[i] for i in range(len(self))]


class ModelTally:
    """One model's part of a coverage run, filled in case by case."""

    # The findings a case can add to (Outcome's lists of the same names); with a cap, the first ones are kept.
    FINDINGS = ("contradictions", "divergences", "unbound", "notes", "forbidden_expected")

    def __init__(self, model: ModelBase, covering_cap: int | None = None, shared: ModelTally | None = None,
                 findings_cap: int | None = None):
        self.model, self.kind = model, support(model.kind)
        self.cap = covering_cap  # at most this many golden ids kept per element and list (None: all)
        self.findings_cap = findings_cap  # at most this many findings of each kind kept (None: all), the rest counted
        self.elements: list[Element]
        self._replayer: Any = None
        self._shared = shared
        if shared is not None:  # another part of the same run: the same elements and replayer, counts of its own
            self.elements = shared.elements
        else:
            self.elements = elements_of(model)
            if self.kind.replayer is None:
                raise MbtError(f"mbt cannot measure {model.kind} models yet (`{model.name}`)")
        self._fresh_counts()

    @property
    def replayer(self) -> Any:
        """The model's compiled replayer, built when the first case is replayed (a run without goldens, `mbt runs`
        reporting usage, never compiles one: a large model's compilation takes seconds)."""
        if self._replayer is None:
            if self._shared is not None:
                self._replayer = self._shared.replayer
            else:
                assert self.kind.replayer is not None  # checked when the tally was made
                self._replayer = self.kind.replayer(self.model, self.elements)
        return self._replayer

    def part(self) -> ModelTally:
        """An empty tally for another part of the run (sharing this one's compiled replayer)."""
        return ModelTally(self.model, self.cap, shared=self, findings_cap=self.findings_cap)

    # What a part's tally sends back (`counts`) and another adds up (`merge`); the rest is rebuilt, never sent.
    COUNTS = ("ids", "exercised_more", "verified_more", "replayed", "contradictions", "divergences", "unbound",
              "notes", "forbidden_expected", "findings_more")

    def counts(self) -> dict[str, Any]:
        sent = {name: getattr(self, name) for name in self.COUNTS}
        for key in ("exercised_by", "verified_by"):  # only the elements some case reached: most lists are empty
            sent[key] = {i: ids for i, ids in enumerate(getattr(self, key)) if ids}
        return sent

    def merge(self, counts: dict[str, Any]) -> None:
        """Add the counts of the next part of the run (its cases come after all of this tally's): the same lists,
        capped the same way, as if its cases had been recorded here."""
        self.replayed += counts["replayed"]
        their_ids: PackedStrings = counts["ids"]
        taken: dict[int, int] = {}  # their index -> mine, for the ids kept here
        for key in ("exercised", "verified"):
            mine, more, their_more = getattr(self, f"{key}_by"), getattr(self, f"{key}_more"), counts[f"{key}_more"]
            for i, count in enumerate(their_more):
                more[i] += count
            for i, theirs in counts[f"{key}_by"].items():
                room = len(theirs) if self.cap is None else max(0, self.cap - len(mine[i]))
                for k in theirs[:room]:
                    index = taken.get(k)
                    if index is None:
                        index = taken[k] = self.ids.add(their_ids[k])
                    mine[i].append(index)
                more[i] += len(theirs) - min(room, len(theirs))
        for name in self.FINDINGS:
            self._add_findings(name, counts[name])
            self.findings_more[name] += counts["findings_more"][name]

    def _fresh_counts(self) -> None:
        # Element index -> the goldens, as indices into `ids` (4 bytes each), in case order. range(), not the
        # elements: a forked worker that touched every element would copy their memory pages.
        self.ids = PackedStrings()  # the ids of the goldens some list holds, each once
        self.exercised_by: list[array] = [array("I") for _ in range(len(self.elements))]
        self.verified_by: list[array] = [array("I") for _ in range(len(self.elements))]
        self.exercised_more = [0] * len(self.elements)  # ids beyond the cap, counted only
        self.verified_more = [0] * len(self.elements)
        self.replayed = 0
        self.contradictions: list[Contradiction] = []
        self.divergences: list[Divergence] = []
        self.unbound: list[UnboundTurn] = []
        self.notes: list[Note] = []
        self.forbidden_expected: list[ForbiddenExpected] = []
        self.findings_more = dict.fromkeys(self.FINDINGS, 0)  # findings beyond the cap, counted only

    def _add_findings(self, name: str, found: list) -> None:
        """Keep `found` (the next findings of kind `name`, in case order) up to the cap, and count the rest."""
        mine = getattr(self, name)
        room = len(found) if self.findings_cap is None else max(0, self.findings_cap - len(mine))
        mine.extend(found[:room])
        self.findings_more[name] += len(found) - min(room, len(found))

    def accepts(self, case: GoldenCase) -> bool:
        kind = self.kind
        return kind.accepts(self.model, case) if kind.accepts is not None else applies(self.model, case)

    def outcome(self, case: GoldenCase) -> Outcome | None:
        """What replaying the case found; None: not this model's case."""
        if not self.accepts(case):
            return None
        run = self.replayer.replay(case)
        return Outcome(run.invalid, run.exercised, run.verified, run.contradictions, run.divergences, run.unbound,
                       run.notes, run.forbidden_expected)

    def record(self, case_id: str, outcome: Outcome) -> None:
        """Count a valid case's outcome (an invalid case is counted once, by `measure`, and nowhere else)."""
        self.replayed += 1
        exercised_by, verified_by, cap = self.exercised_by, self.verified_by, self.cap
        index = -1  # the case's index in `ids`, once a list keeps it
        if cap is None:
            if outcome.exercised or outcome.verified:
                index = self.ids.add(case_id)
            for i in outcome.exercised:
                exercised_by[i].append(index)
            for i in outcome.verified:
                verified_by[i].append(index)
        else:
            for i in outcome.exercised:
                if len(exercised_by[i]) < cap:
                    if index < 0:
                        index = self.ids.add(case_id)
                    exercised_by[i].append(index)
                else:
                    self.exercised_more[i] += 1
            for i in outcome.verified:
                if len(verified_by[i]) < cap:
                    if index < 0:
                        index = self.ids.add(case_id)
                    verified_by[i].append(index)
                else:
                    self.verified_more[i] += 1
        for name, found in outcome.findings():
            if found:  # most cases find nothing
                self._add_findings(name, found)

    def report(self) -> ModelCoverage:
        model = self.model
        ids = self.ids.strings()  # one str per golden, shared by every row that names it
        rows = [ElementCoverage(element=e, exercised_by=[ids[k] for k in exercised],
                                verified_by=[ids[k] for k in verified], exercised_more=more_e, verified_more=more_v)
                for e, exercised, verified, more_e, more_v in zip(self.elements, self.exercised_by, self.verified_by,
                                                                  self.exercised_more, self.verified_more)]
        return ModelCoverage(model=model.name, kind=model.kind, file=model.file, goldens_replayed=self.replayed,
                             criteria=criterion_table(self.kind.criteria, rows), elements=rows,
                             requirements=requirement_table(rows, self.kind.requirement_criteria))


@dataclass(slots=True)
class CaseEntry:
    """A valid case as the per-case views show it: where it is, its first question, and the models that took it."""

    id: str
    file: str
    line: int
    first_question: str
    turns: int
    models: list[str]


# Invalid cases listed when the covering ids are capped (the CLI's default); the rest are counted.
INVALID_CAP = 1000

# Golden files (bytes) from which worker processes pay off: forking and passing results back cost ~0.1 s each.
PARALLEL_MIN_CHARS = 4_000_000


class Engine(Protocol):
    """Where the later parts of a stream are replayed instead of forked workers (mbt.measure.distributed)."""

    workers: int  # how many parts it takes at once

    def start(self, run: RunTally, parts: list[GoldenStream]) -> Started: ...


class Started(Protocol):
    def results(self) -> list[tuple[list, ReplayedPart]]: ...  # `replay_part` of each part, in order


class ReplayedPart(Sequence[tuple[str, str, int]]):
    """What a part of the stream replayed, sent back whole from a worker: its valid cases in order as compact
    columns (item i is (id, file, line): a few bytes a case, to find ids repeated across parts), the duplicates
    found inside the part, and the part's tally (RunTally.counts)."""

    def __init__(self) -> None:
        self._ids = PackedStrings()
        self._lines = array("Q")
        self._file_of = array("I")
        self._files: list[str] = []
        self._numbers: dict[str, int] = {}
        self.duplicates: list[InvalidCase] = []
        self.tally: dict[str, Any] = {}

    def add(self, case_id: str, file: str, line: int) -> None:
        self._ids.add(case_id)
        number = self._numbers.get(file)
        if number is None:
            number = self._numbers[file] = len(self._files)
            self._files.append(file)
        self._file_of.append(number)
        self._lines.append(line)

    def __len__(self) -> int:
        return len(self._ids)

    def __getitem__(self, i):  # an int index only
        return self._ids[i], self._files[self._file_of[i]], self._lines[i]

    def __iter__(self) -> Iterator[tuple[str, str, int]]:
        return (self[i] for i in range(len(self)))


class RunTally:
    """What one part of a coverage run found, case by case: each model's tally and what `measure` counts per case
    (valid cases, those a model applies to, unbound ones, invalid at replay, unknown model names), kept as counts
    and capped lists that add up part by part (`counts`, `merge`): nothing here grows with the cases, except the
    per-case entries when the per-case views ask for them (`cases`)."""

    def __init__(self, tallies: list[ModelTally], cases: list[CaseEntry] | None = None,
                 invalid_cap: int | None = None, listed: bool = False):
        self.tallies = tallies
        self.known_models = {name for t in tallies for name in (t.model.name, getattr(t.model, "fsm", None)) if name}
        self.valid = self.applicable = self.unbound = 0
        self.contradicting = self.expecting_forbidden = 0  # valid cases with such a finding, each counted once
        self.invalid_cap = invalid_cap
        self.invalid_at_replay: list[InvalidCaseReport] = []  # in case order, the first `invalid_cap`
        self.invalid_more = 0
        self.unknown_models: dict[str, list[Any]] = {}  # model name no loaded file declares -> [cases, first id, where]
        self.unknown_tables: dict[str, list[Any]] = {}  # the same for tables a conversation's `decisions` name
        self.cases = cases  # one CaseEntry per valid case, when the per-case views ask for them
        self.listed = ReplayedPart() if listed else None  # a worker's part: its cases, for the ids across parts

    def part(self, listed: bool = True) -> RunTally:
        """An empty tally for a later part of this run (the same models, settings and compiled replayers)."""
        return RunTally([t.part() for t in self.tallies], [] if self.cases is not None else None, self.invalid_cap,
                        listed)

    def take_case(self, case: GoldenCase) -> None:
        """Replay a valid case (its id not seen before) on every model and count what it found."""
        if self.listed is not None:
            self.listed.add(case.id, case.file, case.line)
        outcomes = [t.outcome(case) for t in self.tallies]
        if has_unread_keys(case):
            _note_unread_keys(case, self.tallies, outcomes)
        # The first question is read only where the per-case views keep an entry per case.
        self.take(case.id, case.file, case.line, case.model, _tables(case), outcomes,
                  first_question(case) if self.cases is not None else "", len(case.turns))

    def take(self, case_id: str, file: str, line: int, model_name: str | None, tables: tuple[str, ...],
             outcomes: list, question: str, turns: int) -> None:
        tallies, known_models = self.tallies, self.known_models
        # A case is valid or invalid once: invalid on any model it applies to, it counts nowhere.
        problems = [(tally, outcome.invalid) for tally, outcome in zip(tallies, outcomes)
                    if outcome is not None and outcome.invalid is not None]
        if problems:
            if self.invalid_cap is None or len(self.invalid_at_replay) < self.invalid_cap:
                self.invalid_at_replay.append(InvalidCaseReport(file=file, line=line, message=f"case `{case_id}` "
                                              + "; ".join(f"on model `{tally.model.name}`: {problem}"
                                                          for tally, problem in problems)))
            else:
                self.invalid_more += 1
            return
        self.valid += 1
        if self.cases is not None:
            self.cases.append(CaseEntry(case_id, file, line, question, turns,
                                        [t.model.name for t, o in zip(tallies, outcomes) if o is not None]))
        if model_name is not None and model_name not in known_models:
            entry = self.unknown_models.setdefault(model_name, [0, case_id, f"{file}:{line}"])
            entry[0] += 1
        for table in tables:
            if table not in known_models and table != model_name:
                self.unknown_tables.setdefault(table, [0, case_id, f"{file}:{line}"])[0] += 1
        applicable = unbound = contradicting = expecting_forbidden = False
        for tally, outcome in zip(tallies, outcomes):
            if outcome is None:
                continue
            applicable = True
            tally.record(case_id, outcome)
            unbound = unbound or bool(outcome.unbound)
            contradicting = contradicting or bool(outcome.contradictions)
            expecting_forbidden = expecting_forbidden or bool(outcome.forbidden_expected)
        self.applicable += applicable
        self.unbound += unbound
        self.contradicting += contradicting
        self.expecting_forbidden += expecting_forbidden

    COUNTS = ("valid", "applicable", "unbound", "contradicting", "expecting_forbidden", "invalid_at_replay",
              "invalid_more", "unknown_models", "unknown_tables", "cases")

    def counts(self) -> dict[str, Any]:
        """This part's figures as plain data (what a worker sends back)."""
        return {"models": [t.counts() for t in self.tallies], **{name: getattr(self, name) for name in self.COUNTS}}

    def merge(self, counts: dict[str, Any]) -> None:
        """Add the figures of the next part of the run (its cases come after every case counted here)."""
        for tally, theirs in zip(self.tallies, counts["models"]):
            tally.merge(theirs)
        self.valid += counts["valid"]
        self.applicable += counts["applicable"]
        self.unbound += counts["unbound"]
        self.contradicting += counts["contradicting"]
        self.expecting_forbidden += counts["expecting_forbidden"]
        room = len(counts["invalid_at_replay"]) if self.invalid_cap is None else \
            max(0, self.invalid_cap - len(self.invalid_at_replay))
        self.invalid_at_replay += counts["invalid_at_replay"][:room]
        self.invalid_more += counts["invalid_more"] + max(0, len(counts["invalid_at_replay"]) - room)
        for mine, theirs in ((self.unknown_models, counts["unknown_models"]),
                             (self.unknown_tables, counts["unknown_tables"])):
            for name, (count, first_id, where) in theirs.items():
                mine.setdefault(name, [0, first_id, where])[0] += count
        if self.cases is not None:
            self.cases += counts["cases"]


def _note_unread_keys(case: GoldenCase, tallies: list[ModelTally], outcomes: list[Outcome | None]) -> None:
    """The keys of the case no model replaying it reads, as notes of the case (once, not per model): with the first
    model's findings, so they are capped, counted and merged across processes as those are."""
    taken = [(tally, outcome) for tally, outcome in zip(tallies, outcomes) if outcome is not None]
    if not taken or any(outcome.invalid is not None for _, outcome in taken):
        return  # not replayed anywhere, or invalid: the case counts nowhere
    read = frozenset().union(*(tally.kind.golden_keys for tally, _ in taken))
    first = taken[0][1]
    first.notes = unchecked_key_notes(case, read=read) + first.notes


def _parts(stream: GoldenStream | None, jobs: int, min_chars: int | None = None) -> list[GoldenStream]:
    """The later parts of a large stream, split off it for `jobs - 1` workers (cut between cases; in order). This
    process keeps the first part, as large as the others: it adds up the parts' results only once every worker has
    finished, so a smaller share would leave it waiting (tests/bench: 4 s of a 26 s run with 45%).
    `min_chars`: the size (bytes) from which to split (default: PARALLEL_MIN_CHARS)."""
    least = PARALLEL_MIN_CHARS if min_chars is None else min_chars
    if stream is None or jobs < 2 or stream.size < max(1, least):
        return []
    parts: list[GoldenStream] = []
    rest = stream
    for remaining in range(jobs, 1, -1):  # `remaining` equal parts are still in `rest`
        later = rest.split(1 - 1 / remaining)
        if later is None:
            break
        parts.append(later)
        rest = later
    return parts


def replay_part(run: RunTally, stream: GoldenStream) -> tuple[list[InvalidCase], ReplayedPart]:
    """A later part of a run, replayed into a tally of its own (in a worker, or here when a worker failed): its
    broken cases, and what it replayed (ReplayedPart). Ids repeated inside the part are found here; those repeated
    from earlier parts by `measure`."""
    part = run.part()
    for case in stream.cases:
        part.take_case(case)
    replayed = part.listed
    assert replayed is not None
    replayed.duplicates = stream.duplicates
    replayed.tally = part.counts()
    return stream.broken, replayed


def first_question(case: GoldenCase) -> str:
    """The first thing the user says in the case (seed 001's "first question" of a multi-turn case), or ""."""
    return next((t.user for t in case.turns if t.user), "")


def measure(models: list[ModelBase], goldens: GoldenSet | GoldenStream, jobs: int | None = None,
            covering_cap: int | None = None, cases: list[CaseEntry] | None = None,
            engine: Engine | None = None, invalid_cap: int | None = None) -> CoverageReport:
    """Replay every applicable case on every model and count what it exercised and verified.

    Each case is replayed on every model as soon as it is read, then dropped, so a GoldenStream is never held in
    memory whole; what each model finds is kept apart and reported model by model. A large stream is split into
    `jobs` parts (default: the machine's cores) replayed by worker processes at the same time, each into a tally
    of its own that is added to this one in order; with an `engine` (`--engine dask`), whatever its size, into one
    part here and one per Dask worker. The report is the same. `covering_cap` bounds the golden ids kept per element
    and `invalid_cap` the invalid cases listed (the rest are counted): memory then grows with the model, not with
    the cases. Given a `cases` list, one small CaseEntry per valid case is appended to it (the per-case views read
    them; the report itself stays per element).
    """
    # The same cap for the findings as for the invalid cases: a list of the first ones, the rest counted.
    run = RunTally([ModelTally(model, covering_cap, findings_cap=invalid_cap) for model in models], cases, invalid_cap)
    # A large stream: worker processes replay its later parts meanwhile (same results, taken in the same order).
    stream = None if isinstance(goldens, GoldenSet) else goldens
    workers: Started
    if engine is not None:  # asked for by name: split even a small stream (a part here, one per Dask worker)
        parts = _parts(stream, engine.workers + 1, 0)
        workers = engine.start(run, parts)
    else:
        parts = _parts(stream, parallel.default_jobs() if jobs is None else jobs) if parallel.available() else []
        workers = parallel.Workers(lambda i: replay_part(run, parts[i - 1]), len(parts) + 1)
    pieces = [(part.pieces, part.bad_lines) for part in parts]  # to read a part again here (see below)
    for case in goldens.cases:
        run.take_case(case)
    if stream is not None:
        for (broken_later, replayed), (part_pieces, bad) in zip(workers.results(), pieces):
            if any(stream.seen(case_id) for case_id, _, _ in replayed):
                # An id of this part was seen in an earlier one: its cases are not all valid, so the part's tally
                # cannot be added; it is replayed here, in order, after the earlier parts (the same outcome).
                from mbt.goldens.loader import GoldenStream  # loaded already: `stream` is one

                again = GoldenStream.of_pieces(part_pieces, bad, stream.invalid_cap)
                for case in again.all_cases():
                    if not stream.repeats(case.id, case.file, case.line):
                        run.take_case(case)
                stream.adopt(again.broken)
                continue
            for case_id, file, line in replayed:
                stream.repeats(case_id, file, line)
            stream.adopt(broken_later, replayed.duplicates)
            run.merge(replayed.tally)
    listed_invalid = [InvalidCaseReport(file=i.file, line=i.line, message=i.message) for i in goldens.invalid]
    listed_invalid += run.invalid_at_replay
    invalid_count = _invalid_count(goldens) + len(run.invalid_at_replay) + run.invalid_more
    if invalid_cap is not None:
        listed_invalid = listed_invalid[:invalid_cap]
    valid = run.valid
    summary = GoldenSummary(
        files=goldens.files, read=valid + invalid_count, valid=valid, invalid=invalid_count,
        bound=run.applicable - run.unbound, unbound=run.unbound, not_applicable=valid - run.applicable,
        contradicting=run.contradicting, expecting_forbidden=run.expecting_forbidden)
    tallies = run.tallies
    known_models = run.known_models
    listed = {name: _listed(tallies, name, invalid_cap) for name in ModelTally.FINDINGS}
    notes = listed["notes"][0]
    notes += [Note(case="", where=folder, model="", turn=None,
                   message=f"the goldens folder {folder} holds no golden file (.jsonl, .json, .yaml, .yml, .xlsx, .csv)")
              for folder in (stream.empty_folders if stream is not None else [])]
    notes += _not_read_notes(stream.skipped_files if stream is not None else [])
    notes += left_out_notes(goldens.left_out)
    notes += [_unknown_model_note(name, count, first_id, first_where, known_models)
              for name, (count, first_id, first_where) in sorted(run.unknown_models.items())]
    notes += [_unknown_model_note(name, count, first_id, first_where, known_models, "check decision table")
              for name, (count, first_id, first_where) in sorted(run.unknown_tables.items())]
    return CoverageReport(models=[tally.report() for tally in tallies], goldens=summary, invalid_cases=listed_invalid,
                          invalid_cases_more=invalid_count - len(listed_invalid),
                          contradictions=listed["contradictions"][0], contradictions_more=listed["contradictions"][1],
                          forbidden_expected=listed["forbidden_expected"][0],
                          forbidden_expected_more=listed["forbidden_expected"][1],
                          divergences=listed["divergences"][0], divergences_more=listed["divergences"][1],
                          unbound_turns=listed["unbound"][0], unbound_turns_more=listed["unbound"][1],
                          notes=notes, notes_more=listed["notes"][1])


def _listed(tallies: list[ModelTally], name: str, cap: int | None) -> tuple[list, int]:
    """One kind of finding over every model, model by model: the first `cap` listed (None: all), and how many more
    there are."""
    found = [item for tally in tallies for item in getattr(tally, name)]
    more = sum(tally.findings_more[name] for tally in tallies)
    if cap is not None and len(found) > cap:
        more += len(found) - cap
        del found[cap:]
    return found, more


def _invalid_count(goldens: GoldenSet | GoldenStream) -> int:
    return len(goldens.invalid) if isinstance(goldens, GoldenSet) else goldens.invalid_count


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


def left_out_notes(left_out: list[tuple[str, str, str]]) -> list[Note]:
    """One note per folder naming the files found there that were not read as goldens (mbt.paths.left_out), grouped
    by why (the first five of each, and a count): a folder given as a positional path is sorted, never silently."""
    by_folder: dict[str, dict[str, list[str]]] = {}
    for folder, path, why in left_out:
        by_folder.setdefault(folder, {}).setdefault(why, []).append(path)
    notes = []
    for folder, reasons in by_folder.items():
        count = sum(len(paths) for paths in reasons.values())
        groups = "; ".join(", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
                           + f" ({why})" for why, paths in reasons.items())
        notes.append(Note(case="", where=folder, model="", turn=None,
                          message=f"not read as goldens: {count} file(s) in {folder}, given as a positional path, are "
                                  f"not golden cases: {groups}; name a file with --goldens to read it as goldens"))
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
