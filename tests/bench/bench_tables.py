"""Benchmark: decision-table analysis and evaluation at scale; prints figures beside their targets (never asserts).

    python tests/bench/bench_tables.py             # 1,000 rules over 10 inputs, 100,000 decision cases
    python tests/bench/bench_tables.py --quick     # 200 rules, 10,000 cases: a smoke run

The synthetic table mixes integer, number (precision 0.01) and enumerated string columns; rules are drawn at random
(seeded) with `-`, comparisons, ranges and value lists, so they overlap, leave gaps and mask each other like a
real table grown by many hands. The analysis (gaps + overlaps + masked rules + duplicates) is the interval sweep of
mbt/tables/analysis.py; for comparison the overlaps are also decided pairwise with z3 on a sample of rule pairs.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from decimal import Decimal
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))  # run from a checkout without installing

from mbt.engine.table import TableEvaluator  # noqa: E402
from mbt.model.table import value_text  # noqa: E402
from mbt.parsing.loader import parse_text  # noqa: E402
from mbt.tables.analysis import Analyser  # noqa: E402
from mbt.tables.regions import IndexedTable  # noqa: E402
from mbt.tables.values import coerce  # noqa: E402

FULL = (1000, 10, 100_000)
QUICK = (200, 10, 10_000)
TARGET_ANALYSIS_SECONDS = 10.0
OUTPUTS = ('"reject"', '"review"', '"approve"')


def columns(n_inputs: int) -> list[tuple[str, str, object]]:
    """(name, DSL type, generator of one entry) for each input: integers, amounts at 0.01, enumerations."""
    out = []
    for k in range(n_inputs):
        kind = ("integer", "amount", "enum")[k % 3]
        if kind == "integer":
            out.append((f"i{k}", "integer [0..1000]", kind))
        elif kind == "amount":
            out.append((f"a{k}", "number precision 0.01 [0..100000]", kind))
        else:
            values = [f"v{j}" for j in range(8)]
            out.append((f"s{k}", "string {" + ", ".join(value_text(v) for v in values) + "}", kind))
    return out


def entry(rng: random.Random, kind: str) -> str:
    if kind == "enum":
        picked = rng.sample([f"v{j}" for j in range(8)], rng.randint(1, 3))
        text = ", ".join(value_text(v) for v in picked)
        return f"not({text})" if rng.random() < 0.15 else text
    hi = 1000 if kind == "integer" else 100000
    a, b = sorted(rng.randint(0, hi) for _ in range(2))
    if kind == "amount":
        a, b = Decimal(a) / 100 * rng.choice((1, 100)), Decimal(b) / 100 * rng.choice((1, 100))
        a, b = sorted((a.quantize(Decimal("0.01")), b.quantize(Decimal("0.01"))))
    shape = rng.random()
    if shape < 0.3:
        return f"< {b}"
    if shape < 0.6:
        return f">= {a}"
    return f"[{a}..{b}]" if a < b else f"{a}"


def table_text(n_rules: int, n_inputs: int, hit: str, seed: int = 7) -> str:
    rng = random.Random(seed)
    cols = columns(n_inputs)
    lines = ["table synth {", f"  hit {hit}"]
    lines += [f"  input {name}: {dsl}" for name, dsl, _ in cols]
    lines.append('  output decision: string {"reject", "review", "approve"}')
    lines.append("  output limit: integer")
    outputs = ['"reject"', '"review"', '"approve"']
    for r in range(n_rules):
        # Like a real table, each rule constrains a few columns (2 to 5) and leaves the others `-`.
        constrained = set(rng.sample(range(n_inputs), rng.randint(2, 5)))
        cells = " | ".join(entry(rng, kind) if k in constrained else "-" for k, (_, _, kind) in enumerate(cols))
        lines.append(f"  rule r{r + 1}: {cells} -> {rng.choice(outputs)} | {rng.randint(0, 5) * 100}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def tree_table_text(n_rules: int, n_inputs: int, hit: str, seed: int = 5) -> str:
    """A table grown like a real one: the domain split again and again (a decision tree, each leaf a rule), then
    damaged a little: 1% of the leaves removed (gaps), 1% widened on one column (overlaps), 1% copied to the
    end (masked under FIRST, duplicates)."""
    rng = random.Random(seed)
    cols = columns(n_inputs)
    full = []
    for _, _, kind in cols:
        if kind == "integer":
            full.append(("num", 0, 1001))  # [lo, hi)
        elif kind == "amount":
            full.append(("num", 0, 10_000_001))  # cents
        else:
            full.append(("set", tuple(f"v{j}" for j in range(8))))
    leaves = [tuple(full)]
    while len(leaves) < n_rules:
        i = max(range(len(leaves)), key=lambda j: (rng.random() * _volume(leaves[j], full), j))
        box = leaves.pop(i)
        for _ in range(20):
            k = rng.randrange(n_inputs)
            part = box[k]
            if part[0] == "num" and part[2] - part[1] >= 2:
                cut = rng.randint(part[1] + 1, part[2] - 1)
                a, b = ("num", part[1], cut), ("num", cut, part[2])
                break
            if part[0] == "set" and len(part[1]) >= 2:
                values = list(part[1])
                rng.shuffle(values)
                split = rng.randint(1, len(values) - 1)
                a, b = ("set", tuple(sorted(values[:split]))), ("set", tuple(sorted(values[split:])))
                break
        else:
            leaves.append(box)
            continue
        leaves.append(box[:k] + (a,) + box[k + 1:])
        leaves.append(box[:k] + (b,) + box[k + 1:])
    rng.shuffle(leaves)
    removed = set(rng.sample(range(len(leaves)), len(leaves) // 100))
    rows = [leaf for i, leaf in enumerate(leaves) if i not in removed]
    for i in rng.sample(range(len(rows)), len(rows) // 100):
        k = rng.randrange(n_inputs)
        rows[i] = rows[i][:k] + (full[k],) + rows[i][k + 1:]
    rows += [rows[i] for i in rng.sample(range(len(rows)), len(rows) // 100)]
    lines = ["table synth {", f"  hit {hit}"]
    lines += [f"  input {name}: {dsl}" for name, dsl, _ in cols]
    lines.append('  output decision: string {"reject", "review", "approve"}')
    lines.append("  output limit: integer")
    for r, row in enumerate(rows):
        cells = " | ".join(_cell(part, whole, kind) for part, whole, (_, _, kind) in zip(row, full, cols))
        decision = rng.choice(OUTPUTS)
        lines.append(f"  rule r{r + 1}: {cells} -> {decision} | {rng.randint(0, 5) * 100}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _volume(box, full) -> float:
    v = 1.0
    for part, whole in zip(box, full):
        v *= (part[2] - part[1]) / (whole[2] - whole[1]) if part[0] == "num" else len(part[1]) / len(whole[1])
    return v


def _cell(part, whole, kind: str) -> str:
    if part == whole:
        return "-"
    if part[0] == "set":
        return ", ".join(value_text(v) for v in part[1])
    lo, hi = part[1], part[2]
    if kind == "amount":
        lo, hi = Decimal(lo) / 100, Decimal(hi) / 100
    return f"[{lo}..{hi})"


def cases(model, n: int, seed: int = 11) -> list[tuple]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        row = []
        for column in model.inputs:
            t = column.type
            if t.kind == "integer":
                raw = rng.randint(0, 1000)
            elif t.kind == "number":
                raw = rng.randint(0, 10_000_000) / 100
            else:
                raw = rng.choice(t.values)
            row.append(coerce(raw, t))
        out.append(tuple(row))
    return out


def timed(func, *args):
    start = time.perf_counter()
    result = func(*args)
    return result, time.perf_counter() - start


def z3_pairwise(model, pairs: list[tuple[int, int]]) -> tuple[int, float]:
    """Overlap of rule pairs decided by z3 (one query per pair): the solver approach, for comparison."""
    import z3

    start = time.perf_counter()
    symbols = []
    for c in model.inputs:
        if c.type.kind == "string":
            symbols.append(z3.Int(c.name))  # value index
        elif c.type.kind == "integer":
            symbols.append(z3.Int(c.name))
        else:
            symbols.append(z3.Int(c.name))  # cents
    def encode(entry, k):
        c, x = model.inputs[k], symbols[k]
        scale = 100 if c.type.kind == "number" else 1
        def num(v):
            return int(Decimal(v) * scale)
        parts = []
        for t in entry.tests:
            if c.type.kind == "string":
                parts.append(x == c.type.values.index(t.value))
            elif t.op == "=":
                parts.append(x == num(t.value))
            elif t.op == "range":
                lo = x >= num(t.lo) if t.lo_closed else x > num(t.lo)
                hi = x <= num(t.hi) if t.hi_closed else x < num(t.hi)
                parts.append(z3.And(lo, hi))
            else:
                parts.append({"<": x < num(t.value), "<=": x <= num(t.value), ">": x > num(t.value),
                              ">=": x >= num(t.value)}[t.op])
        if not parts:
            return z3.BoolVal(True)
        formula = z3.Or(*parts)
        return z3.Not(formula) if entry.negated else formula
    domain = []
    for k, c in enumerate(model.inputs):
        x = symbols[k]
        if c.type.kind == "string":
            domain.append(z3.And(x >= 0, x < len(c.type.values)))
        else:
            scale = 100 if c.type.kind == "number" else 1
            domain.append(z3.And(x >= int(c.type.lo * scale), x <= int(c.type.hi * scale)))
    overlapping = 0
    for i, j in pairs:
        s = z3.Solver()
        s.add(*domain)
        for k in range(len(model.inputs)):
            s.add(encode(model.rules[i].entries[k], k), encode(model.rules[j].entries[k], k))
        if s.check() == z3.sat:
            overlapping += 1
    return overlapping, time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a small run for CI")
    args = ap.parse_args()
    n_rules, n_inputs, n_cases = QUICK if args.quick else FULL
    print(f"mbt decision-table benchmark: {n_rules:,} rules over {n_inputs} inputs "
          f"(integers, amounts at 0.01, 8-value enumerations), {n_cases:,} decision cases")
    shapes = (("tree", "grown by splitting the domain, 1% of rules removed, widened, copied", tree_table_text),
              ("random", "every rule drawn at random (a stress case: most rules overlap and mask each other)",
               table_text))
    for shape, description, make in shapes:
        print(f"\n{shape} table: {description}")
        for hit in ("first", "unique"):
            text = make(n_rules, n_inputs, hit)
            files, parse_s = timed(parse_text, text, f"synth-{shape}-{hit}.dt")
            model = files.models[0]
            analysis, analysis_s = timed(lambda model=model: Analyser(model).run())
            gaps = f"{analysis.gap_count:,}" if analysis.gap_count_exact else f"more than {analysis.gap_count:,}"
            print(f"  hit {hit}: {len(model.rules):,} rules; parse {parse_s:.2f} s; analysis (gaps + overlaps + masked "
                  f"+ duplicates + domain) {analysis_s:.2f} s (target < {TARGET_ANALYSIS_SECONDS:.0f} s)")
            print(f"    {gaps} gap regions, {analysis.overlap_count:,} overlap findings "
                  f"({len(analysis.overlaps)} described), {len(analysis.masked):,} "
                  f"masked rules, {len(analysis.duplicates):,} duplicates, {len(analysis.never_matches):,} never "
                  f"matching; {sum(len(c.regions) for c in analysis.partition.columns):,} regions over {n_inputs} "
                  f"columns; {len(analysis.undecided)} undecided")
            if shape == "tree" and hit == "first":
                evaluation(model, analysis, n_cases)
            if hit == "unique":
                pairs = [(i, j) for i in range(0, len(model.rules), max(1, len(model.rules) // 40))
                         for j in range(i + 1, min(len(model.rules), i + 26))]
                found, z3_s = z3_pairwise(model, pairs)
                sweep_found = sum(1 for i, j in pairs if regions_overlap(analysis, i, j))
                total = len(model.rules) * (len(model.rules) - 1) // 2
                print(f"    z3, one query per rule pair, on {len(pairs):,} pairs: {z3_s:.2f} s ({found} overlap; the "
                      f"region sets agree: {found == sweep_found}); all {total:,} pairs would take about "
                      f"{z3_s / len(pairs) * total:,.0f} s")


def evaluation(model, analysis, n_cases: int) -> None:
    inputs = cases(model, n_cases)
    plain = TableEvaluator(model)
    sample = inputs[: max(1, n_cases // 20)]
    plain_decisions, plain_s = timed(lambda: [plain.decide(v) for v in sample])
    indexed = IndexedTable(model, analysis.partition)
    decisions, indexed_s = timed(lambda: [indexed.decide(v) for v in inputs])
    agree = all(p.matched == d.matched and p.result == d.result for p, d in zip(plain_decisions, decisions))
    print(f"    evaluation: {n_cases / indexed_s:,.0f} decisions/s by region index ({indexed_s:.2f} s for "
          f"{n_cases:,}); {len(sample) / plain_s:,.0f} decisions/s rule by rule; both agree on {len(sample):,} "
          f"cases: {agree}")


def regions_overlap(analysis, i: int, j: int) -> bool:
    p = analysis.partition
    return all(a & b for a, b in zip(p.rule_masks[i], p.rule_masks[j]))


if __name__ == "__main__":
    main()
