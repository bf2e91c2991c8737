//! The knowledge compiled ahead of time (issue 13): the validated entities, the upstream
//! facts, the topic map, the full-text index and the diagnosis's matcher tables, in one
//! compact byte string that [`compile`] writes at build time and [`load`] reads back at
//! start-up, so a one-shot `kubewhy why` neither parses and validates 1,600 Markdown and TOML
//! files nor rebuilds the index and the matcher on every run.
//!
//! The format is private to one build of the engine: the bytes are produced by the same
//! source that reads them (the `kubewhy-compiled` crate's build script), so it carries no
//! compatibility promise, only a magic string and a [`FORMAT`] number that [`load`] checks,
//! and a checksum of everything after them.
//!
//! Layout: the magic `kubewhy-compiled\n`, the format number, the checksum (`u64`, see
//! `checksum`), then the sections in order:
//! - the matcher (every table of [`Matcher`], automata included; its per-failure-mode rows,
//!   message templates, symptom tables and cause lists are [`Table`]s, decoded one by one
//!   when a diagnosis first reaches them);
//! - the entity table: the count `n`, each entity's kind (one byte), the `n + 1` offsets
//!   (from the start of the bytes) where each entity's encoding starts and the last ends,
//!   and a hash table of their places by id (open addressing, see `tables::hash_slots`), for look-ups
//!   by id without decoding;
//! - the entities' encodings, one after the other (each starts with its id);
//! - the upstream facts and the topic map, each a length then its encoding;
//! - the index files (path, bytes).
//!
//! Integers are little-endian (`u32`/`u64`/ `i64`, `f64` as its bits), strings and byte
//! strings a `u32` length then the bytes, a sequence its `u32` count then its items, an option
//! a `0`/`1` byte then the value, a hash map its entries sorted by key.
//!
//! [`load`] decodes the matcher's look-up tables and opens the index; entities, upstream facts,
//! topics and the matcher's [`Table`]s are decoded when first asked for ([`Lazy`]), so a
//! diagnosis decodes only the failure modes its input reaches and the candidates it shows, and
//! a start-up costs about the same whatever the size of the graph. [`load`] checks the
//! checksum of bytes read at run time (not of the embedded bytes: reading every page would
//! make a start-up grow with the graph again) and what it reads; [`verify`] (run by the build script on what it embeds) also
//! decodes and checks everything that is decoded later. Front-matter key lines (used to point lint diagnostics at a key) are not kept: the
//! built-in knowledge is validated when it is compiled, and a diagnostic found later about a
//! built-in entity points at the entity's first line.

use crate::diagnose::{CandidateKeys, FmRow, Matcher, Prepared, SymptomTable};
use crate::tables::{KeyPostings, Postings, StrIndex};
use crate::knowledge::{KnowledgeBase, Topic, Upstream};
use crate::model::{
    ContextCue, CueKind, Entity, FailureModeData, Kind, KindData, Level, Location, SignalKind, SymptomData, Version, VersionRange,
};
use crate::patterns::{PatternSet, PatternSetParts};
use crate::search::SearchIndex;
use crate::signals::{Template, TemplateIndex, Vocabulary};
use crate::upstream::{FeatureGate, GateStep, Kep, Release, UpstreamMetric};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, OnceLock};

/// The first bytes of every compiled knowledge file.
pub const MAGIC: &[u8] = b"kubewhy-compiled\n";

/// Version of the layout; [`load`] refuses any other.
pub const FORMAT: u32 = 6;

/// Where the sections start: after the magic, the format number and the checksum.
const HEADER: usize = MAGIC.len() + 4 + 8;

/// Errors of [`compile`] and [`load`].
#[derive(Debug, thiserror::Error)]
pub enum CompiledError {
    /// The bytes do not start with [`MAGIC`] and [`FORMAT`].
    #[error("not compiled kubewhy knowledge of format {FORMAT} (wrong magic or format number)")]
    Format,
    /// The bytes end early, hold an impossible value or do not match their checksum.
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

/// Compiled knowledge bytes that a loaded knowledge base keeps to decode entities on demand:
/// the bytes embedded in the binary, or bytes read from a file.
#[derive(Clone)]
pub enum Bytes {
    /// Bytes that live as long as the program (embedded with `include_bytes!`).
    Static(&'static [u8]),
    /// Bytes owned at run time, shared by the knowledge base and the index.
    Shared(Arc<Vec<u8>>),
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Static(b) => b,
            Bytes::Shared(b) => b,
        }
    }
}

impl std::fmt::Debug for Bytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} compiled bytes", self.len())
    }
}

impl From<&'static [u8]> for Bytes {
    fn from(b: &'static [u8]) -> Bytes {
        Bytes::Static(b)
    }
}

impl From<Vec<u8>> for Bytes {
    fn from(b: Vec<u8>) -> Bytes {
        Bytes::Shared(Arc::new(b))
    }
}

impl From<std::borrow::Cow<'static, [u8]>> for Bytes {
    fn from(b: std::borrow::Cow<'static, [u8]>) -> Bytes {
        match b {
            std::borrow::Cow::Borrowed(b) => Bytes::Static(b),
            std::borrow::Cow::Owned(b) => b.into(),
        }
    }
}

