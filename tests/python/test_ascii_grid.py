"""ESRI ASCII Grid through `basin convert` (asc -> asc), compared with GDAL's AAIGrid driver
(Debian gdal-bin): GDAL reads the input and Basin's output, and both must give the same size,
geotransform (exactly), nodata value, data type and cell values (exactly, via
`gdal_translate -of XYZ`, which prints 18 significant digits).

Inputs are generated here: integer, float32 (shortest decimals, and GDAL's own `%.20g` output),
float64, centre coordinates, rectangular cells (dx/dy), nan nodata, and an ESRI .prj.

GDAL reads every non-integer grid as Float32 unless told otherwise; Basin keeps Float64 where a
value needs it. Float64 grids are therefore compared with `-oo DATATYPE=Float64` on both sides.
The agreement is printed (run pytest with -s to see it).
"""

import json
import math
import random
import struct

import pytest

from formats_support import convert, require_tool, run


def float32(value):
    return struct.unpack("<f", struct.pack("<f", value))[0]


def shortest_float32(value):
    """The shortest decimal that reads back as the float32 nearest to `value`."""
    narrow = float32(value)
    for digits in range(1, 10):
        text = f"{narrow:.{digits}g}"
        if float32(float(text)) == narrow:
            return text
    return repr(narrow)


def write_asc(path, header, rows):
    lines = [f"{key} {value}" for key, value in header]
    lines += [" ".join(row) for row in rows]
    path.write_text("\n".join(lines) + "\n")


def open_options(datatype):
    return ["-oo", f"DATATYPE={datatype}"] if datatype else []


def gdal_info(path, datatype=None):
    info = json.loads(run(require_tool("gdalinfo"), "-json", *open_options(datatype), path))
    band = info["bands"][0]
    return {
        "size": info["size"],
        "geoTransform": info["geoTransform"],
        "type": band["type"],
        "noDataValue": band.get("noDataValue"),
    }


def gdal_values(path, datatype=None):
    text = run(require_tool("gdal_translate"), "-q", *open_options(datatype), "-of", "XYZ", path, "/vsistdout/")
    return [line.split()[2] for line in text.splitlines() if line.strip()]


def same_value(a, b):
    x, y = float(a), float(b)
    return x == y or (math.isnan(x) and math.isnan(y))


def compare_with_gdal(source, ours, label, datatype=None):
    """Asserts that GDAL reads `ours` exactly as it reads `source`; returns the cell count."""
    theirs_info = gdal_info(source, datatype)
    ours_info = gdal_info(ours, datatype)
    assert ours_info["size"] == theirs_info["size"], label
    assert ours_info["geoTransform"] == theirs_info["geoTransform"], label
    assert ours_info["type"] == theirs_info["type"], label
    nodata_theirs, nodata_ours = theirs_info["noDataValue"], ours_info["noDataValue"]
    assert (nodata_theirs is None) == (nodata_ours is None), label
    if nodata_theirs is not None:
        assert same_value(nodata_ours, nodata_theirs), (label, nodata_ours, nodata_theirs)
    values_theirs = gdal_values(source, datatype)
    values_ours = gdal_values(ours, datatype)
    assert len(values_ours) == len(values_theirs), label
    same = sum(1 for a, b in zip(values_ours, values_theirs) if same_value(a, b))
    print(f"{label}: {same}/{len(values_theirs)} cells agree with GDAL, type {ours_info['type']}")
    assert same == len(values_theirs), label
    return ours_info


def grid_rows(columns, rows, value):
    return [[value(column, row) for column in range(columns)] for row in range(rows)]


RNG = random.Random(20240611)

