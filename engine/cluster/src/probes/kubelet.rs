//! Probes for the `kubelet` failure modes: container states and restarts, probe
//! failures, image pulls, node conditions written by the kubelet, pods stuck terminating.
//!
//! Container state reasons: `CrashLoopBackOff`, `CreateContainerConfigError`
//! (`kubernetes/kubernetes:pkg/kubelet/kuberuntime/kuberuntime_container.go`,
//! `pkg/kubelet/container/sync_result.go`), `ErrImagePull`, `ImagePullBackOff`,
//! `InvalidImageName` (`kubernetes/kubernetes:pkg/kubelet/images/types.go`); `OOMKilled` is
//! the termination reason the container runtime reports through CRI after an OOM kill.
//! Event reasons `Unhealthy`, `Killing`, `Failed`, `BackOff` from
//! `kubernetes/kubernetes:pkg/kubelet/events/event.go`.

use super::common::*;
use super::{Evidence, Finding, Probe};
use crate::state::{ClusterState, ResourceKind};
use k8s_openapi::api::core::v1::{ContainerStatus, Event, Pod};

/// This area's probes.
pub static PROBES: &[Probe] = &[
    Probe {
        id: "crashloop-app-error",
        failure_mode: "failure-mode/crashloop-app-error",
        title: "containers in CrashLoopBackOff whose last run exited with an application error code",
        needs: &[ResourceKind::Pod],
        subjects: &[ResourceKind::Pod],
        check: crashloop_app_error,
        decided_by_status: None,
    },
    Probe {
        id: "crashloop-command-not-found",
        failure_mode: "failure-mode/crashloop-command-not-found",
        title: "containers that cannot start because their command is not found or not executable (exit 126/127, StartError)",
        needs: &[ResourceKind::Pod],
        subjects: &[ResourceKind::Pod],
        check: crashloop_command_not_found,
        decided_by_status: None,
    },
    Probe {
        id: "crashloop-completed-restart-always",
        failure_mode: "failure-mode/crashloop-completed-restart-always",
        title: "containers in CrashLoopBackOff that exit 0 under restartPolicy Always",
        needs: &[ResourceKind::Pod],
        subjects: &[ResourceKind::Pod],
        check: crashloop_completed,
        decided_by_status: None,
    },
    Probe {
        id: "init-container-crashloop",
        failure_mode: "failure-mode/init-container-crashloop",
        title: "init containers in CrashLoopBackOff, holding the pod in Init",
        needs: &[ResourceKind::Pod],
        subjects: &[ResourceKind::Pod],
        check: init_container_crashloop,
        decided_by_status: None,
    },
    Probe {
        id: "oom-killed-container-limit",
        failure_mode: "failure-mode/oom-killed-container-limit",
        title: "containers whose last run ended OOMKilled",
        needs: &[ResourceKind::Pod],
        subjects: &[ResourceKind::Pod],
        check: oom_killed,
        decided_by_status: None,
    },
    Probe {
        id: "liveness-probe-wrong-path",
        failure_mode: "failure-mode/liveness-probe-wrong-path",
        title: "restarting containers whose liveness probe gets an HTTP 4xx (Unhealthy events)",
        needs: &[ResourceKind::Pod, ResourceKind::Event],
        subjects: &[ResourceKind::Pod],
        check: liveness_wrong_path,
        decided_by_status: None,
    },
    Probe {
        id: "liveness-probe-timeout",
        failure_mode: "failure-mode/liveness-probe-timeout",
        title: "restarting containers whose liveness probe times out (Unhealthy events)",
        needs: &[ResourceKind::Pod, ResourceKind::Event],
        subjects: &[ResourceKind::Pod],
        check: liveness_timeout,
        decided_by_status: None,
    },
    Probe {
        id: "readiness-probe-failing",
        failure_mode: "failure-mode/readiness-probe-failing",
        title: "running containers kept not ready by a failing readiness probe",
        needs: &[ResourceKind::Pod, ResourceKind::Event],
        subjects: &[ResourceKind::Pod],
        check: readiness_failing,
        decided_by_status: None,
    },
    Probe {
        id: "image-pull-not-found",
        failure_mode: "failure-mode/image-pull-not-found",
        title: "containers waiting in ErrImagePull/ImagePullBackOff because the image or tag does not exist",
        needs: &[ResourceKind::Pod, ResourceKind::Event],
        subjects: &[ResourceKind::Pod],
        check: image_pull_not_found,
        decided_by_status: Some(pulls_decided_by_status),
    },
    Probe {
        id: "image-pull-unauthorized",
        failure_mode: "failure-mode/image-pull-unauthorized",
        title: "containers waiting in ErrImagePull/ImagePullBackOff because the registry refuses the credentials",
        needs: &[ResourceKind::Pod, ResourceKind::Event],
        subjects: &[ResourceKind::Pod],
        check: image_pull_unauthorized,
        decided_by_status: Some(pulls_decided_by_status),
    },
    Probe {
        id: "image-pull-rate-limited",
        failure_mode: "failure-mode/image-pull-rate-limited",
        title: "containers waiting in ErrImagePull/ImagePullBackOff because the registry rate-limits pulls (429)",
        needs: &[ResourceKind::Pod, ResourceKind::Event],
        subjects: &[ResourceKind::Pod],
        check: image_pull_rate_limited,
        decided_by_status: Some(pulls_decided_by_status),
    },
    Probe {
        id: "image-pull-network",
        failure_mode: "failure-mode/image-pull-network",
        title: "containers waiting in ErrImagePull/ImagePullBackOff because the node cannot reach the registry",
        needs: &[ResourceKind::Pod, ResourceKind::Event],
        subjects: &[ResourceKind::Pod],
        check: image_pull_network,
        decided_by_status: Some(pulls_decided_by_status),
    },
    Probe {
        id: "invalid-image-name",
        failure_mode: "failure-mode/invalid-image-name",
        title: "containers waiting with InvalidImageName",
        needs: &[ResourceKind::Pod],
        subjects: &[ResourceKind::Pod],
        check: invalid_image_name,
        decided_by_status: None,
    },
    Probe {
        id: "create-container-config-error",
        failure_mode: "failure-mode/create-container-config-error",
        title: "containers waiting with CreateContainerConfigError (missing ConfigMap, Secret or key)",
        needs: &[ResourceKind::Pod],
        subjects: &[ResourceKind::Pod],
        check: create_container_config_error,
        decided_by_status: None,
    },
    Probe {
        id: "node-not-ready-kubelet-stopped",
        failure_mode: "failure-mode/node-not-ready-kubelet-stopped",
        title: "nodes whose Ready condition is Unknown because the kubelet stopped posting status",
        needs: &[ResourceKind::Node],
        subjects: &[ResourceKind::Node],
        check: node_kubelet_stopped,
        decided_by_status: None,
    },
    Probe {
        id: "node-pressure-eviction-memory",
        failure_mode: "failure-mode/node-pressure-eviction-memory",
        title: "nodes under MemoryPressure and pods the kubelet evicted for memory",
        needs: &[ResourceKind::Node, ResourceKind::Pod],
        subjects: &[ResourceKind::Node, ResourceKind::Pod],
        check: pressure_memory,
        decided_by_status: None,
    },
    Probe {
        id: "node-pressure-eviction-disk",
        failure_mode: "failure-mode/node-pressure-eviction-disk",
        title: "nodes under DiskPressure and pods the kubelet evicted for ephemeral storage",
        needs: &[ResourceKind::Node, ResourceKind::Pod],
        subjects: &[ResourceKind::Node, ResourceKind::Pod],
        check: pressure_disk,
        decided_by_status: None,
    },
    Probe {
        id: "pleg-not-healthy",
        failure_mode: "failure-mode/pleg-not-healthy",
        title: "nodes NotReady because the kubelet's PLEG is not healthy",
        needs: &[ResourceKind::Node],
        subjects: &[ResourceKind::Node],
        check: pleg_not_healthy,
        decided_by_status: None,
    },
    Probe {
        id: "container-runtime-down",
        failure_mode: "failure-mode/container-runtime-down",
        title: "nodes NotReady because the container runtime is down",
        needs: &[ResourceKind::Node],
        subjects: &[ResourceKind::Node],
        check: container_runtime_down,
        decided_by_status: None,
    },
    Probe {
        id: "pod-stuck-terminating-node-lost",
        failure_mode: "failure-mode/pod-stuck-terminating-node-lost",
        title: "pods past their deletion deadline on a node that is not Ready or no longer exists",
        needs: &[ResourceKind::Pod, ResourceKind::Node],
        subjects: &[ResourceKind::Pod, ResourceKind::Node],
        check: stuck_terminating_node_lost,
        decided_by_status: None,
    },
];

