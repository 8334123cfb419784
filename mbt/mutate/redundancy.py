"""Redundant goldens and the smallest equivalent set: a minimum subset keeping every verified element and every kill.

A golden's profile is the set of `model:element` ids it verifies plus the `model:mutant` ids it kills. A subset is
equivalent when the union of its profiles is the whole set's: then coverage (every criterion counts verified
elements) and the kills are unchanged. Goldens with the profile of an earlier one, and goldens whose profile is
strictly inside another's, are never needed in a minimum; the rest is an exact set cover solved with z3's optimiser
within a time bound, or, past it, the greedy cover (largest new part first), reported with a lower bound (a set of
items no two of which one golden holds: each needs its own golden).
"""

from __future__ import annotations

from collections import defaultdict

from mbt.measure.mutation import Dropped, Redundancy, Subsumed
from mbt.mutate.engine import GoldenProfile

DEFAULT_TIME_LIMIT = 10.0  # seconds z3 may take for the exact cover


def redundancy(profiles: list[GoldenProfile], time_limit: float = DEFAULT_TIME_LIMIT) -> Redundancy:
    out = Redundancy(goldens=len(profiles))
    items = {p.id: frozenset(p.verified | p.kills) for p in profiles}
    first_of: dict[frozenset, str] = {}
    distinct: list[str] = []
    reasons: dict[str, str] = {}
    for p in profiles:
        got = items[p.id]
        if not got:
            out.idle.append(p.id)
            reasons[p.id] = f"invalid {p.invalid}" if p.invalid else "verifies nothing and kills nothing"
        elif got in first_of:
            out.duplicates.append(Dropped(id=p.id, reason=f"duplicate of {first_of[got]}"))
            reasons[p.id] = f"duplicate of {first_of[got]}: the same verified elements and kills"
        else:
            first_of[got] = p.id
            distinct.append(p.id)
    # Strictly inside another profile: found through the golden lists of the profile's rarest item.
    holders: dict[str, list[str]] = defaultdict(list)
    for gid in distinct:
        for item in items[gid]:
            holders[item].append(gid)
    useful: list[str] = []
    for gid in distinct:
        mine = items[gid]
        rarest = min(sorted(mine), key=lambda item: len(holders[item]))  # sorted: ties never follow a hash
        by = next((other for other in holders[rarest] if other != gid and mine < items[other]), None)
        if by is not None:
            out.subsumed.append(Subsumed(id=gid, by=by))
            reasons[gid] = f"subsumed by {by}: it verifies and kills everything this one does, and more"
        else:
            useful.append(gid)
    universe = set().union(*(items[g] for g in useful)) if useful else set()
    kept, exact, note, bound = _cover(useful, items, universe, time_limit)
    out.method, out.method_note, out.lower_bound = ("exact" if exact else "greedy"), note, bound
    order = {p.id: k for k, p in enumerate(profiles)}
    out.kept = sorted(kept, key=order.__getitem__)
    keep = set(kept)
    for p in profiles:
        if p.id not in keep:
            out.dropped.append(Dropped(id=p.id, reason=reasons.get(
                p.id, "every element it verifies and mutant it kills is verified or killed by the kept goldens")))
    return out


def _cover(useful: list[str], items: dict[str, frozenset], universe: set, time_limit: float):
    """(kept ids, exact?, note, lower bound)."""
    if not universe:
        return [], True, "nothing to cover", 0
    bound = _packing_bound(useful, items, universe)
    essential = _essential(useful, items)
    try:
        import z3  # a heavy import, only when there is something to minimise
    except ImportError:  # pragma: no cover - z3 is a dependency
        z3 = None
    if z3 is not None:
        pick = {g: z3.Bool(f"keep{k}") for k, g in enumerate(useful)}
        holders: dict[str, list[str]] = defaultdict(list)
        for g in useful:
            for item in items[g]:
                holders[item].append(g)
        opt = z3.Optimize()
        opt.set("timeout", max(1, int(time_limit * 1000)))
        for item in sorted(universe):
            opt.add(z3.Or([pick[g] for g in holders[item]]))
        for g in essential:
            opt.add(pick[g])
        handle = opt.minimize(z3.Sum([z3.If(pick[g], 1, 0) for g in useful]))
        answer = opt.check()
        if answer == z3.sat:
            model = opt.model()
            kept = [g for g in useful if z3.is_true(model.eval(pick[g], model_completion=True))]
            # sat from the optimiser means it finished: the objective is at its minimum (on a timeout it says unknown)
            lower = handle.lower()
            if z3.is_int_value(lower) and lower.as_long() == len(kept):
                return kept, True, f"z3 Optimize proved the minimum within {time_limit:g} s", len(kept)
    kept = _greedy(useful, items, universe)
    return kept, False, (f"z3 Optimize did not prove a minimum within {time_limit:g} s; the greedy cover (largest "
                         "new part first)"), bound


def _essential(useful: list[str], items: dict[str, frozenset]) -> list[str]:
    """Goldens that alone hold some item: every equivalent set keeps them."""
    holders: dict[str, list[str]] = defaultdict(list)
    for g in useful:
        for item in items[g]:
            holders[item].append(g)
    return sorted({hs[0] for hs in holders.values() if len(hs) == 1}, key=useful.index)


def _greedy(useful: list[str], items: dict[str, frozenset], universe: set) -> list[str]:
    left = set(universe)
    kept: list[str] = []
    remaining = list(useful)
    while left:
        best = max(remaining, key=lambda g: (len(items[g] & left), -useful.index(g)))
        kept.append(best)
        remaining.remove(best)
        left -= items[best]
    return kept


def _packing_bound(useful: list[str], items: dict[str, frozenset], universe: set) -> int:
    """Items no two of which one golden holds, picked rarest first: each needs a golden of its own."""
    holders: dict[str, list[str]] = defaultdict(list)
    for g in useful:
        for item in items[g]:
            holders[item].append(g)
    used: set[str] = set()
    count = 0
    for item in sorted(universe, key=lambda i: (len(holders[i]), i)):
        if used.isdisjoint(holders[item]):
            used.update(holders[item])
            count += 1
    return count
