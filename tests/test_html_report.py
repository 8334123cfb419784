"""The HTML report: the pages, escaping, folder safety, and the report opened in headless Chromium (screenshots)."""

from __future__ import annotations

import contextlib
import functools
import html as html_lib
import http.server
import json
import re
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from tests.cli_runner import run_mbt

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "tests" / "output"
# The recovery example's own goldens, named one by one so goldens other examples add to models/goldens/ stay out.
EXAMPLE = ["--model", "models/recovery.fsm", "--goldens", "models/goldens/broken.jsonl", "--goldens", "models/goldens/golden.jsonl",
           "--goldens", "models/goldens/multi-turn.yaml", "--goldens", "models/goldens/recovery-flows.yaml",
           "--goldens", "models/goldens/single-turn.jsonl", "--goldens", "models/goldens/tool-failures.jsonl",
           "--gate", "models/gates/release.yaml"]


def mbt(*args, cwd=ROOT):
    result = run_mbt(*args, cwd=cwd)
    assert "Traceback" not in result.stderr, result.stderr
    return result


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("html") / "htmlcov"
    result = mbt("coverage", *EXAMPLE, "--format", "html", "-o", out)
    assert result.returncode == 1, result.stderr  # the example fails its gate; the report is written anyway
    return out


def test_the_report_has_every_page(report_dir):
    names = sorted(p.name for p in report_dir.iterdir())
    assert ".mbt-report" in names
    assert {"index.html", "elements.html", "trace.html", "findings.html"} <= set(names)
    assert sum(n.startswith("model-") for n in names) == 1
    assert sum(n.startswith("source-") for n in names) == 2
    index = (report_dir / "index.html").read_text(encoding="utf-8")
    assert "Gate: FAILED" in index and "78.6%" in index and "35.3%" in index
    assert "http://" not in index.replace('xmlns="http://www.w3.org/2000/svg"', "")  # no external assets
    model = (report_dir / next(n for n in names if n.startswith("model-"))).read_text(encoding="utf-8")
    assert "<svg" in model and "forbidden:claim_reset_done" in model
    assert 'id="el-forbidden_3a_claim_reset_done"' in model  # the diagram's links land on element rows
    assert 'href="#el-forbidden_3a_claim_reset_done"' in model or "xlink:href=\"#el-forbidden_3a_claim_reset_done\"" in model
    assert re.search(r'href="source-models-docs-account-recovery-v3-md-[0-9a-f]{6}\.html#L30-L33"', model)
    findings = (report_dir / "findings.html").read_text(encoding="utf-8")
    assert "TOOL-FAIL-003" in findings and "RST-WAIT-001" in findings
    assert "survives it" in findings  # the unspecified transition's reason: the document is silent


def test_a_second_run_replaces_its_own_folder_but_never_a_foreign_one(tmp_path, report_dir):
    target = tmp_path / "htmlcov"
    shutil.copytree(report_dir, target)
    (target / "stale.html").write_text("old", encoding="utf-8")
    assert mbt("coverage", *EXAMPLE, "--format", f"html:{target}").returncode == 1
    assert not (target / "stale.html").exists() and (target / "index.html").exists()
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me", encoding="utf-8")
    result = mbt("coverage", *EXAMPLE, "--format", f"html:{foreign}")
    assert result.returncode == 2 and "mbt did not write" in result.stderr
    assert (foreign / "notes.txt").read_text(encoding="utf-8") == "keep me"


def test_hostile_strings_are_escaped(tmp_path):
    (tmp_path / "doc.md").write_text("The <script>alert(1)</script> rule.\n", encoding="utf-8")
    (tmp_path / "m.fsm").write_text(
        'source doc "doc.md"\nfsm m {\n  state a initial @doc:1 "<script>alert(1)</script>"\n  state b\n'
        '  event go\n  a -> b on go\n}\n', encoding="utf-8")
    evil = '"><img src=x onerror=alert(1)>'
    (tmp_path / "g.jsonl").write_text(json.dumps({"id": evil, "turns": [{"event": "go", "assert_state":
                                                                         {"state": "b"}}]}) + "\n", encoding="utf-8")
    out = tmp_path / "report"
    assert mbt("coverage", "--model", "m.fsm", "--goldens", "g.jsonl", "--format", f"html:{out}",
               cwd=tmp_path).returncode == 0
    for page in out.glob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert "<script>alert" not in text and "<img src=x" not in text, page.name
    assert "&lt;img src=x onerror=alert(1)&gt;" in (out / "elements.html").read_text(encoding="utf-8")


# ------------------------------------------------------------------ the browser


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    raise AssertionError("headless Chromium is needed for the browser test: `make test` installs Debian's "
                         "`chromium` package (apt-get install -y chromium)")


