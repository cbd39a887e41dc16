//! Credit records (lots, operations, journal entries) and the bodies of the credit endpoints
//! (docs/credits.md, which also designs the shapes the platform's interface leaves open).

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Deserializer, Serialize};
use uuid::Uuid;

use crate::credits::amount::Credits;
use crate::http::time::WireTime;
use crate::ids::TenantId;

crate::wire_enum! {
    /// What state credits are in (docs/credits.md#the-model).
    pub(crate) enum CreditStatus {
        /// May be reserved, spent or moved.
        Available,
        /// Held by a reservation until it is spent, released or times out.
        Reserved,
        /// Consumed by an operation.
        Spent,
        /// Past the lot's expiry date while available.
        Expired,
    }
}

crate::wire_enum! {
    /// Where a reservation (or a direct spend) stands. It leaves `Reserved` at most once.
    pub(crate) enum OperationState {
        /// Holding credits.
        Reserved,
        /// Spent, wholly or partly (the rest went back).
        Spent,
        /// Given back by a release.
        Released,
        /// Given back because its timeout passed.
        TimedOut,
    }
}

crate::wire_enum! {
    /// What a journal entry records.
    pub(crate) enum JournalKind {
        /// Credits added (`POST /api/iam/credit`).
        Add,
        /// Credits reserved.
        Reserve,
        /// A reservation spent (the unspent rest given back), or a direct spend.
        Spend,
        /// A reservation released.
        Release,
        /// A reservation given back at its timeout.
        Timeout,
        /// Available credits past their expiry date.
        Expire,
        /// Credits moved out to another pool.
        MoveOut,
        /// Credits moved in from another pool.
        MoveIn,
    }
}

/// A pool of credits: a tenant's, or the generic pool of credits assigned to no tenant (kept
/// under the nil uuid).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct PoolId(Uuid);

impl PoolId {
    /// The generic (unassigned) pool.
    pub(crate) const GENERIC: Self = Self(Uuid::nil());

    /// The pool of `tenant`.
    pub(crate) fn of(tenant: TenantId) -> Self {
        Self(tenant.as_uuid())
    }

    /// The pool of `tenant`, or the generic pool for `None`.
    pub(crate) fn of_optional(tenant: Option<TenantId>) -> Self {
        tenant.map_or(Self::GENERIC, Self::of)
    }

    /// The pool stored under `id`.
    pub(crate) fn from_uuid(id: Uuid) -> Self {
        Self(id)
    }

    /// The stored id.
    pub(crate) fn as_uuid(self) -> Uuid {
        self.0
    }

    /// The tenant, `None` for the generic pool.
    pub(crate) fn tenant(self) -> Option<TenantId> {
        (!self.0.is_nil()).then(|| TenantId::from_uuid(self.0))
    }

    /// How journal entries name the pool on the other side of a move.
    pub(crate) fn wire_name(self) -> String {
        self.tenant()
            .map_or_else(|| "Unassigned".to_owned(), |tenant| tenant.to_string())
    }
}

/// Amounts by status: of a lot, a pool, or (signed) the change a journal entry records.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Balances {
    /// Available credits.
    pub(crate) available: Credits,
    /// Reserved credits.
    pub(crate) reserved: Credits,
    /// Spent credits.
    pub(crate) spent: Credits,
    /// Expired credits.
    pub(crate) expired: Credits,
}

impl Balances {
    /// The amount in `status`.
    pub(crate) fn of(&self, status: CreditStatus) -> Credits {
        match status {
            CreditStatus::Available => self.available,
            CreditStatus::Reserved => self.reserved,
            CreditStatus::Spent => self.spent,
            CreditStatus::Expired => self.expired,
        }
    }

    /// The amounts listed for `statuses`.
    pub(crate) fn listed(&self, statuses: &[CreditStatus]) -> Vec<StatusAmount> {
        statuses
            .iter()
            .map(|&status| StatusAmount {
                status,
                credits: self.of(status),
            })
            .collect()
    }
}

/// The contract credits are billed to. Two lots share a billing reference when all three
/// parts are equal; absent parts are empty.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct BillingReference {
    /// The reference.
    pub(crate) reference: String,
    /// Its label.
    pub(crate) tag: String,
    /// Its type, e.g. `EXT`.
    pub(crate) kind: String,
}

/// Longest billing reference, tag, type, sales order id and operation id, in characters.
pub(crate) const TEXT_CHARS_MAX: usize = 255;

