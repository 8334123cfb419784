"""Criteria declare their meaning (mbt.kind.Criterion), and the stages read it: a kind's `alarm` criterion fails the
default gate, is recorded by the baseline and reported first by every format, as the FSM's forbidden elements are;
the labels of a `findings` criterion's uncovered elements are listed. Whatever the criterion is named."""

from __future__ import annotations

import dataclasses
import json

import pytest

from mbt import kind as kinds
from mbt.kind import Criterion
from tests.cli_runner import run_mbt
from tests.plugin_kind import kind as checklist_kind

MODEL = 'checklist release {\n  item notes "release notes written"\n  item tag "tag the release"\n}\n'
GOLDENS = [{"id": "C1", "checklist": "release", "ticked": ["notes"]},
           {"id": "C2", "checklist": "release", "untouched": ["tag"]}]


def _files(tmp_path):
    (tmp_path / "release.chk").write_text(MODEL, encoding="utf-8")
    (tmp_path / "g.jsonl").write_text("".join(json.dumps(c) + "\n" for c in GOLDENS), encoding="utf-8")
    return tmp_path


@pytest.fixture
def alarming(tmp_path):
    """The toy kind, its one criterion an alarm with findings: an untested item is behaviour that must not ship."""
    kinds.register(dataclasses.replace(checklist_kind.SUPPORT,
                                       criteria=(Criterion("item", alarm=True, findings=True),)))
    yield _files(tmp_path)
    kinds.unregister("checklist")


@pytest.fixture
def plain(tmp_path):
    checklist_kind.install()  # `item` means nothing special
    yield _files(tmp_path)
    kinds.unregister("checklist")


def _coverage(folder, *args):
    return run_mbt("coverage", "--model", folder / "release.chk", "--goldens", folder / "g.jsonl", *args)


def test_an_alarm_criterion_fails_the_default_gate_and_the_baseline_records_it(alarming):
    baseline = alarming / "base.json"
    result = _coverage(alarming, "--format", "json", "--save-baseline", baseline)
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert [(f["rule"], f["elements"]) for f in report["gate"]["failures"]] == [("forbidden_uncovered", ["item:tag"])]
    # the meaning is the kind's, not the report's: the JSON report's criterion rows are as they always were
    assert set(report["models"][0]["criteria"][0]) == {"criterion", "verified", "exercised", "infeasible"}
    assert json.loads(baseline.read_text())["models"]["release"]["forbidden_uncovered"] == ["item:tag"]


def test_every_format_reports_an_uncovered_alarm_element_first(alarming):
    formats = ("junit", "sarif", "github", "codequality", "markdown")
    result = _coverage(alarming, "--no-gate", "--format", "text",
                       *[arg for name in formats for arg in ("--format", f"{name}:{alarming / name}")])
    assert "Uncovered forbidden elements (1)" in result.stdout
    assert "    item:tag  (exercised, not verified; medium)" in result.stdout
    assert "        tag the release" in result.stdout  # a finding: its label listed
    out = {name: (alarming / name).read_text(encoding="utf-8") for name in formats}
    assert 'type="uncovered-forbidden"' in out["junit"]
    assert [r["ruleId"] for r in json.loads(out["sarif"])["runs"][0]["results"]] == ["uncovered-forbidden"]
    assert out["github"].startswith("::error ") and "forbidden behaviour not tested: tag the release" in out["github"]
    assert [i["check_name"] for i in json.loads(out["codequality"])] == ["mbt/uncovered-forbidden"]
    assert "**Uncovered forbidden elements (1)**" in out["markdown"]


def test_the_html_report_raises_the_alarm(alarming):
    result = _coverage(alarming, "--no-gate", "--format", f"html:{alarming / 'html'}")
    assert result.returncode == 0, result.stderr
    (page,) = (alarming / "html").glob("model-release-*.html")
    assert "1 forbidden behaviour no golden tests" in page.read_text(encoding="utf-8")
    index = (alarming / "html" / "index.html").read_text(encoding="utf-8")
    assert '<div class="card bad"><div class="big">1</div><div>forbidden behaviours not tested</div>' in index


def test_a_criterion_without_meaning_is_a_plain_gap(plain):
    result = _coverage(plain, "--format", "text", "--format", f"junit:{plain / 'junit'}")
    assert result.returncode == 0, result.stdout
    assert "Uncovered forbidden elements" not in result.stdout
    assert "    item:tag  (exercised, not verified; medium)" in result.stdout
    assert "tag the release" not in result.stdout  # no findings: the label is not listed
    assert 'type="uncovered-forbidden"' not in (plain / "junit").read_text(encoding="utf-8")
