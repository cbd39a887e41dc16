//! The text form of an [`Inspection`]: labelled lines and aligned tables, in the spirit of
//! MIKE IO's summaries and the reference tools' header dumps. Numbers print in their shortest
//! exact form, in exponent form when very large or small; statistics to seven significant
//! digits.

use std::fmt::{self, Display, Formatter, Write};

use super::{
    DfsSection, DfsTimeAxis, GeometrySummary, GridSummary, Inspection, MeshSummary, TimeAxisSummary,
};

/// Width of the label column.
const LABEL_WIDTH: usize = 12;

impl Display for Inspection {
    fn fmt(&self, out: &mut Formatter<'_>) -> fmt::Result {
        line(
            out,
            "File",
            format!("{} ({})", self.file, bytes(self.file_bytes)),
        )?;
        let reader = match &self.reader {
            Some(reader) => format!("{reader} ({})", self.format),
            None => format!("none ({})", self.format),
        };
        line(out, "Reader", reader)?;
        if let Some(kind) = &self.kind {
            line(out, "Kind", kind)?;
        }
        if let Some(crs) = &self.crs {
            let mut text = match crs.epsg {
                Some(code) => format!("EPSG:{code}"),
                None => crs.given_as.to_owned(),
            };
            if let Some(name) = &crs.name {
                let _ = write!(text, " {name}");
            }
            if crs.given_as == "name" && crs.name.as_deref() != Some(crs.definition.as_str()) {
                let _ = write!(text, " (given as {})", crs.definition);
            }
            line(out, "CRS", text)?;
        } else if self.kind.is_some() {
            line(out, "CRS", "none")?;
        }
        if let Some([min_x, min_y, max_x, max_y]) = self.extent {
            line(
                out,
                "Extent",
                format!(
                    "x {} to {}, y {} to {}",
                    number(min_x),
                    number(max_x),
                    number(min_y),
                    number(max_y)
                ),
            )?;
        }
        if let Some(geometry) = &self.geometry {
            write_geometry(out, geometry)?;
        }
        if let Some(time) = &self.time {
            line(out, "Time", time_text(time))?;
        }
        write_items(out, self)?;
        write_statistics(out, self)?;
        write_values(out, self)?;
        if let Some(dfs) = &self.dfs {
            write_dfs(out, dfs)?;
        }
        if !self.notes.is_empty() {
            writeln!(out, "Notes")?;
            for note in &self.notes {
                writeln!(out, "  {note}")?;
            }
        }
        Ok(())
    }
}

fn line(out: &mut Formatter<'_>, label: &str, text: impl Display) -> fmt::Result {
    writeln!(out, "{label:<LABEL_WIDTH$}{text}")
}

fn write_geometry(out: &mut Formatter<'_>, geometry: &GeometrySummary) -> fmt::Result {
    match geometry {
        GeometrySummary::Grid(grid) => write_grid(out, grid),
        GeometrySummary::Mesh(mesh) => write_mesh(out, mesh),
        GeometrySummary::TimeSeries => Ok(()),
        GeometrySummary::Features(features) => {
            let types: Vec<String> = features
                .geometry_types
                .iter()
                .map(|(name, count)| format!("{count} {name}"))
                .collect();
            let mut text = format!(
                "{} feature{}, declared {}",
                features.count,
                if features.count == 1 { "" } else { "s" },
                features.declared_geometry
            );
            if !types.is_empty() {
                let _ = write!(text, ": {}", types.join(", "));
            }
            if features.null_geometries > 0 {
                let _ = write!(text, ", {} without geometry", features.null_geometries);
            }
            if features.has_z {
                text.push_str(", with z");
            }
            if features.has_m {
                text.push_str(", with m");
            }
            line(out, "Features", text)?;
            let rows = features
                .fields
                .iter()
                .enumerate()
                .map(|(index, field)| {
                    vec![
                        index.to_string(),
                        field.name.clone(),
                        field.field_type.to_owned(),
                        field.width.map(|w| w.to_string()).unwrap_or_default(),
                        field.decimals.map(|d| d.to_string()).unwrap_or_default(),
                    ]
                })
                .collect();
            line(out, "Fields", features.fields.len())?;
            table(out, 2, &["#", "Name", "Type", "Width", "Decimals"], rows)
        }
        GeometrySummary::Points(points) => line(out, "Points", points.count),
    }
}