/// App and init container statuses with a flag telling init containers apart.
fn statuses(p: &Pod) -> impl Iterator<Item = (&ContainerStatus, bool)> {
    let s = p.status.as_ref();
    s.and_then(|s| s.container_statuses.as_ref())
        .into_iter()
        .flatten()
        .map(|c| (c, false))
        .chain(s.and_then(|s| s.init_container_statuses.as_ref()).into_iter().flatten().map(|c| (c, true)))
}

fn waiting_reason(c: &ContainerStatus) -> Option<&str> {
    c.state.as_ref()?.waiting.as_ref()?.reason.as_deref()
}

fn waiting_message(c: &ContainerStatus) -> &str {
    c.state.as_ref().and_then(|s| s.waiting.as_ref()).and_then(|w| w.message.as_deref()).unwrap_or("")
}

/// The last termination (`lastState.terminated`, else the current `state.terminated`).
fn last_terminated(c: &ContainerStatus) -> Option<&k8s_openapi::api::core::v1::ContainerStateTerminated> {
    c.last_state.as_ref().and_then(|s| s.terminated.as_ref()).or_else(|| c.state.as_ref().and_then(|s| s.terminated.as_ref()))
}

fn container_path(init: bool, name: &str) -> String {
    if init {
        format!("status.initContainerStatuses[name={name}]")
    } else {
        format!("status.containerStatuses[name={name}]")
    }
}

/// Events of the pod that concern one container (`involvedObject.fieldPath`
/// `spec.containers{name}` / `spec.initContainers{name}`), or the whole pod when the event
/// names no container.
fn container_events<'a>(events: &EventIndex<'a>, p: &Pod, container: &str) -> Vec<&'a Event> {
    events.of("Pod", &p.metadata)
        .into_iter()
        .filter(|e| match e.involved_object.field_path.as_deref() {
            Some(fp) if fp.contains('{') => fp.ends_with(&format!("{{{container}}}")),
            _ => true,
        })
        .collect()
}

/// Whether the kubelet has been killing the container for failed liveness probes
/// (`Killing` "Container {name} failed liveness probe, will be restarted",
/// `kubernetes/kubernetes:pkg/kubelet/kuberuntime/kuberuntime_manager.go`, or `Unhealthy`
/// "Liveness probe failed: …", `kubernetes/kubernetes:pkg/kubelet/prober/prober.go`).
fn liveness_failing(events: &EventIndex<'_>, p: &Pod, container: &str) -> bool {
    container_events(events, p, container).iter().any(|e| {
        let m = e.message.as_deref().unwrap_or("");
        (e.reason.as_deref() == Some("Killing") && m.contains("failed liveness probe"))
            || (e.reason.as_deref() == Some("Unhealthy") && m.starts_with("Liveness probe failed"))
    })
}

