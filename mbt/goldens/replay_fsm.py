"""Replays golden cases on an FSM through the engine's step (mbt/engine/fsm.py) and judges each golden's assertions:
which elements a case exercised and verified, and where it contradicts the model.

Which forbid or claim a golden's `must_not` / `must_have` phrase names is decided by the judges (mbt.judges.sayings,
the decision the run judge and `mbt eval` share): one of the element's phrases in the golden's, both folded, else
the embedded judge on a `say` forbid's description — deterministic and offline (docs/coverage-rules/fsm.md)."""

from __future__ import annotations

import functools
from typing import Any

from mbt.argpaths import lookup
from mbt.engine import fsm as engine
from mbt.engine.fsm import CompiledForbid, CompiledFsm, CompiledTransition, Slot, Step, ToolCallMade
from mbt.goldens.binding import Binder
from mbt.goldens.cases import _NO_EXPECTATIONS, Assertions, GoldenCase, OneOf, Turn, tool_checks
from mbt.goldens.cells import CellError, Declared, declared_types, typed_case
from mbt.goldens.results import CaseRun, Contradiction, Divergence, ForbiddenExpected, Note, UnboundTurn
from mbt.judges.sayings import Saying, SayingJudge
from mbt.model.fsm import Claim, Forbid, FsmModel


def forbid_saying(f: Forbid, element_id: str) -> Saying | None:
    """What a forbid says, for the judges: its `matching` phrases and, for `effect say`, its description; None for a
    forbid that speaks of no saying (no phrase and no `say` effect)."""
    effect = f.effect
    if effect is None:
        return None
    description = (effect.description or "") if effect.kind == "say" else ""
    if not effect.matching and not description:
        return None
    return Saying(element_id, f"forbid `{element_id}`", tuple(effect.matching), description)


def claim_ids(model: FsmModel) -> list[str]:
    """Each claim's id in reports, `claim:STATE` (a second claim of the same state `claim:STATE#2`): claims are no
    coverage criterion, but `mbt eval --model` reports them as elements verified by judged answers."""
    seen: dict[str, int] = {}
    out = []
    for claim in model.claims:
        seen[claim.state] = seen.get(claim.state, 0) + 1
        out.append(f"claim:{claim.state}" + (f"#{seen[claim.state]}" if seen[claim.state] > 1 else ""))
    return out


def claim_saying(claim: Claim, element_id: str) -> Saying:
    """What a claim says: its phrases and nothing else (a claim has no description)."""
    return Saying(element_id, f"claim `{element_id}`", tuple(claim.phrases))


class Named:
    """What one golden phrase names: the forbids (element indices) and the claims (states) it says."""

    __slots__ = ("forbids", "claims")

    def __init__(self, forbids: frozenset[int], claims: tuple[str, ...]):
        self.forbids = forbids
        self.claims = claims

# ------------------------------------------------------------------ replay of one case


