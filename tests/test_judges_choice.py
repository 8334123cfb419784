"""Which judge decides which criterion (mbt.judges.choice) and the LLM judge's settings (mbt.judges.llm.llm_settings):
the command line over the configuration file key by key; the command line over the environment over the file, the
key's variable named by api_key_env before OPENAI_API_KEY; the key never in a repr."""

from __future__ import annotations

import pytest

from mbt.judges import CriteriaError, Criterion, criteria_config
from mbt.judges.choice import choose_judges, make_judges, parse_judge_options
from mbt.judges.llm import LLMJudgeError, LLMSettings, llm_settings


def test_judge_options_are_a_default_and_per_criterion_names():
    assert parse_judge_options(["embedded", "safety=openai:m", "fluency=rules"]) == (
        "embedded", {"safety": "openai:m", "fluency": "rules"})
    assert parse_judge_options(["openai:model=v2"]) == ("openai:model=v2", {})  # a name may hold `=` after a colon
    with pytest.raises(CriteriaError, match="two default judges"):
        parse_judge_options(["embedded", "rules"])
    with pytest.raises(CriteriaError, match="two judges for `safety`"):
        parse_judge_options(["safety=rules", "safety=embedded"])


def test_the_command_line_wins_key_by_key_over_the_file():
    choice = choose_judges(["safety=rules"], "openai:m", {"safety": "embedded", "fluency": "openai:f"})
    assert (choice.default, dict(choice.per_criterion)) == ("openai:m", {"safety": "rules", "fluency": "openai:f"})
    assert choice.name_for("accuracy") == "openai:m" and choice.name_for("fluency") == "openai:f"
    assert choose_judges([], None, None).default == "embedded"
    assert choose_judges(["rules"], "openai:m", None).default == "rules"


def test_one_judge_per_name_and_criteria_checked():
    config = criteria_config([Criterion("accuracy", 2), Criterion("safety", 1), Criterion("fluency", 0)], 1)
    judges = make_judges(choose_judges(["safety=rules", "fluency=rules"]), config)
    assert judges.default.name == "embedded" and set(judges.per_criterion) == {"safety"}  # fluency is disabled
    assert judges.name_for("safety") == "rules" and judges.name_for("accuracy") == "embedded"
    same = make_judges(choose_judges(["rules", "safety=rules"]), config)
    assert same.per_criterion["safety"] is same.default and len(same.made) == 1
    with pytest.raises(CriteriaError, match="did you mean `safety`"):
        make_judges(choose_judges(["safty=rules"]), config)


def test_llm_settings_precedence():
    file = {"base_url": "http://file/v1", "api_key": "sk-file", "timeout": 10.0, "retries": 1}
    assert llm_settings({}, file, {}) == LLMSettings(base_url="http://file/v1", api_key="sk-file",
                                                      key_source="the configuration file", timeout=10.0, retries=1)
    env = {"OPENAI_BASE_URL": "http://env/v1", "OPENAI_API_KEY": "sk-env", "NAMED": "sk-named"}
    got = llm_settings({}, file, env)
    assert (got.base_url, got.api_key, got.key_source) == ("http://env/v1", "sk-env", "OPENAI_API_KEY")
    got = llm_settings({"base_url": "http://cli/v1", "retries": 0}, {**file, "api_key_env": "NAMED"}, env)
    assert (got.base_url, got.api_key, got.retries, got.timeout) == ("http://cli/v1", "sk-named", 0, 10.0)
    assert got.options()["max_attempts"] == 1 and got.options()["use_cache"] is True
    assert llm_settings({"api_key_env": "NAMED"}, {"api_key_env": "OTHER"}, env).api_key == "sk-named"
    missing = llm_settings({}, {"api_key_env": "UNSET"}, env)
    assert missing.missing_key_env == "UNSET" and missing.api_key is None  # not OPENAI_API_KEY in its place
    with pytest.raises(LLMJudgeError, match="UNSET"):
        missing.options()
    with pytest.raises(LLMJudgeError, match="never given on the command line"):
        llm_settings({"api_key": "sk-x"}, {}, {})
    assert llm_settings({"cache": False}, {"cache": "a.sqlite3"}, {}).options()["use_cache"] is False
    assert str(llm_settings({}, {"cache": "a.sqlite3"}, {}).options()["cache_path"]) == "a.sqlite3"
    assert "sk-file" not in repr(llm_settings({}, file, {}))