/// Serialises `kb`, `index` (built over `kb`) and `matcher` (built over `kb`) into the
/// compiled form.
///
/// # Errors
/// [`CompiledError::Search`] when the index files cannot be read.
pub fn compile(kb: &KnowledgeBase, index: &SearchIndex, matcher: &Matcher) -> Result<Vec<u8>, CompiledError> {
    let mut w = Writer(Vec::with_capacity(16 << 20));
    w.0.extend_from_slice(MAGIC);
    FORMAT.put(&mut w);
    0u64.put(&mut w);
    matcher.put(&mut w);
    let (entities, upstream, topics) = kb.parts();
    (entities.len() as u32).put(&mut w);
    for e in entities {
        e.kind.put(&mut w);
    }
    // The offsets are known once the entities are written: reserve them, fill them in after.
    let starts_at = w.0.len();
    w.0.resize(starts_at + 4 * (entities.len() + 1), 0);
    put_u32s(&mut w, &crate::tables::hash_slots(entities.len(), |i| entities[i].id.as_bytes()));
    let mut starts = Vec::with_capacity(entities.len() + 1);
    for e in entities {
        starts.push(w.0.len() as u32);
        e.put(&mut w);
    }
    starts.push(w.0.len() as u32);
    for (k, s) in starts.iter().enumerate() {
        w.0[starts_at + 4 * k..starts_at + 4 * k + 4].copy_from_slice(&s.to_le_bytes());
    }
    let mut section = Writer(Vec::new());
    upstream.put(&mut section);
    w.bytes(&section.0);
    section.0.clear();
    topics.to_vec().put(&mut section);
    w.bytes(&section.0);
    let files = index.files()?;
    (files.len() as u32).put(&mut w);
    for (path, bytes) in &files {
        path.put(&mut w);
        w.bytes(bytes);
    }
    let sum = checksum(&w.0[HEADER..]);
    w.0[HEADER - 8..HEADER].copy_from_slice(&sum.to_le_bytes());
    Ok(w.0)
}

/// An empty slot of the id table.
const NO_ENTITY: u32 = crate::tables::EMPTY;

/// A 64-bit checksum of `b`: per lane of eight, the sum of the 32-bit words and the sum of
/// those running sums (Fletcher's construction, modulo 2^32), mixed into one value with the
/// length and the tail. Any change of one word changes it, as does moving words between places;
/// the lanes are independent additions that the compiler turns into vector instructions, so
/// [`load`] checks a whole file at memory speed. Not a defence against a crafted file.
fn checksum(b: &[u8]) -> u64 {
    const LANES: usize = 8;
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let (mut sum, mut sum2) = ([0u32; LANES], [0u32; LANES]);
    let mut blocks = b.chunks_exact(4 * LANES);
    for block in &mut blocks {
        let mut words = [0u32; LANES];
        for (w, b) in words.iter_mut().zip(block.chunks_exact(4)) {
            *w = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        }
        for l in 0..LANES {
            sum[l] = sum[l].wrapping_add(words[l]);
            sum2[l] = sum2[l].wrapping_add(sum[l]);
        }
    }
    let mut h = (b.len() as u64).wrapping_mul(K);
    for l in 0..LANES {
        let lane = (u64::from(sum2[l]) << 32) | u64::from(sum[l]);
        h = (h ^ lane).wrapping_mul(K).rotate_left(27);
    }
    for &x in blocks.remainder() {
        h = (h ^ u64::from(x)).wrapping_mul(K).rotate_left(23);
    }
    h ^ (h >> 32)
}

/// Compiled knowledge read back by [`load`].
#[derive(Debug)]
pub struct Loaded {
    /// The knowledge base (entities, upstream facts and topics decoded on first use).
    pub kb: KnowledgeBase,
    /// Its full-text index.
    pub index: SearchIndex,
    /// Its matcher.
    pub matcher: Matcher,
}

/// Checks the header and the checksum; returns a reader positioned at the first section.
fn open(bytes: &Bytes) -> Result<Reader<'_>, CompiledError> {
    let rest = bytes.strip_prefix(MAGIC).ok_or(CompiledError::Format)?;
    let mut r = Reader { buf: rest, pos: 0, base: MAGIC.len(), src: Some(bytes) };
    if u32::get(&mut r)? != FORMAT {
        return Err(CompiledError::Format);
    }
    let sum = u64::get(&mut r)?;
    // Embedded bytes were verified whole by the build script and are part of the program: only
    // bytes read at run time are checked (reading every page would cost what the lazy decoding
    // saves, and grow with the knowledge).
    if matches!(bytes, Bytes::Shared(_)) && checksum(&bytes[HEADER..]) != sum {
        return Err(CompiledError::Corrupt { offset: HEADER - 8, what: "bytes that match their checksum" });
    }
    Ok(r)
}

