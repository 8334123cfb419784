"""Seeded generator of synthetic FSM models and golden-case sets for the benchmark; writes only where it is told.

The generator keeps its own plain-Python semantics of every guard and action it writes, so the golden cases it
derives by random walks carry the true state (computed here, independently of mbt's replay engine), and it knows
which expectations it got wrong on purpose.

    python tests/bench/synth.py [OUT_DIR] [--states N] [--transitions M] [--goldens G] [--seed S]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Env = dict[str, Any]

MODEL_NAME = "bench"
CONTRACT = "bench-v1"

# ---------------------------------------------------------------- vocabulary

# (name, declaration, initial value); the walk's starting configuration is these initial values.
VARIABLES = [
    ("flag", "bool = false", False),
    ("n", "int[0..5] = 0", 0),
    ("level", "int[0..9] = 0", 0),
    ("mode", "enum{a, b, c}", "a"),  # an enum starts at its first value
    ("note", "string? = none", None),
]
# Parameter kinds an event may carry: (name, type text, value sampler).
PARAMS: dict[str, tuple[str, Callable[[random.Random], Any]]] = {
    "k": ("int[0..9]", lambda r: r.randint(0, 9)),
    "code": ("enum{OK, TIMEOUT, DENIED}", lambda r: r.choice(["OK", "TIMEOUT", "DENIED"])),
    "text": ("string", lambda r: r.choice(["", "alpha", "beta", "gamma"])),
    "yes": ("bool", lambda r: r.random() < 0.5),
}
EVENT_COUNT = 50


@dataclass(frozen=True)
class Guard:
    text: str
    holds: Callable[[Env], bool]


@dataclass(frozen=True)
class Action:
    text: str
    apply: Callable[[Env], None]


def _g(text: str, holds: Callable[[Env], bool]) -> Guard:
    return Guard(text, holds)


def _lt(a, b) -> bool:
    # mbt's ordering comparisons never hold when a side is none
    return a is not None and b is not None and a < b


# Partitions: each is a tuple of guards that are mutually exclusive and together exhaustive, so a (source, event)
# group built from one partition checks clean of overlaps. Several transitions share each guard text.
VAR_PARTITIONS: list[tuple[Guard, ...]] = [
    (_g("n < 3", lambda e: e["n"] < 3), _g("n >= 3", lambda e: e["n"] >= 3)),
    (_g("flag", lambda e: e["flag"]), _g("not flag", lambda e: not e["flag"])),
    (_g("mode == a", lambda e: e["mode"] == "a"), _g("mode != a", lambda e: e["mode"] != "a")),
    (_g("note == none", lambda e: e["note"] is None), _g("note != none", lambda e: e["note"] is not None)),
    (_g("mode in {a, b}", lambda e: e["mode"] in ("a", "b")), _g("mode == c", lambda e: e["mode"] == "c")),
    (_g("n >= 2 and flag", lambda e: e["n"] >= 2 and e["flag"]),
     _g("n < 2 or not flag", lambda e: e["n"] < 2 or not e["flag"])),
    (_g("level <= 4", lambda e: e["level"] <= 4), _g("level > 4", lambda e: e["level"] > 4)),
    (_g("n < 2", lambda e: e["n"] < 2), _g("n >= 2 and n < 4", lambda e: 2 <= e["n"] < 4),
     _g("n >= 4", lambda e: e["n"] >= 4)),
]
PARAM_PARTITIONS: dict[str, list[tuple[Guard, ...]]] = {
    "k": [(_g("k < 5", lambda e: e["k"] < 5), _g("k >= 5", lambda e: e["k"] >= 5)),
          (_g("k > level", lambda e: e["k"] > e["level"]), _g("k <= level", lambda e: e["k"] <= e["level"]))],
    "code": [(_g("code == OK", lambda e: e["code"] == "OK"), _g("code != OK", lambda e: e["code"] != "OK")),
             (_g("code == TIMEOUT", lambda e: e["code"] == "TIMEOUT"),
              _g("code in {OK, DENIED}", lambda e: e["code"] in ("OK", "DENIED")))],
    "yes": [(_g("yes", lambda e: e["yes"]), _g("not yes", lambda e: not e["yes"]))],
    "text": [(_g('text == ""', lambda e: e["text"] == ""), _g('text != ""', lambda e: e["text"] != ""))],
}


def _set(name: str, value: Any) -> Callable[[Env], None]:
    def apply(env: Env) -> None:
        env[name] = value
    return apply


def _copy(target: str, source: str) -> Callable[[Env], None]:
    def apply(env: Env) -> None:
        env[target] = env[source]
    return apply


def _incr(env: Env) -> None:
    env["n"] = env["n"] + 1


def _toggle(env: Env) -> None:
    env["flag"] = not env["flag"]


def _discard_note(env: Env) -> None:
    env["discarded.note"] = env["note"]
    env["note"] = None


def _call(tool: str, args: list[tuple[str, str]]) -> Callable[[Env], None]:
    def apply(env: Env) -> None:
        env.setdefault("_calls", []).append((tool, {name: env[src] for name, src in args}))
    return apply


PLAIN_ACTIONS = [
    Action("flag := true", _set("flag", True)),
    Action("flag := false", _set("flag", False)),
    Action("flag := not flag", _toggle),
    Action("n := 0", _set("n", 0)),
    Action("n := 3", _set("n", 3)),
    Action("mode := a", _set("mode", "a")),
    Action("mode := b", _set("mode", "b")),
    Action("mode := c", _set("mode", "c")),
    Action('note := "x"', _set("note", "x")),
    Action("note := none", _set("note", None)),
    Action("discard note", _discard_note),
    Action("level := 0", _set("level", 0)),
]
PARAM_ACTIONS = {
    "k": [Action("level := k", _copy("level", "k"))],
    "text": [Action("note := text", _copy("note", "text"))],
    "yes": [Action("flag := yes", _copy("flag", "yes"))],
}
TOOL_CALLS = [
    Action("call notify(level = level, note = note)", _call("notify", [("level", "level"), ("note", "note")])),
    Action("call audit(mode = mode)", _call("audit", [("mode", "mode")])),
]
SAY_PHRASE = "internal note"  # what the `forbid any on * effect say` matches in a golden's must_not
DELETE_PHRASE = "delete the account"  # and what the forbidden call of the tool `delete_account` matches


# ---------------------------------------------------------------- the model


@dataclass
class Event:
    name: str
    params: list[str]  # parameter names, from PARAMS
    phrase: str | None = None  # `bind text` phrase, for parameterless events only


@dataclass
class Transition:
    source: int
    target: int
    event: str
    guard: Guard | None
    actions: list[Action]


@dataclass
class Forbid:
    source: int | None
    event: str | None
    guard: Guard | None = None
    target: int | None = None
    text: str = ""


@dataclass
class SynthModel:
    """The generated model as data (with executable semantics) and as DSL text."""

    states: int
    finals: set[int]
    events: dict[str, Event]
    transitions: list[Transition]
    forbids: list[Forbid]
    # (state, event) -> transitions in declaration order; the first whose guard holds is taken
    groups: dict[tuple[int, str], list[Transition]] = field(default_factory=dict)
    forbidden: dict[tuple[int, str], Forbid] = field(default_factory=dict)

    def state_name(self, i: int) -> str:
        return f"s{i}"

    def step(self, state: int, event: str, env: Env) -> tuple[int, Transition | None]:
        """mbt's semantics: the first transition of (state, event) whose guard holds; its actions run in order."""
        for t in self.groups.get((state, event), ()):
            if t.guard is None or t.guard.holds(env):
                for a in t.actions:
                    a.apply(env)
                return t.target, t
        return state, None

    def text(self) -> str:
        lines = [f"# Synthetic benchmark model: {self.states} states, {len(self.transitions)} transitions.",
                 f"fsm {MODEL_NAME} {{", '  title "Synthetic benchmark model"', f'  contract "{CONTRACT}"']
        lines += [f"  var {name}: {decl}" for name, decl, _ in VARIABLES]
        for i in range(self.states):
            flags = " initial" if i == 0 else " final" if i in self.finals else ""
            severity = " severity high" if i % 97 == 5 else ""
            lines.append(f"  state {self.state_name(i)}{flags}{severity}")
        for e in self.events.values():
            params = f"({', '.join(f'{p}: {PARAMS[p][0]}' for p in e.params)})" if e.params else ""
            lines.append(f"  event {e.name}{params}")
        for e in self.events.values():
            if e.phrase:
                lines.append(f'  bind text "{e.phrase}" -> {e.name}')
        text_event = next((e for e in self.events.values() if e.params == ["text"]), None)
        if text_event is not None:
            lines.append(f'  bind regex "note: (?P<text>\\\\w+)" -> {text_event.name}')
        for t in self.transitions:
            line = f"  {self.state_name(t.source)} -> {self.state_name(t.target)} on {t.event}"
            if t.guard is not None:
                line += f" [{t.guard.text}]"
            if t.actions:
                line += " / " + ", ".join(a.text for a in t.actions)
            lines.append(line)
        for f in self.forbids:
            lines.append(f"  {f.text}")
        lines.append("}")
        return "\n".join(lines) + "\n"


