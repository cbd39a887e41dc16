"""Real WMTS clients against a running Basin (issue 16; docs/tiles.md, WMTS): GDAL's WMTS driver
and OWSLib read the capabilities of uploaded grids and fetch tiles over HTTP with the API key.

The grids are written by independent tools: GeoTIFFs in EPSG:4326, UTM zone 32N and
Gauss-Krüger zone 3 (northing first in EPSG) by GDAL (`gdal_translate` of an ASCII grid), and a
DFS2 with three time steps by mikeio. Their values are multiples of 10 from 0 to 60, so that
each draws exactly one colour of the default ramp (docs/tiles.md, Colours): a pixel's colour
gives back its value. One cell of each GeoTIFF is no data (transparent).

- GDAL (`WMTS:<base>/wmts100/1.0.0/WMTSCapabilities.xml`, key sent with GDAL_HTTP_HEADERS)
  lists the layer in both matrix sets, opens the native set in the file's system with the
  file's extent, and `gdal_translate` at the data's level gives every cell's value back; the
  Web Mercator set gives the value of the cell under each pixel centre (pyproj) away from
  cell edges;
- OWSLib (capabilities from the RESTful address, and from the key-value address with
  `Accept: application/xml`) fetches tiles with KVP GetTile and with the ResourceURL template:
  the same bytes, PNGs whose pixels are the cells; a time from the Time dimension selects that
  step of the DFS2.
"""

import io
import json
import os
import pathlib
import subprocess

import pytest

from formats_support import require_module, require_tool

np = require_module("numpy")
mikeio = require_module("mikeio")
pyproj = require_module("pyproj")
owslib_wmts = require_module("owslib.wmts")
requests = require_module("requests")
Image = require_module("PIL.Image")

# The default ramp (docs/tiles.md): value 10 k is colour k over the range 0..60.
RAMP = ["#0b2a6f", "#1f6fb2", "#37b3c9", "#9bd87f", "#f4e35c", "#f59a3b", "#c8352b"]
COLOUR_VALUE = {
    tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5)) + (255,): 10.0 * k
    for k, colour in enumerate(RAMP)
}
NODATA = -9999.0
TIMES = ["2021-03-01T12:00:00Z", "2021-03-01T13:00:00Z", "2021-03-01T14:00:00Z"]


def pattern(columns, rows, step=0):
    """Values 10 * ((column + 2 row + step) mod 7), row 0 at the top: every ramp colour."""
    column, row = np.meshgrid(np.arange(columns), np.arange(rows))
    return 10.0 * ((column + 2 * row + step) % 7)


class Grid:
    """A north-up grid: values (row 0 at the top), top-left corner, cell size, EPSG code."""

    def __init__(self, name, values, left, top, cell, epsg):
        self.name, self.values, self.left, self.top = name, values, left, top
        self.cell, self.epsg = cell, epsg

    @property
    def extent(self):
        rows, columns = self.values.shape
        return (self.left, self.top - rows * self.cell, self.left + columns * self.cell,
                self.top)

    def value_at(self, x, y, margin=0.0):
        """The value of the cell holding (x, y), NaN outside, on no data, or closer than
        `margin` cells to a cell edge."""
        fx, fy = (x - self.left) / self.cell, (self.top - y) / self.cell
        column, row = int(np.floor(fx)), int(np.floor(fy))
        rows, columns = self.values.shape
        near_edge = min(fx - column, column + 1 - fx, fy - row, row + 1 - fy) < margin
        if near_edge or not (0 <= column < columns and 0 <= row < rows):
            return float("nan")
        value = self.values[row, column]
        return float("nan") if value == NODATA else float(value)


