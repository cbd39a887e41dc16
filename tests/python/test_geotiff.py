"""GeoTIFF through `basin convert` (GeoTiffReader -> GeoTiffWriter) compared with GDAL.

Inputs are made by GDAL itself (gdal_translate from generated ASCII grids and VRTs): every
data type, stripped and tiled, chunky and planar, uncompressed, LZW, deflate and PackBits,
predictors 2 and 3, big-endian, BigTIFF, several EPSG codes, nodata values including NaN,
named bands, PixelIsPoint and a rotated geotransform. Basin converts each to GeoTIFF and GDAL
reads both files:

- values: both files dumped by `gdal_translate -of ENVI` (raw band-sequential bytes) must be
  byte-identical, so floats agree bit for bit (NaN included), plus `gdallocationinfo` spot checks;
- `gdalinfo -json`: size, geotransform (exactly), EPSG code, band types, nodata, descriptions
  and units agree;
- the output is tiled 256 x 256 and DEFLATE-compressed, and GDAL reads it without warnings.
"""

import json
import math
import re

import pytest

from formats_support import convert, require_tool, run

COLUMNS, ROWS = 600, 530  # three tiles across, three down, the last ones partial


def integer_value(column, row, band=0):
    return (row * 131 + column * 17 + band * 1000) % 30011 - 15000


def write_asc(path, value, nodata=None, columns=COLUMNS, rows=ROWS):
    lines = [f"ncols {columns}", f"nrows {rows}", "xllcorner 500000", "yllcorner 6000000",
             "cellsize 25"]
    if nodata is not None:
        lines.append(f"NODATA_value {nodata}")
    for row in range(rows):
        lines.append(" ".join(value(column, row) for column in range(columns)))
    path.write_text("\n".join(lines) + "\n")


def source_asc(tmp_path, kind, band=0):
    """An ASCII grid GDAL turns into the test input: integers in the Int16 range, or floats
    with a fraction (exact in float32) and a few nodata cells."""
    path = tmp_path / f"source_{kind}_{band}.asc"
    if kind == "int":
        write_asc(path, lambda c, r: str(integer_value(c, r, band)), nodata=-9999)
    elif kind == "byte":
        write_asc(path, lambda c, r: str((c * 3 + r * 7 + band * 50) % 256))
    else:
        write_asc(path, lambda c, r: "-9999" if (c * r) % 997 == 5 else repr(integer_value(c, r, band) / 8),
                  nodata=-9999)
    return path


def gdal_info(path):
    gdalinfo = require_tool("gdalinfo")
    result = run(gdalinfo, "-json", path)
    return json.loads(result)


def epsg_of(info):
    wkt = (info.get("coordinateSystem") or {}).get("wkt", "")
    codes = re.findall(r'ID\["EPSG",(\d+)\]', wkt)
    return int(codes[-1]) if codes else None


def raw_bytes(path, tmp_path, label):
    """The values as raw band-sequential bytes (the georeferencing is replaced, because the
    ENVI driver refuses rotated transforms)."""
    target = tmp_path / f"{label}.envi"
    run("gdal_translate", "-q", "-of", "ENVI", "-co", "INTERLEAVE=BSQ", "-a_ullr", "0", "1", "1",
        "0", path, target)
    return target.read_bytes()


def nodata_equal(a, b):
    if a is None or b is None:
        return a is b
    if isinstance(a, str) or isinstance(b, str):  # gdalinfo -json writes NaN as "nan"
        return str(a).lower() == str(b).lower()
    return a == b or (math.isnan(a) and math.isnan(b))


def check_same_grid(source, output, tmp_path):
    ours, theirs = gdal_info(output), gdal_info(source)
    assert ours["size"] == theirs["size"]
    assert ours["geoTransform"] == theirs["geoTransform"]
    assert epsg_of(ours) == epsg_of(theirs) and epsg_of(ours) is not None
    assert len(ours["bands"]) == len(theirs["bands"])
    for mine, gdal in zip(ours["bands"], theirs["bands"]):
        assert mine["type"] == gdal["type"]
        assert nodata_equal(mine.get("noDataValue"), gdal.get("noDataValue"))
        assert mine.get("description", "") == gdal.get("description", "")
        assert mine.get("unit", "") == gdal.get("unit", "")
        assert mine["block"] == [256, 256]
    assert ours["metadata"]["IMAGE_STRUCTURE"]["COMPRESSION"] == "DEFLATE"
    assert raw_bytes(output, tmp_path, "ours") == raw_bytes(source, tmp_path, "theirs")
    for column, row in [(0, 0), (599, 529), (256, 255), (300, 400)]:
        expected = run("gdallocationinfo", "-valonly", source, column, row)
        assert run("gdallocationinfo", "-valonly", output, column, row) == expected


def basin_to_geotiff(source, tmp_path, *args):
    output = tmp_path / "basin.tif"
    result = convert(source, output, *args)
    assert "Warning" not in run("gdalinfo", output), "GDAL warns about Basin's output"
    return output, result