fn write_grid(out: &mut Formatter<'_>, grid: &GridSummary) -> fmt::Result {
    let mut shape = format!("{} columns x {} rows", grid.columns, grid.rows);
    if grid.layers > 1 || grid.vertical.is_some() {
        let _ = write!(shape, " x {} layers", grid.layers);
    }
    let _ = write!(
        shape,
        ", cells {} x {}",
        significant(grid.cell_width),
        significant(grid.cell_height)
    );
    if grid.rotation_degrees != 0.0 {
        let _ = write!(shape, ", rotated {}°", significant(grid.rotation_degrees));
    }
    line(out, "Grid", shape)?;
    let [origin_x, _, _, origin_y, _, _] = grid.transform;
    line(
        out,
        "",
        format!(
            "corner of the first cell ({}, {}), geotransform [{}]",
            number(origin_x),
            number(origin_y),
            grid.transform.map(number).join(", ")
        ),
    )?;
    if let Some([origin, spacing]) = grid.vertical {
        line(
            out,
            "",
            format!("layers from z {} every {}", number(origin), number(spacing)),
        )?;
    }
    Ok(())
}

fn write_mesh(out: &mut Formatter<'_>, mesh: &MeshSummary) -> fmt::Result {
    let kinds: Vec<String> = mesh
        .element_kinds
        .iter()
        .map(|(name, count)| format!("{count} {name}"))
        .collect();
    let mut text = format!("{} nodes, {} elements", mesh.nodes, mesh.elements);
    if !kinds.is_empty() {
        let _ = write!(text, " ({})", kinds.join(", "));
    }
    line(out, "Mesh", text)?;
    if let Some(layers) = mesh.layers {
        line(
            out,
            "",
            format!(
                "{layers} layers, {} sigma",
                mesh.sigma_layers.unwrap_or_default()
            ),
        )?;
    }
    if let Some([low, high]) = mesh.z_range {
        let quantity = if mesh.z_quantity.is_empty() {
            "z"
        } else {
            mesh.z_quantity.as_str()
        };
        let unit = if mesh.z_unit.is_empty() {
            String::new()
        } else {
            format!(" {}", mesh.z_unit)
        };
        line(
            out,
            "",
            format!("node {quantity} {} to {}{unit}", number(low), number(high)),
        )?;
    }
    Ok(())
}

fn time_text(time: &TimeAxisSummary) -> String {
    let steps = if time.steps == 1 {
        "1 step".to_owned()
    } else {
        format!("{} steps", time.steps)
    };
    if time.kind == "none" {
        return "none".to_owned();
    }
    let mut text = format!("{}, {steps}", time.kind);
    match (&time.start, &time.end) {
        (Some(start), Some(end)) if time.steps > 1 => {
            let _ = write!(text, ", {start} to {end}");
        }
        (Some(start), _) => {
            let _ = write!(text, ", {start}");
        }
        _ => {}
    }
    if let (Some(first), Some(last)) = (time.first_offset_seconds, time.last_offset_seconds) {
        let _ = write!(text, ", {} s to {} s", number(first), number(last));
    }
    if let Some(interval) = time.interval_seconds.filter(|_| time.steps > 1) {
        let _ = write!(text, ", every {}", duration(interval));
    }
    text
}

fn write_items(out: &mut Formatter<'_>, inspection: &Inspection) -> fmt::Result {
    if inspection.items.is_empty() {
        return Ok(());
    }
    line(out, "Items", inspection.items.len())?;
    let rows = inspection
        .items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let eum = match (item.eum_item, item.eum_unit) {
                (Some(code), Some(unit)) => format!("{code}/{unit}"),
                (Some(code), None) => code.to_string(),
                _ => String::new(),
            };
            vec![
                index.to_string(),
                item.name.clone(),
                item.quantity.clone(),
                item.unit.clone(),
                eum,
                item.data_type.to_owned(),
                item.value_type.to_owned(),
                item.location.to_owned(),
                item.nodata.map(number).unwrap_or_default(),
            ]
        })
        .collect();
    table(
        out,
        2,
        &[
            "#",
            "Name",
            "Quantity",
            "Unit",
            "EUM",
            "Type",
            "Value type",
            "On",
            "Nodata",
        ],
        rows,
    )
}

fn write_statistics(out: &mut Formatter<'_>, inspection: &Inspection) -> fmt::Result {
    let Some(statistics) = inspection
        .statistics
        .as_ref()
        .filter(|statistics| !statistics.is_empty())
    else {
        return Ok(());
    };
    writeln!(out, "Statistics")?;
    let optional = |value: Option<f64>| value.map(significant).unwrap_or_default();
    let rows = statistics
        .iter()
        .enumerate()
        .map(|(index, item)| {
            vec![
                index.to_string(),
                item.item.clone(),
                optional(item.min),
                optional(item.max),
                optional(item.mean),
                item.count_valid.to_string(),
                item.count_nan.to_string(),
            ]
        })
        .collect();
    table(
        out,
        2,
        &["#", "Name", "Min", "Max", "Mean", "Valid", "NaN"],
        rows,
    )
}

