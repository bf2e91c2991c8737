//! `kubewhy site export` and `--base-url` links in JSON output, through the real process.

use assert_cmd::Command;
use predicates::prelude::*;

fn kubewhy() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_kubewhy"));
    c.env_remove("KUBEWHY_BASE_URL");
    c
}

#[test]
fn json_carries_urls_only_with_a_base_url() {
    let out = kubewhy().args(["--base-url", "https://k.example.com/ref/", "why", "-o", "json", "0/3 nodes are available: 3 Insufficient cpu."]).assert().success();
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).expect("JSON");
    assert_eq!(v["candidates"][0]["url"], "https://k.example.com/ref/e/failure-mode/insufficient-resources");
    assert_eq!(v["candidates"][0]["id"], "failure-mode/insufficient-resources", "existing keys stay");
    let out = kubewhy().env("KUBEWHY_BASE_URL", "http://127.0.0.1:8787").args(["explain", "-o", "json", "component/etcd"]).assert().success();
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).expect("JSON");
    assert_eq!(v["entity"]["url"], "http://127.0.0.1:8787/e/component/etcd");
    let out = kubewhy().env("KUBEWHY_BASE_URL", "http://127.0.0.1:8787").args(["search", "-o", "json", "watch", "cache"]).assert().success();
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).expect("JSON");
    let hit = &v["hits"][0];
    assert!(hit["url"].as_str().is_some_and(|u| u.starts_with("http://127.0.0.1:8787/e/")), "{hit}");
    kubewhy().args(["search", "-o", "json", "watch", "cache"]).assert().success().stdout(predicate::str::contains("\"url\"").not());
    kubewhy().args(["--base-url", "example.com", "why", "x"]).assert().code(2).stderr(predicate::str::contains("must start with http:// or https://"));
}

#[test]
fn site_export_writes_a_browsable_tree() {
    let dir = std::env::temp_dir().join(format!("kubewhy-cli-site-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    kubewhy().args(["site", "export"]).arg(&dir).assert().success().stderr(predicate::str::contains("entity pages"));
    for f in ["index.html", "search-index.json", "e/component/etcd/index.html"] {
        assert!(dir.join(f).is_file(), "missing {f}");
    }
    let home = std::fs::read_to_string(dir.join("index.html")).expect("home");
    assert!(home.contains("href=\"assets/site.css\""), "relative links at the root");
    kubewhy().args(["site", "export", "--base-path", "/kubewhy"]).arg(&dir).assert().success();
    let page = std::fs::read_to_string(dir.join("e/component/etcd/index.html")).expect("page");
    assert!(page.contains("href=\"/kubewhy/assets/site.css\""));
    kubewhy().args(["site", "export", "--base-path", "kubewhy"]).arg(&dir).assert().code(2).stderr(predicate::str::contains("must start with `/`"));
    let _ = std::fs::remove_dir_all(&dir);
}
