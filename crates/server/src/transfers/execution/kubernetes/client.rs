//! Creating Jobs: the [`JobClient`] seam the dispatcher calls, and its implementation on the
//! Kubernetes API through `kube`.
//!
//! The seam is one method wide so that the dispatch rules are tested with a fake, and the
//! `kube` implementation with a `kube::Client` over a recorded tower service: no cluster is
//! needed for either.

use k8s_openapi::api::batch::v1::Job;
use kube::api::{Api, PostParams};
use serde_json::Value;

/// What creating a Job did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Created {
    /// The Job is new.
    New,
    /// A Job of that name existed already: another dispatcher, or this one before a crash,
    /// created it. Names are unique per transfer and dispatch, so it is the same Job.
    Existed,
}

/// Why a Job was not created.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum CreateError {
    /// The cluster answered and said no (403 Forbidden, 422 Invalid, a quota): asking again
    /// gives the same answer until someone changes the cluster or the configuration.
    #[error("Kubernetes refused the Job (HTTP {code}): {message}")]
    Refused {
        /// HTTP status.
        code: u16,
        /// Kubernetes' message.
        message: String,
    },
    /// The cluster could not be reached or failed (5xx, 429, a network error): try again.
    #[error("Kubernetes is unavailable: {0}")]
    Unavailable(String),
}

/// Where a Job stands, as far as the dispatcher cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JobState {
    /// No Job of that name: deleted, or removed after `ttlSecondsAfterFinished`.
    Missing,
    /// Not finished: its pod runs, or waits for a node or an image.
    Active,
    /// Finished (`Complete` or `Failed`).
    Finished,
}

/// Creates Kubernetes Jobs and looks them up.
#[async_trait::async_trait]
pub(crate) trait JobClient: std::fmt::Debug + Send + Sync {
    /// Creates the Job `manifest` (a `batch/v1` Job as JSON). A Job of the same name that
    /// exists already counts as created.
    async fn create(&self, manifest: &Value) -> Result<Created, CreateError>;

    /// Where the Job `name` stands.
    async fn state(&self, name: &str) -> Result<JobState, CreateError>;
}

/// A failed API call as a [`CreateError`]: client errors (but 429) are refusals.
fn api_error(error: kube::Error) -> CreateError {
    match error {
        kube::Error::Api(status) if (400..500).contains(&status.code) && status.code != 429 => {
            CreateError::Refused {
                code: status.code,
                message: status.message,
            }
        }
        error => CreateError::Unavailable(error.to_string()),
    }
}

/// [`JobClient`] on the Kubernetes API.
#[derive(Clone)]
pub(crate) struct KubeJobClient {
    jobs: Api<Job>,
}

impl std::fmt::Debug for KubeJobClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KubeJobClient").finish_non_exhaustive()
    }
}

impl KubeJobClient {
    /// Jobs of `namespace`, through `client`.
    pub(crate) fn new(client: kube::Client, namespace: &str) -> Self {
        Self {
            jobs: Api::namespaced(client, namespace),
        }
    }

    /// A client configured the way `kubectl` is: in a pod, its ServiceAccount; elsewhere,
    /// `KUBECONFIG` or `~/.kube/config`.
    pub(crate) async fn infer(namespace: &str) -> anyhow::Result<Self> {
        let client = kube::Client::try_default().await.map_err(|error| {
            anyhow::anyhow!(
                "transfers.executor = \"kubernetes\" cannot reach the Kubernetes API \
                 (neither in-cluster credentials nor a kubeconfig): {error}"
            )
        })?;
        Ok(Self::new(client, namespace))
    }
}

#[async_trait::async_trait]
impl JobClient for KubeJobClient {
    async fn create(&self, manifest: &Value) -> Result<Created, CreateError> {
        let job: Job =
            serde_json::from_value(manifest.clone()).map_err(|error| CreateError::Refused {
                code: 422,
                message: format!("the Job manifest is not a batch/v1 Job: {error}"),
            })?;
        match self.jobs.create(&PostParams::default(), &job).await {
            Ok(_) => Ok(Created::New),
            Err(kube::Error::Api(status)) if status.code == 409 => Ok(Created::Existed),
            Err(error) => Err(api_error(error)),
        }
    }

