"""docs/architecture.md states what the code does: its module table names every module and package of mbt/, and
only those (the table is checked against the tree)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def named_in_the_table() -> set[str]:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = text[text.index("| package / module | job |"):text.index("## Adding a model kind")]
    names: set[str] = set()
    for row in table.splitlines()[2:]:
        cell, _, job = row.strip("|").partition("|")
        folder = cell.strip().strip("`")
        if not folder.startswith("mbt/"):
            continue
        if folder.endswith(".py"):
            names.add(folder)
            continue
        names.add(folder.rstrip("/"))
        for module in re.findall(r"`([a-z_/<>]+\.py)`", job):
            if "<" not in module:
                names.add(f"{folder.rstrip('/')}/{module}")
    return names


def test_every_module_is_in_the_architecture_table_and_nothing_else():
    modules = {str(p.relative_to(ROOT)) for p in (ROOT / "mbt").rglob("*.py") if "__pycache__" not in p.parts}
    packages = {str(p.parent.relative_to(ROOT)) for p in (ROOT / "mbt").rglob("__init__.py")} - {"mbt"}
    named = named_in_the_table()
    top_packages = {p for p in packages if p.count("/") == 1}
    assert top_packages <= named, f"packages missing from docs/architecture.md: {sorted(top_packages - named)}"
    stray = {n for n in named if n.endswith(".py") and n not in modules}
    assert not stray, f"docs/architecture.md names modules that do not exist: {sorted(stray)}"
    flat = {m for m in modules if m.count("/") == 1 and not m.endswith("__init__.py")}
    assert flat <= named, f"modules missing from docs/architecture.md: {sorted(flat - named)}"
    for package in top_packages:
        inside = {m for m in modules if m.startswith(package + "/") and m.count("/") == 2
                  and not m.endswith("__init__.py")}
        missing = {m for m in inside if m not in named}
        assert not missing, f"modules of {package} missing from docs/architecture.md: {sorted(missing)}"


def _annotation_only(tree) -> set[int]:
    """ids of the import nodes under `if TYPE_CHECKING:`: they name types for annotations and never run."""
    import ast

    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and (getattr(node.test, "id", None) == "TYPE_CHECKING"
                                         or getattr(node.test, "attr", None) == "TYPE_CHECKING"):
            found.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return found


def test_no_import_cycles_and_nothing_imports_the_facade():
    """Issue 12: every import between mbt's modules, function-level ones included, forms a graph without cycles, and
    only the CLI imports mbt.api. Imports under `if TYPE_CHECKING:` (annotations only; mbt.kind names every stage's
    types so) never run and are left out."""
    import ast

    import networkx as nx

    modules = {}
    for path in (ROOT / "mbt").rglob("*.py"):
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        modules[name] = path
    graph = nx.DiGraph()
    importers_of_api = set()
    for name, path in modules.items():
        graph.add_node(name)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skipped = _annotation_only(tree)
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                targets = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                continue
            for target in targets:
                if target in modules and target != name:
                    graph.add_edge(name, target)
                    if target == "mbt.api":
                        importers_of_api.add(name)
    cycles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert cycles == []
    assert importers_of_api <= {"mbt.cli"}, importers_of_api


def test_every_package_is_shipped_in_the_wheel():
    """pyproject.toml lists the packages by hand: a new package missing there is missing from every install."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"])
    packages = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "mbt").rglob("__init__.py")}
    assert packages - listed == set(), f"add to [tool.setuptools] packages: {sorted(packages - listed)}"


def test_every_importer_entry_names_a_function_of_its_signature():
    """mbt/importer.py names its importers by "module:function" strings: each must be importable and take what its
    type says (a path; the group loader a list of paths; the sniffer a path)."""
    import inspect

    from mbt.importer import IMPORTERS

    for suffix, entry in IMPORTERS.items():
        for name in filter(None, (entry.loader, entry.group_loader, entry.sniff)):
            module, _, function = name.partition(":")
            found = getattr(__import__(module, fromlist=[function]), function)
            params = [p for p in inspect.signature(found).parameters.values() if p.default is p.empty]
            assert len(params) == 1, (suffix, name)
