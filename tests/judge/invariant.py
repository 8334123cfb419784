"""The invariant judge: docs/coverage-rules/invariant.md implemented a second time, plainly and by brute force.

It shares no code with mbt's invariant replay (mbt/goldens/replay_invariant.py) or its monitors
(mbt/engine/temporal.py). Its input facts are the FSM's run as the FSM replay engine computes it (the configuration
after each turn, the transition taken, the calls): the FSM's semantics, which fsm.md and its own judge cover. From
them it rebuilds the positions (re-running each taken transition's actions only to see the variables at the moment
of each call), evaluates every proposition at every position with its own evaluator, enumerates each scope's
intervals explicitly, decides each pattern on each interval from its definition, and then each trigger's status
from the written rules. `campaign` generates random models, invariants of every pattern and scope, and goldens, and
compares the judge with `mbt coverage`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from mbt.elements.fsm import enumerate_fsm
from mbt.engine.fsm import CompiledFsm
from mbt.goldens.cases import GoldenCase, OneOf, parse_case
from mbt.goldens.replay_fsm import FsmReplayer
from mbt.kind import support
from mbt.model.expr import And, Not, Or, Ref
from mbt.model.fsm import Assign, Discard, FsmModel
from mbt.model.invariant import CallMade, EventIs, Invariant, InvariantModel
from mbt.parsing.loader import parse_text
from tests.judge.common import EXERCISED, VERIFIED, Campaign, mbt_statuses_many
from tests.judge.fsm import agrees, expected_calls_of, states_of, value_of

# ------------------------------------------------------------------ values (the expression language)


# value_of: the expression language's meaning, as the FSM judge has it (tests/judge/fsm.py).


def same(actual, expected) -> bool:
    """Golden values compare as JSON values: true is not 1."""
    if isinstance(actual, bool) or isinstance(expected, bool):
        return isinstance(actual, bool) and isinstance(expected, bool) and actual == expected
    return actual == expected


def names_in(expr) -> set[str]:
    out: set[str] = set()
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, Ref):
            out.add(node.name)
        stack.extend(c for c in node.children() if c is not None)
    return out


def must_not_call(a) -> list[str]:
    """Read from the extra keys too, where mbt kept it before the field existed (to run the campaign there)."""
    return getattr(a, "must_not_call", None) or (a.model_extra or {}).get("must_not_call") or []


# ------------------------------------------------------------------ the run's facts


@dataclass
class Call:
    tool: str
    args: dict
    env: dict  # variables and discarded.X at the moment of the call


@dataclass
class Pos:
    env: dict  # variables, discarded.X, state
    event: str | None = None
    args: dict = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    turn: int = 0  # the turn whose accepted step reached it (0: the start)


@dataclass
class Run:
    """What the FSM run shows: the positions, per replayed turn its configuration and calls, how it ended."""

    positions: list[Pos]
    configs: list[dict]  # per replayed turn: the configuration after it (variables, discarded.X, state)
    turn_calls: list[list[Call]]  # per replayed turn: its step's calls
    taken: list[bool]  # per replayed turn: a transition was taken
    finished: bool  # every turn replayed
    from_initial: bool
    forbidden_expected: bool  # the FSM replay found the golden expecting forbidden behaviour (fsm.md)


def run_of(fsm: FsmModel, case: GoldenCase) -> Run | None:
    """The facts of one golden's run on the FSM (None: the case is invalid there)."""
    replay = FsmReplayer(CompiledFsm(fsm, enumerate_fsm(fsm))).replay(case, keep_snapshots=True)
    if replay.invalid is not None:
        return None

    def config(snap) -> dict:
        return {**snap.variables, **{f"discarded.{k}": v for k, v in snap.discarded.items()}, "state": snap.state}

    positions = [Pos(config(replay.start))]
    configs, turn_calls, taken = [], [], []
    by_key = {t.key: t for t in fsm.transitions}
    for number, snap in enumerate(replay.snapshots, start=1):
        configs.append(config(snap))
        taken.append(snap.transition is not None)
        if snap.transition is None:
            turn_calls.append([])
            continue
        t = by_key[snap.transition]
        env = {k: v for k, v in positions[-1].env.items() if k != "state"}
        declared = [p.name for p in fsm.events[t.event].params]
        local = dict(env)
        local.update({name: snap.args[d] for d, name in zip(declared, t.params or declared)})
        calls = []
        for action in t.actions:
            if isinstance(action, Assign):
                local[action.target] = env[action.target] = value_of(action.value, local)
            elif isinstance(action, Discard):
                key = f"discarded.{action.target}"
                local[key] = env[key] = local.get(action.target)
                local[action.target] = env[action.target] = None
            else:
                calls.append(Call(action.tool, {n: value_of(e, local) for n, e in action.args}, dict(env)))
        after = config(snap)
        assert {**env, "state": t.target} == after, f"turn {number}: the judge re-ran `{t.key}` differently"
        assert [(c.tool, c.args) for c in calls] == [(c.tool, c.args) for c in snap.calls], f"turn {number}: calls"
        positions.append(Pos(after, snap.event, dict(snap.args), calls, number))
        turn_calls.append(calls)
    finished = not replay.unbound and len(replay.snapshots) == len(case.turns)
    return Run(positions, configs, turn_calls, taken, finished, replay.start.state == fsm.initial_state,
               bool(getattr(replay, "forbidden_expected", None)))  # (absent before mbt reported it)


