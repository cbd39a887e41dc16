//! The rules of feature messages and tenant features: who may do what
//! (docs/features.md#who-may-do-what), what a message may hold (docs/features.md#the-resource
//! and #limits), and the retention job (docs/features.md#retention). HTTP lives in `routes.rs`,
//! SQL in `store.rs`.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Datelike, DurationRound, TimeDelta, Utc};
use uuid::Uuid;

use crate::auth::{Principal, TenantRole};
use crate::clock::Clock;
use crate::config::FeaturesConfig;
use crate::db::{Db, StoreError};
use crate::error::FieldErrors;
use crate::features::banner::{Banner, BannerCache, BannerSettings};
use crate::features::model::{
    CleanMessage, Expiry, FeatureId, FeatureRequest, FeatureRow, FeatureType, LicenseRow,
    LicensedFeature, MessageFields, MessageRow, MessageSort, Scope,
};
use crate::features::sanitize::{sanitize_body, sanitize_title};
use crate::features::store::{self, FeatureDelete, MessagePage};
use crate::identity::service::IdentityService;
use crate::ids::TenantId;

use crate::auth::{
    FEATURE_STATUS_READ_SCOPE as READ_SCOPE, FEATURE_STATUS_READWRITE_SCOPE as READWRITE_SCOPE,
};
/// Longest title, in characters as sent (docs/features.md#limits).
pub(crate) const TITLE_CHARS_MAX: usize = 255;
/// Longest body, in characters as sent (docs/features.md#limits).
pub(crate) const BODY_CHARS_MAX: usize = 4000;
/// Longest feature name, in characters.
const NAME_CHARS_MAX: usize = 255;
/// Longest feature URL, in bytes.
const URL_BYTES_MAX: usize = 2048;
/// Messages the retention job deletes per statement.
const RETENTION_BATCH: u32 = 1000;
/// Tries of a message change that lost a race with another change.
const UPDATE_TRIES: usize = 8;

