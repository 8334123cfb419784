"""Seed 004's levels of coverage, named in every `mbt coverage` report: per level what was measured, on what
denominator, and what was not measured and why; and the four quality dimensions kept apart.

    level 0  surface and topic       embedding neighbourhood of the source units (mbt.measure.embedding)  --levels 0
    level 1  information content     source units: through the model (elements citing them, verified) and
                                     directly (goldens aligned to them: mbt.measure.alignment); probe coverage
                                     (mbt.measure.probes)                                               --levels 1, --probes
    level 2  propositions            atomic propositions per unit, entailed by goldens (mbt.measure.propositions)
                                                                                                        --levels 2
    level 3  business behaviour      the typed models' criteria: transitions, rules, policies, invariants  always
                                     (and the elements judged answers verify, each figure apart)    --answers
    level 4  usage and risk          observed runs: elements seen, usage-weighted coverage (mbt runs)     --runs

Levels 0-2 read documents and compare every golden with every unit, so they are opt-in (`--levels`); level 3 is the
run itself; level 4 needs runs. The dimensions — coverage, richness, representativeness, effectiveness — are reported
each on its own: nothing here adds figures of different levels, kinds or dimensions into one number.
"""

from __future__ import annotations

from collections.abc import Sequence

from mbt.measure.answer_models import ANSWER_DENOMINATOR, ANSWERED
from mbt.measure.level_models import (
    Dimension,
    DirectUnitCoverage,
    EmbeddingCoverage,
    Figure,
    Level,
    LevelsReport,
    PropositionCoverage,
)

LEVEL_NAMES = {0: "surface and topic", 1: "information content", 2: "propositions", 3: "business behaviour",
               4: "usage and risk"}
LEVEL_SCOPE = {
    0: "source units near a golden in an embedding space; clusters; blank regions",
    1: "source units (sentences, list items, YAML leaves) covered by goldens",
    2: "atomic propositions of the source units entailed by a golden's expected behaviour",
    3: "elements of the typed models (states, transitions, rules, policies, invariants) a golden verifies",
    4: "behaviour seen in observed runs: production traffic, incidents, adversarial input, undocumented behaviour",
}
OPT_IN = (0, 1, 2)


# Units that hold information for levels 0-2 (and level 1 through the model): headings and code blocks are structure.
LEVEL_UNIT_KINDS = ("sentence", "list-item", "table-row", "yaml-leaf")


def _level(number: int) -> Level:
    return Level(level=number, name=LEVEL_NAMES[number], scope=LEVEL_SCOPE[number], measured=False)