/// A billing reference as it travels (docs/credits.md#the-model).
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BillingReferenceDto {
    /// The reference (required, at most 255 characters).
    pub(crate) billing_reference: String,
    /// A label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) billing_reference_tag: Option<String>,
    /// The type, e.g. `EXT`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) billing_reference_type: Option<String>,
}

impl From<&BillingReference> for BillingReferenceDto {
    fn from(reference: &BillingReference) -> Self {
        let present = |text: &str| (!text.is_empty()).then(|| text.to_owned());
        Self {
            billing_reference: reference.reference.clone(),
            billing_reference_tag: present(&reference.tag),
            billing_reference_type: present(&reference.kind),
        }
    }
}

/// Credits of one pool with one billing reference and one expiry date.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LotRow {
    /// Lot id.
    pub(crate) id: Uuid,
    /// Its pool.
    pub(crate) pool: PoolId,
    /// Its billing reference.
    pub(crate) reference: BillingReference,
    /// The last day its credits may be used (UTC).
    pub(crate) expires_on: NaiveDate,
    /// Its amounts.
    pub(crate) balances: Balances,
}

impl LotRow {
    /// Whether the lot's date has passed on `today`: its credits may no longer be used.
    pub(crate) fn is_expired(&self, today: NaiveDate) -> bool {
        self.expires_on < today
    }
}

/// A reservation or a direct spend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OperationRow {
    /// Row id.
    pub(crate) id: Uuid,
    /// Its tenant.
    pub(crate) tenant_id: TenantId,
    /// The caller's operation id, unique in the tenant.
    pub(crate) operation_id: String,
    /// Where it stands.
    pub(crate) state: OperationState,
    /// A spend without a reservation.
    pub(crate) direct: bool,
    /// Credits reserved (or spent directly).
    pub(crate) credits: Credits,
    /// Credits spent.
    pub(crate) spent: Credits,
    /// The project the credits are for, as the caller named it.
    pub(crate) project_id: Option<Uuid>,
    /// The request that made it, for recognising retries.
    pub(crate) request: String,
    /// The request that resolved it, for recognising retries.
    pub(crate) resolution: Option<String>,
    /// When it was made.
    pub(crate) created_at: DateTime<Utc>,
    /// Who made it.
    pub(crate) created_by: Uuid,
    /// When a reservation gives its credits back by itself.
    pub(crate) timeout_at: Option<DateTime<Utc>>,
    /// When it left `Reserved`.
    pub(crate) resolved_at: Option<DateTime<Utc>>,
}

/// What an operation holds or spent of one lot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OperationLotRow {
    /// The lot.
    pub(crate) lot: LotRow,
    /// Still reserved.
    pub(crate) reserved: Credits,
    /// Spent.
    pub(crate) spent: Credits,
}

/// One change to one lot, as the journal keeps it.
#[derive(Debug, Clone)]
pub(crate) struct JournalRow {
    /// Order of entries in the journal.
    pub(crate) sequence: i64,
    /// The request (or job step) the change belongs to: one per change, several entries when
    /// it touched several lots.
    pub(crate) change_id: Uuid,
    /// When.
    pub(crate) at: DateTime<Utc>,
    /// What.
    pub(crate) kind: JournalKind,
    /// Who: a user, API key or service; `None` for the expiry and timeout jobs.
    pub(crate) actor_id: Option<Uuid>,
    /// The kind of actor.
    pub(crate) actor_type: Option<String>,
    /// The operation, for reserve, spend, release and timeout.
    pub(crate) operation_id: Option<String>,
    /// The sales order, for adds.
    pub(crate) sales_order_id: Option<String>,
    /// The other pool of a move.
    pub(crate) counterpart: Option<PoolId>,
    /// The lot's billing reference.
    pub(crate) reference: BillingReference,
    /// The lot's expiry date.
    pub(crate) expires_on: NaiveDate,
    /// The signed change per status.
    pub(crate) change: Balances,
}

// ---- requests ----

/// `POST /api/iam/credit`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AddCreditsRequest {
    /// Credits to add.
    pub(crate) credits: Credits,
    /// Billing reference of the credits.
    pub(crate) billing_reference: BillingReferenceDto,
    /// The sales order: adding the same order again adds nothing.
    #[serde(default)]
    pub(crate) sales_order_id: Option<String>,
    /// Last day the credits may be used, `YYYY-MM-DD` (a timestamp is read as its UTC date).
    #[schema(value_type = String, format = Date, example = "2027-12-31")]
    pub(crate) expires_at: String,
    /// The receiving tenant; absent, empty or the nil uuid for the generic pool.
    #[serde(default, deserialize_with = "optional_tenant")]
    #[schema(value_type = Option<Uuid>)]
    pub(crate) tenant_id: Option<TenantId>,
}

