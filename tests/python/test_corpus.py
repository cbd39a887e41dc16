"""Every real-world file of tests/corpus, converted by Basin and compared with what GDAL (rasters,
vectors) or meshio/mikeio (meshes) make of the same file.

The corpus holds files from the test data of public projects (each folder names its source and
carries its licence). Each file is converted by `basin convert` to each target of its kind, and
the result is compared with the reference conversion of the same file by GDAL's own tools:

- rasters (.tif, .tiff, .asc) to GeoTIFF and ASCII Grid: `gdal_translate` makes the reference;
  GDAL then reads both outputs, which must agree in size, band count, data type, geotransform,
  nodata, coordinate system (pyproj equality, axis order ignored) and every cell value (an ASCII
  Grid that Basin reads as Float64 is read by GDAL with `-oo DATATYPE=Float64`);
- vectors (.shp, .geojson, .json) to GeoJSON and Shapefile: `ogr2ogr` makes the reference; both
  outputs are read back through `ogr2ogr -f GeoJSON` and must agree feature by feature (geometry
  coordinates to 1e-9 relative, attribute values, field names and order) and in coordinate system;
- meshes (.vtu, .mesh) to VTU and MIKE .mesh: meshio (mikeio for .mesh) reads the input and
  Basin's output, which must have the same points, cells and data.

tests/corpus/expectations.toml records, per file, the conversions Basin refuses on purpose
(`refused = {target = "words of the message"}`) and those GDAL cannot make itself
(`no_reference = {target = "why"}`) and the fields Basin keeps where GDAL's conversion loses
them (`lossless = {target = ["field"]}`, compared with the input instead) and the largest cell
difference allowed where two JPEG decoders differ (`tolerance = {target = n}`), each with a `reason`
(see docs/formats.md). A refusal is
checked like any result: Basin must fail with that message and leave no output. Where GDAL has
no reference, Basin's output must open in GDAL. Everything else is compared.

`python3 test_corpus.py` prints one line per conversion (agree, differs, fails, refused) and the
totals, for reports; pytest runs the same checks as tests.
"""

import functools
import json
import math
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from formats_support import BINARY, require_module, require_tool, run

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
EXPECTATIONS = CORPUS / "expectations.toml"

RASTER = {".tif", ".tiff", ".asc"}
VECTOR = {".shp", ".geojson", ".json"}
MESH = {".vtu", ".mesh"}
TARGETS = {"raster": ["tif", "asc"], "vector": ["geojson", "shp"], "mesh": ["vtu", "mesh"]}

# GDAL band types and the numpy types of their raw (ENVI) bytes.
NUMPY_TYPES = {
    "Byte": "u1", "Int8": "i1", "UInt16": "<u2", "Int16": "<i2", "UInt32": "<u4", "Int32": "<i4",
    "UInt64": "<u8", "Int64": "<i8", "Float32": "<f4", "Float64": "<f8",
}


class BasinFailed(Exception):
    """`basin convert` exited with an error (its message is the exception's)."""


class ReferenceFailed(Exception):
    """GDAL's tool could not make the reference conversion (GDAL cannot read the file, or
    refuses to write it): there is nothing to compare with."""


def reference(*command):
    try:
        return run(*command)
    except (AssertionError, UnicodeDecodeError) as error:
        raise ReferenceFailed(str(error)) from None


def kind_of(path):
    suffix = path.suffix.lower()
    for kind, suffixes in (("raster", RASTER), ("vector", VECTOR), ("mesh", MESH)):
        if suffix in suffixes:
            return kind
    return None


@functools.cache
def expectations():
    if not EXPECTATIONS.exists():
        return {}
    with open(EXPECTATIONS, "rb") as file:
        return tomllib.load(file)


def cases():
    """(relative path, kind, target) for every corpus file and target of its kind."""
    found = []
    for path in sorted(CORPUS.rglob("*")):
        kind = kind_of(path)
        if kind is None or not path.is_file():
            continue
        # GeoJSON-looking side files (e.g. expected values) sit in folders named expected/.
        if "expected" in path.relative_to(CORPUS).parts:
            continue
        # So do the sidecars of the DFS samples: `x.dfs2.json` beside `x.dfs2`.
        if path.suffix.lower() == ".json" and path.with_suffix("").is_file():
            continue
        for target in TARGETS[kind]:
            found.append((path.relative_to(CORPUS).as_posix(), kind, target))
    return found


