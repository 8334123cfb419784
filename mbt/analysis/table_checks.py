"""Static checks of a decision table (`mbt check`): the exact analysis of tables/analysis.py as findings."""

from __future__ import annotations

from mbt.analysis.findings import Check, Finding, check
from mbt.model.common import Location
from mbt.model.table import TableModel, plain, value_text
from mbt.tables.analysis import analyse, masked_reason

# Check(code, name, severity, doc), registered in mbt.analysis.findings.CHECKS; stable, documented with a bad and a
# good example each in docs/checks.md (doc: its first sentence there).
GAP = check("TBL001", "table-gap", "warning",
            "Some inputs match no rule: the table gives no result there (or only the outputs' defaults).")
# the outputs' defaults answer there
GAP_DEFAULT = check("TBL001", "table-gap", "info", GAP.doc)
UNIQUE_OVERLAP = check("TBL002", "unique-overlap", "error",
                       "Under `hit unique` two rules match the same input, so evaluation fails there.")
ANY_CONFLICT = check("TBL003", "any-conflict", "error",
                     "Under `hit any` two rules with different outputs match the same input (rules with equal "
                     "outputs may overlap).")
MASKED = check("TBL004", "masked-rule", "warning",
               "The rule matches some inputs, but on every one of them another rule gives the result: under `first` "
               "an earlier rule, under `priority` a rule with a higher-priority output; under `unique` (`any`) every "
               "input it matches also matches another rule (with different outputs), so evaluation fails wherever it "
               "matches.")
DUPLICATE = check("TBL005", "duplicate-rules", "warning",
                  "Two rules match exactly the same inputs (the message says whether their outputs agree): one of "
                  "them is redundant or the two contradict each other.")
SUBSUMED = check("TBL006", "subsumed-rule", "warning",
                 "Under `unique`, `any` or `priority`, every input the rule matches is matched by another rule with "
                 "the same outputs: the rule can be removed without changing any result. (Under `first` such a rule "
                 "is reported as masked.)")
NEVER_MATCHES = check("TBL007", "rule-never-matches", "error",
                      "An entry holds for no value of its column's domain, so the rule never matches.")
OUTSIDE_DOMAIN = check("TBL008", "entry-outside-domain", "warning",
                       "A constant of an entry lies outside the column's declared range: the entry reaches values "
                       "the input can never take (`[100..150]` on `integer [0..120]`).")
FINER_THAN_PRECISION = check("TBL009", "entry-finer-than-precision", "warning",
                             "A constant is not a multiple of the column's precision: `< 10.005` on `number "
                             "precision 0.01` cannot be told apart from `<= 10` by any input, which usually means a "
                             "typo or a wrong precision.")
INCOMPLETE = check("TBL010", "analysis-incomplete", "info",
                   "The analysis shows only part of what it found, or could not settle a question: the table has "
                   "more gap regions than the 20 listed (TBL001; fill those, or add defaults, and check again), or "
                   "the solver could not decide within its time limit whether the table is complete or whether a "
                   "rule can give the result.")  # more gaps than listed, or a question the solver left open

REPLAY_FAILED = " (the witness did not replay on mbt's evaluator; this is an mbt bug, please report it)"


def finding(kind: Check, location: Location, message: str, model: TableModel,
            related: list[Location] | None = None, witness: dict | None = None) -> Finding:
    code, name, severity = kind.code, kind.name, kind.severity
    return Finding(code=code, name=name, severity=severity, location=location, message=message, model=model.name,
                   related=related or [], witness=witness)


def witness_of(model: TableModel, values: tuple) -> dict:
    return {c.name: plain(v) for c, v in zip(model.inputs, values)}


