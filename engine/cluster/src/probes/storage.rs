//! Probes for the `storage` failure modes: claims that do not bind, the
//! WaitForFirstConsumer deadlock, StorageClass defaults, attach and mount failures.
//!
//! The default StorageClass is the one annotated `storageclass.kubernetes.io/is-default-class:
//! "true"`, or with the older beta annotation `storageclass.beta.kubernetes.io/is-default-class`
//! (`kubernetes/kubernetes:pkg/apis/storage/util/helpers.go`, `IsDefaultAnnotation`). Event reasons
//! `ProvisioningFailed`, `FailedBinding`, `WaitForFirstConsumer`, `ExternalProvisioning`
//! from `kubernetes/kubernetes:pkg/controller/volume/events/event.go`; `FailedMount` and
//! `FailedAttachVolume` from `kubernetes/kubernetes:pkg/kubelet/events/event.go` and the
//! attach/detach controller.

use super::common::*;
use super::scheduler::unschedulable_pods;
use super::{Evidence, Finding, Probe};
use crate::state::{ClusterState, ObjectRef, ResourceKind};
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use k8s_openapi::api::storage::v1::StorageClass;

/// This area's probes.
pub static PROBES: &[Probe] = &[
    Probe {
        id: "wffc-pvc-pod-unschedulable-deadlock",
        failure_mode: "failure-mode/wffc-pvc-pod-unschedulable-deadlock",
        title: "Pending WaitForFirstConsumer claims whose consuming pod the scheduler cannot place",
        needs: &[ResourceKind::PersistentVolumeClaim, ResourceKind::StorageClass, ResourceKind::Pod],
        subjects: &[ResourceKind::PersistentVolumeClaim, ResourceKind::Pod],
        check: wffc_deadlock,
        decided_by_status: None,
    },
    Probe {
        id: "unbound-immediate-pvc",
        failure_mode: "failure-mode/unbound-immediate-pvc",
        title: "unschedulable pods that mount an Immediate-mode claim that is not bound or does not exist",
        needs: &[ResourceKind::Pod, ResourceKind::PersistentVolumeClaim, ResourceKind::StorageClass],
        subjects: &[ResourceKind::Pod, ResourceKind::PersistentVolumeClaim],
        check: unbound_immediate,
        decided_by_status: None,
    },
    Probe {
        id: "pvc-pending-no-storageclass",
        failure_mode: "failure-mode/pvc-pending-no-storageclass",
        title: "Pending claims naming a StorageClass that does not exist, or none while no default exists",
        needs: &[ResourceKind::PersistentVolumeClaim, ResourceKind::StorageClass, ResourceKind::PersistentVolume],
        subjects: &[ResourceKind::PersistentVolumeClaim],
        check: no_storageclass,
        decided_by_status: None,
    },
    Probe {
        id: "pvc-provisioning-failed",
        failure_mode: "failure-mode/pvc-provisioning-failed",
        title: "Pending claims whose class exists but whose provisioner reports ProvisioningFailed",
        needs: &[ResourceKind::PersistentVolumeClaim, ResourceKind::StorageClass, ResourceKind::Event],
        subjects: &[ResourceKind::PersistentVolumeClaim],
        check: provisioning_failed,
        decided_by_status: None,
    },
    Probe {
        id: "multiple-default-storageclasses",
        failure_mode: "failure-mode/multiple-default-storageclasses",
        title: "more than one StorageClass marked default",
        needs: &[ResourceKind::StorageClass],
        subjects: &[ResourceKind::StorageClass],
        check: multiple_defaults,
        decided_by_status: None,
    },
    Probe {
        id: "multi-attach-rwo",
        failure_mode: "failure-mode/multi-attach-rwo",
        title: "pods that cannot start because their ReadWriteOnce volume is attached to another node (Multi-Attach error)",
        needs: &[ResourceKind::Pod, ResourceKind::Event],
        subjects: &[ResourceKind::Pod],
        check: multi_attach,
        decided_by_status: None,
    },
    Probe {
        id: "failed-mount-timeout",
        failure_mode: "failure-mode/failed-mount-timeout",
        title: "pods stuck ContainerCreating because the kubelet timed out waiting for volumes to attach or mount",
        needs: &[ResourceKind::Pod, ResourceKind::Event],
        subjects: &[ResourceKind::Pod],
        check: mount_timeout,
        decided_by_status: None,
    },
    Probe {
        id: "configmap-secret-volume-missing",
        failure_mode: "failure-mode/configmap-secret-volume-missing",
        title: "pods stuck ContainerCreating because a ConfigMap or Secret volume's source does not exist",
        needs: &[ResourceKind::Pod, ResourceKind::Event],
        subjects: &[ResourceKind::Pod],
        check: configmap_secret_missing,
        decided_by_status: None,
    },
    Probe {
        id: "pvc-stuck-terminating-protection",
        failure_mode: "failure-mode/pvc-stuck-terminating-protection",
        title: "claims being deleted that kubernetes.io/pvc-protection keeps because a pod still uses them",
        needs: &[ResourceKind::PersistentVolumeClaim, ResourceKind::Pod],
        subjects: &[ResourceKind::PersistentVolumeClaim],
        check: pvc_protection,
        decided_by_status: None,
    },
];

