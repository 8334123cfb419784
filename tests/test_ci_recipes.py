"""The CI recipes of the user guide (docs/ci/): every command they run is run here, on a copy of the examples, and
what the steps after them read (SARIF, JUnit, Code Quality, the step summary, the HTML folder) is checked."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
CI = ROOT / "docs" / "ci"
SARIF_SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
GITLAB_SEVERITIES = {"info", "minor", "major", "critical", "blocker"}


@pytest.fixture()
def project(tmp_path):
    shutil.copytree(ROOT / "models", tmp_path / "models")
    return tmp_path


def run_step(script: str, cwd: Path, env: dict) -> int:
    """A step as the runners run it: bash, stopping at the first failing command. `pip install mbt-coverage` is
    what put mbt on the PATH here already (the test's virtualenv)."""
    lines = [line for line in script.splitlines() if line.strip() != "pip install mbt-coverage"]
    if not any(line.strip() for line in lines):
        return 0
    path = f"{Path(sys.executable).parent}{os.pathsep}/usr/bin{os.pathsep}/bin"
    result = subprocess.run(["bash", "-e", "-c", "\n".join(lines)], cwd=cwd, capture_output=True, text=True,
                            env={**env, "PATH": path, "HOME": str(cwd)}, timeout=600)
    assert "Traceback" not in result.stderr, result.stderr
    return result.returncode


def test_the_guide_shows_the_recipes_as_they_are_tested():
    guide = (ROOT / "docs" / "user-guide.md").read_text(encoding="utf-8")
    for name in ("github-actions.yml", "gitlab-ci.yml"):
        assert (CI / name).read_text(encoding="utf-8") in guide, f"docs/ci/{name} differs from the user guide"


def test_the_github_actions_workflow(project):
    workflow = yaml.safe_load((CI / "github-actions.yml").read_text(encoding="utf-8"))
    steps = workflow["jobs"]["mbt"]["steps"]
    summary = project / "step-summary.md"
    env = {"GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(project), "GITHUB_STEP_SUMMARY": str(summary)}
    codes = {s["name"]: run_step(s["run"], project, env) for s in steps if "run" in s}
    assert codes == {"Install mbt": 0, "mbt check": 0, "mbt coverage": 1}  # the example is built to fail its gate
    assert "pip install mbt-coverage" in steps[2]["run"]
    # What the later steps read: they run `if: always()`, as the gate failing must not hide its reports.
    later = [s for s in steps if "uses" in s and not s["uses"].startswith(("actions/checkout", "actions/setup"))]
    assert all(s.get("if") == "always()" for s in later)
    categories = set()
    for s in later:
        if s["uses"].startswith("github/codeql-action/upload-sarif"):
            log = json.loads((project / s["with"]["sarif_file"]).read_text(encoding="utf-8"))
            jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)
            (run,) = log["runs"]
            categories.add(run["automationDetails"]["id"])
            for result in run["results"]:
                for loc in result.get("locations", []):  # relative to the workspace, as code scanning needs
                    assert loc["physicalLocation"]["artifactLocation"].get("uriBaseId") == "%SRCROOT%"
        elif s["uses"].startswith("mikepenz/action-junit-report"):
            root = ET.parse(project / s["with"]["report_paths"]).getroot()
            assert root.tag == "testsuites" and int(root.get("failures")) > 0
        elif s["uses"].startswith("actions/upload-artifact"):
            assert (project / s["with"]["path"] / "index.html").is_file()
    assert categories == {"mbt/check/", "mbt/coverage/"}  # two uploads that do not replace each other
    assert summary.read_text(encoding="utf-8").startswith("## mbt coverage")


def test_the_gitlab_ci_job(project):
    job = yaml.safe_load((CI / "gitlab-ci.yml").read_text(encoding="utf-8"))["mbt"]
    env = {"GITLAB_CI": "true", "CI_PROJECT_DIR": str(project)}
    codes = [run_step(line, project, env) for line in job["script"]]
    assert codes == [0, 0, 1]  # the job fails on the gate; `artifacts: when: always` keeps the reports
    assert job["artifacts"]["when"] == "always"
    reports = job["artifacts"]["reports"]
    for junit in reports["junit"]:
        assert ET.parse(project / junit).getroot().tag == "testsuites"
    issues = json.loads((project / reports["codequality"]).read_text(encoding="utf-8"))
    assert issues, "the example has findings"
    for issue in issues:  # the fields GitLab's Code Quality widget requires
        assert issue["description"] and issue["check_name"] and issue["fingerprint"]
        assert issue["severity"] in GITLAB_SEVERITIES
        assert not Path(issue["location"]["path"]).is_absolute() and issue["location"]["lines"]["begin"] >= 1
    assert len({i["fingerprint"] for i in issues}) == len(issues)
    assert (project / job["artifacts"]["paths"][0] / "index.html").is_file()


def test_shell_completion_completes_commands_and_paths(tmp_path):
    mbt = str(Path(sys.executable).parent / "mbt")
    source = subprocess.run([mbt], env={**os.environ, "_MBT_COMPLETE": "bash_source"}, capture_output=True, text=True)
    assert source.returncode == 0 and "complete -o nosort -F" in source.stdout
    env = {**os.environ, "_MBT_COMPLETE": "bash_complete", "COMP_WORDS": "mbt cov", "COMP_CWORD": "1"}
    commands = subprocess.run([mbt], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert "plain,coverage" in commands.stdout.split()
    env = {**env, "COMP_WORDS": "mbt coverage --goldens go", "COMP_CWORD": "3"}
    paths = subprocess.run([mbt], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert paths.stdout.split() == ["file,go"]  # bash then completes file and folder names