def basin_convert(source, target, *args):
    command = [BINARY, "convert", str(source), str(target), "--force", *map(str, args)]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise BasinFailed(result.stderr.strip())
    return result


# ---- rasters -------------------------------------------------------------------------------

def raster_info(path):
    info = json.loads(run(require_tool("gdalinfo"), "-json", "-nomd", "-norat", "-noct", path))
    return {
        "size": info["size"],
        "geoTransform": info.get("geoTransform"),
        "types": [band["type"] for band in info["bands"]],
        "noData": [band.get("noDataValue") for band in info["bands"]],
        "wkt": (info.get("coordinateSystem") or {}).get("wkt") or None,
    }


def raster_values(path, info, folder, label):
    """Every cell of every band, as numpy arrays (band, row, column), read by GDAL."""
    numpy = require_module("numpy")
    raw = folder / f"{label}.raw"
    columns, rows = info["size"]
    # ENVI cannot hold a rotated geotransform; the values do not depend on it.
    run(require_tool("gdal_translate"), "-q", "-of", "ENVI", "-co", "INTERLEAVE=BSQ",
        "-a_ullr", "0", str(rows), str(columns), "0", path, raw)
    bands = []
    with open(raw, "rb") as file:
        for band_type in info["types"]:
            dtype = numpy.dtype(NUMPY_TYPES[band_type])
            data = numpy.frombuffer(file.read(dtype.itemsize * columns * rows), dtype=dtype)
            bands.append(data.reshape(rows, columns))
    return bands


def same_number(a, b):
    if a is None or b is None:
        return a is b
    a, b = float(a), float(b)
    return a == b or (math.isnan(a) and math.isnan(b))


def no_crs(wkt):
    """GDAL 3.6 sometimes reports an unnamed engineering CRS for a raster without one (an AAIGrid
    opened with DATATYPE); that is no CRS."""
    return wkt is None or wkt.startswith(('ENGCRS["unnamed"', 'LOCAL_CS["unnamed"'))


def same_crs(ours, theirs, point=None):
    """True when two WKTs state the same coordinate system: equal as PROJ compares them (axis
    order aside), or, where names, a no-op TOWGS84 or the ESRI flavour make them differ in
    form, with the same EPSG identification and a transformation from one to the other that
    leaves `point` (a position in the data) where it is."""
    if no_crs(ours) or no_crs(theirs):
        return no_crs(ours) and no_crs(theirs)
    pyproj = require_module("pyproj")
    # GDAL reads GeoJSON with z as WGS 84 3D (EPSG:4979): compare the horizontal systems.
    a, b = pyproj.CRS.from_wkt(ours).to_2d(), pyproj.CRS.from_wkt(theirs).to_2d()
    if a.equals(b, ignore_axis_order=True):
        return True
    if point is None:
        return False
    code_a, code_b = a.to_epsg(), b.to_epsg()
    if code_a is not None and code_b is not None and code_a != code_b:
        return False
    x, y = point
    moved = pyproj.Transformer.from_crs(a, b, always_xy=True).transform(x, y)
    return all(abs(m - v) <= 1e-6 + 1e-9 * abs(v) for m, v in zip(moved, (x, y)))


def close(a, b, relative=1e-9):
    return abs(a - b) <= relative * max(1.0, abs(a), abs(b))


def compare_rasters(ours, theirs, folder, tolerance=0):
    """`tolerance`: the largest difference allowed between cell values (expectations.toml,
    for lossy compression that two JPEG decoders decode differently); 0 means equal."""
    numpy = require_module("numpy")
    a, b = raster_info(ours), raster_info(theirs)
    assert a["size"] == b["size"], f"size {a['size']} != GDAL's {b['size']}"
    assert len(a["types"]) == len(b["types"]), f"{len(a['types'])} bands != GDAL's {len(b['types'])}"
    assert a["types"] == b["types"], f"band types {a['types']} != GDAL's {b['types']}"
    if a["geoTransform"] is None or b["geoTransform"] is None:
        assert a["geoTransform"] == b["geoTransform"], "geotransform present in one only"
    else:
        assert all(close(x, y) for x, y in zip(a["geoTransform"], b["geoTransform"])), \
            f"geotransform {a['geoTransform']} != GDAL's {b['geoTransform']}"
    for band, (x, y) in enumerate(zip(a["noData"], b["noData"])):
        assert same_number(x, y), f"band {band + 1} nodata {x} != GDAL's {y}"
    centre = None
    if b["geoTransform"] is not None:
        g, (columns, rows) = b["geoTransform"], b["size"]
        centre = (g[0] + g[1] * columns / 2 + g[2] * rows / 2, g[3] + g[4] * columns / 2 + g[5] * rows / 2)
    assert same_crs(a["wkt"], b["wkt"], centre), f"CRS differs:\n{a['wkt']}\nGDAL:\n{b['wkt']}"
    for band, (x, y) in enumerate(zip(raster_values(ours, a, folder, "ours"),
                                      raster_values(theirs, b, folder, "theirs"))):
        if tolerance:
            largest = int(numpy.abs(x.astype("f8") - y.astype("f8")).max()) if x.size else 0
            assert largest <= tolerance, f"band {band + 1}: values differ by up to {largest}"
            continue
        equal = (x == y) | (numpy.isnan(x) & numpy.isnan(y)) if x.dtype.kind == "f" else x == y
        differing = int(equal.size - numpy.count_nonzero(equal))
        assert differing == 0, f"band {band + 1}: {differing} of {equal.size} cells differ"