/// Reads the compiled form back: decodes the matcher, opens the index and makes a knowledge
/// base that decodes entities when they are first asked for.
///
/// The process-wide regular expressions of a diagnosis ([`crate::diagnose::warm_up`]) compile
/// on a second thread meanwhile: a one-shot `why` would otherwise compile them on its
/// critical path.
///
/// # Errors
/// [`CompiledError::Format`] for bytes of another format, [`CompiledError::Corrupt`] with the
/// offset when they do not match their checksum ([`Bytes::Shared`] only: embedded bytes were
/// verified whole by the build script), end early, hold an impossible value or
/// tables that do not fit the entities, [`CompiledError::Search`] when the index does not open.
pub fn load(bytes: impl Into<Bytes>) -> Result<Loaded, CompiledError> {
    let bytes: Bytes = bytes.into();
    std::thread::scope(|s| {
        let warm = s.spawn(crate::diagnose::warm_up);
        let loaded = load_parts(&bytes);
        // A panic while compiling fixed expressions would be a bug; diagnoses compile them again.
        let _ = warm.join();
        let (lazy, index, matcher, _) = loaded?;
        Ok(Loaded { kb: KnowledgeBase::from_lazy(lazy), index, matcher })
    })
}

/// Decodes the matcher and opens the rest, with the checks that cost no more than reading what
/// a start-up reads anyway (table sizes that fit each other and the entity count). What would
/// mean reading every entity or every matcher row is checked by [`verify`], which the build
/// script runs on the bytes it embeds; a file is covered by its checksum.
fn load_parts(bytes: &Bytes) -> Result<(Lazy, SearchIndex, Matcher, usize), CompiledError> {
    let mut r = open(bytes)?;
    let matcher_at = r.base + r.pos;
    let matcher = Matcher::get(&mut r)?;
    let (lazy, index) = load_rest(bytes, &mut r, false)?;
    let fms = lazy.kinds.iter().filter(|&&k| k == Kind::FailureMode).count();
    let symptoms = lazy.kinds.iter().filter(|&&k| k == Kind::Symptom).count();
    if fms != matcher.fm_ids.len() || !matcher.fits(symptoms) {
        return Err(CompiledError::Corrupt { offset: matcher_at, what: "matcher tables that fit the entities" });
    }
    Ok((lazy, index, matcher, matcher_at))
}

/// Reads the compiled form back into a knowledge base and its index only, every entity
/// decoded, for a base that an overlay will change (its matcher would not fit the merged
/// failure modes).
///
/// # Errors
/// As [`load`].
pub fn load_base(bytes: impl Into<Bytes>) -> Result<(KnowledgeBase, SearchIndex), CompiledError> {
    let bytes: Bytes = bytes.into();
    let mut r = open(&bytes)?;
    Matcher::get(&mut r)?;
    let (lazy, index) = load_rest(&bytes, &mut r, true)?;
    let (entities, upstream, topics) = lazy.decode_all()?;
    let kb = KnowledgeBase::from_parts(entities, upstream, topics).map_err(|_| CompiledError::Corrupt { offset: 0, what: "distinct entity ids" })?;
    Ok((kb, index))
}

/// Every entity, upstream fact and topic of compiled bytes decoded, or the first error: what a
/// lazily loaded knowledge base would decode over its life, checked at once (the build script
/// checks what it embeds this way; [`load`] relies on the checksum).
///
/// # Errors
/// As [`load`], and [`CompiledError::Corrupt`] for an entity that does not decode.
pub fn verify(bytes: impl Into<Bytes>) -> Result<(), CompiledError> {
    let (lazy, _, matcher, matcher_at) = load_parts(&bytes.into())?;
    lazy.check_ids()?;
    let fms = (0..lazy.len()).filter(|&i| lazy.kind(i) == Kind::FailureMode);
    let mismatch = CompiledError::Corrupt { offset: matcher_at, what: "matcher tables that fit the entities" };
    if !fms.zip(matcher.fm_ids.iter()).all(|(i, id)| lazy.id(i) == id) {
        return Err(mismatch);
    }
    matcher.text.rows.try_all()?;
    matcher.text.templates.try_all()?;
    if !matcher.text.rows_fit() {
        return Err(mismatch);
    }
    lazy.decode_all().map(|_| ())
}

