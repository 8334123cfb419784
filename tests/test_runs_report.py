"""`mbt runs` end to end: run metrics and the first-deviation distribution (counted again by the runs judge),
seed 000's release gate unchanged, usage-weighted coverage by brute force, regression goldens and redaction.

The metrics are measured with the model's `say` forbid decided by its phrases alone (`judge="rules"`, the runs
judge's default reading too), so that runs pass; by default its description leaves them not judged
(tests/test_runs_evidence.py)."""

from __future__ import annotations

import glob
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from mbt.api import load_models
from mbt.api import runs as runs_api
from mbt.cli import main
from mbt.kind import support
from mbt.report.jsonout import with_coverage_json
from mbt.runs.reader import read_runs
from mbt.runs.redact import EMAIL, Redaction
from tests.json_report import expanded
from tests.judge import runs as judge

MODEL, RUNS, GOLDENS = "models/orders.fsm", "models/runs", "models/goldens/orders"
SEED_GATE = "models/gates/seed-000-release.yaml"


@pytest.fixture(scope="module")
def report():
    return runs_api([MODEL], [RUNS], [GOLDENS], gate_path=SEED_GATE, judge="rules")


@pytest.fixture(scope="module")
def reference():
    _, models = load_models([MODEL])
    model = models[0]
    elements = support("fsm").enumerate(model)
    severities = {e.id: e.severity.value for e in elements}
    pairs = [(r, judge.judge(model, r)) for r in read_runs([RUNS]).runs]
    return model, elements, severities, pairs


def test_metrics_follow_the_rules(report, reference):
    _, _, severities, pairs = reference
    expected = judge.metrics(pairs, severities)
    m = report.metrics
    got = {k: getattr(m, k) for k in expected}
    assert got == expected
    for suite in {r.suite for r, _ in pairs} - {None}:  # runs that name no suite count only in all runs
        mine = report.suites[suite]
        theirs = judge.metrics([(r, v) for r, v in pairs if r.suite == suite], severities)
        assert {k: getattr(mine, k) for k in theirs} == theirs, suite


def test_first_deviation_distribution(report, reference):
    pairs = reference[3]
    assert report.first_deviations.by_type == dict(sorted(Counter(v.type for _, v in pairs if v.type).items(),
                                                          key=lambda kv: (-kv[1], kv[0])))
    assert sum(report.first_deviations.by_element.values()) == sum(v.type is not None for _, v in pairs)
    assert Counter(v.element or "(no model element)" for _, v in pairs if v.type) == Counter(
        report.first_deviations.by_element)


def test_seed_000_gate_file_is_seed_000s(report):
    shipped = open(SEED_GATE, encoding="utf-8").read()
    for seed in glob.glob("/work/shared/seeds/000_*.txt"):  # where the seeds are at hand: the seed's block as is
        assert shipped.strip() in open(seed, encoding="utf-8").read()
    rules = {f.rule for f in report.gate.failures}
    assert not report.gate.passed
    assert {"required_suites", "critical_failures", "intent_accuracy", "task_completion_rate",
            "escalation_success_rate"} <= rules
    missing = sorted(f.message for f in report.gate.failures if f.rule == "required_suites")
    assert missing == ["required suite `account_recovery` has no judged run",
                       "required suite `grounding_and_hallucination` has no judged run"]
    names = [s.name for s in report.separately]
    assert names == ["fallback_rate", "grounding_failures", "context_failures", "integration_failures",
                     "critical_hallucinations"]
    assert next(s for s in report.separately if s.name == "grounding_failures").value is None  # never invented


def test_gate_thresholds_apply_per_required_suite(tmp_path):
    gate = tmp_path / "g.yaml"
    gate.write_text("release_gate:\n  critical_failures_allowed: 100\n  not_judged_runs: 1\n"
                    "  required_suites: [human_handoff]\n  thresholds:\n    intent_accuracy: '>= 0.5'\n")
    result = runs_api([MODEL], [RUNS], gate_path=str(gate), judge="rules")
    assert result.gate.passed, [f.message for f in result.gate.failures]
    gate.write_text("release_gate:\n  critical_failures_allowed: 100\n  not_judged_runs: 1\n"
                    "  required_suites: [authorization]\n  thresholds:\n    intent_accuracy: '>= 0.6'\n")
    result = runs_api([MODEL], [RUNS], gate_path=str(gate), judge="rules")
    assert [f.message for f in result.gate.failures] == [
        "suite authorization: intent_accuracy is 50.0%, the gate requires >= 60.0%"]


