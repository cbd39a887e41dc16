"""Imports and exports through Basin's transfer API, driven over real HTTP the way the original
platform's clients drive it (docs/conversion.md, docs/blobs.md, docs/fetch.md).

Why these tests exist: the Rust HTTP tests (crates/server/tests/api/transfers/) send the
requests Basin's authors expect. These send what existing clients send: the bytes go up with
the real Azure Blob client library (one PUT for a small file, Put Block + Put Block List for a
large one), the API is called with the platform's headers (`svc-open-api-key`, `api-version`,
`Content-Type: application/json-patch+json`), transfers are polled until they end, and the
results are read back with independent tools: GDAL's command-line tools (Debian gdal-bin) read
the GeoTIFF Basin made, and the exported ASCII grid is compared with the input value by value.

- upload -> upload-convert (AsciiGridReader -> GeoTiffWriter) -> raw download -> gdalinfo:
  an upload is imported, and the file a client downloads is a correct GeoTIFF;
- the same for a ~19 MiB grid uploaded as staged blocks: block uploads reach the converter whole;
- download-convert back to ASCII Grid: an export's `downloadPath` gives the input's values;
- imports from outside URLs, with `[fetch] allowed_networks` opening loopback: FTP from a
  pyftpdlib server with a password holding `@` and `:` (percent-encoded in the URL; never shown
  in the transfer record or the logs; a wrong one ends the transfer in Error naming the 530
  refusal), and HTTP from a local server that redirects to the file;
- without that setting the same loopback URL is refused when the request arrives: a 400
  problem naming `uploadUrl`, and no transfer is queued.

Every transfer is polled every 50 ms and must end within 30 s. The suite runs Basin on SQLite
(the default): the Python tests have no PostgreSQL mode. Outside CI a missing gdalinfo or
gdal_translate skips the checks that need it (formats_support.require_tool); in CI it fails.
Data is generated here, never checked in. Run with scripts/python-tests.
"""

import http.server
import io
import json
import logging
import threading
import time
import urllib.parse
import warnings
import zipfile

import pytest
from azure.storage.blob import BlobClient

from basin_server import MIB, ApiError, running_basin
from formats_support import require_module, require_tool, run

FETCH_LOOPBACK = {"BASIN_FETCH__ALLOWED_NETWORKS": '["127.0.0.0/8"]'}

# A 3 x 2 grid with one nodata cell, in EPSG:25832 (given as the reader's SRID parameter).
GRID = (
    "ncols 3\nnrows 2\nxllcorner 500000\nyllcorner 6200000\ncellsize 10\n"
    "NODATA_value -9999\n1 2 3\n4 5 -9999\n"
)
SRID = 25832
FTP_USER = "importer"
FTP_PASSWORD = "p@ss:word"


# --- helpers ------------------------------------------------------------------------------

def new_project(basin, name):
    return basin.call("POST", "/api/metadata/project", {"name": name}, api_version="3")["id"]


def upload(basin, file_name, payload, **client_options):
    """Uploads `payload` with the Azure Blob client to a fresh upload URL; returns the URL
    without its query (what clients pass as `uploadUrl`) and the URLs of the requests sent."""
    url = basin.upload_url(file_name)
    sent = []
    client = BlobClient.from_blob_url(url, **client_options)
    client.upload_blob(payload, raw_request_hook=lambda r: sent.append(r.http_request.url))
    return url.split("?", 1)[0], sent


def wait_for(basin, transfer_id, timeout=30.0):
    """Polls the transfer every 50 ms until it is Completed or Error; returns the record."""
    deadline = time.monotonic() + timeout
    while True:
        record = basin.call("GET", f"/api/conversion/transfer/{transfer_id}")
        if record["status"] in ("Completed", "Error"):
            return record
        if time.monotonic() > deadline:
            raise AssertionError(f"transfer did not end within {timeout} s: {record}")
        time.sleep(0.05)


