//! The one read-only interface to a cluster: [`Cluster`], with two sources, a live API
//! server ([`crate::live::LiveCluster`]) and an offline snapshot ([`crate::snapshot::Snapshot`]).
//!
//! It has exactly three operations: list a kind (in one namespace or in all of them, with
//! an optional [`FieldFilter`]), get one object, and read the server version. There is no
//! method that writes, execs, attaches or port-forwards, and Secrets are not a
//! [`ResourceKind`], so no code written against this interface can do any of that.
//! Objects are added to a [`ClusterState`] the caller owns; the collectors
//! ([`crate::collect`]) use the same calls for both sources.

use crate::live::LiveCluster;
use crate::snapshot::Snapshot;
use crate::state::{ClusterState, ResourceKind, Unavailable};
use kubewhy_engine::model::Version;

/// Which namespaces a list covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// One namespace (`-n NS`, or the kubeconfig context's namespace).
    Namespace(String),
    /// Every namespace (`-A`).
    All,
}

impl Scope {
    /// The namespace, or `None` for all of them.
    pub fn namespace(&self) -> Option<&str> {
        match self {
            Scope::Namespace(ns) => Some(ns),
            Scope::All => None,
        }
    }
}

/// A server-side filter of a list, applied the same way by both sources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldFilter {
    /// Events about one object: `involvedObject.kind=K,involvedObject.name=N`
    /// (the namespace comes from the list's scope).
    InvolvedObject {
        /// The object's kind (`Pod`).
        kind: String,
        /// The object's name.
        name: String,
    },
    /// Pods bound to one node: `spec.nodeName=N`.
    PodsOnNode(String),
}

impl FieldFilter {
    /// The field selector as the API server takes it.
    ///
    /// Selectable fields: core/v1 Events select on `involvedObject.*` and Pods on
    /// `spec.nodeName` (kubernetes/kubernetes:pkg/registry/core/event/strategy.go
    /// `ToSelectableFields`, pkg/registry/core/pod/strategy.go `ToSelectableFields`).
    pub fn selector(&self) -> String {
        match self {
            FieldFilter::InvolvedObject { kind, name } => format!("involvedObject.kind={kind},involvedObject.name={name}"),
            FieldFilter::PodsOnNode(node) => format!("spec.nodeName={node}"),
        }
    }
}

/// Why one read failed. Every variant is per call: the caller records it as the kind's
/// [`Unavailable`] reason and goes on.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ReadError {
    /// The API answered 403: the credentials lack a permission. The message names it.
    #[error("{0}")]
    Forbidden(String),
    /// The API answered another error status.
    #[error("{verb} {what}: the API server answered {status}: {message}")]
    Status {
        /// `list` or `get`.
        verb: &'static str,
        /// What was read (`pods in namespace "web"`).
        what: String,
        /// The HTTP status.
        status: u16,
        /// The Status message (credentials are never part of it).
        message: String,
    },
    /// The call took longer than the timeout.
    #[error("{verb} {what}: no answer within {secs} s")]
    Timeout {
        /// `list` or `get`.
        verb: &'static str,
        /// What was read.
        what: String,
        /// The timeout in seconds.
        secs: u64,
    },
    /// The connection failed or the answer could not be read.
    #[error("{verb} {what}: {message}")]
    Transport {
        /// `list` or `get`.
        verb: &'static str,
        /// What was read.
        what: String,
        /// What went wrong (credentials scrubbed).
        message: String,
    },
    /// An object in the answer does not match its kind's schema.
    #[error("{what}: {message}")]
    Schema {
        /// What was read.
        what: String,
        /// What serde said.
        message: String,
    },
}

impl ReadError {
    /// The kind's [`Unavailable`] record for this error.
    pub fn unavailable(&self) -> Unavailable {
        let status = match self {
            ReadError::Forbidden(_) => Some(403),
            ReadError::Status { status, .. } => Some(*status),
            _ => None,
        };
        Unavailable { status, reason: self.to_string() }
    }
}

/// What `list` and `get` read, described for messages: `pods in namespace "web"`,
/// `nodes at the cluster scope`, `pods in all namespaces`.
pub fn describe(kind: ResourceKind, namespace: Option<&str>) -> String {
    match (kind.namespaced(), namespace) {
        (true, Some(ns)) => format!("{} in namespace \"{ns}\"", kind.plural()),
        (true, None) => format!("{} in all namespaces", kind.plural()),
        (false, _) => format!("{} at the cluster scope", kind.plural()),
    }
}

