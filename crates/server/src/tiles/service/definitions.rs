//! Tiles datasets: defining one over a grid or mesh (its schemes, levels and colours), writing
//! its definition file, and reading it back (docs/tiles.md).

use super::*;

impl TileService {
    /// Creates a tiles dataset drawing `source` with the requested schemes, in the source's
    /// project. Needs read access to the source and `canCreateContent` on its project.
    /// 404 when the caller cannot see dataset `source`, 403 when it may not read it or create
    /// content in its project: who may define tiles, decided before the request's body is
    /// read.
    pub(crate) async fn authorize_define(
        &self,
        caller: &Caller,
        source: DatasetId,
    ) -> Result<(), TileError> {
        let row = self.readable(caller, source).await?;
        self.datasets.creatable(caller, row.project_id).await?;
        Ok(())
    }

    pub(crate) async fn define(
        &self,
        caller: &Caller,
        source: DatasetId,
        request: DefineTilesRequest,
    ) -> Result<DatasetRow, TileError> {
        let name = DatasetService::parse_name(&request.name)?;
        let (source_row, base) = self.tileable(caller, source).await?;
        if source_row.dataset_format == TILES_FORMAT {
            return Err(TileError::NotTileable(
                "define schemes on the dataset with the data, not on a tiles dataset".to_owned(),
            ));
        }
        let schemes = definition::resolve_all(&request.tiling_schemes, &base.description)
            .map_err(TileError::Schemes)?;
        let stores_tiles = self.check_stored_tiles(&base, schemes)?;
        let tenant = self
            .datasets
            .creatable(caller, source_row.project_id)
            .await?;
        let definition = Definition {
            version: 1,
            source_dataset_id: source,
            tiling_schemes: request.tiling_schemes,
        };
        let id = DatasetId::new_random();
        let (path, written) = self
            .write_definition(source_row.tenant_id, id, &definition)
            .await?;
        let mut input = NewDataset::stored(id, name, &path, &written);
        input.description = request.description.unwrap_or_default();
        input.details = Some(ContentDetails {
            dataset_format: TILES_FORMAT.to_owned(),
            dataset_type: "tiles".to_owned(),
            temporal_information: None,
            spatial_information: None,
        });
        match self
            .create_tiles_dataset(
                caller,
                tenant,
                (source_row.project_id, source),
                input,
                stores_tiles,
            )
            .await
        {
            Ok(row) => {
                if stores_tiles {
                    self.pyramid_queued.notify_one();
                }
                Ok(row)
            }
            Err(error) => {
                if let Err(cleanup) = self.blobs.delete(&path).await {
                    tracing::warn!(error = %cleanup, blob = %path.key(), "could not remove the definition of a failed tiles dataset");
                }
                Err(error)
            }
        }
    }

    /// Writes the definition of new tiles dataset `id` to its blob.
    pub(super) async fn write_definition(
        &self,
        tenant: crate::ids::TenantId,
        id: DatasetId,
        definition: &Definition,
    ) -> Result<(BlobPath, basin_blob::Written), TileError> {
        let bytes = serde_json::to_vec_pretty(definition).map_err(anyhow::Error::from)?;
        if bytes.len() > DEFINITION_BYTES_MAX {
            let mut errors = crate::error::FieldErrors::new();
            errors.insert(
                "tilingSchemes".to_owned(),
                vec![format!(
                    "the schemes take {} bytes; at most {DEFINITION_BYTES_MAX} may be stored",
                    bytes.len()
                )],
            );
            return Err(TileError::Schemes(errors));
        }
        let path = BlobPath::parse(
            crate::datasets::DATASETS_CONTAINER,
            &format!("{}/{id}/definition.tiles", tenant),
        )
        .map_err(|error| anyhow::anyhow!("cannot name the definition blob: {error}"))?;
        let options = basin_blob::WriteOptions {
            size_max: DEFINITION_BYTES_MAX as u64,
            create_only: true,
            expected_md5: None,
            properties: basin_blob::BlobProperties {
                content_type: Some("application/json".to_owned()),
                ..basin_blob::BlobProperties::default()
            },
        };
        let written = self.put_bytes(&path, Bytes::from(bytes), options).await?;
        Ok((path, written))
    }

    /// Whether `schemes` (drawn from `base`) store levels; refused when they would store more
    /// than `tiles.stored_tiles_max` tiles.
    pub(super) fn check_stored_tiles(
        &self,
        base: &Tileable,
        schemes: Vec<Scheme>,
    ) -> Result<bool, TileError> {
        if schemes.iter().all(|scheme| scheme.stored_levels.is_empty()) {
            return Ok(false);
        }
        let planned = Tileable {
            tiles_key: base.tiles_key.clone(),
            source: base.source.clone(),
            description: base.description.clone(),
            schemes,
            mercator_extent: base.mercator_extent,
            reprojection: None,
            pyramid: None,
        };
        let count = pyramid::stored_tile_count(&planned);
        if count > self.settings.stored_tiles_max {
            return Err(TileError::TooManyStoredTiles {
                count,
                max: self.settings.stored_tiles_max,
            });
        }
        Ok(true)
    }

    /// Creates the tiles dataset's record and, when it stores levels, queues its pyramid, in
    /// one transaction: a tiles dataset never lacks the promise of its stored tiles.
    pub(super) async fn create_tiles_dataset(
        &self,
        caller: &Caller,
        tenant: crate::ids::TenantId,
        (project, source): (crate::ids::ProjectId, DatasetId),
        input: NewDataset,
        stores_tiles: bool,
    ) -> Result<DatasetRow, TileError> {
        let internal = |error: crate::db::StoreError| TileError::Internal(error.into());
        let mut tx = self.db.begin().await.map_err(internal)?;
        let row = self
            .datasets
            .create_in(&mut tx, caller, tenant, project, input)
            .await?;
        if stores_tiles {
            store::insert_pyramid_in(&mut tx, row.id, source, self.clock.now())
                .await
                .map_err(internal)?;
        }
        tx.commit().await.map_err(internal)?;
        Ok(row)
    }

    pub(super) async fn read_definition(&self, row: &DatasetRow) -> Result<Definition, TileError> {
        let path = BlobPath::parse_key(&row.data_path)
            .map_err(|error| anyhow::anyhow!("the dataset has a bad data path: {error}"))?;
        let bytes = self.read_blob(&path, DEFINITION_BYTES_MAX as u64).await?;
        serde_json::from_slice(&bytes).map_err(|error| {
            TileError::Unreadable(format!("the tiles definition cannot be read: {error}"))
        })
    }
}
