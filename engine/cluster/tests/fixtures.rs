//! Every snapshot fixture under `tests/fixtures/cluster/` (written by its `generate.py`)
//! loads through `snapshot::load` into the k8s-openapi types, and every probe is run on
//! it: the expected failure modes hold on the expected objects, nothing else holds, and
//! the `healthy` scenario has no finding at all.
//!
//! [`EXPECTED`] is the one table to extend when a scenario is added: scenario name, then
//! `(probe id, object)` pairs, where the object is written like
//! [`kubewhy_cluster::ObjectRef`]'s `Display` (`Pod shop/cpu-hog`, `Node worker-2`). Every
//! finding of every probe must be listed; pairs after the first are co-findings that the
//! breakage really causes, each explained in a comment.

use kubewhy_cluster::probes::{self, Verdict};
use kubewhy_cluster::snapshot;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// scenario -> the findings it must produce (probe id, object), and no others.
const EXPECTED: &[(&str, &[(&str, &str)])] = &[
    ("healthy", &[]),
    // The three objects of the classic lab.
    ("pending-cpu", &[("insufficient-resources", "Pod shop/cpu-hog")]),
    ("liveness-404", &[("liveness-probe-wrong-path", "Pod shop/liveness-demo")]),
    ("service-selector-mismatch", &[("service-selector-mismatch", "Service shop/frontend")]),
    // The claim waits for its pod, the pod for a node with disktype=nvme: the affinity
    // mismatch is the cause the deadlock hides, so both hold.
    ("wffc-deadlock", &[
        ("wffc-pvc-pod-unschedulable-deadlock", "PersistentVolumeClaim shop/data-search-0"),
        ("node-affinity-mismatch", "Pod shop/search-0"),
    ]),
    ("crashloop-app-error", &[("crashloop-app-error", "Pod shop/checkout-fdbf2d59c5-svdll")]),
    ("oom-killed", &[("oom-killed-container-limit", "Pod shop/image-resizer-6262dc7227-j6sbt")]),
    ("image-pull-not-found", &[("image-pull-not-found", "Pod shop/web-canary")]),
    ("image-pull-unauthorized", &[("image-pull-unauthorized", "Pod shop/billing")]),
    ("untolerated-taint", &[("untolerated-taint", "Pod shop/trainer")]),
    ("extended-resource-missing", &[("extended-resource-device-plugin-missing", "Pod shop/trainer")]),
    ("nodes-cordoned", &[("nodes-cordoned-unschedulable", "Pod shop/web-7cdd7cd4c5-lsh5k")]),
    ("node-not-ready", &[("node-not-ready-kubelet-stopped", "Node worker-2")]),
    // The node is gone for 20 minutes: its Unknown status is the cause of the stuck pod.
    ("pod-stuck-terminating-node-lost", &[
        ("pod-stuck-terminating-node-lost", "Pod shop/web-7cdd7cd4c5-xwqmz"),
        ("node-not-ready-kubelet-stopped", "Node worker-2"),
    ]),
    ("memory-pressure", &[
        ("node-pressure-eviction-memory", "Node worker-1"),
        ("node-pressure-eviction-memory", "Pod shop/report-worker-6b7d9c5f4-qz8xw"),
    ]),
    ("disk-pressure", &[
        ("node-pressure-eviction-disk", "Node worker-2"),
        ("node-pressure-eviction-disk", "Pod shop/audit-logger-5c8f6d7b9-m2k4t"),
    ]),
    // The Service has no ready endpoint because its pods fail their readiness probe.
    ("service-no-ready-endpoints", &[
        ("service-no-ready-endpoints", "Service shop/cart"),
        ("readiness-probe-failing", "Pod shop/cart-c48426b4d5-6cpvj"),
        ("readiness-probe-failing", "Pod shop/cart-c48426b4d5-zjspk"),
    ]),
    ("unbound-immediate-pvc", &[("unbound-immediate-pvc", "Pod shop/uploader")]),
    ("pvc-no-storageclass", &[("pvc-pending-no-storageclass", "PersistentVolumeClaim shop/reports")]),
    // The attach never happens, so the kubelet's mount wait times out as well.
    ("multi-attach", &[
        ("multi-attach-rwo", "Pod shop/grafana-2875487956-csqn6"),
        ("failed-mount-timeout", "Pod shop/grafana-2875487956-csqn6"),
    ]),
    ("configmap-volume-missing", &[("configmap-secret-volume-missing", "Pod shop/notifier")]),
    ("create-container-config-error", &[("create-container-config-error", "Pod shop/mailer")]),
    ("multiple-default-storageclasses", &[
        ("multiple-default-storageclasses", "StorageClass gp3-encrypted"),
        ("multiple-default-storageclasses", "StorageClass standard"),
    ]),
    // The rollout stalls because the new pod crashes.
    ("progress-deadline-exceeded", &[
        ("deployment-progress-deadline-exceeded", "Deployment shop/web"),
        ("crashloop-app-error", "Pod shop/web-c8fcdd59db-9wkgc"),
    ]),
    // Quota is why the ReplicaSet's creates fail.
    ("resourcequota-exceeded", &[
        ("resourcequota-exceeded", "ReplicaSet shop/batch-api-fc724548b8"),
        ("replicaset-failed-create", "ReplicaSet shop/batch-api-fc724548b8"),
    ]),
    ("job-backoff-limit", &[("job-backoff-limit-exceeded", "Job batch/db-migrate")]),
    // The Service's finalizer is what keeps the namespace.
    ("namespace-stuck-finalizers", &[
        ("namespace-stuck-terminating-finalizers", "Namespace legacy"),
        ("object-stuck-terminating-finalizer", "Service legacy/ingress-lb"),
    ]),
    // metrics-server is gone: its APIService is down, which blocks the namespace deletion
    // and leaves the HPA without resource metrics.
    ("namespace-stuck-discovery", &[
        ("namespace-stuck-terminating-discovery", "Namespace old-demo"),
        ("aggregated-apiservice-unavailable", "APIService v1beta1.metrics.k8s.io"),
        ("hpa-unable-to-get-metrics", "HorizontalPodAutoscaler shop/web"),
    ]),
    ("pdb-blocks-drain", &[("pdb-blocks-drain", "PodDisruptionBudget shop/db")]),
    ("webhook-unreachable", &[("admission-webhook-unreachable", "ValidatingWebhookConfiguration policy-validator")]),
    // The deadlocked webhook is unreachable, and it refuses its own ReplicaSet's pods.
    ("webhook-self-deadlock", &[
        ("admission-webhook-self-deadlock", "MutatingWebhookConfiguration sidecar-injector"),
        ("admission-webhook-unreachable", "MutatingWebhookConfiguration sidecar-injector"),
        ("replicaset-failed-create", "ReplicaSet injector/sidecar-injector-74b84ff752"),
    ]),
    ("hpa-missing-requests", &[("hpa-unable-to-get-metrics", "HorizontalPodAutoscaler shop/search-api")]),
    ("statefulset-missing-service", &[("statefulset-pod-dns-missing-governing-service", "StatefulSet shop/kafka")]),
    ("hostnetwork-dns", &[
        ("hostnetwork-pod-clusterfirst-uses-node-dns", "Pod logging/log-shipper-4qg96"),
        ("hostnetwork-pod-clusterfirst-uses-node-dns", "Pod logging/log-shipper-f9vps"),
        ("hostnetwork-pod-clusterfirst-uses-node-dns", "Pod logging/log-shipper-jwzvs"),
        ("readiness-probe-failing", "Pod logging/log-shipper-4qg96"),
        ("readiness-probe-failing", "Pod logging/log-shipper-f9vps"),
        ("readiness-probe-failing", "Pod logging/log-shipper-jwzvs"),
    ]),
    ("kubelet-serving-csr-pending", &[("kubelet-serving-csr-not-approved", "CertificateSigningRequest csr-7x9kq")]),
    ("loadbalancer-pending", &[("loadbalancer-external-ip-pending", "Service shop/web-public")]),
    ("cni-not-initialized", &[("cni-not-initialized", "Node worker-3")]),
    ("init-container-crashloop", &[("init-container-crashloop", "Pod shop/orders")]),
    ("image-pull-rate-limited", &[("image-pull-rate-limited", "Pod shop/session-cache")]),
    ("pvc-provisioning-failed", &[("pvc-provisioning-failed", "PersistentVolumeClaim shop/ledger")]),
    ("pod-scheduling-gated", &[("pod-scheduling-gated", "Pod batch/train-0")]),
    ("volume-node-affinity-conflict", &[("volume-node-affinity-conflict", "Pod shop/db-0")]),
];

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/cluster")
}

