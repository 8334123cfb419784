"""Observed runs judged on a behaviour contract (seed 000's `contracts/password-reset.yaml`, a model of kind
`contract`): its exposed intent, its grounding (mbt.runs.grounding), what its answers must say and must not, and how
it recovers — pass, the first deviation, or not judged where the run lacks what a rule needs.

The contract's items are descriptions of behaviour, not phrases. Where a grounding rule decides an item (a `must_not`
naming a document, a time limit, a status or a result: mbt.runs.grounding.item_rule) it decides it on the run's
claims; otherwise the item is put to an answer judge (mbt.judges, the embedded judge unless another is given) on the
run's answer texts and claims, and decided only where that judge is sure. docs/runs.md, "Grounding" and "Contracts",
gives every rule; an item left undecided is a gap, so the run is `not_judged`, never `pass`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mbt.elements.base import Element
from mbt.judges import EmbeddedJudge, Judge, JudgeInput
from mbt.judges.behaviour import FORBIDDEN, REQUIRED, behaviour
from mbt.judges.criteria import Criterion
from mbt.model.common import Severity
from mbt.model.contract import ContractItem, ContractModel
from mbt.runs.grounding import (
    GROUNDING_FAILURES,
    GroundingResult,
    decide_item,
    item_rule,
    judge_retrieval,
    known_ids,
    usable,
)
from mbt.runs.judge import Deviation, Verdict
from mbt.runs.steps import Claim, ObservedRun

# In the order the judgement takes them (the first one found is the run's first deviation).
CONTRACT_DEVIATIONS = ("wrong_intent", *GROUNDING_FAILURES, "must_not_violated", "must_have_missing",
                       "recovery_missed")
_ACCURACY = Criterion("accuracy")

@dataclass
class GroundedVerdict(Verdict):
    """A run judged on a contract: a Verdict, with what the grounding rules found (None: the run recorded no
    retrieval evidence). A contract has no path through which a task completes or is handed off: such a run's task
    completion and hand-offs are not measured (`path_judged`)."""

    grounding: GroundingResult | None = None
    items: list[tuple[str, str, str]] = field(default_factory=list)  # (element key, verdict, reason) per item
    path_judged: bool = False


@dataclass
class _Found:
    order: int
    deviation: Deviation


class ContractRunJudge:
    """Judges runs on one contract; `elements` are the contract kind's (ids equal to the item keys, or ending in
    `:KEY`), indexed for `exercised`. `judge`: the answer judge for the items no grounding rule decides."""

    def __init__(self, model: ContractModel, elements: list[Element], judge: Judge | None = None):
        self.model = model
        self.elements = elements
        self.answer_judge: Judge = judge if judge is not None else EmbeddedJudge()
        self.index: dict[str, int] = {}
        for i, e in enumerate(elements):
            self.index.setdefault(e.id, i)
            self.index.setdefault(e.id.rsplit(":", 1)[-1], i)
        self.severity = (model.severity.value if model.severity is not None
                         else model.severity_text if model.severity_text in {s.value for s in Severity}
                         else Severity.medium.value)

    # ---- helpers
    def _el(self, key: str) -> tuple[str, str, int | None]:
        """(element id, severity, index) of a contract item."""
        i = self.index.get(key)
        if i is None:
            return key, self.severity, None
        return self.elements[i].id, self.elements[i].severity.value, i

    def _deviation(self, found: list[_Found], order: int, kind: str, where: str, step: int, key: str | None,
                   message: str, **extra) -> None:
        element, severity = (None, self.severity) if key is None else self._el(key)[:2]
        found.append(_Found(order, Deviation(kind, where, step, element, severity, message, turn=None, **extra)))

    def _exercise(self, v: Verdict, key: str) -> None:
        i = self._el(key)[2]
        if i is not None:
            v.exercised.add(i)

    def _ask(self, item: ContractItem, text: str) -> str:
        """`pass` (the text does what the item describes), `fail` (it does not), `not_judged` or `error`: the answer
        judge on the item as a described behaviour (mbt.judges.behaviour), the criterion `mbt eval` and the contract
        evaluator ask it on, so one judge reads an item the same way everywhere."""
        forbidden = item.key.startswith(FORBIDDEN)
        verdict = self.answer_judge.judge(JudgeInput(behaviour(FORBIDDEN if forbidden else REQUIRED, item.text),
                                                     text)).verdict
        if forbidden:  # a forbidden behaviour's criterion passes when the answer does not do it
            return {"pass": "fail", "fail": "pass"}.get(verdict, verdict)
        return verdict

    # ---- the judgement
    def judge(self, run: ObservedRun) -> GroundedVerdict:
        v = GroundedVerdict(run=run, model=self.model.name, intent=run.intent)
        v.judged_steps = len(run.steps) or (1 if run.retrieval is not None else 0)  # a trace of retrieval alone
        found: list[_Found] = []
        answers = [(n, s) for n, s in enumerate(run.steps, start=1) if s.kind == "assistant" and s.text]
        last = len(run.steps) or 1
        end = run.steps[-1].where if run.steps else run.where
        if not run.steps and run.retrieval is None:
            v.gaps.append(f"{run.where}: the run shows no step" + (f" ({'; '.join(run.notes)})" if run.notes else ""))
        self._intent(v, run, found)
        self._grounding(v, run, found, last)
        claims = list(run.retrieval.claims or []) if run.retrieval is not None else []
        self._must_not(v, run, answers, claims, found)
        self._must_have(v, run, answers, claims, found, last, end)
        self._recovery(v, run, answers, found)
        if found:
            v.deviation = min(found, key=lambda f: (f.order, f.deviation.step)).deviation
        v.completed = False
        return v

    def _intent(self, v: GroundedVerdict, run: ObservedRun, found: list[_Found]) -> None:
        item = self.model.intent_if_exposed
        if item is None or run.intent is None:  # "if exposed": a run that exposes none has nothing to judge here
            return
        self._exercise(v, item.key)
        first = next((n for n, s in enumerate(run.steps, start=1) if s.kind == "user"), 1)
        where = run.steps[first - 1].where if run.steps else run.where
        if run.intent != item.text:
            self._deviation(found, 0, "wrong_intent", where, first, item.key,
                            f"the run exposes intent `{run.intent}`; the contract's is `{item.text}` ({item.loc})",
                            expected=item.text, actual=run.intent)
            v.items.append((item.key, "fail", f"intent `{run.intent}`"))
        else:
            v.items.append((item.key, "pass", f"intent `{run.intent}`"))

    def _grounding(self, v: GroundedVerdict, run: ObservedRun, found: list[_Found], last: int) -> None:
        if run.retrieval is None:
            if self.model.allowed_sources:
                v.gaps.append(f"{run.where}: the run records no retrieval evidence (retrieved documents, selected "
                              "source, claims): the contract's grounding is not judged")
            return
        g = judge_retrieval(run.retrieval, self.model.allowed_source_ids)
        v.grounding = g
        v.gaps.extend(g.gaps)
        for item in self.model.allowed_sources:
            if item.text in g.used:
                self._exercise(v, item.key)
        key = self.model.allowed_sources[0].key if len(self.model.allowed_sources) == 1 else None
        for f in g.failures:
            order = 1 + GROUNDING_FAILURES.index(f.type)
            self._deviation(found, order, f.type, f.where, last, key if f.source is not None else None,
                            f.message, expected=sorted(self.model.allowed_source_ids) or None,
                            actual=f.source if f.source is not None else f.claim)
        for outcome in g.must_not:
            if outcome.verdict == "violated":
                self._deviation(found, 10, "must_not_violated", outcome.where, last, None,
                                f"the trace's must_not {outcome.text!r}: {outcome.reason}", expected=outcome.text)
            elif outcome.verdict == "not_judged":
                v.gaps.append(f"{outcome.where}: the trace's must_not {outcome.text!r} is not judged: "
                              f"{outcome.reason}")

    def _must_not(self, v: GroundedVerdict, run: ObservedRun, answers: list, claims: list[Claim],
                  found: list[_Found]) -> None:
        g = v.grounding
        ids = (known_ids(run.retrieval) if run.retrieval is not None else set()) | self.model.allowed_source_ids
        for item in self.model.must_not:
            texts = [(n, s.where, s.text) for n, s in answers] + [
                (len(run.steps) or 1, c.where, c.text) for c in claims]
            if texts:
                self._exercise(v, item.key)
            # 1. the answer judge (or the secret rule) finds the item done: violated, whatever else holds
            said = next(((n, where) for n, where, text in texts if self._does(item, text)), None)
            if said is not None:
                self._deviation(found, 11, "must_not_violated", said[1], said[0], item.key,
                                f"must_not {item.text!r} ({item.loc}): the answer does it", expected=item.text)
                v.items.append((item.key, "fail", "the answer does it"))
                continue
            # 2. a grounding rule decides it on the claims
            mapped = decide_item(item.key, item.text, g, ids) if g is not None and item_rule(item.text, ids) else None
            if mapped is not None and mapped.verdict == "violated":
                self._deviation(found, 11, "must_not_violated", mapped.where, len(run.steps) or 1, item.key,
                                f"must_not {item.text!r} ({item.loc}): {mapped.reason}", expected=item.text)
                v.items.append((item.key, "fail", mapped.reason))
                continue
            if mapped is not None and mapped.verdict == "kept" and not answers:
                v.items.append((item.key, "pass", mapped.reason))
                continue
            # 3. an answer judge that decides both ways (not the embedded one: its `fail` compares an answer with
            # an expected answer, and an unsafe answer fails that comparison too) may show it is not done
            if answers and self.answer_judge.name != "embedded" and all(
                    self._ask(item, s.text) == "fail" for _, s in answers) and (
                    mapped is None or mapped.verdict == "kept"):
                v.items.append((item.key, "pass", f"{self.answer_judge.name}: no answer does it"))
                continue
            why = ("the run records no answer text" if not answers
                   else f"the {self.answer_judge.name} judge is not sure no answer does it")
            if mapped is None:
                why += "; no grounding rule decides it (it names no document, and no made-up time limit, status " \
                       "or result)"
            elif mapped.verdict == "not_judged":
                why += f"; {mapped.reason}"
            elif mapped is not None and mapped.verdict == "kept" and answers:
                why = (f"{mapped.reason} (the claims), but the {self.answer_judge.name} judge is not sure the answer "
                       "text does not")
            v.items.append((item.key, "not_judged", why))
            v.gaps.append(f"{run.where}: must_not {item.text!r} ({item.key}) is not judged: {why}")

    def _does(self, item: ContractItem, text: str) -> bool:
        """The text does what a must_not item describes, as far as the answer judge is sure (the embedded judge's
        detectors, such as asking for a secret, are part of its reading of a forbidden behaviour)."""
        return self._ask(item, text) == "pass"

    def _must_have(self, v: GroundedVerdict, run: ObservedRun, answers: list, claims: list[Claim],
                   found: list[_Found], last: int, end: str) -> None:
        for item in self.model.must_have:
            texts = [s.text for _, s in answers] + [c.text for c in claims]
            if not texts:
                v.items.append((item.key, "not_judged", "the run records no answer text"))
                v.gaps.append(f"{run.where}: must_have {item.text!r} ({item.key}) is not judged: the run records no "
                              "answer text")
                continue
            self._exercise(v, item.key)
            verdicts = [self._ask(item, t) for t in texts]
            if "pass" in verdicts:
                v.items.append((item.key, "pass", f"{self.answer_judge.name}: the answer does it"))
            elif answers and all(x == "fail" for x in verdicts[:len(answers)]):
                self._deviation(found, 12, "must_have_missing", end, last, item.key,
                                f"must_have {item.text!r} ({item.loc}): no answer does it ({self.answer_judge.name} judge)",
                                expected=item.text)
                v.items.append((item.key, "fail", "no answer does it"))
            else:
                why = ("the run records only claims, not the answer text" if not answers
                       else f"the {self.answer_judge.name} judge is not sure an answer does it")
                v.items.append((item.key, "not_judged", why))
                v.gaps.append(f"{run.where}: must_have {item.text!r} ({item.key}) is not judged: {why}")

    def _recovery(self, v: GroundedVerdict, run: ObservedRun, answers: list, found: list[_Found]) -> None:
        """The recovery items whose situation the run shows: a tool error (`tool_failure`), a retrieval that
        returned no approved, active document (`no_approved_source`). Each is judged like a must_have on the answers
        after the situation; the other situations are not recognised in runs (their items are not exercised)."""
        items = {item.key.split(".", 1)[-1]: item for item in self.model.recovery}
        situations: list[tuple[str, int]] = []
        error = next((n for n, s in enumerate(run.steps, start=1) if s.kind == "tool_result" and not s.ok), None)
        if error is not None and "tool_failure" in items:
            situations.append(("tool_failure", error))
        r = run.retrieval
        if "no_approved_source" in items and r is not None and r.documents_recorded and not any(
                usable(d, self.model.allowed_source_ids) for d in r.documents):
            situations.append(("no_approved_source", 1))
        for name, at in situations:
            item = items[name]
            self._exercise(v, item.key)
            after = [(n, s) for n, s in answers if n > at]
            verdicts = [self._ask(item, s.text) for _, s in after]
            if "pass" in verdicts:
                v.items.append((item.key, "pass", f"{self.answer_judge.name}: the answer does it"))
            elif after and all(x == "fail" for x in verdicts):
                where = after[-1][1].where
                self._deviation(found, 13, "recovery_missed", where, after[-1][0], item.key,
                                f"recovery.{name} {item.text!r} ({item.loc}): no answer after it does it",
                                expected=item.text)
                v.items.append((item.key, "fail", "no answer after the situation does it"))
            else:
                why = ("the run records no answer after it" if not after
                       else f"the {self.answer_judge.name} judge is not sure an answer does it")
                v.items.append((item.key, "not_judged", why))
                v.gaps.append(f"{run.where}: recovery.{name} {item.text!r} applies (step {at}) and is not judged: "
                              f"{why}")