/// The sections after the matcher: the entity table (checked), the lazy sections, the index
/// (`writable`: copied into a RAM directory that can take a new segment).
fn load_rest(bytes: &Bytes, r: &mut Reader<'_>, writable: bool) -> Result<(Lazy, SearchIndex), CompiledError> {
    let n = r.len("entity count")?;
    let kinds = (0..n).map(|_| Kind::get(r)).collect::<Result<Vec<_>, _>>()?;
    let starts = r.take(4 * (n + 1), "entity offsets")?.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect::<Vec<u32>>();
    let slots_at = r.base + r.pos;
    let slots = get_u32s(r)?;
    let entities_at = r.base + r.pos;
    if starts[0] as usize != entities_at || starts.windows(2).any(|w| w[0] >= w[1]) || !slots.len().is_power_of_two() || slots.len() <= n {
        return Err(r.corrupt("entity offsets in order"));
    }
    r.take(starts[n] as usize - entities_at, "entities")?;
    let upstream = r.take_bytes("upstream facts")?;
    let upstream_at = upstream.as_ptr() as usize - bytes.as_ptr() as usize;
    let topics = r.take_bytes("topics")?;
    let topics_at = topics.as_ptr() as usize - bytes.as_ptr() as usize;
    let lazy = Lazy {
        bytes: bytes.clone(),
        kinds,
        starts,
        slots,
        cells: (0..n).map(|_| OnceLock::new()).collect(),
        all: OnceLock::new(),
        upstream_at: (upstream_at, upstream_at + upstream.len()),
        topics_at: (topics_at, topics_at + topics.len()),
        upstream: OnceLock::new(),
        topics: OnceLock::new(),
    };
    if lazy.slots.iter().any(|&i| i != NO_ENTITY && i as usize >= n) {
        return Err(CompiledError::Corrupt { offset: slots_at, what: "a table of entity places" });
    }
    let count = r.len("index file count")?;
    let mut files = Vec::with_capacity(count);
    for _ in 0..count {
        let path = String::get(r)?;
        let data = r.take_bytes("index file")?;
        let at = data.as_ptr() as usize - bytes.as_ptr() as usize;
        files.push((path, at..at + data.len()));
    }
    if r.pos != r.buf.len() {
        return Err(r.corrupt("the end of the data"));
    }
    // tantivy trusts its files and can panic on damaged ones: a damaged file is an error here.
    // A writable index (an overlay adds to it) is copied into RAM; else it is read in place.
    let open = || match writable {
        true => SearchIndex::from_files(&files.iter().map(|(p, at)| (p.clone(), &bytes[at.clone()])).collect::<Vec<_>>()),
        false => SearchIndex::from_shared(bytes.clone(), &files),
    };
    let index = std::panic::catch_unwind(open)
        .map_err(|_| CompiledError::Corrupt { offset: 0, what: "index files tantivy can open" })??;
    Ok((lazy, index))
}

/// The entities, upstream facts and topics of compiled knowledge, decoded on first use (see
/// [`KnowledgeBase`]'s accessors): a one-shot diagnosis decodes a few dozen entities of
/// thousands. Entities asked for one by one are decoded one by one; asking for all decodes
/// all once.
///
/// The bytes were checked against their checksum when loaded, and were checked to decode when
/// compiled, so decoding cannot fail short of a bug: then it panics with the offset.
pub struct Lazy {
    bytes: Bytes,
    /// Per entity: its kind.
    kinds: Vec<Kind>,
    /// Per entity plus one: where its encoding starts in `bytes` (the last: where it ends).
    starts: Vec<u32>,
    /// The hash table of entity places by id (see `tables::hash_slots`).
    slots: Vec<u32>,
    /// Entities decoded one by one.
    cells: Vec<OnceLock<Box<Entity>>>,
    /// Every entity, decoded on the first call of [`Lazy::all`].
    all: OnceLock<Vec<Entity>>,
    upstream_at: (usize, usize),
    topics_at: (usize, usize),
    upstream: OnceLock<Upstream>,
    topics: OnceLock<Vec<(Topic, Location)>>,
}

impl std::fmt::Debug for Lazy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let decoded = self.cells.iter().filter(|c| c.get().is_some()).count();
        write!(f, "Lazy {{ {} entities, {decoded} decoded one by one, all decoded: {} }}", self.len(), self.all.get().is_some())
    }
}

impl Lazy {
    /// Number of entities.
    pub(crate) fn len(&self) -> usize {
        self.kinds.len()
    }

    /// How many entities were decoded one by one, of how many, and whether all were decoded.
    pub(crate) fn decoded(&self) -> (usize, usize, bool) {
        (self.cells.iter().filter(|c| c.get().is_some()).count(), self.len(), self.all.get().is_some())
    }

    /// The kind of entity `i` (in file order).
    pub(crate) fn kind(&self, i: usize) -> Kind {
        self.kinds[i]
    }

    /// The id of entity `i`, read in place.
    pub(crate) fn id(&self, i: usize) -> &str {
        self.read_id(i).unwrap_or("")
    }

    fn read_id(&self, i: usize) -> Option<&str> {
        std::str::from_utf8(self.id_bytes(i)?).ok()
    }

    /// The bytes of the id of entity `i` (UTF-8, checked when loaded).
    fn id_bytes(&self, i: usize) -> Option<&[u8]> {
        let at = *self.starts.get(i)? as usize;
        let len = u32::from_le_bytes(self.bytes.get(at..at + 4)?.try_into().ok()?) as usize;
        self.bytes.get(at + 4..at + 4 + len)
    }

    /// The place of the entity with this id, if any: one hash and, almost always, one
    /// comparison.
    pub(crate) fn position(&self, id: &str) -> Option<usize> {
        crate::tables::probe(&self.slots, id.as_bytes(), |i| self.id_bytes(i) == Some(id.as_bytes()))
    }

