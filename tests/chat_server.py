"""A real chat-completions server on localhost for the LLM judge's tests: stdlib http.server in a thread, replies
scripted per request, every request (headers and body) recorded, the most requests in flight at once counted."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """What the server answers: a status, a JSON body or raw text, headers, and a delay before answering."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


def completion(content: str | None, prompt_tokens: int = 10, completion_tokens: int = 5) -> Reply:
    """A chat completion whose message content is `content`."""
    return Reply(200, {"id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": "judge-model",
                       "choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": content}}],
                       "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                                 "total_tokens": prompt_tokens + completion_tokens}})


def verdict_reply(verdict: str, reason: str = "scripted") -> Reply:
    return completion(json.dumps({"verdict": verdict, "reason": reason}))


class ChatServer:
    """`script(n, body, headers)` -> Reply for the n-th request (0-based). `keep_alive`: HTTP/1.1 connections that
    stay open between requests, as a production server's do (HTTP/1.0 by default: one connection per request)."""

    def __init__(self, script: Callable[[int, dict, dict], Reply], keep_alive: bool = False):
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self.in_flight = 0
        self.most_in_flight = 0
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1" if keep_alive else "HTTP/1.0"
            # A reply's headers and body are two writes: with Nagle's algorithm the body would wait for the client's
            # delayed acknowledgement (~40 ms) on a kept-alive connection.
            disable_nagle_algorithm = True

            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):  # noqa: N802 - http.server's name
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                headers = {k.lower(): v for k, v in self.headers.items()}
                with server._lock:
                    index = len(server.requests)
                    server.requests.append({"path": self.path, "headers": headers, "body": body})
                    server.in_flight += 1
                    server.most_in_flight = max(server.most_in_flight, server.in_flight)
                try:
                    reply = server.script(index, body, headers)
                    time.sleep(reply.delay)
                    payload = reply.body if isinstance(reply.body, (str, bytes)) else json.dumps(reply.body)
                    data = payload.encode() if isinstance(payload, str) else payload
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (a time-out test)
                    pass
                finally:
                    with server._lock:
                        server.in_flight -= 1

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> ChatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
