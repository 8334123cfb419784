"""Probe coverage conditioned on a generator (seed 004, "Synthesizer 抽样"; docs/levels.md, "Probe coverage"): held-out
probes generated per source unit, each judged covered or not by the test set, estimated per generator — per unit with
a Wilson interval, pooled with Wilson, bootstrap and cluster-bootstrap intervals, stratified as the seed defines it,
and leave-one-generator-out when probes come from several generators.

The probe file is JSONL (one object a line) or CSV (a header row), one probe a record:

    unit       the source unit the probe was generated for (the stratum)          required
    probe      the probe's id, unique per generator                               required
    generator  the generator that made it (model, prompt, configuration)          default "unnamed"
    cluster    a group of probes that are not independent (a batch, a rewrite)    optional
    covered    the judge's decision: true/false, yes/no, 1/0; empty, null or      required (the column)
               `not_judged`: not judged (counted, left out of every estimate)
    weight     the unit's weight w_i (the same on every probe of the unit)        optional, on every unit or none
    question, judge, reason   the probe's text, who judged it, why            optional, read by no estimate
    unit_text  the unit's text the probe was made from (mbt generate --probes     optional, read by no estimate
               writes it: an LLM's probes are kept while it is unchanged)

Any other field is an error (a misspelt `cluster` must not quietly drop the clustering). A bad record is one located
error (`file:line`), and nothing is estimated.
"""

from __future__ import annotations

import csv
import io
import json
import random
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from mbt.errors import LocatedError, MbtError, Problem, did_you_mean
from mbt.measure import estimators
from mbt.measure.estimators import Group
from mbt.reader import read_text, shown_path

DEFAULT_GENERATOR = "unnamed"
DEFAULT_RESAMPLES = 2000
# Below this many clusters a cluster bootstrap is unreliable (it may come out narrower than the iid one): the report
# shows the interval with a caveat. (Cameron, Gelbach & Miller 2008 find cluster-robust inference poor with few.)
FEW_CLUSTERS = 10
COLUMNS = ("unit", "probe", "generator", "cluster", "covered", "weight", "question", "judge", "reason", "unit_text")
_YES = {"true", "yes", "y", "1", "covered"}
_NO = {"false", "no", "n", "0", "not_covered", "uncovered"}
_NOT_JUDGED = {"", "null", "none", "not_judged", "not judged"}


@dataclass(frozen=True)
class Probe:
    unit: str
    probe: str
    generator: str
    cluster: str | None
    covered: bool | None  # None: not judged
    weight: float | None
    line: int
    question: str | None = None  # the probe's text (read by no estimate)
    unit_text: str | None = None  # the unit's text it was made from (mbt generate --probes: the LLM cache's key)


# ---------------------------------------------------------------- the report


class Bounds(BaseModel):
    low: float
    high: float


class UnitCoverage(BaseModel):
    unit: str
    probes: int  # judged probes, m_i
    covered: int  # k_i
    not_judged: int = 0
    coverage: float | None  # k_i / m_i; None: no judged probe (not measured)
    wilson: Bounds | None
    weight: float | None = None  # w_i in the stratified estimate (None: the unit is not measured)


class Pooled(BaseModel):
    """Every judged probe of the generator counted alike: the seed's Ĉ_G = (1/n) Σ 1[Cover(T, q_j)]."""

    probes: int
    covered: int
    coverage: float | None
    se: float | None  # sqrt(Ĉ(1-Ĉ)/n): valid only when the probes are independent
    wilson: Bounds | None
    bootstrap: Bounds | None  # probes resampled one by one (iid)
    cluster_bootstrap: Bounds | None  # clusters resampled whole
    clusters: int
    clustered_by: Literal["cluster", "unit"]  # the `cluster` field, or the source unit when no probe names one
    few_clusters: bool = False  # fewer than FEW_CLUSTERS: the cluster bootstrap is shown, not to be trusted


class Stratified(BaseModel):
    """The seed's Ĉ_stratified = Σ_i w_i (1/m_i) Σ_j 1[Cover(T, q_ij)] over the units with judged probes."""

    units: int  # K: units with judged probes
    coverage: float | None
    se: float | None  # sqrt(Σ w_i² p_i(1-p_i)/m_i)
    bootstrap: Bounds | None  # resampled within each unit (its clusters when probes name clusters)
    weighted: bool  # weights from the file (production- or risk-weighted probe coverage), else w_i = 1/K
    equal_probes: bool  # every unit has the same number of judged probes, as the seed asks
    probes_per_unit: tuple[int, int] | None  # (fewest, most)
    # units with a single judged probe: no spread within them shows, so the SE and the interval are too narrow
    single_probe_units: int = 0
    # units with probes but no judged one, or (with weights) none of weight above 0: left out, weights renormalised
    not_measured: list[str] = Field(default_factory=list)


