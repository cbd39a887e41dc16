//! Feature status messages and tenant features as stored and as sent (docs/features.md).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::http::time::WireTime;
use crate::ids::TenantId;

/// Longest feature id, in characters.
pub(crate) const FEATURE_ID_CHARS_MAX: usize = 128;
/// Path segments of the feature endpoints that can therefore not be feature ids.
const RESERVED_FEATURE_IDS: [&str; 3] = ["message", "tenant", "banner"];

/// A feature's id: `Platform`, `my-app`, a uuid (docs/features.md, feature ids). Uuids are
/// kept in lower-case hyphenated form, so two spellings of one uuid are one feature.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct FeatureId(String);

impl FeatureId {
    /// Checks and normalises a feature id; the error says what is wrong.
    pub(crate) fn parse(raw: &str) -> Result<Self, String> {
        let count = raw.chars().count();
        if count == 0 {
            return Err("a feature id must not be empty".into());
        }
        if count > FEATURE_ID_CHARS_MAX {
            return Err(format!(
                "a feature id has at most {FEATURE_ID_CHARS_MAX} characters; this one has {count}"
            ));
        }
        if raw.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err("a feature id must not contain whitespace or control characters".into());
        }
        if RESERVED_FEATURE_IDS.contains(&raw) {
            return Err(format!(
                "'{raw}' is a path segment and cannot be a feature id"
            ));
        }
        Ok(Self(match Uuid::parse_str(raw) {
            Ok(uuid) if raw.len() == 36 => uuid.hyphenated().to_string(),
            _ => raw.to_owned(),
        }))
    }

    /// The normalised id.
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether a token's `client_id` names this feature.
    pub(crate) fn is_client(&self, client_id: &str) -> bool {
        FeatureId::parse(client_id).is_ok_and(|client| client == *self)
    }
}

impl std::fmt::Display for FeatureId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for FeatureId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for FeatureId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        FeatureId::parse(&raw).map_err(serde::de::Error::custom)
    }
}

crate::wire_enum! {
    /// How serious a message is (docs/features.md#the-resource), most serious first.
    pub(crate) enum MessageType {
        /// An outage.
        Critical,
        /// Something to prepare for, e.g. maintenance.
        Warning,
        /// General information.
        Informational,
    }
}

impl MessageType {
    /// Rank for the banner: 0 is shown first.
    pub(crate) fn rank(self) -> u8 {
        match self {
            Self::Critical => 0,
            Self::Warning => 1,
            Self::Informational => 2,
        }
    }
}

crate::wire_enum! {
    /// Which messages a list shows, by their window at the moment of the request
    /// (docs/features.md#the-resource).
    pub(crate) enum Expiry {
        /// Every message.
        All,
        /// Active now: started, not ended.
        NonExpired,
        /// Ended.
        Expired,
        /// Not started.
        Pending,
    }
}

crate::wire_enum! {
    /// The date a message list is ordered by.
    pub(crate) enum MessageSort {
        /// `startDate`.
        StartDate,
        /// `expiringDate`.
        ExpiringDate,
    }
}

crate::wire_enum! {
    /// What kind of feature (docs/features.md#the-catalogue-and-licenses-backoffice).
    pub(crate) enum FeatureType {
        /// A service other applications call.
        Service,
        /// An application people use.
        Application,
    }
}

/// Which messages an operation addresses: one feature's, or the global set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Scope {
    /// The messages of one feature.
    Feature(FeatureId),
    /// The global messages (`featureId` null).
    Global,
}

impl Scope {
    /// The stored `feature_id`: the id, or NULL for the global set.
    pub(crate) fn column(&self) -> Option<String> {
        match self {
            Self::Feature(id) => Some(id.as_str().to_owned()),
            Self::Global => None,
        }
    }
}

/// A stored message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MessageRow {
    /// Assigned by the store.
    pub(crate) id: i64,
    /// `None` for a global message.
    pub(crate) feature_id: Option<String>,
    /// Severity.
    pub(crate) message_type: MessageType,
    /// Plain text.
    pub(crate) title: String,
    /// Sanitized HTML.
    pub(crate) body: String,
    /// Start of the window (inclusive).
    pub(crate) start_date: DateTime<Utc>,
    /// End of the window (exclusive).
    pub(crate) expiring_date: DateTime<Utc>,
    /// Rises on every change.
    pub(crate) version: i64,
    /// When and by whom it was created and last changed.
    pub(crate) created_at: DateTime<Utc>,
    pub(crate) created_by: Option<Uuid>,
    pub(crate) updated_at: DateTime<Utc>,
    pub(crate) updated_by: Option<Uuid>,
}

