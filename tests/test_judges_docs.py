"""docs/judges.md says what the code does: the prompt it quotes is the prompt sent, the figures it quotes are the
benchmark's, every assertion type is in its table, and its example gives what it shows."""

from __future__ import annotations

import json
import re
from pathlib import Path

from mbt.judges import Criterion, JudgeInput, make_judge
from mbt.judges.assertions import TYPES
from mbt.judges.prompts import PROMPT_VERSION, RESPONSE_FORMAT, SYSTEM_PROMPT, USER_TEMPLATE
from tests.bench.bench_judges import report_lines

DOC = (Path(__file__).resolve().parents[1] / "docs" / "judges.md").read_text(encoding="utf-8")


def blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)\n```", DOC, flags=re.DOTALL)


def test_the_documented_prompt_is_the_prompt_sent():
    assert f"### The prompt, version `{PROMPT_VERSION}`" in DOC
    text_blocks = blocks("text")
    assert SYSTEM_PROMPT in text_blocks
    assert USER_TEMPLATE.replace("{{", "{").replace("}}", "}") in text_blocks
    assert json.loads(blocks("json")[0]) == RESPONSE_FORMAT


def test_the_documented_figures_are_the_benchmarks():
    assert "\n".join(report_lines()) in blocks("text")


def test_every_assertion_type_is_in_the_table():
    table = DOC[DOC.index("| type | passes when | example |"):DOC.index("Every type can be negated")]
    for kind in TYPES:
        assert f"`{kind}`" in table, kind


def test_the_interface_example_gives_what_the_doc_shows():
    verdict = make_judge("embedded").judge(JudgeInput(Criterion("accuracy"), actual="Refunds take 7 business days.",
                                                      expected=("Refunds are credited within 5 business days.",),
                                                      question="How long does a refund take?"))
    shown = (verdict.verdict, verdict.reason, verdict.judge, verdict.judge_version)
    assert f"# {shown!r}" in DOC


def test_the_says_criterion_and_its_example_are_as_documented():
    from mbt.judges.sayings import SAYS_CRITERION, Saying, SayingJudge

    section = DOC[DOC.index("## What an element says"):DOC.index("## The command line")]
    assert " ".join(SAYS_CRITERION.rubric.split()) in " ".join(section.split())
    pin = Saying("forbidden:ask_pin", "forbid `forbidden:ask_pin`", ("current password", "当前密码"),
                 "asks for the current password")
    found = SayingJudge().says("Ｃｕｒｒｅｎｔ  PASSWORD, please", pin)
    assert (found.verdict, found.judge) == ("pass", "rules") and "# pass, judge rules" in section
    unsure = SayingJudge().says("Sure, one moment.", pin)
    # the embedded judge is unsure of the description: the phrases, none said, decide
    assert (unsure.verdict, unsure.judge) == ("fail", "rules") and "# fail, judge rules: description undecided" in section
