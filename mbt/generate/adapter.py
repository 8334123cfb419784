"""The reference adapter: generated tests driving mbt's own executable semantics instead of a real system -- the
`transitions` reference machine for an FSM, the table evaluator, the policy evaluator, whatever a kind registers as
its `KindSupport.reference`. Generated tests pass against it by construction and fail against a mutated model's,
which is how mbt's own tests prove that generated tests test something. `MBT_ADAPTER=reference` selects it."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from mbt.kind import support
from mbt.model.common import ModelBase
from mbt.parsing.loader import load_paths


@runtime_checkable
class Conversation(Protocol):
    """A reference that holds conversations: the adapter methods the driver's start and step call."""

    def reset(self, state: str | None, variables: dict[str, Any], discarded: dict[str, Any], /) -> None: ...

    def send(self, event: str, args: dict[str, Any], user: str | None = None, /) -> None: ...

    def observe(self) -> dict[str, Any]: ...


class ReferenceAdapter:
    """The adapter protocol of mbt_support over one model, each call answered by the reference of the model's kind:
    the conversation (reset / send / observe) and the methods of the kind's own (decide, authorize, ...)."""

    def __init__(self, model: ModelBase):
        self.model = model
        make = support(model.kind).reference
        self.reference: object | None = make(model) if make is not None else None

    @classmethod
    def from_file(cls, path: str | Path, model: str | None = None) -> ReferenceAdapter:
        return cls(_load(str(Path(path).resolve()), model))

    # ---- conversations (the driver's start and step)
    def reset(self, state: str | None, variables: dict[str, Any], discarded: dict[str, Any]) -> None:
        self._conversation().reset(state, variables, discarded)

    def send(self, event: str, args: dict[str, Any], user: str | None = None) -> None:
        self._conversation().send(event, args, user)

    def observe(self) -> dict[str, Any]:
        return self._conversation().observe()

    def _conversation(self) -> Conversation:
        if not isinstance(self.reference, Conversation):
            raise ValueError(f"model `{self.model.name}` is a {self.model.kind}, which holds no conversation")
        return self.reference

    # ---- the kind's own methods (its DriverPart calls them): decide for a table, authorize for a policy, ...
    def __getattr__(self, name: str) -> object:
        reference = self.__dict__.get("reference")  # not self.reference: __getattr__ again, before __init__ sets it
        found = getattr(reference, name, None) if reference is not None and not name.startswith("_") else None
        if found is None:
            model = self.__dict__.get("model")
            what = f"{model.kind} `{model.name}`" if isinstance(model, ModelBase) else "no model yet"
            raise AttributeError(f"the reference adapter of {what} has no `{name}`")
        return found


@lru_cache(maxsize=32)
def _load(path: str, name: str | None) -> ModelBase:
    models = [m for f in load_paths([path]) for m in f.models]
    chosen = [m for m in models if name is None or m.name == name]
    if not chosen:
        raise ValueError(f"{path}: no model named {name!r}")
    return chosen[0]
