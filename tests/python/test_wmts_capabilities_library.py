"""The WMTS capabilities documents of basin-tiles (crates/tiles/src/wmts.rs, issue 16), read by
two real clients without a server: OWSLib (`WebMapTileService(xml=...)`) and GDAL's WMTS driver
(`gdalinfo WMTS:<file>`, which reads local capabilities files).

`cargo run --example wmts_sample` writes the documents and a manifest of their inputs: a
WebMercatorQuad layer, a UTM layer (easting first), a Gauss-Krüger layer (northing first in
EPSG), an EPSG:4326 layer (latitude first), a layer with time, a layer in two matrix sets, and
hostile titles. Each test compares what a client reads with the manifest:

- OWSLib: title, layers, styles, formats, WGS84 and native bounding boxes, tile matrix sets
  (SupportedCRS, scale denominators, corners in the axis order pyproj gives the system, matrix
  sizes), TileMatrixSetLimits, the time dimension, the KVP GetTile URL and the ResourceURL
  filled for a tile;
- GDAL: the layer opens in every matrix set, with the system, extent and finest pixel size of
  the inputs, and the tile URL it builds (seen in its debug output, nothing is fetched) names
  the right matrix set and the default time;
- hostile titles come back exactly, except characters XML 1.0 cannot carry (U+FFFD).
"""

import json
import math
import os
import re
import subprocess

import pytest

from formats_support import ROOT, require_module, require_tool, run

