"""`mbt coverage --answers EVAL.json` (issue 34, item 6): the elements an `mbt eval --model` report judged answers
on — a state machine's `say` forbids and claims (`sayings[].elements`), a contract's must_have / must_not items
(`cases[].contract.items`) — shown as *verified by a judged answer*, a figure of its own beside verified and
exercised (never added into them), with the judge, the verdict and the case; the gate can require it
(`KIND.CRITERION.answer_verified`); a bad eval report is one located message (exit 2); what the loaded models do
not have is a note."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from tests.cli_runner import run_mbt
from tests.test_eval_sayings import card_eval

ROOT = Path(__file__).resolve().parents[1]
CONTRACTS = ROOT / "models" / "contracts"
CONTRACT_CASES = ROOT / "models" / "goldens" / "single-turn.jsonl"
CONTRACT_RUNS = ROOT / "models" / "answers" / "contract-runs"


@pytest.fixture(scope="module")
def card(tmp_path_factory):
    """The card model, its two goldens and the eval report made on their runs (tests/test_eval_sayings.py): case 2's
    answer asks for the PIN code (ask_pin fails), case 1's says it is paid in `done` (claim:done passes) and none of
    unlock_card's phrases (it passes); reveal_number, a description the embedded judge cannot decide, is reached
    but no answer on it is decided."""
    folder = tmp_path_factory.mktemp("card")
    done, _ = card_eval(folder)
    assert done.returncode == 1, done.stderr  # case 2 fails: it asks for the PIN code
    (folder / "eval.json").write_text(done.stdout, encoding="utf-8")
    return folder


def coverage_json(*args, cwd=None):
    done = run_mbt("coverage", *args, "--format", "json", cwd=cwd)
    assert done.returncode in (0, 1), done.stderr
    return done, json.loads(done.stdout)


def test_answers_are_a_figure_of_their_own_beside_verified_and_exercised(card):
    args = ("--model", card / "card.fsm", "--goldens", card / "card.jsonl")
    _, plain = coverage_json(*args)
    done, report = coverage_json(*args, "--answers", card / "eval.json")
    # the goldens' figures are the same with or without the answers: neither is inflated by the other
    assert report["models"][0]["criteria"] == plain["models"][0]["criteria"]
    assert plain["answers"] is None
    answers = report["answers"]
    assert answers["reports"] == [str(card / "eval.json")] and answers["notes"] == []
    (card_answers,) = answers["models"]
    assert (card_answers["model"], card_answers["kind"]) == ("card", "fsm")
    figures = {f["criterion"]: f for f in card_answers["criteria"]}
    assert list(figures) == ["forbidden", "claim"]
    forbidden = figures["forbidden"]
    # 3 say forbids an answer can verify; ask_pin (fail) and unlock_card (pass) are, reveal_number is undecided
    assert (forbidden["verified"]["covered"], forbidden["verified"]["total"]) == (2, 3)
    assert (forbidden["failed"], forbidden["undecided"]) == (1, 1)
    assert (figures["claim"]["verified"]["covered"], figures["claim"]["verified"]["total"]) == (1, 1)
    elements = {e["element"]: e for e in card_answers["elements"]}
    assert list(elements) == ["forbidden:ask_pin", "forbidden:unlock_card", "forbidden:reveal_number", "claim:done"]
    pin = elements["forbidden:ask_pin"]
    assert (pin["status"], pin["verdict"], pin["passed"], pin["failed"]) == ("verified", "fail", 1, 1)
    # the failing answer first: a failure found, not coverage lost
    first = pin["answers"][0]
    assert (first["case"], first["verdict"], first["judge"], first["report"]) == (
        "2", "fail", "rules", str(card / "eval.json"))
    assert "pin code" in first["reason"] and first["where"].endswith("2.json message 2")
    unlock = elements["forbidden:unlock_card"]
    assert (unlock["status"], unlock["verdict"], unlock["criterion"]) == ("verified", "pass", "forbidden")
    reveal = elements["forbidden:reveal_number"]
    assert (reveal["status"], reveal["verdict"], reveal["undecided"]) == ("undecided", None, 2)
    assert {a["verdict"] for a in reveal["answers"]} == {"not_judged"}
    claim = elements["claim:done"]
    assert (claim["status"], claim["verdict"], claim["criterion"]) == ("verified", "pass", "claim")
    # the default gate still counts unlock_card as an uncovered forbidden element: no golden checks it
    assert "forbidden:unlock_card" in report["gate"]["failures"][0]["elements"]
    schema = json.loads((ROOT / "docs" / "schemas" / "coverage.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(report, schema)
    assert report["schema_version"] == "3.2"


def test_the_text_report_shows_each_element_with_its_judge_verdict_and_case(card):
    done = run_mbt("coverage", "--model", card / "card.fsm", "--goldens", card / "card.jsonl", "--answers",
                   card / "eval.json")
    out = done.stdout
    assert done.returncode == 1, done.stderr
    assert "  verified by a judged answer (1 eval report; never added into verified or exercised):" in out
    assert "    forbidden          2 of 3 (1 failed: a failure found, not coverage lost; 1 undecided)" in out
    assert "    claim              1 of 1" in out
    # beside the uncovered forbidden element: the golden's state and the answer's
    assert "    forbidden:unlock_card  (exercised, not verified; high; verified by a judged answer: pass)" in out
    assert "  forbidden:ask_pin: verified by a judged answer, fail" in out
    assert "    fail [rules] case 2 (" in out
    assert "  forbidden:reveal_number: judged, undecided" in out
    # -q keeps the figures
    quiet = run_mbt("coverage", "--model", card / "card.fsm", "--goldens", card / "card.jsonl", "--answers",
                    card / "eval.json", "-q").stdout
    assert "    forbidden          2 of 3 (1 failed" in quiet and "fail [rules] case 2" not in quiet


def test_markdown_and_html_show_the_answers(card, tmp_path):
    done = run_mbt("coverage", "--model", card / "card.fsm", "--goldens", card / "card.jsonl", "--answers",
                   card / "eval.json", "--format", f"markdown:{tmp_path / 'r.md'}", "--format",
                   f"html:{tmp_path / 'html'}")
    assert done.returncode == 1, done.stderr
    markdown = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert "| criterion | verified by a judged answer | % | failed | undecided |" in markdown
    assert "| forbidden | 2/3 | 66.7% | 1 | 1 |" in markdown
    assert "- `forbidden:ask_pin`: fail — rules, case 2" in markdown
    page = next((tmp_path / "html").glob("model-card-*.html")).read_text(encoding="utf-8")
    assert "Verified by a judged answer" in page and "forbidden:ask_pin" in page
    assert "answer-verified" in page  # the element table's cell beside the goldens


def test_the_contract_items_an_eval_judged_are_answer_verified(tmp_path):
    done = run_mbt("eval", "--model", CONTRACTS, "--goldens", CONTRACT_CASES, "--runs", CONTRACT_RUNS, "--format",
                   "json", "-o", tmp_path / "eval.json", cwd=ROOT)
    assert done.returncode == 1, done.stderr
    _, report = coverage_json("--model", CONTRACTS, "--goldens", ROOT / "models" / "goldens", "--answers",
                              tmp_path / "eval.json", cwd=ROOT)
    (contract,) = report["answers"]["models"]
    assert (contract["model"], contract["kind"]) == ("password-reset-v1", "contract")
    figures = {f["criterion"]: f for f in contract["criteria"]}
    assert list(figures) == ["must_have", "must_not"]
    # INT-002 asks for the password (must_not[0]), INT-004 claims the reset (must_not[1]); the rest not judged
    assert (figures["must_not"]["verified"]["covered"], figures["must_not"]["verified"]["total"],
            figures["must_not"]["failed"], figures["must_not"]["undecided"]) == (2, 3, 2, 1)
    assert (figures["must_have"]["verified"]["covered"], figures["must_have"]["undecided"]) == (0, 2)
    elements = {e["element"]: e for e in contract["elements"]}
    asked = elements["must_not[0]"]
    assert (asked["status"], asked["verdict"], asked["failed"], asked["undecided"]) == ("verified", "fail", 1, 3)
    assert (asked["answers"][0]["case"], asked["answers"][0]["judge"]) == ("INT-002", "embedded")
    assert elements["must_have[0]"]["status"] == "undecided"
    assert report["answers"]["notes"] == []


def test_the_gate_can_require_answer_verified_elements(card, tmp_path):
    gate = tmp_path / "gate.yaml"
    gate.write_text("forbidden_uncovered: 10\nfsm.forbidden.answer_verified: \">= 0.9\"\n"
                    "card.claim.answer_verified: \">= 1\"\n", encoding="utf-8")
    args = ("--model", card / "card.fsm", "--goldens", card / "card.jsonl", "--gate", gate)
    done, report = coverage_json(*args, "--answers", card / "eval.json")
    assert done.returncode == 1
    (failure,) = report["gate"]["failures"]
    assert failure["rule"] == "fsm.forbidden.answer_verified"
    assert failure["message"] == ("card: forbidden verified by a judged answer is 66.7%, the gate requires >= 90.0% "
                                  "(not verified: forbidden:reveal_number)")
    gate.write_text("forbidden_uncovered: 10\nfsm.forbidden.answer_verified.weighted: \">= 0.6\"\n",
                    encoding="utf-8")
    done, _ = coverage_json(*args, "--answers", card / "eval.json")
    assert done.returncode == 0
    # without an eval report the rule is not met: never green unseen
    done, report = coverage_json(*args)
    assert done.returncode == 1
    assert report["gate"]["failures"][0]["message"] == (
        "gate rule `fsm.forbidden.answer_verified.weighted` needs judged answers: add --answers EVAL.json "
        "(an `mbt eval --model` report)")
    # mbt eval and mbt runs read the same gate file and leave the rule to mbt coverage
    ran = run_mbt("runs", "--model", card / "card.fsm", "--runs", card / "runs", "--gate", gate, "--format", "json")
    assert ran.returncode in (0, 1), ran.stderr
    assert not [f for f in json.loads(ran.stdout)["gate"]["failures"] if "answer_verified" in f["rule"]]
    # a criterion no answer can verify matches nothing
    gate.write_text("forbidden_uncovered: 10\nfsm.transition.answer_verified: \">= 0.5\"\n", encoding="utf-8")
    _, report = coverage_json(*args, "--answers", card / "eval.json")
    assert "matches no loaded model whose `transition` elements an answer can verify" in \
        report["gate"]["failures"][0]["message"]


def test_a_bad_eval_report_is_one_located_message(card, tmp_path):
    args = ("coverage", "--model", card / "card.fsm", "--goldens", card / "card.jsonl", "--answers")
    broken = tmp_path / "broken.json"
    broken.write_text('{"schema_version": "1.0",\n  "judge": }\n', encoding="utf-8")
    done = run_mbt(*args, broken)
    assert done.returncode == 2 and f"{broken}:2:12: error: not valid JSON" in done.stderr, done.stderr
    report = json.loads((card / "eval.json").read_text(encoding="utf-8"))
    report["sayings"][0]["elements"][0]["judged"][1]["verdict"] = "maybe"
    wrong = tmp_path / "wrong.json"
    text = json.dumps(report, indent=2)
    wrong.write_text(text, encoding="utf-8")
    line = next(n for n, row in enumerate(text.splitlines(), start=1) if '"maybe"' in row)
    done = run_mbt(*args, wrong)
    assert done.returncode == 2, done.stderr
    assert f"{wrong}:{line}:" in done.stderr and "sayings.0.elements.0.judged.1.verdict" in done.stderr
    assert "not an mbt eval report" in done.stderr
    coverage_report = tmp_path / "coverage.json"
    coverage_report.write_text(run_mbt("coverage", "--model", card / "card.fsm", "--format", "json").stdout,
                               encoding="utf-8")
    done = run_mbt(*args, coverage_report)
    assert done.returncode == 2, done.stderr
    assert f"{coverage_report}:1:19: error: not an mbt eval report (schema_version '3.2'; an eval report's is " \
           "'1.0')" in done.stderr
    missing = run_mbt(*args, tmp_path / "nowhere.json")
    assert missing.returncode == 2 and "nowhere.json" in missing.stderr
    assert "Traceback" not in done.stderr + missing.stderr


def test_what_the_loaded_models_do_not_have_is_a_note(card, tmp_path):
    report = json.loads((card / "eval.json").read_text(encoding="utf-8"))
    # made against another version of the model: ask_pin renamed, and a model not loaded here
    report["sayings"][0]["elements"][0]["id"] = "forbidden:ask_pin_code"
    other = json.loads(json.dumps(report["sayings"][0]))
    other["model"] = "wallet"
    report["sayings"].append(other)
    changed = tmp_path / "eval.json"
    changed.write_text(json.dumps(report), encoding="utf-8")
    _, out = coverage_json("--model", card / "card.fsm", "--goldens", card / "card.jsonl", "--answers", changed)
    notes = [n["message"] for n in out["answers"]["notes"]]
    assert notes == [
        "names `forbidden:ask_pin_code` of model card, which the loaded model has not as a say forbid or claim "
        "(an eval report made against another version of the model?): not counted",
        "does not list `forbidden:ask_pin` of model card (an eval report made against another version of the "
        "model?)",
        "names model `wallet`, which is not loaded: its 4 element(s) not counted"]
    assert all(n["report"] == str(changed) for n in out["answers"]["notes"])
    elements = {e["element"]: e for e in out["answers"]["models"][0]["elements"]}
    assert elements["forbidden:ask_pin"]["status"] == "no_answer"
    text = run_mbt("coverage", "--model", card / "card.fsm", "--goldens", card / "card.jsonl", "--answers",
                   changed).stdout
    assert "Answers not counted (3):" in text and "names model `wallet`, which is not loaded" in text


def test_an_eval_report_made_without_a_model_says_so(card, tmp_path):
    done = run_mbt("eval", "--goldens", card / "card.jsonl", "--runs", card / "runs", "--format", "json", "-o",
                   tmp_path / "plain.json")
    assert done.returncode == 1, done.stderr
    _, out = coverage_json("--model", card / "card.fsm", "--answers", tmp_path / "plain.json")
    assert [n["message"] for n in out["answers"]["notes"]] == [
        "judged no answer on a model element (made without --model?)"]
    assert {e["status"] for e in out["answers"]["models"][0]["elements"]} == {"no_answer"}


def test_several_reports_and_the_configuration_file(card, tmp_path):
    (tmp_path / "mbt.yaml").write_text(f"answers: [{card / 'eval.json'}]\n", encoding="utf-8")
    _, out = coverage_json("--model", card / "card.fsm", "--goldens", card / "card.jsonl", cwd=tmp_path)
    assert out["answers"]["reports"] == [str(card / "eval.json")]
    _, twice = coverage_json("--model", card / "card.fsm", "--answers", card / "eval.json", "--answers",
                             card / "eval.json", cwd=tmp_path)
    pin = next(e for e in twice["answers"]["models"][0]["elements"] if e["element"] == "forbidden:ask_pin")
    assert (pin["passed"], pin["failed"]) == (2, 2) and len(twice["answers"]["reports"]) == 2


def test_level_3_names_the_answer_verified_counts(card):
    _, out = coverage_json("--model", card / "card.fsm", "--goldens", card / "card.jsonl", "--answers",
                           card / "eval.json")
    level3 = next(lv for lv in out["levels"]["levels"] if lv["level"] == 3)
    answered = [(f["name"], f["covered"], f["total"]) for f in level3["figures"]
                if f["denominator"] == "elements a judged answer can verify"]
    assert answered == [("card (fsm) forbidden verified by a judged answer", 2, 3),
                        ("card (fsm) claim verified by a judged answer", 1, 1)]
    text = run_mbt("coverage", "--model", card / "card.fsm", "--goldens", card / "card.jsonl", "--answers",
                   card / "eval.json").stdout
    assert "      card (fsm): forbidden 2/3, claim 1/1 verified by a judged answer" in text


def test_the_api_takes_the_answers(card):
    from mbt import api

    run = api.coverage_run([str(card / "card.fsm")], [str(card / "card.jsonl")],
                           answer_paths=[str(card / "eval.json")])
    figure = run.report.answers.model("card").figure("forbidden")
    assert (figure.verified.covered, figure.verified.total, figure.failed) == (2, 3, 1)
    report = api.coverage([str(card / "card.fsm")], [str(card / "card.jsonl")],
                          answer_paths=[str(card / "eval.json")])
    assert report.answers is not None and report.answers.model("card").element("claim:done").verdict == "pass"


def test_a_loaded_model_no_eval_report_names_says_so(card):
    orders = ROOT / "models" / "orders.fsm"
    _, out = coverage_json("--model", card / "card.fsm", orders, "--answers", card / "eval.json")
    by = {m["model"]: m for m in out["answers"]["models"]}
    assert by["card"]["named_by"] == [str(card / "eval.json")] and by["orders"]["named_by"] == []
    assert {e["status"] for e in by["orders"]["elements"]} == {"no_answer"}
    figures = {f["criterion"]: f["verified"]["covered"] for f in by["orders"]["criteria"]}
    assert figures == {"forbidden": 0, "claim": 0}
    text = run_mbt("coverage", "--model", card / "card.fsm", orders, "--answers", card / "eval.json").stdout
    assert "  verified by a judged answer (no eval report names the model; never added into verified or " \
           "exercised):" in text


@pytest.mark.slow
def test_axe_finds_no_serious_violation_on_the_answers_pages(card, tmp_path):
    from tests.test_html_report import axe_audit, serious

    site = tmp_path / "site"
    done = run_mbt("coverage", "--model", card / "card.fsm", "--goldens", card / "card.jsonl", "--answers",
                   card / "eval.json", "--format", f"html:{site}")
    assert done.returncode == 1, done.stderr
    assert serious(axe_audit(site, tmp_path / "profile")) == {}
