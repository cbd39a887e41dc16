"""EDR through real clients, checked against independent references (docs/edr.md).

A running Basin holds files written by MIKE IO 3.1.0 (random DFSU meshes in UTM zone 32N, a
north-up DFS2 on the zone's central meridian and one east of it; fixed seeds), the team's DFS
samples and a hand-written ASCII grid (data without time). Everything goes over HTTP on
loopback, with the bootstrap API key or the BackOffice bearer token.

- OWSLib 0.35.0 (`owslib.ogcapi.edr.EnvironmentalDataRetrieval`) lists the collections, reads
  one, and runs position, area and cube queries with its own `query_data`, sending the key as
  a header (`headers=`) or a bearer token (`auth=` with an auth delegate). The answers equal
  what MIKE IO reads from the same file: `ds.sel(x=, y=)` for positions (float32 equality, in
  the file's EPSG system and in CRS84), `ds.sel(area=bbox)` and `ds.sel(area=polygon)` for
  cubes and areas (the same elements or cells, by centre, and the same values). OWSLib cannot
  send `f` or `statistics`, and sends its `parameter_names` as `parameter_names` rather than
  EDR's `parameter-name`: those go through requests.
- CoverageJSON: every kind of answer Basin writes (Coverage with a PointSeries or Point domain,
  CoverageCollection, Grid, MultiPointSeries, MultiPoint, PolygonSeries, Polygon,
  MultiPolygonSeries, MultiPolygon) validates with covjson-pydantic (KNMI's models), with the
  OGC's JSON Schema of CoverageJSON 1.0 (schemas/coveragejson.json, see schemas/README.md),
  and with the rules of the standard (OGC 21-069r2) neither checks: the axes each domain type
  allows, ranges whose axisNames and shape follow the domain, closed polygon rings,
  referencing for every coordinate.
- GeoJSON answers validate with geojson-pydantic and RFC 7946 (longitude and latitude, closed
  rings, the right-hand rule); CSV answers parse with Python's csv module, with the documented
  header, CRLF line ends and the CoverageJSON answer's values.
- Statistics (`statistics=min,max,mean,weighted-mean,count,p10,p50,p90`) equal NumPy over the
  elements whose centres the polygon holds (shapely, and MIKE IO's own polygon selection where
  it takes one), per step: min, max and count exactly, the mean to 1e-9 relative, the
  weighted mean (weights: MIKE IO's `get_element_area()`) and the percentiles
  (`numpy.percentile`, linear) within the differences the expected failures below describe.
- `datetime` intervals select the steps `ds.sel(time=slice(a, b))` selects.

Mismatches with MIKE IO, NumPy, the standards or docs/edr.md are kept as strict expected
failures, each saying what Basin answers and what it should.
"""

import csv
import io
import json
import os
import random
import re

import pytest

from formats_support import ROOT, require_module

np = require_module("numpy")
pd = require_module("pandas")
mikeio = require_module("mikeio")
pyproj = require_module("pyproj")
requests = require_module("requests")
shapely = require_module("shapely")
owslib_ogcapi = require_module("owslib.ogcapi")
owslib_edr = require_module("owslib.ogcapi.edr")
owslib_util = require_module("owslib.util")
covjson_coverage = require_module("covjson_pydantic.coverage")
covjson_domain = require_module("covjson_pydantic.domain")
geojson_pydantic = require_module("geojson_pydantic")
jsonschema = require_module("jsonschema")
pydantic = require_module("pydantic")

from shapely.geometry import Point, Polygon, box, shape as geometry_shape  # noqa: E402
from shapely.geometry.polygon import orient  # noqa: E402

SAMPLES = os.path.join(ROOT, "tests", "corpus", "dfs-samples")
SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "schemas", "coveragejson.json")
UTM32 = "EPSG:32632"
UTM32_URI = "http://www.opengis.net/def/crs/EPSG/0/32632"
CRS84_URI = "http://www.opengis.net/def/crs/OGC/1.3/CRS84"
COVJSON = "application/prs.coverage+json"
ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")
STATISTICS = ["min", "max", "mean", "weighted-mean", "count", "p10", "p50", "p90"]
TO_LONLAT = pyproj.Transformer.from_crs(UTM32, "OGC:CRS84", always_xy=True)
NODATA = -9999.0


# Files -----------------------------------------------------------------------------------------

def utm_mesh(seed, nx, ny, size):
    """A perturbed nx x ny grid of nodes in UTM 32N whose cells are quads or two triangles,
    about a tenth left out: convex elements that do not overlap."""
    rng = random.Random(seed)
    x0, y0 = 500_000.0 + rng.uniform(0, 2000), 6_100_000.0 + rng.uniform(0, 2000)
    nodes = []
    for j in range(ny):
        for i in range(nx):
            inner = 0 < i < nx - 1 and 0 < j < ny - 1
            jx, jy = (rng.uniform(-0.2, 0.2), rng.uniform(-0.2, 0.2)) if inner else (0.0, 0.0)
            nodes.append((x0 + (i + jx) * size, y0 + (j + jy) * size, -5.0))
    elements = []
    for j in range(ny - 1):
        for i in range(nx - 1):
            a, b = j * nx + i, j * nx + i + 1
            c, d = b + nx, a + nx
            roll = rng.random()
            if roll < 0.1:
                continue
            if roll < 0.5:
                elements.append([a, b, c, d])
            elif roll < 0.75:
                elements.extend([[a, b, c], [a, c, d]])
            else:
                elements.extend([[a, b, d], [b, c, d]])
    used = sorted({n for e in elements for n in e})
    number = {n: k for k, n in enumerate(used)}
    nodes = np.array([nodes[n] for n in used])
    elements = [np.array([number[n] for n in e]) for e in elements]
    return mikeio.spatial.GeometryFM2D(node_coordinates=nodes, element_table=elements,
                                       codes=np.zeros(len(nodes), int), projection="UTM-32")


def random_values(rng, steps, count, missing=0.1):
    return np.array([[rng.uniform(-50, 50) if rng.random() > missing else np.nan
                      for _ in range(count)] for _ in range(steps)], np.float32)


def write_dfsu(path, seed, nx, ny, size, time):
    """A random UTM mesh with two items (10% missing values) over `time`."""
    rng = random.Random(seed)
    geometry = utm_mesh(seed, nx, ny, size)
    arrays = [
        mikeio.DataArray(data=random_values(rng, len(time), geometry.n_elements), time=time,
                         geometry=geometry, item=mikeio.ItemInfo(name, kind))
        for name, kind in [("Surface elevation", mikeio.EUMType.Surface_Elevation),
                           ("Current speed", mikeio.EUMType.Current_Speed)]
    ]
    mikeio.Dataset(arrays).to_dfs(str(path))
    return path


def write_dfs2(path, seed, origin=(500_000.0, 6_101_000.0)):
    """A north-up DFS2 in UTM 32N (dx != dy) with two items over four hourly steps. MIKE
    stores the origin in longitude and latitude and the orientation from true north: on the
    zone's central meridian (x = 500000) grid north is true north."""
    rng = random.Random(seed)
    geometry = mikeio.Grid2D(nx=9, ny=7, dx=50.0, dy=75.0, origin=origin, projection="UTM-32")
    time = pd.date_range("2022-06-01", periods=4, freq="1h")
    arrays = [
        mikeio.DataArray(data=random_values(rng, 4, 63, 0.05).reshape(4, 7, 9), time=time,
                         geometry=geometry, item=mikeio.ItemInfo(name, kind))
        for name, kind in [("H", mikeio.EUMType.Water_Level),
                           ("U", mikeio.EUMType.u_velocity_component)]
    ]
    mikeio.Dataset(arrays).to_dfs(str(path))
    return path


