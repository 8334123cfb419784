"""`mbt results site DIR`, the result viewer's files (the browser tests are in test_results_site_browser.py): a page
per set and its cases in chunks that hold what `mbt results show` shows, every value escaped, unchanged sets kept,
foreign folders left alone, the same store giving the same bytes; on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import os
import re
import unicodedata
from pathlib import Path

from mbt.report.site import ROW_CHUNK, fold_table, slug
from mbt.store.db import Store
from mbt.store.query import CaseFilters, show
from mbt.store.records import fold
from mbt.store.url import parse
from tests import site_data
from tests.cli_runner import run_mbt


def chunk(path: Path) -> tuple[int, list]:
    text = path.read_text(encoding="utf-8")
    found = re.fullmatch(r"mbt(?:Rows|Cases|Search)\((\d+),(.*)\);\n", text, re.S)
    assert found, text[:200]
    return int(found.group(1)), json.loads(found.group(2))


def site(url: str, folder: Path, *args: str):
    done = run_mbt("results", "site", folder, "--store", url, *args)
    assert done.returncode == 0, done.stderr
    return done


def test_a_page_per_set_and_the_cases_in_chunks_as_results_show_gives_them(store_url, tmp_path):
    site_data.make_store(store_url)
    out = tmp_path / "site"
    done = site(store_url, out)
    assert f"the viewer of 4 result set(s) written to {out} (0 unchanged, kept)" in done.stderr
    index = (out / "index.html").read_text(encoding="utf-8")
    for name in (site_data.QNA, site_data.RUNS, site_data.OLD):
        assert f'href="sets/{slug(name)}/index.html">{name}</a>' in index
    assert index.index(site_data.RUNS) < index.index(site_data.QNA) < index.index(site_data.OLD)  # newest first
    assert 'data-status="failed" data-type="runs" data-executor="gitlab:acme/agent job 9"' in index
    folder = out / "sets" / slug(site_data.QNA)
    page = (folder / "index.html").read_text(encoding="utf-8")
    assert "<th scope=\"row\">overall</th><td class=\"num\"></td><td class=\"num\">72</td>" in page
    assert "over the 108 case(s) run successfully" in page and "66.7%" in page  # 72 / 108
    index_chunk, rows = chunk(folder / "rows" / "00000.js")
    assert index_chunk == 0 and len(rows) == site_data.CASES <= ROW_CHUNK
    with Store(parse(store_url, "test")) as store:
        shown = show(store, site_data.QNA, CaseFilters(limit=None)).cases
        failed = [c.seq for c in show(store, site_data.QNA, CaseFilters(results=("fail",), limit=None)).cases]
    assert [(r[0], r[1], r[2], r[3]) for r in rows] == [(c.seq, c.key, int(c.kind == "multi"), c.overall)
                                                        for c in shown]
    assert [r[0] for r in rows if r[3] == "fail"] == failed
    assert rows[10][5] == site_data.SCRIPT_QUESTION and rows[10][7] == "pp"  # accuracy, safety
    assert rows[8][4] == 1 and rows[8][7] == "ee"  # case 9: in error
    _, texts = chunk(folder / "search" / "00000.js")  # what a search reads: the store's folded texts
    assert texts[6] == "phí chuyển khoản nội bộ là bao nhiêu?\nchuyển khoản nội bộ miễn phí."
    assert texts[11] == "question 12 about refunds\nand a follow-up 12.2\nanswer 12\nfollow-up answer 12.2"
    details = [d for name in ("00000.js", "00001.js") for d in chunk(folder / "cases" / name)[1]]
    assert [d["seq"] for d in details] == list(range(1, site_data.CASES + 1))
    twelve = details[11]
    assert twelve["kind"] == "multi" and [t[0] for t in twelve["qa"]] == ["Question 12 about refunds",
                                                                          "And a follow-up 12.2"]
    assert twelve["verdicts"][0] == ["accuracy", "pass", "accuracy of case 12: pass", "embedded"]
    assert twelve["history"][0]["calls"] == ["lookup(case=12)"]
    runs = out / "sets" / slug(site_data.RUNS)
    assert "Why it ended: RuntimeError: the agent&#39;s server went away" in (runs / "index.html").read_text()
    assert chunk(runs / "cases" / "00000.js")[1][1]["facts"][-1] == ["First deviation",
                                                                      "premature_success at message 2: says "
                                                                      "cancelled while confirming"]


def test_every_value_from_the_store_is_escaped(tmp_path):
    url = str(tmp_path / "r.db")
    site_data.make_store(url)
    out = tmp_path / "site"
    site(url, out)
    pages = {p: p.read_text(encoding="utf-8") for p in out.rglob("*.html")}
    assert len(pages) == 1 + 4 * 2
    for page, text in pages.items():
        assert "<script>window" not in text and "<img" not in text and "<b>" not in text, page
        scripts = re.findall(r"<script[^>]*>(.*?)</script>", text, re.S)
        assert all("<" not in s for s in scripts), page  # inline data never holds a tag
    index = pages[out / "index.html"]
    assert "&lt;b&gt;bold&lt;/b&gt; &#34;quoted&#34; &amp; &#39;single&#39;" in index
    hostile = out / "sets" / slug(site_data.HOSTILE)
    data = re.search(r'<script type="application/json" id="set-data">(.*?)</script>',
                     (hostile / "index.html").read_text(encoding="utf-8")).group(1)
    assert "\\u003cb\\u003ebold" in data and json.loads(data)["set"] == site_data.HOSTILE
    # In the chunks the texts are JSON strings, data for the script, which shows them as text.
    rows = chunk(out / "sets" / slug(site_data.QNA) / "rows" / "00000.js")[1]
    assert rows[10][6] == site_data.IMAGE_ANSWER


def test_unchanged_sets_keep_their_pages_and_changed_ones_are_written_again(tmp_path):
    url = str(tmp_path / "r.db")
    site_data.make_store(url)
    out = tmp_path / "site"
    site(url, out)
    qna = out / "sets" / slug(site_data.QNA) / "rows" / "00000.js"
    first = qna.stat().st_ino
    (out / "sets" / slug(site_data.OLD) / "stamp.txt").write_text("stale\n", encoding="utf-8")
    done = site(url, out)
    assert "(3 unchanged, kept)" in done.stderr  # the one with a stale stamp was written again
    assert qna.stat().st_ino == first  # kept: the same file, linked into the new folder
    assert run_mbt("results", "rename", site_data.QNA, "release-1.5", "--store", url).returncode == 0
    site(url, out)
    assert not (out / "sets" / slug(site_data.QNA)).exists()  # a renamed set moves to its new folder
    assert (out / "sets" / slug("release-1.5") / "rows" / "00000.js").is_file()
    assert "release-1.5" in (out / "index.html").read_text(encoding="utf-8")


def test_the_set_option_and_the_filters_choose_the_sets(tmp_path):
    url = str(tmp_path / "r.db")
    site_data.make_store(url)
    out = tmp_path / "one"
    site(url, out, "--set", site_data.OLD)
    assert [p.name for p in (out / "sets").iterdir()] == [slug(site_data.OLD)]
    out = tmp_path / "eval-done"
    site(url, out, "--type", "eval", "--status", "done")
    assert sorted(p.name for p in (out / "sets").iterdir()) == sorted([slug(site_data.QNA), slug(site_data.OLD)])


def test_bad_options_and_foreign_folders_exit_2(tmp_path):
    url = str(tmp_path / "r.db")
    site_data.make_store(url)
    done = run_mbt("results", "site", tmp_path / "s", "--store", url, "--set", "old-evl")
    assert done.returncode == 2 and "no result set named `old-evl`" in done.stderr and "old-eval" in done.stderr
    done = run_mbt("results", "site", tmp_path / "s", "--store", url, "--set", site_data.OLD, "--status", "done")
    assert done.returncode == 2 and "give one or the other" in done.stderr
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me", encoding="utf-8")
    done = run_mbt("results", "site", mine, "--store", url)
    assert done.returncode == 2 and "a folder mbt did not write" in done.stderr
    assert (mine / "notes.txt").read_text(encoding="utf-8") == "keep me"
    done = run_mbt("results", "site", tmp_path / "s", "--store", str(tmp_path / "none.db"))
    assert done.returncode == 2 and "no result store at" in done.stderr


def test_the_same_store_gives_the_same_site(tmp_path):
    url = str(tmp_path / "r.db")
    site_data.make_store(url)
    env = {"SOURCE_DATE_EPOCH": "1736150400"}
    for name in ("a", "b"):
        assert run_mbt("results", "site", tmp_path / name, "--store", url, env=env).returncode == 0
    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*") if p.is_file())
    assert all((tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes() for f in files)
    assert "2025-01-06 08:00:00 (UTC)" in (tmp_path / "a" / "index.html").read_text(encoding="utf-8")
    mode = os.stat(tmp_path / "a" / "index.html").st_mode & 0o777
    assert mode == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_the_scripts_fold_table_folds_as_the_store_does():
    """The viewer folds a search as NFC, lower case, then this table; that is Python's case folding."""
    table = fold_table()
    samples = ["STRASSE Straße ẞ", "ΣΊΣΥΦΟΣ ὈΔΥΣΣΕΎΣ", "CHUYỂN KHOẢN", "ﬁne ǰ İstanbul", "Ꭰ ꭰ µ ſ", "ǅ ǈ ǋ"]
    for text in samples:
        lowered = unicodedata.normalize("NFC", text).lower()
        assert "".join(table.get(ch, ch) for ch in lowered) == fold(text), text