# ------------------------------------------------------------------ contradictions of the FSM (fsm.md)


def resolve(tool_arguments: dict, calls: list[Call], tools: set[str]) -> list[tuple[int | None, str | None, Any]]:
    """Each entry: (index of the call it speaks of or None, the argument or None for `{T: {}}`, the expected value)."""
    out = []
    for tool, arg, expected in expected_calls_of(tools, tool_arguments):
        hit = None
        for i in range(len(calls) - 1, -1, -1):
            if (tool is None or calls[i].tool == tool) and (arg is None or arg in calls[i].args):
                hit = i
                break
        out.append((hit, arg, expected))
    return out


def contradicts(fsm: FsmModel, a, config: dict, calls: list[Call], rejected_but_taken: bool) -> bool:
    tools = set(fsm.tools())
    known = [name for name in states_of(a) if name in fsm.states]
    if known and config["state"] not in known:
        return True
    if any(n in fsm.variables and not agrees(config[n], v) for n, v in a.variables.items()):
        return True
    if any(f"discarded.{n}" in config and not agrees(config[f"discarded.{n}"], v) for n, v in a.discarded.items()):
        return True
    if any(c.tool in must_not_call(a) for c in calls):
        return True
    for hit, arg, expected in resolve(a.tool_arguments, calls, tools):
        if hit is None or (arg is not None and not agrees(calls[hit].args[arg], expected)):
            return True
    return rejected_but_taken


def fsm_contradicted(fsm: FsmModel, case: GoldenCase, run: Run) -> bool:
    every_call = [c for calls in run.turn_calls for c in calls]
    for k, config in enumerate(run.configs):
        turn = case.turns[k]
        if contradicts(fsm, turn.expect, config, run.turn_calls[k], turn.rejected and run.taken[k]):
            return True
        if run.finished and k == len(case.turns) - 1 and contradicts(fsm, case.final, config, every_call, False):
            return True
    return False


# ------------------------------------------------------------------ propositions at positions


def holds(expr, pos: Pos) -> bool:
    if isinstance(expr, EventIs):
        return pos.event == expr.event and (expr.condition is None
                                            or bool(value_of(expr.condition, {**pos.env, **pos.args})))
    if isinstance(expr, CallMade):
        def good(c: Call) -> bool:
            env = {**c.env, "state": pos.env["state"], **{f"args.{k}": v for k, v in c.args.items()}}
            return expr.condition is None or bool(value_of(expr.condition, env))

        mine = [c for c in pos.calls if c.tool == expr.tool]
        return all(good(c) for c in mine) if expr.every else any(good(c) for c in mine)
    if isinstance(expr, Not):
        return not holds(expr.operand, pos)
    if isinstance(expr, And):
        return all(holds(i, pos) for i in expr.items)
    if isinstance(expr, Or):
        return any(holds(i, pos) for i in expr.items)
    return bool(value_of(expr, pos.env))


def names_steps(expr) -> bool:
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, (EventIs, CallMade)):
            return True
        stack.extend(c for c in node.children() if c is not None)
    return False


# ------------------------------------------------------------------ scopes as explicit intervals


@dataclass
class Interval:
    start: int
    end: int  # exclusive
    closed: bool  # an R ended it
    judged: bool  # the pattern makes a claim about it


