"""DMN XML import: decision tables round-trip into the DSL with their rules, ids, hit policies and annotations;
`--model FILE.dmn` loads directly with locations in the XML; bad DMN gets one clear message; the CLI end to end."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from mbt.engine.table import TableEvaluator
from mbt.errors import LocatedError
from mbt.importers.dmn import convert_dmn, import_dmn
from mbt.parsing.loader import expand_paths, load_file, parse_text
from tests.cli_runner import run_mbt

DATA = Path(__file__).parent / "data" / "dmn"
DISH = DATA / "dish.dmn"
LOANS = DATA / "loans-dmn11.dmn"
NS = {"1.1": "http://www.omg.org/spec/DMN/20151101/dmn.xsd", "1.2": "http://www.omg.org/spec/DMN/20180521/MODEL/",
      "1.3": "https://www.omg.org/spec/DMN/20191111/MODEL/", "1.4": "https://www.omg.org/spec/DMN/20211108/MODEL/",
      "1.5": "https://www.omg.org/spec/DMN/20230324/MODEL/"}


def mbt(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return run_mbt(*args, cwd=cwd)


def small_dmn(version: str, rules: str, inputs: str | None = None, hit: str = "UNIQUE",
              outputs: str | None = None) -> str:
    inputs = inputs or ('<input id="i1" label="Age"><inputExpression typeRef="integer"><text>age</text>'
                        '</inputExpression></input>')
    outputs = outputs or '<output id="o1" name="result" typeRef="string"/>'
    return (f'<?xml version="1.0"?>\n<definitions xmlns="{NS[version]}" id="d" name="D" namespace="x">\n'
            f'  <decision id="dec" name="Decide">\n    <decisionTable id="t" hitPolicy="{hit}">\n'
            f"      {inputs}\n      {outputs}\n{rules}    </decisionTable>\n  </decision>\n</definitions>\n")


def rule(rid: str, entry: str, output: str = '"x"') -> str:
    return (f'      <rule id="{rid}">\n        <inputEntry id="{rid}_i"><text>{entry}</text></inputEntry>\n'
            f'        <outputEntry id="{rid}_o"><text>{output}</text></outputEntry>\n      </rule>\n')


def write(tmp_path: Path, text: str, name: str = "m.dmn") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# ---------------------------------------------------------------- round trip


def test_dish_round_trips_with_rules_ids_hit_policies_and_annotations():
    imported = import_dmn(DISH)
    assert (imported.version, imported.tables, imported.skipped) == ("1.3", ["Dish", "Beverages"], ["Greeting"])
    models = {m.name: m for m in parse_text(imported.text, "dish.dt").models}
    dish, drinks = models["Dish"], models["Beverages"]
    assert (dish.hit, drinks.hit, drinks.aggregation) == ("UNIQUE", "COLLECT", None)
    assert [r.name for r in dish.rules] == ["rule_fall", "rule_winter", "rule_spring", "rule_spring_many",
                                            "rule_party", "rule_summer"]  # rule-summer: `-` is not a name character
    assert "# DMN rule id: rule-summer" in imported.text
    assert dish.rules[0].notes == ["Default in fall"] and dish.rules[4].notes == ["Save money"]
    assert [c.name for c in dish.inputs] == ["season", "guestCount"]
    assert dish.inputs[0].type.values == ("Fall", "Winter", "Spring", "Summer")
    assert dish.inputs[1].type.kind == "integer"
    assert dish.outputs[0].type.values[0] == "Spareribs"
    assert [r.text() for r in dish.rules[3:5]] == ['"Spring" | [5..8] -> "Stew"',
                                                   '"Fall", "Winter", "Spring" | > 8 -> "Stew"']
    # the DMN's meaning is kept: Camunda's documented answers for this table
    ev = TableEvaluator(dish)
    assert ev.decide_named({"season": "Spring", "guestCount": 6}).result == {"desiredDish": "Stew"}
    assert ev.decide_named({"season": "Winter", "guestCount": 3}).result == {"desiredDish": "Roastbeef"}
    drinks_ev = TableEvaluator(drinks)
    got = drinks_ev.decide_named({"desiredDish": "Spareribs", "guestsWithChildren": True}).result
    assert got == [{"beverages": "Aecht Schlenkerla Rauchbier"}, {"beverages": "Apple Juice"}, {"beverages": "Water"}]


def test_loading_the_dmn_directly_gives_the_same_models_located_in_the_xml():
    direct = load_file(DISH)
    imported = parse_text(import_dmn(DISH).text, "dish.dt")
    assert [m.name for m in direct.models] == [m.name for m in imported.models]
    for a, b in zip(direct.models, imported.models):
        assert [r.text() for r in a.rules] == [r.text() for r in b.rules]
        assert a.hit == b.hit
    first_rule = direct.models[0].rules[0]
    assert (first_rule.loc.file, first_rule.loc.line) == (str(DISH), 24)  # <rule id="rule_fall"> in the XML
    assert direct.models[0].rules[0].entries[1].loc.line == 27  # its second <inputEntry>


def test_dmn_1_1_with_feel_prefixes_null_dates_default_and_aggregation():
    models = {m.name: m for m in load_file(LOANS).models}
    band, fees = models["Risk_band"], models["Fees"]
    assert band.hit == "PRIORITY" and band.outputs[0].default == "MEDIUM"
    assert [c.type.text() for c in band.inputs] == ["number [300..850]", "date", "string?"]
    assert [r.text() for r in band.rules] == ['< 580 | - | - -> "HIGH"',
                                              '[580..850] | <= date("2015-01-01") | not(none) -> "LOW"',
                                              '(580..700) | - | none -> "MEDIUM"']
    assert (fees.hit, fees.aggregation) == ("COLLECT", "SUM")
    assert TableEvaluator(fees).decide_named({"amount": 20000}).result == {"fee": 12.5}


@pytest.mark.parametrize("version", sorted(NS))
def test_every_dmn_version_namespace_is_read(tmp_path, version):
    path = write(tmp_path, small_dmn(version, rule("r1", "&lt; 18") + rule("r2", "&gt;= 18", '"y"')))
    (model,) = load_file(path).models
    assert [r.name for r in model.rules] == ["r1", "r2"]
    assert convert_dmn(path).version == version


def test_hostile_strings_are_escaped_in_the_dsl(tmp_path):
    nasty = 'say \\"hi\\" # not a comment } -&gt; \\"x\\"'
    path = write(tmp_path, small_dmn("1.3", rule("r1", "-", f'"{nasty}"'),
                                     inputs='<input id="i" label="a } b # c"><inputExpression typeRef="string">'
                                            '<text>the input\nwith "quotes"</text></inputExpression></input>'))
    text = import_dmn(path).text
    (model,) = parse_text(text, "x.dt").models
    assert model.rules[0].outputs == ['say "hi" # not a comment } -> "x"']
    assert model.inputs[0].name == "the_input_with_quotes"


# ---------------------------------------------------------------- bad DMN


def problems(path: Path) -> list:
    with pytest.raises(LocatedError) as err:
        load_file(path)
    return err.value.problems


def test_feel_beyond_unary_tests_names_the_rule_and_entry(tmp_path):
    path = write(tmp_path, small_dmn("1.3", rule("r1", "&lt; 18") + rule("r2", "age * 2 &gt; limit") +
                                     rule("r3", "-", "amount * 0.1")))
    found = problems(path)
    assert [(p.line, p.message) for p in found] == [
        (12, "rule `r2`, input `age`: FEEL `age * 2 > limit` is beyond simple unary tests"),
        (17, "rule `r3`, output `result`: FEEL `amount * 0.1` is beyond simple unary tests")]
    assert found[0].source_line.strip().startswith('<inputEntry id="r2_i">')
    assert "S-FEEL unary tests" in found[0].hint
    assert mbt("import", "dmn", path).returncode == 2


def test_not_xml_wrong_root_no_table_and_entities_are_refused(tmp_path):
    broken = write(tmp_path, '<definitions xmlns="https://www.omg.org/spec/DMN/20191111/MODEL/">\n  <decision>\n'
                             '</definitions>\n', "broken.dmn")
    (p,) = problems(broken)
    assert (p.line, p.column) == (3, 3) and p.message.startswith("not well-formed XML: mismatched tag")
    bpmn = write(tmp_path, '<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL"/>', "bpmn.dmn")
    assert problems(bpmn)[0].message.startswith("not a DMN file: the root element is `definitions` in namespace "
                                                "`http://www.omg.org/spec/BPMN/20100524/MODEL`")
    literal = write(tmp_path, f'<definitions xmlns="{NS["1.3"]}"><decision id="g" name="Greeting">'
                              '<literalExpression><text>"hi"</text></literalExpression></decision></definitions>',
                    "literal.dmn")
    assert problems(literal)[0].message == "no decision table in this DMN file: decision `Greeting` holds other " \
                                           "expressions"
    bomb = write(tmp_path, '<?xml version="1.0"?>\n<!DOCTYPE d [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;">]>\n'
                           f'<definitions xmlns="{NS["1.3"]}">&b;</definitions>\n', "bomb.dmn")
    assert problems(bomb)[0].message.startswith("refused: DTDForbidden")


def test_type_and_value_problems_point_into_the_xml(tmp_path):
    unknown_type = write(tmp_path, small_dmn("1.3", rule("r1", "-"), inputs='<input id="i"><inputExpression '
                                             'typeRef="date and time"><text>t</text></inputExpression></input>'),
                         "type.dmn")
    (p,) = problems(unknown_type)
    assert (p.line, p.message) == (5, "`t`: typeRef `date and time` is not supported")
    wrong_value = write(tmp_path, small_dmn("1.3", rule("r1", '"old"')), "value.dmn")
    (p,) = problems(wrong_value)
    assert p.line == 8 and "cannot be a value of an integer column" in p.message
    assert p.source_line.strip().startswith("<inputEntry")


def test_dmn_files_are_found_in_folders(tmp_path):
    write(tmp_path, small_dmn("1.4", rule("r1", "-")), "a.dmn")
    (tmp_path / "notes.xml").write_text("<x/>", encoding="utf-8")
    assert [p.name for p in expand_paths([str(tmp_path)])] == ["a.dmn"]


# ---------------------------------------------------------------- the command line


def test_cli_import_writes_the_dsl_and_notes_skipped_decisions(tmp_path):
    done = mbt("import", "dmn", DISH)
    assert done.returncode == 0, done.stderr
    assert done.stdout == import_dmn(DISH).text
    assert "decision `Greeting` holds no decision table; not imported" in done.stderr
    out = tmp_path / "dish.dt"
    done = mbt("import", "dmn", DISH, "-o", out)
    assert done.returncode == 0 and done.stdout == ""
    assert mbt("check", out).returncode == 0


def test_cli_import_of_bad_dmn_exits_2_without_partial_output(tmp_path):
    bad = write(tmp_path, small_dmn("1.3", rule("r1", "foo(1)")))
    out = tmp_path / "out.dt"
    done = mbt("import", "dmn", bad, "-o", out)
    assert done.returncode == 2
    assert "error: rule `r1`, input `age`: FEEL `foo(1)` is beyond simple unary tests" in done.stderr
    assert "Traceback" not in done.stderr and not out.exists()


def test_cli_coverage_on_a_dmn_model_with_decision_goldens(tmp_path):
    goldens = tmp_path / "dish.jsonl"
    goldens.write_text('{"id": "G1", "table": "Dish", "inputs": {"season": "Fall", "guestCount": 4}, '
                       '"expect": {"desiredDish": "Spareribs"}}\n', encoding="utf-8")
    gate = tmp_path / "gate.yaml"
    gate.write_text('table.rule: ">= 0.5"\n', encoding="utf-8")
    done = mbt("coverage", "--model", DISH, "--goldens", goldens, "--gate", gate)
    assert done.returncode == 1, done.stderr  # 1 of 6 Dish rules verified: the gate fails
    assert "Dish  (table," in done.stdout and "rule:rule_fall" not in done.stdout.split("Uncovered")[1]
    assert "Dish: rule coverage is 16.7%, the gate requires >= 50.0%" in done.stdout


@pytest.mark.parametrize("codec,bom", [("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff")])
def test_a_utf16_dmn_file_with_a_byte_order_mark_is_read(tmp_path, codec, bom):
    """Issue 14: a DMN saved as "Unicode" (UTF-16 with a BOM) was refused as a binary file."""
    source = DATA / "dish.dmn"
    text = source.read_text(encoding="utf-8")
    utf16 = tmp_path / "dish.dmn"
    utf16.write_bytes(bom + text.replace('encoding="UTF-8"', 'encoding="UTF-16"').encode(codec))
    assert convert_dmn(utf16).text.replace("dish.dmn", "X") == convert_dmn(source).text.replace("dish.dmn", "X")


# ---------------------------------------------------------------- issue 38: the checks agree with the evaluator


def test_a_gap_the_default_answers_is_information_under_every_hit_policy(tmp_path):
    """0020-vacation-days' shape: `COLLECT MAX` with a default output and a gap. The evaluator returns the default
    there (DMN 8.2.11), so the check must not say the table gives no result."""
    from mbt.analysis.table_checks import check_table

    outputs = '<output id="o1" label="Extra days"><defaultOutputEntry><text>0</text></defaultOutputEntry></output>'
    path = write(tmp_path, small_dmn("1.5", rule("r1", "&lt; 18", "5"), hit='COLLECT" aggregation="MAX',
                                     outputs=outputs))
    (model,) = load_file(path).models
    assert TableEvaluator(model).decide((30,)).result == {"Extra_days": 0}
    (gap,) = [f for f in check_table(model) if f.code == "TBL001"]
    assert gap.severity == "info" and "the outputs' defaults apply there" in gap.message
    assert "no result" not in gap.message


def test_an_item_definition_reached_through_the_input_data_types_the_column(tmp_path):
    """0088's shape: the input expression has no typeRef; the inputData it names has `typeRef="tGrade"`, whose
    allowed values are the column's domain: no false gap `Grade: other`."""
    from mbt.analysis.table_checks import check_table

    text = small_dmn("1.5", rule("r1", '"A","B"', '"pass"') + rule("r2", '"C"', '"fail"'),
                     inputs='<input id="i1"><inputExpression id="ie1"><text>Grade</text></inputExpression></input>')
    text = text.replace('<decision id="dec"', '<itemDefinition name="tGrade"><typeRef>string</typeRef>'
                        '<allowedValues><text>"A", "B", "C"</text></allowedValues></itemDefinition>\n'
                        '  <decision id="dec"')
    text = text.replace("</definitions>", '  <inputData id="g" name="Grade"><variable name="Grade" '
                                          'typeRef="tGrade"/></inputData>\n</definitions>')
    (model,) = load_file(write(tmp_path, text)).models
    assert model.inputs[0].type.values == ("A", "B", "C")
    assert not [f for f in check_table(model) if f.code == "TBL001"]