    /// Entity `i`, decoded now if it was not.
    ///
    /// # Panics
    /// If its bytes do not decode (see the type's documentation).
    pub(crate) fn entity(&self, i: usize) -> &Entity {
        if let Some(all) = self.all.get() {
            return &all[i];
        }
        self.cells[i].get_or_init(|| Box::new(self.decode(i).unwrap_or_else(|e| panic!("{e}"))))
    }

    /// Every entity, in file order, decoded once.
    ///
    /// # Panics
    /// As [`Lazy::entity`].
    pub(crate) fn all(&self) -> &[Entity] {
        self.all.get_or_init(|| (0..self.len()).map(|i| self.decode(i).unwrap_or_else(|e| panic!("{e}"))).collect())
    }

    /// The upstream facts, decoded once.
    ///
    /// # Panics
    /// As [`Lazy::entity`].
    pub(crate) fn upstream(&self) -> &Upstream {
        self.upstream.get_or_init(|| self.section(self.upstream_at).unwrap_or_else(|e| panic!("{e}")))
    }

    /// The topics, decoded once.
    ///
    /// # Panics
    /// As [`Lazy::entity`].
    pub(crate) fn topics(&self) -> &[(Topic, Location)] {
        self.topics.get_or_init(|| self.section(self.topics_at).unwrap_or_else(|e| panic!("{e}")))
    }

    fn decode(&self, i: usize) -> Result<Entity, CompiledError> {
        let (a, b) = (self.starts[i] as usize, self.starts[i + 1] as usize);
        let mut r = Reader { buf: &self.bytes[a..b], pos: 0, base: a, src: None };
        let e = Entity::get(&mut r)?;
        if r.pos != r.buf.len() || e.kind != self.kinds[i] {
            return Err(r.corrupt("the end of an entity of its kind"));
        }
        Ok(e)
    }

    fn section<T: Codec>(&self, (a, b): (usize, usize)) -> Result<T, CompiledError> {
        let mut r = Reader { buf: &self.bytes[a..b], pos: 0, base: a, src: None };
        let v = T::get(&mut r)?;
        if r.pos != r.buf.len() {
            return Err(r.corrupt("the end of a section"));
        }
        Ok(v)
    }

    /// Whether every id is readable (an entity's encoding starts with its id) and found at its
    /// own place by a look-up (so the ids are distinct and the id table holds each entity once).
    /// Reads every entity's id: for [`verify`], not for start-up.
    fn check_ids(&self) -> Result<(), CompiledError> {
        let table = CompiledError::Corrupt { offset: 0, what: "a table of distinct entity ids" };
        if self.slots.iter().filter(|&&i| i != NO_ENTITY).count() != self.len() {
            return Err(table);
        }
        for i in 0..self.len() {
            if self.read_id(i).is_none() {
                return Err(CompiledError::Corrupt { offset: self.starts[i] as usize, what: "entity id" });
            }
            if self.position(self.id(i)) != Some(i) {
                return Err(table);
            }
        }
        Ok(())
    }

    /// Every entity, the upstream facts and the topics, decoded now.
    fn decode_all(&self) -> Result<(Vec<Entity>, Upstream, Vec<(Topic, Location)>), CompiledError> {
        let entities = (0..self.len()).map(|i| self.decode(i)).collect::<Result<Vec<_>, _>>()?;
        Ok((entities, self.section(self.upstream_at)?, self.section(self.topics_at)?))
    }
}

/// A table of values by number whose values compiled knowledge decodes one by one, when first
/// asked for (the matcher's per-failure-mode rows and its message templates: a diagnosis reads
/// the few its input reaches, so a one-shot start-up does not decode thousands). Built in
/// process, it holds its values decoded.
///
/// Decoding cannot fail short of a bug, for the same reasons as [`Lazy`]'s: then it panics with
/// the offset.
pub struct Table<T>(TableRepr<T>);

enum TableRepr<T> {
    Owned(Vec<T>),
    Lazy {
        bytes: Bytes,
        /// `n + 1` offsets in `bytes`: value `i` is encoded in `starts[i]..starts[i + 1]`.
        starts: Vec<u32>,
        cells: Vec<OnceLock<T>>,
        decode: fn(&mut Reader<'_>) -> Result<T, CompiledError>,
    },
}

impl<T> From<Vec<T>> for Table<T> {
    fn from(v: Vec<T>) -> Table<T> {
        Table(TableRepr::Owned(v))
    }
}

impl<T> Default for Table<T> {
    fn default() -> Table<T> {
        Table(TableRepr::Owned(Vec::new()))
    }
}

impl<T> std::fmt::Debug for Table<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (decoded, n) = self.decoded();
        write!(f, "Table {{ {n} values, {decoded} decoded }}")
    }
}

