//! Platform events (issue 13, docs/events.md): events reach a webhook signed as Standard
//! Webhooks says (verified here as a receiver would) and a NATS JetStream stream, exactly as
//! documented; failures are retried in order per resource, then dead-lettered, listed and
//! replayed through the admin endpoints; two relays, one of them killed mid-stream, lose
//! nothing; the outbox is pruned.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU16, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use aws_lc_rs::hmac;
use axum::body::Bytes;
use axum::http::HeaderMap;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use reqwest::{Method, StatusCode};
use secrecy::SecretString;
use serde_json::{Value, json};

use crate::helpers::*;
use crate::transfers::{GRID, import, project, start, upload};

/// The webhook secret of the tests (the Standard Webhooks example key).
const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/// Expands to `name::sqlite` and `name::postgres`, each running the scenario `$scenario`
/// (an async fn taking the backend): scenarios that start a receiver before the app.
macro_rules! scenario_test {
    ($name:ident, $scenario:path) => {
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                $scenario($crate::helpers::Backend::Sqlite).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                $scenario($crate::helpers::Backend::Postgres).await;
            }
        }
    };
}

// ---- a webhook receiver, verifying as a real one would ----

#[derive(Default)]
struct ReceiverState {
    /// Verified events in arrival order, duplicates included.
    events: Mutex<Vec<Value>>,
    /// Every POST, verified or not.
    posts: AtomicUsize,
    /// Answer this many POSTs with `fail_status` before accepting.
    fail_next: AtomicUsize,
    /// Answer every POST with `fail_status`.
    fail_always: AtomicBool,
    fail_status: AtomicU16,
    /// Hold each POST this long before answering.
    delay_ms: AtomicU64,
    /// Requests that failed verification, with why.
    rejected: Mutex<Vec<String>>,
    /// POSTs being handled per resource, and whether two ever overlapped.
    in_flight: Mutex<HashMap<String, usize>>,
    overlapped: AtomicBool,
}

#[derive(Clone)]
struct Receiver {
    url: String,
    state: Arc<ReceiverState>,
}

impl Receiver {
    async fn start() -> Self {
        let state = Arc::new(ReceiverState::default());
        state.fail_status.store(503, Ordering::Relaxed);
        let router = axum::Router::new()
            .route("/hook", axum::routing::post(receive))
            .with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, router).await });
        Self { url, state }
    }

    fn events(&self) -> Vec<Value> {
        self.state.events.lock().unwrap().clone()
    }

    fn posts(&self) -> usize {
        self.state.posts.load(Ordering::Relaxed)
    }

    /// Distinct event ids received.
    fn distinct(&self) -> usize {
        let ids: BTreeSet<String> = self
            .events()
            .iter()
            .map(|event| event["id"].as_str().unwrap().to_owned())
            .collect();
        ids.len()
    }

    fn assert_all_verified(&self) {
        let rejected = self.state.rejected.lock().unwrap();
        assert!(
            rejected.is_empty(),
            "requests failed verification: {rejected:?}"
        );
        assert!(
            !self.state.overlapped.load(Ordering::Relaxed),
            "two deliveries of one resource were in flight at once"
        );
    }

    /// Waits until `done` holds for the received events; panics after `seconds`.
    async fn wait_until(&self, seconds: u64, what: &str, done: impl Fn(&[Value]) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(seconds);
        while Instant::now() < deadline {
            if done(&self.events()) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!(
            "webhook: {what} not within {seconds} s; got {} posts, {} events: {:?}",
            self.posts(),
            self.events().len(),
            self.events()
                .iter()
                .map(|event| (event["type"].clone(), event["data"].clone()))
                .collect::<Vec<_>>()
        );
    }
}

/// Verifies a POST as a Standard Webhooks receiver does: the signature over
/// `{id}.{timestamp}.{body}` with the secret's key, a timestamp within five minutes, and the
/// CloudEvents content type; the `webhook-id` is the event's `id`.
fn verify(headers: &HeaderMap, body: &[u8]) -> Result<Value, String> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .ok_or_else(|| format!("no {name}"))
    };
    if header("content-type")? != "application/cloudevents+json" {
        return Err("content type".into());
    }
    let id = header("webhook-id")?;
    let timestamp = header("webhook-timestamp")?;
    let seconds: i64 = timestamp.parse().map_err(|_| "timestamp".to_owned())?;
    if (chrono::Utc::now().timestamp() - seconds).abs() > 300 {
        return Err("timestamp too old or new".into());
    }
    let key_bytes = STANDARD
        .decode(SECRET.strip_prefix("whsec_").unwrap())
        .unwrap();
    let key = hmac::Key::new(hmac::HMAC_SHA256, &key_bytes);
    let mut signed = format!("{id}.{timestamp}.").into_bytes();
    signed.extend_from_slice(body);
    let valid = header("webhook-signature")?.split(' ').any(|candidate| {
        candidate
            .strip_prefix("v1,")
            .and_then(|encoded| STANDARD.decode(encoded).ok())
            .is_some_and(|tag| hmac::verify(&key, &signed, &tag).is_ok())
    });
    if !valid {
        return Err("signature".into());
    }
    let event: Value = serde_json::from_slice(body).map_err(|error| error.to_string())?;
    if event["id"] != id {
        return Err("webhook-id is not the event id".into());
    }
    Ok(event)
}

