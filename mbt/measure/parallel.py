"""Runs parts of a large coverage run in worker processes of the standard executor (`--jobs N`).

The workers are forked (they start with the models already parsed and compiled) by a
`concurrent.futures.ProcessPoolExecutor`; each returns what its part gave. Should a worker fail (an exception,
killed, out of memory, a result that cannot be pickled), its part is done in this process instead: the outcome never
depends on the workers, only the time does.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Generic, TypeVar

T = TypeVar("T")

# The work of the current run, read by the forked workers: a closure cannot be pickled, a fork inherits it.
_WORK: list[Callable[[int], object]] = []


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
        if parts < 2:
            return
        sys.stdout.flush()  # else a worker would inherit, and flush again, what is still buffered
        sys.stderr.flush()
        _WORK[:] = [work]
        try:
            self.pool = ProcessPoolExecutor(max_workers=parts - 1, mp_context=multiprocessing.get_context("fork"))
            self.futures = [self.pool.submit(_run, i) for i in range(1, parts)]
        except (OSError, RuntimeError, ValueError):  # no processes to be had: the parts run here
            self.pool, self.futures = None, []

    def results(self) -> list[T]:
        out: list[T] = []
        try:
            for i in range(1, self.parts):
                out.append(self._result(i))
        finally:
            if self.pool is not None:
                self.pool.shutdown(wait=True, cancel_futures=True)
            _WORK.clear()
        return out

    def _result(self, i: int) -> T:
        if i - 1 < len(self.futures):
            try:
                return self.futures[i - 1].result()
            except Exception:  # noqa: BLE001 - any failure of a worker: its part is done here, with the same outcome
                pass
        return self.work(i)


def _run(i: int):
    return _WORK[0](i)
