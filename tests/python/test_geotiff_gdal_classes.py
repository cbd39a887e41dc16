"""Classes of GeoTIFF from issue 11, read by Basin and compared with GDAL:

- JPEG compression (grey, RGB, YCbCr with 2x2 subsampling read as RGB; tiled, striped and
  planar; real cloud-optimised files with overviews): values against GDAL's decoding;
  12-bit JPEG, old-style JPEG, LZMA and WebP refused with a message naming them;
- a user-defined projected system whose ProjectionGeoKey names an EPSG conversion (UTM zones,
  US state plane zones in feet and metres): the .prj Basin writes describes what GDAL reads;
- an ArcGIS WKT in PCSCitationGeoKey as the only CRS;
- polar stereographic (both variants) and Lambert azimuthal equal-area: read, written back as
  GDAL writes them, and reprojected like gdaltransform (1e-6 m) and gdalwarp -et 0;
- a grid without a CRS written to GeoTIFF carries no GeoKeys GDAL could read as a CRS.
"""

import json
import math
import os
import struct
import subprocess

import pytest

from formats_support import ROOT, convert, require_tool, run
from test_formats_crs import compare_grids, write_asc

CORPUS = os.path.join(ROOT, "tests", "corpus")


def basin(source, target, *args):
    result = convert(source, target, *args, check=False)
    if result.returncode != 0:
        raise AssertionError(f"basin convert {source} {target} {args} failed:\n{result.stderr}")
    return result


def raw_bands(path, tmp_path, label):
    """GDAL's decoding of `path`, as bytes band after band."""
    target = tmp_path / f"{label}.raw"
    run("gdal_translate", "-q", "-of", "ENVI", "-co", "INTERLEAVE=BSQ", path, target)
    return target.read_bytes()


def largest_difference(ours, theirs):
    assert len(ours) == len(theirs)
    return max((abs(a - b) for a, b in zip(ours, theirs)), default=0)


def smooth_rgb_vrt(tmp_path, columns=300, rows=200):
    """A VRT over a raw RGB image like aerial imagery: smooth gradients and gentle texture."""
    pixels = bytearray()
    for band in range(3):
        for row in range(rows):
            for column in range(columns):
                value = 128 + 60 * math.sin(column / (17.0 + band * 5)) * math.cos(row / 23.0) \
                    + 30 * math.sin((column + row) / 7.0 + band)
                pixels.append(max(0, min(255, int(value))))
    raw = tmp_path / "rgb.raw"
    raw.write_bytes(bytes(pixels))
    bands = "".join(
        f'<VRTRasterBand dataType="Byte" band="{band + 1}" subClass="VRTRawRasterBand">'
        f'<SourceFilename relativetoVRT="0">{raw}</SourceFilename>'
        f'<ImageOffset>{band * columns * rows}</ImageOffset><PixelOffset>1</PixelOffset>'
        f'<LineOffset>{columns}</LineOffset></VRTRasterBand>'
        for band in range(3))
    vrt = tmp_path / "rgb.vrt"
    vrt.write_text(f'<VRTDataset rasterXSize="{columns}" rasterYSize="{rows}"><SRS>EPSG:32632</SRS>'
                   f'<GeoTransform>500000, 10, 0, 5000000, 0, -10</GeoTransform>{bands}</VRTDataset>')
    return vrt


JPEG_CASES = [
    # name, creation options, bands taken, largest difference allowed
    ("grey_tiled", ["-co", "TILED=YES", "-co", "BLOCKXSIZE=128", "-co", "BLOCKYSIZE=64"], ["-b", "1"], 1),
    ("grey_strips", [], ["-b", "1"], 1),
    ("rgb_strips", [], [], 1),
    ("rgb_planar_tiled", ["-co", "INTERLEAVE=BAND", "-co", "TILED=YES"], [], 1),
    ("ycbcr_tiled", ["-co", "PHOTOMETRIC=YCBCR", "-co", "TILED=YES"], [], 4),
    ("ycbcr_strips", ["-co", "PHOTOMETRIC=YCBCR"], [], 4),
    ("ycbcr_quality_95", ["-co", "PHOTOMETRIC=YCBCR", "-co", "JPEG_QUALITY=95", "-co", "TILED=YES"], [], 4),
]


