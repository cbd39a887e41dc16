"""Mesh tiles draw what MIKE IO reads, pixel centre by pixel centre.

The Rust example crates/tiles/examples/mesh_sample.rs reads a mesh file with basin-formats
and samples it with basin-tiles' MeshIndex and MeshField, printing for each point the element
that holds it and the value drawn there. This compares that output with MIKE IO (the reference
implementation of DFSU and .mesh) and with independent computations here:

- Which element: exact rational arithmetic (fractions) decides which elements hold each point,
  on edges and corners included; Basin must give the first of them in the file, and where
  exactly one element holds the point well inside, MIKE IO's `find_index` must agree.
- Flat: the value is MIKE IO's value of that element, bit for bit (NaN where MIKE IO has none).
- Smooth, node values given (MIKE IO's `get_node_centered_data`): the node values interpolated
  in the element, barycentric in triangles and bilinear in quads, the bilinear coordinates found
  here by Newton's method instead of Basin's closed form.
- Smooth from element values: node values by the pseudo-Laplacian of DHI's tools (computed here
  with numpy), exact for a linear field at interior nodes, where MIKE IO 3.1's own
  `get_node_centered_data` is not (mesh/nodes.rs says why Basin follows DHI's tools).
- Layered files: the surface element (MIKE IO's `top_elements`) and its value.

Meshes: random ones written by MIKE IO (mixed triangles and quads, NaNs), the layered sample and
MIKE IO's own test files from the corpus. A fixed seed list keeps failures reproducible.
"""

import os
import random
from fractions import Fraction

import pytest

from formats_support import ROOT, require_module, run, skip_or_fail
from test_formats_meshes import random_mesh

np = require_module("numpy")
pd = require_module("pandas")
mikeio = require_module("mikeio")

EXAMPLE = os.environ.get(
    "MESH_SAMPLE_BINARY", os.path.join(ROOT, "target", "debug", "examples", "mesh_sample"))
CORPUS = os.path.join(ROOT, "tests", "corpus", "mikeio")
SAMPLES = os.path.join(ROOT, "tests", "corpus", "dfs-samples")
SEEDS = [1, 2, 3, 5, 8, 13]


@pytest.fixture(scope="module", autouse=True)
def example():
    if not os.path.exists(EXAMPLE):
        skip_or_fail(f"{EXAMPLE} is missing (cargo build -p basin-tiles --example mesh_sample)")


def sample(path, points, *args):
    """Basin's element (-1 for none) and value (NaN for none) at each point."""
    text = "\n".join(f"{float(x)!r} {float(y)!r}" for x, y in points)
    out = run(EXAMPLE, path, *args, input=text)
    rows = [line.split() for line in out.splitlines()]
    assert len(rows) == len(points)
    return np.array([int(r[0]) for r in rows]), np.array([float(r[1]) for r in rows])


# Exact geometry ----------------------------------------------------------------------------

def orientation(a, b, p):
    """Sign of the cross product (b - a) x (p - a), exactly."""
    ax, ay, bx, by, px, py = (Fraction(float(v)) for v in (*a, *b, *p))
    value = (bx - ax) * (py - ay) - (by - ay) * (px - ax)
    return (value > 0) - (value < 0)


def holds(corners, p):
    """True when the polygon `corners` holds p, inside or on its boundary (crossing number,
    with every test exact)."""
    inside = False
    for i, a in enumerate(corners):
        b = corners[(i + 1) % len(corners)]
        side = orientation(a, b, p)
        if side == 0 and min(a[0], b[0]) <= p[0] <= max(a[0], b[0]) \
                and min(a[1], b[1]) <= p[1] <= max(a[1], b[1]):
            return True
        if (a[1] > p[1]) != (b[1] > p[1]):
            # The edge crosses the horizontal through p: count it when p is left of it going up.
            upward = b[1] > a[1]
            if (side > 0) == upward:
                inside = not inside
    return inside


def near_boundary(corners, p, tolerance=1e-9):
    """True when p is within `tolerance` of the element's size of one of its edges' lines, too
    close for MIKE IO's floating-point test to decide."""
    size = np.ptp(corners, axis=0).max()
    for i, a in enumerate(corners):
        b = corners[(i + 1) % len(corners)]
        cross = (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0])
        if abs(cross) <= tolerance * size * np.hypot(*(b - a)):
            return True
    return False


