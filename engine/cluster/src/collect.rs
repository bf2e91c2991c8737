//! Collectors: what to read for a scan and for one object, over [`Cluster`] (the same code
//! for a live cluster and a snapshot).
//!
//! - [`scan`] lists every [`ResourceKind`] in the scope (cluster-scoped kinds always).
//! - [`object`] reads one object (`verify pod/web-0`), its events, its owners up the
//!   `ownerReferences` chain, and what it depends on: for a Pod its Node, PVCs with their
//!   StorageClass and PV, the Services selecting it, the webhook configurations whose rules
//!   match it, and, when it is not bound to a node, all Nodes and Pods (so the scheduler's
//!   view can be rebuilt); for a Service the Pods and EndpointSlices of its namespace; for a
//!   PVC its StorageClass, the PVs and the Pods using it; for a Node its Pods and Lease; for a
//!   workload its Pods and ReplicaSets.
//!
//! A kind that cannot be read is recorded in [`ClusterState::unavailable`] with the reason
//! (a 403 names the permission) plus a notice; collection always goes on.

use crate::source::{Cluster, FieldFilter, ReadError, Scope};
use crate::state::{ClusterState, ObjectRef, ResourceKind};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use std::collections::{BTreeMap, BTreeSet};

/// What a collector read.
#[derive(Debug, Clone)]
pub struct Collected {
    /// The objects, version, observation time and unavailable kinds.
    pub state: ClusterState,
    /// Sentences for people: kinds that could not be read and why, a missing version.
    pub notices: Vec<String>,
    /// The object asked about ([`object`] only).
    pub target: Option<ObjectRef>,
    /// The target and every object read because it is related to it: owners, node, PVCs,
    /// StorageClasses, PVs, selecting Services, matching webhooks, owned Pods ([`object`] only).
    pub related: BTreeSet<ObjectRef>,
    /// API requests sent (0 for a snapshot).
    pub api_calls: u64,
}

/// Progress of a scan: after each kind, the kind, how many kinds are done and how many in all.
pub type Progress<'a> = &'a mut (dyn FnMut(ResourceKind, usize, usize) + Send);

/// Errors of [`object`].
#[derive(Debug, thiserror::Error)]
pub enum CollectError {
    /// The object does not exist.
    #[error("{0} not found")]
    NotFound(String),
    /// The object itself could not be read.
    #[error(transparent)]
    Read(#[from] ReadError),
}

struct Reader<'a> {
    cluster: &'a Cluster,
    state: ClusterState,
    notices: Vec<String>,
    /// Kinds read at least once without error.
    ok: BTreeSet<ResourceKind>,
    failed: BTreeMap<ResourceKind, ReadError>,
}

impl<'a> Reader<'a> {
    fn new(cluster: &'a Cluster) -> Self {
        Reader { cluster, state: ClusterState::default(), notices: Vec::new(), ok: BTreeSet::new(), failed: BTreeMap::new() }
    }

    async fn version(&mut self) {
        match self.cluster.server_version().await {
            Ok(Some((v, g))) => {
                self.state.version = Some(v);
                self.state.git_version = Some(g);
            }
            Ok(None) => self.notices.push("the server version is unknown (the snapshot has no version.json)".into()),
            Err(e) => self.notices.push(format!("the server version is unknown: {e}")),
        }
    }

    async fn list(&mut self, kind: ResourceKind, scope: &Scope, filter: Option<&FieldFilter>) -> bool {
        if self.failed.contains_key(&kind) {
            return false;
        }
        match self.cluster.list(kind, scope, filter, &mut self.state).await {
            Ok(_) => {
                self.ok.insert(kind);
                true
            }
            Err(e) => {
                self.fail(kind, e);
                false
            }
        }
    }

    async fn get(&mut self, kind: ResourceKind, namespace: Option<&str>, name: &str) -> bool {
        if self.failed.contains_key(&kind) {
            return false;
        }
        match self.cluster.get(kind, namespace, name, &mut self.state).await {
            Ok(found) => {
                self.ok.insert(kind);
                found
            }
            Err(e) => {
                self.fail(kind, e);
                false
            }
        }
    }