const DEFAULT_CLASS_ANNOTATION: &str = "storageclass.kubernetes.io/is-default-class";
const BETA_DEFAULT_CLASS_ANNOTATION: &str = "storageclass.beta.kubernetes.io/is-default-class";

fn is_default(sc: &StorageClass) -> bool {
    sc.metadata.annotations.as_ref().is_some_and(|a| {
        a.get(DEFAULT_CLASS_ANNOTATION).map(String::as_str) == Some("true")
            || a.get(BETA_DEFAULT_CLASS_ANNOTATION).map(String::as_str) == Some("true")
    })
}

fn pvc_ref(c: &PersistentVolumeClaim) -> ObjectRef {
    obj_ref(ResourceKind::PersistentVolumeClaim, &c.metadata)
}

fn pvc_phase(c: &PersistentVolumeClaim) -> &str {
    c.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or("Pending")
}

fn class_name(c: &PersistentVolumeClaim) -> Option<&str> {
    c.spec.as_ref().and_then(|s| s.storage_class_name.as_deref())
}

fn class<'a>(state: &'a ClusterState, name: &str) -> Option<&'a StorageClass> {
    state.storage_classes.iter().find(|s| s.metadata.name.as_deref() == Some(name))
}

/// The class that governs the claim: the named one, or (no name) the default.
fn effective_class<'a>(state: &'a ClusterState, c: &PersistentVolumeClaim) -> Option<&'a StorageClass> {
    match class_name(c) {
        Some("") => None,
        Some(n) => class(state, n),
        None => state.storage_classes.iter().find(|s| is_default(s)),
    }
}

fn binding_mode(sc: &StorageClass) -> &str {
    sc.volume_binding_mode.as_deref().unwrap_or("Immediate")
}

/// Claims the pod mounts (by name, in the pod's namespace).
fn claim_names(p: &Pod) -> Vec<&str> {
    p.spec
        .as_ref()
        .and_then(|s| s.volumes.as_ref())
        .into_iter()
        .flatten()
        .filter_map(|v| v.persistent_volume_claim.as_ref().map(|c| c.claim_name.as_str()))
        .collect()
}

/// Whether the pod uses claim `name`: a `persistentVolumeClaim` volume naming it, or a
/// generic ephemeral volume whose claim is `<pod>-<volume>`
/// (`kubernetes/kubernetes:staging/src/k8s.io/component-helpers/storage/ephemeral/ephemeral.go`).
fn uses_claim(p: &Pod, name: &str) -> bool {
    if claim_names(p).contains(&name) {
        return true;
    }
    let pod = p.metadata.name.as_deref().unwrap_or("");
    p.spec
        .as_ref()
        .and_then(|s| s.volumes.as_ref())
        .into_iter()
        .flatten()
        .any(|v| v.ephemeral.is_some() && format!("{pod}-{}", v.name) == name)
}

