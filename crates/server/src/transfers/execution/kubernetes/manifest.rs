//! The Kubernetes Job that runs one transfer, as JSON: the Basin image running
//! `basin worker --transfer <id>`, sized by what the transfer asked for.
//!
//! This module is compiled with or without the `kubernetes` cargo feature, so that the
//! manifest (the part of the executor with the most rules) is tested by every build. It
//! builds a plain `serde_json::Value` rather than `k8s_openapi` types for the same reason; a
//! test of the feature build proves that every manifest deserializes into
//! `k8s_openapi::api::batch::v1::Job`.
//!
//! Rules:
//! - requests = limits for memory and CPU, so a transfer gets exactly what it asked for (the
//!   pod's QoS class is `Guaranteed`, the last one evicted under memory pressure).
//! - `key=value` labels become the `nodeSelector`; a bare `key` (allowed by the request
//!   syntax) means "the node has this label", which a `nodeSelector` cannot say, so it becomes
//!   a required node affinity with operator `Exists`.
//! - A transfer that asked for `storageSizeGb` gets a generic ephemeral volume of that size
//!   (a PersistentVolumeClaim that lives and dies with the pod); one that did not gets an
//!   `emptyDir` on the node's disk, which needs no storage provisioner.
//! - `backoffLimit: 0`: Basin's queue retries, not Kubernetes. A pod that dies leaves the
//!   transfer's lease to run out, and the dispatcher creates the next Job; a pod told to stop
//!   gives the transfer back at once.

use serde_json::{Map, Value, json};

use crate::config::KubernetesConfig;
use crate::ids::TransferId;
use crate::transfers::model::Resources;

/// Where the scratch volume is mounted in the worker container; the worker's
/// `transfers.work_dir`.
pub(crate) const WORK_DIR_MOUNT: &str = "/work";
/// User and group id of the Basin image (Dockerfile): the pod runs as them, and the scratch
/// volume is writable by the group.
pub(crate) const IMAGE_USER_ID: u32 = 10_001;
/// Longest name Kubernetes accepts for a Job: its name is also the value of the
/// `job-name` label of its pods, and label values are at most 63 characters.
pub(crate) const JOB_NAME_CHARS_MAX: usize = 63;
/// Prefix of every Job name.
const JOB_NAME_PREFIX: &str = "basin-transfer-";
/// Label carrying the transfer id on Jobs and pods.
pub(crate) const TRANSFER_ID_LABEL: &str = "basin.transfer/id";

/// One Job to create: which transfer, its how-manieth Job, what it asked for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct JobRequest<'a> {
    /// The transfer the Job runs.
    pub(crate) transfer: TransferId,
    /// 1 for the transfer's first Job, 2 for the next one (after its pod died or was told to
    /// stop), and so on.
    pub(crate) dispatch: u32,
    /// Memory, CPU, scratch storage and node labels, as planned when the transfer was queued.
    pub(crate) resources: &'a Resources,
}

/// Why no manifest could be built. These come from values the planner accepted but that
/// Kubernetes cannot express, so the transfer cannot run on this executor.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum ManifestError {
    /// CPU cores that are not a positive finite number.
    #[error("{0} CPU cores cannot be requested from Kubernetes")]
    Cpu(f64),
    /// Storage that is not a positive finite number.
    #[error("{0} GB of storage cannot be requested from Kubernetes")]
    Storage(f64),
    /// Memory of 0 MB.
    #[error("0 MB of memory cannot be requested from Kubernetes")]
    Memory,
}

/// The name of a transfer's `dispatch`-th Job: `basin-transfer-<uuid>-<dispatch>`, a valid
/// DNS-1123 label (lowercase hex, digits and dashes; 52 characters plus at most 10 digits).
pub(crate) fn job_name(transfer: TransferId, dispatch: u32) -> String {
    let name = format!(
        "{JOB_NAME_PREFIX}{}-{dispatch}",
        transfer.as_uuid().hyphenated()
    );
    debug_assert!(name.len() <= JOB_NAME_CHARS_MAX, "{name}");
    name
}

