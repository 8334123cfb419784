"""Seed 004's levels in `mbt coverage` (mbt.measure.levels, docs/levels.md): every level named in every report, the
opt-in levels 0-2 measured against hand-computed cases, their calibrations recomputed from the labelled set, the
seed's P1-P3 example, the reviewable propositions file, the LLM judge and extractor on a scripted local server, and
the worked example's figures as docs/levels.md shows them."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
import yaml

from mbt.errors import LocatedError
from mbt.measure import alignment, embedding
from mbt.measure.alignment import GoldenText, align, features, labelled_pairs, score
from mbt.measure.embedding import cosine, embed, embedding_coverage, kmeans
from mbt.measure.propositions import proposition_coverage, read_file, split
from tests.chat_server import ChatServer, completion, verdict_reply
from tests.cli_runner import run_mbt

ROOT = Path(__file__).resolve().parents[1]
LABELLED = ROOT / "tests" / "data" / "levels" / "alignment.yaml"
EXAMPLE = ROOT / "docs" / "examples" / "levels"
EXAMPLE_ARGS = ["--model", "docs/examples/levels/refund-lifecycle.fsm", "--goldens", "docs/examples/levels/goldens/",
                "--runs", "docs/examples/levels/runs/", "--probes", "docs/examples/levels/probes.jsonl",
                "--levels", "all", "--no-gate"]
SEED_SENTENCE = "退款超过七天仍未完成时，商户可以联系客服，但不能重复发起退款。"


def pairs(split_name: str):
    return [p for p in labelled_pairs(yaml.safe_load(LABELLED.read_text(encoding="utf-8"))) if p.split == split_name]


def golden(gid: str, question: str, answer: str) -> GoldenText:
    return GoldenText(gid, f"g.csv:{gid}", (question,), (answer,) if answer else ())


# ------------------------------------------------------------------ every report names every level


def test_every_level_and_dimension_is_named_with_why_it_was_not_measured():
    done = run_mbt("coverage", "--model", "models/refund.dt", "--goldens", "models/goldens/refund/", "--no-gate",
                   "--format", "json", cwd=ROOT)
    assert done.returncode == 0, done.stderr
    levels = json.loads(done.stdout)["levels"]
    assert [lv["level"] for lv in levels["levels"]] == [0, 1, 2, 3, 4]
    by = {lv["level"]: lv for lv in levels["levels"]}
    assert not by[0]["measured"] and "not asked for (--levels 0)" in by[0]["not_measured"][0]
    assert not by[2]["measured"] and "--levels 2" in by[2]["not_measured"][0]
    assert not by[4]["measured"] and "no runs given" in by[4]["not_measured"][0]
    assert any("no probes given" in why for why in by[1]["not_measured"])
    # level 3 is the run: each criterion's verified numbers, one figure each, never added up
    report = json.loads(done.stdout)
    criteria = [(c["criterion"], c["verified"]["covered"], c["verified"]["total"]) for m in report["models"]
                for c in m["criteria"]]
    assert [(f["name"].rsplit(" ", 1)[1], f["covered"], f["total"]) for f in by[3]["figures"]] == criteria
    assert [d["name"] for d in levels["dimensions"]] == ["coverage", "richness", "representativeness",
                                                        "effectiveness"]
    assert {d["name"]: d["measured"] for d in levels["dimensions"]} == {
        "coverage": True, "richness": False, "representativeness": False, "effectiveness": False}


def test_the_text_and_markdown_reports_name_the_levels_and_mutants_measure_effectiveness(tmp_path):
    done = run_mbt("coverage", "--model", "models/refund.dt", "--goldens", "models/goldens/refund/", "--no-gate",
                   "--mutants", "--format", f"markdown:{tmp_path / 'r.md'}", "--format", "text", cwd=ROOT)
    assert done.returncode == 0, done.stderr
    for level in ("level 0  surface and topic: not measured", "level 3  business behaviour",
                  "level 4  usage and risk: not measured"):
        assert level in done.stdout
    assert "effectiveness: refund (table) mutation score:" in done.stdout
    assert re.search(r"richness: goldens adding nothing over the others .*: \d+/\d+", done.stdout)
    markdown = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert "## Levels of coverage (seed 004)" in markdown and "| 2 | propositions | — |" in markdown


def test_bad_level_options_are_one_clear_error():
    bad = run_mbt("coverage", "--model", "models/refund.dt", "--levels", "3", cwd=ROOT)
    assert bad.returncode == 2 and "--levels 3: give levels among 0, 1, 2" in bad.stderr
    lonely = run_mbt("coverage", "--model", "models/refund.dt", "--propositions", "p.yaml", cwd=ROOT)
    assert lonely.returncode == 2 and "add --levels" in lonely.stderr
    missing = run_mbt("coverage", "--model", "models/refund.dt", "--levels", "1", "--source", "nowhere.md", cwd=ROOT)
    assert missing.returncode == 2 and "--source nowhere.md: no such file" in missing.stderr
    assert "Traceback" not in bad.stderr + lonely.stderr + missing.stderr


# ------------------------------------------------------------------ level 1


def test_alignment_against_a_hand_computed_pair():
    unit = "Refunds are paid back to the original card within 5 business days."
    qa = "How long does a refund take? Refunds are credited within 5 business days."
    # terms by hand: unit {refund, paid, back, original, card, within, business, day} (8; "are", "to", "the" are
    # function words), golden {long, take, refund, credit, within, business, day} (7; "how", "does", "a", "are");
    # common {refund, within, business, day}: 4/8 of the unit's, 4/7 of the golden's; the fact "5 business days"
    f = features(unit, qa)
    assert (f.common, f.unit_share, f.golden_share, f.shared) == (4, 0.5, 4 / 7, ("5 business days",))
    assert align(unit, qa)[0] == "aligned"  # a shared fact and max(0.5, 0.57) >= FACT_OVERLAP (0.5)
    # another number of the same unit, nothing shared: not aligned; nothing in common: not aligned
    assert align("Manual reviews are answered within 2 business days.", qa)[0] == "not_aligned"
    assert align(unit, "How do I reset my password? Use the link we send you.")[0] == "not_aligned"


def test_the_rule_is_the_calibration_of_the_labelled_set():
    calibration = pairs("calibration")
    assert alignment.calibrate(calibration) == alignment.RULE
    s = score(alignment.RULE, calibration)
    assert s.aligned_right == s.aligned > 40  # no wrong alignment on the pairs it was calibrated on
    held = score(alignment.RULE, pairs("heldout"))
    assert held.aligned_right / held.aligned >= 0.9 and held.apart_right / held.apart >= 0.9


def test_a_golden_bound_to_no_model_counts_toward_source_units():
    """Seed 001's QNA sheet binds to no model; aligned directly, its refund question covers policy 8.1."""
    done = run_mbt("coverage", "--model", "models/refund.dt", "--goldens", "models/answers/goldens/card-qna.csv",
                   "--levels", "1", "--no-gate", "--format", "json", cwd=ROOT)
    units = json.loads(done.stdout)["levels"]["units"]
    covered = {u["unit"]: u["goldens"] for u in units["units"] if u["status"] == "covered"}
    assert covered == {"policy:46": ["1"]}
    assert "Refunds are paid back to the original card within 5 business days" in next(
        u["text"] for u in units["units"] if u["unit"] == "policy:46")
    assert units["uncovered"] + units["not_judged"] + units["covered"] == len(units["units"])


