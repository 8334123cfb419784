"""Whether the writer of a `running` result set is alive (mbt.store.write's docstring: a writer keeps a heartbeat in
its set's meta and names its host and process): the list, a set's page, the viewer and `--resume` all ask here."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path
from typing import Any

LEASE_S = 60.0  # a heartbeat older than this: the writer is gone (a resumed run may take its set over)


def writer_alive(writer: dict[str, Any] | None) -> str | None:
    """Why the writer a running set's meta names is taken to be alive (module docstring), or None: gone. A set
    written by an mbt that named no writer has none alive."""
    if not writer:
        return None
    host, pid = writer.get("host"), writer.get("pid")
    if host == socket.gethostname() and isinstance(pid, int) and os.name == "posix":
        # On this machine the process itself answers (Windows has no signal 0: the heartbeat decides there).
        if _process_alive(pid):
            return f"its writer, process {pid} on this machine, is still running"
        return None
    age = time.time() - float(writer.get("heartbeat") or 0)
    if age < LEASE_S:
        return (f"its writer, process {pid} on {host}, was heard from {max(age, 0):.0f} s ago (a writer silent for "
                f"{LEASE_S:.0f} s is taken to be gone)")
    return None


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    stat = Path(f"/proc/{pid}/stat")
    try:  # a zombie (killed, not yet reaped by its parent) is no writer
        return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True
