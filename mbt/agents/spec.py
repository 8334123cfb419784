"""`--agent SPEC`: which adapter talks to the agent, and the settings it talks with (the configuration file's `agent:`
mapping, under the command line's options).

SPEC is `openai-chat:URL`, `http:URL`, `python:MODULE:FUNCTION` or `cmd:COMMAND` (docs/agents.md). What a report or
the store shows of it (`shown`) never holds a secret: a URL's user and password and the values of query parameters
that look like keys are replaced by `***`; API keys and headers come from environment variables, whose values every
recorded text is scrubbed of (`Secrets`).
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from mbt.errors import MbtError, did_you_mean

ADAPTERS = ("openai-chat", "http", "python", "cmd")
DEFAULT_TIMEOUT = 60.0
DEFAULT_CONCURRENCY = 4
DEFAULT_KEY_ENV = "MBT_AGENT_API_KEY"
# The placeholders a request template or a header may hold (docs/agents.md).
PLACEHOLDERS = ("message", "messages", "session_id", "case_id", "turn")
_PLACEHOLDER = re.compile(r"\$\{([^}]*)\}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_SECRET_PARAM = re.compile(r"key|token|secret|password|sig", re.I)
# Values shorter than this are not scrubbed from texts: a 1-3 character "secret" would blank out ordinary words.
MIN_SECRET = 4


@dataclass
class Secrets:
    """The secret values the adapters use (API keys, headers from the environment): every text the run records is
    scrubbed of them."""

    values: set[str] = field(default_factory=set)

    def add(self, value: str | None) -> None:
        if value and len(value) >= MIN_SECRET:
            self.values.add(value)

    def scrub(self, text: str) -> str:
        for value in sorted(self.values, key=len, reverse=True):  # a key holding another is replaced whole first
            text = text.replace(value, "***")
        return text

    def scrub_data(self, value: Any) -> Any:
        """A JSON value with every text scrubbed (keys included)."""
        if not self.values:
            return value
        if isinstance(value, str):
            return self.scrub(value)
        if isinstance(value, list):
            return [self.scrub_data(v) for v in value]
        if isinstance(value, dict):
            return {self.scrub(str(k)): self.scrub_data(v) for k, v in value.items()}
        return value


@dataclass(frozen=True)
class AgentSettings:
    """The configuration file's `agent:` mapping, with the command line's --timeout and --concurrency over it."""

    timeout: float = DEFAULT_TIMEOUT
    concurrency: int = DEFAULT_CONCURRENCY
    model: str = "agent"  # openai-chat: the request's `model`
    api_key_env: str = DEFAULT_KEY_ENV  # openai-chat: the variable holding the bearer token (none: no header)
    headers: dict[str, str] = field(default_factory=dict)
    method: str = "POST"  # http
    request: Any = None  # http: the JSON body, placeholders in its texts
    response: dict[str, str] = field(default_factory=dict)  # http: answer, tool_calls, agent_version, model, error


@dataclass(frozen=True)
class AgentSpec:
    kind: str  # one of ADAPTERS
    target: str  # the URL, MODULE:FUNCTION or the command
    settings: AgentSettings

    @property
    def shown(self) -> str:
        """The spec as reports and the store show it: no password, no key."""
        target = shown_url(self.target) if self.kind in ("openai-chat", "http") else self.target
        return f"{self.kind}:{target}"

    @property
    def argv(self) -> list[str]:
        """cmd: the command's words (split as a POSIX shell would, but no shell runs it)."""
        return shlex.split(self.target)


