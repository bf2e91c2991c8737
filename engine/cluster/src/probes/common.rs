//! Helpers the probes share: object references, events of an object, ages measured
//! against [`ClusterState::observed_at`], quantities, label selectors, node selectors,
//! taints and tolerations, and a pod's effective resource requests.
//!
//! The matching rules follow the API semantics: label selectors as in
//! `kubernetes/kubernetes:staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/helpers.go`
//! (`LabelSelectorAsSelector`), node selector terms as in
//! `kubernetes/kubernetes:staging/src/k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go`,
//! tolerations as in `kubernetes/kubernetes:staging/src/k8s.io/api/core/v1/toleration.go`
//! (`ToleratesTaint`), and effective requests as in
//! `kubernetes/kubernetes:staging/src/k8s.io/component-helpers/resource/helpers.go` (`PodRequests`).

use super::{Evidence, Finding};
use crate::state::{ClusterState, ObjectRef, ResourceKind};
use k8s_openapi::api::core::v1::{
    Container, Event, Node, NodeSelectorRequirement, NodeSelectorTerm, Pod, PodCondition, Taint, Toleration,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, Time};
use std::collections::BTreeMap;

/// Namespaces the cluster itself runs in; several probes leave them out because what is
/// a misconfiguration in an application namespace is the norm there.
pub(crate) const SYSTEM_NAMESPACES: &[&str] = &["kube-system", "kube-public", "kube-node-lease"];

/// Whether `ns` is one of [`SYSTEM_NAMESPACES`].
pub(crate) fn is_system_namespace(ns: Option<&str>) -> bool {
    ns.is_some_and(|n| SYSTEM_NAMESPACES.contains(&n))
}

/// The reference of a pod.
pub(crate) fn pod_ref(p: &Pod) -> ObjectRef {
    ObjectRef::new(ResourceKind::Pod, &p.metadata)
}

/// The reference of any object of `kind`.
pub(crate) fn obj_ref(kind: ResourceKind, meta: &ObjectMeta) -> ObjectRef {
    ObjectRef::new(kind, meta)
}

/// A finding with its evidence.
pub(crate) fn finding(object: ObjectRef, summary: impl Into<String>, evidence: Vec<Evidence>) -> Finding {
    Finding { object, summary: summary.into(), evidence }
}

/// `phase` is `Succeeded` or `Failed`: the pod will not run again.
pub(crate) fn is_terminal(p: &Pod) -> bool {
    matches!(p.status.as_ref().and_then(|s| s.phase.as_deref()), Some("Succeeded" | "Failed"))
}

/// The pod's phase, or `""`.
/// Whether a DaemonSet controls the pod (an owner reference of kind `DaemonSet` with
/// `controller: true`, or any DaemonSet owner when `controller` is unset).
pub(crate) fn daemonset_owned(p: &Pod) -> bool {
    p.metadata
        .owner_references
        .iter()
        .flatten()
        .any(|o| o.kind == "DaemonSet" && o.controller.unwrap_or(true))
}

pub(crate) fn phase(p: &Pod) -> &str {
    p.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or("")
}

/// The pod is bound to no node yet.
pub(crate) fn unbound(p: &Pod) -> bool {
    p.spec.as_ref().and_then(|s| s.node_name.as_deref()).is_none_or(str::is_empty)
}

/// The node the pod is bound to.
pub(crate) fn node_name(p: &Pod) -> Option<&str> {
    p.spec.as_ref().and_then(|s| s.node_name.as_deref()).filter(|n| !n.is_empty())
}

/// A pod condition by type.
pub(crate) fn pod_condition<'a>(p: &'a Pod, type_: &str) -> Option<&'a PodCondition> {
    p.status.as_ref()?.conditions.as_ref()?.iter().find(|c| c.type_ == type_)
}

