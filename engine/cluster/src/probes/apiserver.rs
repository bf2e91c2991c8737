//! Probes for the `apiserver` failure modes: the aggregation layer and admission
//! webhooks whose backends are gone.
//!
//! APIService condition `Available` with reasons such as `MissingEndpoints`,
//! `ServiceNotFound`, `FailedDiscoveryCheck` is written by
//! `kubernetes/kubernetes:staging/src/k8s.io/kube-aggregator/pkg/controllers/status/remote/remote_available_controller.go`;
//! a local APIService (no `spec.service`) is served by the API server itself. A webhook's
//! `failurePolicy` defaults to `Fail` in admissionregistration.k8s.io/v1
//! (`kubernetes/kubernetes:pkg/apis/admissionregistration/v1/defaults.go`); the API
//! server calls a `clientConfig.service` webhook at the Service's ClusterIP by default (the
//! `NewClusterIPServiceResolver` of `kubernetes/kubernetes:staging/src/k8s.io/kube-aggregator/pkg/apiserver/resolvers.go`, which the kube-apiserver's `buildServiceResolver` picks;
//! endpoint routing only with `--enable-aggregator-routing`), so the call reaches the
//! Service's ready endpoints and a Service without one makes every call fail.

use super::common::*;
use super::networking::endpoint_counts;
use super::{Evidence, Finding, Probe};
use crate::state::{ClusterState, ObjectRef, ResourceKind};
use k8s_openapi::api::admissionregistration::v1::{RuleWithOperations, ServiceReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use std::collections::BTreeMap;

/// This area's probes.
pub static PROBES: &[Probe] = &[
    Probe {
        id: "aggregated-apiservice-unavailable",
        failure_mode: "failure-mode/aggregated-apiservice-unavailable",
        title: "aggregated APIServices whose Available condition is False",
        needs: &[ResourceKind::APIService],
        subjects: &[ResourceKind::APIService],
        check: apiservice_unavailable,
        decided_by_status: None,
    },
    Probe {
        id: "admission-webhook-unreachable",
        failure_mode: "failure-mode/admission-webhook-unreachable",
        title: "failurePolicy Fail webhooks whose Service is missing or has no ready endpoint",
        needs: &[ResourceKind::ValidatingWebhookConfiguration, ResourceKind::MutatingWebhookConfiguration, ResourceKind::Service, ResourceKind::EndpointSlice],
        subjects: &[ResourceKind::ValidatingWebhookConfiguration, ResourceKind::MutatingWebhookConfiguration, ResourceKind::Service],
        check: webhook_unreachable,
        decided_by_status: None,
    },
    Probe {
        id: "admission-webhook-self-deadlock",
        failure_mode: "failure-mode/admission-webhook-self-deadlock",
        title: "unreachable failurePolicy Fail webhooks that intercept the creation of their own backend pods",
        needs: &[
            ResourceKind::ValidatingWebhookConfiguration,
            ResourceKind::MutatingWebhookConfiguration,
            ResourceKind::Service,
            ResourceKind::EndpointSlice,
            ResourceKind::Namespace,
        ],
        subjects: &[ResourceKind::ValidatingWebhookConfiguration, ResourceKind::MutatingWebhookConfiguration],
        check: webhook_self_deadlock,
        decided_by_status: None,
    },
];

/// `aggregated-apiservice-unavailable`: an APIService with `spec.service` and
/// `Available=False`.
fn apiservice_unavailable(state: &ClusterState) -> Vec<Finding> {
    let mut out = Vec::new();
    for a in &state.api_services {
        let Some(svc) = a.spec.as_ref().and_then(|s| s.service.as_ref()) else { continue };
        let Some(c) = a.status.as_ref().and_then(|s| s.conditions.as_ref()).and_then(|cs| cs.iter().find(|c| c.type_ == "Available")) else {
            continue;
        };
        if c.status != "False" {
            continue;
        }
        let r = obj_ref(ResourceKind::APIService, &a.metadata);
        let ev = vec![
            Evidence::new(r.clone(), "status.conditions[type=Available].status", "False"),
            Evidence::new(r.clone(), "status.conditions[type=Available].reason", c.reason.clone().unwrap_or_default()),
            Evidence::new(r.clone(), "status.conditions[type=Available].message", c.message.clone().unwrap_or_default()),
            Evidence::new(
                r.clone(),
                "spec.service",
                format!("{}/{}", svc.namespace.as_deref().unwrap_or(""), svc.name.as_deref().unwrap_or("")),
            ),
        ];
        out.push(finding(
            r,
            format!(
                "the aggregated API {} is unavailable ({}): discovery and kubectl calls touching it fail",
                a.metadata.name.as_deref().unwrap_or(""),
                c.reason.as_deref().unwrap_or("no reason")
            ),
            ev,
        ));
    }
    out
}

/// One webhook of either kind, flattened.
struct Hook<'a> {
    config: ObjectRef,
    name: &'a str,
    failure_policy: &'a str,
    service: Option<&'a ServiceReference>,
    rules: &'a [RuleWithOperations],
    namespace_selector: Option<&'a LabelSelector>,
    object_selector: Option<&'a LabelSelector>,
}

