//! The `BASIN_*` environment as a figment provider, and figment's errors as one line per
//! problem. Errors about an environment value name the variable as it was spelled
//! (`BASIN_LIMITS__PAGE_SIZE_MAX`), not figment's key path and a line of Basin's source, so
//! `BASIN_FOO=1 basin serve` says in one line which variable is not a setting.

use std::collections::BTreeMap;
use std::sync::Arc;

use figment::error::Kind;
use figment::value::{Dict, Map, Value};
use figment::{Metadata, Profile, Provider};

/// Prefix of configuration environment variables; `__` separates nested keys
/// (`BASIN_AUTH__JWT_SECRET` sets `auth.jwt_secret`).
const ENV_PREFIX: &str = "BASIN_";

/// The `BASIN_*` variables as a figment provider that remembers how each was spelled.
pub(super) struct Environment {
    /// `BASIN_A__B=v` as the nested dictionary `{a: {b: v}}`.
    dict: Dict,
    /// The variable behind each key path (`limits.page_size_max`), as it was spelled.
    names: Arc<BTreeMap<String, String>>,
}

/// What [`Environment`] calls itself in figment's metadata; [`describe`] looks for it.
const ENV_SOURCE: &str = "environment variable";

impl Environment {
    /// Turns `BASIN_A__B=v` pairs into the nested dictionary `{a: {b: v}}`, values parsed the
    /// way figment parses environment values (numbers, booleans, arrays, else strings).
    pub(super) fn from_pairs(env: impl IntoIterator<Item = (String, String)>) -> Self {
        let mut sorted = BTreeMap::new();
        let mut names = BTreeMap::new();
        for (key, value) in env {
            let Some(rest) = key.strip_prefix(ENV_PREFIX) else {
                continue;
            };
            // BASIN_CONFIG names the file itself and is read by the CLI, not a key.
            if rest.eq_ignore_ascii_case("CONFIG") || rest.is_empty() {
                continue;
            }
            let lower = rest.to_ascii_lowercase();
            names.insert(lower.split("__").collect::<Vec<_>>().join("."), key.clone());
            sorted.insert(lower, value);
        }
        let mut dict = Dict::new();
        for (key, raw) in sorted {
            // Object store settings are text, whatever they look like (a key `0123` is not 123).
            let parsed: Value = if key.starts_with("blob__options__") {
                Value::from(raw)
            } else {
                raw.parse().unwrap_or_else(|_| Value::from(raw.clone()))
            };
            let path: Vec<&str> = key.split("__").collect();
            insert_nested(&mut dict, &path, parsed);
        }
        Self {
            dict,
            names: Arc::new(names),
        }
    }
}

impl Provider for Environment {
    fn metadata(&self) -> Metadata {
        let names = self.names.clone();
        Metadata::named(ENV_SOURCE).interpolater(move |_profile, keys| {
            let path = keys.join(".");
            names
                .get(&path)
                .cloned()
                .unwrap_or_else(|| format!("{ENV_PREFIX}{}", keys.join("__").to_ascii_uppercase()))
        })
    }

    fn data(&self) -> Result<Map<Profile, Dict>, figment::Error> {
        Ok(Profile::Default.collect(self.dict.clone()))
    }
}

/// figment's error as one line per problem, each naming where it is: the environment variable,
/// or the key and the file. figment's own text names the provider's line in Basin's source
/// and repeats itself once per chained error.
pub(super) fn describe(error: figment::Error) -> String {
    error
        .into_iter()
        .map(|error| {
            let key = error.path.join(".");
            let profile = error.profile.clone().unwrap_or(Profile::Default);
            let from_env = error
                .metadata
                .as_ref()
                .filter(|metadata| metadata.name == ENV_SOURCE);
            let file = error
                .metadata
                .as_ref()
                .and_then(|metadata| metadata.source.as_ref())
                .map(|source| format!(" in {source}"))
                .unwrap_or_default();
            match (&error.kind, from_env) {
                (Kind::UnknownField(_, expected), Some(metadata)) => format!(
                    "the environment variable {} is not a setting (expected one of: {})",
                    metadata.interpolate(&profile, &error.path),
                    expected.join(", ")
                ),
                (kind, Some(metadata)) => format!(
                    "the environment variable {}: {kind}",
                    metadata.interpolate(&profile, &error.path)
                ),
                (Kind::UnknownField(_, expected), None) => format!(
                    "unknown key `{key}`{file} (expected one of: {})",
                    expected.join(", ")
                ),
                (kind, None) if key.is_empty() => format!("{kind}{file}"),
                (kind, None) => format!("`{key}`{file}: {kind}"),
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn insert_nested(dict: &mut Dict, path: &[&str], value: Value) {
    match path {
        [] => {}
        [last] => {
            dict.insert((*last).to_owned(), value);
        }
        [first, rest @ ..] => {
            let entry = dict
                .entry((*first).to_owned())
                .or_insert_with(|| Value::from(Dict::new()));
            if let Value::Dict(_, inner) = entry {
                insert_nested(inner, rest, value);
            }
        }
    }
}
