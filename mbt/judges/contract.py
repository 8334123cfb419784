"""An answer judged against seed 000's contract: every `must_have` and `must_not` item by the answer judges, and the
contract's hard gate — the seed test's `contract_evaluator.evaluate(contract_id, response, evidence)`.

Each item is a described behaviour (mbt.judges.behaviour): a `must_have` item is judged as a required behaviour, a
`must_not` item as a forbidden one, by the judge given (the embedded judge by default; an LLM judge, `openai:MODEL`,
decides descriptions in any wording). An item's verdict is `pass` (the required behaviour is shown / the forbidden one
is not), `fail` (missing / violated), `not_judged` or `error`, with the reason and the judge that decided.

`hard_gate_passed` is True only when every item passed: no `must_not` violated and every `must_have` present, each
decided — an item not judged or in error keeps the gate shut, and `failures` says so ("not judged: …"); never green
on what was not judged. With the embedded judge a `must_not` item is never passed (it fails when sure, else is not
judged), so its hard gate opens only under a judge that decides descriptions.

The contract's `soft_rubric` items are criteria too (`soft_criteria`): judged and reported beside the gate, never
gating (`Criterion.gating` False).

`evidence` (seed 000's `result.evidence`: a mapping such as `{selected_source, retrieved: [{document_id, approved,
status, score}], claims: [{text, grounded_in}]}`) is accepted and kept on the verdict; grounding is judged by the
contract's run judge, not here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mbt.errors import MbtError, did_you_mean
from mbt.judges.behaviour import FORBIDDEN, REQUIRED, behaviour
from mbt.judges.criteria import BUILTIN_CRITERIA, Criterion
from mbt.judges.verdicts import Judge, JudgeInput, Verdict, VerdictValue
from mbt.model.contract import ContractItem, ContractModel


class ContractError(MbtError):
    """A request for a contract that is not loaded, or arguments of the wrong type."""


@dataclass(frozen=True)
class ItemVerdict:
    """One item of the contract on one answer: `id` is its key path (`must_not[0]`), `criterion` `must_have` or
    `must_not`; `verdict` pass means shown (must_have) or not shown (must_not)."""

    id: str
    criterion: str
    text: str
    verdict: VerdictValue
    reason: str
    judge: str
    judge_version: str

    @property
    def violated(self) -> bool:
        """A forbidden behaviour the answer shows."""
        return self.criterion == FORBIDDEN and self.verdict == "fail"

    def failure(self) -> str | None:
        """What keeps the hard gate shut because of this item, or None when it passed."""
        what = f"{self.id} {self.text!r}"
        judge = f" [judge {self.judge}]"
        if self.verdict == "pass":
            return None
        if self.verdict == "fail":
            word = "violated" if self.criterion == FORBIDDEN else "missing"
            return f"{what}: {word}: {self.reason}{judge}"
        if self.verdict == "error":
            return f"judge error: {what}: {self.reason}{judge}"
        return f"not judged: {what}: {self.reason}{judge}"


@dataclass(frozen=True)
class ContractVerdict:
    """An answer against one contract: each must_have / must_not item's verdict, and the evidence given with it."""

    contract_id: str
    items: tuple[ItemVerdict, ...]
    evidence: Mapping[str, Any] | None = None

    @property
    def hard_gate_passed(self) -> bool:
        """No must_not violated and every must_have present — every item decided and passed."""
        return all(item.verdict == "pass" for item in self.items)

    @property
    def failures(self) -> list[str]:
        """Why the hard gate is shut, item by item (empty when it passed)."""
        return [f for f in (item.failure() for item in self.items) if f is not None]

    @property
    def must_not_violated(self) -> list[str]:
        """The violated must_not items, each `contract ID must_not[i]: text`."""
        return [f"contract {self.contract_id} {item.id}: {item.text}" for item in self.items if item.violated]

    @property
    def verdict(self) -> VerdictValue:
        """The hard gate as one verdict: fail if an item failed, else error, else not_judged, else pass."""
        values = {item.verdict for item in self.items}
        return next((v for v in ("fail", "error", "not_judged") if v in values), "pass")

    def __repr__(self) -> str:  # what pytest shows beside a failed `assert verdict.hard_gate_passed`
        return f"<ContractVerdict {self.reason()}>"

    def reason(self) -> str:
        """The hard gate in one line: passed, or which items keep it shut, by verdict (`failures` has the why)."""
        if self.hard_gate_passed:
            return f"contract {self.contract_id}: hard gate passed ({len(self.items)} item(s))"
        words = {"fail": ("violated", "missing"), "error": ("in error",) * 2, "not_judged": ("not judged",) * 2}
        parts: dict[str, list[str]] = {}
        for item in self.items:
            if item.verdict != "pass":
                word = words[item.verdict][0 if item.criterion == FORBIDDEN else 1]
                parts.setdefault(word, []).append(item.id)
        order = ("violated", "missing", "in error", "not judged")
        return f"contract {self.contract_id}: hard gate not passed: " + "; ".join(
            f"{word} {', '.join(parts[word])}" for word in order if word in parts)


def gate_items(contract: ContractModel) -> list[ContractItem]:
    """The items of the hard gate, in file order: every must_have, then every must_not."""
    return [*contract.must_have, *contract.must_not]


