"""The FSM judge: docs/coverage-rules/fsm.md implemented a second time, plainly and slowly.

It shares no code with mbt's replay engine: it steps the typed model with its own expression evaluator, keeps the
whole run, and then decides every element's status from the written rules. Element ids come from
`mbt.elements.fsm`'s id functions (names only). `campaign` generates random models and goldens (explicit events;
assertions true, false, forbidden, partial) and compares the judge with `mbt coverage`. Which forbid or claim a
golden's phrase names is the judges' decision the rules name (phrases folded with mbt.judges.text.fold, a `say`
forbid's description by the embedded judge, criterion `says`): the judges are asked, the rules applied here.
"""

from __future__ import annotations

import random
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mbt.api import load_models, measure
from mbt.elements import fsm as ids
from mbt.goldens.cases import GoldenCase, OneOf, parse_case
from mbt.goldens.loader import GoldenSet
from mbt.judges.sayings import SayingJudge
from mbt.judges.text import fold
from mbt.model.expr import And, Arith, Compare, EnumLit, Lit, Member, Not, Or, Ref, atoms
from mbt.model.fsm import Assign, Discard, FsmModel
from tests.judge.common import EXERCISED, VERIFIED, Campaign, statuses_by_case

# ------------------------------------------------------------------ the language's meaning (dsl-reference.md)


def value_of(expr, env: dict) -> Any:
    if isinstance(expr, (Lit, EnumLit)):
        return expr.value
    if isinstance(expr, Ref):
        return env.get(expr.name)
    if isinstance(expr, Not):
        return not value_of(expr.operand, env)
    if isinstance(expr, And):
        return all(value_of(item, env) for item in expr.items)
    if isinstance(expr, Or):
        return any(value_of(item, env) for item in expr.items)
    if isinstance(expr, Compare):
        a, b = value_of(expr.left, env), value_of(expr.right, env)
        if expr.op == "==":
            return a == b
        if expr.op == "!=":
            return a != b
        if a is None or b is None:  # an unset optional satisfies no ordering
            return False
        return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[expr.op]
    if isinstance(expr, Member):
        found = value_of(expr.operand, env) in [value_of(i, {}) for i in expr.items]
        return not found if expr.negated else found
    if isinstance(expr, Arith):
        a, b = value_of(expr.left, env), value_of(expr.right, env)
        if a is None or b is None:
            return None
        return a + b if expr.op == "+" else a - b
    raise TypeError(type(expr).__name__)


def same(actual, expected) -> bool:
    """Golden values compare as JSON values: true is not 1."""
    if isinstance(actual, bool) or isinstance(expected, bool):
        return isinstance(actual, bool) and isinstance(expected, bool) and actual == expected
    return actual == expected


def agrees(actual, expected) -> bool:
    """A golden's expected value, or set of values (`{in: [...]}`, decoded as a OneOf), admits the actual one."""
    return any(same(actual, v) for v in expected.values) if isinstance(expected, OneOf) else same(actual, expected)


def states_of(a) -> list[str]:
    """The control states an assertion accepts: the one it names, or each of its list; [] when it names none."""
    if a.state is None:
        return []
    return list(a.state.values) if isinstance(a.state, OneOf) else [a.state]


def not_called(a) -> list[str]:
    """`must_not_call`; read from the extra keys too, where mbt before it existed kept it (to run the campaign there)."""
    return getattr(a, "must_not_call", None) or (a.model_extra or {}).get("must_not_call") or []


@dataclass
class Step:
    before: str
    event: str
    after: str
    taken: Any  # the Transition, or None when refused
    elements: set[str]  # exercised, forbids apart
    forbids: list  # the Forbid objects exercised here
    calls: list[tuple[str, dict]]
    variables: dict  # after the step, discarded.X included


@dataclass
class Verdict:
    statuses: dict[str, str] = field(default_factory=dict)
    expected_forbidden: set[tuple[int, str]] = field(default_factory=set)  # (turn, forbid element id)
    contradicted: bool = False
    invalid: bool = False


def start_of(model: FsmModel, case: GoldenCase) -> tuple[str, dict] | None:
    state = model.initial_state
    variables = {name: v.initial for name, v in model.variables.items()}
    variables.update({f"discarded.{name}": None for name in model.discardable})
    for key, value in case.precondition.items():
        if key == "state":
            if value not in model.states:
                return None
            state = value
        elif key in model.variables:
            if not model.variables[key].type.admits(value):
                return None
            variables[key] = value
    return state, variables


