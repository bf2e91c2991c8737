//! The knowledge model: entity kinds, versions and the typed data of each kind.
//!
//! These types are what the loader ([`crate::knowledge`]) produces from the
//! Markdown + TOML files in `knowledge/`; the graph, the index and the
//! diagnosis all read them. The format is documented in `knowledge/README.md`.

use serde::Serialize;
use std::fmt;

/// The kind of an entity; each is a class of the ontology (`kw:<Name>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// A binary, process or external system (`component/…`).
    Component,
    /// A control loop or pipeline stage inside a component (`loop/…`).
    Loop,
    /// An API object field and who writes it (`field/…`).
    Field,
    /// A metric (`metric/…`).
    Metric,
    /// One way a mechanism goes wrong (`failure-mode/…`).
    FailureMode,
    /// An observable signal (`symptom/…`).
    Symptom,
    /// A diagnostic step (`check/…`).
    Check,
    /// A remediation (`fix/…`).
    Fix,
    /// An explanatory node (`concept/…`).
    Concept,
    /// A widely repeated wrong claim and its correction (`myth/…`).
    Myth,
    /// A Kubernetes Enhancement Proposal (`kep/<number>`), generated from upstream data.
    Kep,
    /// A Kubernetes feature gate (`feature-gate/<Name>`), generated from upstream data.
    FeatureGate,
    /// A Kubernetes minor release (`release/1.N`), generated from upstream data.
    Release,
}

impl Kind {
    /// Every kind, in the order used for listings and statistics.
    pub const ALL: [Kind; 13] = [
        Kind::Component,
        Kind::Loop,
        Kind::Field,
        Kind::Metric,
        Kind::FailureMode,
        Kind::Symptom,
        Kind::Check,
        Kind::Fix,
        Kind::Concept,
        Kind::Myth,
        Kind::Kep,
        Kind::FeatureGate,
        Kind::Release,
    ];

    /// The id prefix of this kind, e.g. `failure-mode` (ids are `<prefix>/<slug>`).
    pub fn prefix(self) -> &'static str {
        match self {
            Kind::Component => "component",
            Kind::Loop => "loop",
            Kind::Field => "field",
            Kind::Metric => "metric",
            Kind::FailureMode => "failure-mode",
            Kind::Symptom => "symptom",
            Kind::Check => "check",
            Kind::Fix => "fix",
            Kind::Concept => "concept",
            Kind::Myth => "myth",
            Kind::Kep => "kep",
            Kind::FeatureGate => "feature-gate",
            Kind::Release => "release",
        }
    }

    /// The ontology class name, e.g. `FailureMode` (the local name of `kw:FailureMode`).
    pub fn class_name(self) -> &'static str {
        match self {
            Kind::Component => "Component",
            Kind::Loop => "Loop",
            Kind::Field => "Field",
            Kind::Metric => "Metric",
            Kind::FailureMode => "FailureMode",
            Kind::Symptom => "Symptom",
            Kind::Check => "Check",
            Kind::Fix => "Fix",
            Kind::Concept => "Concept",
            Kind::Myth => "Myth",
            Kind::Kep => "KEP",
            Kind::FeatureGate => "FeatureGate",
            Kind::Release => "Release",
        }
    }

    /// Parses an id prefix (`failure-mode`) into a kind; `None` for an unknown prefix.
    pub fn from_prefix(prefix: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.prefix() == prefix)
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.prefix())
    }
}

/// A Kubernetes minor version such as "1.30". Ordered; displayed as `major.minor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Version {
    /// Major version (1 for every Kubernetes release so far).
    pub major: u16,
    /// Minor version.
    pub minor: u16,
}

impl Version {
    /// Parses "1.30", "v1.30", "1.30.2" or "v1.30.2-gke.1" (the patch and any suffix are ignored).
    ///
    /// # Errors
    /// A message naming the text when it is not `MAJOR.MINOR[.PATCH...]`.
    pub fn parse(text: &str) -> Result<Version, String> {
        let err = || format!("`{text}` is not a Kubernetes version like \"1.30\"");
        let t = text.trim();
        let t = t.strip_prefix('v').unwrap_or(t);
        let (major, rest) = t.split_once('.').ok_or_else(err)?;
        let digits = rest.chars().take_while(|c| c.is_ascii_digit()).count();
        let (minor, after) = rest.split_at(digits);
        if !(after.is_empty() || after.starts_with(['.', '-', '+'])) {
            return Err(err());
        }
        let major = major.parse::<u16>().map_err(|_| err())?;
        let minor = minor.parse::<u16>().map_err(|_| err())?;
        Ok(Version { major, minor })
    }