/// The pod's `PodScheduled` condition when it is `False` with reason `Unschedulable`: the
/// scheduler tried every node and none fits (reason constant `PodReasonUnschedulable`,
/// `kubernetes/kubernetes:staging/src/k8s.io/api/core/v1/types.go`).
pub(crate) fn unschedulable_condition(p: &Pod) -> Option<&PodCondition> {
    pod_condition(p, "PodScheduled").filter(|c| c.status == "False" && c.reason.as_deref() == Some("Unschedulable"))
}

/// A node condition by type.
pub(crate) fn node_condition<'a>(n: &'a Node, type_: &str) -> Option<&'a k8s_openapi::api::core::v1::NodeCondition> {
    n.status.as_ref()?.conditions.as_ref()?.iter().find(|c| c.type_ == type_)
}

/// The node's `Ready` condition status (`True`, `False`, `Unknown`), or `None`.
pub(crate) fn node_ready(n: &Node) -> Option<&str> {
    node_condition(n, "Ready").map(|c| c.status.as_str())
}

/// Seconds from `t` to the state's `observed_at` (`None` when either is unknown).
pub(crate) fn age_secs(state: &ClusterState, t: Option<&Time>) -> Option<i64> {
    let now = state.observed_at?;
    let t = t?.0;
    Some(now.as_second() - t.as_second())
}

/// Whether the object was created at least `secs` before the state was observed.
/// Unknown ages count as old enough: a snapshot without timestamps still gets verdicts.
pub(crate) fn older_than(state: &ClusterState, meta: &ObjectMeta, secs: i64) -> bool {
    age_secs(state, meta.creation_timestamp.as_ref()).is_none_or(|a| a >= secs)
}

