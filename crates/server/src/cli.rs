//! The `basin` command line: `serve`, `migrate`, `config`, `convert`, `formats`, `inspect` and
//! `admin ...`.
//!
//! Admin commands act on the store directly, as the operator: whoever can reach the database
//! and the signing secret already controls the deployment. `--json` prints machine-readable
//! output on stdout; logs go to stderr.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use serde::Serialize;

use crate::auth::{Principal, TokenRequest, issue_token, parse_ttl};
use crate::clock::{Clock, SystemClock};
use crate::config::{Config, ConfigOverrides};
use crate::identity::bootstrap::{BootstrapOutput, bootstrap};
use crate::identity::model::{
    ApiKeyDto, CreatedApiKeyDto, DisplayName, Email, TenantDto, TenantRole, UserDto,
};
use crate::ids::{ApiKeyId, TenantId};
use crate::startup::{App, Services};

/// Basin: an open, self-hostable data platform for water and geospatial data.
#[derive(Debug, Parser)]
#[command(name = "basin", version, about)]
struct Cli {
    /// Config file (default: ./basin.toml when present).
    #[arg(long, global = true, env = "BASIN_CONFIG")]
    config: Option<PathBuf>,
    /// Folder for the SQLite database and the generated secret.
    #[arg(long, global = true)]
    data_dir: Option<PathBuf>,
    /// sqlite://... or postgres://... (default: SQLite in the data dir).
    #[arg(long, global = true)]
    database_url: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the server (migrates the store and bootstraps it on first start).
    Serve {
        /// Address to listen on.
        #[arg(long)]
        listen: Option<SocketAddr>,
    },
    /// Run queued transfers (`transfers.workers` at once) and render queued tile pyramids
    /// without an HTTP listener, against the same database and blob store as the servers,
    /// until stopped.
    Worker {
        /// Run only this transfer, then exit (the entry point of one Kubernetes Job); exits
        /// with an error when the transfer is not queued.
        #[arg(long)]
        transfer: Option<crate::ids::TransferId>,
    },
    /// Platform events (docs/events.md).
    Events {
        #[command(subcommand)]
        command: EventsCommand,
    },
    /// Apply database migrations and exit.
    Migrate,
    /// Print the effective configuration, secrets masked.
    Config,
    /// Convert a file offline with the readers and writers of the conversion service.
    Convert(crate::convert_command::ConvertArgs),
    /// List the readers and writers with their parameters.
    Formats(crate::convert_command::FormatsArgs),
    /// Summarise a file: items, units, time axis, geometry, coordinate system (and for DFS
    /// files the container header); optionally statistics or every value.
    Inspect(crate::inspect_command::InspectArgs),
    /// Administration of tenants, users, API keys and tokens.
    Admin {
        #[command(subcommand)]
        command: AdminCommand,
    },
}

#[derive(Debug, Subcommand)]
enum EventsCommand {
    /// Relay events to the configured sinks without an HTTP listener, until stopped (whatever
    /// `events.relay` says): for deployments that keep relays apart from the servers.
    Relay,
}

#[derive(Debug, Subcommand)]
enum AdminCommand {
    /// Create (once) the first tenant, owner and API key and print them with fresh tokens.
    Bootstrap(JsonFlag),
    /// Print a signed bearer token.
    Token(TokenArgs),
    /// Tenants.
    Tenant {
        #[command(subcommand)]
        command: TenantCommand,
    },
    /// Users.
    User {
        #[command(subcommand)]
        command: UserCommand,
    },
    /// API keys.
    ApiKey {
        #[command(subcommand)]
        command: ApiKeyCommand,
    },
    /// Run the recycle bin's retention job once: remove for good every item in the bin
    /// longer than recycle_bin.retention_days, and finish interrupted purges.
    PurgeExpired(JsonFlag),
}

