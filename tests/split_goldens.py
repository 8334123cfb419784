"""Goldens for the tests of runs split into parts (tests/test_parallel.py, tests/test_distributed.py): a synthetic
model and 400 goldens with a broken line early, a line that is not UTF-8 late (so it falls in a later part), a
second file repeating ids of the first (found across parts) and a YAML file."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "bench"))
import synth  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def write_split_goldens(folder: Path) -> tuple[Path, Path]:
    model, golden_file, _ = synth.write_bench(folder, 40, 300, 400, seed=11)
    lines = golden_file.read_text(encoding="utf-8").splitlines()
    text = "\n".join(lines[:100] + ["{not json"] + lines[100:350]) + "\n"
    golden_file.write_bytes(text.encode("utf-8") + b'{"id": "caf\xe9"}\n' + ("\n".join(lines[350:]) + "\n").encode())
    (folder / "zz-repeats.jsonl").write_text("\n".join(lines[:5]) + "\n", encoding="utf-8")
    shutil.copy(ROOT / "models" / "goldens" / "multi-turn.yaml", folder / "multi-turn.yaml")
    return model, folder
