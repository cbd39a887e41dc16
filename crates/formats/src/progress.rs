//! Progress reporting from readers, so that the CLI can draw a progress bar and the server
//! can update a transfer's progress, without either knowing the other.

/// Receives progress in abstract units (readers use input bytes). Implementations must be
/// cheap: readers call `advance` often.
pub trait Progress: Sync {
    /// The total number of units, once known.
    fn set_total(&self, units: u64);
    /// `units` more are done.
    fn advance(&self, units: u64);
}

/// Ignores progress.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn set_total(&self, _units: u64) {}
    fn advance(&self, _units: u64) {}
}
