"""yEd GraphML models in GraphWalker's label syntax, read into the document shape of GraphWalker's JSON.

GraphWalker users mostly draw their models in yEd: a node's label is `v_Name` with optional `SHARED:Name`,
`INIT: x = 1;` (the model's start actions), `REQTAG: a, b` and `BLOCKED`; a node labelled `Start` is the start, and
the edge leaving it is walked first; an edge's label is `e_Name`, `[guard]`, `/action; action;`, `REQTAG: ...`,
`weight=0.5` and `BLOCKED`, in any order, `/* comments */` skipped (GraphWalker's YEdVertexParser /
YEdEdgeParser grammars). The file becomes `{"models": [{...}]}` with the position of every node and edge, and
mbt.importers.graphwalker converts it as it does JSON. The XML is read with defusedxml (no DTD, no entities).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from xml.etree.ElementTree import Element

from mbt.errors import LocatedError, Problem, problem_at
from mbt.importers.jsonread import Ends, Path_, Positions, long_number
from mbt.importers.xmlread import parse_xml, position

GRAPHML = "{http://graphml.graphdrawing.org/xmlns}"
YWORKS = "{http://www.yworks.com/xml/graphml}"


def _label(el: Element, tag: str) -> tuple[str, Element | None]:
    """The text of an element's yEd labels (GraphWalker joins several), and the first label element."""
    labels = [lab for lab in el.iter(f"{YWORKS}{tag}")]
    return "".join(lab.text or "" for lab in labels), (labels[0] if labels else None)


# ---------------------------------------------------------------- labels

_SPACE = re.compile(r"\s+")
_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_NAME = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*")
_KEYWORD = re.compile(r"(BLOCKED|SHARED|INIT|REQTAG|[Ww][Ee][Ii][Gg][Hh][Tt]|[Dd][Ee][Pp][Ee][Nn][Dd][Ee][Nn][Cc][Yy])"
                      r"(?![\w$])")


class LabelError(Exception):
    """A label outside GraphWalker's yEd syntax."""


def _brackets(text: str, i: int) -> int:
    """The index after the `]` that closes the `[` at i (brackets nest)."""
    depth = 0
    for j in range(i, len(text)):
        if text[j] == "[":
            depth += 1
        elif text[j] == "]":
            depth -= 1
            if depth == 0:
                return j + 1
    raise LabelError("a `[` is not closed")


def _statements_to_last_semicolon(text: str, i: int) -> tuple[str, int]:
    # GraphWalker's grammar: actions are `...;` groups, taken greedily, so they run to the label's last `;`.
    last = text.rfind(";", i)
    if last < 0:
        raise LabelError("actions end with `;`")
    return text[i:last + 1].strip(), last + 1


def _value(text: str, i: int, what: str) -> tuple[str, int]:
    m = re.compile(r"\s*[:=]\s*").match(text, i)
    if m is None:
        raise LabelError(f"`{what}` is followed by `:` or `=` and a value")
    return text[m.end():], m.end()


def parse_label(text: str, vertex: bool) -> dict:
    """A vertex or edge label as GraphWalker reads it: name, guard, actions, requirements, weight, shared, blocked."""
    out: dict[str, Any] = {}
    # GraphWalker's label lexer skips `/* ... */` comments (a label may be only one).
    text = _COMMENT.sub(" ", text)
    if vertex and text.strip().lower() == "start":
        return {"start": True}
    i = 0
    while i < len(text):
        m = _SPACE.match(text, i)
        if m:
            i = m.end()
            continue
        c = text[i]
        keyword = _KEYWORD.match(text, i)
        if c == "[" and not vertex:
            end = _brackets(text, i)
            out["guard"] = text[i + 1:end - 1].strip()
            i = end
        elif c == "/" and not vertex:
            out["actions"], i = _statements_to_last_semicolon(text, i + 1)
        elif keyword:
            word = keyword.group(1)
            upper = word.upper()
            i = keyword.end()
            if upper == "BLOCKED":
                out["blocked"] = True
            elif upper == "SHARED" and vertex:
                rest, i = _value(text, i, word)
                name = _NAME.match(text, i)
                if name is None:
                    raise LabelError("`SHARED:` is followed by a name")
                out["sharedState"], i = name.group(), name.end()
            elif upper == "INIT" and vertex:
                _, i = _value(text, i, word)
                out["init"], i = _statements_to_last_semicolon(text, i)
            elif upper == "REQTAG":
                rest, i = _value(text, i, word)
                line = rest.split("\n", 1)[0]
                out["requirements"] = [t.strip() for t in line.split(",") if t.strip()]
                i += len(line)
            elif upper in ("WEIGHT", "DEPENDENCY") and not vertex:
                rest, i = _value(text, i, word)
                number = re.match(r"\d+(?:\.\d+)?|\.\d+", rest)
                if number is None:
                    raise LabelError(f"`{word}` needs a number")
                if long_number(number.group()) is not None:  # the JSON's limit: float() would make it infinite
                    raise LabelError(f"`{word}`: {long_number(number.group())}")
                out[upper.lower()] = float(number.group()) if upper == "WEIGHT" else int(float(number.group()))
                i += number.end()
            else:
                raise LabelError(f"`{word}` is not part of {'a vertex' if vertex else 'an edge'} label")
        elif _NAME.match(text, i) and "name" not in out:
            name = _NAME.match(text, i)
            assert name is not None
            out["name"], i = name.group(), name.end()
            while i < len(text) and text[i] == ";":  # `names: name (; name)*`: the first one names the element
                more = _NAME.match(text, i + 1)
                if more is None:
                    break
                i = more.end()
        else:
            raise LabelError(f"`{text[i:i + 20].strip()}` is outside GraphWalker's {'vertex' if vertex else 'edge'} "
                             "label syntax")
    return out