    fn fail(&mut self, kind: ResourceKind, e: ReadError) {
        tracing::info!(kind = %kind, error = %e, "kind unavailable");
        if let Cluster::Snapshot(_) = self.cluster {
            // One notice for all the kinds a snapshot lacks (see `finish`).
            self.failed.insert(kind, e);
            return;
        }
        self.notices.push(match &e {
            ReadError::Forbidden(m) => format!("{m} (probes that need {} report unknown)", kind.plural()),
            other => format!("{other} (probes that need {} report unknown)", kind.plural()),
        });
        self.failed.insert(kind, e);
    }

    fn finish(mut self, target: Option<ObjectRef>, related: BTreeSet<ObjectRef>) -> Collected {
        self.state.dedup();
        if let Cluster::Snapshot(s) = self.cluster {
            let mut notices = s.notices.clone();
            if !self.failed.is_empty() {
                let kinds: Vec<&str> = self.failed.keys().map(|k| k.plural()).collect();
                notices.push(format!("the snapshot has no {} (probes that need them report unknown)", kinds.join(", ")));
            }
            notices.append(&mut self.notices);
            self.notices = notices;
        }
        for (kind, e) in &self.failed {
            self.state.unavailable.insert(*kind, e.unavailable());
            self.state.loaded.remove(kind);
        }
        for kind in &self.ok {
            if !self.failed.contains_key(kind) {
                self.state.loaded.insert(*kind);
            }
        }
        self.state.observed_at = match self.cluster {
            Cluster::Live(_) => Some(k8s_openapi::jiff::Timestamp::now()),
            Cluster::Snapshot(s) => s.state.observed_at,
        };
        Collected { state: self.state, notices: self.notices, target, related, api_calls: self.cluster.api_calls() }
    }
}

/// Reads every kind in `scope` (cluster-scoped kinds always) and the server version.
/// `progress` is called after each kind.
pub async fn scan(cluster: &Cluster, scope: &Scope, progress: Progress<'_>) -> Collected {
    kinds(cluster, scope, ResourceKind::ALL, progress).await
}

/// Like [`scan`], for the given kinds only (`verify "<symptom>"` reads what the probes of
/// its candidates need).
pub async fn kinds(cluster: &Cluster, scope: &Scope, kinds: &[ResourceKind], progress: Progress<'_>) -> Collected {
    let mut r = Reader::new(cluster);
    r.version().await;
    let total = kinds.len();
    for (i, kind) in kinds.iter().enumerate() {
        r.list(*kind, scope, None).await;
        progress(*kind, i + 1, total);
    }
    if let Scope::Namespace(ns) = scope {
        // Cluster-scoped objects that call a Service (admission webhooks, aggregated
        // APIServices) are judged by that Service's endpoints, wherever it lives: read the
        // Services and EndpointSlices of those namespaces too, or the probes would see a
        // Service with no endpoints only because its namespace was out of scope.
        let mut extra: BTreeSet<String> = BTreeSet::new();
        for w in &r.state.mutating_webhook_configurations {
            extra.extend(w.webhooks.iter().flatten().filter_map(|h| h.client_config.service.as_ref().map(|s| s.namespace.clone())));
        }
        for w in &r.state.validating_webhook_configurations {
            extra.extend(w.webhooks.iter().flatten().filter_map(|h| h.client_config.service.as_ref().map(|s| s.namespace.clone())));
        }
        for a in &r.state.api_services {
            extra.extend(a.spec.as_ref().and_then(|s| s.service.as_ref()).and_then(|s| s.namespace.clone()));
        }
        extra.remove(ns);
        for other in extra {
            let other = Scope::Namespace(other);
            for kind in [ResourceKind::Service, ResourceKind::EndpointSlice, ResourceKind::Pod] {
                if kinds.contains(&kind) {
                    r.list(kind, &other, None).await;
                }
            }
        }
    }
    r.finish(None, BTreeSet::new())
}

