"""The LLM judge: any OpenAI-compatible chat-completions server (OpenAI, vLLM, Ollama, llama.cpp's server, LM Studio)
judges one answer on one criterion per request.

`openai:MODEL` names it; the server's base URL and key come from the arguments or the environment (`OPENAI_BASE_URL`,
`OPENAI_API_KEY`; a server that needs no key gets a placeholder). The key is sent to the server and nowhere else: it
is in no log line, no verdict, no cache key or row, and any server message that echoes it is cleaned before it
becomes a reason.

Each request: the versioned prompt of mbt.judges.prompts, temperature 0, structured output (response_format
json_schema) where the server takes it — a server that refuses it (HTTP 400/422) is asked again without it, and not
offered it again — and a tolerant reading of the reply otherwise (a JSON object anywhere in the text, code fences and
<think> blocks ignored, or `verdict: pass`). Requests run on at most `concurrency` threads; 429, 408, 5xx, time-outs
and dropped connections are retried with exponential backoff (the server's Retry-After first), up to `max_attempts`
requests in all. Whatever still fails is an `error` verdict with its reason — never a pass. Verdicts are kept in a
persistent cache (mbt.judges.verdict_cache): an unchanged re-run sends no request; `retry_errors=True` re-judges only
the cached errors.

The client is the maintained `openai` package, an optional extra: `pip install 'mbt-coverage[llm]'`.

Where the settings come from (`llm_settings`): the command line (`--llm KEY=VALUE`) over the environment
(`OPENAI_BASE_URL`, `OPENAI_API_KEY`, or the variable `api_key_env` names) over the configuration file (`llm:`); the
key is read from a variable or the file, never from the command line (a process list and a shell history show it).
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mbt.judges.prompts as prompts
from mbt.errors import MbtError
from mbt.judges.verdict_cache import VerdictCache, cache_key, default_path
from mbt.judges.verdicts import JudgeInput, Verdict, VerdictValue

log = logging.getLogger("mbt.judges.llm")
DEFAULT_BASE_URL = "https://api.openai.com/v1"
NO_KEY = "no-key"  # sent to servers that need none (the client insists on some key)
RETRIED_STATUS = {408, 409, 429}


class LLMJudgeError(MbtError):
    """The LLM judge cannot be set up (bad spec, missing package): exit 2."""


@dataclass
class Usage:
    """What the judge cost: requests sent (retries included), cache hits, retries, tokens the server reported."""

    requests: int = 0
    cache_hits: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


def parse_reply(content: str | None) -> tuple[VerdictValue, str]:
    """("pass" | "fail", reason) from the reply's content, or ("error", why it could not be read)."""
    if content is None or not content.strip():
        return "error", "the judge's reply was empty"
    text = re.sub(r"<think>.*?</think>", " ", content, flags=re.DOTALL | re.IGNORECASE)
    text = re.sub(r"```(?:json)?", " ", text, flags=re.IGNORECASE).strip()
    decoder = json.JSONDecoder()
    for start in [m.start() for m in re.finditer(r"\{", text)]:
        try:
            obj, _ = decoder.raw_decode(text, start)
        except ValueError:
            continue
        if isinstance(obj, dict) and "verdict" in obj:
            verdict = str(obj["verdict"]).strip().lower()
            reason = str(obj.get("reason", "")).strip() or "(no reason given)"
            if verdict in ("pass", "fail"):
                return verdict, reason  # type: ignore[return-value]
            return "error", f"the judge's verdict {obj['verdict']!r} is neither pass nor fail"
    m = re.search(r"\bverdict\W{0,3}\s*[:=]?\s*\W{0,2}(pass|fail)\b", text, re.IGNORECASE)
    if m:
        return m.group(1).lower(), text[:500]  # type: ignore[return-value]
    return "error", f"the judge's reply holds no verdict: {text[:200]!r}"


