//! Test harness: `spawn_app_on(Backend, configure)` starts the real app on a real listener (port 0) against
//! a fresh SQLite file or a fresh PostgreSQL database, with a clock the test controls.
//!
//! PostgreSQL runs when `TEST_POSTGRES_URL` names a server (any database on it; each test
//! creates and drops its own, copied from a migrated template the server keeps between runs).
//! Without it the PostgreSQL variants skip with a message, unless
//! `CI` or `TEST_BASIN_REQUIRE_POSTGRES` is set, in which case they fail.

pub mod client;
pub mod routes;

use std::sync::Arc;

use basin::App;
use basin::BootstrapOutput;
use basin::Config;
use basin::{Clock, ManualClock};
use basin::{SigningSecret, TokenRequest, issue_token};
use reqwest::{Method, RequestBuilder, Response, StatusCode};
use secrecy::SecretString;
use serde_json::Value;
use uuid::Uuid;

pub use client::*;

/// Which database a test runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

pub const TEST_SECRET: &str = "test-secret-test-secret-test-secret-0123456789";

/// Expands to `name::sqlite` and `name::postgres`, each running `$body` against an app started
/// on that store.
macro_rules! api_test {
    ($name:ident, |$app:ident| $body:block) => {
        api_test_with!($name, |_| {}, |$app| $body);
    };
}

/// Like `api_test!`, with the app's config adjusted by `$configure` (evaluated in the test).
macro_rules! api_test_with {
    ($name:ident, $configure:expr, |$app:ident| $body:block) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                let $app =
                    $crate::helpers::spawn_app_on($crate::helpers::Backend::Sqlite, $configure)
                        .await
                        .expect("SQLite is always available");
                $body
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                let Some($app) =
                    $crate::helpers::spawn_app_on($crate::helpers::Backend::Postgres, $configure)
                        .await
                else {
                    return;
                };
                $body
            }
        }
    };
}

/// Expands to `name::sqlite` and `name::postgres`, binding `$url` to the database URL to use
/// (`None`: SQLite in the data dir; `Some`: a fresh PostgreSQL database).
macro_rules! store_test {
    ($name:ident, |$url:ident| $body:block) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                let $url: Option<String> = None;
                $body
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                let Some(database) = $crate::helpers::create_pg_database().await else {
                    return;
                };
                let $url = Some(database.url.clone());
                $body
            }
        }
    };
}

/// A fresh PostgreSQL database, dropped with the test.
pub struct PgDatabase {
    admin_url: String,
    pub name: String,
    pub url: String,
}

impl Drop for PgDatabase {
    fn drop(&mut self) {
        let admin_url = self.admin_url.clone();
        let name = self.name.clone();
        // Drop runs outside async context; a private runtime on a thread does the cleanup.
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                if let Ok(pool) = sqlx::PgPool::connect(&admin_url).await {
                    let sql = format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)");
                    let _ = sqlx::query(sqlx::AssertSqlSafe(sql)).execute(&pool).await;
                    pool.close().await;
                }
            });
        })
        .join();
    }
}

/// The PostgreSQL server to test against, or `None` (skip) when not configured.
pub fn postgres_admin_url() -> Option<String> {
    match std::env::var("TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            let required = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false")
                || std::env::var("TEST_BASIN_REQUIRE_POSTGRES").is_ok_and(|v| v == "1");
            assert!(
                !required,
                "TEST_POSTGRES_URL is not set but PostgreSQL tests are required (CI or TEST_BASIN_REQUIRE_POSTGRES=1)"
            );
            announce_postgres_skip();
            None
        }
    }
}

/// Says once per run, past the test harness's output capture, that the PostgreSQL variants
/// skip: they still show as "ok", and scripts/test does not count them as passed.
fn announce_postgres_skip() {
    static ANNOUNCED: std::sync::Once = std::sync::Once::new();
    ANNOUNCED.call_once(|| {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "note: TEST_POSTGRES_URL is not set; every PostgreSQL variant (::postgres) skips"
        );
    });
}

