"""Judges observed runs in pieces at once: forked worker processes of the standard executor (`mbt runs --jobs N`) or
the workers of a Dask cluster (`--engine dask`).

The work is shipped as byte ranges of the run files (`Piece`: a path, as the report shows it, and its range; a whole
file today), never as decoded runs: a process reads its pieces itself. Runs are independent and what they give adds
up, so a process keeps one tally for all its pieces — runs per model element, tool errors: sums in any order — and
hands back, per piece, what has an order: the runs' rows of the report, what they add up to for the report's
figures (mbt.runs.metrics.RunFigures: this process never passes over every row again), the regression goldens (a
golden keeps its first run's details) and the files' problems and notes. This process takes the pieces in file order, so the report
and the regression goldens are byte-identical to one process's.

- `--jobs N`: N-1 forked workers and this process take pieces one at a time from a shared counter until none is
  left (a process that is slow or busy with something else takes fewer); a worker starts with the models compiled
  and their judges built. A piece a worker took and did not finish (it failed, or was killed) is judged here.
- `--engine dask`: each piece is a task on the cluster; this process only gathers. A worker gets the models'
  paths, loads them (or, on the local cluster mbt starts, which forks its workers from this process, finds the ones
  judged here: `prepare`), checks that they are this run's and keeps them for its later pieces. A piece the cluster
  cannot do is judged here.
"""

from __future__ import annotations

import gc
import hashlib
import multiprocessing
import os
import pickle
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mbt.measure import parallel
from mbt.measure.coverage import CoverageReport
from mbt.model.common import ModelBase
from mbt.runs.loop import LoopRules
from mbt.runs.measure import RunTally
from mbt.runs.metrics import RunFigures
from mbt.runs.reader import FileRuns, run_files
from mbt.runs.redact import Redaction
from mbt.runs.regression import RegressionTally
from mbt.runs.results import RunResult
from mbt.runs.rows import PackedRows
from mbt.runs.steps import InvalidRun, RunSet
from mbt.runs.undocumented import Sightings

# Below this many bytes of run files, `--jobs` judges everything here: forking and sending the results back would
# cost more than the part saves (reading and decoding is most of the work, roughly linear in the bytes).
PARALLEL_MIN_BYTES = 4_000_000


@dataclass(frozen=True)
class Piece:
    """A byte range of a run file: the unit of work a process is given (today a whole file: 0 to its size)."""

    path: str
    shown: str  # the path as the report names it
    start: int = 0
    end: int = 0


@dataclass
class Judged:
    """What judging one piece gave that has an order, in the form that crosses processes."""

    files: list[str]
    invalid: list[InvalidRun]
    unread: list[str]
    results: list[RunResult]
    regressions: RegressionTally
    figures: RunFigures  # what the results add up to (the report's metrics and distributions)
    sightings: Sightings  # the undocumented behaviour among them
    counts: Counts | None = None  # judged in another process: the piece's counts (else they are in this one's tally)

    def __getstate__(self) -> dict[str, Any]:
        # The rows cross as plain values (mbt.runs.rows): half the time of pickling the pydantic objects both ways.
        state = dict(self.__dict__)
        state["results"] = PackedRows(self.results)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state["results"] = state["results"].rows()
        self.__dict__.update(state)


@dataclass
class Counts:
    """What a process's pieces add up to, whatever their order: runs through each element per model, tool errors."""

    through: dict[str, Counter[int]] = field(default_factory=dict)
    tool_errors: int = 0


def pieces_of(run_paths: list[str]) -> list[Piece]:
    """The run files, in order, as pieces (each file whole)."""
    out = []
    for path, shown in run_files(run_paths):
        try:
            size = os.path.getsize(path)
        except OSError:
            size = 0
        out.append(Piece(path, shown, 0, size))
    return out


def judge_piece(tally: RunTally, piece: Piece) -> Judged:
    """Read and judge the runs of one piece with `tally`, a run at a time (each judged as it is read); the tally keeps
    the counts, the piece's rows and goldens are handed back (the tally starts the next piece without them)."""
    tally.results, tally.regressions, tally.figures, tally.sightings = [], RegressionTally(), RunFigures(), Sightings()
    reading = FileRuns(piece.path, piece.shown)
    for run in reading:
        tally.add(run)
    return Judged([piece.shown], reading.invalid, reading.unread, tally.results, tally.regressions, tally.figures,
                  tally.sightings)


def counts_of(tally: RunTally) -> Counts:
    return Counts(tally.through, tally.tool_errors)


