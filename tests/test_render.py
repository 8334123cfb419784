"""Diagrams: the plain graph description (no graphviz), deterministic DOT text (gold file), SVG/PNG via `dot`, the CLI."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from _gold import compare_gold

from mbt import api
from mbt.errors import MbtError
from mbt.goldens.loader import load_goldens
from mbt.render.dot import anchor, quote, to_dot
from mbt.render.graph import EXERCISED, UNCOVERED, VERIFIED, RenderOptions, fsm_graph, wrap
from mbt.render.paths import read_path
from tests.cli_runner import run_mbt

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "tests" / "data" / "reset.fsm"


def mbt(*args, cwd=ROOT):
    result = run_mbt(*args, cwd=cwd)
    assert "Traceback" not in result.stderr, result.stderr
    return result


def model(path=MODEL):
    _, models = api.load_models([str(path)])
    return models[0]


def coverage_of(path, cases: list[dict], tmp_path):
    goldens = tmp_path / "g.jsonl"
    goldens.write_text("\n".join(json.dumps(c) for c in cases) + "\n", encoding="utf-8")
    m = model(path)
    return m, api.measure([m], load_goldens([str(goldens)])).models[0]


def test_graph_marks_initial_final_and_labels_transitions():
    g = fsm_graph(model())
    states = {n.label: n for n in g.nodes if n.kind == "state"}
    assert set(states) == {"idle", "collecting", "confirming", "started", "sent", "handed_off"}
    assert states["idle"].initial and not states["idle"].final
    assert states["sent"].final and states["handed_off"].final
    start = [e for e in g.edges if e.kind == "start"]
    assert [(e.source, e.target) for e in start] == [("start", "state:idle")]
    labels = {e.element: e.label for e in g.edges if e.kind == "transition"}
    assert labels["transition:confirming.confirm->started"] == \
        "confirm\n[recovery_email != none]\n/ call start_password_reset(recovery_email\n    = recovery_email)"
    assert labels["transition:idle.request_reset->collecting"] == "request_reset\n/ active_task := password_reset"
    assert all(n.coverage is None for n in g.nodes)  # no goldens: nothing painted
    assert not g.has_coverage and ("forbidden", None, "forbidden transition or effect") in g.legend


def test_forbidden_transitions_are_edges_and_effects_are_red_sinks():
    g = fsm_graph(model())
    forbidden = [e for e in g.edges if e.kind == "forbidden"]
    # `forbid confirming on confirm [...] -> started`: a dashed edge between the states
    assert [(e.source, e.target) for e in forbidden] == [("state:confirming", "state:started")]
    assert forbidden[0].label == "FORBIDDEN: confirm\n[recovery_email == none]"
    sinks = {n.element: n.label for n in g.nodes if n.kind == "forbidden-effect"}
    assert sinks["forbidden:any.*!say"] == "in any state, on any event:\nnever: ask current password"
    assert sinks["forbidden:any.confirm!call:start_password_reset"].startswith(
        "in any state, on confirm:\nnever: call start_password_reset\nwhen")
    dot = to_dot(g)
    assert 'style=dashed' in dot and '"#d00000"' in dot


def test_coverage_is_painted_verified_exercised_uncovered(tmp_path):
    m, cov = coverage_of(MODEL, [
        {"id": "V", "turns": [{"event": "request_reset", "assert_state": {"state": "collecting"}}]},
        {"id": "E", "precondition": {"state": "collecting"}, "turns": [{"event": "provide_email",
                                                                        "args": {"email": "a@b.c"}}]},
    ], tmp_path)
    g = fsm_graph(m, cov)
    by_el = {x.element: x.coverage for x in [*g.nodes, *g.edges] if x.element}
    assert by_el["transition:idle.request_reset->collecting"] == VERIFIED
    assert by_el["transition:collecting.provide_email->confirming"] == EXERCISED
    assert by_el["transition:started.tool_ok->sent"] == UNCOVERED
    assert by_el["state:sent"] == UNCOVERED
    assert by_el["forbidden:any.*!say"] == EXERCISED  # reached by both goldens, asserted by neither
    dot = to_dot(g)
    assert "✗ NOT TESTED" in dot  # an uncovered forbidden element cannot be missed
    assert "Legend" in dot and "FORBIDDEN AND NOT TESTED" in dot
    tooltip = next(e.tooltip for e in g.edges if e.element == "transition:idle.request_reset->collecting")
    assert "verified by V" in tooltip


def test_waived_forbidden_elements_are_drawn_as_waived(tmp_path):
    m, cov = coverage_of(MODEL, [{"id": "V", "turns": [{"event": "request_reset"}]}], tmp_path)
    g = fsm_graph(m, cov, RenderOptions(waived=frozenset({"forbidden:any.*!say"})))
    sink = next(n for n in g.nodes if n.element == "forbidden:any.*!say")
    assert sink.coverage == "waived"
    assert any(item[1] == "waived" for item in g.legend)


def test_focus_keeps_the_neighbourhood_and_says_what_it_left_out():
    g = fsm_graph(model(), options=RenderOptions(focus="confirming", depth=1))
    states = sorted(n.label for n in g.nodes if n.kind == "state")
    assert states == ["collecting", "confirming", "started"]
    assert not any(n.kind == "start" for n in g.nodes)  # idle is outside the focus
    assert any("outside the focus" in note for note in g.notes)
    g0 = fsm_graph(model(), options=RenderOptions(focus="confirming", depth=0))
    assert [n.label for n in g0.nodes if n.kind == "state"] == ["confirming"]
    with pytest.raises(MbtError, match="has no state `nowhere`"):
        fsm_graph(model(), options=RenderOptions(focus="nowhere"))


def test_path_highlights_steps_in_order_and_rejects_broken_paths():
    keys = ["idle.request_reset->collecting", "transition:collecting.provide_email->confirming"]
    g = fsm_graph(model(), options=RenderOptions(path=keys))
    steps = {e.element: e.path_steps for e in g.edges if e.path_steps}
    assert steps == {"transition:idle.request_reset->collecting": [1],
                     "transition:collecting.provide_email->confirming": [2]}
    assert {n.label for n in g.nodes if n.on_path} == {"idle", "collecting", "confirming"}
    assert "#1  request_reset" in to_dot(g)
    with pytest.raises(MbtError, match="has no transition `nope`"):
        fsm_graph(model(), options=RenderOptions(path=["nope"]))
    with pytest.raises(MbtError, match="starts in `confirming`, but step 1 ends in `collecting`"):
        fsm_graph(model(), options=RenderOptions(path=["idle.request_reset->collecting",
                                                       "confirming.confirm->started"]))


def test_path_from_a_json_file_of_events_is_replayed_on_the_model(tmp_path):
    counterexample = {"counterexample": {"precondition": {"state": "started"},
                                         "steps": [{"event": "tool_failed", "args": {"c": "TIMEOUT"}},
                                                   {"event": "tool_failed", "args": {"c": "TIMEOUT"}}]}}
    path = tmp_path / "cex.json"
    path.write_text(json.dumps(counterexample), encoding="utf-8")
    m = model()
    event_names = {e.name: [p.name for p in e.params] for e in m.events.values()}
    assert event_names["tool_failed"] == ["code"]
    with pytest.raises(MbtError, match="has no parameter `c`"):
        read_path(str(path), m)
    for step in counterexample["counterexample"]["steps"]:
        step["args"] = {"code": "TIMEOUT"}
    path.write_text(json.dumps(counterexample), encoding="utf-8")
    # the retry guard holds once (retries < 1), then the hand-off branch takes over
    assert read_path(str(path), m) == ["started.tool_failed->started", "started.tool_failed->handed_off"]
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps(["idle.request_reset->collecting"]), encoding="utf-8")
    assert read_path(str(keys), m) == ["idle.request_reset->collecting"]
    refused = tmp_path / "refused.json"
    refused.write_text(json.dumps({"events": ["confirm"]}), encoding="utf-8")
    with pytest.raises(MbtError, match="refused by the model in state `idle`"):
        read_path(str(refused), m)
    assert read_path("a->b, c->d", m) == ["a->b", "c->d"]


def test_scc_and_prefix_clusters(tmp_path):
    g = fsm_graph(model(), options=RenderOptions(clusters="scc"))
    assert g.clusters == {}  # reset.fsm has only self-loops: no cycle of two or more states
    text = "fsm big {\n" + "".join(f"  state order_{i}{' initial' if i == 0 else ''}\n" for i in range(3)) + \
        "  state refund_a\n  state refund_b\n  event go\n  event back\n" + \
        "  order_0 -> order_1 on go\n  order_1 -> order_0 on back\n  order_1 -> refund_a on go\n" + \
        "  refund_a -> refund_b on go\n  refund_b -> refund_a on back\n  order_2 -> order_0 on go\n}\n"
    path = tmp_path / "big.fsm"
    path.write_text(text, encoding="utf-8")
    g = fsm_graph(model(path), options=RenderOptions(clusters="scc"))
    members = {}
    for n in g.nodes:
        if n.cluster:
            members.setdefault(n.cluster, []).append(n.label)
    assert sorted(members.values()) == [["order_0", "order_1"], ["refund_a", "refund_b"]]
    g = fsm_graph(model(path), options=RenderOptions(clusters="prefix"))
    assert g.clusters == {"order": "order_*", "refund": "refund_*"}
    assert 'subgraph "cluster_order"' in to_dot(g)


def test_dot_strings_are_escaped_and_anchors_are_safe():
    assert quote('say "hi"\\ \n next') == '"say \\"hi\\"\\\\ \\n next"'
    assert anchor("transition:a.b->c|d e") == "el-transition_3a_a.b-_3e_c_7c_d_20_e"
    assert wrap("x" * 10) == ["x" * 10]
    assert all(len(line) <= 44 for line in wrap("call f(" + ", ".join(f"arg{i} = value{i}" for i in range(9)) + ")"))


def test_hostile_names_in_a_model_stay_inside_dot_strings(tmp_path):
    text = 'fsm m {\n  state a initial\n  state b\n  event go(x: string)\n' \
           '  a -> b on go(x) [x == "\\"]; digraph { evil }"] / call t(v = "</svg><script>")\n}\n'
    path = tmp_path / "m.fsm"
    path.write_text(text, encoding="utf-8")
    dot = to_dot(fsm_graph(model(path)))
    svg = subprocess.run(["dot", "-Tsvg"], input=dot, capture_output=True, text=True)
    assert svg.returncode == 0, svg.stderr
    assert "<script>" not in svg.stdout and "&lt;script&gt;" in svg.stdout


def test_the_example_diagram_matches_its_gold_file():
    """The coverage-painted DOT of the shipped example (regenerate: UPDATE_GOLD=1 pytest tests/test_render.py)."""
    out = ROOT / "tests" / "output"
    out.mkdir(exist_ok=True)
    target = out / "recovery.dot"
    goldens = [f"models/goldens/{name}" for name in ("broken.jsonl", "golden.jsonl", "multi-turn.yaml",
                                                     "recovery-flows.yaml", "single-turn.jsonl", "tool-failures.jsonl")]
    result = mbt("render", "--model", "models/recovery.fsm", *[a for g in goldens for a in ("--goldens", g)],
                 "--gate", "models/gates/release.yaml", "-o", target)
    assert result.returncode == 0, result.stderr
    compare_gold("recovery.dot", target.read_text(encoding="utf-8"))


def test_render_svg_and_png_through_dot(tmp_path):
    svg = tmp_path / "r.svg"
    assert mbt("render", "--model", MODEL, "-o", svg).returncode == 0
    text = svg.read_text(encoding="utf-8")
    assert text.lstrip().startswith("<?xml") and "<svg" in text and "collecting" in text
    png = tmp_path / "r.png"
    assert mbt("render", "--model", MODEL, "--focus", "confirming", "--depth", "2", "-o", png).returncode == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("args, message", [
    (["-o", "x.pdf"], "renders to .dot, .svg, .png, not .pdf"),
    (["-o", "x.svg", "--focus", "nowhere"], "has no state `nowhere`"),
    (["-o", "x.svg", "--depth", "2"], "--depth needs --focus"),
    (["-o", "x.svg", "--path", "nope"], "has no transition `nope`"),
    (["-o", "x.svg", "--name", "other"], "--name other: no such model"),
    (["-o", "missing/x.svg"], "folder missing does not exist"),
])
def test_render_bad_options_exit_2_without_output(tmp_path, args, message):
    result = mbt("render", "--model", MODEL, *args, cwd=tmp_path)
    assert result.returncode == 2
    assert message in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_kinds_without_a_graph_render_as_element_tables(tmp_path):
    """Decision tables, policies and invariants render as tables of their elements with coverage (.md/.html)."""
    from mbt.render.table import element_table, table_html, table_markdown

    m = model()
    view = element_table(m, None, RenderOptions())
    assert [s.criterion for s in view.sections] == ["state", "transition", "guard", "forbidden", "transition-pair"]
    md = table_markdown(view)
    assert "| `forbidden:any.*!say` |" in md and "coverage" not in md.splitlines()[4]
    _, cov = coverage_of(MODEL, [{"id": "<b>G</b>", "turns": [{"event": "request_reset",
                                                               "assert_state": {"state": "collecting"}}]}], tmp_path)
    html = str(table_html(element_table(m, cov, RenderOptions())))
    assert "&lt;b&gt;G&lt;/b&gt;" in html and "<b>G" not in html
    assert 'class="badge verified"' in html and "NOT COVERED" in html


def test_render_path_accepts_mbt_check_counterexample_output(tmp_path):
    """The counterexample JSON of an invariant finding (step 0 = start configuration) highlights its path."""
    import json

    root = Path(__file__).resolve().parents[1]
    model = root / "tests" / "data" / "invariants" / "orders-buggy.fsm"
    check = run_mbt("check", model, "--format", "json")
    finding = next(f for f in json.loads(check.stdout)["findings"] if f.get("counterexample"))
    path_file = tmp_path / "cx.json"
    path_file.write_text(json.dumps({"counterexample": finding["counterexample"]}))
    out = tmp_path / "cx.dot"
    result = run_mbt("render", "--model", model, "--name", "orders", "--path", path_file, "-o", out)
    assert result.returncode == 0, result.stderr
    moves = [s["transition"] for s in finding["counterexample"]["steps"] if s["transition"]]
    dot = out.read_text()
    # Each move of the path is an edge numbered in order: `#1  event...` on the edge of that transition.
    for number, key in enumerate(moves, start=1):
        edge = next(line for line in dot.splitlines() if f'id="edge:transition:{key}"' in line)
        assert f'label="#{number}  ' in edge


@pytest.mark.parametrize("model_file,marks", [("refund.dt", ("rule",)), ("refund.policy", ("applicable", "decisive"))])
def test_tables_and_policies_render_their_rules_as_a_grid_with_rule_coverage(model_file, marks):
    from mbt import api
    from mbt.render.graph import RenderOptions, coverage_of
    from mbt.render.table import element_table, table_markdown

    root = Path(__file__).resolve().parents[1]
    report = api.coverage([str(root / "models" / model_file)], [str(root / "models" / "goldens")], use_gate=False)
    (model_cov,) = report.models
    _, (model,) = api.load_models([str(root / "models" / model_file)])
    view = element_table(model, model_cov, RenderOptions())
    states = coverage_of(model_cov, {})
    assert [row[0] for row in view.grid.rows] == [r.name for r in model.rules]
    suffixes = {"rule": "", "applicable": ":applicable", "decisive": ":decisive"}
    for rule, row_marks in zip(model.rules, view.grid.coverage):
        assert row_marks == [(m, states.get(f"rule:{rule.name}{suffixes[m]}")) for m in marks]
    text = table_markdown(view)
    assert text.index("## rules (") < text.index("## rule\n")
    if model.kind == "table":
        assert view.grid.headers[1:] == [f"{c.name} (in)" for c in model.inputs] + [f"{c.name} (out)" for c in model.outputs]