CASES = [
    # (name, source kind, gdal_translate options)
    ("byte_striped_none", "byte", ["-ot", "Byte", "-a_srs", "EPSG:32632", "-a_nodata", "255"]),
    ("int16_lzw_predictor2", "int", ["-ot", "Int16", "-a_srs", "EPSG:25832", "-co", "COMPRESS=LZW",
                                     "-co", "PREDICTOR=2"]),
    ("uint16_tiled_deflate", "int", ["-ot", "UInt16", "-a_srs", "EPSG:4326", "-a_ullr", "9", "56",
                                     "15", "53", "-co", "TILED=YES", "-co", "COMPRESS=DEFLATE"]),
    ("int32_packbits_bigendian", "int", ["-ot", "Int32", "-a_srs", "EPSG:3857", "-co",
                                         "COMPRESS=PACKBITS", "-co", "ENDIANNESS=BIG"]),
    ("uint32_tiled_512", "int", ["-ot", "UInt32", "-a_srs", "EPSG:32633", "-co", "TILED=YES",
                                 "-co", "BLOCKXSIZE=512", "-co", "BLOCKYSIZE=512"]),
    ("float32_predictor3", "float", ["-ot", "Float32", "-a_srs", "EPSG:32632", "-co", "TILED=YES",
                                     "-co", "COMPRESS=DEFLATE", "-co", "PREDICTOR=3"]),
    ("float32_zstd_predictor3", "float", ["-ot", "Float32", "-a_srs", "EPSG:32632", "-co",
                                          "TILED=YES", "-co", "COMPRESS=ZSTD", "-co", "PREDICTOR=3",
                                          "-co", "ZSTD_LEVEL=22"]),
    ("uint16_zstd_predictor2_strips", "int", ["-ot", "UInt16", "-a_srs", "EPSG:25832", "-co",
                                              "COMPRESS=ZSTD", "-co", "PREDICTOR=2"]),
    ("float32_lzw_strips", "float", ["-ot", "Float32", "-a_srs", "EPSG:27700", "-co", "COMPRESS=LZW",
                                     "-co", "BLOCKYSIZE=1"]),
    ("float64_bigtiff_nan", "float", ["-ot", "Float64", "-a_srs", "EPSG:4326", "-a_ullr", "-10",
                                      "60", "5", "45", "-a_nodata", "nan", "-co", "BIGTIFF=YES"]),
    ("float64_pixel_is_point", "float", ["-ot", "Float64", "-a_srs", "EPSG:32632", "-mo",
                                         "AREA_OR_POINT=Point", "-co", "TILED=YES"]),
]


@pytest.mark.parametrize("name,kind,options", CASES, ids=[case[0] for case in CASES])
def test_single_band_geotiffs_convert_exactly(tmp_path, name, kind, options):
    require_tool("gdal_translate")
    source = tmp_path / f"{name}.tif"
    run("gdal_translate", "-q", *options, source_asc(tmp_path, kind), source)
    output, _ = basin_to_geotiff(source, tmp_path)
    check_same_grid(source, output, tmp_path)


def bands_vrt(tmp_path, data_type, geotransform="500000, 25, 0, 6013250, 0, -25"):
    """A three-band VRT with band names, units and a nodata value."""
    kind = "byte" if data_type == "Byte" else "float"
    bands = []
    for band in range(3):
        source = source_asc(tmp_path, kind, band)
        bands.append(
            f'<VRTRasterBand dataType="{data_type}" band="{band + 1}">'
            f"<Description>level {band} &amp; more</Description><UnitType>m</UnitType>"
            f"<NoDataValue>{250 if kind == 'byte' else -9999}</NoDataValue>"
            f'<SimpleSource><SourceFilename relativeToVRT="0">{source}</SourceFilename>'
            f"<SourceBand>1</SourceBand></SimpleSource></VRTRasterBand>"
        )
    vrt = tmp_path / "bands.vrt"
    vrt.write_text(
        f'<VRTDataset rasterXSize="{COLUMNS}" rasterYSize="{ROWS}"><SRS>EPSG:32632</SRS>'
        f"<GeoTransform>{geotransform}</GeoTransform>{''.join(bands)}</VRTDataset>"
    )
    return vrt


@pytest.mark.parametrize("data_type,interleave", [("Byte", "PIXEL"), ("Float32", "BAND"),
                                                  ("Float32", "PIXEL")])
def test_multi_band_geotiffs_keep_names_units_and_nodata(tmp_path, data_type, interleave):
    require_tool("gdal_translate")
    source = tmp_path / "bands.tif"
    run("gdal_translate", "-q", "-co", f"INTERLEAVE={interleave}", "-co", "COMPRESS=DEFLATE",
        bands_vrt(tmp_path, data_type), source)
    output, _ = basin_to_geotiff(source, tmp_path)
    check_same_grid(source, output, tmp_path)
    assert [band["description"] for band in gdal_info(output)["bands"]] == [
        "level 0 & more", "level 1 & more", "level 2 & more"]