impl MessageRow {
    /// Active at `now`: started, not yet ended.
    pub(crate) fn is_active_at(&self, now: DateTime<Utc>) -> bool {
        self.start_date <= now && now < self.expiring_date
    }
}

/// A message as sent (docs/features.md#the-resource).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MessageDto {
    /// Assigned by Basin.
    pub(crate) id: i64,
    /// The feature; null for a global message.
    pub(crate) feature_id: Option<String>,
    /// `Critical`, `Warning` or `Informational`.
    #[serde(rename = "type")]
    #[schema(value_type = String)]
    pub(crate) message_type: MessageType,
    /// Plain text.
    pub(crate) title: String,
    /// Sanitized HTML.
    pub(crate) body: String,
    /// Start of the window (inclusive), UTC.
    pub(crate) start_date: WireTime,
    /// End of the window (exclusive), UTC.
    pub(crate) expiring_date: WireTime,
    /// When it was created.
    pub(crate) created_at: WireTime,
    /// Who created it.
    pub(crate) created_by: Option<Uuid>,
    /// When it last changed.
    pub(crate) updated_at: WireTime,
    /// Who last changed it.
    pub(crate) updated_by: Option<Uuid>,
}

impl From<&MessageRow> for MessageDto {
    fn from(row: &MessageRow) -> Self {
        Self {
            id: row.id,
            feature_id: row.feature_id.clone(),
            message_type: row.message_type,
            title: row.title.clone(),
            body: row.body.clone(),
            start_date: WireTime(row.start_date),
            expiring_date: WireTime(row.expiring_date),
            created_at: WireTime(row.created_at),
            created_by: row.created_by,
            updated_at: WireTime(row.updated_at),
            updated_by: row.updated_by,
        }
    }
}

/// The fields of a create or a change; on a change, absent fields keep their value. Unknown
/// fields (`id`, `featureId`) are ignored: the route names the feature.
#[derive(Debug, Clone, Default, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MessageFields {
    /// `Critical`, `Warning` or `Informational`.
    #[serde(rename = "type")]
    #[schema(value_type = Option<String>)]
    pub(crate) message_type: Option<MessageType>,
    /// Plain text, at most 255 characters as sent; markup is removed.
    pub(crate) title: Option<String>,
    /// Limited HTML, at most 4000 characters as sent; sanitized.
    pub(crate) body: Option<String>,
    /// Start of the window: with `Z`, an offset, or no zone (UTC).
    #[schema(value_type = Option<String>)]
    pub(crate) start_date: Option<WireTime>,
    /// End of the window, later than `startDate`.
    #[schema(value_type = Option<String>)]
    pub(crate) expiring_date: Option<WireTime>,
}

/// A message ready to be written: checked and cleaned.
#[derive(Debug, Clone)]
pub(crate) struct CleanMessage {
    pub(crate) message_type: MessageType,
    pub(crate) title: String,
    pub(crate) body: String,
    pub(crate) start_date: DateTime<Utc>,
    pub(crate) expiring_date: DateTime<Utc>,
}

/// A feature of the catalogue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FeatureRow {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) url: String,
    pub(crate) response_url: String,
    pub(crate) feature_type: FeatureType,
    pub(crate) created_at: DateTime<Utc>,
    pub(crate) created_by: Option<Uuid>,
    pub(crate) updated_at: DateTime<Utc>,
    pub(crate) updated_by: Option<Uuid>,
}

/// A feature of the catalogue as sent.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FeatureDto {
    /// The feature id.
    pub(crate) id: String,
    /// Display name.
    pub(crate) name: String,
    /// Address of the application.
    pub(crate) url: String,
    /// Authentication callback address of the application.
    pub(crate) response_url: String,
    /// `Service` or `Application`.
    #[serde(rename = "type")]
    #[schema(value_type = String)]
    pub(crate) feature_type: FeatureType,
    /// When it was added.
    pub(crate) created_at: WireTime,
    /// Who added it.
    pub(crate) created_by: Option<Uuid>,
    /// When it last changed.
    pub(crate) updated_at: WireTime,
    /// Who last changed it.
    pub(crate) updated_by: Option<Uuid>,
}

impl From<&FeatureRow> for FeatureDto {
    fn from(row: &FeatureRow) -> Self {
        Self {
            id: row.id.clone(),
            name: row.name.clone(),
            url: row.url.clone(),
            response_url: row.response_url.clone(),
            feature_type: row.feature_type,
            created_at: WireTime(row.created_at),
            created_by: row.created_by,
            updated_at: WireTime(row.updated_at),
            updated_by: row.updated_by,
        }
    }
}

