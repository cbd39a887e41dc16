"""Differential tests of DFSU against MIKE IO (the reference implementation) and meshio.

Random 2D meshes of mixed triangles and quadrilaterals with random items, NaNs and equidistant
or non-equidistant time, and random values and water levels on the layered sample, are written
by MIKE IO (and a sigma-z mesh by mikecore's DfsuBuilder, as MIKE IO cannot build one); Basin
then
- writes them back as DFSU: with MIKE IO's titles the bytes must be MIKE IO's, timestamps
  aside, and MIKE IO must read the same values;
- converts them to VTU: meshio must read, at every step, the points (z moving with MIKE IO's
  `zn` in a layered file), the cells and the cell data MIKE IO reads;
- converts one step to GeoJSON and Shapefile: every element a polygon with that step's values
  (the Shapefile read by ogr2ogr).
The top layer of the sigma-z file (`ReadFull3D=false`) must be MIKE IO's 2D geometry and
`read(layers="top")`. And .mesh -> DFSU: MIKE IO reads the bathymetry item Basin derives. A fixed seed list keeps
failures reproducible.
"""

import json
import os
import random

import pytest

from formats_support import ROOT, convert, require_module, require_tool, run
from test_formats_meshes import random_mesh

np = require_module("numpy")
pd = require_module("pandas")
meshio = require_module("meshio")

SEEDS = [1, 2, 3, 5, 8, 13, 21, 34]
SAMPLES = os.path.join(ROOT, "tests", "corpus", "dfs-samples")
# Item types MIKE IO knows, with their default units.
EUM_TYPES = ["Water_Level", "Current_Speed", "Temperature", "Salinity", "Bathymetry",
             "Wind_speed", "Precipitation_Rate"]


def mikeio():
    return require_module("mikeio")


def random_times(rng, steps):
    start = pd.Timestamp(2020, 1, 1) + pd.Timedelta(seconds=rng.randint(0, 10**8))
    if rng.random() < 0.5:
        return pd.date_range(start, periods=steps, freq=f"{rng.choice([60, 900, 3600])}s")
    offsets = np.cumsum([0] + [rng.randint(1, 10000) for _ in range(steps - 1)])
    return pd.DatetimeIndex([start + pd.Timedelta(seconds=int(s)) for s in offsets])


def random_values(rng, shape):
    values = np.array([rng.uniform(-100.0, 100.0) for _ in range(int(np.prod(shape)))],
                      dtype=np.float32).reshape(shape)
    for index in range(values.size):
        if rng.random() < 0.1:
            values.flat[index] = np.nan
    return values


def random_dataset(seed):
    """A random 2D dataset and MIKE IO's writing of it."""
    io = mikeio()
    rng = random.Random(seed)
    nodes, elements, codes = random_mesh(seed)
    geometry = io.spatial.GeometryFM2D(
        node_coordinates=nodes, element_table=[np.array(e) for e in elements], codes=codes,
        projection=rng.choice(["UTM-32", "LONG/LAT", "NON-UTM"]))
    steps = rng.randint(1, 6)
    time = random_times(rng, steps)
    arrays = []
    for index in range(rng.randint(1, 4)):
        eum = getattr(io.EUMType, rng.choice(EUM_TYPES))
        arrays.append(io.DataArray(
            data=random_values(rng, (steps, len(elements))), time=time, geometry=geometry,
            item=io.ItemInfo(f"item {index} {eum.display_name}", eum)))
    return io.Dataset(arrays)


def random_layered(seed):
    """The layered sample with random values and water levels (MIKE IO's `zn`)."""
    io = mikeio()
    rng = random.Random(seed)
    dataset = io.read(os.path.join(SAMPLES, "mesh3d_sigma.dfsu"))
    dataset["Temperature"].values[:] = random_values(rng, dataset["Temperature"].shape)
    zn = dataset._zn.copy()
    top = zn >= -1e-6
    zn[top] = np.float32(rng.uniform(-0.5, 0.5))
    dataset._zn[:] = zn
    return dataset


