"""Shared helpers for the format tests: run `basin convert`, and require the independent
implementations (GDAL's command-line tools from Debian's gdal-bin, meshio from PyPI) that the
tests compare Basin against.

Outside CI a missing tool, or a format `basin convert` reports as not implemented, skips the
test with a message saying what is missing; in CI (CI set and not "false") it fails, so that a
comparison is never silently dropped.
"""

import importlib
import os
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BINARY = os.environ.get("TEST_BASIN_BINARY", os.path.join(ROOT, "target", "debug", "basin"))
IN_CI = os.environ.get("CI", "") not in ("", "false")


def skip_or_fail(message):
    """Skips the test with `message` outside CI; fails it with `message` in CI."""
    if IN_CI:
        pytest.fail(message)
    pytest.skip(message)


def require_module(name):
    """Imports Python module `name` (from requirements.txt); outside CI a missing one skips the
    whole test module with a message, in CI it fails."""
    try:
        return importlib.import_module(name)
    except ImportError as error:
        message = f"Python module {name} is missing (pip install -r tests/python/requirements.txt)"
        if IN_CI:
            raise ImportError(message) from error
        pytest.skip(message, allow_module_level=True)


def require_tool(name, install="apt-get install gdal-bin"):
    """The path of command-line tool `name`; skips (locally) or fails (CI) when missing."""
    path = shutil.which(name)
    if path is None:
        skip_or_fail(f"{name} not found ({install})")
    return path


def require_implemented(result):
    """`result` of a `convert(..., check=False)`; skips (locally) or fails (CI) when `basin
    convert` says a format it needs is not implemented."""
    if result.returncode != 0 and "not implemented" in result.stderr:
        skip_or_fail(f"format not implemented: {result.stderr.strip()}")
    return result


def convert(source, target, *args, check=True):
    """Runs `basin convert source target --force *args`; returns the CompletedProcess."""
    command = [BINARY, "convert", str(source), str(target), "--force", *map(str, args)]
    result = subprocess.run(command, capture_output=True, text=True)
    if check and result.returncode != 0:
        raise AssertionError(f"{' '.join(command)} failed:\n{result.stderr}")
    return result


def run(*command, input=None):
    """Runs a tool (with `input` on its stdin), failing the test with its stderr when it fails;
    returns stdout."""
    result = subprocess.run([str(part) for part in command], capture_output=True, text=True,
                            input=input)
    if result.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, command))} failed:\n{result.stderr}")
    return result.stdout
