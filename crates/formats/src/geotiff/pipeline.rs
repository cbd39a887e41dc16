//! The writer's compression pipeline: the sink fills one row of tiles of one band at a time
//! and hands it on; worker threads (one per core, at most [`WORKERS_MAX`]) cut it into tiles,
//! apply the predictor and deflate them; one writer thread puts the tiles into the file in
//! order and records their offsets.
//!
//! So reading (often a text parser on one core) overlaps with compression on the others, and
//! memory is bounded: at most [`in_flight`] tile rows exist at once, because the sink must take
//! a recycled buffer before it fills the next row and the writer returns a buffer only after
//! its tiles are written. Long-lived threads with channels are used rather than
//! `std::thread::scope` per tile row, which would stall the reader during every compression.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use super::TILE_SIDE;
use super::decode::Predictor;
use crate::error::{FormatError, FormatResult};

/// Most compression threads: beyond this the single writer thread and the reader are the
/// bottleneck, and each thread holds a tile row in flight.
pub(crate) const WORKERS_MAX: usize = 16;

/// Tile rows in flight for `workers` threads: one being compressed per worker, one being
/// filled by the sink and one being written, so no stage waits for a buffer.
pub(crate) fn in_flight(workers: usize) -> usize {
    workers.saturating_add(2)
}

/// How tiles are made from a tile row.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TileFormat {
    /// Columns of the grid.
    pub columns: usize,
    /// Bytes of one value.
    pub value_bytes: usize,
    /// Deflate level, `None` for uncompressed tiles.
    pub level: Option<u32>,
    /// Predictor applied before compression.
    pub predictor: Predictor,
}

impl TileFormat {
    fn tiles_across(&self) -> usize {
        self.columns.div_ceil(TILE_SIDE)
    }
}

/// One tile row of one band: `rows` rows of little-endian values, row-major.
struct Job {
    sequence: u64,
    rows: usize,
    data: Vec<u8>,
}

/// The compressed tiles of a job, left to right, and its buffer for reuse.
struct Compressed {
    sequence: u64,
    tiles: Vec<Vec<u8>>,
    data: Vec<u8>,
}

/// What the writer thread leaves: the file after the last tile and where each tile went.
pub(crate) struct Output {
    /// The file, positioned at `end`.
    pub file: BufWriter<File>,
    /// Offset of every tile, in file order.
    pub offsets: Vec<u64>,
    /// Byte count of every tile.
    pub sizes: Vec<u64>,
    /// Offset just past the last tile.
    pub end: u64,
}

/// The running pipeline.
pub(crate) struct Pipeline {
    jobs: Option<SyncSender<Job>>,
    buffers: Receiver<Vec<u8>>,
    workers: Vec<JoinHandle<()>>,
    writer: Option<JoinHandle<FormatResult<Output>>>,
    next: u64,
}

impl Pipeline {
    /// Starts the threads; tiles are written to `file` from offset `start` on.
    pub fn start(file: BufWriter<File>, start: u64, format: TileFormat, path: PathBuf) -> Self {
        let workers = std::thread::available_parallelism()
            .map_or(1, std::num::NonZero::get)
            .clamp(1, WORKERS_MAX);
        let in_flight = in_flight(workers);
        let (job_sender, job_receiver) = sync_channel::<Job>(in_flight);
        let job_receiver = Arc::new(Mutex::new(job_receiver));
        let (done_sender, done_receiver) = channel::<FormatResult<Compressed>>();
        let (buffer_sender, buffer_receiver) = sync_channel::<Vec<u8>>(in_flight);
        for _ in 0..in_flight {
            // Cannot fail: the receiver is alive and the channel has room for all of them.
            let _ = buffer_sender.send(Vec::new());
        }
        let handles = (0..workers)
            .map(|_| {
                let jobs = Arc::clone(&job_receiver);
                let done = done_sender.clone();
                std::thread::spawn(move || work(&jobs, &done, &format))
            })
            .collect();
        drop(done_sender);
        let writer = std::thread::spawn(move || {
            write_tiles(file, start, &done_receiver, &buffer_sender, &path)
        });
        Self {
            jobs: Some(job_sender),
            buffers: buffer_receiver,
            workers: handles,
            writer: Some(writer),
            next: 0,
        }
    }

    /// An empty buffer for the next tile row; waits while [`in_flight`] rows are on their way.
    pub fn buffer(&mut self) -> FormatResult<Vec<u8>> {
        match self.buffers.recv() {
            Ok(mut buffer) => {
                buffer.clear();
                Ok(buffer)
            }
            Err(_) => Err(self.failure()),
        }
    }

