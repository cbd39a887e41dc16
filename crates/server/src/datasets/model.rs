//! Dataset rows and wire shapes.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::db::JsonText;
use crate::http::time::WireTime;
use crate::ids::{DatasetId, ProjectId, TenantId};

crate::wire_enum! {
    /// Kind of dataset. Written in lower case on the wire (see [`DatasetType::wire`]).
    pub(crate) enum DatasetType {
        /// A plain file.
        File,
        /// Grids and meshes with items and time.
        Multidimensional,
        /// Time series.
        Timeseries,
        /// GIS vector data.
        Gisvectordata,
        /// Pre-rendered tiles.
        Tiles,
    }
}

impl DatasetType {
    /// The lower-case wire name (`file`, `multidimensional`, ...).
    pub(crate) fn wire(self) -> String {
        self.as_str().to_ascii_lowercase()
    }
}

/// A dataset row as stored.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub(crate) struct DatasetRow {
    /// Id.
    pub(crate) id: DatasetId,
    /// Tenant.
    pub(crate) tenant_id: TenantId,
    /// Project holding it.
    pub(crate) project_id: ProjectId,
    /// Name.
    pub(crate) name: String,
    /// Description.
    pub(crate) description: String,
    /// Kind, lower case.
    pub(crate) dataset_type: Option<String>,
    /// Format: the file extension with its dot, lower case (`.dfsu`), or empty.
    pub(crate) dataset_format: String,
    /// Where the bytes are in the blob store.
    pub(crate) data_path: String,
    /// Free JSON object.
    pub(crate) metadata: JsonText,
    /// Free JSON object.
    pub(crate) properties: JsonText,
    /// JSON array of strings.
    pub(crate) tags: JsonText,
    /// JSON object, when known.
    pub(crate) temporal_information: Option<JsonText>,
    /// JSON object, when known.
    pub(crate) spatial_information: Option<JsonText>,
    /// Bytes; stored as a signed 64-bit integer, which no blob comes near.
    #[sqlx(try_from = "i64")]
    pub(crate) storage_size: u64,
    /// Content checksum, `md5:<hex>` (none until known).
    pub(crate) checksum: Option<String>,
    /// Bumped on every write.
    pub(crate) row_version: i64,
    /// Creation time.
    pub(crate) created_at: DateTime<Utc>,
    /// Creator.
    pub(crate) created_by: Option<Uuid>,
    /// Last change.
    pub(crate) updated_at: DateTime<Utc>,
    /// Last changer.
    pub(crate) updated_by: Option<Uuid>,
    /// In the recycle bin since.
    pub(crate) deleted_at: Option<DateTime<Utc>>,
    /// Deleted by.
    pub(crate) deleted_by: Option<Uuid>,
}

impl DatasetRow {
    /// A key that changes whenever the content may have changed (its path, size, format and
    /// checksum, or its row version while the checksum is unknown): what caches of things read
    /// from the content are keyed by.
    pub(crate) fn content_key(&self) -> String {
        let version = match &self.checksum {
            Some(checksum) => checksum.clone(),
            None => format!("v{}", self.row_version),
        };
        format!(
            "{}|{}|{}|{}",
            self.data_path, self.storage_size, self.dataset_format, version
        )
    }
}

/// A dataset on the wire.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DatasetDto {
    /// Id.
    pub(crate) id: DatasetId,
    /// Name.
    pub(crate) name: String,
    /// Description.
    pub(crate) description: String,
    /// `file`, `multidimensional`, `timeseries`, `gisvectordata` or `tiles`; absent when unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) dataset_type: Option<String>,
    /// Project.
    pub(crate) project_id: ProjectId,
    /// Location of the content.
    pub(crate) data_path: String,
    /// Free key/value object.
    #[schema(value_type = Object)]
    pub(crate) metadata: JsonText,
    /// Free key/value object.
    #[schema(value_type = Object)]
    pub(crate) properties: JsonText,
    /// Tags.
    #[schema(value_type = Vec<String>)]
    pub(crate) tags: JsonText,
    /// Time extent, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub(crate) temporal_information: Option<JsonText>,
    /// Spatial extent, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub(crate) spatial_information: Option<JsonText>,
    /// Size in bytes.
    pub(crate) storage_size: u64,
    /// File format, e.g. `.dfsu`.
    pub(crate) dataset_format: String,
    /// Content checksum, `md5:<hex>` (none until known).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) checksum: Option<String>,
    /// Opaque; send back to update.
    pub(crate) row_version: String,
    /// Creation time.
    pub(crate) created_at: WireTime,
    /// Creator.
    pub(crate) created_by: Option<Uuid>,
    /// Last change.
    pub(crate) updated_at: WireTime,
    /// Last changer (may be null).
    pub(crate) updated_by: Option<Uuid>,
}

