"""`mbt eval --jobs N`: the work that needs only the CPU is split into consecutive parts, this process judging the
first and N-1 forked workers (mbt.measure.parallel) the others, the results coming back in input order, so the report
is byte-identical to one process's.

- When every judge of the run needs only the CPU (the embedded and rule judges), whole cases are split (`in_parts`
  over mbt.answers.evaluate.judge_goldens): reading each case's turns, judging them and combining the verdicts, which
  is most of a run; what stays here is reading the goldens and the runs, matching them, and the totals.
- Otherwise (an LLM judge is among them) the CPU-bound judges split their batches (`ForkedJudge`); an LLM judge waits
  on its server, not on the CPU: it keeps its own requests in flight (`concurrency`), in this process, and is not
  split.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from mbt.judges import EmbeddedJudge, RuleJudge
from mbt.judges.verdicts import Judge, JudgeInput, Verdict
from mbt.measure import parallel

# Below this many items a batch is judged here: forking would cost more than the part saves.
MIN_ITEMS = 200

T = TypeVar("T")
R = TypeVar("R")


def in_parts(work: Callable[[Sequence[T]], list[R]], items: Sequence[T], jobs: int | None) -> list[R]:
    """`work` over `jobs` consecutive parts of `items` at once (this process the first, forked workers the others),
    its results in the items' order; `work(items)` here when there are too few items or no workers to be had."""
    count = min(jobs or 1, len(items) // MIN_ITEMS) if parallel.available() else 1
    if count < 2:
        return work(items)
    bounds = [len(items) * n // count for n in range(count + 1)]
    parts = [items[bounds[n]:bounds[n + 1]] for n in range(count)]
    workers = parallel.Workers(lambda i: work(parts[i]), count)
    out = work(parts[0])
    for results in workers.results():
        out.extend(results)
    return out


def cpu_bound(judges: Sequence[Judge]) -> bool:
    """Whether every judge needs only the CPU (whole cases may then be judged in parts: the module docstring)."""
    return all(isinstance(judge, (EmbeddedJudge, RuleJudge)) for judge in judges)


class ForkedJudge:
    """`judge` judging its batches in `jobs` parts at once (see the module docstring)."""

    def __init__(self, judge: Judge, jobs: int):
        self.inner, self.jobs = judge, jobs
        self.name, self.version = judge.name, judge.version

    def judge(self, item: JudgeInput) -> Verdict:
        return self.inner.judge(item)

    def judge_many(self, items: Sequence[JudgeInput]) -> list[Verdict]:
        return in_parts(self.inner.judge_many, items, self.jobs)

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if close is not None:
            close()


def forked(judge: Judge, jobs: int | None) -> Judge:
    """The judge split over `jobs` processes where it is CPU-bound; else the judge itself."""
    if jobs is None or jobs < 2 or not isinstance(judge, (EmbeddedJudge, RuleJudge)):
        return judge
    return ForkedJudge(judge, jobs)
