//! The one error type of the formats crate.
//!
//! Every reader, writer and transformation returns [`FormatError`]. The kind tells the caller
//! (the server maps it to a transfer error, the CLI to an exit message) whether the input, the
//! parameters or the machine is at fault; the message names what was wrong and where (line,
//! byte offset, parameter name), so that a user can fix their file without reading our code.

use std::path::PathBuf;

/// Result of everything in this crate.
pub type FormatResult<T> = Result<T, FormatError>;

/// What went wrong while reading, converting or writing data.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FormatError {
    /// The input is not valid for the format: wrong magic, truncated, inconsistent header,
    /// a value that cannot be parsed. `location` says where (e.g. `line 12`, `byte 4096`).
    #[error("invalid {format} input at {location}: {message}")]
    InvalidInput {
        /// Format name, e.g. `ASCII Grid`.
        format: &'static str,
        /// Where in the input the problem is.
        location: String,
        /// What is wrong.
        message: String,
    },
    /// The input is valid but uses a feature this implementation does not support.
    #[error("unsupported {format} feature: {message}")]
    Unsupported {
        /// Format name.
        format: &'static str,
        /// What is not supported.
        message: String,
    },
    /// A limit of [`crate::ReadLimits`] was exceeded (e.g. absurd dimensions in a header).
    #[error("{what} is {actual}, over the limit of {limit}")]
    LimitExceeded {
        /// What was counted.
        what: &'static str,
        /// The value found.
        actual: u64,
        /// The configured limit.
        limit: u64,
    },
    /// A reader or writer parameter is missing, unknown or has a bad value.
    #[error("parameter {name}: {message}")]
    Parameter {
        /// Parameter name as the catalogue spells it.
        name: String,
        /// What is wrong with it.
        message: String,
    },
    /// No reader or writer of that name, or the two cannot be combined.
    #[error("{0}")]
    Catalogue(String),
    /// The caller asked the conversion to stop ([`crate::Progress::cancelled`]).
    #[error("the conversion was cancelled")]
    Cancelled,
    /// A transformation is malformed (a request's JSON, an empty selection) or does not apply
    /// to the data it was given (an unknown item name, a time filter on data without times).
    #[error("{transformation}: {message}")]
    Transformation {
        /// The transformation's type as the interface names it, e.g. `ItemFilterTransformation`.
        transformation: &'static str,
        /// What is wrong, naming the property or value at fault.
        message: String,
    },
    /// The data to append does not fit the existing data: another kind, other items or
    /// fields, another geometry, times that do not follow on.
    #[error("cannot append: {0}")]
    Append(String),
    /// A coordinate reference system is unknown or a transformation failed.
    #[error("coordinate system: {0}")]
    Crs(String),
    /// The data cannot be represented in the output format (e.g. a mesh written as a grid).
    #[error("cannot write {data} as {format}: {message}")]
    Incompatible {
        /// The kind of data offered.
        data: &'static str,
        /// The output format.
        format: &'static str,
        /// Why not.
        message: String,
    },
    /// Reading or writing a file failed.
    #[error("{action} {path}: {source}")]
    Io {
        /// `reading` or `writing`.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

impl FormatError {
    /// An [`FormatError::InvalidInput`] error.
    pub fn invalid(
        format: &'static str,
        location: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self::InvalidInput {
            format,
            location: location.into(),
            message: message.into(),
        }
    }

    /// An [`FormatError::Unsupported`] error.
    pub fn unsupported(format: &'static str, message: impl Into<String>) -> Self {
        Self::Unsupported {
            format,
            message: message.into(),
        }
    }

    /// A [`FormatError::Parameter`] error.
    pub fn parameter(name: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Parameter {
            name: name.into(),
            message: message.into(),
        }
    }

    /// A read error on `path`.
    pub fn read(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            action: "reading",
            path: path.into(),
            source,
        }
    }

    /// A write error on `path`.
    pub fn write(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            action: "writing",
            path: path.into(),
            source,
        }
    }

    /// A [`FormatError::Transformation`] error.
    pub fn transformation(transformation: &'static str, message: impl Into<String>) -> Self {
        Self::Transformation {
            transformation,
            message: message.into(),
        }
    }

    /// True when the user's input or parameters are at fault (as opposed to the machine).
    pub fn is_input_error(&self) -> bool {
        !matches!(self, Self::Io { .. })
    }
}
