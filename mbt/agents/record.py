"""Where `mbt eval --agent` keeps the sessions it drives, and which golden cases it sends.

`RecordFolder`: `--record DIR` (made if missing; it must hold no file yet, so that re-judging it offline reads this
run alone), else a temporary folder removed at the end, whose path every report text then names `agent:`
(`agent:card-qna/3.json`). `cases_to_drive`: the golden cases as the driver sends them (`STEM/ID`, the user text of
each turn), and a note for each that cannot be sent (a turn with no user text: a model event or a tool result).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from mbt.agents.drive import CaseToDrive
from mbt.answers.evaluate import AnswerGolden
from mbt.answers.results import Located
from mbt.errors import MbtError
from mbt.runs.reader import read_runs
from mbt.runs.steps import ObservedRun


class RecordFolder:
    """Where the driven sessions' transcripts go (the module's docstring); a context manager that removes a
    temporary folder at the end."""

    def __init__(self, record: str | None):
        self.temporary = record is None
        if record is None:
            self.path = Path(tempfile.mkdtemp(prefix="mbt-agent-"))
        else:
            self.path = Path(record)
            if self.path.exists() and not self.path.is_dir():
                raise MbtError(f"--record {record}: is a file; give a folder for the transcripts")
            if self.path.is_dir() and any(self.path.iterdir()):
                raise MbtError(f"--record {record}: the folder holds files already; give a new or empty folder (a "
                               "re-judged folder must hold one run's transcripts)")
            try:
                self.path.mkdir(parents=True, exist_ok=True)
            except OSError as err:
                raise MbtError(f"--record {record}: cannot make the folder: {err.strerror or err}") from None

    def label(self, where: str | None) -> str | None:
        """A location as reports show it: the temporary folder's path replaced by `agent:`."""
        prefix = str(self.path) + os.sep
        return f"agent:{where[len(prefix):]}" if self.temporary and where and where.startswith(prefix) else where

    def relabel(self, report: BaseModel) -> None:
        """Every text of the report that names the temporary folder (a case's run, a step's place, a deviation's
        reason) names `agent:` instead."""
        if not self.temporary:
            return
        prefix = str(self.path) + os.sep

        def walk(value: Any) -> Any:
            if isinstance(value, str):
                return value.replace(prefix, "agent:") if prefix in value else value
            if isinstance(value, list):
                return [walk(v) for v in value]
            if isinstance(value, dict):
                return {k: walk(v) for k, v in value.items()}
            if isinstance(value, BaseModel):
                for name in type(value).model_fields:
                    setattr(value, name, walk(getattr(value, name)))
            return value

        walk(report)

    def runs(self) -> list[ObservedRun]:
        """The recorded runs, read back, their locations as the report shows them."""
        found = read_runs([str(self.path)]).runs
        for run in found:
            run.where = self.label(run.where) or run.where
        return found

    def __enter__(self) -> RecordFolder:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.temporary:
            shutil.rmtree(self.path, ignore_errors=True)


def cases_to_drive(goldens: Sequence[AnswerGolden], only: Collection[str] | None = None
                   ) -> tuple[list[CaseToDrive], list[Located]]:
    """The cases to send (those of `only`'s keys, `STEM/ID` or the golden file's path and id, when given), and a note
    for each case that cannot be sent."""
    cases, notes = [], []
    for golden in goldens:
        key = f"{golden.scope}/{golden.case.id}"
        if only is not None and key not in only and f"{golden.case.file}/{golden.case.id}" not in only:
            continue
        silent = [n for n, turn in enumerate(golden.turns, start=1) if not turn.question.strip()]
        if silent:
            notes.append(Located(where=golden.case.where, message=(
                f"case `{golden.case.id}` was not sent to the agent: turn {silent[0]} has no user text (a turn "
                "naming a model event or a tool result is not something a user says); it is not judged")))
            continue
        cases.append(CaseToDrive(key, tuple(turn.question for turn in golden.turns)))
    return cases, notes
