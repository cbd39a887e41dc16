"""Differential tests of the DFS1/DFS2/DFS3 readers and writers against MIKE IO (the reference
implementation) and GDAL:

- random grids (sizes, items, NaNs, UTM-32 / LONG/LAT / NON-UTM, rotations, equidistant and
  non-equidistant time) written by MIKE IO are converted by Basin to DFS2 (and DFS1/DFS3 to
  themselves): MIKE IO reads Basin's file with the same values, times and coordinates, and
  with MIKE IO's titles the bytes are MIKE IO's apart from the timestamps (and, for projected
  grids, the last bits of the projection record's origin and orientation, which come from
  DHI's cartography library there and proj4rs here);
- the same DFS2 files converted to GeoTIFF: gdalinfo reports the size, the geotransform that
  puts every cell centre where MIKE IO puts it, NaN as nodata, and GDAL's raw values are MIKE
  IO's.

Tolerances (asserted with margin over what was measured on 80 seeds): cell centres within 1e-6 m
of MIKE IO's (measured 5.7e-7: MIKE IO rounds its origin to 1e-6 m; 1.9e-7 from DHI's unrounded
projection) and 1e-9 degrees (geographic, measured 0); orientation within 1e-7 degrees (measured
3.6e-10 on rewritten files).
MIKE IO places NON-UTM grids by the outer corner of the first cell, Basin by default by its
centre (as for every other projection, and as its writer writes them, so that DFS2 -> DFS2
keeps the file's origin): the GeoTIFF comparison reads NON-UTM grids with
CoordinateInterpretationType=BottomLeftBorder, which agrees with MIKE IO.
"""

import json
import random
import struct

import pytest

from formats_support import convert, require_module, require_tool, run

np = require_module("numpy")
pd = require_module("pandas")

SEEDS = list(range(12))
TIMESTAMPS = set(range(0x52, 0x5E)) | set(range(0x66, 0x72))
AS_MIKE_IO = ["-w", "Title=", "-w", "ApplicationTitle=mikeio", "-w", "ApplicationVersion=220"]


def mikeio():
    return require_module("mikeio")


def random_times(rng, steps):
    start = pd.Timestamp(2020, rng.randint(1, 12), rng.randint(1, 28), rng.randint(0, 23))
    if rng.random() < 0.5:
        return pd.date_range(start, periods=steps, freq=f"{rng.choice([60, 600, 3600])}s")
    offsets = np.cumsum([0] + [rng.randint(1, 5000) for _ in range(steps - 1)])
    return pd.DatetimeIndex([start + pd.Timedelta(seconds=int(s)) for s in offsets])


def random_values(rng, shape):
    generator = np.random.default_rng(rng.randint(0, 2**31))
    values = generator.normal(10.0, 5.0, size=shape).astype(np.float32)
    values[generator.random(shape) < 0.1] = np.nan
    return values


