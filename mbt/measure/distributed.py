"""Replays the parts of a coverage run on a Dask cluster (`--engine dask`): a scheduler's, or a local one.

The golden stream is split as for `--jobs`: this process replays the first part, each Dask worker one later part.
A worker cannot be handed the tallies of this process (a closure over them does not travel), so it gets the model
paths and its part (ranges of the golden files, read by the worker from the same paths), loads and compiles the
models itself, and returns what `_replay_all` gives; this process
takes those outcomes in case order, exactly as it takes a forked worker's, so the report is byte-identical. Should a
part fail on the cluster (an exception, a lost worker, model or golden files the worker cannot read or reads
differently), it is
replayed here instead: the outcome never depends on the cluster, only the time does.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from mbt.errors import MbtError
from mbt.measure import parallel
from mbt.measure.run import ModelTally, ReplayedPart, RunTally
from mbt.measure.run import replay_part as replay_here

if TYPE_CHECKING:  # the goldens reader loads with the goldens (start-up time)
    from mbt.goldens.loader import GoldenStream, Piece

T = TypeVar("T")

CONNECT_TIMEOUT = 10.0  # seconds to reach a scheduler, and for it to have a worker
EXTRA_MISSING = "--engine dask needs dask.distributed, the optional extra: pip install 'mbt[dask]'"


def fingerprint(tallies: list[ModelTally]) -> str:
    """What a worker's models must match: names, kinds, files and element ids in order (outcomes are by index)."""
    digest = hashlib.sha256()
    for tally in tallies:
        model = tally.model
        digest.update(repr((model.name, model.kind, model.file, [e.id for e in tally.elements])).encode())
    return digest.hexdigest()


@dataclass(frozen=True)
class Part:
    """One part's text, sent to the cluster as one object (a bare list would be scattered item by item)."""

    pieces: list[Piece]  # ranges of golden files (read by the worker) or text (standard input)
    bad: dict[str, dict[int, str]] = field(default_factory=dict)  # lines that are not text, per file (bad bytes)
    covering_cap: int | None = None  # the run's settings, for the part's tally
    invalid_cap: int | None = None
    cases: bool = False  # the per-case entries are asked for


def replay_part(model_paths: list[str], use_cache: bool, expected: str, part: Part) -> tuple[list, ReplayedPart]:
    """On a Dask worker: load and compile the models from their paths, check they are this run's, replay the part
    (what mbt.measure.run.replay_part gives: its broken cases and a ReplayedPart)."""
    from mbt.cache import load_compiled  # the worker compiles (or takes from its cache) the models itself

    tallies = [ModelTally(model, part.covering_cap) for model in load_compiled(model_paths, use_cache).models]
    found = fingerprint(tallies)
    if found != expected:  # other files at those paths on this worker: its outcomes would not be this run's
        raise RuntimeError(f"the worker's models differ from this run's ({found[:12]} != {expected[:12]})")
    run = RunTally(tallies, [] if part.cases else None, part.invalid_cap)
    from mbt.goldens.loader import GoldenStream  # on use: start-up time

    return replay_here(run, GoldenStream.of_pieces(part.pieces, part.bad, part.invalid_cap))