async fn receive(
    axum::extract::State(state): axum::extract::State<Arc<ReceiverState>>,
    headers: HeaderMap,
    body: Bytes,
) -> axum::http::StatusCode {
    state.posts.fetch_add(1, Ordering::Relaxed);
    let event = match verify(&headers, &body) {
        Ok(event) => event,
        Err(why) => {
            state.rejected.lock().unwrap().push(why);
            return axum::http::StatusCode::BAD_REQUEST;
        }
    };
    let resource = event["resourceid"].as_str().unwrap_or_default().to_owned();
    let in_flight = InFlight::enter(&state, resource);
    let delay = state.delay_ms.load(Ordering::Relaxed);
    if delay > 0 {
        tokio::time::sleep(Duration::from_millis(delay)).await;
    }
    drop(in_flight);
    let failing = state.fail_always.load(Ordering::Relaxed)
        || state
            .fail_next
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                left.checked_sub(1)
            })
            .is_ok();
    if failing {
        let status = state.fail_status.load(Ordering::Relaxed);
        return axum::http::StatusCode::from_u16(status).unwrap();
    }
    state.events.lock().unwrap().push(event);
    axum::http::StatusCode::NO_CONTENT
}

/// One POST being handled for a resource; leaves on drop, also when the server drops the
/// handler because the client went away (a killed relay).
struct InFlight<'a> {
    state: &'a ReceiverState,
    resource: String,
}

impl<'a> InFlight<'a> {
    fn enter(state: &'a ReceiverState, resource: String) -> Self {
        let mut in_flight = state.in_flight.lock().unwrap();
        let count = in_flight.entry(resource.clone()).or_default();
        *count += 1;
        if *count > 1 {
            state.overlapped.store(true, Ordering::Relaxed);
        }
        Self { state, resource }
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if let Some(count) = self.state.in_flight.lock().unwrap().get_mut(&self.resource) {
            *count -= 1;
        }
    }
}

/// A relay polling every 50 ms, retrying at once, delivering to `receiver`.
fn relay_to(config: &mut basin::Config, receiver: &Receiver, attempts_max: u32) {
    config.events.poll_interval_ms = std::time::Duration::from_millis(50);
    config.events.backoff_initial_ms = std::time::Duration::from_millis(0);
    config.events.backoff_max_ms = std::time::Duration::from_millis(0);
    config.events.attempts_max = std::num::NonZeroU32::new(attempts_max).unwrap();
    config.events.webhooks = vec![basin::WebhookConfig {
        name: "test".into(),
        url: receiver.url.clone(),
        secret: SecretString::from(SECRET),
        types: Vec::new(),
        timeout_ms: std::time::Duration::from_millis(5_000),
    }];
}

/// The events of `resource`, in arrival order, first arrivals only.
fn first_arrivals_of(events: &[Value], resource: &str) -> Vec<Value> {
    let mut seen = BTreeSet::new();
    events
        .iter()
        .filter(|event| event["resourceid"] == resource)
        .filter(|event| seen.insert(event["id"].as_str().unwrap().to_owned()))
        .cloned()
        .collect()
}

/// Asserts that every sample event (`data.n` in 0..count) arrived, and that for each resource
/// the first arrivals came in the order they were recorded.
fn assert_all_samples_in_order(events: &[Value], count: usize) {
    let mut by_resource: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let mut seen = BTreeSet::new();
    for event in events {
        if seen.insert(event["id"].as_str().unwrap().to_owned()) {
            by_resource
                .entry(event["resourceid"].as_str().unwrap().to_owned())
                .or_default()
                .push(event["data"]["n"].as_u64().unwrap());
        }
    }
    let all: BTreeSet<u64> = by_resource.values().flatten().copied().collect();
    assert_eq!(all.len(), count, "missing events");
    for (resource, ns) in &by_resource {
        assert!(
            ns.windows(2).all(|pair| pair[0] < pair[1]),
            "events of {resource} out of order: {ns:?}"
        );
    }
}

/// Rows left in the outbox.
async fn outbox_rows(db: &basin::Db) -> i64 {
    let sql = "SELECT COUNT(*) FROM event_outbox";
    match db {
        basin::Db::Sqlite(pool, _) => sqlx::query_scalar(sql).fetch_one(pool).await.unwrap(),
        basin::Db::Postgres(pool) => sqlx::query_scalar(sql).fetch_one(pool).await.unwrap(),
    }
}

async fn wait_for_empty_outbox(db: &basin::Db) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if outbox_rows(db).await == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the outbox still holds {} rows", outbox_rows(db).await);
}

async fn record_samples(app: &TestApp, count: usize, resources: usize) {
    basin::record_sample_events(&app.db, app.bootstrap.tenant_id, count, resources)
        .await
        .unwrap();
}

/// Asserts the CloudEvents envelope of a transfer's event, member by member (docs/events.md).
fn assert_transfer_envelope(
    event: &Value,
    app: &TestApp,
    transfer: &str,
    project: &str,
    created_by: &Value,
) {
    let members: BTreeSet<&str> = event
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        members,
        BTreeSet::from([
            "specversion",
            "id",
            "source",
            "type",
            "time",
            "subject",
            "datacontenttype",
            "customerid",
            "projectid",
            "userid",
            "resourceid",
            "data"
        ]),
        "{event}"
    );
    assert_eq!(event["specversion"], "1.0");
    assert_eq!(event["source"], "/basin/conversion");
    assert_eq!(event["subject"], format!("transfers/{transfer}"));
    assert_eq!(event["datacontenttype"], "application/json");
    assert_eq!(event["customerid"], app.tenant_id().to_string());
    assert_eq!(event["projectid"], project);
    assert_eq!(&event["userid"], created_by);
    assert_eq!(event["resourceid"], transfer);
    assert!(chrono::DateTime::parse_from_rfc3339(event["time"].as_str().unwrap()).is_ok());
    uuid::Uuid::parse_str(event["id"].as_str().unwrap()).unwrap();
}

