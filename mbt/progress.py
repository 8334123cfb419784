"""Progress of long runs on stderr: a tqdm bar on a terminal; nothing in pipes, files, CI logs or with -q."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Protocol

# A step reports how much more of its total is done.
Advance = Callable[[int], None]


class _Bar(Protocol):
    """What a run asks of its tqdm bar (tqdm has no types of its own)."""

    def update(self, n: int) -> None: ...

    def close(self) -> None: ...


class Progress:
    """Bars for the stages of a run (reading goldens, drawing diagrams), each closed when the next starts."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self._bar: _Bar | None = None

    @classmethod
    def for_terminal(cls, quiet: bool = False) -> Progress:
        stream = sys.stderr
        return cls(not quiet and hasattr(stream, "isatty") and stream.isatty())

    def stage(self, description: str, total: int, unit: str = "it", scale: bool = False) -> Advance:
        """Start a bar (closing the previous one); the returned function advances it."""
        self.close()
        if not self.enabled or total <= 0:
            return _nothing
        from tqdm import tqdm  # only on a terminal

        bar: _Bar = tqdm(total=total, desc=description, unit=unit, unit_scale=scale, leave=False, file=sys.stderr,
                         dynamic_ncols=True)
        self._bar = bar
        return bar.update

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _nothing(_: int) -> None:
    return None
