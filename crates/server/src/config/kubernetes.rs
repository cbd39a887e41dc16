//! `[transfers.kubernetes]`: the Jobs of the Kubernetes executor. Checked only when that
//! executor is the configured one, so a build without the feature still reads a file that
//! sets them.

use std::collections::BTreeMap;
use std::num::NonZeroU32;

use serde::{Deserialize, Serialize};

use super::ConfigError;
use super::transfers::TransferExecutor;
use super::values::{AtLeast, count_u32};

/// The Jobs of the Kubernetes executor: one Job of the Basin image per transfer, running
/// `basin worker --transfer <id>` (docs/deployment.md, "Where transfers run").
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct KubernetesConfig {
    /// Namespace the Jobs are created in.
    pub namespace: String,
    /// The Basin image the Jobs run (the repository's Dockerfile builds one).
    pub image: String,
    /// `Always`, `IfNotPresent` or `Never`.
    pub image_pull_policy: String,
    /// Secret whose keys become the workers' environment: `BASIN_DATABASE_URL`,
    /// `BASIN_AUTH__JWT_SECRET`, `BASIN_BLOB__URL` and whatever else the server is configured
    /// with.
    pub env_from_secret: String,
    /// ServiceAccount of the Jobs' pods; the namespace's default when absent. Workers never
    /// call the Kubernetes API, so its token is not mounted.
    pub service_account: Option<String>,
    /// Finished Jobs (and their pods) are removed this long after they end.
    pub ttl_seconds_after_finished: u32,
    /// A Job running longer than this is stopped by Kubernetes; no limit when absent.
    pub active_deadline_seconds: Option<u64>,
    /// Time a worker gets after SIGTERM to give its transfer back to the queue.
    pub termination_grace_period_seconds: u32,
    /// StorageClass of the scratch volume of transfers that ask for `storageSizeGb`; the
    /// cluster's default when absent.
    pub storage_class: Option<String>,
    /// Refusals by the cluster (403, 422, ...) of one transfer's Job, or Jobs that ended
    /// without running it, before the transfer ends in `Error`; at least 1. Unavailability
    /// (5xx, no connection) is retried without limit.
    #[serde(deserialize_with = "AtLeast::<1>::count")]
    pub create_refusals_max: NonZeroU32,
    /// A Job whose worker has not taken its transfer after this long is looked up (and
    /// again after each further period): when it ended or was deleted without running the
    /// transfer, the transfer gets a new Job.
    pub start_timeout_seconds: u64,
    /// Labels added to every Job and pod, e.g. a team or cost centre.
    pub labels: BTreeMap<String, String>,
    /// Annotations added to every Job and pod, e.g. to turn a service mesh sidecar off.
    pub annotations: BTreeMap<String, String>,
}

impl Default for KubernetesConfig {
    fn default() -> Self {
        Self {
            namespace: "basin".into(),
            image: "basin:latest".into(),
            image_pull_policy: "IfNotPresent".into(),
            env_from_secret: "basin-env".into(),
            service_account: None,
            ttl_seconds_after_finished: 3_600,
            active_deadline_seconds: None,
            termination_grace_period_seconds: 60,
            storage_class: None,
            create_refusals_max: count_u32(3),
            start_timeout_seconds: 600,
            labels: BTreeMap::new(),
            annotations: BTreeMap::new(),
        }
    }
}

impl KubernetesConfig {
    /// The Kubernetes executor exists only in builds with the cargo feature; without it, a
    /// server configured for it would queue transfers that nothing ever runs. With it, the
    /// Job template must be one the cluster accepts.
    pub(super) fn validate(&self, executor: TransferExecutor) -> Result<(), ConfigError> {
        if executor != TransferExecutor::Kubernetes {
            return Ok(());
        }
        if !cfg!(feature = "kubernetes") {
            return Err(ConfigError::Inconsistent(
                "transfers.executor = \"kubernetes\" needs a basin built with --features kubernetes"
                    .into(),
            ));
        }
        if !matches!(
            self.image_pull_policy.as_str(),
            "Always" | "IfNotPresent" | "Never"
        ) {
            return Err(ConfigError::Inconsistent(
                "transfers.kubernetes.image_pull_policy must be Always, IfNotPresent or Never"
                    .into(),
            ));
        }
        if self.namespace.is_empty() || self.image.is_empty() || self.env_from_secret.is_empty() {
            return Err(ConfigError::Inconsistent(
                "transfers.kubernetes.namespace, image and env_from_secret must not be empty"
                    .into(),
            ));
        }
        Ok(())
    }
}
