"""Issue 11, grids and VTU: three classes of file compared with GDAL 3.6 and meshio.

1. Float32 grids whose nodata (or values) sit at the ends of float32's range, GeoTIFF -> ASCII
   Grid: GDAL must read Basin's .asc back as Float32 with the same nodata and the same cells
   (GDAL itself widens a nodata such as `3.4028235e38` or `1.4e-45` with a decimal point to
   Float64).
2. Grids stored south-up or rotated, GeoTIFF -> ASCII Grid: south-up rows are reversed as
   gdal_translate reverses them (compared cell by cell); rotated grids are refused with a
   message pointing to GeoTIFF or gdalwarp, and the gdalwarp route then agrees cell by cell.
3. VTU with every VTK cell type (VTK's own test files in tests/corpus/vtk-data): VTU -> VTU
   keeps points, cells and data as meshio reads them; multi-piece files are joined; writers of
   2D meshes refuse 3D cells naming the type.
"""

import json
import math
import pathlib
import struct

import pytest

from formats_support import ROOT, convert, require_module, require_tool, run

np = require_module("numpy")
meshio = require_module("meshio")

CORPUS = pathlib.Path(ROOT) / "tests" / "corpus" / "vtk-data"
# VTK cells meshio cannot read: fixtures rather than corpus files (the corpus test compares
# every corpus mesh with meshio).
VTK_CELLS = pathlib.Path(ROOT) / "crates" / "formats" / "tests" / "fixtures" / "vtk-cells"

FLOAT32_MAX = struct.unpack("<f", struct.pack("<I", 0x7F7FFFFF))[0]
SMALLEST_SUBNORMAL = struct.unpack("<f", struct.pack("<I", 1))[0]


def gdal_info(path):
    info = json.loads(run(require_tool("gdalinfo"), "-json", path))
    band = info["bands"][0]
    return {
        "size": info["size"],
        "geoTransform": info["geoTransform"],
        "type": band["type"],
        "noDataValue": band.get("noDataValue"),
    }


def gdal_cells(path):
    """Every cell as GDAL reads it, as float32 bit patterns (NaN as one pattern)."""
    text = run(require_tool("gdal_translate"), "-q", "-of", "XYZ", path, "/vsistdout/")
    cells = []
    for line in text.splitlines():
        value = line.split()[2]
        cells.append(value)
    return cells


def float32_bits(text):
    value = float(text)
    if math.isnan(value):
        return "nan"
    return struct.unpack("<I", struct.pack("<f", value))[0]


def float32_tiff(tmp_path, name, nodata, rows):
    """A Float32 GeoTIFF made by GDAL from `rows` of decimal text, with `nodata`."""
    source = tmp_path / f"{name}.asc"
    header = "ncols {}\nnrows {}\nxllcorner 100\nyllcorner 200\ncellsize 10\n".format(
        len(rows[0]), len(rows))
    source.write_text(header + "".join(" " + " ".join(row) + "\n" for row in rows))
    target = tmp_path / f"{name}.tif"
    run(require_tool("gdal_translate"), "-q", "-ot", "Float32", "-a_nodata", nodata, source, target)
    return target


LIMIT_ROWS = [
    ["1.5", "3.4028234663852886e38", "-3.4028234663852886e38", "1.401298464324817e-45"],
    ["-1.401298464324817e-45", "-0", "0.1", "1e-40"],
]


@pytest.mark.parametrize(
    "nodata",
    ["-3.4028234663852886e38", "3.4028234663852886e38", "1.401298464324817e-45", "-0", "nan"],
)
def test_float32_nodata_at_the_limits_stays_float32_in_gdal(tmp_path, nodata):
    tiff = float32_tiff(tmp_path, "limits", nodata, LIMIT_ROWS)
    source_info = gdal_info(tiff)
    assert source_info["type"] == "Float32"
    asc = tmp_path / "basin.asc"
    convert(tiff, asc)
    info = gdal_info(asc)
    assert info["type"] == "Float32", asc.read_text()
    assert info["size"] == source_info["size"]
    assert info["geoTransform"] == source_info["geoTransform"]
    expected, found = source_info["noDataValue"], info["noDataValue"]
    if expected == "NaN" or (isinstance(expected, float) and math.isnan(expected)):
        assert found == "NaN" or math.isnan(found)
    else:
        assert struct.pack("<f", found) == struct.pack("<f", expected), (found, expected)
        assert math.copysign(1.0, found) == math.copysign(1.0, expected)
    assert [float32_bits(v) for v in gdal_cells(asc)] == [float32_bits(v) for v in gdal_cells(tiff)]
    print(f"nodata {nodata}: GDAL reads Basin's .asc as {info['type']} with nodata {found}")


