"""Polygons (issue 11): how Basin groups a Shapefile record's rings, compared with ogr2ogr
(GDAL's Shapefile driver) on crafted records and real files, and polygons -> mesh through the
triangulation, read back with meshio.

The crafted records are written byte by byte (`write_polygons`), so that rings are stored
exactly as given: unclosed, flat or turned the wrong way, which pyshp and ogr2ogr would
correct. Cases where ogr2ogr's result is an invalid polygon, and where Basin deliberately gives
another, are in `DIFFERENCES` with what Basin gives (docs/formats.md, Shapefile).
"""

import json
import math
import os
import struct
import subprocess

import pytest

from formats_support import BINARY, ROOT, convert, require_module, require_tool, run

CORPUS = os.path.join(ROOT, "tests", "corpus")


def write_polygons(path, records):
    """Writes `path`.shp/.shx/.dbf: each record a list of rings (lists of (x, y)) stored as
    given, with an integer field ID (1-based)."""
    bodies = []
    for rings in records:
        points = [point for ring in rings for point in ring]
        xs = [x for x, _ in points]
        ys = [y for _, y in points]
        body = struct.pack("<i4d2i", 5, min(xs), min(ys), max(xs), max(ys), len(rings),
                           len(points))
        start = 0
        for ring in rings:
            body += struct.pack("<i", start)
            start += len(ring)
        for x, y in points:
            body += struct.pack("<2d", x, y)
        bodies.append(body)
    every = [point for rings in records for ring in rings for point in ring]
    box = (min(p[0] for p in every), min(p[1] for p in every),
           max(p[0] for p in every), max(p[1] for p in every))

    def header(length_bytes):
        return (struct.pack(">7i", 9994, 0, 0, 0, 0, 0, length_bytes // 2)
                + struct.pack("<2i8d", 1000, 5, *box, 0, 0, 0, 0))

    shp = b""
    shx = b""
    offset = 100
    for number, body in enumerate(bodies, 1):
        shx += struct.pack(">2i", offset // 2, len(body) // 2)
        shp += struct.pack(">2i", number, len(body) // 2) + body
        offset += 8 + len(body)
    with open(f"{path}.shp", "wb") as file:
        file.write(header(100 + len(shp)) + shp)
    with open(f"{path}.shx", "wb") as file:
        file.write(header(100 + len(shx)) + shx)
    count = len(records)
    dbf = struct.pack("<B3BIHH20x", 3, 124, 1, 1, count, 65, 11)
    dbf += b"ID".ljust(11, b"\0") + b"N" + b"\0" * 4 + bytes([10, 0]) + b"\0" * 14 + b"\r"
    for number in range(1, count + 1):
        dbf += b" " + str(number).rjust(10).encode()
    dbf += b"\x1a"
    with open(f"{path}.dbf", "wb") as file:
        file.write(dbf)


def square(x, y, size, clockwise=True):
    ring = [(x, y), (x, y + size), (x + size, y + size), (x + size, y), (x, y)]
    return ring if clockwise else ring[::-1]


# A "C" open to the right, whose opening holds square(2, 1.5, 1).
NOTCHED = [(0, 0), (0, 4), (4, 4), (4, 3), (1, 3), (1, 1), (4, 1), (4, 0), (0, 0)]

# Records where ogr2ogr gives a valid result, which Basin must match.
SAME_AS_OGR = {
    "hole_and_exterior": [square(0, 0, 4), square(1, 1, 1, False)],
    "hole_before_its_exterior": [square(1, 1, 1, False), square(0, 0, 4)],
    "islands_in_holes": [square(0, 0, 10), square(3, 3, 4), square(1, 1, 8, False),
                         square(4, 4, 2, False)],
    "lake_in_island_in_lake": [square(0, 0, 10), square(1, 1, 8, False), square(2, 2, 6),
                               square(3, 3, 4, False), square(4, 4, 2)],
    "hole_outside_two_exteriors": [square(0, 0, 1), square(5, 5, 1, False), square(10, 0, 1)],
    "disjoint_counter_clockwise": [square(0, 0, 1, False), square(5, 5, 1, False)],
    "single_counter_clockwise": [square(0, 0, 1, False)],
    "disjoint_clockwise": [square(0, 0, 1), square(5, 5, 1)],
    "unclosed": [square(0, 0, 4)[:-1], square(1, 1, 1, False)[:-1]],
    "hole_touching_exterior": [square(0, 0, 4), square(10, 10, 1),
                               [(0, 1), (2, 1), (2, 3), (0, 1)]],
    "hole_with_every_corner_on_the_exterior": [square(0, 0, 4), square(10, 10, 1),
                                               [(2, 0), (4, 2), (2, 4), (0, 2), (2, 0)]],
    "exteriors_touching_at_a_corner": [square(0, 0, 1), square(1, 1, 1)],
}

# Records where ogr2ogr's result is invalid and Basin gives another: (rings, Basin's geometry).
DIFFERENCES = {
    # ogr2ogr: a Polygon whose hole lies outside it.
    "hole_outside_the_only_exterior": (
        [square(0, 0, 1), square(5, 5, 1, False)],
        {"type": "MultiPolygon",
         "coordinates": [[square(0, 0, 1)], [square(5, 5, 1, False)]]}),
    # ogr2ogr: the hole in the notch becomes a hole (its bounding box is inside).
    "hole_in_a_notch": (
        [NOTCHED, square(10, 10, 1), square(2, 1.5, 1, False)],
        {"type": "MultiPolygon",
         "coordinates": [[NOTCHED], [square(10, 10, 1)], [square(2, 1.5, 1, False)]]}),
    # ogr2ogr: the small clockwise ring is the exterior, the large one its hole.
    "reversed_winding": (
        [square(0, 0, 4, False), square(1, 1, 1)],
        {"type": "Polygon", "coordinates": [square(0, 0, 4, False), square(1, 1, 1)]}),
    # ogr2ogr: two overlapping polygons.
    "nested_counter_clockwise": (
        [square(0, 0, 4, False), square(1, 1, 1, False)],
        {"type": "Polygon", "coordinates": [square(0, 0, 4, False), square(1, 1, 1, False)]}),
    # ogr2ogr: the flat rings become holes.
    "flat_rings": (
        [square(0, 0, 4), square(1, 1, 1, False), [(2, 2), (3, 3), (2, 2)],
         [(0.5, 0.5), (1, 1), (1.5, 1.5), (0.5, 0.5)]],
        {"type": "MultiPolygon",
         "coordinates": [[square(0, 0, 4), square(1, 1, 1, False)], [[(2, 2), (3, 3), (2, 2)]],
                         [[(0.5, 0.5), (1, 1), (1.5, 1.5), (0.5, 0.5)]]]}),
}


def geometries_by(tool, source, tmp_path):
    """The features' geometries of `source` as GeoJSON, read by ogr2ogr or by Basin."""
    target = tmp_path / f"{tool}.geojson"
    if tool == "ogr2ogr":
        run(require_tool("ogr2ogr"), "-f", "GeoJSON", target, source)
    else:
        convert(source, target)
    with open(target, encoding="utf-8") as file:
        return [feature["geometry"] for feature in json.load(file)["features"]]


def same(a, b, tolerance=1e-9):
    """Whether two GeoJSON coordinate trees are equal to `tolerance` (relative)."""
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=tolerance, abs_tol=tolerance)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y, tolerance) for x, y in zip(a, b))
    return a == b


