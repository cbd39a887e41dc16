"""README.md's import example, run as a new user would: the block after the
`README-import` marker, with bash, `KEY` set to the printed API key and nothing else, against a
fresh `basin serve` (its address in `BASIN`, which the block reads in place of the default).

It must print `Completed`, and the dataset it made must be a GeoTIFF in UTM zone 32N (the
reader's SRID), as gdalinfo reads it. Needs bash, curl and jq (and GDAL for the last check);
outside CI a missing one skips.
"""

import json
import os
import re
import shutil
import subprocess
import tempfile
import urllib.request

from basin_server import ROOT
from formats_support import skip_or_fail

MARKER = "<!-- README-import:"


def readme_block():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as readme:
        text = readme.read()
    after = text[text.index(MARKER):]
    match = re.search(r"```sh\n(.*?)```", after, re.DOTALL)
    assert match, "README.md has the import block after its marker"
    return match.group(1)


def test_the_readme_import_example_runs_as_written(basin):
    for tool in ("bash", "curl", "jq"):
        if shutil.which(tool) is None:
            skip_or_fail(f"{tool} is missing; the README example needs it")
    with tempfile.TemporaryDirectory() as folder:
        result = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", readme_block()],
            cwd=folder, capture_output=True, text=True, timeout=120,
            env={"PATH": os.environ["PATH"], "KEY": basin.api_key, "BASIN": basin.address},
        )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().splitlines()[-1] == "Completed", result.stdout + result.stderr

    projects = basin.call("GET", "/api/metadata/project/list")
    project = next(p for p in projects["data"] if p["name"] == "Readme example")
    datasets = basin.call("GET", f"/api/metadata/project/{project['id']}/dataset/list")["data"]
    assert [d["name"] for d in datasets] == ["depth"]
    assert datasets[0]["datasetFormat"] == ".tif"

    if shutil.which("gdalinfo") is None:
        skip_or_fail("gdalinfo is missing (apt-get install gdal-bin)")
    url = basin.call("GET", f"/api/raw/dataset/{datasets[0]['id']}")["data"]
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "depth.tif")
        with urllib.request.urlopen(url, timeout=30) as response, open(path, "wb") as out:
            out.write(response.read())
        info = json.loads(subprocess.run(
            ["gdalinfo", "-json", path], capture_output=True, text=True, check=True,
        ).stdout)
    assert info["size"] == [3, 2]
    assert 'ID["EPSG",32632]]' in info["coordinateSystem"]["wkt"]


def test_serve_prints_the_console_address_and_when_tokens_expire(basin):
    output = "".join(basin.output)
    assert f"console at {basin.address}/" in output, output
    assert "The API key does not expire. The two tokens expire in 24 hours" in output, output
    assert f"Console: {basin.address}/" in output, output