/// A duration in seconds for people ("3h12m", "45s").
pub(crate) fn human_secs(s: i64) -> String {
    let s = s.max(0);
    if s >= 86_400 {
        format!("{}d{}h", s / 86_400, (s % 86_400) / 3600)
    } else if s >= 3600 {
        format!("{}h{}m", s / 3600, (s % 3600) / 60)
    } else if s >= 60 {
        format!("{}m{}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

/// Events whose `involvedObject` is this object (kind, namespace, name; and uid when both
/// carry one, so an event of an earlier object with the same name is not counted), newest
/// last.
pub(crate) fn events_for<'a>(state: &'a ClusterState, kind: &str, meta: &ObjectMeta) -> Vec<&'a Event> {
    let mut v: Vec<&Event> = state
        .events
        .iter()
        .filter(|e| {
            let o = &e.involved_object;
            o.kind.as_deref() == Some(kind)
                && o.name == meta.name
                && (o.namespace.as_deref().unwrap_or("") == meta.namespace.as_deref().unwrap_or(""))
                && match (&o.uid, &meta.uid) {
                    (Some(a), Some(b)) => a == b,
                    _ => true,
                }
        })
        .collect();
    v.sort_by_key(|e| event_time(e));
    v
}

/// Events indexed by `involvedObject` (kind, namespace, name), built once per probe run
/// so that looking up the events of many objects stays linear in the number of events.
pub(crate) struct EventIndex<'a> {
    by_object: std::collections::HashMap<(&'a str, &'a str, &'a str), Vec<&'a Event>>,
}

impl<'a> EventIndex<'a> {
    /// Indexes every event of the state.
    pub(crate) fn new(state: &'a ClusterState) -> EventIndex<'a> {
        let mut by_object: std::collections::HashMap<(&str, &str, &str), Vec<&Event>> = std::collections::HashMap::new();
        for e in &state.events {
            let o = &e.involved_object;
            let key = (o.kind.as_deref().unwrap_or(""), o.namespace.as_deref().unwrap_or(""), o.name.as_deref().unwrap_or(""));
            by_object.entry(key).or_default().push(e);
        }
        for v in by_object.values_mut() {
            v.sort_by_key(|e| event_time(e));
        }
        EventIndex { by_object }
    }

    /// Like [`events_for`]: the object's events (uid-checked), oldest first.
    pub(crate) fn of(&self, kind: &str, meta: &ObjectMeta) -> Vec<&'a Event> {
        let key = (kind, meta.namespace.as_deref().unwrap_or(""), meta.name.as_deref().unwrap_or(""));
        self.by_object
            .get(&key)
            .map(|v| {
                v.iter()
                    .copied()
                    .filter(|e| match (&e.involved_object.uid, &meta.uid) {
                        (Some(a), Some(b)) => a == b,
                        _ => true,
                    })
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// An event's last time: `series.lastObservedTime` (events.k8s.io-style series, where
/// `lastTimestamp` stays unset), else `lastTimestamp`, else `eventTime`, else
/// `firstTimestamp`.
pub(crate) fn event_time(e: &Event) -> Option<k8s_openapi::jiff::Timestamp> {
    e.series
        .as_ref()
        .and_then(|s| s.last_observed_time.as_ref())
        .map(|t| t.0)
        .or_else(|| e.last_timestamp.as_ref().map(|t| t.0))
        .or_else(|| e.event_time.as_ref().map(|t| t.0))
        .or_else(|| e.first_timestamp.as_ref().map(|t| t.0))
}

/// Events of the object with this reason whose message contains `needle` (any message
/// when `needle` is empty).
pub(crate) fn events_matching<'a>(
    state: &'a ClusterState,
    kind: &str,
    meta: &ObjectMeta,
    reason: &str,
    needle: &str,
) -> Vec<&'a Event> {
    events_for(state, kind, meta)
        .into_iter()
        .filter(|e| e.reason.as_deref() == Some(reason) && e.message.as_deref().unwrap_or("").contains(needle))
        .collect()
}

/// Evidence from an event: `reason` with its count and message.
pub(crate) fn event_evidence(e: &Event) -> Evidence {
    let obj = ObjectRef { kind: ResourceKind::Event, namespace: e.metadata.namespace.clone(), name: e.metadata.name.clone().unwrap_or_default() };
    let count = e.count.unwrap_or(1);
    Evidence::new(
        obj,
        "message",
        format!("{} (x{count}): {}", e.reason.as_deref().unwrap_or(""), e.message.as_deref().unwrap_or("")),
    )
}

/// A Kubernetes quantity ("100m", "2Gi", "1.5", "1e3") as a number of base units
/// (cores, bytes); `None` when it does not parse. Suffixes as in
/// `kubernetes/kubernetes:staging/src/k8s.io/apimachinery/pkg/api/resource/quantity.go`.
pub(crate) fn quantity(s: &str) -> Option<f64> {
    let s = s.trim();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-')).unwrap_or(s.len());
    let (num, suffix) = s.split_at(split);
    let base: f64 = num.parse().ok()?;
    let mult = match suffix {
        "" => 1.0,
        "n" => 1e-9,
        "u" => 1e-6,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024.0,
        "Mi" => 1024.0 * 1024.0,
        "Gi" => 1024.0 * 1024.0 * 1024.0,
        "Ti" => 1024.0f64.powi(4),
        "Pi" => 1024.0f64.powi(5),
        "Ei" => 1024.0f64.powi(6),
        e if e.starts_with(['e', 'E']) => 10f64.powi(e[1..].parse().ok()?),
        _ => return None,
    };
    Some(base * mult)
}

/// A resource amount for people: cores as `1.5` / `250m`, bytes as `2Gi` / `512Mi`.
pub(crate) fn show_amount(resource: &str, v: f64) -> String {
    if resource == "cpu" {
        if v >= 1.0 && (v * 1000.0).round() % 1000.0 == 0.0 {
            format!("{}", v as i64)
        } else {
            format!("{}m", (v * 1000.0).round() as i64)
        }
    } else if resource == "memory" || resource.ends_with("storage") {
        let gi = 1024.0 * 1024.0 * 1024.0;
        let mi = 1024.0 * 1024.0;
        if v >= gi && (v / gi * 10.0).round() % 10.0 == 0.0 {
            format!("{}Gi", (v / gi).round() as i64)
        } else if v >= gi {
            format!("{:.1}Gi", v / gi)
        } else {
            format!("{}Mi", (v / mi).round() as i64)
        }
    } else {
        format!("{}", (v * 1000.0).round() / 1000.0)
    }
}

fn container_requests(c: &Container) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    if let Some(r) = &c.resources {
        // The API server defaults requests to limits where only limits are set; read both
        // so objects written by hand (or not defaulted) count the same.
        if let Some(l) = &r.limits {
            for (k, q) in l {
                if let Some(v) = quantity(&q.0) {
                    out.insert(k.clone(), v);
                }
            }
        }
        if let Some(rq) = &r.requests {
            for (k, q) in rq {
                if let Some(v) = quantity(&q.0) {
                    out.insert(k.clone(), v);
                }
            }
        }
    }
    out
}

/// The pod's effective requests by resource name: the sum over app containers and
/// sidecars (init containers with `restartPolicy: Always`), or the largest classic init
/// container plus the sidecars started before it, whichever is larger; then pod-level
/// `spec.resources.requests` for cpu, memory and hugepages-* in place of that sum; plus
/// `spec.overhead` (`PodRequests` in
/// `kubernetes/kubernetes:staging/src/k8s.io/component-helpers/resource/helpers.go`).
/// Units: cores for `cpu`, bytes for `memory`, counts otherwise.
pub(crate) fn pod_requests(p: &Pod) -> BTreeMap<String, f64> {
    let mut out: BTreeMap<String, f64> = BTreeMap::new();
    let Some(spec) = &p.spec else { return out };
    for c in &spec.containers {
        for (k, v) in container_requests(c) {
            *out.entry(k).or_default() += v;
        }
    }
    let mut sidecars: BTreeMap<String, f64> = BTreeMap::new();
    let mut init_max: BTreeMap<String, f64> = BTreeMap::new();
    for c in spec.init_containers.iter().flatten() {
        let req = container_requests(c);
        if c.restart_policy.as_deref() == Some("Always") {
            for (k, v) in req {
                *sidecars.entry(k.clone()).or_default() += v;
                *out.entry(k).or_default() += v;
            }
        } else {
            for (k, v) in req {
                let total = v + sidecars.get(&k).copied().unwrap_or(0.0);
                let e = init_max.entry(k).or_default();
                *e = e.max(total);
            }
        }
    }
    for (k, v) in init_max {
        let e = out.entry(k).or_default();
        *e = e.max(v);
    }
    // Pod-level resources (PodLevelResources): `spec.resources.requests` replaces the
    // container sum for the resources it names among cpu, memory and hugepages-*.
    for (k, q) in spec.resources.as_ref().and_then(|r| r.requests.as_ref()).into_iter().flatten() {
        if k == "cpu" || k == "memory" || k.starts_with("hugepages-") {
            if let Some(v) = quantity(&q.0) {
                out.insert(k.clone(), v);
            }
        }
    }
    for (k, q) in spec.overhead.iter().flatten() {
        if let Some(v) = quantity(&q.0) {
            *out.entry(k.clone()).or_default() += v;
        }
    }
    out
}

/// Whether the labels satisfy a `LabelSelector` (matchLabels and matchExpressions with
/// `In`, `NotIn`, `Exists`, `DoesNotExist`). An empty selector matches everything.
pub(crate) fn label_selector_matches(sel: &LabelSelector, labels: &BTreeMap<String, String>) -> bool {
    for (k, v) in sel.match_labels.iter().flatten() {
        if labels.get(k) != Some(v) {
            return false;
        }
    }
    for e in sel.match_expressions.iter().flatten() {
        let have = labels.get(&e.key);
        let values = e.values.as_deref().unwrap_or(&[]);
        let ok = match e.operator.as_str() {
            "In" => have.is_some_and(|h| values.contains(h)),
            "NotIn" => have.is_none_or(|h| !values.contains(h)),
            "Exists" => have.is_some(),
            "DoesNotExist" => have.is_none(),
            _ => false,
        };
        if !ok {
            return false;
        }
    }
    true
}

/// Whether the labels carry every key/value of a map selector (a Service's
/// `spec.selector`). An empty map matches everything.
pub(crate) fn map_selector_matches(sel: &BTreeMap<String, String>, labels: &BTreeMap<String, String>) -> bool {
    sel.iter().all(|(k, v)| labels.get(k) == Some(v))
}

/// Labels of an object (empty when unset).
pub(crate) fn labels(meta: &ObjectMeta) -> BTreeMap<String, String> {
    meta.labels.clone().unwrap_or_default()
}

fn node_requirement_matches(r: &NodeSelectorRequirement, value: Option<&String>) -> bool {
    let values = r.values.as_deref().unwrap_or(&[]);
    match r.operator.as_str() {
        "In" => value.is_some_and(|v| values.contains(v)),
        "NotIn" => value.is_none_or(|v| !values.contains(v)),
        "Exists" => value.is_some(),
        "DoesNotExist" => value.is_none(),
        "Gt" | "Lt" => {
            let (Some(v), Some(bound)) = (value.and_then(|v| v.parse::<i64>().ok()), values.first().and_then(|b| b.parse::<i64>().ok()))
            else {
                return false;
            };
            if r.operator == "Gt" { v > bound } else { v < bound }
        }
        _ => false,
    }
}

/// Whether a node satisfies one `NodeSelectorTerm` (all its matchExpressions on labels
/// and matchFields on `metadata.name`). A term with no requirements matches nothing, as
/// in the scheduler.
pub(crate) fn node_term_matches(term: &NodeSelectorTerm, node: &Node) -> bool {
    let exprs = term.match_expressions.as_deref().unwrap_or(&[]);
    let fields = term.match_fields.as_deref().unwrap_or(&[]);
    if exprs.is_empty() && fields.is_empty() {
        return false;
    }
    let labels = labels(&node.metadata);
    exprs.iter().all(|r| node_requirement_matches(r, labels.get(&r.key)))
        && fields.iter().all(|r| r.key == "metadata.name" && node_requirement_matches(r, node.metadata.name.as_ref()))
}

/// Whether the node satisfies the pod's `spec.nodeSelector` and its required node
/// affinity (`requiredDuringSchedulingIgnoredDuringExecution`: any term).
pub(crate) fn node_matches_pod_affinity(p: &Pod, node: &Node) -> bool {
    let Some(spec) = &p.spec else { return true };
    let labels = labels(&node.metadata);
    if let Some(ns) = &spec.node_selector {
        if !map_selector_matches(ns, &labels) {
            return false;
        }
    }
    let required = spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|n| n.required_during_scheduling_ignored_during_execution.as_ref());
    match required {
        Some(sel) => sel.node_selector_terms.iter().any(|t| node_term_matches(t, node)),
        None => true,
    }
}

/// Whether one toleration tolerates the taint (`ToleratesTaint`: effect empty or equal;
/// key empty with `Exists` matches every key; `Exists` ignores the value; `Equal` (the
/// default) compares it).
pub(crate) fn tolerates(t: &Toleration, taint: &Taint) -> bool {
    if let Some(e) = t.effect.as_deref().filter(|e| !e.is_empty()) {
        if e != taint.effect {
            return false;
        }
    }
    let key = t.key.as_deref().unwrap_or("");
    if !key.is_empty() && key != taint.key {
        return false;
    }
    match t.operator.as_deref().unwrap_or("Equal") {
        "Exists" => true,
        "Equal" | "" => key == taint.key && t.value.as_deref().unwrap_or("") == taint.value.as_deref().unwrap_or(""),
        _ => false,
    }
}

/// The node's taints with effect `NoSchedule` or `NoExecute` that none of the pod's
/// tolerations tolerates (what the TaintToleration filter rejects on).
pub(crate) fn untolerated_taints<'a>(p: &Pod, node: &'a Node) -> Vec<&'a Taint> {
    let tolerations: &[Toleration] = p.spec.as_ref().and_then(|s| s.tolerations.as_deref()).unwrap_or(&[]);
    node.spec
        .as_ref()
        .and_then(|s| s.taints.as_deref())
        .unwrap_or(&[])
        .iter()
        .filter(|t| t.effect == "NoSchedule" || t.effect == "NoExecute")
        .filter(|t| !tolerations.iter().any(|tol| tolerates(tol, t)))
        .collect()
}