    /// Hands on a full tile row of `rows` rows.
    pub fn submit(&mut self, rows: usize, data: Vec<u8>) -> FormatResult<()> {
        let job = Job {
            sequence: self.next,
            rows,
            data,
        };
        let sent = self
            .jobs
            .as_ref()
            .is_some_and(|jobs| jobs.send(job).is_ok());
        if !sent {
            return Err(self.failure());
        }
        self.next = self.next.saturating_add(1);
        Ok(())
    }

    /// Waits for every tile to be written.
    pub fn finish(mut self) -> FormatResult<Output> {
        self.stop_workers();
        match self.writer.take().map(JoinHandle::join) {
            Some(Ok(result)) => result,
            _ => Err(stopped()),
        }
    }

    /// The error that stopped the writer thread early.
    fn failure(&mut self) -> FormatError {
        self.stop_workers();
        match self.writer.take().map(JoinHandle::join) {
            Some(Ok(Err(error))) => error,
            _ => stopped(),
        }
    }

    fn stop_workers(&mut self) {
        self.jobs = None;
        for worker in self.workers.drain(..) {
            let _ = worker.join();
        }
    }
}

impl Drop for Pipeline {
    fn drop(&mut self) {
        self.stop_workers();
        if let Some(writer) = self.writer.take() {
            let _ = writer.join();
        }
    }
}

fn stopped() -> FormatError {
    FormatError::Catalogue("the GeoTIFF writer's threads stopped unexpectedly".to_owned())
}

fn work(jobs: &Mutex<Receiver<Job>>, done: &Sender<FormatResult<Compressed>>, format: &TileFormat) {
    let mut encoder = format
        .level
        .map(|level| flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(level)));
    let mut tile = Vec::new();
    let mut scratch = Vec::new();
    loop {
        let job = {
            let Ok(receiver) = jobs.lock() else {
                return;
            };
            match receiver.recv() {
                Ok(job) => job,
                Err(_) => return,
            }
        };
        let result =
            compress_row(&job, format, encoder.as_mut(), &mut tile, &mut scratch).map(|tiles| {
                Compressed {
                    sequence: job.sequence,
                    tiles,
                    data: job.data,
                }
            });
        if done.send(result).is_err() {
            return;
        }
    }
}

/// Cuts a tile row into padded tiles, applies the predictor and compresses each.
fn compress_row(
    job: &Job,
    format: &TileFormat,
    mut encoder: Option<&mut flate2::write::ZlibEncoder<Vec<u8>>>,
    tile: &mut Vec<u8>,
    scratch: &mut Vec<u8>,
) -> FormatResult<Vec<Vec<u8>>> {
    let bytes = format.value_bytes;
    let tile_row_bytes = TILE_SIDE * bytes;
    let mut tiles = Vec::with_capacity(format.tiles_across());
    for across in 0..format.tiles_across() {
        let first_column = across * TILE_SIDE;
        let columns = format.columns.saturating_sub(first_column).min(TILE_SIDE);
        tile.clear();
        tile.resize(TILE_SIDE * tile_row_bytes, 0);
        for (row, target) in tile
            .chunks_exact_mut(tile_row_bytes)
            .take(job.rows)
            .enumerate()
        {
            let start = (row * format.columns + first_column) * bytes;
            let source = job.data.get(start..start + columns * bytes);
            let (Some(source), Some(target_part)) = (source, target.get_mut(..columns * bytes))
            else {
                return Err(FormatError::Catalogue(
                    "a GeoTIFF tile row is shorter than announced".to_owned(),
                ));
            };
            target_part.copy_from_slice(source);
            apply_predictor(format.predictor, target, bytes, scratch);
        }
        let compressed = match encoder.as_deref_mut() {
            Some(encoder) => encoder
                .write_all(tile)
                .and_then(|()| encoder.reset(Vec::with_capacity(tile.len() / 2)))
                .map_err(|error| FormatError::Catalogue(format!("deflate failed: {error}")))?,
            None => tile.clone(),
        };
        tiles.push(compressed);
    }
    Ok(tiles)
}

