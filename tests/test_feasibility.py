"""Infeasible elements are decided exactly (z3) and excluded from the denominator with their reason."""

from __future__ import annotations

from mbt.analysis.feasibility import infeasible_fsm_elements
from mbt.parsing.loader import parse_text

TEXT = """\
fsm f {
  var n: int[0..3] = 0
  var flag: bool
  state a initial
  state b
  event go(x: int[0..5])
  event hop
  a -> b on go(v) [v < 3]
  a -> a on go(v) [v >= 3]
  b -> a on hop [n > 5 or flag]
  b -> b on hop [n <= 3 and not flag]
  a -> b on hop [flag]
  a -> a on hop
}
"""


def test_exhaustive_and_impossible_guard_parts_are_infeasible():
    out = infeasible_fsm_elements(parse_text(TEXT, "f.fsm").models[0])
    assert out == {
        # v < 3 or v >= 3 always holds: the event is never refused in a.
        "guard:a.go:none": "the guards are exhaustive: some branch always holds",
        # n is at most 3: `n > 5` is never true; `n <= 3` never false; flag/not flag cover everything.
        "guard:b.hop->a:c1=true": "`n > 5` can never be true",
        "guard:b.hop->b:c1=false": "`n <= 3` can never be false",
        "guard:b.hop:none": "the guards are exhaustive: some branch always holds",
        "guard:a.hop:none": "an unguarded transition always takes the event",
    }


def test_infeasible_elements_are_not_counted_in_coverage():
    from mbt.api import measure
    from mbt.goldens.loader import GoldenSet
    from mbt.kind import support

    model = parse_text(TEXT, "f.fsm").models[0]
    elements = support("fsm").enumerate(model)
    flagged = {e.id: e.reason for e in elements if not e.feasible}
    assert len(flagged) == 5
    report = measure([model], GoldenSet())
    guard = report.models[0].criterion("guard")
    assert guard.infeasible == 5
    assert guard.verified.total == sum(1 for e in elements if e.criterion == "guard") - 5
