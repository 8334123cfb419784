"""The contract kind's elements: one per item a golden case can check (docs/coverage-rules/contract.md).

Criteria, in this order: `intent` (intent_if_exposed), `must_have` (each required behaviour), `must_not` (each
forbidden behaviour: the kind's alarm criterion, which the default gate watches), `grounding` (each allowed source)
and `recovery` (each situation). An element's id is its item's key path — `intent_if_exposed`, `must_have[0]`,
`must_not[2]`, `grounding.allowed_sources[0]`, `recovery.tool_failure` — stable across runs and edits that leave the
item where it is; its label is the item's text, its location and span the item's YAML leaf, its severity the
contract's `severity` (medium when it gives none). `goal` and `soft_rubric` are not elements: the goal is what the
contract is for, and the soft rubric's criteria are scored beside the gate by `mbt eval`.
"""

from __future__ import annotations

from mbt.elements.base import Element, built
from mbt.model.common import SEVERITY_WEIGHT, Severity
from mbt.model.contract import CONTRACT_KIND, ContractItem, ContractModel

CRITERIA = ("intent", "must_have", "must_not", "grounding", "recovery")


def criterion_of(item: ContractItem) -> str | None:
    """The criterion of an item by its key path (None: goal and soft rubric, which are not elements)."""
    key = item.key
    if key == "intent_if_exposed":
        return "intent"
    for prefix, criterion in (("must_have[", "must_have"), ("must_not[", "must_not"),
                              ("grounding.allowed_sources[", "grounding"), ("recovery.", "recovery")):
        if key.startswith(prefix):
            return criterion
    return None


def enumerate_contract(model: ContractModel) -> list[Element]:
    severity = model.severity or Severity.medium
    items = ([model.intent_if_exposed] if model.intent_if_exposed is not None else []) + [
        *model.must_have, *model.must_not, *model.allowed_sources, *model.recovery]
    out = []
    for item in items:
        criterion = criterion_of(item)
        assert criterion is not None  # every item listed above has one
        out.append(built(item.key, model.name, CONTRACT_KIND, criterion, item.text, item.loc, item.span, item.status,
                         severity, SEVERITY_WEIGHT[severity]))
    return out
