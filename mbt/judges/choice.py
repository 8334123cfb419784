"""Which judge decides which criterion (docs/judges.md, "Choosing the judges").

On the command line `--judge NAME` names the default judge and `--judge KEY=NAME` (repeatable) the judge of one
criterion: `--judge embedded --judge safety=openai:llama-3.3-70b`. In the configuration file `judge:` is the default
and `judges:` maps criteria to judges. The command line wins key by key: `--judge NAME` replaces the file's `judge`,
`--judge safety=NAME` the file's judge for safety, and the file's other entries stay. A criterion that no entry
names is judged by the default (`embedded` when nothing names one).

One judge is made per distinct name, so criteria sharing an LLM judge share its cache, its concurrency limit and its
usage counts; the judges made are closed by `JudgeSet.close`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mbt.errors import did_you_mean
from mbt.judges.criteria import BUILTIN_CRITERIA, CriteriaConfig, CriteriaError
from mbt.judges.verdicts import Judge

if TYPE_CHECKING:  # annotations only
    from mbt.judges.llm import LLMSettings

DEFAULT_JUDGE = "embedded"
_PER_CRITERION = re.compile(r"([a-z][a-z0-9_-]{0,63})=(.*)\Z", re.DOTALL)


@dataclass(frozen=True)
class JudgeChoice:
    """The default judge's name and the judge named for each criterion that has its own."""

    default: str = DEFAULT_JUDGE
    per_criterion: Mapping[str, str] = field(default_factory=dict)

    def name_for(self, key: str) -> str:
        return self.per_criterion.get(key, self.default)


def parse_judge_options(values: Sequence[str]) -> tuple[str | None, dict[str, str]]:
    """The command line's `--judge` values: the default (`NAME`, at most one) and the per-criterion ones
    (`KEY=NAME`). A name such as `openai:MODEL` holds a colon, a criterion key never does, so `openai:a=b` is a name."""
    default: str | None = None
    per: dict[str, str] = {}
    for raw in values:
        value = raw.strip()
        found = _PER_CRITERION.match(value)
        if found:
            key, name = found.group(1), found.group(2).strip()
            if not name:
                raise CriteriaError(f"--judge {raw}: name the judge after `=` (embedded, rules or openai:MODEL)")
            if key in per and per[key] != name:
                raise CriteriaError(f"--judge names two judges for `{key}`: {per[key]} and {name}")
            per[key] = name
            continue
        if not value:
            raise CriteriaError("--judge needs a judge: embedded, rules, openai:MODEL, or KEY=NAME for one criterion")
        if default is not None and default != value:
            raise CriteriaError(f"--judge names two default judges, {default} and {value}; for one criterion write "
                                "KEY=NAME (e.g. --judge safety=openai:MODEL)")
        default = value
    return default, per


def choose_judges(command_line: Sequence[str] = (), config_judge: str | None = None,
                  config_judges: Mapping[str, str] | None = None) -> JudgeChoice:
    """The command line's `--judge` values over the configuration file's `judge` and `judges`, key by key."""
    default, per = parse_judge_options(command_line)
    merged = {**(config_judges or {}), **per}
    return JudgeChoice(default or config_judge or DEFAULT_JUDGE, merged)


@dataclass
class JudgeSet:
    """The judges made for one run: the default, the judge of each enabled criterion, and every judge made."""

    default: Judge
    per_criterion: dict[str, Judge]
    made: list[Judge]

    def name_for(self, key: str) -> str:
        return self.per_criterion.get(key, self.default).name

    def close(self) -> None:
        for judge in self.made:
            close = getattr(judge, "close", None)
            if close is not None:
                close()


def make_judges(choice: JudgeChoice, config: CriteriaConfig, settings: LLMSettings | None = None,
                retry_errors: bool = False) -> JudgeSet:
    """The judges `choice` names, one per distinct name; a criterion named that the configuration does not have
    (a built-in one, or a custom one with a rubric) is an error, a judge named for a disabled criterion is unused."""
    from mbt.judges import make_judge  # the factory lives with the package's names

    known = {c.key for c in config.criteria} | set(BUILTIN_CRITERIA)
    for key in choice.per_criterion:
        if key not in known:
            raise CriteriaError(f"a judge is named for `{key}`, which is not a criterion{did_you_mean(key, known)} "
                                f"(criteria: {', '.join(sorted(known))})")
    made: dict[str, Judge] = {}
    budget = settings.budget() if settings is not None else None  # one budget for every LLM judge of the run

    def judge_named(name: str) -> Judge:
        if name not in made:
            llm = name not in ("embedded", "rules")
            options: dict[str, object] = {"retry_errors": True} if retry_errors and llm else {}
            if llm and budget is not None:
                options["budget"] = budget
            made[name] = make_judge(name, settings=settings if llm else None, **options)
        return made[name]

    try:
        default = judge_named(choice.default)
        per = {c.key: judge_named(choice.per_criterion[c.key]) for c in config.enabled if c.key in choice.per_criterion}
    except BaseException:  # a later judge that cannot be made: the ones made already are closed
        for judge in made.values():
            close = getattr(judge, "close", None)
            if close is not None:
                close()
        raise
    return JudgeSet(default, per, list(made.values()))