/// `PUT /api/iam/credit/reserve`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReserveRequest {
    /// Credits to reserve.
    pub(crate) credits: Credits,
    /// The tenant whose credits are reserved.
    #[schema(value_type = Uuid)]
    pub(crate) tenant_id: TenantId,
    /// The operation the credits are for (an engine execution id). Reserving again with the
    /// same id and body returns the same reservation; Basin makes one up when absent.
    #[serde(default)]
    pub(crate) operation_id: Option<String>,
    /// The project the operation works in, shown in the extended details.
    #[serde(default)]
    pub(crate) project_id: Option<Uuid>,
    /// Seconds after which an unresolved reservation gives its credits back.
    #[serde(default)]
    #[schema(value_type = Option<u64>)]
    pub(crate) timeout_seconds: Option<WholeNumber>,
}

/// `PUT /api/iam/credit/spend`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SpendRequest {
    /// The tenant of the operation.
    #[schema(value_type = Uuid)]
    pub(crate) tenant_id: TenantId,
    /// The operation whose reservation is spent (or, with `direct`, the new operation).
    pub(crate) operation_id: String,
    /// Credits to spend: at most the reservation (the rest goes back); all of it when absent.
    /// Required with `direct`.
    #[serde(default)]
    pub(crate) credits: Option<Credits>,
    /// Spend available credits at once, without a reservation.
    #[serde(default)]
    pub(crate) direct: bool,
    /// For a direct spend: the project the credits are for.
    #[serde(default)]
    pub(crate) project_id: Option<Uuid>,
}

/// `PUT /api/iam/credit/release`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReleaseRequest {
    /// The tenant of the operation.
    #[schema(value_type = Uuid)]
    pub(crate) tenant_id: TenantId,
    /// The operation whose reservation is given back.
    pub(crate) operation_id: String,
}

/// `PUT /api/iam/credit/move`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MoveRequest {
    /// Credits to move.
    pub(crate) credits: Credits,
    /// Pool to take from; absent, empty or the nil uuid for the generic pool.
    #[serde(default, deserialize_with = "optional_tenant")]
    #[schema(value_type = Option<Uuid>)]
    pub(crate) source_tenant_id: Option<TenantId>,
    /// Pool to move to; absent, empty or the nil uuid for the generic pool.
    #[serde(default, deserialize_with = "optional_tenant")]
    #[schema(value_type = Option<Uuid>)]
    pub(crate) target_tenant_id: Option<TenantId>,
    /// Move only credits of this billing reference.
    #[serde(default)]
    pub(crate) billing_reference: Option<BillingReferenceDto>,
}

/// The tenant a details query is about; the caller's own when absent.
#[derive(Debug, Clone, Default, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TenantSelector {
    /// The tenant.
    #[serde(default, deserialize_with = "optional_tenant")]
    #[schema(value_type = Option<Uuid>)]
    pub(crate) tenant_id: Option<TenantId>,
}

/// A whole number sent as a JSON number (read from its text) or a string holding one as JSON
/// writes it: digits only, no sign, no white space, no leading zeros.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WholeNumber(pub(crate) u64);

impl<'de> Deserialize<'de> for WholeNumber {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Number(u64),
            Text(String),
        }
        match Raw::deserialize(deserializer)? {
            Raw::Number(value) => Ok(Self(value)),
            Raw::Text(text) => {
                let canonical = !text.is_empty()
                    && text.bytes().all(|b| b.is_ascii_digit())
                    && (text.len() == 1 || !text.starts_with('0'));
                canonical
                    .then(|| text.parse().ok())
                    .flatten()
                    .map(Self)
                    .ok_or_else(|| serde::de::Error::custom("must be a whole number of seconds"))
            }
        }
    }
}

/// A tenant id where empty means none: absent, `null`, `""` or the nil uuid (what clients
/// with a non-nullable GUID send).
fn optional_tenant<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<TenantId>, D::Error> {
    let raw = Option::<String>::deserialize(deserializer)?;
    match raw.as_deref().map(str::trim) {
        None | Some("") => Ok(None),
        Some(text) => {
            let id = Uuid::parse_str(text)
                .map_err(|_| serde::de::Error::custom("must be a tenant id (a uuid)"))?;
            Ok((!id.is_nil()).then(|| TenantId::from_uuid(id)))
        }
    }
}