CASES = {
    "int32": (
        [("ncols", 40), ("nrows", 30), ("xllcorner", 500000), ("yllcorner", 6000000), ("cellsize", 25),
         ("NODATA_value", -9999)],
        lambda c, r: "-9999" if (c * r) % 17 == 3 else str(RNG.randint(-2**31, 2**31 - 1)),
        None, "Int32",
    ),
    "float32_shortest": (
        [("NCOLS", 37), ("NROWS", 23), ("XLLCORNER", 0.1), ("YLLCORNER", 0.2), ("CELLSIZE", 0.3),
         ("NODATA_value", -3.402823466e38)],
        lambda c, r: "-3.402823466e+38" if (c + r) % 11 == 0 else shortest_float32(RNG.uniform(-1e4, 1e4)),
        None, "Float32",
    ),
    "float32_tiny_and_huge": (
        [("ncols", 20), ("nrows", 20), ("xllcorner", -180), ("yllcorner", -90), ("cellsize", 9)],
        lambda c, r: shortest_float32(RNG.choice([1e-40, 1e-30, 3e38, -2.5e-12]) * RNG.uniform(0.5, 1.0)),
        None, "Float32",
    ),
    "float64": (
        [("ncols", 31), ("nrows", 17), ("xllcorner", 123456.789), ("yllcorner", -45.5), ("cellsize", 0.001),
         ("NODATA_value", -1e300)],
        lambda c, r: "-1e300" if c == r else repr(RNG.uniform(-1e6, 1e6)),
        "Float64", "Float64",
    ),
    "centre": (
        [("ncols", 12), ("nrows", 9), ("xllcenter", 9.05), ("yllcenter", 54.05), ("cellsize", 0.1)],
        lambda c, r: str(r * 12 + c),
        None, "Int32",
    ),
    "dx_dy": (
        [("ncols", 15), ("nrows", 8), ("xllcorner", 7.5), ("yllcorner", 47.25), ("dx", 0.125), ("dy", 0.0625)],
        lambda c, r: shortest_float32(c * 0.5 - r * 0.25),
        None, "Float32",
    ),
    "nan_nodata": (
        [("ncols", 10), ("nrows", 10), ("xllcorner", 0), ("yllcorner", 0), ("cellsize", 1), ("NODATA_value", "nan")],
        # GDAL before 3.8 loses a first data line that starts with "nan"; later lines may.
        lambda c, r: "nan" if c == r + 1 or (c == 0 and r > 0) else f"{c}.{r}",
        None, "Float32",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_ascii_grid_round_trip_reads_in_gdal_as_the_input(tmp_path, case):
    header, value, datatype, expected_type = CASES[case]
    columns = dict((key.lower(), v) for key, v in header)["ncols"]
    rows = dict((key.lower(), v) for key, v in header)["nrows"]
    source = tmp_path / f"{case}.asc"
    write_asc(source, header, grid_rows(columns, rows, value))
    ours = tmp_path / f"{case}_basin.asc"
    convert(source, ours)
    info = compare_with_gdal(source, ours, case, datatype)
    assert info["type"] == expected_type


def test_gdal_written_float32_grid_round_trips_exactly(tmp_path):
    """GDAL writes float32 cells as `%.20g` (the exact binary value); Basin reads them as
    Float32 and writes the shortest form, which GDAL reads back to the same floats."""
    require_tool("gdal_translate")
    seed = tmp_path / "seed.asc"
    write_asc(
        seed,
        [("ncols", 50), ("nrows", 40), ("xllcorner", 300000), ("yllcorner", 5000000), ("cellsize", 30),
         ("NODATA_value", -9999)],
        grid_rows(50, 40, lambda c, r: "-9999" if c == 7 else f"{RNG.uniform(-500, 3000):.3f}"),
    )
    gdal_written = tmp_path / "gdal.asc"
    run("gdal_translate", "-q", "-of", "AAIGrid", seed, gdal_written)
    assert "." in gdal_written.read_text().splitlines()[7]
    ours = tmp_path / "basin.asc"
    convert(gdal_written, ours)
    assert compare_with_gdal(gdal_written, ours, "gdal %.20g float32")["type"] == "Float32"
    # Basin's text is shorter: shortest decimals instead of 20 digits.
    assert ours.stat().st_size < gdal_written.stat().st_size * 0.6


def test_gdal_reads_basins_header_exactly_after_a_centre_to_corner_rewrite(tmp_path):
    source = tmp_path / "in.asc"
    write_asc(
        source,
        [("ncols", 3), ("nrows", 7), ("xllcenter", 0.1), ("yllcenter", 0.1), ("dx", 0.3), ("dy", 0.7)],
        grid_rows(3, 7, lambda c, r: str(c + r)),
    )
    ours = tmp_path / "out.asc"
    convert(source, ours)
    text = ours.read_text()
    assert "xllcorner" in text and "yllcorner" in text and "dx" in text and "dy" in text
    # GDAL places a centre grid with the same expressions; the corner header reproduces it.
    assert gdal_info(ours)["geoTransform"] == gdal_info(source)["geoTransform"]


def test_prj_is_read_and_written_and_gdal_sees_the_crs(tmp_path):
    gdalsrsinfo = require_tool("gdalsrsinfo")
    source = tmp_path / "utm.asc"
    write_asc(
        source,
        [("ncols", 4), ("nrows", 3), ("xllcorner", 500000), ("yllcorner", 6000000), ("cellsize", 100)],
        grid_rows(4, 3, lambda c, r: str(c * r)),
    )
    esri = run(gdalsrsinfo, "-o", "wkt_esri", "EPSG:32632").strip()
    (tmp_path / "utm.prj").write_text(esri)
    ours = tmp_path / "out.asc"
    convert(source, ours)
    assert (tmp_path / "out.prj").read_text() == esri
    info = json.loads(run("gdalinfo", "-json", ours))
    assert "UTM zone 32N" in json.dumps(info["coordinateSystem"])


def test_srid_parameter_becomes_a_prj_gdal_understands(tmp_path):
    require_tool("gdalinfo")
    source = tmp_path / "plain.asc"
    write_asc(
        source,
        [("ncols", 2), ("nrows", 2), ("xllcorner", 500000), ("yllcorner", 6000000), ("cellsize", 10)],
        [["1", "2"], ["3", "4"]],
    )
    ours = tmp_path / "out.asc"
    convert(source, ours, "-p", "SRID=25832")
    info = json.loads(run("gdalinfo", "-json", ours))
    assert "25832" in json.dumps(info["coordinateSystem"])


@pytest.mark.parametrize(
    "text,expected",
    [
        ("ncols 3\nnrows 2\nxllcorner 0\nyllcorner 0\ncellsize 1\n1 2 3\n4 5\n", "truncated"),
        ("ncols 3\nnrows 2\nxllcorner 0\nyllcorner 0\ncellsize 1\n1 2 3\n4 5 6 7\n", "more values"),
        ("ncols 3\nnrows 2\nxllcorner 0\nyllcorner 0\ncellsize 1\n1 2 3\n4 five 6\n", "line 7"),
        ("ncols 60000\nnrows 60000\nxllcorner 0\nyllcorner 0\ncellsize 1\n1\n", "ends after 1 of"),
        ("ncols 100000\nnrows 100000\nxllcorner 0\nyllcorner 0\ncellsize 1\n1\n", "over the limit"),
        ("ncols 9999999999\nnrows 9999999999\nxllcorner 0\nyllcorner 0\ncellsize 1\n1\n", "beyond any grid size"),
        ("ncols 3\nnrows 2\nxllcorner 0\nyllcorner 0\ncellsize 0\n1 2 3 4 5 6\n", "above zero"),
    ],
)
def test_broken_grids_fail_with_a_message_and_leave_no_output(tmp_path, text, expected):
    source = tmp_path / "broken.asc"
    source.write_text(text)
    ours = tmp_path / "out.asc"
    result = convert(source, ours, check=False)
    assert result.returncode == 1
    assert expected in result.stderr, result.stderr
    assert not ours.exists()
