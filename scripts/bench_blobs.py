"""The driver of scripts/bench-blobs: Basin's blob endpoint against Azurite through the Azure
Blob SDK for Python, one server at a time, rounds alternating; prints a Markdown table of the
median wall times and peak resident memory (VmHWM of each server process, reset before each
phase by writing 5 to /proc/<pid>/clear_refs).

Three servers, each started fresh for every round:

- `basin`: Basin with its defaults, blobs in the local folder backend (`data_dir/blobs`);
- `basin-s3`: the same Basin with `blob.url = s3://bench/blobs`, its S3 backend (the
  `object_store` crate) talking to moto's S3 server (`moto_server`, from PyPI, pinned in
  scripts/bench-requirements.txt) on another local port. This is the scale-out path: every byte
  crosses a second HTTP hop, each staged block becomes an object, and committing a block list
  reads them back into one multipart upload. moto is a Python emulator, not a production
  store: it reads an object whole to answer any GET (ranges included) and joins a multipart
  upload's parts in memory, so this column is Basin's S3 code path with a slow store behind
  it, not a prediction for real S3.
  moto's own peak memory is printed in a column of its own, as information: it is not Basin's;
- `azurite`: Azurite, Microsoft's emulator, on its well-known development account, keeping its
  blobs on disk (`--location`).

Basin's blobs are written through upload URLs from its API (`sp=rcw`, so the same URL reads
the blob back); Azurite's through its connection string.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
import urllib.request

from azure.storage.blob import BlobClient, BlobServiceClient

# The SDK's defaults: blocks of 4 MiB above a single PUT of up to 64 MiB.
BLOCK = 4 * 1024 * 1024
SINGLE_PUT = 64 * 1024 * 1024
CONCURRENCY = 2
AZURITE_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)
# The bucket Basin's S3 backend writes to (created in moto before Basin starts), and the prefix
# of its blobs inside it. moto accepts any credentials; object_store needs some to sign with.
S3_BUCKET = "bench"
S3_PREFIX = "blobs"
S3_REGION = "us-east-1"
PHASES = ("large upload", "large commit", "large download", "small upload", "small download")
# --servers names, in the order of the table's columns.
SERVERS = {"basin": "Basin", "basin-s3": "Basin S3", "azurite": "Azurite"}
# A server taking longer than this to answer after its start is taken as broken.
START_SECONDS = 30


def free_port():
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until(ready, process, what):
    """Polls `ready()` until it is true; fails as soon as `process` exits or after START_SECONDS."""
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with status {process.returncode} at start")
        try:
            if ready():
                return
        except Exception:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{what} did not become ready in {START_SECONDS} s")


def make_file(path, size, seed):
    """Bytes that do not repeat within a block (so nothing is compressible or deduplicated)."""
    with open(path, "wb") as out:
        block = bytearray(os.urandom(BLOCK))
        written = 0
        counter = seed
        while written < size:
            counter += 1
            block[:8] = counter.to_bytes(8, "little")
            chunk = bytes(block[: min(BLOCK, size - written)])
            out.write(chunk)
            written += len(chunk)


def peak_reset(pid):
    with open(f"/proc/{pid}/clear_refs", "w") as handle:
        handle.write("5")


def peak_mib(pid):
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def stop_process(process):
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def log_tail(path, lines=20):
    """The last lines of a server's log, to show with a failure."""
    try:
        with open(path, errors="replace") as handle:
            return "".join(handle.readlines()[-lines:])
    except OSError:
        return ""


