"""How the table kind's generated tests run: its part of their driver (`decide`, copied into mbt_support.py) and its
reference (`MBT_ADAPTER=reference`: the table evaluator answers `decide`)."""

from __future__ import annotations

from typing import Any

from mbt.engine.table import TableEvaluator
from mbt.generate.driver import Driver, same
from mbt.kind import DriverPart
from mbt.model.table import TableModel, plain
from mbt.tables.values import coerce


class TableDriver(Driver):
    """The driver's method for decision tables."""

    def decide(self, table: str, inputs: dict[str, Any], expect: Any = None, error: bool = False) -> None:
        """Evaluate a decision table on `inputs`: the outputs must be `expect` (or the hit policy must fail)."""
        seen = self.adapter.decide(table, dict(inputs))
        failed, result = seen.get("error"), seen.get("result")
        where = f"table `{table}` with {inputs!r}"
        if error and not failed:
            raise AssertionError(f"{where}: the model's hit policy fails here, the system gives {result!r}")
        if not error and failed:
            raise AssertionError(f"{where}: the system fails ({failed}), the model gives {expect!r}")
        if not error and not same(_numbers(result), _numbers(expect)):
            raise AssertionError(f"{where}: the system gives {result!r}, the model gives {expect!r}")


def _numbers(value: Any) -> Any:
    """Numbers compared by value (120 == 120.0; a decimal the system returns as text is its number)."""
    if isinstance(value, dict):
        return {k: _numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_numbers(v) for v in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return value


ADAPTER = ('    decide(table, inputs)               # a decision table: '
           '{"result": outputs (a dict, or a list), "error": text/None}\n')
DRIVER = DriverPart(TableDriver, ADAPTER, (_numbers,))


class TableReference:
    """The table evaluator answering `decide` for one table."""

    def __init__(self, model: TableModel):
        self.model = model

    def decide(self, table: str, inputs: dict[str, Any]) -> dict[str, Any]:
        if table != self.model.name:
            raise ValueError(f"this adapter runs table `{self.model.name}`, not table `{table}`")
        values = tuple(coerce(inputs.get(c.name), c.type) for c in self.model.inputs)
        decision = TableEvaluator(self.model).decide(values)
        return {"result": None if decision.error else plain(decision.result), "error": decision.error}
