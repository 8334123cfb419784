"""`mbt generate` on small refund-and-cancellation models (the shape a newcomer tried): witnesses that keep what the
model compares, stubs valid under the policy that enforces a tool, and the reason given for every element left
without a witness being the real one."""

from __future__ import annotations

import json
from pathlib import Path

from mbt import api
from mbt.generate.witnesses import NoWitness, Witness, WitnessFinder
from mbt.goldens.loader import load_goldens
from mbt.parsing.loader import load_paths, parse_text


def write(folder: Path, name: str, text: str) -> str:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def stubs(out: Path, model: str) -> dict[str, dict]:
    lines = (out / "goldens" / f"{model}.gaps.jsonl").read_text(encoding="utf-8").splitlines()
    return {case["element"]: case for case in map(json.loads, lines)}


def missing(report, model: str) -> dict[str, tuple[str, str]]:
    result = next(m for m in report.models if m.model == model)
    return {m.element: (m.reason, m.message) for m in result.missing}


# ---------------------------------------------------------------- a forbidden call in a model without guards

CARDS = """
fsm cards {
  state idle initial
  state blocked final
  event block
  event ask
  idle -> blocked on block / call block_card(card = 1)
  idle -> idle on ask
  forbid idle on ask effect call block_card
}
"""


def test_a_forbidden_call_no_transition_makes_is_witnessed_by_the_call_absent(tmp_path: Path):
    """`forbid idle on ask effect call block_card`: no transition of `ask` calls the tool, and the model has no guard.
    A golden verifies the forbid with `must_not_call` (coverage rule 3), so generation must find that run too."""
    m = parse_text(CARDS, "cards.fsm").models[0]
    w = WitnessFinder(m).find("forbidden:idle.ask!call:block_card")
    assert isinstance(w, Witness), w
    assert [e for e, _ in w.events] == ["ask"]
    report = api.generate([write(tmp_path, "cards.fsm", CARDS)], [], str(tmp_path / "out"))
    assert "forbidden:idle.ask!call:block_card" not in missing(report, "cards")
    stub = stubs(tmp_path / "out", "cards")["forbidden:idle.ask!call:block_card"]
    assert stub["turns"][-1]["must_not_call"] == ["block_card"]
    model = load_paths([str(tmp_path / "cards.fsm")])[0].models[0]
    coverage = api.measure([model], load_goldens([str(tmp_path / "out" / "goldens" / "cards.gaps.jsonl")]))
    assert "forbidden:idle.ask!call:block_card" not in {r.element.id for r in coverage.models[0].uncovered()}


# ---------------------------------------------------------------- a witness string equal to a variable's default

SIGNED_IN = """
fsm refunds {
  var customer: string = "alice"
  var owner: string? = none
  state idle initial
  state looking_up
  state confirming
  state refunded final
  event ask(who: string)
  event found(o: string)
  event confirm
  bind regex "(?i)refund for (?P<who>[a-z]+[0-9]+)" -> ask
  bind regex "order of (?P<o>[A-Z][0-9]+)" -> found
  bind text "yes" -> confirm
  idle -> looking_up on ask(w) [w == customer] / call lookup(customer = w)
  looking_up -> confirming on found(o) [o == customer] / owner := o
  confirming -> refunded on confirm / call issue_refund(owner = owner)
}
"""


def test_renaming_for_the_bindings_keeps_the_equality_with_a_default(tmp_path: Path):
    """`w == customer` needs `who` to be the default "alice", which the regex (letters then digits) cannot capture:
    renaming it would break the guard. The value is kept (that step's words stay a TODO) and no test is dropped."""
    report = api.generate([write(tmp_path, "refunds.fsm", SIGNED_IN)], [], str(tmp_path / "out"))
    assert missing(report, "refunds") == {}
    written = stubs(tmp_path / "out", "refunds")
    turns = written["transition:confirming.confirm->refunded"]["turns"]
    assert [t["args"] for t in turns[:2]] == [{"who": "alice"}, {"o": "alice"}]
    assert turns[0]["user"].startswith("TODO(mbt):") and turns[2]["user"] == "yes"
    model = load_paths([str(tmp_path / "refunds.fsm")])[0].models[0]
    coverage = api.measure([model], load_goldens([str(tmp_path / "out" / "goldens" / "refunds.gaps.jsonl")]))
    assert coverage.models[0].uncovered() == [] and not coverage.invalid_cases
