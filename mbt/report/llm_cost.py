"""What the LLM judges cost, as every report shows it (eval, runs, judge calibrate and sensitivity, results show,
export and compare): in text a line per judge, the budget, and for a result set its totals; in a workbook's overview
a row per judge and the budget. A cost that is not measured reads `not measured`, never $0. Formats only
(mbt.judges.usage and mbt.store compute)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mbt.judges.usage import EvalBudget, JudgeUsage, UsageTotals


def hit_rate_text(rate: float | None) -> str:
    return "n/a" if rate is None else f"{rate * 100:.1f}%"


def cost_text(cost: float | None) -> str:
    """A cost in dollars, or `not measured` (never $0: a cost not measured is not a free run)."""
    return "not measured" if cost is None else f"${cost:.4f}"


def judge_lines(usages: Sequence[JudgeUsage], indent: str = "  ") -> list[str]:
    """A line per LLM judge: verdicts asked, requests, cache hits, tokens and the cost (or why it is not measured)."""
    lines = []
    for u in usages:
        cost = f"${u.cost:.4f} {u.cost_note}" if u.cost is not None else f"cost {u.cost_note}"
        lines.append(f"{indent}{u.judge}: {u.asked} verdict(s) asked in {u.requests} request(s) ({u.retries} "
                     f"retried), {u.cache_hits} from the cache (hit rate {hit_rate_text(u.cache_hit_rate)}); "
                     f"{u.prompt_tokens} input + {u.completion_tokens} output tokens; {cost}")
        if u.replies_without_usage:
            lines.append(f"{indent}  {u.replies_without_usage} reply(ies) reported no tokens: not counted")
        if u.not_asked:
            lines.append(f"{indent}  {u.not_asked} verdict(s) not asked: not judged (budget)")
    return lines


def limits_text(b: EvalBudget) -> str:
    """The limits a budget was given, as the command line gives them."""
    return ", ".join(x for x in (f"--max-cost {b.max_cost:g}" if b.max_cost is not None else "",
                                 f"--max-requests {b.max_requests}" if b.max_requests is not None else "") if x)


def budget_line(b: EvalBudget, indent: str = "  ", label: str = "budget") -> str:
    limits = limits_text(b)
    return (f"{indent}{label} ({limits}): {b.reached}" if b.reached
            else f"{indent}{label} ({limits}): not reached, {b.requests} request(s) sent")


def usage_lines(usages: Sequence[JudgeUsage], budget: EvalBudget | None, indent: str = "  ") -> list[str]:
    """What each LLM judge of a run cost, and the run's budget (nothing without an LLM judge or a budget)."""
    return judge_lines(usages, indent) + ([budget_line(budget, indent)] if budget is not None else [])


def totals_line(t: UsageTotals, indent: str = "  ") -> str:
    return (f"{indent}total over {t.judges} LLM judge(s): {t.asked} verdict(s) asked in {t.requests} request(s), "
            f"{t.cache_hits} from the cache (hit rate {hit_rate_text(t.cache_hit_rate)}); {t.prompt_tokens} input + "
            f"{t.completion_tokens} output tokens; cost {cost_text(t.cost)}")


USAGE_HEADER = ["LLM judge", "Verdicts asked", "Requests", "Retried", "From the cache", "Cache hit rate (%)",
                "Input tokens", "Output tokens", "Cost ($)", "Cost note", "Not asked (budget)"]


def _percent(rate: float | None) -> float | str:
    return "n/a" if rate is None else round(rate * 100, 2)


def usage_rows(usages: Sequence[JudgeUsage], budgets: Sequence[tuple[str, EvalBudget]] = (),
               total: UsageTotals | None = None) -> list[list[Any]]:
    """A workbook's rows: a header, a row per LLM judge, the totals (a result set's, when given) and a row per
    budget (label, budget); no row at all without an LLM judge."""
    if not usages:
        return []
    rows: list[list[Any]] = [list(USAGE_HEADER)]
    rows += [[u.judge, u.asked, u.requests, u.retries, u.cache_hits, _percent(u.cache_hit_rate), u.prompt_tokens,
              u.completion_tokens, u.cost if u.cost is not None else "not measured", u.cost_note, u.not_asked]
             for u in usages]
    if total is not None:
        rows.append([f"Total ({total.judges} judge(s))", total.asked, total.requests, total.retries,
                     total.cache_hits, _percent(total.cache_hit_rate), total.prompt_tokens, total.completion_tokens,
                     total.cost if total.cost is not None else "not measured", "", total.not_asked])
    rows += [[label, limits_text(b), b.reached or "not reached", f"{b.requests} request(s) granted"]
             for label, b in budgets]
    return rows