def write_ascii_grid(path):
    """A 5 x 4 ASCII grid without time or coordinate system, one cell missing."""
    values = np.arange(20, dtype=float).reshape(4, 5) * 1.5 - 7.0
    values[1, 2] = NODATA
    lines = ["ncols 5", "nrows 4", "xllcorner 1000", "yllcorner 2000", "cellsize 10",
             f"NODATA_value {NODATA}"]
    lines += [" ".join(f"{v:g}" for v in row) for row in values]
    path.write_text("\n".join(lines) + "\n")
    return path, values[::-1]  # row 0 of the returned array is the southernmost


def upload(basin, project, path):
    with open(path, "rb") as file:
        response = requests.post(
            f"{basin.address}/api/conversion/project/{project}/file/upload",
            headers={"svc-open-api-key": basin.api_key},
            files={"file": (os.path.basename(path), file.read())}, timeout=120,
        )
    assert response.status_code == 201, response.text
    return response.json()["id"]


class Upload:
    """An uploaded file: its dataset id, path and (for DFS) MIKE IO's reading of it."""

    def __init__(self, dataset, path, ds=None):
        self.id, self.path, self.ds = dataset, path, ds


@pytest.fixture(scope="module")
def datasets(basin, tmp_path_factory):
    directory = tmp_path_factory.mktemp("edr-clients")
    equidistant = pd.date_range("2021-05-01", periods=6, freq="15min")
    irregular = pd.DatetimeIndex(["2021-05-01T00:00:00", "2021-05-01T00:10:00",
                                  "2021-05-01T01:00:00", "2021-05-01T01:00:30",
                                  "2021-05-02T00:00:00"])
    files = {
        "mesh": write_dfsu(directory / "mesh.dfsu", 11, 10, 8, 40.0, equidistant),
        "mesh irregular": write_dfsu(directory / "irregular.dfsu", 12, 6, 5, 25.0, irregular),
        "grid": write_dfs2(directory / "grid.dfs2", 13),
        "grid east": write_dfs2(directory / "grid_east.dfs2", 14, (601_000.0, 6_101_000.0)),
        "sample mesh": os.path.join(SAMPLES, "mesh2d_mixed.dfsu"),
        "sample grid": os.path.join(SAMPLES, "grid_utm32.dfs2"),
        "sample rotated": os.path.join(SAMPLES, "grid_utm32_rotated.dfs2"),
        "sample .mesh": os.path.join(SAMPLES, "mesh2d_mixed.mesh"),
    }
    for seed in (21, 22, 23):
        files[f"stats {seed}"] = write_dfsu(directory / f"stats_{seed}.dfsu", seed,
                                            random.Random(seed).randint(8, 16),
                                            random.Random(-seed).randint(8, 16), 30.0,
                                            equidistant)
    project = basin.call("POST", "/api/metadata/project", {"name": "edr clients"})["id"]
    found = {"project": project}
    for name, path in files.items():
        ds = mikeio.read(str(path)) if str(path).endswith((".dfsu", ".dfs2")) else None
        found[name] = Upload(upload(basin, project, path), path, ds)
    asc, values = write_ascii_grid(directory / "levels.asc")
    found["ascii"] = Upload(upload(basin, project, asc), asc)
    found["ascii"].values = values
    return found


# HTTP ------------------------------------------------------------------------------------------

def query(basin, dataset, kind, **params):
    """A query through requests (what OWSLib cannot send); `parameter_name` is sent as EDR's
    `parameter-name`."""
    if "parameter_name" in params:
        params["parameter-name"] = params.pop("parameter_name")
    return requests.get(f"{basin.address}/api/edr/collections/{dataset}/{kind}", params=params,
                        headers={"svc-open-api-key": basin.api_key}, timeout=60)


def answer(basin, dataset, kind, **params):
    response = query(basin, dataset, kind, **params)
    assert response.status_code == 200, (kind, params, response.status_code, response.text)
    return response


@pytest.fixture(scope="module", autouse=True)
def owslib_headers():
    """OWSLib 0.35.0 updates its module-wide REQUEST_HEADERS with the headers a client is made
    with (so the key would go along with every later OWSLib request of the process): put them
    back after this module."""
    saved = dict(owslib_ogcapi.REQUEST_HEADERS)
    yield
    owslib_ogcapi.REQUEST_HEADERS.clear()
    owslib_ogcapi.REQUEST_HEADERS.update(saved)


@pytest.fixture(scope="module")
def client(basin, datasets):
    return owslib_edr.EnvironmentalDataRetrieval(
        f"{basin.address}/api/edr", headers={"svc-open-api-key": basin.api_key})


class BearerAuth(requests.auth.AuthBase):
    """A bearer token for OWSLib's `auth=Authentication(auth_delegate=...)`."""

    def __init__(self, token):
        self.token = token

    def __call__(self, request):
        request.headers["Authorization"] = f"Bearer {self.token}"
        return request


# Reading answers -------------------------------------------------------------------------------

def as_float32(values):
    return np.array([np.nan if v is None else v for v in values], np.float64).astype(np.float32)


def range_array(coverage, name):
    """A range's values as float64 with NaN for null, shaped by its shape."""
    r = coverage["ranges"][name]
    values = np.array([np.nan if v is None else v for v in r["values"]], np.float64)
    return values.reshape(r.get("shape") or ())


def times(axes):
    stamps = axes["t"]["values"]
    assert all(ISO_UTC.match(s) for s in stamps), stamps[:3]
    return pd.DatetimeIndex([pd.Timestamp(s[:-1]) for s in stamps])


def wkt_point(x, y):
    return f"POINT({x!r} {y!r})"


def wkt_multipoint(points):
    return "MULTIPOINT(" + ", ".join(f"({x!r} {y!r})" for x, y in points) + ")"


def wkt_ring(ring):
    return "(" + ", ".join(f"{x!r} {y!r}" for x, y in ring) + ")"


def wkt_polygon(polygon):
    rings = [polygon.exterior.coords] + [hole.coords for hole in polygon.interiors]
    return "POLYGON(" + ", ".join(wkt_ring(r) for r in rings) + ")"


def wkt_multipolygon(polygons):
    return "MULTIPOLYGON(" + ", ".join(wkt_polygon(p)[len("POLYGON"):] for p in polygons) + ")"


# What MIKE IO reads ----------------------------------------------------------------------------

def steps_of(array, steps):
    """A DataArray's values as (steps, places): MIKE IO drops the time axis of a single step
    and the space axis of a single position."""
    return np.asarray(array.to_numpy(), np.float32).reshape(steps, -1)


def inside_centres(ds, rng, count):
    """Element centres that MIKE IO's find_index places in their own element (the centre of a
    convex element is inside it, away from its edges)."""
    geometry = ds.geometry
    centres = geometry.element_coordinates[:, :2]
    chosen = []
    for element in rng.sample(range(geometry.n_elements), min(count, geometry.n_elements)):
        x, y = map(float, centres[element])
        if int(geometry.find_index(x=x, y=y)[0]) == element:
            chosen.append((x, y))
    assert chosen
    return chosen


def away_from(shape, centres, margin):
    """Whether no centre lies within `margin` of the boundary of `shape`."""
    boundary = shape.boundary
    return all(boundary.distance(Point(c)) > margin for c in centres)


def random_box(ds, rng, size):
    """A box over part of a mesh with no element centre near its edges, holding two or more."""
    centres = ds.geometry.element_coordinates[:, :2]
    (x0, y0), (x1, y1) = centres.min(axis=0), centres.max(axis=0)
    for _ in range(500):
        xs = sorted(rng.uniform(x0, x1) for _ in range(2))
        ys = sorted(rng.uniform(y0, y1) for _ in range(2))
        shape = box(xs[0], ys[0], xs[1], ys[1])
        held = [c for c in centres if shape.covers(Point(c))]
        if len(held) >= 2 and away_from(shape, centres, size * 1e-3):
            return [xs[0], ys[0], xs[1], ys[1]]
    raise AssertionError("no box found")


