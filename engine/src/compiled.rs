//! The knowledge compiled ahead of time (issue 13): the validated entities, the upstream
//! facts, the topic map and the full-text index, in one compact byte string that
//! [`compile`] writes at build time and [`load`] reads back at start-up, so a one-shot
//! `kubewhy why` decodes the knowledge instead of parsing and validating 1,600 Markdown and
//! TOML files and rebuilding the index on every run.
//!
//! The format is private to one build of the engine: the bytes are produced by the same
//! source that reads them (the `kubewhy-compiled` crate's build script), so it carries no
//! compatibility promise, only a magic string and a [`FORMAT`] number that [`load`] checks.
//!
//! Layout: the magic `kubewhy-compiled\n`, the format number, then the sections in order —
//! the matcher tables ([`Prepared`], without the alias automaton), entities, upstream facts,
//! topics, index files. Integers are little-endian (`u32`/`u64`/ `i64`, `f64` as its bits),
//! strings and byte strings a `u32` length then the bytes, a
//! sequence its `u32` count then its items, an option a `0`/`1` byte then the value.
//! Front-matter key lines (used to point lint diagnostics at a key) are not kept: the
//! built-in knowledge is validated when it is compiled, and a diagnostic found later about a
//! built-in entity points at the entity's first line.

use crate::diagnose::Prepared;
use crate::knowledge::{KnowledgeBase, Topic, Upstream};
use crate::model::{
    ContextCue, CueKind, Entity, FailureModeData, Kind, KindData, Level, Location, SignalKind, SymptomData, Version, VersionRange,
};
use crate::search::SearchIndex;
use crate::signals::Template;
use crate::upstream::{FeatureGate, GateStep, Kep, Release, UpstreamMetric};
use std::collections::BTreeMap;

/// The first bytes of every compiled knowledge file.
pub const MAGIC: &[u8] = b"kubewhy-compiled\n";

/// Version of the layout; [`load`] refuses any other.
pub const FORMAT: u32 = 3;