/// A taint as `kubectl describe node` shows it: `key=value:Effect`.
pub(crate) fn show_taint(t: &Taint) -> String {
    match t.value.as_deref().filter(|v| !v.is_empty()) {
        Some(v) => format!("{}={v}:{}", t.key, t.effect),
        None => format!("{}:{}", t.key, t.effect),
    }
}

/// Map-to-string for evidence (`app=web,tier=frontend`).
pub(crate) fn show_map(m: &BTreeMap<String, String>) -> String {
    m.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_parse_like_the_api() {
        assert_eq!(quantity("100m"), Some(0.1));
        assert_eq!(quantity("2"), Some(2.0));
        assert_eq!(quantity("1Gi"), Some(1073741824.0));
        assert_eq!(quantity("500M"), Some(5e8));
        assert_eq!(quantity("1e3"), Some(1000.0));
        assert_eq!(quantity("12x"), None);
    }

    #[test]
    fn amounts_show_in_kubectl_units() {
        assert_eq!(show_amount("cpu", 0.25), "250m");
        assert_eq!(show_amount("cpu", 4.0), "4");
        assert_eq!(show_amount("memory", 2.0 * 1073741824.0), "2Gi");
        assert_eq!(show_amount("memory", 512.0 * 1048576.0), "512Mi");
    }

    #[test]
    fn tolerations_follow_tolerates_taint() {
        let taint = Taint { key: "node-role.kubernetes.io/control-plane".into(), effect: "NoSchedule".into(), ..Default::default() };
        let exists_all = Toleration { operator: Some("Exists".into()), ..Default::default() };
        let by_key = Toleration { key: Some(taint.key.clone()), operator: Some("Exists".into()), effect: Some("NoSchedule".into()), ..Default::default() };
        let wrong_effect = Toleration { key: Some(taint.key.clone()), operator: Some("Exists".into()), effect: Some("NoExecute".into()), ..Default::default() };
        let equal_wrong_value = Toleration { key: Some(taint.key.clone()), value: Some("x".into()), ..Default::default() };
        assert!(tolerates(&exists_all, &taint));
        assert!(tolerates(&by_key, &taint));
        assert!(!tolerates(&wrong_effect, &taint));
        assert!(!tolerates(&equal_wrong_value, &taint));
    }

    #[test]
    fn sidecars_add_and_init_containers_take_the_max() {
        let pod: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "p"},
            "spec": {
                "initContainers": [
                    {"name": "sidecar", "restartPolicy": "Always", "resources": {"requests": {"cpu": "100m"}}},
                    {"name": "migrate", "resources": {"requests": {"cpu": "2"}}}
                ],
                "containers": [{"name": "app", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}]
            }
        }))
        .expect("a valid pod");
        let r = pod_requests(&pod);
        assert!((r["cpu"] - 2.1).abs() < 1e-9, "{r:?}");
        assert_eq!(r["memory"], 1073741824.0);
    }

    #[test]
    fn pod_level_requests_replace_the_container_sum() {
        let p: Pod = serde_json::from_value(serde_json::json!({
            "spec": {"resources": {"requests": {"cpu": "500m", "memory": "1Gi"}},
                     "overhead": {"cpu": "100m"},
                     "containers": [{"name": "a", "resources": {"requests": {"cpu": "2", "ephemeral-storage": "1Gi"}}}, {"name": "b"}]}
        }))
        .expect("pod");
        let r = pod_requests(&p);
        assert_eq!(r.get("cpu"), Some(&0.6));
        assert_eq!(r.get("memory"), Some(&1_073_741_824.0));
        assert_eq!(r.get("ephemeral-storage"), Some(&1_073_741_824.0), "not a pod-level resource: the container sum stays");
    }
}