def test_gdal_own_aaigrid_writer_widens_a_subnormal_nodata_and_basin_does_not(tmp_path):
    tiff = float32_tiff(tmp_path, "subnormal", "1.401298464324817e-45", LIMIT_ROWS)
    gdal_asc = tmp_path / "gdal.asc"
    run(require_tool("gdal_translate"), "-q", "-of", "AAIGrid", tiff, gdal_asc)
    basin_asc = tmp_path / "basin.asc"
    convert(tiff, basin_asc)
    assert gdal_info(gdal_asc)["type"] == "Float64"
    assert gdal_info(basin_asc)["type"] == "Float32"


SOUTH_UP_ROWS = [["1", "2", "3", "4"], ["5", "6", "7", "8.5"], ["9", "10", "11", "-9999"]]


def test_south_up_grids_are_flipped_as_gdal_translate_flips_them(tmp_path):
    source = float32_tiff(tmp_path, "rows", "-9999", SOUTH_UP_ROWS)
    south_up = tmp_path / "south_up.tif"
    # -a_ullr with the upper y below the lower y stores the rows south to north.
    run(require_tool("gdal_translate"), "-q", "-a_ullr", "100", "200", "140", "230", source, south_up)
    assert gdal_info(south_up)["geoTransform"][5] > 0
    gdal_asc = tmp_path / "gdal.asc"
    run(require_tool("gdal_translate"), "-q", "-of", "AAIGrid", south_up, gdal_asc)
    basin_asc = tmp_path / "basin.asc"
    result = convert(south_up, basin_asc)
    gdal, basin = gdal_info(gdal_asc), gdal_info(basin_asc)
    assert basin["geoTransform"] == gdal["geoTransform"] == [100.0, 10.0, 0.0, 230.0, 0.0, -10.0]
    assert basin["size"] == gdal["size"]
    assert basin["noDataValue"] == gdal["noDataValue"]
    assert gdal_cells(basin_asc) == gdal_cells(gdal_asc)
    print(f"south-up: {len(gdal_cells(gdal_asc))} of {len(gdal_cells(gdal_asc))} cells as gdal_translate; "
          f"notes: {result.stdout.strip()!r}")


def rotated_tiff(tmp_path):
    source = float32_tiff(tmp_path, "rows", "-9999", SOUTH_UP_ROWS)
    vrt = tmp_path / "rotated.vrt"
    run(require_tool("gdal_translate"), "-q", "-of", "VRT", source, vrt)
    text = vrt.read_text()
    start, end = text.index("<GeoTransform>"), text.index("</GeoTransform>")
    rotated = "<GeoTransform>100, 8.660254037844387, -5, 230, 5, -8.660254037844387"
    vrt.write_text(text[:start] + rotated + text[end:])
    target = tmp_path / "rotated.tif"
    run(require_tool("gdal_translate"), "-q", vrt, target)
    return target


def test_rotated_grids_are_refused_with_what_to_do_and_the_advice_works(tmp_path):
    rotated = rotated_tiff(tmp_path)
    result = convert(rotated, tmp_path / "basin.asc", check=False)
    assert result.returncode != 0
    assert "GeoTIFF, which keeps the rotation" in result.stderr, result.stderr
    assert "gdalwarp" in result.stderr
    # GeoTIFF keeps the rotation.
    kept = tmp_path / "kept.tif"
    convert(rotated, kept)
    assert gdal_info(kept)["geoTransform"] == gdal_info(rotated)["geoTransform"]
    # Warped north-up first, the grid converts, and agrees with GDAL's AAIGrid cell by cell.
    warped = tmp_path / "warped.tif"
    run(require_tool("gdalwarp"), "-q", "-r", "near", rotated, warped)
    basin_asc, gdal_asc = tmp_path / "warped_basin.asc", tmp_path / "warped_gdal.asc"
    convert(warped, basin_asc)
    run(require_tool("gdal_translate"), "-q", "-of", "AAIGrid", warped, gdal_asc)
    # GDAL's AAIGrid header has 12 decimals; Basin's is the warped grid's exactly.
    assert gdal_info(basin_asc)["geoTransform"] == gdal_info(warped)["geoTransform"]
    assert gdal_info(basin_asc)["geoTransform"] == pytest.approx(gdal_info(gdal_asc)["geoTransform"])
    assert [line.split()[2] for line in run(require_tool("gdal_translate"), "-q", "-of", "XYZ", basin_asc, "/vsistdout/").splitlines()] == \
        [line.split()[2] for line in run(require_tool("gdal_translate"), "-q", "-of", "XYZ", gdal_asc, "/vsistdout/").splitlines()]