fn restart_evidence(p: &Pod, c: &ContainerStatus, init: bool) -> Vec<Evidence> {
    let path = container_path(init, &c.name);
    let mut ev = vec![Evidence::new(pod_ref(p), format!("{path}.restartCount"), c.restart_count.to_string())];
    if let Some(w) = waiting_reason(c) {
        ev.push(Evidence::new(pod_ref(p), format!("{path}.state.waiting.reason"), w));
    }
    if let Some(t) = last_terminated(c) {
        ev.push(Evidence::new(
            pod_ref(p),
            format!("{path}.lastState.terminated"),
            format!("exitCode={} reason={}", t.exit_code, t.reason.as_deref().unwrap_or("")),
        ));
        if let Some(m) = t.message.as_deref().filter(|m| !m.is_empty()) {
            ev.push(Evidence::new(pod_ref(p), format!("{path}.lastState.terminated.message"), m));
        }
    }
    ev
}

fn crashlooping(p: &Pod) -> impl Iterator<Item = (&ContainerStatus, bool)> {
    statuses(p).filter(move |(c, _)| waiting_reason(c) == Some("CrashLoopBackOff") && p.metadata.deletion_timestamp.is_none())
}

/// `crashloop-app-error`: an app container in `CrashLoopBackOff` whose last run exited
/// with 1–125 or 255 (the process's own exit status, not a signal: 128+n) and that is not
/// being killed by its liveness probe; 126/127 belong to `crashloop-command-not-found`.
fn crashloop_app_error(state: &ClusterState) -> Vec<Finding> {
    let events = EventIndex::new(state);
    let mut out = Vec::new();
    for p in &state.pods {
        for (c, init) in crashlooping(p) {
            let Some(t) = last_terminated(c) else { continue };
            let code = t.exit_code;
            if init || !((1..=125).contains(&code) || code == 255) || liveness_failing(&events, p, &c.name) {
                continue;
            }
            if t.reason.as_deref() == Some("OOMKilled") || t.reason.as_deref() == Some("StartError") {
                continue;
            }
            out.push(finding(
                pod_ref(p),
                format!("container {} keeps exiting with code {code} and the kubelet backs off restarting it", c.name),
                restart_evidence(p, c, init),
            ));
        }
    }
    out
}

/// `crashloop-command-not-found`: last termination exit code 126/127 (the shell's "cannot
/// execute" / "not found"), or reason `StartError`/`ContainerCannotRun` whose message holds
/// "executable file not found" (`golang/go:src/os/exec/lp_unix.go`, as runtimes report it) or
/// `exec: "<cmd>"` with "no such file or directory" (not runc's mount or subPath errors,
/// which end the same way).
fn crashloop_command_not_found(state: &ClusterState) -> Vec<Finding> {
    let mut out = Vec::new();
    for p in &state.pods {
        if is_terminal(p) {
            continue;
        }
        for (c, init) in statuses(p) {
            let Some(t) = last_terminated(c) else { continue };
            let msg = t.message.as_deref().unwrap_or("");
            // "no such file or directory" alone also ends runc's mount and subPath errors:
            // only the exec of the entrypoint (`exec: "<cmd>": …`) is a missing command.
            let start_error = matches!(t.reason.as_deref(), Some("StartError" | "ContainerCannotRun"))
                && (msg.contains("executable file not found") || (msg.contains("exec: \"") && msg.contains("no such file or directory")));
            if !(start_error || t.exit_code == 126 || t.exit_code == 127) || c.restart_count == 0 {
                continue;
            }
            out.push(finding(
                pod_ref(p),
                format!("container {} cannot start its command (exit code {})", c.name, t.exit_code),
                restart_evidence(p, c, init),
            ));
        }
    }
    out
}

/// `crashloop-completed-restart-always`: `CrashLoopBackOff` after exit code 0 (reason
/// `Completed`) in a pod with `restartPolicy: Always`, not killed by its liveness probe.
fn crashloop_completed(state: &ClusterState) -> Vec<Finding> {
    let events = EventIndex::new(state);
    let mut out = Vec::new();
    for p in &state.pods {
        let policy = p.spec.as_ref().and_then(|s| s.restart_policy.as_deref()).unwrap_or("Always");
        if policy != "Always" {
            continue;
        }
        for (c, init) in crashlooping(p) {
            if init || last_terminated(c).is_none_or(|t| t.exit_code != 0) || liveness_failing(&events, p, &c.name) {
                continue;
            }
            let mut ev = restart_evidence(p, c, init);
            ev.push(Evidence::new(pod_ref(p), "spec.restartPolicy", policy));
            out.push(finding(
                pod_ref(p),
                format!("container {} finishes successfully, but restartPolicy Always restarts it until the kubelet backs off", c.name),
                ev,
            ));
        }
    }
    out
}

/// `init-container-crashloop`: an init container (not a sidecar) in `CrashLoopBackOff`.
fn init_container_crashloop(state: &ClusterState) -> Vec<Finding> {
    let mut out = Vec::new();
    for p in &state.pods {
        for (c, init) in crashlooping(p) {
            if !init {
                continue;
            }
            let sidecar = p
                .spec
                .as_ref()
                .and_then(|s| s.init_containers.as_ref())
                .and_then(|ics| ics.iter().find(|ic| ic.name == c.name))
                .is_some_and(|ic| ic.restart_policy.as_deref() == Some("Always"));
            if sidecar {
                continue;
            }
            out.push(finding(
                pod_ref(p),
                format!("init container {} keeps failing, so the pod's app containers never start", c.name),
                restart_evidence(p, c, init),
            ));
        }
    }
    out
}

