"""GraphWalker models in several files (GraphWalker's `-m a.json ... -m b.json ...`, AltWalker's folders of model
files) linked through shared states, and spans in minified JSON. Each model is written here and replayed along walks
written by hand from GraphWalker's semantics: a walk that reaches a shared state may go on in any model, of any file
given, that has a vertex with that shared state; `global.x` is one variable for all models of all files, any other
name is its model's own; each element is found where its own file says it is, at its own line and column."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mbt import api
from mbt.cli import main
from mbt.errors import LocatedError
from mbt.importers.graphwalker import import_graphwalker, import_graphwalker_files
from mbt.parsing.loader import load_paths
from tests.test_graphwalker_semantics import edge, walk


def write(folder: Path, name: str, data: dict | str, minified: bool = False) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_text(json.dumps(data, separators=(",", ":")) if minified else json.dumps(data, indent=2),
                        encoding="utf-8")
    return path


LOGIN = {"name": "Login", "models": [{
    "name": "Login", "id": "mL", "startElementId": "l0", "actions": ["seen = false;", "global.loggedIn = false;"],
    "vertices": [{"id": "l0", "name": "v_LoggedOut"}, {"id": "l1", "name": "v_Home", "sharedState": "HOME"}],
    "edges": [edge("e1", "e_Login", "l0", "l1", actions=["global.loggedIn = true;"]),
              edge("e2", "e_Guest", "l0", "l1", actions=["global.loggedIn = false;"]),
              edge("e3", "e_Logout", "l1", "l0", actions=["global.loggedIn = false;", "seen = true;"])]}]}
# Ids e1 and e2 again, as in Login: each edge is found in its own file.
SHOP = {"name": "Shop", "models": [{
    "name": "Shop", "id": "mS", "actions": ["seen = false;"],
    "vertices": [{"id": "s0", "name": "v_Home", "sharedState": "HOME"},
                 {"id": "s1", "name": "v_Cart", "sharedState": "CART"}],
    "edges": [edge("e1", "e_Add", "s0", "s1", guard="global.loggedIn", actions=["seen = true;"]),
              edge("e2", "e_Back", "s1", "s0")]}]}


def graphml(nodes: list[tuple[str, str]], edges: list[tuple[str, str, str, str]]) -> str:
    parts = ['<?xml version="1.0" encoding="UTF-8"?>',
             '<graphml xmlns="http://graphml.graphdrawing.org/xmlns" xmlns:y="http://www.yworks.com/xml/graphml">',
             '  <graph edgedefault="directed" id="G">']
    for nid, label in nodes:
        parts.append(f'    <node id="{nid}"><data><y:ShapeNode><y:NodeLabel>{label}</y:NodeLabel></y:ShapeNode>'
                     '</data></node>')
    for eid, source, target, label in edges:
        parts.append(f'    <edge id="{eid}" source="{source}" target="{target}"><data><y:PolyLineEdge>'
                     f'<y:EdgeLabel>{label}</y:EdgeLabel></y:PolyLineEdge></data></edge>')
    return "\n".join(parts + ["  </graph>", "</graphml>", ""])


ADMIN = graphml([("n0", "v_Home SHARED:HOME"), ("n1", "v_Admin")],
                [("a1", "n0", "n1", "e_Admin [global.loggedIn]"), ("a2", "n1", "n0", "e_Leave")])


def three(folder: Path) -> list[Path]:
    return [write(folder, "login.json", LOGIN), write(folder, "shop.json", SHOP), write(folder, "admin.graphml", ADMIN)]


def only_model(paths: list[Path]):
    (model,) = [m for f in load_paths([str(p) for p in paths]) for m in f.models]
    return model


def test_files_given_together_are_one_model_whose_runs_cross_them(tmp_path: Path):
    model = only_model(three(tmp_path))
    assert model.name == "Login_Shop_admin" and model.initial_state == "v_LoggedOut"
    assert sorted(model.states) == ["v_Admin", "v_Cart", "v_Home", "v_LoggedOut"]
    # One JavaScript context per model: Login's `seen` and Shop's `seen` are two variables, global.loggedIn is one.
    assert sorted(model.variables) == ["Login_seen", "Shop_seen", "global_loggedIn"]
    # GraphWalker walk: a guest reaches HOME; Shop's e_Add and admin's e_Admin need global.loggedIn, so neither
    # may be taken; back out, log in, and now the walk goes on in Shop (e_Add, e_Back) and in admin (e_Admin,
    # e_Leave) from the one shared state, then in Login again (e_Logout).
    states, taken = walk(model, ["e_Guest", "e_Add", "e_Admin", "e_Logout", "e_Login", "e_Add", "e_Back",
                                 "e_Admin", "e_Leave", "e_Logout"])
    assert taken == ["v_LoggedOut.e_Guest->v_Home", None, None, "v_Home.e_Logout->v_LoggedOut",
                     "v_LoggedOut.e_Login->v_Home", "v_Home.e_Add->v_Cart", "v_Cart.e_Back->v_Home",
                     "v_Home.e_Admin->v_Admin", "v_Admin.e_Leave->v_Home", "v_Home.e_Logout->v_LoggedOut"]
    assert states[-1] == "v_LoggedOut"


def test_each_element_cites_its_own_file_and_the_model_checks_clean(tmp_path: Path):
    login, shop, admin = three(tmp_path)
    model = only_model([login, shop, admin])
    cart, leave = model.states["v_Cart"], next(t for t in model.transitions if t.event == "e_Leave")
    add = next(t for t in model.transitions if t.event == "e_Add")
    assert (cart.span.source, cart.loc.file) == ("graphwalker_shop", str(shop))
    assert '"id": "s1"' in shop.read_text().splitlines()[cart.loc.line - 1]
    # e_Add is edge e1 of shop.json, not login.json's e1.
    assert (add.loc.file, add.span.source) == (str(shop), "graphwalker_shop")
    assert '"id": "e1"' in shop.read_text().splitlines()[add.loc.line - 1]
    assert (leave.loc.file, leave.span.source) == (str(admin), "graphwalker_admin")
    assert 'id="a2"' in admin.read_text().splitlines()[leave.loc.line - 1]
    assert model.states["v_Home"].loc.file == str(login)  # the shared state cites its first vertex
    report = api.check([str(login), str(shop), str(admin)])
    assert not [f for f in report.findings if f.severity == "error" or f.code.startswith("SPN")]


def test_a_finding_about_an_element_of_the_second_file_points_into_it(tmp_path: Path):
    shop = json.loads(json.dumps(SHOP))
    shop["models"][0]["vertices"].append({"id": "s9", "name": "v_Orphan"})  # nothing leads to it
    login, shop_path = write(tmp_path, "login.json", LOGIN), write(tmp_path, "shop.json", shop)
    report = api.check([str(login), str(shop_path)])
    (unreachable,) = [f for f in report.findings if "v_Orphan" in f.message and "reach" in f.message]
    assert unreachable.location.file == str(shop_path)
    assert '"id": "s9"' in shop_path.read_text().splitlines()[unreachable.location.line - 1]


def test_a_type_conflict_across_files_is_reported_in_the_file_that_has_it(tmp_path: Path):
    login = json.loads(json.dumps(LOGIN))
    login["models"][0]["edges"][0]["guard"] = "global.level < 3"
    shop = json.loads(json.dumps(SHOP))
    shop["models"][0]["edges"][1]["guard"] = "global.level == 'gold'"
    paths = [write(tmp_path, "login.json", login), write(tmp_path, "shop.json", shop)]
    with pytest.raises(LocatedError) as err:
        load_paths([str(p) for p in paths])
    (problem,) = err.value.problems
    assert "type-check" in problem.message and "global_level" in problem.message
    text = Path(problem.path).read_text().splitlines()[problem.line - 1]
    assert problem.path in (str(paths[0]), str(paths[1])) and '"id": "e' in text


def test_a_folder_of_model_files_is_one_linked_model_and_its_other_json_is_left_alone(tmp_path: Path):
    folder = tmp_path / "models"
    three(folder)
    write(folder, "cases.json", {"cases": [{"id": "c1", "turns": []}]})  # a golden file, not a model
    write(folder / "runs", "trace.json", {"resourceSpans": []})
    model = only_model([folder])
    # A folder's files in sorted order: admin.graphml first; the walk starts where the first model with a start
    # element (Login) starts.
    assert model.name == "admin_Login_Shop" and model.initial_state == "v_LoggedOut"
    assert walk(model, ["e_Login", "e_Admin"])[1] == ["v_LoggedOut.e_Login->v_Home", "v_Home.e_Admin->v_Admin"]


def test_files_that_share_no_state_are_imported_each_on_its_own(tmp_path: Path):
    other = {"name": "Other", "models": [{"name": "Other", "startElementId": "o0",
                                          "vertices": [{"id": "o0", "name": "v_A"}, {"id": "o1", "name": "v_B"}],
                                          "edges": [edge("x1", "e_Go", "o0", "o1")]}]}
    login, other_path = write(tmp_path, "login.json", LOGIN), write(tmp_path, "other.json", other)
    files = load_paths([str(login), str(other_path)])
    assert [(f.path, [m.name for m in f.models]) for f in files] == [(str(login), ["Login"]),
                                                                     (str(other_path), ["Other"])]
    notes = [n.render() for n in import_graphwalker_files([login, other_path]).notes]
    # HOME is shared by no other model given: an ordinary state, and a note says so and how to link it.
    assert any(n.startswith(f"{login}:") and "shared state `HOME` is shared with no other model of this file or "
               "of the files given with it, so it is an ordinary state" in n for n in notes)


def test_a_shared_name_in_one_file_only_is_noted_in_a_linked_model(tmp_path: Path):
    imported = import_graphwalker_files(three(tmp_path))
    notes = [n.render() for n in imported.notes]
    # CART is in shop.json only: it links nothing, and the note points at its vertex in shop.json.
    (cart,) = [n for n in notes if "shared state `CART`" in n]
    line = int(cart.split(":")[1])
    assert cart.startswith(str(tmp_path / "shop.json")) and '"sharedState": "CART"' in \
        (tmp_path / "shop.json").read_text().splitlines()[line - 1]
    assert any("login.json, shop.json, admin.graphml: linked through shared states into one fsm" in n for n in notes)


def test_the_cli_imports_several_files_into_one_checked_model(tmp_path: Path, capsys):
    paths = three(tmp_path / "gw")
    target = tmp_path / "out" / "store.fsm"
    target.parent.mkdir()
    with pytest.raises(SystemExit) as exit_:
        main(["import", "graphwalker", *map(str, paths), "-o", str(target)])
    assert exit_.value.code == 0
    text = target.read_text(encoding="utf-8")
    assert 'source graphwalker_login "../gw/login.json"' in text and 'source graphwalker_admin "../gw/admin.graphml"' \
        in text and text.count("fsm ") == 1
    err = capsys.readouterr().err
    assert "1 model(s) from 3 files" in err and f"{paths[1]}:" in err  # the CART note, at shop.json
    report = api.check([str(target)])
    assert not [f for f in report.findings if f.severity == "error" or f.code.startswith("SPN")]


# ---------------------------------------------------------------- minified JSON


TWO_MODELS = {"models": [
    {"name": "One", "id": "m1", "startElementId": "a",
     "vertices": [{"id": "a", "name": "v_First"}, {"id": "b", "name": "v_Next"}],
     "edges": [edge("e1", "e_Go", "a", "b"), edge("e2", "e_Back", "b", "a", guard="x.y")]},
    {"name": "Two", "id": "m2", "startElementId": "a",
     "vertices": [{"id": "a", "name": "v_Second"}, {"id": "b", "name": "v_Next"}],
     "edges": [edge("e1", "e_Go", "a", "b"), edge("e2", "e_Back", "b", "a")]}]}


def _cited(text: str, span) -> str:
    assert span.line_start == span.line_end == 1
    return text[span.column_start - 1:span.column_end]


def test_minified_spans_carry_each_elements_own_columns(tmp_path: Path):
    path = write(tmp_path, "m.json", TWO_MODELS, minified=True)
    text = path.read_text()
    assert "\n" not in text
    models = {m.name: m for f in load_paths([str(path)]) for m in f.models}
    spans = {}
    for name, model in models.items():
        for state in model.states.values():
            spans[(name, state.name)] = state.span
        for t in model.transitions:
            spans[(name, t.key)] = t.span
    # Every element cites its own characters: from its id to its name, distinct from every other element's.
    assert len({(s.column_start, s.column_end) for s in spans.values()}) == len(spans) == 8
    assert _cited(text, spans[("One", "v_First")]) == '"a","name":"v_First"'
    assert _cited(text, spans[("Two", "v_Second")]) == '"a","name":"v_Second"'  # the id `a` again, its own
    assert _cited(text, spans[("Two", "v_Next")]) == '"b","name":"v_Next"'
    assert text.index('"id":"b","name":"v_Next"', text.index('"Two"')) + 6 == spans[("Two", "v_Next")].column_start
    assert spans[("Two", "v_Next")].describe() == \
        f'graphwalker:1:{spans[("Two", "v_Next")].column_start}-1:{spans[("Two", "v_Next")].column_end} "v_Next"'
    # Each element's location is its id's place on line 1.
    second = models["Two"].states["v_Second"]
    assert (second.loc.line, second.loc.column) == (1, spans[("Two", "v_Second")].column_start)
    assert api.check([str(path)]).findings == [] or not [
        f for f in api.check([str(path)]).findings if f.code.startswith("SPN") or f.severity == "error"]


def test_a_minified_span_whose_name_changed_is_found_moved_or_missing(tmp_path: Path):
    path = write(tmp_path, "m.json", TWO_MODELS, minified=True)
    target = tmp_path / "m.fsm"
    with pytest.raises(SystemExit):
        main(["import", "graphwalker", str(path), "-o", str(target), "-q"])
    # Rename Two's v_Second in the JSON: its quote is no longer in its columns (and nowhere else).
    path.write_text(path.read_text().replace('"v_Second"', '"v_Later"'), encoding="utf-8")
    findings = [f for f in api.check([str(target)]).findings if f.code.startswith("SPN")]
    assert [(f.code, f.message.split(":")[0]) for f in findings] == [("SPN004", "quote not found anywhere in "
                                                                               "`graphwalker` (m.json)")]
    # Swap One's two state names: each quote now lies in the other's columns.
    path.write_text(json.dumps(TWO_MODELS, separators=(",", ":")).replace("v_First", "v_TMP")
                    .replace('"name":"v_Next"', '"name":"v_First"', 1).replace("v_TMP", "v_Next"), encoding="utf-8")
    moved = [f for f in api.check([str(target)]).findings if f.code == "SPN003"]
    assert len(moved) == 2 and all(f.message.startswith("quote moved: now at 1:") for f in moved)


def test_notes_and_errors_in_a_minified_file_give_line_and_column(tmp_path: Path):
    path = write(tmp_path, "m.json", TWO_MODELS, minified=True)
    text = path.read_text()
    notes = [n.render() for n in import_graphwalker(path).notes]
    (guard,) = [n for n in notes if "guard `x.y` not translated" in n]
    column = int(guard.split(":")[2])
    assert guard.startswith(f"{path}:1:{column}: note: edge e2 (e_Back)")
    assert text[column - 1:].startswith('{"id":"e2","name":"e_Back"')  # One's e2, not Two's
    bad = json.loads(json.dumps(TWO_MODELS))
    bad["models"][1]["edges"][0]["targetVertexId"] = "nowhere"
    bad_path = write(tmp_path, "bad.json", bad, minified=True)
    with pytest.raises(LocatedError) as err:
        load_paths([str(bad_path)])
    (problem,) = err.value.problems
    assert problem.line == 1 and bad_path.read_text()[problem.column - 1:].startswith('"nowhere"')


def test_a_type_conflict_in_a_minified_file_points_at_the_edge_not_the_converted_dsl(tmp_path: Path):
    data = {"models": [{"name": "M", "startElementId": "a", "vertices": [{"id": "a", "name": "v_A"}],
                        "edges": [edge("e1", "e_N", "a", "a", guard="x < 3"),
                                  edge("e2", "e_S", "a", "a", guard="x == 'on'")]}]}
    path = write(tmp_path, "m.json", data, minified=True)
    with pytest.raises(LocatedError) as err:
        api.check([str(path)])
    (problem,) = err.value.problems
    assert (problem.path, problem.line) == (str(path), 1) and "type-check" in problem.message
    assert path.read_text()[problem.column - 1:].startswith('"e2"')


def test_coverage_on_a_minified_file_reports_each_element_at_its_column(tmp_path: Path):
    path = write(tmp_path, "m.json", TWO_MODELS, minified=True)
    text = path.read_text()
    goldens = write(tmp_path, "g.jsonl", json.dumps({"id": "W", "model": "Two", "turns": [
        {"event": "e_Go", "assert_state": {"state": "v_Next"}}]}))
    run = api.coverage_run([str(path)], [str(goldens)], review=True)
    rows = {(r.model, r.element): r for r in run.report.traceability}
    # The trace resolves each span to its own characters: Two's v_Next, not One's (the same name, earlier on line 1).
    row = rows[("Two", "state:v_Next")]
    assert (row.line_start, row.found) == (1, True)
    assert text[row.column_start - 1:row.column_end] == '"b","name":"v_Next"'
    assert text.index('"v_Next"', text.index('"Two"')) + len('"v_Next"') == row.column_end
    from mbt.report.markdown import trace_markdown
    from mbt.report.sarif import coverage_sarif

    assert f"graphwalker:1:{row.column_start}-1:{row.column_end} \"v\\_Next\"" in trace_markdown(
        [r for r in run.report.traceability if r.model == "Two"])
    sarif = json.loads(coverage_sarif(run.report))
    # One's v_Next is uncovered: its SARIF result cites its own characters of the JSON (SARIF's end is exclusive).
    (result,) = [r for r in sarif["runs"][0]["results"] if r["properties"]["model"] == "One"
                 and r["properties"]["element"] == "state:v_Next"]
    cited = result["relatedLocations"][0]["physicalLocation"]["region"]
    first = rows[("One", "state:v_Next")]
    assert first.column_start < row.column_start
    assert (cited["startLine"], cited["startColumn"], cited["endColumn"]) == (1, first.column_start,
                                                                              first.column_end + 1)
    two = {e.element.id: e.element for mc in run.report.models if mc.model == "Two" for e in mc.elements}
    assert text[two["state:v_Next"].location.column - 1:].startswith('"b","name":"v_Next"')
