"""The report's rows as they cross processes (`--jobs`, `--engine dask`: mbt.runs.parts): each run's row as its plain
field values, rebuilt on the other side into the same pydantic objects, field for field.

Pickling the rows as pydantic objects calls pydantic's `__getstate__` / `__setstate__` for each row and each nested
model, and carries a set of field names with every one of them: about 20 µs a row there and back. As plain values
(lists and tuples pickle in C) and rebuilt without a second validation, about 10 µs. The rows were validated when they
were made, in the process that judged them; what is rebuilt here is those values, in the same fields, with the same
`model_fields_set`, so a row that crossed is equal to one made here and dumps the same JSON (tests/test_runs_rows.py).
The rarer nested models (a run's grounding, a contract's items) travel as they are.
"""

from __future__ import annotations

from dataclasses import fields
from operator import attrgetter
from typing import Any

from pydantic import BaseModel

from mbt.runs.results import DeviationOut, Evidence, RunResult
from mbt.runs.steps import RunContext

_ROW = tuple(RunResult.model_fields)
_EVIDENCE = tuple(Evidence.model_fields)
_DEVIATION = tuple(DeviationOut.model_fields)
_CONTEXT = tuple(f.name for f in fields(RunContext))
_context_values = attrgetter(*_CONTEXT)
_AT_EVIDENCE, _AT_CONTEXT, _AT_DEVIATION = _ROW.index("evidence"), _ROW.index("context"), _ROW.index("deviation")

_set = object.__setattr__  # pydantic's own way past its __setattr__ (what model_construct does)


class PackedRows:
    """Rows as plain values: per row its field values (evidence, context and deviation as tuples of theirs) and the
    number of its models' sets of given fields in a table (a handful of distinct sets among any number of rows)."""

    def __init__(self, rows: list[RunResult]) -> None:
        self.sets: list[tuple[frozenset[str], frozenset[str], frozenset[str] | None]] = []
        self.values: list[tuple[int, list[Any]]] = []
        numbers: dict[tuple[frozenset[str], frozenset[str], frozenset[str] | None], int] = {}
        for row in rows:
            if type(row) is not RunResult or row.__pydantic_extra__ or row.__pydantic_private__:
                raise TypeError(f"not a plain report row: {type(row).__name__}")  # never made by mbt.runs.measure
            values = list(row.__dict__.values())
            evidence, deviation = row.evidence, row.deviation
            values[_AT_EVIDENCE] = tuple(evidence.__dict__.values())
            values[_AT_CONTEXT] = _context_values(row.context)
            if deviation is not None:
                values[_AT_DEVIATION] = tuple(deviation.__dict__.values())
            given = (frozenset(row.__pydantic_fields_set__), frozenset(evidence.__pydantic_fields_set__),
                     frozenset(deviation.__pydantic_fields_set__) if deviation is not None else None)
            number = numbers.get(given)
            if number is None:
                number = numbers[given] = len(self.sets)
                self.sets.append(given)
            self.values.append((number, values))

    def rows(self) -> list[RunResult]:
        """The rows, rebuilt."""
        out = []
        for number, values in self.values:
            row_given, evidence_given, deviation_given = self.sets[number]
            values[_AT_EVIDENCE] = _model(Evidence, _EVIDENCE, values[_AT_EVIDENCE], evidence_given)
            values[_AT_CONTEXT] = RunContext(*values[_AT_CONTEXT])
            if deviation_given is not None:
                values[_AT_DEVIATION] = _model(DeviationOut, _DEVIATION, values[_AT_DEVIATION], deviation_given)
            out.append(_model(RunResult, _ROW, values, row_given))
        return out


def _model(cls: type[BaseModel], names: tuple[str, ...], values: Any, given: frozenset[str]) -> Any:
    obj = cls.__new__(cls)
    _set(obj, "__dict__", dict(zip(names, values, strict=True)))
    _set(obj, "__pydantic_fields_set__", set(given))  # its own: pydantic adds to it when a field is assigned
    _set(obj, "__pydantic_extra__", None)
    _set(obj, "__pydantic_private__", None)
    return obj
