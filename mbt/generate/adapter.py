"""The reference adapter: generated tests driving mbt's executable reference machine (`transitions`) instead of a
real system. Generated suites pass against it by construction, and fail against a mutated model's machine, which is
how mbt's own tests prove that generated tests test something. `MBT_ADAPTER=reference` selects it."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from mbt.model.fsm import FsmModel
from mbt.reference import ReferenceMachine


class ReferenceAdapter:
    """The adapter protocol of mbt_support (reset / send / observe) over a ReferenceMachine built from any FsmModel."""

    def __init__(self, model: FsmModel):
        self.machine = ReferenceMachine(model)
        self._accepted: bool | None = None

    @classmethod
    def from_file(cls, path: str | Path, model: str | None = None) -> "ReferenceAdapter":
        return cls(_load(str(Path(path).resolve()), model))

    def reset(self, state: str | None, variables: dict[str, Any], discarded: dict[str, Any]) -> None:
        self.machine.reset(state, variables, discarded)
        self._accepted = None

    def send(self, event: str, args: dict[str, Any], user: str | None = None) -> None:
        self._accepted = self.machine.send(event, args)

    def observe(self) -> dict[str, Any]:
        m = self.machine
        return {"state": m.state, "accepted": self._accepted, "variables": dict(m.variables),
                "discarded": dict(m.discarded), "calls": [(c.tool, dict(c.args)) for c in m.last_calls],
                "outputs": []}  # the model says nothing: `say` effects are behaviour outside it


@lru_cache(maxsize=32)
def _load(path: str, name: str | None) -> FsmModel:
    from mbt.parsing.loader import load_paths

    models = [m for f in load_paths([path]) for m in f.models if isinstance(m, FsmModel)]
    chosen = [m for m in models if name is None or m.name == name]
    if not chosen:
        raise ValueError(f"{path}: no fsm model named {name!r}")
    return chosen[0]
