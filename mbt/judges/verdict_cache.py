"""The LLM judge's persistent cache: one SQLite file, a verdict per key.

The key is a SHA-256 of the judge's name, the model, the server's base URL, the prompt version and the request's
messages (which hold the criterion, its definition and every judged text): an unchanged re-run asks nothing of the
server, and any change to an input, the prompt or the model asks again. The API key is never part of a key or a row.
Errors are stored too, so that an unchanged re-run sends no request at all; re-judging errors is asked for explicitly
(seed 001's "Chạy lại lỗi"). The file lives in mbt's cache folder unless a path is given.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

from mbt.files import cache_dir
from mbt.judges.verdicts import Verdict

SCHEMA = """CREATE TABLE IF NOT EXISTS verdicts (
    key TEXT PRIMARY KEY, verdict TEXT NOT NULL, reason TEXT NOT NULL, judge TEXT NOT NULL,
    judge_version TEXT NOT NULL)"""


def default_path() -> Path:
    return cache_dir() / "judges.sqlite3"


def cache_key(**parts: Any) -> str:
    """A stable key from JSON-able parts (sorted, so the order of arguments does not matter)."""
    text = json.dumps(parts, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class VerdictCache:
    """Verdicts by key in one SQLite file; safe to share between the judge's worker threads."""

    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        # A cache, not a record: a crash may lose the last verdicts (asked again next time), never corrupt the file;
        # a sync per verdict would cost a disk flush per request (a 10,000-case eval spent seconds in them).
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(SCHEMA)

    def get(self, key: str) -> Verdict | None:
        with self._lock:
            row = self._db.execute("SELECT verdict, reason, judge, judge_version FROM verdicts WHERE key = ?",
                                   (key,)).fetchone()
        return Verdict(*row) if row else None

    def put(self, key: str, verdict: Verdict) -> None:
        self.put_many([(key, verdict)])

    def put_many(self, found: list[tuple[str, Verdict]]) -> None:
        """Several verdicts in one transaction."""
        with self._lock:
            with self._db:  # one transaction (the connection is in autocommit mode otherwise)
                self._db.execute("BEGIN")
                self._db.executemany("INSERT OR REPLACE INTO verdicts VALUES (?, ?, ?, ?, ?)",
                                     [(key, v.verdict, v.reason, v.judge, v.judge_version) for key, v in found])

    def close(self) -> None:
        with self._lock:
            self._db.close()
