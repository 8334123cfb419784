"""No input crashes a judge: any assertion spec parses (to an assertion or a located problem) and any text is judged."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mbt.judges import Criterion, EmbeddedJudge, JudgeInput, check_assertions, parse_assertions, problems
from mbt.judges.assertions import TYPES

JUDGE = EmbeddedJudge()
values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
                      lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                      max_leaves=8)
specs = st.one_of(values, st.fixed_dictionaries({"type": st.sampled_from(TYPES + tuple("not-" + t for t in TYPES))},
                                                optional={"value": values, "tolerance": values, "criterion": values}))


@settings(max_examples=300, deadline=None)
@given(st.lists(specs, max_size=4), st.text(max_size=200))
def test_any_assertion_spec_is_an_assertion_or_a_located_problem_and_never_crashes(listed, actual):
    parsed = parse_assertions(listed, path="g.yaml", line=3)
    assert len(parsed) == len(listed)
    verdict = check_assertions(parsed, actual)
    if problems(parsed):
        assert verdict.verdict == "error"


texts = st.text(alphabet=st.characters(codec="utf-8"), max_size=120) | st.sampled_from([
    "Refunds take 5 business days.", "Phí là 3.300 đồng.", "退款将在5个工作日内退回。", "", "No, 1/2/3 at 8:00 pm."])


@settings(max_examples=300, deadline=None)
@given(texts, texts, st.sampled_from(["accuracy", "safety", "fluency"]))
def test_any_text_is_judged(expected, actual, key):
    verdict = JUDGE.judge(JudgeInput(Criterion(key), actual, (expected,)))
    assert verdict.verdict in ("pass", "fail", "not_judged")
    if key == "accuracy" and expected.strip() and expected == actual:
        assert verdict.verdict == "pass", verdict.reason  # the expected answer itself is right


@settings(max_examples=300, deadline=None)
@given(texts)
def test_the_expected_answer_itself_always_passes(text):
    if text.strip():
        verdict = JUDGE.judge(JudgeInput(Criterion("accuracy"), text, (text,)))
        assert verdict.verdict == "pass", verdict.reason


def test_a_name_with_a_character_nfkc_folds_passes_against_itself():
    """Found by test_the_expected_answer_itself_always_passes ('0Aa Aª'): a person's name was casefolded only, the
    texts it is looked for in NFKC-folded too, so ª (NFKC: a) made the expected answer contradict itself."""
    verdict = EmbeddedJudge().judge(JudgeInput(Criterion("accuracy"), "0Aa Aª", ("0Aa Aª",)))
    assert verdict.verdict == "pass", verdict.reason


def test_reply_objects_skip_think_blocks_fences_and_broken_braces():
    """The one tolerant reading of a model's reply (the LLM judge, the proposition extractor, the probe generator):
    an object inside <think> is not the reply's, a brace that opens no JSON is passed over, a fenced object is read."""
    from mbt.judges.text import reply_objects

    reply = 'Sure {not json <think>{"verdict": "pass"}</think>\n```json\n{"questions": ["a", "b"]}\n``` {"x": 1}'
    assert list(reply_objects(reply)) == [{"questions": ["a", "b"]}, {"x": 1}]
