"""How the policy kind's generated tests run: its part of their driver (`authorize`, copied into mbt_support.py) and
its reference (`MBT_ADAPTER=reference`: the policy evaluator answers `authorize`)."""

from __future__ import annotations

from typing import Any

from mbt.engine.policy import PolicyEvaluator
from mbt.generate.driver import Driver
from mbt.goldens.replay_policy import typed_value
from mbt.kind import DriverPart
from mbt.model.policy import PolicyModel


class PolicyDriver(Driver):
    """The driver's method for policies."""

    def authorize(self, policy: str, request: dict[str, Any], expect: str, reasons: list[str] | None = None) -> None:
        """Ask a policy about `request`: the decision must be `expect` (decided by `reasons`, when observed)."""
        seen = self.adapter.authorize(policy, dict(request))
        where = f"policy `{policy}` on {request!r}"
        if seen.get("decision") != expect:
            raise AssertionError(f"{where}: the system decides {seen.get('decision')!r}, the model {expect!r}")
        observed = seen.get("reasons")
        if reasons is not None and observed is not None and sorted(observed) != sorted(reasons):
            raise AssertionError(f"{where}: decided by {observed!r}, the model's deciding rules are {reasons!r}")


ADAPTER = ('    authorize(policy, request)          # a policy: '
           '{"decision": "Permit"/"Deny"/..., "reasons": [rules] or None}\n')
DRIVER = DriverPart(PolicyDriver, ADAPTER)


class PolicyReference:
    """The policy evaluator answering `authorize` for one policy."""

    def __init__(self, model: PolicyModel):
        self.model = model

    def authorize(self, policy: str, request: dict[str, Any]) -> dict[str, Any]:
        if policy != self.model.name:
            raise ValueError(f"this adapter runs policy `{self.model.name}`, not policy `{policy}`")
        outcome = PolicyEvaluator(self.model).evaluate({k: typed_value(v) for k, v in request.items()})
        return {"decision": outcome.decision, "reasons": list(outcome.reasons)}