    /// Parses a front-matter version, which must be exactly `MAJOR.MINOR` ("1.24").
    ///
    /// # Errors
    /// A message naming the text when it is not exactly `MAJOR.MINOR`.
    pub fn parse_strict(text: &str) -> Result<Version, String> {
        let ok = {
            let mut it = text.split('.');
            let a = it.next().unwrap_or("");
            let b = it.next().unwrap_or("");
            it.next().is_none()
                && !a.is_empty()
                && !b.is_empty()
                && a.chars().all(|c| c.is_ascii_digit())
                && b.chars().all(|c| c.is_ascii_digit())
                && !(b.len() > 1 && b.starts_with('0'))
        };
        if !ok {
            return Err(format!("`{text}` is not a minor version like \"1.24\""));
        }
        Version::parse(text)
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

impl Serialize for Version {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A half-open range of minor versions: applies when `since <= v < until`.
/// A missing bound is open (before the oldest tracked release / still applies).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct VersionRange {
    /// First minor the entity applies to; `None` means "since before the oldest release tracked".
    pub since: Option<Version>,
    /// First minor it no longer applies to; `None` means "still applies".
    pub until: Option<Version>,
}

impl VersionRange {
    /// Whether `v` lies in the range.
    pub fn contains(&self, v: Version) -> bool {
        self.since.is_none_or(|s| s <= v) && self.until.is_none_or(|u| v < u)
    }

    /// A short human description: "all versions", "1.24+", "before 1.25", "1.22 to before 1.25".
    pub fn describe(&self) -> String {
        match (self.since, self.until) {
            (None, None) => "all versions".to_string(),
            (Some(s), None) => format!("{s}+"),
            (None, Some(u)) => format!("before {u}"),
            (Some(s), Some(u)) => format!("{s} to before {u}"),
        }
    }
}

/// Where an entity was defined: a path relative to the knowledge root, and a 1-based line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Location {
    /// Path of the file, relative to the knowledge root (e.g. `failure-modes/etcd/etcd-nospace-alarm.md`).
    pub file: String,
    /// 1-based line of the entity's start (the `+++` line, or an inline table's header).
    pub line: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// The kind of observable signal a Symptom describes (`kw:signalKind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SignalKind {
    /// A Kubernetes Event (reason + message).
    Event,
    /// An error or message string returned to a client or printed by a tool.
    Message,
    /// A container/pod/object status reason (`CrashLoopBackOff`, `OOMKilled`).
    StatusReason,
    /// A container exit code.
    ExitCode,
    /// An HTTP status returned by the API server or another server.
    HttpStatus,
    /// A log line of a component.
    Log,
    /// An object condition (type/reason/message).
    Condition,
    /// A metric condition.
    Metric,
}

impl SignalKind {
    /// Parses the front-matter spelling (`status-reason`, ...).
    pub fn parse(s: &str) -> Option<SignalKind> {
        Some(match s {
            "event" => SignalKind::Event,
            "message" => SignalKind::Message,
            "status-reason" => SignalKind::StatusReason,
            "exit-code" => SignalKind::ExitCode,
            "http-status" => SignalKind::HttpStatus,
            "log" => SignalKind::Log,
            "condition" => SignalKind::Condition,
            "metric" => SignalKind::Metric,
            _ => return None,
        })
    }

    /// The front-matter spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            SignalKind::Event => "event",
            SignalKind::Message => "message",
            SignalKind::StatusReason => "status-reason",
            SignalKind::ExitCode => "exit-code",
            SignalKind::HttpStatus => "http-status",
            SignalKind::Log => "log",
            SignalKind::Condition => "condition",
            SignalKind::Metric => "metric",
        }
    }
}

/// Typed data of a Symptom.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SymptomData {
    /// What kind of signal this is.
    pub signal: SignalKind,
    /// The machine text template with `{placeholders}`, when the signal has text.
    pub text: Option<String>,
    /// Event, status or condition reason.
    pub reason: Option<String>,
    /// Exit code or HTTP status.
    pub code: Option<i64>,
    /// `owner/repo:path` of the code that emits the text.
    pub source: Option<String>,
    /// Specificity weight (default 1.0).
    pub weight: f64,
}

