"""The LLM judge: any OpenAI-compatible chat-completions server (OpenAI, vLLM, Ollama, llama.cpp's server, LM Studio)
judges one answer on one criterion per request.

`openai:MODEL` names it; the server's base URL and key come from the arguments or the environment (`OPENAI_BASE_URL`,
`OPENAI_API_KEY`; a server that needs no key gets a placeholder). The key is sent to the server and nowhere else: it
is in no log line, no verdict, no cache key or row, and any server message that echoes it is cleaned before it
becomes a reason.

Each request: the versioned prompt of mbt.judges.prompts, temperature 0, structured output (response_format
json_schema) where the server takes it — a server that refuses it (HTTP 400/422) is asked again without it, and not
offered it again — and a tolerant reading of the reply otherwise (a JSON object anywhere in the text, code fences and
<think> blocks ignored, or `verdict: pass`). At most `concurrency` requests are in flight; 429, 408, 5xx, time-outs
and dropped connections are retried with exponential backoff (the server's Retry-After first), up to `max_attempts`
requests in all. Whatever still fails is an `error` verdict with its reason — never a pass. Verdicts are kept in a
persistent cache (mbt.judges.verdict_cache): an unchanged re-run sends no request; `retry_errors=True` re-judges only
the cached errors.

What it costs (`Usage`): every request, retry, cache hit and the tokens each reply's `usage` reports, and, with the
model's price (`prices`: input and output dollars per million tokens, from the configuration file), the cost. A
`Budget` shared by a run's LLM judges caps the requests (`--max-requests`) or the cost (`--max-cost`): once it is
reached nothing more is sent and every verdict not asked is `not_judged` ("budget reached"), never a pass. Items are
sent in order: the requests budget gives the first items their request; the cost budget is checked, before each
item, against the cost of the items sent `concurrency` places earlier and before (done by then), so which items are
judged does not depend on which reply came first, and the cost passes the budget by at most the items in flight.

The client is the maintained `openai` package, an optional extra: `pip install 'mbt-coverage[llm]'`.

Where the settings come from (`llm_settings`): the command line (`--llm KEY=VALUE`) over the environment
(`OPENAI_BASE_URL`, `OPENAI_API_KEY`, or the variable `api_key_env` names) over the configuration file (`llm:`); the
key is read from a variable or the file, never from the command line (a process list and a shell history show it).
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mbt.judges.prompts as prompts
from mbt.errors import MbtError
from mbt.judges.text import reply_objects
from mbt.judges.verdict_cache import VerdictCache, cache_key, default_path
from mbt.judges.verdicts import JudgeInput, Verdict, VerdictValue

log = logging.getLogger("mbt.judges.llm")
DEFAULT_BASE_URL = "https://api.openai.com/v1"
NO_KEY = "no-key"  # sent to servers that need none (the client insists on some key)
RETRIED_STATUS = {408, 409, 429}
CACHE_BATCH = 256  # verdicts written to the cache in one transaction


class LLMJudgeError(MbtError):
    """The LLM judge cannot be set up (bad spec, missing package): exit 2."""


@dataclass
class Usage:
    """What the judge cost: verdicts asked of the server, requests sent (retries included), cache hits, retries, the
    tokens the server's replies reported (each request's `usage`), the verdicts the budget left not judged."""

    requests: int = 0
    cache_hits: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    asked: int = 0  # verdicts sent to the server (each with its retries)
    replies_without_usage: int = 0  # replies whose `usage` said nothing: their tokens are not counted
    over_budget: int = 0  # verdicts not asked: the budget was reached

    @property
    def cache_hit_rate(self) -> float | None:
        """Verdicts from the cache / verdicts wanted (from the cache or asked); None when none was wanted."""
        wanted = self.cache_hits + self.asked
        return self.cache_hits / wanted if wanted else None


@dataclass(frozen=True)
class Price:
    """A model's price in dollars per million tokens."""

    input_per_mtok: float
    output_per_mtok: float

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input_per_mtok + completion_tokens * self.output_per_mtok) / 1_000_000


