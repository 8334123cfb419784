"""A fifth model kind plugs in through the registry alone (issue 12): tests/plugin_kind/ registers `checklist`
with its own grammar, rules, resolver, elements, replayer and checks, editing no file of mbt, and the whole
pipeline takes it: parsed, checked, enumerated, measured, gated, reported as text and JSON, and tests generated for
it run on the reference adapter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mbt import api
from mbt import kind as kinds
from tests.cli_runner import run_mbt
from tests.json_report import expanded
from tests.plugin_kind import kind as checklist_kind

ROOT = Path(__file__).resolve().parents[1]
MODEL = 'checklist release {\n  item notes "release notes written"\n  item tag\n}\n'
GOLDENS = [{"id": "C1", "checklist": "release", "ticked": ["notes"]},
           {"id": "C2", "checklist": "release", "untouched": ["tag"]},
           {"id": "C3", "checklist": "other", "ticked": ["notes"]}]


@pytest.fixture
def checklist(tmp_path):
    checklist_kind.install()
    (tmp_path / "release.chk").write_text(MODEL, encoding="utf-8")
    (tmp_path / "g.jsonl").write_text("".join(json.dumps(c) + "\n" for c in GOLDENS), encoding="utf-8")
    yield tmp_path
    kinds.unregister("checklist")


def test_parsed_and_checked(checklist):
    files, models = api.load_models([str(checklist)])  # found in the folder by the kind's own suffix
    (model,) = models
    assert (model.kind, model.name, [i.name for i in model.items]) == ("checklist", "release", ["notes", "tag"])
    report = api.check([str(checklist)])
    assert [(f.code, f.location.line) for f in report.findings] == [("CHK001", 3)]


def test_enumerated_measured_gated_and_reported(checklist):
    elements = api.elements([str(checklist / "release.chk")])
    assert [e.id for e in elements.models[0].elements] == ["item:notes", "item:tag"]
    gate = checklist / "gate.yaml"
    gate.write_text('checklist.item: ">= 1.0"\n', encoding="utf-8")
    result = run_mbt("coverage", "--model", checklist / "release.chk",
                     "--goldens", checklist / "g.jsonl", "--gate", gate, "--format", "json")
    assert result.returncode == 1, result.stderr
    report = expanded(json.loads(result.stdout))
    (m,) = report["models"]
    assert m["kind"] == "checklist"
    by_id = {e["element"]["id"]: e for e in m["elements"]}
    assert by_id["item:notes"]["verified_by"] == ["C1"]
    assert by_id["item:tag"]["exercised_by"] == ["C2"] and by_id["item:tag"]["verified_by"] == []
    assert [f["rule"] for f in report["gate"]["failures"]] == ["checklist.item"]
    assert report["goldens"]["not_applicable"] == 1  # C3 names another checklist
    text = run_mbt("coverage", "--model", checklist / "release.chk", "--goldens", checklist / "g.jsonl",
                   "--no-gate")
    assert text.returncode == 0
    assert "release  (checklist" in text.stdout and "item:tag" in text.stdout


def test_a_syntax_error_names_the_new_keyword(checklist):
    (checklist / "bad.chk").write_text("checklst x {\n}\n", encoding="utf-8")
    result = run_mbt("check", checklist / "bad.chk")
    assert result.returncode == 2 and "did you mean `checklist`" in result.stderr


def test_the_kind_is_gone_once_unregistered(tmp_path):
    (tmp_path / "a.chk").write_text(MODEL, encoding="utf-8")
    result = run_mbt("check", tmp_path / "a.chk")
    assert result.returncode == 2 and "not a model file" in result.stderr


def test_the_keys_the_kind_declares_are_read_and_any_other_is_a_note(checklist):
    """KindSupport.golden_keys: `checklist`, `ticked`, `untouched` are the kind's own; `ticket` nobody reads."""
    (checklist / "g.jsonl").write_text(json.dumps({"id": "C4", "checklist": "release", "ticked": ["notes"],
                                                   "ticket": "T-1"}) + "\n", encoding="utf-8")
    report = api.coverage([str(checklist / "release.chk")], [str(checklist / "g.jsonl")])
    assert [(n.case, n.where, n.message) for n in report.notes] == [
        ("C4", f"{checklist / 'g.jsonl'}:1", "`ticket` is not checked (mbt does not read this key)")]


# ---------------------------------------------------------------- generation, run on the reference adapter


def installed_as_a_package(folder) -> dict[str, str]:
    """The environment of a process that finds the toy kind as an installed package would declare it: an
    `mbt.kinds` entry point (in a dist-info folder on PYTHONPATH) naming tests.plugin_kind.installed."""
    info = folder / "mbt_checklist-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mbt-checklist\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[mbt.kinds]\nchecklist = tests.plugin_kind.installed\n", encoding="utf-8")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), str(ROOT)]), "MBT_ADAPTER": "reference",
            "PYTHONDONTWRITEBYTECODE": "1", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


