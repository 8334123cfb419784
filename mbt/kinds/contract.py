"""The `contract` kind: seed 000's contract YAML, read by its own file format (mbt/parsing/contract.py, no grammar),
its elements (elements/contract.py), its golden replay by the answer judges (goldens/replay_contract.py), its run
judge (runs/contract_judge.py: intent, grounding, the items on the run's texts) and an element table as its view."""

from __future__ import annotations

from mbt.elements.contract import CRITERIA, enumerate_contract
from mbt.goldens.replay_contract import ContractReplayer, accepts, case_keys
from mbt.kind import Criterion, FileFormat, KindSupport, narrow, register
from mbt.kinds.views import ELEMENT_TABLE
from mbt.model.contract import CONTRACT_KIND, ContractModel
from mbt.parsing.contract import looks_like_contract, read_contract
from mbt.runs.contract_judge import ContractRunJudge

# must_not items are behaviour that must never happen: an uncovered one fails the default gate, as an uncovered
# forbidden transition does; they are listed one by one in the text report.
MEANINGS = {"must_not": Criterion("must_not", alarm=True, findings=True)}


def _contract(model: object) -> ContractModel:
    return narrow(model, ContractModel, CONTRACT_KIND)


register(KindSupport(
    kind=CONTRACT_KIND,
    file_format=FileFormat((".yaml", ".yml"), read_contract, looks_like_contract),
    criteria=tuple(MEANINGS.get(name, Criterion(name)) for name in CRITERIA),
    enumerate=lambda model: enumerate_contract(_contract(model)),
    replayer=lambda model, elements: ContractReplayer(_contract(model), elements),
    accepts=lambda model, case: accepts(_contract(model), case),
    view=ELEMENT_TABLE,
    golden_keys=case_keys(),
    run_judge=lambda model, elements, answers=None: ContractRunJudge(_contract(model), elements, answers)))
