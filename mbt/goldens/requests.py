"""Request cases: a policy, a request (subject, resource, action, environment) and the expected decision.

    {"id": "RA-001", "policy": "refund_access", "expect": "Deny", "reason": ["no_self_approval"],
     "request": {"subject": {"id": "u1", "role": "agent"}, "resource": {"owner": "u1"}, "action": "approve"}}

`request` maps each category to its attributes (or holds `CATEGORY.NAME` keys); a category given a bare value
(`action: approve`) sets its `id` attribute (or its only attribute). A conversation case (with `turns`) may carry a
`request` too: the attributes its conversation does not provide, for a policy that enforces the FSM's tool calls.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

CATEGORIES = ("subject", "resource", "action", "environment")
# The expected decision as written (any case, `_` `-` and spaces ignored) -> the decision name mbt reports.
DECISION_WORDS = {
    "permit": "Permit", "deny": "Deny", "notapplicable": "NotApplicable", "na": "NotApplicable",
    "indeterminate": "Indeterminate", "indeterminate{d}": "Indeterminate{D}", "indeterminate{p}": "Indeterminate{P}",
    "indeterminate{dp}": "Indeterminate{DP}", "indeterminate{pd}": "Indeterminate{DP}",
}


class PolicyRequest(msgspec.Struct):
    """One request to a policy, as the golden writes it (checked against the policy's attributes on replay). Built
    by normalise_request, which checks every field (a struct, as the cases are: mbt.goldens.cases)."""

    policy: str | None = None  # None only inside a conversation case
    attributes: dict[str, Any] = {}  # `subject.id`, or a bare category for its id
    expect: str | None = None  # Permit, Deny, NotApplicable, Indeterminate, Indeterminate{D|P|DP}
    reason: list[str] | None = None  # rules the golden expects among the deciding ones


def decision_name(raw: Any) -> str:
    if not isinstance(raw, str):
        raise ValueError(f"`expect` must be a decision (Permit, Deny, NotApplicable, Indeterminate), not {raw!r}")
    key = re.sub(r"[\s_\-]", "", raw).lower()
    if key not in DECISION_WORDS:
        raise ValueError(f"`expect: {raw}` is not a decision (Permit, Deny, NotApplicable, Indeterminate)")
    return DECISION_WORDS[key]


def flatten(request: Any) -> dict[str, Any]:
    if not isinstance(request, dict):
        raise ValueError("`request` must map categories (subject, resource, action, environment) to attributes")
    out: dict[str, Any] = {}
    for key, value in request.items():
        key = str(key)
        category = key.split(".", 1)[0]
        if category not in CATEGORIES:
            raise ValueError(f"request key `{key}` is not a category ({', '.join(CATEGORIES)}) nor CATEGORY.NAME")
        if "." in key:
            out[key] = value
        elif isinstance(value, dict):
            out.update({f"{key}.{name}": v for name, v in value.items()})
        else:
            out[key] = value  # the category's id attribute, resolved against the policy on replay
    return out


def normalise_request(data: dict[str, Any], out: dict[str, Any]) -> None:
    """Move a case's request fields from `data` into `out` (GoldenCase fields)."""
    if "request" not in data:
        return
    fields: dict[str, Any] = {"attributes": flatten(data.pop("request"))}
    policy = data.pop("policy", None)
    if policy is not None:
        fields["policy"] = str(policy)
    if "expect" in data:
        fields["expect"] = decision_name(data.pop("expect"))
    reason = data.pop("reason", data.pop("expect_reason", None))
    if reason is not None:
        names = [reason] if isinstance(reason, str) else reason
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ValueError("`reason` must be a rule name or a list of rule names")
        fields["reason"] = names
    if not data.get("turns") and "input" not in data:
        if policy is None and out.get("model") is None:
            raise ValueError("a request case names its `policy`")
        out.setdefault("model", fields.get("policy"))  # the case applies to that policy only
    out["request"] = PolicyRequest(**fields)
