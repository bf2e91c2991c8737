//! `--redact`: stable pseudonyms for object names, namespaces and IP addresses, so a report
//! can be shared without naming anything in the cluster.
//!
//! A [`Redactor`] is built once per run from the state read ([`Redactor::new`]): every
//! object's name gets a pseudonym after its kind (`pod-1`, `node-2`), every namespace one
//! too (`ns-1`), in a deterministic order, so the same object is called the same in the
//! whole report. [`Redactor::text`] replaces those names where they appear as whole words
//! inside free text (evidence values, summaries, notices) and maps IPv4 addresses into
//! 192.0.2.0/24 and IPv6 addresses into 2001:db8::/32 (the documentation ranges, RFC 5737
//! and RFC 3849), keeping a CIDR suffix. The well-known namespaces (`default`,
//! `kube-system`, `kube-public`, `kube-node-lease`) and the `kubernetes` Service are kept:
//! they name nothing about the cluster and keep the report readable.

use crate::probes::Finding;
use crate::state::{ClusterState, ObjectRef, ResourceKind};
use regex::Regex;
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

/// Names left as they are.
const KEEP: &[&str] = &["default", "kube-system", "kube-public", "kube-node-lease", "kubernetes"];

/// Pseudonyms for one run.
#[derive(Debug)]
pub struct Redactor {
    names: HashMap<String, String>,
    namespaces: HashMap<String, String>,
    words: Option<Regex>,
    ips: Regex,
    ip_map: Mutex<BTreeMap<String, String>>,
}

fn short(kind: ResourceKind) -> String {
    match kind {
        ResourceKind::PersistentVolumeClaim => "pvc".into(),
        ResourceKind::PersistentVolume => "pv".into(),
        ResourceKind::StorageClass => "storageclass".into(),
        ResourceKind::Service => "svc".into(),
        k => k.kind().to_ascii_lowercase(),
    }
}

impl Redactor {
    /// Pseudonyms for every name and namespace in `state`.
    pub fn new(state: &ClusterState) -> Redactor {
        let mut names: HashMap<String, String> = HashMap::new();
        let mut namespaces: HashMap<String, String> = HashMap::new();
        let mut counters: BTreeMap<String, usize> = BTreeMap::new();
        let mut ns_list: Vec<String> = Vec::new();
        for kind in ResourceKind::ALL {
            let mut metas: Vec<(String, Option<String>)> =
                state.metas(*kind).into_iter().map(|m| (m.name.clone().unwrap_or_default(), m.namespace.clone())).collect();
            metas.sort();
            for (name, ns) in metas {
                if let Some(ns) = ns {
                    ns_list.push(ns);
                }
                if *kind == ResourceKind::Namespace {
                    ns_list.push(name.clone());
                    continue;
                }
                if name.is_empty() || KEEP.contains(&name.as_str()) || names.contains_key(&name) {
                    continue;
                }
                let n = counters.entry(short(*kind)).or_default();
                *n += 1;
                names.insert(name, format!("{}-{n}", short(*kind)));
            }
        }
        ns_list.sort();
        ns_list.dedup();
        for (i, ns) in ns_list.into_iter().filter(|n| !KEEP.contains(&n.as_str())).enumerate() {
            namespaces.insert(ns, format!("ns-{}", i + 1));
        }
        // Longest first so `web-0` wins over `web`; only names of 3+ characters are matched in text.
        let mut words: Vec<&String> = names.keys().chain(namespaces.keys()).filter(|w| w.len() >= 3).collect();
        words.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        words.dedup();
        let words = if words.is_empty() {
            None
        } else {
            let alt = words.iter().map(|w| regex::escape(w)).collect::<Vec<_>>().join("|");
            Regex::new(&format!("(?:{alt})")).ok()
        };
        #[allow(clippy::unwrap_used)] // a constant pattern
        let ips = Regex::new(
            r"(?x)
            \b(?:\d{1,3}\.){3}\d{1,3}\b
            | \b(?:[0-9a-fA-F]{1,4}:){2,7}[0-9a-fA-F]{0,4}\b
            | \b(?:[0-9a-fA-F]{1,4}:){1,6}:(?:[0-9a-fA-F]{1,4})?\b",
        )
        .unwrap();
        Redactor { names, namespaces, words, ips, ip_map: Mutex::new(BTreeMap::new()) }
    }