fn hooks(state: &ClusterState) -> Vec<Hook<'_>> {
    let mut out = Vec::new();
    for c in &state.validating_webhook_configurations {
        for w in c.webhooks.iter().flatten() {
            out.push(Hook {
                config: obj_ref(ResourceKind::ValidatingWebhookConfiguration, &c.metadata),
                name: &w.name,
                failure_policy: w.failure_policy.as_deref().unwrap_or("Fail"),
                service: w.client_config.service.as_ref(),
                rules: w.rules.as_deref().unwrap_or(&[]),
                namespace_selector: w.namespace_selector.as_ref(),
                object_selector: w.object_selector.as_ref(),
            });
        }
    }
    for c in &state.mutating_webhook_configurations {
        for w in c.webhooks.iter().flatten() {
            out.push(Hook {
                config: obj_ref(ResourceKind::MutatingWebhookConfiguration, &c.metadata),
                name: &w.name,
                failure_policy: w.failure_policy.as_deref().unwrap_or("Fail"),
                service: w.client_config.service.as_ref(),
                rules: w.rules.as_deref().unwrap_or(&[]),
                namespace_selector: w.namespace_selector.as_ref(),
                object_selector: w.object_selector.as_ref(),
            });
        }
    }
    out
}

/// Why a webhook's Service cannot be called: missing, or no ready endpoint (for a Service
/// with a selector; one without is managed by hand and not judged).
fn unreachable_why(state: &ClusterState, s: &ServiceReference) -> Option<(String, Evidence)> {
    let sref = ObjectRef { kind: ResourceKind::Service, namespace: Some(s.namespace.clone()), name: s.name.clone() };
    let Some(svc) = state.services.iter().find(|x| x.metadata.namespace.as_deref() == Some(&s.namespace) && x.metadata.name.as_deref() == Some(&s.name))
    else {
        return Some(("its Service does not exist".into(), Evidence::new(sref, "metadata.name", "absent: the Service does not exist")));
    };
    if svc.spec.as_ref().and_then(|x| x.selector.as_ref()).is_none_or(|x| x.is_empty()) {
        return None;
    }
    let (ready, total) = endpoint_counts(state, Some(&s.namespace), &s.name);
    (ready == 0).then(|| ("its Service has no ready endpoint".to_string(), Evidence::new(sref, "endpointslices", format!("{ready} ready of {total} endpoint(s)"))))
}

