"""A stand-in for the contract kind in the grounding tests: seed 000's contract YAML read into mbt's ContractModel
(each item with its YAML leaf's location), elements whose ids are the item keys, and a registered `contract` kind
whose only stages are those `mbt runs` needs (elements, a replayer no golden reaches, the run judge). Built here from
the YAML by hand, independently of the contract kind's own reader, so the run judge is tested on the model type
alone."""

from __future__ import annotations

from pathlib import Path

import yaml

from mbt import kind as kinds
from mbt.elements.base import Element
from mbt.model.common import Location, Severity
from mbt.model.contract import ContractItem, ContractModel
from mbt.runs.contract_judge import ContractRunJudge

CONTRACT = "models/contracts/password-reset.yaml"


def load_contract(path: str = CONTRACT) -> ContractModel:
    root = yaml.compose(Path(path).read_text(encoding="utf-8"))
    top = {k.value: v for k, v in root.value}

    def at(node) -> Location:
        return Location(file=path, line=node.start_mark.line + 1, column=node.start_mark.column + 1)

    def items(key: str, node) -> list[ContractItem]:
        return [ContractItem(key=f"{key}[{i}]", text=str(n.value), loc=at(n)) for i, n in enumerate(node.value)]

    grounding = {k.value: v for k, v in top["grounding"].value}
    return ContractModel(
        name=top["id"].value, file=path, loc=at(root), severity=Severity(top["severity"].value),
        severity_text=top["severity"].value,
        intent_if_exposed=ContractItem(key="intent_if_exposed", text=top["intent_if_exposed"].value,
                                       loc=at(top["intent_if_exposed"])),
        must_have=items("must_have", top["must_have"]), must_not=items("must_not", top["must_not"]),
        allowed_sources=items("grounding.allowed_sources", grounding["allowed_sources"]),
        recovery=[ContractItem(key=f"recovery.{k.value}", text=v.value, loc=at(v)) for k, v in top["recovery"].value],
        soft_rubric=items("soft_rubric", top["soft_rubric"]))


def contract_elements(model: ContractModel) -> list[Element]:
    pairs = ([(model.intent_if_exposed, "intent")] if model.intent_if_exposed else []) + \
        [(i, "must_have") for i in model.must_have] + [(i, "must_not") for i in model.must_not] + \
        [(i, "grounding") for i in model.allowed_sources] + [(i, "recovery") for i in model.recovery]
    return [Element(id=item.key, model=model.name, kind="contract", criterion=criterion, label=item.text,
                    location=item.loc, severity=Severity.high) for item, criterion in pairs]


class _Raw:
    """No file parses into this kind: its models are built by load_contract."""


def register_contract_kind() -> kinds.KindSupport | None:
    """Registers the stand-in; returns the `contract` kind it replaces (a real one, once mbt has it), for
    `restore_contract_kind`."""
    try:
        previous: kinds.KindSupport | None = kinds.support("contract")
    except KeyError:
        previous = None
    kinds.register(kinds.KindSupport(
        kind="contract", keyword="contract", grammar=Path(__file__), rule="contract", rules=object, raw=_Raw,
        resolve=lambda *args: (None, []), enumerate=contract_elements,
        replayer=lambda model, elements: object(),  # no golden is given to `mbt runs` here
        run_judge=lambda model, elements: ContractRunJudge(model, elements)))  # type: ignore[arg-type]
    return previous


def restore_contract_kind(previous: kinds.KindSupport | None) -> None:
    if previous is None:
        kinds.unregister("contract")
    else:
        kinds.register(previous)
