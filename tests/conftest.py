"""Shared test set-up: the `slow` marker (browser and packaging tests; `make test-fast` leaves them out), and the
compiled-model cache off (tests/test_cache.py turns it on in a folder of its own): tests that patch a stage of
loading must see that stage run, and no test may depend on what an earlier one left in the user's cache."""

from __future__ import annotations

import os

os.environ["MBT_NO_CACHE"] = "1"


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: starts a browser or builds and installs a wheel (left out by make test-fast)")
