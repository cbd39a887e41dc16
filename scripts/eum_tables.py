#!/usr/bin/env python3
"""Writes crates/formats/src/dfs/eum_tables.rs from the EUM definition file of mikecore.

DFS and .mesh files say what an item measures and in which unit by integer EUM codes (100000
water level, 1000 metre). The codes are interoperability identifiers: they mean only what the
reference package's definition file, `EUM.xml` (shipped with mikecore in `bin/linux/`), says.
This script takes from it each item type's code, description, default unit and allowed units,
and each unit's code, description and abbreviation. It adds MIKE IO's enum names (EUMType,
EUMUnit) as further spellings, as MIKE IO users write `meter_pow_3_per_sec` for `m^3/s`; only
names of codes the definition file has are kept.

Name lookup (crates/formats/src/dfs/eum.rs) is case-insensitive on a normalised key; the rules
are decided here, once, and written out as sorted tables:

* normalise: ASCII lower case, MIKE IO's `_pow_` dropped (`meter_pow_3` is `meter^3`), `/` read
  as `per`, `%` as `percent`, `$` as `currency`, every other character but ASCII letters and
  digits dropped; so `m^3/s`, `M3/S` and `m3/s` meet, as do `meter^3/sec` and
  `meter_pow_3_per_sec`.
* an exact spelling (case-sensitive) names MIKE IO's code when it is a MIKE IO name, else the
  lowest code that spells so: the definition file reuses spellings (`m` is metre 1000 and
  metres of water 6105, `m^3/s` 1800 and 6302) and the lowest is the plain one.
* a key names a code when every spelling of the definition file folded into it names that
  code (MIKE IO's names decide only keys no spelling of the file has); a key that folds
  different units together (`ml` millilitre and `Ml` megalitre) names none.
* spellings whose exact answer the key does not give (`ml`, `Ml`, `-`) go in the exact tables,
  looked up first.

Run with the mikecore and MIKE IO versions the tests compare with:

    python3 scripts/eum_tables.py [path/to/EUM.xml]
"""
import importlib.metadata
import pathlib
import sys
import xml.etree.ElementTree as ET

OUT = pathlib.Path(__file__).resolve().parent.parent / "crates/formats/src/dfs/eum_tables.rs"


def normalise(name):
    key = []
    for char in name.lower().replace("_pow_", ""):
        if char == "/":
            key.append("per")
        elif char == "%":
            key.append("percent")
        elif char == "$":
            key.append("currency")
        elif char.isascii() and char.isalnum():
            key.append(char)
    return "".join(key)


def rows(root, group):
    for node in root.iter("Group"):
        if node.get("Name") == group:
            return node.find("Rows").findall("R")
    sys.exit(f"no group {group} in the definition file")


def lookup_tables(file_spellings, mikeio_names):
    """(exact, keys): the sorted exact-spelling and normalised-key tables of the module doc."""
    by_spelling = {}
    for spelling, code in file_spellings:
        by_spelling.setdefault(spelling, set()).add(code)
    for spelling, code in mikeio_names.items():
        by_spelling.setdefault(spelling, set()).add(code)

    def exact(spelling):
        return mikeio_names.get(spelling, min(by_spelling[spelling]))

    # The definition file's spellings decide a key; MIKE IO's names only keys of their own.
    folded = {}
    for spelling, _ in file_spellings:
        if key := normalise(spelling):
            folded.setdefault(key, set()).add(exact(spelling))
    file_keys = set(folded)
    for spelling in mikeio_names:
        if (key := normalise(spelling)) and key not in file_keys:
            folded.setdefault(key, set()).add(exact(spelling))
    keys = {key: codes.pop() for key, codes in folded.items() if len(codes) == 1}
    exact_table = {
        spelling: exact(spelling)
        for spelling in by_spelling
        if keys.get(normalise(spelling)) != exact(spelling)
    }
    for spelling, code in mikeio_names.items():
        assert exact_table.get(spelling, keys.get(normalise(spelling))) == code, spelling
    return sorted(exact_table.items()), sorted(keys.items())


