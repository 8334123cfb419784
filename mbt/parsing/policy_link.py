"""Links each policy's `enforce call TOOL in FSM` blocks to the loaded FSM: the mappings are typed against its scope."""

from __future__ import annotations

from dataclasses import replace

from mbt.errors import Problem, problem_at
from mbt.model.fsm import FsmModel, ToolCall
from mbt.model.policy import Enforcement, PolicyModel
from mbt.model.typecheck import Checker, TypeProblem
from mbt.model.types import ValueType
from mbt.parsing.policy_resolve import PolicyChecker


def call_scope(fsm: FsmModel, tool: str) -> dict[str, ValueType]:
    """What an enforce mapping may read at a call of `tool`: the FSM's variables, `discarded.VAR`, and `args.NAME`
    for every argument some call of the tool passes (typed as the first such call passes it)."""
    scope = {name: v.type for name, v in fsm.variables.items()}
    for name in fsm.discardable:
        if name in fsm.variables:
            vtype = fsm.variables[name].type
            scope[f"discarded.{name}"] = ValueType(vtype.kind, vtype.lo, vtype.hi, vtype.values, optional=True,
                                                   scale=vtype.scale)
    for t in fsm.transitions:
        event = fsm.events.get(t.event)
        local = dict(scope)
        if event is not None:
            names = t.params or [p.name for p in event.params]
            local.update({n: p.type for n, p in zip(names, event.params)})
        for action in t.actions:
            if isinstance(action, ToolCall) and action.tool == tool:
                for name, value in action.args:
                    if f"args.{name}" not in scope:
                        try:
                            scope[f"args.{name}"] = Checker(local).typed(value)[1]
                        except Exception:  # typed by the FSM's resolver already; never expected here
                            continue
    return scope


def link_enforcement(policy: PolicyModel, enforcement: Enforcement, fsm: FsmModel, path: str,
                     text: str) -> list[Problem]:
    scope = call_scope(fsm, enforcement.tool)
    checker = PolicyChecker(scope)
    problems = []
    for mapping in enforcement.mappings:
        attribute = policy.attributes.get(mapping.attribute)
        if attribute is None:
            continue  # reported by the resolver
        try:
            # A value that is none at the call leaves the attribute out of the request (required: Indeterminate).
            mapping.value = checker.value(mapping.value, replace(attribute.type, optional=True))
        except TypeProblem as err:
            node = err.node if getattr(err.node, "line", 0) else mapping.loc
            hint = err.hint
            if err.message.startswith("unknown name"):
                hint = (f"the value is read in fsm `{fsm.name}` at the call of `{enforcement.tool}`: a variable, "
                        "`discarded.VAR`, `args.NAME` or a literal" + (f"; {hint}" if hint else ""))
            problems.append(problem_at(path, text, node.line, node.column, err.message, hint))
    if not problems:
        enforcement.linked = True
        enforcement._fsm = fsm
    return problems


def link_policies(files) -> list[Problem]:
    """Link the enforce blocks of every policy in `files` to the FSMs of `files`; the problems found.

    An FSM that is not among the files leaves the block unlinked (`mbt check` says so): a policy can be checked
    and measured on its own.
    """
    fsms = {m.name: m for f in files for m in f.models if m.kind == "fsm"}
    problems: list[Problem] = []
    for f in files:
        for model in f.models:
            if not isinstance(model, PolicyModel):
                continue
            for enforcement in model.enforcements:
                fsm = fsms.get(enforcement.fsm)
                if fsm is not None and not enforcement.linked:
                    problems.extend(link_enforcement(model, enforcement, fsm, f.path, f.text))
    return problems
