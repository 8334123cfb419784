"""`mbt coverage --answers EVAL.json` (issue 34, item 6; docs/user-guide.md "Judging answers"): the elements an
`mbt eval --model` report judged answers on, shown in the coverage report as *verified by a judged answer* — a figure
of its own beside verified and exercised, never added into them (a golden verifies by its assertions, an answer by a
judge), so that neither is inflated by the other and the gate can require either.

What an answer can verify, per loaded model (the same elements `mbt eval --model` judges answers on):

- a state machine's `say` forbids (criterion `forbidden`) and its claims (`claim:STATE`, the pseudo-criterion
  `claim`: claims are no coverage element), from the eval report's `sayings[].elements[].judged` — each judged
  answer with its case, verdict, judge and where in the run; an element the runs reached with no answer decided on
  it (status `exercised` there) is *undecided* here, one entry per case that reached it;
- a contract's `must_have` and `must_not` items (criteria of the same names), from `cases[].contract.items` — each
  case's verdict on the item, `not_judged` and `error` being undecided.

An element is `verified` when a judge decided one of its answers (pass or fail; its verdict `fail` when one fails —
a failure found, not coverage lost), `undecided` when answers were judged on it but none decided, `no_answer`
otherwise. Several eval reports add up, each answer naming the report it came from.

An eval report is validated as its JSON Schema (docs/schemas/eval.schema.json, generated from the same model,
mbt.answers.results.EvalReport) says; the first problem is one located message (`file:line:col`). What a report
names that the loaded models do not have — a model not loaded, an element the loaded model does not have as one an
answer can verify (a report made against another version of the model), an element of the loaded model the report
does not list — is a note, never dropped silently.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from mbt.answers.results import EvalReport
from mbt.errors import LocatedError, Problem
from mbt.judges.contract import gate_items
from mbt.kind import elements_of
from mbt.measure.answer_models import (
    CLAIM,
    AnswerFigure,
    AnswerNote,
    AnswersCoverage,
    ElementAnswers,
    JudgedAnswer,
    ModelAnswers,
)
from mbt.measure.coverage import CoverageReport, ModelCoverage
from mbt.measure.numbers import Numbers
from mbt.model.common import ModelBase
from mbt.model.contract import ContractModel
from mbt.model.fsm import FsmModel
from mbt.reader import read_text
from mbt.runs.judge import RunJudge

# The order a capped list keeps them in: the failures found first, then the passes, then the undecided.
_ORDER = {"fail": 0, "pass": 1, "not_judged": 2, "error": 2}
REACHED = "its run reached it; no judge decided an answer on it"
_EVAL_VERSION = EvalReport.model_fields["schema_version"].default


def read_eval_reports(paths: Sequence[str]) -> list[tuple[str, EvalReport]]:
    """Each eval report, validated; the first problem of a file is one located error (exit 2)."""
    return [(path, read_eval_report(path)) for path in paths]


def read_eval_report(path: str) -> EvalReport:
    text = read_text(Path(path), path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise LocatedError([Problem(path, err.lineno, err.colno, f"not valid JSON: {err.msg}")]) from None
    try:
        return EvalReport.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        line, column = json_position(text, first["loc"])
        why = f"{where}: {first['msg']}"
        if first["loc"] == ("schema_version",) and isinstance(data, dict) and "schema_version" in data:
            why = f"schema_version {data['schema_version']!r}; an eval report's is {_EVAL_VERSION!r}"
        raise LocatedError([Problem(path, line, column, f"not an mbt eval report ({why})",
                                    hint="write one with `mbt eval --model PATH ... --format json -o FILE`")]) from None


def json_position(text: str, path: Sequence[str | int]) -> tuple[int, int]:
    """The line and column (from 1) of the value at `path` in a JSON text, or of the deepest value on the way that
    is there (a missing key: the object that lacks it). Parts of the path the text does not hold (pydantic's union
    tags) are passed over."""
    decoder = json.JSONDecoder()
    pos = _blank(text, 0)
    for part in path:
        found: int | None = None
        if pos < len(text) and text[pos] == "{" and isinstance(part, str):
            found = _member(decoder, text, pos, part)
        elif pos < len(text) and text[pos] == "[" and isinstance(part, int):
            found = _item(decoder, text, pos, part)
        if found is not None:
            pos = found
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1


def _blank(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def _member(decoder: json.JSONDecoder, text: str, pos: int, name: str) -> int | None:
    """Where the value of key `name` starts in the object at `pos`, or None."""
    pos = _blank(text, pos + 1)
    while pos < len(text) and text[pos] == '"':
        key, pos = decoder.raw_decode(text, pos)
        pos = _blank(text, _blank(text, pos) + 1)  # past the colon
        if key == name:
            return pos
        _, pos = decoder.raw_decode(text, pos)
        pos = _blank(text, pos)
        if pos >= len(text) or text[pos] != ",":
            return None
        pos = _blank(text, pos + 1)
    return None


def _item(decoder: json.JSONDecoder, text: str, pos: int, index: int) -> int | None:
    """Where item `index` starts in the array at `pos`, or None."""
    pos = _blank(text, pos + 1)
    for n in range(index + 1):
        if pos >= len(text) or text[pos] == "]":
            return None
        if n == index:
            return pos
        _, pos = decoder.raw_decode(text, pos)
        pos = _blank(text, pos)
        if pos >= len(text) or text[pos] != ",":
            return None
        pos = _blank(text, pos + 1)
    return None


@dataclass
class _Target:
    """A loaded model with elements an answer can verify: element id -> criterion, in the report's order."""

    model: str
    kind: str
    what: str  # what an answer verifies in it, for messages
    elements: dict[str, str]
    weights: dict[str, float]
    feasible: dict[str, bool]
    answers: dict[str, list[JudgedAnswer]] = field(default_factory=dict)
    named_by: list[str] = field(default_factory=list)  # the eval reports that name the model


