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
    ("action", false),
    ("risk", false),
    ("correction", false),
    ("concerns", true),
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
