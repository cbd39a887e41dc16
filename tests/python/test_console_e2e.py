"""The Basin console in a real browser: every scenario in tests/browser/console/ runs in
headless Chromium (Debian's chromium driven by playwright-core, tests/browser/console-e2e.mjs)
against one fresh `basin serve` with the console as embedded in the binary.

Each scenario signs in through the page, works only through the page (checking the result with
the API where the page's word is not enough: a tile's pixels, a restored item), and fails on a
script error, a Content-Security-Policy or Trusted Types violation, or an axe-core violation of
serious or critical impact on any page it visits.

TEST_BASIN_CONSOLE_SCREENSHOTS=<folder> saves the screenshots of docs/console.md there
(scripts/console-screenshots). Outside CI a missing node, playwright-core (`npm ci` in
tests/browser) or chromium skips; in CI it fails.
"""

import glob
import os
import shutil
import subprocess

import pytest

from basin_server import ROOT, running_basin
from formats_support import skip_or_fail

BROWSER_DIR = os.path.join(ROOT, "tests", "browser")
SCENARIOS = sorted(
    os.path.relpath(path, BROWSER_DIR)
    for path in glob.glob(os.path.join(BROWSER_DIR, "console", "*.mjs"))
)


@pytest.fixture(scope="module")
def console_basin():
    """One server for every scenario: scenarios name what they create uniquely."""
    with running_basin({"BASIN_TRANSFERS__POLL_INTERVAL_MS": "200"}) as server:
        yield server


def _require_browser():
    node = shutil.which("node")
    if node is None:
        skip_or_fail("node is missing (Node.js 20 or later); the console tests need it")
    for package in ("playwright-core", "axe-core"):
        if not os.path.isdir(os.path.join(BROWSER_DIR, "node_modules", package)):
            skip_or_fail(f"{package} is missing: run `npm ci` in tests/browser")
    chromium = os.environ.get("TEST_BASIN_CHROMIUM") or shutil.which("chromium")
    if chromium is None:
        skip_or_fail("chromium is missing (apt-get install chromium, or set TEST_BASIN_CHROMIUM)")
    return node, chromium


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_console_scenario(console_basin, scenario):
    node, chromium = _require_browser()
    arguments = [
        node, "console-e2e.mjs", "--base", console_basin.address, "--key", console_basin.api_key,
        "--token", console_basin.back_office_token, "--scenario", scenario,
    ]
    screenshots = os.environ.get("TEST_BASIN_CONSOLE_SCREENSHOTS")
    if screenshots:
        arguments += ["--screenshots", os.path.abspath(screenshots)]
    result = subprocess.run(
        arguments, cwd=BROWSER_DIR, capture_output=True, text=True,
        env={**os.environ, "TEST_BASIN_CHROMIUM": chromium}, timeout=600,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-20000:]


def test_every_scenario_is_collected():
    assert len(SCENARIOS) >= 1, "tests/browser/console/ holds the console's scenarios"
