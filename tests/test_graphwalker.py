"""GraphWalker JSON import: vertices, edges, start element, requirements as tags, the JavaScript subset, and what is
reported (which edge, which text) when a guard or action is outside it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mbt import api
from mbt.cli import main
from mbt.errors import LocatedError
from mbt.importers.graphwalker import Names, Untranslatable, _Expr, import_graphwalker, tokens
from mbt.parsing.loader import load_paths

LOGIN = Path(__file__).parent / "data" / "graphwalker" / "login.json"


def translate(js: str) -> str:
    return _Expr(tokens(js), Names()).parse()


@pytest.mark.parametrize("js, dsl", [
    ("validLogin", "validLogin"),
    ("!rememberMe || !validLogin", "(not (rememberMe) or not (validLogin))"),
    ("a && (b || c)", "(a and ((b or c)))"),
    ("attempts === 3", "attempts == 3"),
    ("attempts !== -1", "attempts != -1"),
    ("count + 1 >= limit - 2", "count + 1 >= limit - 2"),
    ("name == 'O\\'Brien'", 'name == "O\'Brien"'),
    ('label != "say \\"hi\\""', 'label != "say \\"hi\\""'),
    ("x == null", "x == none"),
    ("flag == true", "flag == true"),
])
def test_the_javascript_subset_translates(js: str, dsl: str):
    assert translate(js) == dsl


@pytest.mark.parametrize("js, why", [
    ("user.loggedIn", "`.` is outside the translated subset"),
    ("isReady()", "`isReady(...)` calls a function"),
    ("a ? b : c", "`?` is outside the translated subset"),
    ("items[0] == 1", "`[` is outside the translated subset"),
    ("x * 2 > 3", "`*` is outside the translated subset"),
    ("ratio > 0.5", "`0.5` is a decimal number"),
    ("(a && b", "a `(` is not closed"),
])
def test_what_is_outside_the_subset_says_why(js: str, why: str):
    with pytest.raises(Untranslatable, match=why.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")
                       .replace("?", r"\?").replace("*", r"\*").replace(".", r"\.")):
        translate(js)


def test_the_login_model_imports_with_its_structure_and_tags():
    imported = import_graphwalker(LOGIN)
    (model,) = [m for f in load_paths([str(LOGIN)]) for m in f.models]
    assert imported.models == ["Login"] == [model.name]
    # GraphWalker starts before its start edge `e_Init`: an initial state of our own leads into it.
    assert model.initial_state == "start"
    assert [s.name for s in model.states.values() if s.final] == ["v_Locked"]
    keys = [t.key for t in model.transitions]
    assert "start.e_Init->v_ClientNotRunning" in keys and len(keys) == 10
    guards = {t.key: t.guard.text() for t in model.transitions if t.guard is not None}
    assert guards["v_LoginPrompted.e_InvalidCredentials_e5->v_Locked"] == "attempts == 3"
    assert guards["v_ClientNotRunning.e_StartClient_e2->v_Browse"] == "rememberMe and validLogin"
    assert {n: v.type.text() for n, v in model.variables.items()} == {
        # `attempts++` only under `attempts < 3`: the counter never passes 3.
        "attempts": "int[0..3]", "rememberMe": "bool", "validLogin": "bool"}
    assert model.variables["attempts"].initial == 0
    assert model.states["v_ClientNotRunning"].tags == ["UC01 2.2.1"]
    by_key = {t.key: t for t in model.transitions}
    assert by_key["v_ClientNotRunning.e_StartClient_e2->v_Browse"].tags == ["UC01 2.2.3"]
    from mbt.model.fsm import action_text
    assert [action_text(a) for a in by_key["v_LoginPrompted.e_ToggleRememberMe->v_LoginPrompted"].actions] == [
        "rememberMe := not rememberMe"]


def test_untranslatable_guards_and_actions_are_reported_and_kept_visible():
    imported = import_graphwalker(LOGIN)
    notes = [n.render("login.json") for n in imported.notes]
    assert ("login.json:32: note: edge e9 (e_Close): guard `helpers.isEnabled('close')` not translated: `.` is outside "
            "the translated subset; the transition is kept without it") in notes
    assert any("edge e9 (e_Close): action `log('closing')` not translated" in n for n in notes)
    assert any("shared state `LoggedIn` is shared with no other model of this file" in n for n in notes)
    (model,) = load_paths([str(LOGIN)])[0].models
    close = next(t for t in model.transitions if t.event == "e_Close")
    assert close.guard is None and close.status.value == "unspecified"
    assert "helpers.isEnabled('close')" in close.status_reason and "log('closing')" in close.status_reason


def test_spans_cite_the_json_and_check_clean():
    report = api.check([str(LOGIN)])
    assert [f for f in report.findings if f.severity == "error"] == []
    assert not [f for f in report.findings if "span" in f.name or "quote" in f.name]
    (model,) = load_paths([str(LOGIN)])[0].models
    assert model.states["v_Locked"].span.describe() == 'graphwalker:14 "v_Locked"'


def test_generation_runs_on_a_graphwalker_model_directly(tmp_path: Path):
    report = api.generate([str(LOGIN)], [], str(tmp_path / "out"), suite="transition")
    suite = report.models[0].suite
    assert suite.lower_bound == 10 and suite.steps >= suite.optimum_steps
    # `attempts === 3` needs three failed logins first: the suite respects that guard.
    stubs = (tmp_path / "out" / "goldens" / "Login.suite-transition.jsonl").read_text().splitlines()  # all JSON
    events = [turn["event"] for line in stubs for turn in json.loads(line)["turns"]]
    assert events.count("e_InvalidCredentials_e4") >= 3 and events.count("e_InvalidCredentials_e5") == 1


def test_bad_graphwalker_files_get_one_clear_located_error(tmp_path: Path):
    broken = tmp_path / "broken.json"
    broken.write_text('{"models": [\n  {"name": "m",\n}', encoding="utf-8")
    with pytest.raises(LocatedError) as err:
        import_graphwalker(broken)
    assert err.value.problems[0].line == 3 and "not valid JSON" in err.value.problems[0].message
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"models": [{"name": "m", "startElementId": "a", "vertices": [{"id": "a", "name": "A"}],
                                             "edges": [{"id": "e1", "name": "go", "sourceVertexId": "a",
                                                        "targetVertexId": "nowhere"}]}]}, indent=1), encoding="utf-8")
    with pytest.raises(LocatedError) as err:
        import_graphwalker(wrong)
    assert "edge e1 (go): targetVertexId 'nowhere' is not a vertex of `m`" in err.value.problems[0].message
    other = tmp_path / "other.json"
    other.write_text('{"cases": []}', encoding="utf-8")
    with pytest.raises(LocatedError, match="not a GraphWalker model"):
        import_graphwalker(other)


def test_names_that_are_not_dsl_names_are_cleaned_and_kept_unique(tmp_path: Path):
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps({"models": [{
        "name": "my model", "startElementId": "v1",
        "vertices": [{"id": "v1", "name": "state"}, {"id": "v2", "name": "2 done"}, {"id": "v3", "name": "state"}],
        "edges": [{"id": "x", "name": "go on", "sourceVertexId": "v1", "targetVertexId": "v2"},
                  {"id": "y", "name": "go on", "sourceVertexId": "v1", "targetVertexId": "v3"}]}]}), encoding="utf-8")
    (model,) = load_paths([str(odd)])[0].models
    assert model.name == "my_model"
    assert list(model.states) == ["state_", "_2_done", "state__2"]
    # Two `go on` edges leave v1: GraphWalker chooses between them, so each is an event of its own.
    assert list(model.events) == ["go_on_x", "go_on_y"]


def test_the_cli_writes_the_dsl_and_lists_the_notes(tmp_path: Path, capsys):
    target = tmp_path / "login.fsm"
    with pytest.raises(SystemExit) as exit_:
        main(["import", "graphwalker", str(LOGIN), "-o", str(target)])
    assert exit_.value.code == 0
    err = capsys.readouterr().err
    assert "edge e9 (e_Close): guard `helpers.isEnabled('close')` not translated" in err
    assert "1 model(s)" in err
    text = target.read_text(encoding="utf-8")
    assert text.startswith("# Imported from GraphWalker") and "fsm Login" in text
    # The source path is relative to the written file, so `mbt check` finds the JSON from there.
    assert api.check([str(target)]).count("error") == 0


def test_model_keywords_are_valid_state_names_and_the_reserved_words_come_from_the_grammar(tmp_path: Path):
    """Issue 12: the importer's reserved-word list had drifted from the grammar and renamed `table` to `table_`."""
    from mbt.parsing.grammar import reserved_words

    keywords = tmp_path / "keywords.json"
    keywords.write_text(json.dumps({"models": [{
        "name": "kw", "startElementId": "v1",
        "vertices": [{"id": "v1", "name": "table"}, {"id": "v2", "name": "policy"}, {"id": "v3", "name": "var"}],
        "edges": [{"id": "a", "name": "e_go", "sourceVertexId": "v1", "targetVertexId": "v2"},
                  {"id": "b", "name": "e_on", "sourceVertexId": "v2", "targetVertexId": "v3"}]}]}), encoding="utf-8")
    (model,) = load_paths([str(keywords)])[0].models
    assert list(model.states) == ["table", "policy", "var_"]  # only a word the grammar reserves is renamed
    common = (Path(__file__).resolve().parents[1] / "grammars" / "common.lark").read_text(encoding="utf-8")
    assert all(f"|{word}|" in common.replace("(?:", "|").replace(")\\b", "|") for word in reserved_words())
