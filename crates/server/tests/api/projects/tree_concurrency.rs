//! The project tree under concurrency (issue 9, fault 1). Two moves sent at the same moment (A
//! under B, B under A) once left a cycle on PostgreSQL and a locked database on SQLite, because
//! the loop rule was checked before the serialised write instead of inside it. Here: those
//! opposite moves, many times over, and 32 clients changing one tree for 10 s (moves, deletes,
//! creates, member changes, inheritance switches, bulk hierarchy requests, versioned renames),
//! after which the tree's invariants are checked: no cycle, every subproject reaches its root,
//! stored depths are true and within the limit, no 5xx, and no lost update.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::*;

/// One stored project, as the invariant check reads it.
struct Stored {
    parent: Option<Uuid>,
    depth: i64,
    deleted: bool,
}

async fn stored_tree(app: &TestApp, root: Uuid) -> BTreeMap<Uuid, Stored> {
    type Row = (
        Uuid,
        Option<Uuid>,
        i64,
        Option<chrono::DateTime<chrono::Utc>>,
    );
    let rows: Vec<Row> = basin::on_db!(&app.db, |pool| sqlx::query_as(
        "SELECT id, parent_id, depth, deleted_at FROM projects WHERE root_id = $1"
    )
    .bind(root)
    .fetch_all(pool)
    .await)
    .unwrap();
    rows.into_iter()
        .map(|(id, parent, depth, deleted_at)| {
            let stored = Stored {
                parent,
                depth,
                deleted: deleted_at.is_some(),
            };
            (id, stored)
        })
        .collect()
}

/// The invariants of the tree under `root`, read from the store: every project reaches the
/// root without a cycle, its stored depth is its distance from the root and within the limit;
/// and through the API: every live project answers its path, root first, ending at itself.
/// Returns the live projects.
async fn check_tree(app: &TestApp, root: Uuid) -> BTreeSet<Uuid> {
    let tree = stored_tree(app, root).await;
    let depth_max = i64::from(app.config.limits.project_depth_max);
    let mut live = BTreeSet::new();
    for (&id, stored) in &tree {
        let mut seen = BTreeSet::from([id]);
        let mut at = stored;
        let mut steps = 0;
        let mut deleted = stored.deleted;
        while let Some(parent) = at.parent {
            assert!(seen.insert(parent), "cycle through {id}");
            at = tree.get(&parent).expect("a parent outside the tree");
            deleted |= at.deleted;
            steps += 1;
        }
        assert!(seen.contains(&root), "{id} does not reach the root");
        assert_eq!(stored.depth, steps, "stored depth of {id}");
        assert!(stored.depth <= depth_max, "{id} deeper than the limit");
        if !deleted {
            live.insert(id);
        }
    }
    for &id in &live {
        let path = app.project(id).path().await;
        let path = expect_status(path, StatusCode::OK).await;
        let entries = path["data"].as_array().unwrap();
        assert_eq!(entries.first().unwrap()["id"], root.to_string());
        assert!(entries.first().unwrap()["parentProjectId"].is_null());
        assert_eq!(entries.last().unwrap()["id"], id.to_string());
        let ids: BTreeSet<&str> = entries.iter().map(|e| e["id"].as_str().unwrap()).collect();
        assert_eq!(ids.len(), entries.len(), "path of {id} repeats a project");
    }
    live
}

async fn assert_ready_and_writable(app: &TestApp, root: &Value) {
    let ready = app
        .anonymous(Method::GET, "/health/ready")
        .send()
        .await
        .unwrap();
    expect_status(ready, StatusCode::OK).await;
    app.create_subproject(As::Key, root, "after the storm", json!({}))
        .await;
}

