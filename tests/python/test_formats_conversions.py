"""Conversions between formats that the format-specific files do not cover, each checked
against an independent implementation:

- ASCII Grid -> GeoTIFF against `gdal_translate` of the same file: same size, geotransform,
  EPSG code, type, nodata and bit-identical values;
- GeoTIFF -> ASCII Grid: GDAL reads Basin's .asc with the same values and georeferencing as
  the GeoTIFF it came from;
- VTU -> Shapefile: meshio writes the VTU, ogr2ogr reads Basin's Shapefile, every cell is a
  polygon with the cell's corners and its cell data as attributes.
"""

import json

import pytest

from formats_support import convert, require_module, require_tool, run

np = require_module("numpy")
meshio = require_module("meshio")


def write_asc(path, columns, rows, header, value):
    lines = [f"ncols {columns}", f"nrows {rows}", *header]
    for row in range(rows):
        lines.append(" ".join(value(column, row) for column in range(columns)))
    path.write_text("\n".join(lines) + "\n")


def gdal_info(path):
    return json.loads(run(require_tool("gdalinfo"), "-json", path))


def values_of(path, tmp_path, label):
    """Raw band-sequential bytes of the first band, as GDAL reads them."""
    target = tmp_path / f"{label}.envi"
    run("gdal_translate", "-q", "-of", "ENVI", "-b", "1", path, target)
    return target.read_bytes()


def same_georeferencing(ours, theirs):
    assert ours["size"] == theirs["size"]
    assert ours["geoTransform"] == theirs["geoTransform"]
    assert ours["bands"][0]["type"] == theirs["bands"][0]["type"]
    assert ours["bands"][0].get("noDataValue") == theirs["bands"][0].get("noDataValue")


GRIDS = [
    # name, header, value of (column, row), expected GDAL type
    ("integers_corner", ["xllcorner 500000", "yllcorner 6000000", "cellsize 25", "NODATA_value -9999"],
     lambda c, r: "-9999" if (c + r) % 97 == 0 else str((c * 31 + r * 17) % 5000 - 2500), "Int32"),
    ("floats_center", ["xllcenter 9.5", "yllcenter 54.25", "cellsize 0.01", "NODATA_value -1"],
     lambda c, r: "-1" if c == r else repr(((c * 7 + r * 3) % 1000) / 8), "Float32"),
]


@pytest.mark.parametrize("name,header,value,gdal_type", GRIDS, ids=[grid[0] for grid in GRIDS])
def test_ascii_grid_to_geotiff_matches_gdal_translate(tmp_path, name, header, value, gdal_type):
    require_tool("gdal_translate")
    source = tmp_path / f"{name}.asc"
    write_asc(source, 300, 270, header, value)
    srid = 32632 if "corner" in name else 4326
    ours = tmp_path / "basin.tif"
    convert(source, ours, "-p", f"SRID={srid}")
    theirs = tmp_path / "gdal.tif"
    run("gdal_translate", "-q", "-a_srs", f"EPSG:{srid}", source, theirs)
    our_info, their_info = gdal_info(ours), gdal_info(theirs)
    same_georeferencing(our_info, their_info)
    assert our_info["bands"][0]["type"] == gdal_type
    assert f'ID["EPSG",{srid}]' in our_info["coordinateSystem"]["wkt"]
    assert values_of(ours, tmp_path, "ours") == values_of(theirs, tmp_path, "theirs")


def test_geotiff_to_ascii_grid_reads_in_gdal_as_the_geotiff(tmp_path):
    require_tool("gdal_translate")
    seed = tmp_path / "seed.asc"
    write_asc(seed, 260, 140, ["xllcorner 300000", "yllcorner 6100000", "cellsize 10", "NODATA_value -9999"],
              lambda c, r: "-9999" if (c * r) % 101 == 3 else repr(((c * 13 + r * 5) % 4000) / 4))
    geotiff = tmp_path / "source.tif"
    run("gdal_translate", "-q", "-ot", "Float32", "-a_srs", "EPSG:25832", "-co", "TILED=YES",
        "-co", "COMPRESS=DEFLATE", seed, geotiff)
    ours = tmp_path / "basin.asc"
    convert(geotiff, ours)
    assert (tmp_path / "basin.prj").exists()
    our_info, their_info = gdal_info(ours), gdal_info(geotiff)
    same_georeferencing(our_info, their_info)
    assert values_of(ours, tmp_path, "ours") == values_of(geotiff, tmp_path, "theirs")


def test_vtu_to_shapefile_checked_with_ogr(tmp_path):
    ogr2ogr = require_tool("ogr2ogr")
    points = np.array([[0.0, 0.0, -1.0], [10.0, 0.0, -2.0], [10.0, 10.0, -3.0], [0.0, 10.0, -4.0],
                       [20.0, 0.0, -5.0]])
    cells = [("triangle", np.array([[1, 4, 2]])), ("quad", np.array([[0, 1, 2, 3]]))]
    depth = [np.array([2.5]), np.array([-0.125])]
    source = tmp_path / "cells.vtu"
    meshio.write(str(source), meshio.Mesh(points, cells, cell_data={"depth": depth}), binary=False)
    target = tmp_path / "cells.shp"
    convert(source, target, "-p", "SRID=32632")
    collection = json.loads(run(ogr2ogr, "-f", "GeoJSON", "/vsistdout/", target,
                                "-lco", "SIGNIFICANT_FIGURES=17"))
    features = collection["features"]
    assert len(features) == 2
    expected = [({1, 4, 2}, 2.5), ({0, 1, 2, 3}, -0.125)]
    for feature, (corners, value) in zip(features, expected):
        ring = feature["geometry"]["coordinates"][0]
        assert ring[0] == ring[-1]
        assert {tuple(position[:3]) for position in ring} == {tuple(points[i]) for i in corners}
        values = [v for k, v in feature["properties"].items() if k.lower().startswith("depth")]
        assert values == [value]
    assert (tmp_path / "cells.prj").exists()
