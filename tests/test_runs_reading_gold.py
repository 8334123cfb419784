"""The run readers' output kept byte for byte across their rewrites for speed (issue 37): the reports of the example
runs (`mbt runs` on every shipped run folder, `mbt eval` on the shipped answers), of every shape run_shapes.py writes,
of the benchmark's traces and of 400 hostile run files (tests/fuzz_inputs.py) are compared with gold files written
by the readers before the rewrite (tests/gold/runs-reading/). A report that differs is left in tests/actual/.

Regenerate only for an intended change of what is read: UPDATE_GOLD=1 pytest tests/test_runs_reading_gold.py
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import sys
from pathlib import Path

import pytest

from mbt import api
from tests._gold import ACTUAL, GOLD, compare_gold
from tests.fuzz_inputs import run_file

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "bench"))

import run_shapes  # noqa: E402

HOSTILE_SEEDS = 400


@pytest.fixture(autouse=True)
def _from_the_checkout(monkeypatch):
    monkeypatch.chdir(ROOT)  # relative paths: the reports name the files as given


def _report(models: list[str], runs: list[str], **options) -> str:
    return api.runs(models, runs, use_gate=False, jobs=1, use_cache=False, **options).model_dump_json(indent=1) + "\n"


@pytest.mark.parametrize("name, models, runs, options", [
    ("orders", ["models/orders.fsm"], ["models/runs"],
     {"golden_paths": ["models/goldens/orders"]}),
    ("rag-traces-on-orders", ["models/orders.fsm"], ["models/traces"], {}),
    ("answers-on-orders", ["models/orders.fsm"], ["models/answers/runs"], {}),
])
def test_the_example_runs_read_as_before(name, models, runs, options):
    compare_gold(f"runs-reading/{name}.json", _report(models, runs, **options))


def test_the_example_answers_evaluate_as_before():
    report = api.eval(["models/answers/goldens"], ["models/answers/runs"])
    compare_gold("runs-reading/eval-answers.json", report.model_dump_json(indent=1) + "\n")


def _shown(text: str, folder: Path) -> str:
    """The report with the run files' folder and the checkout's own path written as placeholders: the reports name
    the model's file (`bind tool` at ROOT/models/orders.fsm:53:3), and a fresh clone lives elsewhere."""
    return text.replace(str(folder), "{dir}").replace(str(ROOT), "{root}")


def _digest(text: str, folder: Path) -> str:
    return hashlib.sha256(_shown(text, folder).encode("utf-8")).hexdigest()[:16]


def _compare_digests(name: str, lines: list[str], texts: list[str]) -> None:
    """compare_gold on the digest lines; each report whose line differs is left in tests/actual/ too."""
    gold = GOLD / name
    known = set(gold.read_text(encoding="utf-8").splitlines()) if gold.exists() else set()
    if not os.environ.get("UPDATE_GOLD"):
        for n, (line, text) in enumerate(zip(lines, texts)):
            if line not in known:
                (ACTUAL / name).parent.mkdir(parents=True, exist_ok=True)
                (ACTUAL / f"{name}.{n}.json").write_text(text, encoding="utf-8")
    compare_gold(name, "\n".join(lines) + "\n")


def test_every_shape_of_run_shapes_reads_as_before(tmp_path):
    lines, texts = [], []
    for name, (_, write) in run_shapes.shapes(12, 7).items():
        folder = tmp_path / f"shape-{len(lines)}"
        folder.mkdir()
        write(folder)
        text = _report([run_shapes.MODEL], [str(folder)])
        lines.append(f"{_digest(text, folder)}  {name}")
        texts.append(_shown(text, folder))
    _compare_digests("runs-reading/shapes.sha256", lines, texts)


def test_hostile_run_files_read_as_before(tmp_path):
    lines, texts = [], []
    for seed in range(HOSTILE_SEEDS):
        item = run_file(seed)
        folder = tmp_path / f"h{seed}"
        folder.mkdir()
        for name, data in item.files.items():
            (folder / name).write_bytes(data)
        (name,) = item.files
        try:
            text = _report([str(ROOT / "models" / "orders.fsm")], [str(folder / name)])
        except Exception as err:  # noqa: BLE001 - what happened is what is compared
            text = f"{type(err).__name__}: {err}"
        lines.append(f"{seed:4d} {_digest(text, folder)}  {item.family}")
        texts.append(_shown(text, folder))
    _compare_digests("runs-reading/hostile.sha256", lines, texts)


def test_the_benchmarks_traces_read_as_before(tmp_path):
    import bench_runs
    import synth

    model = synth.generate_model(60, 400, seed=3)
    walker = bench_runs.Walker(model, random.Random(0))
    text = model.text()
    (tmp_path / "bench.fsm").write_text(text[: text.rindex("}")] + walker.bindings() + "}\n", encoding="utf-8")
    runs = tmp_path / "runs"
    runs.mkdir()
    bench_runs.write_runs(runs, model, 300, seed=5, per_file=100)
    report = _report([str(tmp_path / "bench.fsm")], [str(runs)])
    digest = _digest(report, tmp_path)
    summary = json.loads(report)["metrics"]
    compare_gold("runs-reading/bench.sha256", f"{digest}  runs {summary['runs']} passed {summary['passed']}\n")