def import_request(upload_url, project_id, file_name="grid.asc", name="grid"):
    return {
        "uploadUrl": upload_url, "originalFileName": file_name, "projectId": project_id,
        "readerName": "AsciiGridReader", "writerName": "GeoTiffWriter",
        "readerParameters": [{"name": "SRID", "value": SRID}],
        "outputDatasetData": {"name": name},
    }


def import_grid(basin, upload_url, project_id, file_name="grid.asc", name="grid"):
    """upload-convert of the ASCII grid at `upload_url` into a GeoTIFF; the ended record."""
    # Clients send api-version 3 to upload-convert (docs/api-conventions.md#versions).
    summary = basin.call("POST", "/api/conversion/upload-convert",
                         import_request(upload_url, project_id, file_name, name), api_version="3")
    assert summary["type"] == "Import" and summary["status"] in ("Pending", "InProgress", "Completed")
    return wait_for(basin, summary["id"])


def imported_dataset(record):
    assert record["status"] == "Completed", record
    assert len(record["importResults"]) == 1, record
    return record["importResults"][0]["datasetId"]


def download_dataset(basin, dataset_id, project_id, path):
    """The dataset's content, read the way clients read it: the raw service's signed URL, then
    the Azure Blob client; written to `path`."""
    url = basin.call("GET", f"/api/raw/dataset/{dataset_id}", api_version="1", headers={
        "svc-service-id": "raw", "svc-project-id": project_id, "svc-dataset-id": dataset_id,
    })["data"]
    content = BlobClient.from_blob_url(url).download_blob().readall()
    path.write_bytes(content)
    return content


def gdal_cells(path):
    """{(x, y): value} of every cell centre, read by GDAL (`gdal_translate -of XYZ`)."""
    text = run(require_tool("gdal_translate"), "-q", "-of", "XYZ", path, "/vsistdout/")
    cells = {}
    for line in text.splitlines():
        x, y, value = map(float, line.split())
        cells[(x, y)] = value
    return cells


def parse_ascii_grid(text):
    """Header (lower-case keys, numbers; centre coordinates turned into corner ones) and rows
    of values of an ESRI ASCII grid."""
    header, rows = {}, []
    for line in text.splitlines():
        parts = line.split()
        if not parts:
            continue
        if parts[0][0].isalpha():
            header[parts[0].lower()] = float(parts[1])
        else:
            rows.append([float(value) for value in parts])
    for axis in ("x", "y"):
        if f"{axis}llcenter" in header:
            header[f"{axis}llcorner"] = header.pop(f"{axis}llcenter") - header["cellsize"] / 2
    return header, rows


def check_the_small_grid(tif, dataset):
    """`tif` is GRID as a GeoTIFF: 3 x 2 cells of 10 m in EPSG:25832, values and nodata kept."""
    info = json.loads(run(require_tool("gdalinfo"), "-json", tif))
    assert info["driverShortName"] == "GTiff"
    assert info["size"] == [3, 2]
    assert info["geoTransform"] == [500000.0, 10.0, 0.0, 6200020.0, 0.0, -10.0]
    assert info["stac"]["proj:epsg"] == SRID
    band = info["bands"][0]
    assert band["noDataValue"] == -9999
    assert gdal_cells(tif) == {
        (500005.0, 6200015.0): 1, (500015.0, 6200015.0): 2, (500025.0, 6200015.0): 3,
        (500005.0, 6200005.0): 4, (500015.0, 6200005.0): 5, (500025.0, 6200005.0): -9999,
    }
    assert dataset["datasetFormat"] == ".tif"
    assert dataset["datasetType"] == "multidimensional"
    assert dataset["spatialInformation"]["srid"] == SRID


class FileServer:
    """An HTTP server on 127.0.0.1 serving `files` ({path: bytes}) and `redirects`
    ({path: location}, answered 302); it records the paths asked for."""

    def __init__(self, files, redirects):
        requested = self.requested = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                requested.append(self.path)
                if self.path in redirects:
                    self.send_response(302)
                    self.send_header("Location", redirects[self.path])
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                elif self.path in files:
                    body = files[self.path]
                    self.send_response(200)
                    self.send_header("Content-Type", "application/octet-stream")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                else:
                    self.send_error(404)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05},
                         daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


