//! The typed fields of a project that requests name: a [`ProjectName`] and a [`Description`],
//! each parsed once where a request enters, so that the service and the store hold values
//! already known to be valid, and each refusal is a typed [`FieldError`] rather than a
//! sentence to search.

use crate::limits::PROJECT_DESCRIPTION_CHARS_MAX;
use crate::names::{NameError, check_name};

/// A project's or subproject's name: trimmed, visible, no path separators, within the limit
/// (docs/projects.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ProjectName(String);

impl ProjectName {
    /// Checks `raw` against the rule for names and `chars_max`.
    pub(crate) fn parse(raw: &str, chars_max: usize) -> Result<Self, FieldError> {
        check_name(raw, chars_max)
            .map(Self)
            .map_err(FieldError::Name)
    }

    /// The name as stored.
    pub(crate) fn into_string(self) -> String {
        self.0
    }
}

/// A project's description: any text up to [`PROJECT_DESCRIPTION_CHARS_MAX`] characters; an
/// absent one is empty.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Description(String);

impl Description {
    /// Checks `raw` (absent: empty).
    pub(crate) fn parse(raw: Option<&str>) -> Result<Self, FieldError> {
        let description = raw.unwrap_or("");
        if description.chars().count() > PROJECT_DESCRIPTION_CHARS_MAX {
            return Err(FieldError::DescriptionTooLong {
                chars_max: PROJECT_DESCRIPTION_CHARS_MAX,
            });
        }
        Ok(Self(description.to_owned()))
    }

    /// The description as stored.
    pub(crate) fn into_string(self) -> String {
        self.0
    }
}

/// Why a project field was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum FieldError {
    /// The name breaks the rule for names.
    #[error("{0}")]
    Name(NameError),
    /// The description is too long.
    #[error("description must be at most {chars_max} characters")]
    DescriptionTooLong {
        /// The limit.
        chars_max: usize,
    },
}

impl FieldError {
    /// The request field at fault.
    pub(crate) fn field(&self) -> &'static str {
        match self {
            Self::Name(_) => "name",
            Self::DescriptionTooLong { .. } => "description",
        }
    }

    /// The sentence the caller reads: a name too long also names the setting that bounds it.
    pub(crate) fn message(&self) -> String {
        match self {
            Self::Name(NameError::TooLong { .. }) => {
                format!("{self} (limits.project_name_chars_max)")
            }
            _ => self.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_trimmed_and_a_long_one_names_its_setting() {
        assert_eq!(
            ProjectName::parse("  Lake ", 10).map(ProjectName::into_string),
            Ok("Lake".to_owned())
        );
        let error = ProjectName::parse("abcdefghijk", 10).unwrap_err();
        assert_eq!(error.field(), "name");
        assert_eq!(
            error.message(),
            "name must be at most 10 characters (limits.project_name_chars_max)"
        );
        assert_eq!(
            ProjectName::parse("a/b", 10).unwrap_err().message(),
            "name must not contain control characters, / or \\"
        );
    }

    #[test]
    fn a_description_may_be_absent_but_not_too_long() {
        assert_eq!(Description::parse(None), Ok(Description::default()));
        let long = "x".repeat(PROJECT_DESCRIPTION_CHARS_MAX + 1);
        let error = Description::parse(Some(&long)).unwrap_err();
        assert_eq!(error.field(), "description");
        assert_eq!(
            error.message(),
            format!("description must be at most {PROJECT_DESCRIPTION_CHARS_MAX} characters")
        );
    }
}
