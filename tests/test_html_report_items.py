"""The HTML report's header, per-golden page, baseline comparison, findings tables and bars, and bounded diagrams."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from mbt import __version__
from tests.cli_runner import run_mbt

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "bench"))
import synth  # noqa: E402 - the benchmark's seeded model generator

ALL = ["--model", "models/", "--goldens", "models/goldens/"]


class Tables(HTMLParser):
    """Every table of a page: its header cells and its rows' cell texts."""

    def __init__(self):
        super().__init__()
        self.tables: list[dict] = []
        self._cell: list[str] | None = None
        self._row: list[str] | None = None
        self._in_head = False

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append({"head": [], "rows": [], "attrs": dict(attrs)})
        elif tag == "thead":
            self._in_head = True
        elif tag == "tr" and self.tables:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            (self.tables[-1]["head"] if self._in_head else self.tables[-1]["rows"]).append(self._row)
            self._row = None
        elif tag == "thead":
            self._in_head = False

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def tables(path: Path) -> list[dict]:
    parser = Tables()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser.tables


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("items")
    result = run_mbt("coverage", *ALL, "--format", f"html:{out / 'site'}", "--format", f"json:{out / 'cov.json'}",
                     "--format", f"cases-csv:{out / 'cases.csv'}", cwd=ROOT, env={"SOURCE_DATE_EPOCH": "1764633600"})
    assert result.returncode == 1, result.stderr
    return out


def test_the_header_names_date_version_commit_and_command(report):
    index = (report / "site" / "index.html").read_text(encoding="utf-8")
    head = re.search(r'<div class="provenance"[^>]*>(.*?)</div>', index, re.S).group(1)
    assert "2025-12-02 00:00 UTC" in head  # SOURCE_DATE_EPOCH 1764633600
    assert f"mbt {__version__}" in head
    commit = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    if commit.returncode == 0:
        assert f"commit <code>{commit.stdout.strip()}" in head
    assert "mbt coverage --model models/ --goldens models/goldens/ --format html:" in head


def test_no_cell_shows_raw_backticks_or_none(report):
    for page in sorted((report / "site").glob("*.html")):
        for table in tables(page):
            for row in table["rows"]:
                for cell in row:
                    assert "`" not in cell and not re.search(r"\bNone\b", cell), (page.name, cell)


def test_every_findings_table_has_a_model_column(report):
    found = tables(report / "site" / "findings.html")
    assert len(found) >= 5
    for table in found:
        assert "model" in table["head"][0], table["head"]


def test_the_forbidden_bar_is_green_when_everything_forbidden_is_verified(report):
    data = json.loads((report / "cov.json").read_text(encoding="utf-8"))
    index = (report / "site" / "index.html").read_text(encoding="utf-8")
    sections = re.findall(r'<section class="model-summary">(.*?)</section>', index, re.S)
    assert len(sections) == len(data["models"])
    complete_seen = incomplete_seen = False
    for m, section in zip(data["models"], sections):
        c = next((c for c in m["criteria"] if c["criterion"] == "forbidden"), None)
        if c is None or c["verified"]["total"] == 0:
            continue
        bar = re.search(r'<tr class="crit-forbidden">.*?<div class="meter ([^"]*)"', section, re.S).group(1)
        complete = c["verified"]["covered"] == c["verified"]["total"]
        assert ("complete" in bar.split()) == complete, (m["model"], bar)
        complete_seen |= complete
        incomplete_seen |= not complete
    assert complete_seen and incomplete_seen  # the examples show both


def test_the_goldens_page_shows_every_case_with_its_verdict(report):
    rows = list(csv.DictReader(io.StringIO((report / "cases.csv").read_text(encoding="utf-8")[1:])))
    (table,) = [t for t in tables(report / "site" / "goldens.html") if t["attrs"].get("id") == "cases"]
    assert len(table["rows"]) == len(rows)
    for row, shown in zip(rows, table["rows"]):
        assert shown[0].startswith(row["id"] or "—") and row["where"] in shown[0]
        assert shown[2].startswith(row["verdict"])
        assert shown[4] == row["turns"]


