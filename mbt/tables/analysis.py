"""Exact analysis of a decision table over its declared domain: gaps, overlaps, rules that can never contribute,
duplicates, subsumed rules, rules that never match, entries outside the domain or finer than the precision.

A rule is a product of per-column region sets (tables/regions.py), so every question is decided exactly with set
operations on bitmasks. Gaps are found with a sweep over the columns in the manner of Calvanese et al.: at each
column the regions are grouped by the set of rules still matching, a group no rule matches is a gap (a box: the
regions fixed so far, this group, anything after), and the other groups are swept on the next column; a subspace
that some rule matches whole is settled at once. Whether a rule is masked (under FIRST, PRIORITY, UNIQUE or ANY, no
input lets it give the result) is the same sweep inside the rule's own box, over the rules that beat it there.
A sweep that would take long (many rules competing, many subspaces) hands its question to z3 as a SAT problem over
region choices: for a masked rule, "is some cell of its box left to it", asked of one incremental problem per table
in which every rule is encoded once behind an assumption literal (a table of a thousand rules asks it hundreds of
times, in a z3 context of its own; for gaps, a cell no rule matches, widened into the largest box no rule touches,
then excluded, until 20 are listed or none is left.

Every witness (a concrete input inside a gap, an overlap, a masked rule) is evaluated by the reference evaluator
(engine/table.py) before it is reported; `replayed` says whether it behaved as claimed.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from mbt.engine.table import TableEvaluator, priority_key
from mbt.model.table import TableModel
from mbt.tables.regions import TablePartition

MAX_GAPS = 20  # gap boxes described per table (beyond them, TBL010 says there are more)
MAX_OVERLAPS = 200  # overlapping pairs described per table; all are counted
SWEEP_BUDGET = 2_000  # subproblems one sweep may open before the SAT solver decides instead
SOLVER_TIMEOUT_MS = 20_000
MASKED_SWEEP_BUDGET = 200  # a masked-rule question is small: past this, the solver answers it
MASKED_SWEEP_RULES = 40  # ... and with more rules competing than this, the solver answers it at once


class _OutOfBudget(Exception):
    pass


def runs(mask: int) -> list[tuple[int, int]]:
    """The maximal runs of consecutive set bits, as (first, last) bit positions."""
    out = []
    while mask:
        low = (mask & -mask).bit_length() - 1
        length = ((mask >> low) ^ ((mask >> low) + 1)).bit_length() - 1
        out.append((low, low + length - 1))
        mask &= ~(((1 << length) - 1) << low)
    return out


def _within(k: int, mask: int) -> str:
    """SMT-LIB text: region variable r{k} takes one of the regions of `mask` (written as text: z3 parses it far
    faster than the Python API builds the same terms one by one)."""
    parts = [f"(= r{k} {a})" if a == b else f"(and (>= r{k} {a}) (<= r{k} {b}))" for a, b in runs(mask)]
    return parts[0] if len(parts) == 1 else "(or " + " ".join(parts) + ")"


def _any(parts: list[str]) -> str:
    return "false" if not parts else parts[0] if len(parts) == 1 else "(or " + " ".join(parts) + ")"


class Undecided(Exception):
    """The SAT solver gave up (timeout): nothing is claimed either way."""


def bits(mask: int):
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


@functools.lru_cache(maxsize=1 << 16)
def bit_list(mask: int) -> tuple[int, ...]:
    """bits(mask) as a tuple, kept: the same rule masks are taken apart again and again."""
    return tuple(bits(mask))


@dataclass
class Gap:
    masks: tuple[int, ...]
    witness: tuple
    replayed: bool


@dataclass
class Overlap:
    first: int
    second: int
    witness: tuple
    replayed: bool
    same_outputs: bool


@dataclass
class Masked:
    rule: int
    by: list[int]  # the rules that take its place (those overlapping it, in rule order)
    witness: tuple
    replayed: bool


@dataclass
class DomainIssue:
    rule: int
    column: int
    test: int  # index of the test in the entry
    value: Any
    kind: str  # "outside" | "precision"


@dataclass
class TableAnalysis:
    partition: TablePartition
    never_matches: dict[int, int] = field(default_factory=dict)  # rule -> first column whose entry matches nothing
    gaps: list[Gap] = field(default_factory=list)
    gap_count: int = 0
    gap_count_exact: bool = True  # False: the sweep stopped early; gap_count is a lower bound
    undecided: list[str] = field(default_factory=list)  # questions the solver could not settle in time
    overlaps: list[Overlap] = field(default_factory=list)
    overlap_count: int = 0  # all of them; the first MAX_OVERLAPS are described
    masked: list[Masked] = field(default_factory=list)
    duplicates: list[tuple[int, int]] = field(default_factory=list)  # (first, later)
    subsumed: list[tuple[int, int]] = field(default_factory=list)  # (rule, the rule that contains it)
    domain: list[DomainIssue] = field(default_factory=list)

    def infeasible_rules(self) -> dict[int, str]:
        """Rules no input can make contribute to the result, with the reason."""
        model = self.partition.model
        out = {i: f"its entry for `{model.inputs[k].name}` matches no value of the domain"
               for i, k in self.never_matches.items()}
        for m in self.masked:
            out.setdefault(m.rule, masked_reason(model, m))
        return out


def masked_reason(model: TableModel, m: Masked) -> str:
    names = ", ".join(model.rules[i].name for i in m.by[:5]) + (" ..." if len(m.by) > 5 else "")
    return {
        "FIRST": f"every input it matches is matched by an earlier rule first ({names})",
        "PRIORITY": f"every input it matches is matched by a rule of higher priority ({names})",
        "UNIQUE": f"every input it matches also matches another rule ({names}), so UNIQUE fails there",
        "ANY": f"every input it matches also matches a rule with different outputs ({names}), so ANY fails there",
    }[model.hit]


class Analyser:
    def __init__(self, model: TableModel):
        self.model = model
        self.p = TablePartition(model)
        self.evaluator = TableEvaluator(model)
        self.n = len(model.inputs)
        self._cover_cache: dict[tuple[int, int], int] = {}
        self._rng = random.Random(0)  # sample points for `covered`; seeded, so every run decides alike
        self._escape: tuple | None = None  # the incremental problem of `escapes`, built on first use
        self._column_cache: dict[tuple[int, int], int] = {}  # (column, region set) -> the rules containing it
        self._boxes = 0

    # ---- the sweep
    def column_cover(self, box: tuple[int, ...]) -> list[int]:
        """Per column, the rules whose entry contains the box's whole region set on that column."""
        per_column = []
        cache = self._column_cache
        for k, m in enumerate(box):
            rules = cache.get((k, m))
            if rules is None:
                rules = self.p.all_rules
                per_region = self.p.region_rules[k]
                for r in bit_list(m):
                    rules &= per_region[r]
                    if not rules:
                        break
                cache[(k, m)] = rules
            per_column.append(rules)
        return per_column

    def sweep(self, box: tuple[int, ...], active: int, limit: int, first_only: bool = False,
              budget: int = SWEEP_BUDGET) -> tuple[int, list, bool]:
        """The parts of `box` that no rule of `active` matches: (number of gap boxes, the first `limit` found,
        whether the sweep finished). A sweep stops early after `budget` subproblems or once `limit` gaps are found;
        it then lists only gaps it proved, and its count is a lower bound.

        The columns are split in order; a subproblem is (column, rules still matching): every rule in it contains
        the regions fixed on the columns before, so the pair decides the answer and is memoised. A subproblem that
        one of its rules contains whole (on every remaining column) is covered at once.
        """
        per_column = self.column_cover(box)
        n = self.n
        tail = [self.p.all_rules] * (n + 1)
        for k in range(n - 1, -1, -1):
            tail[k] = tail[k + 1] & per_column[k]
        memo: dict[tuple[int, int], int] = {}
        # Per column, the box's regions merged into classes the rules of `active` cannot tell apart.
        classes: list[list[tuple[int, int]]] = []
        for k, m in enumerate(box):
            merged: dict[int, int] = {}
            per_region = self.p.region_rules[k]
            for r in bit_list(m):
                rules = per_region[r] & active
                merged[rules] = merged.get(rules, 0) | (1 << r)
            classes.append([(regions, rules) for rules, regions in merged.items()])
        found: list[tuple[int, ...]] = []
        path: list[int] = []
        spent = 0

        def go(k: int, active: int) -> int:
            nonlocal spent
            if k == n or active & tail[k]:
                return 0  # some rule matches this whole subspace
            key = (k, active)
            if key in memo:
                return memo[key]
            spent += 1
            if spent > budget:
                raise _OutOfBudget
            groups: dict[int, int] = {}
            for regions, rules in classes[k]:
                sub = active & rules
                groups[sub] = groups.get(sub, 0) | regions
            count = 0
            for sub, regions in groups.items():
                if sub == 0:
                    count += 1
                    found.append((*path, regions, *box[k + 1:]))
                    if len(found) >= limit and not first_only:
                        raise _OutOfBudget  # enough to show: the count is then a lower bound
                else:
                    path.append(regions)
                    count += go(k + 1, sub)
                    path.pop()
                if first_only and count:
                    break
            memo[key] = count
            return count

        if not active:
            return 1, [box], True
        try:
            return go(0, active), found, True
        except _OutOfBudget:
            return len(found), found, False

    def covered(self, box: tuple[int, ...], active: int) -> int:
        """The rules of `active` that together match every input of `box` (one rule when one alone does, else
        all of them), or 0 when some input of the box escapes them.

        Cheap answers first: one rule containing the whole box settles it (a subsumed rule); an input of the box
        that none of them matches refutes it (tried at a few deterministic sample points); only what remains is
        swept exactly.
        """
        whole = active
        for rules in self.column_cover(box):
            whole &= rules
        if whole:
            return whole & -whole  # the first rule that contains the whole box
        rng = self._rng
        choices = [bit_list(m) for m in box]
        region_rules = self.p.region_rules
        for attempt in range(24):
            hit = active
            for k, regions in enumerate(choices):
                r = regions[0] if attempt == 0 else regions[-1] if attempt == 1 else rng.choice(regions)
                hit &= region_rules[k][r]
                if not hit:
                    return 0
        if active.bit_count() <= MASKED_SWEEP_RULES:  # past that, the sweep rarely ends within its budget
            count, _, finished = self.sweep(box, active, 1, first_only=True, budget=MASKED_SWEEP_BUDGET)
            if finished or count:
                return active if count == 0 else 0
        return 0 if self.escapes(box, active) else active

    def escapes(self, box: tuple[int, ...], active: int) -> bool:
        """Whether some cell of `box` lies in no rule of `active`: uncovered_cell's question answered yes or no, on
        one incremental z3 problem for the whole table. Every rule is encoded once, behind a literal that says "the
        cell leaves this rule"; a question assumes its rules' literals and its box's, so z3 neither parses a problem
        per rule nor forgets what it learnt about the others. `Undecided` when z3 gives up."""
        import z3  # slow to load, and needed only for what the region sweep leaves open

        if self._escape is None:
            lines = [f"(declare-const r{k} Int)" for k in range(self.n)]
            lines += [f"(assert (and (>= r{k} 0) (< r{k} {len(col.regions)})))" for k, col in enumerate(self.p.columns)]
            for i, masks in enumerate(self.p.rule_masks):
                outside = [_within(k, c.all_mask & ~m) for k, (c, m) in enumerate(zip(self.p.columns, masks))
                           if c.all_mask & ~m]
                lines.append(f"(declare-const out{i} Bool)")
                lines.append(f"(assert (=> out{i} {_any(outside)}))")
            # A context of its own: what z3 holds in the shared one changes the cells uncovered_cell picks for gaps,
            # so this problem leaves it as it was.
            context = z3.Context()
            solver = z3.Solver(ctx=context)
            solver.set("timeout", SOLVER_TIMEOUT_MS)
            solver.from_string("\n".join(lines))
            leaves = [z3.Bool(f"out{i}", context) for i in range(len(self.p.rule_masks))]
            # The literals' raw pointers, kept with the terms that own them: see the check below.
            self._escape = (solver, leaves, [leaf.as_ast() for leaf in leaves], context)
        solver, _, raw, context = self._escape
        self._boxes += 1
        name = f"box{self._boxes}"
        solver.from_string(f"(declare-const {name} Bool)\n(assert (=> {name} (and "
                           + " ".join(_within(k, m) for k, m in enumerate(box)) + " true)))")
        # Solver.check(*assumptions) casts and sort-checks every assumption in Python, which cost several times the
        # solving itself (hundreds of literals per question); these are Boolean constants by construction, so their
        # pointers go to z3's C API as they are.
        literal = z3.Bool(name, context)  # held until the check: it owns its pointer
        assumptions = [literal.as_ast()] + [raw[i] for i in bits(active)]
        verdict = z3.CheckSatResult(z3.Z3_solver_check_assumptions(
            context.ref(), solver.solver, len(assumptions), (z3.Ast * len(assumptions))(*assumptions)))
        if verdict == z3.unknown:
            raise Undecided
        return verdict == z3.sat

    def uncovered_cell(self, box: tuple[int, ...], active: int,
                       blocked: Sequence[tuple[int, ...]] = ()) -> tuple[int, ...] | None:
        """A cell of `box` (one region per column) that no rule of `active` matches and that lies in none of the
        `blocked` boxes, decided by z3 as a SAT problem (the region chosen per column; per rule or blocked box, a
        clause saying the cell leaves it on some column). None when there is none; `Undecided` when z3 gives up."""
        import z3  # slow to load, and needed only for what the region sweep leaves open

        within = _within
        lines = [f"(declare-const r{k} Int)" for k in range(self.n)]
        lines += [f"(assert {within(k, m)})" for k, m in enumerate(box)]
        for masks in [self.p.rule_masks[i] for i in bits(active)] + list(blocked):
            outside = [within(k, box[k] & ~m) for k, m in enumerate(masks) if box[k] & ~m]
            if not outside:
                return None  # this rule (or blocked box) contains the whole box
            lines.append(f"(assert {outside[0] if len(outside) == 1 else '(or ' + ' '.join(outside) + ')'})")
        solver = z3.Solver()
        solver.set("timeout", SOLVER_TIMEOUT_MS)
        solver.from_string("\n".join(lines))
        verdict = solver.check()
        if verdict == z3.unsat:
            return None
        if verdict != z3.sat:
            raise Undecided
        model = solver.model()
        return tuple(1 << model.eval(z3.Int(f"r{k}"), model_completion=True).as_long() for k in range(self.n))

    def grow(self, cell: tuple[int, ...], active: int) -> tuple[int, ...]:
        """The cell widened, column by column, by every region that keeps the box clear of all rules of `active`:
        a box no rule matches anywhere (a box is clear when, on some column, no rule allows any of its regions)."""
        box = list(cell)
        region_rules = self.p.region_rules

        def allowing(k: int, mask: int) -> int:
            rules = 0
            for r in bits(mask):
                rules |= region_rules[k][r]
            return rules

        per_column = [allowing(k, m) & active for k, m in enumerate(box)]
        for k, col in enumerate(self.p.columns):
            others = active
            for j, rules in enumerate(per_column):
                if j != k:
                    others &= rules
            for r in range(len(col.regions)):
                if not box[k] >> r & 1 and not (others & region_rules[k][r]):
                    box[k] |= 1 << r
                    per_column[k] |= region_rules[k][r] & active
        return tuple(box)

    def overlapping(self, i: int) -> int:
        """The rules sharing at least one input with rule i (exact: each column's region sets intersect)."""
        cand = self.p.all_rules & ~(1 << i)
        for k, m in enumerate(self.p.rule_masks[i]):
            key = (k, m)
            cover = self._cover_cache.get(key)
            if cover is None:
                cover = 0
                for r in bits(m):
                    cover |= self.p.region_rules[k][r]
                self._cover_cache[key] = cover
            cand &= cover
            if not cand:
                break
        return cand

    # ---- the analysis
    def run(self) -> TableAnalysis:
        model, p = self.model, self.p
        out = TableAnalysis(p)
        self.domain_issues(out)
        live = 0
        for i, masks in enumerate(p.rule_masks):
            empty = next((k for k, m in enumerate(masks) if m == 0), None)
            if empty is not None:
                out.never_matches[i] = empty
            else:
                live |= 1 << i
        full = tuple(c.all_mask for c in p.columns)
        if model.inputs:
            out.gap_count, boxes, out.gap_count_exact = self.sweep(full, live, MAX_GAPS, budget=SWEEP_BUDGET)
            if not out.gap_count_exact and len(boxes) < MAX_GAPS:
                # The sweep stopped early: z3 finds the other gaps, one cell at a time, each grown into a box.
                try:
                    while len(boxes) < MAX_GAPS:
                        cell = self.uncovered_cell(full, live, boxes)
                        if cell is None:
                            out.gap_count_exact = True  # every gap lies in a listed box
                            break
                        boxes.append(self.grow(cell, live))
                    out.gap_count = len(boxes)
                except Undecided:
                    out.undecided.append("whether some input matches no rule")
            for b in boxes:
                witness = p.point(b)
                out.gaps.append(Gap(b, witness, not self.evaluator.matches(witness)))
        outputs = [tuple(r.outputs) for r in model.rules]
        priority = [(priority_key(model, r), r.index) for r in model.rules]
        overlaps_of = {i: self.overlapping(i) & live for i in bits(live)}
        if model.hit in ("UNIQUE", "ANY"):
            for i, cand in overlaps_of.items():
                for j in bits(cand >> (i + 1) << (i + 1)):  # each pair once: j > i
                    same = outputs[i] == outputs[j]
                    if model.hit == "ANY" and same:
                        continue
                    out.overlap_count += 1
                    if len(out.overlaps) >= MAX_OVERLAPS:
                        continue  # counted, not described: a table with thousands of overlaps needs rework first
                    box = tuple(a & b for a, b in zip(p.rule_masks[i], p.rule_masks[j]))
                    witness = p.point(box)
                    replayed = self.evaluator.rule_matches(i, witness) and self.evaluator.rule_matches(j, witness)
                    out.overlaps.append(Overlap(i, j, witness, replayed, same))
        if model.single_hit:
            for j, cand in overlaps_of.items():
                if model.hit == "FIRST":
                    beaters = cand & ((1 << j) - 1)
                elif model.hit == "PRIORITY":
                    beaters = sum(1 << i for i in bits(cand) if priority[i] < priority[j])
                elif model.hit == "UNIQUE":
                    beaters = cand
                else:
                    beaters = sum(1 << i for i in bits(cand) if outputs[i] != outputs[j])
                try:
                    by = self.covered(p.rule_masks[j], beaters) if beaters else 0
                    if not by:
                        continue
                except Undecided:
                    out.undecided.append(f"whether rule {model.rules[j].name} can give the result")
                    continue
                witness = p.point(p.rule_masks[j])
                decision = self.evaluator.decide(witness)
                out.masked.append(Masked(j, list(bits(by)), witness,
                                         j in decision.matched and j not in decision.contributing))
        self.duplicates_and_subsumed(out, overlaps_of, outputs)
        return out

    def duplicates_and_subsumed(self, out: TableAnalysis, overlaps_of: dict[int, int], outputs: list) -> None:
        p, model = self.p, self.model
        first_with: dict[tuple[int, ...], int] = {}
        # Under COLLECT every matching rule counts (twice counts twice in a sum or a count): duplicates are meant.
        for i in sorted(overlaps_of) if model.hit != "COLLECT" else ():
            masks = p.rule_masks[i]
            if masks in first_with:
                out.duplicates.append((first_with[masks], i))
            else:
                first_with[masks] = i
        if model.hit not in ("UNIQUE", "ANY", "PRIORITY"):
            return  # under FIRST a contained rule is masked (or wins where it is first); multi-hit tables collect all
        duplicated = {j for _, j in out.duplicates} | {m.rule for m in out.masked}  # already said more strongly
        for j, cand in overlaps_of.items():
            if j in duplicated:
                continue
            mj = p.rule_masks[j]
            for i in bits(cand):
                mi = p.rule_masks[i]
                if mi != mj and outputs[i] == outputs[j] and all(a & ~b == 0 for a, b in zip(mj, mi)):
                    out.subsumed.append((j, i))
                    break

    def domain_issues(self, out: TableAnalysis) -> None:
        for i, rule in enumerate(self.model.rules):
            for k, entry in enumerate(rule.entries):
                ctype = self.model.inputs[k].type
                if not ctype.ordered or ctype.values is not None:
                    continue  # listed values are checked when the model is read
                for t, test in enumerate(entry.tests):
                    for value in test.constants():
                        if not ctype.in_range(value):
                            out.domain.append(DomainIssue(i, k, t, value, "outside"))
                        elif not ctype.on_lattice(value):
                            out.domain.append(DomainIssue(i, k, t, value, "precision"))


def analyse(model: TableModel) -> TableAnalysis:
    """The analysis of a table, computed once per model (check, elements and replay share it)."""
    cached = model._cache.get("analysis")
    if cached is None:
        cached = model._cache["analysis"] = Analyser(model).run()
    return cached
