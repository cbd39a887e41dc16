#!/usr/bin/env python3
"""Writes crates/formats/src/crs/tables.rs from PROJ's proj.db (EPSG facts and ESRI's names).

Identification of ESRI coordinate systems (crates/formats/src/crs/identify.rs) needs two facts
that the crs-definitions registry lacks: which EPSG datum each ESRI datum name stands for
(`D_North_American_1983` is EPSG datum 6269) and which registry codes are deprecated (preferred
last when two codes define the same system). Both come from the alias_name, projected_crs and
geodetic_crs tables of proj.db, as do ESRI's names of EPSG systems (the tie-breaker
between registry systems with the same definition). Run with the proj.db of the PROJ version the tests compare with:

    python3 scripts/crs_tables.py [/usr/share/proj/proj.db]
"""
import pathlib
import sqlite3
import sys

OUT = pathlib.Path(__file__).resolve().parent.parent / "crates/formats/src/crs/tables.rs"


def normalise(name):
    return "".join(c.lower() for c in name if c.isascii() and c.isalnum())


def main():
    db = sqlite3.connect(sys.argv[1] if len(sys.argv) > 1 else "/usr/share/proj/proj.db")
    version = db.execute("select value from metadata where key='EPSG.VERSION'").fetchone()[0]
    datums = {}
    for name, code, deprecated in db.execute(
        "select alt_name, a.code, d.deprecated from alias_name a join geodetic_datum d "
        "on d.auth_name = a.auth_name and d.code = a.code where table_name='geodetic_datum' "
        "and source='ESRI' and a.auth_name='EPSG' order by a.code"
    ):
        datums.setdefault(normalise(name), []).append((int(deprecated), int(code)))
    # A name ESRI gives to several datums stands for the one that is not deprecated.
    datums = {
        key: current[0][1]
        for key, codes in datums.items()
        if len(current := [c for c in codes if c[0] == 0] or codes) == 1
    }
    crs_names = sorted(
        {
            (normalise(name), int(code))
            for name, code in db.execute(
                "select alt_name, code from alias_name where table_name in "
                "('projected_crs', 'geodetic_crs') and source='ESRI' and auth_name='EPSG'"
            )
            if int(code) < 65536
        }
    )
    deprecated = sorted(
        int(code)
        for (code,) in db.execute(
            "select code from projected_crs where auth_name='EPSG' and deprecated=1 "
            "union select code from geodetic_crs where auth_name='EPSG' and deprecated=1"
        )
        if int(code) < 65536
    )
    lines = [
        f"//! Generated from PROJ's proj.db (EPSG {version}, with ESRI's names) by",
        "//! scripts/crs_tables.py; do not edit by hand.",
        "",
        "/// ESRI datum names (normalised: ASCII letters and digits, lower case) and the EPSG datum",
        "/// code each stands for, sorted by name for a binary search. A name ESRI gives to several",
        "/// datums stands for the one not deprecated, and is left out when that is not one.",
        "pub(crate) const ESRI_DATUMS: &[(&str, u32)] = &[",
    ]
    lines += [f'    ("{key}", {datums[key]}),' for key in sorted(datums)]
    lines += [
        "];",
        "",
        "/// ESRI names of EPSG systems (below 65536; normalised like the datum names), sorted by",
        "/// name: what tells apart registry systems that define the same thing, as ESRI's name",
        "/// `EUREF_FIN_TM35FIN` picks EPSG:3067 among the identical ETRS89 / UTM zone 35N ones.",
        "pub(crate) const ESRI_SYSTEMS: &[(&str, u16)] = &[",
    ]
    lines += [f'    ("{key}", {code}),' for key, code in crs_names]
    lines += [
        "];",
        "",
        "/// EPSG codes (below 65536) of deprecated geographic and projected systems, ascending.",
        "pub(crate) const DEPRECATED: &[u16] = &[",
    ]
    lines += [
        "    " + ", ".join(str(code) for code in deprecated[i : i + 10]) + ","
        for i in range(0, len(deprecated), 10)
    ]
    lines.append("];")
    OUT.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
