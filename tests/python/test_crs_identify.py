"""Identification of coordinate systems given as WKT without a code (ESRI .prj files) compared
with GDAL 3.6 / PROJ 9.1, the EPSG code through SHP -> GeoJSON -> SHP compared with ogr2ogr and
into GeoTIFF keys compared with gdal_translate, and the GeoJSON writer's Rfc7946 parameter
compared with ogr2ogr -lco RFC7946=YES.

The definitions are the .prj files of tests/corpus/{gdal-esri-wkt,proj4js,gdal-autotest,
geopandas}; each folder's expected.tsv records what `gdalsrsinfo -e` finds (its unique 100%
EPSG match, or none) and, in a third column, Basin's code where it deliberately differs (the
folder's README.md says why). The tests check that the table still matches gdalsrsinfo, that
Basin's GeoJSON output declares the expected code, and that wherever ogr2ogr's GeoJSON declares
an EPSG code, Basin's declares the same one.
"""

import json
import os
import re
import shutil
import subprocess
import time

import pytest

from formats_support import ROOT, convert, require_tool, run

CORPUS = os.path.join(ROOT, "tests", "corpus")
FOLDERS = ["gdal-esri-wkt", "proj4js", "gdal-autotest", "geopandas"]


def corpus():
    entries = []
    for folder in FOLDERS:
        with open(os.path.join(CORPUS, folder, "expected.tsv"), encoding="utf-8") as table:
            for line in table:
                if line.startswith("#") or not line.strip():
                    continue
                columns = line.rstrip("\n").split("\t")
                gdal = None if columns[1] == "none" else int(columns[1])
                basin = gdal
                if len(columns) > 2:
                    basin = None if columns[2] == "none" else int(columns[2])
                entries.append((os.path.join(folder, columns[0]), gdal, basin))
    return entries


ENTRIES = corpus()


def is_epsg_code(code):
    """True when EPSG (not ESRI) defines `code`: gdalsrsinfo -e labels every match EPSG. ESRI's
    own codes start at 37001, and every EPSG code below that is EPSG's."""
    if code < 37001:
        return True
    result = subprocess.run(["projinfo", "-q", "-o", "PROJ", f"EPSG:{code}"],
                            capture_output=True, text=True)
    return result.returncode == 0


def gdal_unique_epsg(path):
    """`gdalsrsinfo -e`'s unique 100% EPSG match for a definition, or None (also when GDAL
    cannot read the definition at all)."""
    result = subprocess.run(["gdalsrsinfo", "-e", str(path)], capture_output=True, text=True)
    if result.returncode != 0:
        return None
    out = result.stdout
    matches, confidence = [], 100
    for line in out.splitlines():
        found = re.match(r"Confidence in this match: (\d+) %", line)
        if found:
            confidence = int(found.group(1))
            continue
        found = re.match(r"^EPSG:(\d+)\s*$", line)
        if found:
            matches.append((int(found.group(1)), confidence))
            confidence = 100
    if len(matches) == 1 and matches[0][1] == 100 and is_epsg_code(matches[0][0]):
        return matches[0][0]
    return None


def gdal_epsg(path):
    """The EPSG code GDAL gives a .prj (`gdalsrsinfo -o epsg`: its authority code, else its
    identification), or None."""
    found = re.findall(r"^EPSG:(\d+)\s*$", run("gdalsrsinfo", "-o", "epsg", path), re.M)
    return int(found[-1]) if len(set(found)) == 1 else None


def geojson_code(path):
    """The EPSG code a GeoJSON's crs member names (CRS84 is 4326), or None without one or
    when it names another authority's code (ogr2ogr writes ESRI's, e.g. ESRI::54008)."""
    with open(path, encoding="utf-8") as handle:
        document = json.load(handle)
    name = (document.get("crs") or {}).get("properties", {}).get("name")
    if name is None:
        return None
    if name.endswith("CRS84"):
        return 4326
    found = re.search(r"EPSG:+(\d+)$", name)
    return int(found.group(1)) if found else None


@pytest.fixture(scope="module")
def point_shapefile(tmp_path_factory):
    """A one-point shapefile (without .prj) made by ogr2ogr."""
    require_tool("ogr2ogr")
    folder = tmp_path_factory.mktemp("base")
    source = folder / "p.geojson"
    source.write_text(json.dumps({"type": "FeatureCollection", "features": [
        {"type": "Feature", "properties": {"name": "a"},
         "geometry": {"type": "Point", "coordinates": [500000.0, 4500000.0]}}]}))
    run("ogr2ogr", "-f", "ESRI Shapefile", folder / "base.shp", source)
    return folder / "base"