def run_generated_tests(tests, env) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tests)]
    return subprocess.run(command, cwd=tests.parent, env=env, capture_output=True, text=True)


def test_gaps_and_a_full_suite_generated_and_run_on_the_reference_adapter(checklist, tmp_path):
    """KindSupport.generation, suites, driver and reference: a test per uncovered item (C1 ticks `notes`, so only
    `tag` is a gap) and a full `item` suite, run by pytest in a process of its own on the reference adapter, which
    there answers through the kind's own reference -- and fail on a system whose checklist lacks an item."""
    out = tmp_path / "out"
    gaps = run_mbt("generate", "--model", checklist / "release.chk", "--goldens", checklist / "g.jsonl", "--out", out,
                   "--format", "json")
    assert gaps.returncode == 0, gaps.stderr
    (model,) = json.loads(gaps.stdout)["models"]
    assert (model["kind"], model["uncovered"], [t["elements"] for t in model["tests"]]) == (
        "checklist", 1, [["item:tag"]])
    suite = run_mbt("generate", "--model", checklist / "release.chk", "--all", "--criterion", "item", "--out", out,
                    "--format", "json")
    assert suite.returncode == 0, suite.stderr
    (model,) = json.loads(suite.stdout)["models"]
    assert [t["elements"] for t in model["tests"]] == [["item:notes"], ["item:tag"]]
    support = (out / "tests" / "mbt_support.py").read_text(encoding="utf-8")
    assert "    def has_item(self, checklist: str, item: str) -> None:" in support
    assert "    items(checklist)" in support  # the adapter method, documented with the others
    # The stubs are golden cases of the kind: measured with the goldens, every item is verified.
    measured = api.coverage([str(checklist / "release.chk")], [str(checklist / "g.jsonl"), str(out / "goldens")])
    assert [e.element.id for e in measured.models[0].uncovered()] == []

    env = installed_as_a_package(tmp_path / "site")
    result = run_generated_tests(out / "tests", env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 passed" in result.stdout
    # The same tests on a system whose checklist has no `tag`: the two tests of `tag` fail.
    (checklist / "release.chk").write_text('checklist release {\n  item notes "release notes written"\n}\n',
                                           encoding="utf-8")
    result = run_generated_tests(out / "tests", env)
    assert result.returncode == 1 and "2 failed, 1 passed" in result.stdout
    assert "checklist `release` has no item `tag`" in result.stdout


def test_a_suite_criterion_no_kind_builds_is_refused(checklist, tmp_path):
    result = run_mbt("generate", "--model", checklist / "release.chk", "--all", "--criterion", "items",
                     "--out", tmp_path / "out")
    assert result.returncode == 2
    assert "error: --all builds suites for transition or transition-pair or item, not 'items'" in result.stderr


def test_a_plug_in_case_is_read_into_the_kinds_own_type_and_a_misfit_is_invalid(checklist):
    """KindSupport.case_shape types a plug-in kind's cases as built-in kinds' are typed: a case of its shape whose
    values do not fit is an invalid case with the kind's message and its line, never half-read."""
    (checklist / "g.jsonl").write_text(json.dumps({"id": "BAD", "checklist": "release", "ticked": "notes"}) + "\n",
                                       encoding="utf-8")
    result = run_mbt("coverage", "--model", checklist / "release.chk", "--goldens", checklist / "g.jsonl",
                     "--no-gate", "--format", "json")
    report = expanded(json.loads(result.stdout))
    assert (report["goldens"]["read"], report["goldens"]["valid"], report["goldens"]["invalid"]) == (1, 0, 1)
    [bad] = report["invalid_cases"]
    assert "`ticked` is a list of item names" in bad["message"] and (bad["file"].endswith("g.jsonl"), bad["line"]) == (
        True, 1)


def test_a_kind_gives_exactly_one_resolver_and_a_hook_refuses_another_kinds_model():
    """The registry refuses a KindSupport with both or neither of `resolve` and `resolve_late`; an assembly's
    `narrow` says which kind was handed which model (a bug in mbt, never silently read)."""
    import dataclasses

    from tests.plugin_kind.stages import ChecklistModel

    with pytest.raises(ValueError, match="exactly one of `resolve` and `resolve_late`"):
        kinds.register(dataclasses.replace(checklist_kind.SUPPORT, resolve=None))
    with pytest.raises(ValueError, match="exactly one of `resolve` and `resolve_late`"):
        kinds.register(dataclasses.replace(checklist_kind.SUPPORT, resolve_late=lambda *a: (None, [])))
    with pytest.raises(TypeError, match="the checklist kind was handed a str"):
        kinds.narrow("not a model", ChecklistModel, "checklist")