/// How long (seconds) an OOM kill or an eviction counts as current.
const RECENT_SECS: i64 = 3_600;

/// `oom-killed-container-limit`: last termination reason `OOMKilled`, finished within an
/// hour of the snapshot (an older kill is history), of a container in a pod that is not being deleted; the memory limit is part of
/// the evidence.
fn oom_killed(state: &ClusterState) -> Vec<Finding> {
    let mut out = Vec::new();
    for p in &state.pods {
        if p.metadata.deletion_timestamp.is_some() {
            continue;
        }
        for (c, init) in statuses(p) {
            let Some(t) = last_terminated(c).filter(|t| t.reason.as_deref() == Some("OOMKilled")) else { continue };
            // A kill more than an hour before the snapshot is history, not the current state.
            if age_secs(state, t.finished_at.as_ref()).is_some_and(|a| a > RECENT_SECS) {
                continue;
            }
            let mut ev = restart_evidence(p, c, init);
            let spec_c = p.spec.as_ref().and_then(|s| {
                s.containers.iter().chain(s.init_containers.iter().flatten()).find(|x| x.name == c.name)
            });
            let limit = spec_c
                .and_then(|x| x.resources.as_ref())
                .and_then(|r| r.limits.as_ref())
                .and_then(|l| l.get("memory"))
                .map(|q| q.0.clone())
                .unwrap_or_else(|| "none".into());
            let list = if init { "initContainers" } else { "containers" };
            ev.push(Evidence::new(pod_ref(p), format!("spec.{list}[name={}].resources.limits.memory", c.name), limit.clone()));
            let summary = if limit == "none" {
                format!("container {} was OOM-killed; it has no memory limit of its own, so the pod's or the node's memory ran out", c.name)
            } else {
                format!("container {} was killed for exceeding its memory limit ({limit})", c.name)
            };
            out.push(finding(pod_ref(p), summary, ev));
        }
    }
    out
}

/// Unhealthy liveness events of a container whose message contains one of `needles`,
/// when the container has restarted: findings with the probe's definition.
fn liveness_with(state: &ClusterState, needles: &[&str], what: &str) -> Vec<Finding> {
    let events = EventIndex::new(state);
    let mut out = Vec::new();
    for p in &state.pods {
        if is_terminal(p) || p.metadata.deletion_timestamp.is_some() {
            continue;
        }
        for (c, init) in statuses(p) {
            if init || c.restart_count == 0 {
                continue;
            }
            let evs: Vec<&Event> = container_events(&events, p, &c.name)
                .into_iter()
                .filter(|e| {
                    let m = e.message.as_deref().unwrap_or("");
                    e.reason.as_deref() == Some("Unhealthy") && m.starts_with("Liveness probe failed") && needles.iter().any(|n| m.contains(n))
                })
                .collect();
            let Some(last) = evs.last() else { continue };
            let mut ev = vec![event_evidence(last)];
            if let Some(probe) = p
                .spec
                .as_ref()
                .and_then(|s| s.containers.iter().find(|x| x.name == c.name))
                .and_then(|x| x.liveness_probe.as_ref())
            {
                let field = format!("spec.containers[name={}].livenessProbe", c.name);
                if let Some(h) = &probe.http_get {
                    let port = match &h.port {
                        k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(i) => i.to_string(),
                        k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::String(s) => s.clone(),
                    };
                    ev.push(Evidence::new(pod_ref(p), format!("{field}.httpGet"), format!("path={} port={port}", h.path.as_deref().unwrap_or("/"))));
                }
                ev.push(Evidence::new(
                    pod_ref(p),
                    format!("{field}.timeoutSeconds"),
                    probe.timeout_seconds.unwrap_or(1).to_string(),
                ));
            }
            ev.extend(restart_evidence(p, c, init));
            out.push(finding(pod_ref(p), format!("container {} is restarted because its liveness probe {what}", c.name), ev));
        }
    }
    out
}

/// `liveness-probe-wrong-path`: "Liveness probe failed: HTTP probe failed with statuscode:
/// 4xx" (`kubernetes/kubernetes:pkg/probe/http/http.go`, prefixed in
/// `pkg/kubelet/prober/prober.go`) on a container that has restarted.
fn liveness_wrong_path(state: &ClusterState) -> Vec<Finding> {
    let codes: Vec<String> = (400..500).map(|c| format!("HTTP probe failed with statuscode: {c}")).collect();
    let refs: Vec<&str> = codes.iter().map(String::as_str).collect();
    liveness_with(state, &refs, "gets an HTTP 4xx from the configured path or port")
}

/// `liveness-probe-timeout`: the liveness probe did not answer within `timeoutSeconds`.
/// HTTP: "context deadline exceeded (Client.Timeout exceeded while awaiting headers)" (Go's
/// `golang/go:src/net/http/client.go`); exec: `command "<cmd>" timed out` (`ExecSync` in
/// `kubernetes/kubernetes:staging/src/k8s.io/cri-client/pkg/remote_runtime.go`, surfaced by
/// `kubernetes/kubernetes:pkg/probe/exec/exec.go`); gRPC: "timeout: failed to connect service
/// %q within %v" and "timeout: health rpc did not complete within %v"
/// (`kubernetes/kubernetes:pkg/probe/grpc/grpc.go`); TCP: "dial tcp …: i/o timeout".
fn liveness_timeout(state: &ClusterState) -> Vec<Finding> {
    liveness_with(
        state,
        &[
            "context deadline exceeded",
            "Client.Timeout exceeded",
            "\" timed out",
            "timeout: failed to connect service",
            "timeout: health rpc did not complete within",
            "i/o timeout",
        ],
        "does not answer within timeoutSeconds",
    )
}