fn claim<'a>(state: &'a ClusterState, ns: Option<&str>, name: &str) -> Option<&'a PersistentVolumeClaim> {
    state.persistent_volume_claims.iter().find(|c| c.metadata.namespace.as_deref() == ns && c.metadata.name.as_deref() == Some(name))
}

/// `wffc-pvc-pod-unschedulable-deadlock`: a Pending claim with no `volumeName` whose class
/// has `volumeBindingMode: WaitForFirstConsumer`, used by a pod with `PodScheduled=False`
/// `Unschedulable`. The claim waits for the pod to be scheduled (event
/// `WaitForFirstConsumer`, "waiting for first consumer to be created before binding",
/// `kubernetes/kubernetes:pkg/controller/volume/persistentvolume/pv_controller.go`); the
/// pod waits for a node; nothing reports an error on the claim.
fn wffc_deadlock(state: &ClusterState) -> Vec<Finding> {
    let mut out = Vec::new();
    let stuck = unschedulable_pods(state);
    for c in &state.persistent_volume_claims {
        if pvc_phase(c) != "Pending" || c.spec.as_ref().and_then(|s| s.volume_name.as_deref()).is_some_and(|v| !v.is_empty()) {
            continue;
        }
        let Some(sc) = effective_class(state, c).filter(|sc| binding_mode(sc) == "WaitForFirstConsumer") else { continue };
        let consumers: Vec<&Pod> = stuck
            .iter()
            .map(|u| u.pod)
            .filter(|p| p.metadata.namespace == c.metadata.namespace && claim_names(p).contains(&c.metadata.name.as_deref().unwrap_or("")))
            .collect();
        let Some(pod) = consumers.first() else { continue };
        let mut ev = vec![
            Evidence::new(pvc_ref(c), "status.phase", "Pending"),
            Evidence::new(obj_ref(ResourceKind::StorageClass, &sc.metadata), "volumeBindingMode", "WaitForFirstConsumer"),
            Evidence::new(
                pod_ref(pod),
                "status.conditions[type=PodScheduled].message",
                unschedulable_condition(pod).and_then(|x| x.message.clone()).unwrap_or_default(),
            ),
        ];
        if let Some(e) = events_matching(state, "PersistentVolumeClaim", &c.metadata, "WaitForFirstConsumer", "").last() {
            ev.push(event_evidence(e));
        }
        let age = age_secs(state, c.metadata.creation_timestamp.as_ref()).map(human_secs).unwrap_or_else(|| "unknown".into());
        out.push(finding(
            pvc_ref(c),
            format!(
                "the claim waits for its first consumer to be scheduled, and that pod ({}) can never be scheduled: Pending for {age} with no error on the claim",
                pod.metadata.name.as_deref().unwrap_or("")
            ),
            ev,
        ));
    }
    out
}

/// `unbound-immediate-pvc`: an unschedulable pod mounting a claim that is missing, or
/// Pending with an `Immediate` class. Scheduler texts "pod has unbound immediate
/// PersistentVolumeClaims" and "persistentvolumeclaim \"{name}\" not found" from
/// `kubernetes/kubernetes:pkg/scheduler/framework/plugins/volumebinding/volume_binding.go`.
fn unbound_immediate(state: &ClusterState) -> Vec<Finding> {
    let mut out = Vec::new();
    for u in unschedulable_pods(state) {
        let p = u.pod;
        for name in claim_names(p) {
            let ns = p.metadata.namespace.as_deref();
            let mut ev = vec![Evidence::new(pod_ref(p), "status.conditions[type=PodScheduled].message", u.message.clone())];
            let summary = match claim(state, ns, name) {
                None => {
                    ev.push(Evidence::new(
                        ObjectRef { kind: ResourceKind::PersistentVolumeClaim, namespace: ns.map(str::to_string), name: name.to_string() },
                        "metadata.name",
                        "absent: the claim does not exist",
                    ));
                    format!("the pod mounts claim {name}, which does not exist")
                }
                Some(c) if pvc_phase(c) == "Pending" => {
                    let mode = effective_class(state, c).map(binding_mode).unwrap_or("Immediate");
                    if mode != "Immediate" {
                        continue;
                    }
                    ev.push(Evidence::new(pvc_ref(c), "status.phase", "Pending"));
                    ev.push(Evidence::new(pvc_ref(c), "spec.storageClassName", class_name(c).unwrap_or("(default)")));
                    format!("the pod mounts claim {name}, which is not bound, so no node can take the pod")
                }
                Some(_) => continue,
            };
            out.push(finding(pod_ref(p), summary, ev));
        }
    }
    out
}