// ---- responses ----

/// Credits in one status.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StatusAmount {
    /// The status.
    pub(crate) status: CreditStatus,
    /// The credits in it.
    pub(crate) credits: Credits,
}

/// `POST /api/iam/credit`: what was added.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AddCreditsResponse {
    /// Credits added by the order.
    pub(crate) credits: Credits,
    /// The receiving tenant; absent for the generic pool.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Uuid>)]
    pub(crate) tenant_id: Option<TenantId>,
    /// The sales order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) sales_order_id: Option<String>,
    /// The billing reference.
    pub(crate) billing_reference: BillingReferenceDto,
    /// Last day the credits may be used.
    #[schema(value_type = String, format = Date)]
    pub(crate) expires_at: NaiveDate,
}

/// Totals per status of a pool.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BreakdownDto {
    /// The tenant; absent for the generic pool.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Uuid>)]
    pub(crate) tenant_id: Option<TenantId>,
    /// Credits per status, in the order Available, Reserved, Spent, Expired (only the
    /// statuses asked for with `filter`).
    pub(crate) statuses: Vec<StatusAmount>,
}

/// One lot: the credits of one billing reference expiring on one date.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LotDto {
    /// The billing reference.
    pub(crate) billing_reference: BillingReferenceDto,
    /// Last day the credits may be used.
    #[schema(value_type = String, format = Date)]
    pub(crate) expires_at: NaiveDate,
    /// Whether that day has passed.
    pub(crate) is_expired: bool,
    /// Credits per status (only the statuses asked for).
    pub(crate) statuses: Vec<StatusAmount>,
}

impl LotDto {
    /// The lot as shown, with the amounts of `statuses`.
    pub(crate) fn of(lot: &LotRow, statuses: &[CreditStatus], today: NaiveDate) -> Self {
        Self {
            billing_reference: BillingReferenceDto::from(&lot.reference),
            expires_at: lot.expires_on,
            is_expired: lot.is_expired(today),
            statuses: lot.balances.listed(statuses),
        }
    }
}

/// An operation that holds or spent credits of a lot.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LotOperationDto {
    /// The operation id.
    pub(crate) operation_id: String,
    /// Where it stands.
    pub(crate) state: OperationState,
    /// The project it named.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) project_id: Option<Uuid>,
    /// The project's name, when it is a project of the tenant.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) project_name: Option<String>,
    /// Credits of this lot it holds.
    pub(crate) reserved: Credits,
    /// Credits of this lot it spent.
    pub(crate) spent: Credits,
    /// When it was made.
    #[schema(value_type = String)]
    pub(crate) created_at: WireTime,
    /// When it left `Reserved`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub(crate) resolved_at: Option<WireTime>,
}

/// A lot with the operations that reserved or spent its credits.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ExtendedLotDto {
    /// The lot.
    #[serde(flatten)]
    pub(crate) lot: LotDto,
    /// Its operations, newest first, at most `operationsLimit`.
    pub(crate) operations: Vec<LotOperationDto>,
    /// How many operations there are in all.
    pub(crate) operations_total: u64,
}

/// What an operation took from one lot.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct OperationLotDto {
    /// The lot's billing reference.
    pub(crate) billing_reference: BillingReferenceDto,
    /// The lot's expiry date.
    #[schema(value_type = String, format = Date)]
    pub(crate) expires_at: NaiveDate,
    /// Still reserved.
    pub(crate) reserved: Credits,
    /// Spent.
    pub(crate) spent: Credits,
}

/// A reservation or direct spend: the answer of reserve, spend and release.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct OperationDto {
    /// The operation id.
    pub(crate) operation_id: String,
    /// Its tenant.
    #[schema(value_type = Uuid)]
    pub(crate) tenant_id: TenantId,
    /// Where it stands.
    pub(crate) state: OperationState,
    /// A spend without a reservation.
    pub(crate) direct: bool,
    /// Credits reserved (or spent directly).
    pub(crate) credits: Credits,
    /// Credits still held.
    pub(crate) reserved: Credits,
    /// Credits spent.
    pub(crate) spent: Credits,
    /// Credits given back.
    pub(crate) returned: Credits,
    /// The project it named.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) project_id: Option<Uuid>,
    /// When it was made.
    #[schema(value_type = String)]
    pub(crate) created_at: WireTime,
    /// When a reservation gives its credits back by itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub(crate) timeout_at: Option<WireTime>,
    /// When it left `Reserved`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub(crate) resolved_at: Option<WireTime>,
    /// What it took from each lot.
    pub(crate) lots: Vec<OperationLotDto>,
}

