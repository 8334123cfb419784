"""Issue 14's fuzz suite, bounded so `make test` stays fast: hostile inputs for every reader (the DSL, goldens in
JSON Lines, YAML, JSON, .xlsx and .csv, DMN, GraphWalker JSON, observed runs) and for the output paths, each checked
against the contract in tests/fuzz_inputs.py (exit 0/1/2, never 3 or a traceback; every exit 2 located and with
nothing on stdout; read = valid + invalid; no partial output). tests/bench/fuzz_campaign.py runs the same families
much longer.

The inputs come from seeds that hypothesis draws (derandomized: the same inputs on every run, so a failure is
reproducible and the suite never flickers); hypothesis also builds golden lines from its own JSON strategy.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import fuzz_inputs
from tests.fuzz_inputs import Input, judge

BOUNDED = settings(max_examples=15, deadline=None, derandomize=True, database=None,
                   suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
SEEDS = st.integers(min_value=0, max_value=2 ** 32)


def check(item: Input, tmp_path) -> None:
    outcome = judge(item, tmp_path / "run")
    assert not outcome.problems, outcome.problems


@BOUNDED
@given(seed=SEEDS)
def test_mutated_and_generated_models(tmp_path, seed):
    check(fuzz_inputs.dsl(seed), tmp_path)


@BOUNDED
@given(seed=SEEDS)
def test_jsonl_goldens(tmp_path, seed):
    check(fuzz_inputs.jsonl(seed), tmp_path)


@BOUNDED
@given(seed=SEEDS)
def test_yaml_goldens(tmp_path, seed):
    check(fuzz_inputs.yaml_goldens(seed), tmp_path)


@BOUNDED
@given(seed=SEEDS)
def test_json_goldens(tmp_path, seed):
    check(fuzz_inputs.json_goldens(seed), tmp_path)


@BOUNDED
@given(seed=SEEDS)
def test_xlsx_goldens(tmp_path, seed):
    check(fuzz_inputs.xlsx(seed), tmp_path)


@BOUNDED
@given(seed=SEEDS)
def test_csv_goldens(tmp_path, seed):
    check(fuzz_inputs.csv_goldens(seed), tmp_path)


@BOUNDED
@given(seed=SEEDS)
def test_run_files(tmp_path, seed):
    check(fuzz_inputs.run_file(seed), tmp_path)


@BOUNDED
@given(seed=SEEDS)
def test_dmn_files(tmp_path, seed):
    check(fuzz_inputs.dmn(seed), tmp_path)


@BOUNDED
@given(seed=SEEDS)
def test_graphwalker_files(tmp_path, seed):
    check(fuzz_inputs.graphwalker(seed), tmp_path)


@BOUNDED
@given(seed=SEEDS)
def test_output_paths(tmp_path, seed):
    check(fuzz_inputs.output_path(seed), tmp_path)


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                        st.sampled_from(fuzz_inputs.GOLDEN_KEYS) | st.text(max_size=4), inner, max_size=4),
                    max_leaves=12)


@BOUNDED
@given(lines=st.lists(JSON, min_size=1, max_size=8))
def test_any_json_value_on_a_golden_line_is_one_case(tmp_path, lines):
    text = "\n".join(json.dumps(v) for v in lines)
    check(Input("goldens-jsonl", {"g.jsonl": text.encode()}, fuzz_inputs.coverage("g.jsonl"),
                jsonl_cases=len(lines)), tmp_path)