/// Typed data of a FailureMode.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct FailureModeData {
    /// Area slug (`scheduler`, `etcd`, ...): one of [`AREAS`].
    pub area: String,
    /// Components involved (`kw:involves`).
    pub components: Vec<String>,
    /// Loops it happens in (`kw:inLoop`).
    pub loops: Vec<String>,
    /// Fields concerned (`kw:concernsField`).
    pub fields: Vec<String>,
    /// Metrics it is observable via (`kw:observableVia`).
    pub metrics: Vec<String>,
    /// Symptoms it manifests as (`kw:manifestsAs`), inline ones included.
    pub symptoms: Vec<String>,
    /// Checks that diagnose it (`kw:diagnosedBy`), inline ones included.
    pub checks: Vec<String>,
    /// Fixes (`kw:fixedBy`), inline ones included.
    pub fixes: Vec<String>,
    /// Upstream failure modes that produce this one (`kw:causedBy`).
    pub caused_by: Vec<String>,
    /// Downstream failure modes this one produces (`kw:leadsTo`).
    pub leads_to: Vec<String>,
    /// Symptom level (a hub) or cause level (`kw:level`).
    pub level: Level,
    /// Context cues that point to this cause (`kw:contextCue`), in file order.
    pub context: Vec<ContextCue>,
    /// What a user would say that rules this cause out (`kw:ruledOutBy`).
    pub ruled_out_by: Vec<String>,
}

/// The level of a failure mode (knowledge/README.md, "Symptom-level hubs and cause-level
/// failure modes").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Level {
    /// A hub: the surface failure as a component reports it, with several causes.
    Symptom,
    /// One specific mechanism (the default).
    #[default]
    Cause,
}

impl Level {
    /// `symptom` or `cause`.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Symptom => "symptom",
            Level::Cause => "cause",
        }
    }
}

/// What a context cue looks for in the input (the `cue` key of a `[[context]]` table).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "cue", rename_all = "kebab-case")]
pub enum CueKind {
    /// Words a user would write; matched as stemmed tokens close together.
    Phrase {
        /// The words.
        text: String,
    },
    /// What happened before; matched like a phrase.
    History {
        /// The words.
        text: String,
    },
    /// A field, flag or config key, optionally with its value.
    Setting {
        /// The field as written (`imagePullPolicy`, `--max-pods`).
        field: String,
        /// The value (`IfNotPresent`), when the cue needs one.
        value: Option<String>,
    },
    /// A platform slug, one of [`PLATFORMS`].
    Platform {
        /// The slug (`eks`).
        text: String,
    },
    /// A product or add-on the cause happens only with (Helm, Cilium, Karpenter, ingress-nginx,
    /// k3s): the input naming it supports the cause; a cause none of whose products the input
    /// names ranks lower (scorer `product-absent`).
    Product {
        /// Its name as users write it (matched like a phrase, or as a platform's usual names).
        text: String,
    },
    /// A duration that identifies the mechanism.
    Timing {
        /// The duration in seconds.
        seconds: u64,
    },
    /// An exit code stated in the input.
    ExitCode {
        /// The code.
        code: i64,
    },
    /// A port number stated in the input.
    Port {
        /// The port.
        code: i64,
    },
}

/// One `[[context]]` cue of a cause.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContextCue {
    /// What to look for.
    #[serde(flatten)]
    pub kind: CueKind,
    /// How strongly it points to this cause among its siblings (default 1.0).
    pub weight: f64,
}

impl ContextCue {
    /// A short human description: `setting imagePullPolicy: IfNotPresent`, `timing 600s`.
    pub fn describe(&self) -> String {
        match &self.kind {
            CueKind::Phrase { text } => format!("phrase \"{text}\""),
            CueKind::History { text } => format!("history \"{text}\""),
            CueKind::Setting { field, value: Some(v) } => format!("setting {field}: {v}"),
            CueKind::Setting { field, value: None } => format!("setting {field}"),
            CueKind::Platform { text } => format!("platform {text}"),
            CueKind::Product { text } => format!("product \"{text}\""),
            CueKind::Timing { seconds } => format!("timing {seconds}s"),
            CueKind::ExitCode { code } => format!("exit-code {code}"),
            CueKind::Port { code } => format!("port {code}"),
        }
    }
}

/// Platform slugs a `platform` cue may name, each with the names users write for it
/// (lowercase; matched as whole words).
pub const PLATFORMS: [(&str, &[&str]); 13] = [
    ("eks", &["eks", "amazon eks", "aws eks", "elastic kubernetes service"]),
    ("gke", &["gke", "google kubernetes engine", "gke autopilot"]),
    ("aks", &["aks", "azure kubernetes service"]),
    ("openshift", &["openshift", "ocp", "okd"]),
    ("k3s", &["k3s", "k3d"]),
    ("rke2", &["rke2", "rke"]),
    ("kubeadm", &["kubeadm"]),
    ("kind", &["kind cluster", "kind node", "kindest", "kubernetes in docker"]),
    ("minikube", &["minikube"]),
    ("microk8s", &["microk8s"]),
    ("bare-metal", &["bare metal", "bare-metal", "on-prem", "on prem", "metallb"]),
    ("docker-desktop", &["docker desktop", "docker-desktop"]),
    ("talos", &["talos", "talosctl"]),
];