def run_case(model: FsmModel, case: GoldenCase) -> tuple[list[Step], str, bool] | None:
    """The run: every step, the start state, and whether every turn was replayed. None: the start is invalid."""
    start = start_of(model, case)
    if start is None:
        return None
    state, variables = start
    steps: list[Step] = []
    prev = None
    for turn in case.turns:
        event = turn.event
        if event not in model.events:
            return steps, start[0], False
        declared = [p.name for p in model.events[event].params]
        args = dict(turn.args)
        if set(args) - set(declared) or set(declared) - set(args):
            return steps, start[0], False
        group = [t for t in model.transitions if t.source == state and t.event == event]
        guarded = any(t.guard is not None for t in group)
        elements = {ids.state_id(state)}
        taken, taken_env = None, None
        for t in group:
            env = dict(variables)
            env.update({local: args[name] for name, local in zip(declared, t.params or declared)})
            if guarded and t.guard is not None:
                for k, atom in enumerate(atoms(t.guard)):
                    elements.add(ids.condition_id(t, k, bool(value_of(atom, env))))
            if taken is None and (t.guard is None or value_of(t.guard, env)):
                taken, taken_env = t, env
        forbid_env = dict(taken_env if taken is not None else variables)
        forbid_env.update(args)
        forbids = [f for f in model.forbids if f.source in (None, state) and f.event in (None, event)
                   and (f.guard is None or value_of(f.guard, forbid_env))]
        calls: list[tuple[str, dict]] = []
        before = state
        if taken is None:
            if guarded:
                elements.add(ids.no_branch_id(state, event))
        else:
            env = taken_env
            for action in taken.actions:
                if isinstance(action, Assign):
                    env[action.target] = variables[action.target] = value_of(action.value, env)
                elif isinstance(action, Discard):
                    key = f"discarded.{action.target}"
                    env[key] = variables[key] = env.get(action.target)
                    env[action.target] = variables[action.target] = None
                else:
                    calls.append((action.tool, {name: value_of(e, env) for name, e in action.args}))
            state = taken.target
            elements |= {ids.transition_id(taken), ids.state_id(taken.target)}
            if guarded:
                elements.add(ids.branch_id(taken))
            if prev is not None:
                elements.add(ids.pair_id(prev, taken))
            prev = taken
        steps.append(Step(before, event, state, taken, elements, forbids, calls, dict(variables)))
    return steps, start[0], True


# ------------------------------------------------------------------ the rules (coverage-rules/fsm.md)


def expected_calls(model: FsmModel, tool_arguments: dict) -> list[tuple[str | None, str | None, Any]]:
    return expected_calls_of(set(model.tools()), tool_arguments)


def expected_calls_of(tools: set[str], tool_arguments: dict) -> list[tuple[str | None, str | None, Any]]:
    """(tool or None, argument path or None, value) per check. The golden's `tool_arguments` arrive as dotted paths
    (`TOOL.ARG.FIELD`, however they were written): a first part naming a tool checks that tool's call; `{TOOL: {}}`
    the call itself; any other path the latest call passing it. A call's arguments are the model's own names, so a
    path is one of them exactly."""
    out: list[tuple[str | None, str | None, Any]] = []
    for path, value in tool_arguments.items():
        parts = path.split(".")
        if parts[0] in tools and len(parts) > 1:
            out.append((parts[0], ".".join(parts[1:]), value))
        elif parts[0] in tools and value == {} and isinstance(value, dict):
            out.append((parts[0], None, None))
        else:
            out.append((None, path, value))
    return out


def latest(calls: list[tuple[int, str, dict]], tool: str | None, arg: str):
    for step, name, args in reversed(calls):
        if (tool is None or name == tool) and arg in args:
            return step, name, args[arg]
    return None


def contradicts(model: FsmModel, a, step: Step, scope: list[tuple[int, str, dict]], rejected: bool) -> bool:
    known = [name for name in states_of(a) if name in model.states]  # states the model lacks are only noted
    if known and step.after not in known:
        return True
    if any(name in model.variables and not agrees(step.variables[name], v) for name, v in a.variables.items()):
        return True
    if any(f"discarded.{name}" in step.variables and not agrees(step.variables[f"discarded.{name}"], v)
           for name, v in a.discarded.items()):
        return True
    if any(name == tool for tool in not_called(a) for _, name, _ in scope):
        return True
    for tool, arg, v in expected_calls(model, a.tool_arguments):
        if arg is None:
            if not any(name == tool for _, name, _ in scope):
                return True
            continue
        found = latest(scope, tool, arg)
        if found is None or not agrees(found[2], v):
            return True
    return rejected and step.taken is not None


