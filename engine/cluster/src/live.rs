//! The live source: a Kubernetes API server reached through kube-rs, for GET requests only.
//!
//! [`LiveCluster`] owns a private [`kube::Client`] that never leaves this module, and offers
//! exactly three reads: list (paginated with `limit` and `continue`), get, and `/version`.
//! There is no way to send another verb through it. Every request has a read timeout on
//! the connection and a Tokio timeout around the whole call; a 403 becomes
//! [`ReadError::Forbidden`] with a message naming the missing permission.
//!
//! Configuration follows kubectl: `--kubeconfig FILE` (else `$KUBECONFIG`, else
//! `~/.kube/config`), `--context NAME`, the in-cluster service account when there is no
//! kubeconfig, and the context's namespace as the default namespace. Credentials are
//! held by kube-rs only; every error message this module produces is scrubbed of the
//! token, password and key material of the loaded configuration.

use crate::source::{describe, forbidden_message, FieldFilter, ReadError};
use crate::state::{ClusterState, ResourceKind};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::core::params::{GetParams, ListParams};
use kubewhy_engine::model::Version;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Items per list page (`limit`); larger lists are read page by page with `continue`.
pub const PAGE_SIZE: u32 = 500;

/// How to reach the cluster, as kubectl's flags say it.
#[derive(Debug, Clone, Default)]
pub struct LiveOptions {
    /// `--kubeconfig FILE`; `None`: `$KUBECONFIG`, `~/.kube/config`, then in-cluster.
    pub kubeconfig: Option<PathBuf>,
    /// `--context NAME`; `None`: the kubeconfig's current context.
    pub context: Option<String>,
    /// Per-request timeout (connection read timeout and the Tokio timeout around each
    /// call); `None`: 30 s.
    pub timeout: Option<Duration>,
}

/// Errors of connecting (reading the configuration); reads report [`ReadError`].
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The kubeconfig file could not be read or parsed.
    #[error("cannot read kubeconfig {path}: {message}")]
    Kubeconfig {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// No configuration was found or it is unusable (no kubeconfig, not in a pod, a
    /// context that does not exist).
    #[error("no usable cluster configuration: {0}")]
    Config(String),
    /// The client could not be built from the configuration (TLS material, proxy).
    #[error("cannot build the Kubernetes client: {0}")]
    Client(String),
}

/// A live cluster, readable only. The client is private and never handed out.
pub struct LiveCluster {
    client: kube::Client,
    default_namespace: String,
    server: String,
    context: Option<String>,
    timeout: Duration,
    calls: AtomicU64,
    secrets: Vec<String>,
}

impl LiveCluster {
    /// Reads the configuration and builds the client (no request is sent yet). Must be
    /// called inside a Tokio runtime.
    ///
    /// # Errors
    /// [`ConnectError`]: an unreadable kubeconfig, an unknown context, no configuration
    /// at all, or a client that cannot be built. Messages hold no credentials.
    pub async fn connect(opts: &LiveOptions) -> Result<LiveCluster, ConnectError> {
        let kc_opts = KubeConfigOptions { context: opts.context.clone(), ..KubeConfigOptions::default() };
        let config = match &opts.kubeconfig {
            Some(path) => {
                let kc = Kubeconfig::read_from(path)
                    .map_err(|e| ConnectError::Kubeconfig { path: path.clone(), message: e.to_string() })?;
                kube::Config::from_custom_kubeconfig(kc, &kc_opts)
                    .await
                    .map_err(|e| ConnectError::Kubeconfig { path: path.clone(), message: e.to_string() })?
            }
            None if opts.context.is_some() => {
                kube::Config::from_kubeconfig(&kc_opts).await.map_err(|e| ConnectError::Config(e.to_string()))?
            }
            None => kube::Config::infer().await.map_err(|e| ConnectError::Config(e.to_string()))?,
        };
        let timeout = opts.timeout.unwrap_or(Duration::from_secs(30));
        let mut config = config;
        config.read_timeout = Some(timeout);
        config.connect_timeout = Some(timeout.min(Duration::from_secs(10)));
        config.write_timeout = Some(timeout);
        let secrets = credentials(&config);
        let server = config.cluster_url.to_string();
        let default_namespace = config.default_namespace.clone();
        let client = kube::Client::try_from(config).map_err(|e| ConnectError::Client(scrub(&e.to_string(), &secrets)))?;
        Ok(LiveCluster {
            client,
            default_namespace,
            server,
            context: opts.context.clone(),
            timeout,
            calls: AtomicU64::new(0),
            secrets,
        })
    }

