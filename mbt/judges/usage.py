"""What a run's LLM judges cost, as every report that an LLM judge serves carries it (docs/judges.md, "Cost and
budget"): per judge the verdicts asked, the requests, the cache hits, the tokens the server's replies reported and
the cost at the configuration file's price; the run's budget; and the totals over the judges.

The figures are read from the judges made for a run (mbt.judges.llm: `Usage`, `Price`, `Budget`) once they are done;
`combined` adds up one judge's figures over several runs (a result set written by a run, then resumed or retried) and
`totals` adds up a run's or a set's judges. A cost that is not measured (no price for a model) stays None in every
sum: a total over a judge without a price is not measured either, never a smaller figure.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel, Field


class JudgeUsage(BaseModel):
    """What one LLM judge of the run cost (docs/judges.md, "Cost and budget")."""

    judge: str = Field(description="The judge, openai:MODEL.")
    asked: int = Field(description="Verdicts asked of the server (each with its retries).")
    requests: int = Field(description="Requests sent, retries included.")
    retries: int
    cache_hits: int = Field(description="Verdicts taken from the cache (no request).")
    cache_hit_rate: float | None = Field(description="cache_hits / (cache_hits + asked); None when neither.")
    prompt_tokens: int = Field(description="Input tokens, as the server's replies (`usage`) report them.")
    completion_tokens: int = Field(description="Output tokens, as the server's replies report them.")
    replies_without_usage: int = Field(default=0, description="Replies that reported no tokens (not counted).")
    cost: float | None = Field(description="Dollars at the configuration file's price for the model; None: no price.")
    cost_note: str = Field(default="", description="Where the price came from, or why the cost is not measured.")
    not_asked: int = Field(default=0, description="Verdicts not asked because the budget was reached (not_judged).")


class EvalBudget(BaseModel):
    """The run's budget for its LLM judges (--max-cost, --max-requests) and whether it was reached."""

    max_cost: float | None = None
    max_requests: int | None = None
    requests: int = Field(default=0, description="Requests the budget granted.")
    reached: str | None = Field(default=None, description="Why sending stopped, or None: within the budget.")


class UsageTotals(BaseModel):
    """Every LLM judge's figures added up (a run's, or a result set's over the runs that wrote it)."""

    judges: int = Field(description="LLM judges counted.")
    asked: int
    requests: int
    retries: int
    cache_hits: int
    cache_hit_rate: float | None = Field(description="cache_hits / (cache_hits + asked); None when neither.")
    prompt_tokens: int
    completion_tokens: int
    replies_without_usage: int = 0
    cost: float | None = Field(description="Dollars; None when a judge's cost is not measured (no price).")
    not_asked: int = 0


def hit_rate(hits: int, asked: int) -> float | None:
    """Verdicts from the cache over verdicts wanted (from the cache or asked); None when none was wanted."""
    return hits / (hits + asked) if hits + asked else None


def judge_usage(judges: Iterable[Any]) -> tuple[list[JudgeUsage], EvalBudget | None]:
    """What each LLM judge among `judges` (the judges made for a run) cost, and the run's budget; the embedded and
    rule judges cost nothing and are left out."""
    out: list[JudgeUsage] = []
    budget = None
    for judge in judges:
        usage = getattr(judge, "usage", None)
        if usage is None:  # the embedded and rule judges cost nothing
            continue
        price = judge.price
        note = (f"at ${price.input_per_mtok:g} / ${price.output_per_mtok:g} per million input / output tokens "
                "(the configuration file's price)" if price is not None
                else f"not measured: no price for `{judge.model}` (llm: prices: in the configuration file)")
        out.append(JudgeUsage(judge=judge.name, asked=usage.asked, requests=usage.requests, retries=usage.retries,
                              cache_hits=usage.cache_hits, cache_hit_rate=usage.cache_hit_rate,
                              prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens,
                              replies_without_usage=usage.replies_without_usage, cost=judge.cost, cost_note=note,
                              not_asked=usage.over_budget))
        if judge.budget is not None:
            b = judge.budget
            budget = EvalBudget(max_cost=b.max_cost, max_requests=b.max_requests, requests=b.requests,
                                reached=b.refusal() if any(u.not_asked for u in out) else None)
    return out, budget


def combined(usages: Sequence[JudgeUsage]) -> list[JudgeUsage]:
    """One entry per judge (in the order first met) adding up its entries: a judge's figures over several runs.
    The cost is the sum when every entry has one, else None with the note of an entry without one."""
    by_judge: dict[str, list[JudgeUsage]] = {}
    for u in usages:
        by_judge.setdefault(u.judge, []).append(u)
    out = []
    for judge, entries in by_judge.items():
        if len(entries) == 1:
            out.append(entries[0].model_copy())
            continue
        unpriced = [u for u in entries if u.cost is None]
        asked, hits = sum(u.asked for u in entries), sum(u.cache_hits for u in entries)
        out.append(JudgeUsage(
            judge=judge, asked=asked, requests=sum(u.requests for u in entries),
            retries=sum(u.retries for u in entries), cache_hits=hits, cache_hit_rate=hit_rate(hits, asked),
            prompt_tokens=sum(u.prompt_tokens for u in entries),
            completion_tokens=sum(u.completion_tokens for u in entries),
            replies_without_usage=sum(u.replies_without_usage for u in entries),
            cost=None if unpriced else sum(u.cost or 0.0 for u in entries),
            cost_note=(unpriced[0] if unpriced else entries[-1]).cost_note,
            not_asked=sum(u.not_asked for u in entries)))
    return out


def totals(usages: Sequence[JudgeUsage]) -> UsageTotals | None:
    """Every entry added up; None without one (no LLM judge: nothing was measured, which is not a cost of 0)."""
    if not usages:
        return None
    asked, hits = sum(u.asked for u in usages), sum(u.cache_hits for u in usages)
    return UsageTotals(
        judges=len({u.judge for u in usages}), asked=asked, requests=sum(u.requests for u in usages),
        retries=sum(u.retries for u in usages), cache_hits=hits, cache_hit_rate=hit_rate(hits, asked),
        prompt_tokens=sum(u.prompt_tokens for u in usages), completion_tokens=sum(u.completion_tokens for u in usages),
        replies_without_usage=sum(u.replies_without_usage for u in usages),
        cost=None if any(u.cost is None for u in usages) else sum(u.cost or 0.0 for u in usages),
        not_asked=sum(u.not_asked for u in usages))