def resolved_before(model: FsmModel, a, tool: str, calls: list[tuple[int, str, dict]], k: int) -> bool:
    """A final check of `tool` whose every asserted argument (or the call itself) resolves to a call made before
    step k: it speaks of that call, not of one at step k."""
    steps = []
    for name, arg, _ in expected_calls(model, a.tool_arguments):
        if name != tool:
            continue
        if arg is None:
            made = [step for step, called, _ in calls if called == tool]
            steps.append(made[-1] if made else None)
        else:
            hit = latest(calls, tool, arg)
            steps.append(hit[0] if hit else None)
    return bool(steps) and all(s is not None and s < k for s in steps)


_DESCRIPTIONS = SayingJudge()  # the embedded judge, as golden replay asks it


def names_forbid(f, item: str) -> bool:
    """The golden phrase names forbid F: one of its `matching` phrases is in it (both folded), or F is `effect say`
    and the embedded judge finds that the phrase says F's description."""
    if f.effect is None:
        return False
    if any(fold(p) in fold(item) for p in f.effect.matching if fold(p)):
        return True
    return f.effect.kind == "say" and bool(f.effect.description) and \
        _DESCRIPTIONS.describes(item, f.effect.description).verdict == "pass"


def claims_named(model: FsmModel, item: str) -> list[str]:
    """The states of the claims a golden phrase names (one of their phrases in it, folded)."""
    return [c.state for c in model.claims if any(fold(p) in fold(item) for p in c.phrases)]


def forbidden_outcome_expected(model: FsmModel, f, a, step: Step, rejected: bool, earlier: bool = False) -> bool:
    """`earlier`: the assertions are the final ones and their check of the forbid's tool speaks of an earlier call."""
    if any(names_forbid(f, item) for item in a.must_have):
        return True
    if f.target is not None and f.target in states_of(a):  # among the states the golden accepts
        return True
    if f.effect is None and f.target is None and not rejected and states_of(a) and step.before not in states_of(a):
        return True
    checks = expected_calls(model, a.tool_arguments)
    if f.effect is not None and f.effect.kind == "call" and any(tool == f.effect.tool for tool, _, _ in checks):
        if earlier:
            return False
        condition = f.effect.condition
        if condition is None:
            return True
        # A set of accepted values asserts no one value: the condition cannot be evaluated on it.
        asserted = {arg: v for tool, arg, v in checks
                    if tool == f.effect.tool and arg is not None and not isinstance(v, OneOf)}
        read = {node.name[5:] for node in condition.walk() if isinstance(node, Ref) and node.name.startswith("args.")}
        if read <= asserted.keys():
            env = dict(step.variables)
            env.update({f"args.{k}": v for k, v in asserted.items()})
            return bool(value_of(condition, env))
    return False


def forbid_checked(model: FsmModel, f, a, step: Step, rejected: bool) -> bool:
    """Rule 3: the golden asserts at this step that F's outcome did not happen."""
    if any(names_forbid(f, item) for item in a.must_not):
        return True
    if f.effect is not None and f.effect.kind == "call":
        if f.effect.tool in not_called(a):
            return True
        if f.effect.condition is not None and a.tool_arguments:
            made = [args for name, args in step.calls if name == f.effect.tool]
            read = {n.name[5:] for n in f.effect.condition.walk() if isinstance(n, Ref) and n.name.startswith("args.")}
            if len(made) == 1:
                asserted = {}
                for tool, arg, v in expected_calls(model, a.tool_arguments):
                    if arg is None or tool not in (None, f.effect.tool) or arg not in made[0] or isinstance(v, OneOf):
                        continue
                    if tool is None:
                        owner = next(name for name, args in reversed(step.calls) if arg in args)
                        if owner != f.effect.tool:
                            continue
                    asserted[arg] = v
                if read <= asserted.keys() and all(same(made[0][k], v) for k, v in asserted.items()):
                    env = dict(step.variables)
                    env.update({f"args.{k}": v for k, v in made[0].items()})
                    if not value_of(f.effect.condition, env):
                        return True
    if f.target is not None and states_of(a) and f.target not in states_of(a):
        return True
    if f.effect is None and f.target is None and step.taken is None:
        return rejected or states_of(a) == [step.before]  # the unchanged state, and only it
    return False