def random_dfs2(seed, path):
    """Writes a random DFS2 with MIKE IO; returns what it wrote (projection, rotation)."""
    m = mikeio()
    rng = random.Random(seed)
    nx, ny = rng.randint(1, 9), rng.randint(1, 9)
    projection = rng.choice(["UTM-32", "LONG/LAT", "NON-UTM"])
    rotated = projection != "LONG/LAT" and rng.random() < 0.5
    if projection == "LONG/LAT":
        dx, dy = rng.choice([0.1, 0.25, 0.5]), rng.choice([0.1, 0.2, 0.25])
        x0, y0 = rng.uniform(-20.0, 30.0), rng.uniform(40.0, 65.0)
    elif projection == "UTM-32":
        dx, dy = rng.choice([10.0, 50.0, 100.0]), rng.choice([10.0, 50.0, 200.0])
        x0, y0 = rng.uniform(300000.0, 700000.0), rng.uniform(5500000.0, 6500000.0)
    else:
        dx, dy = rng.choice([1.0, 2.5, 10.0]), rng.choice([1.0, 5.0])
        x0, y0 = rng.uniform(-1000.0, 1000.0), rng.uniform(-1000.0, 1000.0)
    if rotated:
        orientation = rng.uniform(-60.0, 60.0)
        geometry = m.Grid2D(nx=nx, ny=ny, dx=dx, dy=dy, origin=(x0, y0),
                            orientation=orientation, projection=projection)
    else:
        orientation = 0.0
        geometry = m.Grid2D(x0=x0, y0=y0, nx=nx, ny=ny, dx=dx, dy=dy, projection=projection)
    steps = rng.randint(1, 4)
    time = random_times(rng, steps)
    data = {}
    for index in range(rng.randint(1, 3)):
        item = m.ItemInfo(f"item {index}", rng.choice([m.EUMType.Water_Level,
                                                        m.EUMType.Water_Depth,
                                                        m.EUMType.Temperature]))
        data[item.name] = m.DataArray(random_values(rng, (steps, ny, nx)), time=time,
                                      geometry=geometry, item=item)
    m.Dataset(list(data.values())).to_dfs(str(path))
    return {"projection": projection, "orientation": orientation}


def reader_parameters(projection):
    return ["-p", "CoordinateInterpretationType=BottomLeftBorder"] if projection == "NON-UTM" else []


def centres(geometry):
    """MIKE IO's cell centres (ny, nx) of a Grid2D, rotated ones through its origin and
    orientation (MIKE IO's x and y are then local)."""
    x, y = np.meshgrid(geometry.x, geometry.y)
    if abs(geometry.orientation) > 1e-5:
        theta = np.radians(geometry.orientation)
        ox, oy = geometry.origin
        return (ox + x * np.cos(theta) + y * np.sin(theta),
                oy - x * np.sin(theta) + y * np.cos(theta))
    return x, y


def assert_same_dataset(ours, theirs):
    assert [item.name for item in ours.items] == [item.name for item in theirs.items]
    assert [item.type for item in ours.items] == [item.type for item in theirs.items]
    assert list(ours.time) == list(theirs.time)
    for a, b in zip(ours, theirs):
        assert np.array_equal(a.to_numpy(), b.to_numpy(), equal_nan=True)


def byte_differences(ours, theirs):
    assert len(ours) == len(theirs)
    return [offset for offset, (a, b) in enumerate(zip(ours, theirs))
            if a != b and offset not in TIMESTAMPS]


def projection_record_span(path):
    """Byte range of the projection record's three doubles (after its name string)."""
    data = path.read_bytes()
    at = data.index(b"\xfe" + struct.pack("<H", 10011))
    name_length = struct.unpack("<i", data[at + 4:at + 8])[0]
    start = at + 3 + 5 + name_length + 5
    return range(start, start + 24)


@pytest.mark.parametrize("seed", SEEDS)
def test_mikeio_dfs2_read_and_rewritten_by_basin(tmp_path, seed):
    m = mikeio()
    source = tmp_path / "mikeio.dfs2"
    written = random_dfs2(seed, source)
    ours = tmp_path / "basin.dfs2"
    # The default reading (origin = centre of the first cell) and the writer agree, so a
    # NON-UTM grid keeps its origin too.
    convert(source, ours, *AS_MIKE_IO)
    theirs_ds, ours_ds = m.read(str(source)), m.read(str(ours))
    assert_same_dataset(ours_ds, theirs_ds)
    g_ours, g_theirs = ours_ds.geometry, theirs_ds.geometry
    assert (g_ours.nx, g_ours.ny, g_ours.dx, g_ours.dy) == (g_theirs.nx, g_theirs.ny,
                                                            g_theirs.dx, g_theirs.dy)
    assert abs(g_ours.orientation - g_theirs.orientation) < 1e-7
    for a, b in zip(centres(g_ours), centres(g_theirs)):
        assert np.max(np.abs(a - b)) < 1e-6
    differences = byte_differences(ours.read_bytes(), source.read_bytes())
    allowed = projection_record_span(source) if written["projection"] == "UTM-32" else range(0)
    assert all(offset in allowed for offset in differences), differences