def random_polygon(ds, rng, size, hole=False, scale=1.0):
    """A star-shaped counter-clockwise polygon over part of a mesh (with a hole when asked),
    no element centre near its boundary, holding two or more centres."""
    centres = ds.geometry.element_coordinates[:, :2]
    (x0, y0), (x1, y1) = centres.min(axis=0), centres.max(axis=0)
    for _ in range(500):
        cx, cy = rng.uniform(x0, x1), rng.uniform(y0, y1)
        radius = scale * rng.uniform(0.25, 0.6) * min(x1 - x0, y1 - y0)
        corners = rng.randint(5, 9)
        angles = sorted(rng.uniform(0, 2 * np.pi) for _ in range(corners))
        ring = [(cx + radius * rng.uniform(0.5, 1.0) * np.cos(a),
                 cy + radius * rng.uniform(0.5, 1.0) * np.sin(a)) for a in angles]
        holes = []
        if hole:
            r = radius * 0.25
            holes = [[(cx + r * np.cos(a), cy + r * np.sin(a))
                      for a in np.linspace(2 * np.pi, 0, 7)[:-1]]]
        shape = Polygon(ring, holes)
        held = [c for c in centres if shape.covers(Point(c))]
        if shape.is_valid and len(held) >= 2 and away_from(shape, centres, size * 1e-3):
            return orient(shape, 1.0)
    raise AssertionError("no polygon found")


def to_lonlat(shape):
    """A shapely geometry in UTM 32N carried to CRS84 (pyproj), vertex by vertex."""
    return shapely.transform(shape, lambda x, y: TO_LONLAT.transform(x, y), interleaved=False)


def held_elements(ds, shape):
    centres = ds.geometry.element_coordinates[:, :2]
    return np.array([k for k, c in enumerate(centres) if shape.covers(Point(c))])


# OWSLib ----------------------------------------------------------------------------------------

def test_owslib_reads_the_landing_page(basin, client):
    relations = {link["rel"] for link in client.links}
    assert {"service-desc", "conformance", "data"} <= relations, client.response


def test_owslib_lists_the_collections_and_reads_one(basin, datasets, client):
    conformance = client.conformance()["conformsTo"]
    assert "http://www.opengis.net/spec/ogcapi-edr-1/1.1/conf/core" in conformance
    assert "http://www.opengis.net/spec/ogcapi-edr-1/1.1/conf/covjson" in conformance
    uploads = {name: u for name, u in datasets.items() if isinstance(u, Upload)}
    listed = client.collections()["collections"]
    assert {u.id for u in uploads.values()} <= {c["id"] for c in listed}
    # data() keeps the collections with a link of relation "data" (the queries).
    assert {u.id for u in uploads.values()} <= set(client.data())
    for name in ("mesh", "grid", "mesh irregular"):
        upload_, ds = uploads[name], uploads[name].ds
        collection = client.collection(upload_.id)
        assert collection["id"] == upload_.id
        assert collection["title"] == os.path.basename(upload_.path)
        assert set(collection["parameter_names"]) == {item.name for item in ds.items}
        unit = collection["parameter_names"][ds.items[0].name]["unit"]
        assert unit == {"label": {"en": "meter"}, "symbol": "m"}
        assert set(collection["data_queries"]) == {
        "position", "area", "cube", "radius", "corridor", "trajectory"}
        assert collection["crs"] == [CRS84_URI, UTM32_URI]
        interval = collection["extent"]["temporal"]["interval"][0]
        assert interval == [ds.time[0].isoformat() + "Z", ds.time[-1].isoformat() + "Z"]
        native = collection["extent"]["spatial"]["native"]["bbox"][0]
        if name == "grid":
            g = ds.geometry
            expected = [g.x[0] - g.dx / 2, g.y[0] - g.dy / 2, g.x[-1] + g.dx / 2,
                        g.y[-1] + g.dy / 2]
        else:
            nodes = ds.geometry.node_coordinates
            expected = [*nodes[:, :2].min(axis=0), *nodes[:, :2].max(axis=0)]
        assert np.allclose(native, expected, rtol=0, atol=1e-6), (name, native, expected)


def check_position(coverage, ds, x, y, expected_x=None):
    assert coverage["type"] == "Coverage"
    assert coverage["domain"]["domainType"] == "PointSeries"
    axes = coverage["domain"]["axes"]
    assert axes["x"]["values"] == [expected_x if expected_x is not None else x]
    assert list(times(axes)) == list(ds.time)
    at = ds.sel(x=x, y=y)
    for item in ds.items:
        got = as_float32(coverage["ranges"][item.name]["values"])
        want = steps_of(at[item.name], ds.n_timesteps).reshape(-1)
        assert np.array_equal(got, want, equal_nan=True), (item.name, x, y, got, want)


@pytest.mark.parametrize("name", ["mesh", "grid", "sample mesh", "sample grid"])
def test_owslib_position_answers_mikeio_sel(datasets, client, name):
    """POINT and MULTIPOINT in EPSG:32632, and POINT in CRS84 (OWSLib's default: no crs),
    against `ds.sel(x=, y=)` at element centres or at points inside grid cells."""
    upload_ = datasets[name]
    ds = upload_.ds
    rng = random.Random(name)
    if isinstance(ds.geometry, mikeio.Grid2D):
        g = ds.geometry
        points = [(float(g.x[i] + rng.uniform(-0.3, 0.3) * g.dx),
                   float(g.y[j] + rng.uniform(-0.3, 0.3) * g.dy))
                  for i, j in ((rng.randrange(g.nx), rng.randrange(g.ny)) for _ in range(8))]
    else:
        points = inside_centres(ds, rng, 8)
    for x, y in points[:3]:
        coverage = client.query_data(upload_.id, "position", coords=wkt_point(x, y), crs=UTM32)
        check_position(coverage, ds, x, y)
        lon, lat = TO_LONLAT.transform(x, y)
        coverage = client.query_data(upload_.id, "position", coords=wkt_point(lon, lat))
        assert coverage["domain"]["referencing"][0]["system"]["id"] == CRS84_URI
        assert coverage["domain"]["axes"]["y"]["values"] == [lat]
        check_position(coverage, ds, x, y, expected_x=lon)
    collection = client.query_data(upload_.id, "position", coords=wkt_multipoint(points),
                                   crs=UTM32)
    assert collection["type"] == "CoverageCollection"
    assert len(collection["coverages"]) == len(points)
    for (x, y), coverage in zip(points, collection["coverages"]):
        check_position(coverage, ds, x, y)


def test_owslib_no_data_is_an_empty_answer(datasets, client):
    """204 No Content for a point outside the data: OWSLib gives an empty dict."""
    assert client.query_data(datasets["mesh"].id, "position", coords=wkt_point(0.0, 0.0),
                             crs=UTM32) == {}


def test_owslib_parameter_names_is_not_edr_parameter_name(datasets, client):
    """OWSLib 0.35.0 sends `parameter_names=` (EDR's name is `parameter-name`); Basin, like
    most EDR servers, ignores query parameters it does not know, so every parameter comes
    back. The right name, sent with requests, narrows the answer."""
    upload_ = datasets["mesh"]
    x, y = inside_centres(upload_.ds, random.Random(1), 1)[0]
    coverage = client.query_data(upload_.id, "position", coords=wkt_point(x, y), crs=UTM32,
                                 parameter_names=["Current speed"])
    assert "parameter_names=Current+speed" in client.request
    assert list(coverage["ranges"]) == ["Surface elevation", "Current speed"]