/// CPU cores as Kubernetes millicores (`1500m`), rounded up to whole millicores so that the
/// container never gets less than asked.
pub(crate) fn cpu_quantity(cores: f64) -> Result<String, ManifestError> {
    if !cores.is_finite() || cores <= 0.0 || cores > 1e9 {
        return Err(ManifestError::Cpu(cores));
    }
    let millicores = (cores * 1000.0).ceil();
    Ok(format!("{millicores:.0}m"))
}

/// Megabytes as Kubernetes mebibytes (`4096Mi`): Basin's MB are binary, like the wire
/// contract's multiples of 1024.
pub(crate) fn memory_quantity(memory_mb: u64) -> Result<String, ManifestError> {
    if memory_mb == 0 {
        return Err(ManifestError::Memory);
    }
    Ok(format!("{memory_mb}Mi"))
}

/// Gigabytes as Kubernetes gibibytes (`20Gi`), or mebibytes rounded up when fractional
/// (`2.5` is `2560Mi`), so the volume is never smaller than asked.
pub(crate) fn storage_quantity(storage_gb: f64) -> Result<String, ManifestError> {
    if !storage_gb.is_finite() || storage_gb <= 0.0 || storage_gb > 1e9 {
        return Err(ManifestError::Storage(storage_gb));
    }
    if storage_gb.fract() == 0.0 {
        return Ok(format!("{storage_gb:.0}Gi"));
    }
    let mebibytes = (storage_gb * 1024.0).ceil();
    Ok(format!("{mebibytes:.0}Mi"))
}

/// Labels of every Job and pod: the configured ones, then Basin's (which win).
fn labels(config: &KubernetesConfig, transfer: TransferId) -> Map<String, Value> {
    let mut labels: Map<String, Value> = config
        .labels
        .iter()
        .map(|(key, value)| (key.clone(), Value::String(value.clone())))
        .collect();
    labels.insert("app.kubernetes.io/name".into(), "basin".into());
    labels.insert("app.kubernetes.io/component".into(), "transfer".into());
    labels.insert(TRANSFER_ID_LABEL.into(), transfer.to_string().into());
    labels
}

/// Metadata of the Job and of its pods.
fn metadata(config: &KubernetesConfig, transfer: TransferId, name: Option<&str>) -> Value {
    let mut metadata = Map::new();
    if let Some(name) = name {
        metadata.insert("name".into(), name.into());
        metadata.insert("namespace".into(), config.namespace.clone().into());
    }
    metadata.insert("labels".into(), Value::Object(labels(config, transfer)));
    if !config.annotations.is_empty() {
        let annotations = config
            .annotations
            .iter()
            .map(|(key, value)| (key.clone(), Value::String(value.clone())))
            .collect();
        metadata.insert("annotations".into(), Value::Object(annotations));
    }
    Value::Object(metadata)
}

/// Where the pod may run: `nodeSelector` for `key=value` labels, a required node affinity
/// for bare keys. Either is absent when it would be empty.
fn placement(resources: &Resources) -> (Option<Value>, Option<Value>) {
    let mut selector = Map::new();
    let mut present = Vec::new();
    for label in &resources.labels {
        match label.split_once('=') {
            Some((key, value)) => {
                selector.insert(key.to_owned(), value.into());
            }
            None => present.push(json!({"key": label, "operator": "Exists"})),
        }
    }
    let selector = (!selector.is_empty()).then_some(Value::Object(selector));
    let affinity = (!present.is_empty()).then(|| {
        json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": present}]
        }}})
    });
    (selector, affinity)
}

/// The scratch volume: generic ephemeral of the size asked for, else `emptyDir`.
fn work_volume(
    config: &KubernetesConfig,
    transfer: TransferId,
    storage_gb: Option<f64>,
) -> Result<Value, ManifestError> {
    let Some(storage_gb) = storage_gb else {
        return Ok(json!({"name": "work", "emptyDir": {}}));
    };
    let mut spec = Map::new();
    spec.insert("accessModes".into(), json!(["ReadWriteOnce"]));
    if let Some(class) = &config.storage_class {
        spec.insert("storageClassName".into(), class.clone().into());
    }
    spec.insert(
        "resources".into(),
        json!({"requests": {"storage": storage_quantity(storage_gb)?}}),
    );
    Ok(
        json!({"name": "work", "ephemeral": {"volumeClaimTemplate": {
            "metadata": metadata(config, transfer, None),
            "spec": Value::Object(spec),
        }}}),
    )
}

