"""A stand-in for an LLM order-cancellation agent under test, and the adapter generated tests drive it through.

The agent sees only what a real one sees: the customer's words and its tools' results. It is a few rules instead of
a language model, so the tests that run it are deterministic; a hasty one claims success before checking, as
seed 002's agent does. The adapter fakes the tools (docs/runs.md, "Closing the loop"): when the test's next model
event is a tool's answer (`order_found(owner, status)`), the fake tool gives that answer to the call the agent made.
`MBT_ADAPTER=tests.loop_agent:make_adapter` (and `...:make_hasty_adapter` for the mistake) selects it.
"""

from __future__ import annotations

import re
from typing import Any

ORDER_NUMBER = re.compile(r"[A-Z]{2}-[0-9]{4,}")

# The tool answer each model event stands for: (tool, ok, the result's fields from the event's arguments / error)
FAKED = {"order_found": ("get_order", True, ("owner", "status")), "status_checked": ("get_order", True, ("status",)),
         "order_not_found": ("get_order", False, "NOT_FOUND"), "cancel_succeeded": ("cancel_order", True, ()),
         "cancel_failed": ("cancel_order", False, "UNAVAILABLE")}


class OrderAgent:
    """Cancels a signed-in customer's order: look it up, ask to confirm, cancel, look it up again, then say so."""

    def __init__(self, customer: str | None, hasty: bool = False):
        self.customer, self.hasty = customer, hasty
        self.order: str | None = None
        self.waiting: str | None = None  # the tool whose answer the agent waits for
        self.confirming = False

    def chat(self, text: str) -> tuple[list[tuple[str, dict]], list[str]]:
        """The customer speaks: (tool calls made, replies)."""
        found = ORDER_NUMBER.search(text)
        if self.customer is None:
            return [], ["Please sign in first."]
        if found and self.waiting is None and not self.confirming:
            self.order, self.waiting = found.group(0), "get_order"
            return [("get_order", {"order_id": self.order})], [f"Let me look up {self.order}."]
        if self.confirming and text.strip().lower() == "yes":
            self.confirming, self.waiting = False, "cancel_order"
            return [("cancel_order", {"order_id": self.order})], ["Cancelling it now."]
        if self.confirming and "keep" in text.lower():
            self.confirming = False
            return [], ["Fine, the order stays as it is."]
        if "cancel" in text.lower() and self.order is None:
            return [], ["Which order number?"]
        return [], ["Sorry, I did not get that."]

    def answer(self, tool: str, ok: bool, result: dict) -> tuple[list[tuple[str, dict]], list[str]]:
        """A tool answers the call the agent is waiting for: (tool calls made, replies)."""
        verifying = self.waiting == "verify"
        self.waiting = None
        if tool == "get_order" and not verifying:
            if not ok:
                self.order = None
                return [], ["I could not find that order. Which order number?"]
            if result["owner"] != self.customer:
                return [], ["I am sorry, I cannot help with that order."]
            if result["status"] not in ("pending", "paid"):
                return [], ["That order can no longer be changed."]
            self.confirming = True
            return [], [f"Order {self.order} is {result['status']}. Shall I cancel it? Please say yes."]
        if tool == "cancel_order":
            if not ok:
                return [("handoff_to_human", {"order_id": self.order, "reason": "cancel_failed"})], \
                    ["I am handing you over to a colleague."]
            self.waiting = "verify"
            said = [f"Order {self.order} has been cancelled."] if self.hasty else []  # before the check: too early
            return [("get_order", {"order_id": self.order})], said
        if result.get("status") == "cancelled":
            return [], [f"Order {self.order} is cancelled."]
        return [("handoff_to_human", {"order_id": self.order, "reason": "status_not_cancelled"})], \
            ["I am handing you over to a colleague."]


class AgentAdapter:
    """mbt_support's adapter protocol over the agent, with its tools faked by the test."""

    observable_only = True  # the agent's memory is not the model's variables: only calls and words are asserted

    def __init__(self, hasty: bool = False):
        self.hasty = hasty
        self.agent = OrderAgent(None, hasty)
        self.turn: dict[str, Any] = {}

    def reset(self, state: str | None, variables: dict[str, Any], discarded: dict[str, Any]) -> None:
        self.agent = OrderAgent(variables.get("customer_id"), self.hasty)

    def send(self, event: str, args: dict[str, Any], user: str | None) -> None:
        calls: list[tuple[str, dict]] = []
        said: list[str] = []
        results: list[tuple[str, dict]] = []
        if event == "signed_in":  # the sign-in reaches the agent outside the conversation
            self.agent.customer = self.agent.customer or args["customer"]
        elif user is not None:
            calls, said = self.agent.chat(user)
        elif event in FAKED:
            tool, ok, spec = FAKED[event]
            waiting = "get_order" if self.agent.waiting == "verify" else self.agent.waiting
            if waiting == tool:  # a fake tool answers only a call the agent made
                result = {field: args[field] for field in spec} if ok else {}
                results.append((tool, {"ok": True, "result": result} if ok else {"ok": False, "error": spec}))
                calls, said = self.agent.answer(tool, ok, result)
        self.turn = {"state": None, "accepted": None, "variables": None, "discarded": None, "calls": calls,
                     "outputs": said, "results": results}

    def observe(self) -> dict[str, Any]:
        return self.turn


def make_adapter(model: str, model_path: str) -> AgentAdapter:
    return AgentAdapter()


def make_hasty_adapter(model: str, model_path: str) -> AgentAdapter:
    return AgentAdapter(hasty=True)