fn oref(kind: ResourceKind, meta: &ObjectMeta) -> ObjectRef {
    ObjectRef::new(kind, meta)
}

/// Whether a Service's `spec.selector` selects a Pod's labels (an empty or absent selector
/// selects nothing: such a Service has manually managed endpoints).
pub fn service_selects(svc: &k8s_openapi::api::core::v1::Service, pod: &Pod) -> bool {
    let Some(sel) = svc.spec.as_ref().and_then(|s| s.selector.as_ref()).filter(|s| !s.is_empty()) else {
        return false;
    };
    if svc.metadata.namespace != pod.metadata.namespace {
        return false;
    }
    let labels = pod.metadata.labels.clone().unwrap_or_default();
    sel.iter().all(|(k, v)| labels.get(k) == Some(v))
}

/// Whether a webhook rule (`apiGroups`, `resources`) covers `kind`. Operations and
/// selectors are not evaluated: a webhook that could intercept the kind is related.
fn rule_covers(groups: &[String], resources: &[String], kind: ResourceKind) -> bool {
    let g = groups.iter().any(|g| g == "*" || g == kind.group());
    let r = resources.iter().any(|r| {
        let base = r.split('/').next().unwrap_or("");
        base == "*" || base == kind.plural()
    });
    g && r
}

/// Names of the webhook configurations whose rules cover `kind`, mutating then validating.
fn matching_webhooks(state: &ClusterState, kind: ResourceKind) -> Vec<ObjectRef> {
    let mut out = Vec::new();
    for c in &state.mutating_webhook_configurations {
        let hit = c.webhooks.iter().flatten().flat_map(|w| w.rules.iter().flatten()).any(|r| {
            rule_covers(r.api_groups.as_deref().unwrap_or(&[]), r.resources.as_deref().unwrap_or(&[]), kind)
        });
        if hit {
            out.push(oref(ResourceKind::MutatingWebhookConfiguration, &c.metadata));
        }
    }
    for c in &state.validating_webhook_configurations {
        let hit = c.webhooks.iter().flatten().flat_map(|w| w.rules.iter().flatten()).any(|r| {
            rule_covers(r.api_groups.as_deref().unwrap_or(&[]), r.resources.as_deref().unwrap_or(&[]), kind)
        });
        if hit {
            out.push(oref(ResourceKind::ValidatingWebhookConfiguration, &c.metadata));
        }
    }
    out
}

fn find_meta(state: &ClusterState, kind: ResourceKind, ns: Option<&str>, name: &str) -> Option<ObjectMeta> {
    state
        .metas(kind)
        .into_iter()
        .find(|m| m.name.as_deref() == Some(name) && (!kind.namespaced() || m.namespace.as_deref() == ns))
        .cloned()
}

