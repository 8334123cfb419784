"""A newcomer's refund-and-cancellation model (tests/data/refund-cancel: an fsm, its eligibility table and the policy
that `enforce`s its refunds) through every command: the defects issue 32 found on such a model, each kept fixed."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_runner import run_mbt

DATA = Path(__file__).parent / "data" / "refund-cancel"
FSM, TABLE, POLICY = DATA / "refund-cancel.fsm", DATA / "refund-cancel.dt", DATA / "refund-cancel.policy"
MODELS = ["--model", FSM, TABLE, POLICY]
GOLDENS = DATA / "goldens"
CONVERSATIONS, DECISIONS = GOLDENS / "conversations.yaml", GOLDENS / "eligibility.jsonl"
# The goldens that disagree with a model they apply to, and the ones no command may count as valid.
CONTRADICTING = {"RC-WRONG-STATE", "RC-WRONG-AMOUNT", "RC-WRONG-DECISION", "EL-4"}
INVALID = {"RC-BAD-INPUT", "EL-1"}


def _json(*args) -> dict:
    r = run_mbt(*args, "--format", "json")
    assert r.returncode in (0, 1), r.stderr
    return json.loads(r.stdout)


def _kills(report: dict) -> dict[str, set[str]]:
    """Golden id -> the `model:mutant` it kills, from a mutation report."""
    kills: dict[str, set[str]] = {}
    for model in report["models"]:
        for result in model["results"]:
            for golden in result["killed_by"]:
                kills.setdefault(golden, set()).add(f"{model['model']}:{result['id']}")
    return kills


def test_a_golden_that_contradicts_the_model_kills_nothing():
    """RC-WRONG-AMOUNT contradicts the fsm after a refund the policy permits: coverage trusts none of its checks on
    the policy (docs/coverage-rules/policy.md), so it may not kill the policy's mutants either."""
    coverage = _json("coverage", *MODELS, "--goldens", GOLDENS, "--no-gate")
    contradicting = {(c["case"], c["model"]) for c in coverage["contradictions"]}
    assert ("RC-WRONG-AMOUNT", "refund_cancel") in contradicting
    mutation = _json("mutate", *MODELS, "--goldens", GOLDENS)
    kills = _kills(mutation)
    assert kills.get("RC-WRONG-AMOUNT", set()) == set()
    assert kills.get("RC-WRONG-STATE", set()) == set()
    # Each model on its own, as coverage measures it: contradicting the table does not distrust the fsm's checks.
    assert {k.split(":")[0] for k in kills["RC-WRONG-DECISION"]} == {"refund_cancel", "refund_rights"}
    assert kills["RC-REFUND"] & {k for k in kills["RC-REFUND"] if k.startswith("refund_rights:")}
    # A candidate that contradicts the model adds nothing, however many mutants its replay would tell apart.
    compare = _json("compare", *MODELS, "--baseline-goldens", DECISIONS, "--goldens", CONVERSATIONS)
    by_id = {c["id"]: c for c in compare["candidates"]}
    assert by_id["RC-WRONG-AMOUNT"]["new_kills"] == [] and by_id["RC-WRONG-STATE"]["new_kills"] == []


def test_every_command_counts_the_same_invalid_cases(tmp_path):
    """One validation for every command: a case invalid on any model it applies to (RC-BAD-INPUT's `reason` is
    outside the table's domain) is invalid for coverage, mutate, compare, generate and runs alike, and in each
    read = valid + invalid."""
    coverage = _json("coverage", *MODELS, "--goldens", GOLDENS, "--no-gate")["goldens"]
    assert coverage["invalid"] == len(INVALID) and coverage["read"] == coverage["valid"] + coverage["invalid"]
    figures = {"coverage": (coverage["read"], coverage["valid"], coverage["invalid"])}
    mutation = _json("mutate", *MODELS, "--goldens", GOLDENS)
    figures["mutate"] = (mutation["goldens_read"], mutation["goldens_valid"], mutation["goldens_invalid"])
    assert {line.split(": ")[0].rsplit(":", 1)[0] for line in mutation["invalid_cases"]} == {
        str(CONVERSATIONS), str(DECISIONS)}
    compare = _json("compare", *MODELS, "--baseline-goldens", DECISIONS, "--goldens", CONVERSATIONS)
    figures["compare"] = (compare["mutation"]["goldens_read"], compare["mutation"]["goldens_valid"],
                          compare["mutation"]["goldens_invalid"])
    valid_candidates = [c for c in compare["candidates"] if c["invalid"] is None]
    assert compare["baseline"] + len(valid_candidates) == compare["mutation"]["goldens_valid"]
    assert {c["id"] for c in compare["candidates"] if c["invalid"]} == {"RC-BAD-INPUT"}
    generate = _json("generate", *MODELS, "--goldens", GOLDENS, "--out", tmp_path / "gen")["goldens"]
    figures["generate"] = (generate["read"], generate["valid"], generate["invalid"])
    runs = _json("runs", *MODELS, "--runs", DATA / "runs", "--goldens", GOLDENS, "--no-gate")["coverage"]["goldens"]
    figures["runs"] = (runs["read"], runs["valid"], runs["invalid"])
    for command, (read, valid, invalid) in figures.items():
        assert read == valid + invalid, command
    assert len(set(figures.values())) == 1, figures
    # Invalid is invalid everywhere: it kills nothing and is never kept in the smallest equivalent set.
    kills = _kills(mutation)
    assert all(kills.get(golden, set()) == set() for golden in INVALID)
    assert not INVALID & set(mutation["redundancy"]["kept"])