/// The areas failure modes are grouped in, as slugs; order used in statistics.
pub const AREAS: [&str; 9] = [
    "apiserver",
    "etcd",
    "scheduler",
    "controllers",
    "kubelet",
    "networking",
    "dns",
    "storage",
    "operations",
];

/// Kind-specific data of an entity.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind_data", rename_all = "kebab-case")]
pub enum KindData {
    /// A component.
    Component {
        /// Parent component (`kw:partOf`).
        part_of: Option<String>,
        /// Components it talks to (`kw:talksTo`).
        talks_to: Vec<String>,
    },
    /// A loop.
    Loop {
        /// Owning component (`kw:partOf`).
        part_of: String,
        /// Fields read (`kw:reads`).
        reads: Vec<String>,
        /// Fields written (`kw:writes`).
        writes: Vec<String>,
        /// Metrics emitted (`kw:emits`).
        emits: Vec<String>,
    },
    /// An API field.
    Field {
        /// API kind, e.g. `Pod`.
        object: String,
        /// Field path, e.g. `spec.nodeName`.
        path: String,
        /// Loops or components that write it.
        written_by: Vec<String>,
    },
    /// A metric.
    Metric {
        /// Exposed metric name.
        name: String,
        /// Component that exposes it.
        component: String,
        /// counter, gauge, histogram or summary.
        metric_type: String,
        /// Stability level, when known.
        stability: Option<String>,
        /// Label names.
        labels: Vec<String>,
        /// What a bad value looks like and means.
        bad_value: Option<String>,
    },
    /// A failure mode.
    FailureMode(FailureModeData),
    /// A symptom.
    Symptom(SymptomData),
    /// A check.
    Check {
        /// Command to run.
        command: Option<String>,
        /// What to look for.
        look_for: String,
        /// Live probe id.
        probe: Option<String>,
        /// What this check shows when the failure mode is not the cause.
        rules_out: Option<String>,
    },
    /// A fix.
    Fix {
        /// What to do.
        action: String,
        /// Command, when there is one.
        command: Option<String>,
        /// low, medium or high.
        risk: String,
    },
    /// A concept.
    Concept,
    /// A feature gate (generated).
    FeatureGate(crate::upstream::FeatureGate),
    /// A KEP (generated).
    Kep(crate::upstream::Kep),
    /// A release (generated).
    Release(crate::upstream::Release),
    /// A myth.
    Myth {
        /// What is true instead.
        correction: String,
        /// Entities the myth concerns.
        concerns: Vec<String>,
    },
}

/// One entity of the graph with its common facts and its kind data.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Entity {
    /// `kind/slug`.
    pub id: String,
    /// Its kind (from the id prefix).
    pub kind: Kind,
    /// Title (`rdfs:label`).
    pub title: String,
    /// Other names people use.
    pub aliases: Vec<String>,
    /// URLs and `owner/repo:path` source references.
    pub references: Vec<String>,
    /// Version range it applies to.
    pub applies: VersionRange,
    /// KEP numbers describing it.
    pub keps: Vec<u32>,
    /// Feature gates it depends on.
    pub feature_gates: Vec<String>,
    /// Related entity ids.
    pub related: Vec<String>,
    /// Markdown body.
    pub body: String,
    /// Where it was defined.
    pub location: Location,
    /// Kind-specific data.
    pub data: KindData,
}

impl Entity {
    /// The slug part of the id (after the first `/`).
    pub fn slug(&self) -> &str {
        self.id.split_once('/').map(|(_, s)| s).unwrap_or(&self.id)
    }

    /// The failure-mode data, when this is a FailureMode.
    pub fn failure_mode(&self) -> Option<&FailureModeData> {
        match &self.data {
            KindData::FailureMode(fm) => Some(fm),
            _ => None,
        }
    }

    /// The symptom data, when this is a Symptom.
    pub fn symptom(&self) -> Option<&SymptomData> {
        match &self.data {
            KindData::Symptom(s) => Some(s),
            _ => None,
        }
    }

    /// The first paragraph of the body as plain text (at most `max_chars` characters), for summaries.
    pub fn summary(&self, max_chars: usize) -> String {
        let para = self
            .body
            .split("\n\n")
            .map(str::trim)
            .find(|p| !p.is_empty() && !p.starts_with('#'))
            .unwrap_or("");
        let flat: String = para.split_whitespace().collect::<Vec<_>>().join(" ");
        if flat.chars().count() <= max_chars {
            flat
        } else {
            let cut: String = flat.chars().take(max_chars.saturating_sub(1)).collect();
            format!("{cut}…")
        }
    }
}