/// Reads one object and what it depends on (see the module doc).
///
/// `namespace` is ignored for cluster-scoped kinds.
///
/// # Errors
/// [`CollectError::NotFound`] when the object does not exist; [`CollectError::Read`] when
/// the object itself cannot be read (a failure on a related kind is a notice instead).
pub async fn object(cluster: &Cluster, kind: ResourceKind, namespace: &str, name: &str) -> Result<Collected, CollectError> {
    let ns_opt = if kind.namespaced() { Some(namespace) } else { None };
    let ns_scope = Scope::Namespace(namespace.to_string());
    let mut r = Reader::new(cluster);
    r.version().await;
    let found = cluster.get(kind, ns_opt, name, &mut r.state).await?;
    if !found {
        let what = match ns_opt {
            Some(ns) => format!("{} {name} in namespace \"{ns}\"", kind.kind()),
            None => format!("{} {name}", kind.kind()),
        };
        return Err(CollectError::NotFound(what));
    }
    r.ok.insert(kind);
    let target = ObjectRef { kind, namespace: ns_opt.map(str::to_string), name: name.to_string() };
    let mut related = BTreeSet::from([target.clone()]);

    // Events about it (cluster-scoped objects' events are usually in `default`: look everywhere).
    let ev_scope = if kind.namespaced() { ns_scope.clone() } else { Scope::All };
    r.list(ResourceKind::Event, &ev_scope, Some(&FieldFilter::InvolvedObject { kind: kind.kind().to_string(), name: name.to_string() }))
        .await;

    // Owners, up the chain (ReplicaSet -> Deployment, Job -> CronJob), at most 5 levels.
    let mut current = find_meta(&r.state, kind, ns_opt, name);
    for _ in 0..5 {
        let Some(meta) = current.take() else { break };
        let Some(owner) = meta.owner_references.iter().flatten().find(|o| o.controller == Some(true)).or_else(|| meta.owner_references.iter().flatten().next()).cloned() else {
            break;
        };
        let Some(ok) = ResourceKind::ALL.iter().copied().find(|k| k.kind() == owner.kind) else { break };
        let ons = if ok.namespaced() { meta.namespace.as_deref() } else { None };
        if r.get(ok, ons, &owner.name).await {
            related.insert(ObjectRef { kind: ok, namespace: ons.map(str::to_string), name: owner.name.clone() });
            current = find_meta(&r.state, ok, ons, &owner.name);
        }
    }

    match kind {
        ResourceKind::Pod => pod_dependencies(&mut r, &ns_scope, namespace, name, &mut related).await,
        ResourceKind::Service => {
            r.list(ResourceKind::Pod, &ns_scope, None).await;
            r.list(ResourceKind::EndpointSlice, &ns_scope, None).await;
            let svc = r.state.services.iter().find(|s| s.metadata.name.as_deref() == Some(name)).cloned();
            if let Some(svc) = svc {
                for p in r.state.pods.iter().filter(|p| service_selects(&svc, p)) {
                    related.insert(oref(ResourceKind::Pod, &p.metadata));
                }
            }
            for s in &r.state.endpoint_slices {
                let owner = s.metadata.labels.as_ref().and_then(|l| l.get("kubernetes.io/service-name"));
                if owner.map(String::as_str) == Some(name) {
                    related.insert(oref(ResourceKind::EndpointSlice, &s.metadata));
                }
            }
            r.list(ResourceKind::NetworkPolicy, &ns_scope, None).await;
        }
        ResourceKind::PersistentVolumeClaim => {
            r.list(ResourceKind::StorageClass, &Scope::All, None).await;
            r.list(ResourceKind::CSIDriver, &Scope::All, None).await;
            r.list(ResourceKind::Pod, &ns_scope, None).await;
            r.list(ResourceKind::Node, &Scope::All, None).await;
            r.list(ResourceKind::VolumeAttachment, &Scope::All, None).await;
            r.list(ResourceKind::PersistentVolume, &Scope::All, None).await;
            claim_dependencies(&mut r, namespace, name, &mut related).await;
            let users: Vec<ObjectRef> = r
                .state
                .pods
                .iter()
                .filter(|p| pod_claims(p).iter().any(|c| c == name))
                .map(|p| oref(ResourceKind::Pod, &p.metadata))
                .collect();
            related.extend(users);
        }
        ResourceKind::Node => {
            r.list(ResourceKind::Pod, &Scope::All, Some(&FieldFilter::PodsOnNode(name.to_string()))).await;
            if r.get(ResourceKind::Lease, Some("kube-node-lease"), name).await {
                related.insert(ObjectRef { kind: ResourceKind::Lease, namespace: Some("kube-node-lease".into()), name: name.to_string() });
            }
            r.list(ResourceKind::VolumeAttachment, &Scope::All, None).await;
            let pods: Vec<ObjectRef> = r.state.pods.iter().map(|p| oref(ResourceKind::Pod, &p.metadata)).collect();
            related.extend(pods);
        }
        ResourceKind::Deployment
        | ResourceKind::ReplicaSet
        | ResourceKind::StatefulSet
        | ResourceKind::DaemonSet
        | ResourceKind::Job
        | ResourceKind::CronJob => {
            r.list(ResourceKind::ReplicaSet, &ns_scope, None).await;
            r.list(ResourceKind::Job, &ns_scope, None).await;
            r.list(ResourceKind::Pod, &ns_scope, None).await;
            r.list(ResourceKind::Event, &ns_scope, None).await;
            r.list(ResourceKind::HorizontalPodAutoscaler, &ns_scope, None).await;
            r.list(ResourceKind::PodDisruptionBudget, &ns_scope, None).await;
            r.list(ResourceKind::ResourceQuota, &ns_scope, None).await;
            r.list(ResourceKind::Node, &Scope::All, None).await;
            r.list(ResourceKind::PriorityClass, &Scope::All, None).await;
            r.list(ResourceKind::MutatingWebhookConfiguration, &Scope::All, None).await;
            r.list(ResourceKind::ValidatingWebhookConfiguration, &Scope::All, None).await;
            // Owned objects, down two levels (Deployment -> ReplicaSet -> Pod, CronJob -> Job -> Pod).
            let mut owners: BTreeSet<String> = BTreeSet::from([name.to_string()]);
            for _ in 0..2 {
                let mut next = BTreeSet::new();
                for (k, metas) in [
                    (ResourceKind::ReplicaSet, r.state.metas(ResourceKind::ReplicaSet)),
                    (ResourceKind::Job, r.state.metas(ResourceKind::Job)),
                    (ResourceKind::Pod, r.state.metas(ResourceKind::Pod)),
                ] {
                    for m in metas {
                        if m.owner_references.iter().flatten().any(|o| owners.contains(&o.name)) {
                            related.insert(oref(k, m));
                            next.insert(m.name.clone().unwrap_or_default());
                        }
                    }
                }
                owners.extend(next);
            }
            for w in matching_webhooks(&r.state, ResourceKind::Pod) {
                related.insert(w);
            }
        }
        _ => {}
    }
    Ok(r.finish(Some(target), related))
}