fn hook_evidence(h: &Hook<'_>) -> Vec<Evidence> {
    vec![
        Evidence::new(h.config.clone(), format!("webhooks[name={}].failurePolicy", h.name), h.failure_policy),
        Evidence::new(
            h.config.clone(),
            format!("webhooks[name={}].clientConfig.service", h.name),
            h.service.map(|s| format!("{}/{}", s.namespace, s.name)).unwrap_or_default(),
        ),
    ]
}

/// `admission-webhook-unreachable`: `failurePolicy: Fail` (or unset) and a
/// `clientConfig.service` that is missing or has no ready endpoint: every request the
/// webhook's rules match is refused with "failed calling webhook".
fn webhook_unreachable(state: &ClusterState) -> Vec<Finding> {
    let mut out = Vec::new();
    for h in hooks(state) {
        if h.failure_policy != "Fail" {
            continue;
        }
        let Some(s) = h.service else { continue };
        let Some((why, e)) = unreachable_why(state, s) else { continue };
        let mut ev = hook_evidence(&h);
        ev.push(e);
        out.push(finding(h.config.clone(), format!("webhook {} fails closed and {why}, so every request it matches is refused", h.name), ev));
    }
    out
}

fn rule_matches_pod_create(r: &RuleWithOperations) -> bool {
    let ops = r.operations.as_deref().unwrap_or(&[]);
    let groups = r.api_groups.as_deref().unwrap_or(&[]);
    let resources = r.resources.as_deref().unwrap_or(&[]);
    ops.iter().any(|o| o == "CREATE" || o == "*")
        && groups.iter().any(|g| g.is_empty() || g == "*")
        && resources.iter().any(|x| x == "pods" || x == "*" || x == "*/*")
}

/// `admission-webhook-self-deadlock`: an unreachable `Fail` webhook whose rules match pod
/// CREATE, whose namespaceSelector matches the namespace of its own Service, and whose
/// objectSelector matches the labels the Service selects: the backend's replacement pods
/// are themselves refused, so the webhook can never come back by itself.
fn webhook_self_deadlock(state: &ClusterState) -> Vec<Finding> {
    let mut out = Vec::new();
    for h in hooks(state) {
        if h.failure_policy != "Fail" {
            continue;
        }
        let Some(s) = h.service else { continue };
        if unreachable_why(state, s).is_none() || !h.rules.iter().any(rule_matches_pod_create) {
            continue;
        }
        let ns_labels: BTreeMap<String, String> = state
            .namespaces
            .iter()
            .find(|n| n.metadata.name.as_deref() == Some(&s.namespace))
            .map(|n| labels(&n.metadata))
            .unwrap_or_else(|| BTreeMap::from([("kubernetes.io/metadata.name".to_string(), s.namespace.clone())]));
        if !h.namespace_selector.is_none_or(|sel| label_selector_matches(sel, &ns_labels)) {
            continue;
        }
        let pod_labels: BTreeMap<String, String> = state
            .services
            .iter()
            .find(|x| x.metadata.namespace.as_deref() == Some(&s.namespace) && x.metadata.name.as_deref() == Some(&s.name))
            .and_then(|x| x.spec.as_ref()?.selector.clone())
            .unwrap_or_default();
        if !h.object_selector.is_none_or(|sel| label_selector_matches(sel, &pod_labels)) {
            continue;
        }
        let mut ev = hook_evidence(&h);
        ev.push(Evidence::new(
            h.config.clone(),
            format!("webhooks[name={}].namespaceSelector", h.name),
            h.namespace_selector.map(|x| serde_json::to_string(x).unwrap_or_default()).unwrap_or_else(|| "{} (every namespace)".into()),
        ));
        ev.push(Evidence::new(
            ObjectRef { kind: ResourceKind::Namespace, namespace: None, name: s.namespace.clone() },
            "metadata.labels",
            show_map(&ns_labels),
        ));
        out.push(finding(
            h.config.clone(),
            format!("webhook {} is down and intercepts the creation of its own pods in {}, so it cannot recover", h.name, s.namespace),
            ev,
        ));
    }
    out
}
