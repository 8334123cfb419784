"""`mbt generate --probes` (issue 36, item 5; docs/levels.md, "Generating the probes"): held-out probes per source unit
from named generators — the unit's own words, the model's bindings' words, an LLM on a scripted local server — judged
covered or not by the goldens as level 1 aligns them, written as the probe file `mbt probes` reads, and reported;
the end-to-end figures against a hand computation on a tiny example; `mbt coverage --levels 1 --probes FILE`."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from mbt.api import generate_probes, load_models
from mbt.generate.probes import Unit, bound_words, model_words_probes, unit_text_probes
from mbt.measure.probes import read_probes
from tests.chat_server import ChatServer, completion
from tests.cli_runner import run_mbt

ROOT = Path(__file__).resolve().parents[1]
LEVELS = ROOT / "docs" / "examples" / "levels"
SEED_SENTENCE = "1. 退款超过七天仍未完成时，商户可以联系客服，但不能重复发起退款。"

POLICY = """# Refunds

Refunds within 14 days of the payment are approved, but gift cards are never exchanged.

Money goes back to the original bank account within 5 working days.
"""
MODEL = """source policy "policy.md"

fsm refunds {
  state paid initial
  state refunded final

  event refund(days: int[0..100]) @policy:3 "Refunds within 14 days of the payment are approved"
  event gift_exchange @policy:3 "gift cards are never exchanged"

  bind regex "refund after (?P<days>[0-9]+) days" -> refund
  bind text "exchange my gift card" -> gift_exchange

  paid -> refunded on refund(d) [d <= 14] @policy:3 "within 14 days"
  forbid paid on gift_exchange @policy:3 "gift cards are never exchanged"
}
"""
QNA = """No.,Question,Expected answer
1,Can I get a refund 10 days after paying?,Yes: refunds within 14 days of the payment are approved.
2,How long does a refund take?,It takes 5 working days.
3,Where does my money go?,Back to the original bank account.
"""


@pytest.fixture()
def tiny(tmp_path):
    (tmp_path / "policy.md").write_text(POLICY, encoding="utf-8")
    (tmp_path / "refunds.fsm").write_text(MODEL, encoding="utf-8")
    (tmp_path / "qna.csv").write_text(QNA, encoding="utf-8")
    return tmp_path


def wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson's score interval, written out again for the hand computation."""
    p = k / n
    centre, spread, scale = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)), 1 + z * z / n
    return max(0.0, (centre - spread) / scale), min(1.0, (centre + spread) / scale)


# ------------------------------------------------------------------ the generators


def test_unit_text_gives_the_units_own_propositions_statements_first():
    unit = Unit("rules:3", "rules.md", 3, SEED_SENTENCE)
    assert unit_text_probes(unit, 3) == ["退款超过七天仍未完成时，商户可以联系客服", "退款超过七天仍未完成时，商户不能重复发起退款",
                                         "退款超过七天仍未完成"]
    assert unit_text_probes(unit, 4)[3] == "退款超过七天仍未完成时，商户可以联系客服，但不能重复发起退款。"  # the whole unit last
    one = Unit("rules:4", "rules.md", 4, "2. 退款金额不能超过已支付金额。")
    assert unit_text_probes(one, 3) == ["退款金额不能超过已支付金额"]  # one proposition: one probe, not three copies


def test_model_words_are_the_bindings_words_with_the_citing_parts_quote():
    _, (model,) = load_models([str(LEVELS / "refund-lifecycle.fsm")])
    assert bound_words(model, "request_refund") == ["我要退款…元"]  # the captured amount left open
    assert bound_words(model, "contact_support") == ["联系客服"]
    assert bound_words(model, "seven_days_passed") == []  # no binding says it
    parts = {"refund_lifecycle/event request_refund": (model, model.events["request_refund"]),
             "refund_lifecycle/event seven_days_passed": (model, model.events["seven_days_passed"]),
             "refund_lifecycle/forbid at line 38": (model, model.forbids[1])}
    unit = Unit("rules:3", "rules.md", 3, SEED_SENTENCE, tuple(parts))
    assert model_words_probes(unit, parts, 3) == ["我要退款…元 — 发起退款", "我要退款…元 — 不能重复发起退款"]
    assert model_words_probes(Unit("rules:6", "rules.md", 6, "4. 地区…", ()), parts, 3) == []


