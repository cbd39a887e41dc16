//! The loading of the configuration: precedence, unknown keys, secrets, and every rule a
//! value or a pair of values must meet, each refused with a message naming the setting.

use std::path::PathBuf;
use std::time::Duration;

use secrecy::ExposeSecret;

use super::*;

fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

#[test]
fn defaults_listen_on_loopback_8080_with_sqlite_in_the_data_dir() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("none.toml");
    std::fs::write(&file, "").unwrap();
    let config = Config::load(Some(&file), env(&[]), &ConfigOverrides::default()).unwrap();
    assert_eq!(config.listen.to_string(), "127.0.0.1:8080");
    assert!(config.effective_database_url().starts_with("sqlite://"));
    assert_eq!(config.limits.page_size_max.get(), 1000);
}

#[test]
fn file_then_env_then_flags_each_win_over_the_one_before() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("basin.toml");
    std::fs::write(
        &file,
        "listen = \"127.0.0.1:1\"\ndata_dir = \"from-file\"\n[limits]\npage_size_max = 7\npage_size_default = 5\n",
    )
    .unwrap();
    let config = Config::load(
        Some(&file),
        env(&[
            ("BASIN_DATA_DIR", "from-env"),
            ("BASIN_LIMITS__PAGE_SIZE_MAX", "9"),
            ("OTHER", "x"),
        ]),
        &ConfigOverrides {
            listen: Some("127.0.0.1:2".parse().unwrap()),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(config.listen.to_string(), "127.0.0.1:2");
    assert_eq!(config.data_dir, PathBuf::from("from-env"));
    assert_eq!(config.limits.page_size_max.get(), 9);
    assert_eq!(config.limits.page_size_default.get(), 5);
}

#[test]
fn an_unknown_key_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("basin.toml");
    std::fs::write(&file, "[limits]\npage_size_maximum = 7\n").unwrap();
    let error = Config::load(Some(&file), env(&[]), &ConfigOverrides::default()).unwrap_err();
    assert!(error.to_string().contains("page_size_maximum"), "{error}");
    let error = Config::load(
        Some(&file.with_file_name("missing.toml")),
        env(&[]),
        &ConfigOverrides::default(),
    )
    .unwrap_err();
    assert!(matches!(error, ConfigError::MissingFile(_)));
}

#[test]
fn a_basin_variable_that_is_no_setting_is_named_in_one_line() {
    for (variable, says) in [
        (
            "BASIN_FOO",
            "the environment variable BASIN_FOO is not a setting",
        ),
        (
            "BASIN_LIMITS__NO_SUCH_KEY",
            "the environment variable BASIN_LIMITS__NO_SUCH_KEY is not a setting",
        ),
    ] {
        let error = Config::load(None, env(&[(variable, "1")]), &ConfigOverrides::default())
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("invalid configuration: "), "{error}");
        assert!(error.contains(says), "{error}");
        assert!(!error.contains('\n') && !error.contains(".rs:"), "{error}");
        assert_eq!(error.matches(variable).count(), 1, "{error}");
    }
    let error = Config::load(
        None,
        env(&[("BASIN_LIMITS__PAGE_SIZE_MAX", "many")]),
        &ConfigOverrides::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        error.contains("the environment variable BASIN_LIMITS__PAGE_SIZE_MAX: invalid type"),
        "{error}"
    );
}

#[test]
fn the_kubernetes_executor_needs_the_cargo_feature() {
    let loaded = Config::load(
        None,
        env(&[("BASIN_TRANSFERS__EXECUTOR", "kubernetes")]),
        &ConfigOverrides::default(),
    );
    if cfg!(feature = "kubernetes") {
        let config = loaded.unwrap();
        assert_eq!(config.transfers.executor, TransferExecutor::Kubernetes);
        assert_eq!(config.transfers.kubernetes, KubernetesConfig::default());
    } else {
        let error = loaded.unwrap_err().to_string();
        assert!(
            error.contains(
                "transfers.executor = \"kubernetes\" needs a basin built with --features kubernetes"
            ),
            "{error}"
        );
    }
}