/// Creates a fresh database on the test server, already migrated: a copy of the template
/// database of the current migrations (see [`pg_template`]), or, should copying fail, an
/// empty one the app migrates. Commits in it do not wait for the WAL to reach the disk
/// (`synchronous_commit = off`): a test's data need not outlive a crash of the PostgreSQL
/// server itself, and waiting for that flush was most of every PostgreSQL test's time on
/// these virtual disks. A crash of Basin loses nothing either way.
pub async fn create_pg_database() -> Option<PgDatabase> {
    let admin_url = postgres_admin_url()?;
    let template = pg_template(&admin_url);
    let name = format!("basin_test_{}", Uuid::new_v4().simple());
    let pool = sqlx::PgPool::connect(&admin_url)
        .await
        .expect("cannot connect to TEST_POSTGRES_URL");
    let copied = match template {
        Some(template) => {
            let sql = format!("CREATE DATABASE \"{name}\" TEMPLATE \"{template}\"");
            sqlx::query(sqlx::AssertSqlSafe(sql))
                .execute(&pool)
                .await
                .is_ok()
        }
        None => false,
    };
    if !copied {
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE \"{name}\"")))
            .execute(&pool)
            .await
            .expect("cannot create test database");
    }
    let unsynced = format!("ALTER DATABASE \"{name}\" SET synchronous_commit = off");
    sqlx::query(sqlx::AssertSqlSafe(unsynced))
        .execute(&pool)
        .await
        .expect("cannot set synchronous_commit on the test database");
    pool.close().await;
    Some(PgDatabase::named(admin_url, name))
}

/// Creates an empty database on the test server, for the tests of what the app does to one
/// (migrating it, bootstrapping).
pub async fn create_empty_pg_database() -> Option<PgDatabase> {
    let admin_url = postgres_admin_url()?;
    let name = format!("basin_test_{}", Uuid::new_v4().simple());
    let pool = sqlx::PgPool::connect(&admin_url)
        .await
        .expect("cannot connect to TEST_POSTGRES_URL");
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE \"{name}\"")))
        .execute(&pool)
        .await
        .expect("cannot create test database");
    pool.close().await;
    Some(PgDatabase::named(admin_url, name))
}

/// A name for a database on the test server that does not exist yet, dropped with the test if
/// something created it: for the tests of what the app does when it creates one.
pub fn absent_pg_database() -> Option<PgDatabase> {
    let admin_url = postgres_admin_url()?;
    Some(PgDatabase::named(
        admin_url,
        format!("basin_test_{}", Uuid::new_v4().simple()),
    ))
}

impl PgDatabase {
    fn named(admin_url: String, name: String) -> Self {
        let mut url = reqwest::Url::parse(&admin_url).expect("TEST_POSTGRES_URL is not a URL");
        url.set_path(&format!("/{name}"));
        Self {
            admin_url,
            name,
            url: url.to_string(),
        }
    }
}

/// The name of a database holding exactly the current PostgreSQL migrations and nothing else,
/// made once per migration set and kept on the server for later runs (it is named after the
/// migrations' checksums, so a changed migration makes a new one and the old one is dropped).
/// Copying it takes about 0.1 s where migrating a new database took about 0.5 s. `None` when
/// it cannot be made; the tests then migrate their own databases.
fn pg_template(admin_url: &str) -> Option<String> {
    static TEMPLATE: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    TEMPLATE
        .get_or_init(|| {
            let admin_url = admin_url.to_owned();
            // Each test has a runtime of its own; the template is made on a thread with one
            // that lives only as long as the job, so no test's runtime holds its connections.
            std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .ok()?;
                runtime.block_on(make_pg_template(&admin_url))
            })
            .join()
            .ok()
            .flatten()
        })
        .clone()
}

async fn make_pg_template(admin_url: &str) -> Option<String> {
    const PREFIX: &str = "basin_test_template_";
    let migrator = sqlx::migrate!("./migrations/postgres");
    let mut checksums = Vec::new();
    for migration in migrator.iter() {
        checksums.extend_from_slice(&migration.version.to_be_bytes());
        checksums.extend_from_slice(&migration.checksum);
    }
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, &checksums);
    let suffix: String = digest
        .as_ref()
        .iter()
        .take(8)
        .map(|byte| format!("{byte:02x}"))
        .collect();
    let name = format!("{PREFIX}{suffix}");
    let admin = sqlx::PgPool::connect(admin_url).await.ok()?;
    let databases: Vec<String> =
        sqlx::query_scalar("SELECT datname FROM pg_database WHERE starts_with(datname, $1)")
            .bind(PREFIX)
            .fetch_all(&admin)
            .await
            .ok()?;
    for stale in databases.iter().filter(|database| **database != name) {
        let sql = format!("DROP DATABASE IF EXISTS \"{stale}\" WITH (FORCE)");
        let _ = sqlx::query(sqlx::AssertSqlSafe(sql)).execute(&admin).await;
    }
    if !databases.contains(&name) {
        // Built under a name of its own and renamed when complete, so a run stopped midway
        // never leaves a half-migrated template, and two runs at once both end with one.
        let building = PgDatabase::named(
            admin_url.to_owned(),
            format!("basin_test_{}", Uuid::new_v4().simple()),
        );
        let sql = format!("CREATE DATABASE \"{}\"", building.name);
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .execute(&admin)
            .await
            .ok()?;
        let pool = sqlx::PgPool::connect(&building.url).await.ok()?;
        let migrated = migrator.run(&pool).await;
        pool.close().await;
        migrated.ok()?;
        // Losing the race to a run that renamed first fails here; `building` is then dropped
        // with its guard (and after a rename the guard finds nothing to drop).
        let sql = format!("ALTER DATABASE \"{}\" RENAME TO \"{name}\"", building.name);
        let _ = sqlx::query(sqlx::AssertSqlSafe(sql)).execute(&admin).await;
    }
    admin.close().await;
    Some(name)
}