@pytest.mark.parametrize("seed", SEEDS)
def test_mikeio_dfs2_to_geotiff_read_by_gdal(tmp_path, seed):
    m = mikeio()
    require_tool("gdalinfo")
    source = tmp_path / "mikeio.dfs2"
    written = random_dfs2(seed, source)
    tif = tmp_path / "basin.tif"
    convert(source, tif, *reader_parameters(written["projection"]))
    dataset = m.read(str(source))
    info = json.loads(run("gdalinfo", "-json", tif))
    ny, nx = dataset.geometry.ny, dataset.geometry.nx
    assert info["size"] == [nx, ny]
    bands = info["bands"]
    assert len(bands) == dataset.n_items * dataset.n_timesteps
    assert all(str(band.get("noDataValue")).lower() == "nan" for band in bands)
    a, b, c, d, e, f = info["geoTransform"]
    x, y = centres(dataset.geometry)
    tolerance = 1e-9 if written["projection"] == "LONG/LAT" else 1e-6
    for row in range(ny):
        for column in range(nx):
            # GDAL's row 0 is the north row; MIKE IO's y index 0 the south one.
            gx = a + (column + 0.5) * b + (row + 0.5) * c
            gy = d + (column + 0.5) * e + (row + 0.5) * f
            assert abs(gx - x[ny - 1 - row, column]) < tolerance
            assert abs(gy - y[ny - 1 - row, column]) < tolerance
    raw = tmp_path / "values.envi"
    # ENVI cannot state a rotated transform with rectangular cells; the values do not need it.
    run("gdal_translate", "-q", "-of", "ENVI", "-co", "INTERLEAVE=BSQ",
        "-a_ullr", "0", str(ny), str(nx), "0", tif, raw)
    values = np.fromfile(raw, dtype=np.float32).reshape(len(bands), ny, nx)
    band = 0
    for step in range(dataset.n_timesteps):
        for item in dataset:
            expected = item.to_numpy().reshape(dataset.n_timesteps, ny, nx)[step][::-1]
            assert np.array_equal(values[band], expected, equal_nan=True)
            band += 1


@pytest.mark.parametrize("seed", SEEDS[:6])
def test_mikeio_dfs1_and_dfs3_rewritten_by_basin(tmp_path, seed):
    m = mikeio()
    rng = random.Random(seed)
    steps = rng.randint(1, 3)
    time = random_times(rng, steps)
    line = m.Grid1D(x0=rng.uniform(-100, 100), dx=rng.choice([1.0, 25.0]), nx=rng.randint(1, 9))
    cube = m.Grid3D(x0=0.0, dx=rng.choice([1.0, 10.0]), nx=rng.randint(1, 5),
                    y0=0.0, dy=rng.choice([1.0, 20.0]), ny=rng.randint(1, 5),
                    z0=rng.uniform(-20, 0), dz=rng.choice([1.0, 5.0]), nz=rng.randint(1, 4))
    for geometry, extension, shape in [(line, "dfs1", (steps, line.nx)),
                                       (cube, "dfs3", (steps, cube.nz, cube.ny, cube.nx))]:
        item = m.ItemInfo("value", m.EUMType.Salinity)
        array = m.DataArray(random_values(rng, shape), time=time, geometry=geometry, item=item)
        source = tmp_path / f"mikeio.{extension}"
        m.Dataset([array]).to_dfs(str(source))
        ours = tmp_path / f"basin.{extension}"
        convert(source, ours, *AS_MIKE_IO)
        assert_same_dataset(m.read(str(ours)), m.read(str(source)))
        assert byte_differences(ours.read_bytes(), source.read_bytes()) == []


