"""FSM elements per criterion: state, transition, guard (branches, no-branch, atomic conditions), forbidden, transition-pair."""

from __future__ import annotations

from collections import defaultdict

from mbt.elements.base import Element, built, element_from
from mbt.model.common import SEVERITY_WEIGHT, Severity
from mbt.model.expr import atoms
from mbt.model.fsm import (
    FsmModel,
    Transition,
    branch_id,
    condition_id,
    forbidden_id,
    guard_groups,
    no_branch_id,
    pair_id,
    pair_id_prefix,
    state_id,
    transition_id,
)

# The ids of the elements are defined with the model (mbt.model.fsm), where the replay engine, a floor below this one,
# reads them too; the stages above read them here, beside the enumeration that makes the elements.
__all__ = ["CRITERIA", "SUITE_CRITERIA", "enumerate_fsm", "state_id", "transition_id", "branch_id", "no_branch_id", "condition_id",
           "forbidden_id", "pair_id", "pair_id_prefix", "guard_groups"]

CRITERIA = ("state", "transition", "guard", "forbidden", "transition-pair")
# The criteria `mbt generate --all` builds full suites for (mbt.generate.suites): named here, by the criteria, so the
# kind's assembly says so without loading the suite builder (start-up time).
SUITE_CRITERIA = ("transition", "transition-pair")


def enumerate_fsm(model: FsmModel, infeasible: dict[str, str] | None = None) -> list[Element]:
    """Every element of the model, in a stable order; `infeasible` maps element ids to the reason no run covers them."""
    name, out = model.name, []
    for s in model.states.values():
        out.append(element_from(name, "fsm", "state", state_id(s.name), f"state {s.name}", s))
    for t in model.transitions:
        out.append(element_from(name, "fsm", "transition", transition_id(t), f"{t.source} -> {t.target} on {t.label()}", t))
    for (source, event), group in guard_groups(model).items():
        for t in group:
            guard = t.guard.text() if t.guard is not None else "true"
            out.append(element_from(name, "fsm", "guard", branch_id(t), f"{source} on {event}: branch [{guard}] -> {t.target}", t))
        first = group[0]
        out.append(element_from(name, "fsm", "guard", no_branch_id(source, event),
                                f"{source} on {event}: no branch holds (event refused)", first))
        for t in group:
            if t.guard is None:
                continue
            for i, atom in enumerate(atoms(t.guard)):
                for value in (True, False):
                    out.append(element_from(name, "fsm", "guard", condition_id(t, i, value),
                                            f"{source} on {event} -> {t.target}: `{atom.text()}` is {str(value).lower()}", t))
    for f in model.forbids:
        out.append(element_from(name, "fsm", "forbidden", forbidden_id(f), f"forbid {f.label()}", f,
                                default_severity=Severity.high))
    by_source: dict[str, list[Transition]] = defaultdict(list)
    for t in model.transitions:
        by_source[t.source].append(t)
    for first in model.transitions:
        # A large model has hundreds of thousands of pairs: what depends on `first` alone is built once.
        prefix, head = pair_id_prefix(first), f"{first.source} -> {first.target} -> "
        for second in by_source.get(first.target, ()):
            severity = second.severity or Severity.medium
            out.append(built(prefix + second.key, name, "fsm", "transition-pair",
                             f"{head}{second.target} ({first.event}, {second.event})", second.loc, second.span,
                             second.status, severity, SEVERITY_WEIGHT[severity]))
    if infeasible:
        for e in out:
            if e.id in infeasible:
                e.feasible, e.reason = False, infeasible[e.id]
    return out