def _targets(report: CoverageReport, models: Sequence[ModelBase]) -> dict[str, _Target]:
    rows: dict[str, ModelCoverage] = {m.model: m for m in report.models}
    out: dict[str, _Target] = {}
    for model in models:
        coverage = rows.get(model.name)
        if coverage is None:
            continue
        answerable: list[str] = []
        claims: list[str] = []
        if isinstance(model, FsmModel):
            judge = RunJudge(model, elements_of(model))
            answerable = [judge.say_forbids[index].element for index in sorted(judge.say_forbids)]
            claims = [saying.element for _, saying in judge.claims]
            what = "a say forbid or claim"
        elif isinstance(model, ContractModel):
            answerable = [item.key for item in gate_items(model)]
            what = "a must_have or must_not item"
        if not (answerable or claims):
            continue
        chosen = set(answerable)
        target = _Target(model.name, model.kind, what, {}, {}, {})
        for ec in coverage.elements:  # the report's order
            e = ec.element
            if e.id in chosen:
                target.elements[e.id] = e.criterion
                target.weights[e.id] = e.weight
                target.feasible[e.id] = e.feasible
        for claim in claims:  # no coverage element: each counts 1, and any run may make it
            target.elements[claim] = CLAIM
            target.weights[claim] = 1.0
            target.feasible[claim] = True
        target.answers = {element: [] for element in target.elements}
        out[model.name] = target
    return out


def answer_coverage(report: CoverageReport, models: Sequence[ModelBase], evals: Sequence[tuple[str, EvalReport]],
                    cap: int | None = None) -> AnswersCoverage:
    """What the eval reports verify on the loaded models (module docstring); `cap`: the judged answers kept per
    element (the rest counted), as the coverage report keeps covering goldens."""
    targets = _targets(report, models)
    loaded = {m.name for m in models}
    notes: list[AnswerNote] = []
    for path, evaluation in evals:
        found = _read_sayings(path, evaluation, targets, loaded, notes)
        found += _read_contracts(path, evaluation, targets, loaded, notes)
        if not found:
            notes.append(AnswerNote(report=path, message="judged no answer on a model element (made without "
                                                         "--model?)"))
    return AnswersCoverage(reports=[path for path, _ in evals], notes=notes,
                           models=[_model_answers(t, cap) for t in targets.values()])


def _not_loaded(path: str, model: str, count: int, loaded: set[str]) -> AnswerNote:
    why = "whose loaded version has no element an answer can verify" if model in loaded else "which is not loaded"
    return AnswerNote(report=path, model=model, message=f"names model `{model}`, {why}: its {count} element(s) not "
                                                        "counted")


def _unknown(path: str, target: _Target, element: str) -> AnswerNote:
    return AnswerNote(report=path, model=target.model, element=element, message=(
        f"names `{element}` of model {target.model}, which the loaded model has not as {target.what} (an eval "
        "report made against another version of the model?): not counted"))


def _unlisted(path: str, target: _Target, element: str) -> AnswerNote:
    return AnswerNote(report=path, model=target.model, element=element, message=(
        f"does not list `{element}` of model {target.model} (an eval report made against another version of the "
        "model?)"))


