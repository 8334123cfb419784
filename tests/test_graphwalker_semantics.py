"""GraphWalker constructs, each in a small model written here, replayed along walks written by hand from
GraphWalker's documented semantics: an edge may be taken when its source is the current vertex and its guard holds
(several such edges, same-named or not, are a free choice); the walk starts at the start element (an edge is walked
first, before any vertex); BLOCKED elements are filtered out; a shared state lets the walk go on in any model that
shares it; `global.x` is one variable for all models, any other name is the model's own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mbt import api
from mbt.elements.fsm import enumerate_fsm
from mbt.engine.fsm import CompiledFsm
from mbt.errors import LocatedError
from mbt.goldens.cases import parse_case
from mbt.goldens.replay_fsm import FsmReplayer
from mbt.importers.graphwalker import import_graphwalker
from mbt.parsing.loader import load_paths


def write(tmp_path: Path, data: dict | str, name: str = "m.json") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2), encoding="utf-8")
    return path


def walk(model, events: list[str]):
    """Replay `events` from the initial state: (states after each step, transition keys; None = refused)."""
    elements = enumerate_fsm(model)
    case = parse_case({"id": "W", "model": model.name, "turns": [{"event": e} for e in events]}, "walk.jsonl", 1)
    run = FsmReplayer(CompiledFsm(model, elements)).replay(case, keep_snapshots=True)
    return [s.state for s in run.snapshots], [s.transition for s in run.snapshots]


def only_model(path: Path):
    (model,) = [m for f in load_paths([str(path)]) for m in f.models]
    return model


def edge(eid, name, source, target, **more):
    out = {"id": eid, "name": name, "targetVertexId": target, **more}
    if source is not None:
        out["sourceVertexId"] = source
    return out


SAME_NAMED = {"models": [{
    "name": "Shop", "id": "m", "startElementId": "a", "actions": ["ok = false;"],
    "vertices": [{"id": "a", "name": "v_Home"}, {"id": "b", "name": "v_Account"}, {"id": "c", "name": "v_Guest"}],
    "edges": [edge("e1", "e_Login", "a", "b", guard="ok"), edge("e2", "e_Login", "a", "c"),
              edge("e3", "e_Back", "b", "a"), edge("e4", "e_Back", "c", "a"),
              edge("e5", "e_Toggle", "a", "a", actions=["ok = !ok;"])]}]}


def test_same_named_edges_leaving_one_vertex_are_distinct_choices(tmp_path: Path):
    model = only_model(write(tmp_path, SAME_NAMED))
    # GraphWalker walk: e2 (ok is false, so only e2 may be taken), e4, e5 (ok := true), now both e_Login edges may be
    # taken: e1, then e3, then e2 again (a free choice, not "the first edge whose guard holds").
    states, taken = walk(model, ["e_Login_e2", "e_Back", "e_Toggle", "e_Login_e1", "e_Back", "e_Login_e2"])
    assert states == ["v_Guest", "v_Home", "v_Home", "v_Account", "v_Home", "v_Guest"]
    assert taken == ["v_Home.e_Login_e2->v_Guest", "v_Guest.e_Back->v_Home", "v_Home.e_Toggle->v_Home",
                     "v_Home.e_Login_e1->v_Account", "v_Account.e_Back->v_Home", "v_Home.e_Login_e2->v_Guest"]
    # e1's guard `ok` is false at the start: GraphWalker cannot take it, neither does mbt.
    assert walk(model, ["e_Login_e1"])[1] == [None]
    report = api.check([str(tmp_path / "m.json")])
    assert not [f for f in report.findings if f.code == "FSM006"]  # no overlapping guards of one event


def test_same_named_edges_get_a_full_suite_without_blaming_guards(tmp_path: Path):
    path = write(tmp_path, SAME_NAMED)
    report = api.generate([str(path)], [], str(tmp_path / "out"), suite="transition")
    (model,) = report.models
    assert model.missing == [] and model.suite.elements == model.suite.lower_bound == 5
    # e1 needs `ok` toggled first. By hand, the shortest GraphWalker walk over every edge is e5 e1 e3 e2 e4:
    # five steps, one run, no edge twice.
    assert (model.suite.steps, model.suite.tests) == (5, 1)


def test_a_start_edge_with_a_source_vertex_is_walked_first(tmp_path: Path):
    model = only_model(write(tmp_path, {"models": [{
        "name": "M", "startElementId": "e0",
        "vertices": [{"id": "a", "name": "v_A"}, {"id": "b", "name": "v_B"}],
        "edges": [edge("e0", "e_Start", "a", "b"), edge("e1", "e_Go", "b", "a")]}]}))
    # GraphWalker: e0 (the start element), e1, e0 again (from v_A, as a normal edge): one edge, one transition,
    # from v_A, where the fsm starts (v_A has no other way out, so e0 comes first).
    assert model.initial_state == "v_A"
    states, taken = walk(model, ["e_Start", "e_Go", "e_Start"])
    assert states == ["v_B", "v_A", "v_B"]
    assert taken == ["v_A.e_Start->v_B", "v_B.e_Go->v_A", "v_A.e_Start->v_B"]
    # v_A's other edges cannot come first: the walk starts with e0.
    assert walk(model, ["e_Go"])[1] == [None]


def test_an_edge_from_no_known_vertex_is_a_start_edge(tmp_path: Path):
    path = write(tmp_path, {"models": [{
        "name": "M", "startElementId": "e0",
        "vertices": [{"id": "a", "name": "v_A"}],
        "edges": [edge("e0", "e_Start", "ghost", "a"), edge("e1", "e_Stay", "a", "a")]}]})
    imported = import_graphwalker(path)
    assert any("sourceVertexId 'ghost' is not a vertex of `M`; GraphWalker walks it as a start edge" in n.message
               for n in imported.notes)
    assert walk(only_model(path), ["e_Start", "e_Stay"])[0] == ["v_A", "v_A"]


def test_unnamed_edges_licence_headers_and_ids_with_dashes_import(tmp_path: Path):
    text = ("/* Copyright (c) the authors.\n   Licensed under the MIT licence. */\n"
            + json.dumps({"models": [{"name": "M", "startElementId": "0f-1a",
                                      "vertices": [{"id": "0f-1a", "name": "v_A"}, {"id": "9c-2b", "name": "v_B"}],
                                      "edges": [{"id": "77-ee", "sourceVertexId": "0f-1a", "targetVertexId": "9c-2b"},
                                                edge("88-ff", "e_Back", "9c-2b", "0f-1a")]}]}, indent=2))
    path = write(tmp_path, text)
    model = only_model(path)
    assert list(model.events) == ["e_77_ee", "e_Back"]
    assert walk(model, ["e_77_ee", "e_Back"])[0] == ["v_B", "v_A"]
    # Lines count the header: v_B's id is on line 10 of the file.
    lines = text.splitlines()
    assert '"id": "9c-2b"' in lines[model.states["v_B"].span.line_start - 1]


def test_blocked_elements_are_filtered_out_as_graphwalker_does(tmp_path: Path):
    path = write(tmp_path, {"models": [{
        "name": "M", "startElementId": "a",
        "vertices": [{"id": "a", "name": "v_A"}, {"id": "b", "name": "v_B"},
                     {"id": "c", "name": "v_Broken", "properties": {"blocked": True}}],
        "edges": [edge("e1", "e_AB", "a", "b"), edge("e2", "e_BA", "b", "a"), edge("e3", "e_AC", "a", "c"),
                  edge("e4", "e_Slow", "b", "b", properties={"blocked": True})]}]})
    model = only_model(path)
    assert sorted(model.states) == ["v_A", "v_B"]
    assert [t.key for t in model.transitions] == ["v_A.e_AB->v_B", "v_B.e_BA->v_A"]
    notes = [n.message for n in import_graphwalker(path).notes]
    assert any("vertex c (v_Broken) is BLOCKED" in n for n in notes)
    assert any("edge e4 (e_Slow) is BLOCKED" in n for n in notes)


def test_what_mbt_does_not_use_is_noted_and_what_graphwalker_rejects_is_reported(tmp_path: Path):
    # (A repeated edge id, which GraphWalker rejects, is refused: tests/test_graphwalker_refusals.py.)
    path = write(tmp_path, {"models": [{
        "name": "M", "startElementId": "a", "predefinedPathEdgeIds": ["e1", "e1"],
        "vertices": [{"id": "a", "name": "v_A", "requirements": [""]}, {"id": "b"}],
        "edges": [edge("e1", "e_Go", "a", "b", weight=0.7, dependency=30), edge("e2", "e_Back", "b", "a")]}]})
    model = only_model(path)
    assert model.states["v_A"].tags == []  # an empty requirement is no tag
    notes = [n.message for n in import_graphwalker(path).notes]
    for expected in ("1 `weight` value(s) not imported", "1 `dependency` value(s) not imported",
                     "1 `predefinedPathEdgeIds` value(s) not imported", "vertex b has no name (GraphWalker's "
                     "checker rejects it); imported as `v_b`"):
        assert any(expected in n for n in notes), expected


SHARED = {"name": "Store", "models": [
    {"name": "Browse", "startElementId": "a",
     "vertices": [{"id": "a", "name": "v_Start"}, {"id": "s", "name": "v_Cart", "sharedState": "CART"}],
     "edges": [edge("e1", "e_ToCart", "a", "s", actions=["global.count = 0;", "seen = true;"])]},
    {"name": "Checkout", "actions": ["seen = false;"],
     "vertices": [{"id": "s", "name": "v_Cart", "sharedState": "CART"}, {"id": "z", "name": "v_Paid"}],
     "edges": [edge("e1", "e_Add", "s", "s", guard="global.count < 2 && !seen", actions=["global.count++;"]),
               edge("e2", "e_Pay", "s", "z", guard="global.count >= 1")]}]}


def test_shared_states_link_models_and_global_variables_are_shared(tmp_path: Path):
    path = write(tmp_path, SHARED)
    model = only_model(path)
    assert model.name == "Store"
    # Browse's `seen` and Checkout's `seen` are two variables (one JavaScript context per model); global.count is one.
    assert sorted(model.variables) == ["Browse_seen", "Checkout_seen", "global_count"]
    assert model.variables["global_count"].type.text() == "int[0..2]"  # `++` only under `global.count < 2`
    # GraphWalker walk: e_ToCart in Browse reaches the shared state CART, the walk goes on in Checkout: e_Add twice
    # (count 0 -> 2), then e_Add is closed (count < 2 fails) and e_Pay is taken.
    states, taken = walk(model, ["e_ToCart", "e_Add", "e_Add", "e_Add", "e_Pay"])
    assert taken == ["v_Start.e_ToCart->v_Cart", "v_Cart.e_Add->v_Cart", "v_Cart.e_Add->v_Cart", None,
                     "v_Cart.e_Pay->v_Paid"]
    assert states[-1] == "v_Paid"


def test_counters_get_a_sound_range_or_a_stated_window(tmp_path: Path):
    path = write(tmp_path, {"models": [{
        "name": "M", "startElementId": "a", "actions": ["tries = 0;", "clicks = 0;"],
        "vertices": [{"id": "a", "name": "v_A"}, {"id": "b", "name": "v_Locked"}],
        "edges": [edge("e1", "e_Fail", "a", "a", guard="tries < 3", actions=["tries++;"]),
                  edge("e2", "e_Lock", "a", "b", guard="tries == 3"),
                  edge("e3", "e_Click", "a", "a", actions=["clicks++;"])]}]})
    model = only_model(path)
    assert model.variables["tries"].type.text() == "int[0..3]"
    assert model.variables["clicks"].type.text() == "int[0..5]"
    notes = [n.message for n in import_graphwalker(path).notes]
    assert any("counter `clicks` changes without a guard that bounds it" in n and "within 0..5" in n for n in notes)
    # GraphWalker walk: three failures, then the lock; a fourth failure is closed by `tries < 3`.
    states, taken = walk(model, ["e_Fail", "e_Fail", "e_Fail", "e_Fail", "e_Lock"])
    assert taken[3] is None and states[-1] == "v_Locked"


def test_ids_repeated_across_models_cite_their_own_lines(tmp_path: Path):
    data = {"models": [
        {"name": "One", "id": "m1", "startElementId": "a", "vertices": [{"id": "a", "name": "v_First"}], "edges": []},
        {"name": "Two", "id": "m2", "startElementId": "a", "vertices": [{"id": "a", "name": "v_Second"}], "edges": []}]}
    path = write(tmp_path, data)
    text = path.read_text().splitlines()
    models = {m.name: m for f in load_paths([str(path)]) for m in f.models}
    assert "v_Second" in "\n".join(text[models["Two"].states["v_Second"].span.line_start - 1:
                                        models["Two"].states["v_Second"].span.line_end])
    assert models["Two"].states["v_Second"].span.quote == "v_Second"
    assert api.check([str(path)]).findings == [] or not [
        f for f in api.check([str(path)]).findings if "span" in f.name or "quote" in f.name]


def test_model_errors_point_into_the_json_not_the_converted_dsl(tmp_path: Path):
    # `x` is a number in one guard and text in another: the error is at the edge that says so, in the JSON.
    path = write(tmp_path, {"models": [{
        "name": "M", "startElementId": "a", "vertices": [{"id": "a", "name": "v_A"}],
        "edges": [edge("e1", "e_N", "a", "a", guard="x < 3"), edge("e2", "e_S", "a", "a", guard="x == 'on'")]}]})
    with pytest.raises(LocatedError) as err:
        load_paths([str(path)])
    problem = err.value.problems[0]
    assert problem.path == str(path) and "type-check" in problem.message
    assert '"id": "e2"' in path.read_text().splitlines()[problem.line - 1]


@pytest.mark.parametrize("data, where, message", [
    ({"models": [{"name": "M", "vertices": {"id": "a"}}]}, (5, 19), "`vertices` must be a list"),
    ({"models": [{"name": "M", "vertices": [{"id": ["a"], "name": "v"}]}]}, (7, 17), "`id` must be a string"),
    ({"models": [{"name": "M", "vertices": [{"id": "a", "name": "v"}],
                  "edges": [{"id": {"x": 1}, "targetVertexId": "a"}]}]}, (13, 17), "`id` must be a string"),
    ({"models": [{"name": "M", "vertices": [{"id": "a", "name": "v"}],
                  "edges": [{"id": "e", "sourceVertexId": "a", "targetVertexId": "a", "guard": 5}]}]}, (16, 20),
     "`guard` must be a string"),
    ({"models": ["M"]}, (3, 5), "a model must be a JSON object"),
])
def test_bad_shapes_are_one_located_error(tmp_path: Path, data, where, message):
    with pytest.raises(LocatedError) as err:
        import_graphwalker(write(tmp_path, data))
    problem = err.value.problems[0]
    assert (problem.line, problem.column) == where and message in problem.message


def test_deep_nesting_and_huge_numbers_are_refused_at_their_place(tmp_path: Path):
    deep = write(tmp_path, '{"models": [\n' + "[" * 5000 + "]" * 5000 + "]}", "deep.json")
    with pytest.raises(LocatedError) as err:
        import_graphwalker(deep)
    assert err.value.problems[0].line == 2 and "nests deeper than 64 levels" in err.value.problems[0].message
    huge = write(tmp_path, '{"models": [{"name": "M",\n "weight": ' + "9" * 5000 + "}]}", "huge.json")
    with pytest.raises(LocatedError) as err:
        import_graphwalker(huge)
    assert (err.value.problems[0].line, err.value.problems[0].column) == (2, 12)


def test_a_guard_nested_too_deep_is_a_note_not_a_recursion_error(tmp_path: Path):
    guard = "(" * 400 + "x" + ")" * 400
    path = write(tmp_path, {"models": [{"name": "M", "startElementId": "a", "vertices": [{"id": "a", "name": "v_A"}],
                                        "edges": [edge("e1", "e_Go", "a", "a", guard=guard),
                                                  edge("e2", "e_Not", "a", "a", guard="!" * 400 + "x")]}]})
    notes = [n.message for n in import_graphwalker(path).notes]
    assert sum("nests deeper than 48 levels" in n for n in notes) == 2
    (model,) = load_paths([str(path)])[0].models
    assert all(t.status.value == "unspecified" for t in model.transitions)


LOGIN_GRAPHML = Path(__file__).parent / "data" / "graphwalker" / "login.graphml"


@pytest.mark.parametrize("label, vertex, fields", [
    ("v_Browse SHARED:LoggedIn", True, {"name": "v_Browse", "sharedState": "LoggedIn"}),
    ("v_A\nINIT: x = 1; ok = false;\nREQTAG: UC-1, UC-2", True,
     {"name": "v_A", "init": "x = 1; ok = false;", "requirements": ["UC-1", "UC-2"]}),
    ("v_Old BLOCKED", True, {"name": "v_Old", "blocked": True}),
    ("START", True, {"start": True}),
    ("e_Pay [total > 0 && (a || b[1] == 2)] /paid = true; n++;", False,
     {"name": "e_Pay", "guard": "total > 0 && (a || b[1] == 2)", "actions": "paid = true; n++;"}),
    ("e_Retry\nweight=0.25 REQTAG=R7\n", False, {"name": "e_Retry", "weight": 0.25, "requirements": ["R7"]}),
    ("", False, {}),
])
def test_yed_labels_read_as_graphwalker_reads_them(label: str, vertex: bool, fields: dict):
    from mbt.importers.graphml import parse_label

    assert parse_label(label, vertex) == fields


def test_a_graphml_model_walks_as_graphwalker_walks_it(tmp_path: Path):
    model = only_model(LOGIN_GRAPHML)
    # The `Start` node is no state: its edge e_Init is walked first. v_Maintenance and e_Refresh are BLOCKED.
    assert model.initial_state == "start" and "v_Maintenance" not in model.states
    assert not any(t.event.startswith(("e_Refresh", "e_Maintain")) for t in model.transitions)
    assert model.variables["attempts"].initial == 0  # INIT: on a vertex is the model's start action
    assert model.states["v_ClientNotRunning"].tags == ["UC01 2.2.1"]
    # GraphWalker walk: e0 e1, then e3 three times (attempts 0 -> 3), e3 is closed, e4 locks.
    states, taken = walk(model, ["e_Init", "e_StartClient"] + ["e_InvalidCredentials_e3"] * 4
                         + ["e_InvalidCredentials_e4"])
    assert taken[5] is None and states[-1] == "v_Locked"
    states, _ = walk(model, ["e_Init", "e_StartClient", "e_ValidCredentials", "e_Exit"])
    assert states == ["v_ClientNotRunning", "v_LoginPrompted", "v_Browse", "v_ClientNotRunning"]
    report = api.check([str(LOGIN_GRAPHML)])
    assert not [f for f in report.findings if f.severity == "error" or "span" in f.name or "quote" in f.name]


def test_a_bad_yed_label_is_one_located_error(tmp_path: Path):
    text = LOGIN_GRAPHML.read_text(encoding="utf-8").replace("e_Exit</y:EdgeLabel>", "e_Exit ?? </y:EdgeLabel>")
    path = write(tmp_path, text, "bad.graphml")
    with pytest.raises(LocatedError) as err:
        import_graphwalker(path)
    problem = err.value.problems[0]
    assert "e_Exit ??" in text.splitlines()[problem.line - 1]
    assert "edge e5: label `e_Exit ??`: `??` is outside GraphWalker's edge label syntax" in problem.message


def test_the_cli_imports_graphml(tmp_path: Path):
    from mbt.cli import main

    target = tmp_path / "login.fsm"
    with pytest.raises(SystemExit) as exit_:
        main(["import", "graphwalker", str(LOGIN_GRAPHML), "-o", str(target)])
    assert exit_.value.code == 0
    assert "state v_Locked final" in target.read_text(encoding="utf-8")
    (model,) = [m for f in load_paths([str(target)]) for m in f.models]
    assert model.initial_state == "start"


def test_requirements_are_measured_gated_and_traced(tmp_path: Path):
    data = json.loads(json.dumps(SAME_NAMED))
    model = data["models"][0]
    model["vertices"][1]["requirements"] = ["R1 account"]  # v_Account
    model["edges"][0]["requirements"] = ["R1 account"]  # e1: v_Home -> v_Account
    model["vertices"][2]["requirements"] = ["R2 guest"]  # v_Guest
    path = write(tmp_path, data)
    goldens = tmp_path / "walks.jsonl"
    # A GraphWalker walk e5 e1 (toggle, then log in to the account), checking where it ends: R1's state and edge are
    # both taken and checked; nothing visits v_Guest, so R2 is not met.
    goldens.write_text(json.dumps({"id": "W1", "model": "Shop", "turns": [
        {"event": "e_Toggle", "assert_state": {"state": "v_Home"}},
        {"event": "e_Login_e1", "assert_state": {"state": "v_Account"}}]}) + "\n", encoding="utf-8")
    report = api.coverage([str(path)], [str(goldens)])
    (mc,) = report.models
    by_tag = {r.requirement: r for r in mc.requirements}
    assert (by_tag["R1 account"].status, by_tag["R1 account"].elements, by_tag["R1 account"].verified) == \
        ("verified", 2, 2)
    assert (by_tag["R2 guest"].status, by_tag["R2 guest"].not_verified) == ("uncovered", ["state:v_Guest"])
    gate = tmp_path / "gate.yaml"
    gate.write_text("Shop.requirement: 1.0\n", encoding="utf-8")
    failed = api.coverage([str(path)], [str(goldens)], str(gate)).gate
    assert not failed.passed and [f.elements for f in failed.failures] == [["R2 guest"]]
    gate.write_text("Shop.requirement: 0.5\n", encoding="utf-8")
    assert api.coverage([str(path)], [str(goldens)], str(gate)).gate.passed
    run = api.coverage_run([str(path)], [str(goldens)], review=True)
    rows = {r.element: r for r in run.report.traceability}
    assert rows["state:v_Account"].tags == ["R1 account"] and rows["state:v_Account"].coverage == "verified"
