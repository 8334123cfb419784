"""CI formats: Markdown, JUnit, SARIF 2.1.0 (validated against its schema), GitHub annotations; several in one run."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from _gold import compare_gold

from mbt.report.github import annotation
from mbt.report.markdown import cell
from tests.cli_runner import run_mbt
from tests.json_report import expanded

ROOT = Path(__file__).resolve().parents[1]
SARIF_SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
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
def example_outputs(tmp_path_factory) -> dict[str, str]:
    """One run of the example writing every CI format at once (the multi-format CLI), plus text on stdout."""
    out = tmp_path_factory.mktemp("reports")
    names = {"markdown": "coverage.md", "junit": "coverage.xml", "sarif": "coverage.sarif",
             "github": "annotations.txt", "trace-md": "trace.md", "trace-csv": "trace.csv"}
    args = [f"--format={fmt}:{out / name}" for fmt, name in names.items()]
    result = mbt("coverage", *EXAMPLE, *args, "--format", "text")
    assert result.returncode == 1  # the example fails its release gate
    assert "Gate (models/gates/release.yaml): FAILED" in result.stdout
    # The github summary names where the full report went: the temporary folder, shown as OUT for the gold files.
    texts = {fmt: (out / name).read_text(encoding="utf-8").replace(str(out), "OUT") for fmt, name in names.items()}
    texts["stdout"] = result.stdout
    return texts


@pytest.mark.parametrize("fmt, gold", [("markdown", "recovery.md"), ("junit", "recovery.junit.xml"),
                                       ("sarif", "recovery.sarif"), ("github", "recovery.github.txt"),
                                       ("trace-md", "recovery.trace.md")])
def test_example_outputs_match_gold_files(example_outputs, fmt, gold):
    compare_gold(gold, example_outputs[fmt])


def test_sarif_is_valid_sarif_2_1_0(example_outputs):
    log = json.loads(example_outputs["sarif"])
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)
    run = log["runs"][0]
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    by_rule = {}
    for r in run["results"]:
        assert rules[r["ruleIndex"]] == r["ruleId"]
        by_rule.setdefault(r["ruleId"], []).append(r)
    (forbidden,) = by_rule["uncovered-forbidden"]
    assert forbidden["level"] == "error"
    region = forbidden["locations"][0]["physicalLocation"]
    assert region["artifactLocation"] == {"uri": "models/recovery.fsm", "uriBaseId": "%SRCROOT%"}
    assert region["region"] == {"startLine": 111, "startColumn": 3}
    related = forbidden["relatedLocations"][0]["physicalLocation"]
    assert related["artifactLocation"]["uri"] == "models/contracts/password-reset.yaml"
    assert related["region"]["startLine"] == 14
    assert len(by_rule["uncovered-element"]) == 36
    assert len(by_rule["contradiction"]) == 1 and len(by_rule["divergence"]) == 1
    assert len(by_rule["invalid-case"]) == 1 and len(by_rule["gate"]) == 3  # + invalid_cases, a default limit
    prints = [r["partialFingerprints"]["mbt/v1"] for r in run["results"]]
    assert len(set(prints)) == len(prints)


def test_sarif_fingerprints_survive_unrelated_edits(tmp_path):
    """Fingerprints come from model + element id, not positions: moving the element keeps its fingerprint."""
    model = (ROOT / "tests" / "data" / "reset.fsm").read_text(encoding="utf-8")
    goldens = tmp_path / "g.jsonl"
    goldens.write_text('{"id": "G", "turns": [{"event": "request_reset"}]}\n', encoding="utf-8")

    def prints(text):
        (tmp_path / "m.fsm").write_text(text, encoding="utf-8")
        r = mbt("coverage", "--model", "m.fsm", "--goldens", goldens, "--format", "sarif", cwd=tmp_path)
        log = json.loads(r.stdout)
        return {res["properties"]["element"]: (res["partialFingerprints"]["mbt/v1"],
                                               res["locations"][0]["physicalLocation"]["region"]["startLine"])
                for res in log["runs"][0]["results"] if "properties" in res}

    before = prints(model)
    after = prints(model.replace("fsm pr {", "fsm pr {\n  # a comment that moves every line down"))
    assert before.keys() == after.keys()
    for element in before:
        assert before[element][0] == after[element][0]
        assert after[element][1] == before[element][1] + 1


def test_junit_counts_and_outcomes(example_outputs):
    root = ET.fromstring(example_outputs["junit"])
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert set(suites) == {"recovery", "goldens", "gate"}
    recovery = suites["recovery"]
    cases = {c.get("name"): c for c in recovery.iter("testcase")}
    assert len(cases) == 92  # 7 states, 14 transitions, 33 guard outcomes, 4 forbidden, 34 pairs
    assert cases["forbidden:claim_reset_done"].find("failure").get("type") == "uncovered-forbidden"
    assert cases["state:idle"].find("failure") is None and cases["state:idle"].find("skipped") is None
    assert "not covered" in cases["transition:handoff_after_retry"].find("skipped").get("message")
    assert recovery.get("failures") == "1" and recovery.get("skipped") == str(36 + 1)  # 36 uncovered + 1 infeasible
    assert suites["goldens"].get("failures") == "2"  # one contradiction, one invalid case
    assert suites["gate"].get("failures") == "3"  # the release gate's two, and the default invalid_cases limit
    assert root.get("tests") == str(92 + 2 + 3)


def test_junit_skips_waived_elements(tmp_path):
    gate = tmp_path / "gate.yaml"
    gate.write_text("contradictions: 1\ninvalid_cases: 1\n"  # the example's one of each, allowed
                    "waivers:\n  - element: forbidden:claim_reset_done\n    reason: ticket QA-7\n"
                    "    expires: 2999-01-01\n", encoding="utf-8")
    result = mbt("coverage", *EXAMPLE[:-2], "--gate", gate, "--format", "junit")
    assert result.returncode == 0  # the only uncovered forbidden element is waived
    root = ET.fromstring(result.stdout)
    case = next(c for c in root.iter("testcase") if c.get("name") == "forbidden:claim_reset_done")
    assert case.find("skipped").get("message") == "waived until 2999-01-01: ticket QA-7"


def test_github_annotations(example_outputs):
    lines = example_outputs["github"].splitlines()
    errors = [line for line in lines if line.startswith("::error")]
    # The gate's own verdict first, then the most severe findings.
    assert errors[0].startswith("::error file=models/gates/release.yaml,title=mbt gate%3A FAILED::the gate failed")
    assert errors[1].startswith("::error file=models/recovery.fsm,line=111,col=3,title=mbt%3A uncovered forbidden "
                                "forbidden%3Aclaim_reset_done::forbidden behaviour not tested")
    assert any(line.startswith("::error file=models/goldens/tool-failures.jsonl,line=3,") for line in errors)
    assert any(line.startswith("::warning file=models/goldens/recovery-flows.yaml,line=62,") for line in lines)
    assert annotation("error", "50% done\nnext", "a,b:c.fsm", 3, None, "t:x") == \
        "::error file=a%2Cb%3Ac.fsm,line=3,title=t%3Ax::50%25 done%0Anext"


def test_github_annotations_respect_the_per_step_limit(example_outputs, tmp_path):
    """At most 10 per level; what is cut is counted in one summary notice, recounted here from the JSON report."""
    lines = example_outputs["github"].splitlines()
    report = expanded(json.loads(mbt("coverage", *EXAMPLE, "--format", "json").stdout))
    waived = {(w["model"], w["element"]) for w in report["gate"]["waivers"] if w["status"] == "active"}
    uncovered = [(m["model"], e["element"]) for m in report["models"] for e in m["elements"]
                 if e["element"]["feasible"] and not e["verified_by"]]
    forbidden = [x for x in uncovered if x[1]["criterion"] == "forbidden" and (x[0], x[1]["id"]) not in waived]
    total = {"error": 1 + len(forbidden) + len(report["contradictions"]) + len(report["forbidden_expected"])
             + len(report["invalid_cases"]) + len(report["gate"]["failures"]),
             "warning": len(report["divergences"]) + len(report["unbound_turns"]),
             "notice": len(uncovered) - len(forbidden)}
    shown = {level: sum(line.startswith(f"::{level}") for line in lines) for level in total}
    assert all(n <= 10 for n in shown.values()) and total["notice"] > 10
    summary = lines[-1]
    assert summary.startswith("::notice title=mbt%3A more findings::") and "the full report is OUT/coverage.sarif" in summary
    cut = {level: total[level] - shown[level] + (1 if level == "notice" else 0) for level in total}
    for level, n in cut.items():
        assert (f"{n} more {level}" in summary) == (n > 0), (level, n, summary)
    # Nothing cut: no summary.
    small = mbt("coverage", "--model", "models/recovery.fsm", "--goldens", "models/goldens/", "--format", "github",
                "--show-uncovered", "some", "--gate", "models/gates/release.yaml")
    assert small.stdout.count("::notice") <= 10


def test_markdown_cells_are_escaped():
    assert cell("a | b\nc <script>") == "a \\| b c &lt;script>"
    # What cannot open a tag stays as written (`render -o x.md` shows `>= 80`, not `&gt;= 80`); entities stay literal.
    assert cell(">= 80 and < 50, a<b") == ">= 80 and < 50, a&lt;b"
    assert cell("&amp; & x") == "&amp;amp; & x"


def test_trace_csv_has_a_row_per_element_and_neutralises_formulas(example_outputs):
    import csv
    import io

    text = example_outputs["trace-csv"]
    assert text.startswith("\ufeff")  # the BOM Excel needs to read UTF-8 (CJK, Vietnamese)
    rows = list(csv.DictReader(io.StringIO(text[1:])))
    assert len(rows) == 92
    row = next(r for r in rows if r["element"] == "transition:confirming_email.correct_email->reset_started")
    assert (row["source"], row["line_start"], row["line_end"], row["quote_found"]) == ("policy", "30", "33", "yes")
    assert row["expected"].startswith("goes to reset_started; discard recovery_email; recovery_email := e")
    assert row["verified_by"] == "ACC-REC-001 CTX-CORR-001"
    from mbt.report.markdown import safe_cell

    assert safe_cell("=cmd()") == "'=cmd()" and safe_cell("ok") == "ok"


def test_check_formats(tmp_path):
    bad = tmp_path / "m.fsm"
    bad.write_text("fsm m {\n  state a initial\n  state b\n  state c\n  event go\n  a -> b on go\n}\n", encoding="utf-8")
    result = mbt("check", bad, "--format", "sarif", "--format", f"junit:{tmp_path / 'c.xml'}",
                 "--format", f"github:{tmp_path / 'c.txt'}", "--format", f"markdown:{tmp_path / 'c.md'}")
    log = json.loads(result.stdout)
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)
    codes = {r["ruleId"] for r in log["runs"][0]["results"]}
    assert "FSM003" in codes or codes  # unreachable state c
    assert ET.fromstring((tmp_path / "c.xml").read_text(encoding="utf-8")).tag == "testsuites"
    assert "::" in (tmp_path / "c.txt").read_text(encoding="utf-8")
    assert (tmp_path / "c.md").read_text(encoding="utf-8").startswith("## mbt check:")


@pytest.mark.parametrize("args, message", [
    (["--format", "pdf"], "unknown format"),
    (["--format", "text", "--format", "json"], "only one report can go to stdout"),
    (["--format", "junit:", ], "give a path after the colon"),
    (["--format", "html"], "writes a folder"),
    (["--format", "json:a.json", "-o", "b.json"], "every --format has its own path"),
    (["--format", "json:same", "--format", "junit:same"], "two reports would be written to same"),
    (["--format", "json:nowhere/x.json"], "folder nowhere does not exist"),
    (["--format", "trace-csv:x.csv", "--no-gate", "--baseline", "b.json"], "cannot be used with --no-gate"),
])
def test_bad_format_specs_exit_2_before_any_output(tmp_path, args, message):
    result = mbt("coverage", "--model", ROOT / "models" / "recovery.fsm", "--goldens", ROOT / "models" / "goldens",
                 *args, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert result.stdout == ""
    assert list(tmp_path.iterdir()) == []


def test_o_names_the_one_pathless_format(tmp_path):
    result = mbt("coverage", *EXAMPLE, "--format", "junit", "--format", f"sarif:{tmp_path / 's.sarif'}",
                 "-o", tmp_path / "j.xml")
    assert result.returncode == 1 and result.stdout == ""
    assert (tmp_path / "j.xml").read_text(encoding="utf-8").startswith("<?xml")
    assert json.loads((tmp_path / "s.sarif").read_text(encoding="utf-8"))["version"] == "2.1.0"


def _assert_rules_documented(run):
    from urllib.parse import urlparse

    assert urlparse(run["tool"]["driver"]["informationUri"]).scheme == "https"
    for rule in run["tool"]["driver"]["rules"]:
        assert rule["fullDescription"]["text"] and rule["help"]["text"] and rule["help"]["markdown"], rule["id"]
        assert urlparse(rule["helpUri"]).scheme == "https"


def test_sarif_rules_are_documented_and_uploads_do_not_collide(example_outputs, tmp_path):
    coverage_run = json.loads(example_outputs["sarif"])["runs"][0]
    _assert_rules_documented(coverage_run)
    bad = tmp_path / "m.fsm"
    bad.write_text("fsm m {\n  state a initial\n  state b\n  state c\n  event go\n  a -> b on go\n}\n", encoding="utf-8")
    check_log = json.loads(mbt("check", bad, "--format", "sarif").stdout)
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(check_log)
    check_run = check_log["runs"][0]
    _assert_rules_documented(check_run)
    ids = {coverage_run["automationDetails"]["id"], check_run["automationDetails"]["id"]}
    assert ids == {"mbt/coverage/", "mbt/check/"}


def test_sarif_uris_are_relative_to_the_repository_root(tmp_path):
    repo = tmp_path / "repo"
    (repo / "specs").mkdir(parents=True)
    model = repo / "specs" / "m.fsm"
    model.write_text("fsm m {\n  state a initial\n  state b\n  state c\n  event go\n  a -> b on go\n}\n", encoding="utf-8")
    outside = tmp_path / "other.fsm"
    outside.write_text(model.read_text(encoding="utf-8").replace("fsm m", "fsm o"), encoding="utf-8")

    def uris(*args, env=None):
        result = run_mbt("check", model, outside, "--format", "sarif", *args, cwd=tmp_path, env=env)
        log = json.loads(result.stdout)
        jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)
        return {r["locations"][0]["physicalLocation"]["artifactLocation"].get("uriBaseId", "-") + " "
                + r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]}

    expected = {"%SRCROOT% specs/m.fsm", "- " + outside.as_uri()}
    assert uris("--root", repo) == expected
    assert uris(env={"GITHUB_WORKSPACE": str(repo)}) == expected
    assert uris("--root", repo, env={"GITHUB_WORKSPACE": str(tmp_path)}) == expected  # --root wins


def test_check_junit_tells_warnings_from_infos(tmp_path):
    bad = tmp_path / "m.fsm"
    bad.write_text("fsm m {\n  state a initial\n  state b\n  state c\n  event go\n  a -> b on go\n}\n", encoding="utf-8")
    report = json.loads(mbt("check", bad, "--format", "json").stdout)
    root = ET.fromstring(mbt("check", bad, "--format", "junit").stdout)
    cases = root.findall(".//testcase")
    severities = [c.find("properties/property[@name='severity']").get("value") for c in cases]
    assert severities == [f["severity"] for f in report["findings"]]
    assert {"warning", "info"} <= set(severities)
    for case, severity in zip(cases, severities):
        assert (case.find("system-err") is not None) == (severity == "warning")
        assert (case.find("system-out") is not None) == (severity == "info")
        assert (case.find("failure") is not None) == (severity == "error")


def test_rendered_markdown_shows_comparisons_as_written(tmp_path):
    out = tmp_path / "refund.md"
    result = mbt("render", "--model", "models/refund.dt", "-o", out)
    assert result.returncode == 0, result.stderr
    text = out.read_text(encoding="utf-8")
    assert "| >= 80 |" in text and "| < 50 |" in text and "&gt;" not in text and "&lt;" not in text
