"""A large coverage run replays the later half of its goldens in a forked second process: the report must be the
same as a run in one process, also when the second process fails, and repeated ids across the halves still count
once."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from mbt import api
from mbt.goldens.loader import GoldenStream
from mbt.measure import run as engine
from mbt.measure import second_process

sys.path.insert(0, str(Path(__file__).resolve().parent / "bench"))
import synth  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def goldens(tmp_path_factory):
    """Synthetic goldens, a broken line, and a second file that repeats ids of the first (found across halves)."""
    folder = tmp_path_factory.mktemp("goldens")
    model, golden_file, _ = synth.write_bench(folder, 40, 300, 400, seed=11)
    lines = golden_file.read_text(encoding="utf-8").splitlines()
    golden_file.write_text("\n".join(lines[:100] + ["{not json"] + lines[100:]) + "\n", encoding="utf-8")
    (folder / "zz-repeats.jsonl").write_text("\n".join(lines[:5]) + "\n", encoding="utf-8")
    shutil.copy(ROOT / "models" / "goldens" / "multi-turn.yaml", folder / "multi-turn.yaml")
    return model, folder


def report_json(model: Path, folder: Path, monkeypatch, min_chars: int) -> str:
    monkeypatch.setattr(engine, "SECOND_PROCESS_MIN_CHARS", min_chars)
    monkeypatch.setattr(second_process, "available", lambda: True)  # also on a one-core machine (fork: POSIX)
    _, models = api.load_models([str(model)])
    return api.measure(models, GoldenStream([str(folder)])).model_dump_json()


def test_two_processes_report_exactly_what_one_does(goldens, monkeypatch):
    model, folder = goldens
    started = []
    real = second_process.SecondProcess.__init__

    def spy(self, work):
        started.append(True)
        real(self, work)

    monkeypatch.setattr(second_process.SecondProcess, "__init__", spy)
    alone = report_json(model, folder, monkeypatch, 10 ** 12)
    assert not started
    both = report_json(model, folder, monkeypatch, 0)
    assert started
    assert both == alone
    assert '"duplicate case id `bench-000001`' in both and "not valid JSON" in both


def test_a_failing_second_process_changes_nothing(goldens, monkeypatch):
    model, folder = goldens
    alone = report_json(model, folder, monkeypatch, 10 ** 12)
    monkeypatch.setattr(second_process, "_run", lambda work, send: os._exit(3))
    assert report_json(model, folder, monkeypatch, 0) == alone


def test_a_stream_splits_between_lines_and_keeps_line_numbers(tmp_path):
    lines = [f'{{"id": "c{i}", "turns": [{{"event": "e"}}]}}' for i in range(50)]
    path = tmp_path / "g.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    whole = [(c.id, c.line) for c in GoldenStream([str(path)]).cases]
    first = GoldenStream([str(path)])
    later = first.split()
    assert later is not None
    early = [(c.id, c.line) for c in first.cases]
    assert early + [(c.id, c.line) for c in later.all_cases()] == whole and len(whole) == 50
    assert 20 <= len(early) <= 30  # cut near the middle
