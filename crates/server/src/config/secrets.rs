//! Secrets in the configuration: masked whenever it is printed (`basin config`, logs), and
//! object store options read as the text `object_store` expects.

use std::collections::BTreeMap;

use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize, Serializer};

/// An optional secret, printed as `***` when set.
pub(super) fn mask_secret<S: Serializer>(
    secret: &Option<SecretString>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match secret {
        Some(secret) if !secret.expose_secret().is_empty() => s.serialize_str("***"),
        _ => s.serialize_none(),
    }
}

/// Settings whose values are all secret: the keys, each with `***`.
pub(super) fn mask_secret_map<S: Serializer>(
    map: &BTreeMap<String, SecretString>,
    s: S,
) -> Result<S::Ok, S::Error> {
    let masked: BTreeMap<&str, &str> = map.keys().map(|key| (key.as_str(), "***")).collect();
    masked.serialize(s)
}

/// Object store settings are text to `object_store`, but `true`, `8080` or `1.5` written
/// without quotes (in TOML, or as `BASIN_BLOB__OPTIONS__AWS_ALLOW_HTTP=true`, which the
/// environment parser reads as a boolean) are what operators write: they are taken as their
/// text.
pub(super) fn option_values_as_text<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<BTreeMap<String, SecretString>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Value {
        Text(String),
        Flag(bool),
        Whole(i64),
        Large(u64),
        Number(f64),
    }
    let values = BTreeMap::<String, Value>::deserialize(deserializer)?;
    Ok(values
        .into_iter()
        .map(|(key, value)| {
            let text = match value {
                Value::Text(text) => text,
                Value::Flag(flag) => flag.to_string(),
                Value::Whole(number) => number.to_string(),
                Value::Large(number) => number.to_string(),
                Value::Number(number) => number.to_string(),
            };
            (key, SecretString::from(text))
        })
        .collect())
}

/// A database URL with its password masked.
pub(super) fn mask_database_url<S: Serializer>(
    url: &Option<String>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match url {
        Some(url) => s.serialize_str(&mask_url_password(url)),
        None => s.serialize_none(),
    }
}

/// Replaces the password of `scheme://user:password@host/...` with `***`.
pub(crate) fn mask_url_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let Some((credentials, host)) = authority.rsplit_once('@') else {
        return url.to_owned();
    };
    match credentials.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{host}{tail}"),
        None => url.to_owned(),
    }
}

/// A secret that must be set, printed as `***`.
pub(super) fn mask_required_secret<S: Serializer>(
    _secret: &SecretString,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.serialize_str("***")
}
