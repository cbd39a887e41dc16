//! Tiles (`/api/tiles/dataset/{dataset}/...`, `/api/vectortiles/...`) as `app.tiles(dataset)`:
//! the tiling metadata, tiles datasets defined over a dataset, the tiles of a scheme, WMTS
//! (key-value, REST and capabilities) and vector tiles. Sent without an api-version (the tile
//! group knows only 1); tiles are read with [`Reply::bytes`] and [`Reply::headers`].

use std::fmt::Display;

use reqwest::Method;
use serde_json::Value;

use super::{Api, Reply, with_query};
use crate::helpers::{TestApp, routes};

/// The tiles of one dataset as one caller sees them.
#[derive(Clone)]
pub struct Tiles<'a> {
    api: Api<'a>,
    dataset: String,
}

/// One tiling scheme of a dataset.
#[derive(Clone)]
pub struct TileScheme<'a> {
    tiles: Tiles<'a>,
    scheme: String,
}

impl<'a> Api<'a> {
    /// The tiles of `dataset`.
    pub fn tiles(self, dataset: impl Display) -> Tiles<'a> {
        Tiles {
            api: self,
            dataset: dataset.to_string(),
        }
    }
}

impl TestApp {
    /// The tiles of `dataset`, as the bootstrap API key.
    pub fn tiles(&self, dataset: impl Display) -> Tiles<'_> {
        self.api().tiles(dataset)
    }
}

impl<'a> Tiles<'a> {
    /// `GET path` without an api-version.
    async fn get(&self, path: &str) -> Reply {
        let request = self.api.request(Method::GET, path);
        self.api.send(request, None).await
    }

    /// `GET /api/tiles/dataset/{dataset}/metadata`: extents, schemes, times and layers.
    pub async fn metadata(&self) -> Reply {
        self.get(&routes::tiles_metadata(&self.dataset)).await
    }

    /// `POST /api/tiles/dataset/{dataset}/tiles` with `body`: a tiles dataset drawn from this
    /// one (201, its record).
    pub async fn define(&self, body: &Value) -> Reply {
        let path = routes::tiles_definition(&self.dataset);
        let request = self.api.request(Method::POST, &path);
        self.api.send(request, Some(body)).await
    }

    /// The tiling scheme `scheme`.
    pub fn scheme(&self, scheme: impl Display) -> TileScheme<'a> {
        TileScheme {
            tiles: self.clone(),
            scheme: scheme.to_string(),
        }
    }

    /// `GET /api/tiles/dataset/{dataset}/wmts` with the key-value `query` (empty for none: the
    /// capabilities as JSON).
    pub async fn wmts(&self, query: &str) -> Reply {
        self.get(&with_query(routes::wmts(&self.dataset), query))
            .await
    }

    /// `GET .../wmts100/1.0.0/WMTSCapabilities.xml`: the WMTS capabilities document.
    pub async fn wmts_capabilities(&self) -> Reply {
        self.get(&routes::wmts_capabilities(&self.dataset)).await
    }

    /// `GET .../wmts100/{scheme}/{matrix}/{row}/{col}` with `query` (empty for none): a tile in
    /// the WMTS 1.0.0 REST form.
    pub async fn wmts100_tile(
        &self,
        scheme: impl Display,
        matrix: impl Display,
        row: impl Display,
        col: impl Display,
        query: &str,
    ) -> Reply {
        let path = routes::wmts100_tile(&self.dataset, scheme, matrix, row, col);
        self.get(&with_query(path, query)).await
    }

    /// `GET /api/vectortiles/dataset/{dataset}/{zoom}/{col}/{row}.vector.pbf`.
    pub async fn vector_tile(
        &self,
        zoom: impl Display,
        col: impl Display,
        row: impl Display,
    ) -> Reply {
        self.get(&routes::vector_tile(&self.dataset, zoom, col, row))
            .await
    }
}

impl TileScheme<'_> {
    /// `GET .../scheme/{scheme}/{matrix}/{row}/{col}`: one tile.
    pub async fn tile(&self, matrix: impl Display, row: impl Display, col: impl Display) -> Reply {
        self.tile_with(matrix, row, col, "").await
    }

    /// One tile with `query` (`outputType=RawData`, `timeStep=2`, `layer=1`, ...).
    pub async fn tile_with(
        &self,
        matrix: impl Display,
        row: impl Display,
        col: impl Display,
        query: &str,
    ) -> Reply {
        let path = routes::scheme_tile(&self.tiles.dataset, &self.scheme, matrix, row, col);
        self.tiles.get(&with_query(path, query)).await
    }

    /// `GET .../scheme/{scheme}/emptyTile`: the scheme's empty tile.
    pub async fn empty_tile(&self) -> Reply {
        let path = routes::empty_tile(&self.tiles.dataset, &self.scheme);
        self.tiles.get(&path).await
    }
}