# ------------------------------------------------------------------ end to end, by hand


def test_the_tiny_example_end_to_end_against_a_hand_computation(tiny):
    made = generate_probes([str(tiny / "refunds.fsm")], [str(tiny / "qna.csv")], str(tiny / "probes.jsonl"),
                           per_unit=2)
    got = [(p.generator, p.probe, p.question, p.covered) for p in made.probes.probes]
    # unit-text: the compound sentence's two statements; the one-clause sentence's one (the whole unit says the same).
    # model-words: policy:3's parts (the event gift_exchange, then the event refund, in the parts' name order; the
    # forbid repeats the first); policy:5 is cited by no part. Judged by level 1's rule: a shared fact ("14 days",
    # "5 working days") and most terms, or most terms both ways, align; nothing in common with any golden is not
    # covered.
    assert got == [
        ("unit-text", "policy:3/1", "Refunds within 14 days of the payment are approved", True),  # golden 1
        ("unit-text", "policy:3/2", "gift cards are never exchanged", False),
        ("unit-text", "policy:5/1", "Money goes back to the original bank account within 5 working days", True),
        ("model-words", "policy:3/1", "exchange my gift card — gift cards are never exchanged", False),
        ("model-words", "policy:3/2", "refund after … days — Refunds within 14 days of the payment are approved",
         True)]
    assert made.probes.short == {"unit-text": ["policy:5"], "model-words": ["policy:5"]}
    report = made.report
    by = {g.generator: g for g in report.generators}
    text, words = by["unit-text"], by["model-words"]
    # unit-text: pooled 2/3 (every probe alike); per unit 1/2 and 1/1; stratified (1/2 + 1/1) / 2 = 0.75 — each unit
    # weighs 1/2 whatever its number of probes — with SE sqrt((1/2)^2 · (0.5 · 0.5 / 2) + (1/2)^2 · 0) = 0.1768
    assert (text.pooled.covered, text.pooled.probes) == (2, 3)
    assert text.pooled.coverage == pytest.approx(2 / 3)
    assert (text.pooled.wilson.low, text.pooled.wilson.high) == pytest.approx(wilson(2, 3), abs=1e-9)
    assert wilson(2, 3) == pytest.approx((0.2077, 0.9385), abs=1e-4)
    assert [(u.unit, u.covered, u.probes) for u in text.units] == [("policy:3", 1, 2), ("policy:5", 1, 1)]
    assert text.stratified.coverage == pytest.approx(0.75)
    assert text.stratified.se == pytest.approx(math.sqrt(0.25 * 0.125), abs=1e-12)
    assert (text.stratified.equal_probes, text.stratified.single_probe_units) == (False, 1)
    # within units: policy:3 resamples to 0, 1/2 or 1 (probability 1/4, 1/2, 1/4), policy:5 always to 1: the estimate
    # is 0.5, 0.75 or 1, each end with probability 1/4 > 2.5%, so the 95% percentile interval is [0.5, 1]
    assert (text.stratified.bootstrap.low, text.stratified.bootstrap.high) == (0.5, 1.0)
    # model-words: 1/2 on one unit
    assert (words.pooled.covered, words.pooled.probes) == (1, 2)
    assert (words.pooled.wilson.low, words.pooled.wilson.high) == pytest.approx(wilson(1, 2), abs=1e-9)
    assert wilson(1, 2) == pytest.approx((0.0945, 0.9055), abs=1e-4)
    assert (words.stratified.coverage, words.stratified.units) == (0.5, 1)
    # leave-one-generator-out: without unit-text, model-words' probes (0.5) against unit-text's own 0.75
    logo = {h.generator: (h.others.coverage, h.own, h.difference) for h in report.leave_one_generator_out}
    assert logo["unit-text"] == pytest.approx((0.5, 0.75, 0.25))
    assert logo["model-words"] == pytest.approx((0.75, 0.5, -0.25))


