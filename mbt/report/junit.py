"""JUnit XML: a testsuite per model with a testcase per element; goldens' contradictions and the gate as failures."""

from __future__ import annotations

import re
from xml.sax.saxutils import escape, quoteattr

from mbt.analysis.findings import CheckReport
from mbt.measure.coverage import CoverageReport

# XML 1.0 cannot carry most control characters, even escaped: drop them (they can come from golden text).
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _t(text: object) -> str:
    return escape(_INVALID_XML.sub("", str(text)))


def _a(text: object) -> str:
    return quoteattr(_INVALID_XML.sub("", str(text)).replace("\n", " "))


def coverage_junit(report: CoverageReport) -> str:
    """Covered (verified) elements pass; an uncovered element of an alarm criterion (forbidden) fails; a waived one is skipped with the
    waiver's reason; other uncovered elements are skipped as "not covered" (not tested is not passed)."""
    gate = report.gate
    waivers = report.waived()
    suites = []
    totals = [0, 0, 0]  # tests, failures, skipped
    for m in report.models:
        cases = []
        failures = skipped = 0
        alarms = m.alarm_criteria()  # the criteria whose uncovered elements fail (CriterionCoverage.alarm)
        for ec in m.elements:
            e = ec.element
            attrs = f"name={_a(e.id)} classname={_a(f'{m.model}.{e.criterion}')} file={_a(e.location.file)} " \
                    f"line=\"{e.location.line}\""
            body = ""
            waiver = waivers.get((m.model, e.id))
            if not e.feasible:
                body = f"<skipped message={_a('infeasible: ' + (e.reason or ''))}/>"
                skipped += 1
            elif ec.verified_by:
                body = f"<system-out>{_t('verified by ' + ', '.join(ec.verified_by))}</system-out>"
            elif waiver is not None:
                body = f"<skipped message={_a(f'waived until {waiver.expires}: {waiver.reason}')}/>"
                skipped += 1
            elif e.criterion in alarms:
                reached = "exercised but never checked" if ec.exercised_by else "never reached"
                cite = f"\ncites {e.span.describe()}" if e.span else ""
                body = (f"<failure message={_a(f'forbidden behaviour not tested ({reached})')} type=\"uncovered-forbidden\">"
                        f"{_t(e.label + cite)}</failure>")
                failures += 1
            else:
                body = f"<skipped message={_a('not covered: ' + ('exercised, not verified' if ec.exercised_by else 'not reached'))}/>"
                skipped += 1
            cases.append(f"    <testcase {attrs}>{body}</testcase>")
        suites.append((m.model, m.file, len(cases), failures, skipped, cases))
        totals[0] += len(cases)
        totals[1] += failures
        totals[2] += skipped
    golden_cases = []
    for c in report.contradictions:
        golden_cases.append(f"    <testcase name={_a(f'{c.case}: {c.path}')} classname={_a(f'goldens.{c.model}')} "
                            f"file={_a(c.where.rsplit(':', 1)[0])}><failure message={_a(c.message)} "
                            f"type=\"contradiction\">{_t(f'expected {c.expected!r}, the model gives {c.actual!r}')}"
                            f"</failure></testcase>")
    for f in report.forbidden_expected:
        golden_cases.append(f"    <testcase name={_a(f'{f.case}: {f.element}')} classname={_a(f'goldens.{f.model}')} "
                            f"file={_a(f.where.rsplit(':', 1)[0])}><failure message={_a(f.message)} "
                            f"type=\"forbidden-expected\">{_t(f'the forbid is at {f.forbid_at}')}</failure></testcase>")
    for i in report.invalid_cases:
        golden_cases.append(f"    <testcase name={_a(f'{i.file}:{i.line}')} classname=\"goldens.invalid\" "
                            f"file={_a(i.file)} line=\"{i.line}\"><failure message={_a(i.message)} "
                            f"type=\"invalid-case\"/></testcase>")
    if golden_cases:
        n = len(golden_cases)
        suites.append(("goldens", "", n, n, 0, golden_cases))
        totals[0] += n
        totals[1] += n
    if gate is not None:
        gate_cases = [f"    <testcase name={_a(f.rule)} classname=\"gate\"><failure message={_a(f.message)} "
                      f"type=\"gate\">{_t(' '.join(f.elements))}</failure></testcase>" for f in gate.failures]
        if not gate_cases:
            gate_cases = [f"    <testcase name={_a(gate.source or 'default gate')} classname=\"gate\"/>"]
        failed = len(gate.failures)
        suites.append(("gate", gate.source or "", len(gate_cases), failed, 0, gate_cases))
        totals[0] += len(gate_cases)
        totals[1] += failed
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           f'<testsuites name="mbt coverage" tests="{totals[0]}" failures="{totals[1]}" errors="0" '
           f'skipped="{totals[2]}">']
    for name, file, tests, failures, skipped, cases in suites:
        file_attr = f" file={_a(file)}" if file else ""
        out.append(f"  <testsuite name={_a(name)} tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" "
                   f"skipped=\"{skipped}\"{file_attr}>")
        out += cases
        out.append("  </testsuite>")
    out.append("</testsuites>")
    return "\n".join(out) + "\n"


def check_junit(report: CheckReport) -> str:
    """A testcase per finding, its severity as a property: errors fail; warnings pass with their message on
    system-err, infos with theirs on system-out (JUnit has no warning outcome)."""
    cases = []
    failures = 0
    for f in report.findings:
        attrs = f"name={_a(f'{f.code} {f.location}')} classname={_a(f'check.{f.name}')} " \
                f"file={_a(f.location.file)} line=\"{f.location.line}\""
        severity = f"<properties><property name=\"severity\" value={_a(f.severity)}/></properties>"
        if f.severity == "error":
            failures += 1
            cases.append(f"    <testcase {attrs}>{severity}<failure message={_a(f.message)} type={_a(f.code)}/>"
                         "</testcase>")
        elif f.severity == "warning":  # passes, but on stderr (CI viewers show it apart from the infos' stdout)
            cases.append(f"    <testcase {attrs}>{severity}<system-err>{_t('warning: ' + f.message)}</system-err>"
                         "</testcase>")
        else:
            cases.append(f"    <testcase {attrs}>{severity}<system-out>{_t('info: ' + f.message)}</system-out>"
                         "</testcase>")
    if not cases:
        cases.append("    <testcase name=\"no findings\" classname=\"check\"/>")
    n = len(cases)
    return "\n".join(['<?xml version="1.0" encoding="UTF-8"?>',
                      f'<testsuites name="mbt check" tests="{n}" failures="{failures}" errors="0" skipped="0">',
                      f'  <testsuite name="mbt check" tests="{n}" failures="{failures}" errors="0" skipped="0">',
                      *cases, "  </testsuite>", "</testsuites>"]) + "\n"
