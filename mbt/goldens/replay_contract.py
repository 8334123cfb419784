"""Golden cases replayed on a contract (the contract kind's replayer; the rules are docs/coverage-rules/contract.md).

A contract's cases are those that name it: `contract: ID` (or `model: ID`). Such a case is a conversation the contract
governs, so it exercises every intent, must_have, must_not and grounding item; it verifies an item only where it
checks that item:

- `intent_if_exposed`: a turn's expected intent (`expected_intent`, a turn's `intent`) or `assertions.intent` equals
  the contract's intent;
- `must_have[i]` / `must_not[i]`: a `must_have` / `must_not` phrase of the case (its final assertions or a turn) names
  the item. Whether a phrase names an item is decided by the embedded answer judge (mbt.judges.embedded), never by
  string equality: the phrase judged as an expected answer against the item as the answer, and the other way round
  (a golden's phrase is often a shortened or a fuller form of the item: "索取当前密码" names "索取用户当前密码"); a
  pass either way names it. So does a detector of the judge that reads both as the same behaviour (asking for a
  secret: "ask for the current password" names "索取用户当前密码"; claiming the account was changed). The report
  names the judge and its reason for each phrase it matched (a note "read with a note") and says which phrases it
  was not sure of — those check nothing on the contract;
- `grounding.allowed_sources[i]`: the case asserts `allowed_source` (in its assertions, a turn or on the case; text or
  a list) equal to the source;
- `recovery.<situation>`: the case's `recovery` names the situation — its key (`recovery: tool_failure`, a list of
  keys, a mapping from keys to the expected behaviour), or text that mentions the situation (its key's words, e.g.
  "tool failure", or the words of SITUATION_WORDS: "工具失败…") or that the judge finds to name the item's behaviour.
  A turn that fires a failure event (an event name holding `fail` or `error`, such as `tool_failed`) exercises
  `recovery.tool_failure`.

Disagreements: a `must_have` phrase (or a recovery mapping's behaviour) that names a `must_not` item expects forbidden
behaviour (ForbiddenExpected, which fails the default gate); an `allowed_source` the contract does not list, or a
recovery situation it does not have, contradicts the contract. A case with either verifies nothing on the contract.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from mbt.elements.base import Element
from mbt.goldens.cases import GoldenCase
from mbt.goldens.results import CaseRun, Contradiction, ForbiddenExpected, Note
from mbt.judges.behaviour import described_alike
from mbt.judges.criteria import Criterion
from mbt.judges.embedded import EmbeddedJudge
from mbt.judges.text import fold
from mbt.judges.verdicts import JudgeInput, Verdict
from mbt.model.contract import ContractItem, ContractModel

# The keys of a case the contract kind reads (KindSupport.golden_keys): on the case, in its final assertions, on a turn.
CASE_KEYS = ("recovery", "allowed_source")
ASSERTION_KEYS = ("allowed_source",)
TURN_KEYS = ("allowed_source",)

# Words that name seed 000's recovery situations in English, Chinese and Vietnamese (folded); any situation is also
# named by its key's words ("tool_failure" -> "tool failure").
SITUATION_WORDS: dict[str, tuple[str, ...]] = {
    "tool_failure": ("tool failure", "tool fails", "tool failed", "tool error", "api failure", "工具失败", "工具故障",
                     "工具调用失败", "调用失败", "接口失败", "lỗi công cụ", "công cụ lỗi", "công cụ thất bại"),
    "no_approved_source": ("no approved source", "没有批准的来源", "无批准来源", "没有已批准的来源", "没有可用的批准来源",
                           "không có nguồn được duyệt", "không có nguồn đã duyệt"),
    "missing_information": ("missing information", "information is missing", "缺少信息", "信息不足", "信息缺失",
                            "缺少必要信息", "thiếu thông tin"),
}
_FAILURE_EVENT = re.compile(r"(?:^|[_\-.])(?:fail|failed|failure|error|errored)(?:$|[_\-.])", re.IGNORECASE)
MATCH = Criterion("accuracy")  # a phrase names an item when the judge passes one as an answer for the other


def case_keys() -> frozenset[str]:
    """The keys the kind reads, as KindSupport.golden_keys names them (`assertions.KEY`: in the final assertions,
    `turns.KEY`: on a turn)."""
    return frozenset((*CASE_KEYS, *(f"assertions.{k}" for k in ASSERTION_KEYS), *(f"turns.{k}" for k in TURN_KEYS)))


def names_contract(model: ContractModel, case: GoldenCase) -> bool:
    return case.contract == model.name or case.model == model.name


def accepts(model: ContractModel, case: GoldenCase) -> bool:
    """The contract's cases: those naming it (`contract: ID` or `model: ID`); a case naming neither is not its."""
    return names_contract(model, case)


