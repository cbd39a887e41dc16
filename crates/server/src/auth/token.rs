//! Tokens: the claims Basin reads from any JWT, and the HS256 tokens it signs itself
//! (`basin admin token`, bootstrap).

use std::collections::BTreeSet;

use chrono::{DateTime, TimeDelta, Utc};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::auth::{PlatformRole, SigningSecret};
use crate::ids::TenantId;
use crate::limits::TOKEN_TTL_SECONDS_MAX;

/// The claims Basin uses, read leniently from whatever the issuer put in the token.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct TokenClaims {
    /// `sub`, which must be a UUID.
    pub(crate) subject: Option<Uuid>,
    /// Tenant id from the configured claim, `tenant_id` or `tenantId`.
    pub(crate) tenant_id: Option<TenantId>,
    /// Platform roles from `roles`, `role` or Keycloak's `realm_access.roles`; other role
    /// names are ignored.
    pub(crate) platform_roles: BTreeSet<PlatformRole>,
    /// Scopes from `scope` (space separated) or `scp` (string or array).
    pub(crate) scopes: BTreeSet<String>,
    /// `client_id`, else `azp`.
    pub(crate) client_id: Option<String>,
    /// `name`, else `preferred_username`.
    pub(crate) name: Option<String>,
    /// `email`.
    pub(crate) email: Option<String>,
    /// `exp` in seconds since the epoch.
    pub(crate) expires_at: Option<i64>,
    /// `nbf` in seconds since the epoch.
    pub(crate) not_before: Option<i64>,
}

/// A claim that is present but unusable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct ClaimError(pub String);

impl TokenClaims {
    /// Reads the claims Basin uses from a decoded payload.
    pub(crate) fn from_payload(
        payload: &Map<String, Value>,
        tenant_claim: &str,
    ) -> Result<Self, ClaimError> {
        let subject = match payload.get("sub") {
            None | Some(Value::Null) => None,
            Some(Value::String(raw)) => Some(
                Uuid::parse_str(raw)
                    .map_err(|_| ClaimError("the sub claim must be a UUID".into()))?,
            ),
            Some(_) => return Err(ClaimError("the sub claim must be a string".into())),
        };
        let mut tenant_id = None;
        for claim in [tenant_claim, "tenant_id", "tenantId"] {
            if let Some(value) = payload.get(claim).filter(|v| !v.is_null()) {
                let raw = value
                    .as_str()
                    .ok_or_else(|| ClaimError(format!("the {claim} claim must be a string")))?;
                let id = raw
                    .parse()
                    .map_err(|_| ClaimError(format!("the {claim} claim must be a UUID")))?;
                tenant_id = Some(id);
                break;
            }
        }
        let mut role_names = strings(payload.get("roles"));
        role_names.extend(strings(payload.get("role")));
        if let Some(realm) = payload.get("realm_access").and_then(Value::as_object) {
            role_names.extend(strings(realm.get("roles")));
        }
        let platform_roles = role_names
            .iter()
            .filter_map(|name| name.parse::<PlatformRole>().ok())
            .collect();
        let mut scopes: BTreeSet<String> = strings(payload.get("scope"))
            .iter()
            .flat_map(|scope| {
                scope
                    .split_whitespace()
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
            .collect();
        scopes.extend(strings(payload.get("scp")).iter().flat_map(|scope| {
            scope
                .split_whitespace()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        }));
        Ok(Self {
            subject,
            tenant_id,
            platform_roles,
            scopes,
            client_id: string(payload, "client_id").or_else(|| string(payload, "azp")),
            name: string(payload, "name").or_else(|| string(payload, "preferred_username")),
            email: string(payload, "email"),
            expires_at: number(payload.get("exp"))?,
            not_before: number(payload.get("nbf"))?,
        })
    }
}

fn string(payload: &Map<String, Value>, claim: &str) -> Option<String> {
    payload
        .get(claim)
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// A string or an array of strings; anything else yields nothing.
fn strings(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::String(one)) => vec![one.clone()],
        Some(Value::Array(many)) => many
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

fn number(value: Option<&Value>) -> Result<Option<i64>, ClaimError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(number)) => number
            .as_i64()
            // Some issuers write fractional seconds; whole seconds are enough here.
            .or_else(|| number.as_f64().filter(|f| f.is_finite()).map(|f| f as i64))
            .map(Some)
            .ok_or_else(|| ClaimError("time claims must be numbers of seconds".into())),
        Some(_) => Err(ClaimError("time claims must be numbers of seconds".into())),
    }
}

/// What a token Basin signs says.
#[derive(Debug, Clone, Default)]
pub struct TokenRequest {
    /// `sub`.
    pub subject: Uuid,
    /// `tenant_id`.
    pub tenant_id: Option<TenantId>,
    /// `roles`.
    pub roles: Vec<String>,
    /// `scope`, joined with spaces.
    pub scopes: Vec<String>,
    /// `client_id`.
    pub client_id: Option<String>,
    /// `name`.
    pub name: Option<String>,
    /// `email`.
    pub email: Option<String>,
    /// Lifetime.
    pub ttl: TimeDelta,
}

