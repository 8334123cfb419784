"""The configuration file: [tool.mbt] / mbt.yaml found upwards, options win, paths relative to the file; --fail-under."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.cli_runner import run_mbt

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def project(tmp_path):
    """A copy of the example models and goldens in a project folder with a subfolder to run from."""
    shutil.copytree(ROOT / "models", tmp_path / "models")
    (tmp_path / "src" / "deep").mkdir(parents=True)
    return tmp_path


def cov(cwd, *args, config=()):
    return run_mbt(*config, "coverage", *args, "--format", "json", cwd=cwd)


def test_pyproject_is_found_from_a_subfolder_and_paths_are_relative_to_it(project):
    (project / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.mbt]\nmodels = ["models/recovery.fsm"]\ngoldens = "models/goldens/"\n'
        'gate = "models/gates/release.yaml"\n', encoding="utf-8")
    configured = cov(project / "src" / "deep")
    spelled = cov(project, "--model", "models/recovery.fsm", "--goldens", "models/goldens/", "--gate",
                  "models/gates/release.yaml")
    assert configured.returncode == spelled.returncode == 1, configured.stderr
    a, b = json.loads(configured.stdout), json.loads(spelled.stdout)
    assert [m["criteria"] for m in a["models"]] == [m["criteria"] for m in b["models"]]
    assert a["gate"]["failures"] == b["gate"]["failures"]
    assert a["models"][0]["file"] == "../../models/recovery.fsm"  # shown relative to where mbt runs
    assert a["goldens"]["read"] == b["goldens"]["read"] > 0
    assert a["gate"]["source"].endswith("models/gates/release.yaml")


def test_options_and_positional_paths_override_the_file(project):
    (project / "mbt.yaml").write_text("models: models/recovery.fsm\ngoldens: [models/goldens/golden.jsonl]\n"
                                      "fail-under: 99\n", encoding="utf-8")
    base = json.loads(cov(project).stdout)
    assert base["goldens"]["files"] == ["models/goldens/golden.jsonl"]
    assert any(f["rule"] == "fail_under" for f in base["gate"]["failures"])
    other = json.loads(cov(project, "--goldens", "models/goldens/single-turn.jsonl", "--fail-under", "0").stdout)
    assert other["goldens"]["files"] == ["models/goldens/single-turn.jsonl"]
    assert not any(f["rule"] == "fail_under" for f in other["gate"]["failures"])
    positional = json.loads(cov(project, "models/orders.fsm").stdout)  # no configured goldens either
    assert [m["model"] for m in positional["models"]] == ["orders"] and positional["goldens"]["read"] == 0
    ignored = json.loads(cov(project, "--model", "models/orders.fsm", config=["--no-config"]).stdout)
    assert ignored["gate"]["failures"] == [] or all(f["rule"] != "fail_under" for f in ignored["gate"]["failures"])


def test_a_pyproject_without_tool_mbt_is_passed_over(project):
    (project / "mbt.yaml").write_text("models: models/recovery.fsm\n", encoding="utf-8")
    (project / "src" / "pyproject.toml").write_text('[project]\nname = "inner"\n', encoding="utf-8")
    found = cov(project / "src" / "deep")
    assert found.returncode in (0, 1) and json.loads(found.stdout)["models"][0]["model"] == "recovery"
    checked = run_mbt("check", "-q", cwd=project / "src")  # `check` takes the configured models too
    assert checked.returncode == 0 and "1 model" in checked.stdout


@pytest.mark.parametrize("name, text, where, message", [
    ("mbt.yaml", "models: models/recovery.fsm\ngoldenz: x\n", "mbt.yaml:2:1:", "unknown mbt setting `goldenz`"),
    ("mbt.yaml", "models: [a\n", "mbt.yaml:2:1:", "not valid YAML"),
    ("mbt.yaml", "fail-under: 120\n", "mbt.yaml:1:1:", "between 0 and 100"),
    ("pyproject.toml", "[tool.mbt]\nmodels = []\n", "pyproject.toml:2:1:", "expected a path or a list"),
    ("pyproject.toml", "[tool.mbt]\n  depth = 0\n", "pyproject.toml:2:3:", "at least 1"),
    ("pyproject.toml", "[tool.mbt\n", "pyproject.toml:1:", "not valid TOML"),
])
def test_a_bad_configuration_is_one_located_message(project, name, text, where, message):
    (project / name).write_text(text, encoding="utf-8")
    result = run_mbt("coverage", cwd=project)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith(where) and message in result.stderr and "Traceback" not in result.stderr


def test_fail_under_follows_the_verified_percentages(project):
    report = json.loads(cov(project, "--model", "models/recovery.fsm", "--goldens", "models/goldens/").stdout)
    ratios = {c["criterion"]: c["verified"]["covered"] / c["verified"]["total"] for c in report["models"][0]["criteria"]}
    threshold = sorted(ratios.values())[2] * 100  # two criteria are below it, the rest at or above
    run = json.loads(cov(project, "--model", "models/recovery.fsm", "--goldens", "models/goldens/",
                         "--fail-under", f"{threshold}").stdout)
    failing = {f["message"].split(": ")[1].split(" coverage")[0] for f in run["gate"]["failures"]
               if f["rule"] == "fail_under"}
    assert failing == {k for k, v in ratios.items() if v * 100 < threshold} and len(failing) == 2
    bad = run_mbt("coverage", "--model", "models/recovery.fsm", "--fail-under", "lots", cwd=project)
    assert bad.returncode == 2 and "--fail-under" in bad.stderr
    both = run_mbt("coverage", "--model", "models/recovery.fsm", "--fail-under", "5", "--no-gate",
                   cwd=project)
    assert both.returncode == 2