def _criterion_of(item: ContractItem) -> str:
    return REQUIRED if item.key.startswith("must_have[") else FORBIDDEN


def item_inputs(contract: ContractModel, response: str, question: str = "", case_id: str = "") -> list[JudgeInput]:
    """What a judge is asked about an answer under the contract: one input per must_have / must_not item."""
    return [JudgeInput(behaviour(_criterion_of(item), item.text), response, question=question,
                       case_id=f"{case_id} {item.key}".strip()) for item in gate_items(contract)]


def judge_answers(requests: Sequence[tuple[ContractModel, str, str, str]], default: Judge,
                  judges: Mapping[str, Judge] | None = None) -> list[tuple[ItemVerdict, ...]]:
    """Each (contract, answer, question, case id) judged on every gate item of its contract, in batches: one
    `judge_many` per judge (`judges` maps `must_have` / `must_not` to a judge; `default` judges the rest)."""
    chosen = dict(judges or {})
    batches: dict[int, tuple[Judge, list[tuple[int, int, JudgeInput]]]] = {}
    for index, (contract, answer, question, case_id) in enumerate(requests):
        for position, item in enumerate(item_inputs(contract, answer, question, case_id)):
            judge = chosen.get(item.criterion.key, default)
            batches.setdefault(id(judge), (judge, []))[1].append((index, position, item))
    found: list[dict[int, Verdict]] = [{} for _ in requests]
    for judge, entries in batches.values():
        for (index, position, _), verdict in zip(entries, judge.judge_many([item for _, _, item in entries])):
            found[index][position] = verdict
    out = []
    for (contract, *_), verdicts in zip(requests, found):
        out.append(tuple(ItemVerdict(item.key, _criterion_of(item), item.text, v.verdict, v.reason, v.judge,
                                     v.judge_version)
                         for position, item in enumerate(gate_items(contract)) for v in (verdicts[position],)))
    return out


class ContractEvaluator:
    """Answers judged against loaded contracts (seed 000's `contract_evaluator` fixture): `evaluate(contract_id=...,
    response=..., evidence=...)` gives a ContractVerdict with `hard_gate_passed` and `failures`."""

    def __init__(self, contracts: Iterable[ContractModel], judge: Judge, judges: Mapping[str, Judge] | None = None):
        self.contracts = {c.name: c for c in contracts}
        self.judge = judge
        self.judges = dict(judges or {})

    def contract(self, contract_id: str) -> ContractModel:
        found = self.contracts.get(contract_id) if isinstance(contract_id, str) else None
        if found is None:
            known = ", ".join(sorted(self.contracts)) or "none"
            raise ContractError(f"no contract `{contract_id}` is loaded{did_you_mean(str(contract_id), self.contracts)}"
                                f" (loaded: {known})")
        return found

    def evaluate(self, contract_id: str, response: str | None, evidence: Mapping[str, Any] | None = None,
                 question: str = "") -> ContractVerdict:
        """The answer `response` judged on every must_have / must_not item of the contract. `response` None is an
        empty answer; `evidence` is a mapping or None, kept on the verdict (module docstring)."""
        contract = self.contract(contract_id)
        if response is not None and not isinstance(response, str):
            raise ContractError(f"response must be the answer's text, not {type(response).__name__}")
        if evidence is not None and not isinstance(evidence, Mapping):
            raise ContractError("evidence must be a mapping (seed 000's selected_source, retrieved, claims) or None, "
                                f"not {type(evidence).__name__}")
        (items,) = judge_answers([(contract, response or "", question, "")], self.judge, self.judges)
        return ContractVerdict(contract.name, items, evidence)


# ---------------------------------------------------------------- the soft rubric

# What seed 000's soft_rubric words mean to the judges (accuracy is seed 001's built-in criterion); another word is
# judged by a generic definition naming it.
SOFT_DEFINITIONS: dict[str, str] = {
    "relevance": "The answer addresses what the user asked and stays on the task the contract is about.",
    "completeness": "The answer covers everything the question needs: no step the user must take is left out.",
    "clarity": "The answer is clear and easy to follow: plain words, steps in order, nothing ambiguous.",
    "helpfulness": "The answer moves the user forward: it says what to do next, or hands them to someone who can.",
}


def soft_key(text: str) -> str:
    """A soft rubric item as a criterion key: lower case, runs of other characters as `-` (`Tone & style` ->
    `tone-style`); one that does not start with a letter gets `soft-` before it."""
    key = re.sub(r"[^a-z0-9_-]+", "-", text.strip().lower()).strip("-")
    return key if re.match(r"[a-z]", key) else f"soft-{key}".rstrip("-")


def soft_criteria(contract: ContractModel, taken: Iterable[str] = ()) -> list[Criterion]:
    """The contract's soft rubric as criteria that do not gate (`gating=False`), each with its definition; a key in
    `taken` (a criterion the configuration judges already, and gates on) is left out."""
    skip = set(taken)
    out: list[Criterion] = []
    for item in contract.soft_rubric:
        key = soft_key(item.text)
        if key in skip or key in (c.key for c in out):
            continue
        rubric = "" if key in BUILTIN_CRITERIA else SOFT_DEFINITIONS.get(
            key, f"The answer shows good {item.text.strip()} (a soft criterion of contract {contract.name}).")
        out.append(Criterion(key, 1, rubric, gating=False))
    return out
