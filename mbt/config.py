"""The configuration file: `[tool.mbt]` in pyproject.toml or `mbt.yaml`, found from a folder upwards (docs/user-guide.md).

It gives defaults to the command-line options; an option given on the command line wins. Paths in it are relative
to the file's folder. A few settings are not one option's default but are read by the commands that use them
(`Config.values`): `judge` and `judges` (the answer judges, merged per criterion with `--judge`), `llm` (the LLM
judge's server and limits, below the environment in precedence: mbt.judges.llm.llm_settings), `agent` (how `mbt eval
--agent` talks to the agent: docs/agents.md) and the rubrics of custom criteria (`Config.rubrics`, from `criteria:`
written as a mapping).
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mbt.errors import LocatedError, Problem, did_you_mean
from mbt.reader import read_text

YAML_NAMES = ("mbt.yaml", "mbt.yml")
# Key -> (the commands it gives a default to, the option's parameter name, the type). A key with no command is no
# option's default: the commands that use it read it from Config.values.
KEYS: dict[str, tuple[tuple[str, ...], str, str]] = {
    "models": (("check", "elements", "coverage", "render", "generate"), "models", "paths"),
    "goldens": (("coverage", "render", "generate", "eval"), "goldens", "paths"),
    "runs": (("eval",), "run_paths", "paths"),
    "answers": (("coverage",), "answers", "paths"),
    "judge": ((), "judge", "text"),
    "judges": ((), "judges", "judges"),
    "llm": ((), "llm", "llm"),
    "criteria": (("eval",), "criteria", "criteria"),
    "threshold": (("eval",), "threshold", "number"),
    "gate": (("coverage", "render", "eval"), "gate", "path"),
    "baseline": (("coverage",), "baseline", "path"),
    "formats": (("coverage",), "formats", "formats"),
    "check-formats": (("check",), "formats", "formats"),
    "fail-under": (("coverage",), "fail_under", "percent"),
    "depth": (("check",), "depth", "int"),
    # The result store (docs/results.md): read by the commands that use the store, not as an option's default, so
    # that --store, then MBT_STORE_URL, come before it.
    "store": ((), "store", "store"),
    # `mbt eval --agent` (docs/agents.md): the adapters' settings, read by the command (its options win).
    "agent": ((), "agent", "agent"),
}


@dataclass
class Config:
    path: str | None = None  # the file read, or None: no configuration
    values: dict[str, Any] = field(default_factory=dict)  # normalised key -> value, paths relative to the cwd
    rubrics: dict[str, str] = field(default_factory=dict)  # custom criteria's rubric texts (`criteria:` as a mapping)

    def default_map(self) -> dict[str, dict[str, Any]]:
        """click's default_map: per command, the defaults of its options."""
        out: dict[str, dict[str, Any]] = {}
        for key, value in self.values.items():
            commands, param, _ = KEYS[key]
            for command in commands:
                # `mbt check` takes its models as arguments, not as --model.
                out.setdefault(command, {})["paths" if command == "check" and param == "models" else param] = value
        return out


def find_config(start: str | Path | None = None) -> Config:
    """The first configuration from `start` (the working folder) upwards: mbt.yaml / mbt.yml, or a pyproject.toml
    that has a `[tool.mbt]` table (one without it is passed over, as coverage.py does)."""
    folder = Path(start or os.getcwd()).resolve()
    for candidate in (folder, *folder.parents):
        for name in YAML_NAMES:
            if (candidate / name).is_file():
                return load_config(candidate / name)
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file():
            config = load_config(pyproject)
            if config.path is not None:
                return config
    return Config()