def check_cells(coverage, ds, elements):
    """A MultiPointSeries of `elements` of mesh `ds`: their centres in the file's order and
    their values."""
    assert coverage["domain"]["domainType"] == "MultiPointSeries"
    axes = coverage["domain"]["axes"]
    centres = np.array(axes["composite"]["values"], np.float64)
    expected = ds.geometry.element_coordinates[elements, :2]
    assert centres.shape == expected.shape, (centres.shape, expected.shape)
    assert np.allclose(centres, expected, rtol=0, atol=1e-6)
    assert list(times(axes)) == list(ds.time)
    for item in ds.items:
        got = range_array(coverage, item.name).astype(np.float32)
        want = steps_of(ds[item.name], ds.n_timesteps)[:, elements]
        assert np.array_equal(got, want, equal_nan=True), item.name


@pytest.mark.parametrize("name", ["mesh", "stats 21"])
def test_owslib_cube_on_a_mesh_answers_mikeio_area_selection(datasets, client, name):
    """A bbox in EPSG:32632 holds the elements `ds.sel(area=bbox)` selects (centres inside
    or on the box), with their values."""
    ds = datasets[name].ds
    rng = random.Random(name)
    for _ in range(3):
        bbox = random_box(ds, rng, 30.0)
        coverage = client.query_data(datasets[name].id, "cube", bbox=bbox, crs=UTM32)
        selected = ds.sel(area=bbox)
        centres = selected.geometry.element_coordinates[:, :2]
        all_centres = ds.geometry.element_coordinates[:, :2]
        elements = np.array([int(np.flatnonzero((all_centres == c).all(axis=1))[0])
                             for c in centres])
        assert np.array_equal(elements, np.sort(elements))
        check_cells(coverage, ds, elements)


@pytest.mark.parametrize("name", ["mesh", "stats 22"])
def test_owslib_area_on_a_mesh_answers_mikeio_polygon_selection(datasets, client, name):
    """A POLYGON in EPSG:32632 holds the elements whose centres MIKE IO's `sel(area=polygon)`
    (matplotlib's point-in-polygon) selects, and shapely agrees."""
    ds = datasets[name].ds
    rng = random.Random(name)
    for _ in range(3):
        polygon = random_polygon(ds, rng, 30.0)
        coverage = client.query_data(datasets[name].id, "area", coords=wkt_polygon(polygon),
                                     crs=UTM32)
        elements = held_elements(ds, polygon)
        mikeio_elements = ds.geometry._elements_in_area(list(polygon.exterior.coords)[:-1])
        assert np.array_equal(elements, mikeio_elements)
        selected = ds.sel(area=list(polygon.exterior.coords)[:-1])
        assert selected.geometry.n_elements == len(elements)
        check_cells(coverage, ds, elements)


def test_owslib_cube_on_a_grid_answers_mikeio_area_selection(datasets, client):
    """A bbox in EPSG:32632 over the north-up DFS2 is a Grid of the cells `ds.sel(area=bbox)`
    selects (centres inside or on the box): the same centres (MIKE IO rounds the origin it
    projects from the file's longitude and latitude to 1e-6 m) and values."""
    upload_ = datasets["grid"]
    ds = upload_.ds
    g = ds.geometry
    rng = random.Random(5)
    for _ in range(4):
        i0, i1 = sorted(rng.sample(range(g.nx), 2))
        j0, j1 = sorted(rng.sample(range(g.ny), 2))
        bbox = [float(g.x[i0] - 0.4 * g.dx), float(g.y[j0] - 0.1 * g.dy),
                float(g.x[i1] + 0.2 * g.dx), float(g.y[j1] + 0.3 * g.dy)]
        coverage = client.query_data(upload_.id, "cube", bbox=bbox, crs=UTM32)
        assert coverage["domain"]["domainType"] == "Grid"
        axes = coverage["domain"]["axes"]
        selected = ds.sel(area=bbox)
        xs, ys = np.array(axes["x"]["values"]), np.array(axes["y"]["values"])
        assert np.allclose(np.sort(xs), selected.geometry.x, rtol=0, atol=1e-6)
        assert np.allclose(np.sort(ys), selected.geometry.y, rtol=0, atol=1e-6)
        assert coverage["domain"]["referencing"][0]["system"]["id"] == UTM32_URI
        for item in ds.items:
            got = range_array(coverage, item.name)  # t, y, x as the answer orders them
            got = got[:, np.argsort(ys)][:, :, np.argsort(xs)].astype(np.float32)
            want = np.asarray(selected[item.name].to_numpy(), np.float32)
            assert np.array_equal(got, want, equal_nan=True), item.name


def test_owslib_area_on_a_grid_is_the_window_of_the_held_cells(datasets, client):
    """A POLYGON in EPSG:32632 over the north-up DFS2: a Grid over the rows and columns of the
    cells whose centres it holds (shapely on MIKE IO's cell centres), their values, null for
    the window's other cells."""
    upload_ = datasets["grid"]
    ds = upload_.ds
    g = ds.geometry
    xx, yy = np.meshgrid(g.x, g.y)
    centres = np.column_stack([xx.ravel(), yy.ravel()])
    rng = random.Random(6)
    for _ in range(3):
        while True:
            cx, cy = rng.uniform(g.x[0], g.x[-1]), rng.uniform(g.y[0], g.y[-1])
            radius = rng.uniform(1.5, 3.0) * g.dy
            ring = [(cx + radius * np.cos(a), cy + radius * np.sin(a) * 0.8)
                    for a in np.linspace(0, 2 * np.pi, 8)[:-1]]
            polygon = orient(Polygon(ring), 1.0)
            if away_from(polygon, centres, 1e-3 * g.dx):
                break
        held = np.array([polygon.covers(Point(c)) for c in centres]).reshape(g.ny, g.nx)
        rows, columns = np.flatnonzero(held.any(axis=1)), np.flatnonzero(held.any(axis=0))
        window = (slice(rows[0], rows[-1] + 1), slice(columns[0], columns[-1] + 1))
        coverage = client.query_data(upload_.id, "area", coords=wkt_polygon(polygon), crs=UTM32)
        assert coverage["domain"]["domainType"] == "Grid"
        axes = coverage["domain"]["axes"]
        xs, ys = np.array(axes["x"]["values"]), np.array(axes["y"]["values"])
        assert np.allclose(np.sort(xs), g.x[window[1]], rtol=0, atol=1e-6)
        assert np.allclose(np.sort(ys), g.y[window[0]], rtol=0, atol=1e-6)
        for item in ds.items:
            got = range_array(coverage, item.name)
            got = got[:, np.argsort(ys)][:, :, np.argsort(xs)].astype(np.float32)
            values = np.asarray(ds[item.name].to_numpy(), np.float32)
            want = np.where(held, values, np.nan)[:, window[0], window[1]]
            assert np.array_equal(got, want, equal_nan=True), item.name


def test_owslib_cube_on_a_grid_off_the_central_meridian_is_a_grid(datasets, client):
    upload_ = datasets["grid east"]
    g = upload_.ds.geometry
    assert g.orientation == 0.0
    bbox = [float(g.x[1]), float(g.y[1]), float(g.x[5]), float(g.y[4])]
    coverage = client.query_data(upload_.id, "cube", bbox=bbox, crs=UTM32)
    assert coverage["domain"]["domainType"] == "Grid"


