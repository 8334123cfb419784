"""Benchmark of the result viewer (`mbt results site`) on a set of 100,000 cases: the site written, then opened in
headless Chromium from disk (file://) and used as a person uses it, with real mouse clicks and typing (tests/browser.py,
the DevTools protocol over a pipe); the figures are measured in the browser.

    python tests/bench/bench_viewer.py              # 100,000 cases (the set is written first: about half a minute)
    python tests/bench/bench_viewer.py --quick      # 2,000 cases: a smoke run
    python tests/bench/bench_viewer.py --cases N

The cases are bench_store.py's synthetic eval cases (a quarter multi-turn, three criteria, a session each), written
through mbt.store.write.SetWriter as `--save` writes them. Measured:
- writing the site (mbt.report.site through the same OutputSet as `mbt results site`), its size on disk;
- opening the set's page: the time to the first rows shown and to every chunk of cases read (from the navigation's
  start, the page's own clock), and as the test sees it (from the navigation command to the rows on screen);
- the first search of a page, which reads every case's folded text first (search/NNNNN.js);
- each filter and search once every case is read: the page's time from the input event to the new rows drawn, and
  the wall time from the click or the typed text to the count on screen changing (what a person waits for);
- a filter clicked while the cases are still loading; the next page; a case's page deep in the set; the list of sets.
Wall times on a shared 2-core machine vary by a third from run to run; the in-page times are the best of three.
Never asserts (figures for a person, as the other benches).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))  # run from a checkout without installing

from mbt.files import OutputSet  # noqa: E402
from mbt.report.core import MARKER, MARKER_TEXT  # noqa: E402
from mbt.report.site import Site, slug  # noqa: E402
from mbt.store.db import Store  # noqa: E402
from mbt.store.pages import viewer_sets  # noqa: E402
from mbt.store.records import NewSet  # noqa: E402
from mbt.store.url import parse  # noqa: E402
from mbt.store.write import SetWriter  # noqa: E402
from tests.bench.bench_store import CRITERIA, records  # noqa: E402
from tests.browser import Browser  # noqa: E402

FULL, QUICK = 100_000, 2_000
INSTANT_MS = 100
COUNT = "document.getElementById('case-count').textContent"


def ms(value: float) -> str:
    flag = "" if value <= INSTANT_MS else f"   (over {INSTANT_MS} ms)"
    return f"{value:8.1f} ms{flag}"


def write_site(url: str, folder: Path) -> tuple[float, float]:
    with Store(parse(url, "bench")) as store:
        site = Site(viewer_sets(store), folder)
        start = time.perf_counter()
        with OutputSet() as out:
            from itertools import chain

            from mbt.files import Files

            out.folder(folder, Files(chain(site.files(), [(MARKER, MARKER_TEXT)])))
        seconds = time.perf_counter() - start
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    return seconds, size / 1e6


def changed(browser: Browser, before: str, act) -> tuple[float, float, str, float]:
    """Do `act` and wait for the count on screen to change and the result to be whole: (wall ms, the page's ms from
    the last input event to the whole result drawn, the count shown, the page's ms to its first rows drawn)."""
    browser.value("window.mbtViewer.timings.filter = undefined")
    start = time.perf_counter()
    act()
    browser.wait_for(f"{COUNT} !== {before!r} && window.mbtViewer.timings.filter !== undefined "
                     "&& document.body.dataset.loaded === '1'", timeout=120)
    wall = (time.perf_counter() - start) * 1000
    return (wall, browser.value("window.mbtViewer.timings.filter"), browser.value(COUNT),
            browser.value("window.mbtViewer.timings.filterFirst"))


def run(count: int) -> None:
    with tempfile.TemporaryDirectory(prefix="mbt-bench-viewer-") as tmp:
        folder = Path(tmp)
        url = str(folder / "results.db")
        print(f"\n== the result viewer: a set of {count:,} cases")
        start = time.perf_counter()
        with Store(parse(url, "bench")) as store, \
                SetWriter(store, NewSet("bench-A", "suite", "eval", "user:bench",
                                        {"criteria": dict.fromkeys(CRITERIA, "1")}, {})) as writer:
            writer.add(records(count, 1))
            writer.finish({})
        print(f"store the set:                          {time.perf_counter() - start:8.2f} s")
        site = folder / "site"
        seconds, size = write_site(url, site)
        print(f"write the site:                         {seconds:8.2f} s   {size:,.1f} MB on disk")
        seconds, _ = write_site(url, site)
        print(f"write it again (the set unchanged):     {seconds:8.2f} s   (its pages kept, linked)")
        page = (site / "sets" / slug("bench-A") / "index.html").as_uri()
        with Browser(folder / "profile") as browser:
            browser.open((site / "index.html").as_uri())  # warm: the browser's own start-up is not the viewer's
            opened = []
            for attempt in range(3):  # a new address each time (a query), so the page is loaded anew
                start = time.perf_counter()
                browser.open(page + f"?try={attempt}")
                first_wall = (time.perf_counter() - start) * 1000
                browser.wait_for("document.body.dataset.loaded === '1'", timeout=300)
                all_wall = (time.perf_counter() - start) * 1000
                t = browser.value("window.mbtViewer.timings")
                opened.append((t["firstRender"], first_wall, t["loaded"], all_wall))
            best_first = min(opened)
            best_all = min(opened, key=lambda o: o[2])
            print(f"first rows shown (page clock):          {ms(best_first[0])}"
                  f"   as the test sees it: {best_first[1]:,.0f} ms")
            print(f"every case read (page clock):           {best_all[2]:8.1f} ms"
                  f"   as the test sees it: {best_all[3]:,.0f} ms")
            # A search typed as soon as the rows are read, while the texts it reads (search/NNNNN.js) still load.
            browser.open(page + "?cold=1", ready="document.body.dataset.loaded === '1'")
            wall, inside, shown, first = changed(browser, browser.value(COUNT),
                                                 lambda: browser.type("#case-search", "refund card"))
            print(f"search typed while the texts load:      {ms(first)}   first rows; whole after {inside:,.0f} ms "
                  f"(wall {wall:,.0f} ms; {shown})")
            browser.type("#case-search", "")
            total = f"{count} case(s)"
            browser.wait_for("window.mbtViewer.timings.textsLoaded !== undefined", timeout=300)
            figures: dict[str, list[tuple[float, float, str, float]]] = {}

            def measure(label: str, act, undo) -> None:
                for _ in range(3):
                    before = browser.value(COUNT)
                    figures.setdefault(label, []).append(changed(browser, before, act))
                    undo()
                    browser.wait_for(f"{COUNT} === {total!r}")

            measure("result fail (click)", lambda: browser.click("input[name=result][value=fail]"),
                    lambda: browser.click("input[name=result][value=fail]"))
            measure("run successfully (click)", lambda: browser.click("input[name=result][value=ok]"),
                    lambda: browser.click("input[name=result][value=ok]"))
            measure("multi-turn (click)", lambda: browser.click("input[name=turns][value=multi]"),
                    lambda: browser.click("input[name=turns][value='']"))
            measure("search 'refund card' (typed)", lambda: browser.type("#case-search", "refund card"),
                    lambda: browser.type("#case-search", ""))
            measure("search with no hit (typed)", lambda: browser.type("#case-search", "no such words"),
                    lambda: browser.type("#case-search", ""))
            measure("search '退款' in failed cases", lambda: (browser.click("input[name=result][value=fail]"),
                                                             browser.type("#case-search", "退款")),
                    lambda: (browser.type("#case-search", ""), browser.click("input[name=result][value=fail]")))
            for label, found in figures.items():
                wall = min(f[0] for f in found)
                inside = min(f[1] for f in found)
                print(f"{label + ':':40}{ms(inside)}   wall {wall:6.0f} ms   ({found[0][2]})")
            browser.click("input[name=result][value=fail]")
            start = time.perf_counter()
            before = browser.value("document.getElementById('page-at').textContent")
            browser.click("#page-next")
            browser.wait_for(f"document.getElementById('page-at').textContent !== {before!r}")
            print(f"next page (click, wall):                {(time.perf_counter() - start) * 1000:8.1f} ms")
            # A filter clicked before the cases are all read: the rows read so far are filtered at once.
            browser.open(page + "?again=1")
            loaded = browser.value("document.body.dataset.loaded === '1'")
            wall, inside, shown, first = changed(browser, browser.value(COUNT),
                                                 lambda: browser.click("input[name=result][value=fail]"))
            print(f"result fail while the rows load:        {ms(first)}   first rows; whole after {inside:,.0f} ms "
                  f"(wall {wall:,.0f} ms; {'every case was read already' if loaded else shown})")
            deep = count * 9 // 10
            start = time.perf_counter()
            browser.open(page.replace("index.html", f"case.html?i={deep}"))
            print(f"a case's page deep in the set (wall):   {(time.perf_counter() - start) * 1000:8.1f} ms")
            start = time.perf_counter()
            browser.open((site / "index.html").as_uri() + "?again=1")
            print(f"the list of sets (wall):                {(time.perf_counter() - start) * 1000:8.1f} ms")
            assert not browser.errors, browser.errors


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help=f"{QUICK:,} cases instead of {FULL:,}")
    ap.add_argument("--cases", type=int, default=None, help="cases in the set")
    args = ap.parse_args(argv)
    run(args.cases or (QUICK if args.quick else FULL))
    return 0


if __name__ == "__main__":
    sys.exit(main())