fn pod_claims(p: &Pod) -> Vec<String> {
    p.spec
        .iter()
        .flat_map(|s| s.volumes.iter().flatten())
        .filter_map(|v| v.persistent_volume_claim.as_ref().map(|c| c.claim_name.clone()))
        .collect()
}

async fn claim_dependencies(r: &mut Reader<'_>, namespace: &str, claim: &str, related: &mut BTreeSet<ObjectRef>) {
    if !r.state.persistent_volume_claims.iter().any(|c| c.metadata.name.as_deref() == Some(claim) && c.metadata.namespace.as_deref() == Some(namespace))
        && !r.get(ResourceKind::PersistentVolumeClaim, Some(namespace), claim).await
    {
        return;
    }
    related.insert(ObjectRef { kind: ResourceKind::PersistentVolumeClaim, namespace: Some(namespace.to_string()), name: claim.to_string() });
    let Some(pvc) = r
        .state
        .persistent_volume_claims
        .iter()
        .find(|c| c.metadata.name.as_deref() == Some(claim) && c.metadata.namespace.as_deref() == Some(namespace))
        .cloned()
    else {
        return;
    };
    let spec = pvc.spec.unwrap_or_default();
    match spec.storage_class_name.as_deref() {
        Some(sc) if !sc.is_empty() => {
            related.insert(ObjectRef { kind: ResourceKind::StorageClass, namespace: None, name: sc.to_string() });
        }
        Some(_) => {}
        None => {
            // No class named: the default StorageClass (annotation
            // storageclass.kubernetes.io/is-default-class) applies.
            let default: Vec<ObjectRef> = r
                .state
                .storage_classes
                .iter()
                .filter(|s| {
                    s.metadata.annotations.as_ref().and_then(|a| a.get("storageclass.kubernetes.io/is-default-class")).map(String::as_str)
                        == Some("true")
                })
                .map(|s| oref(ResourceKind::StorageClass, &s.metadata))
                .collect();
            related.extend(default);
        }
    }
    if let Some(pv) = spec.volume_name.as_deref().filter(|v| !v.is_empty()) {
        let listed = r.state.persistent_volumes.iter().any(|p| p.metadata.name.as_deref() == Some(pv));
        if listed || r.get(ResourceKind::PersistentVolume, None, pv).await {
            related.insert(ObjectRef { kind: ResourceKind::PersistentVolume, namespace: None, name: pv.to_string() });
        }
    }
}