@pytest.mark.parametrize("name,options,bands,bound", JPEG_CASES, ids=[case[0] for case in JPEG_CASES])
def test_jpeg_geotiffs_read_as_gdal_decodes_them(tmp_path, name, options, bands, bound):
    require_tool("gdal_translate")
    source = tmp_path / f"{name}.tif"
    run("gdal_translate", "-q", *bands, "-co", "COMPRESS=JPEG", *options, smooth_rgb_vrt(tmp_path), source)
    ours = tmp_path / f"{name}_basin.tif"
    basin(source, ours)
    theirs_info = json.loads(run("gdalinfo", "-json", source))
    ours_info = json.loads(run("gdalinfo", "-json", ours))
    assert ours_info["size"] == theirs_info["size"]
    assert ours_info["geoTransform"] == theirs_info["geoTransform"]
    assert len(ours_info["bands"]) == len(theirs_info["bands"])
    assert largest_difference(raw_bands(ours, tmp_path, "ours"), raw_bands(source, tmp_path, "gdal")) <= bound


@pytest.mark.parametrize("name", ["cogeo.tif", "goes.tif"])
def test_real_jpeg_geotiffs_read_as_gdal_decodes_them(tmp_path, name):
    require_tool("gdal_translate")
    source = os.path.join(CORPUS, "rasterio", name)
    ours = tmp_path / "ours.tif"
    basin(source, ours)
    # YCbCr with 2x2 subsampling: libjpeg's "fancy" chroma upsampling and zune-jpeg's differ
    # by up to 4 on these images (docs/formats.md, GeoTIFF).
    assert largest_difference(raw_bands(ours, tmp_path, "ours"), raw_bands(source, tmp_path, "gdal")) <= 4


def with_compression(source, target, code):
    """A copy of little-endian classic TIFF `source` whose SHORT Compression is `code`."""
    data = bytearray(open(source, "rb").read())
    entry = data.find(bytes([0x03, 0x01, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00]))
    assert entry >= 0
    data[entry + 8:entry + 10] = struct.pack("<H", code)
    target.write_bytes(bytes(data))
    return target


def test_compressions_basin_does_not_decode_are_refused_by_name(tmp_path):
    require_tool("gdal_translate")
    grey = tmp_path / "grey.tif"
    run("gdal_translate", "-q", "-b", "1", "-co", "COMPRESS=JPEG", smooth_rgb_vrt(tmp_path), grey)
    lzma = tmp_path / "lzma.tif"
    run("gdal_translate", "-q", "-co", "COMPRESS=LZMA", grey, lzma)
    webp = tmp_path / "webp.tif"
    run("gdal_translate", "-q", "-co", "COMPRESS=WEBP", smooth_rgb_vrt(tmp_path), webp)
    cases = [
        (lzma, "LZMA"),
        (webp, "WebP"),
        (with_compression(grey, tmp_path / "old_jpeg.tif", 6), "old-style JPEG"),
        (os.path.join(ROOT, "crates/formats/tests/fixtures/geotiff/jpeg_12bit.tif"), "12-bit"),
    ]
    for path, name in cases:
        result = convert(path, tmp_path / "out.tif", check=False)
        assert result.returncode != 0 and name in result.stderr, (path, result.stderr)


# --- Coordinate systems -------------------------------------------------------------------


