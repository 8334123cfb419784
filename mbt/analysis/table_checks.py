"""Static checks of a decision table (`mbt check`): the exact analysis of tables/analysis.py as findings."""

from __future__ import annotations

from mbt.analysis.findings import Finding
from mbt.model.common import Location
from mbt.model.table import TableModel, plain, value_text
from mbt.tables.analysis import analyse, masked_reason

# (code, name, severity); stable, documented with a bad and a good example each in docs/checks.md.
GAP = ("TBL001", "table-gap", "warning")
GAP_DEFAULT = ("TBL001", "table-gap", "info")  # the outputs' defaults answer there
UNIQUE_OVERLAP = ("TBL002", "unique-overlap", "error")
ANY_CONFLICT = ("TBL003", "any-conflict", "error")
MASKED = ("TBL004", "masked-rule", "warning")
DUPLICATE = ("TBL005", "duplicate-rules", "warning")
SUBSUMED = ("TBL006", "subsumed-rule", "warning")
NEVER_MATCHES = ("TBL007", "rule-never-matches", "error")
OUTSIDE_DOMAIN = ("TBL008", "entry-outside-domain", "warning")
FINER_THAN_PRECISION = ("TBL009", "entry-finer-than-precision", "warning")
INCOMPLETE = ("TBL010", "analysis-incomplete", "info")  # more gaps than listed, or a question the solver left open

REPLAY_FAILED = " (the witness did not replay on mbt's evaluator; this is an mbt bug, please report it)"


def finding(kind: tuple[str, str, str], location: Location, message: str, model: TableModel,
            related: list[Location] | None = None, witness: dict | None = None) -> Finding:
    code, name, severity = kind
    return Finding(code=code, name=name, severity=severity, location=location, message=message, model=model.name,
                   related=related or [], witness=witness)


def witness_of(model: TableModel, values: tuple) -> dict:
    return {c.name: plain(v) for c, v in zip(model.inputs, values)}


def check_table(model: TableModel) -> list[Finding]:
    a = analyse(model)
    p, rules, out = a.partition, model.rules, []
    has_default = any(o.has_default for o in model.outputs)
    for gap in a.gaps:
        fallback = ("; the outputs' defaults apply there" if has_default and model.single_hit
                    else "; the table gives no result there")
        out.append(finding(GAP_DEFAULT if has_default and model.single_hit else GAP, model.loc,
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