def test_basin_dfs3_to_vtu_read_by_meshio(tmp_path):
    meshio = require_module("meshio")
    m = mikeio()
    geometry = m.Grid3D(x0=0.0, dx=10.0, nx=4, y0=0.0, dy=20.0, ny=3, z0=-10.0, dz=5.0, nz=2)
    values = np.arange(24, dtype=np.float32).reshape(1, 2, 3, 4)
    values[0, 1, 2, 3] = np.nan
    array = m.DataArray(values, time=pd.date_range("2022-01-01", periods=1), geometry=geometry,
                        item=m.ItemInfo("Salinity", m.EUMType.Salinity))
    source = tmp_path / "cube.dfs3"
    m.Dataset([array]).to_dfs(str(source))
    target = tmp_path / "cube.vtu"
    convert(source, target)
    mesh = meshio.read(target)
    assert [block.type for block in mesh.cells] == ["hexahedron"]
    assert len(mesh.cells[0].data) == 24
    cell_values = mesh.cell_data["Salinity"][0]
    # Cells in layer, row (north first), column order.
    expected = values[0][:, ::-1, :].reshape(-1)
    assert np.array_equal(cell_values, expected, equal_nan=True)
    # The first cell is the north-west cell of the bottom layer: x 0..10, y 40..60, z -12.5..-7.5.
    corners = mesh.points[mesh.cells[0].data[0]]
    assert corners[:, 0].min() == 0.0 and corners[:, 0].max() == 10.0
    assert corners[:, 1].min() == 40.0 and corners[:, 1].max() == 60.0
    assert corners[:, 2].min() == -12.5 and corners[:, 2].max() == -7.5


def write_asc(path, columns, rows, header, values):
    lines = [f"ncols {columns}", f"nrows {rows}", *header]
    lines += [" ".join(str(v) for v in row) for row in values]
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("epsg", [32632, 4326])
def test_gdal_geotiff_to_dfs2_read_by_mikeio(tmp_path, epsg):
    """A GeoTIFF made by GDAL (Int16 with nodata -9999) converted by Basin to DFS2: MIKE IO
    reads float values with NaN where the nodata was, cells where GDAL has them."""
    m = mikeio()
    require_tool("gdal_translate")
    values = np.arange(12, dtype=np.int16).reshape(3, 4) * 7 - 20
    values[1, 2] = -9999
    asc = tmp_path / "grid.asc"
    corner = ("xllcorner 500000", "yllcorner 6000000", "cellsize 25") if epsg == 32632 else \
        ("xllcorner 10.5", "yllcorner 55.25", "cellsize 0.125")
    write_asc(asc, 4, 3, [*corner, "NODATA_value -9999"], values)
    tif = tmp_path / "grid.tif"
    run("gdal_translate", "-q", "-ot", "Int16", "-a_srs", f"EPSG:{epsg}", asc, tif)
    dfs2 = tmp_path / "grid.dfs2"
    convert(tif, dfs2)
    dataset = m.read(str(dfs2))
    got = dataset[0].to_numpy()[0]  # MIKE IO rows south to north
    expected = values[::-1].astype(np.float32)
    expected[expected == -9999] = np.nan
    assert np.array_equal(got, expected, equal_nan=True)
    info = json.loads(run("gdalinfo", "-json", tif))
    a, b, _, d, _, f = info["geoTransform"]
    x, y = centres(dataset.geometry)
    tolerance = 1e-6 if epsg == 32632 else 1e-9
    assert abs(x[0, 0] - (a + b / 2)) < tolerance
    assert abs(y[0, 0] - (d + f * 2.5)) < tolerance
    assert abs(x[0, 1] - x[0, 0] - b) < tolerance


