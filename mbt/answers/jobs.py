"""`mbt eval --jobs N`: the judges that need only the CPU (the embedded and rule judges) judge a batch in parts, this
process one and N-1 forked workers (mbt.measure.parallel) the others, each a consecutive run of the batch; the
verdicts come back in input order, so the report is byte-identical to one process's. An LLM judge waits on its
server, not on the CPU: it keeps its own requests in flight (`concurrency`) and is not split.
"""

from __future__ import annotations

from collections.abc import Sequence

from mbt.judges import EmbeddedJudge, RuleJudge
from mbt.judges.verdicts import Judge, JudgeInput, Verdict
from mbt.measure import parallel

# Below this many items a batch is judged here: forking would cost more than the part saves.
MIN_ITEMS = 200


class ForkedJudge:
    """`judge` judging its batches in `jobs` parts at once (see the module docstring)."""

    def __init__(self, judge: Judge, jobs: int):
        self.inner, self.jobs = judge, jobs
        self.name, self.version = judge.name, judge.version

    def judge(self, item: JudgeInput) -> Verdict:
        return self.inner.judge(item)

    def judge_many(self, items: Sequence[JudgeInput]) -> list[Verdict]:
        count = min(self.jobs, len(items) // MIN_ITEMS) if parallel.available() else 1
        if count < 2:
            return self.inner.judge_many(items)
        bounds = [len(items) * n // count for n in range(count + 1)]
        parts = [items[bounds[n]:bounds[n + 1]] for n in range(count)]
        workers = parallel.Workers(lambda i: self.inner.judge_many(parts[i]), count)
        out = self.inner.judge_many(parts[0])
        for verdicts in workers.results():
            out.extend(verdicts)
        return out

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if close is not None:
            close()


def forked(judge: Judge, jobs: int | None) -> Judge:
    """The judge split over `jobs` processes where it is CPU-bound; else the judge itself."""
    if jobs is None or jobs < 2 or not isinstance(judge, (EmbeddedJudge, RuleJudge)):
        return judge
    return ForkedJudge(judge, jobs)
