"""The only graphviz module: a Graph description as deterministic DOT text, and DOT as SVG/PNG via the `dot` program."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass

from mbt.errors import MbtError
from mbt.render.graph import EXERCISED, INFEASIBLE, UNCOVERED, VERIFIED, WAIVED, Edge, Graph, Node

# One palette for every diagram; the HTML report's CSS uses the same colours.
GREEN, GREEN_FILL = "#1b7a3a", "#d7f0dc"
AMBER, AMBER_FILL = "#b26a00", "#fff1c7"
GREY, GREY_FILL = "#8a8f98", "#f3f4f6"
RED, RED_FILL = "#d00000", "#ffd6d6"
DARK_RED = "#8b1a1a"
BLUE = "#1f5fd1"
INK = "#1f2933"

_STATE_STYLE = {  # coverage -> (border colour, fill, font colour, pen width)
    None: (INK, "#ffffff", INK, "1.2"),
    VERIFIED: (GREEN, GREEN_FILL, INK, "1.6"),
    EXERCISED: (AMBER, AMBER_FILL, INK, "1.6"),
    UNCOVERED: (GREY, "#ffffff", "#59606b", "1.2"),
    WAIVED: (GREY, "#ffffff", "#59606b", "1.2"),
    INFEASIBLE: (GREY, GREY_FILL, GREY, "1"),
}
_EDGE_STYLE = {  # coverage -> (colour, pen width, style)
    None: (INK, "1.2", "solid"),
    VERIFIED: (GREEN, "2", "solid"),
    EXERCISED: (AMBER, "2", "solid"),
    UNCOVERED: (GREY, "1.2", "solid"),
    WAIVED: (GREY, "1.2", "solid"),
    INFEASIBLE: (GREY, "1", "dotted"),
}
_FORBID_STYLE = {  # forbidden edges are always dashed and red; an uncovered one is loud
    None: (RED, "1.6", RED_FILL),
    VERIFIED: (DARK_RED, "1.4", "#ffffff"),
    EXERCISED: (RED, "3.5", RED_FILL),
    UNCOVERED: (RED, "3.5", RED_FILL),
    WAIVED: (AMBER, "2", AMBER_FILL),
    INFEASIBLE: (GREY, "1", GREY_FILL),
}
_MARK = {VERIFIED: "✓ ", EXERCISED: "◐ ", UNCOVERED: "", WAIVED: "", INFEASIBLE: "∅ ", None: ""}


def quote(text: str) -> str:
    """A DOT double-quoted string: backslashes and quotes escaped, newlines as centred line breaks."""
    text = text.replace("\\", "\\\\").replace('"', '\\"')
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "\\n")
    return f'"{text}"'


def html_escape(text: str) -> str:
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
            .replace("\n", "<br/>"))


def anchor(element: str) -> str:
    """The HTML anchor of an element in the report: stable, and safe inside an id and a URL fragment."""
    return "el-" + re.sub(r"[^A-Za-z0-9_.-]", lambda m: f"_{ord(m.group()):x}_", element)


def _attrs(pairs: list[tuple[str, str]]) -> str:
    return "[" + ", ".join(f"{k}={v}" for k, v in pairs) + "]"


# Above this many transitions `dot` (hierarchical layout, edge labels placed) can run for many minutes: such a
# graph is laid out by `sfdp` (force-directed, seconds for thousands of edges) with the edge labels on hover only.
LARGE_GRAPH_EDGES = 250
# Seconds a layout may take before it is stopped (MBT_LAYOUT_TIMEOUT overrides): the report then says so.
LAYOUT_TIMEOUT = 60.0


class LayoutTimeout(MbtError):
    """The layout program ran longer than allowed and was stopped."""


@dataclass(frozen=True)
class Layout:
    engine: str  # dot | sfdp
    note: str | None  # why this is not the usual drawing, for the reader


def layout_for(graph: Graph) -> Layout:
    """The bounded drawing of a graph: `dot` up to LARGE_GRAPH_EDGES transitions, `sfdp` without edge labels above."""
    edges = sum(1 for e in graph.edges if e.kind != "start")
    if edges <= LARGE_GRAPH_EDGES:
        return Layout("dot", None)
    return Layout("sfdp", f"{edges} transitions, more than the {LARGE_GRAPH_EDGES} a readable hierarchical layout "
                          "holds: drawn with sfdp, edge labels on hover; `mbt render --focus STATE` draws a state's "
                          "neighbourhood with every label")


def to_dot(graph: Graph, links: bool = False, layout: Layout | None = None) -> str:
    """DOT text for the graph; `links` adds href attributes pointing at the HTML report's element anchors; a large
    graph's `layout` (layout_for) leaves the edge labels to the tooltips."""
    large = layout is not None and layout.engine != "dot"
    out = [f"digraph {quote(graph.name)} {{"]
    title = graph.title + ("" if not graph.notes else "\n(" + "; ".join(graph.notes) + ")")
    graph_attrs = [('label', quote(title)), ('labelloc', 't'), ('fontname', quote('Helvetica')), ('fontsize', '16'),
                   ('rankdir', 'LR'), ('nodesep', '0.35'), ('ranksep', '0.6'), ('bgcolor', quote('white')),
                   ('pad', '0.3')]
    if large:
        graph_attrs += [('overlap', 'prism'), ('outputorder', 'edgesfirst'), ('splines', 'false')]
    out.append(f"  graph {_attrs(graph_attrs)};")
    out.append(f"  node {_attrs([('fontname', quote('Helvetica')), ('fontsize', '11')])};")
    out.append(f"  edge {_attrs([('fontname', quote('Helvetica')), ('fontsize', '9')])};")
    by_cluster: dict[str | None, list[Node]] = {}
    for n in graph.nodes:
        by_cluster.setdefault(n.cluster, []).append(n)
    for n in by_cluster.get(None, []):
        out.append("  " + _node(n, links))
    for name in sorted(graph.clusters):
        out.append(f"  subgraph {quote('cluster_' + name)} {{")
        cluster_attrs = [('label', quote(graph.clusters[name])), ('style', quote('rounded,dashed')),
                         ('color', quote(GREY)), ('fontsize', '10')]
        out.append(f"    graph {_attrs(cluster_attrs)};")
        for n in by_cluster.get(name, []):
            out.append("    " + _node(n, links))
        out.append("  }")
    for e in graph.edges:
        out.append("  " + _edge(e, links, large))
    if graph.legend:
        out.append("  " + _legend(graph))
    out.append("}")
    return "\n".join(out) + "\n"


