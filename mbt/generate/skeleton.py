"""Skeletons: a witness run with the outcome of every step computed by mbt's replay engine, ready to be written.

A skeleton is the neutral form both writers read: the golden-case stub (seed 000's JSONL format, replayed on the model
before it is written, so it verifies what it claims) and the pytest test (run in-process against the reference
machine before it is written, so it passes on the model it came from).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

from mbt.elements.base import Element
from mbt.engine import fsm as engine
from mbt.engine.fsm import CompiledFsm
from mbt.generate.driver import Driver
from mbt.generate.words import Words
from mbt.goldens.cases import GoldenCase, Turn, parse_case
from mbt.goldens.replay_fsm import FsmReplayer
from mbt.goldens.results import CaseRun
from mbt.model.expr import And, Arith, Compare, EnumLit, Expr, Lit, Member, Not, Or, Ref
from mbt.model.fsm import Forbid, FsmModel

TODO_PREFIX = "TODO(mbt):"


@dataclass
class ForbidCheck:
    """What a test asserts did not happen at the step a forbidden element applies to."""

    element: str
    kind: str  # "state" (a forbidden target), "refused" (a forbidden event), "call", "say"
    description: str
    target: str | None = None
    tool: str | None = None
    condition: Any = None  # the effect's condition as data (support.evaluate reads it), None: any call of the tool
    phrases: list[str] = field(default_factory=list)

    def data(self) -> dict[str, Any]:
        out: dict[str, Any] = {"element": self.element, "kind": self.kind}
        if self.target is not None:
            out["state"] = self.target
        if self.tool is not None:
            out["tool"] = self.tool
            out["when"] = self.condition
        if self.phrases:
            out["phrases"] = list(self.phrases)
        return out


@dataclass
class Step:
    """One event of a skeleton and what the model says it does."""

    event: str
    args: dict[str, Any]
    utterance: bool  # the event is something a user says (the model binds text or intents to it)
    accepted: bool
    transition: str | None
    state: str
    variables: dict[str, Any]
    discarded: dict[str, Any]
    changed: dict[str, Any]  # variables (and `discarded.X`) whose value this step changed
    calls: list[tuple[str, dict[str, Any]]]
    forbid: ForbidCheck | None = None
    user: str | None = None  # the words a user says for the event, where a binding of the model gives them
    observable: bool = True  # a run can show the event: its words, or a tool result a `bind tool` takes to it
    said: dict[str, list[str]] = field(default_factory=dict)  # must_not / must_have phrases of what is said

    def expect(self) -> dict[str, Any]:
        out = {"state": self.state, "accepted": self.accepted, "variables": dict(self.variables),
               "discarded": dict(self.discarded), "calls": [[tool, dict(args)] for tool, args in self.calls]}
        if self.said:
            out["said"] = {k: list(v) for k, v in self.said.items()}
        return out


@dataclass
class Skeleton:
    """A generated test: covers `elements` (the first is the one it was made for)."""

    name: str  # a Python identifier, unique in its module
    case_id: str
    model: FsmModel
    elements: list[Element]
    precondition: dict[str, Any]
    steps: list[Step]
    exercised_by: list[str] = field(default_factory=list)  # goldens that reach the element without checking it

    @property
    def element(self) -> Element:
        return self.elements[0]


class SkeletonBuilder:
    """Builds and checks skeletons for one model (one compiled replay engine for all of them)."""

    def __init__(self, model: FsmModel, elements: list[Element]):
        self.model = model
        self.elements = elements
        self.by_id = {e.id: e for e in elements}
        self.replayer = FsmReplayer(CompiledFsm(model, elements))
        self.utterances = {b.event for b in model.bindings}
        self.forbids = {f"forbidden:{f.key}": f for f in model.forbids}
        self.words = Words(model)

    # ------------------------------------------------------------ building
    def build(self, name: str, case_id: str, element_ids: list[str], precondition: dict[str, Any],
              events: list[tuple[str, dict[str, Any]]], forbid_at: dict[int, str] | None = None) -> Skeleton:
        """The outcome of each event from the model; `forbid_at` maps step indexes to forbidden element ids."""
        run = self.replay_events(precondition, events)
        start_state, start_vars = self._start(precondition)
        said = self._said(precondition, events)
        steps: list[Step] = []
        before_disc = {k[10:]: v for k, v in start_vars.items() if k.startswith("discarded.")}
        before_vars = {k: v for k, v in start_vars.items() if not k.startswith("discarded.")}
        for k, ((event, args), snap) in enumerate(zip(events, run.snapshots)):
            changed = {n: v for n, v in snap.variables.items() if not _same(before_vars.get(n), v)}
            changed.update({f"discarded.{n}": v for n, v in snap.discarded.items() if not _same(before_disc.get(n), v)})
            step = Step(event=event, args=dict(args), utterance=event in self.utterances,
                        accepted=snap.transition is not None, transition=snap.transition, state=snap.state,
                        variables=dict(snap.variables), discarded=dict(snap.discarded), changed=changed,
                        calls=[(c.tool, dict(c.args)) for c in snap.calls], user=self.words.text(event, args),
                        observable=event in self.words.observable, said=said[k])
            forbidden = (forbid_at or {}).get(k)
            if forbidden is not None:
                step.forbid = self.forbid_check(self.forbids[forbidden])
            steps.append(step)
            before_vars, before_disc = snap.variables, snap.discarded
        elements = [self.by_id[e] for e in element_ids]
        return Skeleton(name=name, case_id=case_id, model=self.model, elements=elements,
                        precondition=dict(precondition), steps=steps)

    def _said(self, precondition: dict[str, Any], events: list[tuple[str, dict[str, Any]]]) -> list[dict]:
        """Per step, what the system must not say after it (the phrases of the `say` forbids the step exercises, and
        of the claims of other states: a premature success) and what it must say (a claim of the state it enters),
        as `mbt runs` judges an assistant's texts (docs/runs.md)."""
        c = self.replayer.c
        found = engine.start(c, precondition)
        if isinstance(found, str):
            raise ValueError(found)
        state, variables = found
        prev = None
        out = []
        for number, (event, given) in enumerate(events, start=1):
            args = engine.arguments(c, event, given)
            if isinstance(args, str):
                raise ValueError(args)
            done = engine.step(c, state, variables, event, args, prev, number)
            must_not = [p for cf in done.forbids if cf.f.effect is not None and cf.f.effect.kind == "say"
                        for p in cf.f.effect.matching]
            must_not += [p for claim in self.model.claims if claim.state != done.state for p in claim.phrases]
            must_have = [p for claim in self.model.claims
                         if done.taken is not None and claim.state == done.state != state for p in claim.phrases]
            phrases = {"must_not": list(dict.fromkeys(must_not)), "must_have": must_have}
            out.append({k: v for k, v in phrases.items() if v})
            state, prev = done.state, done.taken or prev
        return out

    def replay_events(self, precondition: dict[str, Any], events: list[tuple[str, dict[str, Any]]]) -> CaseRun:
        case = GoldenCase(id="witness", precondition=dict(precondition),
                          turns=[Turn(event=e, args=dict(a)) for e, a in events])
        run = self.replayer.replay(case, keep_snapshots=True)
        if run.invalid or run.unbound or len(run.snapshots) != len(events):
            raise ValueError(run.invalid or (run.unbound[0].reason if run.unbound else "replay stopped early"))
        return run

    def _start(self, precondition: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        state, variables = self.replayer.c.initial_config()
        for key, value in precondition.items():
            if key == "state":
                state = value
            else:
                variables[key] = value
        return state, variables

    def forbid_check(self, f: Forbid) -> ForbidCheck:
        element = f"forbidden:{f.key}"
        effect = f.effect
        if effect is None:
            if f.target is None:
                return ForbidCheck(element, "refused", f"`{f.event or 'the event'}` must be refused here")
            return ForbidCheck(element, "state", f"must not move to `{f.target}`", target=f.target)
        if effect.kind == "say":
            return ForbidCheck(element, "say", effect.description or "", phrases=list(effect.matching))
        return ForbidCheck(element, "call", f"must not call `{effect.tool}`"
                           + (f" with {effect.condition.text()}" if effect.condition is not None else ""),
                           tool=effect.tool, condition=expr_data(effect.condition) if effect.condition else None,
                           phrases=list(effect.matching))

    # ------------------------------------------------------------ the golden-case stub
    def stub(self, sk: Skeleton) -> dict[str, Any]:
        """The skeleton as a golden case in the native format: events, arguments and expectations from the model,
        the user's words from the model's bindings, or a marked TODO where they give none."""
        e = sk.element
        case: dict[str, Any] = {"id": sk.case_id, "model": self.model.name}
        if self.model.contracts:
            case["contract"] = self.model.contracts[0]
        case["severity"] = e.severity.value
        case["element"] = e.id
        if len(sk.elements) > 1:
            case["also_covers"] = [x.id for x in sk.elements[1:]]
        if e.span is not None:
            case["source"] = {"cites": e.span.describe(), "status": e.status.value}
        if sk.precondition:
            case["precondition"] = dict(sk.precondition)
        turns = []
        for step in sk.steps:
            turn: dict[str, Any] = {}
            if step.utterance:
                turn["user"] = step.user if step.user is not None else todo_text(step)
            turn["event"] = step.event
            if step.args:
                turn["args"] = dict(step.args)
            assert_state: dict[str, Any] = {"state": step.state}
            assert_state.update(step.changed)
            turn["assert_state"] = assert_state
            if not step.accepted:
                turn["rejected"] = True
            latest: dict[str, dict[str, Any]] = {}
            for tool, args in step.calls:
                latest[tool] = dict(args)  # a golden checks the latest call of a tool
            if latest:
                turn["tool_arguments"] = latest
            if step.forbid is not None and step.forbid.phrases:
                turn["must_not"] = [must_not_item(step.forbid)]
            if step.forbid is not None and step.forbid.kind == "call" and step.forbid.tool not in latest:
                turn["must_not_call"] = [step.forbid.tool]  # the canonical check that the forbidden call is absent
            turns.append(turn)
        case["turns"] = turns
        return case

    def check_stub(self, sk: Skeleton, stub: dict[str, Any]) -> str | None:
        """Replay the stub exactly as `mbt coverage` would read it; None when it verifies every element it claims."""
        try:
            case = parse_case(stub, "generated", 1)
        except Exception as err:  # noqa: BLE001 - any failure here is an mbt bug, reported as such
            return f"the golden-case stub is not a valid case ({err})"
        run = self.replayer.replay(case)
        index = self.replayer.c.index
        problems = [c.message for c in run.contradictions] + [d.message for d in run.divergences]
        problems += [u.reason for u in run.unbound] + ([run.invalid] if run.invalid else [])
        if problems:
            return "replaying the stub on the model: " + "; ".join(problems)
        missing = [e.id for e in sk.elements if index[e.id] not in run.verified]
        if missing:
            return "the stub does not verify " + ", ".join(missing)
        return None

    # ------------------------------------------------------------ the pytest test, run on the reference machine
    def check_test(self, sk: Skeleton, adapter) -> str | None:
        """Run the test's steps through the driver on `adapter` (the reference machine); None when they pass."""
        driver = Driver(adapter)
        try:
            driver.start(sk.precondition)
            for step in sk.steps:
                driver.step(step.event, step.args, step.expect(), step.forbid.data() if step.forbid else None,
                            step.user)
        except AssertionError as err:
            return str(err)
        return None


def expr_data(expr: Expr) -> Any:
    """An expression as plain data (lists, strings, numbers) that the generated tests' support module evaluates:
    generated code never contains model text as code."""
    if isinstance(expr, Lit):
        return ["lit", expr.value]
    if isinstance(expr, EnumLit):
        return ["lit", expr.value]
    if isinstance(expr, Ref):
        return ["ref", expr.name]
    if isinstance(expr, Not):
        return ["not", expr_data(expr.operand)]
    if isinstance(expr, (And, Or)):
        return ["and" if isinstance(expr, And) else "or", *[expr_data(i) for i in expr.items]]
    if isinstance(expr, Compare):
        return [expr.op, expr_data(expr.left), expr_data(expr.right)]
    if isinstance(expr, Member):
        return ["not in" if expr.negated else "in", expr_data(expr.operand), [expr_data(i) for i in expr.items]]
    if isinstance(expr, Arith):
        return [expr.op, expr_data(expr.left), expr_data(expr.right)]
    raise TypeError(f"cannot write {type(expr).__name__} as data")


def todo_text(step: Step) -> str:
    args = ", ".join(f"{name} = {value!r}" for name, value in step.args.items())
    return f"{TODO_PREFIX} the words a user says for `{step.event}`" + (f" ({args})" if args else "")


def must_not_item(check: ForbidCheck) -> str:
    """A must_not entry the replay matches to the forbid (it contains the first `matching` phrase)."""
    phrase = check.phrases[0]
    if check.description and phrase.casefold() in check.description.casefold():
        return check.description
    return f"{check.description} ({phrase})" if check.description else phrase


def test_name(element_id: str, taken: set[str]) -> str:
    """A readable, unique Python identifier for an element's test."""
    slug = re.sub(r"[^0-9A-Za-z]+", "_", element_id).strip("_").lower()[:60].rstrip("_")
    digest = hashlib.sha256(element_id.encode("utf-8")).hexdigest()[:8]
    name = f"test_{slug}_{digest}" if slug else f"test_{digest}"
    while name in taken:
        name += "_"
    taken.add(name)
    return name


def _same(a: Any, b: Any) -> bool:
    return a == b and type(a) is type(b)
