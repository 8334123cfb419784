"""Runs the mbt command line in-process for the tests: the same `mbt.cli.main`, without starting Python each time.

A subprocess run costs ~0.5 s of interpreter and import start-up; most CLI tests only need argv in, exit code and
the two streams out. `run_mbt` returns a `subprocess.CompletedProcess` like `subprocess.run(..., text=True)` did, so
the tests read the same fields. A few tests still start a real process (tests/test_cli.py) to keep the entry point
itself under test.
"""

from __future__ import annotations

import contextlib
import gc
import io
import os
import subprocess
import traceback
from pathlib import Path

from mbt import cli, sources


def _stream() -> io.TextIOWrapper:
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="", write_through=True)


def run_mbt(*args, cwd: str | Path | None = None, env: dict[str, str] | None = None,
            terminal: bool = False) -> subprocess.CompletedProcess:
    """`terminal`: stderr is a pseudo-terminal (where a person watches), as progress bars need; stdout stays a pipe."""
    if terminal:
        with _terminal() as (err, read_back):
            done = _run([str(a) for a in args], cwd, env, _stream(), err)
        return subprocess.CompletedProcess(done.args, done.returncode, done.stdout, read_back())
    return _run([str(a) for a in args], cwd, env, _stream(), _stream())


def _run(argv: list[str], cwd, env, out: io.TextIOWrapper, err: io.TextIOWrapper) -> subprocess.CompletedProcess:
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    code = 0
    try:
        os.environ.update(env or {})
        if cwd is not None:
            os.chdir(cwd)
        sources.clear_cache()  # a test may rewrite a document between runs, as a user would between commands
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                cli.main(argv)
            except SystemExit as exit_:
                code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
            except BaseException:  # noqa: BLE001 - a crash is shown as a subprocess would show it
                traceback.print_exc()
                code = 1
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        gc.unfreeze()  # the api freezes what a run built (a one-shot process's habit); a test session goes on
    return subprocess.CompletedProcess(["mbt", *argv], code, _text(out), _text(err) if _readable(err) else "")


def _readable(stream: io.TextIOWrapper) -> bool:
    return isinstance(stream.buffer, io.BytesIO)


@contextlib.contextmanager
def _terminal():
    """A 100-column pseudo-terminal as a text stream, and a function returning all that was written to it. The
    leader is drained by a thread while the command runs, so a chatty command never blocks on a full buffer."""
    import fcntl
    import pty
    import struct
    import termios
    import threading

    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    chunks: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the follower was closed: nothing more to read
                return
            if not chunk:
                return
            chunks.append(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    stream = io.TextIOWrapper(os.fdopen(follower, "wb", buffering=0), encoding="utf-8", write_through=True)
    try:
        yield stream, lambda: b"".join(chunks).decode("utf-8", "replace")
    finally:
        stream.close()  # closes the follower: the reader sees the end
        reader.join(timeout=10)
        os.close(leader)


def _text(stream: io.TextIOWrapper) -> str:
    stream.flush()
    return stream.buffer.getvalue().decode("utf-8")