class FsmReplayer:
    def __init__(self, compiled: CompiledFsm):
        self.c = compiled
        self.model = compiled.model
        self.binder = Binder(compiled.model)
        self.types = {name: v.type for name, v in compiled.model.variables.items()}
        # What a `must_not` / `must_have` phrase can name: a forbid that speaks of saying, or a claim; the judges
        # decide (rules on the phrases, then the embedded judge on a description), once per distinct phrase.
        self.sayings = SayingJudge()
        self.forbid_sayings = [(cf.element, saying) for cf in compiled.forbids
                               for saying in [forbid_saying(cf.f, cf.element_id)] if saying is not None]
        self.claims = [(claim.state, claim_saying(claim, id_))
                       for claim, id_ in zip(compiled.model.claims, claim_ids(compiled.model))]
        self._named: dict[str, Named] = {}

    def share_names(self, other: FsmReplayer) -> None:
        """Use `other`'s decisions of what a phrase names (a mutant's replayer: the same forbids and claims, or
        fewer forbids, which a step then never asks about)."""
        self.sayings, self._named = other.sayings, other._named

    def names(self, phrase: str) -> Named:
        """The forbids and claims a golden's phrase names (mbt.judges.sayings: the phrase says what they describe)."""
        found = self._named.get(phrase)
        if found is None:
            says = self.sayings.says
            found = Named(frozenset(element for element, saying in self.forbid_sayings
                                    if says(phrase, saying).verdict == "pass"),
                          tuple(dict.fromkeys(state for state, saying in self.claims
                                              if says(phrase, saying).verdict == "pass")))
            self._named[phrase] = found
        return found

    @functools.cached_property
    def declared(self) -> Declared:
        """The types a sheet's cells are read by (computed when the first sheet case comes)."""
        return declared_types(self.model)

    # ---- entry point
    def replay(self, case: GoldenCase, keep_snapshots: bool = False) -> CaseRun:
        if case.sheet_cells:  # a sheet's values are text until this model's declarations type them
            try:
                case = typed_case(case, self.declared)
            except CellError as err:
                run = CaseRun(case)
                run.invalid = str(err)
                return run
        run = CaseRun(case)
        run.invalid = self._assertion_problem(case)
        start = self._start(case, run) if run.invalid is None else None
        if start is None:
            return run
        state, variables = start
        self._phrase_notes(case, run)
        c = self.c
        if keep_snapshots:
            run.start = engine.snapshot(state, variables)
        run.out_of_range = not c.initial_in_range
        exercised = run.exercised
        exercised.add(c.state_el[state])
        final = case.final
        # What the final assertions need of the earlier turns is kept only when they ask for it: the steps (their
        # forbids, for a final must_not / must_not_call) and each turn's elements (for a final tool_arguments check).
        final_quiet = final is _NO_EXPECTATIONS or final.empty()
        final_must_have = bool(final.must_have)
        keep_steps = bool(final.must_not or final.must_not_call)
        step_elements = run.step_elements if final.tool_arguments else None
        prev: CompiledTransition | None = None
        steps: list[Step] = []
        all_calls: list[ToolCallMade] = []
        turns = case.turns
        count = len(turns)
        last_turn = count
        first_intent = final.intent
        param_types = c.param_types
        types = self.types
        step, arguments = engine.step, engine.arguments
        quiet_turn = _NO_EXPECTATIONS
        number = 0
        for turn in turns:
            number += 1
            event = turn.event
            if event is not None and event in param_types:
                raw_args = turn.args  # an explicit, known event binds as itself (Binder.bind, without the copy)
            else:
                bound = self.binder.bind(turn, first_intent if number == 1 else None)
                if isinstance(bound, str):
                    run.unbound.append(UnboundTurn(case=case.id, where=case.where, model=self.model.name,
                                                   turn=number, user=turn.user,
                                                   reason=bound + "; replay of this case stops here"))
                    last_turn = number - 1
                    break
                event, raw_args = bound.event, bound.args
            if raw_args or param_types[event]:
                args = arguments(c, event, raw_args)
                if isinstance(args, str):  # why the arguments do not fit the event
                    run.unbound.append(UnboundTurn(case=case.id, where=case.where, model=self.model.name,
                                                   turn=number, user=None, reason=args))
                    last_turn = number - 1
                    break
            else:
                args = {}
            done = step(c, state, variables, event, args, prev, number)
            # The step's indices were precomputed with the slot: recording them is a set update, no list built.
            exercised.update(done.elements)
            taken = done.taken
            if done.forbid_els:
                exercised.update(done.forbid_els)
            if taken is not None:
                state = done.state
                # Values change only by assignments and discards: while all are in range, only those need a look.
                if run.out_of_range:
                    self._check_ranges(variables, run, number, self.model.variables)
                elif taken.checked:  # the variables set to a constant of their type need no look
                    for name in taken.checked:
                        if not types[name].admits(variables[name]):  # the notes are written by _check_ranges
                            self._check_ranges(variables, run, number, taken.assigned)
                            break
                prev = taken
                if done.calls:
                    all_calls.extend(done.calls)
            if keep_steps:
                steps.append(done)
            if step_elements is not None:
                step_elements[number] = done.elements
            if keep_snapshots:
                run.snapshots.append(engine.snapshot(state, variables, done, args))
            expect = turn.expect
            last = number == count
            if expect is quiet_turn and not last and not turn.rejected:
                # Nothing asserted here (the common turn): nothing to contradict or verify; a refusal diverges.
                if taken is None:
                    run.divergences.append(self._divergence(case, number, done))
                continue
            quiet = expect is quiet_turn or expect.empty()
            checks = [expect, final] if last else [expect]
            # Whether the turn's forbids can be verified or expected here at all (most asserted turns only name a
            # state, which says nothing of a forbid without a target): else none of them needs a look.
            forbids = done.forbids and _forbids_judged(checks, c._slots[(done.state_before, event)], taken is None)
            if forbids and (expect.must_have or not quiet or (last and (not final_quiet or final_must_have))):
                self._expects_forbidden(done, checks, turn.rejected, variables, number, run, all_calls)
            if self.claims and (expect.must_have or (last and final_must_have)):
                self._claims_expected(checks, state, number, run)
            if quiet and not turn.rejected and (final_quiet or not last):
                if taken is None:
                    run.divergences.append(self._divergence(case, number, done))
                continue
            self._judge_turn(turn, checks, state, variables, done, all_calls, number, run, bool(forbids))
        # Final must_not / must_not_call speak of the whole conversation: they verify earlier forbids too.
        if last_turn == count and steps and keep_steps:
            for done in steps[:-1]:
                for f in done.forbids:
                    if self._forbid_verified_by_final(f, final):
                        run.verified.add(f.element)
        if run.contradictions or run.forbidden_expected:
            # A golden that contradicts the model, or expects what it forbids, verifies nothing on it: one of
            # the two is wrong, and until a human decides which, none of its checks can be trusted.
            run.verified.clear()
        return run

    def _judge_turn(self, turn: Turn, checks: list[Assertions], state: str, variables: dict, step: Step,
                    all_calls: list[ToolCallMade], number: int, run: CaseRun, judge_forbids: bool = True) -> None:
        """A turn that asserts something (its expectations, and the final ones after the last turn): contradictions,
        divergences, and the elements it verifies (`judge_forbids` False: no forbid of the step can be verified)."""
        agree, checked = self._check(checks, state, variables, step, all_calls, number, run)
        case = run.case
        rejected = turn.rejected
        verified = run.verified
        forbids = step.forbids if judge_forbids else ()
        if step.taken is None:
            forbids_verified = [f for f in forbids if self._forbid_verified(f, checks, step, rejected, variables)]
            if not (rejected or forbids_verified or any(a.state is not None and a.state == step.state_before
                                                        for a in checks)):
                run.divergences.append(self._divergence(case, number, step))
            if agree and (rejected or checked):
                verified.update(step.elements)
            for f in forbids_verified:
                verified.add(f.element)
            return
        if rejected:
            run.contradictions.append(Contradiction(
                case=case.id, where=case.where, model=self.model.name, turn=number, path="rejected",
                expected=f"`{step.event}` refused in `{step.state_before}`", actual=f"transition {step.taken.t.key}",
                message=f"the golden expects `{step.event}` to be refused, the model takes {step.taken.t.key}"))
            agree = False
        if agree and checked:
            verified.update(step.elements)
        for f in forbids:
            if self._forbid_verified(f, checks, step, rejected, variables):
                verified.add(f.element)

    def _assertion_problem(self, case: GoldenCase) -> str | None:
        """Assertions whose meaning is unclear make the case invalid: `tool_arguments: {TOOL: null}`."""
        tools = self.c.tools
        if not tools:
            return None
        number = 0
        for turn in case.turns:  # only turns that assert tool arguments need a look (most assert none)
            number += 1
            if turn.expect.tool_arguments:
                problem = _null_tool_arguments(f"turn {number}", turn.expect, tools)
                if problem is not None:
                    return problem
        return _null_tool_arguments("final", case.final, tools) if case.final.tool_arguments else None

    def _phrase_notes(self, case: GoldenCase, run: CaseRun) -> None:
        """A note for each `must_not` / `must_have` phrase that names no forbid of the model: golden replay checks
        what is said only through the forbids' `matching` phrases, so such a phrase is checked by nothing."""
        number = 0
        for turn in case.turns:
            number += 1
            expect = turn.expect
            if expect is not _NO_EXPECTATIONS and (expect.must_not or expect.must_have):
                self._unmatched_phrases(expect, run, number)
        if case.final.must_not or case.final.must_have:
            self._unmatched_phrases(case.final, run, None)

    def _unmatched_phrases(self, a: Assertions, run: CaseRun, turn: int | None) -> None:
        what = "forbid or claim" if self.claims else "forbid"
        for key, items in (("must_not", a.must_not), ("must_have", a.must_have)):
            for item in items:
                named = self.names(item)
                if not (named.forbids or named.claims):
                    self._note(run, turn, turn or 0, f"`{key}` {_quoted(item)} names no {what} of the model "
                                                     "(not checked)")

    def _claims_expected(self, checks: list[Assertions], state: str, number: int, run: CaseRun) -> None:
        """A `must_have` phrase naming a claim expects the assistant to claim its state: a contradiction while the
        model is in another state (a premature success, which `mbt runs` reports on observed runs)."""
        for i, a in enumerate(checks):
            for item in a.must_have:
                for claimed in self.names(item).claims:
                    if claimed != state:
                        self._contradict(run, number if i == 0 else None, number, "must_have", claimed, state,
                                         f"golden expects the assistant to say {_quoted(item)}, which claims "
                                         f"`{claimed}`, while the model is in `{state}` (a premature success)")

    def _divergence(self, case: GoldenCase, number: int, step: Step) -> Divergence:
        return Divergence(case=case.id, where=case.where, model=self.model.name, turn=number, state=step.state_before,
                          event=step.event,
                          message=f"the model does not allow `{step.event}` in state `{step.state_before}`, "
                                  "and the golden does not treat it as refused")

    # ---- start configuration
    def _start(self, case: GoldenCase, run: CaseRun):
        state, variables = self.c.initial_config()
        for key, value in case.precondition.items():
            if key == "state":
                if value not in self.model.states:
                    run.invalid = f"precondition names unknown state `{value}`"
                    return None
                state = value
            elif key in self.model.variables:
                vtype = self.model.variables[key].type
                if not vtype.admits(value):
                    run.invalid = f"precondition `{key}: {value!r}` is not a value of {vtype.text()}"
                    return None
                variables[key] = value
            else:
                run.notes.append(Note(case=case.id, where=case.where, model=self.model.name, turn=None,
                                      message=f"precondition `{key}` is not a variable of the model (ignored)"))
        return state, variables

    # ---- one event
    def _check_ranges(self, variables, run: CaseRun, number: int, names) -> None:
        for name in names:
            var = self.model.variables[name]
            if not var.type.admits(variables[name]):
                run.out_of_range = True
                run.notes.append(Note(case=run.case.id, where=run.case.where, model=self.model.name, turn=number,
                                      message=f"the model sets `{name}` to {variables[name]!r}, outside {var.type.text()}"))

    # ---- expectations
    def _check(self, checks: list[Assertions], state, variables, step: Step, all_calls, number,
               run) -> tuple[bool, bool]:
        """Whether the configuration after the step agrees with every assertion (contradictions and notes recorded
        on the way), and whether some assertion checks an outcome the model computes (Assertions.checks_outcome)."""
        agree = True
        checked = False
        model = self.model
        for i, a in enumerate(checks):
            turn = number if i == 0 else None
            if not checked:
                checked = a.checks_outcome()
            if a.state is not None:
                wanted = a.state.values if type(a.state) is OneOf else (a.state,)
                for name in wanted:
                    if name not in model.states:
                        self._note(run, turn, number, f"asserted state `{name}` is not a state of the model")
                # A set is judged on the states the model has: one of them must be the model's.
                if state not in wanted and any(name in model.states for name in wanted):
                    agree = self._contradict(run, turn, number, "state", _written(a.state), state,
                                             f"golden expects state {_states_text(a.state)}, the model is in "
                                             f"`{state}`")
            if a.variables or a.discarded:  # most assertions name a state only
                for name, expected in a.variables.items():
                    if name not in model.variables:
                        self._note(run, turn, number, f"`{name}` is not a variable of the model (not checked)")
                    elif not _accepts(expected, variables[name]):
                        agree = self._contradict(run, turn, number, f"variables.{name}", _written(expected),
                                                 variables[name], f"golden expects {name}{_value_text(expected)}, "
                                                 f"the model has {variables[name]!r}")
                for name, expected in a.discarded.items():
                    key = f"discarded.{name}"
                    if key not in variables:
                        self._note(run, turn, number, f"the model never discards `{name}` (not checked)")
                    elif not _accepts(expected, variables[key]):
                        agree = self._contradict(run, turn, number, key, _written(expected), variables[key],
                                                 f"golden expects discarded {name}{_value_text(expected)}, the model "
                                                 f"has {variables[key]!r}")
            calls = step.calls if turn else all_calls
            for banned in a.must_not_call:
                if banned not in self.c.tools:
                    self._note(run, turn, number, f"`must_not_call: [{banned}]`: the model never calls `{banned}` "
                                                  "(the check holds trivially)")
                made = next((c for c in calls if c.tool == banned), None)
                if made is not None:
                    agree = self._contradict(
                        run, turn, number, f"must_not_call.{banned}", f"no call to {banned}",
                        f"{banned}({_args_text(made.args)})",
                        f"golden expects no call to {banned}{' in this turn' if turn else ''}, the model calls "
                        f"{banned}({_args_text(made.args)})" + ("" if turn else f" at turn {made.step}"))
            if a.tool_arguments:
                for tool, arg, expected in self._expected_args(a.tool_arguments):
                    if arg is None:  # `{TOOL: {}}`: the call happens, whatever its arguments
                        made = next((c for c in reversed(calls) if c.tool == tool), None)
                        if made is None:
                            agree = self._contradict(run, turn, number, f"tool_arguments.{tool}", f"a call to {tool}",
                                                     f"no call to {tool}",
                                                     f"golden expects a call to {tool}, the model makes none"
                                                     + ("" if turn is None else " in this turn"))
                        elif turn is None:
                            run.verified.update(run.step_elements.get(made.step, ()))
                        continue
                    actual = _latest_arg(calls, tool, arg)
                    # The path as the golden names it (its tool, when it names one), in the message as in `path`.
                    named = f"{tool}.{arg}" if tool else arg
                    if actual is _MISSING:
                        to = f"to {tool} " if tool else ""
                        agree = self._contradict(run, turn, number, f"tool_arguments.{named}", _written(expected),
                                                 None, f"tool_arguments {named}: expected {_expected_text(expected)}, "
                                                 f"the model makes no call {to}passing it"
                                                 + ("" if turn is None else " in this turn"))
                    elif not _accepts(expected, actual[0]):
                        call = "" if tool else f" (to {actual[1]})"
                        agree = self._contradict(run, turn, number, f"tool_arguments.{named}", _written(expected),
                                                 actual[0], f"tool_arguments {named}: expected "
                                                 f"{_expected_text(expected)}, the model passes {actual[0]!r}{call}")
                    elif turn is None:
                        # The step that made the checked call is verified too.
                        run.verified.update(run.step_elements.get(actual[2], ()))
        return agree, checked

    def _contradict(self, run: CaseRun, turn: int | None, number: int, path: str, expected, actual, what: str) -> bool:
        """Record a contradiction of the turn's (`turn`: its number) or the final assertions (None); False, as the
        turn's verdict."""
        case = run.case
        label = f"turn {number}" if turn else "final assertions"
        run.contradictions.append(Contradiction(case=case.id, where=case.where, model=self.model.name, turn=turn,
                                                path=path, expected=expected, actual=actual, message=f"{label}: {what}"))
        return False

    def _note(self, run: CaseRun, turn: int | None, number: int, what: str) -> None:
        case = run.case
        label = f"turn {number}" if turn else "final assertions"
        run.notes.append(Note(case=case.id, where=case.where, model=self.model.name, turn=turn,
                              message=f"{label}: {what}"))

    def _expected_args(self, tool_arguments: dict) -> list[tuple[str | None, str | None, Any]]:
        """(tool or None, argument path or None, value): None as the argument asserts the call itself
        (`{TOOL: {}}`); cases.tool_checks reads them for every replayer."""
        return tool_checks(tool_arguments, self.c.tools)

    # ---- forbidden elements
    def _forbid_verified(self, cf: CompiledForbid, checks: list[Assertions], step: Step, rejected: bool,
                         variables: dict) -> bool:
        """The golden asserts that the forbidden outcome did not happen at this step."""
        target, tool = cf.f.target, cf.call_tool
        for a in checks:
            if a.must_not and any(cf.element in self.names(item).forbids for item in a.must_not):
                return True
            if tool is not None and tool in a.must_not_call:
                return True
            if cf.condition is not None and a.tool_arguments and self._pins_allowed_call(cf, a, step, variables):
                return True
            if target is not None and a.state is not None and not _state_accepted(a.state, target):
                return True  # the golden accepts no state the forbidden move leads to
        # A forbid on the event itself (no target, no effect): the golden expects the refusal, or asserts that the
        # state did not change.
        if cf.bare and step.refused:
            return rejected or any(a.state == step.state_before for a in checks)
        return False

    def _pins_allowed_call(self, cf: CompiledForbid, a: Assertions, step: Step, variables: dict) -> bool:
        """For `effect call T [cond]`: the golden pins this step's one call of T to arguments under which `cond` is
        false (it asserts every argument `cond` reads, as the model passes them), so the call made is not the
        forbidden one. A positive check of an unconditional forbid's tool is the opposite: it expects the call."""
        if cf.condition is None or not a.tool_arguments or cf.f.effect is None:
            return False
        tool = cf.f.effect.tool
        made = [c for c in step.calls if c.tool == tool]
        if len(made) != 1:
            return False
        call = made[0]
        asserted = {}
        for t, arg, expected in self._expected_args(a.tool_arguments):
            # A set of accepted values pins no value of the argument: it cannot show `cond` false.
            if arg is None or t not in (None, tool) or type(expected) is OneOf or not lookup(call.args, arg)[0]:
                continue
            if t is None and _latest_arg(step.calls, None, arg)[1] != tool:
                continue  # a plain argument check that speaks of another tool's call
            asserted[arg] = expected
        if not cf.condition_args <= asserted.keys() or \
                not all(_same(lookup(call.args, k)[1], v) for k, v in asserted.items()):
            return False
        env = dict(variables)
        env.update({f"args.{k}": v for k, v in call.args.items()})
        return not cf.condition(env)

    def _expects_forbidden(self, step: Step, checks: list[Assertions], rejected: bool, variables: dict, number: int,
                           run: CaseRun, all_calls: list[ToolCallMade]) -> None:
        """Findings for the forbids exercised at this step whose forbidden outcome the golden expects."""
        for cf in step.forbids:
            expected = self._expected_outcome(cf, checks, rejected, step, variables, all_calls, number)
            if expected is None:
                continue
            f, case = cf.f, run.case
            run.forbidden_expected.append(ForbiddenExpected(
                case=case.id, where=case.where, model=self.model.name, turn=number, element=cf.element_id,
                severity=cf.severity, forbid_at=str(f.loc), expected=expected,
                message=f"golden expects forbidden behaviour: {expected} at turn {number} (in `{step.state_before}` "
                        f"on `{step.event}`), which `forbid {f.label()}` ({f.loc}, severity {cf.severity}) forbids"))

    def _expected_outcome(self, cf: CompiledForbid, checks: list[Assertions], rejected: bool, step: Step,
                          variables: dict, all_calls: list[ToolCallMade], number: int) -> str | None:
        """What the golden expects that the forbid forbids at step `number`, in words; None when it expects nothing
        forbidden. `checks`: the turn's assertions, then (at the last turn) the final ones."""
        target, tool = cf.f.target, cf.call_tool
        for position, a in enumerate(checks):
            said = next((item for item in a.must_have if cf.element in self.names(item).forbids), None)
            if said is not None:
                return f"saying {said!r}"
            if target is not None and a.state is not None and _state_accepted(a.state, target):
                return f"the move to `{target}`" + (" (among the states it accepts)" if type(a.state) is OneOf else "")
            if cf.bare and not rejected and a.state is not None and not _state_accepted(a.state, step.state_before):
                return f"`{step.event}` accepted (state {_states_text(a.state)})"
            if tool is not None:
                mine = [(arg, value) for t, arg, value in self._expected_args(a.tool_arguments) if t == tool]
                if not mine:  # only a check naming the tool (`{TOOL: {...}}`) expects its call
                    continue
                if position > 0 and self._speaks_of_earlier_call(a.tool_arguments, tool, all_calls, number):
                    continue  # a final check of a call made before this step expects nothing of this step
                if cf.condition is None:
                    return f"a call to {tool}"
                # A conditional forbid: the expected call is forbidden when the asserted arguments make the condition
                # true; when the golden leaves an argument the condition reads unasserted (or accepts a set of
                # values), it cannot be told.
                asserted = {arg: value for arg, value in mine if arg is not None and type(value) is not OneOf}
                if cf.condition_args <= asserted.keys():
                    env = dict(variables)
                    env.update({f"args.{k}": v for k, v in asserted.items()})
                    if cf.condition(env):
                        return f"a call {tool}({_args_text(asserted)})"
        return None

    def _speaks_of_earlier_call(self, tool_arguments: dict, tool: str, all_calls: list[ToolCallMade],
                                number: int) -> bool:
        """Whether a final `tool_arguments` check of `tool` resolves, for every argument it asserts, to a call the
        run made before step `number` (the latest call of the tool that has the argument, as _check reads it): it
        then speaks of that call, not of one at this step."""
        steps = []
        for t, arg, _ in self._expected_args(tool_arguments):
            if t != tool:
                continue
            if arg is None:
                made = next((c for c in reversed(all_calls) if c.tool == tool), None)
                steps.append(made.step if made is not None else None)
            else:
                found = _latest_arg(all_calls, tool, arg)
                steps.append(None if found is _MISSING else found[2])
        return bool(steps) and all(s is not None and s < number for s in steps)

    def _forbid_verified_by_final(self, cf: CompiledForbid, final: Assertions) -> bool:
        if any(cf.element in self.names(item).forbids for item in final.must_not):
            return True
        return cf.call_tool is not None and cf.call_tool in final.must_not_call


