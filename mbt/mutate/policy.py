"""Policy mutation operators (Martin & Xie's fault model for XACML, WWW 2007) and equivalence by z3.

Two policies are equivalent when no request, attributes left out included (a golden's request may lack one), gets
different decisions: z3 is asked, for each pair of different decisions, for a request the original decides one way
and the mutant the other (mbt/analysis/policy_smt.py's decision formulas, one encoding per policy over the same
attribute symbols and presence flags).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from mbt.goldens.replay_policy import CompiledPolicy, PolicyReplayer
from mbt.kind import narrow, support
from mbt.model.expr import Lit
from mbt.model.policy import ALGORITHMS, DECISIONS, PolicyModel
from mbt.mutate.mutant import Distinction, Mutant, Operators

OPERATORS = {
    "PEF": "rule effect flipped: permit becomes deny and deny permit",
    "PTT": "rule target always true: the target is removed",
    "PTF": "rule target always false: the rule never applies",
    "PCT": "rule condition always true: the condition is removed",
    "PCF": "rule condition always false: the rule never applies",
    "PRR": "rule removed",
    "PCA": "combining algorithm changed to another one",
}


def policy_mutants(model: PolicyModel) -> list[Mutant]:
    ops = Operators(OPERATORS)
    for i, rule in enumerate(model.rules):
        el = f"rule:{rule.name}:applicable"

        def change(i=i, **update):
            def build() -> PolicyModel:
                rules = list(model.rules)
                if update.get("remove"):
                    del rules[i]
                else:
                    rules[i] = rules[i].model_copy(update=update)
                return model.model_copy(update={"rules": rules})
            return build

        flipped = "deny" if rule.effect == "permit" else "permit"
        ops.add("PEF", el, rule.loc, f"{rule.name}: {rule.effect} -> {flipped}", change(effect=flipped))
        if rule.target is not None:
            ops.add("PTT", el, rule.loc, f"{rule.name}: target [{rule.target.text()}] removed", change(target=None))
        ops.add("PTF", el, rule.loc, f"{rule.name}: target always false", change(target=Lit(False)))
        if rule.condition is not None:
            ops.add("PCT", el, rule.loc, f"{rule.name}: condition [{rule.condition.text()}] removed",
                    change(condition=None))
            ops.add("PCF", el, rule.loc, f"{rule.name}: condition always false", change(condition=Lit(False)))
        ops.add("PRR", el, rule.loc, f"rule {rule.name} removed", change(remove=True))
    combining = model.combining[0]
    for algorithm in ALGORITHMS:
        if algorithm != model.algorithm:
            def build(algorithm=algorithm) -> PolicyModel:
                return model.model_copy(update={"combining": [combining.model_copy(update={"algorithm": algorithm})]})
            ops.add("PCA", "policy", combining.loc, f"combining {model.algorithm} -> {algorithm}", build,
                    name=f"{model.name}:{algorithm}")
    return ops.found


def mutant_replayer(base: PolicyReplayer, mutant: Mutant) -> PolicyReplayer:
    """The mutant's replayer: the policy kind's, over the mutant's own elements."""
    model = narrow(mutant.model, PolicyModel, "policy")
    return PolicyReplayer(CompiledPolicy(model, support("policy").elements(model)))


def distinguish(base: PolicyReplayer, replayer: PolicyReplayer, mutant: Mutant) -> Distinction:
    import z3  # heavy: only when a mutant survives

    from mbt.analysis.policy_smt import PolicyEncoding  # z3's encoding: as heavy, as rarely needed

    original = base.model
    # Requests may leave attributes out (a golden's may): the encoding with presence flags covers those too.
    mutated = narrow(mutant.model, PolicyModel, "policy")
    ours, theirs = PolicyEncoding(original, complete=False), PolicyEncoding(mutated, complete=False)
    # z3 constants are their names: both encodings speak of the same attributes and presence flags.
    mine, other = ours.decisions(), theirs.decisions()
    unknown = False
    for first in DECISIONS:
        for second in DECISIONS:
            if first == second or first not in mine or second not in other:
                continue
            answer = ours.check(mine[first], other[second])
            if answer.sat and answer.request is not None:
                # Qualified names, every attribute written (an absent optional one as null), as the gap stubs are;
                # a required attribute the request lacks is left out.
                request = {name: _plain(answer.request.get(name)) for name in original.attributes
                           if name not in answer.missing}
                witness = {"id": f"kill:{original.name}:{mutant.id}", "policy": original.name,
                           "request": request, "expect": first}
                return Distinction(False, f"z3: a request the original decides {first} and the mutant {second}",
                                   witness)
            unknown = unknown or not answer.unsat
    del z3
    if unknown:
        return Distinction(False, "z3 timed out: not proven equivalent", exhaustive=False)
    return Distinction(True, "z3: every request (attributes left out included) gets the same decision")


def _plain(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    return value