impl From<&DatasetRow> for DatasetDto {
    fn from(row: &DatasetRow) -> Self {
        Self {
            id: row.id,
            name: row.name.clone(),
            description: row.description.clone(),
            dataset_type: row.dataset_type.clone(),
            project_id: row.project_id,
            data_path: row.data_path.clone(),
            metadata: row.metadata.clone(),
            properties: row.properties.clone(),
            tags: row.tags.clone(),
            temporal_information: row.temporal_information.clone(),
            spatial_information: row.spatial_information.clone(),
            storage_size: row.storage_size,
            dataset_format: row.dataset_format.clone(),
            checksum: row.checksum.clone(),
            row_version: format!("{}", row.row_version),
            created_at: row.created_at.into(),
            created_by: row.created_by,
            updated_at: row.updated_at.into(),
            updated_by: row.updated_by,
        }
    }
}

/// `PUT /api/metadata/project/{projectId}/dataset`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct UpdateDatasetRequest {
    /// Which dataset.
    pub(crate) id: DatasetId,
    /// New name.
    #[schema(min_length = 1, max_length = 255)]
    pub(crate) name: Option<String>,
    /// New description.
    pub(crate) description: Option<String>,
    /// New metadata object.
    #[schema(value_type = Option<Object>)]
    pub(crate) metadata: Option<serde_json::Value>,
    /// New properties object.
    #[schema(value_type = Option<Object>)]
    pub(crate) properties: Option<serde_json::Value>,
    /// New tags.
    pub(crate) tags: Option<Vec<String>>,
    /// The version last read; a stale one is 409.
    pub(crate) row_version: Option<String>,
}

/// `POST /api/metadata/dataset/{id}/move`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MoveDatasetRequest {
    /// The destination project.
    pub(crate) target_project_id: ProjectId,
}

/// The format of a file name: its extension with the dot, lower case (`.dfsu`), or empty.
pub(crate) fn format_of(file_name: &str) -> String {
    match file_name.rsplit_once('.') {
        Some((stem, extension))
            if !stem.is_empty()
                && !extension.is_empty()
                && extension.len() <= 16
                && extension.chars().all(|c| c.is_ascii_alphanumeric()) =>
        {
            format!(".{}", extension.to_ascii_lowercase())
        }
        _ => String::new(),
    }
}

/// The dataset type a format suggests.
pub(crate) fn type_of(format: &str) -> DatasetType {
    match format {
        ".dfsu" | ".dfs1" | ".dfs2" | ".dfs3" | ".mesh" | ".tif" | ".tiff" | ".asc" | ".vtu"
        | ".nc" => DatasetType::Multidimensional,
        ".dfs0" => DatasetType::Timeseries,
        ".shp" | ".geojson" | ".json" | ".gpkg" | ".kml" => DatasetType::Gisvectordata,
        ".mbtiles" | ".pmtiles" => DatasetType::Tiles,
        _ => DatasetType::File,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_come_from_the_extension() {
        assert_eq!(format_of("Lake.DFSU"), ".dfsu");
        assert_eq!(format_of("archive.tar.gz"), ".gz");
        assert_eq!(format_of("README"), "");
        assert_eq!(format_of(".hidden"), "");
        assert_eq!(format_of("odd.ext with space"), "");
        assert_eq!(type_of(".dfs0"), DatasetType::Timeseries);
        assert_eq!(type_of(".xyz").wire(), "file");
    }
}
