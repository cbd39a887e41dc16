"""Uploads and downloads through Basin's blob endpoint with the real Azure Blob client library
(azure-storage-blob from PyPI), as existing clients of the platform do (docs/blobs.md).

A fresh `basin serve` (the `basin` fixture of conftest.py) runs on a free loopback port with
its own data folder. The tests ask the API for upload URLs, upload a small file with a single
PUT and a file over 64 MiB as staged blocks, download ranges, and check that expired, tampered and read-only URLs are refused.
Data is generated, never checked in. Run with scripts/python-tests.
"""

import base64
import hashlib
import hmac
import urllib.parse
from datetime import datetime, timedelta, timezone

import pytest
from azure.core.exceptions import HttpResponseError, ResourceExistsError, ResourceNotFoundError
from azure.storage.blob import BlobClient, ContentSettings

from basin_server import MIB, SECRET, data


def sign(url_without_query, permissions, expiry):
    """Signs a blob URL the way docs/blobs.md describes, with the test server's secret."""
    key = hmac.new(SECRET.encode(), b"basin blob sas", hashlib.sha256).digest()
    path = urllib.parse.unquote(urllib.parse.urlparse(url_without_query).path)
    se = expiry.strftime("%Y-%m-%dT%H:%M:%SZ")
    to_sign = "\n".join(["2025-01-05", se, "b", permissions, path])
    sig = base64.urlsafe_b64encode(hmac.new(key, to_sign.encode(), hashlib.sha256).digest())
    query = urllib.parse.urlencode({
        "sv": "2025-01-05", "se": se, "sr": "b", "sp": permissions,
        "sig": sig.decode().rstrip("="),
    })
    return f"{url_without_query}?{query}"


def test_a_small_file_goes_in_one_put_and_reads_back_in_ranges(basin):
    url = basin.upload_url("small.bin")
    assert "/basin/uploads/" in url
    payload = data(3 * MIB + 17)
    requests = []
    client = BlobClient.from_blob_url(url)
    result = client.upload_blob(payload, raw_request_hook=lambda r: requests.append(r.http_request))
    assert result["etag"]
    assert [r.method for r in requests] == ["PUT"]
    assert requests[0].headers["x-ms-blob-type"] == "BlockBlob"
    assert "comp=" not in requests[0].url
    assert client.get_blob_properties().size == len(payload)
    assert client.download_blob().readall() == payload
    part = client.download_blob(offset=1000, length=5000).readall()
    assert part == payload[1000:6000]


def test_a_file_over_64_mib_goes_as_staged_blocks_and_downloads_by_range(basin):
    url = basin.upload_url("large.bin")
    payload = data(70 * MIB + 123, seed=3)
    requests = []
    client = BlobClient.from_blob_url(url, max_single_put_size=64 * MIB, max_block_size=8 * MIB)
    client.upload_blob(
        payload, max_concurrency=4,
        raw_request_hook=lambda r: requests.append(r.http_request.url),
    )
    blocks = [u for u in requests if "comp=block&" in u or u.endswith("comp=block")]
    commits = [u for u in requests if "comp=blocklist" in u]
    assert len(blocks) == 9, requests
    assert len(commits) == 1
    assert client.get_blob_properties().size == len(payload)
    offset = 64 * MIB - 10
    part = client.download_blob(offset=offset, length=MIB).readall()
    assert part == payload[offset:offset + MIB]
    # A whole download comes in chunks tied to the first chunk's ETag (If-Match).
    whole = client.download_blob(max_concurrency=2).readall()
    assert hashlib.sha256(whole).digest() == hashlib.sha256(payload).digest()