api_test!(opposite_moves_sent_at_once_never_make_a_cycle, |app| {
    let carl = app.person("Carl", "User").await;
    let root = app.create_project(As::Key, "Root", json!({})).await;
    let added = app
        .add_project_member(As::Key, &root, carl.id, "Contributor")
        .await;
    expect_status(added, StatusCode::OK).await;
    let carl = As::Person(&carl);
    for round in 0..15 {
        let inherit = json!({"inheritsMembers": true});
        let a = app
            .create_subproject(carl, &root, &format!("A{round}"), inherit.clone())
            .await;
        let b = app
            .create_subproject(carl, &root, &format!("B{round}"), inherit)
            .await;
        let (a, b) = (id_str(&a), id_str(&b));
        let (first, second) =
            tokio::join!(app.move_project(carl, a, b), app.move_project(carl, b, a));
        let mut statuses = vec![first.status(), second.status()];
        statuses.sort();
        assert_eq!(
            statuses,
            vec![StatusCode::OK, StatusCode::CONFLICT],
            "round {round}"
        );
        let loser = if first.status() == StatusCode::CONFLICT {
            first
        } else {
            second
        };
        expect_problem(loser, StatusCode::CONFLICT, "move-loop").await;
    }
    check_tree(&app, Uuid::parse_str(id_str(&root)).unwrap()).await;
    assert_ready_and_writable(&app, &root).await;
});

/// A tiny deterministic generator, so that a failing run can be repeated.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}

/// What the clients share: the projects created so far and what they saw.
#[derive(Default)]
struct Shared {
    projects: Vec<String>,
    statuses: BTreeMap<u16, usize>,
    rename_versions: Vec<String>,
}

struct Storm {
    root: String,
    /// The project whose members and name the lost-update checks watch.
    ledger: String,
    people: Vec<Person>,
    shared: Mutex<Shared>,
    deadline: Instant,
}

impl Storm {
    fn pick(&self, rng: &mut Rng) -> String {
        let shared = self.shared.lock().unwrap();
        shared.projects[rng.below(shared.projects.len())].clone()
    }

    /// Forgets a project that answered 404: it is in the recycle bin, or below a project that
    /// is. The root stays, so there is always something to pick.
    fn forget(&self, project: &str) {
        if project != self.root {
            let mut shared = self.shared.lock().unwrap();
            shared.projects.retain(|known| known != project);
        }
    }

    fn record(&self, status: StatusCode) {
        *self
            .shared
            .lock()
            .unwrap()
            .statuses
            .entry(status.as_u16())
            .or_default() += 1;
    }
}

/// One client: random changes to the tree until the deadline. Returns whether its own person
/// is a member of the ledger project at the end, by its own successful calls.
async fn client(app: &TestApp, storm: &Storm, index: usize) -> bool {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (index as u64 + 1));
    let mut in_ledger = false;
    let mut counter = 0;
    while Instant::now() < storm.deadline {
        counter += 1;
        let status = match rng.below(10) {
            0..=2 => random_move(app, storm, &mut rng).await,
            3 => random_create(app, storm, &mut rng, index, counter).await,
            4 if rng.below(4) == 0 => random_delete(app, storm, &mut rng).await,
            5 => random_member(app, storm, &mut rng).await,
            6 => random_inheritance(app, storm, &mut rng).await,
            7 => random_bulk(app, storm, &mut rng, index).await,
            8 => Some(rename_ledger(app, storm, index, counter).await),
            _ => Some(toggle_ledger_member(app, storm, index, &mut in_ledger).await),
        };
        if let Some(status) = status {
            storm.record(status);
        }
    }
    in_ledger
}

async fn random_move(app: &TestApp, storm: &Storm, rng: &mut Rng) -> Option<StatusCode> {
    let (project, target) = (storm.pick(rng), storm.pick(rng));
    let status = app.move_project(As::Key, &project, &target).await.status();
    if status == StatusCode::NOT_FOUND {
        storm.forget(&project);
        storm.forget(&target);
    }
    Some(status)
}

