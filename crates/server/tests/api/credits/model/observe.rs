//! Reading the ledger through the HTTP API, in the model's terms, and comparing: the answer
//! of a request with the model's prediction, a pool's breakdown and details with the model's
//! pool, the journal's sum with the balances.
//!
//! Everything returns `Err(description)` rather than panicking, so that proptest can shrink a
//! failing case and print the smallest sequence of steps with the first difference.

use std::collections::{BTreeMap, BTreeSet};

use chrono::NaiveDate;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use uuid::Uuid;

use super::ledger::{
    Amounts, Answer, LotKey, LotView, Micros, MovedLot, OperationView, Outcome, Pool, PoolView,
    Reference, Share,
};
use super::steps::WireRequest;
use crate::helpers::{TestApp, routes};

/// A response: status, whether it is a problem document, and its JSON body.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: StatusCode,
    pub is_problem: bool,
    pub body: Value,
}

/// Sends `request` as BackOffice.
pub async fn send(app: &TestApp, request: &WireRequest) -> Reply {
    let mut builder = app
        .back_office(request.method.clone(), &request.path)
        .header("content-type", "application/json")
        .body(request.body.clone());
    if let Some(key) = &request.idempotency_key {
        builder = builder.header("Idempotency-Key", key);
    }
    reply_of(builder.send().await.unwrap()).await
}

async fn reply_of(response: reqwest::Response) -> Reply {
    let status = response.status();
    let is_problem = response
        .headers()
        .get("content-type")
        .is_some_and(|value| value.as_bytes() == b"application/problem+json");
    let text = response.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    Reply {
        status,
        is_problem,
        body,
    }
}

/// A BackOffice request expected to answer 200, as JSON.
async fn read(
    app: &TestApp,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> Result<Value, String> {
    let mut builder = app.back_office(method, path);
    if let Some(body) = body {
        builder = builder.json(&body);
    }
    let reply = reply_of(builder.send().await.unwrap()).await;
    if reply.status == StatusCode::OK {
        Ok(reply.body)
    } else {
        Err(format!("{path} answered {}: {}", reply.status, reply.body))
    }
}

/// Checks that `reply` is what the model predicted.
pub fn check_reply(predicted: &Outcome, reply: &Reply) -> Result<(), String> {
    match predicted {
        Err(refusal) => {
            let kind = format!("urn:basin:problem:{}", refusal.kind);
            if reply.status.as_u16() != refusal.status
                || !reply.is_problem
                || reply.body["type"] != kind
            {
                return Err(format!(
                    "the model refuses with {} {}; the API answered {}: {}",
                    refusal.status, refusal.kind, reply.status, reply.body
                ));
            }
            Ok(())
        }
        Ok(answer) => {
            if reply.status != StatusCode::OK {
                return Err(format!(
                    "the model answers {answer:?}; the API answered {}: {}",
                    reply.status, reply.body
                ));
            }
            check_answer(answer, &reply.body)
        }
    }
}

fn check_answer(answer: &Answer, body: &Value) -> Result<(), String> {
    let observed = match answer {
        Answer::Added { .. } => Answer::Added {
            amount: micros(&body["credits"])?,
        },
        Answer::Operation(_) => Answer::Operation(operation_of(body)?),
        Answer::Moved { .. } => Answer::Moved {
            amount: micros(&body["credits"])?,
            lots: array(&body["lots"])?
                .iter()
                .map(|lot| {
                    Ok(MovedLot {
                        key: lot_key(lot)?,
                        credits: micros(&lot["credits"])?,
                    })
                })
                .collect::<Result<_, String>>()?,
        },
    };
    if observed == *answer {
        Ok(())
    } else {
        Err(format!(
            "the API answered\n  {observed:?}\nthe model\n  {answer:?}\nbody: {body}"
        ))
    }
}

/// An operation body in the model's terms; also checks that `resolvedAt` is there exactly
/// when the operation left `Reserved`.
pub fn operation_of(body: &Value) -> Result<OperationView, String> {
    let state = operation_state(body)?;
    if body.get("resolvedAt").is_some() == (state == "Reserved") {
        return Err(format!("resolvedAt does not match the state: {body}"));
    }
    Ok(OperationView {
        state,
        direct: body["direct"]
            .as_bool()
            .ok_or_else(|| format!("no direct in {body}"))?,
        credits: micros(&body["credits"])?,
        reserved: micros(&body["reserved"])?,
        spent: micros(&body["spent"])?,
        returned: micros(&body["returned"])?,
        has_timeout: body.get("timeoutAt").is_some(),
        lots: array(&body["lots"])?
            .iter()
            .map(|lot| {
                Ok((
                    lot_key(lot)?,
                    Share {
                        reserved: micros(&lot["reserved"])?,
                        spent: micros(&lot["spent"])?,
                    },
                ))
            })
            .collect::<Result<_, String>>()?,
    })
}

fn operation_state(body: &Value) -> Result<&'static str, String> {
    match body["state"].as_str() {
        Some("Reserved") => Ok("Reserved"),
        Some("Spent") => Ok("Spent"),
        Some("Released") => Ok("Released"),
        Some("TimedOut") => Ok("TimedOut"),
        _ => Err(format!("no operation state in {body}")),
    }
}