def _node(n: Node, links: bool) -> str:
    if n.kind == "start":
        return f"{quote(n.id)} {_attrs([('shape', 'point'), ('width', '0.18'), ('color', quote(INK)), ('label', quote(''))])};"
    pairs: list[tuple[str, str]] = []
    if n.kind == "forbidden-effect":
        colour, width, fill = _FORBID_STYLE[n.coverage]
        mark = "✗ NOT TESTED\n" if n.coverage in (UNCOVERED, EXERCISED) else _MARK.get(n.coverage, "")
        if n.coverage == WAIVED:
            mark = "waived\n"
        pairs += [("shape", "octagon"), ("style", quote("filled,dashed" if n.coverage != VERIFIED else "dashed")),
                  ("color", quote(colour)), ("fillcolor", quote(fill)),
                  ("fontcolor", quote(RED if n.coverage in (UNCOVERED, EXERCISED, None) else DARK_RED)),
                  ("penwidth", width), ("fontsize", "10"), ("label", quote(mark + n.label))]
    else:
        border, fill, font, width = _STATE_STYLE[n.coverage]
        style = "rounded,filled" + (",bold" if n.on_path else "")
        pairs += [("shape", "box"), ("style", quote(style)), ("color", quote(BLUE if n.on_path else border)),
                  ("fillcolor", quote(fill)), ("fontcolor", quote(font)),
                  ("penwidth", "3" if n.on_path else width), ("label", quote(_MARK.get(n.coverage, "") + n.label))]
        if n.final:
            pairs.append(("peripheries", "2"))
        if n.initial:
            pairs.append(("fontname", quote("Helvetica-Bold")))
    if n.tooltip:
        pairs.append(("tooltip", quote(n.tooltip)))
    pairs.append(("id", quote(n.id)))
    if links and n.element:
        pairs.append(("href", quote("#" + anchor(n.element))))
    return f"{quote(n.id)} {_attrs(pairs)};"


