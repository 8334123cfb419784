"""The four ways to talk to a live agent (docs/agents.md). Each opens one session per case and sends it the case's
turns one at a time: `Session.send(messages, turn)` gets the whole conversation so far (OpenAI chat messages, the
newest a user message) and returns the agent's `Reply` (its text, the tool calls it made, its model and version,
its token usage), or raises AgentError saying why the agent did not answer.

- `openai-chat:URL` — POST {model, messages} to an OpenAI-compatible chat-completions endpoint; the reply's
  `choices[0].message` (content and `tool_calls`), `model`, `system_fingerprint` (read as the agent's version) and
  `usage`; the session id in the `X-Session-Id` header; a bearer token from the environment variable the settings
  name (MBT_AGENT_API_KEY by default) when it is set, else Basic authorisation from a user and password in the URL.
- `http:URL` — any JSON endpoint: the body built from the configuration file's request template (data, placeholders
  filled, then encoded: never a string template), the answer and the rest read from the reply at dotted paths.
- `python:MODULE:FUNCTION` — `FUNCTION(messages, session_id)` returns the answer's text, or a mapping shaped like a
  chat message (`content`, `tool_calls`; optionally `model`, `agent_version`; or `error`).
- `cmd:COMMAND` — the command is started once per case (its session; no shell), receives one JSON line per turn on
  stdin (`session_id`, `case_id`, `turn`, `message`, `messages`) and answers each with one JSON line on stdout
  shaped as a python callable's return; stdin is closed at the end of the case.

HTTP goes through the standard library (urllib): no dependency; environment proxies are honoured except for the
loopback addresses, which a proxy could not reach anyway.
"""

from __future__ import annotations

import collections
import http.client
import importlib
import json
import os
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit

from mbt.agents.spec import AgentSpec, Secrets, fill, shown_url, url_credentials
from mbt.argpaths import lookup
from mbt.errors import MbtError

MAX_REPLY_BYTES = 16 * 1024 * 1024
_LOOPBACK = ("localhost", "127.0.0.1", "::1")


class AgentError(Exception):
    """The agent did not answer a turn: the message says why (a time-out, an HTTP status, a crash, a reply that
    is not what the adapter reads)."""


@dataclass
class Reply:
    """One answer of the agent: what it said and the tool calls it made (OpenAI's shape), and what it says about
    itself."""

    content: str | None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    model: str | None = None
    agent_version: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None

    def message(self) -> dict[str, Any]:
        """The reply as the assistant message of the conversation (what the next turn sends back)."""
        out: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = self.tool_calls
        return out


class Session(Protocol):
    def send(self, messages: list[dict[str, Any]], turn: int) -> Reply: ...

    def close(self) -> None: ...


class Agent(Protocol):
    def open(self, session_id: str, case_id: str) -> Session: ...


def open_agent(spec: AgentSpec, secrets: Secrets) -> Agent:
    """The adapter of `spec`; MbtError (exit 2) when it cannot be set up (a function that cannot be imported)."""
    if spec.kind == "openai-chat":
        return OpenAIChat(spec, secrets)
    if spec.kind == "http":
        return HttpJson(spec, secrets)
    if spec.kind == "python":
        return PythonCallable(spec)
    return Command(spec)


# ---- replies --------------------------------------------------------------------------------------------------------