def test_level_one_per_unit_and_per_golden_on_a_hand_made_case():
    units = [("d:1", "d.md", 1, "Refunds are paid back to the original card within 5 business days."),
             ("d:2", "d.md", 2, "The card is locked after three wrong PIN attempts.")]
    goldens = [golden("a", "How long does a refund take?", "Refunds are credited within 5 business days."),
               golden("b", "What is the daily transfer limit?", "50 million VND."),
               GoldenText("c", "c.yaml:1", (), ())]  # events and checks only
    out = alignment.align_units(units, goldens)
    assert [(u.unit, u.status, u.goldens) for u in out.units] == [("d:1", "covered", ["a"]), ("d:2", "uncovered", [])]
    assert (out.covered, out.uncovered, out.not_judged) == (1, 1, 0)
    assert [(g.golden, g.units, g.text) for g in out.goldens] == [("a", ["d:1"], True), ("b", [], True),
                                                                 ("c", [], False)]


def test_the_llm_judge_decides_the_pairs_the_rule_leaves(tmp_path):
    from mbt.judges.llm import LLMJudge

    units = [("d:1", "d.md", 1, "Roaming is switched off by default and can be turned on in the app.")]
    goldens = [golden("p", "Will my phone use mobile data abroad?", "Only once you switch roaming on in the app.")]
    assert alignment.align_units(units, goldens).units[0].status == "not_judged"  # the embedded rule: not sure
    with ChatServer(lambda n, body, headers: verdict_reply("pass", "asks about roaming")) as server:
        judge = LLMJudge("m", base_url=server.base_url, cache_path=tmp_path / "c.sqlite3")
        out = alignment.align_units(units, goldens, judge)
        asked = len(server.requests)
    assert asked == 1 and out.units[0].status == "covered"
    assert out.alignments[0].judge == "openai:m" and out.judge == "embedded, then openai:m"


