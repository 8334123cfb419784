"""The report's rows crossing processes as plain values (mbt.runs.rows, used by mbt.runs.parts.Judged's pickling):
a row rebuilt on the other side is the row that was made — equal, the same JSON, the same fields given — for every
kind of row the example runs and random rows give (invalid, passing, not judged, deviating with argument sources, a
contract's grounding and items, marks, times)."""

from __future__ import annotations

import pickle
import random
from pathlib import Path

import pytest

from mbt import api
from mbt.runs.parts import Judged
from mbt.runs.regression import RegressionTally
from mbt.runs.results import RunResult
from mbt.runs.rows import PackedRows
from tests.test_runs_figures import random_rows

ROOT = Path(__file__).resolve().parents[1]


def example_rows() -> list[RunResult]:
    rows = []
    for models, runs in ((["models/orders.fsm"], ["models/runs", "models/traces", "models/answers/runs"]),
                         (["models/contracts/password-reset.yaml"], ["models/traces"])):
        rows += api.runs([str(ROOT / m) for m in models], [str(ROOT / r) for r in runs], use_gate=False, jobs=1,
                         use_cache=False).runs
    return rows


def crossed(rows: list[RunResult]) -> list[RunResult]:
    """As a worker's piece crosses to mbt's process: its Judged pickled there, unpickled here."""
    from mbt.runs.metrics import RunFigures
    from mbt.runs.undocumented import Sightings

    judged = Judged(["f.json"], [], [], rows, RegressionTally(), RunFigures(), Sightings())
    return pickle.loads(pickle.dumps(judged, protocol=pickle.HIGHEST_PROTOCOL)).results  # noqa: S301 - our own


def test_example_rows_cross_processes_unchanged():
    rows = example_rows()
    assert {r.verdict for r in rows} == {"pass", "deviation", "not_judged"}
    assert any(r.grounding is not None and r.items for r in rows)  # a contract's row
    assert any(r.deviation is not None and r.deviation.sources for r in rows)
    back = crossed(rows)
    assert back == rows
    for made, rebuilt in zip(rows, back, strict=True):
        assert rebuilt.model_dump_json() == made.model_dump_json()
        assert rebuilt.model_fields_set == made.model_fields_set
        assert rebuilt.evidence.model_fields_set == made.evidence.model_fields_set
        if made.deviation is not None:
            assert rebuilt.deviation is not None
            assert rebuilt.deviation.model_fields_set == made.deviation.model_fields_set


@pytest.mark.parametrize("seed", range(3))
def test_random_rows_cross_processes_unchanged(seed):
    rows = random_rows(random.Random(seed), 200)
    rows.append(RunResult(id="bare", where="x.json", format="otlp", model=None, suite=None, verdict="invalid", steps=0,
                          invalid="the run names no model"))  # defaults only: few fields given
    back = crossed(rows)
    assert back == rows
    assert [r.model_dump_json() for r in back] == [r.model_dump_json() for r in rows]
    assert [r.model_fields_set for r in back] == [r.model_fields_set for r in rows]


def test_rebuilt_rows_share_nothing_mutable():
    rows = random_rows(random.Random(7), 50)
    back = crossed(rows)
    assert "unbound" not in back[1].model_fields_set
    back[0].unbound = ["changed"]  # pydantic records the assignment in that row's given fields only
    back[0].tags.append("changed")  # a list of one row's is its own
    assert "unbound" in back[0].model_fields_set
    assert back[1].model_fields_set == rows[1].model_fields_set
    assert [r.tags for r in back[1:]] == [r.tags for r in rows[1:]]


def test_only_plain_rows_are_packed():
    class Other(RunResult):
        pass

    with pytest.raises(TypeError):
        PackedRows([Other(id="x", where="w", format="otlp", model=None, suite=None, verdict="pass", steps=0)])