def _text(content: Any, what: str) -> str | None:
    """A message's content: text, or OpenAI's content parts (their texts joined)."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text")
    raise AgentError(f"{what} is {type(content).__name__}, not text")


def tool_calls(value: Any, turn: int) -> list[dict[str, Any]]:
    """Tool calls in OpenAI's shape ({id, type: function, function: {name, arguments: JSON text}}); a call written
    as {name, arguments} with arguments as a mapping is accepted and put in that shape."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise AgentError("`tool_calls` is not a list")
    out = []
    for n, call in enumerate(value, start=1):
        if not isinstance(call, dict):
            raise AgentError(f"tool call {n} is not an object")
        inner = call.get("function")
        fn: dict[str, Any] = inner if isinstance(inner, dict) else call
        name = fn.get("name")
        if not isinstance(name, str) or not name:
            raise AgentError(f"tool call {n} has no `function.name`")
        args = fn.get("arguments", {})
        text = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False, sort_keys=True)
        out.append({"id": str(call.get("id") or f"call_{turn}_{n}"), "type": "function",
                    "function": {"name": name, "arguments": text}})
    return out


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def reply_from(value: Any, turn: int) -> Reply:
    """A python callable's or a command's answer: text, or a chat-message-like mapping; `error` is the agent's."""
    if isinstance(value, str):
        return Reply(value)
    if not isinstance(value, dict):
        raise AgentError(f"the answer is {type(value).__name__}: expected text or an object with `content`")
    if value.get("error"):
        raise AgentError(f"the agent says: {value['error']}")
    version = value.get("agent_version")
    model = value.get("model")
    return Reply(_text(value.get("content"), "`content`"), tool_calls(value.get("tool_calls"), turn),
                 model=str(model) if model is not None else None,
                 agent_version=str(version) if version is not None else None)


# ---- HTTP -----------------------------------------------------------------------------------------------------------


def _opener(url: str) -> urllib.request.OpenerDirector:
    if (urlsplit(url).hostname or "") in _LOOPBACK:
        return urllib.request.build_opener(urllib.request.ProxyHandler({}))
    return urllib.request.build_opener()


def post_json(url: str, body: Any, headers: dict[str, str], timeout: float, secrets: Secrets,
              method: str = "POST") -> Any:
    """The decoded JSON reply of one request; AgentError for anything else (status, time-out, not JSON), its text
    scrubbed of secrets."""
    shown = shown_url(url)
    request = urllib.request.Request(url, data=json.dumps(body, ensure_ascii=False).encode("utf-8"), method=method,
                                     headers={"Content-Type": "application/json", "Accept": "application/json",
                                              **headers})
    try:
        with _opener(url).open(request, timeout=timeout) as response:
            raw = response.read(MAX_REPLY_BYTES + 1)
    except urllib.error.HTTPError as err:
        detail = err.read(300).decode("utf-8", "replace").strip().replace("\n", " ")
        raise AgentError(secrets.scrub(f"HTTP {err.code} {err.reason} from {shown}"
                                       + (f": {detail}" if detail else ""))) from None
    except urllib.error.URLError as err:
        if isinstance(err.reason, TimeoutError):  # socket.timeout is TimeoutError
            raise AgentError(f"no answer from {shown} within {timeout:g} s") from None
        raise AgentError(secrets.scrub(f"cannot reach {shown}: {err.reason}")) from None
    except TimeoutError:
        raise AgentError(f"no answer from {shown} within {timeout:g} s") from None
    except (http.client.HTTPException, OSError) as err:
        raise AgentError(secrets.scrub(f"{shown}: {type(err).__name__}: {err}")) from None
    if len(raw) > MAX_REPLY_BYTES:
        raise AgentError(f"the reply from {shown} is larger than {MAX_REPLY_BYTES // (1024 * 1024)} MiB")
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        start = raw[:120].decode("utf-8", "replace").replace("\n", " ")
        raise AgentError(secrets.scrub(f"the reply from {shown} is not JSON: {start!r}")) from None


def _headers(spec: AgentSpec, session_id: str, case_id: str, secrets: Secrets) -> dict[str, str]:
    values = {"session_id": session_id, "case_id": case_id}
    out = {"X-Session-Id": session_id}
    for name, template in spec.settings.headers.items():
        filled = fill(template, {**values, "message": "", "messages": [], "turn": 0}, secrets)
        out[name] = filled if isinstance(filled, str) else json.dumps(filled)
    return out


