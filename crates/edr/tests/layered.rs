//! Positions in a layered mesh take its surface: the top element of the column for element
//! items, and for the "Z coordinate" node item the top face's corner (the water surface), not
//! the bottom face's node at the same x and y.

use std::path::PathBuf;

use basin_edr::position::PositionQuery;
use basin_edr::{Dataset, EdrError, Limits};
use basin_formats::Catalogue;

fn sample() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/corpus/dfs-samples/mesh3d_sigma.dfsu")
}

#[test]
fn the_z_coordinate_at_a_position_is_the_surface_of_its_column() -> Result<(), EdrError> {
    let catalogue = Catalogue::standard();
    let dataset = Dataset::describe(&catalogue, ".dfsu", &sample())?;
    // Next to the column of nodes at (100, 0): 3 (z -12), 4 (z -6) and 5 (the surface).
    let query = PositionQuery::parse(
        Some("POINT(95 2)"),
        None,
        None,
        Some("EPSG:32632"),
        &Limits::default(),
    )?;
    let answer = query.answer(&catalogue, &dataset, &sample(), &Limits::default())?;
    let names: Vec<&str> = answer.parameters.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(names, ["Z coordinate", "Temperature"]);
    let z: Vec<f32> = answer.points[0].values[0]
        .iter()
        .map(|value| *value as f32)
        .collect();
    // MIKE IO's node z of node 5 at the three steps (the sample's .json, zn_dynamic).
    assert_eq!(z, [-0.0, 0.05, -0.02]);
    Ok(())
}