# --- fixtures -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def fetching_basin():
    """A `basin serve` whose imports may fetch from loopback (`[fetch] allowed_networks`, set
    through the environment as a TOML array)."""
    with running_basin(FETCH_LOOPBACK) as server:
        yield server


@pytest.fixture(scope="module")
def ftp_server(tmp_path_factory):
    """pyftpdlib on 127.0.0.1 serving GRID as grid.asc to FTP_USER / FTP_PASSWORD; the port."""
    with warnings.catch_warnings():  # pyftpdlib 2.x still imports asyncore and asynchat
        warnings.simplefilter("ignore", DeprecationWarning)
        require_module("pyftpdlib")
        from pyftpdlib.authorizers import DummyAuthorizer
        from pyftpdlib.handlers import FTPHandler
        from pyftpdlib.servers import FTPServer

    logging.getLogger("pyftpdlib").setLevel(logging.WARNING)
    root = tmp_path_factory.mktemp("ftp")
    (root / "grid.asc").write_text(GRID)
    authorizer = DummyAuthorizer()
    authorizer.add_user(FTP_USER, FTP_PASSWORD, str(root), perm="elr")

    class Handler(FTPHandler):
        # A refused login answers 530 at once instead of after pyftpdlib's default 3 s.
        auth_failed_timeout = 0.05

    Handler.authorizer = authorizer
    server = FTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"timeout": 0.05},
                              daemon=True)
    thread.start()
    try:
        yield server.address[1]
    finally:
        server.close_all()
        thread.join(timeout=5)


# --- 1. uploads imported with the Azure Blob client ---------------------------------------

def test_an_uploaded_grid_is_imported_as_a_geotiff_gdal_reads(basin, tmp_path):
    """The whole client flow: upload URL, one PUT, upload-convert, poll, raw download."""
    project = new_project(basin, "Small grid")
    url, sent = upload(basin, "grid.asc", GRID.encode())
    assert len(sent) == 1 and "comp=" not in sent[0], sent
    record = import_grid(basin, url, project)
    dataset_id = imported_dataset(record)
    assert record["type"] == "Import"
    assert record["format"] == ".tif"
    assert record["projectId"] == project
    assert record["importParameters"]["uploadUrl"] == url
    assert record["importParameters"]["fileName"] == "grid.asc"
    assert record["importResults"][0]["projectId"] == project
    dataset = basin.call("GET", f"/api/metadata/dataset/{dataset_id}", api_version="3")
    assert dataset["name"] == "grid"
    tif = tmp_path / "grid.tif"
    content = download_dataset(basin, dataset_id, project, tif)
    assert content[:4] == b"II*\0"
    assert dataset["storageSize"] == len(content)
    check_the_small_grid(tif, dataset)


def big_grid(columns=2000, rows=1700):
    """An integer ASCII grid of about 19 MiB, no two neighbouring cells alike."""
    lines = [f"ncols {columns}", f"nrows {rows}", "xllcorner 500000", "yllcorner 6200000",
             "cellsize 10", "NODATA_value -9999"]
    for row in range(rows):
        lines.append(" ".join(str((row * 7919 + column * 104729) % 100000)
                              for column in range(columns)))
    return ("\n".join(lines) + "\n").encode()


