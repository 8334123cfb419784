"""Which view draws which model kind, and the output formats by file suffix: the seam `mbt render` goes through."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mbt.errors import MbtError
from mbt.measure.coverage import ModelCoverage
from mbt.model.common import ModelBase
from mbt.render.graph import Graph, RenderOptions


@dataclass(frozen=True)
class View:
    """How one model kind is drawn: as a graph (DOT/SVG/PNG) or as a table (Markdown/HTML)."""

    shape: str  # graph | table
    build: Callable[..., object]  # (model, ModelCoverage | None, RenderOptions) -> Graph | TableView
    suffixes: tuple[str, ...]


def _fsm_view() -> View:
    from mbt.render.graph import fsm_graph

    return View("graph", fsm_graph, (".dot", ".svg", ".png"))


def _element_table_view() -> View:
    from mbt.render.table import element_table

    return View("table", element_table, (".md", ".html"))


# Kinds without an entry here cannot be rendered yet; `mbt render` says so plainly. Decision tables, policies and
# invariants use the generic element table (rows per rule/partition/boundary/conflict/trigger with coverage).
_VIEWS: dict[str, Callable[[], View]] = {"fsm": _fsm_view, "table": _element_table_view,
                                         "policy": _element_table_view, "invariant": _element_table_view}


def register(kind: str, factory: Callable[[], View]) -> None:
    _VIEWS[kind] = factory


def view_for(model: ModelBase) -> View:
    factory = _VIEWS.get(model.kind)
    if factory is None:
        raise MbtError(f"error: mbt cannot draw {model.kind} models yet (`{model.name}`)")
    return factory()


def can_draw_graph(model: ModelBase) -> bool:
    factory = _VIEWS.get(model.kind)
    return factory is not None and factory().shape == "graph"


def build(model: ModelBase, model_cov: ModelCoverage | None, options: RenderOptions):
    return view_for(model).build(model, model_cov, options)


def check_suffix(model: ModelBase, output: str) -> str:
    """The output format from the file name; an unsupported one is a bad option (exit 2) before any work."""
    suffix = Path(output).suffix.lower()
    view = view_for(model)
    if suffix not in view.suffixes:
        raise MbtError(f"error: -o {output}: a {model.kind} model renders to "
                       f"{', '.join(view.suffixes)}, not {suffix or 'a file without a suffix'}")
    return suffix


def render_bytes(model: ModelBase, model_cov: ModelCoverage | None, options: RenderOptions, suffix: str) -> bytes:
    """The finished file content for `suffix`."""
    view = view_for(model)
    built = view.build(model, model_cov, options)
    if view.shape == "graph":
        from mbt.render.dot import render_dot, to_dot

        assert isinstance(built, Graph)
        text = to_dot(built)
        return text.encode("utf-8") if suffix == ".dot" else render_dot(text, suffix[1:])
    from mbt.render.table import table_html_page, table_markdown

    return (table_markdown(built) if suffix == ".md" else table_html_page(built)).encode("utf-8")
