//! Probes for the `operations` failure modes: certificate approval and version skew.
//!
//! CSRs for the signer `kubernetes.io/kubelet-serving` are never approved by
//! kube-controller-manager's CSR approver, which handles only kubelet client certificates
//! (`kubernetes/kubernetes:pkg/controller/certificates/approver/sarapprove.go`); the
//! conditions `Approved` / `Denied` / `Failed` are in
//! `kubernetes/kubernetes:staging/src/k8s.io/api/certificates/v1/types.go`. The version skew
//! policy forbids a kubelet newer than the API server
//! (`https://kubernetes.io/releases/version-skew-policy/#kubelet`).

use super::common::*;
use super::{Evidence, Finding, Probe};
use crate::state::{ClusterState, ResourceKind};
use kubewhy_engine::model::Version;

/// This area's probes.
pub static PROBES: &[Probe] = &[
    Probe {
        id: "kubelet-serving-csr-not-approved",
        failure_mode: "failure-mode/kubelet-serving-csr-not-approved",
        title: "kubelet serving CertificateSigningRequests pending for more than 10 minutes",
        needs: &[ResourceKind::CertificateSigningRequest],
        subjects: &[ResourceKind::CertificateSigningRequest],
        check: serving_csr_pending,
        decided_by_status: None,
    },
    Probe {
        id: "kubelet-newer-than-apiserver",
        failure_mode: "failure-mode/kubelet-newer-than-apiserver",
        title: "nodes whose kubelet minor version is newer than the API server's",
        needs: &[ResourceKind::Node],
        subjects: &[ResourceKind::Node],
        check: kubelet_newer,
        decided_by_status: None,
    },
];

/// `kubelet-serving-csr-not-approved`: `spec.signerName: kubernetes.io/kubelet-serving`, no
/// `Approved`/`Denied`/`Failed` condition, created more than 10 minutes before the snapshot.
fn serving_csr_pending(state: &ClusterState) -> Vec<Finding> {
    let mut out = Vec::new();
    for c in &state.certificate_signing_requests {
        if c.spec.signer_name != "kubernetes.io/kubelet-serving" || !older_than(state, &c.metadata, 600) {
            continue;
        }
        let decided = c.status.as_ref().and_then(|s| s.conditions.as_ref()).is_some_and(|cs| {
            cs.iter().any(|x| matches!(x.type_.as_str(), "Approved" | "Denied" | "Failed") && x.status == "True")
        });
        if decided {
            continue;
        }
        let r = obj_ref(ResourceKind::CertificateSigningRequest, &c.metadata);
        let age = age_secs(state, c.metadata.creation_timestamp.as_ref()).map(human_secs).unwrap_or_else(|| "unknown".into());
        out.push(finding(
            r.clone(),
            format!("the kubelet serving certificate request of {} has waited {age} for approval, so logs, exec and metrics from that node fail TLS", c.spec.username.as_deref().unwrap_or("a node")),
            vec![
                Evidence::new(r.clone(), "spec.signerName", "kubernetes.io/kubelet-serving"),
                Evidence::new(r.clone(), "spec.username", c.spec.username.clone().unwrap_or_default()),
                Evidence::new(r, "status.conditions", "none (Pending)"),
            ],
        ));
    }
    out
}

/// `kubelet-newer-than-apiserver`: `status.nodeInfo.kubeletVersion`'s minor above the
/// server's (needs the server version; without it, nothing is reported).
fn kubelet_newer(state: &ClusterState) -> Vec<Finding> {
    let Some(server) = state.version else { return Vec::new() };
    let mut out = Vec::new();
    for n in &state.nodes {
        let Some(kv) = n.status.as_ref().and_then(|s| s.node_info.as_ref()).map(|i| i.kubelet_version.clone()) else { continue };
        let Ok(v) = Version::parse(&kv) else { continue };
        if v <= server {
            continue;
        }
        let r = obj_ref(ResourceKind::Node, &n.metadata);
        out.push(finding(
            r.clone(),
            format!("the kubelet ({kv}) is newer than the API server ({server}), which the version skew policy does not support"),
            vec![
                Evidence::new(r, "status.nodeInfo.kubeletVersion", kv),
                Evidence::new(
                    crate::state::ObjectRef { kind: ResourceKind::Node, namespace: None, name: "(server)".into() },
                    "version",
                    state.git_version.clone().unwrap_or_else(|| server.to_string()),
                ),
            ],
        ));
    }
    out
}
