"""`mbt eval --save` and `--resume`: the cases kept in the store as they are judged (mbt.answers.evaluate's
Checkpoint), part by part, so that a run stopped midway has kept what it judged; and, for a resumed set, the cases
it holds taken as they were instead of judged again.

With each part it stores what the run's LLM judges cost until then (`usage`, given by the command), so a run stopped
midway leaves its cost in the set up to its last part (mbt.store.write).

A resumed set must hold only cases of this run: a case key it holds that the goldens given do not have means other
inputs, and the run stops before judging anything (the set stays as it was, interrupted).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mbt.answers.evaluate import AnswerGolden
from mbt.answers.results import CaseResult
from mbt.errors import MbtError, did_you_mean
from mbt.store.records import eval_keys, eval_record
from mbt.store.write import RunUsage, SetWriter


class StoreCheckpoint:
    """The cases of one eval run written into `writer`'s set as they are judged; counts what was kept and judged."""

    def __init__(self, writer: SetWriter, relabel: Callable[[CaseResult], None] | None = None) -> None:
        """`relabel`: how a case names where its run was before it is kept (`mbt eval --agent`: its temporary
        folder as `agent:`)."""
        self.writer = writer
        self.relabel = relabel
        self.key_of: dict[tuple[str, str], str] = {}
        self.stored: set[str] = set()
        self.kept_cases = 0
        self.judged_cases = 0
        self.usage: Callable[[], RunUsage] | None = None  # what the run's LLM judges cost until now

    def start(self, goldens: Sequence[AnswerGolden]) -> None:
        keys = eval_keys([(g.case.file, g.case.id) for g in goldens])
        self.key_of = {(g.case.file, g.case.id): key for g, key in zip(goldens, keys)}
        self.stored = self.writer.stored_keys() if self.writer.kept else set()
        foreign = sorted(self.stored - set(keys))
        if foreign:
            raise MbtError(f"result set `{self.writer.name}` holds {len(foreign)} case(s) the goldens given do not "
                           f"have, such as `{foreign[0]}`{did_you_mean(foreign[0], keys)}: resume it with the inputs "
                           "it was started with")

    def kept(self, goldens: Sequence[AnswerGolden]) -> list[CaseResult | None]:
        keys = [self.key_of[(g.case.file, g.case.id)] for g in goldens]
        docs = self.writer.stored_docs(k for k in keys if k in self.stored) if self.stored else {}
        found = [CaseResult.model_validate(docs[k]) if k in docs else None for k in keys]
        self.kept_cases += sum(c is not None for c in found)
        return found

    def save(self, goldens: Sequence[AnswerGolden], cases: Sequence[CaseResult]) -> None:
        if self.relabel is not None:
            for case in cases:
                self.relabel(case)
        self.writer.add([eval_record(self.key_of[(g.case.file, g.case.id)], case, g.run)
                         for g, case in zip(goldens, cases)], usage=self.usage() if self.usage is not None else None)
        self.judged_cases += len(cases)
