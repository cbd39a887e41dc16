"""basin-tiles' vector tiles read by decoders that share no code with it: the mapbox-vector-tile
package and GDAL's MVT driver (ogrinfo). The `mvt_sample` example writes tiles of points,
lines, polygons with holes, multipolygons, a collection and features crossing tile edges, with
properties of every type, and describes its input in features.json; this test works out where
everything must be from that input alone (shapely clips it to the buffered tile) and checks what
both decoders read: the same features, in place to the tolerance (one unit of simplification
and half a unit of snapping), with the same properties and ids, exterior rings and holes told
apart as MVT 2.1 says."""

import json
import math
import os
import re
import subprocess

import mapbox_vector_tile
import numpy as np
import pytest
import shapely
from shapely import wkt as shapely_wkt
from shapely.geometry import (LineString, MultiLineString, MultiPoint, MultiPolygon, Point,
                              Polygon, box, shape)

from formats_support import ROOT

HALF = math.pi * 6378137.0
# Simplification (1 unit) plus snapping (half a unit on each axis).
TOLERANCE_UNITS = 1.0 + math.sqrt(0.5)
# A feature whose clipped shape spans fewer units than this may vanish at its zoom.
SMALL_UNITS = 8.0


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    folder = tmp_path_factory.mktemp("mvt")
    subprocess.run(["cargo", "run", "-q", "-p", "basin-tiles", "--example", "mvt_sample", "--",
                    str(folder)], cwd=ROOT, check=True)
    with open(folder / "features.json", encoding="utf-8") as handle:
        manifest = json.load(handle)
    return folder, manifest


def tile_frame(z, x, y, extent):
    """EPSG:3857 -> tile units (y down) of tile z/x/y, and back."""
    span = 2 * HALF / 2**z
    left, top = -HALF + x * span, HALF - y * span
    scale = extent / span

    def to_tile(geometry):
        return shapely.transform(geometry, lambda c: np.column_stack(
            ((c[:, 0] - left) * scale, (top - c[:, 1]) * scale)))

    def to_map(geometry):
        return shapely.transform(geometry, lambda c: np.column_stack(
            (left + c[:, 0] / scale, top - c[:, 1] / scale)))

    return to_tile, to_map


def parts_by_kind(geometry):
    """A source geometry split as the layer splits collections: {kind: shapely geometry}."""
    if geometry["type"] == "GeometryCollection":
        found = {}
        for member in geometry["geometries"]:
            for kind, part in parts_by_kind(member).items():
                found.setdefault(kind, []).append(part)
        merged = {}
        for kind, members in found.items():
            if kind == "point":
                merged[kind] = MultiPoint([p for m in members for p in getattr(m, "geoms", [m])])
            elif kind == "line":
                merged[kind] = MultiLineString(
                    [p for m in members for p in getattr(m, "geoms", [m])])
            else:
                merged[kind] = MultiPolygon([p for m in members for p in getattr(m, "geoms", [m])])
        return merged
    return {KINDS[geometry["type"]]: shape(geometry)}


def expected_features(manifest, z, x, y):
    """(name, kind) -> (source feature, expected geometry in tile units, may it vanish)."""
    extent, buffer = manifest["extent"], manifest["buffer"]
    to_tile, _ = tile_frame(z, x, y, extent)
    square = box(-buffer, -buffer, extent + buffer, extent + buffer)
    expected = {}
    for feature in manifest["features"]:
        for kind, geometry in parts_by_kind(feature["geometry"]).items():
            clipped = to_tile(geometry).intersection(square)
            if clipped.is_empty or (kind == "line" and clipped.length == 0) or (
                    kind == "polygon" and clipped.area == 0):
                continue
            left, top, right, bottom = clipped.bounds
            small = kind != "point" and max(right - left, bottom - top) < SMALL_UNITS
            expected[(feature["properties"][0], kind)] = (feature, clipped, small)
    return expected


KINDS = {"Point": "point", "MultiPoint": "point", "LineString": "line",
         "MultiLineString": "line", "Polygon": "polygon", "MultiPolygon": "polygon"}


def kind_of(geometry_type):
    return KINDS[geometry_type]


def assert_same_place(kind, decoded, expected, tolerance, label):
    if kind == "point":
        decoded_points = list(getattr(decoded, "geoms", [decoded]))
        expected_points = list(getattr(expected, "geoms", [expected]))
        assert len(decoded_points) == len(expected_points), label
        for point in decoded_points:
            assert min(point.distance(e) for e in expected_points) <= tolerance, (label, point)
        return
    assert decoded.hausdorff_distance(expected) <= 2 * tolerance, (
        label, decoded.wkt[:300], expected.wkt[:300])
    if kind == "polygon":
        assert decoded.is_valid, (label, decoded.wkt[:300])
        slack = expected.length * tolerance + 4 * tolerance**2
        assert decoded.symmetric_difference(expected).area <= slack, label


def expected_properties(manifest, feature):
    return {key: value for key, value in zip(manifest["keys"], feature["properties"])
            if value is not None}


def tiles(manifest):
    return [tuple(tile) for tile in manifest["tiles"]]