/// Applies a predictor to one row of a tile (little-endian samples, one band).
pub(crate) fn apply_predictor(
    predictor: Predictor,
    row: &mut [u8],
    bytes: usize,
    scratch: &mut Vec<u8>,
) {
    match predictor {
        Predictor::None => {}
        Predictor::Horizontal => horizontal_difference(row, bytes),
        Predictor::FloatingPoint => {
            // libtiff's fpDiff: byte planes, most significant first, then byte differences.
            let samples = row.len() / bytes.max(1);
            scratch.clear();
            scratch.resize(row.len(), 0);
            for (sample, value) in row.chunks_exact(bytes).enumerate() {
                for (significance, byte) in value.iter().rev().enumerate() {
                    if let Some(slot) = scratch.get_mut(significance * samples + sample) {
                        *slot = *byte;
                    }
                }
            }
            for index in (1..scratch.len()).rev() {
                let previous = scratch.get(index - 1).copied().unwrap_or(0);
                if let Some(byte) = scratch.get_mut(index) {
                    *byte = byte.wrapping_sub(previous);
                }
            }
            row.copy_from_slice(scratch);
        }
    }
}

fn horizontal_difference(row: &mut [u8], bytes: usize) {
    let mut previous = 0u64;
    let mask = if bytes >= 8 {
        u64::MAX
    } else {
        (1u64 << (bytes * 8)) - 1
    };
    for value in row.chunks_exact_mut(bytes) {
        let mut wide = [0u8; 8];
        if let Some(part) = wide.get_mut(..bytes) {
            part.copy_from_slice(value);
        }
        let current = u64::from_le_bytes(wide);
        let difference = current.wrapping_sub(previous) & mask;
        previous = current;
        if let Some(part) = difference.to_le_bytes().get(..bytes) {
            value.copy_from_slice(part);
        }
    }
}

fn write_tiles(
    mut file: BufWriter<File>,
    start: u64,
    done: &Receiver<FormatResult<Compressed>>,
    buffers: &SyncSender<Vec<u8>>,
    path: &PathBuf,
) -> FormatResult<Output> {
    let mut output_offsets = Vec::new();
    let mut sizes = Vec::new();
    let mut position = start;
    let mut pending = BTreeMap::new();
    let mut next = 0u64;
    for result in done {
        let compressed = result?;
        pending.insert(compressed.sequence, compressed);
        while let Some(compressed) = pending.remove(&next) {
            for tile in &compressed.tiles {
                file.write_all(tile)
                    .map_err(|source| FormatError::write(path, source))?;
                output_offsets.push(position);
                sizes.push(tile.len() as u64);
                position = position.saturating_add(tile.len() as u64);
            }
            // The sink may already have stopped; then the buffer is simply dropped.
            let _ = buffers.send(compressed.data);
            next = next.saturating_add(1);
        }
    }
    if !pending.is_empty() {
        return Err(stopped());
    }
    Ok(Output {
        file,
        offsets: output_offsets,
        sizes,
        end: position,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geotiff::decode::{SampleKind, undo_predictor};
    use crate::geotiff::ifd::ByteOrder;

    #[test]
    fn predictors_are_undone_by_the_reader() {
        let values = [1.5f32, -2.0, 3.25, 1e-20, 7.0];
        for (predictor, kind) in [
            (Predictor::Horizontal, SampleKind::F32),
            (Predictor::FloatingPoint, SampleKind::F32),
        ] {
            let original: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
            let mut row = original.clone();
            apply_predictor(predictor, &mut row, 4, &mut Vec::new());
            assert_ne!(row, original);
            undo_predictor(
                predictor,
                kind,
                ByteOrder::Little,
                &mut row,
                1,
                &mut Vec::new(),
            );
            assert_eq!(row, original, "{predictor:?}");
        }
        let bytes: Vec<u8> = vec![5, 250, 3, 3];
        let mut row = bytes.clone();
        apply_predictor(Predictor::Horizontal, &mut row, 1, &mut Vec::new());
        assert_eq!(row, [5, 245, 9, 0]);
    }

    #[test]
    fn more_tile_rows_than_in_flight_pass_in_order() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("tiles.bin");
        let file = BufWriter::new(File::create(&path).unwrap());
        let format = TileFormat {
            columns: 300,
            value_bytes: 1,
            level: None,
            predictor: Predictor::None,
        };
        let mut pipeline = Pipeline::start(file, 16, format, path);
        for row in 0..20u8 {
            let mut buffer = pipeline.buffer().unwrap();
            buffer.resize(300, row);
            pipeline.submit(1, buffer).unwrap();
        }
        let output = pipeline.finish().unwrap();
        assert_eq!(output.offsets.len(), 40);
        let tile_bytes = (TILE_SIDE * TILE_SIDE) as u64;
        assert_eq!(output.offsets[3], 16 + 3 * tile_bytes);
        assert_eq!(output.end, 16 + 40 * tile_bytes);
    }
}