# VTU ------------------------------------------------------------------------------------------

def meshio_view(path):
    """What meshio reads, in a comparable form."""
    mesh = meshio.read(str(path))
    cells = [(block.type, np.asarray(block.data).tolist()) for block in mesh.cells]
    point_data = {name: np.asarray(values).tolist() for name, values in mesh.point_data.items()}
    cell_data = {
        name: [np.asarray(block).tolist() for block in blocks]
        for name, blocks in mesh.cell_data.items()
    }
    return mesh.points.astype(float).tolist(), cells, point_data, cell_data


def flatten_components(data):
    """Basin splits arrays of several components into one item per component."""
    flat = {}
    for name, values in data.items():
        array = np.asarray(values)
        if array.ndim == 1:
            flat[name] = array.astype(float).tolist()
        else:
            suffixes = ["x", "y", "z"] if array.shape[1] in (2, 3) else [str(i) for i in range(array.shape[1])]
            for index, suffix in enumerate(suffixes[: array.shape[1]]):
                flat[f"{name}_{suffix}"] = array[:, index].astype(float).tolist()
    return flat


def assert_same_data(expected, found):
    """The same arrays with the same values exactly (NaN equal to NaN)."""
    assert sorted(expected) == sorted(found)
    for name, values in expected.items():
        assert np.array_equal(np.asarray(values), np.asarray(found[name]), equal_nan=True), name


def flatten_cell_data(data):
    return flatten_components({name: np.concatenate([np.asarray(b) for b in blocks]) for name, blocks in data.items()})


MESHIO_READS = [
    "Vertex.vtu", "Line.vtu", "Triangle.vtu", "Polygon.vtu", "Quad.vtu", "Tetra.vtu",
    "Hexahedron.vtu", "Wedge.vtu", "Pyramid.vtu", "Tetrahedron.vtu", "QuadraticTetra.vtu",
    "TriQuadraticHexahedron.vtu", "quadraticTetra01.vtu", "ex-blow_5_1_4.vtu",
    "Disc_BiQuadraticQuads_0_0.vtu",
]


@pytest.mark.parametrize("name", MESHIO_READS)
@pytest.mark.parametrize("encoding", ["binary", "ascii"])
def test_vtu_to_vtu_keeps_cells_points_and_data_as_meshio_reads_them(tmp_path, name, encoding):
    source = CORPUS / name
    target = tmp_path / "out.vtu"
    convert(source, target, "--writer-parameter", f"Format={encoding}")
    points, cells, point_data, cell_data = meshio_view(source)
    points2, cells2, point_data2, cell_data2 = meshio_view(target)
    assert np.allclose(points, points2, rtol=0, atol=0)
    assert [kind for kind, _ in cells] == [kind for kind, _ in cells2]
    assert cells == cells2
    # Basin splits vectors into components; compare component by component.
    assert_same_data(flatten_components(point_data), flatten_components(point_data2))
    assert_same_data(flatten_cell_data(cell_data), flatten_cell_data(cell_data2))


@pytest.mark.parametrize(
    "name", ["PolyVertex.vtu", "PolyLine.vtu", "TriangleStrip.vtu", "Voxel.vtu", "Pixel.vtu",
             "PentagonalPrism.vtu", "HexagonalPrism.vtu", "QuadraticPyramid.vtu", "QuadraticWedge.vtu"])
def test_cells_meshio_cannot_read_survive_vtu_to_vtu(tmp_path, name):
    """meshio 5.3 drops or fails on these VTK types; Basin keeps them (checked by reading the
    raw arrays of both files with Basin's own ascii output)."""
    first, second = tmp_path / "first.vtu", tmp_path / "second.vtu"
    source = VTK_CELLS / name if (VTK_CELLS / name).exists() else CORPUS / name
    convert(source, first, "--writer-parameter", "Format=ascii")
    convert(first, second, "--writer-parameter", "Format=ascii")
    assert first.read_text() == second.read_text()
    text = first.read_text()
    types_start = text.index('Name="types"')
    types = text[text.index(">", types_start) + 1: text.index("</DataArray>", types_start)].split()
    expected = {
        "PolyVertex.vtu": "2", "PolyLine.vtu": "4", "TriangleStrip.vtu": "6", "Voxel.vtu": "11",
        "Pixel.vtu": "8", "PentagonalPrism.vtu": "15", "HexagonalPrism.vtu": "16",
        "QuadraticPyramid.vtu": "27", "QuadraticWedge.vtu": "26",
    }[name]
    assert set(types) == {expected}