def fingerprint(tally: RunTally) -> str:
    """What a worker's models must match: the judged models' names and element ids in order (counts are by index)."""
    items = [(name, [e.id for e in tally.elements[name]]) for name in sorted(tally.judges)]
    return hashlib.sha256(repr(items).encode()).hexdigest()


# ---------------------------------------------------------------- this process and its forked workers (--jobs)

class _Claims:
    """A counter shared with the forked workers: each process takes the next piece's number until none is left."""

    def __init__(self, pieces: int):
        self.pieces = pieces
        self.next = multiprocessing.get_context("fork").Value("q", 0)  # made before the fork: inherited

    def stop(self) -> None:
        with self.next.get_lock():
            self.next.value = self.pieces

    def take(self) -> int | None:
        with self.next.get_lock():
            number = self.next.value
            if number >= self.pieces:
                return None
            self.next.value = number + 1
        return number


class _Outbox:
    """A forked worker's judged pieces, handed over one at a time through an unnamed file made before the fork: the
    worker appends each piece's pickle and then moves the committed end; this process reads what is committed between
    its own pieces. Neither waits on the other, and the pieces' results are read while the work goes on, not all at
    its end (a million steps' rows take a second to read)."""

    def __init__(self) -> None:
        self.file = tempfile.TemporaryFile()
        self.committed = multiprocessing.get_context("fork").Value("q", 0)
        self.written = self.read = 0  # the worker's end; this process's place

    def put(self, number: int, judged: Judged) -> None:
        """In the worker: one judged piece."""
        data = pickle.dumps((number, judged), protocol=pickle.HIGHEST_PROTOCOL)
        os.pwrite(self.file.fileno(), len(data).to_bytes(8, "little") + data, self.written)
        self.written += 8 + len(data)
        with self.committed.get_lock():
            self.committed.value = self.written

    def take(self) -> dict[int, Judged]:
        """Here: the pieces committed since the last call."""
        found: dict[int, Judged] = {}
        end = self.committed.value
        while self.read < end:
            size = int.from_bytes(os.pread(self.file.fileno(), 8, self.read), "little")
            number, judged = pickle.loads(os.pread(self.file.fileno(), size, self.read + 8))  # noqa: S301 - our own
            found[number] = judged
            self.read += 8 + size
        return found

    def close(self) -> None:
        self.file.close()


def _take_pieces(tally: RunTally, pieces: list[Piece], claims: _Claims, inboxes: list[_Outbox]) -> dict[int, Judged]:
    """The pieces this process takes, judged, by number (their counts stay in `tally`); between its pieces, those the
    workers have put in their outboxes (each with its counts)."""
    done: dict[int, Judged] = {}
    while (number := claims.take()) is not None:
        done[number] = judge_piece(tally, pieces[number])
        for inbox in inboxes:
            done.update(inbox.take())
    return done


def _give_pieces(tally: RunTally, pieces: list[Piece], claims: _Claims, outbox: _Outbox) -> bool:
    """In a forked worker: the pieces it takes, each judged and put in its outbox with the counts of that piece
    alone (so a worker that dies gives every piece it gave whole, and the others are judged again)."""
    while (number := claims.take()) is not None:
        piece_tally = tally.fresh()
        judged = judge_piece(piece_tally, pieces[number])
        judged.counts = counts_of(piece_tally)
        outbox.put(number, judged)
    return True


def _with_forked_workers(tally: RunTally, pieces: list[Piece], count: int, meanwhile: Callable[[], None]
                         ) -> tuple[dict[int, Judged], list[Counts]]:
    """`count` - 1 forked workers and this process (its counts stay in `tally`) take the pieces; `meanwhile` runs
    here first, while the workers take pieces."""
    claims = _Claims(len(pieces))
    outboxes = [_Outbox() for _ in range(1, count)]
    try:
        workers = parallel.Workers(lambda i: _give_pieces(tally, pieces, claims, outboxes[i - 1]), count)
        try:
            meanwhile()
        except BaseException:
            claims.stop()  # the run is over: the workers take no further piece
            raise
        done = _take_pieces(tally, pieces, claims, outboxes)
        workers.results()  # the workers are done (a failed one is not redone: it claims nothing more)
        for outbox in outboxes:
            done.update(outbox.take())
    finally:
        for outbox in outboxes:
            outbox.close()
    counts = [judged.counts for judged in done.values() if judged.counts is not None]
    return done, counts


# ---------------------------------------------------------------- a Dask worker (--engine dask)

# The tallies a process judges with, by what they were made for: filled here before mbt's local cluster forks its
# workers (they inherit the models and judges), and on a worker by its first piece (the next ones reuse it).
_PREPARED: dict[tuple[tuple[str, ...], bool, str], RunTally] = {}