def write_geotiff(directory, grid):
    """`grid` as a GeoTIFF written by GDAL from an ASCII grid."""
    rows, columns = grid.values.shape
    asc = directory / f"{grid.name}.asc"
    lines = [f"ncols {columns}", f"nrows {rows}", f"xllcorner {grid.extent[0]!r}",
             f"yllcorner {grid.extent[1]!r}", f"cellsize {grid.cell!r}", f"NODATA_value {NODATA}"]
    lines += [" ".join(f"{value:g}" for value in row) for row in grid.values]
    asc.write_text("\n".join(lines) + "\n")
    tif = directory / f"{grid.name}.tif"
    subprocess.run([require_tool("gdal_translate"), "-q", "-ot", "Float32", "-a_srs",
                    f"EPSG:{grid.epsg}", str(asc), str(tif)], check=True)
    return tif


def write_dfs2(directory):
    """A DFS2 in UTM 32N with three hourly steps, written by mikeio; the Grid of each step as
    mikeio reads the file back (cell centres, y up)."""
    columns, rows, cell = 30, 20, 50.0
    geometry = mikeio.Grid2D(nx=columns, ny=rows, dx=cell, dy=cell, origin=(605_000.0, 5_801_000.0),
                             projection="UTM-32")
    # mikeio's row 0 is the southernmost: flip the north-up pattern.
    data = np.stack([pattern(columns, rows, step)[::-1] for step in range(3)]).astype("float32")
    times = [time.replace("Z", "") for time in TIMES]
    array = mikeio.DataArray(data=data, time=times, geometry=geometry,
                             item=mikeio.ItemInfo("H", mikeio.EUMType.Water_Level))
    path = directory / "levels.dfs2"
    mikeio.Dataset([array]).to_dfs(path)
    back = mikeio.read(path)
    read_geometry = back.geometry
    left = float(read_geometry.x[0]) - read_geometry.dx / 2
    top = float(read_geometry.y[-1]) + read_geometry.dy / 2
    steps = [Grid("levels", back["H"].to_numpy()[step][::-1], left, top, read_geometry.dx, 32632)
             for step in range(3)]
    return path, steps


def upload(basin, project, path):
    with open(path, "rb") as file:
        response = requests.post(
            f"{basin.address}/api/conversion/project/{project}/file/upload",
            headers={"svc-open-api-key": basin.api_key},
            files={"file": (os.path.basename(path), file.read())}, timeout=120,
        )
    assert response.status_code == 201, response.text
    return response.json()["id"]


@pytest.fixture(scope="module")
def datasets(basin, tmp_path_factory):
    """The uploaded grids by name: dataset id, the Grid (a list of steps for the DFS2), the
    tiling metadata."""
    directory = tmp_path_factory.mktemp("grids")
    grids = [
        Grid("geographic", pattern(40, 30), 10.0, 55.3, 0.01, 4326),
        Grid("utm", pattern(50, 40), 600_000.0, 5_800_000.0, 100.0, 32632),
        Grid("gauss_kruger", pattern(24, 36), 3_500_000.0, 5_430_000.0, 250.0, 31467),
    ]
    for grid in grids:
        grid.values[3, 4] = NODATA
    project = basin.call("POST", "/api/metadata/project", {"name": "wmts clients"})["id"]
    found = {}
    for grid in grids:
        found[grid.name] = (upload(basin, project, write_geotiff(directory, grid)), grid)
    path, steps = write_dfs2(directory)
    found["dfs2"] = (upload(basin, project, path), steps)
    result = {}
    for name, (dataset, grid) in found.items():
        metadata = basin.call("GET", f"/api/tiles/dataset/{dataset}/metadata", api_version="1")
        result[name] = (dataset, grid, metadata)
    return result


def restful_url(basin, dataset):
    return f"{basin.address}/api/tiles/dataset/{dataset}/wmts100/1.0.0/WMTSCapabilities.xml"