#[derive(Debug, Args)]
struct JsonFlag {
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct TokenArgs {
    /// Subject (user id).
    #[arg(long)]
    sub: uuid::Uuid,
    /// Tenant id claim.
    #[arg(long)]
    tenant: Option<TenantId>,
    /// Role claim (repeatable), e.g. BackOffice.
    #[arg(long = "role")]
    roles: Vec<String>,
    /// Scope (repeatable).
    #[arg(long = "scope")]
    scopes: Vec<String>,
    /// client_id claim.
    #[arg(long)]
    client_id: Option<String>,
    /// Lifetime: 90s, 15m, 1h, 7d.
    #[arg(long, default_value = "1h")]
    ttl: String,
}

#[derive(Debug, Subcommand)]
enum TenantCommand {
    /// Create a tenant.
    Create {
        /// Name.
        #[arg(long)]
        name: String,
        #[command(flatten)]
        output: JsonFlag,
    },
}

#[derive(Debug, Subcommand)]
enum UserCommand {
    /// Create a user, optionally as a member of a tenant.
    Create(CreateUserArgs),
}

#[derive(Debug, Args)]
struct CreateUserArgs {
    /// Display name.
    #[arg(long)]
    name: String,
    /// E-mail.
    #[arg(long)]
    email: Option<String>,
    /// Tenant to join.
    #[arg(long)]
    tenant: Option<TenantId>,
    /// Role in the tenant.
    #[arg(long, default_value = "User")]
    role: TenantRole,
    #[command(flatten)]
    output: JsonFlag,
}

#[derive(Debug, Subcommand)]
enum ApiKeyCommand {
    /// Create an API key for a tenant; the key is printed once.
    Create {
        /// Tenant.
        #[arg(long)]
        tenant: TenantId,
        /// Label.
        #[arg(long, default_value = "API key")]
        name: String,
        /// Role the key acts with.
        #[arg(long, default_value = "User")]
        role: TenantRole,
        #[command(flatten)]
        output: JsonFlag,
    },
    /// Revoke an API key by its id.
    Revoke {
        /// Key id (not the key).
        #[arg(long)]
        id: ApiKeyId,
        #[command(flatten)]
        output: JsonFlag,
    },
}

/// Parses the command line and runs it.
pub fn run() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => return fail(&anyhow::Error::from(error)),
    };
    let result = runtime.block_on(dispatch(cli));
    // Work left on the blocking pool (a file operation that hangs) must not keep the process
    // from exiting once the server has stopped.
    runtime.shutdown_timeout(std::time::Duration::from_millis(
        crate::limits::DB_CLOSE_TIMEOUT_MS,
    ));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => fail(&error),
    }
}

fn fail(error: &anyhow::Error) -> ExitCode {
    let _ = writeln!(std::io::stderr(), "error: {}", message_of(error));
    ExitCode::FAILURE
}