/// `readiness-probe-failing`: a running container with `ready: false` in a pod not Ready for
/// 5 minutes, and `Unhealthy` "Readiness probe failed: …" events
/// (`kubernetes/kubernetes:pkg/kubelet/prober/prober.go`).
fn readiness_failing(state: &ClusterState) -> Vec<Finding> {
    let events = EventIndex::new(state);
    let mut out = Vec::new();
    for p in &state.pods {
        if is_terminal(p) || p.metadata.deletion_timestamp.is_some() {
            continue;
        }
        // Not ready for 5 minutes: a pod warming up fails its readiness probe for a while.
        let not_ready_for = pod_condition(p, "Ready")
            .filter(|c| c.status == "False")
            .and_then(|c| age_secs(state, c.last_transition_time.as_ref()))
            .unwrap_or(i64::MAX);
        if not_ready_for < 300 {
            continue;
        }
        for (c, init) in statuses(p) {
            let running = c.state.as_ref().and_then(|s| s.running.as_ref()).is_some();
            if init || !running || c.ready {
                continue;
            }
            let evs: Vec<&Event> = container_events(&events, p, &c.name)
                .into_iter()
                .filter(|e| e.reason.as_deref() == Some("Unhealthy") && e.message.as_deref().unwrap_or("").starts_with("Readiness probe failed"))
                .collect();
            let Some(last) = evs.last() else { continue };
            out.push(finding(
                pod_ref(p),
                format!("container {} runs but its readiness probe fails, so the pod gets no Service traffic", c.name),
                vec![Evidence::new(pod_ref(p), format!("{}.ready", container_path(init, &c.name)), "false"), event_evidence(last)],
            ));
        }
    }
    out
}

/// What an image pull error says, from the pull error text of containerd / CRI-O / the
/// registry (templates in the knowledge: `containerd/containerd:core/remotes/docker/resolver.go`,
/// `containerd/containerd:core/remotes/errors/errors.go`,
/// `distribution/distribution:registry/api/v2/errors.go`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PullFailure {
    RateLimited,
    Unauthorized,
    NotFound,
    Network,
    /// "pull access denied, repository does not exist or may require authorization": what
    /// containerd reports both for a private repository and for one that does not exist on
    /// Docker Hub (which answers `insufficient_scope` for either); told apart by context.
    DeniedOrMissing,
}

fn classify_pull(msg: &str) -> Option<PullFailure> {
    let m = msg.to_ascii_lowercase();
    if m.contains("toomanyrequests") || m.contains("429 too many requests") {
        Some(PullFailure::RateLimited)
    } else if m.contains("pull access denied, repository does not exist or may require authorization") {
        Some(PullFailure::DeniedOrMissing)
    } else if m.contains("pull access denied") || m.contains("401 unauthorized") || m.contains("403 forbidden") || m.contains("authentication required") || m.contains("no basic auth credentials") {
        Some(PullFailure::Unauthorized)
    } else if m.contains(": not found") || m.contains("manifest unknown") || m.contains("not found: manifest") {
        Some(PullFailure::NotFound)
    } else if m.contains("dial tcp")
        || m.contains("i/o timeout")
        || m.contains("no such host")
        || m.contains("connection refused")
        || m.contains("tls handshake timeout")
        || m.contains("network is unreachable")
        || m.contains("x509: ")
        || m.contains("server gave http response to https client")
    {
        Some(PullFailure::Network)
    } else {
        None
    }
}

/// Whether every container failing to pull (ErrImagePull/ImagePullBackOff) shows the pull
/// error itself, in a `Failed` event or in its own `state.waiting.message` (ErrImagePull
/// carries the whole error): then the image-pull probes decide without Events.
fn pulls_decided_by_status(state: &ClusterState) -> bool {
    let events = EventIndex::new(state);
    state.pods.iter().all(|p| {
        statuses(p).all(|(c, _)| {
            !matches!(waiting_reason(c), Some("ErrImagePull" | "ImagePullBackOff"))
                || classify_pull(waiting_message(c)).is_some()
                || container_events(&events, p, &c.name).iter().any(|e| e.reason.as_deref() == Some("Failed") && classify_pull(e.message.as_deref().unwrap_or("")).is_some())
        })
    })
}

fn image_pull(state: &ClusterState, want: PullFailure, summary: &str) -> Vec<Finding> {
    let events = EventIndex::new(state);
    let mut out = Vec::new();
    for p in &state.pods {
        for (c, init) in statuses(p) {
            if !matches!(waiting_reason(c), Some("ErrImagePull" | "ImagePullBackOff")) {
                continue;
            }
            // The newest `Failed` pull event of this container, else the waiting message
            // (ErrImagePull carries the pull error itself).
            let evs: Vec<&Event> = container_events(&events, p, &c.name)
                .into_iter()
                .filter(|e| e.reason.as_deref() == Some("Failed") && e.message.as_deref().unwrap_or("").starts_with("Failed to pull image"))
                .collect();
            let (text, ev0) = match evs.last() {
                Some(e) => (e.message.clone().unwrap_or_default(), event_evidence(e)),
                None => {
                    let m = waiting_message(c).to_string();
                    (m.clone(), Evidence::new(pod_ref(p), format!("{}.state.waiting.message", container_path(init, &c.name)), m))
                }
            };
            let got = match classify_pull(&text) {
                // Without pull credentials a Docker Hub image that gives "pull access denied"
                // is far more often a misspelt repository than a private one.
                Some(PullFailure::DeniedOrMissing) => {
                    let has_secrets = p.spec.as_ref().and_then(|s| s.image_pull_secrets.as_ref()).is_some_and(|v| !v.is_empty());
                    if !has_secrets && is_docker_hub(&c.image) {
                        Some(PullFailure::NotFound)
                    } else {
                        Some(PullFailure::Unauthorized)
                    }
                }
                other => other,
            };
            if got != Some(want) {
                continue;
            }
            let path = container_path(init, &c.name);
            out.push(finding(
                pod_ref(p),
                format!("image {} of container {}: {summary}", c.image, c.name),
                vec![
                    Evidence::new(pod_ref(p), format!("{path}.state.waiting.reason"), waiting_reason(c).unwrap_or("")),
                    Evidence::new(pod_ref(p), format!("{path}.image"), c.image.clone()),
                    ev0,
                ],
            ));
        }
    }
    out
}

