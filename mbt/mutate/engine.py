"""The kill matrix: every golden replayed on every mutant it can tell apart; survivors checked for equivalence.

A golden kills a mutant when replaying it on the mutant contradicts its assertions (a contradiction, or it expects
what the mutant forbids) while it agrees with the original model. A golden that already disagrees with the original
kills nothing, and a case invalid on any model kills nothing anywhere: which cases are valid is decided by mbt
coverage's own validation (mbt.measure.run), so every command counts the same ones. Goldens are replayed once on
the original to learn which slots they step through; on a mutant, only the goldens that step through one of its
changed slots are replayed (the others replay identically, by construction), and a mutant no golden kills is handed
to its kind's distinguishing search, which either proves it equivalent (it is then left out of the score) or finds
a witness golden that would kill it.
"""

from __future__ import annotations

import random
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mbt.goldens.cases import GoldenCase, parse_case
from mbt.goldens.loader import GoldenSet
from mbt.goldens.results import disagrees
from mbt.goldens.routing import applies
from mbt.kind import Replayer, elements_of, support
from mbt.measure.coverage import GoldenSummary, InvalidCaseReport
from mbt.measure.mutation import ModelMutation, MutantResult, MutationReport, OperatorScore, score
from mbt.measure.run import CaseEntry, left_out_notes, measure
from mbt.model.common import ModelBase


@dataclass
class GoldenProfile:
    """What one golden does on the models: the elements it verifies and the mutants it kills (`model:id` each)."""

    id: str
    where: str
    verified: set[str] = field(default_factory=set)
    kills: set[str] = field(default_factory=set)
    invalid: str | None = None  # why the golden could not be replayed on some model (it then counts nowhere)


@dataclass
class MutationRun:
    report: MutationReport
    profiles: dict[str, GoldenProfile]  # golden id -> profile, in file order
    criteria: dict[str, str] = field(default_factory=dict)  # `model:element` -> its criterion
    goldens: GoldenSummary | None = None  # the goldens' figures, as mbt coverage counts them


@dataclass
class Screened:
    """Which golden cases are valid, decided as mbt coverage decides it (a case invalid on any model it applies to
    counts nowhere): the figures (read = valid + invalid), the invalid cases and why, the valid cases' ids."""

    goldens: GoldenSummary
    invalid: list[InvalidCaseReport]
    valid: set[str]


def screen(models: list[ModelBase], goldens: GoldenSet) -> Screened:
    """The goldens validated by the coverage engine itself (mbt.measure.run.measure), not by a rule of this
    module's own: every command that reads goldens counts the same cases valid and invalid."""
    entries: list[CaseEntry] = []
    replayable = [m for m in models if support(m.kind).replayer is not None]
    report = measure(replayable, goldens, jobs=1, cases=entries)
    return Screened(report.goldens, report.invalid_cases, {entry.id for entry in entries})


def killed(run) -> bool:
    """Whether the golden disagrees with the model (or mutant) it was replayed on: on the original, such a golden
    kills nothing; on a mutant, a golden that agreed with the original kills it."""
    return disagrees(run)


def mutation_run(models: list[ModelBase], goldens: GoldenSet, sample: int | None = None, seed: int = 0,
                 witnesses: bool = True, clock: dict[str, float] | None = None,
                 advance: Callable[[int], None] | None = None) -> MutationRun:
    """`sample`: judge at most this many mutants per model, a seeded uniform sample kept in operator order.
    `clock`: seconds per phase are added to it (the benchmark reads them; reports never show times).
    `advance`: called with 1 as each model is done (a progress bar on a terminal)."""
    screened = screen(models, goldens)
    report = MutationReport(goldens_read=screened.goldens.read, goldens_valid=screened.goldens.valid,
                            goldens_invalid=screened.goldens.invalid,
                            invalid_cases=[f"{i.file}:{i.line}: {i.message}" for i in screened.invalid],
                            notes=[note.message for note in left_out_notes(goldens.left_out)])
    why = {(i.file, i.line): i.message for i in screened.invalid}
    profiles: dict[str, GoldenProfile] = {}
    valid: list[GoldenCase] = []
    for case in goldens.cases:
        profile = profiles.setdefault(case.id, GoldenProfile(case.id, case.where))
        if case.id in screened.valid:
            valid.append(case)
        else:  # invalid at replay on some model: it counts nowhere, as in coverage
            # coverage's message names the case first (`case `ID` on model ...`); the profile says the rest
            profile.invalid = why.get((case.file, case.line), "").removeprefix(f"case `{case.id}` ")
    criteria: dict[str, str] = {}
    for model in models:
        report.models.append(_model_run(model, valid, profiles, criteria, sample, seed, witnesses,
                                        {} if clock is None else clock))
        if advance is not None:
            advance(1)
    by_kind: dict[str, list[ModelMutation]] = defaultdict(list)
    for m in report.models:
        by_kind[m.kind].append(m)
    for kind, ms in by_kind.items():
        report.kinds[kind] = score(sum(m.killed for m in ms), sum(m.mutants for m in ms),
                                   sum(m.equivalent for m in ms))
    report.score = score(sum(m.killed for m in report.models), sum(m.mutants for m in report.models),
                         sum(m.equivalent for m in report.models))
    return MutationRun(report, profiles, criteria, screened.goldens)