class LLMJudge:
    """The LLM judge on one OpenAI-compatible server and model."""

    version = prompts.PROMPT_VERSION

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None, concurrency: int = 4,
                 timeout: float = 60.0, max_attempts: int = 4, backoff: float = 1.0, max_backoff: float = 30.0,
                 structured: bool | None = None, cache_path: Path | None = None, use_cache: bool = True,
                 retry_errors: bool = False):
        try:
            import openai
        except ImportError:
            raise LLMJudgeError("the LLM judge needs the `openai` package: pip install 'mbt-coverage[llm]'") from None
        if not model:
            raise LLMJudgeError("the LLM judge needs a model: openai:MODEL")
        if concurrency < 1 or max_attempts < 1:
            raise LLMJudgeError("the LLM judge's concurrency and attempts must be at least 1")
        self.name = f"openai:{model}"
        self.model = model
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        self._key = api_key or os.environ.get("OPENAI_API_KEY") or NO_KEY
        self.concurrency = concurrency
        self.timeout = timeout
        self.max_attempts = max_attempts
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.structured = structured  # None: try it, drop it if the server refuses it
        self.retry_errors = retry_errors
        self.usage = Usage()
        self._lock = threading.Lock()
        self._openai = openai
        self._client = openai.OpenAI(base_url=self.base_url, api_key=self._key, timeout=timeout, max_retries=0)
        self.cache = VerdictCache(cache_path or default_path()) if use_cache else None

    def __repr__(self) -> str:  # the key stays out of every repr, log and traceback
        return f"LLMJudge({self.name!r}, base_url={self.base_url!r})"

    # ---------------------------------------------------------------- the Judge protocol

    def judge(self, item: JudgeInput) -> Verdict:
        return self.judge_many([item])[0]

    def judge_many(self, items: Sequence[JudgeInput]) -> list[Verdict]:
        """Verdicts in input order: cached ones first, the rest asked on at most `concurrency` threads."""
        results: list[Verdict | None] = [None] * len(items)
        todo: list[tuple[int, JudgeInput, str]] = []
        for index, item in enumerate(items):
            skip = self._not_askable(item)
            if skip:
                results[index] = self._verdict("not_judged", skip)
                continue
            key = self._key_of(item)
            cached = self.cache.get(key) if self.cache else None
            if cached is not None and not (self.retry_errors and cached.verdict == "error"):
                with self._lock:
                    self.usage.cache_hits += 1
                results[index] = cached
            else:
                todo.append((index, item, key))
        if todo:
            with ThreadPoolExecutor(max_workers=min(self.concurrency, len(todo))) as pool:
                for (index, _, key), verdict in zip(todo, pool.map(lambda t: self._ask(t[1]), todo)):
                    if self.cache:
                        self.cache.put(key, verdict)
                    results[index] = verdict
        return [v for v in results if v is not None]

    # ---------------------------------------------------------------- one request

    def _not_askable(self, item: JudgeInput) -> str | None:
        if not item.criterion.definition:
            return f"criterion `{item.criterion.key}` has no definition or rubric to judge by"
        if item.criterion.key == "accuracy" and not item.expected and not (
                prompts.phrases(item, "must_have") or prompts.phrases(item, "must_not")):
            return "no expected answer to compare with"
        return None

    def _key_of(self, item: JudgeInput) -> str:
        return cache_key(judge=self.name, model=self.model, base_url=self.base_url, prompt=prompts.PROMPT_VERSION,
                         messages=prompts.messages(item))

    def _verdict(self, value: VerdictValue, reason: str) -> Verdict:
        return Verdict(value, self._clean(reason), self.name, self.version)

    def _clean(self, text: str) -> str:
        """`text` without the API key (a server may echo a request back in an error)."""
        if self._key != NO_KEY and len(self._key) >= 4:
            text = text.replace(self._key, "***")
        return text

    def _ask(self, item: JudgeInput) -> Verdict:
        openai = self._openai
        messages = prompts.messages(item)
        last = ""
        attempt = 1
        while attempt <= self.max_attempts:
            structured = self.structured is not False
            kwargs: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": 0}
            if structured:
                kwargs["response_format"] = prompts.RESPONSE_FORMAT
            with self._lock:
                self.usage.requests += 1
                self.usage.retries += attempt > 1
            log.debug("judge request: %s at %s, criterion %s, attempt %d", self.name, self.base_url,
                      item.criterion.key, attempt)
            try:
                response = self._client.chat.completions.create(**kwargs)
            except openai.APITimeoutError:
                last, wait = f"timed out (timeout {self.timeout:g} s)", None
            except openai.APIConnectionError as error:
                last, wait = f"connection failed: {error}", None
            except openai.APIStatusError as error:
                status = error.status_code
                # a server that refuses structured output is asked again without it, unless it was required (another
                # thread may have switched it off already: this request still went out with it)
                if status in (400, 422) and structured and self.structured is not True:
                    log.info("%s refused structured output (HTTP %d); asking without it", self.base_url, status)
                    self.structured = False
                    continue  # the same request in the plain form: not an attempt that failed
                last = f"HTTP {status}: {_message(error)}"
                if status not in RETRIED_STATUS and status < 500:
                    return self._verdict("error", last)
                wait = _retry_after(error)
            else:
                return self._read(response)
            if attempt < self.max_attempts:
                time.sleep(wait if wait is not None else min(self.backoff * 2 ** (attempt - 1), self.max_backoff))
            attempt += 1
        return self._verdict("error", f"{last} after {self.max_attempts} attempt{'s' * (self.max_attempts > 1)}")

    def _read(self, response: Any) -> Verdict:
        usage = getattr(response, "usage", None)
        if usage is not None:
            with self._lock:
                self.usage.prompt_tokens += getattr(usage, "prompt_tokens", 0) or 0
                self.usage.completion_tokens += getattr(usage, "completion_tokens", 0) or 0
        try:
            content = response.choices[0].message.content
        except (AttributeError, IndexError, TypeError):
            return self._verdict("error", "the server's reply has no message")
        value, reason = parse_reply(content)
        return self._verdict(value, reason)

    def close(self) -> None:
        """Close the cache file and the HTTP client."""
        if self.cache:
            self.cache.close()
        self._client.close()

    def __enter__(self) -> LLMJudge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _message(error: Any) -> str:
    body = getattr(error, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        text = inner.get("message") if isinstance(inner, dict) else None
        if text:
            return str(text)[:300]
    return str(getattr(error, "message", "") or error)[:300]


def _retry_after(error: Any) -> float | None:
    """The server's Retry-After in seconds (at most 60), when it sent one."""
    try:
        value = error.response.headers.get("retry-after")
        return min(max(float(value), 0.0), 60.0) if value is not None else None
    except (AttributeError, TypeError, ValueError):
        return None


def judge_from_spec(spec: str, **options: Any) -> LLMJudge:
    """`openai:MODEL` -> an LLMJudge (options as LLMJudge's); another spec is an LLMJudgeError."""
    provider, sep, model = spec.partition(":")
    if provider != "openai" or not sep or not model.strip():
        raise LLMJudgeError(f"`{spec}` is not an LLM judge: write openai:MODEL (any OpenAI-compatible server; "
                            f"OPENAI_BASE_URL names the server)")
    return LLMJudge(model.strip(), **options)


DEFAULT_TIMEOUT, DEFAULT_CONCURRENCY, DEFAULT_RETRIES = 60.0, 4, 3


@dataclass(frozen=True)
class LLMSettings:
    """The LLM judge's settings once resolved (`llm_settings`). `key_source` says where the key came from, for
    messages (a variable's name or "the configuration file"), never what it is; `missing_key_env` is a variable that
    `api_key_env` names and the environment lacks: an error when an LLM judge is made, not before (a run with the
    embedded judge alone needs no key)."""

    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    key_source: str = ""
    missing_key_env: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    concurrency: int = DEFAULT_CONCURRENCY
    retries: int = DEFAULT_RETRIES
    cache: bool | str = True  # True: mbt's cache folder; False: no cache; a text: the cache file

    def options(self) -> dict[str, Any]:
        """LLMJudge's keyword arguments; LLMJudgeError when the key's variable is not set."""
        if self.missing_key_env is not None:
            raise LLMJudgeError(f"the LLM judge's key: the environment variable {self.missing_key_env} (named by "
                                "api_key_env) is not set")
        return {"base_url": self.base_url, "api_key": self.api_key, "timeout": self.timeout,
                "concurrency": self.concurrency, "max_attempts": self.retries + 1,
                "cache_path": Path(self.cache) if isinstance(self.cache, str) else None,
                "use_cache": self.cache is not False}


def llm_settings(command_line: Mapping[str, Any] | None = None, config: Mapping[str, Any] | None = None,
                 environ: Mapping[str, str] | None = None) -> LLMSettings:
    """The LLM judge's settings from the command line's `--llm KEY=VALUE` (checked already: mbt.config.llm_setting),
    the environment and the configuration file's `llm:`. Per setting the command line wins, then the environment,
    then the file. The key: the variable named by `api_key_env` (command line, else file) — naming a variable is a
    more precise instruction than the default name — else `OPENAI_API_KEY`, else the file's `api_key`. The server:
    `base_url` on the command line, else `OPENAI_BASE_URL`, else the file's. Timeout, concurrency, retries and cache
    have no variable: the command line, else the file, else the defaults (60 s, 4, 3, mbt's cache folder)."""
    cli, file = dict(command_line or {}), dict(config or {})
    env = os.environ if environ is None else environ
    if "api_key" in cli:
        raise LLMJudgeError("the LLM judge's key is never given on the command line (the process list and the shell "
                            "history would show it): set OPENAI_API_KEY, or name a variable with api_key_env")
    key, source, missing = None, "", None
    named = cli.get("api_key_env") or file.get("api_key_env")
    if named:
        key, source = env.get(named) or None, named
        missing = None if key else named
    elif env.get("OPENAI_API_KEY"):
        key, source = env["OPENAI_API_KEY"], "OPENAI_API_KEY"
    elif file.get("api_key"):
        key, source = file["api_key"], "the configuration file"

    def pick(name: str, default: Any) -> Any:
        return cli[name] if name in cli else file.get(name, default)

    return LLMSettings(base_url=cli.get("base_url") or env.get("OPENAI_BASE_URL") or file.get("base_url"),
                       api_key=key, key_source=source, missing_key_env=missing,
                       timeout=pick("timeout", DEFAULT_TIMEOUT), concurrency=pick("concurrency", DEFAULT_CONCURRENCY),
                       retries=pick("retries", DEFAULT_RETRIES), cache=pick("cache", True))