_MISSING = object()


def _forbids_judged(checks: list[Assertions], slot: Slot, refused: bool) -> bool:
    """Whether these assertions can verify, or expect, any forbid of the slot: by what is said or called (must_not,
    must_have, must_not_call, tool_arguments), or, for a forbid with a target or a bare one, by an asserted state
    or a refusal (the cases _forbid_verified and _expected_outcome look at)."""
    for a in checks:
        if a.must_not or a.must_have or a.must_not_call or a.tool_arguments:
            return True
    return slot.forbids_by_state and (refused or any(a.state is not None for a in checks))


def _null_tool_arguments(label: str, a: Assertions, tools: set[str]) -> str | None:
    for key, value in a.tool_arguments.items():
        if key in tools and value is None:
            return (f"{label}: `tool_arguments: {{{key}: null}}` is ambiguous: write `must_not_call: [{key}]` "
                    f"to assert that {key} is not called, or `{{{key}: {{}}}}` that it is called")
    return None


def _quoted(text: str) -> str:
    """A phrase in a message, in double quotes as the DSL writes them (json.dumps would escape CJK text)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _args_text(args: dict[str, Any]) -> str:
    return ", ".join(f"{name} = {value!r}" for name, value in args.items())


def _latest_arg(calls: list[ToolCallMade], tool: str | None, arg: str):
    """(value, tool, step) of the latest call (of `tool`, if given) passing the argument path `arg`, or _MISSING."""
    for call in reversed(calls):
        if tool is None or call.tool == tool:
            found, value = lookup(call.args, arg)
            if found:
                return value, call.tool, call.step
    return _MISSING


def _accepts(expected: Any, actual: Any) -> bool:
    """The model's value agrees with the golden's: the same value, or one of a set."""
    if type(expected) is OneOf:
        return any(_same(actual, value) for value in expected.values)
    return _same(actual, expected)


def _state_accepted(expected: str | OneOf, state: str) -> bool:
    return state in expected.values if type(expected) is OneOf else expected == state


def _written(expected: Any) -> Any:
    """An expected value as reports show it: a set as the golden writes it, `{"in": [...]}`."""
    return expected.written() if type(expected) is OneOf else expected


def _states_text(expected: str | OneOf) -> str:
    if type(expected) is OneOf:
        return "one of " + ", ".join(f"`{name}`" for name in expected.values)
    return f"`{expected}`"


def _expected_text(expected: Any) -> str:
    """`'x'`, or `one of 'x', 'y'` for a set."""
    if type(expected) is OneOf:
        return "one of " + ", ".join(repr(value) for value in expected.values)
    return repr(expected)


def _value_text(expected: Any) -> str:
    """` = 'x'`, or ` one of 'x', 'y'` for a set (after the name the golden checks)."""
    if type(expected) is OneOf:
        return " one of " + ", ".join(repr(value) for value in expected.values)
    return f" = {expected!r}"


def _same(actual: Any, expected: Any) -> bool:
    if isinstance(actual, bool) or isinstance(expected, bool):
        return actual is expected or (isinstance(actual, bool) and isinstance(expected, bool) and actual == expected)
    return actual == expected