class ContractReplayer:
    """Replays golden cases on one contract (module docstring)."""

    def __init__(self, model: ContractModel, elements: list[Element]):
        self.model = model
        self.index = {e.id: i for i, e in enumerate(elements)}
        self.judge = EmbeddedJudge()
        self._named: dict[tuple[str, str], tuple[bool, Verdict]] = {}  # (phrase, item text) -> the judge's answer

    # ------------------------------------------------------------------ matching phrases to items

    def names(self, phrase: str, item: ContractItem) -> tuple[bool, Verdict]:
        """Whether the phrase names the item (the judge passes one as an answer for the other), with the verdict
        that says so, or the most telling one when it does not."""
        key = (phrase, item.text)
        found = self._named.get(key)
        if found is None:
            judge = self.judge
            alike = described_alike(phrase, item.text)
            if alike is not None:
                found = (True, Verdict("pass", alike, judge.name, judge.version))
            else:
                one, other = judge.judge_many([JudgeInput(MATCH, item.text, (phrase,)),
                                               JudgeInput(MATCH, phrase, (item.text,))])
                if one.verdict == "pass":
                    found = (True, Verdict("pass", f"the phrase as the expected answer, the item as the answer: "
                                                   f"{one.reason}", judge.name, judge.version))
                elif other.verdict == "pass":
                    found = (True, Verdict("pass", f"the item as the expected answer, the phrase as the answer: "
                                                   f"{other.reason}", judge.name, judge.version))
                else:
                    found = (False, one)
            self._named[key] = found
        return found

    def matching(self, phrase: str, items: Iterable[ContractItem]) -> tuple[list[tuple[ContractItem, Verdict]],
                                                                         list[tuple[ContractItem, Verdict]]]:
        """The items the phrase names, and those the judge was not sure of (each with its verdict)."""
        named, unsure = [], []
        for item in items:
            hit, verdict = self.names(phrase, item)
            if hit:
                named.append((item, verdict))
            elif verdict.verdict in ("not_judged", "error"):
                unsure.append((item, verdict))
        return named, unsure

    # ------------------------------------------------------------------ the replay

    def replay(self, case: GoldenCase) -> CaseRun:
        run = CaseRun(case)
        if not names_contract(self.model, case):
            return run
        model = self.model
        for item in [model.intent_if_exposed, *model.must_have, *model.must_not, *model.allowed_sources]:
            if item is not None:
                run.exercised.add(self.index[item.key])
        self._intent(case, run)
        self._phrases(case, run)
        self._grounding(case, run)
        self._recovery(case, run)
        if run.contradictions or run.forbidden_expected:  # the golden disagrees with the contract: it verifies nothing
            run.verified.clear()
        return run

    def _note(self, run: CaseRun, turn: int | None, message: str, compared: bool = False) -> None:
        case = run.case
        run.notes.append(Note(case=case.id, where=case.where, model=self.model.name, turn=turn, message=message,
                              compared=compared))

    def _verify(self, run: CaseRun, item: ContractItem) -> None:
        run.exercised.add(self.index[item.key])
        run.verified.add(self.index[item.key])

    def _intent(self, case: GoldenCase, run: CaseRun) -> None:
        item = self.model.intent_if_exposed
        if item is None:
            return
        expected = [t.intent for t in case.turns] + [case.final.intent]
        if item.text in expected:
            self._verify(run, item)

    def _phrases(self, case: GoldenCase, run: CaseRun) -> None:
        """must_have / must_not phrases (final assertions and turns) against the items."""
        model = self.model
        places = [(n, t.expect) for n, t in enumerate(case.turns, start=1)] + [(None, case.final)]
        for turn, expect in places:
            where = f"turn {turn}: " if turn is not None else "final assertions: "
            for kind, phrases, own in (("must_have", expect.must_have, model.must_have),
                                       ("must_not", expect.must_not, model.must_not)):
                for phrase in phrases:
                    self._phrase(run, turn, where, kind, phrase, own)

    def _phrase(self, run: CaseRun, turn: int | None, where: str, kind: str, phrase: str,
                own: list[ContractItem]) -> None:
        model = self.model
        named, unsure = self.matching(phrase, own)
        for item, verdict in named:
            self._verify(run, item)
            self._note(run, turn, f"{where}`{kind}` {phrase!r} verifies {item.key} {item.text!r} of contract "
                                  f"{model.name} (judge {verdict.judge}: {verdict.reason})", compared=True)
        if kind == "must_have":  # a required phrase that names forbidden behaviour expects it
            for item, verdict in self.matching(phrase, model.must_not)[0]:
                self._forbidden(run, turn, item, f"`must_have` {phrase!r}", verdict)
        if named:
            return
        if unsure:
            listed = ", ".join(f"{item.key} {item.text!r}" for item, _ in unsure)
            self._note(run, turn, f"{where}`{kind}` {phrase!r}: the {unsure[0][1].judge} judge is not sure whether it "
                                  f"names {listed} of contract {model.name}, so it checks none of them (an LLM "
                                  f"judge decides descriptions; or write the item's words)")
        else:
            self._note(run, turn, f"{where}`{kind}` {phrase!r} names no {kind} item of contract {model.name} "
                                  "(not checked against it)")

    def _forbidden(self, run: CaseRun, turn: int | None, item: ContractItem, what: str, verdict: Verdict) -> None:
        case, model = run.case, self.model
        run.forbidden_expected.append(ForbiddenExpected(
            case=case.id, where=case.where, model=model.name, turn=turn, element=item.key,
            severity=(model.severity.value if model.severity is not None else "medium"), forbid_at=str(item.loc),
            expected=f"{what}, which names {item.key} {item.text!r}",
            message=f"the golden expects what contract {model.name} forbids ({item.key} {item.text!r}; judge "
                    f"{verdict.judge}: {verdict.reason})"))

    def _grounding(self, case: GoldenCase, run: CaseRun) -> None:
        sources = {item.text: item for item in self.model.allowed_sources}
        given: list[tuple[int | None, Any]] = [(None, case.final.extra.get("allowed_source")),
                                                (None, case.extra.get("allowed_source"))]
        given += [(n, t.extra.get("allowed_source")) for n, t in enumerate(case.turns, start=1)]
        for turn, value in given:
            for source in _texts(value):
                item = sources.get(source)
                if item is not None:
                    self._verify(run, item)
                else:
                    self._contradiction(run, turn, "allowed_source", source, sorted(sources),
                                        f"the golden allows source `{source}`, which contract {self.model.name} does "
                                        f"not list in grounding.allowed_sources")

    def _contradiction(self, run: CaseRun, turn: int | None, path: str, expected: Any, actual: Any,
                       message: str) -> None:
        case = run.case
        run.contradictions.append(Contradiction(case=case.id, where=case.where, model=self.model.name, turn=turn,
                                                path=path, expected=expected, actual=actual, message=message))

    def _recovery(self, case: GoldenCase, run: CaseRun) -> None:
        situations = {item.key.removeprefix("recovery."): item for item in self.model.recovery}
        if "tool_failure" in situations and any(t.event and _FAILURE_EVENT.search(t.event) for t in case.turns):
            run.exercised.add(self.index[situations["tool_failure"].key])
        value = case.extra.get("recovery")
        if value is None:
            return
        if isinstance(value, dict):
            for key, behaviour in value.items():
                item = situations.get(str(key))
                if item is None:
                    self._contradiction(run, None, f"recovery.{key}", behaviour, sorted(situations),
                                        f"the golden expects a recovery for `{key}`, a situation contract "
                                        f"{self.model.name} has no recovery for")
                    continue
                self._verify(run, item)
                for text in _texts(behaviour):
                    for forbidden, verdict in self.matching(text, self.model.must_not)[0]:
                        self._forbidden(run, None, forbidden, f"`recovery.{key}` {text!r}", verdict)
            return
        for text in _texts(value):
            if text in situations:
                self._verify(run, situations[text])
                continue
            named = [item for key, item in situations.items() if _mentions(text, key)]
            named += [item for item, _ in self.matching(text, situations.values())[0] if item not in named]
            for item in named:
                self._verify(run, item)
                self._note(run, None, f"`recovery` {text!r} verifies {item.key} {item.text!r} of contract "
                                      f"{self.model.name}", compared=True)
            if not named:
                self._note(run, None, f"`recovery` {text!r} names no recovery situation of contract "
                                      f"{self.model.name} ({', '.join(situations) or 'it has none'}): not checked")


def _texts(value: Any) -> list[str]:
    """A text or a list of texts (anything else: nothing)."""
    items = value if isinstance(value, list) else [value]
    return [item.strip() for item in items if isinstance(item, str) and item.strip()]


def _mentions(text: str, situation: str) -> bool:
    """Whether the text mentions the situation: its key's words or SITUATION_WORDS (folded)."""
    folded = fold(text)
    words = (situation.replace("_", " "), *SITUATION_WORDS.get(situation, ()))
    return any(fold(w) in folded for w in words)
