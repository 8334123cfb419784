"""Driving the agent: one session per case, the case's turns sent in order, what came back recorded as a transcript.

Each case gets its own session id (`mbt-<run>-<n>`: a run's own prefix, so that an agent keeping sessions on its
side never continues an earlier run's) and is sent by one worker; at most `concurrency` cases are in flight. Each
turn (and opening a session: starting a command) must answer within `timeout` seconds, measured here whatever the
adapter: a late turn is an agent error and its session is closed (a command is killed). A turn the agent did not
answer ends the case: its user message is recorded with no reply after it, and the transcript carries `agent_error`
("turn 2: no answer from ... within 5 s"), which makes the case `error` when it is judged — now or later from the
recorded folder — and the unanswered turn no answer at all (not an empty one a judge would fail).

The transcript is the shape the run readers read (docs/runs.md, "Transcripts"): `id` and `conversation_id` (the
session id), `case_id` (`STEM/ID`, what matches it to its golden case), `agent_version` and `model_name` (the last the
agent reported), `input_tokens` / `output_tokens` (summed over turns when it reports usage), `wall_ms` (the whole
session), `agent_error`, and the OpenAI chat `messages`: each user turn and the agent's reply (text and `tool_calls`).
Every text in it is scrubbed of the secrets the adapters used.
"""

from __future__ import annotations

import functools
import json
import re
import secrets as tokens
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from mbt.agents.adapters import Agent, AgentError, Reply, Session
from mbt.agents.spec import Secrets

T = TypeVar("T")


@dataclass(frozen=True)
class CaseToDrive:
    """A golden case as the driver sends it: its key (`STEM/ID`) and the user text of each turn, in order."""

    key: str
    questions: tuple[str, ...]


@dataclass
class Driven:
    case: CaseToDrive
    session_id: str
    transcript: dict[str, Any]
    error: str | None
    path: Path | None = None  # where the transcript was written


class Cancelled(AgentError):
    """The run was interrupted (Ctrl-C): the sessions in flight stop waiting for their agent."""


def within(timeout: float, call: Callable[[], T], what: str, cancel: threading.Event | None = None) -> T:
    """`call()` answered within `timeout` seconds, else AgentError; it runs in a thread of its own so that the
    deadline holds whatever the adapter does (a callable cannot be stopped: its thread is left to finish). `cancel`,
    once set, ends the wait at once (Cancelled)."""
    box: dict[str, Any] = {}
    done = threading.Event()

    def run() -> None:
        try:
            box["value"] = call()
        except BaseException as err:  # noqa: BLE001 - handed to the waiting thread as it is
            box["error"] = err
        finally:
            done.set()

    threading.Thread(target=run, daemon=True, name="mbt-agent-call").start()
    deadline = time.monotonic() + timeout
    while not done.wait(min(0.1, max(0.0, deadline - time.monotonic()))):
        if cancel is not None and cancel.is_set():
            raise Cancelled(f"interrupted while waiting {what}")
        if time.monotonic() >= deadline:
            raise AgentError(f"no answer {what} within {timeout:g} s")
    if "error" in box:
        raise box["error"]
    return box["value"]


def run_prefix() -> str:
    """A run's own session id prefix."""
    return f"mbt-{tokens.token_hex(4)}"


_UNSAFE = re.compile(r"[^A-Za-z0-9._\-\[\]]+")


def file_for(key: str, taken: set[str]) -> str:
    """The transcript's file, relative to the record folder: `STEM/ID.json`, each part made safe for a file name (a
    name two cases would share gets `-2`, `-3`, ...)."""
    parts = [(_UNSAFE.sub("_", p).strip("._") or "case") for p in key.split("/")]
    base = "/".join(parts[:-1] + [parts[-1][:120]])
    name, n = f"{base}.json", 1
    while name.casefold() in taken:
        n += 1
        name = f"{base}-{n}.json"
    taken.add(name.casefold())
    return name


def drive_one(agent: Agent, case: CaseToDrive, session_id: str, timeout: float, secrets: Secrets,
              cancel: threading.Event | None = None) -> Driven:
    """One case's session: its turns sent in order until the last or the first the agent does not answer."""
    messages: list[dict[str, Any]] = []
    replies: list[Reply] = []
    error: str | None = None
    started = time.monotonic()
    session: Session | None = None
    try:
        session = within(timeout, lambda: agent.open(session_id, case.key), "opening the session", cancel)
        for turn, question in enumerate(case.questions, start=1):
            asked = [*messages, {"role": "user", "content": question}]
            try:
                reply = within(timeout, functools.partial(session.send, asked, turn), f"to turn {turn}", cancel)
            except Cancelled:
                raise
            except AgentError as err:
                error = f"turn {turn}: {err}"
                messages = asked  # what was asked stays in the history; no answer follows it
                break
            replies.append(reply)
            messages = [*asked, reply.message()]
    except Cancelled:
        raise
    except AgentError as err:
        error = f"session: {err}"
    finally:
        if session is not None:
            _close(session, timeout)
    wall_ms = round((time.monotonic() - started) * 1000, 1)
    transcript: dict[str, Any] = {"id": session_id, "conversation_id": session_id, "case_id": case.key}
    versions = [r.agent_version for r in replies if r.agent_version]
    models = [r.model for r in replies if r.model]
    if versions:
        transcript["agent_version"] = versions[-1]
    if models:
        transcript["model_name"] = models[-1]
    for key, attr in (("input_tokens", "input_tokens"), ("output_tokens", "output_tokens")):
        counts = [getattr(r, attr) for r in replies if getattr(r, attr) is not None]
        if counts:
            transcript[key] = sum(counts)
    transcript["wall_ms"] = wall_ms
    if error is not None:
        transcript["agent_error"] = error
    transcript["messages"] = messages
    scrubbed = secrets.scrub_data(transcript)
    return Driven(case, session_id, scrubbed, scrubbed.get("agent_error"))


def _close(session: Session, timeout: float) -> None:
    try:
        within(timeout, session.close, "closing the session")
    except Exception:  # noqa: BLE001 - the session's answers are in; a failure to close it changes none of them
        pass


def drive(agent: Agent, cases: Sequence[CaseToDrive], folder: Path, timeout: float, concurrency: int,
          secrets: Secrets, prefix: str | None = None) -> list[Driven]:
    """Every case driven (at most `concurrency` at once) and its transcript written into `folder` as soon as its
    session ends; the results in the cases' order."""
    prefix = prefix or run_prefix()
    taken: set[str] = set()
    names = [file_for(case.key, taken) for case in cases]
    width = max(4, len(str(len(cases))))

    cancel = threading.Event()

    def one(index: int) -> Driven:
        driven = drive_one(agent, cases[index], f"{prefix}-{index + 1:0{width}d}", timeout, secrets, cancel)
        path = folder / names[index]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(driven.transcript, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        driven.path = path
        return driven

    pool = ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="mbt-agent")
    try:
        return list(pool.map(one, range(len(cases))))
    except BaseException:
        # Interrupted (or failed): the queued cases are dropped and those in flight stop waiting for their agent.
        cancel.set()
        raise
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
