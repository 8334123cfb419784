"""Differential test: the replay engine and the `transitions` reference machine must compute the same runs."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from mbt.api import applies
from mbt.elements.fsm import enumerate_fsm
from mbt.engine.fsm import run_events
from mbt.goldens.binding import Binder
from mbt.goldens.cases import GoldenCase
from mbt.goldens.loader import expand, load_goldens
from mbt.model.fsm import FsmModel
from mbt.model.types import ValueType
from mbt.parsing.loader import load_file
from mbt.reference import ReferenceMachine

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data" / "reference"
EXAMPLE = ROOT / "models" / "recovery.fsm"
EXAMPLE_GOLDENS = ROOT / "models" / "goldens"

# (model, golden files): the shipped example and its goldens, plus a realistic fixture of our own.
GOLDEN_SETS = [(EXAMPLE, path) for path in expand([str(EXAMPLE_GOLDENS)])] + [
    (DATA / "pr.fsm", DATA / "pr-goldens.jsonl"),
]
RANDOM_MODELS = [EXAMPLE, DATA / "pr.fsm", DATA / "counters.fsm"]
Event = tuple[str, dict]


def load_model(path: Path) -> FsmModel:
    return load_file(str(path)).models[0]


def _shown(values: dict) -> str:
    # repr, sorted by name: True and 1 (or 0 and False) must not pass for the same value.
    return repr(sorted(values.items(), key=lambda item: item[0]))


def differences(model: FsmModel, events: list[Event], state: str | None = None,
                variables: dict | None = None, rm: ReferenceMachine | None = None) -> list[str]:
    """Runs `events` on both engines from the same start; one message per step where they disagree."""
    snapshots = run_events(model, enumerate_fsm(model), events, state, variables)
    rm = rm or ReferenceMachine(model)
    rm.reset(state, variables)
    if len(snapshots) != len(events):
        return [f"replay returned {len(snapshots)} snapshots for {len(events)} events"]
    problems = []
    for number, ((event, args), snap) in enumerate(zip(events, snapshots), start=1):
        fired = rm.send(event, args)
        reference = (rm.state, _shown(rm.variables), _shown(rm.discarded), rm.last_transition,
                     repr([(c.tool, c.args) for c in rm.last_calls]))
        replay = (snap.state, _shown(snap.variables), _shown(snap.discarded), snap.transition,
                  repr([(c.tool, c.args) for c in snap.calls]))
        if reference != replay or fired != (snap.transition is not None):
            labels = ("state", "variables", "discarded", "transition", "tool calls")
            diff = [f"{label}: reference {r} / replay {p}" for label, r, p in zip(labels, reference, replay) if r != p]
            problems.append(f"step {number} `{event}` {args}: " + ("; ".join(diff) or f"fired {fired}"))
    return problems


# ------------------------------------------------------------------ the goldens, bound as replay binds them


def golden_run(model: FsmModel, case: GoldenCase) -> tuple[str | None, dict, list[Event]] | str:
    """The start and the events of a golden's bound turns (up to the first unbound one), or why there are none."""
    state = case.precondition.get("state")
    if state is not None and state not in model.states:
        return f"precondition names unknown state `{state}`"
    variables = {k: v for k, v in case.precondition.items() if k in model.variables}
    for name, value in variables.items():
        if not model.variables[name].type.admits(value):
            return f"precondition `{name}: {value!r}` is not a value of the model"
    binder = Binder(model)
    events: list[Event] = []
    for number, turn in enumerate(case.turns, start=1):
        bound = binder.bind(turn, case.final.intent if number == 1 else None)
        if isinstance(bound, str):
            break
        params = {p.name: p.type for p in model.events[bound.event].params}
        args = dict(bound.args)
        usable = all(name in params and params[name].admits(value) for name, value in args.items())
        if not usable or any(name not in args and not t.optional for name, t in params.items()):
            break  # replay reports the turn as unbound and stops there
        events.append((bound.event, args))
    return (state, variables, events) if events else "no turn binds to an event"


@pytest.mark.parametrize("model_path, golden_path", GOLDEN_SETS,
                         ids=[f"{m.name}:{g.name}" for m, g in GOLDEN_SETS])
