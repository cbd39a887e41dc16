"""The driver of scripts/bench-blobs: Basin's blob endpoint against Azurite through the Azure
Blob SDK for Python, one server at a time, rounds alternating; prints a Markdown table of the
median wall times and peak resident memory (VmHWM of the server process, reset before each
phase by writing 5 to /proc/<pid>/clear_refs).

Basin's blobs are written through upload URLs from its API (`sp=rcw`, so the same URL reads
the blob back); Azurite's through its well-known development account.
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


def free_port():
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


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


class Basin:
    name = "Basin"

    def __init__(self, binary, folder):
        env = {k: v for k, v in os.environ.items() if not k.startswith("BASIN_")}
        env.update({"BASIN_LOG__FORMAT": "text", "NO_COLOR": "1", "BASIN_LOG__LEVEL": "warn"})
        self.port = free_port()
        self.process = subprocess.Popen(
            [binary, "serve", "--listen", f"127.0.0.1:{self.port}", "--data-dir", folder],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )
        self.key = None
        for line in self.process.stdout:
            match = re.search(r"API key:\s+(\S+)", line)
            if match:
                self.key = match.group(1)
                break
        if not self.key:
            raise RuntimeError("basin printed no API key")
        self.base = f"http://127.0.0.1:{self.port}"
        for _ in range(100):
            try:
                urllib.request.urlopen(f"{self.base}/health/ready", timeout=1)
                break
            except Exception:
                time.sleep(0.1)
        self.pid = self.process.pid

    def blob(self, name):
        request = urllib.request.Request(
            f"{self.base}/api/conversion/transfer/upload-url?fileName={name}",
            headers={"svc-open-api-key": self.key},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            url = json.loads(response.read())["data"]
        return BlobClient.from_blob_url(url)

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)


class Azurite:
    name = "Azurite"

    def __init__(self, main_js, folder):
        self.port = free_port()
        os.makedirs(folder, exist_ok=True)
        self.process = subprocess.Popen(
            ["node", main_js, "--blobPort", str(self.port), "--location", folder, "--silent",
             "--skipApiVersionCheck", "--loose", "--disableTelemetry"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        self.pid = self.process.pid
        connection = (
            "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;"
            f"AccountKey={AZURITE_KEY};BlobEndpoint=http://127.0.0.1:{self.port}/devstoreaccount1;"
        )
        self.service = BlobServiceClient.from_connection_string(connection)
        for _ in range(200):
            try:
                self.service.create_container("bench")
                break
            except Exception:
                time.sleep(0.1)
        self.container = self.service.get_container_client("bench")

    def blob(self, name):
        return self.container.get_blob_client(name)

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)


def timed(server, work):
    peak_reset(server.pid)
    started = time.perf_counter()
    work()
    return time.perf_counter() - started, peak_mib(server.pid)


def run_server(server, files, work, round_index):
    results = {}
    large, smalls = files
    clients = {}

    def upload_large():
        client = server.blob(f"large-{round_index}.bin")
        with open(large, "rb") as data:
            client.upload_blob(data, overwrite=True, max_concurrency=CONCURRENCY)
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
    results["large download"] = timed(server, download_large)
    if os.path.getsize(os.path.join(work, "large.out")) != os.path.getsize(large):
        raise RuntimeError(f"{server.name}: the large blob came back with another size")
    results["small upload"] = timed(server, upload_smalls)
    results["small download"] = timed(server, download_smalls)
    return results


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", required=True)
    parser.add_argument("--basin", required=True)
    parser.add_argument("--azurite", required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--large-mib", type=int, default=1024)
    parser.add_argument("--small-count", type=int, default=100)
    parser.add_argument("--small-mib", type=int, default=10)
    args = parser.parse_args()
    work = args.work
    large = os.path.join(work, "large.bin")
    make_file(large, args.large_mib * 1024 * 1024, 1)
    smalls = []
    for index in range(args.small_count):
        path = os.path.join(work, f"small-{index}.bin")
        make_file(path, args.small_mib * 1024 * 1024, 1000 + index * 100)
        smalls.append(path)
    files = (large, smalls)
    times = {"Basin": {}, "Azurite": {}}
    for round_index in range(args.rounds):
        for kind in ("Basin", "Azurite") if round_index % 2 == 0 else ("Azurite", "Basin"):
            folder = os.path.join(work, f"{kind.lower()}-{round_index}")
            server = Basin(args.basin, folder) if kind == "Basin" else Azurite(args.azurite, folder)
            try:
                for phase, value in run_server(server, files, work, round_index).items():
                    times[kind].setdefault(phase, []).append(value)
            finally:
                server.stop()
                shutil.rmtree(folder, ignore_errors=True)
            print(f"round {round_index + 1}: {kind} done", file=sys.stderr)
    print(
        f"\n{args.large_mib} MiB blob and {args.small_count} x {args.small_mib} MiB blobs, "
        f"Azure Blob SDK defaults (one PUT up to {SINGLE_PUT // 1048576} MiB, else blocks of "
        f"{BLOCK // 1048576} MiB), max_concurrency {CONCURRENCY}, "
        f"medians of {args.rounds} rounds\n"
    )
    print("| phase | Basin s | Azurite s | Basin / Azurite | Basin peak MiB | Azurite peak MiB |")
    print("|---|---|---|---|---|---|")
    for phase in ("large upload", "large download", "small upload", "small download"):
        basin_s = statistics.median(t for t, _ in times["Basin"][phase])
        azurite_s = statistics.median(t for t, _ in times["Azurite"][phase])
        basin_m = max(m for _, m in times["Basin"][phase])
        azurite_m = max(m for _, m in times["Azurite"][phase])
        print(
            f"| {phase} | {basin_s:.2f} | {azurite_s:.2f} | {basin_s / azurite_s:.2f}x "
            f"| {basin_m:.0f} | {azurite_m:.0f} |"
        )


if __name__ == "__main__":
    main()
