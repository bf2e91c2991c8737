//! Full-text search: a tantivy index in RAM over titles, aliases, symptom texts and bodies.
//!
//! Field boosts: title 3.0, aliases 2.5, symptoms 2.0, body 1.0. The analyzer
//! lowercases and stems English, and the text is expanded so that CamelCase
//! words are also indexed as their parts (`CrashLoopBackOff` → `crash loop back
//! off`), so "crash loop" finds it. Queries are built from analyzer tokens, never
//! parsed as query syntax, so any pasted text is a valid query. The index is
//! built by one writer thread and ties are broken by id, so results are deterministic.

use crate::knowledge::KnowledgeBase;
use crate::model::{Kind, KindData};
use std::collections::BTreeSet;
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, Value, STORED, STRING,
};
use tantivy::tokenizer::{Language, LowerCaser, RemoveLongFilter, SimpleTokenizer, Stemmer, StopWordFilter, TextAnalyzer};
use tantivy::{doc, Index, IndexReader, ReloadPolicy, TantivyDocument, Term};

/// Errors of index building and searching.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// tantivy failed.
    #[error("search index error: {0}")]
    Index(#[from] tantivy::TantivyError),
}

/// One search hit.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Hit {
    /// Entity id.
    pub id: String,
    /// BM25 score (unbounded, larger is better).
    pub score: f32,
}

const ANALYZER: &str = "kubewhy";
/// English words too common to rank by.
const STOP_WORDS: &[&str] = &["a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it", "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these", "they", "this", "to", "was", "will", "with", "my", "why", "how", "what", "i", "we", "our", "do", "does", "can", "get", "got", "keeps", "has", "have"];
/// At most this many distinct query terms are used (the first ones in the text).
const MAX_QUERY_TERMS: usize = 512;

/// The tantivy index of the knowledge.
pub struct SearchIndex {
    index: Index,
    reader: IndexReader,
    id: Field,
    kind: Field,
    fields: Vec<(Field, f32)>,
}

impl std::fmt::Debug for SearchIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchIndex").finish_non_exhaustive()
    }
}

fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(48))
        .filter(LowerCaser)
        .filter(StopWordFilter::remove(STOP_WORDS.iter().map(|s| s.to_string())))
        .filter(Stemmer::new(Language::English))
        .build()
}

/// Appends the parts of CamelCase words (`CrashLoopBackOff` → `Crash Loop Back Off`) to the text.
pub fn expand_camel_case(text: &str) -> String {
    let mut extra = String::new();
    for word in text.split(|c: char| !c.is_ascii_alphanumeric()) {
        let uppers = word.chars().skip(1).filter(|c| c.is_ascii_uppercase()).count();
        if uppers == 0 || word.len() > 60 {
            continue;
        }
        let mut part = String::new();
        let chars: Vec<char> = word.chars().collect();
        for (i, &c) in chars.iter().enumerate() {
            let boundary = i > 0
                && c.is_ascii_uppercase()
                && (chars[i - 1].is_ascii_lowercase() || chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase()));
            if boundary && !part.is_empty() {
                extra.push(' ');
                extra.push_str(&part);
                part.clear();
            }
            part.push(c);
        }
        extra.push(' ');
        extra.push_str(&part);
    }
    if extra.is_empty() {
        text.to_string()
    } else {
        format!("{text}\n{extra}")
    }
}

thread_local! {
    /// The query-side analyzer, built once per thread: building one makes a fresh stop-word set
    /// and stemmer, which cost more than analysing a short text.
    static QUERY_ANALYZER: std::cell::RefCell<TextAnalyzer> = std::cell::RefCell::new(analyzer());
}

/// Runs `f` on each analyzer token of `text` in order (repeats kept) with its position, at most `max`.
pub fn for_each_token(text: &str, max: usize, mut f: impl FnMut(usize, &str)) {
    QUERY_ANALYZER.with(|a| {
        let mut a = a.borrow_mut();
        let mut stream = a.token_stream(text);
        let mut n = 0;
        while stream.advance() && n < max {
            f(n, &stream.token().text);
            n += 1;
        }
    });
}