/// Whether some Available PersistentVolume has no class (what a claim without a class can
/// bind to: `GetPersistentVolumeClaimClass` gives "" for both,
/// `kubernetes/kubernetes:staging/src/k8s.io/component-helpers/storage/volume/helpers.go`).
fn classless_pv_available(state: &ClusterState) -> bool {
    state.persistent_volumes.iter().any(|pv| {
        pv.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Available")
            && pv.spec.as_ref().and_then(|s| s.storage_class_name.as_deref()).unwrap_or("").is_empty()
    })
}

/// `pvc-pending-no-storageclass`: a Pending claim older than a minute that names a class
/// that does not exist, or names none while no class is default, or names `""` while no
/// Available PersistentVolume has no class either. Event texts "storageclass.storage.k8s.io
/// \"{class}\" not found" and "no persistent volumes available for this claim and no storage
/// class is set" from `kubernetes/kubernetes:pkg/controller/volume/persistentvolume/pv_controller.go`.
fn no_storageclass(state: &ClusterState) -> Vec<Finding> {
    let mut out = Vec::new();
    for c in &state.persistent_volume_claims {
        if pvc_phase(c) != "Pending" || c.metadata.deletion_timestamp.is_some() || !older_than(state, &c.metadata, 60) {
            continue;
        }
        if c.spec.as_ref().and_then(|s| s.volume_name.as_deref()).is_some_and(|v| !v.is_empty()) {
            continue;
        }
        let summary = match class_name(c) {
            Some("") => {
                if classless_pv_available(state) {
                    continue;
                }
                "the claim asks for static binding (storageClassName \"\") and no Available PersistentVolume without a class exists".to_string()
            }
            Some(n) => {
                if class(state, n).is_some() {
                    continue;
                }
                format!("the claim names StorageClass {n}, which does not exist")
            }
            None => {
                // Without a default class the claim keeps no class and can still bind to an
                // Available PersistentVolume without one.
                if state.storage_classes.iter().any(is_default) || classless_pv_available(state) {
                    continue;
                }
                "the claim names no StorageClass and no class is marked default".to_string()
            }
        };
        let mut ev = vec![
            Evidence::new(pvc_ref(c), "status.phase", "Pending"),
            Evidence::new(pvc_ref(c), "spec.storageClassName", class_name(c).map_or("(unset)".to_string(), |s| format!("{s:?}"))),
            Evidence::new(
                pvc_ref(c),
                "storageclasses",
                state.storage_classes.iter().filter_map(|s| s.metadata.name.clone()).collect::<Vec<_>>().join(","),
            ),
        ];
        for e in events_for(state, "PersistentVolumeClaim", &c.metadata).iter().rev().take(1) {
            ev.push(event_evidence(e));
        }
        out.push(finding(pvc_ref(c), summary, ev));
    }
    out
}

/// How long (seconds) a `ProvisioningFailed` event counts as current: the events' default
/// TTL (the apiserver's `--event-ttl`, one hour).
const PROVISIONING_WINDOW_SECS: i64 = 3_600;