def test_default_gate_fails_on_critical_failures_and_runs_not_judged_only(tmp_path):
    result = runs_api([MODEL], [RUNS])
    assert [f.rule for f in result.gate.failures] == ["critical_failures", "not_judged_runs"]
    assert result.gate.failures[0].actual == result.metrics.critical_failures > 0


def test_usage_weighted_coverage_by_brute_force(report, reference):
    _, elements, _, pairs = reference
    [usage] = report.usage
    coverage = {ec.element.id: ec for ec in report.coverage.models[0].elements}
    # Runs per element, from mbt's own per-run exercised sets re-derived by the judge (states and transitions) and
    # mbt's (all criteria): the weights of seen states and transitions must agree with the judge's.
    through = Counter(e for _, v in pairs for e in v.through)
    feasible = [e for e in elements if e.feasible]
    st = [e for e in feasible if e.criterion in ("state", "transition")]
    seen_st = {e.id for e in st if through[e.id] > 0}
    assert usage.run_coverage["state"] == sum(through[e.id] > 0 for e in feasible if e.criterion == "state") / \
        sum(e.criterion == "state" for e in feasible)
    assert {r.element for r in usage.frequent_unverified if r.criterion in ("state", "transition")} <= seen_st
    for row in usage.frequent_unverified:
        assert not coverage[row.element].verified
        if row.criterion in ("state", "transition"):
            assert row.runs == through[row.element]
    for element in usage.verified_unseen:
        assert coverage[element].verified and through[element] == 0
    assert usage.verified_coverage == sum(coverage[e.id].verified for e in feasible) / len(feasible)
    for criterion, ratio in usage.golden_coverage.items():  # beside the runs: what `mbt coverage` reports
        numbers = report.coverage.models[0].criterion(criterion).verified  # its ratio is rounded for display
        assert ratio == numbers.covered / numbers.total
    assert usage.usage_weighted_verified is not None and 0 <= usage.usage_weighted_verified <= 1


def test_usage_weighted_formula_on_a_tiny_case():
    from mbt.elements.base import Element
    from mbt.measure.coverage import ElementCoverage, ModelCoverage
    from mbt.model.common import Location
    from mbt.runs.metrics import usage

    def el(i):
        return Element(id=f"state:s{i}", model="m", kind="fsm", criterion="state", label="s",
                       location=Location(file="f", line=1, column=1))

    rows = [ElementCoverage(element=el(0), verified_by=["g"]), ElementCoverage(element=el(1)),
            ElementCoverage(element=el(2), verified_by=["g"])]
    mc = ModelCoverage(model="m", kind="fsm", file="f", goldens_replayed=1, criteria=[], elements=rows)
    u = usage(mc, [3, 1, 0])
    assert (u.verified_coverage, u.usage_weighted_verified) == (2 / 3, 3 / 4)  # named apart, and different
    assert [(r.element, r.runs) for r in u.frequent_unverified] == [("state:s1", 1)]
    assert u.verified_unseen == ["state:s2"]


def test_regression_goldens_replay_redact_and_collapse(tmp_path, capsys):
    out = tmp_path / "reg"
    result = runs_api([MODEL], [RUNS], regressions=str(out))
    [path] = result.regressions
    text = open(path, encoding="utf-8").read()
    assert EMAIL.search(text) is None  # chat-ORD-0032 gives an e-mail address: redacted by default
    assert "<email:" in text
    cases = [json.loads(line) for line in text.splitlines()]
    failing = [r for r in result.runs if r.deviation is not None and r.deviation.type != "unbound_step"
               and r.deviation.element is not None]  # turn-loop deviations concern no model element: no golden
    assert any("turn-loop deviation" in s for s in result.regressions_skipped)
    assert sum(len(c["traces"]) for c in cases) == len(failing)
    collapsed = [c for c in cases if len(c["traces"]) > 1]
    assert [sorted(t["run"][-2:] for t in c["traces"]) for c in collapsed] == [["02", "0e"]]
    for c in cases:
        assert {"input_summary", "precondition", "allowed_tools", "forbidden_tools", "expected_side_effects",
                "first_deviation", "traces"} <= set(c)
    # The goldens replay on the model and its invariants without contradiction, divergence or invalid case.
    code = None
    try:
        main(["coverage", "--model", MODEL, "models/orders.inv", "--goldens", str(out), "--no-gate",
              "--format", "json"])
    except SystemExit as exit_:
        code = exit_.code
    data = expanded(json.loads(capsys.readouterr().out))
    assert code == 0
    assert (data["contradictions"], data["divergences"], data["unbound_turns"], data["invalid_cases"]) == ([],) * 4
    verified = {e["element"]["id"] for m in data["models"] for e in m["elements"] if e["verified_by"]}
    assert {c["first_deviation"]["element"] for c in cases} - verified <= {"state:cancelled"}