# ------------------------------------------------------------------ level 2


def test_the_seeds_p1_p3_example_reproduces():
    pieces = split(SEED_SENTENCE)
    assert [(p.role, p.condition, p.text) for p in pieces] == [
        ("condition", None, "退款超过七天仍未完成"),
        ("statement", 0, "退款超过七天仍未完成时，商户可以联系客服"),
        ("statement", 0, "退款超过七天仍未完成时，商户不能重复发起退款")]
    # each with its spans: P3 takes its subject from P2's clause
    assert [[SEED_SENTENCE[a:b] for a, b in p.spans] for p in pieces] == [
        ["退款超过七天仍未完成"], ["退款超过七天仍未完成时，", "商户可以联系客服"],
        ["退款超过七天仍未完成时，", "商户", "不能重复发起退款"]]
    # a golden that says what the merchant may do covers P1 and P2, not P3
    unit = [("r:1", "r.md", 1, SEED_SENTENCE)]
    out = proposition_coverage(unit, [golden("1", "退款七天还没完成怎么办？", "退款超过七天仍未完成时，商户可以联系客服。")])
    assert [(p.id, p.status) for p in out.units[0].propositions] == [
        ("P1", "covered"), ("P2", "covered"), ("P3", "uncovered")]
    assert (out.covered, out.uncovered, out.not_judged) == (2, 1, 0)


@pytest.mark.parametrize("text, expected", [
    ("Merchants can contact support, but cannot start a second refund.",
     ["Merchants can contact support", "Merchants cannot start a second refund"]),
    ("Refunds are paid automatically unless the risk score is 50 or more.",
     ["the risk score is 50 or more", "Refunds are paid automatically"]),
    ("Within 14 days of the payment, EU customers may withdraw from the purchase: the refund is paid automatically.",
     ["Within 14 days of the payment", "Within 14 days of the payment, EU customers may withdraw from the purchase",
      "Within 14 days of the payment, the refund is paid automatically"]),
    ("Khi hoàn tiền quá bảy ngày chưa xong, người bán có thể liên hệ hỗ trợ nhưng không được yêu cầu hoàn tiền lại.",
     ["hoàn tiền quá bảy ngày chưa xong", "Khi hoàn tiền quá bảy ngày chưa xong, người bán có thể liên hệ hỗ trợ",
      "Khi hoàn tiền quá bảy ngày chưa xong, người bán không được yêu cầu hoàn tiền lại"]),
    ("跨行转账每笔收取2元手续费，本行转账免费。", ["跨行转账每笔收取2元手续费", "本行转账免费"]),
    # not split where it is not reliable: enumerations, a scope before a colon, a Vietnamese bare comma
    ("Accounts are standard, premium or business accounts.", ["Accounts are standard, premium or business accounts"]),
    ("4.1 Standard accounts: requests within 30 days of the payment are refunded automatically.",
     ["Standard accounts: requests within 30 days of the payment are refunded automatically"]),
    ("地区、账户类型和风险等级共同决定退款资格。", ["地区、账户类型和风险等级共同决定退款资格"]),
])
def test_compound_sentences_split_only_where_reliable(text, expected):
    assert [p.text for p in split(text)] == expected


def test_the_reviewed_file_is_read_before_the_rules_and_a_stale_entry_is_said(tmp_path):
    out = tmp_path / "props.yaml"
    written = run_mbt("propositions", "--model", "docs/examples/levels/refund-lifecycle.fsm", "-o", out, cwd=ROOT)
    assert written.returncode == 0 and "7 proposition(s) of 5 unit(s)" in written.stderr
    data = yaml.safe_load(out.read_text(encoding="utf-8"))
    first = data["units"][0]
    assert first["unit"] == "rules:3" and [p["id"] for p in first["propositions"]] == ["P1", "P2", "P3"]
    # a reviewer merges P2 and P3 into one proposition and marks unit 2's text as changed upstream
    first["propositions"] = [{"id": "P1", "text": "退款超过七天仍未完成时，商户可以联系客服，但不能重复发起退款", "role": "statement"}]
    data["units"][1]["text"] = "2. 退款金额不能超过已支付金额的一半。"
    out.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    again = run_mbt("propositions", "--model", "docs/examples/levels/refund-lifecycle.fsm", "-o", out, cwd=ROOT)
    assert "(4 entries kept unchanged)" in again.stderr  # the edited entry is kept; the stale one split again
    out.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    done = run_mbt("coverage", "--model", "docs/examples/levels/refund-lifecycle.fsm", "--goldens",
                   "docs/examples/levels/goldens/", "--levels", "2", "--propositions", out, "--no-gate", "--format",
                   "json", cwd=ROOT)
    props = json.loads(done.stdout)["levels"]["propositions"]
    assert props["stale"] == ["rules:4"]
    first_unit = props["units"][0]
    assert first_unit["source"] == str(out) and len(first_unit["propositions"]) == 1
    assert props["units"][1]["source"] == "rules-1"


