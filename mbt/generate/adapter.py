"""The reference adapter: generated tests driving mbt's own executable semantics instead of a real system -- the
`transitions` reference machine for an FSM, the table evaluator, the policy evaluator. Generated tests pass against it
by construction and fail against a mutated model's, which is how mbt's own tests prove that generated tests test
something. `MBT_ADAPTER=reference` selects it."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from mbt.model.common import ModelBase
from mbt.model.fsm import FsmModel


class ReferenceAdapter:
    """The adapter protocol of mbt_support (reset / send / observe, decide, authorize) over one model."""

    def __init__(self, model: ModelBase):
        self.model = model
        self.machine = None
        self._accepted: bool | None = None
        self._sent: tuple[str, dict[str, Any]] | None = None
        if isinstance(model, FsmModel):
            from mbt.reference import ReferenceMachine

            self.machine = ReferenceMachine(model)

    @classmethod
    def from_file(cls, path: str | Path, model: str | None = None) -> ReferenceAdapter:
        return cls(_load(str(Path(path).resolve()), model))

    # ---- conversations (fsm)
    def reset(self, state: str | None, variables: dict[str, Any], discarded: dict[str, Any]) -> None:
        self._fsm().reset(state, variables, discarded)
        self._accepted, self._sent = None, None

    def send(self, event: str, args: dict[str, Any], user: str | None = None) -> None:
        self._accepted = self._fsm().send(event, args)
        self._sent = (event, dict(args))

    def observe(self) -> dict[str, Any]:
        m = self._fsm()
        return {"state": m.state, "accepted": self._accepted, "variables": dict(m.variables),
                "discarded": dict(m.discarded), "calls": [(c.tool, dict(c.args)) for c in m.last_calls],
                "outputs": [],  # the model says nothing: `say` effects are behaviour outside it
                "results": self._results()}

    def _results(self) -> list[tuple[str, dict[str, Any]]]:
        """The tool result that delivers the last event, read backwards off the model's first `bind tool` for it
        (a fake tool answering so): what a transcript of the run shows."""
        if self._sent is None or not isinstance(self.model, FsmModel):
            return []
        event, args = self._sent
        b = next((b for b in self.model.tool_bindings if b.event == event), None)
        if b is None:
            return []
        if b.outcome == "error":
            code = args.get(b.params[0]) if b.fields else (b.codes[0] if b.codes else "error")
            return [(b.tool, {"ok": False, "error": code})]
        return [(b.tool, {"ok": True, "result": {f: args.get(p) for f, p in zip(b.fields, b.params)}})]

    def _fsm(self):
        if self.machine is None:
            raise ValueError(f"model `{self.model.name}` is a {self.model.kind}, not an fsm")
        return self.machine

    # ---- decisions (table)
    def decide(self, table: str, inputs: dict[str, Any]) -> dict[str, Any]:
        from mbt.engine.table import TableEvaluator
        from mbt.model.table import plain
        from mbt.tables.values import coerce

        model = self._kind("table", table)
        values = tuple(coerce(inputs.get(c.name), c.type) for c in model.inputs)
        decision = TableEvaluator(model).decide(values)
        return {"result": None if decision.error else plain(decision.result), "error": decision.error}

    # ---- requests (policy)
    def authorize(self, policy: str, request: dict[str, Any]) -> dict[str, Any]:
        from mbt.engine.policy import PolicyEvaluator
        from mbt.goldens.replay_policy import typed_value

        model = self._kind("policy", policy)
        outcome = PolicyEvaluator(model).evaluate({k: typed_value(v) for k, v in request.items()})
        return {"decision": outcome.decision, "reasons": list(outcome.reasons)}

    def _kind(self, kind: str, name: str):
        if self.model.kind != kind or self.model.name != name:
            raise ValueError(f"this adapter runs {self.model.kind} `{self.model.name}`, not {kind} `{name}`")
        return self.model


@lru_cache(maxsize=32)
def _load(path: str, name: str | None) -> ModelBase:
    from mbt.parsing.loader import load_paths

    models = [m for f in load_paths([path]) for m in f.models]
    chosen = [m for m in models if name is None or m.name == name]
    if not chosen:
        raise ValueError(f"{path}: no model named {name!r}")
    return chosen[0]