#[test]
fn a_basemap_must_be_an_http_template_with_z_x_and_y() {
    for bad in [
        "https://tile.example.org/{z}/{x}.png",
        "javascript:alert(1)//{z}{x}{y}",
        "ftp://tile.example.org/{z}/{x}/{y}.png",
        "/{z}/{x}/{y}.png",
    ] {
        let error = Config::load(
            None,
            env(&[("BASIN_CONSOLE__BASEMAP_URL", bad)]),
            &ConfigOverrides::default(),
        )
        .unwrap_err();
        assert!(
            error.to_string().contains("console.basemap_url"),
            "{bad}: {error}"
        );
    }
    let config = Config::load(
        None,
        env(&[(
            "BASIN_CONSOLE__BASEMAP_URL",
            "https://tile.openstreetmap.org/{z}/{x}/{y}.png",
        )]),
        &ConfigOverrides::default(),
    )
    .unwrap();
    assert!(config.console.enabled);
    assert_eq!(config.console.feature_id, "Console");
}

#[test]
fn a_default_page_size_over_the_maximum_is_rejected() {
    let error = Config::load(
        None,
        env(&[("BASIN_LIMITS__PAGE_SIZE_DEFAULT", "5000")]),
        &ConfigOverrides::default(),
    )
    .unwrap_err();
    assert!(matches!(error, ConfigError::Inconsistent(_)));
}

#[test]
fn timeouts_of_zero_are_rejected() {
    for key in [
        "BASIN_LIMITS__REQUEST_TIMEOUT_MS",
        "BASIN_LIMITS__UPLOAD_IDLE_TIMEOUT_MS",
    ] {
        let error =
            Config::load(None, env(&[(key, "0")]), &ConfigOverrides::default()).unwrap_err();
        assert!(matches!(error, ConfigError::Invalid(_)), "{key}");
        assert!(
            error
                .to_string()
                .contains(&format!("{key}: must be at least 1 millisecond, got 0")),
            "{error}"
        );
    }
    let config = Config::load(
        None,
        env(&[("BASIN_LIMITS__UPLOAD_IDLE_TIMEOUT_MS", "120000")]),
        &ConfigOverrides::default(),
    )
    .unwrap();
    assert_eq!(
        config.limits.upload_idle_timeout_ms,
        Duration::from_millis(120_000)
    );
}

#[test]
fn fetch_networks_and_timeouts_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("basin.toml");
    for (toml, says) in [
        (
            "[fetch]\nallowed_networks = [\"10.1.2.3/16\"]\n",
            "bits set past",
        ),
        (
            "[fetch]\nallowed_networks = [\"intranet\"]\n",
            "not an IP address",
        ),
        (
            "[fetch]\nallowed_networks = [\"10.0.0.0/33\"]\n",
            "prefix length",
        ),
        ("[fetch]\ntotal_timeout_ms = 0\n", "at least 1"),
    ] {
        std::fs::write(&file, toml).unwrap();
        let error = Config::load(Some(&file), env(&[]), &ConfigOverrides::default()).unwrap_err();
        assert!(error.to_string().contains(says), "{toml}: {error}");
    }
    std::fs::write(
        &file,
        "[fetch]\nallowed_networks = [\"10.1.0.0/16\", \"fd00:1::/64\", \"192.0.2.7\"]\n",
    )
    .unwrap();
    let config = Config::load(
        Some(&file),
        env(&[("BASIN_FETCH__ALLOW_PRIVATE", "true")]),
        &ConfigOverrides::default(),
    )
    .unwrap();
    let policy = config
        .fetch
        .policy(config.limits.upload_bytes_max.get())
        .unwrap();
    assert!(policy.allow_private);
    assert_eq!(policy.allowed_networks.len(), 3);
}

