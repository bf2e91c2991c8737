//! IRIs of the kubewhy ontology (`knowledge/ontology.ttl`), kept in sync with it by a test.
//!
//! Classes are `kw:<KindClass>` (see [`crate::model::Kind::class_name`]); entity IRIs are
//! `https://kubewhy.dev/id/<kind>/<slug>`.

/// Namespace of ontology terms (prefix `kw:`).
pub const KW: &str = "https://kubewhy.dev/ontology#";
/// Base of entity IRIs (prefix `id:`); an entity `kind/slug` is `<ID_BASE><kind>/<slug>`.
pub const ID_BASE: &str = "https://kubewhy.dev/id/";
/// `rdf:type`.
pub const RDF_TYPE: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type";
/// `rdfs:label`.
pub const RDFS_LABEL: &str = "http://www.w3.org/2000/01/rdf-schema#label";
/// `rdfs:comment`.
pub const RDFS_COMMENT: &str = "http://www.w3.org/2000/01/rdf-schema#comment";
/// `rdfs:seeAlso`.
pub const RDFS_SEE_ALSO: &str = "http://www.w3.org/2000/01/rdf-schema#seeAlso";

/// Every property local name the graph writes under [`KW`], with whether its object is an entity IRI.
pub const PROPERTIES: &[(&str, bool)] = &[
    ("alias", false),
    ("reference", false),
    ("since", false),
    ("until", false),
    ("describedIn", true),
    ("gatedBy", true),
    ("definedIn", false),
    ("body", false),
    ("partOf", true),
    ("talksTo", true),
    ("reads", true),
    ("writes", true),
    ("emits", true),
    ("objectKind", false),
    ("fieldPath", false),
    ("metricName", false),
    ("exposedBy", true),
    ("metricType", false),
    ("stability", false),
    ("label", false),
    ("badValue", false),
    ("area", false),
    ("involves", true),
    ("inLoop", true),
    ("concernsField", true),
    ("observableVia", true),
    ("manifestsAs", true),
    ("diagnosedBy", true),
    ("fixedBy", true),
    ("causedBy", true),
    ("leadsTo", true),
    ("hasUpstreamCause", true),
    ("signalKind", false),
    ("template", false),
    ("reason", false),
    ("code", false),
    ("emittedBy", false),
    ("weight", false),
    ("command", false),
    ("lookFor", false),
    ("probe", false),
    ("rulesOut", false),
    ("level", false),
    ("contextCue", false),
    ("ruledOutBy", false),
    ("action", false),
    ("risk", false),
    ("correction", false),
    ("concerns", true),
    ("inFeatureList", false),
    ("stage", false),
    ("defaultValue", false),
    ("lockedToDefault", false),
    ("alphaIn", false),
    ("betaIn", false),
    ("stableIn", false),
    ("deprecatedIn", false),
    ("kepNumber", false),
    ("owningSig", false),
    ("kepStatus", false),
    ("releaseDate", false),
    ("endOfLife", false),
];

/// The full IRI of an ontology term (`kw:<local>`).
pub fn kw(local: &str) -> String {
    format!("{KW}{local}")
}

/// The IRI of an entity id (`kind/slug`).
pub fn entity_iri(id: &str) -> String {
    format!("{ID_BASE}{id}")
}

/// The entity id of an IRI under [`ID_BASE`], if it is one.
pub fn id_of_iri(iri: &str) -> Option<&str> {
    iri.strip_prefix(ID_BASE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Kind;
    use oxigraph::io::{RdfFormat, RdfParser};
    use std::collections::BTreeSet;

    /// Every property and class the code writes is declared in knowledge/ontology.ttl, with a
    /// label, a comment, a domain and a range; and the file declares nothing the code does not use.
    #[test]
    fn ontology_ttl_matches_the_code() {
        let ttl = include_str!("../../knowledge/ontology.ttl");
        let mut subjects: BTreeSet<String> = BTreeSet::new();
        let mut described: BTreeSet<(String, String)> = BTreeSet::new();
        for t in RdfParser::from_format(RdfFormat::Turtle).for_slice(ttl.as_bytes()) {
            let t = t.expect("ontology.ttl parses");
            let s = t.subject.to_string().trim_matches(['<', '>']).to_string();
            if let Some(local) = s.strip_prefix(KW) {
                subjects.insert(local.to_string());
                described.insert((local.to_string(), t.predicate.as_str().to_string()));
            }
        }
        let needed = [RDFS_LABEL, RDFS_COMMENT, "http://www.w3.org/2000/01/rdf-schema#domain", "http://www.w3.org/2000/01/rdf-schema#range"];
        for (p, _) in PROPERTIES {
            for n in needed {
                assert!(described.contains(&(p.to_string(), n.to_string())), "kw:{p} lacks {n} in ontology.ttl");
            }
        }
        for k in Kind::ALL {
            assert!(subjects.contains(k.class_name()), "class kw:{} missing from ontology.ttl", k.class_name());
        }
        let known: BTreeSet<&str> = PROPERTIES.iter().map(|(p, _)| *p).chain(Kind::ALL.iter().map(|k| k.class_name())).chain(["Entity"]).collect();
        for s in &subjects {
            assert!(known.contains(s.as_str()), "ontology.ttl declares kw:{s}, which the code never writes");
        }
    }
}
