"""Issue 14, volume: what a coverage run keeps does not grow with the cases. A worker's part comes back as a tally
(counts and capped lists, and a few bytes per case for the ids across parts), not one outcome per case; the
invalid cases are listed up to a cap and counted past it; the report is the same as one process's."""

from __future__ import annotations

import json
import pickle
import tracemalloc
from pathlib import Path

import pytest

from mbt import api
from mbt.goldens.loader import GoldenStream
from mbt.measure import run as engine
from mbt.measure.run import ModelTally, RunTally, replay_part
from tests.cli_runner import run_mbt
from tests.split_goldens import write_split_goldens

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def goldens(tmp_path_factory):
    return write_split_goldens(tmp_path_factory.mktemp("goldens"))


def part_bytes(model: Path, golden_file: Path, lines: int, tmp_path: Path) -> int:
    """The memory a worker's result takes once received (unpickled), for the first `lines` lines of the goldens
    (covering ids capped)."""
    path = tmp_path / f"first-{lines}.jsonl"
    path.write_bytes(b"\n".join(golden_file.read_bytes().split(b"\n")[:lines]) + b"\n")
    _, models = api.load_models([str(model)])
    run = RunTally([ModelTally(m, covering_cap=2) for m in models], invalid_cap=5)
    data = pickle.dumps(replay_part(run, GoldenStream([str(path)])))
    tracemalloc.start()
    try:
        received = pickle.loads(data)
        return tracemalloc.get_traced_memory()[0] + 0 * len(received)
    finally:
        tracemalloc.stop()


def test_a_workers_result_grows_by_a_few_bytes_a_case(goldens, tmp_path):
    model, folder = goldens
    small, large = (part_bytes(model, folder / "goldens.jsonl", n, tmp_path) for n in (100, 350))
    per_case = (large - small) / 250
    # The findings (a divergence or contradiction in about one case in five), the capped lists filling up, and
    # the id, file and line of each case in a few bytes; one outcome per case, as before, took some 4,000 bytes.
    assert per_case < 1500, f"{per_case:.0f} bytes per case"


def test_parts_without_repeated_ids_are_added_up_not_replayed_again(goldens, monkeypatch):
    model, folder = goldens
    merged: list[int] = []
    real = RunTally.merge

    def spy(self, counts):
        merged.append(counts["valid"])
        real(self, counts)

    only = folder.parent / (folder.name + "-no-repeats")
    only.mkdir(exist_ok=True)
    (only / "goldens.jsonl").write_bytes((folder / "goldens.jsonl").read_bytes())
    _, models = api.load_models([str(model)])
    monkeypatch.setattr(engine, "PARALLEL_MIN_CHARS", 0)
    alone = api.measure(models, GoldenStream([str(only)]), 1).model_dump_json()
    monkeypatch.setattr(RunTally, "merge", spy)
    split = api.measure(models, GoldenStream([str(only)]), 3).model_dump_json()
    assert split == alone and len(merged) == 2 and all(merged)


def test_invalid_cases_past_the_cap_are_counted_not_listed(tmp_path, monkeypatch):
    path = tmp_path / "g.jsonl"
    good = [json.dumps({"id": f"G{i}", "turns": [{"user": "I forgot my password"}]}) for i in range(5)]
    path.write_text("\n".join(good + ["{broken"] * 30 + good[:2]) + "\n", encoding="utf-8")
    _, models = api.load_models(["models/recovery.fsm"])
    capped = api.measure(models, GoldenStream([str(path)], invalid_cap=10), 1, invalid_cap=10)
    whole = api.measure(models, GoldenStream([str(path)]), 1)
    assert (capped.goldens.read, capped.goldens.invalid, capped.goldens.valid) == (37, 32, 5)
    assert capped.goldens == whole.goldens
    assert capped.invalid_cases == whole.invalid_cases[:10] and capped.invalid_cases_more == 22
    assert [i.line for i in capped.invalid_cases] == list(range(6, 16))  # the first by place
    assert whole.invalid_cases_more == 0 and len(whole.invalid_cases) == 32
    monkeypatch.setattr(engine, "INVALID_CAP", 10)
    monkeypatch.setattr(api, "INVALID_CAP", 10)
    text = run_mbt("coverage", "--model", "models/recovery.fsm", "--goldens", str(path), "--no-gate").stdout
    assert "Invalid cases (32)" in text and "... and 22 more" in text
    every = run_mbt("coverage", "--model", "models/recovery.fsm", "--goldens", str(path), "--no-gate",
                    "--show-covering", "all").stdout
    assert "Invalid cases (32)" in every and "more" not in every.split("Invalid cases")[1]


