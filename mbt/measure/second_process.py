"""Runs part of a large coverage run in a forked second process, so the run uses both cores of a two-core machine."""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


def available() -> bool:
    """A second core, and `fork` (the child starts with the models already parsed and compiled)."""
    return (os.cpu_count() or 1) > 1 and "fork" in multiprocessing.get_all_start_methods()


class SecondProcess(Generic[T]):
    """Starts `work` in a forked copy of this process; `result()` returns what it returned.

    Should the copy fail (an exception, killed, out of memory, a result that cannot be pickled), `result()` runs
    `work` here instead: the outcome never depends on the second process, only the time does.
    """

    def __init__(self, work: Callable[[], T]):
        self.work = work
        context = multiprocessing.get_context("fork")
        self.receive, send = context.Pipe(duplex=False)
        sys.stdout.flush()  # else the child would inherit, and flush again, what is still buffered
        sys.stderr.flush()
        self.process = context.Process(target=_run, args=(work, send), daemon=True)
        self.process.start()
        send.close()

    def result(self) -> T:
        try:
            done, value = self.receive.recv()
        except (EOFError, OSError):
            done, value = False, None
        finally:
            self.receive.close()
            self.process.join()
        return value if done else self.work()


def _run(work: Callable[[], T], send) -> None:
    try:
        send.send((True, work()))
    except BaseException:  # the parent does the work itself and meets the same error, if there is one
        try:
            send.send((False, None))
        except BaseException:
            pass
    finally:
        send.close()