/// The analyzer's tokens of `text` (after CamelCase expansion), distinct, in first-seen order, at most `max`.
pub fn tokens(text: &str, max: usize) -> Vec<String> {
    let expanded = expand_camel_case(text);
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    QUERY_ANALYZER.with(|a| {
        let mut a = a.borrow_mut();
        let mut stream = a.token_stream(&expanded);
        while stream.advance() {
            let t = &stream.token().text;
            if t.len() > 1 && !seen.contains(t.as_str()) {
                seen.insert(t.clone());
                out.push(t.clone());
                if out.len() >= max {
                    break;
                }
            }
        }
    });
    out
}

/// The analyzer's tokens of `text` in order, repeats kept, at most `max`.
pub fn token_sequence(text: &str, max: usize) -> Vec<String> {
    let mut out = Vec::new();
    for_each_token(text, max, |_, t| out.push(t.to_string()));
    out
}

/// The index schema: `id` and `kind` as stored strings, four analysed text fields. The text
/// fields keep term frequencies (BM25 needs them and the field norms) but no positions: every
/// query is a set of single terms, never a phrase, so positions would only make the index
/// larger and slower to build and load.
fn schema() -> Schema {
    let mut sb = Schema::builder();
    let text = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default().set_tokenizer(ANALYZER).set_index_option(IndexRecordOption::WithFreqs),
    );
    sb.add_text_field("id", STRING | STORED);
    sb.add_text_field("kind", STRING | STORED);
    sb.add_text_field("title", text.clone());
    sb.add_text_field("aliases", text.clone());
    sb.add_text_field("symptoms", text.clone());
    sb.add_text_field("body", text);
    sb.build()
}

/// The fields of [`schema`], looked up by name (an opened index must have them all).
struct SchemaFields {
    id: Field,
    kind: Field,
    title: Field,
    aliases: Field,
    symptoms: Field,
    body: Field,
}

impl SchemaFields {
    fn of(schema: &Schema) -> Result<SchemaFields, SearchError> {
        let f = |name: &str| schema.get_field(name).map_err(SearchError::Index);
        Ok(SchemaFields { id: f("id")?, kind: f("kind")?, title: f("title")?, aliases: f("aliases")?, symptoms: f("symptoms")?, body: f("body")? })
    }
}

/// The document of entity `e`. Failure modes also carry their symptoms' titles and aliases,
/// the titles of their loops and components, and their checks' and fixes' titles and texts.
fn document(kb: &KnowledgeBase, e: &crate::model::Entity, f: &SchemaFields) -> TantivyDocument {
    let mut sym = String::new();
    let mut extra = String::new();
    match &e.data {
        KindData::FailureMode(fm) => {
            for s in &fm.symptoms {
                if let Some(se) = kb.get(s) {
                    sym.push_str(&se.title);
                    sym.push('\n');
                    for a in &se.aliases {
                        sym.push_str(a);
                        sym.push('\n');
                    }
                }
            }
            for l in fm.loops.iter().chain(&fm.components) {
                if let Some(le) = kb.get(l) {
                    extra.push_str(&le.title);
                    extra.push('\n');
                }
            }
            // What to look for and what to do carry the words people use when they
            // describe what they already tried or saw.
            for c in fm.checks.iter().chain(&fm.fixes) {
                if let Some(ce) = kb.get(c) {
                    extra.push_str(&ce.title);
                    extra.push('\n');
                    match &ce.data {
                        KindData::Check { look_for, .. } => extra.push_str(look_for),
                        KindData::Fix { action, .. } => extra.push_str(action),
                        _ => {}
                    }
                    extra.push('\n');
                }
            }
        }
        KindData::Symptom(s) => {
            sym.push_str(s.text.as_deref().unwrap_or(""));
            sym.push('\n');
            sym.push_str(s.reason.as_deref().unwrap_or(""));
        }
        KindData::Metric { name, bad_value, .. } => {
            sym.push_str(name);
            extra.push_str(bad_value.as_deref().unwrap_or(""));
        }
        KindData::Check { command, look_for, .. } => {
            extra.push_str(command.as_deref().unwrap_or(""));
            extra.push('\n');
            extra.push_str(look_for);
        }
        KindData::Fix { action, command, .. } => {
            extra.push_str(action);
            extra.push('\n');
            extra.push_str(command.as_deref().unwrap_or(""));
        }
        KindData::Myth { correction, .. } => extra.push_str(correction),
        _ => {}
    }
    doc!(
        f.id => e.id.clone(),
        f.kind => e.kind.prefix(),
        f.title => expand_camel_case(&e.title),
        f.aliases => expand_camel_case(&e.aliases.join("\n")),
        f.symptoms => expand_camel_case(&sym),
        f.body => expand_camel_case(&format!("{}\n{extra}", e.body)),
    )
}

