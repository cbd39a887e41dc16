#!/usr/bin/env python3
"""Writes crates/tiles/src/wmts/axis_tables.rs from PROJ's proj.db: EPSG's axis order.

A WMTS capabilities document writes TopLeftCorner and BoundingBox corners in the axis order
of the SupportedCRS as its authority defines it (OGC 07-057r7, 6.1). GDAL's WMTS driver swaps
the two numbers of a `urn:ogc:def:crs:EPSG::<code>` system when OGRSpatialReference's
EPSGTreatsAsLatLong (a geographic system whose first axis points north) or
EPSGTreatsAsNorthingEasting (a projected system whose axes point north then east, or north/north
or south/south named "Northing" then "Easting", as polar stereographic ones) holds. The
crs-definitions registry Basin uses has WKT 1 without AXIS, so the facts come from here.
Two tables result: the few geographic systems whose first axis is longitude (all others are
latitude first), and the projected systems that are northing first, as code ranges.

Run with the proj.db of the PROJ version GDAL uses (the tests compare with GDAL):

    python3 scripts/wmts_axis_tables.py [/usr/share/proj/proj.db]
"""
import pathlib
import sqlite3
import sys

OUT = pathlib.Path(__file__).resolve().parent.parent / "crates/tiles/src/wmts/axis_tables.rs"

AXES = """
select c.code, a1.name, a1.orientation, a2.name, a2.orientation, cs.type
from {table} c
join coordinate_system cs
  on cs.auth_name = c.coordinate_system_auth_name and cs.code = c.coordinate_system_code
join axis a1
  on a1.coordinate_system_auth_name = c.coordinate_system_auth_name
  and a1.coordinate_system_code = c.coordinate_system_code and a1.coordinate_system_order = 1
join axis a2
  on a2.coordinate_system_auth_name = c.coordinate_system_auth_name
  and a2.coordinate_system_code = c.coordinate_system_code and a2.coordinate_system_order = 2
where c.auth_name = 'EPSG'
"""


def direction(orientation):
    # "North along 90°E" is the direction north with a meridian, as PROJ reports it.
    return orientation.lower().split()[0]


def northing_easting(name1, orientation1, name2, orientation2):
    first, second = direction(orientation1), direction(orientation2)
    if (first, second) == ("north", "east"):
        return True
    return (
        first == second
        and first in ("north", "south")
        and name1.lower().startswith("northing")
        and name2.lower().startswith("easting")
    )


def ranges(codes):
    runs = []
    for code in sorted(codes):
        if runs and runs[-1][1] == code - 1:
            runs[-1][1] = code
        else:
            runs.append([code, code])
    return runs


def packed(codes):
    """Codes filling lines of up to 100 columns, as rustfmt lays out a short-item array."""
    lines = []
    for code in codes:
        item = f"{code},"
        if lines and len(lines[-1]) + 1 + len(item) <= 100:
            lines[-1] += " " + item
        else:
            lines.append("    " + item)
    return lines


def main():
    db = sqlite3.connect(sys.argv[1] if len(sys.argv) > 1 else "/usr/share/proj/proj.db")
    version = db.execute("select value from metadata where key='EPSG.VERSION'").fetchone()[0]
    projected = [
        int(code)
        for code, name1, orientation1, name2, orientation2, _ in db.execute(
            AXES.format(table="projected_crs")
        )
        if int(code) < 65536 and northing_easting(name1, orientation1, name2, orientation2)
    ]
    geographic_east_first = sorted(
        int(code)
        for code, _, orientation1, _, _, cs_type in db.execute(AXES.format(table="geodetic_crs"))
        if int(code) < 65536 and cs_type == "ellipsoidal" and direction(orientation1) != "north"
    )
    lines = [
        f"//! Generated from PROJ's proj.db (EPSG {version}) by scripts/wmts_axis_tables.py;",
        "//! do not edit by hand.",
        "",
        "/// EPSG geographic systems (below 65536) whose first axis is longitude, ascending; every",
        "/// other EPSG geographic system is latitude first.",
        "pub(super) const GEOGRAPHIC_LONGITUDE_FIRST: &[u16] = &[",
    ]
    lines += packed(geographic_east_first)
    lines += [
        "];",
        "",
        f"/// EPSG projected systems (below 65536) that are northing first ({len(projected)}"
        " codes), as",
        "/// inclusive ascending ranges.",
        "pub(super) const PROJECTED_NORTHING_FIRST: &[(u16, u16)] = &[",
    ]
    lines += [f"    ({first}, {last})," for first, last in ranges(projected)]
    lines.append("];")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