/// The error and its causes joined with `: `, as `{:#}` joins them, but without a cause whose
/// text the message already ends with: errors that put their source in their own message
/// (the formats crate's `writing out/b.zip: No such file or directory (os error 2)`) would
/// otherwise print it twice.
fn message_of(error: &anyhow::Error) -> String {
    let mut message = String::new();
    for cause in error.chain() {
        let text = cause.to_string();
        if message.is_empty() {
            message = text;
        } else if !message.ends_with(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
    }
    message
}

async fn dispatch(cli: Cli) -> anyhow::Result<()> {
    // Conversions are offline and need no configuration: a broken basin.toml must not stop
    // them, and they must not create a data folder.
    match &cli.command {
        Command::Convert(args) => return crate::convert_command::convert(args),
        Command::Formats(args) => return crate::convert_command::formats(args),
        Command::Inspect(args) => return crate::inspect_command::inspect(args),
        _ => {}
    }
    let listen = match &cli.command {
        Command::Serve { listen } => *listen,
        _ => None,
    };
    let overrides = ConfigOverrides {
        listen,
        data_dir: cli.data_dir.clone(),
        database_url: cli.database_url.clone(),
    };
    let config = Config::load(cli.config.as_deref(), std::env::vars(), &overrides)?;
    crate::telemetry::init(&config.log);
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    match cli.command {
        Command::Serve { .. } => serve(config, clock).await,
        Command::Worker { transfer } => worker(config, clock, transfer).await,
        Command::Events {
            command: EventsCommand::Relay,
        } => relay(config, clock).await,
        Command::Migrate => {
            Services::connect(config, clock).await?;
            tracing::info!("migrations applied");
            Ok(())
        }
        Command::Config => print_json(&config.to_masked_json()),
        Command::Convert(_) | Command::Formats(_) | Command::Inspect(_) => Ok(()),
        Command::Admin { command } => {
            let services = Services::connect(config, clock).await?;
            admin(&services, command).await
        }
    }
}

async fn serve(config: Config, clock: Arc<dyn Clock>) -> anyhow::Result<()> {
    let token_ttl_seconds = config.auth.bootstrap_token_ttl_seconds;
    let app = App::build(config, clock).await?;
    let address = app.local_addr()?;
    if let Some(bootstrap) = app.bootstrap() {
        print_banner(bootstrap, address, token_ttl_seconds)?;
    }
    app.run_until_stopped(shutdown_signal()).await?;
    Ok(())
}

async fn worker(
    config: Config,
    clock: Arc<dyn Clock>,
    transfer: Option<crate::ids::TransferId>,
) -> anyhow::Result<()> {
    let services = Services::connect(config, clock).await?;
    let pool = services.worker_pool();
    let stop = tokio_util::sync::CancellationToken::new();
    if let Some(id) = transfer {
        let on_signal = stop.clone();
        tokio::spawn(async move {
            shutdown_signal().await;
            on_signal.cancel();
        });
        // A Job whose worker ran nothing must not look successful: the transfer ended,
        // was cancelled, runs on another worker, or never existed. A transfer that ran and
        // failed, or that this worker gave back when told to stop, is a success here: the
        // transfer's record says how it went.
        if !crate::transfers::execution::run_one(&pool, id, &stop).await? {
            anyhow::bail!(
                "transfer {id} was not run: it is not queued (it ended, was cancelled, runs on \
                 another worker, or does not exist)"
            );
        }
        return Ok(());
    }
    let workers = tokio::spawn(pool.run(services.config.transfers.workers, stop.clone()));
    let renderer = services.spawn_pyramid_renderer(&stop);
    tracing::info!(
        workers = services.config.transfers.workers,
        "worker started; running queued transfers and rendering queued tile pyramids"
    );
    shutdown_signal().await;
    tracing::info!("worker stopping");
    stop.cancel();
    let _ = workers.await;
    let _ = renderer.await;
    Ok(())
}

/// `basin events relay`: one event relay until ctrl-c or SIGTERM.
async fn relay(mut config: Config, clock: Arc<dyn Clock>) -> anyhow::Result<()> {
    config.events.relay = true;
    let services = Services::connect(config, clock).await?;
    let Some(relay) = services.event_relay()? else {
        anyhow::bail!("the event relay is turned off");
    };
    let stop = tokio_util::sync::CancellationToken::new();
    let running = tokio::spawn(relay.run(stop.clone()));
    shutdown_signal().await;
    tracing::info!("event relay stopping");
    stop.cancel();
    let _ = running.await;
    Ok(())
}

/// Completes on ctrl-c or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
}

fn print_banner(
    bootstrap: &BootstrapOutput,
    address: SocketAddr,
    token_ttl_seconds: i64,
) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "\nBasin bootstrapped an empty store. Keep these safe.\n\n  \
         tenant id:         {}\n  \
         owner user id:     {}\n  \
         API key:           {}\n  \
         BackOffice token:  {}\n  \
         owner user token:  {}\n\n\
         The API key does not expire. The two tokens expire in {}: `basin admin bootstrap`\n\
         prints all of this again with fresh tokens, `basin admin token` makes one token.\n\n\
         Console: http://{address}/ (sign in with the API key)\n\
         Try:     curl -H 'svc-open-api-key: {}' http://{address}/api/iam/principal/me\n",
        bootstrap.tenant_id,
        bootstrap.user_id,
        bootstrap.api_key,
        bootstrap.back_office_token,
        bootstrap.user_token,
        duration_words(token_ttl_seconds),
        bootstrap.api_key,
    )?;
    out.flush()?;
    Ok(())
}

/// `seconds` as a person says it: `24 hours`, `90 minutes`, `45 seconds`.
fn duration_words(seconds: i64) -> String {
    match seconds {
        s if s >= 3600 && s % 3600 == 0 => format!("{} hours", s / 3600),
        s if s >= 60 && s % 60 == 0 => format!("{} minutes", s / 60),
        s => format!("{s} seconds"),
    }
}

