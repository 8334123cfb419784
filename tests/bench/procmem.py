"""Memory of a process and its descendants, read from /proc, for the benchmarks that run mbt as a subprocess."""

from __future__ import annotations

import os
from pathlib import Path


def process_tree(root: int) -> list[int]:
    """`root` and every process descended from it (only `root` where /proc is missing)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            # The parent is the field after the state letter, past the command name (which may hold spaces).
            children.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry))
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo += children.get(pid, [])
    return tree


def _fields(pid: int, name: str) -> dict[str, int]:
    """The `kB` fields of /proc/PID/NAME, in bytes ({} once the process is gone)."""
    try:
        text = Path(f"/proc/{pid}/{name}").read_text()
    except OSError:
        return {}
    found = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        parts = rest.split()
        if len(parts) == 2 and parts[1] == "kB":
            found[key] = int(parts[0]) * 1024
    return found


def tree_rss(root: int) -> int:
    """Resident bytes of a process and all its descendants (0 where /proc is missing)."""
    return sum(_fields(pid, "status").get("VmRSS", 0) for pid in process_tree(root))


def pss_tree(root: int) -> tuple[int, int]:
    """(sum of the proportional set sizes, largest resident size) of a process and its descendants, in bytes."""
    rollups = [_fields(pid, "smaps_rollup") for pid in process_tree(root)]
    return sum(r.get("Pss", 0) for r in rollups), max((r.get("Rss", 0) for r in rollups), default=0)