def judge(model: FsmModel, case: GoldenCase) -> Verdict:
    verdict = Verdict()
    tools = set(model.tools())
    everything = [t.expect for t in case.turns] + [case.final]
    if any(key in tools and value is None for a in everything for key, value in a.tool_arguments.items()):
        verdict.invalid = True
        return verdict
    ran = run_case(model, case)
    if ran is None:
        verdict.invalid = True
        return verdict
    steps, start, finished = ran
    exercised = {ids.state_id(start)}
    verified: set[str] = set()
    all_calls = [(k, name, args) for k, s in enumerate(steps, start=1) for name, args in s.calls]
    for k, step in enumerate(steps, start=1):
        exercised |= step.elements | {ids.forbidden_id(f) for f in step.forbids}
        turn = case.turns[k - 1]
        last = finished and k == len(case.turns)
        checks = [(turn.expect, [(k, n, a) for n, a in step.calls])] + ([(case.final, all_calls)] if last else [])
        for a, scope in checks:
            if contradicts(model, a, step, scope, turn.rejected and a is turn.expect):
                verdict.contradicted = True
            if any(claimed != step.after for item in a.must_have for claimed in claims_named(model, item)):
                verdict.contradicted = True  # the golden expects a claim while the model is elsewhere
        for f in step.forbids:
            tool = f.effect.tool if f.effect is not None and f.effect.kind == "call" else None
            # checks[1], when there is one, holds the final assertions
            if any(forbidden_outcome_expected(model, f, a, step, turn.rejected, position > 0 and tool is not None
                                              and resolved_before(model, a, tool, all_calls, k))
                   for position, (a, _) in enumerate(checks)):
                verdict.expected_forbidden.add((k, ids.forbidden_id(f)))
            if any(forbid_checked(model, f, a, step, turn.rejected) for a, _ in checks):
                verified.add(ids.forbidden_id(f))
        outcome_checked = any(a.state is not None or a.variables or a.discarded or a.tool_arguments or not_called(a)
                              for a, _ in checks)
        if outcome_checked or (turn.rejected and step.taken is None):
            verified |= step.elements
    if finished and steps:
        final = case.final
        for tool, arg, _ in expected_calls(model, final.tool_arguments):  # rule 2: the step that made the call
            if arg is None:
                made = [k for k, name, _ in all_calls if name == tool]
                found = made[-1] if made else None
            else:
                hit = latest(all_calls, tool, arg)
                found = hit[0] if hit else None
            if found is not None:
                verified |= steps[found - 1].elements
        for step in steps[:-1]:  # final must_not / must_not_call speak of every step
            for f in step.forbids:
                if any(names_forbid(f, i) for i in final.must_not) or (
                        f.effect is not None and f.effect.kind == "call" and f.effect.tool in not_called(final)):
                    verified.add(ids.forbidden_id(f))
    if verdict.contradicted or verdict.expected_forbidden:
        verified = set()  # rule 4
    verdict.statuses = {e: VERIFIED if e in verified else EXERCISED for e in exercised | verified}
    return verdict


# ------------------------------------------------------------------ random models and goldens

TOOLS = ("notify", "send")


def random_expr(rng: random.Random, params: list[str], depth: int = 0) -> str:
    if depth < 2 and rng.random() < 0.35:
        op = rng.choice([" and ", " or "])
        return f"({random_expr(rng, params, depth + 1)}{op}{random_expr(rng, params, depth + 1)})"
    if depth < 2 and rng.random() < 0.1:
        return f"not {random_expr(rng, params, depth + 1)}"
    choices = [f"n {rng.choice(['<', '<=', '==', '!=', '>', '>='])} {rng.randint(0, 3)}", "flag", "not flag",
               "email == none", "email != none", f"mode == {rng.choice(['a', 'b'])}", "mode in {a, b}",
               "n + 1 > 2", "email == discarded.email"]
    if "x" in params:
        choices += [f"x == {rng.randint(0, 3)}", "x > n", "x + n < 4"]
    if "v" in params:
        choices += ["v == email", "v != discarded.email"]
    return rng.choice(choices)


EVENTS = {"tick": [], "num": ["x"], "give": ["v"]}
PARAM_DECL = {"tick": "tick", "num": "num(x: int[0..3])", "give": "give(v: string)"}