impl OperationDto {
    /// The operation with its lots.
    pub(crate) fn of(operation: &OperationRow, lots: &[OperationLotRow]) -> Self {
        let reserved = lots.iter().fold(Credits::ZERO, |sum, lot| {
            sum.checked_add(lot.reserved).unwrap_or(sum)
        });
        let returned = operation
            .credits
            .checked_sub(operation.spent)
            .and_then(|rest| rest.checked_sub(reserved))
            .unwrap_or(Credits::ZERO);
        Self {
            operation_id: operation.operation_id.clone(),
            tenant_id: operation.tenant_id,
            state: operation.state,
            direct: operation.direct,
            credits: operation.credits,
            reserved,
            spent: operation.spent,
            returned,
            project_id: operation.project_id,
            created_at: WireTime(operation.created_at),
            timeout_at: operation.timeout_at.map(WireTime),
            resolved_at: operation.resolved_at.map(WireTime),
            lots: lots
                .iter()
                .map(|lot| OperationLotDto {
                    billing_reference: BillingReferenceDto::from(&lot.lot.reference),
                    expires_at: lot.lot.expires_on,
                    reserved: lot.reserved,
                    spent: lot.spent,
                })
                .collect(),
        }
    }
}

/// What a move took from each lot of the source.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MovedLotDto {
    /// The billing reference.
    pub(crate) billing_reference: BillingReferenceDto,
    /// The expiry date, kept by the moved credits.
    #[schema(value_type = String, format = Date)]
    pub(crate) expires_at: NaiveDate,
    /// Credits moved.
    pub(crate) credits: Credits,
}

/// `PUT /api/iam/credit/move`: what moved.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MoveResponse {
    /// Credits moved.
    pub(crate) credits: Credits,
    /// The source; absent for the generic pool.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Uuid>)]
    pub(crate) source_tenant_id: Option<TenantId>,
    /// The target; absent for the generic pool.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Uuid>)]
    pub(crate) target_tenant_id: Option<TenantId>,
    /// The lots the credits came from.
    pub(crate) lots: Vec<MovedLotDto>,
}

/// One journal entry.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct JournalEntryDto {
    /// Position in the journal (increasing).
    pub(crate) sequence: i64,
    /// Entries of one change share it.
    pub(crate) change_id: Uuid,
    /// When.
    #[schema(value_type = String)]
    pub(crate) at: WireTime,
    /// What.
    pub(crate) kind: JournalKind,
    /// Who; absent for the expiry and timeout jobs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) actor_id: Option<Uuid>,
    /// `UserIdentity` or `OpenAPIAccount`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) actor_type: Option<String>,
    /// The operation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) operation_id: Option<String>,
    /// The sales order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) sales_order_id: Option<String>,
    /// The other pool of a move: a tenant id, or `Unassigned`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) counterpart: Option<String>,
    /// The lot's billing reference.
    pub(crate) billing_reference: BillingReferenceDto,
    /// The lot's expiry date.
    #[schema(value_type = String, format = Date)]
    pub(crate) expires_at: NaiveDate,
    /// Change of available credits.
    pub(crate) available: Credits,
    /// Change of reserved credits.
    pub(crate) reserved: Credits,
    /// Change of spent credits.
    pub(crate) spent: Credits,
    /// Change of expired credits.
    pub(crate) expired: Credits,
}

impl From<&JournalRow> for JournalEntryDto {
    fn from(row: &JournalRow) -> Self {
        Self {
            sequence: row.sequence,
            change_id: row.change_id,
            at: WireTime(row.at),
            kind: row.kind,
            actor_id: row.actor_id,
            actor_type: row.actor_type.clone(),
            operation_id: row.operation_id.clone(),
            sales_order_id: row.sales_order_id.clone(),
            counterpart: row.counterpart.map(PoolId::wire_name),
            billing_reference: BillingReferenceDto::from(&row.reference),
            expires_at: row.expires_on,
            available: row.change.available,
            reserved: row.change.reserved,
            spent: row.change.spent,
            expired: row.change.expired,
        }
    }
}