def test_a_malformed_propositions_file_is_a_located_error(tmp_path):
    bad = tmp_path / "p.yaml"
    bad.write_text("units:\n  - unit: a\n    text: x\n    propositions:\n      - {id: P1, role: maybe, text: y}\n",
                   encoding="utf-8")
    with pytest.raises(LocatedError) as err:
        read_file(str(bad))
    problem = err.value.problems[0]
    assert (problem.line, "`role` is condition, exception or statement" in problem.message) == (5, True)
    done = run_mbt("coverage", "--model", "docs/examples/levels/refund-lifecycle.fsm", "--levels", "2",
                   "--propositions", bad, "--no-gate", cwd=ROOT)
    assert done.returncode == 2 and "role" in done.stderr and "Traceback" not in done.stderr


def test_the_llm_extractor_writes_the_file_and_its_entries_are_its_cache(tmp_path, monkeypatch):
    reply = {"propositions": [
        {"text": "退款超过七天仍未完成", "role": "condition", "condition": None, "quotes": ["退款超过七天仍未完成"]},
        {"text": "该状态下商户可以联系客服", "role": "statement", "condition": 0, "quotes": ["商户可以联系客服"]},
        {"text": "该状态下商户不能重复发起退款", "role": "statement", "condition": 0, "quotes": ["不能重复发起退款"]}]}
    out = tmp_path / "props.yaml"
    source = tmp_path / "rules.md"
    source.write_text(f"{SEED_SENTENCE}\n", encoding="utf-8")
    with ChatServer(lambda n, body, headers: completion(json.dumps(reply, ensure_ascii=False))) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        first = run_mbt("propositions", "--source", source, "--extractor", "openai:m", "-o", out, cwd=tmp_path)
        asked = len(server.requests)
        second = run_mbt("propositions", "--source", source, "--extractor", "openai:m", "-o", out, cwd=tmp_path)
        asked_again = len(server.requests) - asked
    assert first.returncode == 0, first.stderr
    assert asked == 1 and asked_again == 0 and "(1 entries kept unchanged)" in second.stderr
    entry = yaml.safe_load(out.read_text(encoding="utf-8"))["units"][0]
    assert entry["extractor"] == "openai:m (extract-1)"
    assert [(p["text"], p.get("condition"), p["spans"]) for p in entry["propositions"]] == [
        ("退款超过七天仍未完成", None, [[0, 10]]), ("该状态下商户可以联系客服", "P1", [[12, 20]]),
        ("该状态下商户不能重复发起退款", "P1", [[22, 30]])]


# ------------------------------------------------------------------ level 0


def test_the_embedding_against_a_hand_computed_case():
    # "ab" padded " ab ": 3-grams " ab", "ab " and the 4-gram " ab ", each weight 1: the vector is 1/sqrt(3) each.
    # "abc" padded " abc ": " ab", "abc", "bc ", " abc", "abc ": 1/sqrt(5) each. In common: " ab".
    assert embed("ab") == pytest.approx({" ab": 3 ** -0.5, "ab ": 3 ** -0.5, " ab ": 3 ** -0.5})
    assert cosine(embed("ab"), embed("abc")) == pytest.approx(1 / math.sqrt(15))
    assert embedding.distance(embed("ab"), embed("ab")) == pytest.approx(0.0)