#[test]
fn blob_url_lifetimes_and_the_public_url_are_checked() {
    for (key, value) in [
        ("BASIN_BLOB__UPLOAD_URL_TTL_SECONDS", "59"),
        ("BASIN_BLOB__READ_URL_TTL_SECONDS", "604801"),
        ("BASIN_PUBLIC_URL", "ftp://example.com"),
        ("BASIN_PUBLIC_URL", "https://example.com/?q=1"),
    ] {
        let error =
            Config::load(None, env(&[(key, value)]), &ConfigOverrides::default()).unwrap_err();
        assert!(
            matches!(error, ConfigError::Inconsistent(_)),
            "{key}={value}"
        );
    }
    let config = Config::load(
        None,
        env(&[
            ("BASIN_BLOB__UPLOAD_URL_TTL_SECONDS", "60"),
            ("BASIN_BLOB__READ_URL_TTL_SECONDS", "604800"),
            ("BASIN_PUBLIC_URL", "https://data.example.com/platform"),
            ("BASIN_BLOB__URL", "s3://bucket/prefix"),
        ]),
        &ConfigOverrides::default(),
    )
    .unwrap();
    assert_eq!(config.blob.upload_url_ttl_seconds, 60);
    assert_eq!(
        config.limits.upload_bytes_max.get(),
        crate::limits::UPLOAD_BYTES_MAX
    );
    assert_eq!(config.blob.url.as_deref(), Some("s3://bucket/prefix"));
}

#[test]
fn blob_store_options_are_masked_when_printed() {
    let config = Config::load(
        None,
        env(&[("BASIN_BLOB__OPTIONS__AWS_SECRET_ACCESS_KEY", "s3-secret")]),
        &ConfigOverrides::default(),
    )
    .unwrap();
    let printed = config.to_masked_json().to_string();
    assert!(!printed.contains("s3-secret"), "{printed}");
    assert!(printed.contains("aws_secret_access_key"), "{printed}");
    let option = config.blob.options.get("aws_secret_access_key").unwrap();
    assert_eq!(option.expose_secret(), "s3-secret");
}

#[test]
fn blob_store_options_that_look_like_booleans_or_numbers_are_taken_as_text() {
    let config = Config::load(
        None,
        env(&[
            ("BASIN_BLOB__OPTIONS__AWS_ALLOW_HTTP", "true"),
            ("BASIN_BLOB__OPTIONS__AWS_ACCESS_KEY_ID", "12345"),
            ("BASIN_BLOB__OPTIONS__AWS_SECRET_ACCESS_KEY", "-7"),
            ("BASIN_BLOB__OPTIONS__RATIO", "1.5"),
            ("BASIN_BLOB__OPTIONS__AWS_SESSION_TOKEN", "0123"),
        ]),
        &ConfigOverrides::default(),
    )
    .unwrap();
    let option = |key: &str| config.blob.options[key].expose_secret().to_owned();
    assert_eq!(option("aws_allow_http"), "true");
    assert_eq!(option("aws_access_key_id"), "12345");
    assert_eq!(option("aws_secret_access_key"), "-7");
    assert_eq!(option("ratio"), "1.5");
    assert_eq!(option("aws_session_token"), "0123");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("basin.toml");
    std::fs::write(
        &file,
        "[blob.options]\naws_allow_http = true\nport = 9000\n",
    )
    .unwrap();
    let config = Config::load(Some(&file), env(&[]), &ConfigOverrides::default()).unwrap();
    assert_eq!(
        config.blob.options["aws_allow_http"].expose_secret(),
        "true"
    );
    assert_eq!(config.blob.options["port"].expose_secret(), "9000");
}

#[test]
fn secrets_and_passwords_are_masked_when_printed() {
    let config = Config::load(
        None,
        env(&[
            ("BASIN_AUTH__JWT_SECRET", "very-secret"),
            (
                "BASIN_DATABASE_URL",
                "postgres://basin:hunter2@db:5432/basin",
            ),
        ]),
        &ConfigOverrides::default(),
    )
    .unwrap();
    let printed = config.to_masked_json().to_string();
    assert!(!printed.contains("very-secret"), "{printed}");
    assert!(!printed.contains("hunter2"), "{printed}");
    assert!(
        printed.contains("postgres://basin:***@db:5432/basin"),
        "{printed}"
    );
    assert_eq!(
        config.auth.jwt_secret.as_ref().unwrap().expose_secret(),
        "very-secret"
    );
}

