"""Vector tiles of Basin read by independent decoders: the mapbox-vector-tile package and GDAL's
MVT driver (ogrinfo). Features must come back where they are on the map (to a tile unit), with
their attributes, and a DFSU mesh's elements with the values mikeio reads."""

import json
import math
import os
import re
import subprocess
import tempfile
import urllib.request
import uuid

import mapbox_vector_tile
import mikeio
import numpy as np
import pytest

from formats_support import ROOT

RADIUS = 6378137.0
HALF = math.pi * RADIUS
EXTENT = 4096


def mercator(lon, lat):
    return RADIUS * math.radians(lon), RADIUS * math.asinh(math.tan(math.radians(lat)))


def tile_of(lon, lat, z):
    x, y = mercator(lon, lat)
    span = 2 * HALF / 2**z
    return int((x + HALF) / span), int((HALF - y) / span)


def tile_centre(z, column, row):
    """Longitude and latitude of the centre of tile z/column/row."""
    span = 2 * HALF / 2**z
    x, y = -HALF + (column + 0.5) * span, HALF - (row + 0.5) * span
    return math.degrees(x / RADIUS), math.degrees(math.atan(math.sinh(y / RADIUS)))


def tile_units(lon, lat, z, column, row):
    """Where (lon, lat) falls in tile z/column/row, in tile units (y down)."""
    x, y = mercator(lon, lat)
    span = 2 * HALF / 2**z
    return (x - (-HALF + column * span)) / span * EXTENT, ((HALF - row * span) - y) / span * EXTENT