// ---- events of a transfer, through HTTP ----

async fn transfer_events_reach_the_webhook_signed_and_as_documented(backend: Backend) {
    let receiver = Receiver::start().await;
    let Some(app) = spawn_app_on(backend, |config| relay_to(config, &receiver, 5)).await else {
        return;
    };
    let project = project(&app, "Events").await;
    let url = upload(&app, "grid.asc", GRID.as_bytes()).await;
    let summary = start(
        &app,
        &routes::upload_convert(),
        json!({
            "uploadUrl": url, "originalFileName": "grid.asc", "projectId": project,
            "readerName": "AsciiGridReader", "writerName": "GeoTiffWriter",
            "outputDatasetData": {"name": "grid.asc"}
        }),
    )
    .await;
    let transfer = summary["id"].as_str().unwrap().to_owned();
    let record = crate::transfers::wait_for(&app, &transfer).await;
    assert_eq!(record["status"], "Completed", "{record}");
    receiver
        .wait_until(15, "transfer finished", |events| {
            events
                .iter()
                .any(|event| event["type"] == "basin.transfer.finished")
        })
        .await;
    receiver.assert_all_verified();
    let events = first_arrivals_of(&receiver.events(), &transfer);
    let types: Vec<&str> = events
        .iter()
        .map(|event| event["type"].as_str().unwrap())
        .collect();
    assert_eq!(types.first(), Some(&"basin.transfer.started"), "{types:?}");
    assert_eq!(types.last(), Some(&"basin.transfer.finished"), "{types:?}");
    assert!(
        types[1..types.len() - 1]
            .iter()
            .all(|kind| *kind == "basin.transfer.progress"),
        "{types:?}"
    );
    for event in &events {
        assert_transfer_envelope(event, &app, &transfer, &project, &summary["createdBy"]);
    }
    assert_eq!(
        events[0]["data"],
        json!({"kind": "Import", "status": "InProgress", "attempt": 1})
    );
    let finished = &events.last().unwrap()["data"];
    assert_eq!(
        finished,
        &json!({
            "kind": "Import", "status": "Completed", "errorMessage": null,
            "importResults": record["importResults"], "downloadReady": false
        })
    );
    wait_for_empty_outbox(&app.db).await;
}
scenario_test!(
    transfer_events_reach_the_webhook_signed_and_as_documented,
    super::transfer_events_reach_the_webhook_signed_and_as_documented
);

/// Recycle bin events (docs/events.md): a dataset deleted, restored, deleted again and
/// removed for good, and a subproject removed with its dataset, arrive signed, in order per
/// resource, with the documented envelope and `data`.
async fn recycle_bin_events_reach_the_webhook_as_documented(backend: Backend) {
    let receiver = Receiver::start().await;
    let Some(app) = spawn_app_on(backend, |config| relay_to(config, &receiver, 5)).await else {
        return;
    };
    let root = app.create_project(As::Key, "Events", json!({})).await;
    let sub = app
        .create_subproject(As::Key, &root, "Sub", json!({}))
        .await;
    let lone = upload_ten_bytes(&app, id_str(&root), "lone.txt").await;
    let inner = upload_ten_bytes(&app, id_str(&sub), "inner.txt").await;
    let (lone, inner) = (id_str(&lone).to_owned(), id_str(&inner).to_owned());
    let bin = app.recycle_bin();
    for response in [
        app.dataset(&lone).delete().await,
        bin.dataset(&lone).restore().await,
        app.dataset(&lone).delete().await,
        bin.dataset(&lone).purge().await,
        app.project(id_str(&sub)).delete().await,
        bin.project(id_str(&sub)).purge().await,
    ] {
        expect_status(response, StatusCode::NO_CONTENT).await;
    }
    receiver
        .wait_until(15, "the three purges", |events| {
            let purged = |kind: &str| events.iter().filter(|event| event["type"] == kind).count();
            purged("basin.project.purged") >= 1 && purged("basin.dataset.purged") >= 2
        })
        .await;
    receiver.assert_all_verified();
    let events = receiver.events();
    assert_lone_dataset_events(
        &app,
        &first_arrivals_of(&events, &lone),
        &lone,
        id_str(&root),
    )
    .await;
    assert_subproject_events(&events, id_str(&sub), &inner, id_str(&root));
    wait_for_empty_outbox(&app.db).await;
}