async fn random_create(
    app: &TestApp,
    storm: &Storm,
    rng: &mut Rng,
    index: usize,
    counter: usize,
) -> Option<StatusCode> {
    let parent = storm.pick(rng);
    let body = json!({"name": format!("c{index}-{counter}"), "inheritsMembers": rng.below(2) == 0});
    let path = routes::project_subprojects(&parent);
    let response = app.send_as(As::Key, Method::POST, &path, Some(body)).await;
    let status = response.status();
    if status == StatusCode::CREATED {
        let record: Value = response.json().await.unwrap();
        let id = id_str(&record).to_owned();
        storm.shared.lock().unwrap().projects.push(id);
    } else if status == StatusCode::NOT_FOUND {
        storm.forget(&parent);
    }
    Some(status)
}

async fn random_delete(app: &TestApp, storm: &Storm, rng: &mut Rng) -> Option<StatusCode> {
    let project = storm.pick(rng);
    if project == storm.root {
        return None;
    }
    let path = routes::project(&project);
    let status = app
        .send_as(As::Key, Method::DELETE, &path, None)
        .await
        .status();
    if status == StatusCode::NO_CONTENT || status == StatusCode::NOT_FOUND {
        storm.forget(&project);
    }
    Some(status)
}

async fn random_member(app: &TestApp, storm: &Storm, rng: &mut Rng) -> Option<StatusCode> {
    let project = storm.pick(rng);
    let other = &storm.people[rng.below(storm.people.len())];
    let role = ["Reader", "Contributor", "Owner"][rng.below(3)];
    let path = routes::project_member(&project);
    let body = json!({"userId": other.id, "role": role});
    Some(
        app.send_as(As::Key, Method::POST, &path, Some(body))
            .await
            .status(),
    )
}

async fn random_inheritance(app: &TestApp, storm: &Storm, rng: &mut Rng) -> Option<StatusCode> {
    let project = storm.pick(rng);
    if project == storm.ledger {
        return None;
    }
    let response = if rng.below(2) == 0 {
        let path = routes::project_members_inherit(&project);
        app.send_as(As::Key, Method::PUT, &path, Some(json!({})))
            .await
    } else {
        let other = &storm.people[rng.below(storm.people.len())];
        let path = routes::project_members(&project);
        let body = json!({"members": [{"userId": other.id, "role": "Owner"}]});
        app.send_as(As::Key, Method::PUT, &path, Some(body)).await
    };
    Some(response.status())
}

async fn random_bulk(
    app: &TestApp,
    storm: &Storm,
    rng: &mut Rng,
    index: usize,
) -> Option<StatusCode> {
    let project = storm.pick(rng);
    let path = routes::hierarchy(&project);
    let body = json!({"actions": [
        {"type": "PathActionCreateIfNotExists", "path": format!("h{}/x{}", rng.below(4), rng.below(4)), "isFolder": true},
        {"type": "PathActionCreateIfNotExists", "path": format!("h{}/f{index}.txt", rng.below(4)), "isFolder": false}
    ]});
    Some(
        app.send_as(As::Key, Method::POST, &path, Some(body))
            .await
            .status(),
    )
}

/// Adds the client's own person to the ledger project, or removes it: a read-modify-write of
/// the member list, so a lost update would show in the final list.
async fn toggle_ledger_member(
    app: &TestApp,
    storm: &Storm,
    index: usize,
    in_ledger: &mut bool,
) -> StatusCode {
    let me = &storm.people[index];
    let path = routes::project_member(&storm.ledger);
    let response = if *in_ledger {
        let path = format!("{path}/{}", me.id);
        app.send_as(As::Key, Method::DELETE, &path, None).await
    } else {
        let body = json!({"userId": me.id, "role": "Reader"});
        app.send_as(As::Key, Method::POST, &path, Some(body)).await
    };
    let status = response.status();
    if status.is_success() {
        *in_ledger = !*in_ledger;
    }
    status
}