fn write_values(out: &mut Formatter<'_>, inspection: &Inspection) -> fmt::Result {
    let Some(steps) = &inspection.values else {
        return Ok(());
    };
    writeln!(out, "Values")?;
    for step in steps {
        let when = match (&step.time, step.offset_seconds) {
            (Some(time), _) => format!(" {time}"),
            (None, Some(offset)) => format!(" +{} s", number(offset)),
            (None, None) => String::new(),
        };
        writeln!(out, "  step {}{when}", step.step)?;
        for (index, values) in step.items.iter().enumerate() {
            let name = inspection
                .items
                .get(index)
                .map_or("", |item| item.name.as_str());
            let text: Vec<String> = values.iter().copied().map(number).collect();
            writeln!(out, "    {name}: {}", text.join(" "))?;
        }
    }
    Ok(())
}

fn write_dfs(out: &mut Formatter<'_>, dfs: &DfsSection) -> fmt::Result {
    writeln!(out, "DFS container")?;
    let field =
        |out: &mut Formatter<'_>, label: &str, text: String| writeln!(out, "  {label:<18}{text}");
    field(out, "Title", format!("{:?}", dfs.title))?;
    field(
        out,
        "Application",
        format!("{:?} version {}", dfs.application, dfs.application_version),
    )?;
    field(
        out,
        "Data type",
        format!(
            "{}, statistics type {}, {}",
            dfs.data_type,
            dfs.statistics_type,
            if dfs.compressed {
                "compressed"
            } else {
                "not compressed"
            }
        ),
    )?;
    let deletes = &dfs.delete_values;
    field(
        out,
        "Delete values",
        format!(
            "float {:e}, double {}, byte {}, int {}, uint {}",
            deletes.float,
            number(deletes.double),
            deletes.byte,
            deletes.int,
            deletes.unsigned_int
        ),
    )?;
    match &dfs.projection {
        Some(projection) => field(
            out,
            "Projection",
            format!(
                "{}, origin ({}, {}), orientation {}°",
                abbreviated(&projection.name),
                number(projection.origin_longitude),
                number(projection.origin_latitude),
                number(projection.orientation)
            ),
        )?,
        None => field(out, "Projection", "none".to_owned())?,
    }
    field(out, "Time axis", dfs_time_text(&dfs.time))?;
    write_dfs_items(out, dfs)?;
    write_dfs_extras(out, dfs)?;
    field(
        out,
        "Layout",
        format!(
            "{} header bytes, {} steps of {} bytes",
            dfs.header_bytes, dfs.steps, dfs.bytes_per_step
        ),
    )?;
    field(
        out,
        "Created",
        format!("{}, modified {}", dfs.created, dfs.modified),
    )
}

/// The time axis record in one line.
fn dfs_time_text(time: &DfsTimeAxis) -> String {
    let unit_name = match time.unit {
        1400 => " (second)",
        1401 => " (minute)",
        1402 => " (hour)",
        1403 => " (day)",
        _ => "",
    };
    let mut axis = format!("{}, unit {}{unit_name}", time.kind, time.unit);
    if let Some(start) = &time.start {
        let _ = write!(axis, ", start {start}");
    }
    let _ = write!(
        axis,
        ", offset {}, {} {}, {} steps (first index {})",
        number(time.start_offset),
        if time.kind.ends_with("NonEquidistant") {
            "span"
        } else {
            "step"
        },
        number(time.step_or_span),
        time.steps,
        time.first_index
    );
    axis
}

/// Custom blocks and static items.
fn write_dfs_extras(out: &mut Formatter<'_>, dfs: &DfsSection) -> fmt::Result {
    if !dfs.custom_blocks.is_empty() {
        writeln!(out, "  Custom blocks")?;
        let rows = dfs
            .custom_blocks
            .iter()
            .map(|block| {
                let values = block
                    .values
                    .as_ref()
                    .map(|values| values.iter().copied().map(number).collect::<Vec<_>>())
                    .map(|values| values.join(" "))
                    .unwrap_or_else(|| "...".to_owned());
                vec![
                    block.name.clone(),
                    block.data_type.to_owned(),
                    block.count.to_string(),
                    values,
                ]
            })
            .collect();
        table(out, 4, &["Name", "Type", "Count", "Values"], rows)?;
    }
    if !dfs.static_items.is_empty() {
        writeln!(out, "  Static items")?;
        let rows = dfs
            .static_items
            .iter()
            .enumerate()
            .map(|(index, item)| {
                vec![
                    index.to_string(),
                    item.name.clone(),
                    format!("{}/{}", item.eum_item, item.eum_unit),
                    item.data_type.to_owned(),
                    item.count.to_string(),
                ]
            })
            .collect();
        table(out, 4, &["#", "Name", "EUM", "Type", "Count"], rows)?;
    }
    Ok(())
}

