"""Issue 9, decision tables: numbers in goldens are exact decimals, a string is not a number, `-` matches null."""

from __future__ import annotations

from pathlib import Path

from mbt.api import coverage

TABLE = str(Path(__file__).parent / "data" / "tables" / "limit.dt")


def measure(tmp_path, *lines: str):
    golden = tmp_path / "g.jsonl"
    golden.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return coverage([TABLE], [str(golden)], use_gate=False)


def case(case_id: str, inputs: str, expect: str) -> str:
    return f'{{"id": "{case_id}", "table": "limit", "inputs": {inputs}, "expect": {expect}}}'


def test_a_string_is_not_a_number(tmp_path):
    report = measure(tmp_path, case("S", '{"age": "18", "score": 1}', '"adult"'))
    assert report.goldens.invalid == 1 and "a string" in report.invalid_cases[0].message


def test_numbers_are_read_exactly(tmp_path):
    # 17.99999999999999999 is not 18 (as a float it would be): it is finer than the integer column admits.
    report = measure(tmp_path, case("X", '{"age": 30, "score": 90.00000000000000001}', '"adult"'))
    assert report.goldens.invalid == 1 and "finer than the declared precision" in report.invalid_cases[0].message
    exact = measure(tmp_path, case("E", '{"age": 30, "score": 90.01}', '"high"'))
    assert exact.goldens.valid == 1 and not exact.contradictions


def test_yaml_numbers_are_exact_too(tmp_path):
    golden = tmp_path / "g.yaml"
    golden.write_text("- id: Y\n  table: limit\n  inputs: {age: 30, score: 90.00000000000000001}\n  expect: adult\n",
                      encoding="utf-8")
    report = coverage([TABLE], [str(golden)], use_gate=False)
    assert report.goldens.invalid == 1


def test_a_missing_or_null_input_is_feel_null_matched_only_by_dash(tmp_path):
    # age missing: `< 18` and `>= 18` give no match; nothing matches under FIRST -> no result.
    missing = measure(tmp_path, case("M", '{"score": 10}', 'null'))
    assert missing.goldens.valid == 1 and not missing.contradictions
    assert any("input `age` is missing" in n.message for n in missing.notes)
    # score null: `- ` matches it, so `adult` (>= 18 | - | -) decides, `high` (> 90) does not match.
    null_score = measure(tmp_path, case("N", '{"age": 40, "score": null}', '"adult"'))
    assert null_score.goldens.valid == 1 and not null_score.contradictions
    rules = {r.element.id: r for r in null_score.models[0].elements if r.element.criterion == "rule"}
    assert rules["rule:adult"].verified_by == ["N"] and rules["rule:high"].exercised_by == []


def test_collect_with_an_aggregation_gives_the_default_when_no_rule_matches(tmp_path):
    from mbt.engine.table import TableEvaluator
    from mbt.parsing.loader import parse_text

    model = parse_text('table c {\n  hit collect sum\n  input a: integer [0..9]\n  output n: integer default 7\n'
                       '  rule one: < 3 -> 1\n  rule two: < 5 -> 2\n}\n', "c.dt").models[0]
    evaluator = TableEvaluator(model)
    assert evaluator.decide((1,)).result == {"n": 3}
    none = evaluator.decide((8,))
    assert none.result == {"n": 7} and none.default_used


def test_duplicate_rules_are_meant_under_collect(tmp_path):
    from mbt.analysis.table_checks import check_table
    from mbt.parsing.loader import parse_text

    text = ('table c {\n  hit HIT\n  input a: integer [0..9]\n  output n: integer\n  rule one: < 3 -> 1\n'
            '  rule two: < 3 -> 1\n}\n')
    collect = parse_text(text.replace("HIT", "collect sum"), "c.dt").models[0]
    assert "TBL005" not in {f.code for f in check_table(collect)}
    first = parse_text(text.replace("HIT", "rule_order"), "c.dt").models[0]
    assert "TBL005" in {f.code for f in check_table(first)}


def test_priority_needs_allowed_values_only_on_the_outputs_that_rank():
    from mbt.engine.table import TableEvaluator
    from mbt.parsing.loader import parse_text

    model = parse_text('table p {\n  hit priority\n  input a: integer [0..9]\n'
                       '  output level: string {"high", "low"}\n  output note: string\n'
                       '  rule r1: < 5 -> "low" | "small"\n  rule r2: < 3 -> "high" | "tiny"\n}\n', "p.dt").models[0]
    assert TableEvaluator(model).decide((1,)).result == {"level": "high", "note": "tiny"}  # ranked by `level`


def test_dmn_import_keeps_every_supported_table_and_reads_item_definitions():
    """Issue 9: one unsupported decision dropped the whole file; item definitions were not read (false gap warnings,
    "typeRef not supported")."""
    from mbt.api import import_dmn
    from mbt.parsing.loader import parse_text

    path = str(Path(__file__).parent / "data" / "dmn" / "partial.dmn")
    imported = import_dmn(path)
    assert imported.tables == ["risk"]
    (skipped,) = imported.not_imported
    assert skipped.startswith("fancy (line 23: ") and "beyond simple unary tests" in skipped
    (model,) = parse_text(imported.text, "partial.dt").models
    level = model.inputs[0]
    assert (level.type.kind, level.type.values) == ("string", ("low", "high"))  # from itemDefinition tRisk
    from mbt.analysis.table_checks import check_table

    assert "TBL001" not in {f.code for f in check_table(model)}  # no gap: "low" and "high" are all there is