def test_owslib_sends_a_bearer_token_through_its_auth_delegate(basin, datasets):
    """OWSLib's `auth=Authentication(auth_delegate=...)` takes any requests authentication: a
    bearer token (the BackOffice token) reads the same answers as the key; no credentials is
    refused (OWSLib raises on the 401)."""
    upload_ = datasets["grid"]
    auth = owslib_util.Authentication(auth_delegate=BearerAuth(basin.back_office_token))
    saved = dict(owslib_ogcapi.REQUEST_HEADERS)
    owslib_ogcapi.REQUEST_HEADERS.pop("svc-open-api-key", None)
    try:
        with_token = owslib_edr.EnvironmentalDataRetrieval(f"{basin.address}/api/edr",
                                                           auth=auth)
        g = upload_.ds.geometry
        coords = wkt_point(float(g.x[2]), float(g.y[3]))
        got = with_token.query_data(upload_.id, "position", coords=coords, crs=UTM32)
        assert got == query(basin, upload_.id, "position", coords=coords, crs=UTM32).json()
        anonymous = owslib_edr.EnvironmentalDataRetrieval(f"{basin.address}/api/edr")
        with pytest.raises(RuntimeError, match="credentials|svc-open-api-key"):
            anonymous.query_data(upload_.id, "position", coords=coords, crs=UTM32)
    finally:
        owslib_ogcapi.REQUEST_HEADERS.clear()
        owslib_ogcapi.REQUEST_HEADERS.update(saved)


# datetime --------------------------------------------------------------------------------------

def intervals(time):
    """`datetime` values and the pandas slice each should select, for a time axis."""
    t = list(time)
    gap = (t[2] - t[1]) / 2
    z = lambda stamp: stamp.isoformat() + "Z"  # noqa: E731
    plus_one = lambda stamp: (stamp + pd.Timedelta(hours=1)).isoformat() + "+01:00"  # noqa: E731
    return [
        (f"{z(t[1])}/{z(t[3])}", slice(t[1], t[3])),
        (f"{z(t[1] + gap)}/{z(t[-2] + gap)}", slice(t[1] + gap, t[-2] + gap)),
        (f"../{z(t[2])}", slice(None, t[2])),
        (f"{z(t[-2])}/..", slice(t[-2], None)),
        (f"{plus_one(t[0])}/{plus_one(t[1])}", slice(t[0], t[1])),
        (f"{z(t[0] - pd.Timedelta(days=1))}/{z(t[-1] + pd.Timedelta(days=1))}", slice(None, None)),
        (z(t[2]), slice(t[2], t[2])),
        (plus_one(t[-1]), slice(t[-1], t[-1])),
    ]


@pytest.mark.parametrize("name", ["mesh", "mesh irregular", "grid"])
def test_datetime_selects_the_steps_mikeio_time_slices_select(basin, datasets, client, name):
    """Intervals (both ends included, open ends, offsets) select `ds.sel(time=slice(a, b))`'s
    steps; an instant between steps, or an interval between two steps, is 204."""
    upload_ = datasets[name]
    ds = upload_.ds
    if isinstance(ds.geometry, mikeio.Grid2D):
        x, y = float(ds.geometry.x[1]), float(ds.geometry.y[1])
    else:
        x, y = inside_centres(ds, random.Random(3), 1)[0]
    at = ds.sel(x=x, y=y)
    for value, selection in intervals(ds.time):
        coverage = client.query_data(upload_.id, "position", coords=wkt_point(x, y), crs=UTM32,
                                     datetime_=value)
        expected = at.sel(time=selection)
        expected_time = pd.DatetimeIndex(expected.time)
        assert list(times(coverage["domain"]["axes"])) == list(expected_time), value
        for item in ds.items:
            got = as_float32(coverage["ranges"][item.name]["values"])
            want = steps_of(expected[item.name], len(expected_time)).reshape(-1)
            assert np.array_equal(got, want, equal_nan=True), (value, item.name)
    t = list(ds.time)
    between = t[1] + (t[2] - t[1]) / 2
    for value in [between.isoformat() + "Z",
                  f"{(between).isoformat()}Z/{(between + pd.Timedelta(seconds=1)).isoformat()}Z"]:
        response = query(basin, upload_.id, "position", coords=wkt_point(x, y), crs=UTM32,
                         datetime=value)
        assert response.status_code == 204, (value, response.status_code, response.text)
        assert response.content == b""


# Statistics ------------------------------------------------------------------------------------

def expected_statistics(values, weights):
    """NumPy's statistics of one step's values over the held elements (NaN is no value)."""
    valid = ~np.isnan(values)
    v, w = values[valid], weights[valid]
    if len(v) == 0:
        return {s: (0.0 if s == "count" else np.nan) for s in STATISTICS}
    return {
        "min": float(v.min()), "max": float(v.max()), "mean": float(np.mean(v)),
        "weighted-mean": float(np.sum(v * w) / np.sum(w)), "count": float(len(v)),
        "scale": float(np.abs(v).max()),
        **{f"p{q}": float(np.percentile(v, q)) for q in (10, 50, 90)},
    }


# Relative tolerances of the statistics: exact unless named.
TOLERANCES = {"mean": 1e-9, "weighted-mean": 1e-9}


def check_statistics(got, want, label, tolerances):
    for statistic in STATISTICS:
        a, b = got[statistic], want[statistic]
        tolerance = tolerances.get(statistic, 0.0)
        if np.isnan(b):
            assert np.isnan(a), (label, statistic, a)
        elif tolerance:
            # Relative to the largest value: a mean near 0 of values of both signs is as
            # precise as its terms, not as its own size.
            assert abs(a - b) <= tolerance * max(abs(b), want["scale"]), (label, statistic, a, b)
        else:
            assert a == b, (label, statistic, a, b)


def compare_statistics(basin, datasets, seed, tolerances):
    """`statistics` of a POLYGON (with a hole for one seed) and of a two-polygon MULTIPOLYGON
    per step against NumPy over the element centres shapely finds in each polygon; returns
    how many values were compared."""
    upload_ = datasets[f"stats {seed}"]
    ds = upload_.ds
    rng = random.Random(seed)
    areas = ds.geometry.get_element_area()
    polygons = [random_polygon(ds, rng, 30.0, hole=(seed == 22)),
                random_polygon(ds, rng, 30.0, scale=0.5)]
    data = {item.name: steps_of(ds[item.name], ds.n_timesteps).astype(np.float64)
            for item in ds.items}
    compared = 0
    for coords, shapes in [(wkt_polygon(polygons[0]), polygons[:1]),
                           (wkt_multipolygon(polygons), polygons)]:
        coverage = answer(basin, upload_.id, "area", coords=coords, crs=UTM32,
                          statistics=",".join(STATISTICS)).json()
        multiple = len(shapes) > 1
        assert coverage["domain"]["domainType"] == (
            "MultiPolygonSeries" if multiple else "PolygonSeries")
        held = [held_elements(ds, shape) for shape in shapes]
        assert coverage["basin:cells"] == [len(h) for h in held]
        assert list(times(coverage["domain"]["axes"])) == list(ds.time)
        for item in ds.items:
            ranges = {statistic: range_array(coverage, f"{item.name}:{statistic}")
                      for statistic in STATISTICS}
            for values in ranges.values():
                assert values.shape == ((ds.n_timesteps, len(shapes)) if multiple
                                        else (ds.n_timesteps,))
            for step in range(ds.n_timesteps):
                for index, elements in enumerate(held):
                    want = expected_statistics(data[item.name][step, elements], areas[elements])
                    got = {statistic: float(values[step, index] if multiple else values[step])
                           for statistic, values in ranges.items()}
                    check_statistics(got, want, (seed, item.name, step, index), tolerances)
                    compared += len(STATISTICS)
    return compared


@pytest.mark.parametrize("seed", [21, 22, 23])
def test_area_statistics_equal_numpy_over_the_held_elements(basin, datasets, seed):
    """min, max and count exactly, the mean to 1e-9 relative; here the percentiles (p10, p50,
    p90 against `numpy.percentile`, linear) to 1e-15 relative and the weighted mean (weights:
    MIKE IO's element areas, square metres in UTM, the map units) to 1e-5: the expected
    failures below hold them to exactly and to 1e-9."""
    tolerances = {**TOLERANCES, "weighted-mean": 1e-5, "p10": 1e-15, "p50": 1e-15, "p90": 1e-15}
    assert compare_statistics(basin, datasets, seed, tolerances) > 0


