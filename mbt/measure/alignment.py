"""Level 1 of seed 004, measured directly: golden cases aligned to source units without a model in between.

A golden's text (its questions, expected answers and `must_have` phrases) is compared with each source unit (a
sentence, a list item, a YAML leaf: mbt.measure.sources splits the documents). The embedded rule decides only where
it is sure, from two things it can read without a model (the answer judges' folding, tokens and facts:
mbt.judges.text, mbt.judges.facts):

* **content terms** — the text's words without function words and numbers, stemmed (English), Vietnamese syllables,
  and Chinese character bigrams (Chinese has no spaces and single characters say little); `unit share` = the share
  of the unit's terms the golden also has, `golden share` = the share of the golden's terms the unit has;
* **facts** — quantities with their units, dates and clock times: *shared* when both state the same one, a
  *conflict* when the golden states another value of the same kind and none of the unit's.

The rule (its thresholds calibrated on tests/data/levels/alignment.yaml, `calibrate`):

    aligned      no conflict left unshared, and
                 (a shared fact and max(unit share, golden share) >= FACT_OVERLAP)
                 or (unit share >= UNIT_OVERLAP and golden share >= GOLDEN_OVERLAP)
    not aligned  no shared fact, and a conflict or no common term but the document's background terms (those at
                 least half of its units use, when it has four or more: "退款" in a refund policy)
    not judged   otherwise (a paraphrase, a partial overlap): an LLM judge decides these when one is configured

The aligned thresholds are the ones that align the most calibration pairs with no wrong alignment. "Not aligned"
is not calibrated: it is what the rule can see, and its precision is measured and shown (docs/levels.md) — a
paraphrase sharing no word and no fact with the unit is invisible to it, which only an LLM judge can catch.

A golden whose every turn is events and checks has no text to align: it is listed, never counted as covering a unit.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from mbt.goldens.cases import GoldenCase
from mbt.judges.embedded import STOPWORDS
from mbt.judges.embedded import _stem as stem  # the answer judges' light English stemmer
from mbt.judges.facts import Facts, extract
from mbt.judges.lexicon import strip_negations
from mbt.judges.text import HAN
from mbt.measure.level_models import (
    Alignment,
    AlignVerdict,
    DirectUnitCoverage,
    GoldenAlignment,
    UnitAlignment,
)

# The rule's thresholds, as `calibrate` computes them on the labelled set's calibration part (tests/test_levels.py
# recomputes them and fails when they drift); docs/levels.md shows the calibration and the held-out precision.
FACT_OVERLAP = 0.5
UNIT_OVERLAP = 0.35
GOLDEN_OVERLAP = 0.5
RULE_VERSION = "align-1"
BACKGROUND_MIN = 4
STEP = 0.05  # the calibration grid


# ------------------------------------------------------------------ a golden's text


@dataclass(frozen=True)
class GoldenText:
    """What a golden says in words: its questions (the user's turns), its expected answers and `must_have` phrases."""

    id: str
    where: str
    questions: tuple[str, ...]
    answers: tuple[str, ...]

    @property
    def text(self) -> str:
        return " ".join(self.questions + self.answers)

    @property
    def expected(self) -> str:
        """Its expected behaviour in words: the expected answers (and must_have phrases), for entailment."""
        return " ".join(self.answers)


def _texts(value: Any) -> list[str]:
    items = value if isinstance(value, list) else [value]
    return [str(v).strip() for v in items if v is not None and str(v).strip()]


def golden_text(case: GoldenCase) -> GoldenText:
    """The case's words; both tuples are empty for a case of events and checks only."""
    questions: list[str] = []
    answers: list[str] = []
    for turn in case.turns:
        if turn.user and turn.user.strip():
            questions.append(turn.user.strip())
        answers += _texts(turn.extra.get("expected_answer"))
        answers += [p for p in turn.expect.must_have if p.strip()]
    answers += [p for p in case.final.must_have if p.strip()]
    return GoldenText(case.id, case.where, tuple(questions), tuple(answers))


# ------------------------------------------------------------------ reading a text


# A section number opening a unit ("3.1 Within 14 days ..."): a place in the document, not a fact of the text.
NUMBERING = re.compile(r"^\s*(?:\d+(?:\.\d+)*[.)]?|[a-zA-Z][.)])\s+")


def numbering_end(text: str) -> int:
    """Where the text starts after its section number (0: it has none)."""
    m = NUMBERING.match(text)
    return m.end() if m else 0


_WORD = re.compile(rf"[{HAN}]|\d+(?:[.,]\d+)*|[^\W\d_{HAN}]+(?:['’][^\W\d_{HAN}]+)?")


@dataclass(frozen=True)
class Reading:
    """A text as the rule reads it: its content terms and its facts."""

    terms: frozenset[str]
    facts: Facts


@lru_cache(maxsize=65536)
def read(text: str) -> Reading:
    facts = extract(text[numbering_end(text):])
    rest = strip_negations(facts.rest)
    out: set[str] = set()
    run: list[str] = []
    last_end = -1

    def flush() -> None:
        if len(run) == 1 and run[0] not in STOPWORDS:
            out.add(run[0])
        out.update(a + b for a, b in zip(run, run[1:]) if not (a in STOPWORDS and b in STOPWORDS))
        run.clear()

    for m in _WORD.finditer(rest):
        token = m.group()
        if len(token) == 1 and re.match(f"[{HAN}]", token):
            if m.start() != last_end:  # a Han run is broken by anything between (a blanked fact, a negation)
                flush()
            run.append(token)
            last_end = m.end()
            continue
        flush()
        last_end = -1
        if not token[0].isdigit() and token not in STOPWORDS:
            out.add(stem(token))
    flush()
    return Reading(frozenset(out), facts)


def _shared_and_conflicting(u: Facts, g: Facts) -> tuple[list[str], list[str]]:
    """The unit's facts the golden states too, and those the golden states otherwise (same kind, other value)."""
    shared, conflicts = [], []
    for q in u.quantities:
        if any(q.matches(x) for x in g.quantities):
            shared.append(q.text)
        elif q.unit and any(x.unit == q.unit and not any(x.matches(y) for y in u.quantities) for x in g.quantities):
            other = next(x for x in g.quantities if x.unit == q.unit)
            conflicts.append(f"{other.text!r} where the unit says {q.text!r}")
    for d in u.dates:
        if any(d.matches(x) for x in g.dates):
            shared.append(d.text)
        elif g.dates:
            conflicts.append(f"{g.dates[0].text!r} where the unit says {d.text!r}")
    for c in u.clock:
        if c in g.clock:
            shared.append(f"{c}h")
        elif any(x not in u.clock for x in g.clock):
            conflicts.append(f"another time where the unit says {c}h")
    return shared, conflicts


@dataclass(frozen=True)
class Features:
    unit_share: float
    golden_share: float
    common: int
    shared: tuple[str, ...]
    conflicts: tuple[str, ...]
    telling: int = 0  # common terms outside the document's background (terms most of its units use)


def features(unit: str, golden: str, background: frozenset[str] = frozenset()) -> Features:
    u, g = read(unit), read(golden)
    common = u.terms & g.terms
    shared, conflicts = _shared_and_conflicting(u.facts, g.facts)
    return Features(len(common) / len(u.terms) if u.terms else 0.0, len(common) / len(g.terms) if g.terms else 0.0,
                    len(common), tuple(shared), tuple(conflicts), len(common - background))


def background_terms(texts: Sequence[str]) -> frozenset[str]:
    """The terms at least half of the texts use, when there are at least BACKGROUND_MIN of them ("refund" in a refund
    policy): sharing only those says nothing about which unit a golden is about."""
    if len(texts) < BACKGROUND_MIN:
        return frozenset()
    counts: dict[str, int] = {}
    for text in texts:
        for term in read(text).terms:
            counts[term] = counts.get(term, 0) + 1
    return frozenset(t for t, n in counts.items() if 2 * n >= len(texts))


@dataclass(frozen=True)
class Rule:
    fact_overlap: float = FACT_OVERLAP
    unit_overlap: float = UNIT_OVERLAP
    golden_overlap: float = GOLDEN_OVERLAP

    def decide(self, f: Features) -> tuple[AlignVerdict, str]:
        share = f"{f.common} common term(s): {f.unit_share:.0%} of the unit's, {f.golden_share:.0%} of the golden's"
        if f.conflicts and not f.shared:
            return "not_aligned", f"states {f.conflicts[0]}"
        if not f.shared and not f.telling:
            return "not_aligned", ("no common fact and no common term" if not f.common else
                                   "no common fact, and only terms most units of the document use in common")
        if f.conflicts:
            return "not_judged", f"not sure: shares {f.shared[0]!r} but states {f.conflicts[0]}"
        if f.shared and max(f.unit_share, f.golden_share) >= self.fact_overlap:
            return "aligned", f"states {', '.join(repr(s) for s in f.shared)} as the unit does; {share}"
        if f.unit_share >= self.unit_overlap and f.golden_share >= self.golden_overlap:
            return "aligned", share
        return "not_judged", f"not sure: {share}"


RULE = Rule()


def align(unit: str, golden: str, rule: Rule = RULE,
          background: frozenset[str] = frozenset()) -> tuple[AlignVerdict, str]:
    """The embedded rule's decision on one (unit text, golden text) pair, with why; `background`: the terms most
    units of the document use (background_terms), which do not count as common."""
    return rule.decide(features(unit, golden, background))


# ------------------------------------------------------------------ calibration


@dataclass(frozen=True)
class LabelledPair:
    unit: str
    golden: str
    label: str  # covers | partial | related | unrelated
    lang: str
    split: str  # calibration | heldout

    @property
    def positive(self) -> bool:
        return self.label in ("covers", "partial")


def labelled_pairs(data: Iterable[dict]) -> list[LabelledPair]:
    """The pairs of the labelled set's YAML (tests/data/levels/alignment.yaml): each unit with its goldens."""
    out = []
    for entry in data:
        for g in entry["goldens"]:
            out.append(LabelledPair(entry["unit"], f"{g['q']} {g['a']}", g["label"], entry["lang"], entry["set"]))
    return out


@dataclass(frozen=True)
class Scores:
    pairs: int
    aligned: int
    aligned_right: int
    apart: int
    apart_right: int

    @property
    def decided(self) -> int:
        return self.aligned + self.apart


def pair_backgrounds(pairs: Sequence[LabelledPair]) -> dict[tuple[str, str], frozenset[str]]:
    """The labelled set's units of one part and language stand for a document: their background terms."""
    units: dict[tuple[str, str], list[str]] = {}
    for p in pairs:
        group = units.setdefault((p.split, p.lang), [])
        if p.unit not in group:
            group.append(p.unit)
    return {key: background_terms(texts) for key, texts in units.items()}


def score(rule: Rule, pairs: Sequence[LabelledPair]) -> Scores:
    aligned = aligned_right = apart = apart_right = 0
    backgrounds = pair_backgrounds(pairs)
    for p in pairs:
        verdict, _ = rule.decide(features(p.unit, p.golden, backgrounds[(p.split, p.lang)]))
        if verdict == "aligned":
            aligned += 1
            aligned_right += p.positive
        elif verdict == "not_aligned":
            apart += 1
            apart_right += not p.positive
    return Scores(len(pairs), aligned, aligned_right, apart, apart_right)


def calibrate(pairs: Sequence[LabelledPair]) -> Rule:
    """The aligned thresholds (a grid of STEP) that align the most pairs with no wrong alignment, with a margin: the
    rule with every threshold a step lower must make no wrong alignment either (a threshold right at the edge of the
    labelled pairs fits them, not the next ones). Among equals, the most cautious (the highest thresholds)."""
    grid = [round(STEP * i, 2) for i in range(1, round(1 / STEP) + 1)]
    backgrounds = pair_backgrounds(pairs)
    feats = [(features(p.unit, p.golden, backgrounds[(p.split, p.lang)]), p.positive) for p in pairs]

    def aligned_without_error(rule: Rule) -> int | None:
        aligned = 0
        for f, positive in feats:
            if rule.decide(f)[0] == "aligned":
                if not positive:
                    return None
                aligned += 1
        return aligned

    best: tuple[tuple, Rule] = ((0, 3.0), Rule(1.0, 1.0, 1.0))
    for fact in grid:
        for unit in grid:
            for golden in grid:
                rule = Rule(fact, unit, golden)
                aligned = aligned_without_error(rule)
                lower = Rule(round(fact - STEP, 2), round(unit - STEP, 2), round(golden - STEP, 2))
                if aligned is None or aligned_without_error(lower) is None:
                    continue
                key = (aligned, fact + unit + golden)
                if key > best[0]:
                    best = (key, rule)
    return best[1]


# ------------------------------------------------------------------ the level-1 report


ALIGN_RUBRIC = (
    "Here the agent's answer is a test case (a question and the answer the test expects) and the expected answer is "
    "one passage of the product's source document. pass when the test case checks information the passage states, "
    "all of it or a part of it: its question asks about that information and its expected answer states it. fail "
    "when the test case checks something else: another fact, another condition, another topic.")


def rule_text(rule: Rule = RULE) -> str:
    return (f"{RULE_VERSION}: aligned on a shared fact with {rule.fact_overlap:.0%} common terms, or on "
            f"{rule.unit_overlap:.0%} of the unit's and {rule.golden_overlap:.0%} of the golden's terms; not aligned "
            "on a conflicting fact, or on no common term but the document's background terms, without a shared fact")


def align_units(units: Sequence[tuple[str, str, int, str]], goldens: Sequence[GoldenText],
                llm: Any = None, backgrounds: dict[str, frozenset[str]] | None = None) -> DirectUnitCoverage:
    """`units`: (unit id, document, line, text) of every unit not excluded; `llm`: a judge (mbt.judges) asked about
    the pairs the embedded rule leaves undecided, or None; `backgrounds`: each document's background terms, when the
    texts aligned are not the document's units themselves (held-out probes: mbt.generate.probes), else computed
    from `units`."""
    from mbt.judges import Criterion, JudgeInput

    texts = [g for g in goldens if g.text]
    decisions: dict[tuple[int, int], tuple[AlignVerdict, str, str]] = {}
    undecided: list[tuple[int, int]] = []
    backgrounds = backgrounds if backgrounds is not None else document_backgrounds(units)
    for ui, (_, document, _, unit_text) in enumerate(units):
        for gi, g in enumerate(texts):
            verdict, reason = align(unit_text, g.text, background=backgrounds.get(document, frozenset()))
            decisions[(ui, gi)] = (verdict, "embedded", reason)
            if verdict == "not_judged":
                undecided.append((ui, gi))
    if llm is not None and undecided:
        criterion = Criterion("covers_unit", rubric=ALIGN_RUBRIC)
        items = [JudgeInput(criterion, actual=_qa(texts[gi]), expected=(units[ui][3],), case_id=texts[gi].id)
                 for ui, gi in undecided]
        for (ui, gi), v in zip(undecided, llm.judge_many(items)):
            if v.verdict in ("pass", "fail"):
                decisions[(ui, gi)] = ("aligned" if v.verdict == "pass" else "not_aligned", v.judge, v.reason)
            else:
                decisions[(ui, gi)] = ("not_judged", v.judge, f"{v.verdict}: {v.reason}")
    out = DirectUnitCoverage(rule=rule_text(), judge="embedded" + (f", then {llm.name}" if llm is not None else ""))
    by_golden: dict[int, GoldenAlignment] = {gi: GoldenAlignment(golden=g.id, where=g.where)
                                             for gi, g in enumerate(texts)}
    for ui, (unit_id, document, line, unit_text) in enumerate(units):
        row = UnitAlignment(unit=unit_id, document=document, line=line, text=unit_text, status="uncovered")
        for gi, g in enumerate(texts):
            verdict, judge, reason = decisions[(ui, gi)]
            if verdict == "not_aligned":
                continue
            out.alignments.append(Alignment(golden=g.id, unit=unit_id, verdict=verdict, judge=judge, reason=reason))
            (row.goldens if verdict == "aligned" else row.undecided).append(g.id)
            (by_golden[gi].units if verdict == "aligned" else by_golden[gi].undecided).append(unit_id)
        row.status = "covered" if row.goldens else "not_judged" if row.undecided else "uncovered"
        out.units.append(row)
    out.goldens = list(by_golden.values()) + [GoldenAlignment(golden=g.id, where=g.where, text=False)
                                              for g in goldens if not g.text]
    out.covered = sum(u.status == "covered" for u in out.units)
    out.uncovered = sum(u.status == "uncovered" for u in out.units)
    out.not_judged = sum(u.status == "not_judged" for u in out.units)
    return out


def document_backgrounds(units: Sequence[tuple[str, str, int, str]]) -> dict[str, frozenset[str]]:
    """Each document's background terms (background_terms over its units)."""
    by_document: dict[str, list[str]] = {}
    for _, document, _, text in units:
        by_document.setdefault(document, []).append(text)
    return {document: background_terms(texts) for document, texts in by_document.items()}


def _qa(g: GoldenText) -> str:
    return "\n".join([f"Question: {q}" for q in g.questions] + [f"Expected answer: {a}" for a in g.answers])