impl<T> Table<T> {
    /// Number of values.
    pub fn len(&self) -> usize {
        match &self.0 {
            TableRepr::Owned(v) => v.len(),
            TableRepr::Lazy { cells, .. } => cells.len(),
        }
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many values are decoded, of how many.
    pub fn decoded(&self) -> (usize, usize) {
        match &self.0 {
            TableRepr::Owned(v) => (v.len(), v.len()),
            TableRepr::Lazy { cells, .. } => (cells.iter().filter(|c| c.get().is_some()).count(), cells.len()),
        }
    }

    /// Value `i`, decoded now if it was not; `None` past the end.
    ///
    /// # Panics
    /// If its bytes do not decode (see the type's documentation).
    pub fn get(&self, i: usize) -> Option<&T> {
        self.try_get(i).unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`Table::get`] with the decoding error returned, not raised.
    fn try_get(&self, i: usize) -> Result<Option<&T>, CompiledError> {
        match &self.0 {
            TableRepr::Owned(v) => Ok(v.get(i)),
            TableRepr::Lazy { bytes, starts, cells, decode } => {
                let Some(cell) = cells.get(i) else { return Ok(None) };
                if let Some(v) = cell.get() {
                    return Ok(Some(v));
                }
                let (a, b) = (starts[i] as usize, starts[i + 1] as usize);
                let mut r = Reader { buf: &bytes[a..b], pos: 0, base: a, src: None };
                let v = decode(&mut r)?;
                if r.pos != r.buf.len() {
                    return Err(r.corrupt("the end of a table value"));
                }
                Ok(Some(cell.get_or_init(|| v)))
            }
        }
    }

    /// Decodes every value now, or returns the first error (what [`verify`] checks).
    fn try_all(&self) -> Result<(), CompiledError> {
        (0..self.len()).try_for_each(|i| self.try_get(i).map(|_| ()))
    }

    /// Every value in order (decoding those not decoded yet).
    ///
    /// # Panics
    /// As [`Table::get`].
    pub fn iter(&self) -> impl Iterator<Item = &T> + Clone + '_ {
        (0..self.len()).filter_map(move |i| self.get(i))
    }
}

