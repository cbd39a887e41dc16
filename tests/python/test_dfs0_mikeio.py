"""Differential tests of DFS0 against MIKE IO, the reference implementation (closed native
library underneath): random time series written by MIKE IO (calendar axes) or by mikecore with
MIKE IO's header (relative axes, which MIKE IO cannot write), converted by `basin convert`
DFS0 -> DFS0 and read back by MIKE IO, compared value for value and time for time; the same
output compared byte for byte with MIKE IO's file when Basin is given MIKE IO's titles; DFS0 ->
CSV compared with MIKE IO's values; DFS0 -> VTU read with meshio.

Values must agree exactly: Basin keeps each item's storage type and writes missing values as
MIKE IO does, so no tolerance is needed.
"""

import csv
import datetime
import os
import random
import xml.etree.ElementTree as ElementTree

import pytest

from formats_support import ROOT, convert, require_module

np = require_module("numpy")
pd = require_module("pandas")
mikeio = require_module("mikeio")
mikecore_factory = require_module("mikecore.DfsFactory")
mikecore_file = require_module("mikecore.DfsFileFactory")
mikecore_dfs = require_module("mikecore.DfsFile")
mikecore_eum = require_module("mikecore.eum")

SEEDS = list(range(20))
AXES = ["calendar equidistant", "calendar non-equidistant", "relative equidistant",
        "relative non-equidistant"]
SAMPLES = os.path.join(ROOT, "tests", "corpus", "dfs-samples")
NAMES = ["Water level", "Discharge", "Vandstand Hornbæk", "Rain, gauge 3", 'Wind "max"',
         "T", "Salinity (surface)", "Q_out", "Niveau; aval", "Ström"]
VALUE_TYPES = ["Instantaneous", "Accumulated", "StepAccumulated", "MeanStepBackward",
               "MeanStepForward"]
# What MIKE IO writes in the header of a DFS0, which Basin is told to write too.
MIKEIO_TITLES = ["-w", "ApplicationTitle=mikeio", "-w",
                 f"ApplicationVersion={mikeio.__dfs_version__}"]


def eum_types():
    """EUM item types with units, that mikecore can make a quantity of."""
    return [kind for kind in mikeio.EUMType if kind.units]


def random_series(seed):
    """A random DFS0 content: item count 1-8, float32 or float64, NaNs, one of four axes."""
    rng = random.Random(seed)
    axis = AXES[seed % len(AXES)]
    steps = rng.randint(1, 40) if "non" not in axis else rng.randint(2, 40)
    kinds = eum_types()
    items = []
    for name in rng.sample(NAMES, rng.randint(1, 8)):
        kind = rng.choice(kinds)
        items.append(mikeio.ItemInfo(name, kind, rng.choice(kind.units),
                                     data_value_type=rng.choice(VALUE_TYPES)))
    scale = 10.0 ** rng.randint(-4, 6)
    data = []
    for _ in items:
        values = np.array([rng.gauss(0.0, scale) for _ in range(steps)])
        for step in range(steps):
            if rng.random() < 0.1:
                values[step] = np.nan
        data.append(values)
    if axis.startswith("calendar"):
        start = pd.Timestamp(2000 + rng.randint(0, 30), rng.randint(1, 12), rng.randint(1, 28),
                             rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59))
        if "non" in axis:
            # Whole milliseconds: the resolution of MIKE IO's (and Basin's) calendar times.
            gaps = [rng.choice([1, 60, 3600, 86400]) * rng.randint(1, 100) * 1000
                    + rng.randint(0, 999) for _ in range(steps - 1)]
            times = [start + pd.Timedelta(milliseconds=sum(gaps[:k])) for k in range(steps)]
            time = pd.DatetimeIndex(times)
        else:
            step = rng.choice([0.5, 1.0, 60.0, 1800.0, 3600.0, 86400.0])
            time = pd.date_range(start, periods=steps, freq=pd.Timedelta(seconds=step))
    elif "non" in axis:
        offsets = [0.0]
        for _ in range(steps - 1):
            offsets.append(offsets[-1] + rng.choice([0.25, 1.0, 7.0, 3600.0]) * rng.randint(1, 9))
        time = offsets
    else:
        step = rng.choice([0.111803, 1.0, 10.0, 3600.0])
        time = [k * step for k in range(steps)]
    dtype = rng.choice([np.float32, np.float64])
    title = rng.choice(["", "Random series", f"seed {seed}"])
    return axis, time, items, data, dtype, title


