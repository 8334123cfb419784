"""Answers and the model meet (`mbt eval --model`, issue 34 item 6): each behaviour model's `say` forbids and claims
verified by judged answers, and each golden phrase judged by the same judges.

Every case's run is judged on each state machine as `mbt runs` judges it, with the eval's answer judge
(mbt.runs.judge.RunJudge, mbt.judges.sayings); every assistant text it judged on a say forbid in force or on a claim
is an answer judged on that element:

- a forbid: the text says it (a phrase, folded, or its description as the judge decides) — `fail`; the judge decides
  it does not — `pass`; undecided — no verdict;
- a claim: the text makes it in the claimed state — `pass`; before it (a premature success) — `fail`; a text that
  does not make it says nothing about the claim.

An element is `verified` when some answer was judged on it (naming the judge, the verdict and the case),
`exercised` when a case's run reached it (the forbid in force, the claimed state) but no answer was decided on it,
`not_reached` otherwise. Each golden turn's `must_have` / `must_not` phrase is judged on that turn's answer the same
way (the rule judge on the phrase, folded, then the answer judge on it as a description) and lists the elements it
names, as `mbt coverage` decides (mbt.goldens.replay_fsm).
"""

from __future__ import annotations

from collections.abc import Sequence

from mbt.answers.evaluate import AnswerGolden, exchanges
from mbt.answers.results import ElementAnswer, ModelSayings, PhraseCheck, SayingElement, VerdictName
from mbt.engine.fsm import CompiledFsm
from mbt.goldens.replay_fsm import FsmReplayer
from mbt.judges.sayings import Saying, SayingJudge
from mbt.judges.verdicts import Judge, Verdict
from mbt.kind import elements_of
from mbt.model.common import ModelBase
from mbt.model.fsm import FsmModel
from mbt.runs.judge import RunJudge, Said

NO_ANSWER = "none"  # the judge named where no answer was there to judge


def saying_report(goldens: Sequence[AnswerGolden], models: Sequence[ModelBase], judge: Judge) -> list[ModelSayings]:
    """Per state machine that speaks of saying (a say forbid or a claim): its elements and the golden phrases."""
    sayings = SayingJudge(judge)  # one for all: its decisions are kept
    out = []
    for model in models:
        if not isinstance(model, FsmModel):
            continue
        run_judge = RunJudge(model, elements_of(model), answers=judge, keep_sayings=True)
        run_judge.sayings = sayings
        if not (run_judge.say_forbids or run_judge.claims):
            continue
        out.append(ModelSayings(model=model.name, elements=_elements(goldens, model, run_judge),
                                phrases=_phrases(goldens, model, sayings)))
    return out


def _elements(goldens: Sequence[AnswerGolden], model: FsmModel, run_judge: RunJudge) -> list[SayingElement]:
    forbids = {saying.element: (index, saying) for index, saying in run_judge.say_forbids.items()}
    claims = {saying.element: (state, saying) for state, saying in run_judge.claims}
    reached: dict[str, list[str]] = {element: [] for element in [*forbids, *claims]}
    judged: dict[str, list[ElementAnswer]] = {element: [] for element in reached}
    for golden in goldens:
        run = golden.run
        if run is None or (run.model is not None and run.model != model.name):
            continue
        v = run_judge.judge(run)
        if v.invalid is not None:
            continue
        case = golden.case.id
        for element, (index, _) in forbids.items():
            if index in v.exercised:
                reached[element].append(case)
        for element, (state, _) in claims.items():
            if run_judge.state_el[state] in v.exercised:
                reached[element].append(case)
        first: dict[str, ElementAnswer] = {}
        for said in v.said:
            answer = _on_element(case, said, claims)
            if answer is not None and (said.element not in first or
                                       (answer.verdict == "fail" and first[said.element].verdict == "pass")):
                first[said.element] = answer
        for element, answer in first.items():
            judged[element].append(answer)
    rows = []
    for element, (_, saying) in [*forbids.items(), *claims.items()]:
        answers = judged[element]
        status = "verified" if answers else "exercised" if reached[element] else "not_reached"
        verdict = None if not answers else "fail" if any(a.verdict == "fail" for a in answers) else "pass"
        rows.append(SayingElement(id=element, kind="say" if element in forbids else "claim",
                                  describes=saying.description or ", ".join(saying.phrases),
                                  phrases=list(saying.phrases), status=status, verdict=verdict, judged=answers,
                                  reached_by=list(dict.fromkeys(reached[element]))))
    return rows


def _on_element(case: str, said: Said, claims: dict[str, tuple[str, Saying]]) -> ElementAnswer | None:
    """What one judged text says about its element, or None when it says nothing about it."""
    v = said.verdict
    if not v.decided:
        return None
    if said.kind == "say":
        return ElementAnswer(case=case, where=said.where, verdict="fail" if v.verdict == "pass" else "pass",
                             judge=v.judge, reason=v.reason)
    if v.verdict != "pass":
        return None  # not making a claim is neither right nor wrong
    state = claims[said.element][0]
    if said.state == state:
        return ElementAnswer(case=case, where=said.where, verdict="pass", judge=v.judge,
                             reason=f"{v.reason}, in `{state}`")
    return ElementAnswer(case=case, where=said.where, verdict="fail", judge=v.judge,
                         reason=f"{v.reason} while the model is in `{said.state}` (a premature success)")


def _phrases(goldens: Sequence[AnswerGolden], model: FsmModel, sayings: SayingJudge) -> list[PhraseCheck]:
    replayer = FsmReplayer(CompiledFsm(model, elements_of(model)))
    ids = [e.id for e in elements_of(model)]
    claim_ids: dict[str, list[str]] = {}
    for state, saying in replayer.claims:
        claim_ids.setdefault(state, []).append(saying.element)
    out = []
    for golden in goldens:
        case = golden.case
        answers = exchanges(golden.run) if golden.run is not None else []
        for n, turn in enumerate(case.turns, start=1):
            have, avoid = list(turn.expect.must_have), list(turn.expect.must_not)
            if n == len(case.turns):  # the final assertions speak of the last answer
                have += case.final.must_have
                avoid += case.final.must_not
            for key, phrases in (("must_have", have), ("must_not", avoid)):
                for phrase in phrases:
                    named = replayer.names(phrase)
                    names = [ids[i] for i in sorted(named.forbids)] + \
                        [cid for state in named.claims for cid in claim_ids.get(state, [])]
                    verdict = _phrase_verdict(key, phrase, answers[n - 1] if n <= len(answers) else None, sayings)
                    out.append(PhraseCheck(case=case.id, turn=n, key=key, phrase=phrase, names=names,
                                           verdict=verdict.verdict, judge=verdict.judge, reason=verdict.reason))
    return out


def _phrase_verdict(key: str, phrase: str, answer: str | None, sayings: SayingJudge) -> Verdict:
    """A must_have passes when the answer says the phrase, a must_not when it does not; undecided stays so."""
    if answer is None:
        return Verdict("not_judged", "no answer recorded for this turn", NO_ANSWER, "")
    said = sayings.says(answer, Saying(f"{key}:{phrase}", f"the golden's `{key}`", (phrase,), phrase))
    if not said.decided:
        return said
    holds = (said.verdict == "pass") == (key == "must_have")
    value: VerdictName = "pass" if holds else "fail"
    return Verdict(value, said.reason, said.judge, said.judge_version)