class GeneratorCoverage(BaseModel):
    generator: str
    probes_read: int
    not_judged: int
    units: list[UnitCoverage]
    pooled: Pooled
    stratified: Stratified


class HeldOut(BaseModel):
    """Leave-one-generator-out: the test set measured by the probes of every generator but `generator` (as when
    `generator` made the candidate tests), beside its own probes."""

    generator: str
    own: float | None  # stratified coverage on its own probes
    others: Stratified  # stratified coverage on the other generators' probes, pooled per unit
    difference: float | None  # own - others: a large positive gap points at generator bias


class ProbeReport(BaseModel):
    schema_version: Literal["1.0"] = "1.0"
    file: str
    confidence: float
    resamples: int
    seed: int
    probes_read: int
    generators: list[GeneratorCoverage]
    leave_one_generator_out: list[HeldOut] = Field(default_factory=list)
    candidates_from: str | None = None  # the generator that made the test set, when given
    notes: list[str] = Field(default_factory=list)


# ---------------------------------------------------------------- reading


def read_probes(path: str) -> list[Probe]:
    """The probes of a JSONL or CSV file, in file order; a LocatedError (file:line) for the first bad record."""
    shown = shown_path(path)
    text = read_text(Path(path), shown)
    rows = _csv_rows(text, shown) if Path(path).suffix.lower() == ".csv" else _jsonl_rows(text, shown)
    probes: list[Probe] = []
    seen: dict[tuple[str, str], int] = {}
    weights: dict[str, tuple[float | None, int]] = {}
    for line, row in rows:
        probe = _probe(row, shown, line)
        key = (probe.generator, probe.probe)
        if key in seen:
            raise _error(shown, line, f"probe `{probe.probe}` of generator `{probe.generator}` is also on line "
                                      f"{seen[key]}: a probe id is unique per generator")
        seen[key] = line
        known = weights.setdefault(probe.unit, (probe.weight, line))
        if known[0] != probe.weight:
            raise _error(shown, line, f"unit `{probe.unit}` has weight {_shown(probe.weight)} here and "
                                      f"{_shown(known[0])} on line {known[1]}: a unit has one weight")
        probes.append(probe)
    if not probes:
        raise _error(shown, 1, "no probes: the file holds no record")
    given = {unit for unit, (w, _) in weights.items() if w is not None}
    if given and given != set(weights):
        unit = min(set(weights) - given)
        raise _error(shown, weights[unit][1], f"unit `{unit}` has no weight while other units have one: give every "
                                              "unit a weight, or none")
    return probes


def _shown(weight: float | None) -> str:
    return "none" if weight is None else f"{weight:g}"


def _error(shown: str, line: int, message: str) -> LocatedError:
    return LocatedError([Problem(shown, line, 1, message)])


def _jsonl_rows(text: str, shown: str) -> Iterable[tuple[int, dict[str, Any]]]:
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw)
        except json.JSONDecodeError as err:
            raise LocatedError([Problem(shown, number, err.colno, f"not valid JSON: {err.msg}")]) from None
        if not isinstance(row, dict):
            raise _error(shown, number, "a probe is a JSON object")
        yield number, row


def _csv_rows(text: str, shown: str) -> Iterable[tuple[int, dict[str, Any]]]:
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader, None)
        if header is None:
            return
        names = [h.strip().lower() for h in header]
        unknown = [h for h in names if h and h not in COLUMNS]
        if unknown:
            raise _error(shown, 1, f"unknown column `{unknown[0]}`{did_you_mean(unknown[0], COLUMNS)}: the columns "
                                   f"are {', '.join(COLUMNS)}")
        for row in reader:
            if not any(cell.strip() for cell in row):
                continue
            yield reader.line_num, {name: cell for name, cell in zip(names, row) if name}
    except csv.Error as err:
        raise _error(shown, reader.line_num, f"not valid CSV: {err}") from None