async fn pod_dependencies(r: &mut Reader<'_>, ns_scope: &Scope, namespace: &str, name: &str, related: &mut BTreeSet<ObjectRef>) {
    let Some(pod) = r.state.pods.iter().find(|p| p.metadata.name.as_deref() == Some(name)).cloned() else {
        return;
    };
    let node = pod.spec.as_ref().and_then(|s| s.node_name.clone()).filter(|n| !n.is_empty());
    match &node {
        Some(n) => {
            if r.get(ResourceKind::Node, None, n).await {
                related.insert(ObjectRef { kind: ResourceKind::Node, namespace: None, name: n.clone() });
            }
            if r.get(ResourceKind::Lease, Some("kube-node-lease"), n).await {
                related.insert(ObjectRef { kind: ResourceKind::Lease, namespace: Some("kube-node-lease".into()), name: n.clone() });
            }
        }
        None => {
            // Not bound: the scheduler's view needs every node and what is already on them.
            r.list(ResourceKind::Node, &Scope::All, None).await;
            r.list(ResourceKind::Pod, &Scope::All, None).await;
            r.list(ResourceKind::PriorityClass, &Scope::All, None).await;
            let nodes: Vec<ObjectRef> = r.state.nodes.iter().map(|n| oref(ResourceKind::Node, &n.metadata)).collect();
            related.extend(nodes);
        }
    }
    let claims = pod_claims(&pod);
    if claims.is_empty() {
        // The pod mounts no claim, so for this pod the claim kinds are completely known:
        // there is nothing of them to read, and the volume probes can say "does not hold".
        for kind in [ResourceKind::PersistentVolumeClaim, ResourceKind::PersistentVolume, ResourceKind::StorageClass] {
            r.ok.insert(kind);
        }
    } else {
        r.list(ResourceKind::StorageClass, &Scope::All, None).await;
        r.list(ResourceKind::CSIDriver, &Scope::All, None).await;
        r.list(ResourceKind::VolumeAttachment, &Scope::All, None).await;
        // All PVs: the volume binder's candidates for an unbound claim, and their node affinity.
        r.list(ResourceKind::PersistentVolume, &Scope::All, None).await;
        for c in &claims {
            claim_dependencies(r, namespace, c, related).await;
        }
    }
    r.list(ResourceKind::Service, ns_scope, None).await;
    r.list(ResourceKind::EndpointSlice, ns_scope, None).await;
    let selecting: Vec<ObjectRef> = r
        .state
        .services
        .iter()
        .filter(|s| service_selects(s, &pod))
        .map(|s| oref(ResourceKind::Service, &s.metadata))
        .collect();
    for s in &selecting {
        for e in &r.state.endpoint_slices {
            if e.metadata.labels.as_ref().and_then(|l| l.get("kubernetes.io/service-name")) == Some(&s.name) {
                related.insert(oref(ResourceKind::EndpointSlice, &e.metadata));
            }
        }
    }
    related.extend(selecting);
    r.list(ResourceKind::MutatingWebhookConfiguration, &Scope::All, None).await;
    r.list(ResourceKind::ValidatingWebhookConfiguration, &Scope::All, None).await;
    for w in matching_webhooks(&r.state, ResourceKind::Pod) {
        related.insert(w);
    }
    r.list(ResourceKind::ResourceQuota, ns_scope, None).await;
    r.list(ResourceKind::LimitRange, ns_scope, None).await;
    r.list(ResourceKind::PodDisruptionBudget, ns_scope, None).await;
    r.list(ResourceKind::NetworkPolicy, ns_scope, None).await;
    if r.get(ResourceKind::Namespace, None, namespace).await {
        related.insert(ObjectRef { kind: ResourceKind::Namespace, namespace: None, name: namespace.to_string() });
    }
}