/// Signs `request` with HS256.
pub fn issue_token(
    secret: &SigningSecret,
    issuer: &str,
    audience: &str,
    now: DateTime<Utc>,
    request: &TokenRequest,
) -> Result<String, jsonwebtoken::errors::Error> {
    let issued_at = now.timestamp();
    let mut claims = Map::new();
    claims.insert("iss".into(), issuer.into());
    claims.insert("aud".into(), audience.into());
    claims.insert("sub".into(), request.subject.to_string().into());
    claims.insert("iat".into(), issued_at.into());
    claims.insert("nbf".into(), issued_at.into());
    claims.insert(
        "exp".into(),
        issued_at.saturating_add(request.ttl.num_seconds()).into(),
    );
    claims.insert("jti".into(), Uuid::new_v4().to_string().into());
    if let Some(tenant) = request.tenant_id {
        claims.insert("tenant_id".into(), tenant.to_string().into());
    }
    if !request.roles.is_empty() {
        claims.insert("roles".into(), request.roles.clone().into());
    }
    if !request.scopes.is_empty() {
        claims.insert("scope".into(), request.scopes.join(" ").into());
    }
    for (claim, value) in [
        ("client_id", &request.client_id),
        ("name", &request.name),
        ("email", &request.email),
    ] {
        if let Some(value) = value {
            claims.insert(claim.into(), value.clone().into());
        }
    }
    jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &claims,
        &EncodingKey::from_secret(secret.bytes()),
    )
}

/// Parses a lifetime such as `90s`, `15m`, `1h`, `7d` (a bare number is seconds).
pub(crate) fn parse_ttl(raw: &str) -> Result<TimeDelta, String> {
    let raw = raw.trim();
    let split = raw.find(|c: char| !c.is_ascii_digit()).unwrap_or(raw.len());
    let (digits, unit) = raw.split_at(split);
    let amount: i64 = digits
        .parse()
        .map_err(|_| format!("invalid lifetime '{raw}'; use e.g. 90s, 15m, 1h or 7d"))?;
    let unit_seconds = match unit {
        "" | "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => {
            return Err(format!(
                "invalid lifetime unit in '{raw}'; use s, m, h or d"
            ));
        }
    };
    let seconds = amount
        .checked_mul(unit_seconds)
        .filter(|s| (1..=TOKEN_TTL_SECONDS_MAX).contains(s))
        .ok_or_else(|| format!("lifetime must be between 1s and {TOKEN_TTL_SECONDS_MAX}s"))?;
    Ok(TimeDelta::seconds(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn claims(value: Value) -> Result<TokenClaims, ClaimError> {
        TokenClaims::from_payload(value.as_object().unwrap(), "tenant_id")
    }

    #[test]
    fn scopes_are_split_on_spaces_and_read_from_scope_and_scp() {
        let parsed = claims(json!({"scope": "a  b\tc", "scp": ["d", "e f"]})).unwrap();
        let expected: BTreeSet<String> = ["a", "b", "c", "d", "e", "f"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(parsed.scopes, expected);
    }

    #[test]
    fn roles_are_read_from_roles_role_and_realm_access_in_any_case() {
        let parsed = claims(json!({"roles": "backoffice"})).unwrap();
        assert!(parsed.platform_roles.contains(&PlatformRole::BackOffice));
        let parsed = claims(json!({"role": ["CloudAdministrator", "Unknown"]})).unwrap();
        assert_eq!(
            parsed.platform_roles.into_iter().collect::<Vec<_>>(),
            vec![PlatformRole::CloudAdministrator]
        );
        let parsed = claims(json!({"realm_access": {"roles": ["BackOffice"]}})).unwrap();
        assert!(parsed.platform_roles.contains(&PlatformRole::BackOffice));
        assert!(claims(json!({})).unwrap().platform_roles.is_empty());
    }

    #[test]
    fn tenant_and_subject_must_be_uuids() {
        let tenant = Uuid::new_v4();
        let parsed = claims(json!({"tenantId": tenant.to_string()})).unwrap();
        assert_eq!(parsed.tenant_id.unwrap().as_uuid(), tenant);
        assert!(claims(json!({"tenant_id": "acme"})).is_err());
        assert!(claims(json!({"sub": "alice"})).is_err());
        assert!(claims(json!({"sub": 5})).is_err());
        assert!(claims(json!({"exp": "tomorrow"})).is_err());
        let parsed = claims(json!({"exp": 1.5e9, "client_id": "app", "azp": "other"})).unwrap();
        assert_eq!(parsed.expires_at, Some(1_500_000_000));
        assert_eq!(parsed.client_id.as_deref(), Some("app"));
        assert_eq!(
            claims(json!({"azp": "other"}))
                .unwrap()
                .client_id
                .as_deref(),
            Some("other")
        );
    }

    #[test]
    fn lifetimes_parse_with_units_and_limits() {
        assert_eq!(parse_ttl("90").unwrap(), TimeDelta::seconds(90));
        assert_eq!(parse_ttl("15m").unwrap(), TimeDelta::minutes(15));
        assert_eq!(parse_ttl("1h").unwrap(), TimeDelta::hours(1));
        assert_eq!(parse_ttl("7d").unwrap(), TimeDelta::days(7));
        for bad in ["", "0", "1y", "h", "-5m", "99999999999999999999d", "400d"] {
            assert!(parse_ttl(bad).is_err(), "{bad}");
        }
    }
}