fn write_dfs_items(out: &mut Formatter<'_>, dfs: &DfsSection) -> fmt::Result {
    writeln!(out, "  Dynamic items")?;
    let rows = dfs
        .items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let eum = |code: i32, name: Option<&str>| match name {
                Some(name) => format!("{code} {name}"),
                None => code.to_string(),
            };
            let list = |values: &[f64]| {
                values
                    .iter()
                    .copied()
                    .map(number)
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            let counts: Vec<String> = item.axis.counts.iter().map(i32::to_string).collect();
            vec![
                index.to_string(),
                item.name.clone(),
                eum(item.eum_item, item.eum_item_name),
                eum(item.eum_unit, item.eum_unit_name),
                item.data_type.to_owned(),
                item.value_type.to_owned(),
                item.axis.kind.to_owned(),
                counts.join(" x "),
                list(&item.axis.origins),
                list(&item.axis.spacings),
                item.values_per_step
                    .map(|n| n.to_string())
                    .unwrap_or_default(),
            ]
        })
        .collect();
    table(
        out,
        4,
        &[
            "#",
            "Name",
            "EUM item",
            "EUM unit",
            "Type",
            "Value type",
            "Axis",
            "Counts",
            "Origin",
            "Spacing",
            "Values/step",
        ],
        rows,
    )
}

/// Writes `rows` under `headings`, each column as wide as its widest cell, indented by
/// `indent` spaces; trailing blanks are trimmed.
fn table(
    out: &mut Formatter<'_>,
    indent: usize,
    headings: &[&str],
    rows: Vec<Vec<String>>,
) -> fmt::Result {
    let mut widths: Vec<usize> = headings.iter().map(|h| h.chars().count()).collect();
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let heading_row: Vec<String> = headings.iter().map(|h| (*h).to_owned()).collect();
    for row in std::iter::once(heading_row).chain(rows) {
        let mut text = " ".repeat(indent);
        for (cell, width) in row.iter().zip(&widths) {
            let _ = write!(text, "{cell:<width$}  ");
        }
        writeln!(out, "{}", text.trim_end())?;
    }
    Ok(())
}

/// The shortest exact form of `value`, in exponent form below 1e-4 and from 1e15 on.
pub(super) fn number(value: f64) -> String {
    if value.is_nan() {
        return "NaN".to_owned();
    }
    let magnitude = value.abs();
    if value != 0.0 && !(1e-4..1e15).contains(&magnitude) && value.is_finite() {
        return format!("{value:e}");
    }
    format!("{value}")
}

/// `value` to seven significant digits, in [`number`]'s form.
fn significant(value: f64) -> String {
    let rounded: f64 = format!("{value:.6e}").parse().unwrap_or(value);
    number(rounded)
}

/// A duration in seconds, with a larger unit in brackets when it divides evenly.
fn duration(seconds: f64) -> String {
    let larger = [(86_400.0, "d"), (3600.0, "h"), (60.0, "min")]
        .into_iter()
        .find(|(unit, _)| seconds >= *unit && (seconds / unit).fract() == 0.0);
    match larger {
        Some((unit, name)) => format!("{} s ({} {name})", number(seconds), number(seconds / unit)),
        None => format!("{} s", number(seconds)),
    }
}

/// A file size with a binary unit.
fn bytes(count: u64) -> String {
    let units = ["KiB", "MiB", "GiB", "TiB"];
    let mut size = count as f64;
    let mut unit = None;
    for name in units {
        if size < 1024.0 {
            break;
        }
        size /= 1024.0;
        unit = Some(name);
    }
    match unit {
        Some(name) => format!("{count} bytes, {size:.1} {name}"),
        None => format!("{count} bytes"),
    }
}

/// The first line of a long text (a WKT projection), cut at 60 characters.
fn abbreviated(text: &str) -> String {
    let first: String = text.chars().take(60).collect();
    if first.len() < text.len() {
        format!("{first}...")
    } else {
        first
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_short_and_switch_to_exponents_at_the_extremes() {
        assert_eq!(number(500_000.0), "500000");
        assert_eq!(number(0.1), "0.1");
        assert_eq!(number(-1e-35), "-1e-35");
        assert_eq!(number(f64::NAN), "NaN");
        assert_eq!(number(0.0), "0");
        assert_eq!(significant(0.1 + 0.2), "0.3");
    }

    #[test]
    fn durations_and_sizes_are_readable() {
        assert_eq!(duration(3600.0), "3600 s (1 h)");
        assert_eq!(duration(90.0), "90 s");
        assert_eq!(duration(0.5), "0.5 s");
        assert_eq!(bytes(512), "512 bytes");
        assert_eq!(bytes(2048), "2048 bytes, 2.0 KiB");
        assert_eq!(abbreviated("UTM-32"), "UTM-32");
    }
}
