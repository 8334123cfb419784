"""The `policy` kind: ABAC policies (XACML 3.0 semantics), from parsing/policy_*.py, engine/policy.py, analysis."""

from __future__ import annotations

from mbt.analysis.policy_checks import analysis_of, check_policy
from mbt.elements.policy import CRITERIA, enumerate_policy
from mbt.generate.decisions import PolicyWitnesses
from mbt.generate.generation import DecisionGeneration
from mbt.goldens.replay_policy import CompiledPolicy, PolicyReplayer, accepts
from mbt.kind import KindSupport, MutationSupport, View, register
from mbt.kinds.views import TABLE_SUFFIXES
from mbt.mutate import policy as mutate_policy
from mbt.parsing.grammar import grammar_dir
from mbt.parsing.policy_link import link_policies
from mbt.parsing.policy_resolve import resolve_policy
from mbt.parsing.policy_rules import PolicyRules, RawPolicy
from mbt.render.table import element_table, policy_rule_grid

register(KindSupport(
    kind="policy", keyword="policy", grammar=grammar_dir() / "policy.lark", rule="policy_model", rules=PolicyRules,
    raw=RawPolicy, resolve=resolve_policy, link=link_policies, suffixes=(".policy",),
    criteria=CRITERIA, enumerate=lambda model: enumerate_policy(model, analysis_of(model)),
    replayer=lambda model, elements: PolicyReplayer(CompiledPolicy(model, elements)), accepts=accepts,
    check=check_policy, view=View("table", element_table, TABLE_SUFFIXES, grid=policy_rule_grid),
    generation=lambda model, options, out: DecisionGeneration(model, options, out, PolicyWitnesses),
    mutation=MutationSupport(mutate_policy.OPERATORS, mutate_policy.policy_mutants, mutate_policy.mutant_replayer,
                             mutate_policy.distinguish)))