/// `pvc-provisioning-failed`: a Pending claim whose class exists, with a `ProvisioningFailed`
/// event seen within the last hour and no `ProvisioningSucceeded` after it. The newest event
/// is not the test: while a claim waits on an external provisioner the PV controller
/// records `Normal` `ExternalProvisioning` on every sync (`provisionClaimOperationExternal`
/// in `kubernetes/kubernetes:pkg/controller/volume/persistentvolume/pv_controller.go`).
fn provisioning_failed(state: &ClusterState) -> Vec<Finding> {
    let mut out = Vec::new();
    for c in &state.persistent_volume_claims {
        if pvc_phase(c) != "Pending" || c.metadata.deletion_timestamp.is_some() || effective_class(state, c).is_none() {
            continue;
        }
        let evs = events_for(state, "PersistentVolumeClaim", &c.metadata);
        let Some(i) = evs.iter().rposition(|e| e.reason.as_deref() == Some("ProvisioningFailed")) else { continue };
        let last = evs[i];
        if evs[i + 1..].iter().any(|e| e.reason.as_deref() == Some("ProvisioningSucceeded")) {
            continue;
        }
        let seen = event_time(last).map(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time);
        if age_secs(state, seen.as_ref()).is_some_and(|a| a > PROVISIONING_WINDOW_SECS) {
            continue;
        }
        out.push(finding(
            pvc_ref(c),
            "the provisioner tries to create the claim's volume and fails".to_string(),
            vec![
                Evidence::new(pvc_ref(c), "status.phase", "Pending"),
                Evidence::new(pvc_ref(c), "spec.storageClassName", effective_class(state, c).and_then(|s| s.metadata.name.clone()).unwrap_or_default()),
                event_evidence(last),
            ],
        ));
    }
    out
}

/// `multiple-default-storageclasses`: two or more classes carry the default annotation;
/// one finding per default class.
fn multiple_defaults(state: &ClusterState) -> Vec<Finding> {
    let defaults: Vec<&StorageClass> = state.storage_classes.iter().filter(|s| is_default(s)).collect();
    if defaults.len() < 2 {
        return Vec::new();
    }
    let names: Vec<String> = defaults.iter().filter_map(|s| s.metadata.name.clone()).collect();
    defaults
        .iter()
        .map(|s| {
            let r = obj_ref(ResourceKind::StorageClass, &s.metadata);
            finding(
                r.clone(),
                format!("{} StorageClasses are marked default ({}): claims without a class get the newest one", defaults.len(), names.join(", ")),
                vec![Evidence::new(r, format!("metadata.annotations.{DEFAULT_CLASS_ANNOTATION}"), "true")],
            )
        })
        .collect()
}

fn pending_pod_event(state: &ClusterState, reason: &str, needles: &[&str], summary: impl Fn(&Pod) -> String) -> Vec<Finding> {
    let mut out = Vec::new();
    for p in &state.pods {
        if phase(p) != "Pending" || p.metadata.deletion_timestamp.is_some() || node_name(p).is_none() {
            continue;
        }
        let evs: Vec<_> = events_for(state, "Pod", &p.metadata)
            .into_iter()
            .filter(|e| e.reason.as_deref() == Some(reason) && needles.iter().any(|n| e.message.as_deref().unwrap_or("").contains(n)))
            .collect();
        let Some(last) = evs.last() else { continue };
        out.push(finding(
            pod_ref(p),
            summary(p),
            vec![Evidence::new(pod_ref(p), "status.phase", "Pending"), Evidence::new(pod_ref(p), "spec.nodeName", node_name(p).unwrap_or("")), event_evidence(last)],
        ));
    }
    out
}

/// How long (seconds) the kubelet waits for a pod's volumes before it gives up a sync:
/// `podAttachAndMountTimeout`, 2m3s (`kubernetes/kubernetes:pkg/kubelet/volumemanager/volume_manager.go`).
const ATTACH_AND_MOUNT_TIMEOUT_SECS: i64 = 123;