def test_a_large_grid_uploaded_as_staged_blocks_is_imported_whole(basin, tmp_path):
    """A client splits a large file into blocks (Put Block, then Put Block List); the import
    must see the committed blocks as one file: GDAL's checksum of the result equals its
    checksum of the input."""
    payload = big_grid()
    assert len(payload) > 18 * MIB
    project = new_project(basin, "Large grid")
    url, sent = upload(basin, "big.asc", payload, max_single_put_size=4 * MIB,
                       max_block_size=4 * MIB)
    blocks = [u for u in sent if "comp=block&" in u or u.endswith("comp=block")]
    assert len(blocks) == 5, sent
    assert [u for u in sent if "comp=blocklist" in u] == [sent[-1]]
    dataset_id = imported_dataset(import_grid(basin, url, project, "big.asc", "big"))
    tif = tmp_path / "big.tif"
    download_dataset(basin, dataset_id, project, tif)
    source = tmp_path / "big.asc"
    source.write_bytes(payload)
    gdalinfo = require_tool("gdalinfo")
    ours, theirs = (json.loads(run(gdalinfo, "-json", "-checksum", path)) for path in (tif, source))
    assert ours["size"] == theirs["size"] == [2000, 1700]
    assert ours["geoTransform"] == theirs["geoTransform"]
    assert ours["bands"][0]["checksum"] == theirs["bands"][0]["checksum"]
    assert ours["bands"][0]["noDataValue"] == -9999


# --- 2. export ----------------------------------------------------------------------------

def test_download_convert_gives_back_the_uploaded_values(basin, tmp_path):
    """An import to GeoTIFF and an export back to ASCII Grid must round-trip every value,
    nodata included, and the placement, exactly; the export's downloadPath is a signed URL
    the Azure Blob client reads."""
    project = new_project(basin, "Round trip")
    url, _ = upload(basin, "grid.asc", GRID.encode())
    dataset_id = imported_dataset(import_grid(basin, url, project))
    summary = basin.call("POST", f"/api/metadata/dataset/{dataset_id}/download-convert",
                         {"writerName": "AsciiGridWriter"})
    assert summary["type"] == "Export"
    record = wait_for(basin, summary["id"])
    assert record["status"] == "Completed", record
    assert record["exportParameters"]["datasetId"] == dataset_id
    assert record["exportParameters"]["writerName"] == "AsciiGridWriter"
    assert record["importResults"] == [] or "importResults" not in record
    path = record["downloadPath"]
    assert "sig=" in path
    content = BlobClient.from_blob_url(path).download_blob().readall()
    # The dataset has a CRS, so the writer makes grid.asc and grid.prj: one .zip holds both
    # (docs/conversion.md, "What the result is").
    assert urllib.parse.urlparse(path).path.endswith("/grid.zip"), path
    assert record["exportParameters"]["outputFileName"] == "grid.zip", record
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        assert sorted(archive.namelist()) == ["grid.asc", "grid.prj"]
        text = archive.read("grid.asc").decode()
        prj = archive.read("grid.prj").decode()
    assert "UTM zone 32N" in prj or "UTM_Zone_32N" in prj, prj
    header, rows = parse_ascii_grid(text)
    expected_header, expected_rows = parse_ascii_grid(GRID)
    assert header == expected_header, text
    assert rows == expected_rows, text
    # GDAL reads the export as it reads the input.
    exported, source = tmp_path / "export.asc", tmp_path / "source.asc"
    exported.write_text(text)
    source.write_text(GRID)
    assert gdal_cells(exported) == gdal_cells(source)


# --- 3. imports from outside URLs ---------------------------------------------------------

def ftp_url(port, password=FTP_PASSWORD):
    quoted = urllib.parse.quote(password, safe="")
    return f"ftp://{FTP_USER}:{quoted}@127.0.0.1:{port}/grid.asc"