/// An amount the API wrote as a JSON number, in micro-credits. Amounts in these tests stay
/// far below 2^53 micro-credits, where an `f64` holds every six-place decimal exactly enough
/// to round back.
pub fn micros(value: &Value) -> Result<Micros, String> {
    let number = value
        .as_f64()
        .filter(|_| value.is_number())
        .ok_or_else(|| format!("not an amount: {value}"))?;
    let scaled = (number * 1e6).round();
    if scaled.abs() >= 1e15 {
        return Err(format!("amount out of the test's range: {value}"));
    }
    #[expect(
        clippy::cast_possible_truncation,
        reason = "checked to be below 10^15 just above"
    )]
    Ok(scaled as Micros)
}

fn array(value: &Value) -> Result<&Vec<Value>, String> {
    value
        .as_array()
        .ok_or_else(|| format!("not an array: {value}"))
}

fn reference_of(value: &Value) -> Result<Reference, String> {
    let part = |name: &str| value[name].as_str().unwrap_or_default().to_owned();
    if !value["billingReference"].is_string() {
        return Err(format!("no billing reference in {value}"));
    }
    Ok(Reference {
        reference: part("billingReference"),
        tag: part("billingReferenceTag"),
        kind: part("billingReferenceType"),
    })
}

fn lot_key(lot: &Value) -> Result<LotKey, String> {
    let expires = lot["expiresAt"]
        .as_str()
        .and_then(|text| NaiveDate::parse_from_str(text, "%Y-%m-%d").ok())
        .ok_or_else(|| format!("no expiresAt in {lot}"))?;
    Ok(LotKey {
        expires,
        reference: reference_of(&lot["billingReference"])?,
    })
}

/// Amounts from a list of `{"status", "credits"}` in the document's order.
fn amounts_of(statuses: &Value) -> Result<Amounts, String> {
    let list = array(statuses)?;
    let names: Vec<&str> = list.iter().filter_map(|s| s["status"].as_str()).collect();
    if names != ["Available", "Reserved", "Spent", "Expired"] {
        return Err(format!("statuses not in the document's order: {statuses}"));
    }
    Ok(Amounts {
        available: micros(&list[0]["credits"])?,
        reserved: micros(&list[1]["credits"])?,
        spent: micros(&list[2]["credits"])?,
        expired: micros(&list[3]["credits"])?,
    })
}

/// The paths that read a pool: breakdown, details, journal.
fn paths(pool: Pool, tenants: &[Uuid]) -> (Method, String, String, Option<Value>, String) {
    match pool {
        Pool::Generic => (
            Method::POST,
            routes::unassigned_credits(),
            format!("{}?limit=1000", routes::unassigned_credit_details()),
            None,
            routes::unassigned_credit_journal(),
        ),
        Pool::Tenant(index) => {
            let tenant = tenants[index];
            (
                Method::GET,
                routes::tenant_credits(tenant),
                format!("{}?limit=1000", routes::credit_details()),
                Some(json!({ "tenantId": tenant })),
                routes::tenant_credit_journal(tenant),
            )
        }
    }
}

/// The path of `pool`'s journal.
pub fn journal_path(pool: Pool, tenants: &[Uuid]) -> String {
    paths(pool, tenants).4
}