/// The resource as RBAC names it: `pods`, `deployments.apps`, `leases.coordination.k8s.io`.
pub fn rbac_resource(kind: ResourceKind) -> String {
    if kind.group().is_empty() {
        kind.plural().to_string()
    } else {
        format!("{}.{}", kind.plural(), kind.group())
    }
}

/// The message of a 403: `cannot list nodes at the cluster scope: grant get/list on nodes`
/// (at the cluster scope a ClusterRole binding, in a namespace a Role or ClusterRole bound there).
pub fn forbidden_message(verb: &str, kind: ResourceKind, namespace: Option<&str>) -> String {
    format!("cannot {verb} {}: grant get/list on {}", describe(kind, namespace), rbac_resource(kind))
}

/// A cluster to read from: live or a snapshot. Cheap to share by reference; every method
/// takes `&self`.
pub enum Cluster {
    /// A live API server through kube-rs.
    Live(Box<LiveCluster>),
    /// An offline snapshot.
    Snapshot(Box<Snapshot>),
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cluster::Live(l) => write!(f, "Cluster::Live({})", l.describe()),
            Cluster::Snapshot(s) => write!(f, "Cluster::Snapshot({} files)", s.files),
        }
    }
}

impl Cluster {
    /// The namespace used when none is given: the kubeconfig context's namespace for a
    /// live cluster (`default` when the context names none), `default` for a snapshot.
    pub fn default_namespace(&self) -> &str {
        match self {
            Cluster::Live(l) => l.default_namespace(),
            Cluster::Snapshot(_) => "default",
        }
    }

    /// The scope to read: every namespace with `all`, else the namespace asked for; when none
    /// is asked for, the kubeconfig context's namespace of a live cluster, and every namespace
    /// of a snapshot (a snapshot has no current context: it is read whole).
    pub fn scope(&self, namespace: Option<&str>, all: bool) -> Scope {
        match namespace.map(str::trim).filter(|n| !n.is_empty()) {
            _ if all => Scope::All,
            Some(ns) => Scope::Namespace(ns.to_string()),
            None if !self.is_live() => Scope::All,
            None => Scope::Namespace(self.default_namespace().to_string()),
        }
    }

    /// Whether this is a live cluster (MCP marks its tools open-world then).
    pub fn is_live(&self) -> bool {
        matches!(self, Cluster::Live(_))
    }

    /// One line for people: `live cluster https://… (context kind-kind)` or `snapshot DIR`.
    /// Never holds credentials.
    pub fn describe(&self) -> String {
        match self {
            Cluster::Live(l) => l.describe(),
            Cluster::Snapshot(s) => format!("snapshot {}", s.path.display()),
        }
    }

    /// How many API requests were sent so far (0 for a snapshot).
    pub fn api_calls(&self) -> u64 {
        match self {
            Cluster::Live(l) => l.api_calls(),
            Cluster::Snapshot(_) => 0,
        }
    }

    /// The server version: minor version and `gitVersion` (`v1.30.4`), or `None` when a
    /// snapshot has no version file.
    ///
    /// # Errors
    /// [`ReadError`] when the live `/version` read fails.
    pub async fn server_version(&self) -> Result<Option<(Version, String)>, ReadError> {
        match self {
            Cluster::Live(l) => l.server_version().await.map(Some),
            Cluster::Snapshot(s) => Ok(match (&s.state.version, &s.state.git_version) {
                (Some(v), Some(g)) => Some((*v, g.clone())),
                _ => None,
            }),
        }
    }

    /// Lists `kind` in `scope` (cluster-scoped kinds ignore the scope), optionally
    /// filtered, and adds the objects to `into`. Returns how many were added.
    ///
    /// # Errors
    /// [`ReadError`]: a 403 (naming the permission), another status, a time-out, a
    /// transport error, or (snapshot) the kind is not in the snapshot.
    pub async fn list(
        &self,
        kind: ResourceKind,
        scope: &Scope,
        filter: Option<&FieldFilter>,
        into: &mut ClusterState,
    ) -> Result<usize, ReadError> {
        let ns = if kind.namespaced() { scope.namespace() } else { None };
        match self {
            Cluster::Live(l) => l.list(kind, ns, filter, into).await,
            Cluster::Snapshot(s) => {
                snapshot_available(s, kind)?;
                Ok(snapshot_list(&s.state, kind, ns, filter, into))
            }
        }
    }

