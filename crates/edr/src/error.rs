//! What goes wrong in a query, sorted by who can fix it: the caller (a bad or too large
//! query), nobody (no data where the query asks), or the dataset (it cannot be read).

/// Why a query has no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EdrError {
    /// A parameter is malformed or names something the collection does not have; the text
    /// names the parameter.
    #[error("{parameter}: {message}")]
    Invalid {
        /// The query parameter at fault (`coords`, `datetime`, ...).
        parameter: &'static str,
        /// What is wrong, for the caller.
        message: String,
    },
    /// The answer would pass a limit; the text says which and by how much.
    #[error("{0}")]
    TooLarge(String),
    /// The query is valid but selects no data (a position outside the data, a time between
    /// steps).
    #[error("{0}")]
    NoData(String),
    /// The collection does not answer this kind of query (a position on a time series).
    #[error("{0}")]
    NotSupported(String),
    /// The dataset's content cannot be read as the collection it is listed as.
    #[error("the dataset cannot be read: {0}")]
    Unreadable(String),
}

impl EdrError {
    /// An [`EdrError::Invalid`] of `parameter`.
    pub fn invalid(parameter: &'static str, message: impl Into<String>) -> Self {
        Self::Invalid {
            parameter,
            message: message.into(),
        }
    }
}

impl From<basin_formats::FormatError> for EdrError {
    fn from(error: basin_formats::FormatError) -> Self {
        Self::Unreadable(error.to_string())
    }
}

/// A query's result.
pub type EdrResult<T> = Result<T, EdrError>;