#[test]
fn event_webhooks_are_checked_and_their_secrets_masked() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("basin.toml");
    let hook = |name: &str, url: &str, secret: &str| {
        format!("[[events.webhooks]]\nname = \"{name}\"\nurl = \"{url}\"\nsecret = \"{secret}\"\n")
    };
    let good = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    for (toml, says) in [
        (
            hook(
                "a",
                "https://x.example/h",
                "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
            ),
            "whsec_",
        ),
        (
            hook("a", "https://x.example/h", "whsec_AAAA"),
            "16 to 128 bytes",
        ),
        (hook("a", "ftp://x.example/h", good), "http(s)"),
        (
            hook("a", "https://x.example/h", good) + &hook("a", "https://y.example/h", good),
            "used twice",
        ),
        (
            "[events]\nbatch_size = 1001\n".to_owned(),
            "between 1 and 1000",
        ),
        ("[events]\nattempts_max = 0\n".to_owned(), "at least 1"),
    ] {
        std::fs::write(&file, &toml).unwrap();
        let error = Config::load(Some(&file), env(&[]), &ConfigOverrides::default()).unwrap_err();
        assert!(error.to_string().contains(says), "{toml}: {error}");
    }
    std::fs::write(&file, hook("billing", "https://x.example/h", good)).unwrap();
    let config = Config::load(Some(&file), env(&[]), &ConfigOverrides::default()).unwrap();
    assert_eq!(
        config.events.webhooks[0].timeout_ms,
        Duration::from_millis(10_000)
    );
    assert!(config.events.relay && config.events.nats.is_none());
    let printed = config.to_masked_json().to_string();
    assert!(!printed.contains(good), "{printed}");
}

/// The error of loading with `pairs` as the environment, as printed.
fn refusal(pairs: &[(&str, &str)]) -> String {
    Config::load(None, env(pairs), &ConfigOverrides::default())
        .unwrap_err()
        .to_string()
}

/// Loads with each `(variable, value)` alone and checks that the start is refused with the
/// variable named and `says` after it.
fn assert_each_refused(cases: &[(&str, &str, &str)]) {
    for (variable, value, says) in cases {
        let error = refusal(&[(variable, value)]);
        assert!(
            error.contains(&format!("the environment variable {variable}: {says}")),
            "{variable}={value}: {error}"
        );
    }
}

/// The transfer workers clamped these in startup.rs (and the Kubernetes dispatcher its refusals).
#[test]
fn transfer_settings_that_were_clamped_are_refused_naming_the_variable_and_the_range() {
    assert_each_refused(&[
        (
            "BASIN_TRANSFERS__LEASE_SECONDS",
            "0",
            "must be at least 1 second, got 0",
        ),
        (
            "BASIN_TRANSFERS__HEARTBEAT_SECONDS",
            "0",
            "must be at least 1 second, got 0",
        ),
        (
            "BASIN_TRANSFERS__ATTEMPTS_MAX",
            "0",
            "must be at least 1, got 0",
        ),
        ("BASIN_TRANSFERS__WORKERS", "0", "must be at least 1, got 0"),
        (
            "BASIN_TRANSFERS__POLL_INTERVAL_MS",
            "9",
            "must be at least 10 milliseconds, got 9",
        ),
        (
            "BASIN_TRANSFERS__CHECKSUM_REPAIR_SECONDS",
            "0",
            "must be at least 1 second, got 0",
        ),
        (
            "BASIN_TRANSFERS__KUBERNETES__CREATE_REFUSALS_MAX",
            "0",
            "must be at least 1, got 0",
        ),
    ]);
}

/// The recycle bin, feature, credit and pyramid jobs clamped these where they started.
#[test]
fn periodic_job_settings_that_were_clamped_are_refused_naming_the_variable_and_the_range() {
    assert_each_refused(&[
        (
            "BASIN_RECYCLE_BIN__RETENTION_CHECK_SECONDS",
            "0",
            "must be at least 1 second, got 0",
        ),
        (
            "BASIN_RECYCLE_BIN__PURGE_BATCH_SIZE",
            "0",
            "must be at least 1, got 0",
        ),
        (
            "BASIN_FEATURES__RETENTION_INTERVAL_SECONDS",
            "0",
            "must be at least 1 second, got 0",
        ),
        (
            "BASIN_FEATURES__BANNER_MESSAGES_MAX",
            "0",
            "must be at least 1, got 0",
        ),
        (
            "BASIN_CREDITS__SETTLE_INTERVAL_SECONDS",
            "0",
            "must be at least 1 second, got 0",
        ),
        (
            "BASIN_TILES__PYRAMID_LEASE_SECONDS",
            "0",
            "must be at least 1 second, got 0",
        ),
        (
            "BASIN_TILES__PYRAMID_POLL_MS",
            "9",
            "must be at least 10 milliseconds, got 9",
        ),
    ]);
}