def geotiff_with_keys(path, shorts, doubles=(), origin=(500000.0, 500000.0), cell=100.0):
    """A 6 x 4 Byte GeoTIFF with the GeoKeys given ((id, value) SHORTs, (id, value) DOUBLEs), as
    older writers made them (GDAL cannot write a ProjectionGeoKey with a state plane code)."""
    columns, rows = 6, 4
    keys = [(key, 0, 1, value) for key, value in shorts]
    params = []
    for key, value in doubles:
        keys.append((key, 34736, 1, len(params)))
        params.append(value)
    keys.sort()
    directory = [1, 1, 0, len(keys)] + [value for entry in keys for value in entry]
    tags = [  # tag, type (3 SHORT, 4 LONG, 12 DOUBLE), values
        (256, 3, [columns]), (257, 3, [rows]), (258, 3, [8]), (259, 3, [1]), (262, 3, [1]),
        (273, 4, [0]), (277, 3, [1]), (278, 3, [rows]), (279, 4, [columns * rows]),
        (33550, 12, [cell, cell, 0.0]), (33922, 12, [0, 0, 0, origin[0], origin[1], 0]),
        (34735, 3, directory),
    ]
    if params:
        tags.append((34736, 12, params))
    sizes = {3: 2, 4: 4, 12: 8}
    formats = {3: "H", 4: "I", 12: "d"}
    ifd_size = 2 + 12 * len(tags) + 4
    extra = bytearray()
    data_offset = 8 + ifd_size
    # Values that do not fit in 4 bytes go after the IFD, then the pixels.
    long_values = sum(len(values) * sizes[kind] for _, kind, values in tags if len(values) * sizes[kind] > 4)
    pixel_offset = data_offset + long_values
    entries = bytearray(struct.pack("<H", len(tags)))
    for tag, kind, values in tags:
        if tag == 273:
            values = [pixel_offset]
        packed = struct.pack("<" + formats[kind] * len(values), *values)
        if len(packed) <= 4:
            field = packed.ljust(4, b"\0")
        else:
            field = struct.pack("<I", data_offset + len(extra))
            extra += packed
        entries += struct.pack("<HHI", tag, kind, len(values)) + field
    entries += struct.pack("<I", 0)
    pixels = bytes((index * 7) % 251 for index in range(columns * rows))
    path.write_bytes(b"II*\0" + struct.pack("<I", 8) + bytes(entries) + bytes(extra) + pixels)
    return path


def geographic_corners(path_or_definition, corners):
    """`corners` ("x y" lines) in EPSG:4326 through GDAL, from the system of a file or WKT."""
    definition = path_or_definition
    if os.path.exists(str(path_or_definition)):
        definition = run("gdalsrsinfo", "-o", "wkt1", path_or_definition).strip()
    text = run("gdaltransform", "-s_srs", definition, "-t_srs", "EPSG:4326", input=corners)
    return [float(value) for line in text.splitlines() for value in line.split()[:2]]


def assert_prj_and_round_trip_agree_with_gdal(source, tmp_path, corners):
    """The .prj Basin writes for `source` describes the system GDAL reads from it, and
    GeoTIFF -> GeoTIFF keeps that system."""
    expected = geographic_corners(source, corners)
    prj = None
    if len(json.loads(run("gdalinfo", "-json", source))["bands"]) == 1:  # ASCII Grid: one band
        out = tmp_path / "out.asc"
        basin(source, out)
        prj = (tmp_path / "out.prj").read_text()
        for a, b in zip(geographic_corners(prj, corners), expected):
            assert math.isclose(a, b, abs_tol=1e-9), (prj, a, b)
    again = tmp_path / "again.tif"
    basin(source, again)
    for a, b in zip(geographic_corners(again, corners), expected):
        assert math.isclose(a, b, abs_tol=1e-9), (a, b)
    assert "Warning" not in run("gdalinfo", again)
    return prj


PROJECTION_CODES = [
    # name, GeoKeys (SHORTs), origin, cell
    ("utm_32n_on_wgs84", [(1024, 1), (2048, 4326), (3072, 32767), (3074, 16032), (3076, 9001)],
     (500000.0, 5000000.0), 100.0),
    ("utm_33s_on_nad83", [(1024, 1), (2048, 4269), (3072, 32767), (3074, 16133)],
     (500000.0, 9000000.0), 100.0),
    ("utm_18n_on_user_ellipsoid", [(1024, 1), (2048, 32767), (2050, 32767), (2056, 7030), (3072, 32767),
                                   (3074, 16018), (3076, 9001)], (500000.0, 4500000.0), 100.0),
    ("alabama_east_nad27_us_feet", [(1024, 1), (2048, 4267), (3072, 32767), (3074, 10101), (3076, 9003)],
     (500000.0, 500000.0), 300.0),
    ("alabama_east_nad83_metres", [(1024, 1), (2048, 4269), (3072, 32767), (3074, 10131), (3076, 9001)],
     (200000.0, 500000.0), 100.0),
    ("tennessee_lcc_nad83_feet", [(1024, 1), (2048, 4269), (3072, 32767), (3074, 15302), (3076, 9002)],
     (2000000.0, 500000.0), 300.0),
]


