"""The `policy` kind: ABAC policies (XACML 3.0 semantics), from parsing/policy_*.py, engine/policy.py, analysis."""

from __future__ import annotations

from mbt.analysis.policy_checks import analysis_of, check_policy
from mbt.elements.policy import CRITERIA, enumerate_policy
from mbt.generate.decisions import PolicyWitnesses
from mbt.generate.drive_policy import DRIVER, PolicyReference
from mbt.generate.generation import DecisionGeneration
from mbt.goldens.replay_policy import CompiledPolicy, PolicyReplayer, accepts
from mbt.kind import Criterion, KindSupport, MutationSupport, View, narrow, register
from mbt.kinds.views import TABLE_SUFFIXES
from mbt.model.policy import PolicyModel
from mbt.mutate import policy as mutate_policy
from mbt.parsing import grammar_dir
from mbt.parsing.policy_link import link_policies
from mbt.parsing.policy_resolve import resolve_policy
from mbt.parsing.policy_rules import PolicyRules, RawPolicy
from mbt.render.table import element_table, policy_rule_grid

# Conflicts between rules and boundary values are listed one by one in the text report.
MEANINGS = {"conflict": Criterion("conflict", findings=True), "boundary": Criterion("boundary", findings=True)}


def _policy(model: object) -> PolicyModel:
    return narrow(model, PolicyModel, "policy")


def _replayer(base: object) -> PolicyReplayer:
    return narrow(base, PolicyReplayer, "policy")


register(KindSupport(
    kind="policy", keyword="policy", grammar=grammar_dir() / "policy.lark", rule="policy_model", rules=PolicyRules,
    raw=RawPolicy,
    resolve=lambda raw, path, text, sources: resolve_policy(narrow(raw, RawPolicy, "policy"), path, text, sources),
    link=link_policies, suffixes=(".policy",),
    criteria=tuple(MEANINGS.get(name, Criterion(name)) for name in CRITERIA),
    enumerate=lambda model: enumerate_policy(_policy(model), analysis_of(_policy(model))),
    replayer=lambda model, elements: PolicyReplayer(CompiledPolicy(_policy(model), elements)),
    accepts=lambda model, case: accepts(_policy(model), case),
    check=lambda model, options: check_policy(_policy(model)),
    view=View("table", element_table, TABLE_SUFFIXES, grid=lambda model, cov: policy_rule_grid(_policy(model), cov)),
    generation=lambda model, options, out: DecisionGeneration(_policy(model), options, out, PolicyWitnesses),
    driver=DRIVER, reference=lambda model: PolicyReference(_policy(model)),
    mutation=MutationSupport(
        mutate_policy.OPERATORS, lambda model: mutate_policy.policy_mutants(_policy(model)),
        lambda base, mutant: mutate_policy.mutant_replayer(_replayer(base), mutant),
        lambda base, replayer, mutant: mutate_policy.distinguish(_replayer(base), _replayer(replayer), mutant))))