/// Errors of [`compile`] and [`load`].
#[derive(Debug, thiserror::Error)]
pub enum CompiledError {
    /// The bytes do not start with [`MAGIC`] and [`FORMAT`].
    #[error("not compiled kubewhy knowledge of format {FORMAT} (wrong magic or format number)")]
    Format,
    /// The bytes end early or hold an impossible value.
    #[error("compiled knowledge is corrupt at byte {offset}: {what}")]
    Corrupt {
        /// Offset of the value that could not be read.
        offset: usize,
        /// What was expected there.
        what: &'static str,
    },
    /// The compiled index could not be written or opened.
    #[error(transparent)]
    Search(#[from] crate::search::SearchError),
}

/// Serialises `kb`, `index` (built over `kb`) and `prepared` (the matcher tables of `kb`:
/// [`Prepared::new`], or those an engine's matcher already holds) into the compiled form.
///
/// # Errors
/// [`CompiledError::Search`] when the index files cannot be read.
pub fn compile(kb: &KnowledgeBase, index: &SearchIndex, prepared: &Prepared) -> Result<Vec<u8>, CompiledError> {
    let mut w = Writer(Vec::with_capacity(16 << 20));
    w.0.extend_from_slice(MAGIC);
    FORMAT.put(&mut w);
    prepared.put(&mut w);
    let (entities, upstream, topics) = kb.parts();
    entities.put(&mut w);
    upstream.put(&mut w);
    topics.put(&mut w);
    let files = index.files()?;
    (files.len() as u32).put(&mut w);
    for (path, bytes) in &files {
        path.put(&mut w);
        w.bytes(bytes);
    }
    Ok(w.0)
}

/// Compiled knowledge read back by [`load`].
#[derive(Debug)]
pub struct Loaded {
    /// The knowledge base.
    pub kb: KnowledgeBase,
    /// Its full-text index.
    pub index: SearchIndex,
    /// Its matcher tables (see [`crate::diagnose::Matcher::with_prepared`]), alias automaton
    /// built.
    pub prepared: Prepared,
}

/// Reads the compiled form back into a knowledge base, its index and its matcher tables.
///
/// The entities are decoded on a second thread while the alias automaton is built and the
/// diagnosis's regular expressions compiled ([`crate::diagnose::warm_up`]): they are the
/// largest parts of a one-shot start-up and independent of each other.
///
/// # Errors
/// [`CompiledError::Format`] for bytes of another format, [`CompiledError::Corrupt`] with the
/// offset when they end early, hold an impossible value or tables that do not fit the
/// entities, [`CompiledError::Search`] when the index does not open.
pub fn load(bytes: &[u8]) -> Result<Loaded, CompiledError> {
    let rest = bytes.strip_prefix(MAGIC).ok_or(CompiledError::Format)?;
    let mut r = Reader { buf: rest, pos: 0, base: MAGIC.len() };
    if u32::get(&mut r)? != FORMAT {
        return Err(CompiledError::Format);
    }
    let prepared = Prepared::get(&mut r)?;
    let prepared_end = r.base + r.pos;
    // The entities decode on the second thread, the automaton is built on this one: what the
    // automaton's construction frees is then reused by this thread's later allocations (the
    // matcher, the diagnosis) instead of staying resident in another thread's arena.
    let (rest, prepared) = std::thread::scope(|s| {
        let rest = s.spawn(move || load_rest(&mut r));
        let prepared = prepared.with_automaton();
        crate::diagnose::warm_up();
        (rest.join(), prepared)
    });
    // Decoding returns errors for bad bytes; a panic there would be a bug, reported as corrupt data.
    let (kb, index) = rest.map_err(|_| CompiledError::Corrupt { offset: prepared_end, what: "entities, upstream facts, topics and index files" })??;
    if !prepared.fits(kb.of_kind(crate::model::Kind::FailureMode).count(), kb.of_kind(crate::model::Kind::Symptom).count()) {
        return Err(CompiledError::Corrupt { offset: prepared_end, what: "matcher tables that fit the failure modes" });
    }
    Ok(Loaded { kb, index, prepared })
}

/// Reads the compiled form back into a knowledge base and its index only, for a base that an
/// overlay will change (its matcher tables would not fit the merged failure modes): the stored
/// tables are skipped and no automaton is built.
///
/// # Errors
/// As [`load`].
pub fn load_base(bytes: &[u8]) -> Result<(KnowledgeBase, SearchIndex), CompiledError> {
    let rest = bytes.strip_prefix(MAGIC).ok_or(CompiledError::Format)?;
    let mut r = Reader { buf: rest, pos: 0, base: MAGIC.len() };
    if u32::get(&mut r)? != FORMAT {
        return Err(CompiledError::Format);
    }
    Prepared::get(&mut r)?;
    load_rest(&mut r)
}

/// The sections after the matcher tables: entities, upstream facts, topics, index files.
fn load_rest(r: &mut Reader<'_>) -> Result<(KnowledgeBase, SearchIndex), CompiledError> {
    let entities = Vec::<Entity>::get(r)?;
    let upstream = Upstream::get(r)?;
    let topics = Vec::<(Topic, Location)>::get(r)?;
    let n = r.len("index file count")?;
    let mut files = Vec::with_capacity(n);
    for _ in 0..n {
        let path = String::get(r)?;
        // Borrowed: the RAM directory makes the one copy the index keeps.
        let data = r.take_bytes("index file")?;
        files.push((path, data));
    }
    if r.pos != r.buf.len() {
        return Err(r.corrupt("the end of the data"));
    }
    let kb = KnowledgeBase::from_parts(entities, upstream, topics).map_err(|_| CompiledError::Corrupt { offset: 0, what: "distinct entity ids" })?;
    // tantivy trusts its files and can panic on damaged ones: a damaged file is an error here.
    let index = std::panic::catch_unwind(|| SearchIndex::from_files(&files)).map_err(|_| CompiledError::Corrupt { offset: 0, what: "index files tantivy can open" })??;
    Ok((kb, index))
}

/// The output buffer.
struct Writer(Vec<u8>);

impl Writer {
    fn bytes(&mut self, b: &[u8]) {
        (b.len() as u32).put(self);
        self.0.extend_from_slice(b);
    }
}

/// A cursor over the input; offsets in errors are from the start of the whole input.
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    base: usize,
}