def _shown(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return str(path)


def load_config(path: Path) -> Config:
    shown = _shown(path)
    text = read_text(path, shown)
    if path.name == "pyproject.toml":
        try:
            table = tomllib.loads(text).get("tool", {}).get("mbt")
        except tomllib.TOMLDecodeError as err:
            line, col = getattr(err, "lineno", 1), getattr(err, "colno", 1)
            raise LocatedError([Problem(shown, line, col, f"not valid TOML: {getattr(err, 'msg', err)}")]) from None
        if table is None:
            return Config()
        raw = {str(k): (v, _toml_line(text, str(k))) for k, v in table.items()}
    else:
        import yaml  # on use: start-up time (pyproject.toml, or no configuration file, needs no YAML)

        try:
            root = yaml.compose(text, Loader=yaml.SafeLoader)
        except yaml.YAMLError as err:
            mark = getattr(err, "problem_mark", None)
            raise LocatedError([Problem(shown, mark.line + 1 if mark else 1, mark.column + 1 if mark else 1,
                                        f"not valid YAML: {getattr(err, 'problem', err)}")]) from None
        if root is None:
            return Config(shown)
        if not isinstance(root, yaml.MappingNode):
            raise LocatedError([Problem(shown, root.start_mark.line + 1, root.start_mark.column + 1,
                                        "expected a mapping of settings (models:, goldens:, gate:, ...)")])
        raw = {str(k.value): (yaml.safe_load(yaml.serialize(v)), (k.start_mark.line + 1, k.start_mark.column + 1))
               for k, v in root.value}
    values = _normalise(raw, path.parent, shown)
    rubrics: dict[str, str] = {}
    if isinstance(values.get("criteria"), tuple):  # (the command line's text, the rubrics)
        values["criteria"], rubrics = values["criteria"]
    return Config(shown, values, rubrics)


def _toml_line(text: str, key: str) -> tuple[int, int]:
    """Where `key = ...` is written inside [tool.mbt], or its own `[tool.mbt.key]` table (tomllib gives no
    positions)."""
    inside = False
    for n, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("["):
            header = stripped.replace(" ", "")
            if re.match(rf"\[\[?tool\.mbt\.[\"']?{re.escape(key)}[\"']?[.\]]", header):
                return n, line.index(stripped[0]) + 1
            inside = header == "[tool.mbt]"
            continue
        if inside and re.match(rf"[\"']?{re.escape(key)}[\"']?\s*=", stripped):
            return n, line.index(stripped[0]) + 1
    return 1, 1


def _normalise(raw: dict[str, tuple[Any, tuple[int, int]]], base: Path, shown: str) -> dict[str, Any]:
    values: dict[str, Any] = {}
    problems: list[Problem] = []
    for key, (value, (line, col)) in raw.items():
        name = key.replace("_", "-")
        if name not in KEYS:
            problems.append(Problem(shown, line, col, f"unknown mbt setting `{key}`",
                                    "use one of " + ", ".join(KEYS)))
            continue
        kind = KEYS[name][2]
        try:
            values[name] = _value(kind, value, base)
        except ValueError as err:
            problems.append(Problem(shown, line, col, f"`{key}`: {err}"))
    if problems:
        raise LocatedError(problems)
    return values


def _path(value: Any, base: Path) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError("expected a path")
    if value == "-":
        return value
    return _shown(base / value) if not Path(value).is_absolute() else value


def _value(kind: str, value: Any, base: Path) -> Any:
    if kind == "text":
        if not isinstance(value, str) or not value.strip():
            raise ValueError("expected text")
        return value
    if kind == "criteria":
        return criteria_setting(value)
    if kind == "judges":
        return judges_setting(value)
    if kind == "llm":
        if not isinstance(value, dict):
            raise ValueError("expected a mapping of " + ", ".join(LLM_KEYS))
        return {str(k): llm_setting(str(k), v, base) for k, v in value.items()}
    if kind == "number":
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise ValueError("expected a number")
        return str(value)
    if kind == "paths":
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not items:
            raise ValueError("expected a path or a list of paths")
        return tuple(_path(v, base) for v in items)
    if kind == "path":
        return _path(value, base)
    if kind == "formats":
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(v, str) and v for v in items):
            raise ValueError("expected a list of NAME or NAME:PATH")
        out = []
        for spec in items:
            name, sep, target = spec.partition(":")
            out.append(f"{name}:{_path(target, base) if target and target != '-' else target}" if sep else name)
        return tuple(out)
    if kind == "percent":
        return parse_percent(value)
    if kind == "store":
        return _store(value, base)
    if kind == "agent":
        return agent_setting(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError("expected a whole number of at least 1")
    return value


def _store(value: Any, base: Path) -> str:
    """A SQLite file (relative to the configuration file's folder) or a database URL without a password: the file is
    committed, so the password comes from MBT_STORE_URL or the database client's own environment (PGPASSWORD)."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError("expected a SQLite file or a database URL")
    if "://" not in value:
        return _path(value, base)
    try:
        password = urlsplit(value).password
    except ValueError:
        password = None
    if password:
        raise ValueError("the URL holds a password, and a configuration file is shared: give the URL without it "
                         "and the password in PGPASSWORD, or the whole URL in MBT_STORE_URL")
    return value


def parse_percent(value: Any) -> float:
    """`--fail-under` and `fail-under`: a percentage 0-100 (`80`, `80%`, `92.5`), as coverage.py takes it."""
    text = str(value).strip().removesuffix("%").strip()
    try:
        number = float(text)
    except ValueError:
        raise ValueError(f"expected a percentage between 0 and 100, not {value!r}") from None
    if isinstance(value, bool) or not 0 <= number <= 100:
        raise ValueError(f"expected a percentage between 0 and 100, not {value!r}")
    return number


_NAME = re.compile(r"[A-Za-z0-9_-]+\Z")


def criteria_setting(value: Any) -> tuple[str, dict[str, str]]:
    """`criteria`: the command line's text (`accuracy=2,safety=1`), or a mapping of criterion -> weight or
    -> {weight, rubric} (a custom criterion needs its rubric). Returns the command line's text and the rubrics; the
    judges check the keys and numbers (mbt.judges.criteria), as they do `--criteria`."""
    if isinstance(value, str) and value.strip():
        return value, {}
    if not isinstance(value, dict) or not value:
        raise ValueError("expected `accuracy=2,safety=1` or a mapping such as {accuracy: 2, politeness: "
                         "{weight: 1, rubric: \"...\"}}")
    parts: list[str] = []
    rubrics: dict[str, str] = {}
    for key, spec in value.items():
        key = str(key)
        if not _NAME.match(key):
            raise ValueError(f"`{key}` is not a criterion key: letters, digits, `_` and `-`")
        weight = spec
        if isinstance(spec, dict):
            unknown = sorted(str(k) for k in spec if k not in ("weight", "rubric"))
            if unknown:
                raise ValueError(f"criterion `{key}`: unknown setting `{unknown[0]}` (use weight, rubric)")
            weight = spec.get("weight", 1)
            rubric = spec.get("rubric")
            if rubric is not None:
                if not isinstance(rubric, str) or not rubric.strip():
                    raise ValueError(f"criterion `{key}`: `rubric` is a text saying what the criterion asks of an "
                                     "answer")
                rubrics[key] = rubric.strip()
        if isinstance(weight, bool) or not isinstance(weight, (int, float, str)) or not re.fullmatch(
                r"[^,=\s]+", str(weight).strip()):
            raise ValueError(f"criterion `{key}`: the weight is a number (0 disables it)")
        parts.append(f"{key}={str(weight).strip()}")
    return ",".join(parts), rubrics


def judges_setting(value: Any) -> dict[str, str]:
    """`judges`: criterion -> judge name (`embedded`, `rules`, `openai:MODEL`); the criteria not named use `judge`."""
    if not isinstance(value, dict) or not value:
        raise ValueError("expected a mapping of criterion -> judge, e.g. {accuracy: embedded, safety: "
                         "\"openai:llama-3.3-70b\"}")
    out: dict[str, str] = {}
    for key, name in value.items():
        if not _NAME.match(str(key)):
            raise ValueError(f"`{key}` is not a criterion key: letters, digits, `_` and `-`")
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"the judge of `{key}` is a name: embedded, rules or openai:MODEL")
        out[str(key)] = name.strip()
    return out


# The LLM judge's settings (`llm:` in the file, `--llm KEY=VALUE` on the command line): docs/judges.md.
LLM_KEYS = ("base_url", "api_key_env", "api_key", "timeout", "concurrency", "retries", "cache", "prices", "max_cost",
            "max_requests")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def llm_setting(key: str, value: Any, base: Path | None) -> Any:
    """One LLM setting checked: a ValueError says what is wrong and never repeats the value of `api_key`. `base`:
    the folder a relative cache path is relative to (None: as given)."""
    if key not in LLM_KEYS:
        raise ValueError(f"unknown LLM setting `{key}`{did_you_mean(key, LLM_KEYS)} (use {', '.join(LLM_KEYS)})")
    if key == "api_key":
        if not isinstance(value, str) or not value.strip():
            raise ValueError("`api_key` is a text (better: `api_key_env`, the name of the variable that holds it)")
        return value.strip()
    if key == "base_url":
        if not isinstance(value, str) or not re.match(r"https?://[^\s/]+", value.strip()):
            raise ValueError(f"`base_url` is an http:// or https:// address, not {value!r}")
        return value.strip()
    if key == "api_key_env":
        if not isinstance(value, str) or not _ENV_NAME.match(value.strip()):
            raise ValueError(f"`api_key_env` is the name of an environment variable, not {value!r}")
        return value.strip()
    if key == "timeout":
        try:
            seconds = float(value) if not isinstance(value, bool) else 0.0
        except (TypeError, ValueError):
            seconds = 0.0
        if not seconds > 0 or seconds == float("inf"):
            raise ValueError(f"`timeout` is a number of seconds above 0, not {value!r}")
        return seconds
    if key == "prices":
        return prices_setting(value)
    if key == "max_cost":
        try:
            dollars = float(value) if not isinstance(value, bool) else 0.0
        except (TypeError, ValueError):
            dollars = 0.0
        if not dollars > 0 or dollars == float("inf"):
            raise ValueError(f"`max_cost` is a number of dollars above 0, not {value!r}")
        return dollars
    if key in ("concurrency", "retries", "max_requests"):
        least = 0 if key == "retries" else 1
        number = value if isinstance(value, int) and not isinstance(value, bool) else \
            int(value) if isinstance(value, str) and value.strip().isdigit() else None
        if number is None or number < least:
            raise ValueError(f"`{key}` is a whole number of at least {least}, not {value!r}")
        return number
    # cache: true (mbt's cache folder), false (none), or the cache file's path
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "yes", "on", "false", "no", "off"):
        return value.strip().lower() in ("true", "yes", "on")
    if not isinstance(value, str) or not value.strip():
        raise ValueError("`cache` is true, false or the cache file's path")
    return _path(value.strip(), base) if base is not None else value.strip()


# `agent:` (docs/agents.md): how `mbt eval --agent` talks to the agent. Values are checked here; secrets are never
# written in the file: a header or a request field names an environment variable (`${env:NAME}`) instead.
AGENT_KEYS = ("spec", "timeout", "concurrency", "model", "api_key_env", "headers", "method", "request", "response")
AGENT_RESPONSE_KEYS = ("answer", "tool_calls", "agent_version", "model", "error")
_SECRET_HEADER = re.compile(r"authorization|api[-_]?key|token|secret|password|cookie", re.I)


def agent_setting(value: Any) -> dict[str, Any]:
    """The `agent:` mapping checked; a ValueError says what is wrong (never repeating a header's value)."""
    if not isinstance(value, dict):
        raise ValueError("expected a mapping of " + ", ".join(AGENT_KEYS))
    out: dict[str, Any] = {}
    for raw_key, item in value.items():
        key = str(raw_key)
        if key not in AGENT_KEYS:
            raise ValueError(f"unknown agent setting `{key}`{did_you_mean(key, AGENT_KEYS)} (use "
                             f"{', '.join(AGENT_KEYS)})")
        if key in ("spec", "model", "method"):
            if not isinstance(item, str) or not item.strip():
                raise ValueError(f"agent `{key}` is a text")
            out[key] = item.strip().upper() if key == "method" else item.strip()
            if key == "method" and out[key] not in ("POST", "PUT"):
                raise ValueError("agent `method` is POST or PUT (a JSON body is sent)")
        elif key == "timeout":
            out[key] = llm_setting("timeout", item, None)
        elif key == "concurrency":
            out[key] = llm_setting("concurrency", item, None)
        elif key == "api_key_env":
            out[key] = llm_setting("api_key_env", item, None)
        elif key == "headers":
            if not isinstance(item, dict) or not all(isinstance(v, str) for v in item.values()):
                raise ValueError("agent `headers` is a mapping of header name -> text")
            for name, text in item.items():
                if _SECRET_HEADER.search(str(name)) and "${env:" not in text:
                    raise ValueError(f"agent header `{name}` holds a secret written in the file, which is shared: "
                                     "write `${env:NAME}` and keep the value in the environment variable NAME")
            out[key] = {str(k): v for k, v in item.items()}
        elif key == "request":
            if not isinstance(item, (dict, list)):
                raise ValueError("agent `request` is the JSON body to send, as a mapping (placeholders such as "
                                 "${message} in its texts)")
            out[key] = item
        else:  # response
            if not isinstance(item, dict) or not all(isinstance(v, str) and v.strip() for v in item.values()):
                raise ValueError("agent `response` is a mapping of " + ", ".join(AGENT_RESPONSE_KEYS)
                                 + " -> a dotted path into the reply (data.answer, choices.0.message.content)")
            unknown = [str(k) for k in item if str(k) not in AGENT_RESPONSE_KEYS]
            if unknown:
                raise ValueError(f"unknown agent response path `{unknown[0]}`{did_you_mean(unknown[0], AGENT_RESPONSE_KEYS)} "
                                 f"(use {', '.join(AGENT_RESPONSE_KEYS)})")
            out[key] = {str(k): v.strip() for k, v in item.items()}
    return out


PRICE_KEYS = ("input_per_mtok", "output_per_mtok")


def prices_setting(value: Any) -> dict[str, tuple[float, float]]:
    """`prices`: model -> {input_per_mtok, output_per_mtok}, dollars per million tokens (the LLM judge's cost)."""
    example = "{gpt-4o-mini: {input_per_mtok: 0.15, output_per_mtok: 0.6}}"
    if not isinstance(value, dict) or not value:
        raise ValueError(f"`prices` maps each judge model to its price per million tokens, e.g. {example}")
    out: dict[str, tuple[float, float]] = {}
    for model, price in value.items():
        if not isinstance(price, dict) or set(price) != set(PRICE_KEYS):
            raise ValueError(f"the price of `{model}` is {{input_per_mtok: N, output_per_mtok: N}} (dollars per million "
                             "tokens)")
        numbers = []
        for key in PRICE_KEYS:
            number = price[key]
            if isinstance(number, bool) or not isinstance(number, (int, float)) or not 0 <= number < float("inf"):
                raise ValueError(f"`{key}` of `{model}` is a number of dollars (0 or more), not {number!r}")
            numbers.append(float(number))
        out[str(model)] = (numbers[0], numbers[1])
    return out