class OpenAIChat:
    def __init__(self, spec: AgentSpec, secrets: Secrets):
        self.spec, self.secrets = spec, secrets
        self.key = os.environ.get(spec.settings.api_key_env) or None
        secrets.add(self.key)
        self.url, self.basic = url_credentials(spec.target, secrets)

    def open(self, session_id: str, case_id: str) -> Session:
        headers = _headers(self.spec, session_id, case_id, self.secrets)
        if self.key:
            headers.setdefault("Authorization", f"Bearer {self.key}")
        if self.basic:
            headers.setdefault("Authorization", self.basic)
        return _Stateless(lambda messages, turn: self._send(messages, turn, headers))

    def _send(self, messages: list[dict[str, Any]], turn: int, headers: dict[str, str]) -> Reply:
        body = {"model": self.spec.settings.model, "messages": messages}
        found = post_json(self.url, body, headers, self.spec.settings.timeout, self.secrets)
        if isinstance(found, dict) and isinstance(found.get("error"), dict):
            raise AgentError(self.secrets.scrub(f"the agent says: {found['error'].get('message', found['error'])}"))
        try:
            choice = found["choices"][0]
            message = choice["message"]
        except (KeyError, IndexError, TypeError):
            raise AgentError("the reply has no choices[0].message: not a chat completion") from None
        if not isinstance(message, dict):
            raise AgentError("choices[0].message is not an object")
        usage = found.get("usage") if isinstance(found.get("usage"), dict) else {}
        model, fingerprint = found.get("model"), found.get("system_fingerprint")
        return Reply(_text(message.get("content"), "choices[0].message.content"),
                     tool_calls(message.get("tool_calls"), turn),
                     model=str(model) if model is not None else None,
                     agent_version=str(fingerprint) if fingerprint is not None else None,
                     input_tokens=_count(usage.get("prompt_tokens")),
                     output_tokens=_count(usage.get("completion_tokens")))


class HttpJson:
    def __init__(self, spec: AgentSpec, secrets: Secrets):
        self.spec, self.secrets = spec, secrets
        self.url, self.basic = url_credentials(spec.target, secrets)

    def open(self, session_id: str, case_id: str) -> Session:
        headers = _headers(self.spec, session_id, case_id, self.secrets)
        if self.basic:
            headers.setdefault("Authorization", self.basic)

        def send(messages: list[dict[str, Any]], turn: int) -> Reply:
            values = {"message": messages[-1]["content"], "messages": messages, "session_id": session_id,
                      "case_id": case_id, "turn": turn}
            body = fill(self.spec.settings.request, values, self.secrets)
            found = post_json(self.url, body, headers, self.spec.settings.timeout, self.secrets,
                              self.spec.settings.method)
            return self._reply(found, turn)

        return _Stateless(send)

    def _reply(self, found: Any, turn: int) -> Reply:
        paths = self.spec.settings.response

        def at(key: str) -> tuple[bool, Any]:
            return _path(found, paths[key]) if key in paths else (False, None)

        has_error, error = at("error")
        if has_error and error:
            raise AgentError(self.secrets.scrub(f"the agent says: {error}"))
        has_answer, answer = at("answer")
        if not has_answer:
            raise AgentError(f"the reply has no `{paths['answer']}` (agent response answer)")
        model, version = at("model")[1], at("agent_version")[1]
        return Reply(_text(answer, f"`{paths['answer']}`"), tool_calls(at("tool_calls")[1], turn),
                     model=str(model) if model is not None else None,
                     agent_version=str(version) if version is not None else None)


def _path(value: Any, path: str) -> tuple[bool, Any]:
    """The value at a dotted path (`data.items.0.text`: a number indexes a list), or (False, None)."""
    for part in path.split("."):
        if isinstance(value, list) and part.lstrip("-").isdigit():
            index = int(part)
            if not -len(value) <= index < len(value):
                return False, None
            value = value[index]
        elif isinstance(value, dict):
            found, value = lookup(value, part)
            if not found:
                return False, None
        else:
            return False, None
    return True, value