/// Whether an image reference resolves to Docker Hub: no registry host in its first path
/// component (no `.` or `:` and not `localhost`), or `docker.io` / `index.docker.io` named.
fn is_docker_hub(image: &str) -> bool {
    match image.split_once('/') {
        None => true,
        Some((first, _)) => {
            first == "docker.io" || first == "index.docker.io" || !(first.contains('.') || first.contains(':') || first == "localhost")
        }
    }
}

/// `image-pull-not-found`: the pull error says `not found` / `manifest unknown`, or "pull
/// access denied, repository does not exist …" for a Docker Hub image while the pod has no
/// `imagePullSecrets`.
fn image_pull_not_found(state: &ClusterState) -> Vec<Finding> {
    image_pull(state, PullFailure::NotFound, "the registry has no such image or tag")
}

/// `image-pull-unauthorized`: `pull access denied` (for "repository does not exist or may
/// require authorization" only when the pod has pull secrets or the registry is not Docker
/// Hub), `401 Unauthorized`, `403 Forbidden`.
fn image_pull_unauthorized(state: &ClusterState) -> Vec<Finding> {
    image_pull(state, PullFailure::Unauthorized, "the registry refuses the pull (missing or wrong pull credentials, or a private repository)")
}

/// `image-pull-rate-limited`: `429 Too Many Requests` / `toomanyrequests`.
fn image_pull_rate_limited(state: &ClusterState) -> Vec<Finding> {
    image_pull(state, PullFailure::RateLimited, "the registry rate-limits this node's pulls")
}

/// `image-pull-network`: dial/timeout/DNS errors reaching the registry.
fn image_pull_network(state: &ClusterState) -> Vec<Finding> {
    image_pull(state, PullFailure::Network, "the node cannot reach the registry")
}

fn waiting_with(state: &ClusterState, reason: &str, summary: impl Fn(&str) -> String) -> Vec<Finding> {
    let mut out = Vec::new();
    for p in &state.pods {
        for (c, init) in statuses(p) {
            if waiting_reason(c) != Some(reason) {
                continue;
            }
            let path = container_path(init, &c.name);
            out.push(finding(
                pod_ref(p),
                summary(&c.name),
                vec![
                    Evidence::new(pod_ref(p), format!("{path}.state.waiting.reason"), reason),
                    Evidence::new(pod_ref(p), format!("{path}.state.waiting.message"), waiting_message(c)),
                ],
            ));
        }
    }
    out
}

/// `invalid-image-name`: waiting reason `InvalidImageName`
/// (`kubernetes/kubernetes:pkg/kubelet/images/types.go`).
fn invalid_image_name(state: &ClusterState) -> Vec<Finding> {
    waiting_with(state, "InvalidImageName", |c| format!("container {c}'s image reference cannot be parsed"))
}

/// `create-container-config-error`: waiting reason `CreateContainerConfigError`
/// (`kubernetes/kubernetes:pkg/kubelet/kuberuntime/kuberuntime_container.go`), worded from
/// the waiting message: a missing ConfigMap or Secret (`configmap "…" not found`,
/// `secret "…" not found`), a missing key ("couldn't find key … in ConfigMap|Secret …",
/// `kubernetes/kubernetes:pkg/kubelet/kubelet_pods.go`), or the runAsNonRoot check
/// ("container has runAsNonRoot and image will run as root …",
/// `kubernetes/kubernetes:pkg/kubelet/kuberuntime/security_context_others.go`).
fn create_container_config_error(state: &ClusterState) -> Vec<Finding> {
    let mut out = Vec::new();
    for p in &state.pods {
        for (c, init) in statuses(p) {
            if waiting_reason(c) != Some("CreateContainerConfigError") {
                continue;
            }
            let path = container_path(init, &c.name);
            out.push(finding(
                pod_ref(p),
                config_error_summary(&c.name, waiting_message(c)),
                vec![
                    Evidence::new(pod_ref(p), format!("{path}.state.waiting.reason"), "CreateContainerConfigError"),
                    Evidence::new(pod_ref(p), format!("{path}.state.waiting.message"), waiting_message(c)),
                ],
            ));
        }
    }
    out
}

/// What a `CreateContainerConfigError` message says went wrong, as a finding summary.
fn config_error_summary(container: &str, msg: &str) -> String {
    let what = if msg.contains("runAsNonRoot") || msg.contains("non-root") {
        "the pod requires runAsNonRoot but the image would run as root (or as a non-numeric user the kubelet cannot check)"
    } else if msg.contains("couldn't find key") {
        "a key it reads from a ConfigMap or Secret does not exist"
    } else if msg.starts_with("configmap \"") || msg.contains(": configmap \"") {
        "a ConfigMap it references does not exist"
    } else if msg.starts_with("secret \"") || msg.contains(": secret \"") {
        "a Secret it references does not exist"
    } else {
        "see the waiting message"
    };
    format!("the kubelet cannot build container {container}'s configuration: {what}")
}

