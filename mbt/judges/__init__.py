"""Answer judges (issue 34, docs/judges.md): what the agent *says*, judged per criterion by a judge behind one
interface — rule assertions, the embedded judge (no network; decides only where it is sure) and an LLM judge on an
OpenAI-compatible server — plus the overall verdict of seed 001 and the judge's own calibration and sensitivity.

The main names are importable from here; the LLM judge's module (and its optional `openai` client) is imported only
when `make_judge` is asked for an `openai:MODEL` judge. The judges import nothing of the rest of mbt but mbt.errors
and, for the LLM judge's cache folder, mbt.parsing.grammar.cache_dir; the contract kind's modules here (behaviour.py,
contract.py, replay_contract.py: docs/contracts.md) also read the contract model, golden cases and elements.
"""

from __future__ import annotations

from typing import Any

from mbt.judges.assertions import Assertion, RuleJudge, check_assertions, contract_phrases, parse_assertions, problems
from mbt.judges.calibration import Calibration, Label, calibrate, cohen_kappa, judge_labelled, read_labels
from mbt.judges.cases import AnswerCase, CaseVerdicts, judge_cases
from mbt.judges.criteria import (
    BUILTIN_CRITERIA,
    CriteriaConfig,
    CriteriaError,
    Criterion,
    Overall,
    criteria_config,
    default_config,
    overall_verdict,
    parse_weights,
)
from mbt.judges.embedded import EmbeddedJudge
from mbt.judges.sensitivity import Sensitivity, sensitivity
from mbt.judges.verdicts import VERDICTS, Judge, JudgeInput, Verdict, VerdictValue

JUDGE_NAMES = ("embedded", "rules", "openai:MODEL")


def make_judge(spec: str, **llm_options: Any) -> Judge:
    """`embedded` (the default), `rules`, or `openai:MODEL` (options as mbt.judges.llm.LLMJudge's)."""
    if spec == "embedded":
        return EmbeddedJudge()
    if spec == "rules":
        return RuleJudge()
    if spec.startswith("openai:") or ":" in spec:
        from mbt.judges.llm import judge_from_spec

        return judge_from_spec(spec, **llm_options)
    raise CriteriaError(f"`{spec}` is not a judge: {', '.join(JUDGE_NAMES)}")


__all__ = [
    "BUILTIN_CRITERIA", "JUDGE_NAMES", "VERDICTS", "AnswerCase", "Assertion", "Calibration", "CaseVerdicts",
    "CriteriaConfig", "CriteriaError", "Criterion", "EmbeddedJudge", "Judge", "JudgeInput", "Label", "Overall",
    "RuleJudge", "Sensitivity", "Verdict", "VerdictValue", "calibrate", "check_assertions", "cohen_kappa",
    "contract_phrases", "criteria_config", "default_config", "judge_cases", "judge_labelled", "make_judge",
    "overall_verdict", "parse_assertions", "parse_weights", "problems", "read_labels", "sensitivity",
]
