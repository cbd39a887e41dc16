"""Differential tests of the mesh formats: MIKE .mesh against mikeio (the reference
implementation, on random meshes), VTU against meshio (Basin's output read by meshio, meshio's
output read by Basin, ascii, binary and zlib), XYZ -> VTU checked with meshio, and a time
series written as a .pvd plus a folder of steps read step by step with meshio.

Values must agree exactly: both .mesh writers print round-trip representations of float64
and VTU stores float64 points, so no tolerance is needed anywhere.
"""

import json
import os
import random
import zipfile
from xml.etree import ElementTree

import pytest

from formats_support import (BINARY, ROOT, convert, require_implemented, require_module,
                             require_tool, run, skip_or_fail)

np = require_module("numpy")
meshio = require_module("meshio")

FIXTURES = os.path.join(ROOT, "crates", "formats", "tests", "fixtures", "meshes")
FIXTURE_MESHES = ["quad_tri.mesh", "odense_rough.mesh", "mesh2d_mixed.mesh"]
UTM17_WKT = (
    'PROJCS["UTM-17",GEOGCS["Unused",DATUM["UTM Projections",SPHEROID["WGS 1984",6378137,'
    '298.257223563]],PRIMEM["Greenwich",0],UNIT["Degree",0.0174532925199433]],'
    'PROJECTION["Transverse_Mercator"],PARAMETER["False_Easting",500000],'
    'PARAMETER["False_Northing",0],PARAMETER["Central_Meridian",-81],'
    'PARAMETER["Scale_Factor",0.9996],PARAMETER["Latitude_Of_Origin",0],UNIT["Meter",1]]'
)


def mikeio():
    try:
        import mikeio as module
    except ImportError as error:  # pragma: no cover - depends on the machine
        skip_or_fail(f"mikeio not importable ({error}); pip install mikeio (Linux x86-64)")
    return module


def random_mesh(seed):
    """A perturbed nx x ny grid whose cells are quads or split into two triangles, with
    random z, boundary codes on the outline and full-precision coordinates."""
    rng = random.Random(seed)
    nx, ny = rng.randint(2, 9), rng.randint(2, 9)
    x0, y0 = rng.uniform(-1e6, 1e6), rng.uniform(-1e7, 1e7)
    nodes, codes = [], []
    for j in range(ny):
        for i in range(nx):
            jitter = (rng.uniform(-0.3, 0.3), rng.uniform(-0.3, 0.3))
            x = x0 + (i + jitter[0]) * rng.choice([1.0, 123.456789, 1e-3])
            y = y0 + (j + jitter[1]) * 97.1234567891
            nodes.append((x, y, rng.uniform(-50.0, 5.0)))
            outline = i in (0, nx - 1) or j in (0, ny - 1)
            codes.append(rng.choice([1, 2, 3]) if outline else 0)
    elements = []
    for j in range(ny - 1):
        for i in range(nx - 1):
            a, b = j * nx + i, j * nx + i + 1
            c, d = b + nx, a + nx
            if rng.random() < 0.5:
                elements.append([a, b, c, d])
            else:
                elements.append([a, b, c])
                elements.append([a, c, d])
    return np.array(nodes), elements, np.array(codes)


def write_with_mikeio(path, nodes, elements, codes, projection):
    geometry = mikeio().spatial.GeometryFM2D(
        node_coordinates=nodes,
        element_table=[np.array(element) for element in elements],
        codes=codes,
        projection=projection,
    )
    geometry.to_mesh(str(path))


def assert_same_mesh(path, nodes, elements, codes, projection):
    geometry = mikeio().Mesh(str(path)).geometry
    assert np.array_equal(geometry.node_coordinates[:, :2], nodes[:, :2])
    # mikeio's writer stores z as float32 (it prints "3.2289996"), so compare z in float32.
    assert np.array_equal(geometry.node_coordinates[:, 2].astype(np.float32), nodes[:, 2].astype(np.float32))
    assert list(geometry.codes) == list(codes)
    assert [list(element) for element in geometry.element_table] == [
        list(element) for element in elements
    ]
    assert geometry.projection_string == projection


@pytest.mark.parametrize("seed", range(8))
def test_random_mesh_written_by_mikeio_round_trips_through_basin(tmp_path, seed):
    nodes, elements, codes = random_mesh(seed)
    projection = ["UTM-32", "LONG/LAT", UTM17_WKT, "NON-UTM"][seed % 4]
    source = tmp_path / "source.mesh"
    write_with_mikeio(source, nodes, elements, codes, projection)
    target = tmp_path / "basin.mesh"
    convert(source, target)
    assert_same_mesh(target, nodes, elements, codes, projection)
    written_by_mikeio = mikeio().Mesh(str(source)).geometry
    written_by_basin = mikeio().Mesh(str(target)).geometry
    assert np.array_equal(written_by_basin.node_coordinates, written_by_mikeio.node_coordinates)
    with open(target) as text:
        assert text.readline().startswith("100079 1000 ")


