"""The compiled-model cache: a second run loads the models from it with the same report; a change to a model file,
to a source document the model cites or to mbt gives a fresh result; a damaged entry is ignored with a note."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mbt import api, cache
from mbt.parsing import loader
from tests.cli_runner import run_mbt

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A copy of the example models and goldens, and the cache on, in a folder of the test's own."""
    monkeypatch.delenv("MBT_NO_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    shutil.copytree(ROOT / "models", tmp_path / "models")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def parses(monkeypatch):
    """How many times model files are parsed."""
    count = [0]
    real = loader.load_paths

    def counting(paths):
        count[0] += 1
        return real(paths)

    monkeypatch.setattr(cache, "load_paths", counting)
    return count


def coverage_json(*extra: str) -> str:
    done = run_mbt("coverage", "--model", "models/", "--goldens", "models/goldens/", "--no-gate", "--format", "json",
                   *extra)
    assert done.returncode == 0, done.stderr
    return done.stdout


def entries(project: Path) -> list[Path]:
    return sorted((project / "cache" / "mbt" / "models").glob("*.pickle"))


def test_a_second_run_comes_from_the_cache_with_the_same_report(project, parses):
    first = coverage_json()
    assert parses[0] == 1 and len(entries(project)) == 1
    second = coverage_json()
    assert parses[0] == 1, "the second run parsed the models again"
    assert second == first
    assert coverage_json("--no-cache") == first and parses[0] == 2


def test_the_cache_report_equals_a_run_without_it(project):
    without = coverage_json("--no-cache")
    coverage_json()
    assert coverage_json() == without


def test_a_changed_model_file_is_parsed_again(project, parses):
    coverage_json()
    model = project / "models" / "recovery.fsm"
    model.write_text(model.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    coverage_json()
    assert parses[0] == 2 and len(entries(project)) == 2


def test_a_changed_source_document_is_read_again(project, parses):
    coverage_json()
    files = api.load_models(["models/"])[0]
    cited = sorted({str(cache.source_path(f.path, d)) for f in files for d in f.sources.values()})
    assert cited, "the examples cite source documents"
    document = Path(cited[0])
    document.write_text(document.read_text(encoding="utf-8") + "\nA new paragraph.\n", encoding="utf-8")
    coverage_json()
    assert parses[0] == 2


def test_a_changed_mbt_gives_new_keys(project, parses, monkeypatch):
    coverage_json()
    monkeypatch.setattr(cache, "mbt_digest", lambda: "another mbt")
    coverage_json()
    assert parses[0] == 2 and len(entries(project)) == 2


def test_mbt_digest_covers_the_code_and_the_grammars():
    cache.mbt_digest.cache_clear()
    digest = cache.mbt_digest()
    assert len(digest) == 64 and digest == cache.mbt_digest()
    grammar = cache.grammar_dir() / "fsm.lark"
    original = grammar.read_bytes()
    try:
        grammar.write_bytes(original + b"\n")
        cache.mbt_digest.cache_clear()
        assert cache.mbt_digest() != digest, "a changed grammar must change the key"
    finally:
        grammar.write_bytes(original)
        cache.mbt_digest.cache_clear()
    assert cache.mbt_digest() == digest


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "empty"])
def test_a_damaged_entry_is_ignored_with_a_note_and_rebuilt(project, parses, damage):
    first = json.loads(coverage_json())
    entry = entries(project)[0]
    data = entry.read_bytes()
    entry.write_bytes({"truncate": data[: len(data) // 2], "flip": data[:-10] + bytes([data[-10] ^ 1]) + data[-9:],
                       "garbage": b"\x80\x04not a pickle", "empty": b""}[damage])
    report = json.loads(coverage_json())
    assert parses[0] == 2
    notes = [n["message"] for n in report["notes"] if "compiled-model cache" in n["message"]]
    assert len(notes) == 1 and str(entry) in notes[0] and "rebuilt" in notes[0]
    report["notes"] = [n for n in report["notes"] if "compiled-model cache" not in n["message"]]
    assert report == first
    assert json.loads(coverage_json()) == first and parses[0] == 2  # the rebuilt entry is good


def test_no_cache_by_environment(project, parses, monkeypatch):
    monkeypatch.setenv("MBT_NO_CACHE", "1")
    coverage_json()
    coverage_json()
    assert parses[0] == 2 and entries(project) == []


def test_bad_models_are_reported_and_never_cached(project):
    bad = project / "models" / "broken.fsm"
    bad.write_text("fsm x {\n  state a initial\n  a -> nowhere on go\n}\n", encoding="utf-8")
    for _ in range(2):
        done = run_mbt("coverage", "--model", bad, "--no-gate")
        assert done.returncode == 2 and f"{bad}:" in done.stderr and "Traceback" not in done.stderr
    assert entries(project) == []