def test_an_ftp_import_logs_in_with_a_percent_encoded_password_it_never_shows(
        fetching_basin, ftp_server, tmp_path):
    """The password travels percent-encoded in the URL (`p%40ss%3Aword`); Basin must decode it
    to log in, and keep it out of the transfer record, the lists and its logs."""
    basin = fetching_basin
    project = new_project(basin, "From FTP")
    url = ftp_url(ftp_server)
    assert "p%40ss%3Aword" in url
    record = import_grid(basin, url, project)
    dataset_id = imported_dataset(record)
    assert record["importParameters"]["uploadUrl"] == (
        f"ftp://***@127.0.0.1:{ftp_server}/grid.asc")
    secrets = ("p%40ss", "p@ss", "ss:word", "ss%3Aword", "p%40SS")
    shown = json.dumps(record)
    shown += json.dumps(basin.call("GET", f"/api/conversion/transfer/list?projectId={project}"))
    shown += json.dumps(basin.call("GET", "/api/conversion/transfer/list-summaries"))
    for secret in secrets:
        assert secret not in shown, shown
    tif = tmp_path / "grid.tif"
    download_dataset(basin, dataset_id, project, tif)
    dataset = basin.call("GET", f"/api/metadata/dataset/{dataset_id}", api_version="3")
    check_the_small_grid(tif, dataset)
    logs = "".join(basin.output)
    for secret in secrets:
        assert secret not in logs


def test_a_wrong_ftp_password_ends_the_transfer_in_error(fetching_basin, ftp_server):
    """FTP answers a wrong password with 530; the transfer must end in Error saying so, not
    hang or succeed, and import nothing."""
    basin = fetching_basin
    project = new_project(basin, "Wrong password")
    record = import_grid(basin, ftp_url(ftp_server, "p@ss:wrong"), project)
    assert record["status"] == "Error", record
    message = record["errorMessage"]
    assert "530" in message or "refused access" in message, message
    assert "p%40ss" not in json.dumps(record) and "p@ss" not in json.dumps(record)
    assert basin.call("GET", f"/api/metadata/project/{project}/dataset/list",
                      api_version="3")["data"] == []


def test_an_http_import_follows_redirects_to_the_file(fetching_basin, tmp_path):
    """Download links often redirect; Basin follows the redirects (a relative Location, then an
    absolute one; each target checked) and imports the file they lead to."""
    basin = fetching_basin
    redirects = {"/latest": "/releases/7"}
    server = FileServer({"/files/grid.asc": GRID.encode()}, redirects)
    redirects["/releases/7"] = f"http://127.0.0.1:{server.port}/files/grid.asc"
    try:
        project = new_project(basin, "From HTTP")
        url = f"http://127.0.0.1:{server.port}/latest"
        record = import_grid(basin, url, project)
        dataset_id = imported_dataset(record)
        assert server.requested == ["/latest", "/releases/7", "/files/grid.asc"]
        assert record["importParameters"]["uploadUrl"] == url
        tif = tmp_path / "grid.tif"
        download_dataset(basin, dataset_id, project, tif)
        dataset = basin.call("GET", f"/api/metadata/dataset/{dataset_id}", api_version="3")
        check_the_small_grid(tif, dataset)
    finally:
        server.close()


# --- 4. loopback refused by default -------------------------------------------------------

def test_without_the_fetch_setting_a_loopback_url_is_a_400_naming_upload_url(basin):
    """By default imports may not reach the server's own loopback (SSRF protection): the
    request is refused when it arrives, as a problem naming the field, and nothing is queued."""
    server = FileServer({"/grid.asc": GRID.encode()}, {})
    try:
        project = new_project(basin, "Refused")
        before = basin.call("GET", "/api/conversion/transfer/list-summaries")["data"]
        url = f"http://127.0.0.1:{server.port}/grid.asc"
        with pytest.raises(ApiError) as refused:
            basin.call("POST", "/api/conversion/upload-convert", import_request(url, project),
                       api_version="3")
        error = refused.value
        assert error.status == 400
        assert error.headers["Content-Type"].startswith("application/problem+json")
        assert error.body["status"] == 400
        assert error.body["title"]
        assert "uploadUrl" in error.body["errors"], error.body
        assert "loopback" in json.dumps(error.body["errors"]["uploadUrl"]), error.body
        assert server.requested == []
        after = basin.call("GET", "/api/conversion/transfer/list-summaries")["data"]
        assert after == before
    finally:
        server.close()