def rust_str(text):
    assert text.isascii() and "\\" not in text, text
    return '"' + text.replace('"', '\\"') + '"'


def pairs(name, doc, table):
    lines = [f"/// {line}" for line in doc]
    lines.append(f"pub(crate) const {name}: &[(&str, i32)] = &[")
    lines += [f"    ({rust_str(spelling)}, {code})," for spelling, code in table]
    return lines + ["];", ""]


def main():
    import mikecore
    import mikeio

    default_xml = pathlib.Path(mikecore.__file__).parent / "bin/linux/EUM.xml"
    root = ET.parse(sys.argv[1] if len(sys.argv) > 1 else default_xml).getroot()
    units = {int(r.get("MzId")): r for r in rows(root, "Units")}
    items = {int(r.get("MzId")): r for r in rows(root, "Items")}
    unit_codes = {r.get("Ident"): code for code, r in units.items()}

    item_lines = []
    for code in sorted(items):
        row = items[code]
        default = unit_codes[row.get("DefaultUnit")]
        # As the reference library lists them: the default first, then the allowed units in
        # the file's order, once each; names of units the file lacks (two typos) are skipped.
        allowed = [default]
        for ident in row.get("AllowedUnits").split(";"):
            if ident in unit_codes and unit_codes[ident] not in allowed:
                allowed.append(unit_codes[ident])
        listed = ", ".join(str(unit) for unit in allowed)
        item_lines.append(f"    ({code}, {rust_str(row.get('Desc'))}, {default}, &[{listed}]),")

    unit_spellings = [
        (row.get(field), code)
        for code, row in units.items()
        for field in ("Desc", "Abbr", "Alias")
        if row.get(field)
    ]
    item_spellings = [(row.get("Desc"), code) for code, row in items.items()]
    unit_exact, unit_keys = lookup_tables(
        unit_spellings, {u.name: u.value for u in mikeio.EUMUnit if u.value in units}
    )
    item_exact, item_keys = lookup_tables(
        item_spellings, {t.name: t.value for t in mikeio.EUMType if t.value in items}
    )

    mikecore_version = importlib.metadata.version("mikecore")
    lines = [
        f"//! Generated from the EUM definition file of mikecore {mikecore_version}",
        f"//! (`bin/linux/EUM.xml`) and the EUMType/EUMUnit names of MIKE IO {mikeio.__version__}",
        "//! by scripts/eum_tables.py; do not edit by hand. The codes are interoperability",
        "//! identifiers: they mean what the reference package's definition file says.",
        "",
        "/// EUM item types ascending by code: (code, description, default unit, allowed units).",
        "/// The allowed units are listed as the reference library does: the default first.",
        "pub(crate) const ITEMS: &[(i32, &str, i32, &[i32])] = &[",
        *item_lines,
        "];",
        "",
        "/// EUM units ascending by code: (code, description, abbreviation).",
        "pub(crate) const UNITS: &[(i32, &str, &str)] = &[",
    ]
    lines += [
        f"    ({code}, {rust_str(units[code].get('Desc'))}, {rust_str(units[code].get('Abbr'))}),"
        for code in sorted(units)
    ]
    lines += ["];", ""]
    lines += pairs(
        "ITEM_EXACT",
        ["Item type spellings matched exactly, sorted: those the normalised key does not give."],
        item_exact,
    )
    lines += pairs(
        "ITEM_KEYS",
        ["Normalised item type names (descriptions, MIKE IO names), sorted by key."],
        item_keys,
    )
    lines += pairs(
        "UNIT_EXACT",
        ["Unit spellings matched exactly, sorted: those the normalised key does not give."],
        unit_exact,
    )
    lines += pairs(
        "UNIT_KEYS",
        [
            "Normalised unit spellings (descriptions, abbreviations, aliases, MIKE IO names),",
            "sorted by key; a key folding different units together is left out.",
        ],
        unit_keys,
    )
    OUT.write_text("\n".join(lines).rstrip("\n") + "\n")


if __name__ == "__main__":
    main()
