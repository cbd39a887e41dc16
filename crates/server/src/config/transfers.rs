//! `[transfers]`: where transfers run, how workers claim and keep them, and what a request may
//! ask for.

use std::num::{NonZeroU32, NonZeroUsize};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::kubernetes::KubernetesConfig;
use super::values::{AtLeast, as_millis, as_seconds, count_u32, count_usize};
use crate::limits;

/// Where transfers run.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum TransferExecutor {
    /// Worker tasks inside each `basin serve` process (`transfers.workers` of them).
    InProcess,
    /// `basin worker` processes elsewhere; `basin serve` only queues.
    External,
    /// One Kubernetes Job per transfer (cargo feature `kubernetes`).
    Kubernetes,
}

/// A machine type a transfer may ask for by `nodeSize`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NodeSize {
    /// Name clients send, e.g. `Medium`.
    pub name: String,
    /// VM family, added to the transfer's labels as `svc.platform/vmsize=<family>`.
    pub family: String,
    /// CPU cores of the machine.
    pub cpu_cores: f64,
    /// Memory of the machine, in MB.
    pub memory_mb: u64,
    /// Local disk of the machine, in GB.
    pub storage_gb: f64,
}

/// Transfers: executor, queue timing and the resources a request may ask for.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct TransfersConfig {
    /// Where transfers run.
    pub executor: TransferExecutor,
    /// Transfers one process runs at once (in-process executor and `basin worker`); at least
    /// 1 (`executor = "external"` is the way to run none in `basin serve`).
    #[serde(deserialize_with = "AtLeast::<1>::count")]
    pub workers: NonZeroUsize,
    /// Folder for the temporary files of running transfers; `<data_dir>/work` when absent.
    pub work_dir: Option<PathBuf>,
    /// A claimed transfer whose worker has not renewed its lease for this long is taken up
    /// again by another worker (`lease_seconds`, in seconds, at least 1; longer than
    /// `heartbeat_seconds`).
    #[serde(
        serialize_with = "as_seconds",
        deserialize_with = "AtLeast::<1>::seconds"
    )]
    pub lease_seconds: Duration,
    /// How often a worker renews its lease and records progress (`heartbeat_seconds`, in
    /// seconds, at least 1; shorter than `lease_seconds`).
    #[serde(
        serialize_with = "as_seconds",
        deserialize_with = "AtLeast::<1>::seconds"
    )]
    pub heartbeat_seconds: Duration,
    /// Claims of one transfer before it ends in `Error` (a worker died on it each time); at
    /// least 1.
    #[serde(deserialize_with = "AtLeast::<1>::count")]
    pub attempts_max: NonZeroU32,
    /// How often an idle worker looks for queued transfers (`poll_interval_ms`, in
    /// milliseconds, at least 10).
    #[serde(
        serialize_with = "as_millis",
        deserialize_with = "AtLeast::<10>::millis"
    )]
    pub poll_interval_ms: Duration,
    /// Memory of a transfer that asks for none, in MB.
    pub memory_mb_default: u64,
    /// Most memory a transfer may ask for without `nodeSize`, in MB.
    pub memory_mb_max: u64,
    /// CPU cores of a transfer that asks for none.
    pub cpu_cores_default: f64,
    /// Most CPU cores a transfer may ask for without `nodeSize`.
    pub cpu_cores_max: f64,
    /// Most scratch storage a transfer may ask for without `nodeSize`, in GB.
    pub storage_gb_max: f64,
    /// Machine types `nodeSize` may name.
    pub node_sizes: Vec<NodeSize>,
    /// Export results (`downloadPath`) are removed this many hours after the export ended.
    pub export_ttl_hours: u64,
    /// How often each server looks for datasets whose checksum was never recorded (a worker
    /// stopped between storing a large result and hashing it) and fills it in
    /// (`checksum_repair_seconds`, in seconds, at least 1).
    #[serde(
        serialize_with = "as_seconds",
        deserialize_with = "AtLeast::<1>::seconds"
    )]
    pub checksum_repair_seconds: Duration,
    /// The Jobs of the Kubernetes executor (`executor = "kubernetes"`).
    pub kubernetes: KubernetesConfig,
}

impl Default for TransfersConfig {
    fn default() -> Self {
        let node = |name: &str, cpu_cores: f64, memory_mb: u64, storage_gb: f64| NodeSize {
            name: name.to_owned(),
            family: "standard".to_owned(),
            cpu_cores,
            memory_mb,
            storage_gb,
        };
        Self {
            executor: TransferExecutor::InProcess,
            workers: count_usize(limits::TRANSFER_WORKERS),
            work_dir: None,
            lease_seconds: Duration::from_secs(limits::TRANSFER_LEASE_SECONDS),
            heartbeat_seconds: Duration::from_secs(limits::TRANSFER_HEARTBEAT_SECONDS),
            attempts_max: count_u32(limits::TRANSFER_ATTEMPTS_MAX),
            poll_interval_ms: Duration::from_millis(limits::TRANSFER_POLL_INTERVAL_MS),
            memory_mb_default: limits::TRANSFER_MEMORY_MB_DEFAULT,
            memory_mb_max: limits::TRANSFER_MEMORY_MB_MAX,
            cpu_cores_default: 1.0,
            cpu_cores_max: limits::TRANSFER_CPU_CORES_MAX,
            storage_gb_max: limits::TRANSFER_STORAGE_GB_MAX,
            node_sizes: vec![
                node("Small", 2.0, 8_192, 64.0),
                node("Medium", 4.0, 16_384, 128.0),
                node("Large", 8.0, 32_768, 256.0),
                node("XLarge", 16.0, 65_536, 512.0),
            ],
            export_ttl_hours: limits::EXPORT_TTL_HOURS,
            checksum_repair_seconds: Duration::from_secs(limits::CHECKSUM_REPAIR_SECONDS),
            kubernetes: KubernetesConfig::default(),
        }
    }
}

impl TransfersConfig {
    /// The folder for temporary files of running transfers.
    pub(crate) fn work_dir(&self, data_dir: &Path) -> PathBuf {
        self.work_dir
            .clone()
            .unwrap_or_else(|| data_dir.join("work"))
    }
}