class Basin:
    """`basin serve` on a fresh data dir (SQLite, bootstrap API key read from its stdout);
    `blob_env` adds BASIN_BLOB__* variables to pick another blob backend."""

    name = "Basin"

    def __init__(self, binary, folder, log, blob_env=None, settings=None):
        env = {k: v for k, v in os.environ.items() if not k.startswith("BASIN_")}
        env.update({"BASIN_LOG__FORMAT": "text", "NO_COLOR": "1", "BASIN_LOG__LEVEL": "warn"})
        env.update(blob_env or {})
        env.update(settings or {})
        os.makedirs(folder, exist_ok=True)
        self.port = free_port()
        with open(log, "w") as log_file:
            # Run inside the data dir so that no basin.toml of the caller's folder is read.
            self.process = subprocess.Popen(
                [binary, "serve", "--listen", f"127.0.0.1:{self.port}", "--data-dir", folder],
                env=env, cwd=folder, stdout=subprocess.PIPE, stderr=log_file, text=True,
            )
        self.pid = self.process.pid
        self.key = None
        for line in self.process.stdout:
            match = re.search(r"API key:\s+(\S+)", line)
            if match:
                self.key = match.group(1)
                break
        if not self.key:
            self.process.wait(timeout=30)
            raise RuntimeError(f"basin printed no API key; its log ends with:\n{log_tail(log)}")
        self.base = f"http://127.0.0.1:{self.port}"
        wait_until(
            lambda: urllib.request.urlopen(f"{self.base}/health/ready", timeout=1).status == 200,
            self.process, "basin",
        )

    def memory_pids(self):
        return {self.name: self.pid}

    def blob(self, name):
        request = urllib.request.Request(
            f"{self.base}/api/conversion/transfer/upload-url?fileName={name}",
            headers={"svc-open-api-key": self.key},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            url = json.loads(response.read())["data"]
        return BlobClient.from_blob_url(url)

    def stop(self):
        stop_process(self.process)


class Moto:
    """moto's S3 server on a free port with the bucket Basin writes to. Its large objects
    spill into temporary files, kept in `folder` (TMPDIR) so that they go with it."""

    def __init__(self, folder, log):
        os.makedirs(folder, exist_ok=True)
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        with open(log, "w") as log_file:
            # moto_server's main, run by this Python (the venv's, where moto is installed).
            self.process = subprocess.Popen(
                [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
                env=dict(os.environ, TMPDIR=folder), stdout=log_file, stderr=log_file,
            )
        self.pid = self.process.pid
        # CreateBucket is a plain PUT of the bucket's path; moto checks no signature.
        create = urllib.request.Request(f"{self.endpoint}/{S3_BUCKET}", method="PUT")
        wait_until(
            lambda: urllib.request.urlopen(create, timeout=1).status == 200, self.process, "moto"
        )

    def stop(self):
        stop_process(self.process)


def moto_log(log):
    """Where moto logs, beside the log of the Basin it serves."""
    return log.removesuffix(".log") + "-moto.log"


class BasinS3(Basin):
    """Basin whose blob store is `s3://bench/blobs` on a moto server started with it. The
    options are object_store's AmazonS3ConfigKey names, as `blob.options` passes them."""

    name = "Basin S3"

    def __init__(self, binary, folder, log, settings=None):
        self.moto = Moto(os.path.join(folder, "moto"), moto_log(log))
        blob_env = {
            "BASIN_BLOB__URL": f"s3://{S3_BUCKET}/{S3_PREFIX}",
            "BASIN_BLOB__OPTIONS__AWS_ENDPOINT": self.moto.endpoint,
            "BASIN_BLOB__OPTIONS__AWS_ALLOW_HTTP": "true",
            "BASIN_BLOB__OPTIONS__AWS_REGION": S3_REGION,
            "BASIN_BLOB__OPTIONS__AWS_ACCESS_KEY_ID": "bench",
            "BASIN_BLOB__OPTIONS__AWS_SECRET_ACCESS_KEY": "bench-secret",
        }
        try:
            super().__init__(binary, os.path.join(folder, "basin"), log, blob_env, settings)
        except BaseException:
            self.moto.stop()
            raise

    def memory_pids(self):
        return {self.name: self.pid, "moto": self.moto.pid}

    def stop(self):
        try:
            super().stop()
        finally:
            self.moto.stop()


class Azurite:
    name = "Azurite"

    def __init__(self, main_js, folder, log):
        self.port = free_port()
        os.makedirs(folder, exist_ok=True)
        with open(log, "w") as log_file:
            self.process = subprocess.Popen(
                ["node", main_js, "--blobPort", str(self.port), "--location", folder, "--silent",
                 "--skipApiVersionCheck", "--loose", "--disableTelemetry"],
                stdout=log_file, stderr=log_file,
            )
        self.pid = self.process.pid
        connection = (
            "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;"
            f"AccountKey={AZURITE_KEY};BlobEndpoint=http://127.0.0.1:{self.port}/devstoreaccount1;"
        )
        self.service = BlobServiceClient.from_connection_string(connection)
        wait_until(lambda: self.service.create_container("bench"), self.process, "azurite")
        self.container = self.service.get_container_client("bench")

    def memory_pids(self):
        return {self.name: self.pid}

    def blob(self, name):
        return self.container.get_blob_client(name)

    def stop(self):
        stop_process(self.process)


def timed(server, work):
    """Seconds `work` takes, and the peak MiB of each of the server's processes during it."""
    pids = server.memory_pids()
    for pid in pids.values():
        peak_reset(pid)
    started = time.perf_counter()
    work()
    seconds = time.perf_counter() - started
    return seconds, {label: peak_mib(pid) for label, pid in pids.items()}


def run_server(server, files, work, round_index):
    results = {}
    large, smalls = files
    clients = {}

    commit = {}

    def commit_started(request):
        if "comp=blocklist" in request.http_request.url:
            commit["started"] = time.perf_counter()

    def commit_answered(response):
        if "comp=blocklist" in response.http_request.url:
            commit["seconds"] = time.perf_counter() - commit["started"]

    def upload_large():
        client = server.blob(f"large-{round_index}.bin")
        with open(large, "rb") as data:
            client.upload_blob(
                data, overwrite=True, max_concurrency=CONCURRENCY,
                raw_request_hook=commit_started, raw_response_hook=commit_answered,
            )
        clients["large"] = client

    def download_large():
        with open(os.path.join(work, "large.out"), "wb") as out:
            clients["large"].download_blob(max_concurrency=CONCURRENCY).readinto(out)

    def upload_smalls():
        clients["smalls"] = []
        for index, path in enumerate(smalls):
            client = server.blob(f"small-{round_index}-{index}.bin")
            with open(path, "rb") as data:
                client.upload_blob(data, overwrite=True, max_concurrency=CONCURRENCY)
            clients["smalls"].append(client)

    def download_smalls():
        for client in clients["smalls"]:
            with open(os.path.join(work, "small.out"), "wb") as out:
                client.download_blob(max_concurrency=CONCURRENCY).readinto(out)

    results["large upload"] = timed(server, upload_large)
    # The block list request alone (Put Block List: the commit), within the upload.
    results["large commit"] = (commit.get("seconds", 0.0), results["large upload"][1])
    results["large download"] = timed(server, download_large)
    if os.path.getsize(os.path.join(work, "large.out")) != os.path.getsize(large):
        raise RuntimeError(f"{server.name}: the large blob came back with another size")
    results["small upload"] = timed(server, upload_smalls)
    results["small download"] = timed(server, download_smalls)
    return results


def start(kind, args, folder, log):
    if kind == "basin":
        return Basin(args.basin, folder, log, settings=args.basin_settings)
    if kind == "basin-s3":
        return BasinS3(args.basin, folder, log, settings=args.basin_settings)
    return Azurite(args.azurite, folder, log)


def parse_servers(text):
    kinds = [kind.strip() for kind in text.split(",") if kind.strip()]
    unknown = [kind for kind in kinds if kind not in SERVERS]
    if unknown or not kinds:
        raise argparse.ArgumentTypeError(
            f"servers are a comma-separated subset of {','.join(SERVERS)}, not {text!r}"
        )
    # The table's order, whatever the order given.
    return [kind for kind in SERVERS if kind in kinds]


def print_table(args, kinds, times, peaks):
    names = [SERVERS[kind] for kind in kinds]
    # Ratios against Azurite, the reference, when it ran.
    ratios = [name for name in names if name != "Azurite"] if "Azurite" in names else []
    memory = [label for label in (*names, "moto") if label in peaks]
    s3_note = (
        "; Basin S3 is Basin's S3 backend on a moto server, whose own peak is moto's column"
        if "Basin S3" in names else ""
    )
    print(
        f"\n{args.large_mib} MiB blob and {args.small_count} x {args.small_mib} MiB blobs, "
        f"Azure Blob SDK defaults (one PUT up to {SINGLE_PUT // 1048576} MiB, else blocks of "
        f"{BLOCK // 1048576} MiB), max_concurrency {CONCURRENCY}, "
        f"medians of {args.rounds} rounds{s3_note}\n"
    )
    header = (
        ["phase"]
        + [f"{name} s" for name in names]
        + [f"{name} / Azurite" for name in ratios]
        + [f"{label} peak MiB" for label in memory]
    )
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for phase in PHASES:
        seconds = {name: statistics.median(times[name][phase]) for name in names}
        row = [phase]
        row += [f"{seconds[name]:.2f}" for name in names]
        row += [f"{seconds[name] / seconds['Azurite']:.2f}x" for name in ratios]
        row += [f"{max(peaks[label][phase]):.0f}" for label in memory]
        print("| " + " | ".join(row) + " |")


def main():
    parser = argparse.ArgumentParser(
        description=(
            "Benchmark Basin's Azure-compatible blob endpoint, on its local folder backend "
            "(basin) and on its S3 backend against a moto S3 server (basin-s3), against "
            "Azurite (azurite), through the Azure Blob SDK for Python: one large blob and many "
            "small ones, uploaded and downloaded; median wall times and each server's peak "
            "resident memory (moto's separately). Rounds alternate the servers' order."
        ),
        epilog=(
            f"basin-s3 starts moto_server (moto[server], scripts/bench-requirements.txt) on a "
            f"free port, creates the bucket {S3_BUCKET!r} in it, and starts Basin with "
            f"BASIN_BLOB__URL=s3://{S3_BUCKET}/{S3_PREFIX} and BASIN_BLOB__OPTIONS__AWS_ENDPOINT, "
            f"_AWS_ALLOW_HTTP, _AWS_REGION, _AWS_ACCESS_KEY_ID, _AWS_SECRET_ACCESS_KEY. moto "
            f"reads a whole object to answer each ranged GET, so its large download grows with "
            f"the square of the size: Basin S3's times are Basin's S3 path behind a slow store."
        ),
    )
    parser.add_argument("--work", required=True, help="scratch folder for the files and servers")
    parser.add_argument("--basin", help="the basin binary (for basin and basin-s3)")
    parser.add_argument("--azurite", help="Azurite's dist/src/blob/main.js (for azurite)")
    parser.add_argument(
        "--servers", type=parse_servers, default=list(SERVERS),
        help=f"comma-separated servers to measure (default: {','.join(SERVERS)})",
    )
    parser.add_argument("--rounds", type=int, default=3, help="rounds (default: 3)")
    parser.add_argument(
        "--basin-setting", action="append", default=[], metavar="KEY=VALUE",
        help="a BASIN_* variable for Basin's servers, e.g. BASIN_BLOB__COMPACTION_DELAY_SECONDS=60",
    )
    parser.add_argument(
        "--large-mib", type=int, default=1024, help="size of the large blob (default: 1024)"
    )
    parser.add_argument(
        "--small-count", type=int, default=100, help="number of small blobs (default: 100)"
    )
    parser.add_argument(
        "--small-mib", type=int, default=10, help="size of each small blob (default: 10)"
    )
    args = parser.parse_args()
    args.basin_settings = dict(setting.split("=", 1) for setting in args.basin_setting)
    # Servers run inside their data folders: binaries are found from anywhere.
    if args.basin:
        args.basin = os.path.abspath(args.basin)
    kinds = args.servers
    if not args.basin and {"basin", "basin-s3"} & set(kinds):
        parser.error("--basin is needed for the basin and basin-s3 servers")
    if not args.azurite and "azurite" in kinds:
        parser.error("--azurite is needed for the azurite server")
    work = args.work
    large = os.path.join(work, "large.bin")
    make_file(large, args.large_mib * 1024 * 1024, 1)
    smalls = []
    for index in range(args.small_count):
        path = os.path.join(work, f"small-{index}.bin")
        make_file(path, args.small_mib * 1024 * 1024, 1000 + index * 100)
        smalls.append(path)
    files = (large, smalls)
    # times[server name][phase] and peaks[process label][phase]: one value per round.
    times = {SERVERS[kind]: {} for kind in kinds}
    peaks = {}
    for round_index in range(args.rounds):
        order = kinds if round_index % 2 == 0 else kinds[::-1]
        for kind in order:
            folder = os.path.join(work, f"{kind}-{round_index}")
            log = os.path.join(work, f"{kind}-{round_index}.log")
            server = None
            try:
                server = start(kind, args, folder, log)
                results = run_server(server, files, work, round_index)
            except BaseException:
                for path in (log, moto_log(log)):
                    if os.path.exists(path):
                        print(f"round {round_index + 1}: {SERVERS[kind]} failed; "
                              f"{os.path.basename(path)} ends with:\n{log_tail(path)}",
                              file=sys.stderr)
                raise
            finally:
                if server:
                    server.stop()
                shutil.rmtree(folder, ignore_errors=True)
            for phase, (seconds, memory) in results.items():
                times[server.name].setdefault(phase, []).append(seconds)
                for label, mib in memory.items():
                    peaks.setdefault(label, {}).setdefault(phase, []).append(mib)
            print(f"round {round_index + 1}: {server.name} done", file=sys.stderr)
    print_table(args, kinds, times, peaks)


if __name__ == "__main__":
    main()