    /// Gets one object and adds it to `into`. Returns whether it exists.
    ///
    /// # Errors
    /// As [`Cluster::list`]; a missing object is `Ok(false)`, not an error.
    pub async fn get(
        &self,
        kind: ResourceKind,
        namespace: Option<&str>,
        name: &str,
        into: &mut ClusterState,
    ) -> Result<bool, ReadError> {
        let ns = if kind.namespaced() { namespace } else { None };
        match self {
            Cluster::Live(l) => l.get(kind, ns, name, into).await,
            Cluster::Snapshot(s) => {
                snapshot_available(s, kind)?;
                let n = s.state.copy_where(kind, into, &|m| {
                    m.name.as_deref() == Some(name) && (ns.is_none() || m.namespace.as_deref() == ns)
                });
                Ok(n > 0)
            }
        }
    }
}

fn snapshot_available(s: &Snapshot, kind: ResourceKind) -> Result<(), ReadError> {
    match s.state.unavailable.get(&kind) {
        Some(u) => Err(ReadError::Transport { verb: "list", what: describe(kind, None), message: u.reason.clone() }),
        None => Ok(()),
    }
}

fn snapshot_list(
    from: &ClusterState,
    kind: ResourceKind,
    ns: Option<&str>,
    filter: Option<&FieldFilter>,
    into: &mut ClusterState,
) -> usize {
    let in_ns = |m: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta| ns.is_none() || m.namespace.as_deref() == ns;
    match (kind, filter) {
        (ResourceKind::Event, Some(FieldFilter::InvolvedObject { kind: k, name })) => {
            let before = into.events.len();
            into.events.extend(
                from.events
                    .iter()
                    .filter(|e| in_ns(&e.metadata))
                    .filter(|e| {
                        e.involved_object.kind.as_deref() == Some(k.as_str())
                            && e.involved_object.name.as_deref() == Some(name.as_str())
                    })
                    .cloned(),
            );
            into.events.len() - before
        }
        (ResourceKind::Pod, Some(FieldFilter::PodsOnNode(node))) => {
            let before = into.pods.len();
            into.pods.extend(
                from.pods
                    .iter()
                    .filter(|p| in_ns(&p.metadata))
                    .filter(|p| p.spec.as_ref().and_then(|s| s.node_name.as_deref()) == Some(node.as_str()))
                    .cloned(),
            );
            into.pods.len() - before
        }
        _ => from.copy_where(kind, into, &in_ns),
    }
}

/// `KIND/NAME` as kubectl takes it: one word, a kind kubewhy reads (any spelling
/// [`ResourceKind::parse`] accepts: `pod`, `po`, `pods`, `deployment.apps`) and a non-empty
/// name of DNS characters. `None` for anything else (a symptom text, a Secret).
pub fn parse_object(w: &str) -> Option<(ResourceKind, String)> {
    let w = w.trim();
    if w.chars().any(char::is_whitespace) {
        return None;
    }
    let (k, name) = w.split_once('/')?;
    if name.is_empty() || name.contains('/') {
        return None;
    }
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | ':' | '_')) {
        return None;
    }
    ResourceKind::parse(k).map(|k| (k, name.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forbidden_names_the_permission() {
        assert_eq!(
            forbidden_message("list", ResourceKind::Node, None),
            "cannot list nodes at the cluster scope: grant get/list on nodes"
        );
        assert_eq!(
            forbidden_message("list", ResourceKind::Deployment, Some("web")),
            "cannot list deployments in namespace \"web\": grant get/list on deployments.apps"
        );
    }

    #[test]
    fn field_selectors() {
        let f = FieldFilter::InvolvedObject { kind: "Pod".into(), name: "web-0".into() };
        assert_eq!(f.selector(), "involvedObject.kind=Pod,involvedObject.name=web-0");
        assert_eq!(FieldFilter::PodsOnNode("n1".into()).selector(), "spec.nodeName=n1");
    }
}

/// Errors of [`open`].
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The snapshot could not be read.
    #[error(transparent)]
    Snapshot(#[from] crate::snapshot::SnapshotError),
    /// The live cluster's configuration could not be used.
    #[error(transparent)]
    Connect(#[from] crate::live::ConnectError),
}

/// Opens a cluster: the snapshot at `snapshot` when given, else the live cluster of `live`
/// (kubeconfig, context, in-cluster). Must run inside a Tokio runtime for a live cluster.
///
/// # Errors
/// [`OpenError`]: an unreadable snapshot or an unusable configuration.
pub async fn open(snapshot: Option<&std::path::Path>, live: &crate::live::LiveOptions) -> Result<Cluster, OpenError> {
    match snapshot {
        Some(p) => Ok(Cluster::Snapshot(Box::new(crate::snapshot::load(p)?))),
        None => Ok(Cluster::Live(Box::new(LiveCluster::connect(live).await?))),
    }
}