TWO_PIECES = """<VTKFile type="UnstructuredGrid" version="0.1" byte_order="LittleEndian"><UnstructuredGrid>
<Piece NumberOfPoints="4" NumberOfCells="1">
<PointData><DataArray type="Float32" Name="h" format="ascii">1 2 3 4</DataArray></PointData>
<CellData><DataArray type="Int32" Name="id" format="ascii">7</DataArray></CellData>
<Points><DataArray type="Float64" NumberOfComponents="3" format="ascii">0 0 0 1 0 0 0 1 0 0 0 1</DataArray></Points>
<Cells><DataArray type="Int64" Name="connectivity" format="ascii">0 1 2 3</DataArray>
<DataArray type="Int64" Name="offsets" format="ascii">4</DataArray>
<DataArray type="UInt8" Name="types" format="ascii">10</DataArray></Cells></Piece>
<Piece NumberOfPoints="5" NumberOfCells="2">
<PointData><DataArray type="Float32" Name="h" format="ascii">5 6 7 8 9</DataArray></PointData>
<CellData><DataArray type="Int32" Name="id" format="ascii">8 9</DataArray></CellData>
<Points><DataArray type="Float64" NumberOfComponents="3" format="ascii">5 5 5 6 5 5 6 6 5 5 6 5 5.5 5.5 6</DataArray></Points>
<Cells><DataArray type="Int64" Name="connectivity" format="ascii">0 1 2 3 4 0 1 4</DataArray>
<DataArray type="Int64" Name="offsets" format="ascii">5 8</DataArray>
<DataArray type="UInt8" Name="types" format="ascii">14 5</DataArray></Cells></Piece>
</UnstructuredGrid></VTKFile>
"""


def test_multi_piece_files_are_joined_like_meshio_joins_points(tmp_path):
    source = tmp_path / "two.vtu"
    source.write_text(TWO_PIECES)
    target = tmp_path / "joined.vtu"
    convert(source, target)
    points, cells, point_data, cell_data = meshio_view(source)
    points2, cells2, point_data2, cell_data2 = meshio_view(target)
    # Points and point data: as meshio joins them.
    assert points == points2
    assert point_data == point_data2
    # Cells: Basin keeps every piece's cells, node numbers offset by the points before;
    # meshio 5.3 keeps only the last piece's (a known quirk of its merging loop).
    assert cells2 == [("tetra", [[0, 1, 2, 3]]), ("pyramid", [[4, 5, 6, 7, 8]]), ("triangle", [[4, 5, 8]])]
    assert cells == cells2[1:]
    assert cell_data2 == {"id": [[7], [8], [9]]}


@pytest.mark.parametrize("target_name", ["out.mesh", "out.shp"])
def test_2d_writers_refuse_3d_cells_naming_the_type(tmp_path, target_name):
    result = convert(CORPUS / "Tetra.vtu", tmp_path / target_name, check=False)
    assert result.returncode != 0
    assert "tetra (VTK 10)" in result.stderr, result.stderr


# Real south-up and rotated grids (rasterio's test data) -----------------------------------------

# rasterio's south-up and rotated grids, in the corpus the coordinator gathered
# (tests/corpus/rasterio); the tests that need them skip while that folder is missing.
ORIENTATION = pathlib.Path(ROOT) / "tests" / "corpus" / "rasterio"


def orientation_file(name):
    path = ORIENTATION / name
    if not path.exists():
        pytest.skip(f"{path} is not in this checkout")
    return path


def gdal_checksum(path):
    info = json.loads(run(require_tool("gdalinfo"), "-json", "-checksum", path))
    return info["bands"][0]["checksum"]


def xyz_values(path):
    text = run(require_tool("gdal_translate"), "-q", "-of", "XYZ", path, "/vsistdout/")
    return [line.split()[2] for line in text.splitlines()]


@pytest.mark.parametrize("name", ["float.tif", "float32.tif", "float_nan.tif"])
def test_real_south_up_grids_become_the_ascii_grid_gdal_translate_writes(tmp_path, name):
    source = orientation_file(name)
    assert gdal_info(source)["geoTransform"][5] > 0
    basin_asc, gdal_asc = tmp_path / "basin.asc", tmp_path / "gdal.asc"
    convert(source, basin_asc)
    run(require_tool("gdal_translate"), "-q", "-of", "AAIGrid", source, gdal_asc)
    basin, gdal = gdal_info(basin_asc), gdal_info(gdal_asc)
    assert basin["geoTransform"] == gdal["geoTransform"]
    assert basin["size"] == gdal["size"]
    assert basin["type"] == gdal["type"]
    assert str(basin["noDataValue"]) == str(gdal["noDataValue"])
    assert xyz_values(basin_asc) == xyz_values(gdal_asc)