def test_measuring_a_dmn_file_keeps_its_other_tables_and_names_the_one_left_out(tmp_path):
    """Issue 38: `--model FILE.dmn` and `mbt check` refused a file with one table they cannot read, where `mbt import
    dmn` keeps the others; now every path keeps the others and names the table left out, located in the XML."""
    from mbt import api
    from mbt.parsing.loader import load_file

    path = str(Path(__file__).parent / "data" / "dmn" / "partial.dmn")
    file = load_file(path)  # was: LocatedError, exit 2
    assert [m.name for m in file.models] == ["risk"]
    (left_out,) = file.warnings
    assert (left_out.line, left_out.column) == (30, 9) and "beyond simple unary tests" in left_out.message
    report = api.check([path])
    (finding,) = [f for f in report.findings if f.code == "IMP001"]
    assert (finding.severity, finding.location.line, finding.location.column) == ("warning", 30, 9)
    assert "decision table `fancy` is not imported" in finding.message and "beyond simple unary tests" in \
        finding.message
    goldens = tmp_path / "g.jsonl"
    goldens.write_text('{"id": "c1", "model": "risk", "decisions": [{"inputs": {"level": "low"}, '
                       '"expect": {"ok": true}}]}\n', encoding="utf-8")
    coverage = api.coverage([path], [str(goldens)], use_cache=False)
    assert any("decision table `fancy` is not imported" in n.message and f"{path}:30:9" in n.message
               for n in coverage.notes)


# ---- never falsely green: what a golden's check must be to verify anything


def conversation(case_id: str, *decisions: str) -> str:
    return f'{{"id": "{case_id}", "model": "chat", "turns": [], "decisions": [{", ".join(decisions)}]}}'


def decision(inputs: str, expect: str) -> str:
    return f'{{"table": "limit", "inputs": {inputs}, "expect": {expect}}}'


def test_a_golden_contradicting_one_of_its_decisions_verifies_nothing(tmp_path):
    report = measure(tmp_path, conversation("C", decision('{"age": 10, "score": 1}', '"minor"'),
                                            decision('{"age": 40, "score": 1}', '"high"')))
    assert len(report.contradictions) == 1
    rows = {r.element.id: r for r in report.models[0].elements}
    assert rows["rule:minor"].exercised_by == ["C"] and rows["rule:minor"].verified_by == []
    assert not any(r.verified_by for r in rows.values())


def test_an_expectation_that_compares_no_output_verifies_nothing(tmp_path):
    report = measure(tmp_path, case("EMPTY", '{"age": 10, "score": 1}', "{}"),
                     case("TYPO", '{"age": 40, "score": 1}', '{"bnad": "adult"}'))
    rows = {r.element.id: r for r in report.models[0].elements}
    assert rows["rule:minor"].exercised_by == ["EMPTY"] and rows["rule:minor"].verified_by == []
    assert rows["rule:adult"].exercised_by == ["TYPO"] and rows["rule:adult"].verified_by == []
    assert any("`bnad` is not an output" in n.message for n in report.notes)
    assert any("compares no output" in n.message for n in report.notes)


def test_list_results_are_compared_exactly(tmp_path):
    table = tmp_path / "sums.dt"
    table.write_text('table sums {\n  hit rule_order\n  input a: integer [0..9]\n  output n: number\n'
                     '  rule one: < 3 -> 18\n  rule two: < 5 -> 0.1\n}\n', encoding="utf-8")
    golden = tmp_path / "g.jsonl"
    golden.write_text('{"id": "L", "table": "sums", "inputs": {"a": 1}, "expect": [17.99999999999999999, 0.1]}\n'
                      '{"id": "R", "table": "sums", "inputs": {"a": 1}, "expect": [18.0, 0.10]}\n', encoding="utf-8")
    report = coverage([str(table)], [str(golden)], use_gate=False)
    assert [c.case for c in report.contradictions] == ["L"]
    rows = {r.element.id: r for r in report.models[0].elements}
    assert rows["rule:one"].verified_by == ["R"]


def test_a_null_input_fails_the_conditions_that_test_it_for_mcdc(tmp_path):
    table = tmp_path / "m.dt"
    table.write_text('table m {\n  hit first\n  mcdc\n  input a: integer [0..9]\n  input b: integer [0..9]\n'
                     '  output o: string\n  rule r: < 5 | < 5 -> "x"\n}\n', encoding="utf-8")
    golden = tmp_path / "g.jsonl"
    golden.write_text('{"id": "N", "table": "m", "inputs": {"a": 1}, "expect": null}\n', encoding="utf-8")
    report = coverage([str(table)], [str(golden)], use_gate=False)
    rows = {r.element.id: r for r in report.models[0].elements}
    # b is null: `< 5` is unknown there, so only b's condition fails: the unique-cause obligation for b is met.
    assert rows["mcdc:r:b=false"].verified_by == ["N"]
    assert rows["mcdc:r:a=false"].exercised_by == [] and rows["mcdc:r"].exercised_by == []
