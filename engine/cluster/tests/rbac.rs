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