def shapefile_with(prj, base, folder):
    """A copy of the point shapefile with `prj` as its .prj."""
    for extension in ("shp", "shx", "dbf"):
        shutil.copy(f"{base}.{extension}", folder / f"t.{extension}")
    shutil.copy(prj, folder / "t.prj")
    return folder / "t.shp"


def test_the_corpus_is_broad():
    esri = [entry for entry in ENTRIES if entry[1] is not None]
    assert len(ENTRIES) >= 150
    assert len(esri) >= 40


@pytest.mark.parametrize("name,gdal,basin", ENTRIES, ids=[entry[0] for entry in ENTRIES])
def test_identification_matches_gdal(name, gdal, basin, point_shapefile, tmp_path):
    require_tool("gdalsrsinfo")
    prj = os.path.join(CORPUS, name)
    assert gdal_unique_epsg(prj) == gdal, "expected.tsv no longer matches gdalsrsinfo -e"
    shp = shapefile_with(prj, point_shapefile, tmp_path)
    ours = tmp_path / "ours.geojson"
    convert(shp, ours)
    # WGS 84 is GeoJSON's own CRS: Basin does not declare it (ogr2ogr writes CRS84).
    assert geojson_code(ours) == (None if basin == 4326 else basin)
    theirs = tmp_path / "theirs.geojson"
    run("ogr2ogr", "-f", "GeoJSON", theirs, shp)
    ogr = geojson_code(theirs)
    if ogr is not None and ogr != 4326 and is_epsg_code(ogr):
        assert geojson_code(ours) == ogr, "ogr2ogr declares another code"


ROUND_TRIP = [2227, 2263, 26743, 27700, 28355, 25832, 2193, 23031, 31983, 4267, 3857, 32118]


@pytest.mark.parametrize("code", ROUND_TRIP)
def test_epsg_code_survives_shp_geojson_shp(code, point_shapefile, tmp_path):
    """An ESRI .prj (as gdalsrsinfo writes it) through SHP -> GeoJSON -> SHP: the GeoJSON
    declares the code as ogr2ogr's does, GDAL gives the final .prj the code (Basin writes the
    registry's WKT with its AUTHORITY), and so does Basin reading it back."""
    require_tool("gdalsrsinfo")
    prj = tmp_path / "esri.prj"
    # On one line, as ArcGIS writes .prj files (gdalsrsinfo pretty-prints).
    pretty = run("gdalsrsinfo", "-o", "wkt_esri", f"EPSG:{code}")
    prj.write_text(re.sub(r"\s*\n\s*", "", pretty.strip()))
    shp = shapefile_with(prj, point_shapefile, tmp_path)
    ours = tmp_path / "ours.geojson"
    convert(shp, ours)
    theirs = tmp_path / "theirs.geojson"
    run("ogr2ogr", "-f", "GeoJSON", theirs, shp)
    assert geojson_code(ours) == geojson_code(theirs) == code
    back = tmp_path / "back.shp"
    convert(ours, back)
    assert gdal_epsg(tmp_path / "back.prj") == code
    again = tmp_path / "again.geojson"
    convert(back, again)
    assert geojson_code(again) == code
    # ogr2ogr reads Basin's GeoJSON crs member the same way.
    ogr_back = tmp_path / "ogr_back.shp"
    run("ogr2ogr", "-f", "ESRI Shapefile", ogr_back, ours)
    assert gdal_epsg(tmp_path / "ogr_back.prj") == code


@pytest.mark.parametrize("name,code", [
    ("urn:ogc:def:crs:EPSG::2227", 2227),
    ("EPSG:27700", 27700),
    ("urn:ogc:def:crs:OGC:1.3:CRS84", 4326),
])
def test_geojson_crs_member_forms_are_read_like_ogr(name, code, tmp_path):
    require_tool("ogr2ogr")
    source = tmp_path / "in.geojson"
    source.write_text(json.dumps({
        "type": "FeatureCollection",
        "crs": {"type": "name", "properties": {"name": name}},
        "features": [{"type": "Feature", "properties": {"a": 1},
                      "geometry": {"type": "Point", "coordinates": [1.0, 2.0]}}]}))
    convert(source, tmp_path / "ours.shp")
    run("ogr2ogr", "-f", "ESRI Shapefile", tmp_path / "theirs.shp", source)
    assert gdal_epsg(tmp_path / "ours.prj") == code
    assert gdal_epsg(tmp_path / "theirs.prj") == code


def positions(geometry):
    if geometry["type"] == "Point":
        return [geometry["coordinates"]]
    if geometry["type"] in ("LineString", "MultiPoint"):
        return geometry["coordinates"]
    if geometry["type"] == "Polygon":
        return [p for ring in geometry["coordinates"] for p in ring]
    raise AssertionError(geometry["type"])