/// A running app and what a test needs to call it.
pub struct TestApp {
    pub address: String,
    pub client: reqwest::Client,
    pub clock: ManualClock,
    pub bootstrap: BootstrapOutput,
    pub secret: SigningSecret,
    pub config: Config,
    pub backend: Backend,
    /// The app's own pool, for tests that sabotage the store.
    pub db: basin::Db,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    server: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
    _data_dir: tempfile::TempDir,
    _database: Option<PgDatabase>,
}

/// Starts the app on `backend` with a config adjusted by `configure`; `None` when PostgreSQL
/// is not configured.
pub async fn spawn_app_on(
    backend: Backend,
    configure: impl FnOnce(&mut Config),
) -> Option<TestApp> {
    let data_dir = tempfile::tempdir().unwrap();
    let database = match backend {
        Backend::Sqlite => None,
        Backend::Postgres => Some(create_pg_database().await?),
    };
    let mut config = Config::default();
    config.listen = "127.0.0.1:0".parse().unwrap();
    config.data_dir = data_dir.path().to_path_buf();
    config.database_url = database.as_ref().map(|db| db.url.clone());
    config.database.max_connections = std::num::NonZeroU32::new(4).unwrap();
    config.auth.jwt_secret = Some(SecretString::from(TEST_SECRET));
    configure(&mut config);
    let clock = ManualClock::new(chrono::Utc::now());
    let app = App::build(config.clone(), Arc::new(clock.clone()))
        .await
        .unwrap();
    let address = format!("http://{}", app.local_addr().unwrap());
    let bootstrap = app.bootstrap().cloned().expect("a fresh store bootstraps");
    let secret = app.secret().clone();
    let db = app.db().clone();
    let (shutdown_tx, shutdown_rx) = tokio::sync::oneshot::channel();
    let server = tokio::spawn(app.run_until_stopped(async move {
        let _ = shutdown_rx.await;
    }));
    Some(TestApp {
        address,
        client: reqwest::Client::new(),
        clock,
        bootstrap,
        secret,
        config,
        backend,
        db,
        shutdown: Some(shutdown_tx),
        server: Some(server),
        _data_dir: data_dir,
        _database: database,
    })
}

impl Drop for TestApp {
    fn drop(&mut self) {
        if let Some(server) = self.server.take() {
            server.abort();
        }
    }
}

