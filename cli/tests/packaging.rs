//! How users install and run kubewhy (issue 14): the real `kubectl-why` binary invoked as
//! kubectl invokes a plugin (and the `kubewhy` binary under that name), shell completions and
//! man pages, the in-cluster manifests of deploy/ parsed strictly with k8s-openapi types and
//! their security settings, and the krew manifest template plugins/why.yaml.

use assert_cmd::Command;
use clap::CommandFactory as _;
use clap::Parser as _;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Namespace, Service, ServiceAccount};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kubewhy_e2e::apiserver::{Options, TestApiServer};
use kubewhy_e2e::scenarios;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const SYMPTOM: &str = "0/3 nodes are available: 3 Insufficient cpu.";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The plugin binary, started as kubectl starts a plugin: argv[0] is its path, the words after
/// `kubectl why` follow, the environment is inherited.
fn kubectl_why() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_kubectl-why"));
    c.current_dir(root()).env_remove("KUBECONFIG").env("NO_COLOR", "1");
    c
}

fn json(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kubewhy-packaging-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

// ---- kubectl why ------------------------------------------------------------------------------

#[test]
fn kubectl_why_diagnoses_text_and_stdin() {
    let out = kubectl_why().args([SYMPTOM, "-o", "json"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(json(&out)["candidates"][0]["id"], "failure-mode/insufficient-resources");

    let describe = std::fs::read_to_string(root().join("tests/fixtures/describe-pod-oomkilled.txt")).expect("fixture");
    let out = kubectl_why().args(["-", "--output=json", "--top", "2"]).write_stdin(describe).output().expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v = json(&out);
    assert_eq!(v["signals"]["input_style"], "describe");
    assert_eq!(v["candidates"].as_array().map(Vec::len), Some(2));

    // -o yaml: the JSON document as YAML.
    let out = kubectl_why().args(["Insufficient", "cpu", "-oyaml"]).output().expect("runs");
    let y: Value = serde_yaml_ng::from_slice(&out.stdout).expect("yaml");
    assert_eq!(y["candidates"][0]["id"], "failure-mode/insufficient-resources");

    // Cluster flags with a text: diagnosed offline, with a note.
    let out = kubectl_why().args([SYMPTOM, "-n", "shop"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("diagnosed offline"));
    assert!(String::from_utf8_lossy(&out.stdout).contains("insufficient-resources"));
}

#[test]
fn kubectl_why_verifies_objects_and_scans_snapshots() {
    let snap = "tests/fixtures/cluster/wffc-deadlock";
    let out = kubectl_why().args(["pvc/data-search-0", "-n", "shop", "--snapshot", snap, "-o", "json"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(1), "a holding candidate exits 1");
    let v = json(&out);
    assert_eq!(v["candidates"][0]["id"], "failure-mode/wffc-pvc-pod-unschedulable-deadlock");
    assert_eq!(v["candidates"][0]["evidence"], "holds");

    let out = kubectl_why().args(["scan", "-A", "--snapshot", "tests/fixtures/cluster/pending-cpu", "-o", "json"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(1));
    let v = json(&out);
    assert!(v["findings"].as_array().expect("findings").iter().any(|f| f["failure_mode"] == "failure-mode/insufficient-resources"), "{v}");
    assert_eq!(v["source"]["all_namespaces"], true);

    let out = kubectl_why().args(["scan", "--snapshot", "tests/fixtures/cluster/healthy", "-n", "shop", "-o", "json"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    assert_eq!(json(&out)["source"]["namespace"], "shop");
}

#[test]
fn kubectl_why_reads_a_live_cluster_through_kubeconfig_context_and_namespace() {
    let server = TestApiServer::start(scenarios::lab(), Options::default());
    let dir = temp_dir("live");
    let kc = server.kubeconfig(&dir, "shop");
    // --kubeconfig FILE, the context's namespace (shop) as the default, as kubectl.
    let out = kubectl_why().args(["pod/web-5c8", "--kubeconfig"]).arg(&kc).output().expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("[holds] failure-mode/liveness-probe-wrong-path"), "{text}{}", String::from_utf8_lossy(&out.stderr));
    // $KUBECONFIG, --context, -n, --request-timeout as kubectl writes them.
    let out = kubectl_why().env("KUBECONFIG", &kc).args(["scan", "--context", "test", "-n", "shop", "--request-timeout=20s", "-o", "json"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let v = json(&out);
    assert_eq!(v["source"]["namespace"], "shop");
    assert!(v["findings"].as_array().expect("findings").iter().any(|f| f["failure_mode"] == "failure-mode/insufficient-resources"), "{v}");
    // An unknown context is kubectl's error, not a crash.
    let out = kubectl_why().args(["scan", "--context", "nope", "--kubeconfig"]).arg(&kc).output().expect("runs");
    assert!(matches!(out.status.code(), Some(2 | 4)), "{out:?}");
    for r in server.requests() {
        assert_eq!(r.method, "GET", "{r:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn kubewhy_binary_named_kubectl_why_is_the_plugin() {
    // krew links `kubectl-why` to the archive's `kubewhy`; the image links it too.
    let dir = temp_dir("argv0");
    let link = dir.join("kubectl-why");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_kubewhy"), &link).expect("symlink");
    let out = Command::new(&link).args([SYMPTOM, "-o", "json"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(json(&out)["candidates"][0]["id"], "failure-mode/insufficient-resources");
    let help = Command::new(&link).arg("--help").output().expect("runs");
    assert!(String::from_utf8_lossy(&help.stdout).contains("kubectl why scan -A"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn kubectl_why_usage_errors_exit_2() {
    kubectl_why().assert().code(2).stderr(predicates::str::contains("nothing to explain"));
    kubectl_why().args(["scan", "extra"]).assert().code(2);
    kubectl_why().args(["scan", "-n", "a", "-A"]).assert().code(2);
    kubectl_why().args(["x", "-o", "wide"]).assert().code(2);
    kubectl_why().args(["--version"]).assert().code(0).stdout(predicates::str::contains(env!("CARGO_PKG_VERSION")));
}

// ---- completions and man pages ----------------------------------------------------------------

fn kubewhy() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_kubewhy"));
    c.current_dir(root());
    c
}

/// Every subcommand path (`why`, `eval grade`, `site export`, ...), help excluded.
fn subcommands(cmd: &clap::Command, prefix: &str, out: &mut Vec<String>) {
    for s in cmd.get_subcommands().filter(|s| s.get_name() != "help" && !s.is_hide_set()) {
        let name = if prefix.is_empty() { s.get_name().to_string() } else { format!("{prefix}-{}", s.get_name()) };
        out.push(name.clone());
        subcommands(s, &name, out);
    }
}

#[test]
fn completions_for_every_shell_name_every_subcommand() {
    let mut subs = Vec::new();
    subcommands(&kubewhy_cli::Cli::command(), "", &mut subs);
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = kubewhy().args(["completions", shell]).output().expect("runs");
        assert_eq!(out.status.code(), Some(0), "{shell}");
        let text = String::from_utf8(out.stdout).expect("utf8");
        for s in subs.iter().filter(|s| !s.contains('-') || s.as_str() == "check-claims" || s.as_str() == "import-upstream") {
            assert!(text.contains(s.as_str()), "{shell} completion lacks `{s}`");
        }
        assert!(text.contains("k8s-version") && text.contains("namespace"), "{shell}: options complete too");
    }
    kubewhy().args(["completions", "tcsh"]).assert().code(2);
}

#[test]
fn man_pages_for_every_subcommand() {
    let dir = temp_dir("man");
    kubewhy().arg("manpages").arg(&dir).assert().code(0);
    let mut subs = Vec::new();
    subcommands(&kubewhy_cli::Cli::command(), "", &mut subs);
    assert!(subs.len() > 20, "{subs:?}");
    let mut pages = vec!["kubewhy.1".to_string(), "kubectl-why.1".to_string()];
    pages.extend(subs.iter().map(|s| format!("kubewhy-{s}.1")));
    for p in &pages {
        let text = std::fs::read_to_string(dir.join(p)).unwrap_or_else(|e| panic!("{p}: {e}"));
        assert!(text.starts_with(".ie \\n(.g .ds Aq") || text.contains(".TH"), "{p} is roff");
        assert!(text.contains(".SH NAME") && text.contains(".SH SYNOPSIS"), "{p}");
    }
    let why = std::fs::read_to_string(dir.join("kubewhy-why.1")).expect("why page");
    assert!(why.contains("k8s\\-version"), "options are documented");
    let n = std::fs::read_dir(&dir).expect("dir").count();
    assert_eq!(n, pages.len(), "exactly one page per command");
    let _ = std::fs::remove_dir_all(&dir);
}

// ---- deploy/: strict parsing with k8s-openapi and the security settings -----------------------

/// Parses `v` as `T` and back: every field must survive, so a misspelt or unknown field (which
/// serde would otherwise ignore) fails.
fn strict<T: DeserializeOwned + Serialize>(v: &Value, what: &str) -> T {
    let t: T = serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{what}: {e}"));
    let back = serde_json::to_value(&t).expect("serialize");
    assert_eq!(&back, v, "{what}: fields lost in a strict parse (unknown or misspelt)");
    t
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Kustomization {
    api_version: String,
    kind: String,
    resources: Vec<String>,
    #[serde(default)]
    images: Vec<KustomizeImage>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct KustomizeImage {
    name: String,
    new_name: Option<String>,
    new_tag: Option<String>,
}

fn yaml_docs(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_yaml_ng::Deserializer::from_str(&text).map(|d| Value::deserialize(d).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).filter(|v| !v.is_null()).collect()
}

#[derive(Default)]
struct Manifests {
    namespaces: Vec<Namespace>,
    service_accounts: Vec<ServiceAccount>,
    cluster_roles: Vec<ClusterRole>,
    bindings: Vec<ClusterRoleBinding>,
    deployments: Vec<Deployment>,
    services: Vec<Service>,
    policies: Vec<NetworkPolicy>,
}

fn manifests() -> (Kustomization, Manifests) {
    let deploy = root().join("deploy");
    let k: Kustomization = serde_yaml_ng::from_str(&std::fs::read_to_string(deploy.join("kustomization.yaml")).expect("kustomization.yaml")).expect("kustomization.yaml, strictly");
    assert_eq!((k.api_version.as_str(), k.kind.as_str()), ("kustomize.config.k8s.io/v1beta1", "Kustomization"));
    // Every manifest in deploy/ is a resource of the kustomization, and every resource exists.
    let mut files: Vec<String> = std::fs::read_dir(&deploy)
        .expect("deploy/")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| (n.ends_with(".yaml") || n.ends_with(".yml")) && n != "kustomization.yaml")
        .collect();
    files.sort();
    let mut listed = k.resources.clone();
    listed.sort();
    assert_eq!(files, listed, "deploy/*.yaml and the kustomization's resources");
    let mut m = Manifests::default();
    for f in &k.resources {
        for (i, doc) in yaml_docs(&deploy.join(f)).into_iter().enumerate() {
            let what = format!("deploy/{f} document {}", i + 1);
            match (doc["apiVersion"].as_str().unwrap_or(""), doc["kind"].as_str().unwrap_or("")) {
                ("v1", "Namespace") => m.namespaces.push(strict(&doc, &what)),
                ("v1", "ServiceAccount") => m.service_accounts.push(strict(&doc, &what)),
                ("rbac.authorization.k8s.io/v1", "ClusterRole") => m.cluster_roles.push(strict(&doc, &what)),
                ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding") => m.bindings.push(strict(&doc, &what)),
                ("apps/v1", "Deployment") => m.deployments.push(strict(&doc, &what)),
                ("v1", "Service") => m.services.push(strict(&doc, &what)),
                ("networking.k8s.io/v1", "NetworkPolicy") => m.policies.push(strict(&doc, &what)),
                (a, kind) => panic!("{what}: unexpected {a} {kind}"),
            }
        }
    }
    (k, m)
}

fn matches(selector: &BTreeMap<String, String>, labels: &BTreeMap<String, String>) -> bool {
    !selector.is_empty() && selector.iter().all(|(k, v)| labels.get(k) == Some(v))
}

#[test]
fn deploy_manifests_parse_strictly_and_are_locked_down() {
    let (k, m) = manifests();
    assert_eq!(m.namespaces.len(), 1);
    let ns = m.namespaces[0].metadata.name.clone().expect("namespace name");
    let [sa] = &m.service_accounts[..] else { panic!("one ServiceAccount") };
    let [role] = &m.cluster_roles[..] else { panic!("one ClusterRole") };
    let [binding] = &m.bindings[..] else { panic!("one ClusterRoleBinding") };
    let [dep] = &m.deployments[..] else { panic!("one Deployment") };
    let [svc] = &m.services[..] else { panic!("one Service") };
    let [pol] = &m.policies[..] else { panic!("one NetworkPolicy") };
    for meta in [&sa.metadata, &dep.metadata, &svc.metadata, &pol.metadata] {
        assert_eq!(meta.namespace.as_deref(), Some(ns.as_str()), "{:?} in the kubewhy namespace", meta.name);
    }
    // The binding gives the ClusterRole (its rules are checked against the code in
    // engine/cluster/tests/rbac.rs) to the ServiceAccount the pod runs as.
    assert_eq!(binding.role_ref.name, role.metadata.name.clone().expect("role name"));
    let subject = &binding.subjects.as_ref().expect("subjects")[0];
    assert_eq!((subject.kind.as_str(), Some(&subject.name), subject.namespace.as_ref()), ("ServiceAccount", sa.metadata.name.as_ref(), Some(&ns)));

    let spec = dep.spec.as_ref().expect("deployment spec");
    let pod_labels = spec.template.metadata.as_ref().and_then(|m| m.labels.clone()).expect("pod labels");
    assert!(matches(spec.selector.match_labels.as_ref().expect("selector"), &pod_labels));
    let pod = spec.template.spec.as_ref().expect("pod spec");
    assert_eq!(pod.service_account_name, sa.metadata.name);
    assert_ne!(pod.automount_service_account_token, Some(false), "the in-cluster config needs the token");
    assert_ne!(pod.host_network, Some(true));
    assert_ne!(pod.host_pid, Some(true));
    let psc = pod.security_context.as_ref().expect("pod securityContext");
    assert_eq!(psc.run_as_non_root, Some(true));
    assert!(psc.run_as_user.is_some_and(|u| u > 0));
    assert_eq!(psc.seccomp_profile.as_ref().map(|s| s.type_.as_str()), Some("RuntimeDefault"));
    let [c] = &pod.containers[..] else { panic!("one container") };
    assert!(pod.init_containers.is_none());
    let sc = c.security_context.as_ref().expect("container securityContext");
    assert_eq!(sc.allow_privilege_escalation, Some(false));
    assert_eq!(sc.read_only_root_filesystem, Some(true));
    assert_eq!(sc.run_as_non_root, Some(true));
    assert_ne!(sc.privileged, Some(true));
    let caps = sc.capabilities.as_ref().expect("capabilities");
    assert_eq!(caps.drop.as_deref(), Some(&["ALL".to_string()][..]));
    assert!(caps.add.as_ref().is_none_or(|a| a.is_empty()));
    assert_eq!(sc.seccomp_profile.as_ref().map(|s| s.type_.as_str()), Some("RuntimeDefault"));
    let res = c.resources.as_ref().expect("resources");
    for (what, q) in [("requests", &res.requests), ("limits", &res.limits)] {
        let q = q.as_ref().unwrap_or_else(|| panic!("resources.{what}"));
        assert!(q.contains_key("cpu") && q.contains_key("memory"), "{what}: cpu and memory");
    }
    for (name, probe) in [("readiness", &c.readiness_probe), ("liveness", &c.liveness_probe), ("startup", &c.startup_probe)] {
        let p = probe.as_ref().unwrap_or_else(|| panic!("{name} probe"));
        assert!(p.http_get.is_some(), "{name}: an HTTP probe");
    }

    // The image is the one the release builds (the kustomization pins the tag).
    let img = k.images.iter().find(|i| i.name == c.image.clone().unwrap_or_default()).expect("the kustomization sets the container's image");
    assert_eq!(img.new_tag.as_deref(), Some(env!("CARGO_PKG_VERSION")));
    assert!(img.new_name.is_some());

    // The arguments parse with the real CLI: serve, in-cluster, beyond loopback, so with a
    // bearer token from a mounted Secret, and the Service's DNS names as allowed hosts.
    let mut argv = vec!["kubewhy".to_string()];
    argv.extend(c.command.clone().unwrap_or_default().into_iter().skip(1));
    argv.extend(c.args.clone().expect("args"));
    let cli = kubewhy_cli::Cli::try_parse_from(&argv).unwrap_or_else(|e| panic!("{argv:?}: {e}"));
    let kubewhy_cli::Command::Serve { listen, auth_token_file, allow_hosts, cluster, .. } = cli.command else { panic!("the container runs `kubewhy serve`: {argv:?}") };
    assert!(cluster.cluster, "--cluster");
    assert!(listen.ip().is_unspecified(), "listens beyond loopback inside the pod");
    let token = auth_token_file.expect("--auth-token-file: listening beyond loopback needs a bearer token");
    let mount = c.volume_mounts.as_ref().expect("mounts").iter().find(|vm| token.starts_with(&vm.mount_path)).expect("the token file is in a mounted volume");
    assert_eq!(mount.read_only, Some(true));
    let vol = pod.volumes.as_ref().expect("volumes").iter().find(|v| v.name == mount.name).expect("the token volume");
    let secret = vol.secret.as_ref().expect("the token comes from a Secret");
    assert_ne!(secret.optional, Some(true), "no token, no pod");
    let mode = secret.default_mode.expect("defaultMode");
    assert_eq!(mode & 0o007, 0, "the token is not world-readable");
    let svc_name = svc.metadata.name.clone().expect("service name");
    for host in [format!("{svc_name}.{ns}.svc"), format!("{svc_name}.{ns}.svc.cluster.local")] {
        assert!(allow_hosts.contains(&host), "--allow-host {host}");
    }
    let port = c.ports.as_ref().expect("ports").iter().find(|p| p.container_port == i32::from(listen.port())).expect("the listen port is a container port");

    // The Service and the NetworkPolicy select the pod and its port.
    let sspec = svc.spec.as_ref().expect("service spec");
    assert!(matches(sspec.selector.as_ref().expect("service selector"), &pod_labels));
    assert_ne!(sspec.type_.as_deref(), Some("LoadBalancer"));
    assert_ne!(sspec.type_.as_deref(), Some("NodePort"));
    let target = &sspec.ports.as_ref().expect("service ports")[0].target_port;
    assert!(matches!(target, Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::String(n)) if Some(n) == port.name.as_ref()), "{target:?}");
    let pspec = pol.spec.as_ref().expect("policy spec");
    assert!(matches(pspec.pod_selector.as_ref().and_then(|s| s.match_labels.as_ref()).expect("policy pod selector"), &pod_labels));
    let types = pspec.policy_types.clone().unwrap_or_default();
    assert!(types.contains(&"Ingress".to_string()) && types.contains(&"Egress".to_string()));
    for rule in pspec.ingress.as_ref().expect("ingress rules") {
        let ports = rule.ports.as_ref().expect("ingress only to the server's port");
        assert!(ports.iter().all(|p| p.port == Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(i32::from(listen.port())))));
        assert!(rule.from.as_ref().is_some_and(|f| !f.is_empty()), "ingress from chosen peers only");
    }
    assert!(pspec.egress.as_ref().is_some_and(|e| !e.is_empty()));
}

// ---- the krew manifest ------------------------------------------------------------------------

#[test]
fn krew_manifest_template_is_a_krew_plugin_pointing_at_release_archives() {
    let text = std::fs::read_to_string(root().join("plugins/why.yaml")).expect("plugins/why.yaml");
    let v: Value = serde_yaml_ng::from_str(&text).expect("yaml");
    assert_eq!(v["apiVersion"], "krew.googlecontainertools.github.com/v1alpha2");
    assert_eq!(v["kind"], "Plugin");
    assert_eq!(v["metadata"]["name"], "why", "kubectl why");
    let spec = &v["spec"];
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(spec["version"], format!("v{version}"));
    for key in ["homepage", "shortDescription", "description"] {
        assert!(spec[key].as_str().is_some_and(|s| !s.trim().is_empty()), "spec.{key}");
    }
    assert!(spec["shortDescription"].as_str().is_some_and(|s| s.len() <= 60), "krew keeps shortDescription short");
    let platforms = spec["platforms"].as_array().expect("platforms");
    assert!(!platforms.is_empty());
    for p in platforms {
        let labels = &p["selector"]["matchLabels"];
        let (os, arch) = (labels["os"].as_str().expect("os"), labels["arch"].as_str().expect("arch"));
        let target = match (os, arch) {
            ("linux", "amd64") => "x86_64-unknown-linux-gnu",
            ("linux", "arm64") => "aarch64-unknown-linux-gnu",
            ("darwin", "amd64") => "x86_64-apple-darwin",
            ("darwin", "arm64") => "aarch64-apple-darwin",
            other => panic!("unexpected platform {other:?}"),
        };
        let name = format!("kubewhy-{version}-{target}");
        let uri = p["uri"].as_str().expect("uri");
        assert!(uri.starts_with("https://") && uri.ends_with(&format!("/v{version}/{name}.tar.gz")), "{uri}");
        // scripts/release.sh replaces exactly this placeholder with the archive's sha256.
        assert_eq!(p["sha256"], format!("@SHA256:{name}.tar.gz@"));
        let bin = p["bin"].as_str().expect("bin");
        let files = p["files"].as_array().expect("files");
        let froms: Vec<&str> = files.iter().map(|f| f["from"].as_str().expect("from")).collect();
        assert!(froms.contains(&format!("{name}/{bin}").as_str()), "the bin is copied: {froms:?}");
        assert!(froms.contains(&format!("{name}/LICENSE").as_str()), "the LICENSE is copied: {froms:?}");
        // krew links kubectl-why to `bin`; kubewhy under that name is the plugin.
        assert!(bin == "kubewhy" || bin == "kubectl-why");
    }
}

#[test]
fn license_matches_cargo_toml() {
    let cargo = std::fs::read_to_string(root().join("Cargo.toml")).expect("Cargo.toml");
    assert!(cargo.contains("license = \"Apache-2.0\""));
    let license = std::fs::read_to_string(root().join("LICENSE")).expect("LICENSE");
    assert!(license.contains("Apache License") && license.contains("Version 2.0, January 2004"));
    assert!(license.contains("END OF TERMS AND CONDITIONS"));
}