fn scenarios_on_disk() -> BTreeSet<String> {
    std::fs::read_dir(fixtures_dir())
        .expect("fixtures directory")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

/// Runs every probe on one scenario: the set of (probe id, object) with verdict Holds.
fn findings(scenario: &str) -> BTreeSet<(String, String)> {
    let snap = snapshot::load(&fixtures_dir().join(scenario)).unwrap_or_else(|e| panic!("{scenario}: {e}"));
    assert!(snap.state.version.is_some(), "{scenario}: version.json gives the server version");
    assert!(snap.state.unavailable.is_empty(), "{scenario}: every kind is in the snapshot: {:?}", snap.state.unavailable);
    let mut out = BTreeSet::new();
    for p in probes::all() {
        let o = probes::run(p, &snap.state);
        assert_ne!(o.verdict, Verdict::Unknown, "{scenario}: {} is unknown: {:?}", p.id, o.missing);
        for f in &o.findings {
            assert!(!f.summary.is_empty() && !f.evidence.is_empty(), "{scenario}: {} gives a summary and evidence", p.id);
            out.insert((p.id.to_string(), f.object.to_string()));
        }
    }
    out
}

#[test]
fn every_scenario_on_disk_has_expectations_and_the_other_way_round() {
    let listed: BTreeSet<String> = EXPECTED.iter().map(|(s, _)| s.to_string()).collect();
    assert_eq!(scenarios_on_disk(), listed);
}

#[test]
fn each_scenario_shows_exactly_its_failure_modes() {
    let mut problems = Vec::new();
    for (scenario, expected) in EXPECTED {
        let got = findings(scenario);
        let want: BTreeSet<(String, String)> = expected.iter().map(|(p, o)| (p.to_string(), o.to_string())).collect();
        for w in want.difference(&got) {
            problems.push(format!("{scenario}: expected {} on {} but it does not hold", w.0, w.1));
        }
        for g in got.difference(&want) {
            problems.push(format!("{scenario}: unexpected finding {} on {}", g.0, g.1));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_listed_probe_exists() {
    for (scenario, expected) in EXPECTED {
        for (p, _) in *expected {
            assert!(probes::get(p).is_some(), "{scenario}: no probe {p}");
        }
    }
}
