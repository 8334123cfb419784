"""Issue 14, volume: a long string costs memory in proportion to its length, not 200 times it. Python's regex engine
keeps a backtracking mark per character for a loop over single characters with alternatives (`"(?:[^"\\]|\\.)*"`),
some 120-150 bytes each; every quoted-string pattern is written as a loop over runs instead."""

from __future__ import annotations

import re
from pathlib import Path

from mbt.importers.dmn import load_dmn
from mbt.parsing.loader import parse_text
from tests.memory import peak_while

ROOT = Path(__file__).resolve().parent.parent
LONG = 200_000


def test_a_dmn_with_a_long_name_costs_a_few_times_its_size(tmp_path):
    dish = (ROOT / "tests" / "data" / "dmn" / "dish.dmn").read_text(encoding="utf-8")
    for name, text in (("name", dish.replace('name="Dish"', f'name="Dish{"x" * LONG}"', 1)),
                       ("description", dish.replace("<description>Default in fall</description>",
                                                    f"<description>Default {'x' * LONG}</description>", 1))):
        path = tmp_path / f"{name}.dmn"
        path.write_text(text, encoding="utf-8")
        load_dmn(path)  # parsers built and cached first: their size is not the string's
        used = peak_while(lambda path=path: load_dmn(path))
        assert used < 40 * LONG, f"{name}: {used:,} bytes for a {LONG:,}-character attribute (was some 200x)"


def test_a_model_with_a_long_string_parses_in_proportion(tmp_path):
    text = (f'table t {{\n  title "{"y" * LONG}"\n  hit first\n  input age: integer [0..150]\n'
            '  output band: string {"minor", "adult"}\n  rule minor: < 18 -> "minor"\n  rule adult: >= 18 -> "adult"\n}\n')
    parse_text(text, "t.dt")
    used = peak_while(lambda: parse_text(text, "t.dt"))
    assert used < 20 * LONG, f"{used:,} bytes to parse a {LONG:,}-character string"


PER_CHARACTER_LOOP = re.compile(r"\|\\\\\.\)\*")  # `...|\\.)*`: a loop over one character or one escape


def test_no_quoted_string_pattern_loops_over_single_characters():
    offenders = []
    for path in [*(ROOT / "mbt").rglob("*.py"), *(ROOT / "grammars").glob("*.lark")]:
        for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
            if PER_CHARACTER_LOOP.search(line) and not line.lstrip().startswith(("#", "//")):
                offenders.append(f"{path.relative_to(ROOT)}:{number}")
    assert offenders == []
