"""Answer judges (issue 34, docs/judges.md): what the agent *says*, judged per criterion by a judge behind one
interface — rule assertions, the embedded judge (no network; decides only where it is sure) and an LLM judge on an
OpenAI-compatible server — plus the overall verdict of seed 001 and the judge's own calibration and sensitivity.

The main names are importable from here; the LLM judge's module (and its optional `openai` client) is imported only
when `make_judge` is asked for an `openai:MODEL` judge. Nothing here imports the rest of mbt but mbt.errors and, for
the LLM judge's cache folder, mbt.files.cache_dir: the judges stand below the goldens (docs/architecture.md, Floors),
whose replay asks them which model element a golden's phrase names (mbt.judges.sayings).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:  # annotations only: the LLM judge's module loads when such a judge is made
    from mbt.judges.llm import LLMSettings

JUDGE_NAMES = ("embedded", "rules", "openai:MODEL")


def make_judge(spec: str, settings: LLMSettings | None = None, **llm_options: Any) -> Judge:
    """`embedded` (the default), `rules`, or `openai:MODEL`: its `settings` (mbt.judges.llm.llm_settings: the server,
    the key, the limits) and `llm_options` (LLMJudge's keyword arguments, which win) apply to it."""
    if spec == "embedded":
        return EmbeddedJudge()
    if spec == "rules":
        return RuleJudge()
    if spec.startswith("openai:") or ":" in spec:
        from mbt.judges.llm import judge_from_spec

        return judge_from_spec(spec, **{**(settings.options() if settings is not None else {}), **llm_options})
    raise CriteriaError(f"`{spec}` is not a judge: {', '.join(JUDGE_NAMES)}")


__all__ = [
    "BUILTIN_CRITERIA", "JUDGE_NAMES", "VERDICTS", "AnswerCase", "Assertion", "Calibration", "CaseVerdicts",
    "CriteriaConfig", "CriteriaError", "Criterion", "EmbeddedJudge", "Judge", "JudgeInput", "Label", "Overall",
    "RuleJudge", "Sensitivity", "Verdict", "VerdictValue", "calibrate", "check_assertions", "cohen_kappa",
    "contract_phrases", "criteria_config", "default_config", "judge_cases", "judge_labelled", "make_judge",
    "overall_verdict", "parse_assertions", "parse_weights", "problems", "read_labels", "sensitivity",
]