def test_dfs2_to_ascii_grid_read_by_gdal(tmp_path):
    """One item of one step of a MIKE IO DFS2 with NaN written as ASCII Grid: GDAL reads the
    NaN nodata and the values, and MIKE IO reads Basin's DFS2 made from that .asc back."""
    m = mikeio()
    require_tool("gdal_translate")
    geometry = m.Grid2D(x0=500000.0, y0=6000000.0, nx=3, ny=2, dx=10.0, dy=10.0,
                        projection="UTM-32")
    values = np.arange(6, dtype=np.float32).reshape(1, 2, 3)
    values[0, 0, 1] = np.nan
    array = m.DataArray(values, time=pd.date_range("2020-01-01", periods=1), geometry=geometry,
                        item=m.ItemInfo("H", m.EUMType.Water_Level))
    source = tmp_path / "a.dfs2"
    m.Dataset([array]).to_dfs(str(source))
    asc = tmp_path / "a.asc"
    convert(source, asc)
    info = json.loads(run("gdalinfo", "-json", asc))
    assert str(info["bands"][0]["noDataValue"]).lower() == "nan"
    xyz = tmp_path / "a.xyz"
    run("gdal_translate", "-q", "-of", "XYZ", asc, xyz)
    rows = [line.split() for line in xyz.read_text().splitlines()]
    got = np.array([float(row[2]) for row in rows]).reshape(2, 3)
    assert np.array_equal(got, values[0][::-1], equal_nan=True)
    assert abs(float(rows[0][0]) - 500000.0) < 1e-6
    assert abs(float(rows[0][1]) - 6000010.0) < 1e-6
    back = tmp_path / "back.dfs2"
    convert(asc, back)
    again = m.read(str(back))
    assert np.array_equal(again[0].to_numpy(), values, equal_nan=True)
    assert np.allclose(again.geometry.x, [500000.0, 500010.0, 500020.0], atol=1e-6, rtol=0)
    assert np.allclose(again.geometry.y, [6000000.0, 6000010.0], atol=1e-6, rtol=0)


@pytest.mark.parametrize("seed", SEEDS[:6])
def test_mikeio_dfs2_to_vtu_read_by_meshio(tmp_path, seed):
    """Each cell a quad whose centre is MIKE IO's cell centre, with MIKE IO's values (the last
    step, selected with a one-step file)."""
    meshio = require_module("meshio")
    m = mikeio()
    source = tmp_path / "mikeio.dfs2"
    written = random_dfs2(seed, source)
    dataset = m.read(str(source))
    one_step = tmp_path / "one.dfs2"
    dataset.isel(time=[-1]).to_dfs(str(one_step))
    target = tmp_path / "basin.vtu"
    convert(one_step, target, *reader_parameters(written["projection"]))
    mesh = meshio.read(target)
    assert [block.type for block in mesh.cells] == ["quad"]
    ny, nx = dataset.geometry.ny, dataset.geometry.nx
    quads = mesh.cells[0].data
    assert len(quads) == nx * ny
    centre = mesh.points[quads].mean(axis=1)
    x, y = centres(dataset.geometry)
    tolerance = 1e-9 if written["projection"] == "LONG/LAT" else 1e-6
    # VTU cells run north to south, MIKE IO's rows south to north.
    assert np.max(np.abs(centre[:, 0] - x[::-1].reshape(-1))) < tolerance
    assert np.max(np.abs(centre[:, 1] - y[::-1].reshape(-1))) < tolerance
    for item in dataset:
        got = mesh.cell_data[item.name][0]
        want = item.to_numpy()[-1][::-1].reshape(-1)
        assert np.array_equal(got, want, equal_nan=True)
    # Counter-clockwise seen from above (positive signed area).
    corners = mesh.points[quads][:, :, :2]
    area = 0.5 * np.sum(corners[:, :, 0] * np.roll(corners[:, :, 1], -1, axis=1)
                        - np.roll(corners[:, :, 0], -1, axis=1) * corners[:, :, 1], axis=1)
    assert np.all(area > 0)