def on_boundary(corners, p):
    for i, a in enumerate(corners):
        b = corners[(i + 1) % len(corners)]
        if orientation(a, b, p) == 0 and min(a[0], b[0]) <= p[0] <= max(a[0], b[0]) \
                and min(a[1], b[1]) <= p[1] <= max(a[1], b[1]):
            return True
    return False


class Mesh2D:
    """A 2D geometry as MIKE IO gives it, with what the checks need."""

    def __init__(self, geometry):
        self.nodes = np.asarray(geometry.node_coordinates)[:, :2]
        self.elements = [np.asarray(e) for e in geometry.element_table]
        self.codes = np.asarray(geometry.codes)
        self.corners = [self.nodes[e] for e in self.elements]
        self.boxes = np.array([[c[:, 0].min(), c[:, 1].min(), c[:, 0].max(), c[:, 1].max()]
                               for c in self.corners])

    def holding(self, p):
        """Every element that holds p, ascending."""
        b = self.boxes
        near = np.nonzero((b[:, 0] <= p[0]) & (p[0] <= b[:, 2]) &
                          (b[:, 1] <= p[1]) & (p[1] <= b[:, 3]))[0]
        return [int(e) for e in near if holds(self.corners[e], p)]

    def centroids(self):
        return np.array([c.mean(axis=0) for c in self.corners])

    def points(self, rng, lattice=24):
        """Pixel-like lattice points over the extent and beyond, the nodes, edge midpoints and
        element centres."""
        (x0, y0), (x1, y1) = self.nodes.min(axis=0), self.nodes.max(axis=0)
        dx, dy = (x1 - x0) * 0.05, (y1 - y0) * 0.05
        grid = [(x0 - dx + (i + 0.5) * (x1 - x0 + 2 * dx) / lattice,
                 y0 - dy + (j + 0.5) * (y1 - y0 + 2 * dy) / lattice)
                for j in range(lattice) for i in range(lattice)]
        midpoints = [(c[i] + c[(i + 1) % len(c)]) / 2 for c in self.corners[:300]
                     for i in range(len(c))]
        nodes = list(self.nodes[rng.sample(range(len(self.nodes)), min(200, len(self.nodes)))])
        return [tuple(map(float, p)) for p in grid + midpoints + nodes + list(self.centroids())]


def expected_elements(mesh, points):
    return np.array([(mesh.holding(p) or [-1])[0] for p in points])


def mikeio_element(geometry, p):
    try:
        return int(geometry.find_index(x=p[0], y=p[1])[0])
    except mikeio.exceptions.OutsideModelDomainError:
        return -1


def check_elements(mesh, geometry, points, found, rng, checked_by_mikeio=150):
    """Basin's elements are the first that hold each point; MIKE IO agrees where one element
    holds a point well inside."""
    expected = expected_elements(mesh, points)
    wrong = [(points[i], found[i], expected[i]) for i in np.nonzero(found != expected)[0]]
    assert not wrong, f"{len(wrong)} points in the wrong element, e.g. {wrong[:3]}"
    if geometry is None:
        return expected
    single = [i for i, p in enumerate(points)
              if expected[i] >= 0 and not on_boundary(mesh.corners[expected[i]], p)
              and len(mesh.holding(p)) == 1
              and not near_boundary(mesh.corners[expected[i]], np.asarray(p))]
    for i in rng.sample(single, min(checked_by_mikeio, len(single))):
        assert mikeio_element(geometry, points[i]) == expected[i], points[i]
    return expected


# Interpolation, independently --------------------------------------------------------------

def bilinear_coordinates(c, p):
    """(u, v) with c0 (1-u)(1-v) + c1 u (1-v) + c2 u v + c3 (1-u) v = p, by Newton's method."""
    u, v = 0.5, 0.5
    for _ in range(50):
        point = (c[0] * (1 - u) * (1 - v) + c[1] * u * (1 - v) + c[2] * u * v
                 + c[3] * (1 - u) * v)
        du = -c[0] * (1 - v) + c[1] * (1 - v) + c[2] * v - c[3] * v
        dv = -c[0] * (1 - u) - c[1] * u + c[2] * u + c[3] * (1 - u)
        step = np.linalg.solve(np.column_stack([du, dv]), point - p)
        u, v = u - step[0], v - step[1]
        if abs(step).max() < 1e-15:
            break
    return u, v