def test_a_running_set_whose_writer_is_gone_is_shown_interrupted(tmp_path):
    import subprocess
    import sys

    url = str(tmp_path / "r.db")
    site_data.make_store(url)
    out = tmp_path / "site"
    site(url, out)
    page = out / "sets" / slug(site_data.HOSTILE) / "index.html"
    assert f"still being written when this page was (its writer, process {os.getpid()} on this machine" in \
        page.read_text(encoding="utf-8")
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    with Store(parse(url, "test")) as store, store.write() as conn:
        meta = json.loads(conn.exec_driver_sql("SELECT meta FROM result_sets WHERE status = 'running'").scalar_one())
        meta["writer"]["pid"] = int(gone.stdout)  # a process of this machine that has ended
        conn.exec_driver_sql("UPDATE result_sets SET meta = ? WHERE status = 'running'", (json.dumps(meta),))
    done = site(url, out)
    assert "(3 unchanged, kept)" in done.stderr  # the interrupted set is written again
    text = page.read_text(encoding="utf-8")
    assert "This set is interrupted: its writer is gone" in text and "mbt eval --resume &#39;&lt;b&gt;bold" in text


def test_results_list_and_show_say_a_running_set_whose_writer_is_gone_is_interrupted(tmp_path):
    # The viewer said it; the list and the set's page in text and JSON said `running` as if it were still written.
    import subprocess
    import sys

    url = str(tmp_path / "r.db")
    site_data.make_store(url)

    def listed() -> dict:
        done = run_mbt("results", "list", "--store", url, "--format", "json")
        assert done.returncode == 0, done.stderr
        return next(s for s in json.loads(done.stdout)["sets"] if s["status"] == "running")

    alive = listed()
    assert alive["interrupted"] is False and f"process {os.getpid()} on this machine" in alive["writer"]
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    with Store(parse(url, "test")) as store, store.write() as conn:
        meta = json.loads(conn.exec_driver_sql("SELECT meta FROM result_sets WHERE status = 'running'").scalar_one())
        meta["writer"]["pid"] = int(gone.stdout)  # a process of this machine that has ended
        conn.exec_driver_sql("UPDATE result_sets SET meta = ? WHERE status = 'running'", (json.dumps(meta),))
    stopped = listed()
    assert stopped["interrupted"] is True and stopped["writer"] is None and stopped["status"] == "running"
    table = run_mbt("results", "list", "--store", url).stdout
    row = next(line for line in table.splitlines() if line.startswith(site_data.HOSTILE[:8]))
    assert " interrupted " in row and " running " not in row
    shown = run_mbt("results", "show", site_data.HOSTILE, "--store", url).stdout
    assert "  interrupted: its writer stopped before the end (`mbt eval --resume NAME` continues it)" in shown
    assert "still running" not in shown