def _probe(row: dict[str, Any], shown: str, line: int) -> Probe:
    unknown = sorted(k for k in row if k not in COLUMNS)
    if unknown:
        raise _error(shown, line, f"unknown field `{unknown[0]}`{did_you_mean(unknown[0], COLUMNS)}: a probe has "
                                  f"{', '.join(COLUMNS)}")

    def text(name: str, required: bool) -> str | None:
        value = row.get(name)
        if value is None or (isinstance(value, str) and not value.strip()):
            if required:
                raise _error(shown, line, f"the probe has no `{name}`")
            return None
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise _error(shown, line, f"`{name}` is a text or a number, not {json.dumps(value)}")
        return str(value).strip()

    if "covered" not in row:
        raise _error(shown, line, "the probe has no `covered` (true/false; `not_judged` when no judge decided)")
    return Probe(unit=text("unit", True) or "", probe=text("probe", True) or "",
                 generator=text("generator", False) or DEFAULT_GENERATOR, cluster=text("cluster", False),
                 covered=_covered(row["covered"], shown, line), weight=_weight(row.get("weight"), shown, line),
                 line=line, question=_plain(row.get("question")), unit_text=_plain(row.get("unit_text")))


def _plain(value: Any) -> str | None:
    """A free text of the record, kept as written (None when absent)."""
    return None if value is None else str(value)


def _covered(value: Any, shown: str, line: int) -> bool | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    word = str(value).strip().casefold()
    if word in _YES:
        return True
    if word in _NO:
        return False
    if word in _NOT_JUDGED:
        return None
    raise _error(shown, line, f"`covered` is {json.dumps(value, ensure_ascii=False)}: it is true or false (yes/no, "
                              "1/0), or not_judged")


def _weight(value: Any, shown: str, line: int) -> float | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        weight = float(value) if not isinstance(value, bool) else -1.0
    except ValueError:
        weight = -1.0
    if not weight >= 0 or weight == float("inf"):
        raise _error(shown, line, f"`weight` is {json.dumps(value)}: a unit's weight is a number, 0 or more")
    return weight


# ---------------------------------------------------------------- the estimates


def probe_coverage(path: str, confidence: float = 0.95, resamples: int = DEFAULT_RESAMPLES, seed: int = 0,
                   candidates_from: str | None = None) -> ProbeReport:
    """Every estimate of the probe file's coverage (docs/levels.md, "Probe coverage")."""
    if not 0 < confidence < 1:
        raise MbtError(f"the confidence is {confidence}: it lies between 0 and 1 (0.95 for 95%)")
    if resamples < 1:
        raise MbtError(f"{resamples} bootstrap resamples: at least 1 (the default is {DEFAULT_RESAMPLES})")
    probes = read_probes(path)
    return estimate(probes, shown_path(path), confidence, resamples, seed, candidates_from)


def estimate(probes: list[Probe], file: str, confidence: float = 0.95, resamples: int = DEFAULT_RESAMPLES,
             seed: int = 0, candidates_from: str | None = None) -> ProbeReport:
    """The report of read probes (`file`: how the report names their file)."""
    by_generator: dict[str, list[Probe]] = defaultdict(list)
    for p in probes:
        by_generator[p.generator].append(p)
    names = sorted(by_generator)
    if candidates_from is not None and candidates_from not in by_generator:
        raise MbtError(f"--candidates-from names generator `{candidates_from}`, which made no probe of {file} "
                       f"(its generators: {', '.join(names)})")
    report = ProbeReport(file=file, confidence=confidence, resamples=resamples, seed=seed, probes_read=len(probes),
                         generators=[_generator(name, by_generator[name], confidence, resamples, seed)
                                     for name in names],
                         candidates_from=candidates_from)
    if len(names) > 1:
        for name in names:
            others = [p for p in probes if p.generator != name]
            held_out = _stratified(others, confidence, resamples, _rng(seed, f"without {name}", "stratified"))
            own = next(g for g in report.generators if g.generator == name).stratified.coverage
            report.leave_one_generator_out.append(HeldOut(
                generator=name, own=own, others=held_out,
                difference=None if own is None or held_out.coverage is None else own - held_out.coverage))
    else:
        report.notes.append("leave-one-generator-out: not measured, every probe comes from one generator "
                            f"(`{names[0]}`)")
    return report


def _rng(seed: int, generator: str, estimate: str) -> random.Random:
    """Each interval's own random stream, from the seed and what it estimates: a string seed is hashed with SHA-512
    by random.Random (not by hash()), so the intervals are the same under any PYTHONHASHSEED, and adding a generator
    changes no other generator's intervals."""
    return random.Random(f"{seed}|{generator}|{estimate}")