def summarise(report, asked: Sequence[int], runs=None, probes=None,
              embedding: EmbeddingCoverage | None = None, units: DirectUnitCoverage | None = None,
              propositions: PropositionCoverage | None = None) -> LevelsReport:
    """The levels of a coverage report (`report`: mbt.measure.coverage.CoverageReport, with its source coverage when
    it was computed); `asked`: the opt-in levels asked for; `runs`: the runs report (mbt runs) when runs were given;
    `probes`: the probe report when a probe file was given; the opt-in levels' details when they were measured."""
    levels = {n: _level(n) for n in LEVEL_NAMES}
    no_documents = "no source document (no model declares one; give --source DOC)"

    # level 0
    lv = levels[0]
    if embedding is not None:
        lv.figures.append(Figure(name=f"units within τ = {embedding.tau:.2f} of a golden ({embedding.embedding})",
                                 covered=embedding.covered, total=embedding.total, denominator="source units",
                                 note=f"{len(embedding.blank)} blank, {len(embedding.clusters)} cluster(s)"))
    else:
        lv.not_measured.append("embedding neighbourhood coverage: not asked for (--levels 0)" if 0 not in asked
                               else no_documents)

    # level 1
    lv = levels[1]
    counted = [u for d in (report.sources.documents if report.sources is not None else []) for u in d.units
               if u.kind in LEVEL_UNIT_KINDS and u.status != "excluded"]
    if counted:
        tested = sum(u.status in ("covered", "partial") for u in counted)
        lv.figures.append(Figure(name="units tested through the model", covered=tested, total=len(counted),
                                 denominator="source units not excluded",
                                 note="a verified element cites them"))
    else:
        lv.not_measured.append("units through the model: source coverage not computed (--show-sources, a review "
                               "format, or --levels)")
    if units is not None:
        lv.figures.append(Figure(name="units covered by an aligned golden", covered=units.covered, total=units.total,
                                 denominator="source units not excluded",
                                 note=f"{units.not_judged} not judged; judge: {units.judge}"))
    else:
        lv.not_measured.append("units covered directly: not asked for (--levels 1)" if 1 not in asked
                               else no_documents)
    if probes is not None:
        # The probe file's units should be this report's source units (mbt generate --probes writes their ids);
        # a file made for other documents is measured all the same, and said to be.
        known = {u.id for d in report.sources.documents for u in d.units} if report.sources is not None else None
        for g in probes.generators:
            s = g.stratified
            strangers = sorted({u.unit for u in g.units} - known) if known is not None else []
            elsewhere = f"; {len(strangers)} of its units not among the source units here" if strangers else ""
            if s.coverage is not None:
                lv.figures.append(Figure(name=f"probe coverage, generator `{g.generator}` "
                                              f"({'weighted' if s.weighted else 'stratified'})",
                                         value=s.coverage, denominator=f"{s.units} unit(s), {g.pooled.probes} judged "
                                                                       "probes",
                                         note=f"bootstrap {probes.confidence:.0%} [{_pct(s.bootstrap)}]; "
                                              f"conditioned on the generator{elsewhere}"))
            else:
                lv.not_measured.append(f"probe coverage, generator `{g.generator}`: no judged probe")
        for h in probes.leave_one_generator_out:
            if h.others.coverage is not None:
                mark = "; it made the test set" if h.generator == probes.candidates_from else ""
                lv.figures.append(Figure(name=f"probe coverage without generator `{h.generator}` (leave one out)",
                                         value=h.others.coverage, denominator=f"{h.others.units} unit(s) of the "
                                                                              "other generators' probes",
                                         note=f"bootstrap {probes.confidence:.0%} [{_pct(h.others.bootstrap)}]; on "
                                              f"its own probes {_pct1(h.own)}{mark}"))
    else:
        lv.not_measured.append("probe coverage: no probes given (--probes FILE; mbt generate --probes writes one)")

    # level 2
    lv = levels[2]
    if propositions is not None:
        lv.figures.append(Figure(name="propositions entailed by a golden", covered=propositions.covered,
                                 total=propositions.total, denominator="atomic propositions of the units",
                                 note=f"{propositions.not_judged} not judged; {propositions.extractor}; judge: "
                                      f"{propositions.judge}"))
    else:
        lv.not_measured.append("proposition coverage: not asked for (--levels 2)" if 2 not in asked
                               else no_documents)

    # level 3
    lv = levels[3]
    for m in report.models:
        for c in m.criteria:
            lv.figures.append(Figure(name=f"{m.model} ({m.kind}) {c.criterion}", covered=c.verified.covered,
                                     total=c.verified.total, denominator="feasible elements",
                                     note="verified; " + f"{c.exercised.covered} exercised"))
    if report.answers is not None:  # --answers: a figure of its own per criterion, never added into the above
        for a in report.answers.models:
            for f in a.criteria:
                lv.figures.append(Figure(name=f"{a.model} ({a.kind}) {f.criterion}{ANSWERED}",
                                         covered=f.verified.covered, total=f.verified.total,
                                         denominator=ANSWER_DENOMINATOR,
                                         note=f"{f.failed} failed, {f.undecided} undecided"))
    if not report.models:
        lv.not_measured.append("no behaviour model loaded")

    # level 4
    lv = levels[4]
    undocumented = []
    if runs is not None:
        m = runs.metrics
        lv.figures.append(Figure(name="observed runs without a deviation", covered=m.passed, total=m.runs,
                                 denominator="runs read", note=f"{m.deviations} with a deviation, {m.not_judged} "
                                                               "not judged"))
        for u in runs.usage:
            lv.figures.append(Figure(name=f"{u.model}: elements seen in runs", covered=u.seen_in_runs,
                                     total=u.elements, denominator="feasible elements",
                                     note=f"{len(runs.runs)} run(s)"))
        if not runs.usage:
            lv.not_measured.append("usage: the runs reached no loaded model")
        for row in runs.marked:  # incidents and adversarial runs apart (mbt.runs.marks), and the rest
            rm = row.metrics
            lv.figures.append(Figure(name=f"{row.mark} runs without a deviation", covered=rm.passed, total=rm.runs,
                                     denominator=f"{row.mark} runs", note=f"{rm.deviations} with a deviation, "
                                                                          f"{rm.not_judged} not judged; apart"))
        if not runs.marked:
            lv.not_measured.append("incidents and adversarial runs reported apart: no run is marked (a tag "
                                   "`incident` or `adversarial` in the run: docs/runs.md)")
        undocumented = list(runs.undocumented)
        seen = sum(c.runs for c in undocumented)
        lv.figures.append(Figure(name=f"undocumented behaviour: {len(undocumented)} candidate(s) for the model, seen "
                                      f"in {seen} run(s)" if undocumented else
                                      "undocumented behaviour: none in the runs' first deviations",
                                 note="steps the model neither allows nor forbids, each listed with where it was seen"
                                 if undocumented else "steps the model neither allows nor forbids"))
    else:
        lv.not_measured.append("usage, incidents and adversarial runs, undocumented behaviour: no runs given "
                               "(--runs PATH)")

    for lv in levels.values():
        lv.measured = bool(lv.figures)
    return LevelsReport(levels=list(levels.values()), dimensions=_dimensions(report, levels, runs),
                        embedding=embedding, units=units, propositions=propositions, probes=probes,
                        undocumented=undocumented)