def write_with_mikeio(path, axis, time, items, data, dtype, title):
    """Calendar axes through MIKE IO; relative axes through mikecore, with MIKE IO's header."""
    if axis.startswith("calendar"):
        arrays = [mikeio.DataArray(values, time=time, item=item) for values, item in zip(data, items)]
        mikeio.Dataset(arrays).to_dfs(str(path), dtype=dtype, title=title)
        return
    factory = mikecore_factory.DfsFactory()
    builder = mikecore_factory.DfsBuilder.Create(title, "mikeio", mikeio.__dfs_version__)
    builder.SetDataType(1)
    builder.SetGeographicalProjection(factory.CreateProjectionUndefined())
    if "non" in axis:
        builder.SetTemporalAxis(factory.CreateTemporalNonEqTimeAxis(mikecore_eum.eumUnit.eumUsec))
    else:
        step = time[1] - time[0] if len(time) > 1 else 1.0
        builder.SetTemporalAxis(
            factory.CreateTemporalEqTimeAxis(mikecore_eum.eumUnit.eumUsec, 0.0, step))
    builder.SetItemStatisticsType(mikecore_dfs.StatType.RegularStat)
    simple_type = (mikecore_dfs.DfsSimpleType.Double if dtype == np.float64
                   else mikecore_dfs.DfsSimpleType.Float)
    for item in items:
        item_builder = builder.CreateDynamicItemBuilder()
        item_builder.Set(item.name, mikecore_eum.eumQuantity.Create(item.type, item.unit),
                         simple_type)
        item_builder.SetValueType(item.data_value_type)
        item_builder.SetAxis(factory.CreateAxisEqD0())
        builder.AddDynamicItem(item_builder.GetDynamicItemInfo())
    builder.CreateFile(str(path))
    dfs = builder.GetFile()
    matrix = np.column_stack([np.asarray(time, dtype=np.float64)] + list(data))
    matrix[np.isnan(matrix)] = dfs.FileInfo.DeleteValueFloat
    dfs.WriteDfs0DataDouble(np.ascontiguousarray(matrix))
    dfs.Close()


def header_of(path):
    """Time axis type and item storage types as mikecore reports them."""
    dfs = mikecore_file.DfsFileFactory.DfsGenericOpen(str(path))
    try:
        return (dfs.FileInfo.TimeAxis.TimeAxisType,
                [item.DataType for item in dfs.ItemInfo])
    finally:
        dfs.Close()


def assert_same_dataset(expected, actual):
    assert [item.name for item in actual.items] == [item.name for item in expected.items]
    for got, want in zip(actual.items, expected.items):
        assert (got.type, got.unit, got.data_value_type) == (want.type, want.unit,
                                                              want.data_value_type)
    assert list(actual.time) == list(expected.time)
    for got, want in zip(actual, expected):
        assert got.values.dtype == want.values.dtype
        assert np.array_equal(got.values, want.values, equal_nan=True), got.name


def masked(data):
    """The bytes of a DFS file without its two timestamps (0x52-0x5D, 0x66-0x71)."""
    return data[:0x52] + data[0x5E:0x66] + data[0x72:]


@pytest.mark.parametrize("seed", SEEDS)
def test_random_dfs0_round_trips_through_basin(tmp_path, seed):
    axis, time, items, data, dtype, title = random_series(seed)
    source = tmp_path / "mikeio.dfs0"
    write_with_mikeio(source, axis, time, items, data, dtype, title)
    target = tmp_path / "basin.dfs0"
    convert(source, target, "-w", f"Title={title}", *MIKEIO_TITLES)
    expected = mikeio.read(str(source))
    assert_same_dataset(expected, mikeio.read(str(target)))
    assert header_of(target) == header_of(source)
    assert masked(target.read_bytes()) == masked(source.read_bytes()), axis
    # Basin's own titles change nothing else.
    plain = tmp_path / "plain.dfs0"
    convert(source, plain)
    assert_same_dataset(expected, mikeio.read(str(plain)))


