"""The `transitions` reference machine against hand-computed runs of a small model."""

from __future__ import annotations

import logging

import pytest
from transitions import Machine

from mbt.model.expr import Not
from mbt.parsing.loader import load_file
from mbt.reference import ReferenceMachine

# Every expectation below was worked out by hand from this text and the DSL's rules: the first transition (in
# declaration order) whose guard holds fires, actions run in order, a refused event changes nothing.
ORDERS = """
fsm orders {
  var count: int[-3..5] = 0
  var note: string? = none
  var level: enum{LOW, HIGH}  # starts at its first value, LOW
  var limit: int[0..9]? = none
  var flag: bool = false
  state idle initial
  state busy
  state done final
  event start(n: int[0..5], tag: string?)
  event bump(by: int[-2..2])
  event pick(lvl: enum{LOW, HIGH})
  event probe
  event cancel
  event finish
  event unused

  # for n >= 3 both of the first two guards hold: the first declared wins
  idle -> busy on start(k, t) [k >= 3] / count := k, note := t
  idle -> done on start(k) [k >= 1] / count := k - 1
  idle -> idle on start [n == 0] / flag := true

  busy -> busy on bump(d) [count + d <= 5 and count + d >= -3] / count := count + d
  busy -> busy on pick(l) [l == HIGH and level == LOW] / level := l
  busy -> done on pick(l) [l in {LOW, HIGH}] / call close(count = count, level = l, tag = "picked")
  busy -> busy on probe [limit < 3] / flag := true
  busy -> busy on probe [limit == none] / limit := 2
  busy -> idle on cancel [note != none]
    / discard note, note := "again", call notify(old = discarded.note, now = note, level = level)
  busy -> done on finish / call close(count = count, level = level, tag = "bye")
}
"""


@pytest.fixture(scope="module")
def orders(tmp_path_factory):
    path = tmp_path_factory.mktemp("ref") / "orders.fsm"
    path.write_text(ORDERS, encoding="utf-8")
    return load_file(str(path)).models[0]


@pytest.fixture
def rm(orders):
    return ReferenceMachine(orders)


def test_initial_configuration(rm):
    assert rm.state == "idle"
    assert rm.variables == {"count": 0, "note": None, "level": "LOW", "limit": None, "flag": False}
    assert rm.discarded == {"note": None}
    assert rm.tool_calls == []


@pytest.mark.parametrize("n, state, count, flag", [
    (5, "busy", 5, False),  # guards 1 and 2 hold: the first declared fires
    (3, "busy", 3, False),
    (2, "done", 1, False),  # only guard 2 holds
    (1, "done", 0, False),
    (0, "idle", 0, True),  # only the third (params by their declared name `n`) holds
])
def test_first_enabled_transition_in_declaration_order_wins(rm, n, state, count, flag):
    assert rm.send("start", {"n": n, "tag": "t"}) is True
    assert (rm.state, rm.variables["count"], rm.variables["flag"]) == (state, count, flag)


def test_reversed_declaration_order_changes_the_winner(orders):
    # The same model with the first two transitions swapped: now `[k >= 1]` is tried first and wins for n = 4.
    swapped = orders.model_copy(deep=True)
    swapped.transitions[0], swapped.transitions[1] = swapped.transitions[1], swapped.transitions[0]
    rm = ReferenceMachine(swapped)
    assert rm.send("start", {"n": 4}) is True
    assert (rm.state, rm.variables["count"]) == ("done", 3)
    assert rm.last_transition == "idle.start->done"


def test_transitions_library_tries_same_trigger_transitions_in_order_added():
    # The property the reference machine relies on, checked on a bare `transitions` machine.
    class Thing:
        pass

    thing = Thing()
    machine = Machine(model=thing, states=["a", "b", "c", "d"], initial="a", auto_transitions=False,
                      ignore_invalid_triggers=True)
    seen = []
    machine.add_transition("go", "a", "b", conditions=lambda: seen.append("b") or True)
    machine.add_transition("go", "a", "c", conditions=lambda: seen.append("c") or True)
    assert thing.trigger("go") is True
    assert thing.state == "b" and seen == ["b"]  # the second condition was never even evaluated
    machine.set_state("a", model=thing)
    machine.add_transition("stop", "a", "d", conditions=lambda: False)
    assert thing.trigger("stop") is False and thing.state == "a"  # every condition fails: False, no move
    assert thing.trigger("go") is True and thing.trigger("go") is False  # no `go` from b: ignored, False


def test_event_without_transition_in_state_is_refused(rm):
    before = dict(rm.variables)
    assert rm.send("bump", {"by": 1}) is False
    assert rm.send("unused") is False
    assert rm.state == "idle" and rm.variables == before and rm.last_transition is None


def test_int_arithmetic_and_refusal_when_every_guard_fails(rm):
    rm.send("start", {"n": 4})
    steps = []
    for by in (1, 1, -2, -2, -2, -2, -2):
        fired = rm.send("bump", {"by": by})
        steps.append((fired, rm.variables["count"]))
    # 4+1=5; 5+1=6 > 5 refused; 5-2=3; 1; -1; -3; -3-2=-5 < -3 refused
    assert steps == [(True, 5), (False, 5), (True, 3), (True, 1), (True, -1), (True, -3), (False, -3)]
    assert rm.state == "busy"