def generate_model(states: int = 2000, transitions: int = 20000, seed: int = 0) -> SynthModel:
    """A connected model: a spanning tree from the initial state first, then random edges up to `transitions`."""
    if states < 10 or transitions < states:
        raise ValueError("need at least 10 states and at least as many transitions as states")
    rnd = random.Random(seed)
    finals = set(range(states - max(1, states // 400), states))  # a few final states, all leaves
    events: dict[str, Event] = {}
    kinds = list(PARAMS)
    for i in range(EVENT_COUNT):
        params = [kinds[(i // 3) % len(kinds)]] if i % 3 == 1 else []
        events[f"ev{i}"] = Event(f"ev{i}", params, f"please do ev{i} now" if not params and i % 4 == 0 else None)
    model = SynthModel(states, finals, events, [], [])
    used: dict[int, set[str]] = {}
    by_source: dict[int, list[Transition]] = {}
    non_final = [i for i in range(states) if i not in finals]

    def add_group(source: int, target: int, budget: int) -> int:
        """Add one (source, event) group leading (first) to `target`; returns how many transitions it added."""
        free = [name for name in events if name not in used.setdefault(source, set())]
        if not free:
            return 0
        event = events[rnd.choice(free)]
        used[source].add(event.name)
        guards: tuple[Guard | None, ...] = (None,)
        roll = rnd.random()
        if roll < 0.085 and budget >= 2:
            pool = VAR_PARTITIONS + [p for name in event.params for p in PARAM_PARTITIONS.get(name, [])]
            guards = rnd.choice(pool)
            if len(guards) > budget:
                guards = (None,)
        elif roll < 0.1:
            # a lone guarded transition: when its guard fails the event is refused (the "no branch" element)
            guards = (rnd.choice(rnd.choice(VAR_PARTITIONS)),)
        for n, guard in enumerate(guards):
            tgt = target if n == 0 else rnd.randrange(states)
            t = Transition(source, tgt, event.name, guard, _actions(rnd, event, guard))
            model.transitions.append(t)
            by_source.setdefault(source, []).append(t)
        return len(guards)

    # Spanning structure: every state gets an incoming edge from an earlier non-final state.
    count = 0
    for child in range(1, states):
        parents = non_final if child >= len(non_final) else non_final[:child]
        count += add_group(rnd.choice(parents), child, transitions - count) or 0
    # Every non-final state needs a way out (else it is a dead end); the tree gives one to all but its leaves.
    for source in non_final:
        if source not in by_source and count < transitions:
            count += add_group(source, rnd.randrange(states), transitions - count)
    while count < transitions:
        count += add_group(rnd.choice(non_final), rnd.randrange(states), transitions - count)
    model.transitions.sort(key=lambda t: t.source)  # grouped by source state, reads better; order within kept
    for t in model.transitions:
        model.groups.setdefault((t.source, t.event), []).append(t)
    _add_forbids(model, rnd, used, non_final)
    return model


def _actions(rnd: random.Random, event: Event, guard: Guard | None) -> list[Action]:
    if rnd.random() < 0.5:
        return []
    pool = list(PLAIN_ACTIONS) + [a for p in event.params for a in PARAM_ACTIONS.get(p, [])]
    chosen = rnd.sample(pool, rnd.randint(1, 2))
    if guard is not None and guard.text == "n < 3" and rnd.random() < 0.6:
        chosen.append(Action("n := n + 1", _incr))  # stays in int[0..5] because n < 3 holds before
    if rnd.random() < 0.06:
        chosen.append(rnd.choice(TOOL_CALLS))
    return chosen


def _add_forbids(model: SynthModel, rnd: random.Random, used: dict[int, set[str]], non_final: list[int]) -> None:
    """Forbidden transitions where the model has no transition (so `mbt check` finds no declared one forbidden)."""
    wanted = max(5, model.states // 20)
    tries = 0
    while len(model.forbidden) < wanted and tries < wanted * 20:
        tries += 1
        source = rnd.choice(non_final)
        event = rnd.choice([e for e in model.events if e not in used.get(source, set())] or [None])
        if event is None or (source, event) in model.forbidden:
            continue
        f = Forbid(source, event)
        text = f"forbid s{source} on {event}"
        roll = rnd.random()
        if roll < 0.3:
            f.guard = rnd.choice(rnd.choice(VAR_PARTITIONS))
            text += f" [{f.guard.text}]"
        elif roll < 0.5:
            f.target = rnd.randrange(model.states)
            text += f" -> s{f.target}"
        f.text = text + (" severity critical" if rnd.random() < 0.2 else "")
        model.forbids.append(f)
        model.forbidden[(source, event)] = f
    model.forbids.append(Forbid(None, None, text=f'forbid any on * effect say "leak an internal note" '
                                                 f'matching "{SAY_PHRASE}"'))
    model.forbids.append(Forbid(None, None, text=f'forbid any on * effect call delete_account '
                                                 f'matching "{DELETE_PHRASE}"'))


# ---------------------------------------------------------------- golden cases


@dataclass
class GoldenStats:
    cases: int = 0
    turns: int = 0
    asserted: int = 0  # turns with assert_state
    wrong: int = 0  # deliberately wrong expectations (each is a contradiction on replay)
    text_only: int = 0  # turns with only `user` text, bound by a `bind text` rule
    refused: int = 0  # turns whose event the model does not allow in that state
    diverging: int = 0  # refused turns the golden does not mark as expected refusals


def _initial_env() -> Env:
    env = {name: value for name, _, value in VARIABLES}
    env["discarded.note"] = None
    return env


def generate_goldens(model: SynthModel, count: int = 100_000, seed: int = 1, min_turns: int = 5,
                     max_turns: int = 10, stats: GoldenStats | None = None):
    """Yield golden cases (seed 000's JSONL shape) made by random walks on the model."""
    rnd = random.Random(seed)
    stats = stats if stats is not None else GoldenStats()
    out_events: dict[int, list[str]] = {}
    for (source, event) in model.groups:
        out_events.setdefault(source, []).append(event)
    all_events = list(model.events)
    start_states = [s for s in range(model.states) if s not in model.finals]
    for number in range(1, count + 1):
        env = _initial_env()
        state = 0
        case: dict[str, Any] = {"id": f"bench-{number:06d}", "severity": rnd.choice(["low", "medium", "high"]),
                                "contract": CONTRACT}
        if rnd.random() < 0.3:
            # start deeper in the graph: a walk of 5-10 turns from the initial state sees only its neighbourhood
            state = rnd.choice(start_states)
            env["n"] = rnd.randint(0, 5)
            env["flag"] = rnd.random() < 0.5
            case["precondition"] = {"state": model.state_name(state), "n": env["n"], "flag": env["flag"]}
        turns = []
        length = rnd.randint(min_turns, max_turns)
        for index in range(length):
            quiet = False  # a turn that asserts nothing at all
            choices = out_events.get(state, [])  # none in a final state: every event there is refused
            refuse = not choices or rnd.random() < 0.05
            if refuse:
                forbidden = [e for (s, e) in model.forbidden if s == state]
                event = rnd.choice(forbidden) if forbidden and rnd.random() < 0.5 else rnd.choice(all_events)
            else:
                event = rnd.choice(choices)
            spec = model.events[event]
            args = {p: PARAMS[p][1](rnd) for p in spec.params}
            turn: dict[str, Any] = {}
            if spec.phrase and rnd.random() < 0.3:
                turn["user"] = f"Hello, {spec.phrase.capitalize()}!"
                stats.text_only += 1
            else:
                turn["event"] = event
                if args:
                    turn["args"] = args
            before = state
            env.update(args)
            env.pop("_calls", None)
            state, taken = model.step(state, event, env)
            for p in args:
                env.pop(p)
            if taken is None:
                stats.refused += 1
                # a refusal the golden says it expects: the state stays, and a forbid there is verified
                if index == length - 1 or rnd.random() < 0.8:
                    turn["assert_state"] = {"state": model.state_name(before)}
                    turn["rejected"] = True
                else:
                    stats.diverging += 1  # a refusal the golden does not expect: mbt reports a divergence
                    quiet = True
            elif rnd.random() < 0.3:
                expected: dict[str, Any] = {"state": model.state_name(state)}
                if rnd.random() < 0.3:
                    expected["n"] = env["n"]
                if rnd.random() < 0.01:
                    expected["state"] = model.state_name((state + 1) % model.states)
                    stats.wrong += 1
                turn["assert_state"] = expected
                stats.asserted += 1
            if not quiet and rnd.random() < 0.05:
                turn["must_not"] = [f"mention the {SAY_PHRASE}"]
            turns.append(turn)
        case["turns"] = turns
        final: dict[str, Any] = {"state": model.state_name(state)}
        if rnd.random() < 0.2:
            final = {"state": {"state": model.state_name(state), "mode": env["mode"], "flag": env["flag"]}}
        if rnd.random() < 0.005:
            final = {"state": {"state": model.state_name(state), "level": (env["level"] + 1) % 10}}
            stats.wrong += 1
        if rnd.random() < 0.1:
            final["must_not"] = [f"never {DELETE_PHRASE}"]
        case["assertions"] = final
        stats.cases += 1
        stats.turns += len(turns)
        yield case


# ---------------------------------------------------------------- files


def write_bench(out_dir: str | Path, states: int = 2000, transitions: int = 20000, goldens: int = 100_000,
                seed: int = 0) -> tuple[Path, Path, GoldenStats]:
    """Write model.fsm and goldens.jsonl into `out_dir` (created when missing); returns their paths and stats."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model = generate_model(states, transitions, seed)
    model_path = out / "bench.fsm"
    model_path.write_text(model.text(), encoding="utf-8")
    stats = GoldenStats()
    golden_path = out / "goldens.jsonl"
    with golden_path.open("w", encoding="utf-8") as handle:
        for case in generate_goldens(model, goldens, seed + 1, stats=stats):
            handle.write(json.dumps(case, ensure_ascii=False, separators=(",", ":")) + "\n")
    return model_path, golden_path, stats


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", help="output folder (default: a new temporary folder)")
    ap.add_argument("--states", type=int, default=2000)
    ap.add_argument("--transitions", type=int, default=20000)
    ap.add_argument("--goldens", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    out = args.out or tempfile.mkdtemp(prefix="mbt-bench-")
    model_path, golden_path, stats = write_bench(out, args.states, args.transitions, args.goldens, args.seed)
    print(f"{model_path}\n{golden_path}\n{stats}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