@pytest.mark.parametrize("name,shorts,origin,cell", PROJECTION_CODES, ids=[case[0] for case in PROJECTION_CODES])
def test_a_projection_named_by_code_reads_as_gdal_reads_it(tmp_path, name, shorts, origin, cell):
    require_tool("gdaltransform")
    source = geotiff_with_keys(tmp_path / f"{name}.tif", shorts, origin=origin, cell=cell)
    x, y = origin
    corners = f"{x} {y}\n{x + 6 * cell} {y - 4 * cell}\n"
    assert_prj_and_round_trip_agree_with_gdal(source, tmp_path, corners)


def test_real_files_with_projection_codes_and_arcgis_wkt_read_as_gdal_reads_them(tmp_path):
    require_tool("gdaltransform")
    cases = [
        ("rasterio", "rgb-byte-tenth.tif"),  # ProjectionGeoKey 16018
        ("rasterio", "test_esri_wkt.tif"),  # ESRI PE string, Albers
    ]
    for folder, name in cases:
        source = os.path.join(CORPUS, folder, name)
        info = json.loads(run("gdalinfo", "-json", source))
        x, cell_x, _, y, _, cell_y = info["geoTransform"]
        columns, rows = info["size"]
        corners = f"{x} {y}\n{x + columns * cell_x} {y + rows * cell_y}\n"
        assert_prj_and_round_trip_agree_with_gdal(source, tmp_path, corners)


def test_an_arcgis_wkt_written_by_gdal_is_the_crs(tmp_path):
    require_tool("gdaltransform")
    grid = tmp_path / "grid.asc"
    write_asc(grid, 12, 9, 4321000.0, 3210000.0, 1000.0, -9999, lambda column, row: row * 12 + column)
    source = tmp_path / "esri_pe.tif"
    run("gdal_translate", "-q", "-co", "GEOTIFF_KEYS_FLAVOR=ESRI_PE", "-a_srs",
        "+proj=laea +lat_0=52 +lon_0=10 +x_0=4321000 +y_0=3210000 +ellps=intl +units=m", grid, source)
    corners = "4321000 3210000\n4333000 3219000\n"
    prj = assert_prj_and_round_trip_agree_with_gdal(source, tmp_path, corners)
    assert prj.startswith('PROJCS["unknown",GEOGCS["GCS_unknown"'), prj


AZIMUTHAL = [
    # name, proj4, lower-left x, y, cell
    ("polar_a_north", "+proj=stere +lat_0=90 +lon_0=-45 +k=0.994 +x_0=2000000 +y_0=2000000 +ellps=intl +units=m",
     1500000.0, 1500000.0, 20000.0),
    ("polar_b_south", "+proj=stere +lat_0=-90 +lat_ts=-71 +lon_0=0 +x_0=0 +y_0=0 +ellps=intl +units=m",
     -1000000.0, -1000000.0, 20000.0),
    ("polar_b_north_feet", "+proj=stere +lat_0=90 +lat_ts=70 +lon_0=-45 +x_0=0 +y_0=0 +ellps=intl +units=ft",
     -2000000.0, -2000000.0, 50000.0),
    ("laea", "+proj=laea +lat_0=52 +lon_0=10 +x_0=4321000 +y_0=3210000 +ellps=intl +units=m",
     4000000.0, 3000000.0, 20000.0),
]


