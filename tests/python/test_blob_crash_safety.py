"""A blob is its old content or its new one after `kill -9` at any point of a block commit
(issue 18), and its Content-MD5 always describes the bytes served.

One `basin serve` with the folder backend, compacting right after each commit
(`blob.compaction_delay_seconds = 0`), is killed with SIGKILL at delays from 0 to 300 ms after a
block list is sent (before, during and after the commit, and during the compaction that
follows), then started again on the same data folder. Every round stages new blocks, in a
shuffled order, and checks that the blob reads back byte for byte as the last committed version
or as the one being committed, that GET and HEAD agree, and that Content-MD5 is the MD5 of the
bytes. Data is generated, never checked in. Run with scripts/python-tests.
"""

import base64
import hashlib
import http.client
import random
import tempfile
import threading
import urllib.parse

from basin_server import MIB, Basin, data

BLOCK = 4 * MIB
BLOCKS = 6
SETTINGS = {"BASIN_BLOB__COMPACTION_DELAY_SECONDS": "0"}
# Milliseconds between sending the block list and the kill: from before the request is read to
# well into the compaction.
KILL_AFTER_MS = [0, 1, 2, 3, 5, 8, 12, 20, 30, 50, 80, 120, 200, 300]


def request(address, method, url, body=None, headers=None):
    """One HTTP request to the server at `address` for `url`'s path and query; answers status,
    headers (lower-case names) and body. Raises OSError if the server is gone."""
    target = urllib.parse.urlsplit(url)
    host = urllib.parse.urlsplit(address)
    connection = http.client.HTTPConnection(host.hostname, host.port, timeout=60)
    try:
        connection.request(method, f"{target.path}?{target.query}", body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def block_id(n):
    return base64.b64encode(f"{n:08d}".encode()).decode()


def stage_all(address, url, content, order):
    for n in order:
        status, _, body = request(
            address, "PUT", f"{url}&comp=block&blockid={urllib.parse.quote(block_id(n))}",
            content[n * BLOCK:(n + 1) * BLOCK],
        )
        assert status == 201, body


def block_list():
    entries = "".join(f"<Latest>{block_id(n)}</Latest>" for n in range(BLOCKS))
    return f"<BlockList>{entries}</BlockList>".encode()


def read_back(address, url):
    """The blob's bytes by GET, checked against HEAD and against their Content-MD5."""
    status, headers, body = request(address, "GET", url)
    assert status == 200, (status, body[:200])
    md5 = base64.b64encode(hashlib.md5(body).digest()).decode()
    assert headers.get("content-md5") == md5, "Content-MD5 describes the bytes served"
    status, head, _ = request(address, "HEAD", url)
    assert status == 200
    assert head["etag"] == headers["etag"]
    assert head.get("content-md5") == md5
    assert int(head["content-length"]) == len(body)
    return body


def test_a_blob_is_old_or_new_after_kill_9_at_any_point_of_a_commit():
    rng = random.Random(18)
    with tempfile.TemporaryDirectory() as folder:
        server = Basin(folder, SETTINGS)
        try:
            url = server.upload_url("model.bin")
            current = data(BLOCKS * BLOCK, seed=1)
            stage_all(server.address, url, current, range(BLOCKS))
            status, _, body = request(server.address, "PUT", f"{url}&comp=blocklist", block_list())
            assert status == 201, body
            assert read_back(server.address, url) == current
            outcomes = []
            for round_, delay in enumerate(KILL_AFTER_MS):
                new = data(BLOCKS * BLOCK, seed=round_ + 2)
                order = list(range(BLOCKS))
                rng.shuffle(order)
                stage_all(server.address, url, new, order)
                answered = []

                def commit(address=server.address):
                    try:
                        answered.append(request(address, "PUT", f"{url}&comp=blocklist", block_list())[0])
                    except OSError:
                        answered.append(None)

                sender = threading.Thread(target=commit)
                sender.start()
                threading.Event().wait(delay / 1000)
                server = server.restarted(folder, SETTINGS)
                sender.join(timeout=60)
                content = read_back(server.address, url)
                assert content in (current, new), f"round {round_}: a mix of two versions"
                if answered == [201]:
                    assert content == new, f"round {round_}: an acknowledged commit was lost"
                outcomes.append("new" if content == new else "old")
                current = content
            print("outcomes by delay:", list(zip(KILL_AFTER_MS, outcomes)))
            # The last rounds killed the server well after the commit answered.
            assert outcomes[-1] == "new", outcomes
            # A commit after all those crashes works, and compacts.
            final = data(BLOCKS * BLOCK, seed=99)
            stage_all(server.address, url, final, range(BLOCKS))
            status, _, body = request(server.address, "PUT", f"{url}&comp=blocklist", block_list())
            assert status == 201, body
            assert read_back(server.address, url) == final
        finally:
            server.stop()