fn node_condition_evidence(n: &k8s_openapi::api::core::v1::Node, type_: &str) -> Vec<Evidence> {
    let mut ev = Vec::new();
    if let Some(c) = node_condition(n, type_) {
        let r = obj_ref(ResourceKind::Node, &n.metadata);
        ev.push(Evidence::new(r.clone(), format!("status.conditions[type={type_}].status"), c.status.clone()));
        ev.push(Evidence::new(r.clone(), format!("status.conditions[type={type_}].reason"), c.reason.clone().unwrap_or_default()));
        ev.push(Evidence::new(r, format!("status.conditions[type={type_}].message"), c.message.clone().unwrap_or_default()));
    }
    ev
}

/// `node-not-ready-kubelet-stopped`: `Ready=Unknown` with reason `NodeStatusUnknown`
/// ("Kubelet stopped posting node status.") or `NodeStatusNeverUpdated` ("Kubelet never
/// posted node status.", a node whose kubelet never reported), set by the node lifecycle controller,
/// `kubernetes/kubernetes:pkg/controller/nodelifecycle/node_lifecycle_controller.go`); the
/// node's Lease in `kube-node-lease` shows when the kubelet last renewed.
fn node_kubelet_stopped(state: &ClusterState) -> Vec<Finding> {
    let mut out = Vec::new();
    for n in &state.nodes {
        let Some(c) = node_condition(n, "Ready") else { continue };
        if c.status != "Unknown" || !matches!(c.reason.as_deref(), Some("NodeStatusUnknown" | "NodeStatusNeverUpdated")) {
            continue;
        }
        let mut ev = node_condition_evidence(n, "Ready");
        if let Some(hb) = &c.last_heartbeat_time {
            let ago = age_secs(state, Some(hb)).map(human_secs).unwrap_or_default();
            ev.push(Evidence::new(obj_ref(ResourceKind::Node, &n.metadata), "status.conditions[type=Ready].lastHeartbeatTime", format!("{} ({ago} before the snapshot)", hb.0)));
        }
        if let Some(l) = state
            .leases
            .iter()
            .find(|l| l.metadata.namespace.as_deref() == Some("kube-node-lease") && l.metadata.name == n.metadata.name)
        {
            if let Some(rt) = l.spec.as_ref().and_then(|s| s.renew_time.as_ref()) {
                let ago = age_secs(state, Some(&k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(rt.0))).map(human_secs).unwrap_or_default();
                ev.push(Evidence::new(obj_ref(ResourceKind::Lease, &l.metadata), "spec.renewTime", format!("{} ({ago} before the snapshot)", rt.0)));
            }
        }
        out.push(finding(
            obj_ref(ResourceKind::Node, &n.metadata),
            if c.reason.as_deref() == Some("NodeStatusNeverUpdated") {
                "the kubelet never posted node status, so the node is Unknown and its pods will be evicted".to_string()
            } else {
                "the kubelet stopped posting node status, so the node is Unknown and its pods will be evicted".to_string()
            },
            ev,
        ));
    }
    out
}

/// Node pressure: condition `type_` True on a node, and pods with `status.reason`
/// `Evicted` whose message says "The node was low on resource: {resource}." or names the
/// condition in "The node had condition: [{types}]." (the admission rejection, which the
/// kubelet's `rejectPod` prefixes with "Pod was rejected: " and which lists several types
/// space-separated, `kubernetes/kubernetes:pkg/kubelet/kubelet.go`), from
/// `kubernetes/kubernetes:pkg/kubelet/eviction/helpers.go`; condition types from
/// `kubernetes/kubernetes:staging/src/k8s.io/api/core/v1/types.go`.
fn pressure(state: &ClusterState, type_: &str, resources: &[&str], what: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    for n in &state.nodes {
        if node_condition(n, type_).is_some_and(|c| c.status == "True") {
            out.push(finding(
                obj_ref(ResourceKind::Node, &n.metadata),
                format!("the node reports {type_}: the kubelet is evicting pods to reclaim {what}"),
                node_condition_evidence(n, type_),
            ));
        }
    }
    for p in &state.pods {
        let s = p.status.as_ref();
        if s.and_then(|s| s.reason.as_deref()) != Some("Evicted") {
            continue;
        }
        // An eviction more than an hour old (newest condition transition) is history.
        let newest = s
            .and_then(|s| s.conditions.as_ref())
            .into_iter()
            .flatten()
            .filter_map(|c| age_secs(state, c.last_transition_time.as_ref()))
            .min();
        if newest.is_some_and(|a| a > RECENT_SECS) {
            continue;
        }
        let msg = s.and_then(|s| s.message.as_deref()).unwrap_or("");
        // Admission rejections arrive as "Pod was rejected: The node had condition: [A B]. ",
        // so the condition text is searched anywhere and may list several types.
        let hit = resources.iter().any(|r| msg.contains(&format!("The node was low on resource: {r}.")))
            || (msg.contains("The node had condition:") && msg.contains(type_));
        if !hit {
            continue;
        }
        out.push(finding(
            pod_ref(p),
            format!("the kubelet evicted the pod because node {} ran low on {what}", node_name(p).unwrap_or("?")),
            vec![Evidence::new(pod_ref(p), "status.reason", "Evicted"), Evidence::new(pod_ref(p), "status.message", msg)],
        ));
    }
    out
}

/// `node-pressure-eviction-memory`: MemoryPressure / evictions for `memory`.
fn pressure_memory(state: &ClusterState) -> Vec<Finding> {
    pressure(state, "MemoryPressure", &["memory"], "memory")
}

/// `node-pressure-eviction-disk`: DiskPressure / evictions for `ephemeral-storage` or
/// `inodes`: `signalToResource` in `kubernetes/kubernetes:pkg/kubelet/eviction/helpers.go`
/// maps the nodefs and imagefs signals to those two resource names (never "nodefs").
fn pressure_disk(state: &ClusterState) -> Vec<Finding> {
    pressure(state, "DiskPressure", &["ephemeral-storage", "inodes"], "disk space")
}

