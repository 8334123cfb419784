"""`mbt serve`: reference agents (mbt.agents.reference) behind an OpenAI-compatible chat-completions endpoint.

`POST /v1/chat/completions` (also `/chat/completions`) takes `{model, messages}` and answers a `chat.completion`:
`choices[0].message` with the reply's `content` and, when the step called tools, its `tool_calls` (`finish_reason:
tool_calls`), `model` (the model's name), `system_fingerprint` (the agent's version: `mbt-reference NAME`, with the
fault injected). No `usage`: the agent has no tokens to count. `GET /v1/models` lists the models served. With one
model served the request's `model` is not read; with several it names the one to talk to. Streaming is not offered
(`stream: true` is refused with 400). An `Authorization: Bearer KEY` is required when `--api-key-env NAME` says which
environment variable holds KEY.

Why the standard library's ThreadingHTTPServer and no web framework: the endpoint is one JSON route and a listing,
each request a pure function of its body (the conversation), so nothing a framework adds is needed, and mbt gains no
dependency. It listens on 127.0.0.1 unless told otherwise: the reference agent is for tests and demos, not a network
service.
"""

from __future__ import annotations

import hmac
import json
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from mbt.agents.reference import ConversationError, ReferenceAgent

MAX_BODY = 8 * 1024 * 1024
ROUTES = ("/v1/chat/completions", "/chat/completions")


class AgentServer:
    """The server over `agents` (by model name); `start()` listens in a thread, `serve()` in the caller's."""

    def __init__(self, agents: Sequence[ReferenceAgent], host: str = "127.0.0.1", port: int = 0,
                 api_key: str | None = None, log: Any = None):
        self.agents = {a.model.name: a for a in agents}
        self.api_key = api_key
        self.log = log  # a text stream for one line per request, or None
        self.requests = 0
        self._lock = threading.Lock()
        self.httpd = ThreadingHTTPServer((host, port), self._handler())
        self.httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The base URL clients take (OpenAI's `base_url`): `http://HOST:PORT/v1`."""
        host, port = self.httpd.server_address[:2]
        name = host.decode() if isinstance(host, bytes) else str(host)
        shown = f"[{name}]" if ":" in name else name
        return f"http://{shown}:{port}/v1"

    def start(self) -> AgentServer:
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True, name="mbt-serve")
        self._thread.start()
        return self

    def serve(self) -> None:
        """Answer in the caller's thread until interrupted; the socket is closed however it ends."""
        try:
            self.httpd.serve_forever()
        finally:
            self.httpd.server_close()

    def stop(self) -> None:
        """Stop the thread `start` began (waiting for the loop to end), and close the socket."""
        if self._thread is not None:
            self.httpd.shutdown()
            self._thread.join()
            self._thread = None
        self.httpd.server_close()

    def __enter__(self) -> AgentServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- answering
    def answer(self, body: Any) -> tuple[int, dict[str, Any]]:
        """(status, JSON) for one chat-completions request body."""
        if not isinstance(body, dict):
            return 400, _error("the body must be a JSON object with `messages`")
        if body.get("stream"):
            return 400, _error("streaming is not offered: send `stream: false`")
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return 400, _error("`messages` must be a non-empty list of chat messages")
        agent = self._agent(body.get("model"))
        if agent is None:
            return 404, _error(f"no model named {body.get('model')!r} is served (served: "
                                  f"{', '.join(sorted(self.agents))})", "model_not_found")
        try:
            reply = agent.reply(messages)
        except ConversationError as err:
            return 400, _error(str(err))
        with self._lock:
            self.requests += 1
            number = self.requests
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            message["tool_calls"] = reply.tool_calls
        return 200, {"id": f"chatcmpl-mbt-{number}", "object": "chat.completion", "created": int(time.time()),
                     "model": agent.model.name, "system_fingerprint": agent.version,
                     "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason,
                                  "logprobs": None}]}

    def _agent(self, name: Any) -> ReferenceAgent | None:
        if len(self.agents) == 1:
            return next(iter(self.agents.values()))
        return self.agents.get(name) if isinstance(name, str) else None

    def models(self) -> dict[str, Any]:
        return {"object": "list", "data": [{"id": name, "object": "model", "created": 0, "owned_by": "mbt"}
                                           for name in sorted(self.agents)]}

    def authorised(self, header: str | None) -> bool:
        if self.api_key is None:
            return True
        given = (header or "").removeprefix("Bearer ").strip()
        return hmac.compare_digest(given.encode(), self.api_key.encode())

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's signature
                if server.log is not None:
                    server.log.write(f"mbt serve: {self.address_string()} {format % args}\n")

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                if self.path.rstrip("/") in ("/v1/models", "/models"):
                    if not server.authorised(self.headers.get("Authorization")):
                        self._send(401, _error("a valid `Authorization: Bearer KEY` is required", "invalid_api_key"))
                        return
                    self._send(200, server.models())
                else:
                    self._send(404, _error(f"no route {self.path} (POST /v1/chat/completions, GET /v1/models)"))

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                if self.path.split("?")[0].rstrip("/") not in ROUTES:
                    self._send(404, _error(f"no route {self.path} (POST /v1/chat/completions)"))
                    return
                if not server.authorised(self.headers.get("Authorization")):
                    self._send(401, _error("a valid `Authorization: Bearer KEY` is required", "invalid_api_key"))
                    return
                try:
                    length = int(self.headers.get("Content-Length") or 0)
                except ValueError:
                    length = -1
                if not 0 < length <= MAX_BODY:
                    self._send(400 if length <= 0 else 413, _error("the body must be JSON of at most 8 MiB "
                                                                   "with its Content-Length"))
                    return
                try:
                    body = json.loads(self.rfile.read(length).decode("utf-8"))
                except (UnicodeDecodeError, ValueError):
                    self._send(400, _error("the body is not JSON"))
                    return
                self._send(*server.answer(body))

        return Handler


def _error(message: str, code: str = "invalid_request_error") -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "code": code}}