def intervals(inv: Invariant, q: list[bool], r: list[bool]) -> list[Interval]:
    n, kind = len(q), inv.scope.kind
    if kind == "global":
        return [Interval(0, n, False, True)]
    if kind == "before":
        first = next((k for k in range(n) if r[k]), None)
        return [Interval(0, first, True, True)] if first is not None else [Interval(0, n, False, False)]
    if kind == "after":
        first = next((k for k in range(n) if q[k]), None)
        return [Interval(first, n, False, True)] if first is not None else []
    out, k = [], 0
    while k < n:
        if q[k] and not r[k]:
            end = next((j for j in range(k + 1, n) if r[j]), None)
            if end is None:
                out.append(Interval(k, n, False, kind == "after-until"))
                break
            out.append(Interval(k, end, True, True))
            k = end + 1  # Q at R's own position opens nothing
        else:
            k += 1
    return out


def restarts(inv: Invariant, iv: Interval, q: list[bool]) -> list[int]:
    """Where what `eventually`/`precedes` owe starts again: the interval's start, and each Q in it (between/until)."""
    if inv.scope.kind in ("between", "after-until"):
        return [k for k in range(iv.start, iv.end) if k == iv.start or q[k]]
    return [iv.start]


def broken(inv: Invariant, iv: Interval, v: dict[str, list[bool]], q: list[bool], complete: bool) -> bool:
    """The pattern's definition on one interval (only intervals the pattern judges are asked)."""
    span = range(iv.start, iv.end)
    p, s, a = v["p"], v["s"], v["a"]
    ended = iv.closed or (iv.end == len(q) and complete)
    pattern = inv.pattern
    if pattern == "universality":
        return any(a[k] and not p[k] for k in span)
    if pattern == "absence":
        return any(p[k] for k in span)
    if pattern == "bounded-existence":
        if names_steps(inv.p):
            count = sum(p[k] for k in span)
        else:
            count = sum(1 for k in span if p[k] and (k == 0 or not p[k - 1]))
        return count > inv.bound
    starts = restarts(inv, iv, q)
    if pattern == "precedence":
        for k in span:
            if p[k]:
                since = max(x for x in starts if x <= k)
                if not any(s[j] for j in range(since, k + 1)):
                    return True
        return False
    if pattern == "existence":
        return ended and not any(p[k] for k in range(starts[-1], iv.end))
    # response
    return ended and any(s[k] and not any(p[j] for j in range(k, iv.end)) for k in span)


def triggered(inv: Invariant, k: int, v: dict[str, list[bool]]) -> bool:
    if inv.pattern == "universality":
        return v["a"][k]
    if inv.pattern == "precedence":
        return v["p"][k]
    if inv.pattern == "response":
        return v["s"][k]
    return True


# ------------------------------------------------------------------ what a golden checks where


@dataclass
class Seen:
    state: bool = False
    names: set = field(default_factory=set)
    outcome: bool = False
    not_called: set = field(default_factory=set)
    pinned: dict = field(default_factory=dict)  # call index -> {argument or None}
    phrases: list = field(default_factory=list)


def outcome_checked(a) -> bool:
    return bool(a.state is not None or a.variables or a.discarded or a.tool_arguments or must_not_call(a))


def seen_at(fsm: FsmModel, case: GoldenCase, run: Run) -> list[Seen]:
    tools = set(fsm.tools())
    seen = [Seen() for _ in run.positions]
    reached = {pos.turn: k for k, pos in enumerate(run.positions)}
    where = 0
    for number in range(1, len(run.configs) + 1):
        turn = case.turns[number - 1]
        own = number in reached
        if own:
            where = reached[number]
        at = seen[where]
        parts = [turn.expect] + ([case.final] if run.finished and number == len(case.turns) else [])
        for a in parts:
            # A set of accepted values checks none of them: only a single value pins what the consequent reads.
            at.state |= a.state is not None and not isinstance(a.state, OneOf)
            at.names |= {n for n, v in a.variables.items() if not isinstance(v, OneOf)}
            at.names |= {f"discarded.{x}" for x, v in a.discarded.items() if not isinstance(v, OneOf)}
            if own and outcome_checked(a):
                at.outcome = True
        if own:
            at.not_called |= set(must_not_call(turn.expect))
            at.phrases += [m.casefold() for m in turn.expect.must_not]
            for hit, arg, _ in resolve(turn.expect.tool_arguments, run.positions[where].calls, tools):
                if hit is not None:
                    at.pinned.setdefault(hit, set()).add(arg)
    if run.finished:
        for at in seen:
            at.not_called |= set(must_not_call(case.final))
            at.phrases += [m.casefold() for m in case.final.must_not]
        index = [(k, i) for k, pos in enumerate(run.positions) for i in range(len(pos.calls))]
        flat = [run.positions[k].calls[i] for k, i in index]
        for hit, arg, _ in resolve(case.final.tool_arguments, flat, tools):
            if hit is not None:
                k, i = index[hit]
                seen[k].pinned.setdefault(i, set()).add(arg)
    return seen