def write_sigma_z(path, seed):
    """A sigma-z mesh written by mikecore's DfsuBuilder: a square split into a deep triangle
    (one z layer under two sigma layers) and a shallow one (two sigma layers), with random
    water levels and salinity over 3 steps."""
    import datetime

    from mikecore.DfsFactory import DfsFactory
    from mikecore.DfsuBuilder import DfsuBuilder
    from mikecore.DfsuFile import DfsuFileType
    from mikecore.eum import eumItem, eumQuantity, eumUnit
    rng = random.Random(seed)
    levels = {0: [-20, -10, -5, 0], 1: [-22, -10, -5, 0], 2: [-21, -10, -5, 0], 3: [-8, -4, 0]}
    corners = {0: (0, 0), 1: (100, 0), 2: (100, 100), 3: (0, 100)}
    x, y, z, codes, index = [], [], [], [], {}
    for node, depths in levels.items():
        for level, depth in enumerate(depths):
            index[(node, level)] = len(x)
            x.append(corners[node][0])
            y.append(corners[node][1])
            z.append(depth + rng.uniform(-1, 1) * (level == 0))
            codes.append(1 if level == 0 else 0)

    def prism(nodes, bottom_levels):
        bottom = [index[(n, level)] + 1 for n, level in zip(nodes, bottom_levels)]
        top = [index[(n, level + 1)] + 1 for n, level in zip(nodes, bottom_levels)]
        return np.array(bottom + top, np.int32)

    elements = [prism((0, 1, 2), (level,) * 3) for level in range(3)]
    elements += [prism((0, 2, 3), (1, 1, 0)), prism((0, 2, 3), (2, 2, 1))]
    builder = DfsuBuilder.Create(DfsuFileType.Dfsu3DSigmaZ)
    builder.SetNodes(x, y, z, codes)
    builder.SetElements(elements)
    builder.SetNumberOfSigmaLayers(2)
    builder.SetProjection(DfsFactory().CreateProjection("UTM-32"))
    builder.SetTimeInfo(datetime.datetime(2021, 1, 1), 60.0)
    builder.AddDynamicItem("Salinity", eumQuantity(eumItem.eumISalinity, eumUnit.eumUPSU))
    dfsu = builder.CreateFile(str(path))
    surface = [index[(node, len(depths) - 1)] for node, depths in levels.items()]
    for _ in range(3):
        zn = np.array(z, np.float32)
        zn[surface] = [rng.uniform(-0.5, 0.5) for _ in surface]
        dfsu.WriteItemTimeStepNext(0, zn)
        dfsu.WriteItemTimeStepNext(0, np.array([rng.uniform(0, 35) for _ in elements], np.float32))
    dfsu.Close()
    return path


def write(tmp_path, name, dataset):
    path = tmp_path / name
    dataset.to_dfs(str(path))
    return path


def same_values(actual, expected):
    assert actual.shape == expected.shape
    assert np.array_equal(np.asarray(actual, np.float32), np.asarray(expected, np.float32),
                          equal_nan=True)


def without_timestamps(path):
    data = bytearray(open(path, "rb").read())
    data[0x52:0x5E] = bytes(12)
    data[0x66:0x72] = bytes(12)
    return bytes(data)


def check_round_trip(tmp_path, source, application="mikeio", version=220):
    target = tmp_path / "basin.dfsu"
    convert(source, target, "-w", f"ApplicationTitle={application}", "-w",
            f"ApplicationVersion={version}")
    assert without_timestamps(target) == without_timestamps(source)
    expected, actual = mikeio().read(str(source)), mikeio().read(str(target))
    assert list(actual.time) == list(expected.time)
    for a, e in zip(actual, expected):
        assert a.name == e.name and a.type == e.type and a.unit == e.unit
        same_values(a.to_numpy(), e.to_numpy())


@pytest.mark.parametrize("seed", SEEDS)
def test_random_meshes_round_trip_byte_for_byte(tmp_path, seed):
    check_round_trip(tmp_path, write(tmp_path, "mikeio.dfsu", random_dataset(seed)))


@pytest.mark.parametrize("seed", SEEDS[:4])
def test_layered_files_round_trip_byte_for_byte(tmp_path, seed):
    check_round_trip(tmp_path, write(tmp_path, "mikeio.dfsu", random_layered(seed)))


def check_vtu(tmp_path, source):
    dataset = mikeio().read(str(source))
    geometry = dataset.geometry
    convert(source, tmp_path / "steps.pvd")
    elements = [np.asarray(e) for e in geometry.element_table]
    kinds = {3: "triangle", 4: "quad", 6: "wedge", 8: "hexahedron"}
    for step in range(len(dataset.time)):
        mesh = meshio.read(str(tmp_path / "steps" / f"steps_{step:04d}.vtu"))
        points = np.asarray(geometry.node_coordinates, np.float64).copy()
        if getattr(dataset, "_zn", None) is not None:
            points[:, 2] = dataset._zn[step]
        assert np.array_equal(mesh.points[:, :2], points[:, :2])
        assert np.array_equal(mesh.points[:, 2].astype(np.float32), points[:, 2].astype(np.float32))
        cells = [(block.type, row) for block in mesh.cells for row in block.data]
        assert [kind for kind, _ in cells] == [kinds[len(e)] for e in elements]
        # meshio turns VTK's wedge into gmsh's prism order (its vtk_to_meshio_order); the file
        # holds MIKE's order, which is VTK's.
        gmsh_prism = [0, 2, 1, 3, 5, 4]
        for (kind, row), element in zip(cells, elements):
            expected = element[gmsh_prism] if kind == "wedge" else element
            assert np.array_equal(row, expected)
        assert "Z coordinate" not in mesh.point_data
        for item in dataset:
            values = np.concatenate(mesh.cell_data[item.name])
            same_values(values, item.to_numpy()[step])


