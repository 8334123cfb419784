"""Headless Chromium driven as a person drives it, for the tests and benches of pages with a script (the result
viewer): the Chrome DevTools Protocol over a pipe (`--remote-debugging-pipe`: JSON messages ended by NUL bytes on
file descriptors 3 and 4), so no port is opened and nothing beyond Python's standard library is needed.

`Browser` opens pages, waits for a condition the page sets, clicks the centre of an element with real mouse events,
types with real key and text input, reads values back, takes screenshots, and collects what the page logs as an
error (uncaught exceptions, console.error, failed loads). The browser is the one tests/test_html_report.py uses:
Debian's `chromium`, installed by `make test`.
"""

from __future__ import annotations

import base64
import json
import os
import select
import subprocess
import time
from pathlib import Path
from typing import Any

from tests.test_html_report import chromium


class BrowserError(AssertionError):
    pass


class Browser:
    """`with Browser(tmp_path / "profile") as b: b.open(url); b.click("#x"); b.value("...")`."""

    def __init__(self, profile: Path, width: int = 1400, height: int = 1000) -> None:
        to_child, self._write = os.pipe()
        self._read, from_child = os.pipe()

        def fds() -> None:  # the child reads commands on 3 and writes answers on 4
            os.dup2(to_child, 3)
            os.dup2(from_child, 4)

        self.process = subprocess.Popen(
            [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
             "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
             "--hide-scrollbars", "--allow-file-access-from-files", f"--user-data-dir={profile}",
             f"--window-size={width},{height}", "about:blank"],
            pass_fds=(3, 4, to_child, from_child), preexec_fn=fds, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_child)
        os.close(from_child)
        self._buffer = b""
        self._next = 0
        self.errors: list[str] = []
        self.width, self.height = width, height
        target = self.send("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True},
                                 session=False)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable")
        self.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1,
                                                         "mobile": False})

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.send("Browser.close", session=False, timeout=10)
        except (BrowserError, OSError):
            pass
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for fd in (self._read, self._write):
            try:
                os.close(fd)
            except OSError:
                pass

    # ---------------------------------------------------------------- the protocol

    def send(self, method: str, params: dict[str, Any] | None = None, session: bool = True,
             timeout: float = 60) -> dict[str, Any]:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        os.write(self._write, json.dumps(message).encode("utf-8") + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._message(deadline)
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self._event(reply)

    def _message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("no answer from the browser in time")
            ready, _, _ = select.select([self._read], [], [], left)
            if ready:
                chunk = os.read(self._read, 1 << 20)
                if not chunk:
                    raise BrowserError("the browser closed its pipe (it crashed or was not started)")
                self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def _event(self, event: dict[str, Any]) -> None:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            self.errors.append(f"uncaught: {details.get('exception', {}).get('description') or details.get('text')}")
        elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
            self.errors.append("console.error: " + " ".join(str(a.get("value", a.get("description")))
                                                              for a in params.get("args", [])))
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            self.errors.append(f"log: {params['entry'].get('text')} {params['entry'].get('url', '')}".strip())

    def pump(self, seconds: float = 0.0) -> None:
        """Read the events that came in (errors are kept), for `seconds` at most."""
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if b"\0" not in self._buffer:
                ready, _, _ = select.select([self._read], [], [], max(left, 0))
                if not ready:
                    return
            self._event(self._message(time.monotonic() + 5))

    # ---------------------------------------------------------------- what a person does

    def value(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (awaited when it is a promise)."""
        found = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                               "awaitPromise": True})
        if "exceptionDetails" in found:
            raise BrowserError(f"{expression}: {found['exceptionDetails'].get('exception', {}).get('description')}")
        return found.get("result", {}).get("value")

    def wait_for(self, expression: str, timeout: float = 60) -> float:
        """Wait until the expression is true in the page; returns the seconds waited."""
        start = time.monotonic()
        while time.monotonic() - start < timeout:
            # false, not an error, while a new page has no body yet
            if self.value(f"(function () {{ try {{ return !!({expression}); }} catch (e) {{ return false; }} }})()"):
                return time.monotonic() - start
            self.pump(0.01)
        raise BrowserError(f"`{expression}` was not true within {timeout} s; page errors: {self.errors}")

    def open(self, url: str, ready: str = "document.body && document.body.dataset.ready === '1'",
             timeout: float = 60) -> None:
        self.send("Page.navigate", {"url": url})
        # The page may rewrite its fragment (the viewer keeps its filters there): the address before it counts.
        self.wait_for(f"location.href.split('#')[0] === {json.dumps(url.split('#')[0])} && "
                      f"document.readyState !== 'loading' && ({ready})", timeout)

    def _point(self, selector: str, left: float | None) -> tuple[float, float]:
        box = self.value(f"""(function () {{
            var node = document.querySelector({json.dumps(selector)});
            if (!node) {{ return null; }}
            node.scrollIntoView({{block: "center", inline: "center"}});
            var r = node.getBoundingClientRect();
            return [r.left, r.top, r.width, r.height];
        }})()""")
        if box is None:
            raise BrowserError(f"no element `{selector}` on the page")
        if box[2] == 0 or box[3] == 0:
            raise BrowserError(f"`{selector}` is not shown (its box is empty)")
        return box[0] + (box[2] / 2 if left is None else left), box[1] + box[3] / 2

    def click(self, selector: str, left: float | None = None) -> None:
        """A left click on the element, as the mouse makes it (moved, pressed, released): at its centre, or `left`
        pixels from its left edge (a date field's first part)."""
        x, y = self._point(selector, left)
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left",
                                                   "clickCount": 0 if kind == "mouseMoved" else 1})

    def key(self, key: str, code: str, keycode: int, modifiers: int = 0, commands: list[str] | None = None) -> None:
        for kind in ("keyDown", "keyUp"):
            params: dict[str, Any] = {"type": kind, "key": key, "code": code, "windowsVirtualKeyCode": keycode,
                                      "modifiers": modifiers}
            if commands and kind == "keyDown":
                params["commands"] = commands
            self.send("Input.dispatchKeyEvent", params)

    def press(self, text: str) -> None:
        """Each character as a key pressed and released (a date field takes its digits so, not as pasted text)."""
        for char in text:
            code = f"Digit{char}" if char.isdigit() else f"Key{char.upper()}"
            self.send("Input.dispatchKeyEvent", {"type": "keyDown", "key": char, "code": code, "text": char,
                                                 "windowsVirtualKeyCode": ord(char.upper())})
            self.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": char, "code": code,
                                                 "windowsVirtualKeyCode": ord(char.upper())})

    def type(self, selector: str, text: str, replace: bool = True) -> None:
        """Click into the field, select what it holds (Ctrl+A) and delete it when `replace`, then type `text`."""
        self.click(selector)
        if replace:
            self.key("a", "KeyA", 65, modifiers=2, commands=["selectAll"])
            self.key("Backspace", "Backspace", 8)
        if text:
            self.send("Input.insertText", {"text": text})

    def screenshot(self, path: Path, full: bool = True) -> None:
        params: dict[str, Any] = {"format": "png", "captureBeyondViewport": full}
        path.write_bytes(base64.b64decode(self.send("Page.captureScreenshot", params)["data"]))