/// A subproject deleted and removed for good, with its dataset.
fn assert_subproject_events(events: &[Value], sub: &str, inner: &str, root: &str) {
    let inner_events = first_arrivals_of(events, inner);
    assert_eq!(
        inner_events.len(),
        1,
        "only its purge: it went to the bin with its project"
    );
    assert_eq!(
        inner_events[0]["data"],
        json!({"name": "inner.txt", "itemType": "Dataset", "projectId": sub, "purgedWith": sub, "reason": "PermanentDelete"})
    );
    let sub_events = first_arrivals_of(events, sub);
    let types: Vec<&str> = sub_events
        .iter()
        .map(|event| event["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["basin.project.recycled", "basin.project.purged"]);
    assert_eq!(sub_events[0]["subject"], format!("projects/{sub}"));
    assert_eq!(sub_events[0]["data"]["parentProjectId"], root);
    assert_eq!(sub_events[0]["data"]["storageSize"], 10);
    assert_eq!(
        sub_events[1]["data"],
        json!({"name": "Sub", "itemType": "Project", "parentProjectId": root, "purgedWith": null, "reason": "PermanentDelete"})
    );
}

async fn upload_ten_bytes(app: &TestApp, project: &str, name: &str) -> Value {
    expect_status(
        app.upload_file(project, name, b"0123456789".to_vec()).await,
        StatusCode::CREATED,
    )
    .await
}

/// A dataset deleted, restored, deleted again and removed for good, by the bootstrap key.
async fn assert_lone_dataset_events(app: &TestApp, events: &[Value], dataset: &str, project: &str) {
    let me = expect_status(app.iam().principal_me().await, StatusCode::OK).await;
    let types: Vec<&str> = events
        .iter()
        .map(|event| event["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "basin.dataset.recycled",
            "basin.dataset.restored",
            "basin.dataset.recycled",
            "basin.dataset.purged"
        ]
    );
    let tenant = app.tenant_id().to_string();
    for event in events {
        assert_eq!(event["specversion"], "1.0");
        assert_eq!(event["source"], "/basin/metadata");
        assert_eq!(event["subject"], format!("datasets/{dataset}"));
        assert_eq!(event["customerid"], tenant.as_str());
        assert_eq!(event["projectid"], project);
        assert_eq!(event["resourceid"], dataset);
        assert_eq!(event["userid"], me["id"]);
    }
    let recycled = &events[0]["data"];
    assert_eq!(recycled["name"], "lone.txt");
    assert_eq!(recycled["itemType"], "Dataset");
    assert_eq!(recycled["storageSize"], 10);
    assert_eq!(recycled["projectId"], project);
    assert!(
        recycled["deletedAt"].as_str().unwrap().ends_with('Z'),
        "{recycled}"
    );
    assert_eq!(
        events[3]["data"],
        json!({"name": "lone.txt", "itemType": "Dataset", "projectId": project, "purgedWith": null, "reason": "PermanentDelete"})
    );
}
scenario_test!(
    recycle_bin_events_reach_the_webhook_as_documented,
    super::recycle_bin_events_reach_the_webhook_as_documented
);

async fn a_failed_import_sends_finished_with_its_error(backend: Backend) {
    let receiver = Receiver::start().await;
    let Some(app) = spawn_app_on(backend, |config| relay_to(config, &receiver, 5)).await else {
        return;
    };
    let project = project(&app, "Failures").await;
    let record = import(
        &app,
        &project,
        "broken.asc",
        b"this is no grid",
        "AsciiGridReader",
        "GeoTiffWriter",
    )
    .await;
    assert_eq!(record["status"], "Error", "{record}");
    let transfer = record["id"].as_str().unwrap().to_owned();
    receiver
        .wait_until(15, "the failed transfer's end", |events| {
            events.iter().any(|event| {
                event["type"] == "basin.transfer.finished" && event["resourceid"] == transfer
            })
        })
        .await;
    let events = first_arrivals_of(&receiver.events(), &transfer);
    assert_eq!(events[0]["type"], "basin.transfer.started");
    let finished = &events.last().unwrap()["data"];
    assert_eq!(finished["status"], "Error");
    assert_eq!(finished["errorMessage"], record["errorMessage"]);
    assert_eq!(finished["importResults"], json!([]));
    receiver.assert_all_verified();
}
scenario_test!(
    a_failed_import_sends_finished_with_its_error,
    super::a_failed_import_sends_finished_with_its_error
);

async fn a_queued_transfer_cancelled_sends_finished_without_started(backend: Backend) {
    let receiver = Receiver::start().await;
    let Some(app) = spawn_app_on(backend, |config| {
        relay_to(config, &receiver, 5);
        // Nothing runs transfers here: the transfer stays queued until cancelled.
        config.transfers.executor = basin::TransferExecutor::External;
    })
    .await
    else {
        return;
    };
    let project = project(&app, "Cancelled").await;
    let url = upload(&app, "grid.asc", GRID.as_bytes()).await;
    let summary = start(
        &app,
        &routes::upload_convert(),
        json!({
            "uploadUrl": url, "originalFileName": "grid.asc", "projectId": project,
            "readerName": "AsciiGridReader", "writerName": "GeoTiffWriter",
            "outputDatasetData": {"name": "grid.asc"}
        }),
    )
    .await;
    let transfer = summary["id"].as_str().unwrap().to_owned();
    let record = crate::transfers::cancel(&app, &transfer).await;
    receiver
        .wait_until(15, "the cancelled transfer's end", |events| {
            !events.is_empty()
        })
        .await;
    wait_for_empty_outbox(&app.db).await;
    let events = receiver.events();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["type"], "basin.transfer.finished");
    assert_eq!(events[0]["resourceid"], transfer);
    assert_eq!(events[0]["data"]["status"], "Error");
    assert_eq!(
        events[0]["data"]["errorMessage"], record["errorMessage"],
        "{record}"
    );
}
scenario_test!(
    a_queued_transfer_cancelled_sends_finished_without_started,
    super::a_queued_transfer_cancelled_sends_finished_without_started
);

// ---- retries, order, dead letters ----

async fn failed_deliveries_are_retried_in_order_per_resource(backend: Backend) {
    let receiver = Receiver::start().await;
    receiver.state.fail_next.store(7, Ordering::Relaxed);
    receiver.state.fail_status.store(503, Ordering::Relaxed);
    receiver.state.delay_ms.store(5, Ordering::Relaxed);
    let Some(app) = spawn_app_on(backend, |config| relay_to(config, &receiver, 20)).await else {
        return;
    };
    record_samples(&app, 40, 4).await;
    receiver
        .wait_until(20, "40 events", |events| events.len() >= 40)
        .await;
    assert_all_samples_in_order(&receiver.events(), 40);
    assert!(receiver.posts() >= 47, "{} posts", receiver.posts());
    receiver.assert_all_verified();
    wait_for_empty_outbox(&app.db).await;
}
scenario_test!(
    failed_deliveries_are_retried_in_order_per_resource,
    super::failed_deliveries_are_retried_in_order_per_resource
);

async fn dead_letters(app: &TestApp, query: &str) -> Value {
    expect_status(app.dead_letters().list(query).await, StatusCode::OK).await
}

async fn wait_for_dead_letters(app: &TestApp, count: u64) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let page = dead_letters(app, "").await;
        if page["totalCount"] == count {
            return page;
        }
        assert!(Instant::now() < deadline, "dead letters: {page}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Asserts the members and paging of a page of the three sample dead letters.
async fn assert_dead_letter_pages(app: &TestApp, page: &Value) {
    let first = &page["data"][0];
    assert_eq!(first["sink"], "webhook:test");
    assert_eq!(first["attempts"], 3);
    assert_eq!(first["type"], "basin.transfer.progress");
    assert!(
        first["lastError"].as_str().unwrap().contains("500"),
        "{first}"
    );
    assert_eq!(first["event"]["id"], first["eventId"]);
    assert_eq!(first["event"]["data"]["n"], 0);
    assert!(first["deadAt"].is_string() && first["createdAt"].is_string());
    let sequences: Vec<i64> = page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["sequence"].as_i64().unwrap())
        .collect();
    assert!(sequences.windows(2).all(|pair| pair[0] < pair[1]));

    let second_page = dead_letters(app, "offset=1&limit=1").await;
    assert_eq!(second_page["totalCount"], 3);
    assert_eq!(second_page["offset"], 1);
    assert_eq!(second_page["limit"], 1);
    assert_eq!(second_page["data"].as_array().unwrap().len(), 1);
    assert_eq!(
        second_page["data"][0]["eventId"],
        page["data"][1]["eventId"]
    );
}

/// Asserts that a tenant owner gets 403 and an anonymous caller 401 from every dead-letter
/// endpoint.
async fn assert_only_operators_see_dead_letters(app: &TestApp, event: &str) {
    // Tenant owners see no dead letters: the list spans every tenant.
    let as_owner = app.api().dead_letters();
    for response in [
        as_owner.list("").await,
        as_owner.replay_all().await,
        as_owner.replay(event).await,
    ] {
        expect_problem(response, StatusCode::FORBIDDEN, "forbidden").await;
    }
    let response = app
        .anonymous(Method::GET, &routes::dead_letters())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
}

async fn dead_letters_are_listed_and_replayed_by_operators(backend: Backend) {
    let receiver = Receiver::start().await;
    receiver.state.fail_always.store(true, Ordering::Relaxed);
    receiver.state.fail_status.store(500, Ordering::Relaxed);
    let Some(app) = spawn_app_on(backend, |config| relay_to(config, &receiver, 3)).await else {
        return;
    };
    record_samples(&app, 3, 1).await;
    let page = wait_for_dead_letters(&app, 3).await;
    // Each was tried attempts_max times; a dead letter does not hold later events back.
    assert_eq!(receiver.posts(), 9);
    assert_dead_letter_pages(&app, &page).await;
    let first = &page["data"][0];
    assert_only_operators_see_dead_letters(&app, first["eventId"].as_str().unwrap()).await;

    receiver.state.fail_always.store(false, Ordering::Relaxed);
    let event = first["eventId"].as_str().unwrap().to_owned();
    let replayed = expect_status(app.dead_letters().replay(&event).await, StatusCode::OK).await;
    assert_eq!(replayed, json!({"replayed": 1}));
    receiver
        .wait_until(10, "the replayed event", |events| events.len() == 1)
        .await;
    assert_eq!(receiver.events()[0]["id"], event);
    let again = app.dead_letters().replay(&event).await;
    expect_problem(again, StatusCode::NOT_FOUND, "not-found").await;
    let unknown = app
        .back_office(
            Method::POST,
            "/api/admin/events/dead-letters/not-a-uuid/replay",
        )
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), StatusCode::BAD_REQUEST);

    let all = expect_status(app.dead_letters().replay_all().await, StatusCode::OK).await;
    assert_eq!(all, json!({"replayed": 2}));
    receiver
        .wait_until(10, "every replayed event", |events| events.len() == 3)
        .await;
    assert_eq!(dead_letters(&app, "").await["totalCount"], 0);
    receiver.assert_all_verified();
    wait_for_empty_outbox(&app.db).await;
}
scenario_test!(
    dead_letters_are_listed_and_replayed_by_operators,
    super::dead_letters_are_listed_and_replayed_by_operators
);