def _edge(e: Edge, links: bool, large: bool = False) -> str:
    ends = f"{quote(e.source)} -> {quote(e.target)}"
    if e.kind == "start":
        return f"{ends} {_attrs([('color', quote(INK)), ('arrowsize', '0.8')])};"
    label = e.label
    if e.path_steps:
        label = "#" + ",#".join(str(s) for s in e.path_steps) + "  " + label
    if e.kind == "forbidden":
        colour, width, _ = _FORBID_STYLE[e.coverage]
        if e.coverage in (UNCOVERED, EXERCISED):
            label = "✗ NOT TESTED\n" + label
        elif e.coverage == VERIFIED:
            label = "✓ " + label
        elif e.coverage == WAIVED:
            label = "(waived) " + label
        pairs = [("color", quote(colour)), ("fontcolor", quote(colour)), ("style", "dashed"), ("penwidth", width),
                 ("arrowhead", "tee" if e.target.startswith("forbid:") else "normal")]
    else:
        colour, width, style = _EDGE_STYLE[e.coverage]
        label = _MARK.get(e.coverage, "") + label
        pairs = [("color", quote(colour)), ("fontcolor", quote(INK if e.coverage != UNCOVERED else "#59606b")),
                 ("style", style), ("penwidth", width)]
    if e.path_steps:
        pairs = [(k, v) for k, v in pairs if k not in ("color", "penwidth")]
        pairs += [("color", quote(f"{BLUE}:{BLUE}")), ("penwidth", "2.5")]
    pairs.append(("label", quote("" if large else label)))
    if e.tooltip:
        pairs += [("tooltip", quote(e.tooltip)), ("labeltooltip", quote(e.tooltip))]
    if e.element:
        pairs.append(("id", quote("edge:" + e.element)))
        if links:
            pairs.append(("href", quote("#" + anchor(e.element))))
    return f"{ends} {_attrs(pairs)};"


def _legend(graph: Graph) -> str:
    """The legend as one HTML-like table node, kept out of the layout's way (rank=sink)."""
    rows = ['<TR><TD COLSPAN="2" ALIGN="LEFT"><B>Legend</B></TD></TR>']
    for what, coverage, text in graph.legend:
        if what == "state":
            border, fill, _, _ = _STATE_STYLE[coverage]
            swatch = f'<TD BGCOLOR="{fill}" COLOR="{border}" BORDER="2" WIDTH="28">{html_escape(_MARK.get(coverage, "") or " ")}</TD>'
        elif what == "forbidden":
            colour, _, fill = _FORBID_STYLE[coverage]
            swatch = f'<TD BGCOLOR="{fill}" COLOR="{colour}" BORDER="2" WIDTH="28"><FONT COLOR="{colour}">✗</FONT></TD>'
        elif what == "path":
            swatch = f'<TD BGCOLOR="{BLUE}" WIDTH="28"> </TD>'
        else:
            swatch = f'<TD WIDTH="28"><FONT COLOR="{INK}">→</FONT></TD>'
        rows.append(f'<TR>{swatch}<TD ALIGN="LEFT">{html_escape(text)}</TD></TR>')
    table = f'<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="3" CELLPADDING="3">{"".join(rows)}</TABLE>>'
    return f'"legend" [shape=box, style="rounded", color="{GREY}", fontsize="9", label={table}];'


FORMATS = ("svg", "png")


def layout_timeout() -> float:
    try:
        return float(os.environ.get("MBT_LAYOUT_TIMEOUT", LAYOUT_TIMEOUT))
    except ValueError:
        return LAYOUT_TIMEOUT


def render_dot(dot_text: str, fmt: str, engine: str = "dot", timeout: float | None = None) -> bytes:
    """Lay out DOT text with graphviz's `engine` program, stopped after `timeout` seconds (default:
    layout_timeout()); a missing program or a layout that fails or runs too long is a clear error."""
    if fmt not in FORMATS:
        raise MbtError(f"cannot render to .{fmt}; use .dot, .svg or .png")
    program = shutil.which(engine)
    if program is None:
        raise MbtError(f"the graphviz program `{engine}` is not installed (Debian: apt-get install graphviz); "
                       "write a .dot file instead, or install it")
    limit = layout_timeout() if timeout is None else timeout
    try:
        done = subprocess.run([program, f"-T{fmt}"], input=dot_text.encode("utf-8"), capture_output=True,
                              timeout=limit, check=False)
    except subprocess.TimeoutExpired:
        raise LayoutTimeout(f"`{engine}` took longer than {limit:g} s to lay out the diagram and was stopped "
                            "(MBT_LAYOUT_TIMEOUT sets the limit; `mbt render --focus STATE` draws a part)") from None
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise MbtError(f"`{engine}` failed to lay out the diagram" + (f": {detail[-1]}" if detail else ""))
    return done.stdout


def svg_text(dot_text: str, engine: str = "dot") -> str:
    """SVG markup without the XML prolog and DOCTYPE, ready to embed inline in an HTML page."""
    svg = render_dot(dot_text, "svg", engine).decode("utf-8")
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else svg
