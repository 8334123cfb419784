"""Marginal value of candidate goldens: what each adds to a baseline set in verified elements and killed mutants.

Each candidate is judged against the baseline alone (not against the other candidates), on the same mutants: the
elements it verifies that no baseline golden verifies, the mutants it kills that no baseline golden kills, or
"adds nothing" with the baseline goldens that already verify and kill everything it does. A candidate whose profile
is exactly a baseline golden's is a duplicate at the model's level, however differently it is worded.
"""

from __future__ import annotations

from mbt.measure.mutation import CandidateValue, CompareReport
from mbt.mutate.engine import GoldenProfile


def compare(baseline: list[GoldenProfile], candidates: list[GoldenProfile]) -> CompareReport:
    baseline = [p for p in baseline if p.invalid is None]  # an invalid case counts nowhere, in the baseline too
    out = CompareReport(baseline=len(baseline))
    verified = set().union(*(p.verified for p in baseline)) if baseline else set()
    kills = set().union(*(p.kills for p in baseline)) if baseline else set()
    same: dict[frozenset, list[str]] = {}
    for p in baseline:
        same.setdefault(frozenset(p.verified | p.kills), []).append(p.id)
    for c in candidates:
        new_e, new_k = sorted(c.verified - verified), sorted(c.kills - kills)
        value = CandidateValue(id=c.id, where=c.where, new_elements=new_e, new_kills=new_k, verdict="adds nothing",
                               invalid=c.invalid)
        if new_e and new_k:
            value.verdict = "adds coverage and kills"
        elif new_e:
            value.verdict = "adds coverage"
        elif new_k:
            value.verdict = "adds kills"
        profile = frozenset(c.verified | c.kills)
        if new_e:
            out.adds_coverage += 1
        if new_k:
            out.adds_kills += 1
        if not (new_e or new_k):
            out.adds_nothing += 1
            value.duplicate_of = list(same.get(profile, []))
            if value.duplicate_of:
                out.duplicates += 1
                value.covered_by = value.duplicate_of[:1]
            else:
                value.covered_by = _cover(profile, baseline)
            if c.invalid:
                value.message = f"adds nothing: the case is invalid {c.invalid}"
            elif not profile:
                value.message = "adds nothing: it verifies no element and kills no mutant"
            else:
                value.message = ("adds nothing: it verifies the same elements and kills the same mutants as "
                                 + ", ".join(value.covered_by))
        else:
            parts = []
            if new_e:
                parts.append(f"verifies {len(new_e)} new element(s)")
            if new_k:
                parts.append(f"kills {len(new_k)} new mutant(s)")
            value.message = " and ".join(parts)
        out.candidates.append(value)
    return out


def _cover(profile: frozenset, baseline: list[GoldenProfile]) -> list[str]:
    """Baseline goldens that together verify and kill all of `profile` (greedy, largest share first)."""
    left = set(profile)
    chosen: list[str] = []
    pool = [(p.id, (p.verified | p.kills) & profile) for p in baseline]
    while left:
        gid, part = max(pool, key=lambda x: len(x[1] & left))
        if not part & left:
            break
        chosen.append(gid)
        left -= part
    return chosen