def gdal_raster_reference(source, target, output, ours):
    driver = {"tif": "GTiff", "asc": "AAIGrid"}[target]
    options = []
    # GDAL reads every non-integer ASCII Grid as Float32; Basin keeps Float64 where a value
    # needs it (docs/formats.md, ASCII Grid), which GDAL does when asked with DATATYPE.
    if source.suffix.lower() == ".asc" and "Float64" in raster_info(ours)["types"]:
        options = ["-oo", "DATATYPE=Float64"]
    reference(require_tool("gdal_translate"), "-q", *options, "-of", driver, source, output)


# ---- vectors -------------------------------------------------------------------------------

def as_geojson(path, tool=run):
    text = tool(require_tool("ogr2ogr"), "-f", "GeoJSON", "/vsistdout/", path,
               "-lco", "SIGNIFICANT_FIGURES=17", "-lco", "RFC7946=NO")
    return json.loads(text)


def vector_crs(path):
    text = run(require_tool("ogrinfo"), "-so", "-al", "-nocount", "-noextent", "-nomd", path)
    marker = "Layer SRS WKT:\n"
    if marker not in text:
        return None
    wkt = text.split(marker, 1)[1]
    lines = []
    for line in wkt.splitlines():
        if not lines and line.strip() == "(unknown)":
            return None
        if lines and not line.startswith((" ", "]")) and "[" not in line and line.strip():
            break
        lines.append(line)
        if line.startswith("]") or (line.rstrip().endswith("]") and not line.startswith(" ")):
            break
    return "\n".join(lines).strip() or None


def flatten(coordinates):
    if isinstance(coordinates, (int, float)):
        yield coordinates
        return
    for item in coordinates:
        yield from flatten(item)


def same_geometry(a, b):
    if a is None or b is None:
        return a is b
    if a.get("type") != b.get("type"):
        return False
    if a["type"] == "GeometryCollection":
        return len(a["geometries"]) == len(b["geometries"]) and all(
            same_geometry(x, y) for x, y in zip(a["geometries"], b["geometries"]))
    ours, theirs = list(flatten(a["coordinates"])), list(flatten(b["coordinates"]))
    return len(ours) == len(theirs) and all(close(x, y) for x, y in zip(ours, theirs))