def reads_something(expr) -> bool:
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, (Ref, EventIs)) or (isinstance(node, CallMade) and not node.every):
            return True
        stack.extend(c for c in node.children() if c is not None)
    return False


def asserted(fsm: FsmModel, expr, pos: Pos, at: Seen) -> bool:
    """Does the golden check, at this position, everything the proposition reads?"""
    return reads_something(expr) and checked(fsm, expr, pos, at, set())


def checked(fsm: FsmModel, expr, pos: Pos, at: Seen, params: set) -> bool:
    if isinstance(expr, EventIs):
        own = {p.name for p in fsm.events[expr.event].params}
        return pos.event is not None and at.outcome and (
            expr.condition is None or checked(fsm, expr.condition, pos, at, own))
    if isinstance(expr, CallMade):
        mine = [i for i, c in enumerate(pos.calls) if c.tool == expr.tool]
        if not mine:
            return expr.tool in at.not_called
        if len(mine) > 1:
            return False
        call, pinned = pos.calls[mine[0]], at.pinned.get(mine[0], set())
        if not expr.every and not pinned:
            return False
        for name in sorted(names_in(expr.condition) if expr.condition is not None else ()):
            if name.startswith("args."):
                ok = name[5:] in pinned
            elif name == "state":
                ok = at.state
            else:
                ok = name in at.names and type(call.env[name]) is type(pos.env[name]) \
                    and call.env[name] == pos.env[name]
            if not ok:
                return False
        return True
    if isinstance(expr, (Not, And, Or)):
        return all(checked(fsm, c, pos, at, params) for c in expr.children())
    for name in names_in(expr) - params:
        if not (at.state if name == "state" else name in at.names):
            return False
    return True


# ------------------------------------------------------------------ the judge


def judge(inv_model: InvariantModel, fsm: FsmModel, case: GoldenCase, run: Run | None) -> dict[str, str]:
    """Element id -> "verified" / "exercised" for one golden, from docs/coverage-rules/invariant.md."""
    return verdict(inv_model, fsm, case, run)[0]


def verdict(inv_model: InvariantModel, fsm: FsmModel, case: GoldenCase,
            run: Run | None) -> tuple[dict[str, str], set[str]]:
    """The statuses, and the invariants whose break is reported as a contradiction."""
    if run is None:
        return {}, set()
    positions = run.positions
    complete = run.finished and fsm.states[positions[-1].env["state"]].final
    seen = seen_at(fsm, case, run)
    statuses: dict[str, str] = {}
    verified: set[str] = set()
    reported: set[str] = set()
    for inv in inv_model.invariants:
        element = f"trigger:{inv.key}"
        props = {"p": inv.p, "s": inv.s, "a": inv.antecedent, "q": inv.scope.open, "r": inv.scope.close}
        v = {role: [holds(e, pos) if e is not None else role == "a" for pos in positions] for role, e in props.items()}
        spans = intervals(inv, v["q"], v["r"])
        broke = any(broken(inv, iv, v, v["q"], complete) for iv in spans if iv.judged)
        history = inv.pattern in ("existence", "precedence") or inv.scope.kind == "before"
        if broke and (run.from_initial or not history):
            reported.add(inv.key)
        if inv.scope.kind == "before" and not run.from_initial:
            continue
        fired = [(iv, k) for iv in spans if iv.judged for k in range(iv.start, iv.end) if triggered(inv, k, v)]
        if not fired:
            continue
        statuses[element] = EXERCISED
        if broke:
            continue

        def ok(expr, k: int) -> bool:
            return asserted(fsm, expr, positions[k], seen[k])

        p, s = v["p"], v["s"]
        if inv.pattern == "universality":
            good = any(ok(inv.p, k) for _, k in fired)
        elif inv.pattern == "absence":
            phrases = [x.casefold() for x in inv.matching]
            good = any(ok(inv.p, k) or any(x in m for m in seen[k].phrases for x in phrases) for _, k in fired)
        elif inv.pattern == "existence":
            good = any(p[k] and ok(inv.p, k) for _, k in fired)
        elif inv.pattern == "response":
            good = any(p[j] and ok(inv.p, j) for iv, k in fired for j in range(k, iv.end))
        elif inv.pattern == "precedence":
            good = False
            for iv, k in fired:
                since = max(x for x in restarts(inv, iv, v["q"]) if x <= k)
                good |= any(s[j] and ok(inv.s, j) for j in range(since, k + 1))
        else:  # bounded existence: the count checked at every step of one interval
            good = run.from_initial and any(
                iv.end > max(iv.start, 1) and all(ok(inv.p, k) for k in range(max(iv.start, 1), iv.end))
                for iv in {id(iv): iv for iv, _ in fired}.values())
        if good:
            verified.add(element)
    if not (reported or run.forbidden_expected or fsm_contradicted(fsm, case, run)):
        statuses.update({e: VERIFIED for e in verified})
    return statuses, reported