def upload(basin, project, name, content):
    boundary = uuid.uuid4().hex
    body = (
        f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n"
        f"Content-Type: application/octet-stream\r\n\r\n"
    ).encode() + content + f"\r\n--{boundary}--\r\n".encode()
    request = urllib.request.Request(
        f"{basin.address}/api/conversion/project/{project}/file/upload", data=body, method="POST",
        headers={"svc-open-api-key": basin.api_key,
                 "Content-Type": f"multipart/form-data; boundary={boundary}"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.load(response)["id"]


def vector_tile(basin, dataset, z, x, y):
    request = urllib.request.Request(
        f"{basin.address}/api/vectortiles/dataset/{dataset}/{z}/{x}/{y}.vector.pbf",
        headers={"svc-open-api-key": basin.api_key, "api-version": "1"})
    with urllib.request.urlopen(request, timeout=60) as response:
        assert response.headers["Content-Type"] == "application/vnd.mapbox-vector-tile"
        return response.read()


def ogr_features(tile, z, x, y):
    """The features GDAL's MVT driver reads from `tile` saved as z/x/y.pbf: (geometry WKT in
    EPSG:3857, attributes) per feature."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, str(z), str(x))
        os.makedirs(path)
        with open(os.path.join(path, f"{y}.pbf"), "wb") as out:
            out.write(tile)
        output = subprocess.run(
            ["ogrinfo", "-ro", "-al", "-oo", "CLIP=NO", os.path.join(path, f"{y}.pbf")],
            check=True, capture_output=True, text=True).stdout
    features = []
    for block in output.split("OGRFeature(")[1:]:
        attributes = dict(re.findall(r"^\s+(\w+) \(\w+\) = (.*)$", block, re.M))
        geometry = re.search(r"^\s+((?:MULTI)?(?:POINT|LINESTRING|POLYGON) .*)$", block, re.M)
        features.append((geometry.group(1) if geometry else None, attributes))
    return features


def numbers(wkt):
    return [float(value) for value in re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", wkt)]


@pytest.fixture(scope="module")
def project(basin):
    return basin.call("POST", "/api/metadata/project", {"name": "vector tiles"}, api_version="3")["id"]


def test_geojson_features_are_where_they_are_with_their_attributes(basin, project):
    z = 14
    x, y = tile_of(5.1, 52.09, z)
    lon, lat = tile_centre(z, x, y)
    square = [[lon - 0.005, lat - 0.003], [lon + 0.005, lat - 0.003], [lon + 0.005, lat + 0.003],
              [lon - 0.005, lat + 0.003], [lon - 0.005, lat - 0.003]]
    hole = [[lon - 0.002, lat - 0.001], [lon - 0.002, lat + 0.001], [lon + 0.002, lat + 0.001],
            [lon + 0.002, lat - 0.001], [lon - 0.002, lat - 0.001]]
    collection = {"type": "FeatureCollection", "features": [
        {"type": "Feature", "properties": {"name": "pond", "depth": 2.5, "count": 7, "open": True},
         "geometry": {"type": "Polygon", "coordinates": [square, hole]}},
        {"type": "Feature", "properties": {"name": "ditch", "depth": 0.5, "count": -1, "open": False},
         "geometry": {"type": "LineString", "coordinates": [[lon - 0.02, lat], [lon + 0.02, lat + 0.001]]}},
        {"type": "Feature", "properties": {"name": "gauge", "depth": None, "count": 0, "open": True},
         "geometry": {"type": "Point", "coordinates": [lon + 0.003, lat + 0.002]}},
    ]}
    dataset = upload(basin, project, "water.geojson", json.dumps(collection).encode())
    tile = vector_tile(basin, dataset, z, x, y)
    decoded = mapbox_vector_tile.decode(tile, default_options={"y_coord_down": True})
    assert list(decoded) == ["water"]
    layer = decoded["water"]
    assert layer["extent"] == EXTENT
    by_name = {feature["properties"]["name"]: feature for feature in layer["features"]}
    assert set(by_name) == {"pond", "ditch", "gauge"}
    assert by_name["pond"]["properties"] == {"name": "pond", "depth": 2.5, "count": 7, "open": True}
    assert "depth" not in by_name["gauge"]["properties"], "null attributes are left out"
    gauge = by_name["gauge"]["geometry"]
    assert gauge["type"] == "Point"
    expected = tile_units(lon + 0.003, lat + 0.002, z, x, y)
    assert abs(gauge["coordinates"][0] - expected[0]) <= 1 and abs(gauge["coordinates"][1] - expected[1]) <= 1
    pond = by_name["pond"]["geometry"]
    assert pond["type"] == "Polygon" and len(pond["coordinates"]) == 2
    corners = [tile_units(*corner, z, x, y) for corner in square[:4]]
    for corner in corners:
        assert any(abs(px - corner[0]) <= 1 and abs(py - corner[1]) <= 1
                   for px, py in pond["coordinates"][0]), corner

    # GDAL reads the same tile, placed in EPSG:3857 from its z/x/y name.
    features = ogr_features(tile, z, x, y)
    assert len(features) == 3
    span = 2 * HALF / 2**z / EXTENT
    for wkt, attributes in features:
        if attributes.get("name") == "gauge":
            px, py = numbers(wkt)[:2]
            ex, ey = mercator(lon + 0.003, lat + 0.002)
            assert abs(px - ex) <= span and abs(py - ey) <= span, (wkt, ex, ey)
        if attributes.get("name") == "pond":
            assert wkt.startswith("POLYGON") and wkt.count("(") == 3, wkt
            assert attributes["count"] == "7"


def test_mesh_elements_are_polygons_with_the_values_mikeio_reads(basin, project):
    path = os.path.join(ROOT, "tests", "corpus", "dfs-samples", "mesh2d_mixed.dfsu")
    with open(path, "rb") as handle:
        dataset = upload(basin, project, "mesh.dfsu", handle.read())
    data = mikeio.read(path)
    geometry = data.geometry
    lon, lat = _utm32_to_lonlat(*geometry.element_coordinates[0][:2])
    decoded_all = {}
    for z in (15, 16):
        x, y = tile_of(lon, lat, z)
        for dx in (-1, 0, 1):
            for dy in (-1, 0, 1):
                tile = vector_tile(basin, dataset, z, x + dx, y + dy)
                if not tile:
                    continue
                layer = mapbox_vector_tile.decode(tile)["mesh"]
                for feature in layer["features"]:
                    decoded_all[(z, feature["properties"]["elementId"])] = feature
    values = {item.name: item.to_numpy()[0] for item in data}
    ids = {element for (_, element) in decoded_all}
    assert len(ids) == geometry.n_elements
    for (_, element), feature in decoded_all.items():
        assert feature["geometry"]["type"] == "Polygon"
        for name, column in values.items():
            expected = column[element - 1] if 1 <= element <= len(column) else column[element]
            shown = feature["properties"].get(name)
            if np.isnan(expected):
                assert shown is None
            else:
                assert shown == pytest.approx(float(expected), rel=1e-6), (element, name)


def _utm32_to_lonlat(x, y):
    from pyproj import Transformer
    return Transformer.from_crs(32632, 4326, always_xy=True).transform(x, y)


def test_a_layered_mesh_shows_the_top_element_of_each_column(basin, project):
    path = os.path.join(ROOT, "tests", "corpus", "dfs-samples", "mesh3d_sigma.dfsu")
    with open(path, "rb") as handle:
        dataset = upload(basin, project, "layered.dfsu", handle.read())
    full = mikeio.read(path)
    top = full.geometry.top_elements
    temperature = full["Temperature"].to_numpy()[0]
    expected = {int(element) + 1: float(temperature[element]) for element in top}
    lon, lat = _utm32_to_lonlat(*full.geometry.element_coordinates[top[0]][:2])
    shown = {}
    z = 15
    x, y = tile_of(lon, lat, z)
    for dx in (-1, 0, 1):
        for dy in (-1, 0, 1):
            tile = vector_tile(basin, dataset, z, x + dx, y + dy)
            if tile:
                for feature in mapbox_vector_tile.decode(tile)["layered"]["features"]:
                    shown[feature["properties"]["elementId"]] = feature["properties"]["Temperature"]
    assert set(shown) == set(expected)
    for element, value in expected.items():
        assert shown[element] == pytest.approx(value, rel=1e-6), element