/// `pool` as its breakdown and details show it.
pub async fn read_pool(app: &TestApp, pool: Pool, tenants: &[Uuid]) -> Result<PoolView, String> {
    let (method, breakdown_path, details_path, selector, _) = paths(pool, tenants);
    let breakdown = read(app, method, &breakdown_path, None).await?;
    let totals = amounts_of(&breakdown["statuses"])?;
    let details = read(app, Method::POST, &details_path, selector).await?;
    let lots = array(&details["data"])?
        .iter()
        .map(|lot| {
            Ok(LotView {
                key: lot_key(lot)?,
                is_expired: lot["isExpired"]
                    .as_bool()
                    .ok_or_else(|| format!("no isExpired in {lot}"))?,
                amounts: amounts_of(&lot["statuses"])?,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    if details["totalCount"].as_u64() != u64::try_from(lots.len()).ok() {
        return Err(format!("totalCount does not count the lots: {details}"));
    }
    Ok(PoolView { totals, lots })
}

/// Checks `GET .../audit` of tenant: consistent, and both sides equal to `expected`.
pub async fn check_audit(app: &TestApp, tenant: Uuid, expected: &Amounts) -> Result<(), String> {
    let audit = read(app, Method::GET, &routes::tenant_credit_audit(tenant), None).await?;
    let balances = amounts_of(&audit["balances"])?;
    let journal = amounts_of(&audit["journal"])?;
    if audit["consistent"] != true || balances != *expected || journal != *expected {
        return Err(format!(
            "audit of {tenant} is {audit}; the model's balances are {expected:?}"
        ));
    }
    Ok(())
}

/// Journal kinds that resolve an operation.
const RESOLVING: [&str; 3] = ["Spend", "Release", "Timeout"];

/// A pool's journal, read as it grows: the newest entries after every step (newest first,
/// until one already seen), summed.
#[derive(Debug, Default)]
pub struct JournalTracker {
    newest: i64,
    entries: usize,
    sums: Amounts,
    /// The changes that resolved each operation: never more than one.
    resolutions: BTreeMap<String, BTreeSet<String>>,
}

impl JournalTracker {
    /// The sum of every entry read so far.
    pub fn sums(&self) -> Amounts {
        self.sums
    }

    /// Reads the entries written since the last call.
    pub async fn catch_up(&mut self, app: &TestApp, path: &str) -> Result<(), String> {
        let mut cursor: Option<String> = None;
        let mut fresh = Vec::new();
        'pages: loop {
            let mut query = vec![
                ("sortOrder", "Desc".to_owned()),
                ("limit", "1000".to_owned()),
            ];
            if let Some(cursor) = cursor.take() {
                query.push(("cursor", cursor));
            }
            let reply = reply_of(
                app.back_office(Method::GET, &with_query(path, &query))
                    .send()
                    .await
                    .unwrap(),
            )
            .await;
            if reply.status != StatusCode::OK {
                return Err(format!("{path} answered {}: {}", reply.status, reply.body));
            }
            for entry in array(&reply.body["data"])? {
                if entry["sequence"].as_i64().unwrap_or(0) <= self.newest {
                    break 'pages;
                }
                fresh.push(entry.clone());
            }
            match reply.body["cursor"].as_str() {
                Some(next) => cursor = Some(next.to_owned()),
                None => break,
            }
        }
        for entry in &fresh {
            self.record(entry)?;
        }
        Ok(())
    }

    fn record(&mut self, entry: &Value) -> Result<(), String> {
        self.newest = self.newest.max(entry["sequence"].as_i64().unwrap_or(0));
        self.entries += 1;
        let change = change_of(entry)?;
        self.sums.add(&change);
        // What a reservation gives back after its lot's date is Expired, never Available, and
        // nothing else makes credits of such a lot available either.
        let day = entry["at"]
            .as_str()
            .and_then(|at| at.get(..10))
            .and_then(|day| NaiveDate::parse_from_str(day, "%Y-%m-%d").ok())
            .ok_or_else(|| format!("no date in {entry}"))?;
        if lot_key(entry)?.expires < day && change.available > 0 {
            return Err(format!("credits made available past their date: {entry}"));
        }
        if RESOLVING.iter().any(|kind| entry["kind"] == *kind) {
            let op = entry["operationId"].as_str().unwrap_or_default().to_owned();
            let change = entry["changeId"].as_str().unwrap_or_default().to_owned();
            let changes = self.resolutions.entry(op.clone()).or_default();
            changes.insert(change);
            if changes.len() > 1 {
                return Err(format!(
                    "operation {op} resolved twice: changes {changes:?}"
                ));
            }
        }
        Ok(())
    }

    /// Reads the whole journal again, oldest first in pages of 7, and checks it against what
    /// was read step by step.
    pub async fn check_full_read(&self, app: &TestApp, path: &str) -> Result<(), String> {
        let mut cursor: Option<String> = None;
        let mut sums = Amounts::default();
        let mut entries = 0;
        let mut previous = 0;
        loop {
            let mut query = vec![("limit", "7".to_owned())];
            if let Some(cursor) = cursor.take() {
                query.push(("cursor", cursor));
            }
            let reply = reply_of(
                app.back_office(Method::GET, &with_query(path, &query))
                    .send()
                    .await
                    .unwrap(),
            )
            .await;
            for entry in array(&reply.body["data"])? {
                let sequence = entry["sequence"].as_i64().unwrap_or(0);
                if sequence <= previous {
                    return Err(format!("{path}: sequence {sequence} after {previous}"));
                }
                previous = sequence;
                entries += 1;
                sums.add(&change_of(entry)?);
            }
            match reply.body["cursor"].as_str() {
                Some(next) => cursor = Some(next.to_owned()),
                None => break,
            }
        }
        if sums != self.sums || entries != self.entries {
            return Err(format!(
                "{path}: {entries} entries summing to {sums:?} read in pages; {} summing to {:?} read step by step",
                self.entries, self.sums
            ));
        }
        Ok(())
    }
}

/// `path` with `pairs` as its query, encoded.
fn with_query(path: &str, pairs: &[(&str, String)]) -> String {
    let mut url = reqwest::Url::parse("http://localhost").unwrap();
    url.set_path(path);
    url.query_pairs_mut().extend_pairs(pairs);
    format!("{}?{}", url.path(), url.query().unwrap_or_default())
}

/// The signed change of a journal entry.
fn change_of(entry: &Value) -> Result<Amounts, String> {
    Ok(Amounts {
        available: micros(&entry["available"])?,
        reserved: micros(&entry["reserved"])?,
        spent: micros(&entry["spent"])?,
        expired: micros(&entry["expired"])?,
    })
}

/// `GET .../operation/{op}` of a tenant, in the model's terms.
pub async fn read_operation(
    app: &TestApp,
    tenant: Uuid,
    op: &str,
) -> Result<OperationView, String> {
    let body = read(
        app,
        Method::GET,
        &routes::credit_operation(tenant, op),
        None,
    )
    .await?;
    operation_of(&body)
}

/// A lot of the extended details: its key and its operations, as
/// [`super::ledger::Ledger::lot_operations`] gives them.
pub type LotOperations = (LotKey, Vec<(String, &'static str, Share)>);

/// The extended details of a tenant: each lot with its operations.
pub async fn read_extended(app: &TestApp, tenant: Uuid) -> Result<Vec<LotOperations>, String> {
    let details = read(
        app,
        Method::POST,
        &format!(
            "{}?limit=1000&operationsLimit=1000",
            routes::credit_details_extended()
        ),
        Some(json!({ "tenantId": tenant })),
    )
    .await?;
    array(&details["data"])?
        .iter()
        .map(|lot| {
            let operations = array(&lot["operations"])?
                .iter()
                .map(|op| {
                    let view = operation_state(op)?;
                    Ok((
                        op["operationId"].as_str().unwrap_or_default().to_owned(),
                        view,
                        Share {
                            reserved: micros(&op["reserved"])?,
                            spent: micros(&op["spent"])?,
                        },
                    ))
                })
                .collect::<Result<Vec<_>, String>>()?;
            if lot["operationsTotal"].as_u64() != u64::try_from(operations.len()).ok() {
                return Err(format!(
                    "operationsTotal does not count the operations: {lot}"
                ));
            }
            Ok((lot_key(lot)?, operations))
        })
        .collect()
}

/// A pool's breakdown and details read with `filter`, as (status, credits) lists: the
/// breakdown's, and each listed lot's.
pub type Filtered = (Vec<(String, Micros)>, Vec<(LotKey, Vec<(String, Micros)>)>);

/// Reads `pool` with the query `filter`.
pub async fn read_filtered(
    app: &TestApp,
    pool: Pool,
    tenants: &[Uuid],
    filter: &str,
) -> Result<Filtered, String> {
    let (method, breakdown_path, details_path, selector, _) = paths(pool, tenants);
    let separator = |path: &str| if path.contains('?') { '&' } else { '?' };
    let breakdown_path = format!("{breakdown_path}{}{filter}", separator(&breakdown_path));
    let details_path = format!("{details_path}{}{filter}", separator(&details_path));
    let breakdown = read(app, method, &breakdown_path, None).await?;
    let details = read(app, Method::POST, &details_path, selector).await?;
    let lots = array(&details["data"])?
        .iter()
        .map(|lot| Ok((lot_key(lot)?, status_list(&lot["statuses"])?)))
        .collect::<Result<Vec<_>, String>>()?;
    Ok((status_list(&breakdown["statuses"])?, lots))
}

fn status_list(statuses: &Value) -> Result<Vec<(String, Micros)>, String> {
    array(statuses)?
        .iter()
        .map(|status| {
            Ok((
                status["status"].as_str().unwrap_or_default().to_owned(),
                micros(&status["credits"])?,
            ))
        })
        .collect()
}

/// The difference between two pool views, one lot per line.
pub fn describe(observed: &PoolView, expected: &PoolView) -> String {
    let lines = |view: &PoolView| {
        view.lots
            .iter()
            .map(|lot| format!("    {lot:?}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    format!(
        "  API totals   {:?}\n  model totals {:?}\n  API lots:\n{}\n  model lots:\n{}",
        observed.totals,
        expected.totals,
        lines(observed),
        lines(expected)
    )
}