@pytest.mark.parametrize("axis", ["calendar equidistant", "relative equidistant"])
def test_a_single_step_round_trips_byte_for_byte(tmp_path, axis):
    item = mikeio.ItemInfo("Level", mikeio.EUMType.Water_Level, mikeio.EUMUnit.meter)
    time = (pd.DatetimeIndex(["2022-02-03 04:05:06"]) if axis.startswith("calendar")
            else [0.0])
    source = tmp_path / "mikeio.dfs0"
    write_with_mikeio(source, axis, time, [item], [np.array([1.5])], np.float32, "")
    target = tmp_path / "basin.dfs0"
    convert(source, target, *MIKEIO_TITLES)
    assert masked(target.read_bytes()) == masked(source.read_bytes())


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    return rows[0], rows[1:]


@pytest.mark.parametrize("seed", SEEDS)
def test_random_dfs0_to_csv_matches_mikeio(tmp_path, seed):
    axis, time, items, data, dtype, title = random_series(seed)
    source = tmp_path / "mikeio.dfs0"
    write_with_mikeio(source, axis, time, items, data, dtype, title)
    target = tmp_path / "series.csv"
    convert(source, target)
    expected = mikeio.read(str(source))
    # MIKE IO reads float items as float64 (not always the exact widening): compare in the
    # file's storage type.
    storage = [np.float64 if kind == mikecore_dfs.DfsSimpleType.Double else np.float32
               for kind in header_of(source)[1]]
    header, rows = read_csv(target)
    assert header == ["time"] + [item.name for item in expected.items]
    assert len(rows) == len(expected.time)
    for step, row in enumerate(rows):
        if axis.startswith("calendar"):
            assert pd.Timestamp(datetime.datetime.fromisoformat(row[0])) == expected.time[step]
        else:
            seconds = expected.time[step].total_seconds()
            assert abs(float(row[0]) - seconds) <= 1e-6 * max(1.0, abs(seconds))
        for cell, array, number in zip(row[1:], expected, storage):
            want = array.values[step]
            if np.isnan(want):
                assert cell == ""
            else:
                assert number(float(cell)) == number(want), (array.name, cell, want)


def test_csv_separators_and_quoting(tmp_path):
    axis, time, items, data, dtype, title = random_series(1)
    source = tmp_path / "mikeio.dfs0"
    items = [mikeio.ItemInfo('Rain, "gauge" 3'), mikeio.ItemInfo("Niveau; aval")]
    write_with_mikeio(source, axis, time, items, data[:1] * 2, dtype, title)
    target = tmp_path / "series.csv"
    convert(source, target, "-w", "Separator=semicolon")
    with open(target, newline="", encoding="utf-8") as handle:
        header = next(csv.reader(handle, delimiter=";"))
    assert header == ["time", 'Rain, "gauge" 3', "Niveau; aval"]
    frame = pd.read_csv(target, sep=";")
    assert list(frame.columns) == header
    convert(source, target, "-w", "Separator=tab")
    frame = pd.read_csv(target, sep="\t")
    assert list(frame.columns) == header


def test_dfs0_to_vtu_read_with_meshio(tmp_path):
    meshio = require_module("meshio")
    source = os.path.join(SAMPLES, "ts_eq.dfs0")
    target = tmp_path / "series.pvd"
    convert(source, target)
    expected = mikeio.read(source)
    collection = ElementTree.parse(target).getroot()
    datasets = collection.findall("./Collection/DataSet")
    assert len(datasets) == len(expected.time)
    for step, dataset in enumerate(datasets):
        seconds = (expected.time[step] - expected.time[0]).total_seconds()
        assert float(dataset.get("timestep")) == pytest.approx(seconds)
        mesh = meshio.read(tmp_path / dataset.get("file"))
        assert mesh.points.tolist() == [[0.0, 0.0, 0.0]]
        assert [block.type for block in mesh.cells] == ["vertex"]
        for array in expected:
            got = mesh.point_data[array.name]
            assert got.shape[0] == 1
            want = array.values[step]
            assert (np.isnan(got[0]) and np.isnan(want)) or got[0] == np.float32(want)