@pytest.mark.parametrize("seed", SEEDS[:4])
def test_vtu_steps_match_mikeio(tmp_path, seed):
    check_vtu(tmp_path, write(tmp_path, "mikeio.dfsu", random_dataset(seed)))


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_layered_vtu_points_move_with_the_water_level(tmp_path, seed):
    check_vtu(tmp_path, write(tmp_path, "mikeio.dfsu", random_layered(seed)))


@pytest.mark.parametrize("seed", SEEDS[:4])
def test_one_step_becomes_polygons(tmp_path, seed):
    source = write(tmp_path, "mikeio.dfsu", random_dataset(seed))
    dataset = mikeio().read(str(source))
    steps = len(dataset.time)
    step = random.Random(seed).randrange(steps)
    convert(source, tmp_path / "out.geojson", "-w", f"TimeStep={step}")
    convert(source, tmp_path / "out.shp", "-w", f"TimeStep={step - steps}")
    ogr2ogr = require_tool("ogr2ogr")
    run(ogr2ogr, "-f", "GeoJSON", tmp_path / "shp.geojson", tmp_path / "out.shp")
    coordinates = np.asarray(dataset.geometry.node_coordinates)
    for name in ("out.geojson", "shp.geojson"):
        features = json.load(open(tmp_path / name))["features"]
        assert len(features) == dataset.geometry.n_elements
        for element, feature in enumerate(features):
            ring = np.asarray(feature["geometry"]["coordinates"][0])
            nodes = dataset.geometry.element_table[element]
            corners = set(map(tuple, np.round(ring[:-1, :2], 6)))
            assert corners == set(map(tuple, np.round(coordinates[nodes, :2], 6)))
            properties = list(feature["properties"].values())[1:]
            for value, item in zip(properties, dataset):
                expected = item.to_numpy()[step][element]
                if np.isnan(expected):
                    assert value is None
                else:
                    assert value == pytest.approx(float(expected), rel=1e-6, abs=1e-9)


def test_a_mesh_file_becomes_a_bathymetry_item(tmp_path):
    source = os.path.join(SAMPLES, "mesh2d_mixed.mesh")
    convert(source, tmp_path / "mesh.dfsu")
    dataset = mikeio().read(str(tmp_path / "mesh.dfsu"))
    mesh = mikeio().Mesh(source).geometry
    assert dataset.n_items == 1 and dataset[0].type == mikeio().EUMType.Bathymetry
    depths = [mesh.node_coordinates[np.asarray(e), 2].mean() for e in mesh.element_table]
    assert np.allclose(dataset[0].to_numpy()[0], depths)
    assert np.array_equal(dataset.geometry.node_coordinates[:, :2], mesh.node_coordinates[:, :2])


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_a_sigma_z_file_round_trips_and_moves_its_points(tmp_path, seed):
    source = write_sigma_z(tmp_path / "sigma_z.dfsu", seed)
    check_round_trip(tmp_path, source, application="", version=0)
    check_vtu(tmp_path, source)


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_the_top_layer_is_mikeios(tmp_path, seed):
    source = write_sigma_z(tmp_path / "sigma_z.dfsu", seed)
    io = mikeio()
    expected = io.read(str(source), layers="top")
    surface = io.read(str(source)).geometry.geometry2d
    convert(source, tmp_path / "top.mesh", "-p", "ReadFull3D=false")
    mesh = io.Mesh(str(tmp_path / "top.mesh")).geometry
    assert np.array_equal(mesh.node_coordinates[:, :2], surface.node_coordinates[:, :2])
    assert np.array_equal(mesh.node_coordinates[:, 2].astype(np.float32),
                          surface.node_coordinates[:, 2].astype(np.float32))
    assert [list(e) for e in mesh.element_table] == [list(e) for e in surface.element_table]
    for step in range(len(expected.time)):
        convert(source, tmp_path / "top.geojson", "-p", "ReadFull3D=false", "-w",
                f"TimeStep={step}")
        features = json.load(open(tmp_path / "top.geojson"))["features"]
        values = [feature["properties"]["Salinity"] for feature in features]
        assert np.array_equal(np.float32(values), expected["Salinity"].to_numpy()[step])