impl<T: Codec> Codec for Table<T> {
    /// The count `n`, then `n + 1` offsets from the start of the first value's encoding, then
    /// the encodings.
    fn put(&self, w: &mut Writer) {
        let mut values = Writer(Vec::new());
        let mut starts = vec![0u32];
        for v in self.iter() {
            v.put(&mut values);
            starts.push(values.0.len() as u32);
        }
        put_u32s(w, &starts);
        w.0.extend_from_slice(&values.0);
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, CompiledError> {
        let at = r.base + r.pos;
        let starts = get_u32s(r)?;
        if starts.first() != Some(&0) || starts.windows(2).any(|w| w[0] > w[1]) {
            return Err(CompiledError::Corrupt { offset: at, what: "table offsets in order" });
        }
        let len = *starts.last().unwrap_or(&0) as usize;
        let from = r.base + r.pos;
        let body = r.take(len, "table values")?;
        match r.src {
            Some(bytes) => {
                let starts: Vec<u32> = starts.iter().map(|&s| (from + s as usize) as u32).collect();
                let cells = (1..starts.len()).map(|_| OnceLock::new()).collect();
                Ok(Table(TableRepr::Lazy { bytes: bytes.clone(), starts, cells, decode: T::get }))
            }
            None => {
                let mut values = Vec::with_capacity(starts.len() - 1);
                for w in starts.windows(2) {
                    let mut v = Reader { buf: &body[w[0] as usize..w[1] as usize], pos: 0, base: from + w[0] as usize, src: None };
                    values.push(T::get(&mut v)?);
                    if v.pos != v.buf.len() {
                        return Err(v.corrupt("the end of a table value"));
                    }
                }
                Ok(Table(TableRepr::Owned(values)))
            }
        }
    }
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
    /// The whole input, when the reader may keep it for decoding later ([`Table`]): `buf` is
    /// then `src[base..]`.
    src: Option<&'a Bytes>,
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

struct_codec!(Prepared { alias_patterns, alias_pattern_df, alias_vocab, templates, alias_automaton, rows });
struct_codec!(FmRow { alias_ids, alias_tokens, context, cue_words, applies, ruled_out, ruled_out_words });
struct_codec!(CandidateKeys { by_pattern, by_token, by_stem, by_field, by_platform, always });

impl Codec for Postings {
    fn put(&self, w: &mut Writer) {
        put_u32s(w, &self.starts);
        put_u32s(w, &self.values);
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, CompiledError> {
        Ok(Postings { starts: get_u32s(r)?, values: get_u32s(r)? })
    }
}

impl Codec for KeyPostings {
    fn put(&self, w: &mut Writer) {
        self.keys.put(w);
        self.lists.put(w);
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, CompiledError> {
        Ok(KeyPostings { keys: <StrIndex as Codec>::get(r)?, lists: <Postings as Codec>::get(r)? })
    }
}

struct_codec!(Matcher {
    text,
    template_index,
    vocab,
    symptoms,
    symptom_at,
    symptoms_by_reason,
    symptoms_by_code,
    metric_symptoms,
    fm_ids,
    keys,
    causes,
    hub_causes,
    hub_checks,
});

impl Codec for StrIndex {
    fn put(&self, w: &mut Writer) {
        self.text.put(w);
        put_u32s(w, &self.starts);
        put_u32s(w, &self.slots);
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, CompiledError> {
        Ok(StrIndex { text: String::get(r)?, starts: get_u32s(r)?, slots: get_u32s(r)? })
    }
}

struct_codec!(SymptomTable { id, fms, template_df, literal_len, reason_df, code_df });
struct_codec!(TemplateIndex { automaton, owners, always, len });

impl Codec for Vocabulary {
    fn put(&self, w: &mut Writer) {
        self.event_reasons.put(w);
        self.status_reasons.put(w);
        self.metrics.put(w);
        self.metrics_automaton().put(w);
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, CompiledError> {
        let v = Vocabulary { event_reasons: Codec::get(r)?, status_reasons: Codec::get(r)?, metrics: Codec::get(r)?, ..Vocabulary::default() };
        let automaton = PatternSet::get(r)?;
        if automaton.len() != v.metrics.len() {
            return Err(r.corrupt("a metric automaton of the metric names"));
        }
        let _ = v.metrics_automaton.set(automaton);
        Ok(v)
    }
}

impl Codec for PatternSet {
    fn put(&self, w: &mut Writer) {
        let PatternSetParts { patterns, root, edge_start, edge_bytes, edge_next, fail, out_start, out_patterns, dict } = self.parts();
        patterns.put(w);
        for t in [&root, &edge_start, &edge_next, &fail, &out_start, &out_patterns, &dict] {
            put_u32s(w, t);
        }
        w.bytes(&edge_bytes);
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, CompiledError> {
        let at = r.base + r.pos;
        let parts = PatternSetParts {
            patterns: u32::get(r)?,
            root: get_u32s(r)?,
            edge_start: get_u32s(r)?,
            edge_next: get_u32s(r)?,
            fail: get_u32s(r)?,
            out_start: get_u32s(r)?,
            out_patterns: get_u32s(r)?,
            dict: get_u32s(r)?,
            edge_bytes: r.take_bytes("automaton edge labels")?.to_vec(),
        };
        PatternSet::from_parts(parts).map_err(|what| CompiledError::Corrupt { offset: at, what })
    }
}

/// A table of `u32`s as one byte string (decoded in bulk).
fn put_u32s(w: &mut Writer, v: &[u32]) {
    (v.len() as u32).put(w);
    for x in v {
        w.0.extend_from_slice(&x.to_le_bytes());
    }
}

fn get_u32s(r: &mut Reader<'_>) -> Result<Vec<u32>, CompiledError> {
    let n = r.len("u32 table length")?;
    let b = r.take(n.checked_mul(4).ok_or_else(|| r.corrupt("u32 table length"))?, "u32 table")?;
    Ok(b.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
}

impl<T: Codec + Ord> Codec for BTreeSet<T> {
    fn put(&self, w: &mut Writer) {
        (self.len() as u32).put(w);
        for v in self {
            v.put(w);
        }
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, CompiledError> {
        let n = r.len("set length")?;
        (0..n).map(|_| T::get(r)).collect()
    }
}

impl<K: Codec + Eq + std::hash::Hash, V: Codec, S: std::hash::BuildHasher + Default> Codec for HashMap<K, V, S> {
    fn put(&self, w: &mut Writer) {
        // Sorted by the keys' encodings, so that the same map gives the same bytes.
        let mut entries: Vec<(Vec<u8>, &V)> = self
            .iter()
            .map(|(k, v)| {
                let mut key = Writer(Vec::new());
                k.put(&mut key);
                (key.0, v)
            })
            .collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        (entries.len() as u32).put(w);
        for (k, v) in entries {
            w.0.extend_from_slice(&k);
            v.put(w);
        }
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, CompiledError> {
        let n = r.len("map length")?;
        let mut m = HashMap::with_capacity_and_hasher(n, S::default());
        for _ in 0..n {
            let k = K::get(r)?;
            m.insert(k, V::get(r)?);
        }
        Ok(m)
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
        verify(bytes.clone()).expect("every entity decodes");
        let Loaded { kb, index, matcher } = load(bytes.clone()).expect("loads");
        // Looked up one by one before all are decoded, then all at once.
        let some = ["failure-mode/etcd-nospace-alarm", "component/kubelet", "symptom/failed-scheduling"];
        for id in some {
            assert_eq!(kb.get(id), engine.knowledge().get(id), "{id}");
        }
        assert_eq!(kb.get("component/no-such-thing"), None);
        assert_eq!(kb.len(), engine.knowledge().len());
        assert_eq!(kb.entities(), engine.knowledge().entities());
        for id in some {
            assert_eq!(kb.get(id), engine.knowledge().get(id), "{id} after decoding all");
        }
        // The stored matcher is the one computed from the knowledge.
        let (mut stored, mut computed) = (Writer(Vec::new()), Writer(Vec::new()));
        matcher.put(&mut stored);
        Matcher::new(&kb).put(&mut computed);
        assert!(stored.0 == computed.0, "stored matcher tables differ from computed ones");
        assert_eq!(kb.topics(), engine.knowledge().topics());
        let (a, b) = (kb.upstream(), engine.knowledge().upstream());
        assert_eq!((&a.gates, &a.keps, &a.metrics, &a.releases), (&b.gates, &b.keps, &b.metrics, &b.releases));
        // Compiling what was loaded gives the same bytes: nothing is lost or reordered.
        let again = compile(&kb, &index, &matcher).expect("compiles again");
        let differs = again.iter().zip(&bytes).position(|(a, b)| a != b).or((again.len() != bytes.len()).then(|| again.len().min(bytes.len())));
        assert_eq!(differs, None, "compiled again: {} bytes against {}", again.len(), bytes.len());
    }

    #[test]
    fn a_diagnosis_decodes_only_the_entities_it_shows() {
        let (engine, _) = Engine::from_sources(crate::knowledge::sources_from(kubewhy_knowledge::files())).expect("built-in knowledge loads");
        let compiled = Engine::from_compiled(engine.compile().expect("compiles")).expect("loads");
        let d = compiled.diagnose("0/3 nodes are available: 3 Insufficient cpu.", DiagnoseOptions::default()).expect("diagnoses");
        assert!(!d.candidates.is_empty());
        let (decoded, total, all) = compiled.knowledge().decoded().expect("compiled knowledge decodes lazily");
        assert!(!all && decoded > 0 && decoded * 10 < total, "{decoded} of {total} entities decoded (all: {all})");
    }

    #[test]
    fn loaded_engine_answers_like_the_parsed_one() {
        let (parsed, _) = Engine::from_sources(small()).expect("loads");
        let compiled = Engine::from_compiled(parsed.compile().expect("compiles")).expect("loads compiled");
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
        assert!(matches!(load(&b"not compiled"[..]), Err(CompiledError::Format)));
        let mut wrong_format = bytes.clone();
        wrong_format[MAGIC.len()] ^= 0xff;
        assert!(matches!(load(wrong_format), Err(CompiledError::Format)));
        // Every truncation is refused with an error.
        for cut in (0..bytes.len()).step_by(7) {
            assert!(load(bytes[..cut].to_vec()).is_err(), "truncated at {cut} loaded");
        }
        // A byte changed anywhere after the magic is an error (the checksum); with the checksum
        // made to match (a bug in the compiler), checking every entity still gives an error or
        // passes, and never panics.
        for at in (MAGIC.len()..bytes.len()).step_by(13) {
            let mut b = bytes.clone();
            b[at] = b[at].wrapping_add(0x5b);
            assert!(load(b.clone()).is_err(), "byte {at} changed and loaded");
            if at >= HEADER {
                let sum = checksum(&b[HEADER..]);
                b[HEADER - 8..HEADER].copy_from_slice(&sum.to_le_bytes());
                let _ = verify(b);
            }
        }
        // Embedded ('static) bytes are not summed at start-up: a wrong checksum passes there,
        // and is an error in bytes read at run time.
        let mut wrong_sum = bytes.clone();
        wrong_sum[HEADER - 1] ^= 0x01;
        assert!(matches!(load(wrong_sum.clone()), Err(CompiledError::Corrupt { .. })));
        let embedded: &'static [u8] = Box::leak(wrong_sum.into_boxed_slice());
        assert!(load(embedded).is_ok(), "embedded bytes are summed at start-up");
        let e = load(bytes[..bytes.len() - 1].to_vec()).err().expect("short input is an error");
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
        let (engine, warnings) = Engine::from_compiled_with_overlay(bytes.clone(), overlay).expect("overlay loads");
        assert!(warnings.iter().all(|d| d.severity == crate::knowledge::Severity::Warning));
        assert!(engine.knowledge().get("failure-mode/my-team-quota").is_some());
        let d = engine.diagnose("runner quota for team blue is exhausted", DiagnoseOptions::default()).expect("diagnoses");
        assert_eq!(d.candidates[0].id, "failure-mode/my-team-quota");
        // The overlay's words are in the index, and the built-in entities still are.
        assert_eq!(engine.search("runners", None, 1)[0].id, "failure-mode/my-team-quota");
        assert!(engine.search("key-value store", None, 3).iter().any(|h| h.id == "component/etcd"));

        // A duplicate id names both places; a broken overlay file names its file and line.
        let dup = vec![file("mine/components/etcd.md", "+++\nid = \"component/etcd\"\ntitle = \"etcd again\"\n+++\n")];
        let Err(crate::EngineError::Invalid(diags)) = Engine::from_compiled_with_overlay(bytes.clone(), dup) else { panic!("duplicate accepted") };
        let text: Vec<String> = diags.iter().map(|d| d.to_string()).collect();
        assert!(text.iter().any(|t| t.contains("mine/components/etcd.md:1") && t.contains("components/etcd.md:1")), "{text:?}");
        let bad = vec![file("mine/failure-modes/bad.md", "+++\nid = \"failure-mode/bad\"\ntitle = \"Bad\"\narea = \"nowhere\"\n+++\n")];
        let Err(crate::EngineError::Invalid(diags)) = Engine::from_compiled_with_overlay(bytes.clone(), bad) else { panic!("bad area accepted") };
        assert!(diags.iter().any(|d| d.location.file == "mine/failure-modes/bad.md" && d.location.line > 1), "{diags:?}");
    }
}
