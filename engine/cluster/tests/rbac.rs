//! deploy/rbac.yaml grants exactly what kubewhy reads: get and list on every
//! `ResourceKind::ALL` resource in its API group, nothing else (no Secrets, no ConfigMaps,
//! no subresources, no write verbs), bound to the kubewhy ServiceAccount.

use kubewhy_cluster::ResourceKind;
use serde::Deserialize;
use std::collections::BTreeSet;

#[test]
fn cluster_role_covers_resource_kinds_with_read_verbs_only() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/rbac.yaml");
    let text = std::fs::read_to_string(&path).expect("deploy/rbac.yaml");
    let docs: Vec<serde_json::Value> = serde_yaml_ng::Deserializer::from_str(&text)
        .map(|d| serde_json::Value::deserialize(d).expect("yaml"))
        .collect();
    let role = docs.iter().find(|d| d["kind"] == "ClusterRole").expect("a ClusterRole");
    let mut granted = BTreeSet::new();
    for rule in role["rules"].as_array().expect("rules") {
        let verbs: BTreeSet<&str> = rule["verbs"].as_array().expect("verbs").iter().filter_map(|v| v.as_str()).collect();
        assert_eq!(verbs, BTreeSet::from(["get", "list"]), "read verbs only: {rule}");
        assert!(rule.get("resourceNames").is_none() && rule.get("nonResourceURLs").is_none());
        for g in rule["apiGroups"].as_array().expect("apiGroups") {
            for r in rule["resources"].as_array().expect("resources") {
                let r = r.as_str().expect("resource");
                assert!(!r.contains('/') && r != "*", "no subresources or wildcards: {r}");
                assert!(r != "secrets" && r != "configmaps", "never {r}");
                granted.insert((g.as_str().expect("group").to_string(), r.to_string()));
            }
        }
    }
    let wanted: BTreeSet<(String, String)> = ResourceKind::ALL.iter().map(|k| (k.group().to_string(), k.plural().to_string())).collect();
    assert_eq!(granted, wanted, "the ClusterRole grants exactly ResourceKind::ALL");
    let binding = docs.iter().find(|d| d["kind"] == "ClusterRoleBinding").expect("a ClusterRoleBinding");
    assert_eq!(binding["roleRef"]["name"], role["metadata"]["name"]);
    let sa = docs.iter().find(|d| d["kind"] == "ServiceAccount").expect("a ServiceAccount");
    assert_eq!(binding["subjects"][0]["name"], sa["metadata"]["name"]);
    assert_eq!(binding["subjects"][0]["namespace"], sa["metadata"]["namespace"]);
}

/// The ClusterRole's rules as generated from `ResourceKind::ALL`: one rule per API group, in the
/// order the groups first appear, resources in `ResourceKind::ALL` order.
fn generated_rules() -> String {
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for k in ResourceKind::ALL {
        match groups.iter_mut().find(|(g, _)| *g == k.group()) {
            Some((_, rs)) => rs.push(k.plural()),
            None => groups.push((k.group(), vec![k.plural()])),
        }
    }
    let mut s = String::from("rules:\n");
    for (g, rs) in groups {
        let rs: Vec<String> = rs.iter().map(|r| format!("\"{r}\"")).collect();
        s.push_str(&format!("  - apiGroups: [\"{g}\"]\n    resources: [{}]\n    verbs: [\"get\", \"list\"]\n", rs.join(", ")));
    }
    s
}

/// deploy/rbac.yaml's rules are exactly the generated text; `KUBEWHY_BLESS=1 cargo test -p
/// kubewhy-cluster --test rbac` rewrites them after `ResourceKind::ALL` changes.
#[test]
fn cluster_role_rules_are_generated_from_the_code() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/rbac.yaml");
    let text = std::fs::read_to_string(&path).expect("deploy/rbac.yaml");
    let start = text.find("rules:\n").expect("rules");
    let end = start + text[start..].find("---\n").expect("the document after the ClusterRole");
    let want = generated_rules();
    if text[start..end] != want {
        if std::env::var_os("KUBEWHY_BLESS").is_some() {
            std::fs::write(&path, format!("{}{want}{}", &text[..start], &text[end..])).expect("write deploy/rbac.yaml");
        } else {
            panic!("deploy/rbac.yaml's rules differ from ResourceKind::ALL; regenerate with KUBEWHY_BLESS=1 cargo test -p kubewhy-cluster --test rbac\n--- generated:\n{want}");
        }
    }
}
