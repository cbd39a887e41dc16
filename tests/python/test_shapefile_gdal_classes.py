"""Shapefile classes that GDAL reads in its own way, compared with ogr2ogr/ogrinfo (GDAL,
Debian gdal-bin) on files crafted here byte by byte:

- records found through the .shx: garbage after the last record, gaps between records, wrong
  content lengths in the .shp, records out of order, record numbers that do not match, .shx
  entries pointing outside the file or too short (GDAL: a null geometry), a .shx length that
  counts the record header;
- measures of M and ZM types through SHP -> SHP, "no data" measures included;
- .dbf text: a .cpg that names no code page, language driver ids, leading blanks;
- GeoJSON -> SHP: field widths as ogr2ogr sizes them, and mixed geometry types split into one
  Shapefile per type or filtered to one type (ogr2ogr -nlt).
"""

import json
import os
import pathlib
import re
import shutil
import struct
import subprocess
import zipfile

import pytest

from formats_support import convert, require_tool, run


def shp_header(words, shape_type, m_range=(0.0, 0.0)):
    header = struct.pack(">i", 9994) + b"\0" * 20 + struct.pack(">i", words)
    header += struct.pack("<ii", 1000, shape_type) + struct.pack("<4d", 0, 0, 10, 10)
    return header + struct.pack("<2d", 0, 0) + struct.pack("<2d", *m_range)


def point(x, y):
    return struct.pack("<i2d", 1, x, y)


def write_dbf(path, fields, rows, ldid=0):
    record = 1 + sum(width for _, _, width, _ in fields)
    header_bytes = 33 + 32 * len(fields)
    data = struct.pack("<BBBBIHH", 3, 120, 1, 1, len(rows), header_bytes, record)
    data += b"\0" * 17 + bytes([ldid]) + b"\0\0"
    for name, kind, width, decimals in fields:
        data += name.encode().ljust(11, b"\0") + kind.encode() + b"\0" * 4
        data += bytes([width, decimals]) + b"\0" * 14
    data += b"\r"
    for row in rows:
        data += b" "
        for (_, kind, width, _), value in zip(fields, row):
            value = value if isinstance(value, bytes) else str(value).encode()
            data += value.rjust(width) if kind in "NF" else value.ljust(width)
    path.write_bytes(data + b"\x1a")