def test_redaction_kinds_and_modes():
    r = Redaction()
    assert r.value("mail li@example.com or +86 138 1234 5678, order SO-10042 on 2026-01-02") == \
        f"mail {r.token('email', 'li@example.com')} or {r.token('phone', '+86 138 1234 5678')}, order SO-10042 on 2026-01-02"
    assert r.value({"a": ["x@y.org"]}) == {"a": [r.token("email", "x@y.org")]}
    assert Redaction(("text",)).text("hello") == Redaction(("text",)).token("text", "hello")
    assert Redaction(mode="drop").value("x@y.org") == "<email>"
    assert Redaction(()).value("x@y.org") == "x@y.org"


def test_cli_runs_text_json_and_bad_input(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["runs", "--model", MODEL, "--runs", RUNS, "--gate", SEED_GATE])
    assert exit_.value.code == 1
    text = capsys.readouterr().out
    assert "First deviation by type" in text and "Run metrics" in text and "FAILED" in text
    with pytest.raises(SystemExit) as exit_:
        main(["runs", "--model", MODEL, "--runs", RUNS, "--no-gate", "--format", "json"])
    assert exit_.value.code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["gate"] is None and data["metrics"]["runs"] == len(data["runs"])
    with pytest.raises(SystemExit) as exit_:
        main(["runs", "--model", MODEL, "--runs", str(tmp_path / "missing")])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert re.search(r"missing:1:1: error: no such file", err) and "Traceback" not in err


def test_json_report_validates_against_the_published_schema(report):
    import jsonschema

    schema = json.load(open("docs/schemas/runs.schema.json", encoding="utf-8"))
    jsonschema.validate(json.loads(with_coverage_json(report)), schema)


def test_regression_goldens_of_repeated_failing_runs_are_those_built_for_each(tmp_path, monkeypatch):
    """A failing run whose record (model, precondition, turns, deviation, calls) was seen gets its golden's key from
    the cache (mbt.runs.regression._record): the goldens and the runs listed in each are those of building every
    run's golden (the cache off)."""
    import sys

    from mbt.runs import regression

    sys.path.insert(0, str(Path(__file__).resolve().parent / "bench"))
    import bench_decode

    runs = tmp_path / "runs"
    runs.mkdir()
    bench_decode.order_traces(runs, 20)  # the order example's traces, 20 times under fresh ids
    cached = runs_api([MODEL], [str(runs)], regressions=str(tmp_path / "cached"), use_gate=False)
    monkeypatch.setattr(regression, "_record", lambda v: None)
    built = runs_api([MODEL], [str(runs)], regressions=str(tmp_path / "built"), use_gate=False)
    assert cached.regression_goldens == built.regression_goldens > 0
    assert cached.regressions_skipped == built.regressions_skipped
    for a, b in zip(cached.regressions, built.regressions, strict=True):
        assert open(a, encoding="utf-8").read() == open(b, encoding="utf-8").read()
    traces = [len(json.loads(line)["traces"]) for line in open(cached.regressions[0], encoding="utf-8")]
    assert max(traces) >= 20  # the copies collapsed


def test_a_failing_runs_record_tells_apart_what_its_golden_holds():
    from mbt.runs.judge import Deviation, Verdict
    from mbt.runs.regression import _record
    from mbt.runs.steps import ObservedRun

    def verdict(args, precondition=None):
        run = ObservedRun(id="r", file="f.json", where="f.json", precondition=precondition or {"paid": 1})
        v = Verdict(run=run, model="orders")
        v.path = [{"user": "cancel", "event": "cancel", "args": args, "_state": "open"}]
        v.deviation = Deviation("wrong_argument", "w", 1, "t:a", "high", "m", tool="cancel", turn=0)
        return v

    assert _record(verdict({"id": 1})) == _record(verdict({"id": 1}))
    assert _record(verdict({"id": 1})) != _record(verdict({"id": "1"}))
    assert _record(verdict({"id": 1})) != _record(verdict({"id": 1}, {"paid": 2}))
    assert _record(verdict({"id": 1})) != _record(verdict({"id": 1.0})) != _record(verdict({"id": True}))
    assert _record(verdict({"id": lambda: 1})) is None  # it does not pickle: its golden is always built