/// The worker container.
fn container(
    config: &KubernetesConfig,
    transfer: TransferId,
    resources: &Resources,
) -> Result<Value, ManifestError> {
    let quantities = json!({
        "cpu": cpu_quantity(resources.cpu_cores)?,
        "memory": memory_quantity(resources.memory_mb)?,
    });
    Ok(json!({
        "name": "worker",
        "image": config.image,
        "imagePullPolicy": config.image_pull_policy,
        "args": ["worker", "--transfer", transfer.to_string()],
        "env": [{"name": "BASIN_TRANSFERS__WORK_DIR", "value": WORK_DIR_MOUNT}],
        "envFrom": [{"secretRef": {"name": config.env_from_secret}}],
        "resources": {"requests": quantities.clone(), "limits": quantities},
        "volumeMounts": [{"name": "work", "mountPath": WORK_DIR_MOUNT}],
        "securityContext": {
            "allowPrivilegeEscalation": false,
            "capabilities": {"drop": ["ALL"]},
        },
    }))
}

/// The Job running `request`'s transfer.
pub(crate) fn job_manifest(
    config: &KubernetesConfig,
    request: &JobRequest<'_>,
) -> Result<Value, ManifestError> {
    let transfer = request.transfer;
    let resources = request.resources;
    let name = job_name(transfer, request.dispatch);
    let (node_selector, affinity) = placement(resources);
    let mut pod = Map::new();
    pod.insert("restartPolicy".into(), "Never".into());
    if let Some(account) = &config.service_account {
        pod.insert("serviceAccountName".into(), account.clone().into());
    }
    pod.insert("automountServiceAccountToken".into(), false.into());
    pod.insert(
        "terminationGracePeriodSeconds".into(),
        config.termination_grace_period_seconds.into(),
    );
    pod.insert(
        "securityContext".into(),
        json!({
            "runAsNonRoot": true,
            "runAsUser": IMAGE_USER_ID,
            "runAsGroup": IMAGE_USER_ID,
            "fsGroup": IMAGE_USER_ID,
        }),
    );
    if let Some(selector) = node_selector {
        pod.insert("nodeSelector".into(), selector);
    }
    if let Some(affinity) = affinity {
        pod.insert("affinity".into(), affinity);
    }
    pod.insert(
        "containers".into(),
        json!([container(config, transfer, resources)?]),
    );
    pod.insert(
        "volumes".into(),
        json!([work_volume(config, transfer, resources.storage_gb)?]),
    );
    let mut spec = Map::new();
    spec.insert("backoffLimit".into(), 0.into());
    spec.insert(
        "ttlSecondsAfterFinished".into(),
        config.ttl_seconds_after_finished.into(),
    );
    if let Some(deadline) = config.active_deadline_seconds {
        spec.insert("activeDeadlineSeconds".into(), deadline.into());
    }
    spec.insert(
        "template".into(),
        json!({"metadata": metadata(config, transfer, None), "spec": Value::Object(pod)}),
    );
    Ok(json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata(config, transfer, Some(&name)),
        "spec": Value::Object(spec),
    }))
}

#[cfg(test)]
pub(crate) mod tests {
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    use super::*;

    fn transfer() -> TransferId {
        TransferId::from_uuid(
            "0196f1c2-7a4b-7c3d-9e8f-0123456789ab"
                .parse()
                .expect("a uuid"),
        )
    }