def random_model(rng: random.Random) -> str:
    states = [f"s{i}" for i in range(rng.randint(2, 4))]
    lines = ["fsm m {", "  var n: int[0..3] = 0", "  var flag: bool = false", "  var mode: enum{a, b}? = none",
             "  var email: string? = none"]
    lines += [f"  state {s}{' initial' if i == 0 else ''}" for i, s in enumerate(states)]
    lines += [f"  event {decl}" for decl in PARAM_DECL.values()] + ["  event jump", "  event drop"]
    # discarded.email exists, and send/notify are called somewhere (a forbid's condition needs the tool's arguments).
    lines.append(f"  {rng.choice(states)} -> {rng.choice(states)} on drop / discard email, call send(to = email), "
                 "call notify(level = n, meta.to = email)")
    for _ in range(rng.randint(3, 8)):
        event = rng.choice(list(EVENTS))
        params = EVENTS[event]
        guard = f" [{random_expr(rng, params)}]" if rng.random() < 0.6 else ""
        actions = []
        for _ in range(rng.randint(0, 3)):
            actions.append(rng.choice(["n := 1", "n := 0", "flag := true", "flag := not flag", "mode := a",
                                       "discard email", "call notify(level = n)", "call send(to = email)",
                                       "call notify(level = n, meta.to = email)"]
                                      + (["email := v", "call send(to = v)"] if "v" in params else [])
                                      + (["n := x"] if "x" in params else [])))
        action = (" / " + ", ".join(actions)) if actions else ""
        head = f"{event}({', '.join(params)})" if params else event
        lines.append(f"  {rng.choice(states)} -> {rng.choice(states)} on {head}{guard}{action}")
    for _ in range(rng.randint(1, 4)):
        source, event = rng.choice(states + ["any"]), rng.choice(list(EVENTS) + ["jump", "*"])
        guard = f" [{random_expr(rng, [])}]" if rng.random() < 0.3 else ""
        shape = rng.randrange(5)
        if shape == 0:
            lines.append(f"  forbid {source} on {event}{guard} effect call {rng.choice(TOOLS)}")
        elif shape == 1:
            lines.append(f"  forbid {source} on {event}{guard} effect call send [args.to == discarded.email]"
                         + (' matching "leak"' if rng.random() < 0.5 else ""))
        elif shape == 2:
            lines.append(f"  forbid {source} on {event}{guard} -> {rng.choice(states)}")
        elif shape == 3 and source != "any" and event != "*":
            lines.append(f"  forbid {source} on {event}{guard}")
        elif rng.random() < 0.5:
            lines.append(f'  forbid {source} on {event}{guard} effect say "the secret" matching "secret"')
        else:  # a description only: the embedded judge decides which golden phrases name it
            lines.append(f'  forbid {source} on {event}{guard} effect say "tells the secret"')
    if rng.random() < 0.5:
        lines.append(f'  claim {rng.choice(states)} matching "done deal"')
    lines.append("}")
    return "\n".join(dict.fromkeys(lines)) + "\n"  # a repeated forbid line would be a duplicate id


def random_args(rng: random.Random, event: str) -> dict:
    return {"x": {"x": rng.randint(0, 3)}, "v": {"v": rng.choice(["a@x", "b@x"])}}.get(
        (EVENTS.get(event) or [None])[0], {})


