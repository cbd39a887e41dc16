"""Shapefile <-> GeoJSON through `basin convert`, compared with ogr2ogr (GDAL, Debian gdal-bin)
on the same inputs. Input Shapefiles come from independent writers: ogr2ogr (from CSV with WKT
geometries) and pyshp (PyPI). Both outputs are read back by GDAL (ogr2ogr to GeoJSON with 17
significant digits, ogrinfo for field types) and compared feature by feature: coordinates
exactly, attribute values, field names and types, CRS.

Known, documented differences that the comparison normalises:
- dBASE logical (L) fields: GDAL reads them as strings "T"/"F"/"?", Basin as booleans.
- GDAL omits a null date property instead of writing null; a missing key counts as null.
- Integer fields: where the source declared no width, Basin writes N(9,0) grown to the longest
  value when every value fits 32 bits and N(18,0) otherwise, as ogr2ogr does; GDAL reads a
  width under 10 as Integer and up to 18 as Integer64; both count as "integer".
"""

import json
import os
import re
import subprocess
import zipfile

import pytest

from formats_support import convert, require_module, require_tool, run

LATIN = "Zürich, Genève, Ærø"


def gdal_geojson(path, *options):
    """Any vector file as GeoJSON text via ogr2ogr, coordinates with full precision."""
    ogr2ogr = require_tool("ogr2ogr")
    text = run(ogr2ogr, *options, "-f", "GeoJSON", "/vsistdout/", path, "-lco", "SIGNIFICANT_FIGURES=17")
    return json.loads(text)


def field_types(path):
    """Field name -> normalised type, from `ogrinfo -so -al`."""
    ogrinfo = require_tool("ogrinfo")
    text = run(ogrinfo, "-so", "-al", path)
    types = {}
    for name, kind in re.findall(r"^(\S+): (\w+) \(", text, flags=re.MULTILINE):
        types[name] = {"Integer64": "integer", "Integer": "integer", "Real": "real"}.get(kind, kind.lower())
    return types


def normalise_value(value):
    if value in ("T", "F"):
        return value == "T"
    if value == "?":
        return None
    return value


def normalise_feature(feature, names):
    properties = feature.get("properties") or {}
    return {
        "geometry": feature.get("geometry"),
        "properties": {name: normalise_value(properties.get(name)) for name in names},
    }


def crs_code(document):
    name = ((document.get("crs") or {}).get("properties") or {}).get("name", "EPSG::4326")
    if name.endswith("CRS84"):
        return 4326
    return int(name.rsplit(":", 1)[-1])


def compare_documents(ours, theirs):
    names = list((theirs["features"][0].get("properties") or {}).keys()) if theirs["features"] else []
    our_names = list((ours["features"][0].get("properties") or {}).keys()) if ours["features"] else []
    assert our_names == names, "field names and order"
    assert len(ours["features"]) == len(theirs["features"])
    for index, (a, b) in enumerate(zip(ours["features"], theirs["features"])):
        assert normalise_feature(a, names) == normalise_feature(b, names), f"feature {index}"
    assert crs_code(ours) == crs_code(theirs)


def write_csv(path, header, rows):
    with open(path, "w", encoding="utf-8") as out:
        out.write(",".join(header) + "\n")
        for row in rows:
            out.write(",".join(f'"{cell}"' if cell != "" else "" for cell in row) + "\n")


