"""A plain graph description of a model with coverage painted on it: nodes, edges, clusters, legend (no graphviz here)."""

from __future__ import annotations

from collections import defaultdict, deque
from dataclasses import dataclass, field

from mbt.elements import fsm as ids
from mbt.errors import MbtError
from mbt.measure.coverage import ModelCoverage
from mbt.model.fsm import Forbid, FsmModel, Transition, action_text

# Coverage of one drawn element. None: no goldens were given (plain diagram).
VERIFIED, EXERCISED, UNCOVERED, INFEASIBLE, WAIVED = "verified", "exercised", "uncovered", "infeasible", "waived"

LEGEND_WITH_COVERAGE = [
    ("state", VERIFIED, "verified by a golden"),
    ("state", EXERCISED, "exercised only (reached, never checked)"),
    ("state", UNCOVERED, "not covered"),
    ("forbidden", VERIFIED, "forbidden, tested (a golden asserts it never happens)"),
    ("forbidden", UNCOVERED, "FORBIDDEN AND NOT TESTED"),
    ("forbidden", WAIVED, "forbidden, not tested, waived in the gate file"),
    ("path", None, "highlighted path"),
]
LEGEND_PLAIN = [
    ("state", None, "state (double border: final; arrow from the dot: initial)"),
    ("transition", None, "transition: event [guard] / actions"),
    ("forbidden", None, "forbidden transition or effect"),
    ("path", None, "highlighted path"),
]


@dataclass
class Node:
    id: str  # unique within the graph, safe as a DOT identifier after quoting
    label: str
    kind: str  # state | forbidden-effect | start | more
    element: str | None = None  # the coverage element it stands for
    coverage: str | None = None
    initial: bool = False
    final: bool = False
    on_path: bool = False
    cluster: str | None = None
    tooltip: str = ""


@dataclass
class Edge:
    source: str
    target: str
    label: str
    kind: str  # transition | forbidden | start
    element: str | None = None
    coverage: str | None = None
    path_steps: list[int] = field(default_factory=list)  # 1-based positions on the highlighted path
    tooltip: str = ""


@dataclass
class Graph:
    name: str
    title: str
    nodes: list[Node]
    edges: list[Edge]
    clusters: dict[str, str] = field(default_factory=dict)  # cluster id -> label
    legend: list[tuple[str, str | None, str]] = field(default_factory=list)
    has_coverage: bool = False
    notes: list[str] = field(default_factory=list)  # e.g. what a focus left out


@dataclass
class RenderOptions:
    focus: str | None = None
    depth: int = 1
    path: list[str] | None = None  # transition keys, in order
    clusters: str = "auto"  # auto | none | prefix | scc
    waived: frozenset[str] = frozenset()
    short_labels: bool = False  # transitions labelled `event [guard]`; the actions are in the tooltip (HTML report)


AUTO_CLUSTER_STATES = 30  # above this many states, `auto` groups states into clusters


def coverage_of(model_cov: ModelCoverage | None, waived: frozenset[str] = frozenset()) -> dict[str, str]:
    """Element id -> verified | exercised | uncovered | infeasible | waived (uncovered but waived)."""
    if model_cov is None:
        return {}
    return {ec.element.id: ec.state(ec.element.id in waived) for ec in model_cov.elements}


def _covering(model_cov: ModelCoverage | None) -> dict[str, tuple[list[str], list[str]]]:
    if model_cov is None:
        return {}
    return {ec.element.id: (ec.verified_by, ec.exercised_by) for ec in model_cov.elements}


LABEL_WIDTH = 44  # characters per label line; longer guards and calls wrap at commas and spaces


def wrap(text: str, width: int = LABEL_WIDTH, indent: str = "    ") -> list[str]:
    """Break a long label line at `, ` or spaces; continuation lines are indented. Deterministic."""
    lines: list[str] = []
    rest = text
    while len(rest) > width:
        cut = rest.rfind(", ", 0, width)
        cut = cut + 1 if cut > width // 3 else rest.rfind(" ", width // 3, width)
        if cut <= 0:
            cut = width
        lines.append(rest[:cut].rstrip())
        rest = indent + rest[cut:].lstrip()
    lines.append(rest)
    return lines


def transition_label(t: Transition, short: bool = False) -> str:
    """`event(params) [guard] / actions`, one action per line and long lines wrapped, so labels stay readable;
    `short`: the event and the guard only."""
    head = t.event + (f"({', '.join(t.params)})" if t.params else "")
    lines = [head]
    if t.guard is not None:
        lines += wrap(f"[{t.guard.text()}]")
    if short:
        return "\n".join(lines + (["/ …"] if t.actions else []))
    for i, a in enumerate(t.actions):
        lines += wrap(("/ " if i == 0 else "  ") + action_text(a))
    return "\n".join(lines)


