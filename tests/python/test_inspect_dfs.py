"""`basin inspect --json` on every DFS file of the corpus against the reference library's own
reading of the header (mikecore, which MIKE IO is built on): file fields, delete values,
projection, time axis and every dynamic item with its spatial axis. This checks the generic
container before, and independently of, the DFS readers.
"""

import glob
import json
import math
import os
import subprocess

import pytest

from formats_support import BINARY, ROOT, require_module, skip_or_fail

CORPUS = os.path.join(ROOT, "tests", "corpus")
FILES = sorted(
    glob.glob(os.path.join(CORPUS, "dfs-samples", "*.dfs?"))
    + glob.glob(os.path.join(CORPUS, "mikeio", "*.dfs?"))
)

# mikecore's names of the time axis types, by the reference library's codes.
TIME_AXIS_NAMES = {
    1: "TimeEquidistant",
    2: "TimeNonEquidistant",
    3: "CalendarEquidistant",
    4: "CalendarNonEquidistant",
}
# mikecore's DfsSimpleType codes.
DATA_TYPE_NAMES = {1: "Float32", 2: "Float64", 3: "Byte", 4: "Int32", 5: "UInt32", 6: "Int16",
                   7: "UInt16"}
VALUE_TYPE_NAMES = {0: "Instantaneous", 1: "Accumulated", 2: "StepAccumulated",
                    3: "MeanStepBackward", 4: "MeanStepForward"}
# The reference library's spatial axis types, by its codes.
AXIS_NAMES = {1: "EqD0", 2: "EqD1", 3: "NeqD1", 5: "EqD2", 6: "NeqD2", 8: "EqD3",
              10: "CurveLinearD2"}


def dfs_factory():
    require_module("mikecore")
    try:
        from mikecore.DfsFileFactory import DfsFileFactory
    except ImportError as error:  # pragma: no cover - depends on the machine
        skip_or_fail(f"mikecore not importable ({error}); pip install mikecore (Linux x86-64)")
    return DfsFileFactory


def inspect(path):
    result = subprocess.run([BINARY, "inspect", path, "--json"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["dfs"]


def same_float(ours, theirs):
    return math.isclose(ours, theirs, rel_tol=1e-6, abs_tol=1e-300)


@pytest.mark.parametrize("path", FILES, ids=os.path.basename)
def test_inspect_reads_the_dfs_header_as_the_reference_library_does(path):
    factory = dfs_factory()
    reference = factory.DfsGenericOpen(path)
    try:
        dfs = inspect(path)
        info = reference.FileInfo
        assert dfs["title"] == info.FileTitle
        assert dfs["application"] == info.ApplicationTitle
        assert dfs["applicationVersion"] == info.ApplicationVersion
        assert dfs["dataType"] == info.DataType
        # mikecore's FileInfo.StatsType is always its default (NoStat); the type is not compared.
        assert dfs["compressed"] == bool(info.IsFileCompressed)
        deletes = dfs["deleteValues"]
        assert same_float(deletes["float"], info.DeleteValueFloat)
        assert same_float(deletes["double"], info.DeleteValueDouble)
        assert deletes["byte"] == info.DeleteValueByte
        assert deletes["int"] == info.DeleteValueInt
        assert deletes["unsignedInt"] == info.DeleteValueUnsignedInt

        projection = info.Projection
        if dfs["projection"] is None:
            assert projection is None or not projection.WKTString
        else:
            assert dfs["projection"]["name"] == projection.WKTString
            assert same_float(dfs["projection"]["originLongitude"], projection.Longitude)
            assert same_float(dfs["projection"]["originLatitude"], projection.Latitude)
            assert same_float(dfs["projection"]["orientation"], projection.Orientation)

        time = info.TimeAxis
        assert dfs["time"]["type"] == TIME_AXIS_NAMES[int(time.TimeAxisType)]
        assert dfs["time"]["unit"] == int(time.TimeUnit)
        assert dfs["time"]["steps"] == time.NumberOfTimeSteps == dfs["steps"]
        assert dfs["time"]["firstIndex"] == time.FirstTimeStepIndex
        assert same_float(dfs["time"]["startOffset"], time.StartTimeOffset)
        if time.IsEquidistant():
            assert same_float(dfs["time"]["stepOrSpan"], time.TimeStep)
        else:
            assert same_float(dfs["time"]["stepOrSpan"], time.TimeSpan)
        if time.IsCalendar():
            start = time.StartDateTime
            assert dfs["time"]["start"] == start.strftime("%Y-%m-%d %H:%M:%S")

        assert len(dfs["items"]) == len(reference.ItemInfo)
        for ours, theirs in zip(dfs["items"], reference.ItemInfo):
            assert ours["name"] == theirs.Name
            assert ours["eumItem"] == int(theirs.Quantity.Item)
            assert ours["eumUnit"] == int(theirs.Quantity.Unit)
            assert ours["dataType"] == DATA_TYPE_NAMES[int(theirs.DataType)]
            assert ours["valueType"] == VALUE_TYPE_NAMES[int(theirs.ValueType)]
            axis = theirs.SpatialAxis
            assert ours["axis"]["type"] == AXIS_NAMES[int(axis.AxisType)], ours["name"]
            assert ours["axis"]["unit"] == int(axis.AxisUnit)
            counts = [getattr(axis, name) for name in ("XCount", "YCount", "ZCount")
                      if hasattr(axis, name)]
            assert ours["axis"]["counts"] == counts, ours["name"]
            origins = [getattr(axis, name) for name in ("X0", "Y0", "Z0") if hasattr(axis, name)]
            spacings = [getattr(axis, name) for name in ("Dx", "Dy", "Dz") if hasattr(axis, name)]
            if ours["axis"]["type"].startswith("EqD") and ours["axis"]["type"] != "EqD0":
                assert all(map(same_float, ours["axis"]["origins"], origins)), ours["axis"]
                assert all(map(same_float, ours["axis"]["spacings"], spacings)), ours["axis"]
            if not info.IsFileCompressed:
                assert ours["valuesPerStep"] == theirs.ElementCount
    finally:
        reference.Close()