/// Seconds since the pod was scheduled (`PodScheduled` transition, else creation).
fn scheduled_for(state: &ClusterState, p: &Pod) -> Option<i64> {
    pod_condition(p, "PodScheduled")
        .filter(|c| c.status == "True")
        .and_then(|c| age_secs(state, c.last_transition_time.as_ref()))
        .or_else(|| age_secs(state, p.metadata.creation_timestamp.as_ref()))
}

/// Pending pods on a node that are not being deleted and whose containers have not started.
fn creating_pods(state: &ClusterState) -> impl Iterator<Item = (&Pod, &str)> {
    state.pods.iter().filter_map(|p| {
        let node = node_name(p)?;
        if phase(p) != "Pending" || p.metadata.deletion_timestamp.is_some() {
            return None;
        }
        let started = p
            .status
            .as_ref()
            .and_then(|s| s.container_statuses.as_ref())
            .into_iter()
            .flatten()
            .any(|c| c.state.as_ref().is_some_and(|st| st.running.is_some() || st.terminated.is_some()));
        (!started).then_some((p, node))
    })
}

/// The CSI PersistentVolumes behind the pod's bound claims that need attaching (their
/// CSIDriver does not say `attachRequired: false`), as (claim, PV name, PV).
fn attachable_volumes<'a>(state: &'a ClusterState, p: &Pod) -> Vec<(String, &'a k8s_openapi::api::core::v1::PersistentVolume)> {
    let ns = p.metadata.namespace.as_deref();
    claim_names(p)
        .into_iter()
        .filter_map(|name| claim(state, ns, name))
        .filter_map(|c| c.spec.as_ref().and_then(|s| s.volume_name.as_deref()))
        .filter_map(|pv| state.persistent_volumes.iter().find(|v| v.metadata.name.as_deref() == Some(pv)))
        .filter(|pv| {
            let Some(csi) = pv.spec.as_ref().and_then(|s| s.csi.as_ref()) else { return false };
            !state
                .csi_drivers
                .iter()
                .any(|d| d.metadata.name.as_deref() == Some(csi.driver.as_str()) && d.spec.attach_required == Some(false))
        })
        .map(|pv| (pv.metadata.name.clone().unwrap_or_default(), pv))
        .collect()
}

/// VolumeAttachments of PersistentVolume `pv`.
fn attachments<'a>(state: &'a ClusterState, pv: &str) -> Vec<&'a k8s_openapi::api::storage::v1::VolumeAttachment> {
    state
        .volume_attachments
        .iter()
        .filter(|va| va.spec.source.persistent_volume_name.as_deref() == Some(pv))
        .collect()
}

fn attached(va: &k8s_openapi::api::storage::v1::VolumeAttachment) -> bool {
    va.status.as_ref().is_some_and(|s| s.attached)
}

/// Whether the volume can be attached to one node only (no ReadWriteMany / ReadOnlyMany).
fn single_node(pv: &k8s_openapi::api::core::v1::PersistentVolume) -> bool {
    let modes = pv.spec.as_ref().and_then(|s| s.access_modes.clone()).unwrap_or_default();
    !modes.is_empty() && !modes.iter().any(|m| m == "ReadWriteMany" || m == "ReadOnlyMany")
}