def prepare(tally: RunTally, model_paths: list[str], use_cache: bool) -> str:
    """Register this run's tally for the workers a local cluster forks from this process; its fingerprint."""
    expected = fingerprint(tally)
    _PREPARED.clear()
    _PREPARED[(tuple(model_paths), use_cache, expected)] = tally
    return expected


def judge_on_worker(model_paths: list[str], use_cache: bool, expected: str, loop: LoopRules, redaction: Redaction,
                    piece: Piece, answers: Any = None) -> tuple[Judged, Counts]:
    """On a Dask worker: the tally for these models (inherited, kept from an earlier piece, or loaded from the
    paths: the compiled-model cache where mbt wrote one, else parsed), checked to be this run's; one piece judged
    with it, and the counts of that piece alone. `answers`: the answer judge, sent with the piece (RunTally)."""
    key = (tuple(model_paths), use_cache, expected)
    known = _PREPARED.get(key)
    if known is None:
        from mbt.cache import load_compiled  # the worker loads the models itself

        known = RunTally(load_compiled(model_paths, use_cache).models, None, answers=answers)
        found = fingerprint(known)
        if found != expected:  # other files at those paths on this worker: its counts would not be this run's
            raise RuntimeError(f"the worker's models differ from this run's ({found[:12]} != {expected[:12]})")
        _PREPARED[key] = known
    tally = known.fresh()
    tally.loop, tally.redaction = loop, redaction
    paused = gc.isenabled()
    gc.disable()  # as in mbt's own process: the cyclic collector would rescan every run held
    try:
        return judge_piece(tally, piece), counts_of(tally)
    finally:
        if paused:
            gc.enable()


# ---------------------------------------------------------------- the whole run

def judge_in_parts(engine: Any, models: list[ModelBase], model_paths: list[str], run_paths: list[str],
                   coverage: CoverageReport | None, jobs: int | None = None, loop: LoopRules | None = None,
                   redaction: Redaction | None = None, tally: RunTally | None = None,
                   meanwhile: Callable[[], None] = lambda: None, answers: Any = None) -> tuple[RunSet, RunTally]:
    """Judge the runs' files in pieces: with `engine` (a mbt.measure.distributed.DaskEngine) each piece on the
    cluster; else, when the files hold PARALLEL_MIN_BYTES or more, here and in `jobs` - 1 forked workers (default:
    the machine's cores). `tally`: this run's, made already (`prepare`). `meanwhile`: work of this process's own
    (the goldens' coverage) done while the workers judge, before it takes pieces itself. The RunSet holds the files,
    unreadable runs and notes, not the runs: they are the tally's results. `answers`: the answer judge (RunTally)."""
    pieces = pieces_of(run_paths)
    tally = tally or RunTally(models, coverage, loop=loop, redaction=redaction, answers=answers)
    done: dict[int, Judged] = {}
    counts: list[Counts] = []
    if engine is not None and pieces:
        expected = fingerprint(tally)
        calls = [(model_paths, engine.use_cache, expected, tally.loop, tally.redaction, piece, tally.answers)
                 for piece in pieces]
        submitted = engine.submit_each(judge_on_worker, calls, lambda i: (judge_piece(tally, pieces[i]), None))
        meanwhile()
        for number, (judged, piece_counts) in enumerate(submitted.results()):
            done[number] = judged
            if piece_counts is not None:  # judged on the cluster (else the piece was judged with `tally` here)
                counts.append(piece_counts)
    else:
        count = (parallel.default_jobs() if jobs is None else jobs) if parallel.available() else 1
        size = sum(piece.end - piece.start for piece in pieces)
        if count > 1 and len(pieces) > 1 and size >= PARALLEL_MIN_BYTES:
            done, counts = _with_forked_workers(tally, pieces, min(count, len(pieces)), meanwhile)
        else:
            meanwhile()
    runset = RunSet()
    results: list[RunResult] = []
    regressions, sums, sightings = RegressionTally(), RunFigures(), Sightings()
    for number, piece in enumerate(pieces):
        judged = done.get(number)
        if judged is None:  # not parallel, or a worker did not finish it
            judged = judge_piece(tally, piece)
        runset.files.extend(judged.files)
        runset.invalid.extend(judged.invalid)
        runset.unread.extend(judged.unread)
        results.extend(judged.results)
        regressions.merge(judged.regressions)
        sums.merge(judged.figures)
        sightings.merge(judged.sightings)
    for part in counts:
        for name, through in part.through.items():
            tally.through[name].update(through)
        tally.tool_errors += part.tool_errors
    tally.results, tally.regressions, tally.figures, tally.sightings = results, regressions, sums, sightings
    return runset, tally