def test_old_header_variant_reads(tmp_path):
    nodes, elements, codes = random_mesh(42)
    source = tmp_path / "old.mesh"
    with open(source, "w") as out:
        out.write(f"{len(nodes)}  UTM-33\n")
        for index, ((x, y, z), code) in enumerate(zip(nodes, codes)):
            out.write(f"{index + 1}\t{float(x)!r}\t{float(y)!r}\t{float(z)!r}\t{code}\n")
        quads = any(len(element) == 4 for element in elements)
        out.write(f"{len(elements)} {4 if quads else 3} {25 if quads else 21}\n")
        for index, element in enumerate(elements):
            refs = [node + 1 for node in element] + [0] * ((4 if quads else 3) - len(element))
            out.write(f"{index + 1} {' '.join(map(str, refs))} \n")
    assert_same_mesh(source, nodes, elements, codes, "UTM-33")
    target = tmp_path / "new.mesh"
    convert(source, target)
    assert_same_mesh(target, nodes, elements, codes, "UTM-33")


def vtu_cells(mesh):
    """(VTK type name, node list) of every cell in file order."""
    return [
        (block.type, list(map(int, cell))) for block in mesh.cells for cell in block.data
    ]


MESHIO_TYPES = {3: "triangle", 4: "quad"}


@pytest.mark.parametrize("fmt", ["ascii", "binary"])
@pytest.mark.parametrize("name", FIXTURE_MESHES + ["random"])
def test_mesh_to_vtu_read_by_meshio_matches_mikeio(tmp_path, fmt, name):
    if name == "random":
        nodes, elements, codes = random_mesh(7)
        source = tmp_path / "random.mesh"
        write_with_mikeio(source, nodes, elements, codes, "UTM-32")
    else:
        source = os.path.join(FIXTURES, name)
    reference = mikeio().Mesh(str(source)).geometry
    target = tmp_path / "out.vtu"
    convert(source, target, "-w", f"Format={fmt}")
    with open(target) as text:
        assert f'format="{fmt}"' in text.read()
    mesh = meshio.read(str(target))
    assert np.array_equal(mesh.points, reference.node_coordinates)
    expected = [
        (MESHIO_TYPES[len(element)], list(map(int, element)))
        for element in reference.element_table
    ]
    assert vtu_cells(mesh) == expected
    codes = np.asarray(reference.codes)
    if codes.any():
        assert np.array_equal(np.ravel(mesh.point_data["boundary_code"]), codes)


def test_a_pvd_output_names_its_steps_in_a_folder_meshio_reads(tmp_path):
    # Issue 33: `b.pvd` gives the collection plus `b/b_0000.vtu`, ...; the steps are the same
    # files that a `b.vtu` output packs into `b.zip`.
    source = os.path.join(ROOT, "tests", "corpus", "dfs-samples", "mesh2d_mixed.dfsu")
    convert(source, tmp_path / "b.pvd")
    assert sorted(os.listdir(tmp_path)) == ["b", "b.pvd"]
    datasets = ElementTree.parse(tmp_path / "b.pvd").getroot().findall("./Collection/DataSet")
    names = [f"b_{step:04d}.vtu" for step in range(5)]
    assert [dataset.get("file") for dataset in datasets] == [f"b/{name}" for name in names]
    assert [float(dataset.get("timestep")) for dataset in datasets] == [0, 900, 1800, 2700, 3600]
    assert sorted(os.listdir(tmp_path / "b")) == names
    convert(source, tmp_path / "z.vtu")
    assert not (tmp_path / "z.vtu").exists()
    with zipfile.ZipFile(tmp_path / "z.zip") as archive:
        archive.extractall(tmp_path / "unzipped")
    for dataset, name in zip(datasets, names):
        loose = meshio.read(str(tmp_path / dataset.get("file")))
        zipped = meshio.read(str(tmp_path / "unzipped" / f"z_{name[2:]}"))
        assert np.array_equal(loose.points, zipped.points)
        assert vtu_cells(loose) == vtu_cells(zipped)
        assert loose.cell_data.keys() == zipped.cell_data.keys() and loose.cell_data
        for key in loose.cell_data:
            for a, b in zip(loose.cell_data[key], zipped.cell_data[key]):
                assert np.array_equal(a, b, equal_nan=True)