def test_a_rotated_geotransform_is_kept(tmp_path):
    require_tool("gdal_translate")
    source = tmp_path / "rotated.tif"
    run("gdal_translate", "-q", "-b", "1",
        bands_vrt(tmp_path, "Float32", "500000, 25, 4, 6013250, 2.5, -25"), source)
    output, _ = basin_to_geotiff(source, tmp_path)
    check_same_grid(source, output, tmp_path)
    assert gdal_info(output)["geoTransform"] == [500000.0, 25.0, 4.0, 6013250.0, 2.5, -25.0]


def test_a_geotiff_without_crs_is_read_as_gdal_reads_it_and_srid_names_one(tmp_path):
    require_tool("gdal_translate")
    source = tmp_path / "bare.tif"
    run("gdal_translate", "-q", "-ot", "Int16", source_asc(tmp_path, "int"), source)
    output = tmp_path / "out.tif"
    # Without a coordinate system, as GDAL reads it: same placement, still none.
    convert(source, output)
    assert not (gdal_info(output).get("coordinateSystem") or {}).get("wkt")
    assert gdal_info(output)["geoTransform"] == gdal_info(source)["geoTransform"]
    convert(source, output, "-p", "SRID=32632")
    assert epsg_of(gdal_info(output)) == 32632
    assert gdal_info(output)["geoTransform"] == gdal_info(source)["geoTransform"]


@pytest.mark.parametrize("geotransform", ["500000, 25, 0, 6013250, 0, -25",
                                          "500000, 25, 4, 6013250, 2.5, -25"],
                         ids=["north_up", "rotated"])
def test_a_world_file_places_a_baseline_tiff_as_in_gdal(tmp_path, geotransform):
    require_tool("gdal_translate")
    source = tmp_path / "baseline.tif"
    # A plain TIFF (no GeoTIFF tags) with its placement in baseline.tfw, as scanners write.
    run("gdal_translate", "-q", "-b", "1", "-co", "PROFILE=BASELINE", "-co", "TFW=YES",
        bands_vrt(tmp_path, "Int16", geotransform), source)
    assert (tmp_path / "baseline.tfw").exists()
    # GDAL also notes the placement in an .aux.xml; without it only the world file places.
    (tmp_path / "baseline.tif.aux.xml").unlink(missing_ok=True)
    expected = [float(value) for value in geotransform.split(",")]
    assert gdal_info(source)["geoTransform"] == expected
    output = tmp_path / "placed.tif"
    convert(source, output, "-p", "SRID=32632")
    assert gdal_info(output)["geoTransform"] == gdal_info(source)["geoTransform"]
    assert raw_bytes(output, tmp_path, "ours") == raw_bytes(source, tmp_path, "theirs")


def test_gdal_side_file_gives_the_crs_and_placement_of_a_baseline_tiff(tmp_path):
    require_tool("gdal_translate")
    source = tmp_path / "baseline.tif"
    # Without GeoTIFF tags GDAL keeps the system and the geotransform in baseline.tif.aux.xml.
    run("gdal_translate", "-q", "-b", "1", "-a_srs", "EPSG:25832", "-co", "PROFILE=BASELINE",
        bands_vrt(tmp_path, "Int16", "500000, 25, 4, 6013250, 2.5, -25"), source)
    assert (tmp_path / "baseline.tif.aux.xml").exists() and not (tmp_path / "baseline.tfw").exists()
    output = tmp_path / "placed.tif"
    convert(source, output)
    assert epsg_of(gdal_info(output)) == 25832
    assert gdal_info(output)["geoTransform"] == gdal_info(source)["geoTransform"]
    assert raw_bytes(output, tmp_path, "ours") == raw_bytes(source, tmp_path, "theirs")


def test_writer_parameters_are_visible_to_gdal(tmp_path):
    require_tool("gdal_translate")
    source = tmp_path / "float.tif"
    run("gdal_translate", "-q", "-ot", "Float32", "-a_srs", "EPSG:32632",
        source_asc(tmp_path, "float"), source)
    for args, compression, predictor in [
        (["-w", "Predictor=3", "-w", "ZLevel=6"], "DEFLATE", "3"),
        (["-w", "Compression=NONE"], None, None),
        (["-w", "BigTiff=YES", "-w", "Predictor=2"], "DEFLATE", "2"),
    ]:
        output = tmp_path / "params.tif"
        convert(source, output, *args)
        structure = gdal_info(output)["metadata"]["IMAGE_STRUCTURE"]
        assert structure.get("COMPRESSION") == compression
        assert structure.get("PREDICTOR") == predictor
        assert raw_bytes(output, tmp_path, "ours") == raw_bytes(source, tmp_path, "theirs")
    assert open(tmp_path / "params.tif", "rb").read(4) == b"II\x2b\x00"