/// Errors of the feature rules.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FeatureError {
    /// Fields break rules; each names what is wrong.
    #[error("invalid: {0:?}")]
    Invalid(FieldErrors),
    /// The caller may not do this.
    #[error("forbidden: {0}")]
    Forbidden(&'static str),
    /// The message, feature, tenant or license does not exist.
    #[error("{0} not found")]
    NotFound(&'static str),
    /// The request conflicts with the current state.
    #[error("{kind}: {detail}")]
    Conflict {
        /// Stable kind.
        kind: &'static str,
        /// What conflicts.
        detail: String,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl FeatureError {
    fn field(field: &str, message: impl Into<String>) -> Self {
        Self::Invalid(FieldErrors::from([(
            field.to_owned(),
            vec![message.into()],
        )]))
    }
}

/// Result of the feature rules.
pub(crate) type FeatureResult<T> = Result<T, FeatureError>;

/// A checked request for a page of messages.
#[derive(Debug, Clone)]
pub(crate) struct MessageQuery {
    /// By window.
    pub(crate) expiry: Expiry,
    /// Order.
    pub(crate) sort: MessageSort,
    /// Largest first.
    pub(crate) descending: bool,
    /// The date and id of the last row of the previous page.
    pub(crate) after: Option<(DateTime<Utc>, i64)>,
    /// Rows to fetch.
    pub(crate) fetch: i64,
}

/// Settings of the area.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FeatureSettings {
    /// How long expired messages are kept.
    pub(crate) retention: TimeDelta,
    /// How often the retention job runs.
    pub(crate) retention_interval: Duration,
    /// The banner's cache.
    pub(crate) banner: BannerSettings,
}

impl From<&FeaturesConfig> for FeatureSettings {
    fn from(config: &FeaturesConfig) -> Self {
        Self {
            retention: TimeDelta::days(i64::from(config.message_retention_days)),
            retention_interval: config.retention_interval_seconds,
            banner: BannerSettings::from(config),
        }
    }
}

/// Feature messages, the catalogue and licenses.
#[derive(Debug, Clone)]
pub(crate) struct FeatureService {
    db: Db,
    clock: Arc<dyn Clock>,
    identity: IdentityService,
    settings: FeatureSettings,
    banner: Arc<BannerCache>,
}

impl FeatureService {
    /// The service over `db`.
    pub(crate) fn new(
        db: Db,
        clock: Arc<dyn Clock>,
        identity: IdentityService,
        settings: FeatureSettings,
    ) -> Self {
        Self {
            db,
            clock,
            identity,
            settings,
            banner: Arc::new(BannerCache::new(settings.banner)),
        }
    }

    /// How often the retention job runs.
    pub(crate) fn retention_interval(&self) -> Duration {
        self.settings.retention_interval
    }

    /// Now, to the microsecond the stores keep.
    fn now(&self) -> DateTime<Utc> {
        to_micros(self.clock.now())
    }
}

// ---- messages ----

impl FeatureService {
    /// Reading: the read scope (or read-write), and for one feature's list the BackOffice role
    /// or a token issued to that feature.
    fn authorize_read(&self, principal: &Principal, scope: &Scope) -> FeatureResult<()> {
        let scoped =
            principal.scopes.contains(READ_SCOPE) || principal.scopes.contains(READWRITE_SCOPE);
        if !scoped {
            return Err(FeatureError::Forbidden(
                "reading feature messages needs the scope platform_iam_featurestatus_read",
            ));
        }
        match scope {
            Scope::Global => Ok(()),
            Scope::Feature(_) if principal.is_platform_admin() => Ok(()),
            Scope::Feature(feature) => {
                if principal
                    .client_id
                    .as_deref()
                    .is_some_and(|client| feature.is_client(client))
                {
                    Ok(())
                } else {
                    Err(FeatureError::Forbidden(
                        "only BackOffice may read the messages of a feature other than the token's client_id",
                    ))
                }
            }
        }
    }

    /// Writing: the read-write scope and the BackOffice role.
    pub(crate) fn authorize_write(principal: &Principal) -> FeatureResult<()> {
        if !principal.scopes.contains(READWRITE_SCOPE) {
            return Err(FeatureError::Forbidden(
                "writing feature messages needs the scope platform_iam_featurestatus_readwrite",
            ));
        }
        if !principal.is_platform_admin() {
            return Err(FeatureError::Forbidden(
                "writing feature messages needs the BackOffice role",
            ));
        }
        Ok(())
    }

    /// Creates a message of `scope`.
    pub(crate) async fn create_message(
        &self,
        principal: &Principal,
        scope: &Scope,
        fields: MessageFields,
    ) -> FeatureResult<MessageRow> {
        Self::authorize_write(principal)?;
        let message = clean_new(fields)?;
        let row =
            store::insert_message(&self.db, scope, &message, principal.id, self.now()).await?;
        self.banner.invalidate();
        Ok(row)
    }

    /// Changes the fields `fields` names of message `id` of `scope`.
    pub(crate) async fn update_message(
        &self,
        principal: &Principal,
        scope: &Scope,
        id: i64,
        fields: MessageFields,
    ) -> FeatureResult<MessageRow> {
        Self::authorize_write(principal)?;
        let changes = check_fields(&fields)?;
        for _ in 0..UPDATE_TRIES {
            let current = store::find_message(&self.db, scope, id)
                .await?
                .ok_or(FeatureError::NotFound("message"))?;
            let message = changes.applied_to(&current)?;
            if let Some(row) = store::update_message(
                &self.db,
                scope,
                id,
                current.version,
                &message,
                principal.id,
                self.now(),
            )
            .await?
            {
                self.banner.invalidate();
                return Ok(row);
            }
        }
        Err(FeatureError::Conflict {
            kind: "row-version-conflict",
            detail: "the message kept changing while this change was applied; try again".into(),
        })
    }

    /// Deletes message `id` of `scope`.
    pub(crate) async fn delete_message(
        &self,
        principal: &Principal,
        scope: &Scope,
        id: i64,
    ) -> FeatureResult<()> {
        Self::authorize_write(principal)?;
        if !store::delete_message(&self.db, scope, id).await? {
            return Err(FeatureError::NotFound("message"));
        }
        self.banner.invalidate();
        Ok(())
    }

    /// A page of the messages of `scope`; a feature's list includes the global messages.
    pub(crate) async fn list_messages(
        &self,
        principal: &Principal,
        scope: Scope,
        query: MessageQuery,
    ) -> FeatureResult<Vec<MessageRow>> {
        self.authorize_read(principal, &scope)?;
        let with_global = matches!(scope, Scope::Feature(_));
        let page = MessagePage {
            scope,
            with_global,
            expiry: query.expiry,
            now: self.now(),
            sort: query.sort,
            descending: query.descending,
            after: query.after,
            fetch: query.fetch,
        };
        Ok(store::list_messages(&self.db, &page).await?)
    }

    /// What `feature`'s banner shows now. Any authenticated caller may ask (the route
    /// authenticates): it holds only what is published to every user of the feature now.
    pub(crate) async fn banner(&self, feature: &FeatureId) -> FeatureResult<Banner> {
        Ok(self.banner.banner(&self.db, feature, self.now()).await?)
    }

    /// Runs the retention job now; BackOffice only.
    pub(crate) async fn purge_expired_as(&self, principal: &Principal) -> FeatureResult<u64> {
        if !principal.is_platform_admin() {
            return Err(FeatureError::Forbidden(
                "running the retention job needs the BackOffice role",
            ));
        }
        self.purge_expired().await
    }

    /// Removes the messages that ended more than the retention period ago, in batches.
    pub(crate) async fn purge_expired(&self) -> FeatureResult<u64> {
        let cutoff = self.now() - self.settings.retention;
        let mut removed = 0;
        loop {
            let batch =
                store::delete_expired_messages(&self.db, cutoff, i64::from(RETENTION_BATCH))
                    .await?;
            removed += batch;
            if batch < u64::from(RETENTION_BATCH) {
                break;
            }
        }
        if removed > 0 {
            self.banner.invalidate();
        }
        Ok(removed)
    }
}

/// A time cut to the microseconds both stores keep, so that what is written is what is read.
fn to_micros(time: DateTime<Utc>) -> DateTime<Utc> {
    time.duration_trunc(TimeDelta::microseconds(1))
        .unwrap_or(time)
}

/// The checked, cleaned fields of a create or change; `None` where the request names none.
#[derive(Debug, Default)]
struct Changes {
    message_type: Option<crate::features::model::MessageType>,
    title: Option<String>,
    body: Option<String>,
    start_date: Option<DateTime<Utc>>,
    expiring_date: Option<DateTime<Utc>>,
}

impl Changes {
    /// `current` with the changes, its window checked.
    fn applied_to(&self, current: &MessageRow) -> FeatureResult<CleanMessage> {
        let message = CleanMessage {
            message_type: self.message_type.unwrap_or(current.message_type),
            title: self.title.clone().unwrap_or_else(|| current.title.clone()),
            body: self.body.clone().unwrap_or_else(|| current.body.clone()),
            start_date: self.start_date.unwrap_or(current.start_date),
            expiring_date: self.expiring_date.unwrap_or(current.expiring_date),
        };
        check_window(&message)?;
        Ok(message)
    }
}

/// Checks and cleans every field the request names, reporting every broken rule at once.
fn check_fields(fields: &MessageFields) -> FeatureResult<Changes> {
    let mut errors = FieldErrors::new();
    let mut report = |field: &str, message: String| {
        errors.entry(field.to_owned()).or_default().push(message);
    };
    let title = fields.title.as_deref().and_then(|raw| {
        if let Err(message) = within_limit("title", raw, TITLE_CHARS_MAX) {
            report("title", message);
            return None;
        }
        let clean = sanitize_title(raw);
        if clean.is_empty() {
            report(
                "title",
                "the title is empty once markup and whitespace are removed".to_owned(),
            );
            return None;
        }
        Some(clean)
    });
    let body = fields.body.as_deref().and_then(|raw| {
        if let Err(message) = within_limit("body", raw, BODY_CHARS_MAX) {
            report("body", message);
            return None;
        }
        Some(sanitize_body(raw))
    });
    let mut date = |field: &str, value: Option<crate::http::time::WireTime>| {
        let time = value?.0;
        if !(1..=9999).contains(&time.year()) {
            report(field, "the year must be between 1 and 9999".to_owned());
            return None;
        }
        Some(to_micros(time))
    };
    let start_date = date("startDate", fields.start_date);
    let expiring_date = date("expiringDate", fields.expiring_date);
    if !errors.is_empty() {
        return Err(FeatureError::Invalid(errors));
    }
    Ok(Changes {
        message_type: fields.message_type,
        title,
        body,
        start_date,
        expiring_date,
    })
}

/// Checks the length of `raw` as sent, in characters (code points), against `max`.
fn within_limit(field: &str, raw: &str, max: usize) -> Result<(), String> {
    let count = raw.chars().count();
    if count > max {
        return Err(format!(
            "the {field} has {count} characters; at most {max} are allowed"
        ));
    }
    Ok(())
}

/// A new message: every required field present, checked and cleaned; every missing or
/// broken field reported at once.
fn clean_new(fields: MessageFields) -> FeatureResult<CleanMessage> {
    let mut errors = FieldErrors::new();
    for (field, present) in [
        ("type", fields.message_type.is_some()),
        ("title", fields.title.is_some()),
        ("startDate", fields.start_date.is_some()),
        ("expiringDate", fields.expiring_date.is_some()),
    ] {
        if !present {
            errors.insert(field.to_owned(), vec![format!("{field} is required")]);
        }
    }
    let changes = match check_fields(&fields) {
        Ok(changes) => changes,
        Err(FeatureError::Invalid(broken)) => {
            errors.extend(broken);
            Changes::default()
        }
        Err(other) => return Err(other),
    };
    let (Some(message_type), Some(title), Some(start_date), Some(expiring_date)) = (
        changes.message_type,
        changes.title,
        changes.start_date,
        changes.expiring_date,
    ) else {
        return Err(FeatureError::Invalid(errors));
    };
    let message = CleanMessage {
        message_type,
        title,
        body: changes.body.unwrap_or_default(),
        start_date,
        expiring_date,
    };
    check_window(&message)?;
    Ok(message)
}

fn check_window(message: &CleanMessage) -> FeatureResult<()> {
    if message.expiring_date <= message.start_date {
        return Err(FeatureError::field(
            "expiringDate",
            "expiringDate must be later than startDate",
        ));
    }
    Ok(())
}

// ---- the catalogue and licenses ----

impl FeatureService {
    /// The catalogue and licenses: the BackOffice role.
    pub(crate) fn authorize_admin(principal: &Principal) -> FeatureResult<()> {
        if principal.is_platform_admin() {
            Ok(())
        } else {
            Err(FeatureError::Forbidden(
                "managing features and licenses needs the BackOffice role",
            ))
        }
    }

    /// Adds a feature to the catalogue.
    pub(crate) async fn create_feature(
        &self,
        principal: &Principal,
        request: FeatureRequest,
    ) -> FeatureResult<FeatureRow> {
        Self::authorize_admin(principal)?;
        check_feature(&request)?;
        let id = match &request.id {
            Some(id) => id.as_str().to_owned(),
            None => Uuid::new_v4().hyphenated().to_string(),
        };
        let now = self.now();
        let row = FeatureRow {
            id,
            name: request.name.trim().to_owned(),
            url: request.url.trim().to_owned(),
            response_url: request.response_url.trim().to_owned(),
            feature_type: request.feature_type,
            created_at: now,
            created_by: Some(principal.id),
            updated_at: now,
            updated_by: Some(principal.id),
        };
        match store::insert_feature(&self.db, &row).await {
            Ok(()) => Ok(row),
            Err(StoreError::Duplicate(_)) => Err(FeatureError::Conflict {
                kind: "duplicate",
                detail: format!("a feature with the id '{}' exists already", row.id),
            }),
            Err(error) => Err(error.into()),
        }
    }

    /// One feature.
    pub(crate) async fn feature(
        &self,
        principal: &Principal,
        id: &FeatureId,
    ) -> FeatureResult<FeatureRow> {
        Self::authorize_admin(principal)?;
        store::find_feature(&self.db, id.as_str())
            .await?
            .ok_or(FeatureError::NotFound("feature"))
    }

    /// A page of the catalogue.
    pub(crate) async fn features(
        &self,
        principal: &Principal,
        feature_type: Option<FeatureType>,
        after: Option<&str>,
        fetch: i64,
    ) -> FeatureResult<Vec<FeatureRow>> {
        Self::authorize_admin(principal)?;
        Ok(store::list_features(&self.db, feature_type, after, fetch).await?)
    }

    /// Replaces a feature's fields.
    pub(crate) async fn replace_feature(
        &self,
        principal: &Principal,
        id: &FeatureId,
        request: FeatureRequest,
    ) -> FeatureResult<FeatureRow> {
        Self::authorize_admin(principal)?;
        check_feature(&request)?;
        let mut row = store::find_feature(&self.db, id.as_str())
            .await?
            .ok_or(FeatureError::NotFound("feature"))?;
        row.name = request.name.trim().to_owned();
        row.url = request.url.trim().to_owned();
        row.response_url = request.response_url.trim().to_owned();
        row.feature_type = request.feature_type;
        row.updated_at = self.now();
        row.updated_by = Some(principal.id);
        if !store::update_feature(&self.db, &row).await? {
            return Err(FeatureError::NotFound("feature"));
        }
        Ok(row)
    }

    /// Removes a feature no tenant holds.
    pub(crate) async fn delete_feature(
        &self,
        principal: &Principal,
        id: &FeatureId,
    ) -> FeatureResult<()> {
        Self::authorize_admin(principal)?;
        match store::delete_feature(&self.db, id.as_str()).await? {
            FeatureDelete::Deleted => Ok(()),
            FeatureDelete::Missing => Err(FeatureError::NotFound("feature")),
            FeatureDelete::Licensed => Err(FeatureError::Conflict {
                kind: "feature-licensed",
                detail: format!("tenants hold licenses of the feature '{id}'; revoke them first"),
            }),
        }
    }

    /// The licenses of a feature.
    pub(crate) async fn licenses_of(
        &self,
        principal: &Principal,
        id: &FeatureId,
    ) -> FeatureResult<Vec<LicenseRow>> {
        self.feature(principal, id).await?;
        Ok(store::licenses_of_feature(&self.db, id.as_str()).await?)
    }

    /// Licenses `feature` to `tenant`, or sets the switch of its license; whether it is new.
    pub(crate) async fn grant(
        &self,
        principal: &Principal,
        id: &FeatureId,
        tenant: TenantId,
        enabled: Option<bool>,
    ) -> FeatureResult<(LicenseRow, bool)> {
        self.feature(principal, id).await?;
        self.require_tenant(tenant).await?;
        match store::upsert_license(
            &self.db,
            tenant,
            id.as_str(),
            enabled,
            principal.id,
            self.now(),
        )
        .await
        {
            Ok(granted) => Ok(granted),
            // The feature or tenant went away between the checks and the write.
            Err(StoreError::Database(sqlx::Error::Database(error)))
                if error.is_foreign_key_violation() =>
            {
                Err(FeatureError::NotFound("feature or tenant"))
            }
            Err(StoreError::NotFound(_)) => Err(FeatureError::NotFound("feature or tenant")),
            Err(error) => Err(error.into()),
        }
    }

    /// Revokes a license.
    pub(crate) async fn revoke(
        &self,
        principal: &Principal,
        id: &FeatureId,
        tenant: TenantId,
    ) -> FeatureResult<()> {
        Self::authorize_admin(principal)?;
        if store::delete_license(&self.db, tenant, id.as_str()).await? {
            Ok(())
        } else {
            Err(FeatureError::NotFound("license"))
        }
    }

    /// The features licensed to `tenant`, for BackOffice.
    pub(crate) async fn tenant_licenses(
        &self,
        principal: &Principal,
        tenant: TenantId,
    ) -> FeatureResult<Vec<LicensedFeature>> {
        Self::authorize_admin(principal)?;
        self.require_tenant(tenant).await?;
        Ok(store::licensed_features(&self.db, tenant, None).await?)
    }

    async fn require_tenant(&self, tenant: TenantId) -> FeatureResult<()> {
        if self.identity.tenant_exists(tenant).await? {
            Ok(())
        } else {
            Err(FeatureError::NotFound("tenant"))
        }
    }
}

// ---- the tenant owner (docs/features.md#the-tenant-owner) ----

impl FeatureService {
    /// The caller's tenant, when the caller is its Owner.
    fn owned_tenant(principal: &Principal) -> FeatureResult<TenantId> {
        let tenant = principal.tenant_id.ok_or(FeatureError::Forbidden(
            "the caller acts in no tenant; use an API key or a token of a tenant member",
        ))?;
        if principal.role_in(tenant) != Some(TenantRole::Owner) {
            return Err(FeatureError::Forbidden(
                "only an Owner of the tenant may list and switch its features",
            ));
        }
        Ok(tenant)
    }

    /// The features licensed to the caller's tenant.
    pub(crate) async fn my_features(
        &self,
        principal: &Principal,
        feature_type: Option<FeatureType>,
    ) -> FeatureResult<Vec<LicensedFeature>> {
        let tenant = Self::owned_tenant(principal)?;
        Ok(store::licensed_features(&self.db, tenant, feature_type).await?)
    }

    /// 403 unless the caller is an Owner of `tenant`, the one who switches its features.
    pub(crate) fn authorize_switch(principal: &Principal, tenant: TenantId) -> FeatureResult<()> {
        if Self::owned_tenant(principal)? == tenant {
            Ok(())
        } else {
            Err(FeatureError::Forbidden(
                "only an Owner of the tenant may switch its features",
            ))
        }
    }

    /// Switches a licensed feature of `tenant` on or off; the license stays as it is.
    pub(crate) async fn set_enabled(
        &self,
        principal: &Principal,
        id: &FeatureId,
        tenant: TenantId,
        enabled: bool,
    ) -> FeatureResult<bool> {
        Self::authorize_switch(principal, tenant)?;
        let current = store::find_license(&self.db, tenant, id.as_str())
            .await?
            .ok_or(FeatureError::NotFound("license"))?;
        if current.enabled == enabled {
            return Ok(enabled);
        }
        let changed = store::set_enabled(
            &self.db,
            tenant,
            id.as_str(),
            enabled,
            principal.id,
            self.now(),
        )
        .await?
        .ok_or(FeatureError::NotFound("license"))?;
        Ok(changed.enabled)
    }
}

/// Checks a catalogue entry's fields, all at once.
fn check_feature(request: &FeatureRequest) -> FeatureResult<()> {
    let mut errors = FieldErrors::new();
    let name = request.name.trim();
    let count = name.chars().count();
    if count == 0 || count > NAME_CHARS_MAX {
        errors.insert(
            "name".into(),
            vec![format!(
                "the name must have 1 to {NAME_CHARS_MAX} characters"
            )],
        );
    } else if name.chars().any(char::is_control) {
        errors.insert(
            "name".into(),
            vec!["the name must not contain control characters".into()],
        );
    }
    for (field, value) in [
        ("url", &request.url),
        ("responseUrl", &request.response_url),
    ] {
        if let Err(message) = check_url(value.trim()) {
            errors.insert(field.into(), vec![message]);
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(FeatureError::Invalid(errors))
    }
}

fn check_url(raw: &str) -> Result<(), String> {
    if raw.len() > URL_BYTES_MAX {
        return Err(format!("a URL has at most {URL_BYTES_MAX} bytes"));
    }
    if raw.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err("a URL must not contain whitespace or control characters".into());
    }
    match url::Url::parse(raw) {
        Ok(url) if matches!(url.scheme(), "https" | "http") && url.has_host() => Ok(()),
        Ok(_) => Err("the URL must be an absolute http or https URL".into()),
        Err(error) => Err(format!("not a URL: {error}")),
    }
}