# ------------------------------------------------------------------ random models, invariants and goldens

TOOLS = ("note", "ping")
PHRASE = "the bad thing"


def random_fsm(rng: random.Random) -> tuple[str, list[str]]:
    states = [f"s{i}" for i in range(rng.randint(2, 4))]
    final = states[-1] if rng.random() < 0.6 else None
    lines = ["fsm m {", "  var n: int[0..3] = 0", "  var flag: bool = false", "  var who: string? = none"]
    lines += [f"  state {s}{' initial' if i == 0 else ''}{' final' if s == final else ''}"
              for i, s in enumerate(states)]
    lines += ["  event go(up: bool)", "  event give(w: string)", "  event flip", "  event stop"]
    live = [s for s in states if s != final]
    # Every tool and argument is used somewhere, and who is discarded somewhere (so `discarded.who` exists).
    lines.append(f"  {rng.choice(live)} -> {rng.choice(states)} on stop / discard who, call ping(to = who), "
                 "call note(v = n)")
    actions = ["n := 0", "flag := not flag", "flag := true", "who := none", "discard who", "call note(v = n)",
               "call ping(to = who)", 'call ping(to = "x")', "call note(v = 2)", "call note(v = n), call note(v = 1)",
               # a variable the call's condition reads, changed by the same step after the call
               "call note(v = n), n := 0", "call ping(to = who), who := none", "call ping(to = who), discard who"]
    for _ in range(rng.randint(6, 12)):
        source, target = rng.choice(live), rng.choice(states)
        event = rng.choice(["go", "go", "give", "flip", "stop"])
        head, guard, extra = event, "", []
        if event == "go":
            head = "go(u)"
            guard = rng.choice([" [u and n < 3]", " [not u]", " [u]", ""])
            if "n < 3" in guard:
                extra = ["n := n + 1"]
        elif event == "give":
            head = "give(x)"
            extra = ["who := x"] if rng.random() < 0.7 else ['call ping(to = x)']
        elif event == "flip":
            guard = rng.choice([" [flag]", " [n > 0]", ""])
        body = extra + [rng.choice(actions) for _ in range(rng.randint(0, 3))]
        rng.shuffle(body)  # calls before and after assignments: the variables at the moment of the call differ
        lines.append(f"  {source} -> {target} on {head}{guard}" + (f" / {', '.join(body)}" if body else ""))
    lines.append("}")
    return "\n".join(lines) + "\n", states


def random_prop(rng: random.Random, states: list[str], depth: int = 0) -> str:
    if depth < 1 and rng.random() < 0.3:
        op = rng.choice(["and", "or"])
        return f"({random_prop(rng, states, depth + 1)} {op} {random_prop(rng, states, depth + 1)})"
    if depth < 1 and rng.random() < 0.1:
        return f"not {random_prop(rng, states, depth + 1)}"
    s = rng.choice(states)
    return rng.choice([
        f"state == {s}", f"state != {s}", f"state in {{{s}, {rng.choice(states)}}}", f"n == {rng.randint(0, 3)}",
        f"n <= {rng.randint(0, 2)}", "flag", "not flag", "who == none", "who != none", "discarded.who != none",
        "on go", "on go [up]", "on go [not up and flag]", "on give", 'on give [w == "a"]', "on flip", "on stop",
        "call note", "call note [args.v == n]", f"call note [args.v >= {rng.randint(1, 2)}]", "call ping",
        "call ping [args.to == who]", 'call ping [args.to == "x"]', "call ping [args.to != none and flag]",
        f"(call note [args.v <= n] or state == {s})"])