impl SearchIndex {
    /// Builds the index over every entity of `kb`. Failure modes also index their symptoms'
    /// texts and reasons, and the titles of their loops and components.
    ///
    /// # Errors
    /// [`SearchError::Index`] if tantivy fails.
    pub fn build(kb: &KnowledgeBase) -> Result<SearchIndex, SearchError> {
        let index = Index::create_in_ram(schema());
        index.tokenizers().register(ANALYZER, analyzer());
        let f = SchemaFields::of(&index.schema())?;
        let mut writer = index.writer_with_num_threads::<TantivyDocument>(1, 32_000_000)?;
        for e in kb.entities() {
            writer.add_document(document(kb, e, &f))?;
        }
        writer.commit()?;
        SearchIndex::with_index(index)
    }

    /// The index's files as `(path, bytes)`, sorted by path: what [`SearchIndex::from_files`]
    /// opens again. Used to embed an index built at compile time (issue 13).
    ///
    /// # Errors
    /// [`SearchError::Index`] if tantivy cannot list or read a file.
    pub fn files(&self) -> Result<Vec<(String, Vec<u8>)>, SearchError> {
        use tantivy::directory::Directory;
        let dir = self.index.directory();
        // The files of the searchable segments' components and meta.json (the list of managed
        // files is empty for an index opened from files, and can hold merged-away segments).
        use tantivy::index::SegmentComponent as C;
        let mut paths: BTreeSet<std::path::PathBuf> = BTreeSet::new();
        for m in self.index.searchable_segment_metas()? {
            for c in [C::Postings, C::Positions, C::FastFields, C::FieldNorms, C::Terms, C::Store, C::Delete] {
                if c != C::Delete || m.has_deletes() {
                    paths.insert(m.relative_path(c));
                }
            }
        }
        paths.insert(std::path::PathBuf::from("meta.json"));
        let mut out = Vec::new();
        for p in paths {
            // A component the segment never wrote (positions, with positions off) is absent.
            if !dir.exists(&p).map_err(tantivy::TantivyError::from)? {
                continue;
            }
            let bytes = dir.atomic_read(&p).map_err(tantivy::TantivyError::from)?;
            out.push((p.to_string_lossy().into_owned(), bytes));
        }
        Ok(out)
    }

    /// Opens an index from the files [`SearchIndex::files`] returned, in RAM.
    ///
    /// # Errors
    /// [`SearchError::Index`] when the files are not a valid index of this schema.
    pub fn from_files(files: &[(String, &[u8])]) -> Result<SearchIndex, SearchError> {
        use tantivy::directory::{Directory, RamDirectory};
        let dir = RamDirectory::create();
        for (path, bytes) in files {
            dir.atomic_write(std::path::Path::new(path), bytes).map_err(|e| tantivy::TantivyError::from(tantivy::directory::error::OpenWriteError::wrap_io_error(e, path.into())))?;
        }
        let index = Index::open(dir)?;
        index.tokenizers().register(ANALYZER, analyzer());
        SearchIndex::with_index(index)
    }