def test_the_baseline_comparison_shows_gains_and_losses(tmp_path):
    base = tmp_path / "base.json"
    model = "models/recovery.fsm"
    few = ["--goldens", "models/goldens/golden.jsonl"]
    assert run_mbt("coverage", "--model", model, *few, "--no-gate", "--save-baseline", base, cwd=ROOT).returncode == 0
    site = tmp_path / "site"
    run_mbt("coverage", "--model", model, "--goldens", "models/goldens/", "--baseline", base,
            "--format", f"html:{site}", "--format", f"json:{tmp_path / 'now.json'}", cwd=ROOT)
    before = json.loads(base.read_text(encoding="utf-8"))["models"]["recovery"]["criteria"]
    now = {c["criterion"]: c["verified"] for c in json.loads((tmp_path / "now.json").read_text())["models"][0]["criteria"]}
    index = site / "index.html"
    (table,) = [t for t in tables(index) if t["head"] and t["head"][0][:3] == ["model", "criterion", "baseline"]]
    assert len(table["rows"]) == len(now)
    for row in table["rows"]:
        criterion = row[1]
        delta = now[criterion]["covered"] - before[criterion]["covered"]
        expected = "gained" if delta > 0 else "lost" if delta < 0 else "same"
        assert expected in row[4] and (f"{delta:+d}" in row[4]) == (delta != 0), row
        assert row[2].startswith(f"{before[criterion]['covered']}/{before[criterion]['total']}")
    assert any("gained" in r[4] for r in table["rows"])


def test_report_diagrams_have_short_labels_and_the_actions_on_hover(report):
    (page,) = [p for p in (report / "site").glob("model-recovery-*.html") if "invariants" not in p.name]
    model = page.read_text(encoding="utf-8")
    svg = model[model.index("<svg"):model.index("</svg>")]
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    assert texts and not any(":=" in t for t in texts)  # no assignment printed on an edge
    titles = re.findall(r'xlink:title="([^"]*)"', svg)
    assert any(":=" in t for t in titles)  # the full transition, actions included, is the tooltip


def large_model(tmp_path: Path, transitions: int) -> Path:
    model = synth.generate_model(states=60, transitions=transitions, seed=3)
    path = tmp_path / f"m{transitions}.fsm"
    path.write_text(model.text(), encoding="utf-8")
    return path


def test_a_large_diagram_is_drawn_in_its_bounded_form(tmp_path):
    from mbt.render.dot import LARGE_GRAPH_EDGES

    path = large_model(tmp_path, LARGE_GRAPH_EDGES + 20)
    site = tmp_path / "site"
    result = run_mbt("coverage", "--model", path, "--no-gate", "--format", f"html:{site}", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    page = next(site.glob("model-*.html")).read_text(encoding="utf-8")
    assert "<svg" in page and "drawn with sfdp" in page
    small = large_model(tmp_path, LARGE_GRAPH_EDGES - 20)
    run_mbt("coverage", "--model", small, "--no-gate", "--format", f"html:{tmp_path / 'small'}", cwd=tmp_path)
    assert "drawn with sfdp" not in next((tmp_path / "small").glob("model-*.html")).read_text(encoding="utf-8")
    rendered = run_mbt("render", "--model", path, "-o", tmp_path / "big.svg", cwd=tmp_path)
    assert rendered.returncode == 0 and "drawn with sfdp" in rendered.stderr
    assert (tmp_path / "big.svg").read_bytes().lstrip().startswith(b"<?xml")


def test_a_layout_past_its_time_limit_leaves_a_note_and_the_other_reports(tmp_path):
    site, data = tmp_path / "site", tmp_path / "cov.json"
    result = run_mbt("coverage", "--model", "models/recovery.fsm", "--no-gate", "--format", f"html:{site}",
                     "--format", f"json:{data}", cwd=ROOT, env={"MBT_LAYOUT_TIMEOUT": "0.0001"})
    assert result.returncode == 0, result.stderr
    assert json.loads(data.read_text(encoding="utf-8"))["models"][0]["model"] == "recovery"
    page = next(site.glob("model-*.html")).read_text(encoding="utf-8")
    assert "<svg" not in page and "took longer than 0.0001 s" in page


def test_the_other_reports_are_written_before_a_diagram_is_drawn(tmp_path):
    """A fake `dot` first checks that the JSON report is already on disk (else it fails, and the page says so)."""
    data = tmp_path / "cov.json"
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "dot").write_text(f"#!/bin/sh\ntest -f {data} || exit 7\ncat >/dev/null\n"
                              "echo '<svg xmlns=\"http://www.w3.org/2000/svg\"><text>drawn after</text></svg>'\n",
                              encoding="utf-8")
    os.chmod(fake / "dot", 0o755)
    site = tmp_path / "site"
    result = run_mbt("coverage", "--model", "models/recovery.fsm", "--no-gate", "--format", f"json:{data}",
                     "--format", f"html:{site}", cwd=ROOT, env={"PATH": f"{fake}:{os.environ['PATH']}"})
    assert result.returncode == 0, result.stderr
    assert "drawn after" in next(site.glob("model-*.html")).read_text(encoding="utf-8")