fn print_json(value: &impl Serialize) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    Ok(())
}

fn print(json: bool, value: &impl Serialize, text: &str) -> anyhow::Result<()> {
    if json {
        print_json(value)
    } else {
        writeln!(std::io::stdout().lock(), "{text}")?;
        Ok(())
    }
}

async fn admin(services: &Services, command: AdminCommand) -> anyhow::Result<()> {
    let identity = &services.state.identity;
    let operator = Principal::operator();
    match command {
        AdminCommand::Bootstrap(output) => {
            let result = bootstrap(identity, &services.secret, &services.config.auth).await?;
            let text = format!(
                "tenant id:         {}\nowner user id:     {}\nAPI key:           {}\nBackOffice token:  {}\nowner user token:  {}",
                result.tenant_id,
                result.user_id,
                result.api_key,
                result.back_office_token,
                result.user_token
            );
            print(output.json, &result, &text)
        }
        AdminCommand::Token(args) => print_token(services, args),
        AdminCommand::PurgeExpired(output) => {
            let counts = services.state.bin.run_retention(None).await?;
            let text = format!(
                "removed {} projects and {} datasets; deleted {} blobs",
                counts.projects, counts.datasets, counts.blobs
            );
            print(output.json, &counts, &text)
        }
        AdminCommand::Tenant {
            command: TenantCommand::Create { name, output },
        } => {
            let name = DisplayName::parse(&name).map_err(|e| anyhow::anyhow!("--name {e}"))?;
            let tenant = identity.create_tenant(&operator, name).await?;
            let text = format!("created tenant {} ({})", tenant.id, tenant.name);
            print(output.json, &TenantDto::from(tenant), &text)
        }
        AdminCommand::User {
            command: UserCommand::Create(args),
        } => create_user(services, args).await,
        AdminCommand::ApiKey {
            command:
                ApiKeyCommand::Create {
                    tenant,
                    name,
                    role,
                    output,
                },
        } => {
            let name = DisplayName::parse(&name).map_err(|e| anyhow::anyhow!("--name {e}"))?;
            let (key, secret) = identity
                .create_api_key(&operator, tenant, name, role)
                .await
                .context("cannot create the API key")?;
            let text = format!(
                "API key (shown once): {}\nkey id: {}",
                secret.reveal(),
                key.id
            );
            let dto = CreatedApiKeyDto {
                record: key.into(),
                api_key: secret.reveal(),
            };
            print(output.json, &dto, &text)
        }
        AdminCommand::ApiKey {
            command: ApiKeyCommand::Revoke { id, output },
        } => {
            let key = identity.revoke_api_key_by_id(id).await?;
            let text = format!("revoked API key {}", key.id);
            print(output.json, &ApiKeyDto::from(key), &text)
        }
    }
}

fn print_token(services: &Services, args: TokenArgs) -> anyhow::Result<()> {
    let ttl = parse_ttl(&args.ttl).map_err(anyhow::Error::msg)?;
    let token = issue_token(
        &services.secret,
        &services.config.auth.issuer,
        &services.config.auth.audience,
        services.state.clock.now(),
        &TokenRequest {
            subject: args.sub,
            tenant_id: args.tenant,
            roles: args.roles,
            scopes: args.scopes,
            client_id: args.client_id,
            name: None,
            email: None,
            ttl,
        },
    )?;
    writeln!(std::io::stdout().lock(), "{token}")?;
    Ok(())
}

async fn create_user(services: &Services, args: CreateUserArgs) -> anyhow::Result<()> {
    let CreateUserArgs {
        name,
        email,
        tenant,
        role,
        output,
    } = args;
    let name = DisplayName::parse(&name).map_err(|e| anyhow::anyhow!("--name {e}"))?;
    let email = email
        .as_deref()
        .map(Email::parse)
        .transpose()
        .map_err(|e| anyhow::anyhow!("--email {e}"))?;
    let user = services
        .state
        .identity
        .create_user(
            &Principal::operator(),
            name,
            email,
            tenant.map(|tenant| (tenant, role)),
        )
        .await?;
    let text = format!("created user {} ({})", user.id, user.name);
    print(output.json, &UserDto::from(user), &text)
}