def ring_area(ring):
    return sum(a[0] * b[1] - b[0] * a[1] for a, b in zip(ring, ring[1:]))


def test_rfc7946_output_matches_ogr2ogr(tmp_path):
    """Rfc7946=true reprojects to WGS 84 as ogr2ogr -lco RFC7946=YES does (ogr2ogr rounds to
    7 decimals), orients rings counterclockwise, and writes no crs member."""
    require_tool("ogr2ogr")
    source = tmp_path / "in.geojson"
    source.write_text(json.dumps({
        "type": "FeatureCollection",
        "crs": {"type": "name", "properties": {"name": "urn:ogc:def:crs:EPSG::2227"}},
        "features": [
            {"type": "Feature", "properties": {"a": 2},
             "geometry": {"type": "Polygon", "coordinates": [[
                 [6000000.0, 2000000.0], [6000000.0, 2010000.0], [6010000.0, 2010000.0],
                 [6010000.0, 2000000.0], [6000000.0, 2000000.0]]]}}]}))
    source_shp = tmp_path / "in.shp"
    run("ogr2ogr", "-f", "ESRI Shapefile", source_shp, source)
    ours = tmp_path / "ours.geojson"
    convert(source_shp, ours, "-w", "Rfc7946=true")
    theirs = tmp_path / "theirs.geojson"
    run("ogr2ogr", "-f", "GeoJSON", "-lco", "RFC7946=YES", theirs, source_shp)
    ours_doc = json.loads(ours.read_text())
    theirs_doc = json.loads(theirs.read_text())
    assert "crs" not in ours_doc and "crs" not in theirs_doc
    for mine, gdal in zip(ours_doc["features"], theirs_doc["features"]):
        for a, b in zip(positions(mine["geometry"]), positions(gdal["geometry"])):
            assert abs(a[0] - b[0]) < 1e-6 and abs(a[1] - b[1]) < 1e-6, (a, b)
        if mine["geometry"]["type"] == "Polygon":
            assert ring_area(mine["geometry"]["coordinates"][0]) > 0
            assert ring_area(gdal["geometry"]["coordinates"][0]) > 0
    # The default keeps the coordinates and declares the code, as ogr2ogr's default does.
    default = tmp_path / "default.geojson"
    convert(source_shp, default)
    assert geojson_code(default) == 2227
    assert json.loads(default.read_text())["features"][0]["geometry"]["coordinates"][0][0] == \
        [6000000.0, 2000000.0]


def test_identification_time_is_small(tmp_path):
    """Identifying a state plane .prj (index built once, then a lookup) takes well under a
    second of a whole conversion (the Rust test measures identification alone)."""
    require_tool("ogr2ogr")
    prj = os.path.join(CORPUS, "gdal-esri-wkt", "EPSG_2227.prj")
    source = tmp_path / "p.geojson"
    source.write_text(json.dumps({"type": "FeatureCollection", "features": [
        {"type": "Feature", "properties": {"a": 1},
         "geometry": {"type": "Point", "coordinates": [6000000.0, 2000000.0]}}]}))
    run("ogr2ogr", "-f", "ESRI Shapefile", tmp_path / "t.shp", source)
    shutil.copy(prj, tmp_path / "t.prj")
    start = time.monotonic()
    convert(tmp_path / "t.shp", tmp_path / "out.geojson")
    elapsed = time.monotonic() - start
    assert geojson_code(tmp_path / "out.geojson") == 2227
    print(f"SHP -> GeoJSON with an ESRI state plane .prj: {elapsed:.3f} s")
    assert elapsed < 5


@pytest.mark.parametrize("code", [2227, 26743, 27700, 2193])
def test_esri_prj_of_a_grid_becomes_geotiff_keys_like_gdal_translate(code, tmp_path):
    """An ASCII Grid with an ESRI .prj written to GeoTIFF: Basin's GeoKeys name the identified
    code, as gdal_translate's do."""
    require_tool("gdal_translate")
    (tmp_path / "g.asc").write_text(
        "ncols 2\nnrows 2\nxllcorner 500000\nyllcorner 200000\ncellsize 100\n"
        "NODATA_value -9999\n1 2\n3 4\n")
    pretty = run("gdalsrsinfo", "-o", "wkt_esri", f"EPSG:{code}")
    (tmp_path / "g.prj").write_text(re.sub(r"\s*\n\s*", "", pretty.strip()))
    convert(tmp_path / "g.asc", tmp_path / "ours.tif")
    run("gdal_translate", "-q", tmp_path / "g.asc", tmp_path / "theirs.tif")
    assert gdal_epsg(tmp_path / "ours.tif") == gdal_epsg(tmp_path / "theirs.tif") == code