impl TestApp {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.address)
    }

    /// A request without credentials.
    pub fn anonymous(&self, method: Method, path: &str) -> RequestBuilder {
        self.client.request(method, self.url(path))
    }

    /// A request with the bootstrap API key (tenant Owner).
    pub fn with_key(&self, method: Method, path: &str) -> RequestBuilder {
        self.anonymous(method, path)
            .header("svc-open-api-key", &self.bootstrap.api_key)
    }

    /// A request with a BackOffice bearer token.
    pub fn back_office(&self, method: Method, path: &str) -> RequestBuilder {
        self.anonymous(method, path)
            .bearer_auth(&self.bootstrap.back_office_token)
    }

    /// A request with a bearer token.
    pub fn with_token(&self, method: Method, path: &str, token: &str) -> RequestBuilder {
        self.anonymous(method, path).bearer_auth(token)
    }

    /// Signs a token with the app's secret, issuer and audience, valid from the app's now.
    pub fn token(&self, request: TokenRequest) -> String {
        issue_token(
            &self.secret,
            &self.config.auth.issuer,
            &self.config.auth.audience,
            self.clock.now(),
            &request,
        )
        .unwrap()
    }

    /// A token for `user` acting in `tenant`.
    pub fn user_token(&self, user: Uuid, tenant: Option<Uuid>) -> String {
        self.token(TokenRequest {
            subject: user,
            tenant_id: tenant.map(basin::TenantId::from_uuid),
            ttl: chrono::TimeDelta::hours(1),
            ..Default::default()
        })
    }

    pub fn tenant_id(&self) -> Uuid {
        self.bootstrap.tenant_id.as_uuid()
    }

    pub fn owner_id(&self) -> Uuid {
        self.bootstrap.user_id.as_uuid()
    }

    /// Creates a tenant as BackOffice and returns its id.
    pub async fn create_tenant(&self, name: &str) -> Uuid {
        let admin = self.as_back_office().admin();
        let body = admin
            .create_tenant(&serde_json::json!({ "name": name }))
            .await;
        id_of(&body.expect(StatusCode::CREATED))
    }

    /// Creates a user in `tenant` with `role` as BackOffice and returns its id.
    pub async fn create_user(&self, name: &str, tenant: Option<Uuid>, role: &str) -> Uuid {
        let mut body = serde_json::json!({ "name": name });
        if let Some(tenant) = tenant {
            body["tenantId"] = tenant.to_string().into();
            body["role"] = role.into();
        }
        let created = self.as_back_office().admin().create_user(&body).await;
        id_of(&created.expect(StatusCode::CREATED))
    }

    /// Creates an API key in `tenant` with `role` as BackOffice and returns (id, key).
    pub async fn create_api_key(&self, tenant: Uuid, role: &str) -> (Uuid, String) {
        let body = serde_json::json!({ "name": "test key", "role": role });
        let tenant = self.as_back_office().admin().tenant(tenant);
        let body = tenant
            .create_api_key(&body)
            .await
            .expect(StatusCode::CREATED);
        (id_of(&body), body["apiKey"].as_str().unwrap().to_owned())
    }

    /// Sends the shutdown signal without waiting.
    pub fn signal_shutdown(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
    }

    /// Waits for the server task to end.
    pub async fn wait_stopped(&mut self) -> std::io::Result<()> {
        match self.server.take() {
            Some(server) => server.await.unwrap(),
            None => Ok(()),
        }
    }
}

pub fn id_of(body: &Value) -> Uuid {
    body["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no id in {body}"))
        .parse()
        .unwrap()
}

/// An answer to read whole: a `reqwest::Response`, or a [`Reply`] of the typed clients.
pub trait Answer {
    /// The answer, read.
    fn into_reply(self) -> impl std::future::Future<Output = Reply> + Send;
}

impl Answer for Response {
    async fn into_reply(self) -> Reply {
        Reply::of(self).await
    }
}

impl<T: Send> Answer for Reply<T> {
    async fn into_reply(self) -> Reply {
        self.into_json()
    }
}

/// Asserts the status and returns the JSON body (Null when empty).
pub async fn expect_status(response: impl Answer, status: StatusCode) -> Value {
    response.into_reply().await.expect(status)
}

/// Asserts an RFC 9457 problem of `kind` with `status` and returns it.
pub async fn expect_problem(response: impl Answer, status: StatusCode, kind: &str) -> Value {
    response.into_reply().await.problem(status, kind)
}

/// Request timeout 300 ms, upload idle limit 600 ms: uploads sent by [`slow_body`] outlast
/// the first and stay within the second.
pub fn short_idle_timeout(config: &mut basin::Config) {
    config.limits.request_timeout_ms = std::time::Duration::from_millis(300);
    config.limits.upload_idle_timeout_ms = std::time::Duration::from_millis(600);
}

/// `bytes` as a body sent 1000 bytes at a time, 200 ms apart.
pub fn slow_body(bytes: &[u8]) -> reqwest::Body {
    let chunks: Vec<Vec<u8>> = bytes.chunks(1000).map(<[u8]>::to_vec).collect();
    let body = futures::stream::unfold(chunks.into_iter(), |mut chunks| async move {
        let chunk = chunks.next()?;
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        Some((Ok::<_, std::io::Error>(chunk), chunks))
    });
    reqwest::Body::wrap_stream(body)
}

/// `url` (a blob URL, with or without its query) signed again with `permissions`, valid for an
/// hour of the app's clock.
pub fn resigned(app: &TestApp, url: &str, permissions: &str) -> String {
    basin::resign_blob_url(
        &app.secret,
        url,
        permissions,
        app.clock.now() + chrono::TimeDelta::hours(1),
    )
    .unwrap()
}

/// The read URL `GET /api/raw/dataset/{id}` hands out for a dataset's content.
pub async fn read_url(app: &TestApp, dataset: &str) -> String {
    let raw = app.dataset(dataset).raw().await.expect(StatusCode::OK);
    raw["data"].as_str().unwrap().to_owned()
}

// ---- typed helpers: the request chains that many tests share ----

