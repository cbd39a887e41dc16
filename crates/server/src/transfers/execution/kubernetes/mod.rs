//! The Kubernetes executor: one Job of the Basin image per transfer, running
//! `basin worker --transfer <id>` (docs/deployment.md, "Where transfers run").
//!
//! The Job runs an ordinary worker that claims the transfer through the queue like any other,
//! so leases, heartbeats, cancels and the one-time publish work unchanged; Kubernetes only
//! supplies the machine. What this executor adds is the [`dispatcher`] in `basin serve`,
//! which creates the Jobs, and the [`manifest`] of one Job.
//!
//! The manifest is compiled in every build, so that its rules are tested everywhere; the
//! dispatcher and the client, which need `kube`, only with the `kubernetes` cargo feature.

// Without the feature only the tests use the manifest; they are why it is compiled at all.
#[cfg_attr(
    not(feature = "kubernetes"),
    allow(dead_code, reason = "used by the dispatcher of the kubernetes feature")
)]
pub(crate) mod manifest;

#[cfg(feature = "kubernetes")]
pub(crate) mod client;
#[cfg(feature = "kubernetes")]
pub(crate) mod dispatcher;

#[cfg(feature = "kubernetes")]
pub(crate) use dispatcher::Dispatcher;