class _Stateless:
    """A session that holds nothing of its own: the whole conversation goes with every turn (HTTP, a callable)."""

    def __init__(self, send: Callable[[list[dict[str, Any]], int], Reply]):
        self._send = send

    def send(self, messages: list[dict[str, Any]], turn: int) -> Reply:
        return self._send(messages, turn)

    def close(self) -> None:
        pass


# ---- Python ---------------------------------------------------------------------------------------------------------


class PythonCallable:
    def __init__(self, spec: AgentSpec):
        module_name, _, name = spec.target.partition(":")
        if os.getcwd() not in sys.path and "" not in sys.path:  # `python:my_agent:reply` run from its folder
            sys.path.insert(0, os.getcwd())
        try:
            module = importlib.import_module(module_name)
        except Exception as err:  # noqa: BLE001 - any import failure is the spec's: said in one line
            raise MbtError(f"--agent python:{spec.target}: cannot import `{module_name}`: "
                           f"{type(err).__name__}: {err}") from None
        found: Any = module
        for part in name.split("."):
            found = getattr(found, part, None)
        if not callable(found):
            raise MbtError(f"--agent python:{spec.target}: `{name}` is not a callable of `{module_name}`")
        self.function = found

    def open(self, session_id: str, case_id: str) -> Session:
        function = self.function

        def send(messages: list[dict[str, Any]], turn: int) -> Reply:
            try:
                value = function([dict(m) for m in messages], session_id)
            except Exception as err:  # noqa: BLE001 - the agent's failure, whatever it is, is an agent error
                raise AgentError(f"{type(err).__name__}: {err}") from None
            return reply_from(value, turn)

        return _Stateless(send)


# ---- a command ------------------------------------------------------------------------------------------------------


class Command:
    def __init__(self, spec: AgentSpec):
        self.spec = spec

    def open(self, session_id: str, case_id: str) -> Session:
        return _CommandSession(self.spec.argv, session_id, case_id)


class _CommandSession:
    def __init__(self, argv: list[str], session_id: str, case_id: str):
        self.session_id, self.case_id = session_id, case_id
        self.name = argv[0]
        try:
            self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            stderr=subprocess.PIPE, text=True, encoding="utf-8", errors="replace",
                                            bufsize=1)
        except OSError as err:
            raise AgentError(f"cannot start `{self.name}`: {err.strerror or err}") from None
        self.stderr: collections.deque[str] = collections.deque(maxlen=5)  # its last lines, for an error's why
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            if line.strip():
                self.stderr.append(line.strip())

    def _ended(self, doing: str) -> AgentError:
        code = self.process.wait(timeout=5)
        tail = f": {' | '.join(self.stderr)}" if self.stderr else ""
        return AgentError(f"`{self.name}` exited with code {code} {doing}{tail}")

    def send(self, messages: list[dict[str, Any]], turn: int) -> Reply:
        assert self.process.stdin is not None and self.process.stdout is not None
        line = json.dumps({"session_id": self.session_id, "case_id": self.case_id, "turn": turn,
                           "message": messages[-1]["content"], "messages": messages}, ensure_ascii=False)
        try:
            self.process.stdin.write(line + "\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._ended(f"before turn {turn} was sent") from None
        answer = self.process.stdout.readline()
        if not answer:
            raise self._ended(f"before answering turn {turn}")
        try:
            value = json.loads(answer)
        except ValueError:
            raise AgentError(f"`{self.name}` answered turn {turn} with a line that is not JSON: "
                             f"{answer.strip()[:120]!r}") from None
        return reply_from(value, turn)

    def close(self) -> None:
        """stdin closed (the session is over), then the process given a moment to end, else killed."""
        try:
            if self.process.stdin is not None:
                self.process.stdin.close()
        except OSError:
            pass
        try:
            self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