    /// Opens an index from files inside compiled knowledge (`files`: path and byte range in
    /// `bytes`), read-only. Bytes embedded in the binary are read in place, not copied; bytes
    /// owned at run time have the index files copied once. [`SearchIndex::add`] needs a
    /// writable index: an overlay opens its base with [`SearchIndex::from_files`].
    ///
    /// # Errors
    /// [`SearchError::Index`] when a range is outside `bytes` or the files are not a valid
    /// index of this schema.
    pub fn from_shared(bytes: crate::compiled::Bytes, files: &[(String, std::ops::Range<usize>)]) -> Result<SearchIndex, SearchError> {
        let mut dir = ReadOnlyDirectory::default();
        for (path, range) in files {
            let Some(slice) = bytes.get(range.clone()) else {
                return Err(tantivy::TantivyError::InvalidArgument(format!("index file {path} is outside the compiled bytes")).into());
            };
            let data = match &bytes {
                crate::compiled::Bytes::Static(b) => tantivy::directory::OwnedBytes::new(*b).slice(range.clone()),
                crate::compiled::Bytes::Shared(_) => tantivy::directory::OwnedBytes::new(slice.to_vec()),
            };
            std::sync::Arc::make_mut(&mut dir.files).insert(std::path::PathBuf::from(path), data);
        }
        let index = Index::open(dir)?;
        index.tokenizers().register(ANALYZER, analyzer());
        SearchIndex::with_index(index)
    }

    /// Adds the entities `ids` of `kb` (an overlay's, merged into `kb`) to the index as a new
    /// segment; the rest of the index is untouched. BM25 statistics span every segment, so the
    /// scores are those of an index built over the merged knowledge in one go.
    ///
    /// # Errors
    /// [`SearchError::Index`] if tantivy fails.
    pub fn add(&mut self, kb: &KnowledgeBase, ids: &[String]) -> Result<(), SearchError> {
        if ids.is_empty() {
            return Ok(());
        }
        let f = SchemaFields::of(&self.index.schema())?;
        let mut writer = self.index.writer_with_num_threads::<TantivyDocument>(1, 15_000_000)?;
        writer.set_merge_policy(Box::new(tantivy::indexer::NoMergePolicy));
        for id in ids {
            if let Some(e) = kb.get(id) {
                writer.add_document(document(kb, e, &f))?;
            }
        }
        writer.commit()?;
        drop(writer);
        self.reader.reload()?;
        Ok(())
    }

    fn with_index(index: Index) -> Result<SearchIndex, SearchError> {
        let f = SchemaFields::of(&index.schema())?;
        let reader = index.reader_builder().reload_policy(ReloadPolicy::Manual).try_into()?;
        Ok(SearchIndex {
            index,
            reader,
            id: f.id,
            kind: f.kind,
            fields: vec![(f.title, 1.5), (f.aliases, 1.5), (f.symptoms, 1.0), (f.body, 1.5)],
        })
    }

    /// Ranks entities for `text` with BM25 over the boosted fields.
    ///
    /// Returns at most `limit` hits, score descending, ties broken by id; only entities of
    /// `kinds` when given. Empty or stop-word-only text gives no hit.
    ///
    /// # Errors
    /// [`SearchError::Index`] if tantivy fails.
    pub fn search(&self, text: &str, kinds: Option<&[Kind]>, limit: usize) -> Result<Vec<Hit>, SearchError> {
        let toks = tokens(text, MAX_QUERY_TERMS);
        if toks.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let searcher = self.reader.searcher();
        // A term that no document has in a field matches nothing there and adds nothing to any
        // score (BM25 sums the matching terms only, in clause order): its clause is left out,
        // which spares tantivy a weight and a scorer for it. Long inputs (a whole `kubectl
        // describe`) have many such pairs.
        let inverted = self
            .fields
            .iter()
            .map(|&(f, _)| searcher.segment_readers().iter().map(|r| r.inverted_index(f)).collect::<Result<Vec<_>, _>>())
            .collect::<Result<Vec<_>, _>>()?;
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for t in &toks {
            for (&(f, boost), segments) in self.fields.iter().zip(&inverted) {
                let term = Term::from_field_text(f, t);
                let mut present = false;
                for seg in segments {
                    if seg.get_term_info(&term).map_err(tantivy::TantivyError::from)?.is_some() {
                        present = true;
                        break;
                    }
                }
                if present {
                    let q = TermQuery::new(term, IndexRecordOption::WithFreqs);
                    clauses.push((Occur::Should, Box::new(BoostQuery::new(Box::new(q), boost))));
                }
            }
        }
        if clauses.is_empty() {
            return Ok(Vec::new());
        }
        let mut query: Box<dyn Query> = Box::new(BooleanQuery::new(clauses));
        if let Some(kinds) = kinds {
            let kind_clauses: Vec<(Occur, Box<dyn Query>)> = kinds
                .iter()
                .map(|k| {
                    let q: Box<dyn Query> = Box::new(TermQuery::new(Term::from_field_text(self.kind, k.prefix()), IndexRecordOption::Basic));
                    (Occur::Should, q)
                })
                .collect();
            query = Box::new(BooleanQuery::new(vec![
                (Occur::Must, query),
                (Occur::Must, Box::new(BoostQuery::new(Box::new(BooleanQuery::new(kind_clauses)), 0.0))),
            ]));
        }
        // Fetch extra hits so that ties at the cut can be ordered by id.
        let top = searcher.search(&query, &TopDocs::with_limit(limit + 16).order_by_score())?;
        let mut hits = Vec::new();
        for (score, addr) in top {
            let d: TantivyDocument = searcher.doc(addr)?;
            if let Some(id) = d.get_first(self.id).and_then(|v| v.as_str()) {
                hits.push(Hit { id: id.to_string(), score });
            }
        }
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.id.cmp(&b.id)));
        hits.truncate(limit);
        Ok(hits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn camel_case_is_split() {
        let t = tokens("CrashLoopBackOff", 10);
        assert!(t.contains(&"crash".to_string()));
        assert!(t.contains(&"loop".to_string()));
        assert!(t.contains(&"crashloopbackoff".to_string()));
        let t = tokens("OOMKilled", 10);
        assert!(t.contains(&"oom".to_string()), "{t:?}");
        assert!(t.contains(&"kill".to_string()), "{t:?}");
    }
}

