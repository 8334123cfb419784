"""Coverage of a set of models by a set of goldens: which goldens exercise/verify which elements, per criterion."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import msgspec
from pydantic import BaseModel, Field, GetCoreSchemaHandler
from pydantic_core import core_schema

from mbt.elements.base import Element
from mbt.goldens.results import Contradiction, Divergence, ForbiddenExpected, Note, UnboundTurn
from mbt.measure.answer_models import AnswersCoverage
from mbt.measure.level_models import LevelsReport
from mbt.measure.mutation import MutationReport
from mbt.measure.numbers import Numbers
from mbt.measure.review import SourceCoverage, TraceRow

if TYPE_CHECKING:
    from mbt.kind import Criterion

SCHEMA_VERSION = "3.2"  # 3.1: `levels` (seed 004's levels 0-4); 3.2: `answers` (--answers EVAL.json)


class CriterionCoverage(BaseModel):
    criterion: str
    verified: Numbers
    exercised: Numbers
    infeasible: int = 0  # elements no run can cover; not in the denominator
    # What the criterion means, as its kind declares it (mbt.kind.Criterion), set by the measuring stage so the gate,
    # the baseline and the reporters read it here and never name a criterion. Not written in the JSON report: the
    # meaning is the kind's, and a reader of the report looks it up there (`alarm`: uncovered elements are behaviour
    # that must never happen and nobody tests; `findings`: elements a reviewer reads one by one, label and all).
    alarm: bool = Field(default=False, exclude=True)
    findings: bool = Field(default=False, exclude=True)


def _row_schema() -> type[BaseModel]:
    # The published shape of an element's row: the JSON Schema's ElementCoverage (no docstring, which the schema
    # would carry); the rows themselves are the plain objects of that name below.
    class ElementCoverage(BaseModel):
        element: Element
        # The goldens that exercised / verified the element, in case order; a run with a covering cap keeps the
        # first ones and counts the rest in the *_more fields, so the lists' memory does not grow with the cases.
        exercised_by: list[str] = []
        verified_by: list[str] = []
        exercised_more: int = 0
        verified_more: int = 0

    return ElementCoverage


ElementCoverageSchema = _row_schema()
ROW_FIELDS = tuple(ElementCoverageSchema.model_fields)  # a row's keys, in the report's order


class ElementCoverage(msgspec.Struct):
    """One element's row of a coverage report: a plain object, as a report holds one per element (hundreds of
    thousands for a large model). pydantic takes a row as it is (validation is a type check) and dumps it whole, as
    ElementCoverageSchema; the JSON report (mbt/report/jsonout.py) writes it compact, as an ElementRow."""

    element: Element
    exercised_by: list[str] = []
    verified_by: list[str] = []
    exercised_more: int = 0
    verified_more: int = 0

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        schema = handler.generate_schema(ElementCoverageSchema)
        from_data = core_schema.no_info_after_validator_function(cls._from_schema, schema)
        return core_schema.json_or_python_schema(
            json_schema=from_data,
            python_schema=core_schema.union_schema([core_schema.is_instance_schema(cls), from_data]),
            serialization=core_schema.plain_serializer_function_ser_schema(cls._to_schema, return_schema=schema))

    @classmethod
    def _from_schema(cls, row: BaseModel) -> ElementCoverage:
        return cls(**{name: getattr(row, name) for name in ROW_FIELDS})

    def _to_schema(self) -> BaseModel:
        return ElementCoverageSchema.model_construct(**{name: getattr(self, name) for name in ROW_FIELDS})

    @property
    def exercised_count(self) -> int:
        return len(self.exercised_by) + self.exercised_more

    @property
    def verified_count(self) -> int:
        return len(self.verified_by) + self.verified_more

    @property
    def verified(self) -> bool:
        return bool(self.verified_by)

    @property
    def exercised(self) -> bool:
        return bool(self.exercised_by)

    def state(self, waived: bool = False) -> str:
        """The one place an element's state is decided: infeasible | verified | waived (uncovered, under a waiver
        in force) | exercised | uncovered. Diagrams, tables and every reporter show this."""
        if not self.element.feasible:
            return "infeasible"
        if self.verified_by:
            return "verified"
        if waived:
            return "waived"
        return "exercised" if self.exercised_by else "uncovered"


class RequirementCoverage(BaseModel):
    """A requirement: a `tag` (GraphWalker's `requirements`, yEd `REQTAG`) and the elements carrying it. It is
    verified when every feasible element carrying it is verified, exercised when every one is at least exercised."""

    requirement: str
    elements: int  # feasible elements carrying the tag
    verified: int
    exercised: int
    status: str  # verified | exercised | uncovered | infeasible (no feasible element carries it)
    not_verified: list[str] = []  # the ids of its feasible elements no golden verifies, in the report's order


class ModelCoverage(BaseModel):
    model: str
    kind: str
    file: str
    goldens_replayed: int
    criteria: list[CriterionCoverage]
    elements: list[ElementCoverage]
    requirements: list[RequirementCoverage] = []  # per tag, sorted by tag

    def criterion(self, name: str) -> CriterionCoverage | None:
        return next((c for c in self.criteria if c.criterion == name), None)

    def uncovered(self, criterion: str | None = None) -> list[ElementCoverage]:
        return [e for e in self.elements if e.element.feasible and not e.verified
                and (criterion is None or e.element.criterion == criterion)]

    def alarm_criteria(self) -> frozenset[str]:
        """The criteria whose uncovered elements are alarms (CriterionCoverage.alarm): the FSM's `forbidden`."""
        return frozenset(c.criterion for c in self.criteria if c.alarm)

    def findings_criteria(self) -> frozenset[str]:
        """The criteria whose elements are findings read one by one (CriterionCoverage.findings)."""
        return frozenset(c.criterion for c in self.criteria if c.findings)

    def uncovered_alarms(self) -> list[ElementCoverage]:
        """The uncovered elements of the alarm criteria, in the report's order."""
        alarms = self.alarm_criteria()
        return [e for e in self.uncovered() if e.element.criterion in alarms]


class InvalidCaseReport(BaseModel):
    file: str
    line: int
    message: str


class GoldenSummary(BaseModel):
    files: list[str]
    read: int  # valid + invalid
    valid: int
    invalid: int
    bound: int  # valid cases whose every turn bound to an event
    unbound: int  # valid cases with at least one unbound turn
    not_applicable: int  # valid cases no loaded model applies to (other contract / model)
    # Valid cases with at least one contradiction, or one forbidden expectation, on some model: a golden counts once
    # however many expectations it holds (the findings are listed and counted per expectation).
    contradicting: int = 0
    expecting_forbidden: int = 0


class GateFailure(BaseModel):
    rule: str
    expected: str
    actual: Any
    message: str
    elements: list[str] = []


class WaiverState(BaseModel):
    """A gate-file waiver and what it did in this run (an expired or unknown waiver fails the gate)."""

    element: str
    model: str | None  # as written; None: any model
    reason: str
    expires: str  # YYYY-MM-DD
    status: Literal["active", "expired", "unused", "unknown"]  # unused: the element is verified now
    line: int  # in the gate file
    models: list[str] = []  # the loaded models that have the element


class GateResult(BaseModel):
    enabled: bool
    passed: bool
    source: str | None  # the gate file, or None for the default gate
    failures: list[GateFailure] = []
    waivers: list[WaiverState] = []
    baseline: str | None = None  # the baseline file the ratchet compared against

    def waived(self) -> dict[tuple[str, str], WaiverState]:
        """(model, element id) -> the waiver in force for it."""
        return {(m, w.element): w for w in self.waivers if w.status == "active" for m in w.models}


class CoverageReport(BaseModel):
    schema_version: str = SCHEMA_VERSION
    models: list[ModelCoverage]
    goldens: GoldenSummary
    invalid_cases: list[InvalidCaseReport] = []  # by place; with a cap (the CLI's default), the first ones
    invalid_cases_more: int = 0  # invalid cases beyond the cap, counted only (goldens.invalid counts them all)
    # Each kind of finding: with a cap (the CLI's default, as for invalid cases) the first ones by model and case,
    # and a count of the rest in its *_more field; `count(name)` is the number found.
    contradictions: list[Contradiction] = []
    contradictions_more: int = 0
    forbidden_expected: list[ForbiddenExpected] = []  # goldens expecting behaviour a forbid forbids
    forbidden_expected_more: int = 0
    divergences: list[Divergence] = []
    divergences_more: int = 0
    unbound_turns: list[UnboundTurn] = []
    unbound_turns_more: int = 0
    notes: list[Note] = []
    notes_more: int = 0
    gate: GateResult | None = None
    sources: SourceCoverage | None = None  # source-document coverage, when asked for (review formats compute it)
    traceability: list[TraceRow] = []  # span -> element -> goldens -> expected, when asked for
    mutation: MutationReport | None = None  # with `--mutants`: mutation score, survivors, redundancy
    # Seed 004's levels 0-4 and quality dimensions: what was measured and what not, and why (mbt.measure.levels);
    # every `mbt coverage` report has them.
    levels: LevelsReport | None = None
    # With `--answers EVAL.json`: the elements judged answers verified, a figure of its own beside verified and
    # exercised (mbt.answers.coverage); None without eval reports.
    answers: AnswersCoverage | None = None

    def count(self, name: str) -> int:
        """How many findings of a kind (contradictions, forbidden_expected, divergences, unbound_turns, notes,
        invalid_cases) the run found: those listed and those beyond the cap."""
        return len(getattr(self, name)) + getattr(self, f"{name}_more")

    def unchecked_notes(self) -> int:
        """The notes on parts of goldens nothing checks (listed and beyond the cap); not those on how a value was
        read where the outcome is compared all the same."""
        return sum(1 for n in self.notes if not n.compared) + self.notes_more

    def notes_compared(self) -> list[Note]:
        """The notes on how a value was read where the golden's outcome is compared all the same."""
        return [n for n in self.notes if n.compared]

    def waived(self) -> dict[tuple[str, str], WaiverState]:
        """(model, element id) -> the waiver in force for it; nothing without a gate."""
        return self.gate.waived() if self.gate is not None else {}

    def waived_in(self, model: str) -> set[str]:
        return {element for m, element in self.waived() if m == model}


def numbers_for(elements: list[ElementCoverage], verified: bool) -> Numbers:
    covered = total = 0
    covered_weight = total_weight = 0.0
    for ec in elements:
        e = ec.element
        if not e.feasible:
            continue
        total += 1
        total_weight += e.weight
        if ec.verified_by if verified else ec.exercised_by:
            covered += 1
            covered_weight += e.weight
    return Numbers(covered=covered, total=total, covered_weight=covered_weight, total_weight=total_weight)


def requirement_table(elements: list[ElementCoverage],
                      criteria: tuple[str, ...] | None = None) -> list[RequirementCoverage]:
    """Per requirement tag: how many of the elements carrying it are verified and exercised (one pass). `criteria`
    (the kind's `requirement_criteria`): the elements that count for a tag; None: every element carrying it."""
    by_tag: dict[str, list[ElementCoverage]] = {}
    for ec in elements:
        if criteria is not None and ec.element.criterion not in criteria:
            continue
        for tag in dict.fromkeys(ec.element.tags):
            by_tag.setdefault(tag, []).append(ec)
    out = []
    for tag in sorted(by_tag):
        feasible = [ec for ec in by_tag[tag] if ec.element.feasible]
        verified = sum(1 for ec in feasible if ec.verified_by)
        exercised = sum(1 for ec in feasible if ec.exercised_by)
        status = ("infeasible" if not feasible else "verified" if verified == len(feasible) else
                  "exercised" if exercised == len(feasible) else "uncovered")
        out.append(RequirementCoverage(requirement=tag, elements=len(feasible), verified=verified,
                                       exercised=exercised, status=status,
                                       not_verified=[ec.element.id for ec in feasible if not ec.verified_by]))
    return out


def criterion_table(criteria: tuple[Criterion, ...], elements: list[ElementCoverage]) -> list[CriterionCoverage]:
    """Per criterion of the kind (in its order): the verified and exercised numbers, and what the criterion means."""
    by_criterion: dict[str, list[ElementCoverage]] = {c.name: [] for c in criteria}
    for ec in elements:  # one pass: a large model has hundreds of thousands of elements
        mine = by_criterion.get(ec.element.criterion)
        if mine is not None:
            mine.append(ec)
    out = []
    for criterion in criteria:
        mine = by_criterion[criterion.name]
        out.append(CriterionCoverage(criterion=criterion.name, verified=numbers_for(mine, True),
                                     exercised=numbers_for(mine, False),
                                     infeasible=sum(1 for ec in mine if not ec.element.feasible),
                                     alarm=criterion.alarm, findings=criterion.findings))
    return out