def cross(a, b):
    return a[0] * b[1] - a[1] * b[0]


def interpolate(corners, values, p):
    if len(corners) == 3:
        a, b, c = corners
        area = cross(b - a, c - a)
        weights = [cross(b - p, c - p) / area, cross(c - p, a - p) / area,
                   cross(a - p, b - p) / area]
        return float(np.dot(weights, values))
    u, v = bilinear_coordinates(corners, np.asarray(p))
    f = values
    return float(f[0] * (1 - u) * (1 - v) + f[1] * u * (1 - v) + f[2] * u * v
                 + f[3] * (1 - u) * v)


def pseudo_laplacian(mesh, values):
    """Node values from element values as DHI's tools compute them (Holmes and Connell 1989):
    weights 1 + lambda . d clipped to [0, 2], inverse distance where that fails; NaN elements
    take no part. Also says, per node, whether the result is exact for a linear field: the
    pseudo-Laplacian weights were used, and clipping changed none of them."""
    around = [[] for _ in mesh.nodes]
    for e, element in enumerate(mesh.elements):
        if not np.isnan(values[e]):
            for n in element:
                around[n].append(e)
    centres = mesh.centroids()
    result, exact = np.full(len(mesh.nodes), np.nan), np.zeros(len(mesh.nodes), bool)
    for n, elements in enumerate(around):
        if not elements:
            continue
        d = centres[elements] - mesh.nodes[n]
        f = np.asarray(values, np.float64)[elements]
        ixx, iyy, ixy = (d[:, 0] ** 2).sum(), (d[:, 1] ** 2).sum(), (d[:, 0] * d[:, 1]).sum()
        rx, ry = d[:, 0].sum(), d[:, 1].sum()
        determinant = ixx * iyy - ixy ** 2
        weights = None
        if determinant > 1e-10 * ixx * iyy:
            lx, ly = (ixy * ry - iyy * rx) / determinant, (ixy * rx - ixx * ry) / determinant
            raw = 1 + lx * d[:, 0] + ly * d[:, 1]
            weights = np.clip(raw, 0, 2)
            exact[n] = bool((raw == weights).all())
            if weights.sum() <= 1e-10:
                weights, exact[n] = None, False
        if weights is None:
            distance = np.hypot(d[:, 0], d[:, 1])
            weights = 1 / distance
        result[n] = (weights * f).sum() / weights.sum()
    return result, exact


def check_smooth(mesh, points, elements, got, node_values, element_values=None):
    for p, e, value in zip(points, elements, got):
        if e < 0 or (element_values is not None and np.isnan(element_values[e])):
            assert np.isnan(value), (p, e, value)
            continue
        corner_values = np.asarray(node_values, np.float64)[mesh.elements[e]]
        if np.isnan(corner_values).any():
            assert np.isnan(value), (p, e, value)
            continue
        expected = interpolate(mesh.corners[e], corner_values, np.asarray(p))
        scale = np.nanmax(np.abs(node_values)) + 1
        assert abs(value - expected) <= 2e-6 * scale, (p, e, value, expected)


# Meshes --------------------------------------------------------------------------------------

def valid_mesh(seed):
    """A perturbed grid of quads and triangle pairs (random diagonals) at a random place and
    scale, some cells left out as holes: elements that do not overlap."""
    rng = random.Random(seed)
    nx, ny = rng.randint(3, 12), rng.randint(3, 12)
    size = rng.choice([1e-3, 0.37, 10.0, 123.456789])
    ratio = rng.uniform(0.5, 2.0)
    x0, y0 = rng.choice([(500_000.0, 6_100_000.0), (12.3, 55.6), (-1e5, 3e3)])
    nodes = []
    for j in range(ny):
        for i in range(nx):
            inner = 0 < i < nx - 1 and 0 < j < ny - 1
            jx, jy = (rng.uniform(-0.3, 0.3), rng.uniform(-0.3, 0.3)) if inner else (0, 0)
            nodes.append((x0 + (i + jx) * size, y0 + (j + jy) * size * ratio, -5.0))
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
    elements = [[number[n] for n in e] for e in elements]
    return nodes, elements, np.zeros(len(nodes), int)