# ---------------------------------------------------------------- issue 38: messages


def test_a_boolean_in_a_number_column_is_said_once_in_json_words(tmp_path):
    from mbt import api

    path = write(tmp_path, small_dmn("1.3", rule("r1", "&lt; 18", '"minor"') + rule("r2", "&gt;= 18", '"adult"')))
    goldens = tmp_path / "g.jsonl"
    goldens.write_text('{"id": "c1", "table": "Decide", "inputs": {"age": true}, "expect": {"result": "adult"}}\n',
                       encoding="utf-8")
    report = api.coverage([str(path)], [str(goldens)], use_cache=False)
    (invalid,) = report.invalid_cases
    assert invalid.message.endswith("input `age` true is a boolean, not a number")  # was: True ..., not a number
    assert "True" not in invalid.message


def test_a_null_input_whose_outcome_is_compared_is_not_filed_as_not_checked(tmp_path):
    from mbt import api
    from mbt.report.text import coverage_text

    inputs = ('<input id="i1" label="Age"><inputExpression typeRef="integer"><text>age</text></inputExpression>'
              '</input>')
    path = write(tmp_path, small_dmn("1.3", rule("r1", "-", '"any"'), inputs=inputs))
    goldens = tmp_path / "g.jsonl"
    goldens.write_text('{"id": "c1", "table": "Decide", "inputs": {}, "expect": {"result": "any"}}\n',
                       encoding="utf-8")
    report = api.coverage([str(path)], [str(goldens)], use_cache=False)
    (note,) = report.notes
    assert "input `age` is missing: evaluated as null" in note.message and note.compared
    text = coverage_text(report)
    assert "Not checked" not in text
    assert "Read with a note (1): the outcome is compared all the same" in text


def test_a_file_of_a_thousand_decisions_without_a_table_gets_a_short_located_error(tmp_path):
    """0100-arithmetic's shape: 1,087 decisions holding literal expressions gave one 49,900-character line."""
    decisions = "".join(f'  <decision id="d{i}" name="multiply_lhs_number_by_rhs_number_{i:03}">\n'
                        f'    <literalExpression><text>{i} * 2</text></literalExpression>\n  </decision>\n'
                        for i in range(1087))
    text = (f'<?xml version="1.0"?>\n<definitions xmlns="{NS["1.3"]}" id="d" name="D" namespace="x">\n'
            f"{decisions}</definitions>\n")
    path = write(tmp_path, text)
    with pytest.raises(LocatedError) as err:
        convert_dmn(path)
    (problem,) = err.value.problems
    assert len(problem.render().splitlines()[0]) < 400
    assert (problem.line, problem.column) == (3, 3)  # the first of those decisions
    assert "1,087 decisions hold other expressions" in problem.message
    assert "multiply_lhs_number_by_rhs_number_000" in problem.message and "and 1,084 more" in problem.message