def forbid_label(f: Forbid) -> str:
    head = f.event or "*"
    lines = [f"FORBIDDEN: {head}"]
    if f.guard is not None:
        lines += wrap(f"[{f.guard.text()}]")
    return "\n".join(lines)


def effect_label(f: Forbid) -> str:
    if f.effect is None:
        return "never"
    if f.effect.kind == "call":
        lines = [f"never: call {f.effect.tool}"]
        if f.effect.condition is not None:
            lines += wrap(f"when {f.effect.condition.text()}")
        return "\n".join(lines)
    return "\n".join(wrap(f"never: {f.effect.description}", indent=""))


def _tooltip(element: str, cov: dict[str, str], covering: dict, extra: str = "") -> str:
    parts = [element]
    if extra:
        parts.append(extra)
    status = cov.get(element)
    if status is not None:
        verified, exercised = covering.get(element, ([], []))
        parts.append(f"coverage: {status}")
        if verified:
            parts.append("verified by " + ", ".join(verified[:10]) + (" ..." if len(verified) > 10 else ""))
        only = [c for c in exercised if c not in set(verified)]
        if only:
            parts.append("exercised by " + ", ".join(only[:10]) + (" ..." if len(only) > 10 else ""))
    return "\n".join(parts)


def fsm_graph(model: FsmModel, model_cov: ModelCoverage | None = None,
              options: RenderOptions | None = None) -> Graph:
    """The FSM as a graph: states, transitions, forbidden transitions/effects, coverage painted when given."""
    options = options or RenderOptions()
    cov = coverage_of(model_cov, options.waived)
    covering = _covering(model_cov)
    keep = _focus(model, options.focus, options.depth)
    path_steps = _path_steps(model, options.path)

    nodes: list[Node] = []
    edges: list[Edge] = []
    notes: list[str] = []
    on_path_states = {model.transitions[i].source for i in path_steps} | {model.transitions[i].target
                                                                         for i in path_steps}
    for s in model.states.values():
        if s.name not in keep:
            continue
        el = ids.state_id(s.name)
        nodes.append(Node(id=f"state:{s.name}", label=s.name, kind="state", element=el, coverage=cov.get(el),
                          initial=s.initial, final=s.final, on_path=s.name in on_path_states,
                          tooltip=_tooltip(el, cov, covering)))
    initial = model.initial_state
    if initial in keep:
        nodes.insert(0, Node(id="start", label="", kind="start"))
        edges.append(Edge(source="start", target=f"state:{initial}", label="", kind="start"))
    hidden = 0
    for i, t in enumerate(model.transitions):
        if t.source not in keep or t.target not in keep:
            hidden += 1
            continue
        el = ids.transition_id(t)
        edges.append(Edge(source=f"state:{t.source}", target=f"state:{t.target}", label=transition_label(t, options.short_labels),
                          kind="transition", element=el, coverage=cov.get(el), path_steps=path_steps.get(i, []),
                          tooltip=_tooltip(el, cov, covering, t.label())))
    for f in model.forbids:
        el = ids.forbidden_id(f)
        if f.source is not None and f.source not in keep:
            hidden += 1
            continue
        tip = _tooltip(el, cov, covering, "forbid " + f.label())
        if f.source is not None and f.target is not None and f.target in keep and f.effect is None:
            edges.append(Edge(source=f"state:{f.source}", target=f"state:{f.target}", label=forbid_label(f),
                              kind="forbidden", element=el, coverage=cov.get(el), tooltip=tip))
            continue
        # An effect (or a target outside the focus): a red sink node saying what must not happen.
        sink = f"forbid:{f.key}"
        where = f"in {f.source}" if f.source else "in any state"
        on = f"on {f.event}" if f.event else "on any event"
        text = effect_label(f) if f.effect is not None or f.target is None else f"never: go to {f.target}"
        label = text if f.source is not None else f"{where}, {on}:\n{text}"
        if f.source is not None and f.target is not None and f.effect is not None:
            label += f"\nnever: go to {f.target}"
        if f.guard is not None and f.source is None:
            label += f"\n[{f.guard.text()}]"
        nodes.append(Node(id=sink, label=label, kind="forbidden-effect", element=el, coverage=cov.get(el),
                          tooltip=tip))
        if f.source is not None:
            edges.append(Edge(source=f"state:{f.source}", target=sink, label=forbid_label(f), kind="forbidden",
                              element=el, coverage=cov.get(el), tooltip=tip))
    if hidden:
        notes.append(f"{hidden} transition(s) outside the focus are not drawn")
    graph = Graph(name=model.name, title=model.title or model.name, nodes=nodes, edges=edges,
                  has_coverage=model_cov is not None, notes=notes)
    if options.focus:
        graph.notes.insert(0, f"neighbourhood of {options.focus}, depth {options.depth}")
    _assign_clusters(graph, model, options.clusters)
    graph.legend = list(LEGEND_WITH_COVERAGE if graph.has_coverage else LEGEND_PLAIN)
    if not path_steps:
        graph.legend = [item for item in graph.legend if item[0] != "path"]
    if not any(n.coverage == WAIVED for n in graph.nodes) and not any(e.coverage == WAIVED for e in graph.edges):
        graph.legend = [item for item in graph.legend if item[1] != WAIVED]
    return graph