# ---------------------------------------------------------------- the document


def read_graphml(text: str, shown: str) -> tuple[dict[str, Any], Positions, Ends]:
    """The GraphML file as GraphWalker's JSON document shape, where each value starts and where the names end (see
    jsonread.read_json)."""
    root = parse_xml(text, shown, "GraphML")
    if root.tag != f"{GRAPHML}graphml":
        raise LocatedError([Problem(shown, 1, 1, "not a GraphML file: the root element is not `graphml`")])
    lines = text.split("\n")
    title = Path(shown).stem
    place = ("models", 0)
    positions: Positions = {(): (1, 1), place: position(root)}
    ends: Ends = {}
    model: dict[str, Any] = {"name": title, "id": title, "vertices": [], "edges": []}
    actions: list[str] = []
    starts: set[str] = set()

    def located(el: Element, message: str) -> LocatedError:
        line, column = position(el)
        return LocatedError([problem_at(shown, text, line, column, message)])

    def name_at(label_el: Element, name: str, key: Path_) -> None:
        # The name is in the label's text, after the label's start on its line or a few after it (attributes may
        # wrap): where it starts and ends, so a file on one line still tells each name's place.
        first, column = position(label_el)
        for n in range(first, min(first + 30, len(lines)) + 1):
            found = lines[n - 1].find(name, column - 1 if n == first else 0)
            if found >= 0:
                positions[key] = (n, found + 1)
                ends[key] = (n, found + len(name))
                return
        positions[key] = (first, 1)

    for node in root.iter(f"{GRAPHML}node"):
        if node.find(f"{GRAPHML}graph") is not None:
            continue  # a group node: its nodes are read on their own
        node_id = node.get("id")
        label, label_el = _label(node, "NodeLabel")
        try:
            fields = parse_label(label, vertex=True)
        except LabelError as err:
            raise located(label_el if label_el is not None else node, f"node {node_id}: label `{label.strip()}`: "
                                                                    f"{err}") from None
        if fields.get("start"):
            starts.add(str(node_id))
            continue
        j = len(model["vertices"])
        vplace = (*place, "vertices", j)
        vertex: dict[str, Any] = {"id": node_id}
        positions[vplace] = positions[(*vplace, "id")] = position(node)
        if "name" in fields:
            vertex["name"] = fields["name"]
            if label_el is not None:
                name_at(label_el, fields["name"], (*vplace, "name"))
        for key in ("sharedState", "requirements"):
            if key in fields:
                vertex[key] = fields[key]
        if fields.get("blocked"):
            vertex["properties"] = {"blocked": True}
        if "init" in fields:
            actions.append(fields["init"])
        model["vertices"].append(vertex)
    for edge_el in root.iter(f"{GRAPHML}edge"):
        edge_id = edge_el.get("id")
        label, label_el = _label(edge_el, "EdgeLabel")
        try:
            fields = parse_label(label, vertex=False)
        except LabelError as err:
            raise located(label_el if label_el is not None else edge_el, f"edge {edge_id}: label "
                                                                          f"`{label.strip()}`: {err}") from None
        k = len(model["edges"])
        eplace = (*place, "edges", k)
        positions[eplace] = positions[(*eplace, "id")] = position(edge_el)
        edge: dict[str, Any] = {"id": edge_id, "targetVertexId": edge_el.get("target")}
        if edge_el.get("source") not in starts:
            edge["sourceVertexId"] = edge_el.get("source")
        elif "startElementId" not in model:
            model["startElementId"] = edge_id  # the edge leaving `Start` is walked first
        if "name" in fields:
            edge["name"] = fields["name"]
            if label_el is not None:
                name_at(label_el, fields["name"], (*eplace, "name"))
        for key in ("guard", "requirements", "weight", "dependency"):
            if key in fields:
                edge[key] = fields[key]
        if "actions" in fields:
            edge["actions"] = [fields["actions"]]
        if fields.get("blocked"):
            edge["properties"] = {"blocked": True}
        model["edges"].append(edge)
    if actions:
        model["actions"] = actions
    return {"name": title, "models": [model]}, positions, ends
