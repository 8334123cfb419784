"""Shared test set-up: the `slow` marker (browser and packaging tests; `make test-fast` leaves them out)."""

from __future__ import annotations


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: starts a browser or builds and installs a wheel (left out by make test-fast)")
