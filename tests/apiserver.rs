//! A test Kubernetes API server: real HTTP on 127.0.0.1 (an ephemeral port) serving
//! `/version` and the list/get REST paths (`/api/v1/...`, `/apis/GROUP/VERSION/...`, with
//! namespaces, `limit`/`continue` pagination and `fieldSelector`) over objects built from
//! k8s-openapi types, so they are schema-valid. It records every request (method, path
//! with query, whether the bearer token matched), answers 401 without the token, 403 with a
//! real `Status` body for the resources marked forbidden, 404 for anything else, and 405
//! for any method but GET.

use axum::body::Body;
use axum::extract::State;
use axum::http::{Method, Request, StatusCode};
use axum::response::{IntoResponse, Response};
use k8s_openapi::{Metadata, Resource};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// One request as received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// The HTTP method.
    pub method: String,
    /// Path and query (`/api/v1/pods?limit=500`).
    pub path: String,
    /// Whether `Authorization: Bearer <token>` carried the right token.
    pub authorized: bool,
}

/// One stored object.
#[derive(Debug, Clone)]
struct Stored {
    /// `/api/v1` or `/apis/apps/v1`.
    prefix: String,
    plural: String,
    namespace: Option<String>,
    name: String,
    list_kind: String,
    value: Value,
}

/// Objects the server serves, added as k8s-openapi values.
#[derive(Debug, Clone, Default)]
pub struct Objects {
    items: Vec<Stored>,
}

impl Objects {
    /// No objects.
    pub fn new() -> Objects {
        Objects::default()
    }

    /// Adds one object (its `apiVersion` and `kind` are set from its type).
    pub fn add<T>(&mut self, obj: &T) -> &mut Objects
    where
        T: Resource + Metadata<Ty = k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta> + serde::Serialize,
    {
        let mut value = serde_json::to_value(obj).expect("object serializes");
        value["apiVersion"] = json!(T::API_VERSION);
        value["kind"] = json!(T::KIND);
        let prefix = if T::GROUP.is_empty() { format!("/api/{}", T::VERSION) } else { format!("/apis/{}/{}", T::GROUP, T::VERSION) };
        let m = obj.metadata();
        self.items.push(Stored {
            prefix,
            plural: T::URL_PATH_SEGMENT.to_string(),
            namespace: m.namespace.clone(),
            name: m.name.clone().unwrap_or_default(),
            list_kind: format!("{}List", T::KIND),
            value,
        });
        self
    }

    /// Writes the objects as a snapshot directory, as `kubectl get KIND -A -o json` would:
    /// one `List` file per resource (`pods.json`, `deployments.apps.json`), plus
    /// `version.json` with `git_version` (the raw `/version` shape).
    pub fn write_snapshot(&self, dir: &Path, git_version: &str) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let mut by: std::collections::BTreeMap<(String, String), Vec<Value>> = std::collections::BTreeMap::new();
        for o in &self.items {
            let group = o.prefix.strip_prefix("/apis/").and_then(|g| g.split('/').next()).unwrap_or("").to_string();
            by.entry((o.plural.clone(), group)).or_default().push(o.value.clone());
        }
        for ((plural, group), items) in by {
            let file = if group.is_empty() { format!("{plural}.json") } else { format!("{plural}.{group}.json") };
            let list = json!({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items});
            std::fs::write(dir.join(file), serde_json::to_string_pretty(&list)?)?;
        }
        std::fs::write(dir.join("version.json"), json!({"major": "1", "minor": "33", "gitVersion": git_version}).to_string())?;
        Ok(())
    }

    /// The files `kubectl cluster-info dump --output-directory DIR` writes for these objects,
    /// as (path relative to DIR, content), in the order kubectl writes them; concatenated,
    /// the contents are what it prints to stdout. Follows
    /// kubernetes/kubectl:pkg/cmd/clusterinfo/clusterinfo_dump.go `Run`: `nodes.json`, then
    /// per namespace `events`, `replication-controllers`, `services`, `daemonsets`,
    /// `deployments`, `replicasets`, `pods` (typed lists whose items carry no kind) and one
    /// `<pod>/logs.txt` with a START/END section per container. `namespaces`: the namespaces
    /// dumped (all of them with `--all-namespaces`).
    pub fn cluster_info_dump(&self, namespaces: &[&str]) -> Vec<(String, String)> {
        let list = |kind: &str, api: &str, items: Vec<Value>| -> String {
            let items: Vec<Value> = items
                .into_iter()
                .map(|mut v| {
                    if let Some(o) = v.as_object_mut() {
                        o.remove("kind");
                        o.remove("apiVersion");
                    }
                    v
                })
                .collect();
            let mut t = serde_json::to_string_pretty(&json!({"kind": kind, "apiVersion": api, "metadata": {"resourceVersion": "1000"}, "items": items}))
                .expect("json");
            t.push('\n');
            t
        };
        let pick = |plural: &str, ns: Option<&str>| -> Vec<Value> {
            self.items.iter().filter(|o| o.plural == plural && o.namespace.as_deref() == ns).map(|o| o.value.clone()).collect()
        };
        let mut out = vec![("nodes.json".to_string(), list("NodeList", "v1", pick("nodes", None)))];
        for ns in namespaces {
            for (file, plural, kind, api) in [
                ("events", "events", "EventList", "v1"),
                ("replication-controllers", "replicationcontrollers", "ReplicationControllerList", "v1"),
                ("services", "services", "ServiceList", "v1"),
                ("daemonsets", "daemonsets", "DaemonSetList", "apps/v1"),
                ("deployments", "deployments", "DeploymentList", "apps/v1"),
                ("replicasets", "replicasets", "ReplicaSetList", "apps/v1"),
                ("pods", "pods", "PodList", "v1"),
            ] {
                out.push((format!("{ns}/{file}.json"), list(kind, api, pick(plural, Some(ns)))));
            }
            for pod in pick("pods", Some(ns)) {
                let name = pod["metadata"]["name"].as_str().unwrap_or("").to_string();
                let mut logs = String::new();
                for c in pod["spec"]["containers"].as_array().into_iter().flatten() {
                    let c = c["name"].as_str().unwrap_or("");
                    logs.push_str(&format!("==== START logs for container {c} of pod {ns}/{name} ====\n"));
                    logs.push_str("{\"level\":\"info\",\"msg\":\"listening on :8080\"}\nGET /healthz 404\n");
                    logs.push_str(&format!("==== END logs for container {c} of pod {ns}/{name} ====\n"));
                }
                out.push((format!("{ns}/{name}/logs.txt"), logs));
            }
        }
        out
    }

    /// How many objects are stored.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether none are stored.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

