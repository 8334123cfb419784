"""The driver generated tests run on, joined from the conversation driver (mbt/generate/driver.py) and the part each
registered kind adds (`KindSupport.driver`, a DriverPart: `decide` for tables, `authorize` for policies, ...).

`support_source()` is the text `mbt generate` copies beside the tests as mbt_support.py: driver.py as written, with
each part's adapter lines, methods and functions put where driver.py marks them, in registration order. `Driver` is
the same class in mbt (the driver's class with each part's methods), built on first use, and again once a kind is
registered, so `from mbt.generate.support import Driver` drives every kind a copied module would.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from mbt.generate import driver
from mbt.kind import DriverPart, all_kinds, version

# Where driver.py's text takes the parts: each mark is one whole line, replaced by what the parts give there (and
# removed with them). The functions go at the end of the module.
ADAPTER_MARK = "    ...                                 # each kind's own methods join here (mbt.kind.DriverPart.adapter)\n"
METHODS_MARK = "    # ---- each kind's part joins here (mbt.generate.support: mbt.kind.DriverPart.methods)\n"

_BUILT: dict[int, type[driver.Driver]] = {}  # registry version -> the Driver class joined from its kinds


def parts() -> list[DriverPart]:
    """The registered kinds' parts, in registration order."""
    return [k.driver for k in all_kinds() if k.driver is not None]


def support_source() -> str:
    """mbt_support.py: the driver module with every registered kind's part joined in."""
    text = Path(driver.__file__).read_text(encoding="utf-8")
    found = parts()
    text = _put(text, ADAPTER_MARK, "".join(p.adapter for p in found))
    text = _put(text, METHODS_MARK, "".join(_body(p.methods) + "\n" for p in found))
    return text + "".join("\n\n" + inspect.getsource(f) for p in found for f in p.functions)


def driver_class() -> type[driver.Driver]:
    """The Driver of the registered kinds: the conversation driver with each part's methods."""
    built = _BUILT.get(version())
    if built is None:
        bases = tuple(p.methods for p in parts()) + (driver.Driver,)
        built = _BUILT[version()] = type("Driver", bases, {"__doc__": driver.Driver.__doc__,
                                                             "__module__": __name__})
    return built


def driver_methods() -> frozenset[str]:
    """What a generated test may call on the driver: its public methods."""
    return frozenset(name for name, _ in inspect.getmembers(driver_class(), inspect.isfunction)
                     if not name.startswith("_"))


def __getattr__(name: str) -> type[driver.Driver]:
    """`Driver`: driver_class(), so that an import names the class of the kinds registered at the time."""
    if name == "Driver":
        return driver_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _put(text: str, mark: str, insert: str) -> str:
    if text.count(mark) != 1:
        raise ValueError(f"mbt/generate/driver.py must hold the line {mark.strip()!r} once")
    return text.replace(mark, insert)


def _body(cls: type) -> str:
    """The statements of a part's class after its docstring, as written (indented as the Driver's own methods)."""
    lines = inspect.getsource(cls).splitlines(keepends=True)
    node = ast.parse("".join(lines)).body[0]
    if not isinstance(node, ast.ClassDef):
        raise TypeError(f"a DriverPart's methods are a class, not {type(node).__name__}")
    statements = node.body[1:] if ast.get_docstring(node) is not None else node.body
    if not statements:
        raise ValueError(f"{cls.__qualname__} has no methods")
    first = statements[0]
    decorated = first.decorator_list if isinstance(first, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                            ast.ClassDef)) else []
    start = min([first.lineno] + [d.lineno for d in decorated])
    return "".join(lines[start - 1:])