def ogr_shapefile(folder, name, wkt_rows, geometry_type, srs="EPSG:4326", encoding=None):
    """A Shapefile written by ogr2ogr from WKT rows of (wkt, name, count, level, day, flag...)."""
    ogr2ogr = require_tool("ogr2ogr")
    csv = os.path.join(folder, f"{name}.csv")
    header = ["wkt", "name", "count", "level", "day", "temperature_max", "temperature_min"]
    write_csv(csv, header, wkt_rows)
    target = os.path.join(folder, f"{name}.shp")
    command = [
        ogr2ogr, "-f", "ESRI Shapefile", target, csv, "-a_srs", srs, "-nlt", geometry_type,
        "-oo", "GEOM_POSSIBLE_NAMES=wkt", "-oo", "KEEP_GEOM_COLUMNS=NO", "-oo", "AUTODETECT_TYPE=YES",
        "-oo", "EMPTY_STRING_AS_NULL=YES",
    ]
    if encoding:
        command += ["-lco", f"ENCODING={encoding}"]
    subprocess.run(command, check=True, capture_output=True)
    return target


def rows(wkts):
    result = []
    for index, wkt in enumerate(wkts):
        empty = index == 1
        result.append([
            wkt,
            "" if empty else f"{LATIN} {index}",
            "" if empty else str(index * 1000 - 7),
            "" if empty else f"{index * 1.5 + 0.125}",
            "" if empty else f"2021-0{index % 9 + 1}-1{index % 9}",
            f"{index}.5",
            str(-index),
        ])
    return result