def _accepts(kind, model: ModelBase, case: GoldenCase) -> bool:
    return kind.accepts(model, case) if kind.accepts is not None else applies(model, case)


def _model_run(model: ModelBase, cases: list[GoldenCase], profiles: dict[str, GoldenProfile],
               criteria: dict[str, str], sample: int | None, seed: int, witnesses: bool,
               clock: dict[str, float]) -> ModelMutation:
    def lap(phase: str, since: float) -> float:
        now = time.perf_counter()
        clock[phase] = clock.get(phase, 0.0) + now - since
        return now

    kind = support(model.kind)
    ms = kind.mutation
    out = ModelMutation(model=model.name, kind=model.kind, file=model.file, goldens=0, clean_goldens=0,
                        candidates=0, mutants=0, equivalent=0, killed=0, survived=0, score=None, replays=0)
    if kind.replayer is None:
        out.note = f"mbt cannot replay {model.kind} models"
        return out
    elements = elements_of(model)
    for e in elements:
        criteria[f"{model.name}:{e.id}"] = e.criterion
    base = kind.replayer(model, elements)
    started = time.perf_counter()
    clean: list[GoldenCase] = []
    by_slot: dict[object, list[int]] = defaultdict(list)
    everywhere: list[int] = []  # clean goldens any mutant may change (no footprint)
    for case in cases:
        if not _accepts(kind, model, case):
            continue
        if ms is not None and ms.footprint is not None:
            run, keys = ms.footprint(base, case)
        else:
            run, keys = base.replay(case), None
        out.goldens += 1
        profile = profiles[case.id]
        profile.verified.update(f"{model.name}:{elements[i].id}" for i in run.verified)
        if killed(run):
            continue  # it disagrees with the original: it can kill nothing
        position = len(clean)
        clean.append(case)
        if keys is None:
            everywhere.append(position)
        else:
            for key in keys:
                by_slot[key].append(position)
    out.clean_goldens = len(clean)
    started = lap("original replays", started)
    if ms is None:  # its goldens still count for redundancy (the elements they verify)
        out.note = f"mbt has no mutation operators for {model.kind} models"
        return out
    mutants = ms.mutants(model)
    out.candidates = len(mutants)
    started = lap("mutant generation", started)
    if sample is not None and len(mutants) > sample:
        chosen = sorted(random.Random(seed).sample(range(len(mutants)), sample))
        mutants = [mutants[i] for i in chosen]
        out.sampled = f"{sample} of {out.candidates} mutants, uniformly at random (seed {seed})"
    per_op: dict[str, list[MutantResult]] = defaultdict(list)
    by_id = {e.id: e for e in elements}
    for mutant in mutants:
        started = time.perf_counter()
        replayer = ms.replayer(base, mutant)
        candidates: Sequence[int]
        if mutant.slots is None:
            candidates = range(len(clean))
        else:
            candidates = sorted({p for key in mutant.slots for p in by_slot.get(key, ())} | set(everywhere))
        killers = []
        for p in candidates:
            out.replays += 1
            if killed(replayer.replay(clean[p])):
                killers.append(clean[p].id)
        started = lap("kill replays", started)
        touched = by_id.get(mutant.element)
        result = MutantResult(id=mutant.id, operator=mutant.operator, element=mutant.element, at=mutant.at,
                              description=mutant.description, status="killed", killed_by=killers,
                              span=touched.span.describe() if touched is not None and touched.span else None)
        if killers:
            for golden in killers:
                profiles[golden].kills.add(f"{model.name}:{mutant.id}")
        else:
            found = ms.distinguish(base, replayer, mutant)
            result.status = "equivalent" if found.equivalent else "survived"
            result.reason = found.reason
            if witnesses and found.witness is not None and _kills(base, replayer, found.witness):
                result.witness = found.witness
            lap("equivalence and witnesses", started)
        per_op[mutant.operator].append(result)
        out.results.append(result)
    for code, doc in ms.operators.items():
        rs = per_op.get(code, [])
        n_killed, n_equivalent = sum(r.status == "killed" for r in rs), sum(r.status == "equivalent" for r in rs)
        out.operators.append(OperatorScore(operator=code, doc=doc, mutants=len(rs), equivalent=n_equivalent,
                                           killed=n_killed, survived=len(rs) - n_killed - n_equivalent,
                                           score=score(n_killed, len(rs), n_equivalent)))
    out.mutants = len(out.results)
    out.killed = sum(r.status == "killed" for r in out.results)
    out.equivalent = sum(r.status == "equivalent" for r in out.results)
    out.survived = out.mutants - out.killed - out.equivalent
    out.score = score(out.killed, out.mutants, out.equivalent)
    return out


def _kills(base: Replayer, replayer: Replayer, witness: dict[str, Any]) -> bool:
    """A witness is kept only when it does what it claims: it agrees with the original and the mutant contradicts it."""
    case = parse_case(witness, "witness", 1)
    first = base.replay(case)
    return not first.invalid and not killed(first) and killed(replayer.replay(case))