class DaskEngine:
    """A connection to a Dask cluster for one coverage run (a context manager): `scheduler` an address, or None for
    a LocalCluster of `jobs` worker processes (default: the machine's cores)."""

    def __init__(self, model_paths: list[str], scheduler: str | None = None, jobs: int | None = None,
                 use_cache: bool = True):
        self.model_paths, self.scheduler, self.jobs, self.use_cache = list(model_paths), scheduler, jobs, use_cache
        self.workers = 0
        self.client: Any = None
        self.cluster: Any = None

    def __enter__(self) -> DaskEngine:
        try:  # dask is an optional extra, imported only for `--engine dask`
            from distributed import Client, LocalCluster
        except ImportError:
            raise MbtError(EXTRA_MISSING) from None
        # The cluster's own log lines (start, stop, lost connections) would interleave with mbt's output.
        for name in ("distributed", "tornado", "bokeh"):
            logging.getLogger(name).setLevel(logging.CRITICAL)
        try:
            if self.scheduler is None:
                import dask

                count = self.jobs or parallel.default_jobs()
                # Workers forked from this process where the system can (as `--jobs` does): they start in a fraction
                # of a second with what this process has loaded (the models, their judges: mbt.runs.parts.prepare),
                # instead of importing mbt and loading the models again. Its web server on a free local port: the
                # default, 8787, may be another cluster's on this machine.
                method = "fork" if parallel.available() else dask.config.get("distributed.worker.multiprocessing-method")
                with dask.config.set({"distributed.worker.multiprocessing-method": method}):
                    self.cluster = LocalCluster(n_workers=count, threads_per_worker=1, processes=True,
                                                dashboard_address="127.0.0.1:0", silence_logs=logging.CRITICAL)
                self.client = Client(self.cluster, timeout=CONNECT_TIMEOUT)
            else:
                self.client = Client(self.scheduler, timeout=CONNECT_TIMEOUT)
                self.client.wait_for_workers(1, timeout=CONNECT_TIMEOUT)
        except Exception as err:  # noqa: BLE001 - whatever keeps the cluster away, one line for the user
            self.__exit__(None, None, None)
            where = f"the Dask scheduler at {self.scheduler}" if self.scheduler else "a local Dask cluster"
            reason = " ".join(str(err).split()) or type(err).__name__
            raise MbtError(f"cannot reach {where}: {reason}") from None
        known = len(self.client.scheduler_info().get("workers", {}))
        self.workers = self.jobs if self.scheduler is not None and self.jobs else max(1, known)
        return self

    def __exit__(self, *exc: object) -> None:
        for thing in (self.client, self.cluster):
            if thing is not None:
                try:
                    thing.close()
                except Exception:  # noqa: BLE001 - the run is over; a cluster slow to stop changes nothing
                    pass
        self.client = self.cluster = None

    def start(self, run: RunTally, parts: list[GoldenStream]) -> Submitted:
        """Each later part of a coverage run on a worker (`replay_part`); replayed here should it fail there."""
        expected = fingerprint(run.tallies)
        cap = run.tallies[0].cap if run.tallies else None
        calls = [(self.model_paths, self.use_cache, expected,
                  Part(part.pieces, part.bad_lines, cap, run.invalid_cap, run.cases is not None)) for part in parts]
        return self.submit_all(replay_part, calls, lambda i: replay_here(run, parts[i]))

    def submit_all(self, func: Callable[..., T], calls: list[tuple], redo: Callable[[int], T]) -> Submitted[T]:
        """`func(*call)` for each call on the cluster (the last argument, a part's data, sent ahead as one object);
        `redo(i)` gives call i's result here when the cluster cannot."""
        futures = []
        for call in calls:
            try:
                data = self.client.scatter(call[-1])
                futures.append(self.client.submit(func, *call[:-1], data, pure=False))
            except Exception:  # noqa: BLE001 - the cluster went away: this part (and the next) are done here
                futures.append(None)
        return Submitted(futures, redo)


    def submit_each(self, func: Callable[..., T], calls: list[tuple], redo: Callable[[int], T]) -> Submitted[T]:
        """`func(*call)` for each call on the cluster, its arguments sent with it (small: paths, a byte range);
        the results are gathered as they come (`Gathering`), `redo(i)` giving call i's result here when the cluster
        cannot."""
        futures = []
        for call in calls:
            try:
                futures.append(self.client.submit(func, *call, pure=False))
            except Exception:  # noqa: BLE001 - the cluster went away: this call (and the next) are done here
                futures.append(None)
        return Gathering(futures, redo)


class Submitted(Generic[T]):
    """The parts handed to the cluster; `results()` takes them in order, doing here any part that failed there."""

    def __init__(self, futures: list[Any], redo: Callable[[int], T]):
        self.futures, self.redo = futures, redo
        self.redone: list[int] = []  # parts done here after failing on the cluster (for the tests)

    def results(self) -> list[T]:
        out = []
        for i, future in enumerate(self.futures):
            if future is not None:
                try:
                    out.append(future.result())
                    continue
                except Exception:  # noqa: BLE001 - any failure on the cluster: the part is done here, same outcome
                    pass
            self.redone.append(i)
            out.append(self.redo(i))  # its data was sent as a copy: still unread here
        return out


class Gathering(Submitted[T]):
    """Calls handed to the cluster one by one, their results fetched as each finishes (while the others run), then
    given in order; a call that failed there is done here."""

    def results(self) -> list[T]:
        from distributed import as_completed

        got: dict[int, T] = {}
        index = {id(f): i for i, f in enumerate(self.futures) if f is not None}
        live = [f for f in self.futures if f is not None]
        if live:
            for future in as_completed(live):
                try:
                    got[index[id(future)]] = future.result()
                except Exception:  # noqa: BLE001 - any failure on the cluster: the call is done here, same outcome
                    pass
                future.release()  # its result is here now: the worker may forget it
        out = []
        for i in range(len(self.futures)):
            if i not in got:
                self.redone.append(i)
                got[i] = self.redo(i)
            out.append(got.pop(i))
        return out