@pytest.mark.parametrize("name", FIXTURE_MESHES)
def test_mesh_to_vtu_to_mesh_keeps_the_geometry(tmp_path, name):
    source = os.path.join(FIXTURES, name)
    reference = mikeio().Mesh(source).geometry
    convert(source, tmp_path / "step.vtu")
    convert(tmp_path / "step.vtu", tmp_path / "back.mesh")
    back = mikeio().Mesh(str(tmp_path / "back.mesh")).geometry
    assert np.array_equal(back.node_coordinates, reference.node_coordinates)
    assert list(back.codes) == list(reference.codes)
    assert [list(e) for e in back.element_table] == [list(e) for e in reference.element_table]


def meshio_mesh(seed):
    """A mixed mesh with cell data of three types and 1- and 3-component point data."""
    nodes, elements, _ = random_mesh(seed)
    rng = np.random.default_rng(seed)
    triangles = [e for e in elements if len(e) == 3]
    quads = [e for e in elements if len(e) == 4]
    cells = [(kind, np.array(block)) for kind, block in (("triangle", triangles), ("quad", quads)) if block]
    sizes = [len(block) for _, block in cells]
    depth = [rng.normal(size=size) for size in sizes]
    depth[0][0] = np.nan
    return meshio.Mesh(
        nodes,
        cells,
        point_data={
            "level": rng.normal(size=len(nodes)),
            "velocity": rng.normal(size=(len(nodes), 3)),
        },
        cell_data={
            "depth": depth,
            "speed": [rng.normal(size=size).astype(np.float32) for size in sizes],
            "zone": [rng.integers(-1000, 1000, size=size, dtype=np.int32) for size in sizes],
        },
    )


def concatenated(mesh, name):
    return np.concatenate(mesh.cell_data[name])


@pytest.mark.parametrize(
    "encoding", [("ascii", None), ("binary", None), ("binary", "zlib"), ("binary64", "zlib")]
)
def test_basin_reads_vtu_written_by_meshio_exactly(tmp_path, encoding):
    kind, compression = encoding
    source = tmp_path / "meshio.vtu"
    options = {"binary": kind != "ascii", "compression": compression}
    if kind == "binary64":
        options["header_type"] = "UInt64"
    meshio.vtu.write(str(source), meshio_mesh(3), **options)
    # meshio's ascii writer rounds floats, so the reference is what meshio reads back.
    source_mesh = meshio.read(str(source))
    target = tmp_path / "basin.vtu"
    convert(source, target, "-w", "Format=ascii")
    back = meshio.read(str(target))
    assert np.array_equal(back.points, source_mesh.points)
    assert vtu_cells(back) == vtu_cells(source_mesh)
    assert np.array_equal(back.point_data["level"], source_mesh.point_data["level"])
    for axis, column in (("x", 0), ("y", 1), ("z", 2)):
        assert np.array_equal(
            back.point_data[f"velocity_{axis}"], source_mesh.point_data["velocity"][:, column]
        )
    assert np.array_equal(concatenated(back, "depth"), concatenated(source_mesh, "depth"), equal_nan=True)
    assert concatenated(back, "speed").dtype == np.float32
    assert np.array_equal(concatenated(back, "speed"), concatenated(source_mesh, "speed"))
    assert concatenated(back, "zone").dtype == np.int32
    assert np.array_equal(concatenated(back, "zone"), concatenated(source_mesh, "zone"))


def test_vtu_written_by_meshio_becomes_a_mesh_file_mikeio_reads(tmp_path):
    source_mesh = meshio_mesh(5)
    source = tmp_path / "meshio.vtu"
    meshio.vtu.write(str(source), source_mesh, binary=True, compression="zlib")
    target = tmp_path / "from_vtu.mesh"
    result = convert(source, target)
    assert "items not written" in result.stdout + result.stderr
    geometry = mikeio().Mesh(str(target)).geometry
    assert np.array_equal(geometry.node_coordinates, source_mesh.points)
    assert [("triangle" if len(e) == 3 else "quad", list(map(int, e))) for e in geometry.element_table] == vtu_cells(source_mesh)


