"""The last GraphWalker files mbt refused or misread (issue 38), each in a small file written here in the shape of
the public one: a GraphWalker Studio file whose models all start on an edge of another model (PetClinic), a yEd
label that is only a comment, a start edge into a BLOCKED vertex, duplicate edge ids."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mbt.errors import LocatedError
from mbt.importers.graphwalker import import_graphwalker
from mbt.parsing.loader import load_paths
from tests.test_graphwalker_files import graphml
from tests.test_graphwalker_semantics import edge, walk


def write(tmp_path: Path, name: str, data: dict | str) -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2), encoding="utf-8")
    return path


def only_model(path: Path):
    (model,) = [m for f in load_paths([str(path)]) for m in f.models]
    return model


# PetClinic's shape: every model's startElementId names `e_StartBrowser`, an edge of the model `Clinic`, which is
# not the first model; the models are linked by shared states.
STUDIO = {"name": "Clinic", "models": [
    {"name": "FindOwners", "startElementId": "start",
     "vertices": [{"id": "f1", "name": "v_FindOwners", "sharedState": "FindOwners"},
                  {"id": "f2", "name": "v_Owners"}],
     "edges": [edge("f3", "e_Search", "f1", "f2"), edge("f4", "e_FindOwners", "f2", "f1")]},
    {"name": "Clinic", "startElementId": "start",
     "vertices": [{"id": "h1", "name": "v_HomePage"},
                  {"id": "h2", "name": "v_FindOwners", "sharedState": "FindOwners"}],
     "edges": [edge("start", "e_StartBrowser", None, "h1"), edge("h3", "e_FindOwners", "h1", "h2"),
               edge("h4", "e_HomePage", "h2", "h1")]}]}


def test_a_start_edge_in_another_model_of_the_same_file_is_where_the_run_starts(tmp_path: Path):
    path = write(tmp_path, "clinic.json", STUDIO)
    imported = import_graphwalker(path)  # was: exit 2, "startElementId 'start' is neither a vertex nor an edge"
    model = only_model(path)
    assert model.initial_state == "start"
    states, taken = walk(model, ["e_StartBrowser", "e_FindOwners", "e_Search", "e_FindOwners", "e_HomePage"])
    assert states == ["v_HomePage", "v_FindOwners", "v_Owners", "v_FindOwners", "v_HomePage"]
    assert taken[0] == "start.e_StartBrowser->v_HomePage"
    # Every model names that same edge: nothing is said about a start element left unused.
    assert not [n for n in imported.notes if "start element" in n.message]


def test_a_start_id_that_no_model_of_the_file_has_is_still_one_located_error(tmp_path: Path):
    data = json.loads(json.dumps(STUDIO))
    data["models"][0]["startElementId"] = "nowhere"
    path = write(tmp_path, "clinic.json", data)
    with pytest.raises(LocatedError) as err:
        import_graphwalker(path)
    (problem,) = err.value.problems
    assert '"startElementId": "nowhere"' in path.read_text(encoding="utf-8").splitlines()[problem.line - 1]
    assert "names no vertex or edge of the models of this file" in problem.message


def test_a_yed_label_that_is_only_a_comment_is_no_label(tmp_path: Path):
    from mbt.importers.graphml import parse_label

    assert parse_label("/* Create a model, then verify it */", vertex=False) == {}
    assert parse_label("e_Save /* keeps it */ [ok] /* then */ /n++;", vertex=False) == \
        {"name": "e_Save", "guard": "ok", "actions": "n++;"}
    text = graphml([("n0", "Start"), ("n1", "v_Empty"), ("n2", "v_Created")],
                   [("e0", "n0", "n1", "e_Init"), ("e1", "n1", "n2", "/* a comment only */"),
                    ("e2", "n2", "n1", "e_Back")])
    model = only_model(write(tmp_path, "create.graphml", text))  # was: "actions end with `;`", exit 2
    assert sorted(t.key for t in model.transitions) == ["start.e_Init->v_Empty", "v_Created.e_Back->v_Empty",
                                                        "v_Empty.e_e1->v_Created"]


def test_a_start_edge_into_a_blocked_vertex_is_a_note_at_the_graphml_edge(tmp_path: Path):
    text = graphml([("n0", "Start"), ("n1", "v_Blocked BLOCKED"), ("n2", "v_A"), ("n3", "v_B")],
                   [("e0", "n0", "n1", "e_Init"), ("e1", "n1", "n2", "e_Leave"), ("e2", "n2", "n3", "e_Go"),
                    ("e3", "n3", "n2", "e_Back")])
    path = write(tmp_path, "blocked.graphml", text)
    imported = import_graphwalker(path)  # was: exit 2, "startElementId 'e0' is neither a vertex nor an edge"
    assert not any("startElementId" in n.message for n in imported.notes)
    (start_note,) = [n for n in imported.notes if "edge e0 (e_Init)" in n.message]
    assert 'id="e0"' in text.splitlines()[start_note.line - 1]
    assert "BLOCKED vertex n1 (v_Blocked)" in start_note.message
    model = only_model(path)
    assert sorted(model.states) == ["v_A", "v_B"] and model.initial_state == "v_A"


def test_duplicate_edge_ids_are_refused_as_graphwalker_refuses_them(tmp_path: Path):
    path = write(tmp_path, "invalid.json", {"models": [{
        "name": "M", "startElementId": "a",
        "vertices": [{"id": "a", "name": "v_A"}, {"id": "b", "name": "v_B"}],
        "edges": [edge("e1", "e_Go", "a", "b"), edge("e1", "e_Back", "b", "a")]}]})
    with pytest.raises(LocatedError) as err:
        import_graphwalker(path)  # was: imported, with a note only
    (problem,) = err.value.problems
    lines = path.read_text(encoding="utf-8").splitlines()
    assert '"id": "e1"' in lines[problem.line - 1] and '"e_Back"' in "".join(lines[problem.line - 1:problem.line + 2])
    assert "edge id `e1` is used twice" in problem.message


# ShoppingCart's shape: the start element is a self-loop on the first vertex, which has other edges too.
SELF_LOOP_START = {"models": [{
    "name": "Cart", "startElementId": "e0",
    "vertices": [{"id": "a", "name": "v_Home"}, {"id": "b", "name": "v_Result"}, {"id": "c", "name": "v_Cart"}],
    "edges": [edge("e0", "e_EnterURL", "a", "a"), edge("e1", "e_Search", "a", "b"), edge("e2", "e_Home", "b", "a"),
              edge("e3", "e_Cart", "b", "c"), edge("e4", "e_Home", "c", "a")]}]}


def test_a_start_edge_with_a_source_vertex_is_one_transition_walked_first(tmp_path: Path):
    path = write(tmp_path, "cart.json", SELF_LOOP_START)
    model = only_model(path)
    # One transition per GraphWalker edge (was: `start.e_EnterURL->v_Home` and `v_Home.e_EnterURL->v_Home`).
    assert len([t for t in model.transitions if t.event == "e_EnterURL"]) == 1
    assert len(model.transitions) == 5
    # Still walked first: GraphWalker's walk starts with e0; v_Home's other edge cannot come before it.
    assert walk(model, ["e_Search"])[1] == [None]
    states, _ = walk(model, ["e_EnterURL", "e_Search", "e_Cart", "e_Home", "e_EnterURL"])
    assert states == ["v_Home", "v_Result", "v_Cart", "v_Home", "v_Home"]
    # Every edge, by hand: e0 e1 e2 e1 e3 e4 -- v_Result is left twice and entered from v_Home only: 6 steps, the
    # optimum (it was 7 with the start edge counted twice).
    from mbt.generate.suites import SuiteBuilder
    from mbt.generate.witnesses import WitnessFinder

    suite = SuiteBuilder(WitnessFinder(model)).build("transition")
    assert suite.missing == [] and suite.steps == suite.optimum_steps == 6


# A counter no guard bounds (`n++`) is explored by mbt within a window; the exact search used to explore past it
# (the configuration space never ended), so guarded models stayed above the optimum, "not computed".
COUNTED = {"models": [{
    "name": "Counted", "startElementId": "a", "actions": ["n = 0;"],
    "vertices": [{"id": "a", "name": "v_A"}, {"id": "b", "name": "v_B"}],
    "edges": [edge("e1", "e_Add", "a", "a", actions=["n++;"]), edge("e2", "e_Go", "a", "b", guard="n > 1"),
              edge("e3", "e_Back", "b", "a")]}]}

AUTH = {"models": [{
    "name": "Auth", "startElementId": "h", "actions": ["loggedIn = false;", "visits = 0;"],
    "vertices": [{"id": "h", "name": "v_Home"}],
    "edges": [edge("e1", "e_Login", "h", "h", guard="!loggedIn", actions=["loggedIn = true;", "visits++;"]),
              edge("e2", "e_Logout", "h", "h", guard="loggedIn", actions=["loggedIn = false;"])]}]}


def test_a_guarded_model_with_an_unbounded_counter_gets_the_exact_optimum(tmp_path: Path):
    from mbt.generate.suites import SuiteBuilder
    from mbt.generate.witnesses import WitnessFinder

    model = only_model(write(tmp_path, "counted.json", COUNTED))
    suite = SuiteBuilder(WitnessFinder(model)).build("transition")
    # By hand: e_Go needs n > 1, so e_Add twice first: e_Add e_Add e_Go e_Back, 4 steps (the guard-free tour: 3).
    assert (suite.optimum_steps, suite.steps, len(suite.runs)) == (3, 4, 1)
    assert suite.exact is not None and suite.no_exact is None  # was: "the configuration space is too large"


def test_an_impossible_pair_is_reported_impossible_not_as_a_depth_limit(tmp_path: Path):
    from mbt.generate.suites import SuiteBuilder
    from mbt.generate.witnesses import WitnessFinder

    model = only_model(write(tmp_path, "auth.json", AUTH))
    suite = SuiteBuilder(WitnessFinder(model)).build("transition-pair")
    reasons = {m.element: m.reason for m in suite.missing}
    # Logging in twice, or out twice, needs the other edge between: no run takes those pairs.
    assert reasons == {"transition-pair:v_Home.e_Login->v_Home|v_Home.e_Login->v_Home": "unsatisfiable",
                       "transition-pair:v_Home.e_Logout->v_Home|v_Home.e_Logout->v_Home": "unsatisfiable"}