def shown_url(url: str) -> str:
    """A URL without its user and password, and with the values of key-like query parameters hidden."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "***"
    host = parts.netloc.rsplit("@", 1)[-1]
    netloc = f"***@{host}" if "@" in parts.netloc else host
    query = urlencode([(k, "***" if _SECRET_PARAM.search(k) else v)
                       for k, v in parse_qsl(parts.query, keep_blank_values=True)], safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def url_credentials(url: str, secrets: Secrets) -> tuple[str, str | None]:
    """The URL to request (without user and password) and the Basic authorisation its user and password give (None
    without them); the password and the values of key-like query parameters join the secrets."""
    parts = urlsplit(url)
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if _SECRET_PARAM.search(name):
            secrets.add(value)
    if parts.username is None and parts.password is None:
        return url, None
    import base64
    from urllib.parse import unquote

    user, password = unquote(parts.username or ""), unquote(parts.password or "")
    secrets.add(password)
    token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    secrets.add(token)
    host = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment)), f"Basic {token}"


def settings_from(config: dict[str, Any] | None, timeout: float | None = None,
                  concurrency: int | None = None) -> AgentSettings:
    """The settings: the command line's over the configuration file's (checked by mbt.config.agent_setting)."""
    given = dict(config or {})
    return AgentSettings(
        timeout=timeout if timeout is not None else float(given.get("timeout", DEFAULT_TIMEOUT)),
        concurrency=concurrency if concurrency is not None else int(given.get("concurrency", DEFAULT_CONCURRENCY)),
        model=given.get("model", "agent"), api_key_env=given.get("api_key_env", DEFAULT_KEY_ENV),
        headers=dict(given.get("headers") or {}), method=given.get("method", "POST"), request=given.get("request"),
        response=dict(given.get("response") or {}))


def parse_spec(spec: str, settings: AgentSettings) -> AgentSpec:
    """`--agent SPEC` read; MbtError (exit 2) saying what is wrong."""
    kind, sep, target = spec.partition(":")
    target = target.strip()
    if not sep or kind not in (*ADAPTERS, "https"):
        raise MbtError(f"--agent {spec!r}: expected KIND:TARGET with KIND one of {', '.join(ADAPTERS)}"
                       f"{did_you_mean(kind, ADAPTERS) if sep else ''} (docs/agents.md)")
    if not target:
        raise MbtError(f"--agent {kind}: needs its target after `{kind}:` (docs/agents.md)")
    if kind in ("http", "https") and target.startswith("//"):  # a bare URL: the adapter's name is missing
        raise MbtError(f"--agent {shown_url(spec)}: expected KIND:TARGET, e.g. openai-chat:{shown_url(spec)} or "
                       f"http:{shown_url(spec)} (docs/agents.md)")
    if kind in ("openai-chat", "http"):
        parts = urlsplit(target)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise MbtError(f"--agent {kind}:{shown_url(target)}: expected an http:// or https:// address")
    if kind == "openai-chat":
        path = parts.path.rstrip("/")
        if not path.endswith("/chat/completions"):  # a base URL (`.../v1`), as OpenAI's clients take it
            target = urlunsplit((parts.scheme, parts.netloc, f"{path}/chat/completions", parts.query, ""))
    if kind == "http":
        if settings.request is None or "answer" not in settings.response:
            raise MbtError("--agent http:URL takes its request template (`agent: request:`) and where the answer is "
                           "in the reply (`agent: response: answer: PATH`) from the configuration file "
                           "(docs/agents.md)")
        check_template(settings.request, "agent request")
    if kind == "python":
        module, _, function = target.partition(":")
        if not module or not function:
            raise MbtError(f"--agent python:{target}: expected python:MODULE:FUNCTION (e.g. python:my_agent:reply)")
    if kind == "cmd":
        try:
            words = shlex.split(target)
        except ValueError as err:
            raise MbtError(f"--agent cmd:{target}: cannot split the command into words: {err}") from None
        if not words:
            raise MbtError("--agent cmd: needs a command")
    for name, value in settings.headers.items():
        check_template(value, f"agent header `{name}`")
    return AgentSpec(kind, target, settings)


def check_template(template: Any, what: str) -> None:
    """Every placeholder of a template is one mbt fills: MbtError naming the first unknown one."""
    for text in _texts(template):
        for name in _PLACEHOLDER.findall(text):
            if name.startswith("env:"):
                if not _ENV_NAME.match(name[4:]):
                    raise MbtError(f"{what}: `${{{name}}}` names no environment variable")
            elif name not in PLACEHOLDERS:
                raise MbtError(f"{what}: unknown placeholder `${{{name}}}`{did_you_mean(name, PLACEHOLDERS)} (use "
                               + ", ".join(f"${{{p}}}" for p in PLACEHOLDERS) + ", ${env:NAME})")


def _texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [t for v in value for t in _texts(v)]
    if isinstance(value, dict):
        return [t for k, v in value.items() for t in (*_texts(str(k)), *_texts(v))]
    return []


def fill(template: Any, values: dict[str, Any], secrets: Secrets) -> Any:
    """The template as data with its placeholders filled, never spliced into JSON text: a text that is one
    placeholder becomes its value whatever its type (`"${messages}"`: the list of messages); a placeholder inside a
    longer text is replaced by the value's text. `${env:NAME}` is the environment variable's value (a secret)."""
    if isinstance(template, list):
        return [fill(v, values, secrets) for v in template]
    if isinstance(template, dict):
        return {str(k): fill(v, values, secrets) for k, v in template.items()}
    if not isinstance(template, str):
        return template
    whole = _PLACEHOLDER.fullmatch(template)
    if whole is not None:
        return _value(whole.group(1), values, secrets)
    return _PLACEHOLDER.sub(lambda m: _text(_value(m.group(1), values, secrets)), template)


def _value(name: str, values: dict[str, Any], secrets: Secrets) -> Any:
    if name.startswith("env:"):
        found = os.environ.get(name[4:])
        if found is None:
            raise MbtError(f"the agent's settings name the environment variable {name[4:]}, which is not set")
        secrets.add(found)
        return found
    return values[name]


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    import json

    return json.dumps(value, ensure_ascii=False)