@pytest.mark.parametrize("name", sorted(SAME_AS_OGR))
def test_crafted_rings_are_grouped_as_ogr2ogr_groups_them(tmp_path, name):
    source = tmp_path / "rings.shp"
    write_polygons(str(tmp_path / "rings"), [SAME_AS_OGR[name]])
    ogr = geometries_by("ogr2ogr", source, tmp_path)
    basin = geometries_by("basin", source, tmp_path)
    assert [g["type"] for g in basin] == [g["type"] for g in ogr]
    assert same([g["coordinates"] for g in basin], [g["coordinates"] for g in ogr]), (basin, ogr)


@pytest.mark.parametrize("name", sorted(DIFFERENCES))
def test_where_ogr2ogr_gives_an_invalid_polygon_basin_gives_the_documented_one(tmp_path, name):
    rings, expected = DIFFERENCES[name]
    source = tmp_path / "rings.shp"
    write_polygons(str(tmp_path / "rings"), [rings])
    ogr = geometries_by("ogr2ogr", source, tmp_path)
    [basin] = geometries_by("basin", source, tmp_path)
    assert basin["type"] == expected["type"]
    assert same(basin["coordinates"], expected["coordinates"]), basin
    assert not (ogr[0]["type"] == basin["type"]
                and same(ogr[0]["coordinates"], basin["coordinates"])), "no longer a difference"