@pytest.mark.parametrize("name,proj4,xll,yll,cell", AZIMUTHAL, ids=[case[0] for case in AZIMUTHAL])
def test_azimuthal_projections_read_write_and_reproject_like_gdal(tmp_path, name, proj4, xll, yll, cell):
    require_tool("gdalwarp")
    grid = tmp_path / "grid.asc"
    write_asc(grid, 12, 9, xll, yll, cell, -9999, lambda column, row: row * 12 + column + 1)
    source = tmp_path / f"{name}.tif"
    run("gdal_translate", "-q", "-a_srs", proj4, grid, source)
    corners = f"{xll} {yll}\n{xll + 12 * cell} {yll + 9 * cell}\n"
    assert_prj_and_round_trip_agree_with_gdal(source, tmp_path, corners)
    # Written back as GDAL writes it: the same GeoKeys give the same proj4.
    again = tmp_path / "again.tif"
    basin(source, again)
    assert run("gdalsrsinfo", "-o", "proj4", again) == run("gdalsrsinfo", "-o", "proj4", source)
    # Reprojected cell for cell as gdalwarp -et 0.
    ours = tmp_path / "ours_4326.tif"
    basin(source, ours, "--output-srid", "4326")
    exact = tmp_path / "gdal_4326.tif"
    run("gdalwarp", "-q", "-overwrite", "-t_srs", "EPSG:4326", "-r", "near", "-et", "0", source, exact)
    assert compare_grids(ours, exact, f"{name} vs gdalwarp -et 0") == 100.0
    # Points: Basin's inverse projection, projected forward again by PROJ, lands within 1e-6 m.
    wkt = run("gdalsrsinfo", "-o", "wkt1", source).strip()
    points = [(xll + 12 * cell * i / 4, yll + 9 * cell * j / 4) for i in range(5) for j in range(5)]
    csv = tmp_path / "points.csv"
    csv.write_text("x,y\n" + "".join(f"{x},{y}\n" for x, y in points))
    shp = tmp_path / "points.shp"
    run("ogr2ogr", "-q", "-oo", "X_POSSIBLE_NAMES=x", "-oo", "Y_POSSIBLE_NAMES=y", "-a_srs", wkt, shp, csv)
    geojson = tmp_path / "points.geojson"
    basin(shp, geojson, "--output-srid", "4326")
    features = json.loads(geojson.read_text())["features"]
    lonlat = "".join(f"{f['geometry']['coordinates'][0]} {f['geometry']['coordinates'][1]}\n" for f in features)
    back = run("gdaltransform", "-s_srs", "EPSG:4326", "-t_srs", wkt, "-output_xy", input=lonlat)
    unit = 0.3048 if "+units=ft" in proj4 else 1.0
    for (x, y), line in zip(points, back.splitlines()):
        bx, by = map(float, line.split())
        assert abs(bx - x) * unit <= 1e-6 and abs(by - y) * unit <= 1e-6, (name, x, y, bx, by)


def test_a_grid_without_crs_is_written_without_crs_keys(tmp_path):
    require_tool("gdalsrsinfo")
    grid = tmp_path / "grid.asc"
    write_asc(grid, 5, 4, 0.0, 0.0, 1.0, -9999, lambda column, row: row * 5 + column)
    out = tmp_path / "out.tif"
    basin(grid, out)
    info = json.loads(run("gdalinfo", "-json", out))
    assert "coordinateSystem" not in info or not info["coordinateSystem"].get("wkt"), info
    result = subprocess.run(["gdalsrsinfo", "-o", "wkt1", str(out)], capture_output=True, text=True)
    assert result.returncode in (0, 1) and "LOCAL_CS" not in result.stdout and "ENGCRS" not in result.stdout
    # As gdal_translate writes it: no GeoKey directory at all.
    reference = tmp_path / "gdal.tif"
    run("gdal_translate", "-q", grid, reference)
    assert 34735 not in tag_ids(reference)
    assert 34735 not in tag_ids(out)


def tag_ids(path):
    """The tags of the first IFD of a little-endian classic TIFF."""
    data = open(path, "rb").read()
    assert data[:4] == b"II*\0"
    (offset,) = struct.unpack_from("<I", data, 4)
    (count,) = struct.unpack_from("<H", data, offset)
    return [struct.unpack_from("<H", data, offset + 2 + 12 * index)[0] for index in range(count)]