CASES = {
    "points": ("POINT", ["POINT (1.5 2.25)", "POINT (-180 -90)", "POINT (0.1 0.2)"]),
    "points_z": ("POINT25D", ["POINT Z (1 2 3)", "POINT Z (4 5 -6.5)"]),
    "multipoints_m": ("MULTIPOINTM", ["MULTIPOINT M ((1 2 3),(4 5 6))", "MULTIPOINT M ((0 0 1))"]),
    "lines": ("MULTILINESTRING", [
        "LINESTRING (0 0,1 1,2 0.5)",
        "MULTILINESTRING ((0 0,1 1),(2 2,3 3,4 2))",
    ]),
    "lines_zm": ("LINESTRINGZM", ["LINESTRING ZM (0 0 1 2,1 1 3 4)", "LINESTRING ZM (5 5 5 5,6 6 6 6)"]),
    "polygons": ("MULTIPOLYGON", [
        "POLYGON ((0 0,10 0,10 10,0 10,0 0),(2 2,4 2,4 4,2 4,2 2),(6 6,8 6,8 8,6 8,6 6))",
        "MULTIPOLYGON (((0 0,1 0,1 1,0 0)),((5 5,9 5,9 9,5 9,5 5),(6 6,7 6,7 7,6 6)))",
        "POLYGON ((100 100,101 100,101 101,100 100))",
    ]),
    "polygons_z": ("POLYGON25D", ["POLYGON Z ((0 0 1,10 0 2,10 10 3,0 0 1))"]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_shapefile_to_geojson_matches_ogr2ogr(tmp_path, case):
    geometry_type, wkts = CASES[case]
    source = ogr_shapefile(str(tmp_path), case, rows(wkts), geometry_type, srs="EPSG:25832")
    ours = tmp_path / "basin.geojson"
    convert(source, ours)
    compare_documents(json.loads(ours.read_text()), gdal_geojson(source))


def test_a_zipped_latin1_shapefile_matches_ogr2ogr(tmp_path):
    source = ogr_shapefile(str(tmp_path), "latin", rows(["POINT (1 2)", "POINT (3 4)"]), "POINT", encoding="ISO-8859-1")
    raw = open(source[:-4] + ".dbf", "rb").read()
    assert "Zürich".encode("latin-1") in raw, "the .dbf really is Latin-1"
    archive = tmp_path / "upload.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for extension in ("shp", "shx", "dbf", "prj", "cpg"):
            part = source[:-4] + "." + extension
            if os.path.exists(part):
                zipped.write(part, f"folder/LATIN.{extension.upper()}")
    ours = tmp_path / "basin.geojson"
    convert(archive, ours)
    document = json.loads(ours.read_text())
    assert document["features"][0]["properties"]["name"] == f"{LATIN} 0"
    compare_documents(document, gdal_geojson(source))


def test_a_pyshp_shapefile_without_cpg_matches_ogr2ogr(tmp_path):
    shapefile = require_module("shapefile")
    path = str(tmp_path / "pyshp")
    with shapefile.Writer(path, shapeType=shapefile.POLYGONM, encoding="latin1") as writer:
        writer.field("NAME", "C", size=40)
        writer.field("VALUE", "N", size=12, decimal=3)
        writer.field("WHEN", "D")
        writer.field("OK", "L")
        writer.polym([[[0, 0, 1], [0, 10, 2], [10, 10, 3], [10, 0, 4], [0, 0, 1]],
                      [[2, 2, 0], [4, 2, 0], [4, 4, 0], [2, 4, 0], [2, 2, 0]],
                      [[20, 20, 5], [20, 21, 5], [21, 21, 5], [20, 20, 5]]])
        writer.record("Ærø", 12.5, "20200131", True)
        writer.null()
        writer.record("plain", -1.25, None, False)
    ours = tmp_path / "basin.geojson"
    convert(path + ".shp", ours)
    document = json.loads(ours.read_text())
    assert document["features"][0]["geometry"]["type"] == "MultiPolygon"
    assert document["features"][1]["geometry"] is None
    # Without a .cpg and with language driver 0, GDAL passes the bytes through undecoded;
    # Basin decodes them as ISO-8859-1 (see docs/formats.md), so GDAL is told the same.
    compare_documents(document, gdal_geojson(path + ".shp", "--config", "SHAPE_ENCODING", "ISO-8859-1"))


GEOJSON = {
    "type": "FeatureCollection",
    "features": [
        {"type": "Feature", "properties": {"name": "Ærø", "count": 3, "level": 1.25, "day": "2020-02-03",
                                           "temperature_max": 1.5, "temperature_min": -2, "wet": True},
         "geometry": {"type": "Polygon", "coordinates": [[[0, 0], [10, 0], [10, 10], [0, 10], [0, 0]],
                                                         [[2, 2], [2, 4], [4, 4], [4, 2], [2, 2]]]}},
        {"type": "Feature", "properties": {"name": None, "count": None, "level": 7, "day": None,
                                           "temperature_max": None, "temperature_min": 5, "wet": False},
         "geometry": {"type": "MultiPolygon", "coordinates": [[[[0, 0], [1, 0], [1, 1], [0, 0]]],
                                                              [[[5, 5], [6, 5], [6, 6], [5, 5]]]]}},
        {"type": "Feature", "properties": {"name": "x", "count": 2, "level": 0.1, "day": "2021-12-31",
                                           "temperature_max": 0.30000000000000004, "temperature_min": 0, "wet": None},
         "geometry": None},
    ],
}


@pytest.mark.parametrize("output", ["basin.shp", "basin.zip"])
def test_geojson_to_shapefile_matches_ogr2ogr(tmp_path, output):
    ogr2ogr = require_tool("ogr2ogr")
    source = tmp_path / "in.geojson"
    source.write_text(json.dumps(GEOJSON))
    ours = tmp_path / output
    result = convert(source, ours)
    assert "temperatur" in result.stderr and "temperat_1" in result.stderr, result.stderr
    theirs = tmp_path / "gdal.shp"
    run(ogr2ogr, "-f", "ESRI Shapefile", theirs, source)
    ours_path = str(ours) if output.endswith(".shp") else "/vsizip/" + str(ours) + "/basin.shp"
    our_types = field_types(ours_path)
    their_types = field_types(theirs)
    their_types["wet"] = "logical"  # GDAL writes booleans as N(1); Basin as L, read back as String
    our_types["wet"] = "logical"
    assert our_types == their_types
    compare_documents(gdal_geojson(ours_path), gdal_geojson(theirs))
    if output.endswith(".shp"):
        assert set(os.listdir(tmp_path)) >= {"basin.shp", "basin.shx", "basin.dbf", "basin.prj", "basin.cpg"}