/// `multi-attach-rwo`: a Pending pod, scheduled more than `podAttachAndMountTimeout` ago
/// (during a rolling update the old pod's volume is detached within that time, so the
/// message alone is normal), whose single-node volume is either
/// - attached to another node by a VolumeAttachment (`status.attached: true`), or, when
///   VolumeAttachments were not read or show nothing,
/// - named by a `FailedAttachVolume` event "Multi-Attach error for volume …", or, since
///   kubernetes/kubernetes#138837, "Waiting for detach for volume …", both followed by
///   "Volume is already used by pod(s) …"
///   (`kubernetes/kubernetes:pkg/controller/volume/attachdetach/reconciler/reconciler.go`). The
///   controller sends that event once per volume and node, so it ages out after the
///   events' one-hour TTL; the VolumeAttachment is the lasting evidence.
fn multi_attach(state: &ClusterState) -> Vec<Finding> {
    let mut out = Vec::new();
    let va_read = state.loaded.contains(&ResourceKind::VolumeAttachment);
    for (p, node) in creating_pods(state) {
        if scheduled_for(state, p).is_none_or(|a| a < ATTACH_AND_MOUNT_TIMEOUT_SECS) {
            continue;
        }
        let mut ev = vec![Evidence::new(pod_ref(p), "status.phase", "Pending"), Evidence::new(pod_ref(p), "spec.nodeName", node)];
        let mut elsewhere = false;
        let mut here = false;
        for (name, pv) in attachable_volumes(state, p) {
            for va in attachments(state, &name) {
                if !attached(va) {
                    continue;
                }
                if va.spec.node_name == node {
                    here = true;
                } else if single_node(pv) {
                    elsewhere = true;
                    ev.push(Evidence::new(
                        obj_ref(ResourceKind::VolumeAttachment, &va.metadata),
                        "spec.nodeName",
                        format!("{} (volume {name}, attached: true)", va.spec.node_name),
                    ));
                }
            }
        }
        if va_read && here && !elsewhere {
            continue;
        }
        let event = events_for(state, "Pod", &p.metadata).into_iter().rev().find(|e| {
            let m = e.message.as_deref().unwrap_or("");
            e.reason.as_deref() == Some("FailedAttachVolume") && (m.starts_with("Multi-Attach error for volume") || m.starts_with("Waiting for detach for volume"))
        });
        if let Some(e) = event {
            ev.push(event_evidence(e));
        } else if !elsewhere {
            continue;
        }
        out.push(finding(
            pod_ref(p),
            format!("the pod's ReadWriteOnce volume is still attached to another node, so it cannot be attached to {node}"),
            ev,
        ));
    }
    out
}

/// `failed-mount-timeout`: a pod scheduled more than `podAttachAndMountTimeout` (2m3s) ago
/// whose containers have not started, explained by the kubelet's mount errors or by a
/// volume that is not attached to its node. Since 1.28 the kubelet records no event when
/// that wait merely times out (`SyncPod` in `kubernetes/kubernetes:pkg/kubelet/kubelet.go`
/// skips the `FailedMount` event when `wait.Interrupted(err)`), so the timeout itself is
/// read from the pod's age. Explanations:
/// - a `FailedMount` event from the operation executor, "MountVolume.SetUp failed …" or
///   "MountVolume.MountDevice failed …"
///   (`kubernetes/kubernetes:pkg/volume/util/operationexecutor/operation_generator.go`), or
///   the older kubelet texts "Unable to attach or mount volumes: …" and "timeout expired
///   waiting for volumes to attach/mount for pod …"; missing ConfigMaps and Secrets are
///   left to `configmap-secret-volume-missing`;
/// - a CSI volume that needs attaching with no VolumeAttachment `attached: true` on the
///   pod's node (when VolumeAttachments were read).
fn mount_timeout(state: &ClusterState) -> Vec<Finding> {
    let va_read = state.loaded.contains(&ResourceKind::VolumeAttachment);
    let mut out = Vec::new();
    for (p, node) in creating_pods(state) {
        let Some(waited) = scheduled_for(state, p).filter(|a| *a >= ATTACH_AND_MOUNT_TIMEOUT_SECS) else { continue };
        if p.spec.as_ref().and_then(|s| s.volumes.as_ref()).is_none_or(|v| v.is_empty()) {
            continue;
        }
        let mut ev = vec![Evidence::new(pod_ref(p), "status.phase", "Pending"), Evidence::new(pod_ref(p), "spec.nodeName", node)];
        let mount_error = events_for(state, "Pod", &p.metadata).into_iter().rev().find(|e| {
            let m = e.message.as_deref().unwrap_or("");
            e.reason.as_deref() == Some("FailedMount")
                && !(m.contains("\" : configmap \"") || m.contains("\" : secret \""))
                && (m.contains("MountVolume.SetUp failed")
                    || m.contains("MountDevice failed")
                    || m.contains("Unable to attach or mount volumes")
                    || m.contains("timeout expired waiting for volumes to attach"))
        });
        let mut explained = false;
        if let Some(e) = mount_error {
            ev.push(event_evidence(e));
            explained = true;
        }
        if va_read {
            for (name, _) in attachable_volumes(state, p) {
                let on_node: Vec<_> = attachments(state, &name).into_iter().filter(|va| va.spec.node_name == node).collect();
                if on_node.iter().any(|va| attached(va)) {
                    continue;
                }
                explained = true;
                let r = ObjectRef { kind: ResourceKind::PersistentVolume, namespace: None, name: name.clone() };
                match on_node.first() {
                    Some(va) => {
                        let err = va.status.as_ref().and_then(|s| s.attach_error.as_ref()).and_then(|e| e.message.clone()).unwrap_or_default();
                        ev.push(Evidence::new(obj_ref(ResourceKind::VolumeAttachment, &va.metadata), "status.attached", format!("false {err}").trim_end().to_string()));
                    }
                    None => ev.push(Evidence::new(r, "volumeattachments", format!("absent: no VolumeAttachment of this volume on {node}"))),
                }
            }
        }
        if !explained {
            continue;
        }
        out.push(finding(
            pod_ref(p),
            format!("the pod's volumes have not attached and mounted on {node} after {}, past the kubelet's 2m3s wait", human_secs(waited)),
            ev,
        ));
    }
    out
}