def _focus(model: FsmModel, focus: str | None, depth: int) -> set[str]:
    """The states within `depth` transitions (either direction) of `focus`; every state without a focus."""
    if focus is None:
        return set(model.states)
    if focus not in model.states:
        raise MbtError(f"--focus: model `{model.name}` has no state `{focus}` "
                       f"(states: {', '.join(sorted(model.states))})")
    if depth < 0:
        raise MbtError("--depth must be 0 or more")
    neighbours: dict[str, set[str]] = defaultdict(set)
    for t in model.transitions:
        neighbours[t.source].add(t.target)
        neighbours[t.target].add(t.source)
    for f in model.forbids:
        if f.source is not None and f.target is not None:
            neighbours[f.source].add(f.target)
            neighbours[f.target].add(f.source)
    seen = {focus: 0}
    queue = deque([focus])
    while queue:
        s = queue.popleft()
        if seen[s] == depth:
            continue
        for n in sorted(neighbours[s]):
            if n not in seen:
                seen[n] = seen[s] + 1
                queue.append(n)
    return set(seen)


def _path_steps(model: FsmModel, path: list[str] | None) -> dict[int, list[int]]:
    """Transition index -> its 1-based positions on the path; unknown keys are an error naming the known ones."""
    if not path:
        return {}
    by_key = {t.key: i for i, t in enumerate(model.transitions)}
    out: dict[int, list[int]] = defaultdict(list)
    prev_target = None
    for step, raw in enumerate(path, start=1):
        key = raw[len("transition:"):] if raw.startswith("transition:") else raw
        if key not in by_key:
            raise MbtError(f"--path: model `{model.name}` has no transition `{raw}`")
        t = model.transitions[by_key[key]]
        if prev_target is not None and t.source != prev_target:
            raise MbtError(f"--path: step {step} `{key}` starts in `{t.source}`, "
                           f"but step {step - 1} ends in `{prev_target}`")
        prev_target = t.target
        out[by_key[key]].append(step)
    return dict(out)


def _assign_clusters(graph: Graph, model: FsmModel, mode: str) -> None:
    """Group states so large models stay legible: by name prefix (`refund_*`) or strongly connected component."""
    states = [n for n in graph.nodes if n.kind == "state"]
    if mode == "auto":
        mode = "scc" if len(states) > AUTO_CLUSTER_STATES else "none"
    if mode == "none":
        return
    groups: dict[str, list[Node]] = defaultdict(list)
    if mode == "prefix":
        for n in states:
            prefix = n.label.split("_", 1)[0] if "_" in n.label else None
            if prefix:
                groups[prefix].append(n)
        labels = {g: f"{g}_*" for g in groups}
    elif mode == "scc":
        import networkx as nx

        g = nx.DiGraph()
        g.add_nodes_from(n.label for n in states)
        g.add_edges_from((t.source, t.target) for t in model.transitions if g.has_node(t.source)
                         and g.has_node(t.target))
        components = sorted((sorted(c) for c in nx.strongly_connected_components(g) if len(c) > 1),
                            key=lambda c: c[0])
        member = {name: i for i, comp in enumerate(components, start=1) for name in comp}
        for n in states:
            if n.label in member:
                groups[f"scc{member[n.label]}"].append(n)
        labels = {f"scc{i}": f"cycle group {i}: {comp[0]}, ..." for i, comp in enumerate(components, start=1)}
    else:
        raise MbtError(f"--clusters must be auto, none, prefix or scc, not {mode!r}")
    for name, members in groups.items():
        if len(members) < 2:
            continue
        for n in members:
            n.cluster = name
        graph.clusters[name] = labels[name]
