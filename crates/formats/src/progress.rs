//! Progress reporting from readers, so that the CLI can draw a progress bar and the server
//! can update a transfer's progress, without either knowing the other.

/// Receives progress in abstract units (readers use input bytes). Implementations must be
/// cheap: readers call `advance` often.
pub trait Progress: Sync {
    /// The total number of units, once known.
    fn set_total(&self, units: u64);
    /// `units` more are done.
    fn advance(&self, units: u64);
    /// Whether whoever watches wants the work stopped (a cancelled transfer): a conversion then
    /// ends with [`crate::FormatError::Cancelled`] at its next block of data.
    fn cancelled(&self) -> bool {
        false
    }
}

/// A sink that stops the conversion feeding it once `progress` is cancelled: every reader
/// delivers its data in blocks, so a cancel takes effect within one block, without each
/// reader having to check.
pub(crate) struct CancellableSink<'a> {
    inner: &'a mut dyn crate::model::DatasetSink,
    progress: &'a dyn Progress,
}

impl<'a> CancellableSink<'a> {
    /// `inner`, stopped by `progress`.
    pub(crate) fn new(
        inner: &'a mut dyn crate::model::DatasetSink,
        progress: &'a dyn Progress,
    ) -> Self {
        Self { inner, progress }
    }

    fn check(&self) -> crate::FormatResult<()> {
        if self.progress.cancelled() {
            return Err(crate::FormatError::Cancelled);
        }
        Ok(())
    }
}

impl crate::model::DatasetSink for CancellableSink<'_> {
    fn begin(&mut self, header: &crate::model::Header) -> crate::FormatResult<()> {
        self.check()?;
        self.inner.begin(header)
    }

    fn frame(&mut self, frame: crate::model::Frame<'_>) -> crate::FormatResult<()> {
        self.check()?;
        self.inner.frame(frame)
    }

    fn feature(&mut self, feature: &crate::model::Feature) -> crate::FormatResult<()> {
        self.check()?;
        self.inner.feature(feature)
    }

    fn points(&mut self, chunk: &crate::model::PointChunk) -> crate::FormatResult<()> {
        self.check()?;
        self.inner.points(chunk)
    }

    fn end(&mut self) -> crate::FormatResult<()> {
        self.check()?;
        self.inner.end()
    }

    fn wants(&self, step: usize, item: usize) -> bool {
        self.inner.wants(step, item)
    }
}

/// Ignores progress.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn set_total(&self, _units: u64) {}
    fn advance(&self, _units: u64) {}
}
