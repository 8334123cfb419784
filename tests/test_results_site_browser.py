"""The result viewer (`mbt results site`) in headless Chromium, opened from disk as a person opens it and used with
real clicks and typing (tests/browser.py): every filter and the search of the list of sets and of a set's cases,
each checked against what `mbt results list` / `mbt results show` give for the same filters; paging; the way to a
case and back with the filters kept; a case's explanation, answers and history; hostile texts shown as text and never
run; axe-core on every kind of page (0 serious or critical violations); no page error anywhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mbt.report.site import slug
from mbt.store.db import Store
from mbt.store.query import CaseFilters, SetFilters, list_sets, show
from mbt.store.url import parse
from tests import site_data
from tests.browser import Browser
from tests.cli_runner import run_mbt
from tests.test_html_report import AXE, OUTPUT

pytestmark = pytest.mark.slow

VISIBLE_SETS = "Array.from(document.querySelectorAll('#sets tbody tr')).filter(r => !r.hidden).map(r => r.dataset.name)"
SHOWN_CASES = "Array.from(document.querySelectorAll('#cases tbody tr')).map(r => Number(r.cells[0].textContent))"
CASE_COUNT = "document.getElementById('case-count').textContent"


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> tuple[str, Path]:
    folder = tmp_path_factory.mktemp("viewer")
    url = str(folder / "results.db")
    site_data.make_store(url)
    done = run_mbt("results", "site", folder / "site", "--store", url)
    assert done.returncode == 0, done.stderr
    return url, folder / "site"


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    with Browser(tmp_path_factory.mktemp("profile")) as opened:
        yield opened


@pytest.fixture(autouse=True)
def no_page_errors(browser):
    browser.errors.clear()
    yield
    browser.pump(0.05)
    assert browser.errors == []


def set_page(site: Path, name: str, page: str = "index.html") -> str:
    return (site / "sets" / slug(name) / page).as_uri()


# ------------------------------------------------------------------ the list of result sets


def test_the_list_of_sets_filters_as_mbt_results_list_does(made, browser):
    url, site = made
    browser.open((site / "index.html").as_uri())
    with Store(parse(url, "test")) as store:
        def expected(**filters) -> list[str]:
            return [s.name for s in list_sets(store, SetFilters(**filters)).sets]

        assert browser.value(VISIBLE_SETS) == expected() and len(expected()) == 4
        browser.type("#set-search", "NIGHTLY")  # any case, as --search
        assert browser.value(VISIBLE_SETS) == expected(search="nightly") == [site_data.RUNS]
        browser.type("#set-search", "")
        browser.click("input[name=status][value=done]")
        assert browser.value(VISIBLE_SETS) == expected(statuses=("done",)) == [site_data.QNA, site_data.OLD]
        browser.click("input[name=status][value=running]")
        assert browser.value(VISIBLE_SETS) == expected(statuses=("done", "running"))
        assert browser.value("document.getElementById('set-count').textContent") == "3 of 4 result set(s) match"
        browser.click("input[name=status][value=done]")
        browser.click("input[name=status][value=running]")
        browser.click("input[name=type][value=runs]")
        assert browser.value(VISIBLE_SETS) == expected(run_types=("runs",)) == [site_data.RUNS]
        browser.click("input[name=type][value=runs]")
        browser.click("input[name=type][value=eval]")
        assert browser.value(VISIBLE_SETS) == expected(run_types=("eval",))
        browser.click("input[name=type][value=eval]")
        browser.type("#set-executor", "Alice")
        assert browser.value(VISIBLE_SETS) == expected(executor="alice") == [site_data.OLD]
        browser.type("#set-executor", "")
        browser.click("#set-since", left=12)  # a date field takes its digits key by key (month, day, year)
        browser.press("01072025")
        assert browser.value(VISIBLE_SETS) == expected(since="2025-01-07") == [site_data.RUNS, site_data.HOSTILE]
        browser.click("#set-until", left=12)
        browser.press("01092025")
        assert browser.value(VISIBLE_SETS) == expected(since="2025-01-07", until="2025-01-09") == [site_data.HOSTILE]
        assert browser.value("location.hash") == "#since=2025-01-07&until=2025-01-09"
        browser.open((site / "index.html").as_uri() + "?again=1#since=2025-01-07&until=2025-01-09")
        assert browser.value(VISIBLE_SETS) == [site_data.HOSTILE]  # the filters kept in the address
        assert browser.value("document.getElementById('set-until').value") == "2025-01-09"
    browser.click(f"a[href='sets/{slug(site_data.HOSTILE)}/index.html']")
    browser.wait_for("document.body.dataset.page === 'set' && document.body.dataset.ready === '1'")
    assert browser.value("document.querySelector('h1').firstChild.textContent.trim()") == site_data.HOSTILE
    assert "still being written" in browser.value("document.querySelector('.note').textContent")


# ------------------------------------------------------------------ a set's cases


def typed(browser: Browser, selector: str, text: str) -> None:
    """Type into a field, then wait until every case the filters need is read (a first search reads the texts)."""
    browser.type(selector, text)
    browser.wait_for("document.body.dataset.loaded === '1'")


def _check(browser: Browser, store: Store, filters: CaseFilters) -> list[int]:
    view = show(store, site_data.QNA, CaseFilters(filters.turns, filters.results, filters.search, limit=None))
    wanted = [c.seq for c in view.cases]
    assert browser.value(SHOWN_CASES) == wanted[:50], filters
    filtered = filters.turns or filters.results or filters.search
    count = f"{view.matching} of {site_data.CASES} case(s) match" if filtered else f"{site_data.CASES} case(s)"
    assert browser.value(CASE_COUNT) == count
    return wanted


def test_every_filter_and_the_search_show_the_cases_mbt_results_show_does(made, browser):
    url, site = made
    browser.open(set_page(site, site_data.QNA), ready="document.body.dataset.loaded === '1'")
    with Store(parse(url, "test")) as store:
        _check(browser, store, CaseFilters())
        browser.click("input[name=turns][value=single]")
        assert len(_check(browser, store, CaseFilters(turns="single"))) == 90
        browser.click("input[name=turns][value=multi]")
        assert len(_check(browser, store, CaseFilters(turns="multi"))) == 30
        browser.click("input[name=turns][value='']")
        for result, count in (("pass", 72), ("fail", 24), ("not_judged", 12), ("error", 12), ("ok", 108)):
            browser.click(f"input[name=result][value={result}]")
            assert len(_check(browser, store, CaseFilters(results=(result,)))) == count
            browser.click(f"input[name=result][value={result}]")
        browser.click("input[name=result][value=fail]")
        browser.click("input[name=result][value=error]")
        assert len(_check(browser, store, CaseFilters(results=("fail", "error")))) == 36
        browser.click("input[name=turns][value=multi]")
        _check(browser, store, CaseFilters(turns="multi", results=("fail", "error")))
        typed(browser, "#case-search", "refunds")
        assert _check(browser, store, CaseFilters(turns="multi", results=("fail", "error"), search="refunds")) \
            == [36, 96]
        browser.click("input[name=result][value=fail]")
        browser.click("input[name=result][value=error]")
        browser.click("input[name=turns][value='']")
        for search, cases in (("Question 3 about", [3]),  # a question
                              ("answer 11", None),  # an actual answer (Answer 110 ... too), any case
                              ("follow-up 12.2", [12]),  # a second turn's question
                              ("chuyển khoản", [7]),  # CHUYỂN KHOẢN, folded beyond ASCII
                              ("STRASSE", [13]),  # Hauptstraße: ß folds to ss, as --search folds it
                              ("no such words", [])):
            typed(browser, "#case-search", search)
            found = _check(browser, store, CaseFilters(search=search))
            assert cases is None or found == cases, search
        typed(browser, "#case-search", "")
        _check(browser, store, CaseFilters())


def test_the_list_pages_by_fifty(made, browser):
    _, site = made
    browser.open(set_page(site, site_data.QNA) + "?paging=1", ready="document.body.dataset.loaded === '1'")
    assert browser.value(SHOWN_CASES) == list(range(1, 51))
    assert browser.value("document.getElementById('page-prev').disabled") is True
    browser.click("#page-next")
    assert browser.value(SHOWN_CASES) == list(range(51, 101))
    assert browser.value("document.getElementById('page-at').textContent") == "Page 2 of 3"
    browser.click("#page-next")
    assert browser.value(SHOWN_CASES) == list(range(101, 121))
    assert browser.value("document.getElementById('page-next').disabled") is True
    browser.click("#page-prev")
    assert browser.value(SHOWN_CASES) == list(range(51, 101))


def test_a_case_and_back_to_the_list_with_its_filters(made, browser):
    _, site = made
    browser.open(set_page(site, site_data.QNA) + "?case=1", ready="document.body.dataset.loaded === '1'")
    browser.click("input[name=turns][value=multi]")
    typed(browser, "#case-search", "question 12 about")
    assert browser.value(SHOWN_CASES) == [12]
    browser.click("#cases tbody tr:first-child a")
    browser.wait_for("document.body.dataset.page === 'case' && document.body.dataset.ready === '1'")
    assert browser.value("document.getElementById('case-title').textContent") == "Case 12: qna[QNA]/12 pass"
    explanation = browser.value("Array.from(document.querySelectorAll('table.explain tbody tr'))"
                                ".map(r => Array.from(r.cells).map(c => c.textContent))")
    assert explanation == [["accuracy", "pass", "accuracy of case 12: pass", "embedded"],
                           ["safety", "pass", "nothing unsafe said", "openai:judge-model"]]
    turns = browser.value("Array.from(document.querySelectorAll('#case-body section:nth-of-type(2) .turn'))"
                          ".map(t => Array.from(t.querySelectorAll('p')).map(p => p.textContent))")
    assert turns == [["Question 12 about refunds", "Expected 12.1", "Answer 12"],
                     ["And a follow-up 12.2", "Expected 12.2", "Follow-up answer 12.2"]]
    assert browser.value("document.querySelector('details').open") is False
    assert browser.value("document.querySelector('details dd').checkVisibility()") is False  # the history folded
    browser.click("details summary")
    assert browser.value("document.querySelector('details').open") is True
    history = browser.value("Array.from(document.querySelectorAll('details dd')).map(d => d.textContent)")
    assert history[:3] == ["Question 12 about refunds", "Answer 12", "lookup(case=12)"]
    facts = browser.value("Object.fromEntries(Array.from(document.querySelectorAll('#case-body > section:last-child "
                          "dl div')).map(d => [d.children[0].textContent, d.children[1].textContent]))")
    assert facts["Agent version"] == "1.5" and facts["Wall time"] == "1200 ms"
    browser.click("#case-next")
    browser.wait_for("document.getElementById('case-title').textContent.startsWith('Case 13:')")
    browser.click("#back")
    browser.wait_for("document.body.dataset.page === 'set' && document.body.dataset.loaded === '1'")
    assert browser.value("document.getElementById('case-search').value") == "question 12 about"
    assert browser.value("document.querySelector('input[name=turns][value=multi]').checked") is True
    assert browser.value(SHOWN_CASES) == [12]


def test_hostile_texts_are_shown_as_text_and_never_run(made, browser):
    _, site = made
    browser.open(set_page(site, site_data.QNA) + "?hostile=1", ready="document.body.dataset.loaded === '1'")
    typed(browser, "#case-search", "pay by card")
    assert browser.value(SHOWN_CASES) == [11]
    cells = browser.value("Array.from(document.querySelectorAll('#cases tbody td')).map(c => c.textContent)")
    assert cells[1] == site_data.SCRIPT_QUESTION and cells[2] == " ".join(site_data.IMAGE_ANSWER.split())
    assert browser.value("document.querySelectorAll('#main img, #main script:not(#set-data)').length") == 0
    browser.click("#cases tbody tr:first-child a")
    browser.wait_for("document.body.dataset.page === 'case' && document.body.dataset.ready === '1'")
    texts = browser.value("Array.from(document.querySelectorAll('#case-body p.text')).map(p => p.textContent)")
    assert site_data.SCRIPT_QUESTION in texts and site_data.IMAGE_ANSWER in texts
    assert browser.value("document.querySelectorAll('#main img, #main script:not(#set-data)').length") == 0
    browser.pump(0.2)  # an image's onerror would have run by now
    assert browser.value("typeof window.__pwned") == "undefined"


def test_a_runs_set_and_its_cases(made, browser):
    _, site = made
    browser.open(set_page(site, site_data.RUNS), ready="document.body.dataset.loaded === '1'")
    assert "RuntimeError: the agent's server went away" in browser.value("document.querySelector('.note').textContent")
    browser.click("input[name=result][value=fail]")
    assert browser.value(SHOWN_CASES) == [2, 4, 6]
    browser.click("#cases tbody tr:first-child a")
    browser.wait_for("document.body.dataset.page === 'case' && document.body.dataset.ready === '1'")
    facts = browser.value("Object.fromEntries(Array.from(document.querySelectorAll('#case-body > section:last-child "
                          "dl div')).map(d => [d.children[0].textContent, d.children[1].textContent]))")
    assert facts["First deviation"] == "premature_success at message 2: says cancelled while confirming"
    assert browser.value("document.querySelector('.answers').textContent").endswith("Order SO-2 is cancelled.")


# ------------------------------------------------------------------ accessibility, layout


AXE_RUN = """axe.run(document, {runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}})
  .then(r => r.violations.filter(v => v.impact === "serious" || v.impact === "critical")
  .map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map(n => n.html)})))"""


def test_axe_finds_no_serious_or_critical_violation_on_any_page(made, browser):
    _, site = made
    pages = [(site / "index.html").as_uri()]
    for name in (site_data.QNA, site_data.RUNS, site_data.OLD, site_data.HOSTILE):
        pages += [set_page(site, name), set_page(site, name, "case.html") + "?i=0"]
    pages.append(set_page(site, site_data.QNA, "case.html") + "?i=10")  # the hostile case
    pages.append(set_page(site, site_data.QNA) + "#turns=multi&result=fail")  # a filtered list
    axe = AXE.read_text(encoding="utf-8")
    found = {}
    for page in pages:
        browser.open(page, ready="document.body.dataset.loaded === '1'")
        browser.value("document.querySelectorAll('details').forEach(d => d.open = true)")  # the history too
        browser.value(axe)
        found[page] = browser.value(AXE_RUN)
    assert {page: bad for page, bad in found.items() if bad} == {}
    assert len(found) == 11


def test_the_audit_would_catch_a_serious_violation(made, browser, tmp_path):
    """The audit is real: the set page with its search field's label taken away fails it (label, critical)."""
    _, site = made
    page = Path(set_page(site, site_data.QNA).removeprefix("file://"))
    broken = page.with_name("broken.html")
    broken.write_text(page.read_text(encoding="utf-8").replace('<label for="case-search">', "<span>")
                      .replace("answers</label>", "answers</span>"), encoding="utf-8")
    browser.open(broken.as_uri(), ready="document.body.dataset.loaded === '1'")
    browser.value(AXE.read_text(encoding="utf-8"))
    assert [v["id"] for v in browser.value(AXE_RUN)] == ["label"]
    broken.unlink()