def test_the_written_file_is_the_probe_file_mbt_probes_reads(tiny):
    out = tiny / "probes.jsonl"
    done = run_mbt("generate", "--probes", "--model", tiny / "refunds.fsm", "--goldens", tiny / "qna.csv",
                   "--out", out, "--per-unit", "2")
    assert done.returncode == 0, done.stderr
    assert ("mbt generate: 5 probe(s) of 2 unit(s) from unit-text, model-words written to "
            f"{out}: 3 covered, 2 not covered, 0 not judged") in done.stderr
    assert "note: model-words: 1 unit(s) gave fewer probes than asked for: policy:5" in done.stderr
    first = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert first == {"unit": "policy:3", "probe": "policy:3/1", "generator": "unit-text", "covered": True,
                     "question": "Refunds within 14 days of the payment are approved", "judge": "embedded (align-1)",
                     "reason": first["reason"], "unit_text": POLICY.splitlines()[2]}
    assert first["reason"].startswith("aligned with 1: states '14 days' as the unit does")
    again = run_mbt("probes", out)
    assert again.returncode == 0 and again.stdout == done.stdout  # the same report, from the file
    assert [p.covered for p in read_probes(str(out))] == [True, False, True, False, True]


def test_bad_probe_options_are_one_clear_error(tiny):
    base = ["generate", "--model", tiny / "refunds.fsm", "--goldens", tiny / "qna.csv", "--out", tiny / "p.jsonl"]
    for extra, message in ((["--probes", "--generator", "synth"], "--generator synth: a generator is unit-text, "
                                                                  "model-words or openai:MODEL"),
                           (["--probes", "--kill"], "--kill writes tests; it does not apply with --probes"),
                           (["--per-unit", "2"], "--per-unit is an option of --probes: add --probes"),
                           (["--probes", "--source", tiny / "nothing.md"], "no such file")):
        done = run_mbt(*base, *extra)
        assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr, done.stderr


# ------------------------------------------------------------------ the LLM generator and its cache


def test_the_llm_generator_writes_its_questions_and_the_file_is_its_cache(tiny, monkeypatch):
    questions = {"policy:3": ["Are refunds approved 14 days after payment?", "Can I exchange a gift card?"],
                 "policy:5": ["Where is the money paid back?", "How long does the refund take?"]}

    def reply(n, body, headers):
        prompt = body["messages"][0]["content"]
        unit = "policy:3" if "gift cards" in prompt else "policy:5"
        return completion(json.dumps({"questions": questions[unit]}))

    out = tiny / "probes.jsonl"
    args = ["generate", "--probes", "--model", tiny / "refunds.fsm", "--goldens", tiny / "qna.csv", "--out", out,
            "--generator", "openai:m", "--per-unit", "2"]
    with ChatServer(reply) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        first = run_mbt(*args)
        asked = len(server.requests)
        # a person edits one question in the file: it is kept, and judged again
        lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
        lines[1]["question"] = "Is a gift card ever exchanged?"
        out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in lines), encoding="utf-8")
        second = run_mbt(*args)
        asked_again = len(server.requests) - asked
        after_edit = [json.loads(line)["question"] for line in out.read_text(encoding="utf-8").splitlines()]
        refreshed = run_mbt(*args, "--refresh")
        asked_on_refresh = len(server.requests) - asked - asked_again
    assert first.returncode == 0 and second.returncode == 0 and refreshed.returncode == 0, first.stderr
    assert asked == 2 and asked_again == 0 and asked_on_refresh == 2
    assert "PASSAGE" in server.requests[0]["body"]["messages"][0]["content"]
    assert "(4 kept from the file unchanged)" in second.stderr
    assert after_edit == [questions["policy:3"][0], "Is a gift card ever exchanged?", *questions["policy:5"]]
    written = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["question"] for r in written] == [*questions["policy:3"], *questions["policy:5"]]  # asked again
    assert {r["generator"] for r in written} == {"openai:m"}
    assert {r["unit_text"] for r in written} == {POLICY.splitlines()[2], POLICY.splitlines()[4]}
    # judged as level 1 aligns: the 14 days and the refund's time share a fact and most terms with goldens 1 and 2;
    # the gift card shares nothing with any golden; "money ... back" shares two terms with golden 3: not sure
    assert "written to " in first.stderr and ": 2 covered, 1 not covered, 1 not judged" in first.stderr
    assert "generator `openai:m`: 3 judged probe(s), 1 not judged (left out)" in first.stdout


