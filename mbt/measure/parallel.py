"""Runs parts of a large coverage run in worker processes of the standard executor (`--jobs N`).

The workers are forked (they start with the models already parsed and compiled) by a
`concurrent.futures.ProcessPoolExecutor`; each pickles what its part gave into an unnamed temporary file made before
the fork (not through the pool's pipe, which holds the whole pickle in memory on both sides at once), and this
process reads the results back only once every worker has finished and exited: a large run's tallies are then never
in memory twice. Should a worker fail (an exception, killed, out of memory, a result that cannot be pickled), its
part is done in this process instead: the outcome never depends on the workers, only the time does.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import sys
import tempfile
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from typing import IO, Generic, TypeVar

T = TypeVar("T")

# The work of the current run and the files its results go to, read by the forked workers: a closure cannot be
# pickled, a fork inherits it (and the files' descriptors).
_WORK: list[Callable[[int], object]] = []
_RESULTS: list[IO[bytes]] = []


def default_jobs() -> int:
    """The machine's cores (those this process may run on, where the OS says)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def available() -> bool:
    """Workers are forked: POSIX only (elsewhere every part runs in this process)."""
    return "fork" in multiprocessing.get_all_start_methods()


class Workers(Generic[T]):
    """`work(i)` for each part i in 1..parts-1 started in forked workers; `results()` returns them in order."""

    def __init__(self, work: Callable[[int], T], parts: int):
        self.work = work
        self.parts = parts
        self.pool: ProcessPoolExecutor | None = None
        self.futures: list[Future] = []
        self.files: list[IO[bytes]] = []
        if parts < 2:
            return
        sys.stdout.flush()  # else a worker would inherit, and flush again, what is still buffered
        sys.stderr.flush()
        try:
            self.files = [tempfile.TemporaryFile() for _ in range(1, parts)]  # unnamed: gone with the last descriptor
            _WORK[:], _RESULTS[:] = [work], self.files
            self.pool = ProcessPoolExecutor(max_workers=parts - 1, mp_context=multiprocessing.get_context("fork"))
            self.futures = [self.pool.submit(_run, i) for i in range(1, parts)]
        except (OSError, RuntimeError, ValueError):  # no processes or files to be had: the parts run here
            self._close()
            self.pool, self.futures = None, []

    def results(self) -> list[T]:
        out: list[T] = []
        try:
            done = [self._finished(i) for i in range(1, self.parts)]
            if self.pool is not None:  # the workers exit (and free their memory) before their results are read
                self.pool.shutdown(wait=True, cancel_futures=True)
                self.pool = None
            for i, finished in zip(range(1, self.parts), done):
                out.append(self._result(i, finished))
        finally:
            if self.pool is not None:
                self.pool.shutdown(wait=True, cancel_futures=True)
            _WORK.clear()
            _RESULTS.clear()
            self._close()
        return out

    def _finished(self, i: int) -> bool:
        """Whether worker part i wrote its result."""
        if i - 1 >= len(self.futures):
            return False
        try:
            return self.futures[i - 1].result() is True
        except Exception:  # noqa: BLE001 - any failure of a worker: its part is done here, with the same outcome
            return False

    def _result(self, i: int, finished: bool) -> T:
        if finished:
            try:
                handle = self.files[i - 1]
                handle.seek(0)
                return pickle.load(handle)  # noqa: S301 - written by our own forked worker just now
            except Exception:  # noqa: BLE001 - a result that cannot be read back: the part is done here
                pass
        return self.work(i)

    def _close(self) -> None:
        for handle in self.files:
            handle.close()
        self.files = []


def _run(i: int) -> bool:
    result = _WORK[0](i)
    with open(os.dup(_RESULTS[i - 1].fileno()), "wb") as out:  # the inherited file, from its start
        pickle.dump(result, out, protocol=pickle.HIGHEST_PROTOCOL)
    return True