impl<'a> Reader<'a> {
    fn corrupt(&self, what: &'static str) -> CompiledError {
        CompiledError::Corrupt { offset: self.base + self.pos, what }
    }

    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], CompiledError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.buf.len()).ok_or_else(|| self.corrupt(what))?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn take_bytes(&mut self, what: &'static str) -> Result<&'a [u8], CompiledError> {
        let n = self.len(what)?;
        self.take(n, what)
    }

    /// A `u32` count or length, checked against the bytes left (every item takes at least one
    /// byte), so a corrupt count cannot make a huge allocation.
    fn len(&mut self, what: &'static str) -> Result<usize, CompiledError> {
        let n = u32::get(self)? as usize;
        if n > self.buf.len() - self.pos {
            return Err(self.corrupt(what));
        }
        Ok(n)
    }
}

/// A value with a byte encoding.
trait Codec: Sized {
    fn put(&self, w: &mut Writer);
    fn get(r: &mut Reader<'_>) -> Result<Self, CompiledError>;
}

macro_rules! int_codec {
    ($($t:ty),*) => {$(
        impl Codec for $t {
            fn put(&self, w: &mut Writer) {
                w.0.extend_from_slice(&self.to_le_bytes());
            }
            fn get(r: &mut Reader<'_>) -> Result<Self, CompiledError> {
                let b = r.take(std::mem::size_of::<$t>(), stringify!($t))?;
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(b);
                Ok(<$t>::from_le_bytes(a))
            }
        }
    )*};
}
int_codec!(u8, u16, u32, u64, i64);

impl Codec for usize {
    fn put(&self, w: &mut Writer) {
        (*self as u64).put(w);
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, CompiledError> {
        usize::try_from(u64::get(r)?).map_err(|_| r.corrupt("usize"))
    }
}

impl Codec for f64 {
    fn put(&self, w: &mut Writer) {
        self.to_bits().put(w);
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, CompiledError> {
        Ok(f64::from_bits(u64::get(r)?))
    }
}

impl Codec for bool {
    fn put(&self, w: &mut Writer) {
        u8::from(*self).put(w);
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, CompiledError> {
        match u8::get(r)? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(r.corrupt("bool")),
        }
    }
}

impl Codec for String {
    fn put(&self, w: &mut Writer) {
        w.bytes(self.as_bytes());
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, CompiledError> {
        let b = r.take_bytes("string")?;
        std::str::from_utf8(b).map(str::to_owned).map_err(|_| r.corrupt("UTF-8 text"))
    }
}

impl<T: Codec> Codec for Option<T> {
    fn put(&self, w: &mut Writer) {
        match self {
            None => 0u8.put(w),
            Some(v) => {
                1u8.put(w);
                v.put(w);
            }
        }
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, CompiledError> {
        match u8::get(r)? {
            0 => Ok(None),
            1 => Ok(Some(T::get(r)?)),
            _ => Err(r.corrupt("option tag")),
        }
    }
}

impl<T: Codec> Codec for Vec<T> {
    fn put(&self, w: &mut Writer) {
        (self.len() as u32).put(w);
        for v in self {
            v.put(w);
        }
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, CompiledError> {
        let n = r.len("sequence length")?;
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            v.push(T::get(r)?);
        }
        Ok(v)
    }
}

impl<K: Codec + Ord, V: Codec> Codec for BTreeMap<K, V> {
    fn put(&self, w: &mut Writer) {
        (self.len() as u32).put(w);
        for (k, v) in self {
            k.put(w);
            v.put(w);
        }
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, CompiledError> {
        let n = r.len("map length")?;
        let mut m = BTreeMap::new();
        for _ in 0..n {
            let k = K::get(r)?;
            m.insert(k, V::get(r)?);
        }
        Ok(m)
    }
}

impl<A: Codec, B: Codec> Codec for (A, B) {
    fn put(&self, w: &mut Writer) {
        self.0.put(w);
        self.1.put(w);
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, CompiledError> {
        Ok((A::get(r)?, B::get(r)?))
    }
}

/// Implements [`Codec`] for a struct field by field. `put` destructures the struct without
/// `..`, so a field added to the model and forgotten here is a compile error.
macro_rules! struct_codec {
    ($t:ident { $($f:ident),* $(,)? }) => {
        impl Codec for $t {
            fn put(&self, w: &mut Writer) {
                let $t { $($f),* } = self;
                $($f.put(w);)*
            }
            fn get(r: &mut Reader<'_>) -> Result<Self, CompiledError> {
                $(let $f = Codec::get(r)?;)*
                Ok($t { $($f),* })
            }
        }
    };
}

struct_codec!(Entity { id, kind, title, aliases, references, applies, keps, feature_gates, related, body, location, data });
struct_codec!(VersionRange { since, until });
struct_codec!(Version { major, minor });
struct_codec!(Location { file, line });
struct_codec!(SymptomData { signal, text, reason, code, source, weight });
struct_codec!(FailureModeData { area, components, loops, fields, metrics, symptoms, checks, fixes, caused_by, leads_to, level, context, ruled_out_by });
struct_codec!(ContextCue { kind, weight });
struct_codec!(Upstream { gates, keps, metrics, releases });
struct_codec!(FeatureGate { name, keps, in_feature_list, removed, last_version, step, source });
struct_codec!(GateStep { version, stage, default, locked, source });
struct_codec!(Kep { number, title, other_titles, sig, status, stage, latest_milestone, alpha, beta, stable, deprecated, feature_gates, path });
struct_codec!(UpstreamMetric { name, metric_type, stability, labels, component, deprecated_version, source });
struct_codec!(Release { version, date, eol, source });
struct_codec!(Topic { area, topic, entities });

impl Codec for Prepared {
    fn put(&self, w: &mut Writer) {
        // Every field but the automaton and the template index, built on load.
        let Prepared { alias_patterns, alias_pattern_df, alias_ids, cue_words, ruled_out_words, alias_tokens, alias_vocab, templates, symptom_texts, alias_automaton: _, template_index: _ } =
            self;
        alias_patterns.put(w);
        alias_pattern_df.put(w);
        alias_ids.put(w);
        cue_words.put(w);
        ruled_out_words.put(w);
        alias_tokens.put(w);
        alias_vocab.put(w);
        templates.put(w);
        symptom_texts.put(w);
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, CompiledError> {
        Ok(Prepared {
            alias_patterns: Codec::get(r)?,
            alias_pattern_df: Codec::get(r)?,
            alias_ids: Codec::get(r)?,
            cue_words: Codec::get(r)?,
            ruled_out_words: Codec::get(r)?,
            alias_tokens: Codec::get(r)?,
            alias_vocab: Codec::get(r)?,
            templates: Codec::get(r)?,
            symptom_texts: Codec::get(r)?,
            alias_automaton: None,
            template_index: None,
        })
    }
}

impl Codec for Template {
    fn put(&self, w: &mut Writer) {
        // The expression is compiled on first use, never stored.
        let Template { symptom_id, pattern, regex: _, longest, literal_len, needle, words } = self;
        symptom_id.put(w);
        pattern.put(w);
        longest.put(w);
        literal_len.put(w);
        needle.put(w);
        words.put(w);
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, CompiledError> {
        Ok(Template {
            symptom_id: Codec::get(r)?,
            pattern: Codec::get(r)?,
            regex: std::sync::OnceLock::new(),
            longest: Codec::get(r)?,
            literal_len: Codec::get(r)?,
            needle: Codec::get(r)?,
            words: Codec::get(r)?,
        })
    }
}

impl Codec for Kind {
    fn put(&self, w: &mut Writer) {
        let i = Kind::ALL.iter().position(|k| k == self).unwrap_or(0) as u8;
        i.put(w);
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, CompiledError> {
        let i = u8::get(r)? as usize;
        Kind::ALL.get(i).copied().ok_or_else(|| r.corrupt("entity kind"))
    }
}

impl Codec for SignalKind {
    fn put(&self, w: &mut Writer) {
        self.as_str().to_string().put(w);
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, CompiledError> {
        let s = String::get(r)?;
        SignalKind::parse(&s).ok_or_else(|| r.corrupt("signal kind"))
    }
}

impl Codec for Level {
    fn put(&self, w: &mut Writer) {
        u8::from(*self == Level::Symptom).put(w);
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, CompiledError> {
        Ok(if bool::get(r)? { Level::Symptom } else { Level::Cause })
    }
}

impl Codec for CueKind {
    fn put(&self, w: &mut Writer) {
        match self {
            CueKind::Phrase { text } => (0u8, text).put_pair(w),
            CueKind::History { text } => (1u8, text).put_pair(w),
            CueKind::Setting { field, value } => {
                2u8.put(w);
                field.put(w);
                value.put(w);
            }
            CueKind::Platform { text } => (3u8, text).put_pair(w),
            CueKind::Product { text } => (4u8, text).put_pair(w),
            CueKind::Timing { seconds } => {
                5u8.put(w);
                seconds.put(w);
            }
            CueKind::ExitCode { code } => {
                6u8.put(w);
                code.put(w);
            }
            CueKind::Port { code } => {
                7u8.put(w);
                code.put(w);
            }
        }
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, CompiledError> {
        Ok(match u8::get(r)? {
            0 => CueKind::Phrase { text: Codec::get(r)? },
            1 => CueKind::History { text: Codec::get(r)? },
            2 => CueKind::Setting { field: Codec::get(r)?, value: Codec::get(r)? },
            3 => CueKind::Platform { text: Codec::get(r)? },
            4 => CueKind::Product { text: Codec::get(r)? },
            5 => CueKind::Timing { seconds: Codec::get(r)? },
            6 => CueKind::ExitCode { code: Codec::get(r)? },
            7 => CueKind::Port { code: Codec::get(r)? },
            _ => return Err(r.corrupt("context cue kind")),
        })
    }
}

/// A tag byte followed by one string.
trait PutPair {
    fn put_pair(self, w: &mut Writer);
}

impl PutPair for (u8, &String) {
    fn put_pair(self, w: &mut Writer) {
        self.0.put(w);
        self.1.put(w);
    }
}

impl Codec for KindData {
    fn put(&self, w: &mut Writer) {
        match self {
            KindData::Component { part_of, talks_to } => {
                0u8.put(w);
                part_of.put(w);
                talks_to.put(w);
            }
            KindData::Loop { part_of, reads, writes, emits } => {
                1u8.put(w);
                part_of.put(w);
                reads.put(w);
                writes.put(w);
                emits.put(w);
            }
            KindData::Field { object, path, written_by } => {
                2u8.put(w);
                object.put(w);
                path.put(w);
                written_by.put(w);
            }
            KindData::Metric { name, component, metric_type, stability, labels, bad_value } => {
                3u8.put(w);
                name.put(w);
                component.put(w);
                metric_type.put(w);
                stability.put(w);
                labels.put(w);
                bad_value.put(w);
            }
            KindData::FailureMode(d) => {
                4u8.put(w);
                d.put(w);
            }
            KindData::Symptom(d) => {
                5u8.put(w);
                d.put(w);
            }
            KindData::Check { command, look_for, probe, rules_out } => {
                6u8.put(w);
                command.put(w);
                look_for.put(w);
                probe.put(w);
                rules_out.put(w);
            }
            KindData::Fix { action, command, risk } => {
                7u8.put(w);
                action.put(w);
                command.put(w);
                risk.put(w);
            }
            KindData::Concept => 8u8.put(w),
            KindData::FeatureGate(g) => {
                9u8.put(w);
                g.put(w);
            }
            KindData::Kep(k) => {
                10u8.put(w);
                k.put(w);
            }
            KindData::Release(x) => {
                11u8.put(w);
                x.put(w);
            }
            KindData::Myth { correction, concerns } => {
                12u8.put(w);
                correction.put(w);
                concerns.put(w);
            }
        }
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, CompiledError> {
        Ok(match u8::get(r)? {
            0 => KindData::Component { part_of: Codec::get(r)?, talks_to: Codec::get(r)? },
            1 => KindData::Loop { part_of: Codec::get(r)?, reads: Codec::get(r)?, writes: Codec::get(r)?, emits: Codec::get(r)? },
            2 => KindData::Field { object: Codec::get(r)?, path: Codec::get(r)?, written_by: Codec::get(r)? },
            3 => KindData::Metric {
                name: Codec::get(r)?,
                component: Codec::get(r)?,
                metric_type: Codec::get(r)?,
                stability: Codec::get(r)?,
                labels: Codec::get(r)?,
                bad_value: Codec::get(r)?,
            },
            4 => KindData::FailureMode(Codec::get(r)?),
            5 => KindData::Symptom(Codec::get(r)?),
            6 => KindData::Check { command: Codec::get(r)?, look_for: Codec::get(r)?, probe: Codec::get(r)?, rules_out: Codec::get(r)? },
            7 => KindData::Fix { action: Codec::get(r)?, command: Codec::get(r)?, risk: Codec::get(r)? },
            8 => KindData::Concept,
            9 => KindData::FeatureGate(Codec::get(r)?),
            10 => KindData::Kep(Codec::get(r)?),
            11 => KindData::Release(Codec::get(r)?),
            12 => KindData::Myth { correction: Codec::get(r)?, concerns: Codec::get(r)? },
            _ => return Err(r.corrupt("kind data tag")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::DiagnoseOptions;
    use crate::knowledge::SourceFile;
    use crate::Engine;

    fn file(path: &str, text: &str) -> SourceFile {
        SourceFile { path: path.into(), text: text.into() }
    }

    const FM: &str = "+++\nid = \"failure-mode/etcd-nospace-alarm\"\ntitle = \"etcd NOSPACE alarm: writes refused\"\narea = \"etcd\"\ncomponents = [\"component/etcd\"]\nloops = [\"loop/etcd-backend\"]\nreferences = [\"etcd-io/etcd:api/v3rpc/rpctypes/error.go\"]\n[[symptom]]\nsignal = \"message\"\ntext = \"etcdserver: mvcc: database space exceeded\"\nsource = \"etcd-io/etcd:api/v3rpc/rpctypes/error.go\"\n[[context]]\ncue = \"phrase\"\ntext = \"quota bytes\"\n[[check]]\ntitle = \"List the alarms\"\ncommand = \"etcdctl alarm list\"\nlook_for = \"alarm:NOSPACE\"\n[[fix]]\naction = \"Compact, defragment, then disarm the alarm\"\nrisk = \"medium\"\n+++\nThe backend database reached its quota.\n";

    fn small() -> Vec<SourceFile> {
        vec![
            file("components/etcd.md", "+++\nid = \"component/etcd\"\ntitle = \"etcd\"\naliases = [\"etcd server\"]\n+++\nThe key-value store.\n"),
            file("loops/etcd-backend.md", "+++\nid = \"loop/etcd-backend\"\ntitle = \"etcd backend\"\npart_of = \"component/etcd\"\n+++\nWrites to the backend database.\n"),
            file("failure-modes/etcd/etcd-nospace-alarm.md", FM),
        ]
    }

    #[test]
    fn builtin_knowledge_round_trips_exactly() {
        let (engine, _) = Engine::from_sources(crate::knowledge::sources_from(kubewhy_knowledge::files())).expect("built-in knowledge loads");
        let bytes = engine.compile().expect("compiles");
        let Loaded { kb, index, prepared } = load(&bytes).expect("loads");
        assert_eq!(kb.entities(), engine.knowledge().entities());
        // The stored matcher tables are those computed from the knowledge.
        let (mut stored, mut computed) = (Writer(Vec::new()), Writer(Vec::new()));
        prepared.put(&mut stored);
        Prepared::new(&kb).put(&mut computed);
        assert!(stored.0 == computed.0, "stored matcher tables differ from computed ones");
        assert!(prepared.alias_automaton.is_some());
        assert_eq!(kb.topics(), engine.knowledge().topics());
        let (a, b) = (kb.upstream(), engine.knowledge().upstream());
        assert_eq!((&a.gates, &a.keps, &a.metrics, &a.releases), (&b.gates, &b.keps, &b.metrics, &b.releases));
        // Compiling what was loaded gives the same bytes: nothing is lost or reordered.
        let again = compile(&kb, &index, &prepared).expect("compiles again");
        let differs = again.iter().zip(&bytes).position(|(a, b)| a != b).or((again.len() != bytes.len()).then(|| again.len().min(bytes.len())));
        assert_eq!(differs, None, "compiled again: {} bytes against {}", again.len(), bytes.len());
    }

    #[test]
    fn loaded_engine_answers_like_the_parsed_one() {
        let (parsed, _) = Engine::from_sources(small()).expect("loads");
        let compiled = Engine::from_compiled(&parsed.compile().expect("compiles")).expect("loads compiled");
        for input in ["etcdserver: mvcc: database space exceeded", "writes refused, we raised quota bytes", "etcd server"] {
            let a = serde_json::to_string(&parsed.diagnose(input, DiagnoseOptions::default()).expect("diagnoses")).expect("json");
            let b = serde_json::to_string(&compiled.diagnose(input, DiagnoseOptions::default()).expect("diagnoses")).expect("json");
            assert_eq!(a, b, "{input}");
        }
        assert_eq!(parsed.search("quota", None, 5), compiled.search("quota", None, 5));
    }

    #[test]
    fn damaged_bytes_give_errors_not_panics() {
        let (engine, _) = Engine::from_sources(small()).expect("loads");
        let bytes = engine.compile().expect("compiles");
        assert!(matches!(load(b"not compiled"), Err(CompiledError::Format)));
        let mut wrong_format = bytes.clone();
        wrong_format[MAGIC.len()] ^= 0xff;
        assert!(matches!(load(&wrong_format), Err(CompiledError::Format)));
        // Every truncation is refused with an error.
        for cut in (0..bytes.len()).step_by(7) {
            assert!(load(&bytes[..cut]).is_err(), "truncated at {cut} loaded");
        }
        // A byte changed anywhere either still decodes or is an error; it never panics.
        for at in (MAGIC.len() + 4..bytes.len()).step_by(13) {
            let mut b = bytes.clone();
            b[at] = b[at].wrapping_add(0x5b);
            let _ = load(&b);
        }
        let e = load(&bytes[..bytes.len() - 1]).err().expect("short input is an error");
        assert!(e.to_string().contains("corrupt at byte"), "{e}");
    }

    #[test]
    fn overlay_is_merged_validated_and_indexed() {
        let (base, _) = Engine::from_sources(small()).expect("loads");
        let bytes = base.compile().expect("compiles");
        let overlay = vec![file(
            "mine/failure-modes/my-team-quota.md",
            "+++\nid = \"failure-mode/my-team-quota\"\ntitle = \"Team namespace quota exhausted by CI runners\"\narea = \"apiserver\"\ncomponents = [\"component/etcd\"]\nloops = [\"loop/etcd-backend\"]\nreferences = [\"local:ci/runners.go\"]\n[[symptom]]\nsignal = \"message\"\ntext = \"runner quota for team {team} is exhausted\"\nsource = \"local:ci/runners.go\"\n[[check]]\ntitle = \"Read the team quota\"\nlook_for = \"used equals hard\"\n[[fix]]\naction = \"Cap the CI runners\"\nrisk = \"low\"\n+++\nOur CI runners take the whole quota.\n",
        )];
        let (engine, warnings) = Engine::from_compiled_with_overlay(&bytes, overlay).expect("overlay loads");
        assert!(warnings.iter().all(|d| d.severity == crate::knowledge::Severity::Warning));
        assert!(engine.knowledge().get("failure-mode/my-team-quota").is_some());
        let d = engine.diagnose("runner quota for team blue is exhausted", DiagnoseOptions::default()).expect("diagnoses");
        assert_eq!(d.candidates[0].id, "failure-mode/my-team-quota");
        // The overlay's words are in the index, and the built-in entities still are.
        assert_eq!(engine.search("runners", None, 1)[0].id, "failure-mode/my-team-quota");
        assert!(engine.search("key-value store", None, 3).iter().any(|h| h.id == "component/etcd"));

        // A duplicate id names both places; a broken overlay file names its file and line.
        let dup = vec![file("mine/components/etcd.md", "+++\nid = \"component/etcd\"\ntitle = \"etcd again\"\n+++\n")];
        let Err(crate::EngineError::Invalid(diags)) = Engine::from_compiled_with_overlay(&bytes, dup) else { panic!("duplicate accepted") };
        let text: Vec<String> = diags.iter().map(|d| d.to_string()).collect();
        assert!(text.iter().any(|t| t.contains("mine/components/etcd.md:1") && t.contains("components/etcd.md:1")), "{text:?}");
        let bad = vec![file("mine/failure-modes/bad.md", "+++\nid = \"failure-mode/bad\"\ntitle = \"Bad\"\narea = \"nowhere\"\n+++\n")];
        let Err(crate::EngineError::Invalid(diags)) = Engine::from_compiled_with_overlay(&bytes, bad) else { panic!("bad area accepted") };
        assert!(diags.iter().any(|d| d.location.file == "mine/failure-modes/bad.md" && d.location.line > 1), "{diags:?}");
    }
}