def random_dfsu(tmp_path, seed, mesh=valid_mesh):
    """A random mesh of triangles and quads with one item over two steps, 10% NaN."""
    rng = random.Random(seed)
    nodes, elements, codes = mesh(seed)
    geometry = mikeio.spatial.GeometryFM2D(
        node_coordinates=nodes, element_table=[np.array(e) for e in elements], codes=codes,
        projection="NON-UTM")
    values = np.array([[rng.uniform(-50, 50) if rng.random() > 0.1 else np.nan
                        for _ in elements] for _ in range(2)], np.float32)
    time = pd.date_range("2020-01-01", periods=2)
    array = mikeio.DataArray(data=values, time=time, geometry=geometry,
                             item=mikeio.ItemInfo("Water level", mikeio.EUMType.Water_Level))
    path = tmp_path / f"random_{seed}.dfsu"
    mikeio.Dataset([array]).to_dfs(str(path))
    return path


def check_file(path, rng, item=0, step=0):
    dataset = mikeio.read(str(path))
    geometry = dataset.geometry
    mesh = Mesh2D(geometry)
    points = mesh.points(rng)
    values = dataset[item].to_numpy()[step]

    found, flat = sample(path, points, "--item", item, "--step", step)
    elements = check_elements(mesh, geometry, points, found, rng)
    expected = np.array([values[e] if e >= 0 else np.nan for e in elements], np.float32)
    assert np.array_equal(flat.astype(np.float32), expected, equal_nan=True)

    _, smooth = sample(path, points, "--item", item, "--step", step, "--shading", "smooth")
    node_values, _ = pseudo_laplacian(mesh, values)
    check_smooth(mesh, points, elements, smooth, node_values, values)
    return dataset, mesh, points, elements


@pytest.mark.parametrize("seed", SEEDS)
def test_random_meshes_sample_the_first_element_holding_each_point(tmp_path, seed):
    check_file(random_dfsu(tmp_path, seed), random.Random(seed), step=1)


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_tangled_meshes_still_sample_an_element_that_holds_the_point(tmp_path, seed):
    """MIKE IO's random meshes of the format tests overlap where the x spacing is tiny: no
    order of elements is then right, but each point must get an element that holds it."""
    path = random_dfsu(tmp_path, seed, mesh=random_mesh)
    mesh = Mesh2D(mikeio.read(str(path)).geometry)
    points = mesh.points(random.Random(seed))
    found, _ = sample(path, points, "--shading", "smooth")
    for p, e in zip(points, found):
        holding = mesh.holding(p)
        assert (e in holding) if holding else e == -1, (p, e, holding)


@pytest.mark.parametrize("name", ["HD2D.dfsu", "FakeLake.dfsu", "wind_north_sea.dfsu"])
def test_corpus_files_sample_as_mikeio_reads_them(name):
    check_file(os.path.join(CORPUS, name), random.Random(name))


def test_mixed_sample_sample_as_mikeio_reads_it():
    check_file(os.path.join(SAMPLES, "mesh2d_mixed.dfsu"), random.Random(7), item=1, step=4)


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_node_values_are_interpolated_linearly_in_triangles_and_bilinearly_in_quads(
        tmp_path, seed):
    rng = random.Random(seed)
    path = random_dfsu(tmp_path, seed)
    dataset = mikeio.read(str(path))
    mesh = Mesh2D(dataset.geometry)
    values = dataset[0].to_numpy()[0]
    # MIKE IO's own node values (NaN where an element around is NaN), as a node item.
    node_values = dataset.geometry.get_node_centered_data(values).astype(np.float32)
    node_file = tmp_path / "nodes.txt"
    node_file.write_text("\n".join(repr(float(v)) for v in node_values))
    points = mesh.points(rng)
    found, smooth = sample(path, points, "--node-values", node_file, "--shading", "smooth")
    elements = check_elements(mesh, dataset.geometry, points, found, rng, checked_by_mikeio=0)
    check_smooth(mesh, points, elements, smooth, node_values)
    # Drawn flat, node values take the mean of the element's corners.
    _, flat = sample(path, points, "--node-values", node_file)
    for e, value in zip(elements, flat):
        expected = np.float64(node_values[mesh.elements[e]]).mean() if e >= 0 else np.nan
        assert np.isclose(value, expected, rtol=1e-6, equal_nan=True)