def write_shapefile(base, shape_type, contents, gaps=None, numbers=None, garbage=b"",
                    m_range=(0.0, 0.0)):
    """Writes base.shp/.shx/.dbf; returns the .shx entries (offset, length) in words."""
    body = b""
    entries = []
    for index, content in enumerate(contents):
        body += gaps[index] if gaps else b""
        number = numbers[index] if numbers else index + 1
        entries.append(((100 + len(body)) // 2, len(content) // 2))
        body += struct.pack(">ii", number, len(content) // 2) + content
    body += garbage
    base.with_suffix(".shp").write_bytes(shp_header((100 + len(body)) // 2, shape_type, m_range) + body)
    write_shx(base, shape_type, entries)
    write_dbf(base.with_suffix(".dbf"), [("ID", "N", 5, 0)], [[index] for index in range(len(contents))])
    return entries


def write_shx(base, shape_type, entries, count=None):
    count = len(entries) if count is None else count
    data = shp_header(50 + 4 * count, shape_type)
    data += b"".join(struct.pack(">ii", offset, length) for offset, length in entries)
    base.with_suffix(".shx").write_bytes(data)


def geojson_features(path):
    """(geometry, properties) of each feature of `path` as ogr2ogr writes it to GeoJSON."""
    ogr2ogr = require_tool("ogr2ogr")
    document = json.loads(run(ogr2ogr, "-f", "GeoJSON", "/vsistdout/", path))
    return [(feature["geometry"], feature["properties"]) for feature in document["features"]]


def basin_features(path, tmp_path):
    output = tmp_path / "basin.geojson"
    convert(path, output)
    return geojson_features(output)


def records_layouts(tmp_path):
    """Name -> .shp path of each class of file whose records the .shx delimits."""
    points = [point(index, index * 2) for index in range(3)]
    files = {}

    def make(name, **options):
        base = tmp_path / name
        entries = write_shapefile(base, 1, options.pop("contents", points), **options)
        files[name] = base.with_suffix(".shp")
        return base, entries

    make("garbage", garbage=b"\xde\xad\xbe\xef" * 5)
    make("gaps", gaps=[b"", b"\0" * 12, b"XXXXXXXX"])
    make("record_numbers", numbers=[1, 7, 3])
    base, entries = make("bad_content_length")
    shp = bytearray(base.with_suffix(".shp").read_bytes())
    shp[104:108] = struct.pack(">i", 999)
    base.with_suffix(".shp").write_bytes(bytes(shp))
    base, entries = make("out_of_order", contents=[points[2], points[0], points[1]], numbers=[3, 1, 2])
    write_shx(base, 1, [entries[1], entries[2], entries[0]])
    base, entries = make("outside")
    write_shx(base, 1, [entries[0], (100000, entries[1][1]), entries[2]])
    base, entries = make("shx_too_short")
    write_shx(base, 1, [entries[0], (entries[1][0], 4), entries[2]])
    base, entries = make("shx_counts_header")
    write_shx(base, 1, [(offset, length + 4) for offset, length in entries])
    base, entries = make("shx_counts_fewer")
    write_shx(base, 1, entries[:2])
    return files


@pytest.mark.parametrize("name", [
    "garbage", "gaps", "record_numbers", "bad_content_length", "out_of_order", "outside",
    "shx_too_short", "shx_counts_header", "shx_counts_fewer",
])
def test_records_are_found_through_the_shx_as_gdal_finds_them(tmp_path, name):
    path = records_layouts(tmp_path)[name]
    assert basin_features(path, tmp_path) == geojson_features(path)


@pytest.mark.parametrize("name", ["garbage", "out_of_order"])
def test_a_zipped_shapefile_follows_its_shx_too(tmp_path, name):
    path = records_layouts(tmp_path)[name]
    zipped = tmp_path / f"{name}.zip"
    with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED) as archive:
        for suffix in (".shp", ".shx", ".dbf"):
            archive.write(path.with_suffix(suffix), path.with_suffix(suffix).name)
    assert basin_features(zipped, tmp_path) == geojson_features(path)


def test_without_a_shx_gdal_refuses_and_basin_reads_the_records_in_sequence(tmp_path):
    path = records_layouts(tmp_path)["gaps"]
    clean = tmp_path / "clean"
    write_shapefile(clean, 1, [point(index, index * 2) for index in range(3)])
    clean.with_suffix(".shx").unlink()
    ogrinfo = require_tool("ogrinfo")
    refused = run_status(ogrinfo, "-q", "-al", clean.with_suffix(".shp"))
    assert refused.returncode != 0 and "shx" in refused.stderr
    assert [geometry for geometry, _ in basin_features(clean.with_suffix(".shp"), tmp_path)] == [
        {"type": "Point", "coordinates": [float(i), float(i * 2)]} for i in range(3)]
    path.with_suffix(".shx").unlink()
    result = convert(path, tmp_path / "gaps.geojson", check=False)
    assert result.returncode != 0 and "no .shx" in result.stderr


def run_status(*command):
    return subprocess.run([str(part) for part in command], capture_output=True, text=True)


def measured_line(shape_type, z, m):
    content = struct.pack("<i4dii", shape_type, 0, 0, 1, 1, 1, 2) + struct.pack("<i", 0)
    content += struct.pack("<4d", 0, 0, 1, 1)
    if z is not None:
        content += struct.pack("<2d", min(z), max(z)) + struct.pack("<2d", *z)
    if m is not None:
        content += struct.pack("<2d", 0, 0) + struct.pack("<2d", *m)
    return content


def wkt_geometries(path):
    ogrinfo = require_tool("ogrinfo")
    text = run(ogrinfo, "-q", "-al", path)
    geometries = re.findall(
        r"^  ((?:POINT|LINESTRING|POLYGON|MULTIPOINT|MULTILINESTRING|MULTIPOLYGON)[^\n]*)$", text,
        flags=re.MULTILINE)
    assert geometries, f"no geometry in {path}"
    return geometries


def geometry_type(path):
    ogrinfo = require_tool("ogrinfo")
    return re.search(r"^Geometry: (.*)$", run(ogrinfo, "-so", "-al", path), flags=re.MULTILINE).group(1)


@pytest.mark.parametrize("name,shape_type,contents", [
    ("point_zm", 11, [struct.pack("<i4d", 11, 1, 2, 3, 4), struct.pack("<i4d", 11, 1, 2, 3, -1e39)]),
    ("point_m", 21, [struct.pack("<i3d", 21, 1, 2, 4), struct.pack("<i3d", 21, 1, 2, -1e39)]),
    ("point_z", 11, [struct.pack("<i3d", 11, 1, 2, 3)]),
    ("line_zm", 13, [measured_line(13, [1, 2], [5, -1e39])]),
    ("line_z", 13, [measured_line(13, [1, 2], None)]),
    ("line_m", 23, [measured_line(23, None, [5, -1e39])]),
])
def test_measures_survive_shp_to_shp_as_in_ogr2ogr(tmp_path, name, shape_type, contents):
    base = tmp_path / name
    write_shapefile(base, shape_type, contents, m_range=(0.0, 5.0))
    source = base.with_suffix(".shp")
    ours = tmp_path / "out" / f"{name}.shp"
    ours.parent.mkdir()
    convert(source, ours)
    ogr2ogr = require_tool("ogr2ogr")
    theirs = tmp_path / "gdal" / f"{name}.shp"
    theirs.parent.mkdir()
    run(ogr2ogr, theirs, source)
    assert wkt_geometries(ours) == wkt_geometries(theirs) == wkt_geometries(source)
    assert geometry_type(ours) == geometry_type(theirs)


@pytest.mark.parametrize("cpg,ldid,raw", [
    ("<!DOCTYPE html><html>", 0xC9, "Zürich, Genève".encode()),
    ("not-a-code-page", 0, "Łódź".encode()),
    (None, 0, "Ærø".encode()),
    (None, 0x01, b"\x81\x9a"),
    (None, 0x02, b"\x9b\xd0"),
    (None, 0x64, b"\x85\xa5"),
    (None, 0x26, b"\x80\x81"),
    (None, 0xC8, b"\x8a\x9a"),
    (None, 0x57, b"\xe9\xe8"),
    ("850", 0, b"\x9b"),
    ("ANSI 1251", 0, b"\xc0\xc1"),
])
def test_dbf_text_decodes_as_gdal_decodes_it(tmp_path, cpg, ldid, raw):
    base = tmp_path / "text"
    write_shapefile(base, 1, [point(0, 0)])
    write_dbf(base.with_suffix(".dbf"), [("T", "C", 30, 0)], [[raw]], ldid=ldid)
    if cpg is not None:
        base.with_suffix(".cpg").write_text(cpg)
    path = base.with_suffix(".shp")
    assert basin_features(path, tmp_path) == geojson_features(path)


def test_text_loses_leading_blanks_and_numbers_their_padding(tmp_path):
    base = tmp_path / "blanks"
    write_shapefile(base, 1, [point(0, 0), point(1, 1)])
    fields = [("T", "C", 10, 0), ("N", "N", 8, 0), ("F", "N", 10, 3)]
    write_dbf(base.with_suffix(".dbf"), fields,
              [[b"  ab  c  ", b"  12    ", b"  1.500   "], [b"          ", b"   -7", b"2.25"]])
    path = base.with_suffix(".shp")
    ours = basin_features(path, tmp_path)
    assert ours == geojson_features(path)
    assert ours[0][1]["T"] == "ab  c"


def dbf_fields(path):
    data = path.read_bytes()
    count = (struct.unpack("<H", data[8:10])[0] - 33) // 32
    return [(data[32 + 32 * i:43 + 32 * i].rstrip(b"\0").decode(), chr(data[43 + 32 * i]),
             data[48 + 32 * i], data[49 + 32 * i]) for i in range(count)]


def test_geojson_fields_get_the_widths_ogr2ogr_gives(tmp_path):
    properties = [
        {"s5": "abcde", "s100": "x" * 100, "s300": "y" * 300, "i": 12, "i32": -2147483648,
         "big": 12345678901, "r": 1.5, "none": None},
        {"s5": "ab", "s100": "x", "s300": "y", "i": 123456, "i32": 1,
         "big": -123456789012345678, "r": 123456.125, "none": None},
    ]
    source = tmp_path / "fields.geojson"
    source.write_text(json.dumps({"type": "FeatureCollection", "features": [
        {"type": "Feature", "properties": values, "geometry": {"type": "Point", "coordinates": [0, 0]}}
        for values in properties]}))
    ours = tmp_path / "ours.shp"
    convert(source, ours)
    ogr2ogr = require_tool("ogr2ogr")
    theirs = tmp_path / "theirs.shp"
    run(ogr2ogr, theirs, source)
    assert dbf_fields(ours.with_suffix(".dbf")) == dbf_fields(theirs.with_suffix(".dbf"))
    assert geojson_features(ours) == geojson_features(theirs)


def mixed_geojson(tmp_path):
    geometries = [
        None,
        {"type": "LineString", "coordinates": [[0, 0], [1, 1]]},
        {"type": "Point", "coordinates": [0, 0]},
        {"type": "Polygon", "coordinates": [[[0, 0], [0, 1], [1, 1], [1, 0], [0, 0]]]},
        {"type": "MultiLineString", "coordinates": [[[0, 0], [1, 1]], [[2, 2], [3, 3]]]},
        {"type": "MultiPoint", "coordinates": [[2, 2], [3, 3]]},
        {"type": "MultiPolygon", "coordinates": [[[[5, 5], [5, 6], [6, 6], [6, 5], [5, 5]]]]},
        {"type": "Point", "coordinates": [4, 4]},
    ]
    source = tmp_path / "mixed.geojson"
    source.write_text(json.dumps({"type": "FeatureCollection", "features": [
        {"type": "Feature", "properties": {"n": index}, "geometry": geometry}
        for index, geometry in enumerate(geometries)]}))
    return source


def gdal_layer(source, tmp_path, name, *options):
    """ogr2ogr of `source` to a Shapefile with `options` and -skipfailures, as GeoJSON."""
    ogr2ogr = require_tool("ogr2ogr")
    output = tmp_path / "gdal" / f"{name}.shp"
    output.parent.mkdir(exist_ok=True)
    run_status(ogr2ogr, "-skipfailures", *options, output, source)
    return geojson_features(output)


def test_mixed_types_are_split_as_ogr2ogr_users_split_them(tmp_path):
    source = mixed_geojson(tmp_path)
    output = tmp_path / "ours" / "mixed.zip"
    output.parent.mkdir()
    result = convert(source, output)
    with zipfile.ZipFile(output) as archive:
        names = sorted(archive.namelist())
        archive.extractall(tmp_path / "ours")
    assert {name for name in names if name.endswith(".shp")} == {
        "mixed_linestring.shp", "mixed_point.shp", "mixed_polygon.shp", "mixed_multipoint.shp"}
    assert "several geometry types" in result.stdout + result.stderr
    # ogr2ogr users split with -where on OGR_GEOMETRY and -nlt, one run per type.
    expected = {
        "linestring": gdal_layer(source, tmp_path, "line", "-where",
                                 "OGR_GEOMETRY IN ('LINESTRING','MULTILINESTRING')", "-nlt", "MULTILINESTRING"),
        "point": gdal_layer(source, tmp_path, "point", "-where", "OGR_GEOMETRY='POINT'", "-nlt", "POINT"),
        "polygon": gdal_layer(source, tmp_path, "polygon", "-where",
                              "OGR_GEOMETRY IN ('POLYGON','MULTIPOLYGON')", "-nlt", "MULTIPOLYGON"),
        "multipoint": gdal_layer(source, tmp_path, "multipoint", "-where",
                                 "OGR_GEOMETRY='MULTIPOINT'", "-nlt", "MULTIPOINT"),
    }
    for kind, theirs in expected.items():
        ours = geojson_features(tmp_path / "ours" / f"mixed_{kind}.shp")
        # Basin puts features without geometry in the first file (the first type met).
        if kind == "linestring":
            assert ours[0] == (None, {"n": 0})
            ours = ours[1:]
        assert ours == theirs, kind


@pytest.mark.parametrize("kind,kept", [
    ("POINT", "'POINT'"),
    ("MULTIPOINT", "'POINT','MULTIPOINT'"),
    ("LINESTRING", "'LINESTRING','MULTILINESTRING'"),
    ("POLYGON", "'POLYGON','MULTIPOLYGON'"),
])
def test_one_type_is_picked_like_ogr2ogr_nlt_on_the_features_of_that_type(tmp_path, kind, kept):
    """ogr2ogr -nlt also converts other types (a polygon's boundary becomes a line); Basin
    keeps the features of the type picked (a Point counts as a MultiPoint) and skips the
    others, so the comparison is with ogr2ogr given only those features."""
    source = mixed_geojson(tmp_path)
    ours = tmp_path / "ours.shp"
    result = convert(source, ours, "-w", f"GeometryType={kind}")
    assert "skipped" in result.stdout + result.stderr
    theirs = gdal_layer(source, tmp_path, kind.lower(), "-where", f"OGR_GEOMETRY IN ({kept})", "-nlt", kind)
    features = geojson_features(ours)
    assert features[0] == (None, {"n": 0}), "features without geometry are kept"
    assert features[1:] == theirs
    assert geometry_type(ours) == geometry_type(tmp_path / "gdal" / f"{kind.lower()}.shp")


ROOT_CORPUS = pathlib.Path(__file__).resolve().parents[1] / "corpus"
CORPUS_SHAPEFILES = sorted(
    str(path.relative_to(ROOT_CORPUS))
    for folder in ("shapefile-js", "shapelib", "pyshp")
    for path in (ROOT_CORPUS / folder).glob("*.shp")
)
# Deliberate differences (docs/formats.md): GDAL 3.6 reads no `ANSI 1250` .cpg and passes the
# bytes through; without a code page it passes Latin-1 bytes through where Basin decodes
# windows-1252. The comparison gives GDAL the code page Basin reads.
CORPUS_CODE_PAGES = {"shapefile-js/codepage.shp": "1250", "pyshp/latin1.shp": "1252"}


@pytest.mark.parametrize("name", CORPUS_SHAPEFILES)
def test_corpus_shapefiles_read_as_gdal_reads_them(tmp_path, name):
    source = ROOT_CORPUS / name
    ours = basin_features(source, tmp_path)
    copy = tmp_path / "gdal"
    copy.mkdir()
    for part in source.parent.glob(source.stem + ".*"):
        shutil.copy(part, copy / part.name)
    if name in CORPUS_CODE_PAGES:
        (copy / (source.stem + ".cpg")).write_text(CORPUS_CODE_PAGES[name])
    # Without a .shx GDAL needs to be told to rebuild it (Basin reads the records in sequence).
    environment = dict(os.environ)
    if not source.with_suffix(".shx").exists():
        environment["SHAPE_RESTORE_SHX"] = "YES"
    ogr2ogr = require_tool("ogr2ogr")
    text = subprocess.run([ogr2ogr, "-f", "GeoJSON", "/vsistdout/", str(copy / source.name)],
                          capture_output=True, text=True, env=environment, check=True).stdout
    theirs = [(feature["geometry"], feature["properties"]) for feature in json.loads(text)["features"]]
    assert ours == theirs


@pytest.mark.parametrize("wkt", [
    "POINT ZM (1 2 3 4)",
    "POINT M (1 2 4)",
    "MULTIPOINT ZM ((1 2 3 4),(5 6 7 -1e39))",
    "MULTIPOINT M ((1 2 4),(5 6 8))",
    "LINESTRING ZM (0 0 1 5,1 1 2 6)",
    "MULTILINESTRING M ((0 0 5,1 1 6),(2 2 7,3 3 8))",
    "POLYGON ZM ((0 0 1 1,0 10 1 2,10 10 1 3,10 0 1 4,0 0 1 1),(2 2 1 5,4 2 1 6,4 4 1 7,2 4 1 8,2 2 1 5))",
    "MULTIPOLYGON M (((0 0 1,0 1 2,1 1 3,1 0 4,0 0 1)),((5 5 1,5 6 2,6 6 3,6 5 4,5 5 1)))",
])
def test_measures_written_by_gdal_survive_shp_to_shp(tmp_path, wkt):
    """Shapefiles of every measured type written by ogr2ogr (from WKT in CSV), converted by
    Basin to Shapefile and read back by ogrinfo: the same geometries with their measures."""
    csv = tmp_path / "source.csv"
    csv.write_text(f'id,WKT\n1,"{wkt}"\n')
    ogr2ogr = require_tool("ogr2ogr")
    source = tmp_path / "gdal" / "measured.shp"
    source.parent.mkdir()
    geometry = wkt.split(" (")[0].replace(" ZM", "ZM").replace(" M", "M").replace(" ", "")
    run(ogr2ogr, "-nlt", geometry, source, csv)
    ours = tmp_path / "basin" / "measured.shp"
    ours.parent.mkdir()
    convert(source, ours)
    assert wkt_geometries(ours) == wkt_geometries(source)
    assert geometry_type(ours) == geometry_type(source)