def _dimensions(report, levels: dict[int, Level], runs) -> list[Dimension]:
    measured = [f"level {n}" for n, lv in levels.items() if lv.measured]
    coverage = Dimension(name="coverage", meaning="are the known units, propositions and rules touched",
                         measured=bool(measured),
                         figures=[Figure(name=f"see {', '.join(measured)}", note="each level on its own")]
                         if measured else [])
    mutation = report.mutation
    if mutation is not None and mutation.redundancy is not None:
        r = mutation.redundancy
        richness = Dimension(name="richness", meaning="do goldens vary what changes the expected behaviour (a "
                             "paraphrase adds none)", measured=True,
                             figures=[Figure(name="goldens adding nothing over the others (duplicates, subsumed, "
                                                  "idle)", covered=len(r.duplicates) + len(r.subsumed) + len(r.idle),
                                             total=r.goldens, denominator="goldens profiled"),
                                      Figure(name="smallest equivalent set", covered=len(r.kept), total=r.goldens,
                                             denominator="goldens profiled")])
    else:
        richness = Dimension(name="richness", meaning="do goldens vary what changes the expected behaviour (a "
                             "paraphrase adds none)", measured=False,
                             not_measured="no mutation run (--mutants); `mbt compare` judges new goldens one by one")
    if runs is not None and runs.usage:
        representativeness = Dimension(
            name="representativeness", meaning="closeness to the usage distribution from runs", measured=True,
            figures=[Figure(name=f"{u.model}: usage-weighted verified", value=u.usage_weighted_verified,
                            denominator="steps of the runs on seen elements")
                     for u in runs.usage if u.usage_weighted_verified is not None])
        representativeness.measured = bool(representativeness.figures)
        if not representativeness.measured:
            representativeness.not_measured = "the runs passed through no element"
    else:
        representativeness = Dimension(name="representativeness", meaning="closeness to the usage distribution "
                                       "from runs", measured=False, not_measured="no runs given (--runs PATH)")
    if mutation is not None:
        effectiveness = Dimension(name="effectiveness", meaning="do the goldens tell a right implementation from a "
                                  "wrong one (mutation score)", measured=True,
                                  figures=[Figure(name=f"{m.model} ({m.kind}) mutation score", covered=m.killed,
                                                  total=m.mutants - m.equivalent,
                                                  denominator="non-equivalent mutants")
                                           for m in mutation.models])
    else:
        effectiveness = Dimension(name="effectiveness", meaning="do the goldens tell a right implementation from a "
                                  "wrong one (mutation score)", measured=False,
                                  not_measured="no mutation run (--mutants)")
    return [coverage, richness, representativeness, effectiveness]


def _pct1(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _pct(bounds) -> str:
    if bounds is None:
        return "n/a"
    return f"{bounds.low:.1%}, {bounds.high:.1%}"