def gdal(basin, tmp_path, *command):
    """Runs a GDAL tool with the API key header and a private tile cache; returns stdout."""
    result = subprocess.run(
        [require_tool(command[0]), *command[1:], "--config", "GDAL_HTTP_HEADERS",
         f"svc-open-api-key: {basin.api_key}", "--config", "GDAL_DEFAULT_WMS_CACHE_PATH",
         str(tmp_path / "gdal-cache")],
        capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_gdal_reads_the_key_value_address_when_it_asks_for_xml(basin, datasets, tmp_path):
    """The key-value address answers JSON unless Accept asks for XML (docs/tiles.md#wmts);
    GDAL sends the header when told to (GDAL_HTTP_HEADERS takes several, separated by CR
    LF)."""
    dataset, grid, _ = datasets["utm"]
    url = f"WMTS:{basin.address}/api/tiles/dataset/{dataset}/wmts"
    headers = f"svc-open-api-key: {basin.api_key}\r\nAccept: application/xml"
    result = subprocess.run(
        [require_tool("gdalinfo"), "-json", url, "--config", "GDAL_HTTP_HEADERS", headers],
        capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stderr
    names = json.loads(result.stdout)["metadata"]["SUBDATASETS"]
    assert any(value.endswith("tilematrixset=wmts-0") for value in names.values())


def native_scheme(metadata):
    return next(s for s in metadata["tilingSchemes"] if s["schemeId"] == "wmts-0")


def data_level(metadata, cell):
    """The level of wmts-0 whose pixel is one cell."""
    resolutions = native_scheme(metadata)["resolutions"]
    return next(level for level, size in enumerate(resolutions) if abs(size - cell) < 1e-9 * cell)


def values_of(rgba):
    """Values of RGBA pixels (rows, columns, 4): the ramp inverted; NaN where transparent."""
    values = np.full(rgba.shape[:2], np.nan)
    for (row, column), pixel in np.ndenumerate(rgba[:, :, 0]):
        colour = tuple(int(channel) for channel in rgba[row, column])
        if colour[3] == 0:
            continue
        assert colour in COLOUR_VALUE, f"pixel ({column}, {row}) {colour} is not a ramp colour"
        values[row, column] = COLOUR_VALUE[colour]
    return values


def first_grid(grid):
    return grid[0] if isinstance(grid, list) else grid


def test_gdal_sees_the_layer_in_both_matrix_sets(basin, datasets, tmp_path):
    for name, (dataset, grid, metadata) in datasets.items():
        info = json.loads(gdal(basin, tmp_path, "gdalinfo", "-json",
                               f"WMTS:{restful_url(basin, dataset)}"))
        names = [value for key, value in info["metadata"]["SUBDATASETS"].items()
                 if key.endswith("_NAME")]
        assert [n.rsplit("tilematrixset=", 1)[1] for n in names] == ["xyz-0", "wmts-0"], name
        assert all(",layer=item-0," in n for n in names), name


def test_gdal_opens_the_native_set_in_the_files_system_and_extent(basin, datasets, tmp_path):
    for name, (dataset, grid, metadata) in datasets.items():
        grid = first_grid(grid)
        info = json.loads(gdal(basin, tmp_path, "gdalinfo", "-json",
                               f"WMTS:{restful_url(basin, dataset)},layer=item-0,"
                               "tilematrixset=wmts-0"))
        wkt = info["coordinateSystem"]["wkt"]
        assert wkt.rstrip().endswith(f'ID["EPSG",{grid.epsg}]]'), (name, wkt[-80:])
        left, pixel, _, top, _, negative = info["geoTransform"]
        width, height = info["size"]
        # The finest level is two below the data's: four pixels per cell.
        assert pixel == pytest.approx(grid.cell / 4, rel=1e-12), name
        assert negative == pytest.approx(-grid.cell / 4, rel=1e-12), name
        extent = (left, top - height * pixel, left + width * pixel, top)
        assert extent == pytest.approx(grid.extent, rel=1e-12, abs=1e-9), name
        assert info["metadata"][""]["TITLE"] == native_scheme(metadata)["itemName"], name


def read_rgba(basin, tmp_path, source, *options):
    """gdal_translate of a WMTS source to raw RGBA bytes (ENVI, band sequential)."""
    target = tmp_path / "window.raw"
    gdal(basin, tmp_path, "gdal_translate", "-q", "-of", "ENVI", "-co", "INTERLEAVE=BSQ",
         *options, source, str(target))
    info = json.loads(gdal(basin, tmp_path, "gdalinfo", "-json", str(target)))
    width, height = info["size"]
    bands = np.fromfile(target, dtype=np.uint8).reshape(4, height, width)
    return np.moveaxis(bands, 0, -1), info["geoTransform"]


def test_gdal_translate_at_the_data_level_gives_every_cell(basin, datasets, tmp_path):
    for name, (dataset, grid, metadata) in datasets.items():
        grid = first_grid(grid)
        level = data_level(metadata, grid.cell)
        source = (f"WMTS:{restful_url(basin, dataset)},layer=item-0,tilematrixset=wmts-0,"
                  f"tilematrix={level}")
        rgba, transform = read_rgba(basin, tmp_path, source)
        assert transform[0] == pytest.approx(grid.left) and transform[3] == pytest.approx(grid.top)
        assert transform[1] == pytest.approx(grid.cell), name
        values = values_of(rgba)
        expected = np.where(grid.values == NODATA, np.nan, grid.values)
        np.testing.assert_array_equal(values, expected, err_msg=name)


def test_gdal_reads_web_mercator_tiles_with_the_cell_under_each_pixel(basin, datasets, tmp_path):
    to_data = {}
    for name, (dataset, grid, metadata) in datasets.items():
        grid = first_grid(grid)
        source = f"WMTS:{restful_url(basin, dataset)},layer=item-0,tilematrixset=xyz-0"
        rgba, (left, pixel, _, top, _, negative) = read_rgba(basin, tmp_path, source)
        values = values_of(rgba)
        transform = to_data.setdefault(grid.epsg, pyproj.Transformer.from_crs(
            3857, grid.epsg, always_xy=True))
        rows, columns = values.shape
        checked = mismatched = 0
        for row in range(rows):
            for column in range(columns):
                x, y = left + (column + 0.5) * pixel, top + (row + 0.5) * negative
                expected = grid.value_at(*transform.transform(x, y), margin=0.05)
                if np.isnan(expected):
                    continue
                checked += 1
                mismatched += values[row, column] != expected
        # Pixel centres 0.05 cells or more from an edge fall in one cell: all must match.
        assert checked > 0.5 * values.size, (name, checked, values.size)
        assert mismatched == 0, (name, mismatched, checked)


def owslib_service(basin, dataset, kvp=False):
    headers = {"svc-open-api-key": basin.api_key}
    if kvp:
        url = f"{basin.address}/api/tiles/dataset/{dataset}/wmts"
        headers["Accept"] = "application/xml"
    else:
        url = restful_url(basin, dataset)
    return owslib_wmts.WebMapTileService(url, headers=headers)


def png_values(data):
    return values_of(np.array(Image.open(io.BytesIO(data)).convert("RGBA")))


def tile_expectation(grid, metadata, level, row, column):
    """The values tile (row, column) of wmts-0 at `level` must show (NaN beside the data)."""
    scheme = native_scheme(metadata)
    size, left, top = scheme["tileWidth"], *scheme["topLeftCorner"]
    cell = scheme["resolutions"][level]
    expected = np.full((size, size), np.nan)
    for y_pixel in range(size):
        for x_pixel in range(size):
            x = left + (column * size + x_pixel + 0.5) * cell
            y = top - (row * size + y_pixel + 0.5) * cell
            expected[y_pixel, x_pixel] = grid.value_at(x, y)
    return expected


def test_owslib_fetches_the_same_tiles_by_kvp_and_rest(basin, datasets):
    for name, (dataset, grid, metadata) in datasets.items():
        grid = first_grid(grid)
        level = data_level(metadata, grid.cell)
        for kvp in (False, True):
            service = owslib_service(basin, dataset, kvp=kvp)
            assert list(service.contents) == ["item-0"], name
            layer = service["item-0"]
            assert sorted(layer.tilematrixsetlinks) == ["wmts-0", "xyz-0"], name
            limits = layer.tilematrixsetlinks["wmts-0"].tilematrixlimits[str(level)]
            extra = {"Time": TIMES[0]} if "Time" in layer.dimensions else {}
            for row in range(limits.mintilerow, limits.maxtilerow + 1):
                for column in range(limits.mintilecol, limits.maxtilecol + 1):
                    by_kvp = service.gettile(layer="item-0", tilematrixset="wmts-0",
                                             tilematrix=str(level), row=row, column=column).read()
                    url = service.buildTileResource(layer="item-0", tilematrixset="wmts-0",
                                                    tilematrix=str(level), row=row,
                                                    column=column, **extra)
                    by_rest = requests.get(url, headers={"svc-open-api-key": basin.api_key},
                                           timeout=60)
                    assert by_rest.status_code == 200, (name, url, by_rest.text)
                    assert by_rest.content == by_kvp, (name, row, column)
                    np.testing.assert_array_equal(
                        png_values(by_kvp), tile_expectation(grid, metadata, level, row, column),
                        err_msg=f"{name} tile {row} {column}")


def test_owslib_chooses_dfs2_steps_from_the_time_dimension(basin, datasets):
    dataset, steps, metadata = datasets["dfs2"]
    service = owslib_service(basin, dataset)
    layer = service["item-0"]
    assert layer.dimensions["Time"]["values"] == TIMES
    assert layer.dimensions["Time"]["default"] == TIMES[0]
    level = data_level(metadata, steps[0].cell)
    for step, time in enumerate(TIMES):
        url = service.buildTileResource(layer="item-0", tilematrixset="wmts-0",
                                        tilematrix=str(level), row=0, column=0, Time=time)
        by_rest = requests.get(url, headers={"svc-open-api-key": basin.api_key}, timeout=60)
        assert by_rest.status_code == 200, by_rest.text
        by_kvp = service.gettile(layer="item-0", tilematrixset="wmts-0", tilematrix=str(level),
                                 row=0, column=0, TIME=time).read()
        assert by_kvp == by_rest.content, time
        np.testing.assert_array_equal(png_values(by_kvp),
                                      tile_expectation(steps[step], metadata, level, 0, 0),
                                      err_msg=time)


CUBE = pathlib.Path(__file__).resolve().parents[1] / "corpus" / "dfs-samples" / "cube.dfs3"


def test_owslib_and_gdal_choose_dfs3_layers_from_the_vertical_layer_dimension(basin, tmp_path):
    """A DFS3's vertical layers are the WMTS dimension `VerticalLayer` (values 0 and 1 for the
    sample cube), which the templates name and GetTile takes by its identifier."""
    project = basin.call("POST", "/api/metadata/project", {"name": "wmts layers"})["id"]
    dataset = upload(basin, project, CUBE)
    service = owslib_service(basin, dataset)
    layer = service["item-0"]
    assert layer.dimensions["VerticalLayer"]["values"] == ["0", "1"]
    assert layer.dimensions["VerticalLayer"]["default"] == "0"
    time = layer.dimensions["Time"]["default"]
    tiles = []
    for vertical in ("0", "1"):
        url = service.buildTileResource(layer="item-0", tilematrixset="wmts-0", tilematrix="0",
                                        row=0, column=0, Time=time, VerticalLayer=vertical)
        by_rest = requests.get(url, headers={"svc-open-api-key": basin.api_key}, timeout=60)
        assert by_rest.status_code == 200, (url, by_rest.text)
        by_kvp = service.gettile(layer="item-0", tilematrixset="wmts-0", tilematrix="0", row=0,
                                 column=0, VerticalLayer=vertical).read()
        direct = requests.get(
            f"{basin.address}/api/tiles/dataset/{dataset}/scheme/wmts-0/0/0/0?layer={vertical}",
            headers={"svc-open-api-key": basin.api_key}, timeout=60)
        assert by_rest.content == by_kvp == direct.content, vertical
        tiles.append(by_kvp)
    assert tiles[0] != tiles[1]
    # GDAL fills the dimension with its default: layer 0.
    info = json.loads(gdal(basin, tmp_path, "gdalinfo", "-json", f"WMTS:{restful_url(basin, dataset)}"))
    assert info["size"][0] > 0