def browse(url: str, profile: Path, *extra: str) -> subprocess.CompletedProcess:
    """Open `url` headless; stderr carries the page's console (--enable-logging=stderr)."""
    return subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                           "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
                           f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
                           "--virtual-time-budget=3000", *extra, url],
                          capture_output=True, text=True, timeout=120)


def console_errors(stderr: str) -> list[str]:
    """Page errors Chromium logs: uncaught exceptions and console.error calls (CONSOLE lines at ERROR level)."""
    return [line for line in stderr.splitlines()
            if "Uncaught" in line or ("CONSOLE" in line and ":ERROR:" in line)
            or "Failed to load resource" in line]


@pytest.mark.slow
@pytest.mark.parametrize("page", ["index", "model", "source", "trace", "elements", "findings"])
def test_the_report_in_headless_chromium(report_dir, tmp_path, page):
    files = {"index": "index.html", "trace": "trace.html", "elements": "elements.html", "findings": "findings.html",
             "model": next(p.name for p in report_dir.glob("model-*.html")),
             "source": next(p.name for p in report_dir.glob("source-models-docs-*.html"))}
    url = (report_dir / files[page]).as_uri() + ("#L30-L33" if page == "source" else "")
    OUTPUT.mkdir(exist_ok=True)
    shot = OUTPUT / f"html-{page}.png"
    shot.unlink(missing_ok=True)
    # One launch both dumps the DOM and takes the screenshot to look at (a launch is most of the test's cost).
    dom = browse(url, tmp_path / "profile", "--dump-dom", "--window-size=1400,1800", f"--screenshot={shot}")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert console_errors(dom.stderr) == [], console_errors(dom.stderr)
    html = dom.stdout
    assert 'data-ready="1"' in html  # the report's script ran to the end
    if page == "index":
        assert "Gate: FAILED" in html and "78.6%" in html and "forbidden behaviours not tested" in html
    if page == "model":
        assert "<svg" in html and "claim_reset_done" in html
        assert re.search(r"showing 92 of 92", html)  # the filter script counted the element rows
    if page == "source":
        assert re.search(r'class="line hl" id="L30"', html) and re.search(r'class="line hl" id="L33"', html)
        assert "are cited by" in html and "transition:confirming_email.correct_email-&gt;reset_started" in html
    if page == "trace":
        assert "showing 92 of 92" in html
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_a_broken_script_would_be_caught(tmp_path):
    """The console check is real: a page with an uncaught error is reported."""
    page = tmp_path / "bad.html"
    page.write_text("<html><body><script>undefinedFunction();</script></body></html>", encoding="utf-8")
    result = browse(page.as_uri(), tmp_path / "profile", "--dump-dom")
    assert console_errors(result.stderr), result.stderr[-2000:]


# axe-core (Deque, MPL-2.0), vendored as test data: the accessibility engine browsers' own audits use.
AXE = ROOT / "tests" / "data" / "axe-4.14.1.min.js"
AXE_PROBE = """<script src="axe.min.js"></script><script>
window.addEventListener("load", function () {
  axe.run(document, {runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}}).then(function (r) {
    var out = document.createElement("pre"); out.id = "axe-result";
    out.textContent = JSON.stringify(r.violations.map(function (v) {
      return {id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map(function (n) { return n.failureSummary; })};
    }));
    document.body.appendChild(out);
  });
});
</script></body>"""


@pytest.fixture(scope="module")
def demo_report(tmp_path_factory) -> Path:
    """The demo's report (make demo): every example model, so every kind of page."""
    out = tmp_path_factory.mktemp("demo") / "mbt-report"
    result = mbt("coverage", "--model", "models/", "--goldens", "models/goldens/", "--no-gate", "--format",
                 f"html:{out}")
    assert result.returncode == 0, result.stderr
    return out


# One launch audits every page: a driver page opens each report page in turn in a full-size frame (served over a
# local HTTP server, so the driver may read the frames), waits for the axe result the probe writes, and lists them.
AXE_DRIVER = """<!doctype html><html><head><title>axe driver</title></head><body>
<iframe id="page" style="width:1400px;height:1800px;border:0"></iframe><pre id="axe-results"></pre><script>
var pages = %s, results = {}, frame = document.getElementById("page");
function next(i) {
  if (i === pages.length) { document.getElementById("axe-results").textContent = JSON.stringify(results); return; }
  frame.onload = function () {
    (function wait() {
      var found = frame.contentDocument.getElementById("axe-result");
      if (found) { results[pages[i]] = JSON.parse(found.textContent); next(i + 1); } else { setTimeout(wait, 50); }
    })();
  };
  frame.src = pages[i];
}
next(0);
</script></body></html>"""