@pytest.mark.parametrize(
    "size, single_put, concurrency",
    [(5 * MIB + 1, 64 * MIB, 1), (9 * MIB + 7, MIB, 1), (9 * MIB + 7, MIB, 4)],
    ids=["one put", "blocks in order", "blocks in parallel"],
)
def test_the_sdk_checks_every_download_against_the_md5_basin_keeps(basin, size, single_put, concurrency):
    """Blobs keep the MD5 of their bytes however they were sent; the SDK's own check
    (`validate_content=True`: 4 MiB chunks, each with its MD5) passes, and the stored MD5 is the
    one the blob's properties show (what AzCopy's --check-md5 compares)."""
    url = basin.upload_url("checked.bin")
    payload = data(size, seed=size % 7)
    client = BlobClient.from_blob_url(url, max_single_put_size=single_put, max_block_size=MIB)
    client.upload_blob(payload, max_concurrency=concurrency, validate_content=True)
    md5 = hashlib.md5(payload).digest()
    assert client.get_blob_properties().content_settings.content_md5 == md5
    downloaded = client.download_blob(validate_content=True, max_concurrency=2).readall()
    assert downloaded == payload
    tail = client.download_blob(offset=size - 100, validate_content=True).readall()
    assert tail == payload[-100:]


@pytest.mark.parametrize("size", [1000, 3 * MIB], ids=["one put", "staged blocks"])
def test_content_settings_and_metadata_come_back_with_the_blob(basin, size):
    client = BlobClient.from_blob_url(basin.upload_url("grid.tif"), max_single_put_size=2 * MIB,
                                      max_block_size=MIB)
    settings = ContentSettings(
        content_type="image/tiff", content_encoding="identity", content_language="en",
        content_disposition='attachment; filename="grid.tif"', cache_control="no-cache",
    )
    payload = data(size, seed=5)
    client.upload_blob(payload, content_settings=settings, metadata={"source": "model run 7"})
    properties = client.get_blob_properties()
    assert properties.content_settings.content_type == "image/tiff"
    assert properties.content_settings.content_encoding == "identity"
    assert properties.content_settings.content_language == "en"
    assert properties.content_settings.content_disposition == 'attachment; filename="grid.tif"'
    assert properties.content_settings.cache_control == "no-cache"
    assert properties.metadata == {"source": "model run 7"}
    download = client.download_blob()
    assert download.properties.content_settings.content_type == "image/tiff"
    assert download.readall() == payload
    # Replacing the blob replaces its properties.
    client.upload_blob(b"plain", overwrite=True)
    properties = client.get_blob_properties()
    assert properties.content_settings.content_type == "application/octet-stream"
    assert properties.metadata == {}


def test_an_existing_blob_is_not_overwritten_without_overwrite(basin):
    client = BlobClient.from_blob_url(basin.upload_url())
    client.upload_blob(b"first")
    with pytest.raises(ResourceExistsError):
        client.upload_blob(b"second")
    client.upload_blob(b"third", overwrite=True)
    assert client.download_blob().readall() == b"third"


def test_an_empty_file_uploads_and_downloads(basin):
    client = BlobClient.from_blob_url(basin.upload_url("empty.txt"))
    client.upload_blob(b"")
    assert client.get_blob_properties().size == 0
    assert client.download_blob().readall() == b""


def test_a_missing_blob_is_not_found(basin):
    client = BlobClient.from_blob_url(basin.upload_url())
    with pytest.raises(ResourceNotFoundError):
        client.download_blob().readall()


def test_expired_tampered_and_read_only_urls_are_refused(basin):
    url = basin.upload_url("refused.bin")
    blob_url = url.split("?", 1)[0]
    now = datetime.now(timezone.utc)
    expired = sign(blob_url, "rcw", now - timedelta(seconds=5))
    tampered = url.replace("sp=rcw", "sp=racw")
    for bad in (expired, tampered, blob_url + "?sv=2025-01-05"):
        with pytest.raises(HttpResponseError) as error:
            BlobClient.from_blob_url(bad).upload_blob(b"nope")
        assert error.value.status_code == 403
        assert error.value.error_code == "AuthenticationFailed"
    read_only = sign(blob_url, "r", now + timedelta(minutes=5))
    with pytest.raises(HttpResponseError) as error:
        BlobClient.from_blob_url(read_only).upload_blob(b"nope")
    assert error.value.status_code == 403
    assert error.value.error_code == "AuthorizationPermissionMismatch"
    with pytest.raises(ResourceNotFoundError):
        BlobClient.from_blob_url(url).get_blob_properties()
    # The documented signing scheme is the one Basin checks.
    valid = sign(blob_url, "rcw", now + timedelta(minutes=5))
    BlobClient.from_blob_url(valid).upload_blob(b"yes")
    assert BlobClient.from_blob_url(url).download_blob().readall() == b"yes"