owslib_wmts = require_module("owslib.wmts")
pyproj = require_module("pyproj")


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    """The sample documents' directory and their manifest, by file name."""
    directory = tmp_path_factory.mktemp("wmts")
    result = subprocess.run(
        ["cargo", "run", "--quiet", "-p", "basin-tiles", "--example", "wmts_sample", "--",
         str(directory)],
        cwd=ROOT, capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stderr
    manifest = json.loads((directory / "manifest.json").read_text())
    return directory, {document["file"]: document for document in manifest["documents"]}


def xml_text(text):
    """What an XML parser gives back for `text`: characters XML 1.0 cannot hold become U+FFFD."""
    def allowed(character):
        code = ord(character)
        return (code in (0x9, 0xA, 0xD) or 0x20 <= code <= 0xD7FF or 0xE000 <= code <= 0xFFFD
                or code >= 0x10000)
    return "".join(c if allowed(c) else "\ufffd" for c in text)


def northing_first(epsg):
    """Whether EPSG gives the system's first axis as latitude or northing, as PROJ (through
    pyproj) knows it: the order a WMTS document must write positions in."""
    if epsg is None:
        return False
    axis = pyproj.CRS.from_epsg(epsg).axis_info[0]
    return axis.direction in ("north", "south") and not axis.abbrev.upper().startswith("E")


def ordered(x, y, epsg):
    return (y, x) if northing_first(epsg) else (x, y)


def close(a, b, tolerance=1e-9):
    return math.isclose(a, b, rel_tol=tolerance, abs_tol=tolerance)


def open_owslib(directory, document):
    xml = (directory / document["file"]).read_bytes()
    return owslib_wmts.WebMapTileService(url=document["kvp_url"], xml=xml)


def test_owslib_reads_layers_styles_formats_and_bounds(samples):
    directory, documents = samples
    for document in documents.values():
        service = open_owslib(directory, document)
        assert service.identification.title == xml_text(document["title"]).strip()
        assert sorted(service.contents) == sorted(
            xml_text(layer["identifier"]) for layer in document["layers"])
        sets = {matrix_set["id"]: matrix_set for matrix_set in document["matrix_sets"]}
        for expected in document["layers"]:
            layer = service[xml_text(expected["identifier"])]
            assert layer.title == xml_text(expected["title"]).strip()
            assert list(layer.styles) == [xml_text(style) for style in expected["styles"]]
            assert layer.styles[xml_text(expected["styles"][0])]["isDefault"] is True
            assert layer.formats == expected["formats"]
            assert layer.boundingBoxWGS84 == tuple(expected["wgs84_bounds"])
            boxes = {box.crs: box for box in layer.boundingBox}
            for link in expected["links"]:
                epsg = sets[link["matrix_set"]]["epsg"]
                box = boxes[sets[link["matrix_set"]]["supported_crs"]]
                min_x, min_y, max_x, max_y = link["bounds"]
                assert tuple(box.ll) == ordered(min_x, min_y, epsg)
                assert tuple(box.ur) == ordered(max_x, max_y, epsg)


def test_owslib_reads_matrix_sets_in_the_epsg_axis_order(samples):
    directory, documents = samples
    seen_orders = set()
    for document in documents.values():
        service = open_owslib(directory, document)
        assert sorted(service.tilematrixsets) == sorted(s["id"] for s in document["matrix_sets"])
        for expected in document["matrix_sets"]:
            matrix_set = service.tilematrixsets[expected["id"]]
            assert matrix_set.crs == f"urn:ogc:def:crs:EPSG::{expected['epsg']}"
            assert list(matrix_set.tilematrix) == [m["id"] for m in expected["matrices"]]
            for matrix in expected["matrices"]:
                read = matrix_set.tilematrix[matrix["id"]]
                assert read.scaledenominator == matrix["scale_denominator"]
                assert read.topleftcorner == ordered(*matrix["top_left"], expected["epsg"])
                assert (read.tilewidth, read.tileheight) == (matrix["tile_width"],
                                                             matrix["tile_height"])
                assert (read.matrixwidth, read.matrixheight) == (matrix["matrix_width"],
                                                                 matrix["matrix_height"])
            seen_orders.add((expected["epsg"], northing_first(expected["epsg"])))
    # The samples cover both orders: Web Mercator and UTM easting first, EPSG:4326 and
    # Gauss-Krüger zone 3 northing (latitude) first.
    assert {(3857, False), (32632, False), (4326, True), (31467, True)} <= seen_orders


def test_owslib_reads_limits_time_and_tile_urls(samples):
    directory, documents = samples
    for document in documents.values():
        service = open_owslib(directory, document)
        get_tile = service.getOperationByName("GetTile").methods
        assert [method["url"] for method in get_tile] == [document["kvp_url"]]
        assert not service.restonly
        for expected in document["layers"]:
            identifier = xml_text(expected["identifier"])
            layer = service[identifier]
            assert list(layer.tilematrixsetlinks) == [l["matrix_set"] for l in expected["links"]]
            for link in expected["links"]:
                limits = layer.tilematrixsetlinks[link["matrix_set"]].tilematrixlimits
                read = [[m, l.mintilerow, l.maxtilerow, l.mintilecol, l.maxtilecol]
                        for m, l in limits.items()]
                assert read == link["limits"]
            time = expected["time"]
            extra = {}
            if time is None:
                assert layer.dimensions == {}
            else:
                assert layer.dimensions["Time"]["values"] == time["values"]
                assert layer.dimensions["Time"]["default"] == time["default"]
                extra["Time"] = time["values"][1]
            link = expected["links"][-1]
            last = link["limits"][-1]
            url = service.buildTileResource(
                layer=identifier, tilematrixset=link["matrix_set"], tilematrix=last[0],
                row=last[1], column=last[3], **extra)
            assert url == (expected["templates"][0]
                           .replace("{TileMatrixSet}", link["matrix_set"])
                           .replace("{TileMatrix}", last[0])
                           .replace("{TileRow}", str(last[1]))
                           .replace("{TileCol}", str(last[3]))
                           .replace("{Time}", extra.get("Time", "")))
            request = dict(part.split("=", 1) for part in service.buildTileRequest(
                layer=identifier, tilematrixset=link["matrix_set"], tilematrix=last[0],
                row=last[1], column=last[3]).split("&"))
            assert request["TILEMATRIXSET"] == link["matrix_set"]
            assert request["FORMAT"] == "image%2Fpng"


def gdal_open(path, layer, matrix_set):
    """`gdalinfo -json` of one layer in one matrix set, and GDAL's debug output."""
    require_tool("gdalinfo")
    name = f'WMTS:{path},layer="{layer}",tilematrixset={matrix_set}'
    result = subprocess.run(
        ["gdalinfo", "-json", "--config", "CPL_DEBUG", "ON", name],
        capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout), result.stderr


def epsg_of(info):
    codes = re.findall(r'ID\["EPSG",(\d+)\]\]\s*$', info["coordinateSystem"]["wkt"])
    return int(codes[-1])


def test_gdal_opens_every_layer_in_every_matrix_set_where_the_data_is(samples):
    directory, documents = samples
    for document in documents.values():
        if document["file"] == "hostile.xml":
            continue
        sets = {matrix_set["id"]: matrix_set for matrix_set in document["matrix_sets"]}
        for layer in document["layers"]:
            for link in layer["links"]:
                matrix_set = sets[link["matrix_set"]]
                info, debug = gdal_open(directory / document["file"], layer["identifier"],
                                        link["matrix_set"])
                label = f"{document['file']} {link['matrix_set']}"
                assert info["metadata"][""]["TITLE"] == layer["title"], label
                assert epsg_of(info) == matrix_set["epsg"], label
                # GDAL's raster is the layer's BoundingBox in the matrix set's system, on the
                # pixel grid of the finest level (whose pixel is the scale denominator's).
                finest = matrix_set["matrices"][-1]
                origin_x, pixel, _, origin_y, _, negative_pixel = info["geoTransform"]
                width, height = info["size"]
                assert close(pixel, finest["cell_size"]), label
                assert close(negative_pixel, -finest["cell_size"]), label
                min_x, min_y, max_x, max_y = link["bounds"]
                assert abs(origin_x - min_x) <= pixel, label
                assert abs(origin_y - max_y) <= pixel, label
                assert abs(origin_x + width * pixel - max_x) <= pixel, label
                assert abs(origin_y - height * pixel - min_y) <= pixel, label
                if matrix_set["epsg"] != 3857:
                    # Native sets start at the data's corner: the extent is exact.
                    assert close(origin_x, min_x) and close(origin_y, max_y), label
                    assert close(origin_x + width * pixel, max_x), label
                # The tile URL GDAL builds (logged when it opens the levels, nothing fetched).
                urls = re.findall(r"<ServerUrl>([^<]*)</ServerUrl>", debug)
                assert urls, label
                template = layer["templates"][0]
                time = layer["time"]
                for url in urls:
                    level = re.search(rf"/scheme/{re.escape(link['matrix_set'])}/(\d+)/", url)
                    assert level, (label, url)
                    assert url == (template
                                   .replace("{TileMatrixSet}", link["matrix_set"])
                                   .replace("{TileMatrix}", level.group(1))
                                   .replace("{TileRow}", "${y}")
                                   .replace("{TileCol}", "${x}")
                                   .replace("{Time}", time["default"] if time else "")), label


def test_gdal_lists_a_layer_in_two_matrix_sets_as_two_subdatasets(samples):
    directory, documents = samples
    require_tool("gdalinfo")
    info = json.loads(run("gdalinfo", "-json", f"WMTS:{directory / 'two_sets.xml'}"))
    names = [value for key, value in info["metadata"]["SUBDATASETS"].items()
             if key.endswith("_NAME")]
    assert [name.rsplit("tilematrixset=", 1)[1] for name in names] == [
        "WebMercatorQuad", "wmts-0"]


def test_hostile_titles_read_back_exactly(samples):
    directory, documents = samples
    document = documents["hostile.xml"]
    service = open_owslib(directory, document)
    assert service.identification.title == xml_text(document["title"]).strip()
    # OWSLib strips titles; lxml's own parse (OWSLib's parser) keeps every character.
    root = owslib_wmts.etree.fromstring((directory / document["file"]).read_bytes())
    ows = "{http://www.opengis.net/ows/1.1}"
    wmts = "{http://www.opengis.net/wmts/1.0}"
    assert root.find(f"{ows}ServiceIdentification/{ows}Title").text == xml_text(
        document["title"])
    layers = root.findall(f"{wmts}Contents/{wmts}Layer")
    assert [layer.find(f"{ows}Title").text for layer in layers] == [
        xml_text(layer["title"]) for layer in document["layers"]]
    assert [layer.find(f"{ows}Identifier").text for layer in layers] == [
        xml_text(layer["identifier"]) for layer in document["layers"]]
    # GDAL reads the first layer's title and opens it by its identifier.
    first = document["layers"][0]
    info, _ = gdal_open(directory / document["file"], first["identifier"], "wmts-0")
    assert info["metadata"][""]["TITLE"] == xml_text(first["title"])