REAL_SHAPEFILES = ["pyshp/blockgroups.shp", "fiona/coutwildrnp.shp"]


@pytest.mark.parametrize("name", REAL_SHAPEFILES)
def test_real_shapefiles_are_grouped_as_ogr2ogr_groups_them(tmp_path, name):
    source = os.path.join(CORPUS, name)
    ogr = geometries_by("ogr2ogr", source, tmp_path)
    basin = geometries_by("basin", source, tmp_path)
    assert len(basin) == len(ogr)
    for index, (mine, theirs) in enumerate(zip(basin, ogr)):
        assert mine["type"] == theirs["type"], index
        assert same(mine["coordinates"], theirs["coordinates"]), index


def test_a_lake_with_islands_written_by_ogr2ogr_is_read_back_as_ogr2ogr_reads_it(tmp_path):
    """earcut's water fixture (a lake with nine islands) as a Shapefile, rings turned by
    ogr2ogr as the specification demands."""
    shapefile = tmp_path / "water.shp"
    run(require_tool("ogr2ogr"), "-f", "ESRI Shapefile", shapefile,
        os.path.join(CORPUS, "earcut", "water.geojson"))
    ogr = geometries_by("ogr2ogr", shapefile, tmp_path)
    basin = geometries_by("basin", shapefile, tmp_path)
    assert basin[0]["type"] == ogr[0]["type"] == "Polygon"
    assert len(basin[0]["coordinates"]) == 10
    assert same(basin[0]["coordinates"], ogr[0]["coordinates"])


# Polygons -> mesh.

def ring_area(ring):
    return abs(sum(a[0] * b[1] - b[0] * a[1] for a, b in zip(ring, ring[1:] + ring[:1]))) / 2


def polygons_of(geometry):
    return [geometry["coordinates"]] if geometry["type"] == "Polygon" else geometry["coordinates"]


def polygon_area(rings):
    return ring_area(rings[0]) - sum(ring_area(hole) for hole in rings[1:])


MESH_SOURCES = ["pyshp/blockgroups.shp", "fiona/coutwildrnp.shp"] + [
    f"earcut/{name}.geojson"
    for name in ["hole-touching-outer", "touching-holes", "touching-holes3", "building", "dude",
                 "shared-points", "outside-ring", "eberly-3", "issue52"]]

# Real polygons whose rings cross (GEOS: self-intersection), with the edge Basin names.
CROSSING_SOURCES = {
    "water": "the edge of ring 1 from (2288, 4172) to (2283, 4189) crosses",
    "water3": "rings overlap or share edges",
    "bad-hole": "the edge of ring 4 from (838, 2851) to (838, 2859) crosses",
}