def test_a_real_rotated_grid_is_refused_for_ascii_grid_and_kept_by_geotiff(tmp_path):
    source = orientation_file("rotated.tif")
    result = convert(source, tmp_path / "rotated.asc", check=False)
    assert result.returncode != 0
    assert "write it as GeoTIFF, which keeps the rotation" in result.stderr, result.stderr
    kept = tmp_path / "kept.tif"
    convert(source, kept)
    assert gdal_info(kept)["geoTransform"] == gdal_info(source)["geoTransform"]
    assert gdal_checksum(kept) == gdal_checksum(source)
    # The advice: gdalwarp to north-up, then to ASCII Grid, as GDAL's AAIGrid of it.
    warped = tmp_path / "warped.tif"
    run(require_tool("gdalwarp"), "-q", "-r", "near", source, warped)
    basin_asc, gdal_asc = tmp_path / "basin.asc", tmp_path / "gdal.asc"
    convert(warped, basin_asc)
    run(require_tool("gdal_translate"), "-q", "-of", "AAIGrid", warped, gdal_asc)
    assert gdal_info(basin_asc)["geoTransform"] == gdal_info(warped)["geoTransform"]
    assert xyz_values(basin_asc) == xyz_values(gdal_asc)


def meshio_cells_mesh():
    """A mesh of every cell type meshio writes that Basin keeps, with point and cell data."""
    rng = np.random.default_rng(11)
    points = rng.random((30, 3))
    blocks = [
        ("tetra", [[0, 1, 2, 3], [4, 5, 6, 7]]),
        ("pyramid", [[0, 1, 2, 3, 4]]),
        ("wedge", [[0, 1, 2, 3, 4, 5]]),
        ("hexahedron", [list(range(8))]),
        ("polygon", [[0, 1, 2, 3, 4, 5, 6]]),
        ("triangle", [[7, 8, 9]]),
        ("quad", [[9, 10, 11, 12]]),
        ("line", [[12, 13]]),
        ("vertex", [[14]]),
        ("tetra10", [list(range(10))]),
        ("hexahedron20", [list(range(20))]),
        ("quad9", [list(range(9))]),
        ("hexahedron27", [list(range(27))]),
    ]
    cell_data = {"level": [rng.random(len(cells)) for _, cells in blocks]}
    return meshio.Mesh(points, blocks, point_data={"depth": rng.random(30)}, cell_data=cell_data)


@pytest.mark.parametrize(
    "options",
    [{"binary": False}, {"binary": True, "compression": None}, {"binary": True, "compression": "zlib"}],
    ids=["ascii", "binary", "zlib"],
)
def test_every_cell_type_meshio_writes_survives_basin(tmp_path, options):
    source = tmp_path / "meshio.vtu"
    meshio.vtu.write(str(source), meshio_cells_mesh(), **options)
    target = tmp_path / "basin.vtu"
    convert(source, target)
    points, cells, point_data, cell_data = meshio_view(source)
    points2, cells2, point_data2, cell_data2 = meshio_view(target)
    assert points == points2
    assert cells == cells2
    assert_same_data(flatten_components(point_data), flatten_components(point_data2))
    assert_same_data(flatten_cell_data(cell_data), flatten_cell_data(cell_data2))


@pytest.mark.parametrize("make", ["synthetic", "rasterio"])
def test_rotated_grids_resampled_on_request_match_gdalwarp_cell_by_cell(tmp_path, make):
    source = rotated_tiff(tmp_path) if make == "synthetic" else orientation_file("rotated.tif")
    basin_asc = tmp_path / "basin.asc"
    result = convert(source, basin_asc, "--writer-parameter", "RotatedGrids=nearest")
    assert "resampled north-up" in result.stdout + result.stderr
    warped = tmp_path / "warped.tif"
    run(require_tool("gdalwarp"), "-q", "-r", "near", source, warped)
    gdal_asc = tmp_path / "gdal.asc"
    run(require_tool("gdal_translate"), "-q", "-of", "AAIGrid", warped, gdal_asc)
    basin, gdal = gdal_info(basin_asc), gdal_info(warped)
    assert basin["geoTransform"] == gdal["geoTransform"]
    assert basin["size"] == gdal["size"]
    cells = xyz_values(gdal_asc)
    assert xyz_values(basin_asc) == cells
    print(f"{make}: {len(cells)} of {len(cells)} cells as gdalwarp -r near")