@contextlib.contextmanager
def served(folder: Path):
    """`folder` over HTTP on a free local port, for as long as the block runs."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # the test's output is the assertion, not an access log
        pass


def axe_audit(site: Path, profile: Path) -> dict[str, list[dict]]:
    """axe's violations on every page of `site`, by page name, from one browser launch."""
    shutil.copy(AXE, site / "axe.min.js")
    pages = sorted(site.glob("*.html"))
    for page in pages:
        page.write_text(page.read_text(encoding="utf-8").replace("</body>", AXE_PROBE), encoding="utf-8")
    names = [page.name for page in pages]
    (site / "axe-driver.html").write_text(AXE_DRIVER % json.dumps(names), encoding="utf-8")
    with served(site) as base:
        dom = browse(f"{base}/axe-driver.html", profile, "--dump-dom", "--virtual-time-budget=600000")
    found = re.search(r'<pre id="axe-results">(.*?)</pre>', dom.stdout, re.S)
    assert found and found.group(1), f"axe did not run: {dom.stderr[-1000:]}"
    results = json.loads(html_lib.unescape(found.group(1)))
    assert sorted(results) == names, "axe did not run on every page"
    return results


def serious(results: dict[str, list[dict]]) -> dict[str, list[dict]]:
    return {name: bad for name, violations in results.items()
            if (bad := [v for v in violations if v["impact"] in ("serious", "critical")])}


@pytest.mark.slow
def test_axe_finds_no_serious_violation_on_any_page(demo_report, tmp_path):
    site = tmp_path / "site"
    shutil.copytree(demo_report, site)
    assert len(list(site.glob("*.html"))) >= 15
    assert serious(axe_audit(site, tmp_path / "profile")) == {}


@pytest.mark.slow
def test_the_audit_would_catch_a_serious_violation(tmp_path):
    """The audit is real: an image without a text alternative (axe: image-alt, critical) is reported on its page."""
    site = tmp_path / "site"
    site.mkdir()
    page = '<!doctype html><html lang="en"><head><title>t</title></head><body><main>{}</main></body></html>'
    (site / "a.html").write_text(page.format("<p>fine</p>"), encoding="utf-8")
    (site / "b.html").write_text(page.format('<img src="x.png">'), encoding="utf-8")
    found = serious(axe_audit(site, tmp_path / "profile"))
    assert list(found) == ["b.html"] and [v["id"] for v in found["b.html"]] == ["image-alt"]


@pytest.mark.slow
@pytest.mark.parametrize("width", [1400, 800])
def test_screenshots_at_desktop_and_narrow_widths(demo_report, tmp_path, width):
    """Screenshots to look at (tests/output/); at 800 px no page is wider than the window."""
    OUTPUT.mkdir(exist_ok=True)
    model = next(p.name for p in demo_report.glob("model-recovery-*.html") if "invariants" not in p.name)
    # The index is shot through a copy that also records the page's scroll width (one launch for both).
    probe = demo_report / "probe.html"
    probe.write_text((demo_report / "index.html").read_text(encoding="utf-8").replace(
        "</body>", '<script>window.addEventListener("load", function () { document.body.setAttribute('
                   '"data-width", String(document.documentElement.scrollWidth)); });</script></body>'),
        encoding="utf-8")
    scroll = None
    for name in ("index.html", model, "goldens.html", "findings.html"):
        shot = OUTPUT / f"html-{width}-{name.split('-')[0].removesuffix('.html')}.png"
        shot.unlink(missing_ok=True)
        page = probe if name == "index.html" else demo_report / name
        extra = ("--dump-dom",) if name == "index.html" else ()
        result = browse(page.as_uri(), tmp_path / "profile", f"--window-size={width},1600", f"--screenshot={shot}",
                        *extra)
        assert result.returncode == 0, result.stderr[-2000:]
        png = shot.read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        assert int.from_bytes(png[16:20], "big") == width  # the screenshot is the window: nothing forced it wider
        if name == "index.html":
            scroll = int(re.search(r'data-width="(\d+)"', result.stdout).group(1))
    probe.unlink()
    assert scroll <= width, f"the index page is {scroll} px wide in a {width} px window"


def test_goldens_beyond_the_covering_cap_are_counted_on_the_element_rows(tmp_path, monkeypatch):
    from mbt import cli

    monkeypatch.setattr(cli, "COVERING_CAP", 2)
    out = tmp_path / "capped"
    mbt("coverage", *EXAMPLE, "--format", "html", "-o", out)
    elements = html_lib.unescape((out / "elements.html").read_text(encoding="utf-8"))
    # some elements are verified by more than two goldens of the example: two named, the rest counted
    assert re.search(r'verified by</span> [^<,]*, [^<,]* <span class="muted">and \d+ more</span>', elements)
