"""The benchmark's generator (tests/bench/synth.py): its models parse and check clean, its goldens bind and replay to
exactly the contradictions and divergences it planted, and sizes and seeds behave as asked."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mbt import api
from mbt.goldens.loader import load_goldens
from mbt.parsing.loader import load_file

sys.path.insert(0, str(Path(__file__).resolve().parent / "bench"))
import synth  # noqa: E402

STATES, TRANSITIONS, GOLDENS = 60, 400, 300


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bench")
    model_path, golden_path, stats = synth.write_bench(folder, STATES, TRANSITIONS, GOLDENS, seed=3)
    return folder, model_path, golden_path, stats


def test_files_land_only_in_the_folder_given(bench):
    folder, model_path, golden_path, _ = bench
    assert sorted(p.name for p in folder.iterdir()) == ["bench.fsm", "goldens.jsonl"]
    assert model_path.parent == folder and golden_path.parent == folder


def test_the_model_has_the_sizes_asked_for_and_is_connected(bench):
    _, model_path, _, _ = bench
    model = load_file(str(model_path)).models[0]
    assert len(model.states) == STATES
    assert len(model.transitions) == TRANSITIONS
    assert len(model.events) == synth.EVENT_COUNT
    assert model.initial_state == "s0"
    assert 1 <= sum(s.final for s in model.states.values()) < STATES // 10
    guarded = sum(t.guard is not None for t in model.transitions)
    assert 0.1 < guarded / TRANSITIONS < 0.35, guarded  # about a fifth of the transitions carry a guard
    assert any(t.actions for t in model.transitions)
    assert model.forbids and any(e.params for e in model.events.values())
    reached, frontier = {"s0"}, ["s0"]
    while frontier:
        source = frontier.pop()
        for t in model.transitions:
            if t.source == source and t.target not in reached:
                reached.add(t.target)
                frontier.append(t.target)
    assert len(reached) == STATES


def test_the_model_checks_clean(bench):
    _, model_path, _, _ = bench
    report = api.check([str(model_path)])
    assert report.count("error") == 0, [f.message for f in report.findings if f.severity == "error"]
    assert report.count("warning") == 0, [f.message for f in report.findings if f.severity == "warning"]


def test_goldens_bind_and_replay_to_exactly_the_planted_disagreements(bench):
    _, model_path, golden_path, stats = bench
    lines = golden_path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == GOLDENS == stats.cases
    turns = [len(json.loads(line)["turns"]) for line in lines]
    assert min(turns) >= 5 and max(turns) <= 10 and sum(turns) == stats.turns
    goldens = load_goldens([str(golden_path)])
    assert not goldens.invalid and len(goldens.cases) == GOLDENS
    _, models = api.load_models([str(model_path)])
    report = api.measure(models, goldens)
    assert report.goldens.bound == GOLDENS and not report.unbound_turns
    # The generator computed every asserted state by its own walk: only the deliberately wrong ones disagree.
    assert stats.wrong > 0 and len(report.contradictions) == stats.wrong
    assert stats.diverging > 0 and len(report.divergences) == stats.diverging
    assert stats.text_only > 0 and stats.asserted > 0 and not report.notes
    assert report.models[0].criterion("forbidden").verified.covered > 0


def test_same_seed_same_files_other_seed_other_files(tmp_path):
    first = synth.write_bench(tmp_path / "a", 30, 150, 20, seed=5)
    again = synth.write_bench(tmp_path / "b", 30, 150, 20, seed=5)
    other = synth.write_bench(tmp_path / "c", 30, 150, 20, seed=6)
    for i in (0, 1):
        assert first[i].read_bytes() == again[i].read_bytes()
        assert first[i].read_bytes() != other[i].read_bytes()


def test_impossible_sizes_are_refused():
    with pytest.raises(ValueError):
        synth.generate_model(states=50, transitions=10)