def test_a_failing_llm_generator_is_a_warning_and_the_rule_generators_still_write(tiny, monkeypatch):
    from tests.chat_server import Reply

    out = tiny / "probes.jsonl"
    with ChatServer(lambda n, body, headers: Reply(status=400, body={"error": {"message": "bad"}})) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        done = run_mbt("generate", "--probes", "--model", tiny / "refunds.fsm", "--goldens", tiny / "qna.csv",
                       "--out", out, "--generator", "unit-text", "--generator", "openai:m", "--per-unit", "2")
    assert done.returncode == 0, done.stderr
    assert "warning: openai:m: policy:3: the generator failed: HTTP 400" in done.stderr
    assert {p.generator for p in read_probes(str(out))} == {"unit-text"}


# ------------------------------------------------------------------ in the coverage report


def test_coverage_reads_the_generated_file_at_level_one_with_leave_one_generator_out(tiny):
    out = tiny / "probes.jsonl"
    assert run_mbt("generate", "--probes", "--model", tiny / "refunds.fsm", "--goldens", tiny / "qna.csv",
                   "--out", out, "--per-unit", "2").returncode == 0
    done = run_mbt("coverage", "--model", tiny / "refunds.fsm", "--goldens", tiny / "qna.csv", "--levels", "1",
                   "--probes", out, "--no-gate", "--format", "json")
    assert done.returncode == 0, done.stderr
    levels = json.loads(done.stdout)["levels"]
    figures = {f["name"]: f for lv in levels["levels"] if lv["level"] == 1 for f in lv["figures"]}
    assert figures["probe coverage, generator `unit-text` (stratified)"]["value"] == 0.75
    assert figures["probe coverage without generator `unit-text` (leave one out)"]["value"] == 0.5
    assert "not among the source units" not in json.dumps(figures)
    assert levels["probes"]["generators"][1]["generator"] == "unit-text"
    text = run_mbt("coverage", "--model", tiny / "refunds.fsm", "--goldens", tiny / "qna.csv", "--levels", "1",
                   "--probes", out, "--no-gate").stdout
    assert "Level 1: probe coverage (5 probe(s) of " in text
    assert "    without `model-words`: 75.0% [50.0%, 100.0%] over 2 unit(s); on its own probes 50.0% (-25.0 points)" \
        in text


def test_a_probe_file_made_for_other_units_is_measured_and_said_to_be(tiny):
    done = run_mbt("coverage", "--model", tiny / "refunds.fsm", "--goldens", tiny / "qna.csv", "--levels", "1",
                   "--probes", ROOT / "docs" / "examples" / "refund-probes.jsonl", "--no-gate")
    assert done.returncode == 0, done.stderr
    assert "conditioned on the generator; 3 of its units not among the source units here)" in done.stdout


def test_docs_levels_shows_what_generating_the_examples_probes_prints_and_the_committed_file_is_current(tmp_path):
    import shutil

    command = ("mbt generate --probes --model docs/examples/levels/refund-lifecycle.fsm --goldens "
               "docs/examples/levels/goldens/ --out docs/examples/levels/probes.jsonl")
    doc = (ROOT / "docs" / "levels.md").read_text(encoding="utf-8")
    block = doc[doc.index(f"$ {command} >/dev/null\n"):]
    block = block[block.index("\n") + 1:block.index("\n```")] + "\n"
    shutil.copytree(LEVELS, tmp_path / "docs" / "examples" / "levels")
    (tmp_path / "docs" / "examples" / "levels" / "probes.jsonl").unlink()  # drawn afresh, not read as a cache
    done = run_mbt(*command.split()[1:], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr == block
    drawn = (tmp_path / "docs" / "examples" / "levels" / "probes.jsonl").read_text(encoding="utf-8")
    assert drawn == (LEVELS / "probes.jsonl").read_text(encoding="utf-8"), "regenerate with the command above"