@pytest.mark.parametrize("separator", [",", "\t", "   "])
def test_xyz_to_vtu_read_by_meshio(tmp_path, separator):
    rng = np.random.default_rng(11)
    count = 1000
    points = np.column_stack(
        [rng.uniform(4e5, 6e5, count), rng.uniform(6e6, 6.2e6, count), rng.normal(-10, 5, count)]
    )
    extra = rng.normal(size=count)
    source = tmp_path / "points.xyz"
    with open(source, "w") as out:
        for (x, y, z), value in zip(points, extra):
            out.write(separator.join(repr(float(v)) for v in (x, y, z, value)) + "\n")
    target = tmp_path / "points.vtu"
    convert(source, target)
    mesh = meshio.read(str(target))
    assert np.array_equal(mesh.points, points)
    assert [block.type for block in mesh.cells] == ["vertex"]
    assert np.array_equal(mesh.cells[0].data[:, 0], np.arange(count))
    assert np.array_equal(mesh.point_data["z"], points[:, 2])
    assert np.array_equal(mesh.point_data["column3"], extra)


def test_xyz_with_a_z_column_index(tmp_path):
    source = tmp_path / "points.xyz"
    source.write_text("1 2 99 -3.5\n4 5 98 -6.25\n")
    target = tmp_path / "points.vtu"
    convert(source, target, "-p", "ZColumnIndex=3", "-w", "Format=ascii")
    mesh = meshio.read(str(target))
    assert mesh.points.tolist() == [[1.0, 2.0, -3.5], [4.0, 5.0, -6.25]]
    assert mesh.point_data["column2"].tolist() == [99.0, 98.0]


def test_bad_inputs_fail_with_a_message_naming_the_place(tmp_path):
    bad = tmp_path / "bad.xyz"
    bad.write_text("1 2 3\n4 5\n")
    result = convert(bad, tmp_path / "bad.vtu", check=False)
    assert result.returncode != 0 and "line 2" in result.stderr
    assert not (tmp_path / "bad.vtu").exists()
    result = convert(bad, tmp_path / "bad2.vtu", "-p", "ZColumnIndex=1", check=False)
    assert result.returncode != 0 and "ZColumnIndex" in result.stderr
    mesh = tmp_path / "bad.mesh"
    mesh.write_text("100079 1000 3 UTM-32\n1 0 0 0 1\n")
    result = convert(mesh, tmp_path / "out.vtu", check=False)
    assert result.returncode != 0 and "line 3" in result.stderr


def shapefile_writer_available(tmp_path):
    source = os.path.join(FIXTURES, "mesh2d_mixed.mesh")
    return require_implemented(convert(source, tmp_path / "probe.shp", check=False))


def test_mesh_to_shapefile_checked_with_ogr(tmp_path):
    ogr2ogr = require_tool("ogr2ogr")
    probe = shapefile_writer_available(tmp_path)
    assert probe.returncode == 0, probe.stderr
    source = os.path.join(FIXTURES, "mesh2d_mixed.mesh")
    reference = mikeio().Mesh(source).geometry
    # GDAL 3.6's ogrinfo has no -json; ogr2ogr to GeoJSON on stdout reads the same features.
    info = json.loads(
        run(ogr2ogr, "-f", "GeoJSON", "/vsistdout/", tmp_path / "probe.shp", "-lco", "SIGNIFICANT_FIGURES=17")
    )
    features = info["features"]
    assert len(features) == len(reference.element_table)
    for feature, element in zip(features, reference.element_table):
        ring = feature["geometry"]["coordinates"][0]
        corners = {tuple(coord[:3]) for coord in ring}
        expected = {tuple(reference.node_coordinates[node]) for node in element}
        assert corners == expected


def test_shapefile_to_mesh_checked_with_mikeio(tmp_path):
    ogr2ogr = require_tool("ogr2ogr")
    geojson = tmp_path / "cells.geojson"
    squares = []
    for i in range(3):
        for j in range(2):
            ring = [[i, j, -i], [i + 1, j, -i - 1], [i + 1, j + 1, -i - 1], [i, j + 1, -i], [i, j, -i]]
            squares.append(
                {"type": "Feature", "properties": {"depth": i + j * 0.5},
                 "geometry": {"type": "Polygon", "coordinates": [ring]}}
            )
    geojson.write_text(json.dumps({"type": "FeatureCollection", "features": squares}))
    shapefile = tmp_path / "cells.shp"
    run(ogr2ogr, "-f", "ESRI Shapefile", shapefile, geojson)
    target = tmp_path / "cells.mesh"
    result = require_implemented(convert(shapefile, target, check=False))
    assert result.returncode == 0, result.stderr
    geometry = mikeio().Mesh(str(target)).geometry
    assert len(geometry.element_table) == 6
    assert len(geometry.node_coordinates) == 12
    assert sorted(map(tuple, geometry.node_coordinates[:, :2].tolist())) == sorted(
        {(float(i), float(j)) for i in range(4) for j in range(3)}
    )
    assert list(geometry.codes).count(0) == 2