struct Inner {
    objects: Objects,
    token: String,
    git_version: String,
    forbidden: BTreeSet<String>,
    requests: Mutex<Vec<Recorded>>,
}

/// A running test API server; stops when dropped.
pub struct TestApiServer {
    /// The address it listens on (127.0.0.1, an ephemeral port).
    pub addr: SocketAddr,
    inner: Arc<Inner>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// How to start a [`TestApiServer`].
#[derive(Debug, Clone)]
pub struct Options {
    /// The bearer token clients must send.
    pub token: String,
    /// `/version`'s gitVersion.
    pub git_version: String,
    /// Plurals answered with 403 (`nodes`).
    pub forbidden: Vec<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options { token: "kubewhy-test-token-3f9a1c".into(), git_version: "v1.33.2".into(), forbidden: Vec::new() }
    }
}

impl TestApiServer {
    /// Starts serving `objects` on its own thread and runtime.
    pub fn start(objects: Objects, opts: Options) -> TestApiServer {
        let inner = Arc::new(Inner {
            objects,
            token: opts.token,
            git_version: opts.git_version,
            forbidden: opts.forbidden.into_iter().collect(),
            requests: Mutex::new(Vec::new()),
        });
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let state = inner.clone();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
                addr_tx.send(listener.local_addr().expect("addr")).expect("send addr");
                let app = axum::Router::new().fallback(handle).with_state(state);
                axum::serve(listener, app)
                    .with_graceful_shutdown(async {
                        let _ = stop_rx.await;
                    })
                    .await
                    .expect("serve");
            });
        });
        let addr = addr_rx.recv().expect("server address");
        TestApiServer { addr, inner, stop: Some(stop_tx), thread: Some(thread) }
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.inner.requests.lock().expect("lock").clone()
    }

    /// The bearer token.
    pub fn token(&self) -> &str {
        &self.inner.token
    }

    /// Writes a kubeconfig for this server (context `test`, namespace `namespace`, the bearer
    /// token as the user's credential) into `dir` and returns its path.
    pub fn kubeconfig(&self, dir: &Path, namespace: &str) -> PathBuf {
        let path = dir.join("kubeconfig");
        let text = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: test\n  cluster:\n    server: http://{addr}\ncontexts:\n- name: test\n  context:\n    cluster: test\n    user: test\n    namespace: {namespace}\ncurrent-context: test\nusers:\n- name: test\n  user:\n    token: {token}\n",
            addr = self.addr,
            token = self.inner.token
        );
        std::fs::write(&path, text).expect("write kubeconfig");
        path
    }
}

impl Drop for TestApiServer {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn status(code: StatusCode, reason: &str, message: &str) -> Response {
    let body = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message, "reason": reason, "code": code.as_u16()});
    (code, [("content-type", "application/json")], body.to_string()).into_response()
}

fn ok(v: Value) -> Response {
    (StatusCode::OK, [("content-type", "application/json")], v.to_string()).into_response()
}

fn field(v: &Value, path: &str) -> Option<String> {
    let mut cur = v;
    for part in path.split('.') {
        cur = cur.get(part)?;
    }
    cur.as_str().map(str::to_string)
}