async fn a_receiver_refusing_with_a_4xx_dead_letters_at_once(backend: Backend) {
    let receiver = Receiver::start().await;
    receiver.state.fail_always.store(true, Ordering::Relaxed);
    receiver.state.fail_status.store(422, Ordering::Relaxed);
    let Some(app) = spawn_app_on(backend, |config| relay_to(config, &receiver, 10)).await else {
        return;
    };
    record_samples(&app, 1, 1).await;
    let page = wait_for_dead_letters(&app, 1).await;
    assert_eq!(page["data"][0]["attempts"], 1);
    assert_eq!(receiver.posts(), 1);
}
scenario_test!(
    a_receiver_refusing_with_a_4xx_dead_letters_at_once,
    super::a_receiver_refusing_with_a_4xx_dead_letters_at_once
);

async fn a_webhook_gets_only_the_types_it_lists(backend: Backend) {
    let receiver = Receiver::start().await;
    let Some(app) = spawn_app_on(backend, |config| {
        relay_to(config, &receiver, 5);
        config.events.webhooks[0].types = vec!["basin.transfer.finished".into()];
    })
    .await
    else {
        return;
    };
    record_samples(&app, 5, 1).await;
    let project = project(&app, "Filtered").await;
    let record = import(
        &app,
        &project,
        "grid.asc",
        GRID.as_bytes(),
        "AsciiGridReader",
        "GeoTiffWriter",
    )
    .await;
    receiver
        .wait_until(15, "the finished event", |events| !events.is_empty())
        .await;
    wait_for_empty_outbox(&app.db).await;
    let events = receiver.events();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["type"], "basin.transfer.finished");
    assert_eq!(events[0]["resourceid"], record["id"]);
}
scenario_test!(
    a_webhook_gets_only_the_types_it_lists,
    super::a_webhook_gets_only_the_types_it_lists
);

