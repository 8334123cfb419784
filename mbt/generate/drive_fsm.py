"""How the fsm kind's generated tests run: they hold conversations, which the driver drives itself (start, step in
mbt/generate/driver.py: invariants' tests and `mbt runs` transcripts share them), so the kind adds no part to it; its
reference (`MBT_ADAPTER=reference`) is the `transitions` reference machine answering reset / send / observe."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mbt.model.fsm import FsmModel

if TYPE_CHECKING:
    from mbt.reference import ReferenceMachine


class FsmReference:
    """The reference machine of one FSM model, as the conversation an adapter holds."""

    def __init__(self, model: FsmModel):
        from mbt.reference import ReferenceMachine  # `transitions` loads only when a test runs on it (start-up time)

        self.model = model
        self.machine: ReferenceMachine = ReferenceMachine(model)
        self._accepted: bool | None = None
        self._sent: tuple[str, dict[str, Any]] | None = None

    def reset(self, state: str | None, variables: dict[str, Any], discarded: dict[str, Any]) -> None:
        self.machine.reset(state, variables, discarded)
        self._accepted, self._sent = None, None

    def send(self, event: str, args: dict[str, Any], user: str | None = None) -> None:
        self._accepted = self.machine.send(event, args)
        self._sent = (event, dict(args))

    def observe(self) -> dict[str, Any]:
        m = self.machine
        return {"state": m.state, "accepted": self._accepted, "variables": dict(m.variables),
                "discarded": dict(m.discarded), "calls": [(c.tool, dict(c.args)) for c in m.last_calls],
                "outputs": [],  # the model says nothing: `say` effects are behaviour outside it
                "results": self._results()}

    def _results(self) -> list[tuple[str, dict[str, Any]]]:
        """The tool result that delivers the last event, read backwards off the model's first `bind tool` for it
        (a fake tool answering so): what a transcript of the run shows."""
        if self._sent is None:
            return []
        event, args = self._sent
        b = next((b for b in self.model.tool_bindings if b.event == event), None)
        if b is None:
            return []
        if b.outcome == "error":
            code = args.get(b.params[0]) if b.fields else (b.codes[0] if b.codes else "error")
            return [(b.tool, {"ok": False, "error": code})]
        return [(b.tool, {"ok": True, "result": {f: args.get(p) for f, p in zip(b.fields, b.params)}})]