def same_property(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and close(float(a), float(b), 1e-12)
    return a == b


def field_names(features):
    """Property names in order of first appearance: GDAL leaves unset properties out of a
    feature, where Basin writes null; a missing property counts as null."""
    names = {}
    for feature in features:
        for name in feature.get("properties") or {}:
            names.setdefault(name, None)
    return list(names)


def as_text(value):
    """A source value as Basin writes it into a text field: strings as they are, anything else
    (lists, objects) as compact JSON."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def compare_vectors(ours, theirs, source, lossless=()):
    """`lossless` names fields that GDAL's conversion drops or truncates and Basin keeps as text
    (expectations.toml): those are compared with the input as GDAL reads it instead."""
    a, b = as_geojson(ours), as_geojson(theirs, tool=reference)
    features_a, features_b = a["features"], b["features"]
    assert len(features_a) == len(features_b), f"{len(features_a)} features != GDAL's {len(features_b)}"
    names_a, names_b = field_names(features_a), field_names(features_b)
    assert [n for n in names_a if n not in lossless] == [n for n in names_b if n not in lossless], \
        f"fields {names_a} != GDAL's {names_b}"
    originals = as_geojson(source, tool=reference)["features"] if lossless else []
    for index, (x, y) in enumerate(zip(features_a, features_b)):
        assert same_geometry(x.get("geometry"), y.get("geometry")), \
            f"feature {index}: geometry {json.dumps(x.get('geometry'))[:300]} != GDAL's {json.dumps(y.get('geometry'))[:300]}"
        px, py = x.get("properties") or {}, y.get("properties") or {}
        for name in names_b:
            if name not in lossless:
                assert same_property(px.get(name), py.get(name)), \
                    f"feature {index}: {name} = {px.get(name)!r} != GDAL's {py.get(name)!r}"
        for name in lossless:
            original = (originals[index].get("properties") or {}).get(name)
            assert as_text(px.get(name)) == as_text(original), \
                f"feature {index}: {name} = {px.get(name)!r} != the input's {original!r}"
    positions = [list(flatten(f["geometry"]["coordinates"]))[:2] for f in features_b
                 if f.get("geometry") and f["geometry"].get("coordinates")]
    point = tuple(positions[0]) if positions and len(positions[0]) == 2 else None
    assert same_crs(vector_crs(ours), vector_crs(theirs), point), \
        f"CRS differs:\n{vector_crs(ours)}\nGDAL:\n{vector_crs(theirs)}"


def gdal_vector_reference(source, target, output):
    # Basin writes Shapefile text as UTF-8 (with a .cpg saying so); ogr2ogr's default is
    # ISO-8859-1, which turns other scripts into "?". The reference asks for UTF-8 too.
    options = ["-lco", "ENCODING=UTF-8"] if target == "shp" else []
    driver = {"geojson": "GeoJSON", "shp": "ESRI Shapefile"}[target]
    reference(require_tool("ogr2ogr"), "-f", driver, *options, output, source)


# ---- meshes --------------------------------------------------------------------------------

def mesh_of(path):
    """(points, {cell type: connectivity}, {name: cell data}) of a mesh file."""
    numpy = require_module("numpy")
    if path.suffix.lower() == ".mesh":
        mikeio = require_module("mikeio")
        geometry = mikeio.open(str(path)).geometry
        points = numpy.asarray(geometry.node_coordinates, dtype=float)
        cells = {}
        for element in geometry.element_table:
            name = {3: "triangle", 4: "quad"}[len(element)]
            cells.setdefault(name, []).append(list(element))
        return points, {k: numpy.asarray(v) for k, v in cells.items()}, {}
    meshio = require_module("meshio")
    mesh = meshio.read(str(path))
    cells = {}
    for block in mesh.cells:
        cells.setdefault(block.type, []).extend(block.data.tolist())
    data = {name: numpy.concatenate([numpy.asarray(part) for part in parts])
            for name, parts in mesh.cell_data.items()}
    return numpy.asarray(mesh.points, dtype=float), {k: numpy.asarray(v) for k, v in cells.items()}, data


def compare_meshes(ours, source):
    numpy = require_module("numpy")
    points_a, cells_a, data_a = mesh_of(ours)
    points_b, cells_b, data_b = mesh_of(source)
    assert points_a.shape[0] == points_b.shape[0], f"{points_a.shape[0]} points != {points_b.shape[0]}"
    dims = min(points_a.shape[1], points_b.shape[1])
    assert numpy.allclose(points_a[:, :dims], points_b[:, :dims], rtol=0, atol=0), "point coordinates differ"
    assert sorted(cells_a) == sorted(cells_b), f"cell types {sorted(cells_a)} != {sorted(cells_b)}"
    for name in cells_b:
        assert numpy.array_equal(cells_a[name], cells_b[name]), f"{name} connectivity differs"
    # A MIKE .mesh holds the geometry only: its items are dropped, with a note.
    compared_data = data_b if ours.suffix.lower() == ".vtu" else {}
    for name, values in compared_data.items():
        assert name in data_a, f"cell data {name} missing"
        assert numpy.array_equal(numpy.asarray(data_a[name], dtype=float).ravel(),
                                 numpy.asarray(values, dtype=float).ravel(), equal_nan=True), \
            f"cell data {name} differs"


# ---- one case ------------------------------------------------------------------------------

def check(relative, kind, target, folder):
    """Converts corpus file `relative` to `target` with Basin and compares; raises BasinFailed
    when Basin fails, AssertionError when the result differs from the reference."""
    source = CORPUS / relative
    ours = folder / f"ours.{target}"
    basin_convert(source, ours)
    if kind == "raster":
        theirs = folder / f"theirs.{target}"
        gdal_raster_reference(source, target, theirs, ours)
        entry = expectations().get(relative, {})
        compare_rasters(ours, theirs, folder, (entry.get("tolerance") or {}).get(target, 0))
    elif kind == "vector":
        theirs = folder / f"theirs.{target}"
        gdal_vector_reference(source, target, theirs)
        entry = expectations().get(relative, {})
        compare_vectors(ours, theirs, source, (entry.get("lossless") or {}).get(target, ()))
    else:
        compare_meshes(ours, source)


def expected_without_reference(relative, target):
    entry = expectations().get(relative, {})
    return (entry.get("no_reference") or {}).get(target)


def opens_in_reference_tool(kind, target, output):
    """Where GDAL cannot convert the input itself, Basin's output must at least open in it."""
    if kind == "raster":
        raster_info(output)
    elif kind == "vector":
        # Mixed geometry kinds go to one Shapefile per kind (<name>_point.shp, ...).
        parts = [output] if output.exists() else sorted(output.parent.glob(f"{output.stem}_*{output.suffix}"))
        assert parts, f"no output {output.name} and no per-kind files"
        for part in parts:
            as_geojson(part)
    else:
        mesh_of(output)


def expected_refusal(relative, target):
    entry = expectations().get(relative, {})
    return (entry.get("refused") or {}).get(target)


@pytest.mark.parametrize("relative,kind,target", cases(), ids=lambda value: str(value))
def test_corpus_file_converts_as_gdal_does(tmp_path, relative, kind, target):
    refusal = expected_refusal(relative, target)
    if refusal is None:
        try:
            check(relative, kind, target, tmp_path)
        except ReferenceFailed as error:
            if expected_without_reference(relative, target) is None:
                pytest.fail(f"GDAL cannot make the reference conversion, and expectations.toml does not say so: {error}")
            opens_in_reference_tool(kind, target, tmp_path / f"ours.{target}")
        except BasinFailed as error:
            pytest.fail(f"basin convert failed on {relative} -> {target}: {error}")
        return
    with pytest.raises(BasinFailed) as failure:
        check(relative, kind, target, tmp_path)
    assert refusal.lower() in str(failure.value).lower(), str(failure.value)
    assert not (tmp_path / f"ours.{target}").exists(), "a refused conversion left its output"


def test_every_expectation_names_a_corpus_file():
    known = {relative for relative, _, _ in cases()}
    for relative, entry in expectations().items():
        assert relative in known, f"expectations.toml names {relative}, which is not in the corpus"
        targets = [*(entry.get("refused") or {}), *(entry.get("no_reference") or {}),
                   *(entry.get("lossless") or {}), *(entry.get("tolerance") or {})]
        for target in targets:
            assert any(c == (relative, kind_of(CORPUS / relative), target) for c in cases()), \
                f"{relative}: unknown target {target}"
        assert entry.get("reason"), f"{relative}: an expectation needs a reason"


def test_every_corpus_folder_has_a_licence_and_a_readme():
    for folder in sorted(path for path in CORPUS.iterdir() if path.is_dir()):
        names = {path.name.lower() for path in folder.iterdir()}
        assert any(name.startswith(("license", "licence", "notice", "copying")) for name in names), \
            f"{folder.name} has no licence file"
        assert "readme.md" in names, f"{folder.name} has no README.md"


def main():
    import tempfile
    tally = {}
    for relative, kind, target in cases():
        with tempfile.TemporaryDirectory() as folder:
            refusal = expected_refusal(relative, target)
            try:
                check(relative, kind, target, Path(folder))
                outcome = "agree"
                detail = ""
            except BasinFailed as error:
                outcome = "refused" if refusal and refusal.lower() in str(error).lower() else "fails"
                detail = str(error).splitlines()[-1] if str(error) else ""
            except ReferenceFailed as error:
                outcome = "reference fails"
                detail = str(error).strip().splitlines()[-1] if str(error).strip() else ""
            except AssertionError as error:
                outcome = "differs"
                detail = str(error).splitlines()[0] if str(error) else ""
            except Exception as error:  # the reference tool failed: report, keep going
                outcome = "reference fails"
                detail = str(error).strip().splitlines()[-1] if str(error).strip() else ""
        tally[outcome] = tally.get(outcome, 0) + 1
        print(f"{outcome:15} {relative} -> {target} {detail[:160]}")
    print("totals:", ", ".join(f"{count} {outcome}" for outcome, count in sorted(tally.items())),
          f"of {sum(tally.values())}")


if __name__ == "__main__":
    sys.exit(main())
