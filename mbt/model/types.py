"""Value types shared by every kind: bool, bounded int, string, enum, each optionally `none`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ValueType:
    """A value type; `optional` admits `none`."""

    kind: str  # "bool" | "int" | "string" | "enum"
    lo: int | None = None
    hi: int | None = None
    values: tuple[str, ...] = ()
    optional: bool = False

    def text(self) -> str:
        if self.kind == "int":
            base = f"int[{self.lo}..{self.hi}]"
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
            return 0 if self.lo <= 0 <= self.hi else self.lo
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
            return isinstance(value, int) and not isinstance(value, bool) and self.lo <= value <= self.hi
        if self.kind == "enum":
            return isinstance(value, str) and value in self.values
        return isinstance(value, str)

    def comparable_with(self, other: "ValueType") -> bool:
        numeric = {"int"}
        if self.kind in numeric and other.kind in numeric:
            return True
        if self.kind == "enum" and other.kind == "enum":
            return bool(set(self.values) & set(other.values)) or self.values == other.values
        return self.kind == other.kind


BOOL = ValueType("bool")
STRING = ValueType("string")
NONE_TYPE = ValueType("none", optional=True)