def random_assertions(rng: random.Random, model: FsmModel, step: Step | None, all_calls: list, final: bool) -> dict:
    out: dict = {}
    truth_state = step.after if step else model.initial_state
    variables = step.variables if step else {}
    if rng.random() < 0.4:
        state = truth_state if rng.random() < 0.7 else rng.choice(list(model.states))
        if rng.random() < 0.2:  # a set of accepted states (`state: [a, b]`)
            state = [state, rng.choice(list(model.states) + ["nowhere"])]
        out["state" if final else "assert_state"] = {"state": state}
    if rng.random() < 0.3 and variables:
        name = rng.choice(["n", "flag", "mode", "email"])
        value = variables[name] if rng.random() < 0.7 else rng.choice([0, 1, True, False, "a", "a@x", None])
        if rng.random() < 0.2:  # a set of accepted values (`{in: [...]}`)
            value = {"in": [value, rng.choice([0, 1, True, "a", "a@x", None])]}
        target = out.setdefault("state" if final else "assert_state", {})
        if isinstance(target, dict):
            target[name] = value
    calls = (all_calls if final else (step.calls if step else []))
    roll = rng.random()
    if roll < 0.2 and calls:
        tool, args = rng.choice(calls)
        arg = rng.choice(list(args))
        if "meta.to" in args and rng.random() < 0.6:  # the field of a structured argument, when the call has one
            arg = "meta.to"
        value = args[arg] if rng.random() < 0.7 else "zzz"
        if rng.random() < 0.15:
            value = {"in": [value, "zzz"]}
        head, dot, field = arg.partition(".")
        if dot and rng.random() < 0.5:  # a field of a structured argument, written nested
            out["tool_arguments"] = {tool: {head: {field: value}}}
        elif rng.random() < 0.2:  # written as one dotted path
            out["tool_arguments"] = {f"{tool}.{arg}": value}
        else:
            out["tool_arguments"] = {tool: {arg: value}} if rng.random() < 0.7 else {arg: value}
    elif roll < 0.3:
        out["tool_arguments"] = {rng.choice(TOOLS): rng.choice([{}, {"to": "a@x"}, {"level": 0}])}
    elif roll < 0.32:
        out["tool_arguments"] = {rng.choice(TOOLS): None}
    if rng.random() < 0.25:
        out["must_not_call"] = rng.sample(TOOLS, rng.randint(1, 2))
    if rng.random() < 0.2:
        out["must_not"] = [rng.choice(["the secret", "a leak", "nothing", "TELL the  Secret", "ＳＥＣＲＥＴ"])]
    if rng.random() < 0.1:
        out["must_have"] = [rng.choice(["tell the secret", "it is a DONE  deal"])]
    return out


def random_case(rng: random.Random, model: FsmModel, number: int) -> dict:
    raw: dict = {"id": f"c{number}"}
    if rng.random() < 0.2:
        raw["precondition"] = {"state": rng.choice(list(model.states)), "n": rng.randint(0, 3),
                               "email": rng.choice([None, "a@x"])}
    turns = []
    for _ in range(rng.randint(1, 5)):
        event = rng.choice(list(EVENTS) + ["jump", "drop"] + (["nope"] if rng.random() < 0.03 else []))
        turns.append({"event": event, "args": random_args(rng, event)})
    raw["turns"] = turns
    probe = parse_case(raw, "judge.jsonl", number)
    ran = run_case(model, probe)
    steps = ran[0] if ran else []
    all_calls = [c for s in steps for c in s.calls]
    for k, turn in enumerate(turns):
        step = steps[k] if k < len(steps) else None
        if rng.random() < 0.5:
            turn.update(random_assertions(rng, model, step, [], final=False))
        if rng.random() < 0.1:
            turn["rejected"] = True
    if rng.random() < 0.5:
        raw["assertions"] = random_assertions(rng, model, steps[-1] if steps else None, all_calls, final=True)
    return raw


def campaign(cases: int, seed: int, per_model: int = 8) -> Campaign:
    """Judge and `mbt coverage` on `cases` random goldens over random models: statuses, findings, contradictions."""
    rng = random.Random(seed)
    result = Campaign("fsm")
    with tempfile.TemporaryDirectory() as folder:
        number = 0
        while result.cases < cases:
            path = Path(folder) / f"m{number}.fsm"
            path.write_text(random_model(rng), encoding="utf-8")
            (model,) = load_models([str(path)])[1]
            goldens = []
            for _ in range(min(per_model, cases - result.cases)):
                number += 1
                goldens.append(parse_case(random_case(rng, model, number), "judge.jsonl", number))
            report = measure([model], GoldenSet(cases=goldens))
            measured = statuses_by_case(report, goldens)
            for case in goldens:
                verdict = judge(model, case)
                judged = dict(verdict.statuses)
                got = dict(measured[case.id])
                # Findings and validity are compared as pseudo-elements beside the statuses.
                for turn, element in verdict.expected_forbidden:
                    judged[f"expects-forbidden:{turn}:{element}"] = "finding"
                for f in getattr(report, "forbidden_expected", []):  # absent before mbt reported it
                    if f.case == case.id:
                        got[f"expects-forbidden:{f.turn}:{f.element}"] = "finding"
                judged["contradicted"] = str(verdict.contradicted)
                got["contradicted"] = str(any(c.case == case.id for c in report.contradictions))
                judged["invalid"] = str(verdict.invalid)
                got["invalid"] = str(any(f"`{case.id}`" in i.message for i in report.invalid_cases))
                result.compare(f"{path.name} {case.id}", judged, got)
    return result