fn query_param(q: &str, key: &str) -> Option<String> {
    q.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k == key).then(|| percent_decode(v))
    })
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' if i + 2 < b.len() => {
                let h = std::str::from_utf8(&b[i + 1..i + 3]).ok().and_then(|h| u8::from_str_radix(h, 16).ok());
                match h {
                    Some(x) => {
                        out.push(x);
                        i += 3;
                    }
                    None => {
                        out.push(b'%');
                        i += 1;
                    }
                }
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

async fn handle(State(s): State<Arc<Inner>>, req: Request<Body>) -> Response {
    let path = req.uri().path().to_string();
    let query = req.uri().query().unwrap_or("").to_string();
    let authorized = req
        .headers()
        .get("authorization")
        .and_then(|h| h.to_str().ok())
        .is_some_and(|h| h == format!("Bearer {}", s.token));
    s.requests.lock().expect("lock").push(Recorded {
        method: req.method().to_string(),
        path: if query.is_empty() { path.clone() } else { format!("{path}?{query}") },
        authorized,
    });
    if req.method() != Method::GET {
        return status(StatusCode::METHOD_NOT_ALLOWED, "MethodNotAllowed", "the test API server only answers GET");
    }
    if !authorized {
        return status(StatusCode::UNAUTHORIZED, "Unauthorized", "Unauthorized");
    }
    if path == "/version" {
        let minor = s.git_version.trim_start_matches('v').split('.').nth(1).unwrap_or("0").to_string();
        return ok(json!({"major": "1", "minor": minor, "gitVersion": s.git_version, "gitCommit": "0000000", "gitTreeState": "clean",
            "buildDate": "2026-01-01T00:00:00Z", "goVersion": "go1.24.0", "compiler": "gc", "platform": "linux/amd64"}));
    }
    // Split `/api/v1/...` or `/apis/G/V/...` into prefix and the rest.
    let segs: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let (prefix, rest) = match segs.as_slice() {
        ["api", v, rest @ ..] => (format!("/api/{v}"), rest.to_vec()),
        ["apis", g, v, rest @ ..] => (format!("/apis/{g}/{v}"), rest.to_vec()),
        _ => return status(StatusCode::NOT_FOUND, "NotFound", "the server could not find the requested resource"),
    };
    let (ns, plural, name): (Option<&str>, &str, Option<&str>) = match rest.as_slice() {
        ["namespaces"] => (None, "namespaces", None),
        ["namespaces", n] => (None, "namespaces", Some(n)),
        ["namespaces", ns, plural] => (Some(ns), plural, None),
        ["namespaces", ns, plural, name] => (Some(ns), plural, Some(name)),
        [plural] => (None, plural, None),
        [plural, name] => (None, plural, Some(name)),
        _ => return status(StatusCode::NOT_FOUND, "NotFound", "the server could not find the requested resource"),
    };
    if s.forbidden.contains(plural) {
        let verb = if name.is_some() { "get" } else { "list" };
        let scope = match ns {
            Some(ns) => format!("in the namespace \"{ns}\""),
            None => "at the cluster scope".to_string(),
        };
        let group = prefix.strip_prefix("/apis/").and_then(|g| g.split('/').next()).unwrap_or("");
        let msg = format!("{plural} is forbidden: User \"system:serviceaccount:kubewhy:kubewhy\" cannot {verb} resource \"{plural}\" in API group \"{group}\" {scope}");
        return status(StatusCode::FORBIDDEN, "Forbidden", &msg);
    }
    let matching: Vec<&Stored> = s
        .objects
        .items
        .iter()
        .filter(|o| o.prefix == prefix && o.plural == plural && (ns.is_none() || o.namespace.as_deref() == ns))
        .collect();
    if let Some(name) = name {
        return match matching.iter().find(|o| o.name == name) {
            Some(o) => ok(o.value.clone()),
            None => status(StatusCode::NOT_FOUND, "NotFound", &format!("{plural} \"{name}\" not found")),
        };
    }
    let selector = query_param(&query, "fieldSelector").unwrap_or_default();
    let mut items: Vec<&Stored> = matching
        .into_iter()
        .filter(|o| {
            selector.split(',').filter(|t| !t.is_empty()).all(|term| match term.split_once('=') {
                Some((k, v)) => field(&o.value, k).as_deref() == Some(v),
                None => true,
            })
        })
        .collect();
    items.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    let list_kind = items.first().map(|o| o.list_kind.clone()).unwrap_or_else(|| "List".into());
    let limit = query_param(&query, "limit").and_then(|l| l.parse::<usize>().ok()).filter(|l| *l > 0).unwrap_or(usize::MAX);
    let start = query_param(&query, "continue").and_then(|c| c.parse::<usize>().ok()).unwrap_or(0);
    let end = start.saturating_add(limit).min(items.len());
    let page: Vec<Value> = items[start.min(end)..end].iter().map(|o| o.value.clone()).collect();
    let mut meta = json!({"resourceVersion": "1000"});
    if end < items.len() {
        meta["continue"] = json!(end.to_string());
    }
    ok(json!({"kind": list_kind, "apiVersion": prefix.trim_start_matches("/api/").trim_start_matches("/apis/"), "metadata": meta, "items": page}))
}