def test_mapbox_vector_tile_reads_every_feature_in_place_with_its_properties(sample):
    folder, manifest = sample
    extent = manifest["extent"]
    seen = set()
    for z, x, y in tiles(manifest):
        with open(folder / str(z) / str(x) / f"{y}.pbf", "rb") as handle:
            data = handle.read()
        expected = expected_features(manifest, z, x, y)
        decoded = mapbox_vector_tile.decode(data, default_options={"y_coord_down": True})
        if not data:
            assert not expected, (z, x, y)
            assert decoded == {}
            continue
        assert list(decoded) == [manifest["layer"]]
        layer = decoded[manifest["layer"]]
        assert layer["extent"] == extent and layer["version"] == 2
        found = {}
        for feature in layer["features"]:
            kind = kind_of(feature["geometry"]["type"])
            name = feature["properties"]["name"]
            assert (name, kind) not in found, "one feature per kind"
            found[(name, kind)] = feature
        must = {key for key, (_, _, small) in expected.items() if not small}
        assert must <= set(found) <= set(expected), ((z, x, y), sorted(found), sorted(expected))
        for (name, kind), feature in found.items():
            source, clipped, _ = expected[(name, kind)]
            label = (z, x, y, name, kind)
            properties = feature["properties"]
            assert properties == expected_properties(manifest, source), label
            assert feature.get("id", 0) == (source["id"] or 0), label
            geometry = shape(feature["geometry"])
            for point in _coordinates(geometry):
                assert all(-manifest["buffer"] <= c <= extent + manifest["buffer"] for c in point)
                assert all(float(c).is_integer() for c in point), "snapped to the grid"
            assert_same_place(kind, geometry, clipped, TOLERANCE_UNITS, label)
            seen.add((name, kind, z))
    names = {name for name, _, _ in seen}
    assert names == {"gauge", "gauges", "ditch", "pond", "islands", "polder", "canals", "mixed"}


def test_rings_are_wound_as_mvt_2_1_asks(sample):
    """Exterior rings clockwise on screen (y down), holes counter-clockwise: a decoder that
    classifies rings by winding finds the pond's hole and the two islands."""
    folder, manifest = sample
    z, x, y = 14, 8415, 5384
    with open(folder / str(z) / str(x) / f"{y}.pbf", "rb") as handle:
        layer = mapbox_vector_tile.decode(handle.read(),
                                          default_options={"y_coord_down": True})["sample"]
    by_name = {f["properties"]["name"]: f["geometry"] for f in layer["features"]
               if f["geometry"]["type"] in ("Polygon", "MultiPolygon")}
    assert by_name["pond"]["type"] == "Polygon" and len(by_name["pond"]["coordinates"]) == 2
    assert by_name["islands"]["type"] == "MultiPolygon"
    assert len(by_name["islands"]["coordinates"]) == 2

    def screen_area(ring):  # positive when clockwise with y down
        return sum(a[0] * b[1] - b[0] * a[1] for a, b in zip(ring, ring[1:]))

    exterior, hole = by_name["pond"]["coordinates"]
    assert screen_area(exterior) > 0 and screen_area(hole) < 0


def ogr_features(path):
    """(attributes, geometry in EPSG:3857) per feature of GDAL's reading of tile `path`."""
    output = subprocess.run(["ogrinfo", "-ro", "-al", "-oo", "CLIP=NO", str(path)],
                            check=True, capture_output=True, text=True).stdout
    assert "EPSG\",3857" in output, "GDAL placed the tile from its z/x/y path"
    features = []
    for block in output.split("OGRFeature(")[1:]:
        attributes = {name: (kind, value) for name, kind, value in
                      re.findall(r"^\s+(\w+) \(([\w()]+)\) = (.*)$", block, re.M)}
        geometry = re.search(r"^\s+((?:MULTI)?(?:POINT|LINESTRING|POLYGON) .*)$", block, re.M)
        features.append((attributes, shapely_wkt.loads(geometry.group(1))))
    return features


def test_gdal_reads_every_feature_in_place_in_web_mercator(sample):
    folder, manifest = sample
    extent = manifest["extent"]
    for z, x, y in tiles(manifest):
        path = folder / str(z) / str(x) / f"{y}.pbf"
        expected = expected_features(manifest, z, x, y)
        if os.path.getsize(path) == 0:
            assert not expected
            continue
        _, to_map = tile_frame(z, x, y, extent)
        units = 2 * HALF / 2**z / extent
        found = {}
        for attributes, geometry in ogr_features(path):
            kind = kind_of(geometry.geom_type)
            name = attributes["name"][1]
            found[(name, kind)] = (attributes, geometry)
        must = {key for key, (_, _, small) in expected.items() if not small}
        assert must <= set(found) <= set(expected), ((z, x, y), sorted(found))
        for (name, kind), (attributes, geometry) in found.items():
            source, clipped, _ = expected[(name, kind)]
            label = (z, x, y, name, kind)
            assert_same_place(kind, geometry, to_map(clipped),
                              TOLERANCE_UNITS * units, label)
            if source["id"] is None:
                assert "mvt_id" not in attributes, label
            else:
                assert attributes["mvt_id"] == ("Integer64", str(source["id"])), label
            properties = expected_properties(manifest, source)
            shown = {key: value for key, value in attributes.items() if key != "mvt_id"}
            assert set(shown) == set(properties), label
            assert shown["depth"][0] == "Real"
            assert float(shown["depth"][1]) == pytest.approx(properties["depth"], rel=1e-12)
            assert shown["count"] == ("Integer64", str(properties["count"])), label
            assert shown["open"] == ("Integer(Boolean)", "1" if properties["open"] else "0")
            if "note" in properties:
                assert shown["note"] == ("String", properties["note"]), label


def _coordinates(geometry):
    if hasattr(geometry, "geoms"):
        for part in geometry.geoms:
            yield from _coordinates(part)
    elif isinstance(geometry, Polygon):
        yield from geometry.exterior.coords
        for ring in geometry.interiors:
            yield from ring.coords
    elif isinstance(geometry, (Point, LineString)):
        yield from geometry.coords