/// A create or replace of a catalogue feature.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FeatureRequest {
    /// The id; on create, a new uuid when absent; on replace, ignored (the path names it).
    #[schema(value_type = Option<String>)]
    pub(crate) id: Option<FeatureId>,
    /// Display name, 1 to 255 characters.
    pub(crate) name: String,
    /// Absolute http(s) URL of the application.
    pub(crate) url: String,
    /// Absolute http(s) URL of its authentication callback.
    pub(crate) response_url: String,
    /// `Service` or `Application`.
    #[serde(rename = "type")]
    #[schema(value_type = String)]
    pub(crate) feature_type: FeatureType,
}

/// A tenant's license of a feature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LicenseRow {
    pub(crate) tenant_id: TenantId,
    pub(crate) feature_id: String,
    pub(crate) enabled: bool,
    pub(crate) licensed_at: DateTime<Utc>,
    pub(crate) licensed_by: Option<Uuid>,
    pub(crate) updated_at: DateTime<Utc>,
    pub(crate) updated_by: Option<Uuid>,
}

/// A license as sent to BackOffice.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LicenseDto {
    /// The tenant.
    #[schema(value_type = Uuid)]
    pub(crate) tenant_id: TenantId,
    /// The feature.
    pub(crate) feature_id: String,
    /// The owner's switch.
    pub(crate) enabled: bool,
    /// When the license was granted.
    pub(crate) licensed_at: WireTime,
    /// Who granted it.
    pub(crate) licensed_by: Option<Uuid>,
    /// When the license or its switch last changed.
    pub(crate) updated_at: WireTime,
    /// Who changed it last.
    pub(crate) updated_by: Option<Uuid>,
}

impl From<&LicenseRow> for LicenseDto {
    fn from(row: &LicenseRow) -> Self {
        Self {
            tenant_id: row.tenant_id,
            feature_id: row.feature_id.clone(),
            enabled: row.enabled,
            licensed_at: WireTime(row.licensed_at),
            licensed_by: row.licensed_by,
            updated_at: WireTime(row.updated_at),
            updated_by: row.updated_by,
        }
    }
}

/// A licensed feature of a tenant (docs/features.md#the-tenant-owner).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TenantFeatureDto {
    /// Address of the feature application.
    pub(crate) url: String,
    /// Authentication callback address of the application.
    pub(crate) response_url: String,
    /// The feature id.
    pub(crate) feature_id: String,
    /// Display name.
    pub(crate) name: String,
    /// Whether the tenant's owner has it switched on.
    pub(crate) enabled: bool,
    /// `Service` or `Application`.
    #[serde(rename = "type")]
    #[schema(value_type = String)]
    pub(crate) feature_type: FeatureType,
}

/// A feature with a tenant's license of it, as the store joins them.
#[derive(Debug, Clone)]
pub(crate) struct LicensedFeature {
    pub(crate) feature: FeatureRow,
    pub(crate) enabled: bool,
}

impl From<&LicensedFeature> for TenantFeatureDto {
    fn from(row: &LicensedFeature) -> Self {
        Self {
            url: row.feature.url.clone(),
            response_url: row.feature.response_url.clone(),
            feature_id: row.feature.id.clone(),
            name: row.feature.name.clone(),
            enabled: row.enabled,
            feature_type: row.feature.feature_type,
        }
    }
}

/// `{"enabled": bool}`: the owner's switch (docs/features.md#the-tenant-owner).
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub(crate) struct EnabledDto {
    /// On or off.
    pub(crate) enabled: bool,
}

/// The optional body of a license grant.
#[derive(Debug, Clone, Default, Deserialize, utoipa::ToSchema)]
pub(crate) struct LicenseRequest {
    /// The owner's switch; true for a new license, unchanged for an existing one when absent.
    pub(crate) enabled: Option<bool>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feature_ids_are_checked_and_uuids_normalised() {
        assert_eq!(FeatureId::parse("Platform").unwrap().as_str(), "Platform");
        assert_ne!(
            FeatureId::parse("Platform").unwrap(),
            FeatureId::parse("platform").unwrap()
        );
        assert_eq!(
            FeatureId::parse("6F9619FF-8B86-D011-B42D-00CFFC0F1C34")
                .unwrap()
                .as_str(),
            "6f9619ff-8b86-d011-b42d-00cffc0f1c34"
        );
        for bad in ["", "a b", "a\0b", "message", "tenant", "banner"] {
            assert!(FeatureId::parse(bad).is_err(), "{bad:?}");
        }
        assert!(FeatureId::parse(&"x".repeat(129)).is_err());
        assert!(FeatureId::parse(&"é".repeat(128)).is_ok());
    }
}
