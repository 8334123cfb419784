"""The probe-coverage report (`mbt probes`) as text: per generator the pooled and stratified estimates with their
intervals, the units, then leave-one-generator-out. Formats only: every number comes computed (mbt.measure.probes)."""

from __future__ import annotations

from mbt.measure.numbers import percent_text
from mbt.measure.probes import Bounds, ProbeReport, Stratified

UNITS_SHOWN = 50


def _bounds(b: Bounds | None) -> str:
    return "n/a" if b is None else f"[{percent_text(b.low)}, {percent_text(b.high)}]"


def _se(se: float | None) -> str:
    return "n/a" if se is None else f"{se * 100:.1f} points"


def _stratified_lines(s: Stratified, conf: str, indent: str) -> list[str]:
    name = "weighted (the file's unit weights)" if s.weighted else "stratified (w_i = 1/K)"
    lines = [f"{indent}{name}: {percent_text(s.coverage)} over {s.units} unit(s); SE {_se(s.se)}; bootstrap "
             f"within units {conf} {_bounds(s.bootstrap)}"]
    if s.probes_per_unit is not None and not s.equal_probes:
        lines.append(f"{indent}  units have {s.probes_per_unit[0]} to {s.probes_per_unit[1]} judged probes (the seed "
                     "asks for equal numbers per unit)")
    if s.single_probe_units:
        lines.append(f"{indent}  {s.single_probe_units} unit(s) with a single judged probe: no spread within them "
                     "shows, so the SE and the interval are too narrow")
    if s.not_measured:
        lines.append(f"{indent}  not measured (no judged probe): {', '.join(s.not_measured)}")
    return lines


def probes_text(report: ProbeReport, units_shown: int | None = UNITS_SHOWN) -> str:
    conf = f"{report.confidence * 100:g}%"
    lines = [f"mbt probes: {report.probes_read} probe(s) read from {report.file}, {len(report.generators)} "
             f"generator(s); {conf} intervals, {report.resamples} bootstrap resamples (seed {report.seed})",
             "Probe coverage is conditioned on the generator: the share of its valid probes the test set covers, not "
             "of every business scenario the text holds."]
    for g in report.generators:
        p = g.pooled
        lines += ["", f"generator `{g.generator}`: {p.probes} judged probe(s)"
                  + (f", {g.not_judged} not judged (left out)" if g.not_judged else "")]
        lines.append(f"  pooled: {percent_text(p.coverage)} ({p.covered}/{p.probes}); SE {_se(p.se)} (iid); Wilson "
                     f"{conf} {_bounds(p.wilson)}; bootstrap {_bounds(p.bootstrap)}")
        over = (f"{p.clusters} cluster(s)" if p.clustered_by == "cluster" else
                f"{p.clusters} source unit(s) (no probe names a cluster)")
        lines.append(f"  cluster bootstrap over {over}: {_bounds(p.cluster_bootstrap)}"
                     + (" (too few clusters to trust: it may be narrower than the iid one)" if p.few_clusters else ""))
        lines += _stratified_lines(g.stratified, conf, "  ")
        shown = g.units if units_shown is None else g.units[:units_shown]
        lines.append(f"  {'unit':<24} {'probes':>6} {'covered':>7}  coverage  Wilson {conf}")
        for u in shown:
            extra = f"  ({u.not_judged} not judged)" if u.not_judged else ""
            lines.append(f"  {u.unit:<24} {u.probes:>6} {u.covered:>7}  {percent_text(u.coverage):>8}  "
                         f"{_bounds(u.wilson)}{extra}")
        if len(shown) < len(g.units):
            lines.append(f"  ... {len(g.units) - len(shown)} more unit(s) (--format json lists all)")
    if report.leave_one_generator_out:
        lines += ["", "leave-one-generator-out (the test set measured by the other generators' probes):"]
        for h in report.leave_one_generator_out:
            mark = "  <- the test set's generator" if h.generator == report.candidates_from else ""
            gap = "n/a" if h.difference is None else f"{h.difference * 100:+.1f} points"
            lines.append(f"  without `{h.generator}`: {percent_text(h.others.coverage)} {_bounds(h.others.bootstrap)}"
                         f" over {h.others.units} unit(s); on its own probes {percent_text(h.own)} ({gap}){mark}")
    for note in report.notes:
        lines.append(f"note: {note}")
    return "\n".join(lines) + "\n"
