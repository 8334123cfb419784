"""Value types shared by every kind: bool, int, string, enum, decimal number at a precision, each optionally `none`."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal


@dataclass(frozen=True)
class ValueType:
    """A value type; `optional` admits `none`."""

    kind: str  # "bool" | "int" | "string" | "enum" | "number"
    lo: int | Decimal | None = None  # a number's bounds are Decimals; None: unbounded on that side (plain `int` too)
    hi: int | Decimal | None = None
    values: tuple[str, ...] = ()
    optional: bool = False
    scale: int = 0  # a number's precision is 10**-scale (scale 2: steps of 0.01)

    @property
    def step(self) -> Decimal:
        """The smallest difference between two values of a number (1 for whole numbers)."""
        return Decimal(1).scaleb(-self.scale)

    def text(self) -> str:
        if self.kind == "int":
            base = "int" if self.lo is None and self.hi is None else f"int[{self.lo}..{self.hi}]"
        elif self.kind == "number":
            base = f"number precision {self.step}"
            if self.lo is not None or self.hi is not None:
                base += f" [{'' if self.lo is None else self.lo}..{'' if self.hi is None else self.hi}]"
        elif self.kind == "enum":
            base = "enum{" + ", ".join(self.values) + "}"
        else:
            base = self.kind
        return base + ("?" if self.optional else "")

    def default(self):
        """The value a variable of this type starts with when the model gives none."""
        if self.optional:
            return None
        if self.kind == "bool":
            return False
        if self.kind == "int":
            return 0 if self.within(0) else self.lo if self.lo is not None else self.hi
        if self.kind == "number":
            zero = Decimal(0).quantize(self.step)
            if self.lo is not None and zero < self.lo:
                return self.lo
            if self.hi is not None and zero > self.hi:
                return self.hi
            return zero
        if self.kind == "enum":
            return self.values[0]
        return ""

    def admits(self, value) -> bool:
        """True when `value` (a plain Python value) belongs to this type."""
        if value is None:
            return self.optional
        if self.kind == "bool":
            return isinstance(value, bool)
        if self.kind == "int":
            return isinstance(value, int) and not isinstance(value, bool) and self.within(value)
        if self.kind == "enum":
            return isinstance(value, str) and value in self.values
        if self.kind == "number":
            if isinstance(value, bool) or not isinstance(value, (int, Decimal)) or not Decimal(value).is_finite():
                return False
            if (self.lo is not None and value < self.lo) or (self.hi is not None and value > self.hi):
                return False
            scaled = Decimal(value).scaleb(self.scale)
            return scaled == scaled.to_integral_value()  # on the precision's grid: 100.01 is, 100.005 is not
        return isinstance(value, str)

    def within(self, value) -> bool:
        """`value` lies inside the bounds (a missing bound does not limit: plain `int` is any whole number)."""
        return (self.lo is None or self.lo <= value) and (self.hi is None or value <= self.hi)

    def comparable_with(self, other: ValueType) -> bool:
        numeric = {"int", "number"}
        if self.kind in numeric and other.kind in numeric:
            return True
        if self.kind == "enum" and other.kind == "enum":
            return bool(set(self.values) & set(other.values)) or self.values == other.values
        return self.kind == other.kind


BOOL = ValueType("bool")
STRING = ValueType("string")
NONE_TYPE = ValueType("none", optional=True)