def check_table(model: TableModel) -> list[Finding]:
    a = analyse(model)
    p, rules, out = a.partition, model.rules, []
    defaults = model.defaults_when_nothing_matches  # as the evaluator answers a gap, under every hit policy
    for gap in a.gaps:
        fallback = "; the outputs' defaults apply there" if defaults else "; the table gives no result there"
        out.append(finding(GAP_DEFAULT if defaults else GAP, model.loc,
                           f"gap in table `{model.name}`: no rule matches {p.describe(gap.masks)}{fallback}"
                           + ("" if gap.replayed else REPLAY_FAILED),
                           model, witness=witness_of(model, gap.witness)))
    if a.gaps and not a.gap_count_exact:
        out.append(finding(INCOMPLETE, model.loc, f"table `{model.name}` has more gap regions than the "
                                                      f"{len(a.gaps)} listed", model))
    elif a.gap_count > len(a.gaps):
        out.append(finding(INCOMPLETE, model.loc, f"table `{model.name}` has {a.gap_count} gap regions; the "
                                                      f"first {len(a.gaps)} are listed", model))
    if a.overlap_count > len(a.overlaps):
        out.append(finding(INCOMPLETE, model.loc, f"table `{model.name}` has {a.overlap_count} overlapping rule pairs; "
                                                  f"the first {len(a.overlaps)} are listed", model))
    for question in a.undecided:
        out.append(finding(INCOMPLETE, model.loc, f"table `{model.name}`: the solver could not decide {question} in "
                                                 "time; nothing is claimed about it", model))
    for o in a.overlaps:
        first, second = rules[o.first], rules[o.second]
        if model.hit == "UNIQUE":
            message = (f"rules {first.name} and {second.name} overlap, but the hit policy is UNIQUE: both match "
                       f"{p.describe(tuple(x & y for x, y in zip(p.rule_masks[o.first], p.rule_masks[o.second])))}")
            kind = UNIQUE_OVERLAP
        else:
            message = (f"rules {first.name} and {second.name} overlap with different outputs "
                       f"({_outputs(first)} vs {_outputs(second)}), but the hit policy is ANY")
            kind = ANY_CONFLICT
        out.append(finding(kind, second.loc, message + ("" if o.replayed else REPLAY_FAILED), model,
                           [first.loc], witness_of(model, o.witness)))
    for m in a.masked:
        rule = rules[m.rule]
        out.append(finding(MASKED, rule.loc, f"rule {rule.name} can never give the result: "
                                             f"{masked_reason(model, m)}" + ("" if m.replayed else REPLAY_FAILED),
                           model, [rules[i].loc for i in m.by[:5]], witness_of(model, m.witness)))
    for original_index, duplicate_index in a.duplicates:
        original, duplicate = rules[original_index], rules[duplicate_index]
        same = original.outputs == duplicate.outputs
        what = "the same outputs" if same else f"different outputs ({_outputs(original)} vs {_outputs(duplicate)})"
        message = f"rule {duplicate.name} matches exactly the inputs of rule {original.name}, with {what}"
        out.append(finding(DUPLICATE, duplicate.loc, message, model, [original.loc]))
    for rule_index, by in a.subsumed:
        rule, big = rules[rule_index], rules[by]
        out.append(finding(SUBSUMED, rule.loc, f"rule {rule.name} is subsumed by rule {big.name}: every input it "
                                               f"matches, {big.name} matches too, with the same outputs; it can be "
                                               "removed", model, [big.loc]))
    for i, k in a.never_matches.items():
        rule, column = rules[i], model.inputs[k]
        entry = rule.entries[k]
        out.append(finding(NEVER_MATCHES, entry.loc or rule.loc,
                           f"rule {rule.name} never matches: its entry `{entry.text()}` for `{column.name}` holds for "
                           f"no value of {column.type.text()}", model))
    for issue in a.domain:
        rule, column = rules[issue.rule], model.inputs[issue.column]
        test = rule.entries[issue.column].tests[issue.test]
        where = test.loc or rule.loc
        if issue.kind == "outside":
            message = (f"rule {rule.name}: {value_text(issue.value)} in `{test.text()}` is outside the domain of "
                       f"`{column.name}` ({column.type.text()})")
            out.append(finding(OUTSIDE_DOMAIN, where, message, model))
        else:
            out.append(finding(FINER_THAN_PRECISION, where,
                               f"rule {rule.name}: {value_text(issue.value)} in `{test.text()}` is finer than the "
                               f"precision {column.type.precision} of `{column.name}`", model))
    return out


def _outputs(rule) -> str:
    return ", ".join("-" if v is None else value_text(v) for v in rule.outputs)
