"""A throwaway PostgreSQL server for the result store's tests, and the `store_url` fixture that runs a test on SQLite
and on PostgreSQL.

The server is Debian's `postgresql` package (`make test` installs it; its programs are in /usr/lib/postgresql/N/bin,
not on the PATH): `initdb` into a temporary folder with password authentication (a superuser `mbt` whose password is
PLANTED, so the tests can look for it in everything mbt prints and stores), then `pg_ctl start` listening on
127.0.0.1 at a free port and on a unix socket in that folder, with fsync off (a test server: nothing to keep). As root,
both run as the `postgres` user through `runuser` (PostgreSQL refuses to run as root); the folder is made theirs.
Each test gets a database of its own. When the server cannot start, the test fails and says why: never a skip.
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import quote

import pytest

# A password with characters a URL must escape: it must appear in no output, log or stored row (tests look for it
# as written and percent-encoded).
PLANTED = "Pl4nted:s3cret/@#42"
USER = "mbt"


def _binary(name: str) -> str:
    found = shutil.which(name)
    if found:
        return found
    versions = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"),
                      key=lambda p: int(Path(p).parts[4]) if Path(p).parts[4].isdigit() else 0)
    if versions:
        return versions[-1]
    raise RuntimeError(f"PostgreSQL's `{name}` is not installed (neither on the PATH nor in /usr/lib/postgresql/*/bin): "
                       "`make test` installs Debian's package postgresql (apt-get install postgresql)")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PgServer:
    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="mbt-pg-", dir="/tmp"))  # short: a socket path has ~100 bytes
        self.data = self.folder / "data"
        self.log = self.folder / "server.log"
        self.port = _free_port()
        self.as_user: list[str] = []
        if os.geteuid() == 0:
            try:
                owner = pwd.getpwnam("postgres")
            except KeyError:
                raise RuntimeError("running as root, and there is no `postgres` user to run PostgreSQL as (Debian's "
                                   "postgresql package makes it)") from None
            os.chown(self.folder, owner.pw_uid, owner.pw_gid)
            self.as_user = [shutil.which("runuser") or "/usr/sbin/runuser", "-u", "postgres", "--"]
        self.folder.chmod(0o700)
        self._databases = itertools.count(1)

    def _run(self, *argv: str) -> None:
        done = subprocess.run([*self.as_user, *argv], capture_output=True, text=True, timeout=120, check=False)
        if done.returncode != 0:
            log = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
            raise RuntimeError(f"{' '.join(argv[:2])} failed ({done.returncode}): {done.stderr.strip()[-2000:]}"
                               + (f"\nserver log:\n{log}" if log else ""))

    def start(self) -> PgServer:
        password_file = self.folder / "pw"
        password_file.write_text(PLANTED + "\n")
        if self.as_user:
            owner = pwd.getpwnam("postgres")
            os.chown(password_file, owner.pw_uid, owner.pw_gid)
        self._run(_binary("initdb"), "-D", str(self.data), "-U", USER, "--auth=scram-sha-256",
                  f"--pwfile={password_file}", "-E", "UTF8", "--no-locale", "--no-sync")
        password_file.unlink()
        options = (f"-h 127.0.0.1 -p {self.port} -k {self.folder} -c fsync=off -c synchronous_commit=off "
                   "-c full_page_writes=off -c max_connections=60")
        self._run(_binary("pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "-t", "60",
                  "start")
        return self

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self._run(_binary("pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.folder, ignore_errors=True)

    def url(self, database: str = "postgres", password: str = PLANTED) -> str:
        return f"postgresql://{USER}:{quote(password, safe='')}@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """A fresh, empty database; its name."""
        import psycopg

        name = f"t{next(self._databases)}"
        with psycopg.connect(host="127.0.0.1", port=self.port, user=USER, password=PLANTED, dbname="postgres",
                             autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return name


@pytest.fixture(scope="session")
def pg_server():
    server = PgServer()
    try:
        server.start()
    except Exception as err:  # noqa: BLE001 - the test fails with why, never skips
        server.stop()
        pytest.fail(f"the throwaway PostgreSQL server did not start: {err}", pytrace=False)
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request, tmp_path):
    """The same test on a SQLite file and on a fresh PostgreSQL database (with the planted password in its URL)."""
    if request.param == "sqlite":
        return str(tmp_path / "results.db")
    server = request.getfixturevalue("pg_server")
    return server.url(server.new_database())