def _read_sayings(path: str, evaluation: EvalReport, targets: dict[str, _Target], loaded: set[str],
                  notes: list[AnswerNote]) -> int:
    """The state machines' say and claim elements of one report; how many elements it names."""
    named = 0
    for sayings in evaluation.sayings:
        named += len(sayings.elements)
        target = targets.get(sayings.model)
        if target is None or target.kind != "fsm":
            notes.append(_not_loaded(path, sayings.model, len(sayings.elements), loaded))
            continue
        _named(target, path)
        listed = set()
        for element in sayings.elements:
            criterion = target.elements.get(element.id)
            if criterion is None or (criterion == CLAIM) != (element.kind == "claim"):
                notes.append(_unknown(path, target, element.id))
                continue
            listed.add(element.id)
            answers = target.answers[element.id]
            answers += [JudgedAnswer(case=a.case, verdict=a.verdict, judge=a.judge, reason=a.reason, where=a.where,
                                     report=path) for a in element.judged]
            if not element.judged and element.status == "exercised":  # reached, no answer decided on it
                answers += [JudgedAnswer(case=case, verdict="not_judged", judge=evaluation.judge, reason=REACHED,
                                         where="", report=path) for case in element.reached_by]
        notes += [_unlisted(path, target, element) for element in target.elements if element not in listed]
    return named


def _read_contracts(path: str, evaluation: EvalReport, targets: dict[str, _Target], loaded: set[str],
                    notes: list[AnswerNote]) -> int:
    """The contract items judged on each case of one report; how many item verdicts it holds."""
    named = 0
    unknown: dict[str, int] = {}  # contract not loaded -> its item verdicts
    listed: dict[str, set[str]] = {}
    for case in evaluation.cases:
        contract = case.contract
        if contract is None:
            continue
        named += len(contract.items)
        target = targets.get(contract.id)
        if target is None or target.kind != "contract":
            unknown[contract.id] = unknown.get(contract.id, 0) + len(contract.items)
            continue
        _named(target, path)
        seen = listed.setdefault(contract.id, set())
        for item in contract.items:
            if item.id not in target.elements:
                if item.id not in seen:
                    notes.append(_unknown(path, target, item.id))
                seen.add(item.id)
                continue
            seen.add(item.id)
            target.answers[item.id].append(JudgedAnswer(case=case.id, verdict=item.verdict, judge=item.judge,
                                                        reason=item.reason, where=case.where, report=path))
    for contract_id, seen in listed.items():
        target = targets[contract_id]
        notes += [_unlisted(path, target, element) for element in target.elements if element not in seen]
    notes += [_not_loaded(path, contract_id, count, loaded) for contract_id, count in unknown.items()]
    return named


def _named(target: _Target, path: str) -> None:
    if path not in target.named_by:
        target.named_by.append(path)


def _model_answers(target: _Target, cap: int | None) -> ModelAnswers:
    elements = [_element(element, criterion, target.answers[element], cap)
                for element, criterion in target.elements.items()]
    criteria: list[str] = list(dict.fromkeys(target.elements.values()))
    criteria.sort(key=lambda c: c == CLAIM)  # claims last (a stable sort keeps the kind's order)
    figures = []
    for criterion in criteria:
        mine = [e for e in elements if e.criterion == criterion and target.feasible[e.element]]
        verified = [e for e in mine if e.status == "verified"]
        figures.append(AnswerFigure(
            criterion=criterion,
            verified=Numbers(covered=len(verified), total=len(mine),
                             covered_weight=sum(target.weights[e.element] for e in verified),
                             total_weight=sum(target.weights[e.element] for e in mine)),
            failed=sum(e.verdict == "fail" for e in verified),
            undecided=sum(e.status == "undecided" for e in mine)))
    return ModelAnswers(model=target.model, kind=target.kind, named_by=target.named_by, criteria=figures,
                        elements=elements)


def _element(element: str, criterion: str, answers: list[JudgedAnswer], cap: int | None) -> ElementAnswers:
    passed = sum(a.verdict == "pass" for a in answers)
    failed = sum(a.verdict == "fail" for a in answers)
    undecided = len(answers) - passed - failed
    status = "verified" if passed or failed else "undecided" if answers else "no_answer"
    verdict = "fail" if failed else "pass" if passed else None
    ordered = sorted(answers, key=lambda a: _ORDER[a.verdict])
    kept = ordered if cap is None else ordered[:cap]
    return ElementAnswers(element=element, criterion=criterion, status=status, verdict=verdict, passed=passed,
                          failed=failed, undecided=undecided, answers=kept, answers_more=len(ordered) - len(kept))