    /// The kubeconfig context's namespace (`default` when it names none; the service
    /// account's namespace in a pod).
    pub fn default_namespace(&self) -> &str {
        &self.default_namespace
    }

    /// `live cluster https://host:6443/ (context NAME)`: the server URL only, no credentials.
    pub fn describe(&self) -> String {
        match &self.context {
            Some(c) => format!("live cluster {} (context {c})", self.server),
            None => format!("live cluster {}", self.server),
        }
    }

    /// Requests sent so far.
    pub fn api_calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }

    /// Reads `/version`: the minor version and `gitVersion`.
    ///
    /// # Errors
    /// [`ReadError`] on a status, time-out, transport error or an unparsable version.
    pub async fn server_version(&self) -> Result<(Version, String), ReadError> {
        let what = "the server version (/version)".to_string();
        self.calls.fetch_add(1, Ordering::Relaxed);
        let info = tokio::time::timeout(self.timeout, self.client.apiserver_version())
            .await
            .map_err(|_| ReadError::Timeout { verb: "get", what: what.clone(), secs: self.timeout.as_secs() })?
            .map_err(|e| self.map_err("get", what.clone(), None, ResourceKind::Namespace, e))?;
        let v = Version::parse(&info.git_version)
            .map_err(|m| ReadError::Schema { what, message: format!("gitVersion {:?}: {m}", info.git_version) })?;
        Ok((v, info.git_version))
    }

    /// Lists `kind` in `namespace` (`None`: all namespaces, or cluster-scoped), page by
    /// page ([`PAGE_SIZE`]), into `into`. Returns the number of objects added.
    ///
    /// # Errors
    /// [`ReadError`]; objects of pages read before the error stay in `into`.
    pub async fn list(
        &self,
        kind: ResourceKind,
        namespace: Option<&str>,
        filter: Option<&FieldFilter>,
        into: &mut ClusterState,
    ) -> Result<usize, ReadError> {
        let what = describe(kind, namespace);
        let req = kube::core::Request::new(collection_path(kind, namespace));
        let mut cont: Option<String> = None;
        let mut added = 0;
        loop {
            let lp = ListParams {
                limit: Some(PAGE_SIZE),
                continue_token: cont.clone(),
                field_selector: filter.map(FieldFilter::selector),
                ..ListParams::default()
            };
            let http_req = req
                .list(&lp)
                .map_err(|e| ReadError::Transport { verb: "list", what: what.clone(), message: e.to_string() })?;
            let page: serde_json::Value = self.send("list", &what, kind, namespace, http_req).await?;
            let items = page.get("items").and_then(serde_json::Value::as_array).cloned().unwrap_or_default();
            for item in items {
                into.insert_json(kind, item).map_err(|message| ReadError::Schema { what: what.clone(), message })?;
                added += 1;
            }
            cont = page
                .pointer("/metadata/continue")
                .and_then(serde_json::Value::as_str)
                .filter(|c| !c.is_empty())
                .map(str::to_string);
            if cont.is_none() {
                break;
            }
        }
        Ok(added)
    }

    /// Gets one object into `into`; `Ok(false)` when the API answers 404.
    ///
    /// # Errors
    /// [`ReadError`] for any other failure.
    pub async fn get(
        &self,
        kind: ResourceKind,
        namespace: Option<&str>,
        name: &str,
        into: &mut ClusterState,
    ) -> Result<bool, ReadError> {
        let what = format!("{} {name}", kind.kind());
        let http_req = kube::core::Request::new(collection_path(kind, namespace))
            .get(name, &GetParams::default())
            .map_err(|e| ReadError::Transport { verb: "get", what: what.clone(), message: e.to_string() })?;
        match self.send::<serde_json::Value>("get", &what, kind, namespace, http_req).await {
            Ok(v) => {
                into.insert_json(kind, v).map_err(|message| ReadError::Schema { what, message })?;
                Ok(true)
            }
            Err(ReadError::Status { status: 404, .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Sends one GET (the only method any request built here has) with the timeout.
    async fn send<T: serde::de::DeserializeOwned>(
        &self,
        verb: &'static str,
        what: &str,
        kind: ResourceKind,
        namespace: Option<&str>,
        req: http::Request<Vec<u8>>,
    ) -> Result<T, ReadError> {
        debug_assert_eq!(req.method(), http::Method::GET);
        if req.method() != http::Method::GET {
            return Err(ReadError::Transport { verb, what: what.to_string(), message: "refused a non-GET request".into() });
        }
        self.calls.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(path = %req.uri(), "GET");
        match tokio::time::timeout(self.timeout, self.client.request::<T>(req)).await {
            Err(_) => Err(ReadError::Timeout { verb, what: what.to_string(), secs: self.timeout.as_secs() }),
            Ok(Err(e)) => Err(self.map_err(verb, what.to_string(), namespace, kind, e)),
            Ok(Ok(v)) => Ok(v),
        }
    }

    fn map_err(&self, verb: &'static str, what: String, namespace: Option<&str>, kind: ResourceKind, e: kube::Error) -> ReadError {
        match e {
            kube::Error::Api(status) if status.code == 403 => {
                let ns = if kind.namespaced() { namespace } else { None };
                ReadError::Forbidden(forbidden_message(verb, kind, ns))
            }
            kube::Error::Api(status) => ReadError::Status {
                verb,
                what,
                status: status.code,
                message: scrub(&status.message, &self.secrets),
            },
            other => ReadError::Transport { verb, what, message: scrub(&other.to_string(), &self.secrets) },
        }
    }
}

/// `/api/v1/namespaces/NS/pods`, `/apis/apps/v1/deployments`, `/api/v1/nodes`.
pub fn collection_path(kind: ResourceKind, namespace: Option<&str>) -> String {
    let base = if kind.group().is_empty() {
        format!("/api/{}", kind.version())
    } else {
        format!("/apis/{}/{}", kind.group(), kind.version())
    };
    match namespace {
        Some(ns) if kind.namespaced() => format!("{base}/namespaces/{ns}/{}", kind.plural()),
        _ => format!("{base}/{}", kind.plural()),
    }
}

/// The credential strings of a configuration (token, password, key), to scrub from messages.
fn credentials(config: &kube::Config) -> Vec<String> {
    use secrecy::ExposeSecret;
    let a = &config.auth_info;
    let mut v = Vec::new();
    if let Some(t) = &a.token {
        v.push(t.expose_secret().to_string());
    }
    if let Some(p) = &a.password {
        v.push(p.expose_secret().to_string());
    }
    if let Some(k) = &a.client_key_data {
        v.push(k.expose_secret().to_string());
    }
    v.retain(|s| s.len() >= 4);
    v
}

fn scrub(message: &str, secrets: &[String]) -> String {
    let mut m = message.to_string();
    for s in secrets {
        m = m.replace(s.as_str(), "[credential]");
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        assert_eq!(collection_path(ResourceKind::Pod, Some("web")), "/api/v1/namespaces/web/pods");
        assert_eq!(collection_path(ResourceKind::Pod, None), "/api/v1/pods");
        assert_eq!(collection_path(ResourceKind::Node, Some("web")), "/api/v1/nodes");
        assert_eq!(collection_path(ResourceKind::Deployment, Some("a")), "/apis/apps/v1/namespaces/a/deployments");
        assert_eq!(collection_path(ResourceKind::APIService, None), "/apis/apiregistration.k8s.io/v1/apiservices");
    }

    #[test]
    fn scrub_hides_credentials() {
        assert_eq!(scrub("bad token abc123 here", &["abc123".into()]), "bad token [credential] here");
    }
}
