"""The pytest plugin (entry point `pytest11`): measures the goldens a test run produced and gates the session on them.

`pytest --mbt-model models/` replays, when the tests are done, the golden cases the tests recorded (the `mbt_record`
fixture) and the files named by `--mbt-goldens`; the coverage table goes into pytest's terminal summary (as
pytest-cov's does) and a failed gate fails the session. Without `--mbt-model` the plugin does nothing, and it imports
nothing of mbt's pipeline at start-up (it is loaded in every pytest run of an environment where mbt is installed).

The `contract_evaluator` fixture is seed 000's (`tests/test_account_recovery.py`): `contract_evaluator.evaluate(
contract_id=..., response=..., evidence=...)` judges an answer on the contract's must_have / must_not items and gives
`hard_gate_passed` and `failures` (docs/contracts.md). The contracts come from `--mbt-contract PATH` (repeatable),
else the ini option `mbt_contracts` (paths relative to the ini file), else `models` in mbt's configuration file; the
judge from `--mbt-judge` or the ini option `mbt_judge` (default `embedded`; `openai:MODEL` decides descriptions).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

_RECORDED = pytest.StashKey[list]()
_RESULT = pytest.StashKey[tuple]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mbt", "mbt: business-behaviour coverage of the goldens this run produces")
    group.addoption("--mbt-model", action="append", default=[], metavar="PATH",
                    help="Model files or folders to measure against (repeatable); turns the plugin on.")
    group.addoption("--mbt-goldens", action="append", default=[], metavar="PATH",
                    help="Golden or transcript files/folders the run writes, measured when it ends (repeatable).")
    group.addoption("--mbt-gate", default=None, metavar="FILE", help="The gate file (default: mbt's default gate).")
    group.addoption("--mbt-fail-under", default=None, metavar="PCT",
                    help="Also fail when a model's criterion is verified below PCT percent.")
    group.addoption("--mbt-report", action="append", default=[], metavar="NAME:PATH",
                    help="Also write a report, as mbt coverage --format NAME:PATH (repeatable).")
    group.addoption("--mbt-contract", action="append", default=[], metavar="PATH",
                    help="Contract YAML files or folders for the `contract_evaluator` fixture (repeatable).")
    group.addoption("--mbt-judge", default=None, metavar="NAME",
                    help="The judge of `contract_evaluator`: embedded (default), rules or openai:MODEL.")
    parser.addini("mbt_contracts", type="paths", default=[],
                  help="Contract YAML files or folders for the `contract_evaluator` fixture.")
    parser.addini("mbt_judge", default="embedded", help="The judge of `contract_evaluator` (default: embedded).")


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_RECORDED] = []


@pytest.fixture
def mbt_record(request: pytest.FixtureRequest):
    """Record a golden case (a mapping in mbt's golden format) that this test observed; measured at the end."""
    recorded = request.config.stash[_RECORDED]

    def record(case: dict) -> None:
        recorded.append(json.loads(json.dumps(case, default=str)))  # a copy, and proof it is JSON

    return record


@pytest.fixture(scope="session")
def contract_evaluator(request: pytest.FixtureRequest):
    """Seed 000's contract evaluator: `.evaluate(contract_id=..., response=..., evidence=...)` -> a verdict with
    `hard_gate_passed` and `failures` (mbt.judges.contract)."""
    config = request.config
    paths = list(config.getoption("mbt_contract")) or [str(p) for p in config.getini("mbt_contracts")]
    judge = config.getoption("mbt_judge") or config.getini("mbt_judge") or "embedded"
    # Only when a test asks for it: every pytest session of a project with mbt installed loads this module.
    from mbt.cli import pytest_contract_evaluator
    from mbt.errors import MbtError

    try:
        return pytest_contract_evaluator(paths, judge)
    except MbtError as err:
        raise pytest.UsageError(f"contract_evaluator: {err.render()}") from None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtestloop(session: pytest.Session):
    yield
    config = session.config
    models = config.getoption("mbt_model")
    if not models:
        return
    # Only when the plugin is used: every pytest session of a project with mbt installed loads this module.
    from mbt.cli import pytest_coverage
    from mbt.errors import MbtError

    goldens = list(config.getoption("mbt_goldens"))
    with tempfile.TemporaryDirectory(prefix="mbt-pytest-") as folder:
        recorded = config.stash[_RECORDED]
        if recorded:
            path = Path(folder) / "recorded.jsonl"
            path.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in recorded), encoding="utf-8")
            goldens.append(str(path))
        try:
            text, passed = pytest_coverage(models, goldens, config.getoption("mbt_gate"),
                                           config.getoption("mbt_fail_under"), config.getoption("mbt_report"),
                                           config.get_terminal_writer().hasmarkup)
        except MbtError as err:
            text, passed = err.render() + "\n", False
    config.stash[_RESULT] = (text, passed)
    if not passed:
        session.testsfailed += 1  # the session's exit code becomes 1 (tests failed), as pytest-cov's --cov-fail-under


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    result = config.stash.get(_RESULT, None)
    if result is None:
        return
    text, passed = result
    terminalreporter.write_sep("-", "mbt coverage")
    terminalreporter.write(text)
    if not passed:
        terminalreporter.write_line("mbt: FAIL: the gate failed (see above)", red=True, bold=True)