def test_no_extra_transition_out_of_a_final_state():
    """A final state has no outgoing transition by definition: the extra-transition operator (FET) never adds one."""
    mutation = _json("mutate", "--model", FSM, "--goldens", GOLDENS)
    fsm = next(m for m in mutation["models"] if m["model"] == "refund_cancel")
    extra = [r["id"] for r in fsm["results"] if r["operator"] == "FET"]
    assert extra, "the operator still applies to the other states"
    finals = ("refunded", "cancelled", "refused")
    assert [m for m in extra if m.split("@")[1].split(".")[0] in finals] == []


def test_no_forbid_removed_out_of_a_final_state(tmp_path):
    """Removing a forbid that speaks of a final state would add a transition out of it (FFR): not made either."""
    model = tmp_path / "fin.fsm"
    model.write_text("fsm fin {\n  state a initial\n  state done final\n  event go\n  event again\n"
                     "  a -> done on go\n  forbid done on again\n  forbid a on again\n}\n", encoding="utf-8")
    goldens = tmp_path / "none.jsonl"
    goldens.write_text("", encoding="utf-8")
    mutation = _json("mutate", "--model", model, "--goldens", goldens)
    removed = [r["id"] for r in mutation["models"][0]["results"] if r["operator"] == "FFR"]
    assert removed == ["FFR@forbidden:a.again"]


def test_a_final_tool_check_of_an_earlier_call_expects_nothing_forbidden():
    """RC-CANCEL-CHECKED's final `tool_arguments: {lookup_order: ...}` speaks of the lookup made at turn 1 (the latest
    call of the tool): it does not expect the second lookup `forbid deciding on cancel effect call lookup_order`
    forbids at the last turn, and it verifies that forbid with its `must_not_call` there."""
    report = _json("coverage", *MODELS, "--goldens", CONVERSATIONS, "--no-gate")
    assert [f for f in report["forbidden_expected"] if f["case"] == "RC-CANCEL-CHECKED"] == []
    assert [c for c in report["contradictions"] if c["case"] == "RC-CANCEL-CHECKED"] == []
    fsm = next(m for m in report["models"] if m["model"] == "refund_cancel")
    columns = report["element_columns"]
    rows = {row[0]: dict(zip(columns, row)) for row in fsm["elements"]}
    verified_by = [report["golden_ids"][i] for i in rows["forbidden:no_second_lookup"].get("verified_by", [])]
    assert "RC-CANCEL-CHECKED" in verified_by


def test_a_final_tool_check_of_the_forbidden_call_itself_still_expects_it(tmp_path):
    """The same final check where the last turn's own step makes the call is the forbidden call expected."""
    model = tmp_path / "again.fsm"
    model.write_text("fsm again {\n  state a initial\n  state b\n  state c final\n  event go\n  event stop\n"
                     "  a -> b on go / call look(n = 1)\n  b -> c on stop / call look(n = 2)\n"
                     "  forbid b on stop effect call look\n}\n", encoding="utf-8")
    goldens = tmp_path / "g.jsonl"
    goldens.write_text('{"id": "G", "turns": [{"event": "go"}, {"event": "stop"}], '
                       '"final_assertions": {"tool_arguments": {"look": {"n": 2}}}}\n', encoding="utf-8")
    report = _json("coverage", "--model", model, "--goldens", goldens, "--no-gate")
    assert [f["case"] for f in report["forbidden_expected"]] == ["G"]


FORBIDDEN_EXPECTED = ('{"id": "RC-EXPECTS-REFUND", "model": "refund_cancel", "turns": [{"event": "ask", "args": '
                      '{"customer": "c-6"}}, {"event": "order_found", "args": {"owner": "c-9", "total": 5}, '
                      '"tool_arguments": {"issue_refund": {}}}]}\n')