@pytest.mark.parametrize("seed", [21, 22, 23])
def test_area_weighted_mean_equals_numpy_to_1e_9(basin, datasets, seed):
    compare_statistics(basin, datasets, seed, {**TOLERANCES, "p10": 1e-15, "p50": 1e-15,
                                               "p90": 1e-15})


@pytest.mark.parametrize("seed", [22, 23])
def test_area_percentiles_equal_numpy_exactly(basin, datasets, seed):
    compare_statistics(basin, datasets, seed, {**TOLERANCES, "weighted-mean": 1e-5})


def test_statistics_of_a_polygon_with_no_value_are_null_and_count_zero(basin, datasets):
    """A polygon whose elements hold no value at a step: null statistics, count 0."""
    ds = datasets["stats 23"].ds
    polygon = random_polygon(ds, random.Random(7), 30.0)
    elements = held_elements(ds, polygon)
    values = steps_of(ds["Surface elevation"], ds.n_timesteps)
    empty = [step for step in range(ds.n_timesteps) if np.isnan(values[step, elements]).all()]
    coverage = answer(basin, datasets["stats 23"].id, "area", coords=wkt_polygon(polygon),
                      crs=UTM32, statistics="mean,count",
                      parameter_name="Surface elevation").json()
    counts = range_array(coverage, "Surface elevation:count")
    means = range_array(coverage, "Surface elevation:mean")
    for step in range(ds.n_timesteps):
        count = int((~np.isnan(values[step, elements])).sum())
        assert counts[step] == count
        assert np.isnan(means[step]) == (step in empty)


def test_the_count_statistic_has_no_unit_of_its_parameter(basin, datasets):
    ds = datasets["stats 21"].ds
    polygon = random_polygon(ds, random.Random(8), 30.0)
    coverage = answer(basin, datasets["stats 21"].id, "area", coords=wkt_polygon(polygon),
                      crs=UTM32, statistics="count,mean").json()
    parameters = coverage["parameters"]
    assert parameters["Surface elevation:mean"]["unit"]["symbol"] == "m"
    assert parameters["Surface elevation:count"].get("unit", {}).get("symbol") != "m"


# CoverageJSON validation -----------------------------------------------------------------------

# The axes each domain type of OGC 21-069r2 ("Common Domain Types") requires and allows, and
# which of them hold one value only.
DOMAIN_TYPES = {
    "Grid": ({"x", "y"}, {"z", "t"}, set()),
    "PointSeries": ({"x", "y", "t"}, {"z"}, {"x", "y", "z"}),
    "Point": ({"x", "y"}, {"z", "t"}, {"x", "y", "z", "t"}),
    "MultiPointSeries": ({"composite", "t"}, set(), set()),
    "MultiPoint": ({"composite"}, {"t"}, {"t"}),
    "PolygonSeries": ({"composite", "t"}, {"z"}, {"z", "composite"}),
    "Polygon": ({"composite"}, {"z", "t"}, {"z", "t", "composite"}),
    "MultiPolygonSeries": ({"composite", "t"}, {"z"}, {"z"}),
    "MultiPolygon": ({"composite"}, {"z", "t"}, {"z", "t"}),
}
AXIS_ORDER = ["t", "z", "y", "x", "composite"]


@pytest.fixture(scope="module")
def schema_validator():
    with open(SCHEMA, encoding="utf-8") as file:
        schema = json.load(file)
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


def validate_with_covjson_pydantic(text):
    """covjson-pydantic's models. Its DomainType (0.8.0) lacks MultiPolygon and
    MultiPolygonSeries, which the standard defines: those documents may fail on exactly that
    field and nothing else (the OGC schema and check_rules cover them)."""
    document = json.loads(text)
    model = (covjson_coverage.Coverage if document["type"] == "Coverage"
             else covjson_coverage.CoverageCollection)
    try:
        model.model_validate_json(text)
    except pydantic.ValidationError as error:
        known = {t.value for t in covjson_domain.DomainType}
        problems = [e for e in error.errors()
                    if not (e["loc"][-1] == "domainType" and e["input"] not in known
                            and e["input"] in ("MultiPolygon", "MultiPolygonSeries"))]
        assert not problems, error


def axis_length(axis):
    return len(axis["values"]) if "values" in axis else axis["num"]


def check_ring(ring):
    assert len(ring) >= 4, f"a LinearRing needs 4 or more positions: {ring}"
    assert ring[0] == ring[-1], f"a LinearRing is closed: {ring}"
    assert all(len(position) == 2 for position in ring)


def check_domain(domain, referencing):
    """The rules of one domain (OGC 21-069r2, Domain Objects and Common Domain Types)."""
    assert domain["type"] == "Domain"
    axes = domain["axes"]
    required, allowed, single = DOMAIN_TYPES[domain["domainType"]]
    assert required <= set(axes) <= required | allowed, (domain["domainType"], set(axes))
    for name in single & set(axes):
        assert axis_length(axes[name]) == 1, (domain["domainType"], name)
    coordinates = []
    for name, axis in axes.items():
        coordinates += axis.get("coordinates", [name])
        if name == "t":
            stamps = times(axes)
            assert stamps.is_monotonic_increasing and stamps.is_unique
        elif name in ("x", "y"):
            values = np.array(axis["values"], np.float64)
            assert (np.all(np.diff(values) > 0) or np.all(np.diff(values) < 0)
                    or len(values) == 1), name
        elif name == "composite":
            data_type = axis["dataType"]
            assert axis["coordinates"] == ["x", "y"]
            if domain["domainType"].startswith("MultiPoint"):
                assert data_type == "tuple"
                assert all(len(v) == 2 for v in axis["values"])
            else:
                assert data_type == "polygon"
                for polygon in axis["values"]:
                    for ring in polygon:
                        check_ring(ring)
    assert len(coordinates) == len(set(coordinates)), coordinates
    referenced = [c for connection in referencing for c in connection["coordinates"]]
    assert sorted(referenced) == sorted(coordinates), (referenced, coordinates)
    for connection in referencing:
        kind = connection["system"]["type"]
        if connection["coordinates"] == ["t"]:
            assert kind == "TemporalRS" and connection["system"]["calendar"] == "Gregorian"
        else:
            assert kind in ("GeographicCRS", "ProjectedCRS")


def check_ranges(coverage, domain, parameters):
    axes = domain["axes"]
    assert set(coverage["ranges"]) == set(parameters)
    for name, array in coverage["ranges"].items():
        assert array["type"] == "NdArray" and array["dataType"] == "float"
        names, shape = array.get("axisNames", []), array.get("shape", [])
        assert len(names) == len(shape)
        assert set(names) <= set(axes), (name, names)
        for axis, size in zip(names, shape):
            assert axis_length(axes[axis]) == size, (name, axis, size)
        # Every multi-valued axis is an axis of the array (only single-valued ones may go).
        assert {a for a in axes if axis_length(axes[a]) > 1} <= set(names), (name, names)
        assert names == sorted(names, key=AXIS_ORDER.index), names
        assert len(array["values"]) == (int(np.prod(shape)) if shape else 1)
        assert all(v is None or isinstance(v, (int, float)) for v in array["values"])


def check_rules(document):
    """What covjson-pydantic and the JSON schema leave out, for a Coverage or collection."""
    if document["type"] == "CoverageCollection":
        assert "parameters" in document and "referencing" in document
        for coverage in document["coverages"]:
            domain = coverage["domain"]
            assert domain["domainType"] == document["domainType"]
            check_domain(domain, domain.get("referencing", document["referencing"]))
            check_ranges(coverage, domain, coverage.get("parameters", document["parameters"]))
    else:
        domain = document["domain"]
        check_domain(domain, domain["referencing"])
        check_ranges(document, domain, document["parameters"])
    for parameter in (document.get("parameters") or {}).values():
        assert parameter["type"] == "Parameter"
        assert parameter["observedProperty"]["label"]["en"]