    async fn state(&self, name: &str) -> Result<JobState, CreateError> {
        let Some(job) = self.jobs.get_opt(name).await.map_err(api_error)? else {
            return Ok(JobState::Missing);
        };
        let finished = job
            .status
            .and_then(|status| status.conditions)
            .unwrap_or_default()
            .iter()
            .any(|condition| {
                matches!(condition.type_.as_str(), "Complete" | "Failed")
                    && condition.status == "True"
            });
        Ok(if finished {
            JobState::Finished
        } else {
            JobState::Active
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use axum::http::{Method, Request, Response, StatusCode};
    use kube::client::Body;
    use serde_json::json;

    use super::*;
    use crate::transfers::execution::kubernetes::manifest::tests::{fixture, golden_cases};

    /// A request the fake API server received.
    #[derive(Debug, Clone)]
    struct Recorded {
        method: Method,
        path: String,
        body: Value,
    }

    /// A `kube::Client` whose every request is recorded and answered with `status` and
    /// `answer`, as the API server would.
    fn recording_client(
        status: StatusCode,
        answer: Value,
    ) -> (kube::Client, Arc<Mutex<Vec<Recorded>>>) {
        let recorded = Arc::new(Mutex::new(Vec::new()));
        let log = recorded.clone();
        let service = tower::service_fn(move |request: Request<Body>| {
            let log = log.clone();
            let answer = answer.clone();
            async move {
                let (parts, body) = request.into_parts();
                let bytes = body.collect_bytes().await?;
                let body = if bytes.is_empty() {
                    Value::Null
                } else {
                    serde_json::from_slice(&bytes)?
                };
                log.lock().unwrap().push(Recorded {
                    method: parts.method,
                    path: parts.uri.path().to_owned(),
                    body,
                });
                let response = Response::builder()
                    .status(status)
                    .header("content-type", "application/json")
                    .body(Body::from(serde_json::to_vec(&answer)?))?;
                Ok::<_, Box<dyn std::error::Error + Send + Sync>>(response)
            }
        });
        (kube::Client::new(service, "data"), recorded)
    }

    fn status(code: u16, reason: &str, message: &str) -> Value {
        json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": reason, "code": code
        })
    }

    fn golden(file: &str) -> Value {
        serde_json::from_str(&std::fs::read_to_string(fixture(file)).unwrap()).unwrap()
    }

    #[test]
    fn every_golden_manifest_is_a_kubernetes_job() {
        for (file, ..) in golden_cases() {
            let manifest = golden(file);
            let job: Job = serde_json::from_value(manifest.clone())
                .unwrap_or_else(|error| panic!("{file}: {error}"));
            // Nothing is lost on the way: the typed Job writes back the same document.
            assert_eq!(serde_json::to_value(&job).unwrap(), manifest, "{file}");
        }
    }

    #[tokio::test]
    async fn a_job_is_posted_to_the_jobs_of_the_namespace() {
        let manifest = golden("sized-request.json");
        let (client, recorded) = recording_client(StatusCode::CREATED, manifest.clone());
        let jobs = KubeJobClient::new(client, "data");
        assert_eq!(jobs.create(&manifest).await, Ok(Created::New));
        let recorded = recorded.lock().unwrap().clone();
        assert_eq!(recorded.len(), 1, "{recorded:?}");
        assert_eq!(recorded[0].method, Method::POST);
        assert_eq!(recorded[0].path, "/apis/batch/v1/namespaces/data/jobs");
        assert_eq!(recorded[0].body, manifest);
    }

    #[tokio::test]
    async fn a_job_that_exists_already_counts_as_created() {
        let answer = status(409, "AlreadyExists", "jobs.batch \"x\" already exists");
        let (client, recorded) = recording_client(StatusCode::CONFLICT, answer);
        let jobs = KubeJobClient::new(client, "data");
        let manifest = golden("sized-request.json");
        assert_eq!(jobs.create(&manifest).await, Ok(Created::Existed));
        assert_eq!(recorded.lock().unwrap().len(), 1);
    }

    #[tokio::test]
    async fn refusals_and_unavailability_are_told_apart() {
        let manifest = golden("default-request.json");
        let forbidden = status(403, "Forbidden", "jobs.batch is forbidden");
        let (client, _) = recording_client(StatusCode::FORBIDDEN, forbidden);
        assert_eq!(
            KubeJobClient::new(client, "basin").create(&manifest).await,
            Err(CreateError::Refused {
                code: 403,
                message: "jobs.batch is forbidden".into()
            })
        );
        for (code, reason) in [
            (StatusCode::INTERNAL_SERVER_ERROR, "InternalError"),
            (StatusCode::TOO_MANY_REQUESTS, "TooManyRequests"),
        ] {
            let answer = status(code.as_u16(), reason, "try later");
            let (client, _) = recording_client(code, answer);
            let result = KubeJobClient::new(client, "basin").create(&manifest).await;
            assert!(
                matches!(result, Err(CreateError::Unavailable(_))),
                "{code}: {result:?}"
            );
        }
    }

    #[tokio::test]
    async fn a_job_is_looked_up_by_name() {
        let name = "basin-transfer-0196f1c2-7a4b-7c3d-9e8f-0123456789ab-2";
        let mut failed = golden("sized-request.json");
        failed["status"] = json!({"failed": 1, "conditions": [
            {"type": "Failed", "status": "True", "reason": "DeadlineExceeded"}
        ]});
        let mut active = golden("sized-request.json");
        active["status"] = json!({"active": 1});
        let missing = status(404, "NotFound", "jobs.batch \"x\" not found");
        for (code, answer, expected) in [
            (StatusCode::OK, failed, JobState::Finished),
            (StatusCode::OK, active, JobState::Active),
            (StatusCode::NOT_FOUND, missing, JobState::Missing),
        ] {
            let (client, recorded) = recording_client(code, answer);
            let jobs = KubeJobClient::new(client, "data");
            assert_eq!(jobs.state(name).await, Ok(expected));
            let recorded = recorded.lock().unwrap().clone();
            assert_eq!(recorded[0].method, Method::GET);
            assert_eq!(
                recorded[0].path,
                format!("/apis/batch/v1/namespaces/data/jobs/{name}")
            );
        }
    }

    #[tokio::test]
    async fn a_manifest_that_is_no_job_is_refused_without_a_request() {
        let (client, recorded) = recording_client(StatusCode::CREATED, json!({}));
        let result = KubeJobClient::new(client, "basin")
            .create(&json!({"spec": {"backoffLimit": "none"}}))
            .await;
        assert!(
            matches!(result, Err(CreateError::Refused { code: 422, .. })),
            "{result:?}"
        );
        assert!(recorded.lock().unwrap().is_empty());
    }
}