def _generator(name: str, probes: list[Probe], confidence: float, resamples: int, seed: int) -> GeneratorCoverage:
    judged = [p for p in probes if p.covered is not None]
    units = _units(probes, confidence)
    stratified = _stratified(probes, confidence, resamples, _rng(seed, name, "stratified"))
    weights = _weights(judged)
    for u in units:
        u.weight = weights.get(u.unit)
    covered, n = sum(bool(p.covered) for p in judged), len(judged)
    named = any(p.cluster is not None for p in judged)
    clusters = _groups(judged, _cluster_of if named else (lambda p: p.unit))
    flags = [(int(bool(p.covered)), 1) for p in judged]
    pooled = Pooled(
        probes=n, covered=covered, coverage=covered / n if n else None, se=estimators.binomial_se(covered, n),
        wilson=_bounds(estimators.wilson(covered, n, confidence)),
        bootstrap=_bounds(estimators.bootstrap(flags, resamples, _rng(seed, name, "bootstrap"), confidence)),
        cluster_bootstrap=_bounds(estimators.bootstrap(clusters, resamples, _rng(seed, name, "clusters"), confidence)),
        clusters=len(clusters), clustered_by="cluster" if named else "unit", few_clusters=len(clusters) < FEW_CLUSTERS)
    return GeneratorCoverage(generator=name, probes_read=len(probes), not_judged=len(probes) - len(judged),
                             units=units, pooled=pooled, stratified=stratified)


def _units(probes: list[Probe], confidence: float) -> list[UnitCoverage]:
    by_unit: dict[str, list[Probe]] = defaultdict(list)
    for p in probes:
        by_unit[p.unit].append(p)
    out = []
    for unit in sorted(by_unit):
        judged = [p for p in by_unit[unit] if p.covered is not None]
        covered = sum(bool(p.covered) for p in judged)
        out.append(UnitCoverage(unit=unit, probes=len(judged), covered=covered,
                                not_judged=len(by_unit[unit]) - len(judged),
                                coverage=covered / len(judged) if judged else None,
                                wilson=_bounds(estimators.wilson(covered, len(judged), confidence))))
    return out


def _weights(judged: list[Probe]) -> dict[str, float]:
    """w_i per unit with judged probes: the file's weights normalised to sum to 1 (none when they add up to 0: the
    estimate is then not measured), else 1/K. read_probes made sure every unit has a weight or none has."""
    given: dict[str, float] = {}
    for p in judged:
        given.setdefault(p.unit, 1.0 if p.weight is None else p.weight)
    total = sum(given.values())
    return {unit: w / total for unit, w in given.items()} if total > 0 else {}


def _stratified(probes: list[Probe], confidence: float, resamples: int, rng: random.Random) -> Stratified:
    judged = [p for p in probes if p.covered is not None]
    weights = _weights(judged)
    units = sorted(weights)
    named = any(p.cluster is not None for p in judged)
    by_unit: dict[str, list[Probe]] = defaultdict(list)
    for p in judged:
        by_unit[p.unit].append(p)
    strata: list[list[Group]] = []
    for unit in units:
        mine = by_unit[unit]
        strata.append(_groups(mine, _cluster_of) if named else [(int(bool(p.covered)), 1) for p in mine])
    sizes = [sum(g[1] for g in groups) for groups in strata]
    not_measured = sorted({p.unit for p in probes} - set(units))
    w = [weights[u] for u in units]
    return Stratified(
        units=len(units), coverage=estimators.stratified(strata, w) if strata else None,
        se=estimators.stratified_se(strata, w) if strata else None,
        bootstrap=_bounds(estimators.stratified_bootstrap(strata, w, resamples, rng, confidence)) if strata else None,
        weighted=any(p.weight is not None for p in judged), equal_probes=len(set(sizes)) <= 1,
        probes_per_unit=(min(sizes), max(sizes)) if sizes else None, not_measured=not_measured,
        single_probe_units=sum(size == 1 for size in sizes))


def _cluster_of(p: Probe) -> str:
    """The cluster a probe is drawn with: the one it names, else its own (a probe naming none is independent)."""
    return p.cluster if p.cluster is not None else f"probe:{p.probe}"


def _groups(probes: list[Probe], key) -> list[Group]:
    """(covered, probes) per value of `key`, in the order each value first appears."""
    found: dict[str, list[int]] = {}
    for p in probes:
        counts = found.setdefault(key(p), [0, 0])
        counts[0] += int(bool(p.covered))
        counts[1] += 1
    return [(c, n) for c, n in found.values()]


def _bounds(interval: estimators.Interval | None) -> Bounds | None:
    return None if interval is None else Bounds(low=interval.low, high=interval.high)