/// The relay clamped these in events/relay.rs.
#[test]
fn event_relay_settings_that_were_clamped_are_refused_naming_the_variable_and_the_range() {
    assert_each_refused(&[
        (
            "BASIN_EVENTS__POLL_INTERVAL_MS",
            "9",
            "must be at least 10 milliseconds, got 9",
        ),
        (
            "BASIN_EVENTS__LEASE_MS",
            "99",
            "must be at least 100 milliseconds, got 99",
        ),
        (
            "BASIN_EVENTS__BATCH_SIZE",
            "0",
            "must be between 1 and 1000, got 0",
        ),
        (
            "BASIN_EVENTS__ATTEMPTS_MAX",
            "0",
            "must be at least 1, got 0",
        ),
    ]);
}

/// These were `== 0` checks after parsing, or ranges checked after it.
#[test]
fn counts_and_timeouts_that_must_not_be_zero_are_refused_naming_the_variable() {
    assert_each_refused(&[
        (
            "BASIN_DATABASE__MAX_CONNECTIONS",
            "0",
            "must be at least 1, got 0",
        ),
        (
            "BASIN_LIMITS__PAGE_SIZE_DEFAULT",
            "0",
            "must be at least 1, got 0",
        ),
        (
            "BASIN_LIMITS__UPLOAD_BYTES_MAX",
            "0",
            "must be at least 1, got 0",
        ),
        (
            "BASIN_LIMITS__HIERARCHY_ACTIONS_MAX",
            "0",
            "must be at least 1, got 0",
        ),
        (
            "BASIN_LIMITS__HIERARCHY_CREATED_MAX",
            "0",
            "must be at least 1, got 0",
        ),
        (
            "BASIN_FETCH__CONNECT_TIMEOUT_MS",
            "0",
            "must be at least 1 millisecond, got 0",
        ),
        (
            "BASIN_BLOB__COMPACTION_DELAY_SECONDS",
            "86401",
            "must be between 0 and 86400 seconds, got 86401",
        ),
        (
            "BASIN_BLOB__UPLOAD_RETENTION_SECONDS",
            "0",
            "must be between 1 and 31536000 seconds, got 0",
        ),
    ]);
}

/// A negative number, one past what the type holds, and text where a number belongs.
#[test]
fn negative_oversized_and_non_numeric_values_are_refused_naming_the_unit() {
    assert_each_refused(&[
        (
            "BASIN_TRANSFERS__LEASE_SECONDS",
            "-5",
            "must not be negative, got -5",
        ),
        (
            "BASIN_DATABASE__MAX_CONNECTIONS",
            "5000000000",
            "must be at most 4294967295",
        ),
        (
            "BASIN_TRANSFERS__LEASE_SECONDS",
            "soon",
            "invalid type: found string \"soon\", expected a whole number of seconds",
        ),
    ]);
}

#[test]
fn a_value_out_of_range_in_the_file_names_its_key_and_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("basin.toml");
    for (toml, says) in [
        (
            "[transfers]\nlease_seconds = 0\n",
            "`transfers.lease_seconds` in ",
        ),
        (
            "[[events.webhooks]]\nname = \"a\"\nurl = \"https://x.example/h\"\n\
             secret = \"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\"\ntimeout_ms = 0\n",
            "timeout_ms",
        ),
    ] {
        std::fs::write(&file, toml).unwrap();
        let error = Config::load(Some(&file), env(&[]), &ConfigOverrides::default())
            .unwrap_err()
            .to_string();
        assert!(error.contains(says), "{toml}: {error}");
        assert!(error.contains("must be at least 1"), "{toml}: {error}");
    }
}