    /// The golden cases: (fixture file, config, resources, dispatch).
    pub(crate) fn golden_cases() -> Vec<(&'static str, KubernetesConfig, Resources, u32)> {
        let default_request = Resources {
            memory_mb: 4096,
            cpu_cores: 1.0,
            storage_gb: None,
            node_size: None,
            labels: Vec::new(),
        };
        let sized_request = Resources {
            memory_mb: 16_384,
            cpu_cores: 3.5,
            storage_gb: Some(2.5),
            node_size: Some("Medium".into()),
            labels: vec![
                "topology.kubernetes.io/zone=westeurope-1".into(),
                "gpu".into(),
                "svc.platform/vmsize=standard".into(),
            ],
        };
        let tuned = KubernetesConfig {
            namespace: "data".into(),
            image: "registry.example.com/basin:1.4.0".into(),
            image_pull_policy: "Always".into(),
            env_from_secret: "basin-prod".into(),
            service_account: Some("basin-worker".into()),
            ttl_seconds_after_finished: 600,
            active_deadline_seconds: Some(86_400),
            termination_grace_period_seconds: 90,
            storage_class: Some("fast-ssd".into()),
            create_refusals_max: std::num::NonZeroU32::new(3).unwrap(),
            start_timeout_seconds: 600,
            labels: BTreeMap::from([("team".into(), "hydro".into())]),
            annotations: BTreeMap::from([("sidecar.istio.io/inject".into(), "false".into())]),
        };
        vec![
            (
                "default-request.json",
                KubernetesConfig::default(),
                default_request,
                1,
            ),
            ("sized-request.json", tuned, sized_request, 2),
        ]
    }

    pub(crate) fn fixture(file: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/kubernetes")
            .join(file)
    }

    /// Compares each generated manifest with its golden file, byte for byte;
    /// `UPDATE_GOLDEN=1` writes the files instead.
    #[test]
    fn job_manifests_match_the_golden_files() {
        for (file, config, resources, dispatch) in golden_cases() {
            let request = JobRequest {
                transfer: transfer(),
                dispatch,
                resources: &resources,
            };
            let manifest = job_manifest(&config, &request).unwrap();
            let text = serde_json::to_string_pretty(&manifest).unwrap() + "\n";
            let path = fixture(file);
            if std::env::var_os("UPDATE_GOLDEN").is_some() {
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, &text).unwrap();
                continue;
            }
            let golden = std::fs::read_to_string(&path)
                .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
            assert_eq!(
                text, golden,
                "{file} differs; UPDATE_GOLDEN=1 rewrites it after review"
            );
        }
    }

    #[test]
    fn job_names_are_dns_labels_of_at_most_63_characters() {
        for dispatch in [1, 2, 99, u32::MAX] {
            let name = job_name(transfer(), dispatch);
            assert!(name.len() <= JOB_NAME_CHARS_MAX, "{name}: {}", name.len());
            assert!(name.starts_with("basin-transfer-0196f1c2-"), "{name}");
            assert!(
                name.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
                "{name}"
            );
            assert!(name.as_bytes().last().unwrap().is_ascii_alphanumeric());
        }
        assert_eq!(
            job_name(transfer(), 2),
            "basin-transfer-0196f1c2-7a4b-7c3d-9e8f-0123456789ab-2"
        );
    }

    #[test]
    fn quantities_are_written_the_kubernetes_way() {
        assert_eq!(cpu_quantity(1.0).unwrap(), "1000m");
        assert_eq!(cpu_quantity(1.5).unwrap(), "1500m");
        assert_eq!(cpu_quantity(0.25).unwrap(), "250m");
        assert_eq!(cpu_quantity(0.0001).unwrap(), "1m");
        assert_eq!(cpu_quantity(16.0).unwrap(), "16000m");
        assert_eq!(memory_quantity(4096).unwrap(), "4096Mi");
        assert_eq!(storage_quantity(20.0).unwrap(), "20Gi");
        assert_eq!(storage_quantity(2.5).unwrap(), "2560Mi");
        assert_eq!(storage_quantity(0.001).unwrap(), "2Mi");
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(cpu_quantity(bad).is_err(), "{bad}");
            assert!(storage_quantity(bad).is_err(), "{bad}");
        }
        assert_eq!(memory_quantity(0), Err(ManifestError::Memory));
    }

    #[test]
    fn bare_labels_need_the_key_and_others_select_the_value() {
        let resources = Resources {
            memory_mb: 1024,
            cpu_cores: 1.0,
            labels: vec!["gpu".into(), "zone=a".into(), "empty=".into()],
            ..Resources::default()
        };
        let (selector, affinity) = placement(&resources);
        assert_eq!(selector, Some(json!({"zone": "a", "empty": ""})));
        let terms = &affinity.unwrap()["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            ["nodeSelectorTerms"];
        assert_eq!(
            terms,
            &json!([{"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}])
        );
        assert_eq!(placement(&Resources::default()), (None, None));
    }
}