def test_mesh_files_draw_their_bathymetry_at_nodes():
    path = os.path.join(CORPUS, "quad_tri.mesh")
    geometry = mikeio.Mesh(path).geometry
    mesh = Mesh2D(geometry)
    rng = random.Random(4)
    points = mesh.points(rng)
    found, smooth = sample(path, points, "--node-z", "--shading", "smooth")
    elements = check_elements(mesh, geometry, points, found, rng, checked_by_mikeio=60)
    z = np.asarray(geometry.node_coordinates)[:, 2].astype(np.float32)
    check_smooth(mesh, points, elements, smooth, z)


def test_linear_fields_are_exact_at_interior_nodes_unlike_mikeio(tmp_path):
    source = mikeio.read(os.path.join(CORPUS, "HD2D.dfsu"))
    geometry = source.geometry
    mesh = Mesh2D(geometry)
    centres, nodes = mesh.centroids(), mesh.nodes
    origin, scale = nodes.mean(axis=0), np.ptp(nodes[:, 0])

    def linear(xy):
        return 2.0 + (xy[:, 0] - origin[0]) / scale - 3.0 * (xy[:, 1] - origin[1]) / scale

    values = linear(centres).astype(np.float32)
    array = mikeio.DataArray(data=values[np.newaxis], time=source.time[:1], geometry=geometry,
                             item=mikeio.ItemInfo("Linear", mikeio.EUMType.Water_Level))
    path = tmp_path / "linear.dfsu"
    mikeio.Dataset([array]).to_dfs(str(path))

    reference, exact = pseudo_laplacian(mesh, values)
    interior = np.nonzero((mesh.codes == 0) & exact)[0]
    assert len(interior) > 300
    # Sampled at a node, smooth shading gives the node value itself.
    _, at_nodes = sample(path, [tuple(nodes[n]) for n in interior], "--shading", "smooth")
    truth = linear(nodes[interior])
    spread = np.ptp(truth)
    basin_error = np.abs(at_nodes - truth).max()
    mikeio_error = np.abs(geometry.get_node_centered_data(values)[interior] - truth).max()
    assert basin_error < 1e-5 * spread, basin_error
    assert np.abs(at_nodes - reference[interior]).max() < 1e-5 * spread
    # MIKE IO 3.1 evaluates lambda per element instead of from the sums.
    assert mikeio_error > 1e-4 * spread and mikeio_error > 100 * basin_error, \
        (mikeio_error, basin_error)


@pytest.mark.parametrize("step", [0, 2])
def test_layered_files_draw_the_top_element_of_each_column(step):
    path = os.path.join(SAMPLES, "mesh3d_sigma.dfsu")
    dataset = mikeio.read(path)
    top = np.asarray(dataset.geometry.top_elements)
    surface = dataset.geometry.geometry2d
    mesh = Mesh2D(surface)
    rng = random.Random(step)
    points = mesh.points(rng, lattice=16)
    values = dataset["Temperature"].to_numpy()[step]

    # Item 0 of the full 3D file is the node "Z coordinate"; the temperature is item 1.
    found, flat = sample(path, points, "--item", 1, "--step", step)
    expected_2d = expected_elements(mesh, points)
    expected = np.array([top[e] if e >= 0 else -1 for e in expected_2d])
    assert np.array_equal(found, expected)
    assert np.array_equal(flat.astype(np.float32),
                          np.array([values[e] if e >= 0 else np.nan for e in expected],
                                   np.float32), equal_nan=True)
    # Smooth: node values of the surface from the top elements' values.
    _, smooth = sample(path, points, "--item", 1, "--step", step, "--shading", "smooth")
    node_values, _ = pseudo_laplacian(mesh, values[top])
    check_smooth(mesh, points, expected_2d, smooth, node_values, values[top])
    # MIKE IO's top layer, read as a 2D file, draws the same.
    top_found, top_flat = sample(path, points, "--item", 0, "--step", step,
                                 "--reader-parameter", "ReadFull3D=false")
    assert np.array_equal(top_found, expected_2d)
    assert np.array_equal(top_flat, flat, equal_nan=True)