class Budget:
    """What a run's LLM judges may spend together: at most `max_requests` requests, at most `max_cost` dollars
    (None: no limit). Thread-safe; the judges call it in the order they send items."""

    def __init__(self, max_requests: int | None = None, max_cost: float | None = None):
        self.max_requests, self.max_cost = max_requests, max_cost
        self.requests = 0  # requests granted
        self.settled_cost = 0.0  # the cost of the items known to be done, added in the order they were sent
        self._lock = threading.Lock()

    def grant_request(self) -> bool:
        """One more request, if the budget has it."""
        with self._lock:
            if self.max_requests is not None and self.requests >= self.max_requests:
                return False
            self.requests += 1
            return True

    def refusal(self) -> str | None:
        """Why no further item is sent, or None."""
        if self.max_cost is not None and self.settled_cost >= self.max_cost:
            return f"the budget was reached: ${self.settled_cost:.4f} spent, --max-cost {self.max_cost:g}"
        if self.max_requests is not None and self.requests >= self.max_requests:
            return f"the budget was reached: {self.requests} requests, --max-requests {self.max_requests}"
        return None


@dataclass
class _Asked:
    """One item's outcome: its verdict and what its requests cost."""

    verdict: Verdict
    prompt_tokens: int = 0
    completion_tokens: int = 0