def answer_kinds(datasets):
    """One request of each kind of CoverageJSON answer: (dataset, query, parameters, the
    expected type and domain type)."""
    mesh, grid, ascii_ = datasets["mesh"], datasets["grid"], datasets["ascii"]
    ds = mesh.ds
    rng = random.Random(99)
    (x, y), (x2, y2) = inside_centres(ds, rng, 2)
    polygon = random_polygon(ds, rng, 40.0)
    second = random_polygon(ds, rng, 40.0, scale=0.5)
    lon, lat = TO_LONLAT.transform(x, y)
    g = grid.ds.geometry
    grid_box = f"{g.x[1]},{g.y[1]},{g.x[5]},{g.y[4]}"
    grid_polygon = (f"POLYGON(({g.x[1]} {g.y[1]}, {g.x[6]} {g.y[1]}, {g.x[6]} {g.y[5]}, "
                    f"{g.x[1]} {g.y[1]}))")
    ascii_polygon = "POLYGON((1001 2001, 1049 2001, 1049 2039, 1001 2001))"
    ascii_second = "POLYGON((1001 2039, 1001 2011, 1029 2039, 1001 2039))"
    rotated, dotmesh = datasets["sample rotated"], datasets["sample .mesh"]
    return [
        ("PointSeries", mesh, "position", {"coords": wkt_point(x, y), "crs": UTM32},
         "Coverage", "PointSeries"),
        ("PointSeries CRS84", mesh, "position", {"coords": wkt_point(lon, lat)},
         "Coverage", "PointSeries"),
        ("Point", ascii_, "position", {"coords": "POINT(1012 2013)"}, "Coverage", "Point"),
        ("CoverageCollection", mesh, "position",
         {"coords": wkt_multipoint([(x, y), (0.0, 0.0), (x2, y2)]), "crs": UTM32},
         "CoverageCollection", "PointSeries"),
        ("CoverageCollection Point", ascii_, "position",
         {"coords": "MULTIPOINT((1012 2013), (1048 2038))"}, "CoverageCollection", "Point"),
        ("Grid", grid, "cube", {"bbox": grid_box, "crs": UTM32}, "Coverage", "Grid"),
        ("Grid area", grid, "area", {"coords": grid_polygon, "crs": UTM32}, "Coverage", "Grid"),
        ("Grid without time", ascii_, "cube", {"bbox": "1000,2000,1030,2020"},
         "Coverage", "Grid"),
        ("MultiPointSeries", mesh, "area", {"coords": wkt_polygon(polygon), "crs": UTM32},
         "Coverage", "MultiPointSeries"),
        ("MultiPointSeries cube", mesh, "cube",
         {"bbox": ",".join(map(str, random_box(ds, rng, 40.0))), "crs": UTM32},
         "Coverage", "MultiPointSeries"),
        ("MultiPointSeries rotated grid", rotated, "cube",
         {"bbox": "0,0,10000000,10000000", "crs": UTM32}, "Coverage", "MultiPointSeries"),
        ("MultiPoint", dotmesh, "cube", {"bbox": "0,0,10000000,10000000", "crs": UTM32},
         "Coverage", "MultiPoint"),
        ("PolygonSeries", mesh, "area",
         {"coords": wkt_polygon(polygon), "crs": UTM32, "statistics": ",".join(STATISTICS)},
         "Coverage", "PolygonSeries"),
        ("Polygon", ascii_, "area", {"coords": ascii_polygon, "statistics": "mean,p50,count"},
         "Coverage", "Polygon"),
        ("MultiPolygonSeries", mesh, "area",
         {"coords": wkt_multipolygon([polygon, second]), "crs": UTM32,
          "statistics": "min,weighted-mean"}, "Coverage", "MultiPolygonSeries"),
        ("MultiPolygon", ascii_, "area",
         {"coords": f"MULTIPOLYGON({ascii_polygon[7:]}, {ascii_second[7:]})",
          "statistics": "max,count"}, "Coverage", "MultiPolygon"),
    ]


KINDS = ["PointSeries", "PointSeries CRS84", "Point", "CoverageCollection",
         "CoverageCollection Point", "Grid", "Grid area", "Grid without time",
         "MultiPointSeries", "MultiPointSeries cube", "MultiPointSeries rotated grid",
         "MultiPoint", "PolygonSeries", "Polygon", "MultiPolygonSeries", "MultiPolygon"]


@pytest.fixture(scope="module")
def kinds(datasets):
    found = {case[0]: case[1:] for case in answer_kinds(datasets)}
    assert list(found) == KINDS
    return found


@pytest.mark.parametrize("kind", KINDS)
def test_coveragejson_answers_validate(basin, kinds, schema_validator, kind):
    upload_, endpoint, params, document_type, domain_type = kinds[kind]
    response = answer(basin, upload_.id, endpoint, **params)
    assert response.headers["Content-Type"] == COVJSON
    document = response.json()
    assert document["type"] == document_type
    found = document.get("domainType") or document["domain"]["domainType"]
    assert found == domain_type
    errors = [f"{list(e.absolute_path)}: {e.message}"
              for e in schema_validator.iter_errors(document)]
    assert not errors, errors
    validate_with_covjson_pydantic(response.text)
    check_rules(document)


def test_an_unclosed_ring_is_refused_or_closed(basin, datasets):
    ascii_ = datasets["ascii"]
    response = query(basin, ascii_.id, "area", coords="POLYGON((1001 2001, 1049 2001, 1049 2039))",
                     statistics="mean")
    if response.status_code == 400:
        return
    assert response.status_code == 200, response.text
    for ring in response.json()["domain"]["axes"]["composite"]["values"][0]:
        check_ring(ring)
    geojson = query(basin, ascii_.id, "area", coords="POLYGON((1001 2001, 1049 2001, 1049 2039))",
                    statistics="mean", f="GeoJSON").json()
    for ring in geojson["features"][0]["geometry"]["coordinates"]:
        check_ring(ring)


# GeoJSON and CSV -------------------------------------------------------------------------------

def coverage_rows(document):
    """The rows a CoverageJSON answer holds, as the tabular answers list them: (place, time,
    {column: value}) with place (x, y) or the polygon's index; grid cells without any value
    left out."""
    coverages = (document["coverages"] if document["type"] == "CoverageCollection"
                 else [document])
    rows = []
    for coverage in coverages:
        axes = coverage["domain"]["axes"]
        stamps = [s for s in axes["t"]["values"]] if "t" in axes else [None]
        domain_type = coverage["domain"]["domainType"]
        names = list(coverage["ranges"])
        arrays = {n: range_array(coverage, n) for n in names}
        if domain_type in ("Point", "PointSeries"):
            places = [(axes["x"]["values"][0], axes["y"]["values"][0])]
            pick = lambda a, t, p: a.reshape(-1)[t]  # noqa: E731
        elif domain_type == "Grid":
            places = [(x, y) for y in axes["y"]["values"] for x in axes["x"]["values"]]
            pick = lambda a, t, p: a.reshape(len(stamps), -1)[t, p]  # noqa: E731
        elif "Polygon" in domain_type:
            places = list(range(len(axes["composite"]["values"])))
            pick = lambda a, t, p: a.reshape(len(stamps), -1)[t, p]  # noqa: E731
        else:
            places = [tuple(v) for v in axes["composite"]["values"]]
            pick = lambda a, t, p: a.reshape(len(stamps), -1)[t, p]  # noqa: E731
        for p, place in enumerate(places):
            for t, stamp in enumerate(stamps):
                values = {n: float(pick(arrays[n], t, p)) for n in names}
                if domain_type == "Grid" and all(np.isnan(v) for v in values.values()):
                    continue
                rows.append((place, stamp, values))
    return rows


