"""The contract kind's typed model: seed 000's behaviour contract (`contracts/password-reset.yaml`), read unchanged.

A contract says what an answer on its topic must say (`must_have`), must never say or do (`must_not`), which
documents it may be grounded in (`grounding.allowed_sources`), how the agent recovers (`recovery.*`), which intent
it exposes (`intent_if_exposed`) and which soft criteria are scored beside the gate (`soft_rubric`). Every item
keeps where it is written: the YAML leaf's line and column in the contract file, which is also the span it cites
(the contract is its own source document).

The items are descriptions of behaviour ("指向批准的密码重置入口": points to the approved reset entry), not literal
phrases: a judge decides whether an answer does what one says (mbt.judges), never a substring test alone.
"""

from __future__ import annotations

from pydantic import ConfigDict

from mbt.model.common import Annotated, Location, ModelBase

CONTRACT_KIND = "contract"


class ContractItem(Annotated):
    """One leaf of the contract: its text, where it is written, and its key path (`must_have[0]`,
    `recovery.tool_failure`, `grounding.allowed_sources[0]`). As an annotated model part it also carries the span it
    cites (its own leaf: the contract is its own source document, checked by `mbt check`) and its status (`stated`
    when read from a contract file)."""

    model_config = ConfigDict(frozen=True)

    key: str
    text: str
    loc: Location


class ContractModel(ModelBase):
    """Seed 000's contract as a model of kind `contract`; `name` is its `id` (what cases name in `contract:`)."""

    kind: str = CONTRACT_KIND
    severity_text: str | None = None  # the contract's own `severity` word, as written
    severity_item: ContractItem | None = None  # its leaf (key `severity`), which the weights of every element cite
    goal: ContractItem | None = None
    intent_if_exposed: ContractItem | None = None
    must_have: list[ContractItem] = []
    must_not: list[ContractItem] = []
    allowed_sources: list[ContractItem] = []  # grounding.allowed_sources: document ids
    recovery: list[ContractItem] = []  # recovery.<situation>: what the agent does then
    soft_rubric: list[ContractItem] = []  # criteria scored beside the gate, not gating

    def items(self) -> list[ContractItem]:
        """Every item the contract states, in file order of its sections (goal and soft rubric included)."""
        single = [item for item in (self.goal, self.intent_if_exposed) if item is not None]
        return single + [*self.must_have, *self.must_not, *self.allowed_sources, *self.recovery, *self.soft_rubric]

    def item(self, key: str) -> ContractItem | None:
        """The item of this key path (`must_not[0]`), or None."""
        return next((item for item in self.items() if item.key == key), None)

    @property
    def allowed_source_ids(self) -> frozenset[str]:
        return frozenset(item.text for item in self.allowed_sources)
