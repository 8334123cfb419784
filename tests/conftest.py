"""Shared test set-up: the `slow` marker (browser and packaging tests; `make test-fast` leaves them out), the
compiled-model cache off (tests/test_cache.py turns it on in a folder of its own): tests that patch a stage of
loading must see that stage run, and no test may depend on what an earlier one left in the user's cache; and the
`started` fixture of the `--jobs` tests; the result store's `store_url` (each test on SQLite and on a PostgreSQL
server started for the session, tests/pg_server.py)."""

from __future__ import annotations

import os

import pytest

from tests.pg_server import pg_server, store_url  # noqa: F401 - the result store's fixtures: SQLite and PostgreSQL

os.environ["MBT_NO_CACHE"] = "1"


@pytest.fixture
def started(monkeypatch):
    """The number of parts handed to forked workers, per mbt.measure.parallel.Workers made."""
    from mbt.measure import parallel

    seen: list[int] = []
    real = parallel.Workers.__init__

    def spy(self, work, parts):
        seen.append(parts - 1)
        real(self, work, parts)

    monkeypatch.setattr(parallel.Workers, "__init__", spy)
    return seen


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: starts a browser or builds and installs a wheel (left out by make test-fast)")