def test_goldens_replay_identically_on_both_engines(model_path, golden_path):
    model = load_model(model_path)
    # models/goldens/ also holds the other examples' cases (other contracts and models): only this model's count.
    cases = [c for c in load_goldens([str(golden_path)]).cases if applies(model, c)]
    problems, compared = [], 0
    for case in cases:
        run = golden_run(model, case)
        if isinstance(run, str):
            continue
        state, variables, events = run
        compared += 1
        problems.extend(f"{case.id} {line}" for line in differences(model, events, state, variables))
    assert not problems, "\n".join(problems)
    # Every file of usable cases must have been compared (a file of only broken lines has none to compare).
    assert compared or not cases, f"no case of {golden_path.name} binds to an event of {model.name}"


def test_example_goldens_are_actually_compared():
    # Guards against the test above passing vacuously: most example goldens bind and run on the example model.
    model = load_model(EXAMPLE)
    cases = [c for c in load_goldens([str(EXAMPLE_GOLDENS)]).cases if applies(model, c)]
    runs = [golden_run(model, case) for case in cases]
    usable = [r for r in runs if not isinstance(r, str)]
    assert len(usable) >= len(cases) // 2 and sum(len(r[2]) for r in usable) >= 10


# ------------------------------------------------------------------ random event sequences

STRINGS = ["li@example.com", "lin@example.com", "a@b.co", ""]  # few values, so equality guards go both ways


def random_value(rng: random.Random, vtype: ValueType):
    if vtype.optional and rng.random() < 0.25:
        return None
    if vtype.kind == "bool":
        return rng.random() < 0.5
    if vtype.kind == "int":
        return rng.randint(vtype.lo, vtype.hi)
    if vtype.kind == "enum":
        return rng.choice(vtype.values)
    return rng.choice(STRINGS)


def random_args(rng: random.Random, model: FsmModel, event: str) -> dict:
    args = {}
    for param in model.events[event].params:
        if param.type.optional and rng.random() < 0.15:
            continue  # omitted: both engines must treat it as none
        args[param.name] = random_value(rng, param.type)
    return args


def random_start(rng: random.Random, model: FsmModel) -> tuple[str | None, dict]:
    """Half the runs start from the initial configuration, half from a random non-final state and variables."""
    if rng.random() < 0.5:
        return None, {}
    states = [s.name for s in model.states.values() if not s.final]
    variables = {name: random_value(rng, v.type) for name, v in model.variables.items() if rng.random() < 0.7}
    return rng.choice(states), variables


@pytest.mark.parametrize("model_path", RANDOM_MODELS, ids=[p.name for p in RANDOM_MODELS])
def test_random_event_sequences_agree(model_path):
    model = load_model(model_path)
    rng = random.Random(f"mbt-differential-{model_path.name}")
    rm = ReferenceMachine(model)
    walker = ReferenceMachine(model)  # picks events that tend to be enabled, so the runs go deep
    fired = refused = 0
    taken: set[str] = set()
    for sequence in range(500):
        state, variables = random_start(rng, model)
        walker.reset(state, variables)
        events: list[Event] = []
        for _ in range(rng.randint(1, 12)):
            here = sorted({t.event for t in model.transitions if t.source == walker.state})
            event = rng.choice(here) if here and rng.random() < 0.8 else rng.choice(sorted(model.events))
            args = random_args(rng, model, event)
            events.append((event, args))
            if walker.send(event, args):
                fired += 1
                taken.add(walker.last_transition)
            else:
                refused += 1
        problems = differences(model, events, state, variables, rm)
        assert not problems, f"sequence {sequence} from {state or 'the initial state'} {variables}: " \
                             f"{events}\n" + "\n".join(problems)
    # The walk must have exercised both outcomes and most of the model, or the agreement means little.
    assert fired > 1000 and refused > 100
    assert len(taken) >= 0.8 * len(model.transitions), sorted({t.key for t in model.transitions} - taken)


def test_differences_detects_a_disagreement():
    # The comparison itself can fail: a mutant reference machine (one guard negated) disagrees with replay.
    from mbt.model.expr import Not

    model = load_model(DATA / "pr.fsm")
    mutant = model.model_copy(deep=True)
    index = next(i for i, t in enumerate(mutant.transitions) if t.guard is not None and t.event == "confirm")
    mutant.transitions[index].guard = Not(mutant.transitions[index].guard)
    events = [("request_reset", {}), ("provide_email", {"email": "a@b.co"}), ("confirm", {})]
    assert differences(model, events) == []
    problems = differences(model, events, rm=ReferenceMachine(mutant))
    assert len(problems) == 1 and problems[0].startswith("step 3 `confirm`") and "state: reference confirming" \
        in problems[0]
