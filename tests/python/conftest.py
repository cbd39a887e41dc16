"""Fixtures shared by the client-library tests (basin_server.py has the helpers behind them)."""

import pytest

from basin_server import running_basin


@pytest.fixture(scope="module")
def basin():
    """A `basin serve` with default settings (SQLite, in-process workers), one per test module."""
    with running_basin() as server:
        yield server