api_test_with!(
    without_sinks_events_are_logged_and_pruned,
    |config: &mut basin::Config| config.events.poll_interval_ms =
        std::time::Duration::from_millis(50),
    |app| {
        record_samples(&app, 25, 5).await;
        wait_for_empty_outbox(&app.db).await;
    }
);

// ---- several relays, one killed ----

/// A second app on the same store (data dir and database), with its own relay, on the
/// system clock.
async fn second_app(
    config: &basin::Config,
    receiver: &Receiver,
) -> (
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<std::io::Result<()>>,
) {
    let mut config = config.clone();
    config.listen = "127.0.0.1:0".parse().unwrap();
    config.events.relay = true;
    relay_to(&mut config, receiver, 20);
    config.events.batch_size = std::num::NonZeroU32::new(5).unwrap();
    config.events.lease_ms = std::time::Duration::from_millis(1_000);
    let app = basin::App::build(config, Arc::new(basin::SystemClock))
        .await
        .unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(app.run_until_stopped(async move {
        let _ = stopped.await;
    }));
    (stop, server)
}

/// `basin <command>` on the app's store relaying to `receiver`, with a lease of one second
/// (and so a webhook timeout under it: a lease must outlast the POST it covers).
fn relay_process(app: &TestApp, receiver: &Receiver, command_args: &[&str]) -> std::process::Child {
    let config_file = app.config.data_dir.join("relay.toml");
    std::fs::write(
        &config_file,
        format!(
            "[events]\npoll_interval_ms = 50\nbatch_size = 5\nlease_ms = 1000\n\
             backoff_initial_ms = 0\nbackoff_max_ms = 0\n\n\
             [[events.webhooks]]\nname = \"test\"\nurl = \"{}\"\nsecret = \"{SECRET}\"\n\
             timeout_ms = 500\n",
            receiver.url
        ),
    )
    .unwrap();
    let mut command = basin_command();
    command
        .arg("--config")
        .arg(&config_file)
        .arg("--data-dir")
        .arg(&app.config.data_dir)
        .args(command_args)
        .current_dir(&app.config.data_dir)
        .env("BASIN_AUTH__JWT_SECRET", TEST_SECRET)
        .env("BASIN_LOG__LEVEL", "warn")
        .stdout(std::process::Stdio::null());
    if let Some(url) = &app.config.database_url {
        command.arg("--database-url").arg(url);
    }
    command.spawn().expect("the basin binary starts")
}

async fn a_relay_killed_mid_stream_loses_nothing(backend: Backend) {
    let receiver = Receiver::start().await;
    receiver.state.delay_ms.store(20, Ordering::Relaxed);
    let Some(app) = spawn_app_on(backend, |config| config.events.relay = false).await else {
        return;
    };
    record_samples(&app, 300, 10).await;
    let mut first = relay_process(&app, &receiver, &["serve", "--listen", "127.0.0.1:0"]);
    receiver
        .wait_until(60, "the first relay's first 40 events", |events| {
            events.len() >= 40
        })
        .await;
    first.kill().unwrap();
    first.wait().unwrap();
    let at_kill = receiver.distinct();
    assert!(
        at_kill < 300,
        "the first relay finished before it was killed"
    );

    let (stop, server) = second_app(&app.config, &receiver).await;
    receiver
        .wait_until(60, "all 300 events", |_| receiver.distinct() == 300)
        .await;
    assert_all_samples_in_order(&receiver.events(), 300);
    receiver.assert_all_verified();
    wait_for_empty_outbox(&app.db).await;
    let _ = stop.send(());
    server.await.unwrap().unwrap();
}
scenario_test!(
    a_relay_killed_mid_stream_loses_nothing,
    super::a_relay_killed_mid_stream_loses_nothing
);