def scope_prop(rng: random.Random, states: list[str], opening: bool) -> str:
    """Q and R: propositions that hold now and then, so that intervals open (often again inside one) and close."""
    if opening:
        return rng.choice(["on go", "on go", "on go [up]", "on go [up]", "on give", "flag", "call note",
                           f"state == {rng.choice(states)}", "(on flip or on give)"])
    return rng.choice(["on go [not up]", "on go [not up]", "on flip", "on stop", "on give", "n == 1", "call ping",
                       f"state == {rng.choice(states)}"])


def random_invariants(rng: random.Random, states: list[str], count: int) -> str:
    lines = ["invariants for m {"]
    for i in range(count):
        pattern = rng.randrange(8)
        p = random_prop(rng, states)
        if pattern == 0:
            body = f"always {p}"
        elif pattern == 1:
            body = f"always {random_prop(rng, states)} -> {p}"
        elif pattern == 2:
            body = rng.choice(["every call note [args.v <= n]", "every call note [args.v == n or flag]",
                               "every call ping [args.to == who]", 'every call ping [args.to != "x" and n < 3]',
                               "every call ping [args.to == discarded.who or n == 0]"])
        elif pattern == 3:
            body = f"never {p}"
        elif pattern == 4:
            body = f"eventually {p}"
        elif pattern == 5:
            body = f"at most {rng.randint(0, 2)} {p}"
        elif pattern == 6:
            body = f"{random_prop(rng, states)} precedes {p}"
        else:
            body = f"{random_prop(rng, states)} leads to {p}"
        q, r = scope_prop(rng, states, True), scope_prop(rng, states, False)
        scope = rng.choice(["", "", f" before {r}", f" after {q}", f" between {q} and {r}", f" between {q} and {r}",
                            f" after {q} until {r}", f" after {q} until {r}"])
        matching = f' matching "{PHRASE}"' if rng.random() < 0.3 else ""
        lines.append(f"  i{i}: {body}{scope}{matching}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def random_args(rng: random.Random, event: str) -> dict:
    if event == "go":
        return {"up": rng.random() < 0.6}
    if event == "give":
        return {"w": rng.choice(["a", "b"])}
    return {}


def random_checks(rng: random.Random, config: dict, calls: list[Call], final: bool, wrong: bool,
                  thorough: bool = False) -> dict:
    """Assertions at one turn (or the final ones): partial, of unrelated names, of calls made or not; `wrong`: one
    of them disagrees with the model (a contradiction); `thorough`: everything the model computes there."""
    out: dict = {}
    key = "state" if final else "assert_state"
    names = ["state", "n", "flag", "who", "discarded.who"]
    if thorough:
        out[key] = {name: config[name] for name in names}
        if calls:
            out["tool_arguments"] = {c.tool: dict(c.args) for c in calls}
        quiet = [t for t in TOOLS if t not in {c.tool for c in calls}]
        if quiet:
            out["must_not_call"] = quiet
        return out
    if rng.random() < 0.7:
        state: dict = {}
        for name in names if rng.random() < 0.4 else rng.sample(names, rng.randint(1, 4)):
            state[name] = config.get(name)
        if wrong:
            name = rng.choice(list(state))
            state[name] = {"state": "nowhere", "n": 3 if config["n"] != 3 else 0, "flag": not config["flag"],
                           "who": "zz", "discarded.who": "zz"}[name]
            if name == "state":
                state[name] = next(s for s in ("s0", "s1") if s != config["state"])
            wrong = False
        out[key] = state
    if rng.random() < 0.6 and calls:
        call = rng.choice(calls)
        shape = rng.randrange(4)
        if shape == 3:  # every tool's latest call, whole
            out["tool_arguments"] = {c.tool: dict(c.args) for c in calls}
        elif shape == 0:
            out["tool_arguments"] = {call.tool: {}}
        elif shape == 1:
            out["tool_arguments"] = {call.tool: dict(call.args)}
        else:
            arg = next(iter(call.args))
            out["tool_arguments"] = {arg: call.args[arg]}  # the flat form
        if wrong:
            out["tool_arguments"] = {call.tool: {k: "zz" for k in call.args}}
            wrong = False
    made = {c.tool for c in calls}
    if rng.random() < 0.5:
        quiet = [t for t in TOOLS if t not in made]
        if quiet:
            out["must_not_call"] = rng.sample(quiet, rng.randint(1, len(quiet)))
    if wrong:  # a call asserted that is not made, or a made one asserted absent
        absent = [t for t in TOOLS if t not in made]
        out["tool_arguments" if absent else "must_not_call"] = {absent[0]: {}} if absent else [next(iter(made))]
    if rng.random() < 0.2:
        out["must_not"] = [rng.choice([f"never {PHRASE.upper()} here", "something else"])]
    return out


def random_golden(rng: random.Random, fsm: FsmModel, states: list[str], number: int) -> GoldenCase:
    raw: dict = {"id": f"g{number}"}
    roll = rng.random()
    if roll < 0.15:  # mid-run
        raw["precondition"] = {"state": rng.choice(states), "n": rng.randint(0, 3), "who": rng.choice([None, "a"])}
    elif roll < 0.3:  # context in the initial state
        raw["precondition"] = {"flag": True, "who": "a"}
    turns = []
    for _ in range(rng.randint(1, 9)):
        event = rng.choice(["go", "go", "give", "flip", "stop"])
        turns.append({"event": event, "args": random_args(rng, event)})
    raw["turns"] = turns
    probe = run_of(fsm, parse_case(raw, "judge.yaml", number))
    if probe is None:
        return parse_case(raw, "judge.yaml", number)
    every_call = [c for calls in probe.turn_calls for c in calls]
    thorough = rng.random() < 0.3  # every turn checks everything: the goldens that verify most
    checked = [k for k in range(len(probe.configs)) if thorough or rng.random() < 0.6]
    final = rng.random() < 0.4 and bool(probe.configs)
    # One golden in eight has one check the model disagrees with, at a turn or in the final assertions.
    liar = rng.choice(checked + (["final"] if final else [])) if rng.random() < 0.12 and (checked or final) else None
    for k in checked:
        turns[k].update(random_checks(rng, probe.configs[k], probe.turn_calls[k], False, liar == k,
                                      thorough and liar != k and rng.random() < 0.9))
    for k in range(len(probe.configs)):
        if not probe.taken[k] and rng.random() < 0.5:
            turns[k]["rejected"] = True
    if final:
        raw["assertions"] = random_checks(rng, probe.configs[-1], every_call, True, liar == "final")
    return parse_case(raw, "judge.yaml", number)


def campaign(cases: int, seed: int, per_model: int = 12) -> Campaign:
    """The judge and `mbt coverage` on `cases` random goldens over random models with invariants of every pattern
    and scope: each trigger's status per golden."""
    rng = random.Random(seed)
    result = Campaign("invariant")
    number = 0
    while result.cases < cases:
        text, states = random_fsm(rng)
        fsm, inv = parse_text(text + random_invariants(rng, states, rng.choice([1, 1, 2, 3])), f"judge{number}.fsm").models
        goldens = []
        for _ in range(min(per_model, cases - result.cases)):
            number += 1
            goldens.append(random_golden(rng, fsm, states, number))
        measured = mbt_statuses_many(inv, goldens)
        replayer = support("invariant").replayer(inv, support("invariant").enumerate(inv))
        for case in goldens:
            judged, broken_ = verdict(inv, fsm, case, run_of(fsm, case))
            got = measured[case.id]
            # Every trigger is compared, untouched ones too; so are the contradictions each golden is reported for.
            for i in inv.invariants:
                judged.setdefault(f"trigger:{i.key}", "untouched")
                got.setdefault(f"trigger:{i.key}", "untouched")
            judged.update({f"contradiction:{key}": "reported" for key in broken_})
            got.update({f"contradiction:{c.path[len('invariant:'):]}": "reported"
                        for c in replayer.replay(case).contradictions if c.path.startswith("invariant:")})
            result.compare(f"model {number // per_model} {case.id}", judged, got)
    return result