/// A user of the bootstrap tenant with a token acting in it.
#[derive(Debug, Clone)]
pub struct Person {
    pub id: Uuid,
    pub token: String,
}

/// Who sends a request: the bootstrap API key (tenant Owner), a person's token, the bearer of
/// another token (BackOffice's, one without a tenant claim, ...), or another API key.
#[derive(Debug, Clone, Copy)]
pub enum As<'a> {
    Key,
    Person(&'a Person),
    Token(&'a str),
    ApiKey(&'a str),
}

impl TestApp {
    /// A new user of the bootstrap tenant with `tenant_role`, and a token for it.
    pub async fn person(&self, name: &str, tenant_role: &str) -> Person {
        let id = self
            .create_user(name, Some(self.tenant_id()), tenant_role)
            .await;
        Person {
            id,
            token: self.user_token(id, Some(self.tenant_id())),
        }
    }

    /// A request with `who`'s credentials and the metadata api-version.
    pub fn request_as(&self, who: As<'_>, method: Method, path: &str) -> RequestBuilder {
        self.by(who)
            .request(method, path)
            .header("api-version", "3")
    }

    /// Sends a request as `who`, with a JSON body when given.
    pub async fn send_as(
        &self,
        who: As<'_>,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Response {
        let mut request = self.request_as(who, method, path);
        if let Some(body) = body {
            request = request.json(&body);
        }
        request.send().await.unwrap()
    }

    /// Creates a top-level project as `who` (201) with the extra fields in `extra` and returns
    /// its record.
    pub async fn create_project(&self, who: As<'_>, name: &str, extra: Value) -> Value {
        let body = with_fields(serde_json::json!({ "name": name }), extra);
        let reply = self.by(who).projects().create(&body).await;
        reply.expect(StatusCode::CREATED)
    }

    /// Creates a subproject of `parent` as `who` (201) and returns its record.
    pub async fn create_subproject(
        &self,
        who: As<'_>,
        parent: &Value,
        name: &str,
        extra: Value,
    ) -> Value {
        let body = with_fields(serde_json::json!({ "name": name }), extra);
        let project = self.by(who).project(id_str(parent));
        project
            .create_subproject(&body)
            .await
            .expect(StatusCode::CREATED)
    }

    /// Adds `member` to `project` with `role` as `who` and returns the answer.
    pub async fn add_project_member(
        &self,
        who: As<'_>,
        project: &Value,
        member: Uuid,
        role: &str,
    ) -> Reply {
        let project = self.by(who).project(id_str(project));
        project.members().add(member, role).await
    }

    /// Moves `project` under `target` as `who` and returns the answer.
    pub async fn move_project(&self, who: As<'_>, project: &str, target: &str) -> Reply<Project> {
        self.by(who).project(project).move_to(target).await
    }

    /// Uploads `bytes` as `file_name` into `project` with the direct upload and returns the
    /// response.
    pub async fn upload_file(&self, project: &str, file_name: &str, bytes: Vec<u8>) -> Response {
        let part = reqwest::multipart::Part::bytes(bytes).file_name(file_name.to_owned());
        self.with_key(Method::POST, &routes::file_upload(project))
            .multipart(reqwest::multipart::Form::new().part("file", part))
            .send()
            .await
            .unwrap()
    }
}

/// `body` with the members of the object `extra` added.
pub fn with_fields(mut body: Value, extra: Value) -> Value {
    if let (Some(target), Value::Object(extra)) = (body.as_object_mut(), extra) {
        target.extend(extra);
    }
    body
}

/// The `id` of a record, as text.
pub fn id_str(record: &Value) -> &str {
    record["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no id in {record}"))
}

/// The built `basin` binary with none of the calling shell's `BASIN_*` variables: the binary
/// reads each as configuration and refuses unknown keys, and a developer's `BASIN_CONFIG` or
/// settings must not change what a test runs (the harness's own variables start with
/// `TEST_BASIN_`).
pub fn basin_command() -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_basin"));
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("BASIN_") {
            command.env_remove(key);
        }
    }
    command
}

/// Runs `basin <args>` in `dir` to the end (see [`basin_command`]).
pub fn basin_in(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    basin_command()
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the basin binary runs")
}

/// A process's standard error as text.
pub fn stderr_of(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A process's standard output as text.
pub fn stdout_of(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A sample of the repository's DFS corpus (`tests/corpus/dfs-samples/`).
pub fn dfs_sample_path(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/corpus/dfs-samples")
        .join(name)
}

/// The bytes of a DFS sample (see [`dfs_sample_path`]).
pub fn dfs_sample(name: &str) -> Vec<u8> {
    let path = dfs_sample_path(name);
    std::fs::read(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}