    /// The pseudonym of an object name (the name itself when it is kept or unknown).
    pub fn name(&self, name: &str) -> String {
        self.names.get(name).or_else(|| self.namespaces.get(name)).cloned().unwrap_or_else(|| self.text(name))
    }

    /// The pseudonym of a namespace.
    pub fn namespace(&self, ns: &str) -> String {
        self.namespaces.get(ns).or_else(|| self.names.get(ns)).cloned().unwrap_or_else(|| self.text(ns))
    }

    /// Masks an object reference in place.
    pub fn object(&self, o: &mut ObjectRef) {
        o.name = if o.kind == ResourceKind::Namespace { self.namespace(&o.name) } else { self.name(&o.name) };
        o.namespace = o.namespace.as_deref().map(|n| self.namespace(n));
    }

    /// Masks a finding in place: its object, its summary and every evidence item.
    pub fn finding(&self, f: &mut Finding) {
        self.object(&mut f.object);
        f.summary = self.text(&f.summary);
        for e in &mut f.evidence {
            self.object(&mut e.object);
            e.value = self.text(&e.value);
        }
    }

    /// Masks names, namespaces and IPs inside free text (whole words only: a name must not
    /// be preceded or followed by a letter, digit, `-` or `_`).
    pub fn text(&self, s: &str) -> String {
        let s = self.mask_ips(s);
        let Some(re) = &self.words else { return s };
        let bytes = s.as_bytes();
        let word_char = |b: u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'_';
        let mut out = String::with_capacity(s.len());
        let mut last = 0;
        let mut pos = 0;
        while let Some(m) = re.find_at(&s, pos) {
            let before_ok = m.start() == 0 || !word_char(bytes[m.start() - 1]);
            let after_ok = m.end() == bytes.len() || !word_char(bytes[m.end()]);
            if before_ok && after_ok {
                out.push_str(&s[last..m.start()]);
                let w = m.as_str();
                let p = self.names.get(w).or_else(|| self.namespaces.get(w)).map(String::as_str).unwrap_or(w);
                out.push_str(p);
                last = m.end();
                pos = m.end();
            } else {
                // Try the next position (a shorter name may match inside).
                pos = m.start() + s[m.start()..].chars().next().map(char::len_utf8).unwrap_or(1);
            }
            if pos >= s.len() {
                break;
            }
        }
        out.push_str(&s[last..]);
        out
    }

    fn mask_ips(&self, s: &str) -> String {
        self.ips
            .replace_all(s, |c: &regex::Captures<'_>| {
                let ip = &c[0];
                let v4 = ip.contains('.');
                if v4 && ip.split('.').any(|o| o.parse::<u16>().map_or(true, |n| n > 255)) {
                    return ip.to_string();
                }
                if !v4 && (ip.parse::<std::net::Ipv6Addr>().is_err() || ip.matches(':').count() < 2) {
                    return ip.to_string();
                }
                let mut map = match self.ip_map.lock() {
                    Ok(m) => m,
                    Err(p) => p.into_inner(),
                };
                let n = map.len() + 1;
                map.entry(ip.to_string())
                    .or_insert_with(|| if v4 { format!("192.0.2.{}", n % 254 + 1) } else { format!("2001:db8::{n:x}") })
                    .clone()
            })
            .into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> ClusterState {
        let mut s = ClusterState::default();
        s.insert_json(ResourceKind::Pod, serde_json::json!({"metadata": {"name": "web-0", "namespace": "shop"}})).expect("pod");
        s.insert_json(ResourceKind::Pod, serde_json::json!({"metadata": {"name": "web", "namespace": "shop"}})).expect("pod");
        s.insert_json(ResourceKind::Node, serde_json::json!({"metadata": {"name": "node-a"}})).expect("node");
        s
    }

    #[test]
    fn stable_pseudonyms_in_text() {
        let r = Redactor::new(&state());
        let t = r.text("pod shop/web-0 on node-a (10.1.2.3, 10.1.2.3/24, fd00::1) near web and webby");
        assert!(!t.contains("web-0") && !t.contains("shop") && !t.contains("node-a") && !t.contains("10.1.2.3"), "{t}");
        assert!(t.contains("webby"), "a longer word is not a name: {t}");
        assert_eq!(r.text("10.1.2.3"), r.text("10.1.2.3"), "stable within a run");
        assert!(!t.contains("fd00::1"), "{t}");
        assert_eq!(r.namespace("kube-system"), "kube-system");
        assert_eq!(r.text("version 1.30.4"), "version 1.30.4");
    }
}