/// A read-only tantivy directory over bytes already in memory (see [`SearchIndex::from_shared`]):
/// reads hand out slices of them; writes and deletes are refused, locks always granted.
#[derive(Debug, Clone, Default)]
struct ReadOnlyDirectory {
    files: std::sync::Arc<std::collections::HashMap<std::path::PathBuf, tantivy::directory::OwnedBytes>>,
}

impl tantivy::directory::Directory for ReadOnlyDirectory {
    fn get_file_handle(&self, path: &std::path::Path) -> Result<std::sync::Arc<dyn tantivy::directory::FileHandle>, tantivy::directory::error::OpenReadError> {
        match self.files.get(path) {
            Some(b) => Ok(std::sync::Arc::new(b.clone())),
            None => Err(tantivy::directory::error::OpenReadError::FileDoesNotExist(path.to_path_buf())),
        }
    }

    fn delete(&self, path: &std::path::Path) -> Result<(), tantivy::directory::error::DeleteError> {
        Err(tantivy::directory::error::DeleteError::IoError { io_error: std::sync::Arc::new(read_only()), filepath: path.to_path_buf() })
    }

    fn exists(&self, path: &std::path::Path) -> Result<bool, tantivy::directory::error::OpenReadError> {
        Ok(self.files.contains_key(path))
    }

    fn open_write(&self, path: &std::path::Path) -> Result<tantivy::directory::WritePtr, tantivy::directory::error::OpenWriteError> {
        Err(tantivy::directory::error::OpenWriteError::wrap_io_error(read_only(), path.to_path_buf()))
    }

    fn atomic_read(&self, path: &std::path::Path) -> Result<Vec<u8>, tantivy::directory::error::OpenReadError> {
        match self.files.get(path) {
            Some(b) => Ok(b.as_slice().to_vec()),
            None => Err(tantivy::directory::error::OpenReadError::FileDoesNotExist(path.to_path_buf())),
        }
    }

    fn atomic_write(&self, _path: &std::path::Path, _data: &[u8]) -> std::io::Result<()> {
        Err(read_only())
    }

    fn sync_directory(&self) -> std::io::Result<()> {
        Ok(())
    }

    // Readers take the meta lock while they read meta.json; nothing here ever changes.
    fn acquire_lock(&self, _lock: &tantivy::directory::Lock) -> Result<tantivy::directory::DirectoryLock, tantivy::directory::error::LockError> {
        Ok(tantivy::directory::DirectoryLock::from(Box::new(())))
    }

    fn watch(&self, _callback: tantivy::directory::WatchCallback) -> tantivy::Result<tantivy::directory::WatchHandle> {
        Ok(tantivy::directory::WatchHandle::empty())
    }
}

fn read_only() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::PermissionDenied, "the compiled index is read-only")
}