def test_an_unchanged_run_passes_its_own_ratchet(tmp_path):
    """`--baseline` compares with the baseline's figures: the default limits (no contradiction, no invalid case, no
    golden expecting forbidden behaviour) are for runs without one, so a run that is no worse passes."""
    more = tmp_path / "more.jsonl"
    more.write_text(FORBIDDEN_EXPECTED, encoding="utf-8")
    base = tmp_path / "baseline.json"
    first = run_mbt("coverage", *MODELS, "--goldens", GOLDENS, more, "--save-baseline", base)
    assert first.returncode == 1 and "contradictions is 6" in first.stdout  # the default gate, without a baseline
    assert json.loads(base.read_text(encoding="utf-8"))["counts"]["forbidden_expected"] == 1
    again = run_mbt("coverage", *MODELS, "--goldens", GOLDENS, more, "--baseline", base)
    assert again.returncode == 0, again.stdout
    assert f"Gate (ratchet on baseline {base}: no worse than it): passed" in again.stdout
    # Worse than the baseline: one contradiction more fails, with the baseline's figure as the limit.
    worse = tmp_path / "worse.jsonl"
    worse.write_text(FORBIDDEN_EXPECTED + '{"id": "RC-ONE-MORE", "model": "refund_cancel", "turns": [{"event": "ask", '
                     '"args": {"customer": "c-7"}, "assert_state": {"state": "idle"}}]}\n', encoding="utf-8")
    worse_run = run_mbt("coverage", *MODELS, "--goldens", GOLDENS, worse, "--baseline", base)
    assert worse_run.returncode == 1 and "contradictions rose from 6 to 7" in worse_run.stdout
    # A limit written in a gate file still applies: the user asked for it.
    gate = tmp_path / "gate.yaml"
    gate.write_text("contradictions: 0\n", encoding="utf-8")
    strict = run_mbt("coverage", *MODELS, "--goldens", GOLDENS, more, "--baseline", base, "--gate", gate)
    assert strict.returncode == 1 and "contradictions is 6 (in 5 goldens), the gate requires <= 0" in strict.stdout
    assert "invalid_cases is" not in strict.stdout  # not written there: the baseline's figure replaces it


def test_findings_are_counted_per_expectation_and_per_golden(tmp_path):
    """5 contradictions in 4 goldens (RC-WRONG-AMOUNT holds two): every format says both figures, and the HTML card
    for goldens contradicting a model counts goldens."""
    report = _json("coverage", *MODELS, "--goldens", GOLDENS, "--no-gate")
    assert len(report["contradictions"]) == 5 and report["goldens"]["contradicting"] == 4
    text = run_mbt("coverage", *MODELS, "--goldens", GOLDENS).stdout
    assert "Contradictions (5 in 4 goldens)" in text
    assert "contradictions is 5 (in 4 goldens), the gate requires <= 0" in text
    assert "5 contradictions in 4 goldens" in run_mbt("coverage", *MODELS, "--goldens", GOLDENS, "-q").stdout
    markdown = run_mbt("coverage", *MODELS, "--goldens", GOLDENS, "--format", "markdown").stdout
    assert "| Contradictions | 5 in 4 goldens |" in markdown
    html = tmp_path / "html"
    run_mbt("coverage", *MODELS, "--goldens", GOLDENS, "--format", f"html:{html}")
    index = (html / "index.html").read_text(encoding="utf-8")
    card = index[index.index('<div class="card', index.index("forbidden behaviours not tested")):]
    card = card[:card.index("</section>")]
    assert '<div class="big">4</div>' in card and "goldens contradicting a model" in card
    assert "5 contradictions in 4 goldens" in card
    assert "5 contradictions in 4 goldens" in index[index.index("<h2>Findings</h2>"):]
    findings = (html / "findings.html").read_text(encoding="utf-8")
    assert "<h2>Contradictions (5 in 4 goldens)</h2>" in findings


def test_a_waived_element_is_marked_waived(tmp_path):
    """The gate file waives transition:deciding.refuse->refused: the text and Markdown reports say so beside it."""
    gate = DATA / "gates" / "release.yaml"
    text = run_mbt("coverage", *MODELS, "--goldens", GOLDENS, "--gate", gate).stdout
    line = next(row for row in text.splitlines() if row.strip().startswith("transition:deciding.refuse->refused"))
    assert "waived until 2099-12-31: RC-77: refusals get their golden next sprint" in line
    pair = next(row for row in text.splitlines() if row.strip().startswith("transition-pair:"))
    assert "waived" not in pair
    markdown = run_mbt("coverage", *MODELS, "--goldens", GOLDENS, "--gate", gate, "--format", "markdown").stdout
    assert "`transition:deciding.refuse->refused` (transition, not reached) *(waived)*" in markdown
