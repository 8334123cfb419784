"""One base error for unusable input; subclasses carry a file:line:col position and the offending line."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field


def closest(name: str, known) -> str | None:
    """The known name most like `name` (a typo's likely intent), or None."""
    close = difflib.get_close_matches(name, sorted(known), n=1)
    return close[0] if close else None


def did_you_mean(name: str, known) -> str:
    """` (did you mean `x`?)` after a message about an unknown name, or nothing."""
    close = closest(name, known)
    return f" (did you mean `{close}`?)" if close else ""


class MbtError(Exception):
    """Input that mbt cannot use (exit code 2). The message says what is wrong; `render()` is what the user sees:
    `error: MESSAGE` (the one place that writes `error: `)."""

    exit_code = 2

    def __init__(self, message: str = "") -> None:
        super().__init__(message)
        self.message = message

    def render(self) -> str:
        return f"error: {self.message}"


@dataclass
class Problem:
    """One located problem: `file:line:col: error: message`, optionally with the source line and a caret."""

    path: str
    line: int
    column: int
    message: str
    source_line: str | None = None
    hint: str | None = None
    level: str = "error"

    def render(self) -> str:
        head = f"{self.path}:{self.line}:{self.column}: {self.level}: {self.message}"
        parts = [head]
        if self.source_line is not None:
            shown = self.source_line.rstrip("\n").expandtabs(1)
            parts.append(f"    {shown}")
            parts.append("    " + " " * max(self.column - 1, 0) + "^")
        if self.hint:
            parts.append(f"    hint: {self.hint}")
        return "\n".join(parts)


class LocatedError(MbtError):
    """One or more located problems in one input (syntax, unknown reference, type error)."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__(self.render())

    def render(self) -> str:
        return "\n".join(p.render() for p in self.problems)


def problem_at(path: str, text: str | None, line: int, column: int, message: str, hint: str | None = None) -> Problem:
    """Build a Problem and attach the offending source line when the text is at hand."""
    source_line = None
    if text is not None:
        lines = text.splitlines()
        if 1 <= line <= len(lines):
            source_line = lines[line - 1]
    return Problem(path, line, column, message, source_line, hint)


@dataclass
class UsageError(MbtError):
    """A bad option or argument combination."""

    message: str = ""
    details: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return self.render()

    def render(self) -> str:
        return "\n".join([f"error: {self.message}", *self.details])