def parse_reply(content: str | None) -> tuple[VerdictValue, str]:
    """("pass" | "fail", reason) from the reply's content, or ("error", why it could not be read)."""
    if content is None or not content.strip():
        return "error", "the judge's reply was empty"
    text = re.sub(r"<think>.*?</think>|```(?:json)?", " ", content, flags=re.DOTALL | re.IGNORECASE).strip()
    for obj in reply_objects(content):
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
                 retry_errors: bool = False, prices: Mapping[str, Price] | None = None,
                 budget: Budget | None = None):
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
        self.price = (prices or {}).get(model)  # None: the cost is not measured
        self.budget = budget
        if budget is not None and budget.max_cost is not None and self.price is None:
            raise LLMJudgeError(f"--max-cost needs the price of model `{model}`: give it in the configuration file, "
                                f"llm: {{prices: {{{model}: {{input_per_mtok: ..., output_per_mtok: ...}}}}}}")
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

    @property
    def cost(self) -> float | None:
        """What the replies' tokens cost at the model's price; None without a price."""
        return self.price.cost(self.usage.prompt_tokens, self.usage.completion_tokens) if self.price else None

    def judge_many(self, items: Sequence[JudgeInput]) -> list[Verdict]:
        """Verdicts in input order: cached ones first, the rest sent in order with at most `concurrency` in flight
        (within the budget: the rest `not_judged`)."""
        results: list[Verdict | None] = [None] * len(items)
        todo: list[tuple[int, JudgeInput, str, list[dict[str, str]]]] = []
        for index, item in enumerate(items):
            skip = self._not_askable(item)
            if skip:
                results[index] = self._verdict("not_judged", skip)
                continue
            messages = prompts.messages(item)
            key = self._key_of(messages)
            cached = self.cache.get(key) if self.cache else None
            if cached is not None and not (self.retry_errors and cached.verdict == "error"):
                with self._lock:
                    self.usage.cache_hits += 1
                results[index] = cached
            else:
                todo.append((index, item, key, messages))
        if todo:
            pending: list[tuple[str, Verdict]] = []  # cached a batch at a time, as the replies come in order
            with ThreadPoolExecutor(max_workers=min(self.concurrency, len(todo))) as pool:
                for (index, _, key, _), asked in zip(todo, self._send(pool, todo)):
                    if asked is None:
                        continue
                    results[index] = asked.verdict
                    if self.cache:
                        pending.append((key, asked.verdict))
                        if len(pending) >= CACHE_BATCH:
                            self.cache.put_many(pending)
                            pending = []
            if self.cache and pending:
                self.cache.put_many(pending)
            refused = [index for index, *_ in todo if results[index] is None]
            if refused:
                reason = (self.budget.refusal() if self.budget else None) or "the budget was reached"
                with self._lock:
                    self.usage.over_budget += len(refused)
                for index in refused:  # never cached: a larger budget asks them
                    results[index] = self._verdict("not_judged", f"not asked: {reason}")
        return [v for v in results if v is not None]

    def _send(self, pool: ThreadPoolExecutor, todo: list) -> Iterator[_Asked | None]:
        """Each item's outcome in order, as it is done; None for those the budget did not let go (the items after
        the first refused)."""
        futures: list[Any] = []
        settled = 0  # futures[:settled] have their cost in the budget

        def settle(upto: int) -> None:
            nonlocal settled
            while settled < upto:
                asked = futures[settled].result()
                if self.price is not None and self.budget is not None:
                    self.budget.settled_cost += self.price.cost(asked.prompt_tokens, asked.completion_tokens)
                settled += 1

        for n, (_, item, _, messages) in enumerate(todo):
            if self.budget is not None:
                settle(n - self.concurrency + 1)  # the item `concurrency` places back and those before are done
                if self.budget.refusal() is not None or not self.budget.grant_request():
                    break
            futures.append(pool.submit(self._ask, item, messages))
        for n, future in enumerate(futures):
            if self.budget is not None:
                settle(n + 1)  # the next batch starts knowing everything spent
            yield future.result()
        for _ in range(len(todo) - len(futures)):
            yield None

    # ---------------------------------------------------------------- one request

    def _not_askable(self, item: JudgeInput) -> str | None:
        if not item.criterion.definition:
            return f"criterion `{item.criterion.key}` has no definition or rubric to judge by"
        if item.criterion.key == "accuracy" and not item.expected and not (
                prompts.phrases(item, "must_have") or prompts.phrases(item, "must_not")):
            return "no expected answer to compare with"
        return None

    def _key_of(self, messages: list[dict[str, str]]) -> str:
        return cache_key(judge=self.name, model=self.model, base_url=self.base_url, prompt=prompts.PROMPT_VERSION,
                         messages=messages)

    def _verdict(self, value: VerdictValue, reason: str) -> Verdict:
        return Verdict(value, self._clean(reason), self.name, self.version)

    def _clean(self, text: str) -> str:
        """`text` without the API key (a server may echo a request back in an error)."""
        if self._key != NO_KEY and len(self._key) >= 4:
            text = text.replace(self._key, "***")
        return text

    def _ask(self, item: JudgeInput, messages: list[dict[str, str]]) -> _Asked:
        """One item asked, retried as the module docstring says; its first request was granted by the budget."""
        asked = _Asked(Verdict("error", "", self.name, self.version))
        with self._lock:
            self.usage.asked += 1
        asked.verdict = self._attempts(item, messages, asked)
        return asked

    def _attempts(self, item: JudgeInput, messages: list[dict[str, str]], asked: _Asked) -> Verdict:
        openai = self._openai
        last = ""
        attempt = 1
        while attempt <= self.max_attempts:
            if attempt > 1 and self.budget is not None and not self.budget.grant_request():
                return self._verdict("not_judged", f"not asked again: the budget was reached (--max-requests "
                                                   f"{self.budget.max_requests}) after {attempt - 1} attempt"
                                                   f"{'s' * (attempt > 2)}: {last}")
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
                # The client's documented low-level call: the body goes as given (the typed `create` walks every
                # message through its request types, about a third of the CPU a verdict costs) and the reply comes
                # back as its decoded JSON (no response models built): at 32 requests in flight that CPU decides the
                # throughput. Authentication, time-outs and the status errors below are the client's as before.
                response = self._client.post("/chat/completions", body=kwargs, cast_to=object)
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
                    if self.budget is not None and not self.budget.grant_request():
                        return self._verdict("not_judged", "not asked again without structured output: the budget "
                                                           f"was reached (--max-requests {self.budget.max_requests})")
                    continue  # the same request in the plain form: not an attempt that failed
                last = f"HTTP {status}: {_message(error)}"
                if status not in RETRIED_STATUS and status < 500:
                    return self._verdict("error", last)
                wait = _retry_after(error)
            except ValueError:  # a 200 whose body is not JSON (a proxy's page): not a reply to read, not retried
                with self._lock:
                    self.usage.replies_without_usage += 1
                return self._verdict("error", "the server's reply has no message: its body is not JSON")
            else:
                return self._read(response, asked)
            if attempt < self.max_attempts:
                time.sleep(wait if wait is not None else min(self.backoff * 2 ** (attempt - 1), self.max_backoff))
            attempt += 1
        return self._verdict("error", f"{last} after {self.max_attempts} attempt{'s' * (self.max_attempts > 1)}")

    def _read(self, response: Any, asked: _Asked) -> Verdict:
        """A reply's verdict and its tokens; `response` is the reply's decoded JSON."""
        usage = response.get("usage") if isinstance(response, dict) else None
        prompt_tokens = _tokens(usage.get("prompt_tokens")) if isinstance(usage, dict) else None
        completion_tokens = _tokens(usage.get("completion_tokens")) if isinstance(usage, dict) else None
        asked.prompt_tokens += prompt_tokens or 0
        asked.completion_tokens += completion_tokens or 0
        with self._lock:
            self.usage.prompt_tokens += prompt_tokens or 0
            self.usage.completion_tokens += completion_tokens or 0
            self.usage.replies_without_usage += prompt_tokens is None and completion_tokens is None
        try:
            content = response["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            return self._verdict("error", "the server's reply has no message")
        if content is not None and not isinstance(content, str):
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


def _tokens(value: Any) -> int | None:
    """A token count from a reply's `usage` (a whole number), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


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
    prices: Mapping[str, tuple[float, float]] = field(default_factory=dict)  # model -> dollars per Mtok in, out
    max_cost: float | None = None  # the run's budget (--max-cost): dollars, over every LLM judge
    max_requests: int | None = None  # the run's budget (--max-requests): requests, over every LLM judge

    def budget(self) -> Budget | None:
        """The run's budget, shared by its LLM judges (None: no limit)."""
        if self.max_cost is None and self.max_requests is None:
            return None
        return Budget(self.max_requests, self.max_cost)

    def options(self) -> dict[str, Any]:
        """LLMJudge's keyword arguments (but the budget, which a run shares); LLMJudgeError when the key's variable is
        not set."""
        if self.missing_key_env is not None:
            raise LLMJudgeError(f"the LLM judge's key: the environment variable {self.missing_key_env} (named by "
                                "api_key_env) is not set")
        return {"base_url": self.base_url, "api_key": self.api_key, "timeout": self.timeout,
                "concurrency": self.concurrency, "max_attempts": self.retries + 1,
                "cache_path": Path(self.cache) if isinstance(self.cache, str) else None,
                "use_cache": self.cache is not False,
                "prices": {model: Price(*price) for model, price in self.prices.items()}}


def llm_settings(command_line: Mapping[str, Any] | None = None, config: Mapping[str, Any] | None = None,
                 environ: Mapping[str, str] | None = None) -> LLMSettings:
    """The LLM judge's settings from the command line's `--llm KEY=VALUE` (checked already: mbt.config.llm_setting),
    the environment and the configuration file's `llm:`. Per setting the command line wins, then the environment,
    then the file. The key: the variable named by `api_key_env` (command line, else file) — naming a variable is a
    more precise instruction than the default name — else `OPENAI_API_KEY`, else the file's `api_key`. The server:
    `base_url` on the command line, else `OPENAI_BASE_URL`, else the file's. Timeout, concurrency, retries, cache,
    prices and the budget (max_cost, max_requests) have no variable: the command line, else the file, else the
    defaults (60 s, 4, 3, mbt's cache folder, none, no limit)."""
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
                       retries=pick("retries", DEFAULT_RETRIES), cache=pick("cache", True),
                       prices=pick("prices", {}), max_cost=pick("max_cost", None),
                       max_requests=pick("max_requests", None))
