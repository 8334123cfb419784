"""Opening a store: the engine, SQLite's settings for several writers, the migrations, and errors without secrets.

SQLite: WAL journal (readers never wait for a writer, and a writer never for readers), a busy timeout of 30 s (a
second writer waits for the first one's transaction instead of failing), foreign keys on (deleting a set deletes its
cases), and every write transaction begun with `BEGIN IMMEDIATE`, so two writers queue at the start of a transaction
rather than deadlock when both try to upgrade a read lock. PostgreSQL: psycopg 3, a connect timeout, the server's
default isolation (READ COMMITTED), which is what one transaction per batch needs.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from mbt.errors import MbtError
from mbt.store.schema import migrate
from mbt.store.url import StoreUrl

BUSY_TIMEOUT_S = 30
WRITE = "mbt_write"  # the execution option that makes a SQLite transaction begin IMMEDIATE


class StoreError(MbtError):
    """The store could not be opened, read or written (exit 2): the message names the store without its password."""


class Store:
    """One open store: `with Store(url) as store: with store.write() as conn: ...`. Opening migrates it."""

    def __init__(self, url: StoreUrl, create: bool = True) -> None:
        """`create` False (the commands that only read): a SQLite file that does not exist is an error, not made."""
        self.url = url
        if url.dialect == "sqlite":
            if not create and not _sqlite_exists(url):
                raise StoreError(f"no result store at {url.shown} ({url.origin}): nothing was saved there yet "
                                 "(mbt eval --save, mbt runs --save)")
            _make_folder(url)
        self.engine = self._engine()
        try:
            with self.write() as conn:
                self.migrated = migrate(conn)
        except BaseException:
            self.engine.dispose()
            raise

    def _engine(self) -> Engine:
        if self.url.dialect == "sqlite":
            engine = create_engine(self.url.url, connect_args={"timeout": BUSY_TIMEOUT_S})
            event.listen(engine, "connect", _sqlite_connect)
            event.listen(engine, "begin", _sqlite_begin)
            return engine
        return create_engine(self.url.url, connect_args={"connect_timeout": 10, "application_name": "mbt"})

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.engine.dispose()

    @contextlib.contextmanager
    def read(self) -> Iterator[Connection]:
        """A read transaction (a snapshot on SQLite's WAL)."""
        with self.errors(), self.engine.connect() as conn, conn.begin():
            yield conn

    @contextlib.contextmanager
    def write(self) -> Iterator[Connection]:
        """One write transaction: committed at the end of the block, rolled back on any error or interrupt."""
        with self.errors(), self.engine.connect() as conn:
            conn = conn.execution_options(**{WRITE: True})
            with conn.begin():
                yield conn

    @contextlib.contextmanager
    def errors(self) -> Iterator[None]:
        """A database error as one line naming the store (its password scrubbed from everything shown)."""
        try:
            yield
        except MbtError as err:
            raise StoreError(self.url.scrub(err.message)) from None
        except DBAPIError as err:
            raise StoreError(self.url.scrub(f"result store {self.url.shown}: {_first_line(err.orig)}")) from None
        except SQLAlchemyError as err:
            raise StoreError(self.url.scrub(f"result store {self.url.shown}: {_first_line(err)}")) from None


def _first_line(err: Any) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


def _sqlite_path(url: StoreUrl) -> str | None:
    """The SQLite file a URL names; None for an in-memory or URI-named database."""
    database = url.url.removeprefix("sqlite:///")
    return database if database and database != ":memory:" and not database.startswith("file:") else None


def _sqlite_exists(url: StoreUrl) -> bool:
    path = _sqlite_path(url)
    return path is None or Path(path).is_file()


def _make_folder(url: StoreUrl) -> None:
    """The SQLite file's folder (`.mbt/` for the default store) is made when missing."""
    database = _sqlite_path(url)
    if database is not None:
        try:
            Path(database).parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise StoreError(f"result store {url.shown}: cannot make its folder: {err.strerror or err}") from None


def _sqlite_connect(dbapi_connection: Any, _record: Any) -> None:
    # pysqlite's own transaction handling is turned off: the `begin` event below issues BEGIN itself.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_S * 1000}")
    _wal(cursor)
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")  # with WAL: a power cut may lose the last commits, never integrity
    cursor.execute("PRAGMA cache_size=-65536")  # 64 MiB of pages (the default is 2): a set of 100,000 cases
    cursor.close()


def _wal(cursor: Any) -> None:
    """Switch the file to WAL, waiting as the busy timeout would. SQLite answers a journal-mode change with "database
    is locked" at once, without its busy handler, while another connection is making or recovering the same new file
    (two commands opening a new store together: seen in CI), so the wait is ours: retried with backoff until the
    busy timeout."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    delay = 0.005
    while True:
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as err:
            if "locked" not in str(err) and "busy" not in str(err) or time.monotonic() >= deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.25)


def _sqlite_begin(conn: Connection) -> None:
    conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get(WRITE) else "BEGIN")