def test_a_capped_invalid_list_is_the_same_through_workers(goldens, monkeypatch):
    model, folder = goldens
    monkeypatch.setattr(engine, "PARALLEL_MIN_CHARS", 0)
    _, models = api.load_models([str(model)])
    reports = [api.measure(models, GoldenStream([str(folder)], invalid_cap=3), jobs, invalid_cap=3,
                           covering_cap=2).model_dump_json() for jobs in (1, 3)]
    assert reports[0] == reports[1]
    report = json.loads(reports[0])
    assert len(report["invalid_cases"]) == 3 and report["invalid_cases_more"] == report["goldens"]["invalid"] - 3


def test_findings_past_the_cap_are_counted_not_listed_and_count_everywhere(goldens, monkeypatch):
    """Contradictions, divergences, unbound turns and unchecked parts: the first `cap` listed (by model, then
    case), the rest counted, through workers too; the gate, the baseline and the reporters count them all."""
    model, folder = goldens
    _, models = api.load_models([str(model)])
    whole = api.measure(models, GoldenStream([str(folder)]), 1)
    found = {name: len(getattr(whole, name)) for name in ("contradictions", "divergences", "unbound_turns", "notes")}
    assert found["contradictions"] > 3 and found["divergences"] > 3, found
    monkeypatch.setattr(engine, "PARALLEL_MIN_CHARS", 0)
    for jobs in (1, 3):
        capped = api.measure(models, GoldenStream([str(folder)], invalid_cap=3), jobs, invalid_cap=3, covering_cap=2)
        for name, count in found.items():
            # The run's own notes (a folder's file that is not a golden) follow the capped list, whole.
            listed = [f for f in getattr(capped, name) if getattr(f, "case", True)]
            replayed = [f for f in getattr(whole, name) if getattr(f, "case", True)]
            assert listed == replayed[:3], (name, jobs)
            assert capped.count(name) == count and getattr(capped, f"{name}_more") == max(0, len(replayed) - 3)
        # the goldens holding them are counted once each, however the run was split
        assert capped.goldens.contradicting == whole.goldens.contradicting > 3
    from mbt.measure.gate import DEFAULT_GATE, evaluate_gate
    from mbt.report import text as text_report

    gate, again = evaluate_gate(DEFAULT_GATE, capped), evaluate_gate(DEFAULT_GATE, whole)
    assert [(f.rule, f.actual) for f in gate.failures] == [(f.rule, f.actual) for f in again.failures]
    assert any(f.rule == "contradictions" and f.actual == found["contradictions"] for f in gate.failures)
    shown = "\n".join(text_report._findings_sections(capped, lambda s, *_: s))
    assert f"Contradictions ({found['contradictions']} in {whole.goldens.contradicting} goldens)" in shown
    assert f"... and {found['contradictions'] - 3:,} more" in shown


def test_golden_ids_are_packed_and_come_back_as_they_were():
    from mbt.measure.run import PackedStrings

    ids = PackedStrings()
    given = ["G-1", "", "caf\u00e9-\u4e2d\U0001f600", "tab\tquote\"nul\x00", "line\u2028sep", "G-1"]
    assert [ids.add(text) for text in given] == list(range(len(given)))
    assert ids.strings() == given and ids[2] == given[2] and len(ids) == 6
    again = pickle.loads(pickle.dumps(ids))
    assert again.strings() == given
