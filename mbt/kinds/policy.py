"""The `policy` kind: ABAC policies (XACML 3.0 semantics), from parsing/policy_*.py, model/policy_eval.py, analysis."""

from __future__ import annotations

from mbt.analysis.policy_checks import analysis_of, check_policy
from mbt.elements.policy import CRITERIA, enumerate_policy
from mbt.goldens.replay_policy import CompiledPolicy, PolicyReplayer, accepts
from mbt.kinds import KindSupport, MutationSupport, register
from mbt.kinds.views import ELEMENT_TABLE
from mbt.mutate import policy as mutate_policy
from mbt.parsing.grammar import grammar_dir
from mbt.parsing.policy_link import link_policies
from mbt.parsing.policy_resolve import resolve_policy
from mbt.parsing.policy_rules import PolicyRules, RawPolicy

register(KindSupport(
    kind="policy", keyword="policy", grammar=grammar_dir() / "policy.lark", rule="policy_model", rules=PolicyRules,
    raw=RawPolicy, resolve=resolve_policy, link=link_policies, suffixes=(".policy",),
    criteria=CRITERIA, enumerate=lambda model: enumerate_policy(model, analysis_of(model)),
    replayer=lambda model, elements: PolicyReplayer(CompiledPolicy(model, elements)), accepts=accepts,
    check=check_policy, view=ELEMENT_TABLE,
    mutation=MutationSupport(mutate_policy.OPERATORS, mutate_policy.policy_mutants, mutate_policy.mutant_replayer,
                             mutate_policy.distinguish)))