@pytest.mark.parametrize("name", MESH_SOURCES)
def test_polygons_become_a_mesh_that_covers_them_and_keeps_their_edges(tmp_path, name):
    meshio = require_module("meshio")
    import numpy

    source = os.path.join(CORPUS, name)
    geometries = geometries_by("ogr2ogr", source, tmp_path)
    target = tmp_path / "mesh.vtu"
    convert(source, target)
    mesh = meshio.read(target)
    points = mesh.points[:, :2]
    area = 0.0
    edges = set()
    keys = {}
    for block in mesh.cells:
        assert block.type in ("triangle", "quad")
        corners = points[block.data]
        # Shoelace over each cell's corners; counter-clockwise cells have a positive area.
        following = numpy.roll(corners, -1, axis=1)
        doubled = (corners[:, :, 0] * following[:, :, 1]
                   - following[:, :, 0] * corners[:, :, 1]).sum(axis=1)
        assert (doubled > 0).all(), "every cell is counter-clockwise"
        area += doubled.sum() / 2
        for cell in block.data:
            for a, b in zip(cell, numpy.roll(cell, -1)):
                edges.add(frozenset((int(a), int(b))))
    for index, (x, y) in enumerate(points):
        keys.setdefault((float(x), float(y)), index)
    assert len(keys) == len(points), "shared vertices are one node"
    expected = sum(polygon_area(rings) for g in geometries for rings in polygons_of(g))
    assert math.isclose(area, expected, rel_tol=1e-9)
    # Every ring edge is a mesh edge (these files have no vertex on another ring's edge).
    for geometry in geometries:
        for rings in polygons_of(geometry):
            for ring in rings:
                for a, b in zip(ring, ring[1:]):
                    if tuple(a) == tuple(b):
                        continue
                    edge = frozenset((keys[tuple(map(float, a))], keys[tuple(map(float, b))]))
                    assert edge in edges, (name, a, b)


@pytest.mark.parametrize("name", sorted(CROSSING_SOURCES))
def test_real_polygons_whose_rings_cross_are_refused_naming_the_feature(tmp_path, name):
    result = subprocess.run(
        [BINARY, "convert", os.path.join(CORPUS, "earcut", f"{name}.geojson"),
         tmp_path / "mesh.vtu", "--force"], capture_output=True, text=True)
    assert result.returncode != 0
    assert "panicked" not in result.stderr
    assert "feature 1 cannot be an element" in result.stderr, result.stderr
    assert CROSSING_SOURCES[name] in result.stderr, result.stderr


def test_each_triangle_carries_its_polygons_attributes(tmp_path):
    meshio = require_module("meshio")
    target = tmp_path / "mesh.vtu"
    convert(os.path.join(CORPUS, "earcut", "dude.geojson"), target)
    mesh = meshio.read(target)
    values = [array for array in mesh.cell_data["value"]]
    assert all((array == 7).all() for array in values)


def run_basin(*args):
    return subprocess.run([BINARY, "convert", *map(str, args), "--force"], capture_output=True,
                          text=True)


def test_triangulate_false_refuses_polygons_as_before(tmp_path):
    result = run_basin(os.path.join(CORPUS, "earcut", "dude.geojson"), tmp_path / "out.mesh",
                       "-w", "Triangulate=false")
    assert result.returncode != 0
    assert "feature 1 cannot be an element" in result.stderr
    assert "holes" in result.stderr


def test_self_intersecting_or_overlapping_rings_are_errors_naming_the_feature(tmp_path):
    bow_tie = [(0, 0), (4, 4), (4, 0), (2, -1), (0, 4), (0, 0)]
    # A hole starting inside the "C" and crossing its opening.
    overlapping = [NOTCHED, [(0.5, 0.5), (3.5, 0.5), (3.5, 2), (0.5, 2), (0.5, 0.5)]]
    for rings, expected in [([bow_tie], "crosses another edge"),
                            (overlapping, "crosses another edge")]:
        write_polygons(str(tmp_path / "bad"), [[square(10, 10, 1)], rings])
        result = run_basin(tmp_path / "bad.shp", tmp_path / "out.vtu")
        assert result.returncode != 0
        assert "panicked" not in result.stderr
        assert "feature 2 cannot be an element" in result.stderr, result.stderr
        assert expected in result.stderr, result.stderr