def test_enum_params_and_guards(rm):
    rm.send("start", {"n": 3})
    assert rm.send("pick", {"lvl": "HIGH"}) is True  # HIGH and level == LOW: first branch
    assert (rm.state, rm.variables["level"]) == ("busy", "HIGH")
    assert rm.tool_calls == []
    assert rm.send("pick", {"lvl": "HIGH"}) is True  # level is HIGH now: the `in {LOW, HIGH}` branch
    assert rm.state == "done"
    assert rm.tool_calls == [("close", {"count": 3, "level": "HIGH", "tag": "picked"})]


def test_optional_values_none(rm):
    rm.send("start", {"n": 3})  # `tag` omitted: an optional parameter arrives as none
    assert rm.variables["note"] is None
    assert rm.send("cancel") is False  # [note != none] fails
    # `limit < 3` with limit = none is false (an unset optional never satisfies an ordering), so the
    # `limit == none` branch fires; afterwards limit = 2 and the first branch fires.
    assert rm.send("probe") is True and rm.variables["limit"] == 2 and rm.variables["flag"] is False
    assert rm.send("probe") is True and rm.variables["flag"] is True and rm.variables["limit"] == 2


def test_discard_and_tool_call_see_earlier_actions(rm):
    rm.send("start", {"n": 3, "tag": "first"})
    assert rm.send("cancel") is True
    assert rm.state == "idle"
    assert rm.discarded == {"note": "first"}
    # discard note, then note := "again": the call made afterwards sees both writes.
    assert rm.variables["note"] == "again"
    assert rm.last_calls == [("notify", {"old": "first", "now": "again", "level": "LOW"})]
    assert rm.last_transition == "busy.cancel->idle"


def test_tool_calls_accumulate_and_last_calls_is_per_event(rm):
    rm.send("start", {"n": 3, "tag": "x"})
    rm.send("cancel")
    rm.send("start", {"n": 4})
    assert rm.last_calls == []
    rm.send("finish")
    assert rm.tool_calls == [("notify", {"old": "x", "now": "again", "level": "LOW"}),
                             ("close", {"count": 4, "level": "LOW", "tag": "bye"})]
    assert rm.last_calls == [("close", {"count": 4, "level": "LOW", "tag": "bye"})]
    assert rm.state == "done" and rm.send("start", {"n": 3}) is False  # final state: nothing leaves it


def test_reset_to_a_given_configuration(rm):
    rm.send("start", {"n": 5})
    rm.reset(state="busy", variables={"count": -3, "note": "n"}, discarded={"note": "old"})
    assert rm.state == "busy" and rm.tool_calls == [] and rm.last_transition is None
    assert rm.variables == {"count": -3, "note": "n", "level": "LOW", "limit": None, "flag": False}
    assert rm.send("bump", {"by": -1}) is False
    rm.reset()
    assert rm.state == "idle" and rm.variables["count"] == 0 and rm.discarded == {"note": None}


@pytest.mark.parametrize("kwargs, message", [
    ({"state": "nowhere"}, "unknown state `nowhere`"),
    ({"variables": {"size": 1}}, "unknown variable `size`"),
    ({"variables": {"count": 6}}, "`count: 6` is not a value of int[-3..5]"),
    ({"variables": {"level": "MID"}}, "is not a value of enum{LOW, HIGH}"),
    ({"discarded": {"count": 1}}, "never discards `count`"),
])
def test_reset_rejects_configurations_outside_the_model(rm, kwargs, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]").replace("{", r"\{")
                       .replace("}", r"\}")):
        rm.reset(**kwargs)


@pytest.mark.parametrize("event, args, message", [
    ("launch", {}, "unknown event `launch`"),
    ("start", {}, "needs parameter `n`"),
    ("start", {"n": 9}, "`n: 9` is not a value"),
    ("start", {"n": 1, "colour": "red"}, "has no parameter `colour`"),
    ("pick", {"lvl": "MAX"}, "`lvl: 'MAX'` is not a value"),
])
def test_send_rejects_arguments_outside_the_event_signature(rm, event, args, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[")):
        rm.send(event, args)
    assert rm.state == "idle"


def test_mutants_build_like_any_model(orders):
    # A guard negated: `start` with n = 4 no longer takes the first branch but the second.
    negated = orders.model_copy(deep=True)
    negated.transitions[0].guard = Not(negated.transitions[0].guard)
    rm = ReferenceMachine(negated)
    rm.send("start", {"n": 4})
    assert (rm.state, rm.variables["count"]) == ("done", 3)
    # A transition retargeted: `finish` now returns to idle instead of done.
    retargeted = orders.model_copy(deep=True)
    retargeted.transitions[-1].target = "idle"
    rm = ReferenceMachine(retargeted)
    rm.reset(state="busy")
    assert rm.send("finish") is True and rm.state == "idle"
    # The original is untouched by either copy.
    original = ReferenceMachine(orders)
    original.send("start", {"n": 4})
    assert original.state == "busy"


def test_refusals_are_quiet(rm, caplog):
    # `transitions` logs a warning for every ignored trigger; a refusal is normal behaviour here, not news.
    with caplog.at_level(logging.WARNING):
        assert rm.send("bump", {"by": 1}) is False
        rm.send("start", {"n": 4})
        assert rm.send("bump", {"by": 2}) is False
    assert caplog.records == []