/// `configmap-secret-volume-missing`: `FailedMount` "MountVolume.SetUp failed for volume
/// \"{v}\" : configmap \"{name}\" not found" (or `secret`), from
/// `kubernetes/kubernetes:pkg/volume/configmap/configmap.go` and `pkg/volume/secret/secret.go`.
fn configmap_secret_missing(state: &ClusterState) -> Vec<Finding> {
    pending_pod_event(state, "FailedMount", &["\" : configmap \"", "\" : secret \""], |_| {
        "a ConfigMap or Secret the pod mounts as a volume does not exist, so the kubelet cannot set the volume up".to_string()
    })
}

/// `pvc-stuck-terminating-protection`: a claim with `deletionTimestamp` set and the
/// `kubernetes.io/pvc-protection` finalizer while a pod uses it. The protection controller
/// (`podUsesPVC` in `kubernetes/kubernetes:pkg/controller/volume/pvcprotection/pvc_protection_controller.go`)
/// counts every pod bound to a node (`spec.nodeName` set), in any phase (a Succeeded or
/// Failed pod still blocks the deletion until it is deleted), that names the claim in a
/// `persistentVolumeClaim` volume or owns it as a generic ephemeral volume
/// (`<pod>-<volume>`); unscheduled pods do not count.
fn pvc_protection(state: &ClusterState) -> Vec<Finding> {
    let mut out = Vec::new();
    for c in &state.persistent_volume_claims {
        let Some(dt) = &c.metadata.deletion_timestamp else { continue };
        if !c.metadata.finalizers.iter().flatten().any(|f| f == "kubernetes.io/pvc-protection") {
            continue;
        }
        let users: Vec<&Pod> = state
            .pods
            .iter()
            .filter(|p| p.metadata.namespace == c.metadata.namespace && node_name(p).is_some())
            .filter(|p| uses_claim(p, c.metadata.name.as_deref().unwrap_or("")))
            .collect();
        if users.is_empty() {
            continue;
        }
        let mut ev = vec![
            Evidence::new(pvc_ref(c), "metadata.deletionTimestamp", dt.0.to_string()),
            Evidence::new(pvc_ref(c), "metadata.finalizers", c.metadata.finalizers.clone().unwrap_or_default().join(",")),
        ];
        for p in users.iter().take(3) {
            ev.push(Evidence::new(pod_ref(p), "status.phase", phase(p)));
        }
        out.push(finding(pvc_ref(c), format!("the claim is being deleted but stays Terminating while {} pod(s) still mount it", users.len()), ev));
    }
    out
}