/// A read-modify-write of the ledger's name with its rowVersion: a stale version must be 409,
/// so two successful writes can never answer the same new version.
async fn rename_ledger(app: &TestApp, storm: &Storm, index: usize, counter: usize) -> StatusCode {
    let path = routes::project(&storm.ledger);
    let current = app.send_as(As::Key, Method::GET, &path, None).await;
    if current.status() != StatusCode::OK {
        return current.status();
    }
    let current: Value = current.json().await.unwrap();
    let body = json!({
        "id": storm.ledger,
        "name": format!("ledger {index}-{counter}"),
        "rowVersion": current["rowVersion"],
    });
    let response = app.projects().update(&body).await;
    let status = response.status();
    if status == StatusCode::OK {
        let saved = response.expect(StatusCode::OK);
        let version = saved["rowVersion"].as_str().unwrap().to_owned();
        storm.shared.lock().unwrap().rename_versions.push(version);
    }
    status
}

const CLIENTS: usize = 32;

fn storm_config(config: &mut basin::Config) {
    config.database.max_connections = std::num::NonZeroU32::new(16).unwrap();
}

api_test_with!(
    a_tree_changed_by_32_clients_at_once_keeps_its_invariants,
    storm_config,
    |app| {
        let seconds = std::env::var("TEST_BASIN_TREE_STORM_SECONDS")
            .ok()
            .and_then(|raw| raw.parse().ok())
            .unwrap_or(10);
        let root = app.create_project(As::Key, "Storm", json!({})).await;
        let ledger = app.create_project(As::Key, "Ledger", json!({})).await;
        let mut people = Vec::new();
        for index in 0..CLIENTS {
            people.push(app.person(&format!("P{index}"), "User").await);
        }
        let mut projects = vec![id_str(&root).to_owned()];
        for index in 0..8 {
            let sub = app
                .create_subproject(As::Key, &root, &format!("s{index}"), json!({}))
                .await;
            projects.push(id_str(&sub).to_owned());
        }
        let app = Arc::new(app);
        let storm = Arc::new(Storm {
            root: id_str(&root).to_owned(),
            ledger: id_str(&ledger).to_owned(),
            people,
            shared: Mutex::new(Shared {
                projects,
                ..Shared::default()
            }),
            deadline: Instant::now() + Duration::from_secs(seconds),
        });
        let mut clients = Vec::new();
        for index in 0..CLIENTS {
            let (app, storm) = (Arc::clone(&app), Arc::clone(&storm));
            clients.push(tokio::spawn(
                async move { client(&app, &storm, index).await },
            ));
        }
        let me = app
            .send_as(As::Key, Method::GET, &routes::principal_me(), None)
            .await;
        let key_id = id_of(&expect_status(me, StatusCode::OK).await);
        let mut expected_members = BTreeSet::from([key_id]);
        for (index, handle) in clients.into_iter().enumerate() {
            if handle.await.unwrap() {
                expected_members.insert(storm.people[index].id);
            }
        }
        let (statuses, rename_versions) = {
            let shared = storm.shared.lock().unwrap();
            (shared.statuses.clone(), shared.rename_versions.clone())
        };
        eprintln!("tree storm statuses: {statuses:?}");
        let allowed: BTreeSet<u16> = [200, 201, 204, 400, 403, 404, 409].into();
        let unexpected: HashMap<&u16, &usize> = statuses
            .iter()
            .filter(|(status, _)| !allowed.contains(status))
            .collect();
        assert!(unexpected.is_empty(), "unexpected statuses: {unexpected:?}");
        assert!(statuses.get(&200).copied().unwrap_or(0) > 100);

        let versions: BTreeSet<&String> = rename_versions.iter().collect();
        assert_eq!(
            versions.len(),
            rename_versions.len(),
            "two renames answered the same rowVersion: an update was lost"
        );
        let members = app.project(&storm.ledger).members().list().await;
        let members = expect_status(members, StatusCode::OK).await;
        let members: BTreeSet<Uuid> = members["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|member| member["userId"].as_str().unwrap().parse().unwrap())
            .collect();
        assert_eq!(members, expected_members, "a member change was lost");

        let live = check_tree(&app, Uuid::parse_str(&storm.root).unwrap()).await;
        assert!(live.len() > 8, "{} live projects", live.len());
        assert_ready_and_writable(&app, &root).await;
    }
);
