"""The peak of what Python allocated while a function ran (tracemalloc), for the tests that bound memory."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable


def peak_while(func: Callable[[], object]) -> int:
    """The largest memory Python allocated while `func` ran (bytes)."""
    tracemalloc.start()
    try:
        func()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