async fn two_relays_share_the_outbox_in_order_per_resource(backend: Backend) {
    let receiver = Receiver::start().await;
    receiver.state.delay_ms.store(5, Ordering::Relaxed);
    receiver.state.fail_next.store(10, Ordering::Relaxed);
    let Some(app) = spawn_app_on(backend, |config| {
        relay_to(config, &receiver, 20);
        config.events.batch_size = std::num::NonZeroU32::new(5).unwrap();
    })
    .await
    else {
        return;
    };
    let (stop, server) = second_app(&app.config, &receiver).await;
    record_samples(&app, 200, 8).await;
    receiver
        .wait_until(60, "all 200 events", |_| receiver.distinct() == 200)
        .await;
    assert_all_samples_in_order(&receiver.events(), 200);
    receiver.assert_all_verified();
    wait_for_empty_outbox(&app.db).await;
    let _ = stop.send(());
    server.await.unwrap().unwrap();
}
scenario_test!(
    two_relays_share_the_outbox_in_order_per_resource,
    super::two_relays_share_the_outbox_in_order_per_resource
);

async fn basin_events_relay_relays_and_stops_on_sigterm(backend: Backend) {
    let receiver = Receiver::start().await;
    let Some(app) = spawn_app_on(backend, |config| config.events.relay = false).await else {
        return;
    };
    record_samples(&app, 20, 3).await;
    let mut relay = relay_process(&app, &receiver, &["events", "relay"]);
    receiver
        .wait_until(30, "all 20 events", |events| events.len() == 20)
        .await;
    assert_all_samples_in_order(&receiver.events(), 20);
    wait_for_empty_outbox(&app.db).await;
    let status = std::process::Command::new("kill")
        .arg("-TERM")
        .arg(relay.id().to_string())
        .status()
        .unwrap();
    assert!(status.success());
    let exit = tokio::task::spawn_blocking(move || relay.wait().unwrap())
        .await
        .unwrap();
    assert!(exit.success(), "{exit}");
}
scenario_test!(
    basin_events_relay_relays_and_stops_on_sigterm,
    super::basin_events_relay_relays_and_stops_on_sigterm
);

// ---- NATS JetStream ----

