"""docs/user-guide.md's chapters are numbered once each, in order, and every place that cites one by number (README,
docs, the examples' README, mbt's own messages and help) names the chapter it means."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "user-guide.md"
# Where a chapter may be cited by number, and what the citing text is about (a word of the chapter's title).
CITING = [ROOT / "README.md", ROOT / "models" / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "mbt").rglob("*.py")]


def chapters() -> dict[int, str]:
    found = re.findall(r"^## (\d+)\. (.+)$", GUIDE.read_text(encoding="utf-8"), re.M)
    numbers = [int(n) for n, _ in found]
    assert numbers == list(range(1, len(numbers) + 1)), f"chapters numbered {numbers}"
    return {int(n): title for n, title in found}


def test_chapters_are_numbered_once_each_in_order():
    assert len(chapters()) >= 10


def test_every_citation_of_a_chapter_by_number_names_an_existing_chapter_about_it():
    titles = chapters()
    # "user guide's chapter 7 maps each GraphWalker concept", "(user guide, section 6)", "user-guide.md`, chapter 8 —"
    cite = re.compile(r"user[ -]guide(?:'s|\.md`?,?)?,? (?:chapter|section) (\d+)(.{0,80})", re.S | re.I)
    about = {"graphwalker": "GraphWalker", "generate": "Tests for the gaps", "ci": "in CI",
             "mutant": "Is my test set good?", "mutation": "Is my test set good?"}
    seen = 0
    for path in CITING:
        text = path.read_text(encoding="utf-8")
        for match in cite.finditer(text):
            number = int(match.group(1))
            # What the citing text is about: its own line, and what follows up to the next item or paragraph.
            before = text[text.rfind("\n", 0, match.start()) + 1:match.start()]
            after = re.split(r"\n\s*(?:-|\n)", match.group(2))[0]
            assert number in titles, f"{path.relative_to(ROOT)} cites chapter {number}, which does not exist"
            context = (before + after).lower()
            for word, title in about.items():
                if re.search(rf"\b{word}\b", context):
                    assert title in titles[number], (f"{path.relative_to(ROOT)}: chapter {number} is "
                                                     f"{titles[number]!r}, cited about {word}")
            seen += 1
    assert seen >= 4  # README's GraphWalker, generate and CI citations and the examples' mutation one
