//! The cluster state the probes read: typed Kubernetes objects (k8s-openapi) of the
//! kinds in [`ResourceKind`], the server version, and which kinds could not be read.
//!
//! A [`ClusterState`] is filled by a source (a live cluster through
//! [`super::live`], or a snapshot directory through [`super::snapshot`]) and is then
//! read by the probes in [`super::probes`]. Secrets are not a [`ResourceKind`]: no
//! source can be asked for them.

use kubewhy_engine::model::Version;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;

use k8s_openapi::api::admissionregistration::v1::{MutatingWebhookConfiguration, ValidatingWebhookConfiguration};
use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{
    Event, LimitRange, Namespace, Node, PersistentVolume, PersistentVolumeClaim, Pod, ResourceQuota, Service,
};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::networking::v1::NetworkPolicy;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use k8s_openapi::api::storage::v1::{CSIDriver, StorageClass, VolumeAttachment};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService;

macro_rules! resource_kinds {
    ($( $(#[$doc:meta])* $variant:ident => $field:ident : $ty:ty ),+ $(,)?) => {
        /// A kind of object the probes may read. Secrets (and ConfigMaps, which often hold
        /// credentials too) are deliberately not among them.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
        pub enum ResourceKind {
            $( $(#[$doc])* $variant, )+
        }

        impl ResourceKind {
            /// Every kind, in declaration order.
            pub const ALL: &'static [ResourceKind] = &[$(ResourceKind::$variant),+];

            /// The API kind as Kubernetes spells it (`Pod`, `APIService`).
            pub fn kind(self) -> &'static str {
                match self { $(ResourceKind::$variant => <$ty as k8s_openapi::Resource>::KIND),+ }
            }
            /// The API group (`""` for the core group, `apps`, `storage.k8s.io`).
            pub fn group(self) -> &'static str {
                match self { $(ResourceKind::$variant => <$ty as k8s_openapi::Resource>::GROUP),+ }
            }
            /// The API version within the group (`v1`, `v2`).
            pub fn version(self) -> &'static str {
                match self { $(ResourceKind::$variant => <$ty as k8s_openapi::Resource>::VERSION),+ }
            }
            /// `apiVersion` as written in objects (`v1`, `apps/v1`).
            pub fn api_version(self) -> &'static str {
                match self { $(ResourceKind::$variant => <$ty as k8s_openapi::Resource>::API_VERSION),+ }
            }
            /// The resource name in URL paths (`pods`, `apiservices`).
            pub fn plural(self) -> &'static str {
                match self { $(ResourceKind::$variant => <$ty as k8s_openapi::Resource>::URL_PATH_SEGMENT),+ }
            }
            /// Whether objects of this kind live in a namespace.
            pub fn namespaced(self) -> bool {
                match self {
                    $(ResourceKind::$variant => std::any::TypeId::of::<<$ty as k8s_openapi::Resource>::Scope>()
                        == std::any::TypeId::of::<k8s_openapi::NamespaceResourceScope>()),+
                }
            }
        }

        /// Typed objects of a cluster (or of the part of it that was read), the server
        /// version, and the kinds that could not be read.
        #[derive(Debug, Clone, Default)]
        pub struct ClusterState {
            /// The server's version as a minor version ("1.30"), when known.
            pub version: Option<Version>,
            /// The server's full `gitVersion` ("v1.30.4"), when known.
            pub git_version: Option<String>,
            /// When the state was read: now for a live cluster; for a snapshot, the newest
            /// timestamp in it (see [`ClusterState::newest_timestamp`]), since a snapshot is
            /// judged as of when it was taken. Probes measure ages ("Pending for 2 h")
            /// against it, never against the wall clock.
            pub observed_at: Option<k8s_openapi::jiff::Timestamp>,
            /// Kinds that could not be read, with why. A probe that needs one of them says
            /// "unknown" instead of "does not hold".
            pub unavailable: BTreeMap<ResourceKind, Unavailable>,
            /// Kinds that were read (completely, for the scope that was asked).
            pub loaded: std::collections::BTreeSet<ResourceKind>,
            $( $(#[$doc])* pub $field: Vec<$ty>, )+
        }

        impl ClusterState {
            /// Adds one object given as JSON of kind `kind`, and marks the kind loaded.
            ///
            /// # Errors
            /// The JSON does not deserialize into the kind's k8s-openapi type; the message
            /// names the field serde stopped at.
            pub fn insert_json(&mut self, kind: ResourceKind, value: serde_json::Value) -> Result<(), String> {
                self.loaded.insert(kind);
                match kind {
                    $(ResourceKind::$variant => {
                        // The path names the field (`spec.containers[0].ports`), as the README says.
                        let obj: $ty = serde_path_to_error::deserialize(value).map_err(|e| {
                            let at = e.path().to_string();
                            if at.is_empty() || at == "." { e.inner().to_string() } else { format!("field `{at}`: {}", e.inner()) }
                        })?;
                        self.$field.push(obj);
                    })+
                }
                Ok(())
            }

            /// The newest `metadata.creationTimestamp`, event `lastTimestamp` or `eventTime`
            /// of any object held, or `None` for an empty state.
            pub fn newest_timestamp(&self) -> Option<k8s_openapi::jiff::Timestamp> {
                use k8s_openapi::Metadata;
                let mut newest: Option<k8s_openapi::jiff::Timestamp> = None;
                let mut see = |t: Option<k8s_openapi::jiff::Timestamp>| {
                    if let Some(t) = t {
                        if newest.is_none_or(|n| t > n) { newest = Some(t); }
                    }
                };
                $( for o in &self.$field { see(o.metadata().creation_timestamp.as_ref().map(|t| t.0)); } )+
                for e in &self.events {
                    see(e.last_timestamp.as_ref().map(|t| t.0));
                    see(e.event_time.as_ref().map(|t| t.0));
                }
                newest
            }

            /// The metadata of every object of `kind` held, in insertion order.
            pub fn metas(&self, kind: ResourceKind) -> Vec<&k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta> {
                use k8s_openapi::Metadata;
                match kind { $(ResourceKind::$variant => self.$field.iter().map(|o| o.metadata()).collect()),+ }
            }

            /// Copies the objects of `kind` whose metadata `keep` accepts into `into` (which
            /// is not marked loaded for it; the caller decides). Returns how many were copied.
            pub fn copy_where(
                &self,
                kind: ResourceKind,
                into: &mut ClusterState,
                keep: &dyn Fn(&k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> bool,
            ) -> usize {
                use k8s_openapi::Metadata;
                match kind {
                    $(ResourceKind::$variant => {
                        let before = into.$field.len();
                        into.$field.extend(self.$field.iter().filter(|o| keep(o.metadata())).cloned());
                        into.$field.len() - before
                    })+
                }
            }

            /// Removes duplicate objects of every kind (same namespace and name; the first
            /// one read is kept), so a collector may read one object twice.
            pub fn dedup(&mut self) {
                use k8s_openapi::Metadata;
                $( {
                    let mut seen = std::collections::BTreeSet::new();
                    self.$field.retain(|o| {
                        let m = o.metadata();
                        seen.insert((m.namespace.clone(), m.name.clone(), m.uid.clone()))
                    });
                } )+
            }

            /// How many objects of `kind` the state holds.
            pub fn count(&self, kind: ResourceKind) -> usize {
                match kind { $(ResourceKind::$variant => self.$field.len()),+ }
            }
        }
    };
}

resource_kinds! {
    /// core/v1 Pod.
    Pod => pods: Pod,
    /// core/v1 Node.
    Node => nodes: Node,
    /// core/v1 Event (the kind `kubectl get events` lists).
    Event => events: Event,
    /// core/v1 Service.
    Service => services: Service,
    /// discovery.k8s.io/v1 EndpointSlice.
    EndpointSlice => endpoint_slices: EndpointSlice,
    /// core/v1 PersistentVolumeClaim.
    PersistentVolumeClaim => persistent_volume_claims: PersistentVolumeClaim,
    /// core/v1 PersistentVolume.
    PersistentVolume => persistent_volumes: PersistentVolume,
    /// storage.k8s.io/v1 StorageClass.
    StorageClass => storage_classes: StorageClass,
    /// storage.k8s.io/v1 VolumeAttachment.
    VolumeAttachment => volume_attachments: VolumeAttachment,
    /// storage.k8s.io/v1 CSIDriver.
    CSIDriver => csi_drivers: CSIDriver,
    /// core/v1 Namespace.
    Namespace => namespaces: Namespace,
    /// apps/v1 Deployment.
    Deployment => deployments: Deployment,
    /// apps/v1 ReplicaSet.
    ReplicaSet => replica_sets: ReplicaSet,
    /// apps/v1 StatefulSet.
    StatefulSet => stateful_sets: StatefulSet,
    /// apps/v1 DaemonSet.
    DaemonSet => daemon_sets: DaemonSet,
    /// batch/v1 Job.
    Job => jobs: Job,
    /// batch/v1 CronJob.
    CronJob => cron_jobs: CronJob,
    /// core/v1 ResourceQuota.
    ResourceQuota => resource_quotas: ResourceQuota,
    /// core/v1 LimitRange.
    LimitRange => limit_ranges: LimitRange,
    /// policy/v1 PodDisruptionBudget.
    PodDisruptionBudget => pod_disruption_budgets: PodDisruptionBudget,
    /// autoscaling/v2 HorizontalPodAutoscaler.
    HorizontalPodAutoscaler => horizontal_pod_autoscalers: HorizontalPodAutoscaler,
    /// admissionregistration.k8s.io/v1 MutatingWebhookConfiguration.
    MutatingWebhookConfiguration => mutating_webhook_configurations: MutatingWebhookConfiguration,
    /// admissionregistration.k8s.io/v1 ValidatingWebhookConfiguration.
    ValidatingWebhookConfiguration => validating_webhook_configurations: ValidatingWebhookConfiguration,
    /// apiregistration.k8s.io/v1 APIService (the aggregation layer).
    APIService => api_services: APIService,
    /// coordination.k8s.io/v1 Lease (node heartbeats in kube-node-lease, leader election).
    Lease => leases: Lease,
    /// scheduling.k8s.io/v1 PriorityClass.
    PriorityClass => priority_classes: PriorityClass,
    /// networking.k8s.io/v1 NetworkPolicy.
    NetworkPolicy => network_policies: NetworkPolicy,
    /// apiextensions.k8s.io/v1 CustomResourceDefinition.
    CustomResourceDefinition => custom_resource_definitions: CustomResourceDefinition,
    /// certificates.k8s.io/v1 CertificateSigningRequest.
    CertificateSigningRequest => certificate_signing_requests: CertificateSigningRequest,
}

impl ResourceKind {
    /// Finds a kind by its API kind (`Pod`), its list kind (`PodList`), its plural
    /// (`pods`), or its lowercase singular (`pod`), as kubectl accepts them; also the
    /// common short names (`po`, `svc`, `pvc`, `pv`, `ns`, `deploy`, `rs`, `sts`, `ds`,
    /// `cj`, `no`, `ev`, `hpa`, `pdb`, `sc`, `netpol`, `crd`, `csr`, `quota`, `limits`, `pc`).
    pub fn parse(s: &str) -> Option<ResourceKind> {
        let lower = s.to_ascii_lowercase();
        let short = match lower.as_str() {
            "po" => Some(ResourceKind::Pod),
            "no" => Some(ResourceKind::Node),
            "ev" => Some(ResourceKind::Event),
            "svc" => Some(ResourceKind::Service),
            "pvc" => Some(ResourceKind::PersistentVolumeClaim),
            "pv" => Some(ResourceKind::PersistentVolume),
            "sc" => Some(ResourceKind::StorageClass),
            "ns" => Some(ResourceKind::Namespace),
            "deploy" => Some(ResourceKind::Deployment),
            "rs" => Some(ResourceKind::ReplicaSet),
            "sts" => Some(ResourceKind::StatefulSet),
            "ds" => Some(ResourceKind::DaemonSet),
            "cj" => Some(ResourceKind::CronJob),
            "quota" => Some(ResourceKind::ResourceQuota),
            "limits" => Some(ResourceKind::LimitRange),
            "pdb" => Some(ResourceKind::PodDisruptionBudget),
            "hpa" => Some(ResourceKind::HorizontalPodAutoscaler),
            "pc" => Some(ResourceKind::PriorityClass),
            "netpol" => Some(ResourceKind::NetworkPolicy),
            "crd" | "crds" => Some(ResourceKind::CustomResourceDefinition),
            "csr" => Some(ResourceKind::CertificateSigningRequest),
            _ => None,
        };
        if short.is_some() {
            return short;
        }
        // `deployments.apps` and `deployment.apps/v1` forms: keep the resource part.
        let base = lower.split(['.', '/']).next().unwrap_or("");
        ResourceKind::ALL.iter().copied().find(|k| {
            let kind = k.kind().to_ascii_lowercase();
            base == kind || base == k.plural() || lower == format!("{kind}list")
        })
    }
}

impl fmt::Display for ResourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kind())
    }
}

/// Why a kind could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unavailable {
    /// HTTP status when the API answered (403 for a missing permission), else `None`.
    pub status: Option<u16>,
    /// A sentence for people: the missing permission (`list nodes at the cluster scope`),
    /// a time-out, or "not in the snapshot".
    pub reason: String,
}

/// One object, named as kubectl names it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ObjectRef {
    /// Its kind.
    pub kind: ResourceKind,
    /// Its namespace (`None` for cluster-scoped kinds).
    pub namespace: Option<String>,
    /// Its name.
    pub name: String,
}

impl ObjectRef {
    /// An object reference from a kind and the object's metadata.
    pub fn new(kind: ResourceKind, meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> ObjectRef {
        ObjectRef { kind, namespace: meta.namespace.clone(), name: meta.name.clone().unwrap_or_default() }
    }
}

impl fmt::Display for ObjectRef {
    /// `pod/web-0 -n default`-like: `Pod default/web-0`, or `Node n1` when cluster-scoped.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{} {}/{}", self.kind, ns, self.name),
            None => write!(f, "{} {}", self.kind, self.name),
        }
    }
}