def same_value(a, b):
    return (a is None and np.isnan(b)) or (a is not None and float(a) == b)


def check_geojson(text, document, crs84):
    """RFC 7946 (when in CRS84) and the same rows as the CoverageJSON answer."""
    collection = geojson_pydantic.FeatureCollection.model_validate_json(text)
    geojson = json.loads(text)
    if crs84:
        assert "crs" not in geojson, "RFC 7946: positions are CRS84, no crs member"
    rows = coverage_rows(document)
    assert len(geojson["features"]) == len(rows) == len(collection.features)
    for feature, (place, stamp, values) in zip(geojson["features"], rows):
        geometry = feature["geometry"]
        properties = feature["properties"]
        if isinstance(place, int):
            assert geometry["type"] == "Polygon" and properties["polygon"] == place
            for ring in geometry["coordinates"]:
                check_ring(ring)
            shape = geometry_shape(geometry)
            assert shape.is_valid
            if crs84:
                assert shape.exterior.is_ccw, "RFC 7946 3.1.6: exterior rings counter-clockwise"
                assert all(not hole.is_ccw for hole in shape.interiors)
            positions = [p for ring in geometry["coordinates"] for p in ring]
        else:
            assert geometry == {"type": "Point", "coordinates": list(place)}
            positions = [geometry["coordinates"]]
        if crs84:
            assert all(-180 <= x <= 180 and -90 <= y <= 90 for x, y in positions)
        assert properties.get("datetime") == stamp
        for name, value in values.items():
            assert same_value(properties[name], value), (name, properties[name], value)


def check_csv(text, document, parameters):
    assert text.endswith("\r\n") and "\n" not in text.replace("\r\n", "")
    table = list(csv.reader(io.StringIO(text, newline="")))
    rows = coverage_rows(document)
    polygons = bool(rows) and isinstance(rows[0][0], int)
    has_time = rows[0][1] is not None
    header = (["polygon"] if polygons else ["x", "y"]) + (["datetime"] if has_time else [])
    assert table[0] == header + parameters
    assert len(table) - 1 == len(rows)
    for line, (place, stamp, values) in zip(table[1:], rows):
        position = [int(line[0])] if polygons else [float(line[0]), float(line[1])]
        assert position == ([place] if polygons else list(place))
        if has_time:
            assert line[len(header) - 1] == stamp
        for name, field in zip(parameters, line[len(header):]):
            assert same_value(float(field) if field else None, values[name]), (name, field)


def tabular_cases(datasets):
    """Queries in CRS84 (GeoJSON by RFC 7946) and in EPSG:32632 (GeoJSON with a crs member)."""
    mesh, ascii_ = datasets["mesh"], datasets["ascii"]
    ds = mesh.ds
    rng = random.Random(77)
    (x, y), (x2, y2) = inside_centres(ds, rng, 2)
    polygon = random_polygon(ds, rng, 40.0)
    second = random_polygon(ds, rng, 40.0, scale=0.5)
    to84 = lambda shape: to_lonlat(shape)  # noqa: E731
    lonlat = [TO_LONLAT.transform(*p) for p in [(x, y), (x2, y2)]]
    lon_box = to84(box(*random_box(ds, rng, 40.0))).bounds
    return [
        ("position CRS84", mesh, "position", {"coords": wkt_point(*lonlat[0])}, True),
        ("position", mesh, "position", {"coords": wkt_point(x, y), "crs": UTM32}, False),
        ("multipoint CRS84", mesh, "position",
         {"coords": wkt_multipoint(lonlat + [(1.0, 1.0)])}, True),
        ("cube mesh CRS84", mesh, "cube", {"bbox": ",".join(map(repr, lon_box))}, True),
        ("area mesh CRS84", mesh, "area", {"coords": wkt_polygon(to84(polygon))}, True),
        ("area mesh", mesh, "area", {"coords": wkt_polygon(polygon), "crs": UTM32}, False),
        ("statistics CRS84", mesh, "area",
         {"coords": wkt_polygon(to84(polygon)), "statistics": "mean,p90,count"}, True),
        ("multipolygon statistics CRS84", mesh, "area",
         {"coords": wkt_multipolygon([to84(polygon), to84(second)]), "statistics": "max"}, True),
        ("grid cube", datasets["grid"], "cube",
         {"bbox": "500040,6101070,500260,6101310", "crs": UTM32}, False),
        ("point without time", ascii_, "position", {"coords": "POINT(1012 2013)"}, False),
        ("grid without time", ascii_, "cube", {"bbox": "1000,2000,1030,2020"}, False),
        ("statistics without time", ascii_, "area",
         {"coords": "POLYGON((1001 2001, 1049 2001, 1049 2039, 1001 2001))",
          "statistics": "mean"}, False),
    ]


TABULAR = ["position CRS84", "position", "multipoint CRS84", "cube mesh CRS84",
           "area mesh CRS84", "area mesh", "statistics CRS84", "multipolygon statistics CRS84",
           "grid cube", "point without time", "grid without time", "statistics without time"]


@pytest.fixture(scope="module")
def tabular(datasets):
    found = {case[0]: case[1:] for case in tabular_cases(datasets)}
    assert list(found) == TABULAR
    return found


@pytest.mark.parametrize("case", TABULAR)
def test_geojson_and_csv_answers_hold_the_coveragejson_rows(basin, tabular, case):
    upload_, endpoint, params, crs84 = tabular[case]
    document = answer(basin, upload_.id, endpoint, **params).json()
    geojson = answer(basin, upload_.id, endpoint, f="GeoJSON", **params)
    assert geojson.headers["Content-Type"] == "application/geo+json"
    check_geojson(geojson.text, document, crs84)
    if not crs84:
        crs = json.loads(geojson.text).get("crs")
        system = document.get("referencing") or (
            document.get("domain", {}).get("referencing")
            or document["coverages"][0]["domain"]["referencing"])
        if system[0]["system"].get("id"):
            assert crs == {"type": "name", "properties": {"name": system[0]["system"]["id"]}}
    response = answer(basin, upload_.id, endpoint, f="CSV", **params)
    assert response.headers["Content-Type"] == "text/csv; charset=utf-8"
    check_csv(response.text, document, list(document["parameters"]))


def test_geojson_of_a_grid_asked_in_crs84_is_rfc7946(basin, datasets):
    g = datasets["grid"].ds.geometry
    corners = [TO_LONLAT.transform(float(g.x[i]), float(g.y[j])) for i, j in [(1, 1), (5, 4)]]
    bbox = ",".join(map(repr, [corners[0][0], corners[0][1], corners[1][0], corners[1][1]]))
    text = answer(basin, datasets["grid"].id, "cube", bbox=bbox, f="GeoJSON").text
    geojson = json.loads(text)
    assert "crs" not in geojson
    for feature in geojson["features"]:
        lon, lat = feature["geometry"]["coordinates"]
        assert -180 <= lon <= 180 and -90 <= lat <= 90


def test_geojson_polygons_follow_the_right_hand_rule(basin, datasets):
    ds = datasets["mesh"].ds
    polygon = random_polygon(ds, random.Random(31), 40.0)
    clockwise = orient(
        to_lonlat(polygon), -1.0)
    text = answer(basin, datasets["mesh"].id, "area", coords=wkt_polygon(clockwise),
                  statistics="mean", f="GeoJSON").text
    for feature in json.loads(text)["features"]:
        assert geometry_shape(feature["geometry"]).exterior.is_ccw
