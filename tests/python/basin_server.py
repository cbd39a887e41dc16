"""A running `basin serve` for the client-library tests: started from the built binary on a free
loopback port with its own data folder, the bootstrap API key read from its first-start output,
and small helpers to call its JSON API the way the original platform's clients do (header
`svc-open-api-key`, `api-version`, `Content-Type: application/json-patch+json`;
docs/api-conventions.md#requests).

The BackOffice token of the first-start output is kept too (`back_office_token`; `call(...,
token=...)` sends a bearer token instead of the key). conftest.py turns it into the `basin`
fixture; tests that need other settings start their own with `running_basin(...)`.
"""

import contextlib
import json
import os
import queue
import re
import subprocess
import tempfile
import threading
import urllib.error
import urllib.parse
import urllib.request

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BINARY = os.environ.get("TEST_BASIN_BINARY", os.path.join(ROOT, "target", "debug", "basin"))
SECRET = "python-test-secret-python-test-secret-0123"
MIB = 1024 * 1024
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def data(length, seed=0):
    """Deterministic bytes that differ from position to position (no fixtures in the repo)."""
    block = bytes((i * 7 + seed) % 251 for i in range(251 * 64))
    repeats, rest = divmod(length, len(block))
    return block * repeats + block[:rest]


def _pump(stream, lines, everything):
    for line in iter(stream.readline, ""):
        line = ANSI.sub("", line)
        everything.append(line)
        lines.put(line)


class ApiError(Exception):
    """A non-2xx answer of Basin's API: `status`, `headers` (case-insensitive) and the parsed
    JSON `body`."""

    def __init__(self, status, headers, body):
        super().__init__(f"HTTP {status}: {body}")
        self.status, self.headers, self.body = status, headers, body


class Basin:
    """A running `basin serve` and what the tests need from it."""

    def __init__(self, folder, settings=None, restart_of=None):
        # Only the settings below: BASIN_* variables of the calling shell would be read as
        # configuration keys (the harness's own variables start with TEST_BASIN_ instead).
        env = {key: value for key, value in os.environ.items() if not key.startswith("BASIN_")}
        env.update({
            "BASIN_AUTH__JWT_SECRET": SECRET,
            "BASIN_LOG__FORMAT": "text",
            "NO_COLOR": "1",
        })
        env.update(settings or {})
        self.process = subprocess.Popen(
            [BINARY, "serve", "--listen", "127.0.0.1:0", "--data-dir", os.path.join(folder, "data")],
            cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        self.stdout, self.stderr = queue.Queue(), queue.Queue()
        # Every line printed so far, both streams (for checks that logs keep secrets out).
        self.output = []
        for stream, lines in ((self.process.stdout, self.stdout), (self.process.stderr, self.stderr)):
            threading.Thread(target=_pump, args=(stream, lines, self.output), daemon=True).start()
        self.address = self._wait_for(self.stderr, r"listening on (http://\S+)")
        if restart_of is not None:
            # Only a first start prints credentials; a restart keeps the earlier ones.
            self.api_key, self.back_office_token = restart_of.api_key, restart_of.back_office_token
            return
        self.api_key = self._wait_for(self.stdout, r"API key:\s+(\S+)")
        self.back_office_token = self._wait_for(self.stdout, r"BackOffice token:\s+(\S+)")

    def _wait_for(self, lines, pattern):
        seen = []
        for _ in range(300):
            try:
                line = lines.get(timeout=0.1)
            except queue.Empty:
                if self.process.poll() is not None and lines.empty():
                    break
                continue
            seen.append(line)
            match = re.search(pattern, line)
            if match:
                return match.group(1)
        self.stop()
        raise RuntimeError(f"basin did not print {pattern!r}; saw: {''.join(seen)}")

    def call(self, method, path, body=None, api_version="2", headers=None, token=None):
        """Calls the API with the bootstrap key (or with bearer `token`), as the platform's
        clients send requests; returns the parsed JSON answer, or raises ApiError for a non-2xx
        status."""
        payload = None if body is None else json.dumps(body).encode()
        credentials = (
            {"Authorization": f"Bearer {token}"} if token else {"svc-open-api-key": self.api_key}
        )
        request = urllib.request.Request(self.address + path, data=payload, method=method, headers={
            **credentials,
            "api-version": api_version,
            "Content-Type": "application/json-patch+json",
            "Accept": "text/plain",
            **(headers or {}),
        })
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                text = response.read()
        except urllib.error.HTTPError as error:
            text = error.read()
            raise ApiError(error.code, error.headers, json.loads(text) if text else None) from None
        return json.loads(text) if text else None

    def upload_url(self, file_name=None):
        path = "/api/conversion/transfer/upload-url"
        if file_name:
            path += "?" + urllib.parse.urlencode({"fileName": file_name})
        return self.call("GET", path)["data"]

    def restarted(self, folder, settings=None):
        """Kills this server at once (SIGKILL: no shutdown, no flush) and starts another on the
        same data folder (on a new port)."""
        self.process.kill()
        self.process.wait(timeout=30)
        return Basin(folder, settings, restart_of=self)

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()


@contextlib.contextmanager
def running_basin(settings=None):
    """A fresh `basin serve` with `BASIN_*` environment `settings`, stopped on exit."""
    if not os.path.exists(BINARY):
        pytest.fail(f"{BINARY} is missing; build it with `cargo build -p basin --bin basin` first")
    with tempfile.TemporaryDirectory() as folder:
        server = Basin(folder, settings)
        try:
            yield server
        finally:
            server.stop()