def test_neighbourhood_clusters_and_blank_regions_on_a_hand_made_case():
    units = [("d:1", "d", 1, "ab"), ("d:2", "d", 2, "ab cd"), ("d:3", "d", 3, "xyz uvw"), ("d:4", "d", 4, "xyz")]
    goldens = [golden("g", "ab", "")]
    out = embedding_coverage(units, goldens, tau=0.5)
    # r_i: d:1 0 (the same text); d:2 1 - cos("ab", "ab cd") = 1 - (3 * 1/3) / sqrt(6)... computed below by hand
    r2 = 1 - (3 * (3 ** -0.5) * (6 ** -0.5))  # "ab cd": six n-grams of weight 1, three of them "ab"'s
    assert [u.distance for u in out.units] == [0.0, round(r2, 3), 1.0, 1.0]
    assert [u.within for u in out.units] == [True, True, False, False]  # r2 = 0.293 <= 0.5
    assert (out.covered, out.total) == (2, 4) and out.blank == ["d:3", "d:4"]
    # K = round(sqrt(4 / 2)) = 1... at least 1: one cluster holding every unit and the golden
    assert len(out.clusters) == 1 and out.clusters[0].unit_share == 1.0 and out.clusters[0].golden_share == 1.0
    assert out.clusters[0].coverage == 0.5  # Ĉ_{k,τ}: 2 of its 4 units within τ
    assert "not business equivalence" in out.caveat


def test_kmeans_is_deterministic_and_finds_two_obvious_groups():
    vectors = [embed(t) for t in ("refund card", "refund cards", "password reset", "password resets")]
    assert kmeans(vectors, 2) == [0, 0, 1, 1] == kmeans(vectors, 2)


def test_tau_is_the_calibration_of_the_labelled_set():
    assert embedding.calibrate_tau(pairs("calibration")) == embedding.TAU
    within, right, _ = embedding.precision_recall(pairs("calibration"), embedding.TAU)
    assert right / within >= embedding.TARGET_PRECISION


# ------------------------------------------------------------------ the worked example


def example_text() -> str:
    done = run_mbt("coverage", *EXAMPLE_ARGS, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout[done.stdout.index("Levels of coverage"):]


def doc_block(command: str) -> str:
    """The lines docs/levels.md shows under `$ COMMAND`, up to the end of its code block."""
    doc = (ROOT / "docs" / "levels.md").read_text(encoding="utf-8")
    block = doc[doc.index(f"$ {command}\n"):]
    return block[block.index("\n") + 1:block.index("\n```")] + "\n"


def test_docs_levels_shows_what_the_example_prints():
    block = doc_block("mbt coverage " + " ".join(EXAMPLE_ARGS))
    assert "..." not in block
    assert block == example_text()


def test_docs_levels_shows_what_a_run_without_levels_prints():
    args = ["--model", "models/refund.dt", "--goldens", "models/goldens/refund/", "--no-gate"]
    done = run_mbt("coverage", *args, cwd=ROOT)
    assert doc_block("mbt coverage " + " ".join(args)) == done.stdout[done.stdout.index("Levels of coverage"):]


def test_docs_levels_shows_the_calibrations_the_bench_prints():
    from tests.bench.bench_levels import report_lines

    doc = (ROOT / "docs" / "levels.md").read_text(encoding="utf-8")
    assert "```text\n" + "\n".join(report_lines()) + "\n```" in doc


def test_the_example_prints_all_five_levels_measured():
    text = example_text()
    for n in range(5):
        assert re.search(rf"^  level {n}  [a-z ]+$", text, re.M), f"level {n} is not measured"
    assert "P3 [if P1] 退款超过七天仍未完成时，商户不能重复发起退款  — not covered" in text


def test_the_level_one_to_two_inputs_are_opt_in_and_cheap_otherwise():
    from mbt import api

    run = api.coverage_run(["docs/examples/levels/refund-lifecycle.fsm"], ["docs/examples/levels/goldens/"],
                           use_gate=False)
    assert run.report.sources is None  # no document read
    levels = run.report.levels
    assert levels is not None and levels.units is None and levels.embedding is None and levels.propositions is None


@pytest.mark.slow
def test_the_levels_page_in_headless_chromium_with_no_serious_axe_violation(tmp_path):
    from tests.test_html_report import axe_audit, browse, console_errors, serious

    site = tmp_path / "site"
    done = run_mbt("coverage", *EXAMPLE_ARGS, "--format", f"html:{site}", cwd=ROOT)
    assert done.returncode == 0, done.stderr
    page = browse((site / "levels.html").as_uri(), tmp_path / "profile", "--dump-dom")
    assert not console_errors(page.stderr)
    for text in ("Levels of coverage", "Blank regions (3)", "退款超过七天仍未完成时，商户不能重复发起退款", "representativeness"):
        assert text in page.stdout
    assert serious(axe_audit(site, tmp_path / "axe-profile")) == {}