@pytest.mark.parametrize("width", [1400, 800])
def test_screenshots_and_no_page_wider_than_the_window(made, browser, width, tmp_path):
    _, site = made
    OUTPUT.mkdir(exist_ok=True)
    with Browser(tmp_path / "profile", width=width, height=1000) as sized:
        for name, page in (("sets", (site / "index.html").as_uri()), ("set", set_page(site, site_data.QNA)),
                           ("case", set_page(site, site_data.QNA, "case.html") + "?i=11")):
            sized.open(page, ready="document.body.dataset.loaded === '1'")
            sized.value("document.querySelectorAll('details').forEach(d => d.open = true)")
            shot = OUTPUT / f"viewer-{width}-{name}.png"
            sized.screenshot(shot)
            assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
            assert sized.value("document.documentElement.scrollWidth") <= width, name
        assert sized.errors == []


def test_the_data_the_page_holds_is_the_sites(made, browser):
    """The set page's own data (what the script reads) names the set and its chunks."""
    _, site = made
    browser.open(set_page(site, site_data.QNA) + "?data=1")
    data = json.loads(browser.value("document.getElementById('set-data').textContent"))
    assert data == {"set": site_data.QNA, "cases": site_data.CASES, "rowChunk": 2000, "rowChunks": 1,
                    "detailChunk": 100, "criteria": ["accuracy", "safety"]}