/// A NATS server with JetStream for one test: our own `nats-server -js` on a free port when
/// the binary is on PATH, else the CI one on 127.0.0.1:4222. `None` (skip) when neither
/// answers, unless CI or TEST_BASIN_REQUIRE_POSTGRES=1 asks for every service (then it fails).
struct NatsServer {
    url: String,
    child: Option<std::process::Child>,
    _store: tempfile::TempDir,
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

async fn answers(url: &str) -> bool {
    for _ in 0..100 {
        if async_nats::connect(url).await.is_ok() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

async fn nats_server() -> Option<NatsServer> {
    let store = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = std::process::Command::new("nats-server")
        .args(["-js", "-a", "127.0.0.1", "-p", &port.to_string(), "-sd"])
        .arg(store.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok();
    if child.is_some() {
        let url = format!("nats://127.0.0.1:{port}");
        if answers(&url).await {
            return Some(NatsServer {
                url,
                child,
                _store: store,
            });
        }
    }
    let shared = "nats://127.0.0.1:4222".to_owned();
    if answers(&shared).await {
        return Some(NatsServer {
            url: shared,
            child,
            _store: store,
        });
    }
    let required = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false")
        || std::env::var("TEST_BASIN_REQUIRE_POSTGRES").is_ok_and(|v| v == "1");
    assert!(
        !required,
        "no NATS server: nats-server is not on PATH and 127.0.0.1:4222 does not answer"
    );
    eprintln!(
        "note: no NATS server (nats-server not on PATH, 127.0.0.1:4222 silent); NATS test skipped"
    );
    None
}

/// Every message in `stream` so far, through an ephemeral pull consumer.
async fn stream_messages(
    url: &str,
    stream: &str,
    expected: usize,
) -> Vec<async_nats::jetstream::Message> {
    use futures::StreamExt;
    let client = async_nats::connect(url).await.unwrap();
    let jetstream = async_nats::jetstream::new(client);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(mut handle) = jetstream.get_stream(stream).await
            && handle.info().await.unwrap().state.messages >= expected as u64
        {
            let consumer = handle
                .create_consumer(async_nats::jetstream::consumer::pull::Config {
                    deliver_policy: async_nats::jetstream::consumer::DeliverPolicy::All,
                    ack_policy: async_nats::jetstream::consumer::AckPolicy::None,
                    ..Default::default()
                })
                .await
                .unwrap();
            let mut batch = consumer
                .fetch()
                .max_messages(expected + 10)
                .expires(Duration::from_secs(1))
                .messages()
                .await
                .unwrap();
            let mut messages = Vec::new();
            while let Some(message) = batch.next().await {
                messages.push(message.unwrap());
            }
            return messages;
        }
        assert!(
            Instant::now() < deadline,
            "the stream {stream} did not fill"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn events_reach_a_nats_jetstream_subscriber_as_documented(backend: Backend) {
    let Some(nats) = nats_server().await else {
        return;
    };
    // A stream of its own, so that the shared CI server's other streams do not interfere.
    let stream = format!("BASIN_TEST_{}", uuid::Uuid::new_v4().simple());
    let prefix = format!("test.{}", uuid::Uuid::new_v4().simple());
    let url = nats.url.clone();
    let (stream_name, subject_prefix) = (stream.clone(), prefix.clone());
    let Some(app) = spawn_app_on(backend, move |config| {
        config.events.poll_interval_ms = std::time::Duration::from_millis(50);
        config.events.nats = Some(basin::NatsConfig {
            url,
            stream: stream_name,
            subject_prefix,
            duplicate_window_seconds: std::time::Duration::from_secs(120),
        });
    })
    .await
    else {
        return;
    };
    let project = project(&app, "Streamed").await;
    let record = import(
        &app,
        &project,
        "grid.asc",
        GRID.as_bytes(),
        "AsciiGridReader",
        "GeoTiffWriter",
    )
    .await;
    let transfer = record["id"].as_str().unwrap();
    wait_for_empty_outbox(&app.db).await;
    let messages = stream_messages(&nats.url, &stream, 2).await;
    let mut types = Vec::new();
    for message in &messages {
        let event: Value = serde_json::from_slice(&message.payload).unwrap();
        let kind = event["type"].as_str().unwrap();
        assert_eq!(
            message.subject.as_str(),
            format!("{prefix}.{}", kind.strip_prefix("basin.").unwrap())
        );
        let headers = message.headers.as_ref().unwrap();
        assert_eq!(
            headers.get("Nats-Msg-Id").unwrap().as_str(),
            event["id"].as_str().unwrap()
        );
        assert_eq!(
            headers.get("content-type").unwrap().as_str(),
            "application/cloudevents+json"
        );
        assert_eq!(event["specversion"], "1.0");
        assert_eq!(event["resourceid"], transfer);
        assert_eq!(event["projectid"], project);
        assert_eq!(event["customerid"], app.tenant_id().to_string());
        types.push(kind.to_owned());
    }
    assert_eq!(
        types.first().map(String::as_str),
        Some("basin.transfer.started")
    );
    assert_eq!(
        types.last().map(String::as_str),
        Some("basin.transfer.finished")
    );
}
scenario_test!(
    events_reach_a_nats_jetstream_subscriber_as_documented,
    super::events_reach_a_nats_jetstream_subscriber_as_documented
);

async fn a_deleted_nats_stream_is_created_again(backend: Backend) {
    let Some(nats) = nats_server().await else {
        return;
    };
    let stream = format!("BASIN_TEST_{}", uuid::Uuid::new_v4().simple());
    let (url, stream_name) = (nats.url.clone(), stream.clone());
    let Some(app) = spawn_app_on(backend, move |config| {
        config.events.poll_interval_ms = std::time::Duration::from_millis(50);
        config.events.backoff_initial_ms = std::time::Duration::from_millis(0);
        config.events.backoff_max_ms = std::time::Duration::from_millis(0);
        config.events.nats = Some(basin::NatsConfig {
            url,
            stream: stream_name,
            subject_prefix: format!("test.{}", uuid::Uuid::new_v4().simple()),
            duplicate_window_seconds: std::time::Duration::from_secs(120),
        });
    })
    .await
    else {
        return;
    };
    record_samples(&app, 3, 1).await;
    wait_for_empty_outbox(&app.db).await;
    assert_eq!(stream_messages(&nats.url, &stream, 3).await.len(), 3);
    let client = async_nats::connect(&nats.url).await.unwrap();
    async_nats::jetstream::new(client)
        .delete_stream(&stream)
        .await
        .unwrap();
    record_samples(&app, 2, 1).await;
    wait_for_empty_outbox(&app.db).await;
    assert_eq!(stream_messages(&nats.url, &stream, 2).await.len(), 2);
}
scenario_test!(
    a_deleted_nats_stream_is_created_again,
    super::a_deleted_nats_stream_is_created_again
);

/// The benchmark of docs/benchmarks.md: 10,000 outbox rows relayed to NATS JetStream.
/// `scripts/bench-events` runs it (release build, both databases).
async fn bench(backend: Backend) {
    let Some(nats) = nats_server().await else {
        return;
    };
    let stream = format!("BASIN_BENCH_{}", uuid::Uuid::new_v4().simple());
    let url = nats.url.clone();
    let stream_name = stream.clone();
    let resources: usize = std::env::var("BENCH_RESOURCES")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(1_000);
    let Some(app) = spawn_app_on(backend, move |config| {
        config.events.relay = false;
        config.events.nats = Some(basin::NatsConfig {
            url,
            stream: stream_name,
            subject_prefix: format!("bench.{}", uuid::Uuid::new_v4().simple()),
            duplicate_window_seconds: std::time::Duration::from_secs(120),
        });
    })
    .await
    else {
        return;
    };
    const COUNT: usize = 10_000;
    record_samples(&app, COUNT, resources).await;
    let mut config = app.config.clone();
    config.listen = "127.0.0.1:0".parse().unwrap();
    config.events.relay = true;
    config.events.poll_interval_ms = std::time::Duration::from_millis(10);
    if let Some(batch_size) = std::env::var("BENCH_BATCH_SIZE")
        .ok()
        .and_then(|value| value.parse().ok())
    {
        config.events.batch_size = std::num::NonZeroU32::new(batch_size).unwrap();
    }
    let batch_size = config.events.batch_size;
    let relay = basin::App::build(config, Arc::new(basin::SystemClock))
        .await
        .unwrap();
    let began = Instant::now();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(relay.run_until_stopped(async move {
        let _ = stopped.await;
    }));
    while outbox_rows(&app.db).await > 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let elapsed = began.elapsed();
    let _ = stop.send(());
    server.await.unwrap().unwrap();
    eprintln!(
        "bench events -> NATS ({backend:?}, {resources} resources, batch {batch_size}): {COUNT} events in {:.2} s = {:.0} events/s",
        elapsed.as_secs_f64(),
        COUNT as f64 / elapsed.as_secs_f64()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "benchmark: scripts/bench-events"]
async fn bench_events_to_nats_sqlite() {
    bench(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "benchmark: scripts/bench-events"]
async fn bench_events_to_nats_postgres() {
    bench(Backend::Postgres).await;
}
