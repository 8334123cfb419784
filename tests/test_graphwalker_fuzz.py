"""Mutated GraphWalker JSON and GraphML (seeded, bounded): the import either gives a model or one located error,
never another exception."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import pytest

from mbt.errors import LocatedError
from mbt.importers.graphwalker import import_graphwalker

DATA = Path(__file__).parent / "data" / "graphwalker"
ODD_VALUES = [None, 0, -1, 10**30, 1.5, True, "", "x", "e_ä-ö \u2028", "\"'\\", [], [1, "a"], {}, {"id": []},
              "(" * 60 + "a" + ")" * 60, "a ++ b", "global.", "!", "x = ", ";;;", "v_" * 200]


def _places(node, path=()):
    yield path
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _places(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _places(v, (*path, i))


def _set(doc, path, value):
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value


def _delete(doc, path):
    node = doc
    for key in path[:-1]:
        node = node[key]
    del node[path[-1]]


def mutants(seed: int, count: int):
    rnd = random.Random(seed)
    base = json.loads((DATA / "login.json").read_text(encoding="utf-8"))
    places = [p for p in _places(base) if p]
    for _ in range(count):
        doc = copy.deepcopy(base)
        for _ in range(rnd.randint(1, 3)):
            path = rnd.choice(places)
            try:
                if rnd.random() < 0.2:
                    _delete(doc, path)
                else:
                    _set(doc, path, copy.deepcopy(rnd.choice(ODD_VALUES)))
            except (KeyError, IndexError, TypeError):
                pass  # the place went away with an earlier mutation
        yield doc


@pytest.mark.parametrize("seed", range(4))
def test_mutated_graphwalker_json_imports_or_is_one_located_error(tmp_path: Path, seed: int):
    outcomes = {"imported": 0, "located": 0}
    for n, doc in enumerate(mutants(seed, 60)):
        path = tmp_path / f"m{n}.json"
        path.write_text(json.dumps(doc, indent=1, ensure_ascii=False), encoding="utf-8")
        try:
            import_graphwalker(path)
            outcomes["imported"] += 1
        except LocatedError as err:
            problem = err.problems[0]
            assert problem.path == str(path) and problem.line >= 1 and problem.column >= 1
            outcomes["located"] += 1
    assert outcomes["imported"] and outcomes["located"]  # both outcomes occur: the mutations reach both paths


@pytest.mark.parametrize("seed", range(2))
def test_mutated_graphml_labels_import_or_are_one_located_error(tmp_path: Path, seed: int):
    rnd = random.Random(seed)
    text = (DATA / "login.graphml").read_text(encoding="utf-8")
    pieces = ["[", "]", "/", ";", "BLOCKED", "SHARED:", "INIT:", "REQTAG=", "weight=x", "e_Z", "Start", "&lt;",
              "\u00e9", "  ", "\n"]
    labels = [i for i in range(len(text)) if text.startswith("Label>", i)]
    for n in range(40):
        at = rnd.choice(labels) + len("Label>")
        mutated = text[:at] + "".join(rnd.choice(pieces) for _ in range(rnd.randint(1, 4))) + text[at:]
        path = tmp_path / f"g{n}.graphml"
        path.write_text(mutated, encoding="utf-8")
        try:
            import_graphwalker(path)
        except LocatedError as err:
            assert err.problems[0].path == str(path) and err.problems[0].line >= 1


def test_a_lone_surrogate_is_refused_where_it_is_and_a_pair_is_text(tmp_path: Path):
    lone = tmp_path / "lone.json"
    lone.write_text('{"models": [{"name": "M", "startElementId": "a",\n "vertices": [{"id": "a", "name": "v_\\ud800"}]}]}',
                    encoding="utf-8")
    with pytest.raises(LocatedError) as err:
        import_graphwalker(lone)
    assert (err.value.problems[0].line, err.value.problems[0].column) == (2, 35)
    assert "lone UTF-16 surrogate" in err.value.problems[0].message
    pair = tmp_path / "pair.json"
    pair.write_text('{"models": [{"name": "M", "startElementId": "a", "vertices": [{"id": "a", "name": "v_A", '
                    '"requirements": ["\\ud83d\\ude00 smile"]}]}]}', encoding="utf-8")
    assert 'tag "\U0001f600 smile"' in import_graphwalker(pair).text


HUGE = "9" * 5000  # past Python's 4,300-digit limit for int()


@pytest.mark.parametrize("where", ["a JSON number", "a guard", "an edge action", "a model action"])
def test_a_5000_digit_number_is_a_located_error(tmp_path: Path, where: str):
    """A number longer than mbt reads (jsonread.MAX_DIGITS), in the JSON or in a guard or action's JavaScript, is one
    located error (exit 2 at the command line), never an internal error."""
    doc = json.loads((DATA / "login.json").read_text(encoding="utf-8"))
    login = doc["models"][0]
    edge = next(e for e in login["edges"] if e["id"] == "e4")
    if where == "a guard":
        edge["guard"] = f"attempts < {HUGE}"
    elif where == "an edge action":
        edge["actions"] = [f"attempts = {HUGE};"]
    elif where == "a model action":
        login["actions"] = [f"attempts = {HUGE};"]
    path = tmp_path / "huge.json"
    text = json.dumps(doc, indent=1)
    path.write_text(text.replace('"generator"', f'"weight": {HUGE}, "generator"', 1) if where == "a JSON number"
                    else text, encoding="utf-8")
    with pytest.raises(LocatedError) as err:
        import_graphwalker(path)
    problem = err.value.problems[0]
    assert "a number of 5000" in problem.message and "mbt reads numbers of up to 1000" in problem.message
    line = text.splitlines()[problem.line - 1] if where != "a JSON number" else ""
    assert where == "a JSON number" or HUGE in line, (problem, line[:80])
    from tests.cli_runner import run_mbt

    result = run_mbt("check", path)
    assert result.returncode == 2 and "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert result.stderr.startswith(f"{path}:{problem.line}:{problem.column}: error: ")


@pytest.mark.parametrize("label", [f"e_Go\nweight={HUGE}", f"e_Go\ndependency={HUGE}", f"e_Go [x &lt; {HUGE}]"])
def test_a_5000_digit_number_in_a_graphml_label_is_a_located_error(tmp_path: Path, label: str):
    text = (DATA / "login.graphml").read_text(encoding="utf-8")
    at = text.index("Label>", text.index("<edge")) + len("Label>")
    end = text.index("<", at)
    path = tmp_path / "huge.graphml"
    path.write_text(text[:at] + label + text[end:], encoding="utf-8")
    with pytest.raises(LocatedError) as err:
        import_graphwalker(path)
    assert "a number of 5000" in err.value.problems[0].message
