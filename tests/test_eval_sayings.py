"""Answers and the model meet in `mbt eval --model` (issue 34, item 6): each state machine's `say` forbids and claims
verified by judged answers (naming the judge, the verdict and the case), exercised only, or not reached; and each
golden turn's `must_have` / `must_not` phrase judged by the same judges, with the elements it names."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from tests.chat_server import ChatServer, verdict_reply
from tests.cli_runner import run_mbt
from tests.test_sayings_replay import CARD

ROOT = Path(__file__).resolve().parents[1]


def transcript(path: Path, exchanges: list[tuple[str, str]]) -> None:
    messages = [m for q, a in exchanges for m in ({"role": "user", "content": q}, {"role": "assistant", "content": a})]
    path.write_text(json.dumps({"precondition": {}, "messages": messages}, ensure_ascii=False), encoding="utf-8")


def card_eval(tmp_path: Path, *extra: str, env=None):
    """Two cases on the card model: one buys and pays (and is told it is paid), one is asked for its PIN code."""
    (tmp_path / "card.fsm").write_text(CARD, encoding="utf-8")
    goldens = tmp_path / "card.jsonl"
    goldens.write_text(
        json.dumps({"id": "1", "turns": [{"user": "buy", "expected_answer": "One moment."},
                                         {"user": "pay", "must_have": ["it is paid"]}]}) + "\n"
        + json.dumps({"id": "2", "turns": [{"user": "buy", "must_not": ["ＰＩＮ code"]}]}) + "\n", encoding="utf-8")
    runs = tmp_path / "runs"
    runs.mkdir()
    transcript(runs / "1.json", [("buy", "One moment."), ("pay", "Thanks, it IS PAID.")])
    transcript(runs / "2.json", [("buy", "Please give me your PIN code.")])
    done = run_mbt("eval", "--goldens", goldens, "--runs", runs, "--model", tmp_path / "card.fsm", "--format", "json",
                   *extra, env=env)
    return done, json.loads(done.stdout)


def test_elements_are_verified_by_judged_answers_exercised_or_not_reached(tmp_path):
    done, report = card_eval(tmp_path)
    (card,) = report["sayings"]
    elements = {e["id"]: e for e in card["elements"]}
    assert list(elements) == ["forbidden:ask_pin", "forbidden:unlock_card", "forbidden:reveal_number", "claim:done"]
    pin = elements["forbidden:ask_pin"]
    assert (pin["status"], pin["verdict"], pin["reached_by"]) == ("verified", "fail", ["1", "2"])
    # case 1's texts: the embedded judge leaves the description open, the phrases (none said) decide
    clean, said = pin["judged"]
    assert (clean["case"], clean["verdict"], clean["judge"]) == ("1", "pass", "rules")
    assert "left its description undecided" in clean["reason"]
    assert (said["case"], said["verdict"], said["judge"]) == ("2", "fail", "rules") and "pin code" in said["reason"]
    done_claim = elements["claim:done"]
    assert (done_claim["status"], done_claim["verdict"], done_claim["reached_by"]) == ("verified", "pass", ["1"])
    assert [(a["case"], a["judge"]) for a in done_claim["judged"]] == [("1", "rules")]
    # reached (paying, on pay): "Thanks, it IS PAID." says none of its phrases, which decide
    unlock = elements["forbidden:unlock_card"]
    assert (unlock["status"], unlock["verdict"], unlock["reached_by"]) == ("verified", "pass", ["1"])
    assert [(a["case"], a["judge"]) for a in unlock["judged"]] == [("1", "rules")]
    # a forbid with only a description the embedded judge cannot decide: reached, verified by no answer
    reveal = elements["forbidden:reveal_number"]
    assert (reveal["status"], reveal["verdict"], reveal["judged"]) == ("exercised", None, [])
    phrases = [(p["case"], p["turn"], p["key"], p["names"], p["verdict"], p["judge"]) for p in card["phrases"]]
    assert phrases == [("1", 2, "must_have", ["claim:done"], "pass", "rules"),
                       ("2", 1, "must_not", ["forbidden:ask_pin"], "fail", "rules")]
    schema = json.loads((ROOT / "docs" / "schemas" / "eval.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(report, schema)


def test_an_element_no_run_reaches_is_not_reached(tmp_path):
    (tmp_path / "card.fsm").write_text(CARD, encoding="utf-8")
    (tmp_path / "g.jsonl").write_text(json.dumps({"id": "1", "turns": [{"user": "buy", "expected_answer": "OK"}]})
                                      + "\n", encoding="utf-8")
    transcript(tmp_path / "1.json", [("buy", "OK")])
    done = run_mbt("eval", "--goldens", tmp_path / "g.jsonl", "--runs", tmp_path / "1.json", "--model",
                   tmp_path / "card.fsm", "--format", "json")
    statuses = {e["id"]: e["status"] for e in json.loads(done.stdout)["sayings"][0]["elements"]}
    assert statuses == {"forbidden:ask_pin": "verified", "forbidden:unlock_card": "not_reached",
                        "forbidden:reveal_number": "exercised", "claim:done": "not_reached"}


def test_the_text_report_lists_each_element_with_its_judge(tmp_path):
    card_eval(tmp_path)
    done = run_mbt("eval", "--goldens", tmp_path / "card.jsonl", "--runs", tmp_path / "runs", "--model",
                   tmp_path / "card.fsm")
    out = done.stdout
    assert "Say and claim elements of card (3 verified by a judged answer, 1 exercised only, 0 not reached):" in out
    assert "  forbidden:ask_pin: verified by a judged answer, fail" in out
    assert "    fail [rules] case 2 (" in out
    assert "  forbidden:unlock_card: verified by a judged answer, pass" in out
    assert "  forbidden:reveal_number: exercised only, by case(s) 1, 2: no answer on it decided" in out
    assert "    case 1 turn 2 must_have 'it is paid' (names claim:done): pass [rules]" in out


def test_an_llm_judge_decides_descriptions_and_is_named(tmp_path):
    """The LLM judge (a real server on localhost) is asked on the criterion `says` where no phrase decides: it says
    'fail' (not said), so the forbids its answers were judged on are verified, passing, by `openai:judge-model`."""
    with ChatServer(lambda n, body, headers: verdict_reply("fail", "it does not")) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test", "XDG_CACHE_HOME": str(tmp_path)}
        done, report = card_eval(tmp_path, "--judge", "openai:judge-model", env=env)
        asked = [r["body"]["messages"][1]["content"] for r in server.requests]
    elements = {e["id"]: e for e in report["sayings"][0]["elements"]}
    unlock = elements["forbidden:unlock_card"]
    assert (unlock["status"], unlock["verdict"]) == ("verified", "pass")
    assert unlock["judged"][0]["judge"] == "openai:judge-model"
    assert any("Criterion: says" in a and "unlocks the card unasked" in a for a in asked)
    # the run of case 1 now passes on the model: every description was decided
    case1 = next(c for c in report["cases"] if c["id"] == "1")
    assert case1["model"]["verdict"] == "pass", case1["model"]