fn ready_message_contains(state: &ClusterState, needles: &[&str], summary: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    for n in &state.nodes {
        let Some(c) = node_condition(n, "Ready") else { continue };
        if c.status != "False" || !needles.iter().any(|x| c.message.as_deref().unwrap_or("").contains(x)) {
            continue;
        }
        out.push(finding(obj_ref(ResourceKind::Node, &n.metadata), summary.to_string(), node_condition_evidence(n, "Ready")));
    }
    out
}

/// `pleg-not-healthy`: `Ready=False` with "PLEG is not healthy: pleg was last seen active
/// … ago; threshold is …" (`kubernetes/kubernetes:pkg/kubelet/pleg/generic.go`, reported
/// through the kubelet's runtime state).
fn pleg_not_healthy(state: &ClusterState) -> Vec<Finding> {
    ready_message_contains(state, &["PLEG is not healthy"], "the kubelet's pod lifecycle event generator is stalled, so the node is NotReady")
}

/// `container-runtime-down`: `Ready=False` with "container runtime is down" or "container
/// runtime not ready: RuntimeReady=false …" (`kubernetes/kubernetes:pkg/kubelet/runtime.go`,
/// the kubelet's runtime state), or "container runtime status check may not have completed
/// yet" for more than two minutes (`Ready` transition): that one is normal right after the
/// kubelet starts.
fn container_runtime_down(state: &ClusterState) -> Vec<Finding> {
    let summary = "the kubelet cannot reach the container runtime, so the node is NotReady";
    let mut out = ready_message_contains(state, &["container runtime is down", "container runtime not ready: RuntimeReady=false"], summary);
    for f in ready_message_contains(state, &["container runtime status check may not have completed yet"], summary) {
        let node = state.nodes.iter().find(|n| n.metadata.name.as_deref() == Some(f.object.name.as_str()));
        let since = node.and_then(|n| node_condition(n, "Ready")).and_then(|c| age_secs(state, c.last_transition_time.as_ref()));
        if since.is_some_and(|s| s >= 120) && !out.iter().any(|o| o.object == f.object) {
            out.push(f);
        }
    }
    out
}

/// `pod-stuck-terminating-node-lost`: `metadata.deletionTimestamp` (the deadline: request
/// time plus the grace period) more than a minute past, on a node whose `Ready` is not
/// `True` or that no longer exists: no kubelet is there to confirm the kill.
fn stuck_terminating_node_lost(state: &ClusterState) -> Vec<Finding> {
    let mut out = Vec::new();
    for p in &state.pods {
        let Some(dt) = &p.metadata.deletion_timestamp else { continue };
        let Some(nn) = node_name(p) else { continue };
        let Some(past) = age_secs(state, Some(dt)) else { continue };
        if past < 60 || is_terminal(p) {
            continue;
        }
        let node = state.nodes.iter().find(|n| n.metadata.name.as_deref() == Some(nn));
        let ready = node.and_then(node_ready);
        if ready == Some("True") {
            continue;
        }
        let mut ev = vec![
            Evidence::new(pod_ref(p), "metadata.deletionTimestamp", format!("{} ({} past)", dt.0, human_secs(past))),
            Evidence::new(pod_ref(p), "spec.nodeName", nn),
        ];
        match node {
            Some(n) => ev.extend(node_condition_evidence(n, "Ready")),
            None => ev.push(Evidence::new(
                crate::state::ObjectRef { kind: ResourceKind::Node, namespace: None, name: nn.to_string() },
                "metadata.name",
                "absent: the node object no longer exists",
            )),
        }
        out.push(finding(
            pod_ref(p),
            format!("the pod stays Terminating because its node {nn} is not Ready, so no kubelet confirms the kill"),
            ev,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pull_errors_are_told_apart() {
        assert_eq!(classify_pull("Failed to pull image \"x\": rpc error: code = NotFound desc = failed to pull and unpack image \"docker.io/library/x:1\": failed to resolve reference \"docker.io/library/x:1\": docker.io/library/x:1: not found"), Some(PullFailure::NotFound));
        assert_eq!(classify_pull("failed to resolve reference \"r/x:1\": pull access denied, repository does not exist or may require authorization: server message: insufficient_scope"), Some(PullFailure::DeniedOrMissing));
        assert!(is_docker_hub("nginx:1.27") && is_docker_hub("bitnami/redis:7") && is_docker_hub("docker.io/library/x:1"));
        assert!(!is_docker_hub("registry.example.com/app:1") && !is_docker_hub("localhost:5000/app") && !is_docker_hub("localhost/app"));
        assert_eq!(classify_pull("unexpected status from HEAD request to https://r/v2/x/manifests/1: 401 Unauthorized"), Some(PullFailure::Unauthorized));
        assert_eq!(classify_pull("429 Too Many Requests - Server message: toomanyrequests: You have reached your pull rate limit"), Some(PullFailure::RateLimited));
        assert_eq!(classify_pull("dial tcp 10.0.0.1:443: i/o timeout"), Some(PullFailure::Network));
        assert_eq!(classify_pull("something else"), None);
        // Issue 15 (5): the error a pod's own status holds for a registry with an unknown CA.
        assert_eq!(
            classify_pull("failed to pull and unpack image \"registry.internal/app:1\": failed to resolve reference \"registry.internal/app:1\": failed to do request: Head \"https://registry.internal/v2/app/manifests/1\": tls: failed to verify certificate: x509: certificate signed by unknown authority"),
            Some(PullFailure::Network)
        );
    }
}