#[test]
fn settings_that_bound_each_other_are_refused_naming_both() {
    let webhook = "[[events.webhooks]]\nname = \"billing\"\nurl = \"https://x.example/h\"\n\
                   secret = \"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\"\ntimeout_ms = 30000\n";
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("basin.toml");
    std::fs::write(&file, webhook).unwrap();
    let error = Config::load(Some(&file), env(&[]), &ConfigOverrides::default())
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("events.lease_ms (30000) must be longer than timeout_ms (30000) of the webhook 'billing'"),
        "{error}"
    );
    for (pairs, says) in [
        (
            &[
                ("BASIN_TRANSFERS__HEARTBEAT_SECONDS", "30"),
                ("BASIN_TRANSFERS__LEASE_SECONDS", "30"),
            ][..],
            "transfers.heartbeat_seconds (30) must be shorter than transfers.lease_seconds (30)",
        ),
        (
            &[("BASIN_TRANSFERS__LEASE_SECONDS", "5")][..],
            "transfers.heartbeat_seconds (10) must be shorter than transfers.lease_seconds (5)",
        ),
        (
            &[
                ("BASIN_EVENTS__BACKOFF_INITIAL_MS", "5000"),
                ("BASIN_EVENTS__BACKOFF_MAX_MS", "1000"),
            ][..],
            "events.backoff_initial_ms (5000) must not exceed events.backoff_max_ms (1000)",
        ),
        (
            &[
                ("BASIN_CREDITS__RESERVATION_TIMEOUT_DEFAULT_SECONDS", "100"),
                ("BASIN_CREDITS__RESERVATION_TIMEOUT_MAX_SECONDS", "99"),
            ][..],
            "credits.reservation_timeout_default_seconds (100) must not exceed credits.reservation_timeout_max_seconds (99)",
        ),
        (
            &[
                ("BASIN_RECYCLE_BIN__RETENTION_DAYS", "1"),
                ("BASIN_RECYCLE_BIN__RETENTION_CHECK_SECONDS", "86401"),
            ][..],
            "recycle_bin.retention_check_seconds (86401) must not exceed recycle_bin.retention_days (1, 86400 seconds)",
        ),
        (
            &[
                ("BASIN_FEATURES__MESSAGE_RETENTION_DAYS", "1"),
                ("BASIN_FEATURES__RETENTION_INTERVAL_SECONDS", "90000"),
            ][..],
            "features.retention_interval_seconds (90000) must not exceed features.message_retention_days (1, 86400 seconds)",
        ),
    ] {
        let error = refusal(pairs);
        assert!(error.starts_with("invalid configuration: "), "{error}");
        assert!(error.contains(says), "{pairs:?}: {error}");
    }
}

#[test]
fn edge_values_within_the_rules_are_accepted() {
    let config = Config::load(
        None,
        env(&[
            ("BASIN_TRANSFERS__HEARTBEAT_SECONDS", "29"),
            ("BASIN_TRANSFERS__LEASE_SECONDS", "30"),
            ("BASIN_TRANSFERS__POLL_INTERVAL_MS", "10"),
            ("BASIN_EVENTS__LEASE_MS", "100"),
            ("BASIN_EVENTS__BATCH_SIZE", "1000"),
            ("BASIN_EVENTS__BACKOFF_INITIAL_MS", "0"),
            ("BASIN_EVENTS__BACKOFF_MAX_MS", "0"),
            ("BASIN_RECYCLE_BIN__RETENTION_DAYS", "0"),
            ("BASIN_RECYCLE_BIN__PURGE_BATCH_SIZE", "1"),
            ("BASIN_FEATURES__BANNER_REFRESH_MS", "0"),
            ("BASIN_AUTH__ACCESS_REFRESH_MS", "0"),
        ]),
        &ConfigOverrides::default(),
    )
    .unwrap();
    assert_eq!(config.transfers.lease_seconds, Duration::from_secs(30));
    assert_eq!(config.transfers.poll_interval_ms, Duration::from_millis(10));
    assert_eq!(config.events.batch_size.get(), 1000);
    assert!(config.auth.access_refresh_ms.is_zero());
}

#[test]
fn durations_keep_their_numbers_and_units_when_printed() {
    let printed = Config::default().to_masked_json();
    assert_eq!(printed["transfers"]["lease_seconds"], 60);
    assert_eq!(printed["transfers"]["poll_interval_ms"], 1000);
    assert_eq!(printed["events"]["poll_interval_ms"], 200);
    assert_eq!(printed["recycle_bin"]["purge_batch_size"], 500);
    assert_eq!(printed["limits"]["request_timeout_ms"], 30_000);
    Config::default().validate().unwrap();
}
