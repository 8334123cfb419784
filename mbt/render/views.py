"""Which view draws a model (its kind's KindSupport.view), and the output formats by file suffix."""

from __future__ import annotations

from pathlib import Path

from mbt.errors import MbtError
from mbt.kind import View, support
from mbt.measure.coverage import ModelCoverage
from mbt.model.common import ModelBase
from mbt.render.dot import layout_for, render_dot, to_dot
from mbt.render.graph import Graph, RenderOptions
from mbt.render.table import TableView, table_html_page, table_markdown


def view_for(model: ModelBase) -> View:
    """The kind's view (KindSupport.view); a kind without one cannot be rendered, and `mbt render` says so."""
    view = support(model.kind).view
    if view is None:
        raise MbtError(f"mbt cannot draw {model.kind} models yet (`{model.name}`)")
    return view


def can_draw_graph(model: ModelBase) -> bool:
    view = support(model.kind).view
    return view is not None and view.shape == "graph"


def build(model: ModelBase, model_cov: ModelCoverage | None, options: RenderOptions) -> Graph | TableView:
    return view_for(model).build(model, model_cov, options)


def check_suffix(model: ModelBase, output: str) -> str:
    """The output format from the file name; an unsupported one is a bad option (exit 2) before any work."""
    suffix = Path(output).suffix.lower()
    view = view_for(model)
    if suffix not in view.suffixes:
        raise MbtError(f"-o {output}: a {model.kind} model renders to "
                       f"{', '.join(view.suffixes)}, not {suffix or 'a file without a suffix'}")
    return suffix


def render_bytes(model: ModelBase, model_cov: ModelCoverage | None, options: RenderOptions,
                 suffix: str) -> tuple[bytes, str | None]:
    """The finished file content for `suffix`, and a note when a large graph is drawn in its bounded form (a .dot
    file is always the whole graph: other tools lay it out)."""
    view = view_for(model)
    built = view.build(model, model_cov, options)
    if view.shape == "graph":
        assert isinstance(built, Graph)
        if suffix == ".dot":
            return to_dot(built).encode("utf-8"), None
        layout = layout_for(built)
        return render_dot(to_dot(built, layout=layout), suffix[1:], layout.engine), layout.note
    assert isinstance(built, TableView)
    return (table_markdown(built) if suffix == ".md" else table_html_page(built)).encode("utf-8"), None
