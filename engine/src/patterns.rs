//! Which of many fixed strings occur in a text, in one pass: an Aho-Corasick automaton
//! (a trie of the patterns with failure and output links) laid out in flat integer tables.
//!
//! The `aho-corasick` crate answers the same question, but its automata cannot be stored:
//! over the 5,106 failure-mode aliases one takes about 14 ms to build, on every start of a
//! one-shot `kubewhy why`. A [`PatternSet`] is built once when the knowledge is compiled
//! (issue 13) and read back as a few integer arrays ([`PatternSet::from_parts`] checks them), so
//! start-up costs a copy. Only presence is reported (each pattern at most once), which is all
//! the matcher needs; the positions of matches are not kept.
//!
//! Layout (states in breadth-first order, the root is state 0):
//! - `root`: 256 entries, the state the root goes to on each byte (0 = stay at the root);
//! - `edges`: per state, the range `edge_start[s]..edge_start[s + 1]` of its trie edges in
//!   `edge_bytes` (sorted) and `edge_next`;
//! - `fail`: per state, the longest proper suffix of its string that is also a trie state;
//! - `outputs`: per state, the range `out_start[s]..out_start[s + 1]` of `out_patterns`, the
//!   patterns that end exactly at it; `dict`: the nearest state on its failure chain that has
//!   outputs ([`NONE`] when there is none).
//!
//! Breadth-first order makes every failure and dictionary link point to an earlier state,
//! which [`PatternSet::from_parts`] checks: a damaged table cannot loop.

/// No state (the end of a dictionary chain).
pub const NONE: u32 = u32::MAX;

/// A set of byte strings to find in texts (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternSet {
    patterns: u32,
    root: Vec<u32>,
    edge_start: Vec<u32>,
    edge_bytes: Vec<u8>,
    edge_next: Vec<u32>,
    fail: Vec<u32>,
    out_start: Vec<u32>,
    out_patterns: Vec<u32>,
    dict: Vec<u32>,
}

/// The tables of a [`PatternSet`], as [`PatternSet::parts`] gives them and
/// [`PatternSet::from_parts`] takes them (for storing the set).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternSetParts {
    /// Number of patterns (ids `0..patterns`).
    pub patterns: u32,
    /// The root's transitions, 256 entries.
    pub root: Vec<u32>,
    /// Per state plus one: where its edges start in `edge_bytes` / `edge_next`.
    pub edge_start: Vec<u32>,
    /// Edge labels, sorted within a state.
    pub edge_bytes: Vec<u8>,
    /// Edge targets.
    pub edge_next: Vec<u32>,
    /// Per state: its failure link.
    pub fail: Vec<u32>,
    /// Per state plus one: where its outputs start in `out_patterns`.
    pub out_start: Vec<u32>,
    /// Pattern ids ending at each state.
    pub out_patterns: Vec<u32>,
    /// Per state: its dictionary link, or [`NONE`].
    pub dict: Vec<u32>,
}

impl PatternSet {
    /// Builds the automaton over `patterns` (pattern id = index). Duplicates are allowed (each
    /// id is reported); an empty pattern occurs in every text.
    ///
    /// Cost: linear in the total length of the patterns (about 2 ms per 100 kB here).
    ///
    /// # Panics
    /// Never for real input; more than `u32::MAX - 1` states or patterns would not fit the
    /// tables (a pattern set of gigabytes).
    pub fn new<S: AsRef<[u8]>>(patterns: &[S]) -> PatternSet {
        // The trie, children as sorted (byte, state) lists.
        let mut children: Vec<Vec<(u8, u32)>> = vec![Vec::new()];
        let mut ends: Vec<Vec<u32>> = vec![Vec::new()];
        for (id, p) in patterns.iter().enumerate() {
            let mut s = 0usize;
            for &b in p.as_ref() {
                s = match children[s].binary_search_by_key(&b, |&(c, _)| c) {
                    Ok(k) => children[s][k].1 as usize,
                    Err(k) => {
                        let next = children.len();
                        children[s].insert(k, (b, u32::try_from(next).expect("fewer than 2^32 states")));
                        children.push(Vec::new());
                        ends.push(Vec::new());
                        next
                    }
                };
            }
            ends[s].push(u32::try_from(id).expect("fewer than 2^32 patterns"));
        }
        // Renumber breadth-first, so that links point backwards.
        let n = children.len();
        let mut order = Vec::with_capacity(n);
        let mut new_id = vec![0u32; n];
        order.push(0usize);
        let mut head = 0;
        while head < order.len() {
            let s = order[head];
            head += 1;
            for &(_, c) in &children[s] {
                new_id[c as usize] = order.len() as u32;
                order.push(c as usize);
            }
        }
        let mut edge_start = Vec::with_capacity(n + 1);
        let mut edge_bytes = Vec::with_capacity(n);
        let mut edge_next = Vec::with_capacity(n);
        let mut out_start = Vec::with_capacity(n + 1);
        let mut out_patterns = Vec::with_capacity(patterns.len());
        for &s in &order {
            edge_start.push(edge_bytes.len() as u32);
            for &(b, c) in &children[s] {
                edge_bytes.push(b);
                edge_next.push(new_id[c as usize]);
            }
            out_start.push(out_patterns.len() as u32);
            out_patterns.extend_from_slice(&ends[s]);
        }
        edge_start.push(edge_bytes.len() as u32);
        out_start.push(out_patterns.len() as u32);
        let mut root = vec![0u32; 256];
        for k in edge_start[0]..edge_start[1] {
            root[edge_bytes[k as usize] as usize] = edge_next[k as usize];
        }
        let mut set = PatternSet {
            patterns: u32::try_from(patterns.len()).expect("fewer than 2^32 patterns"),
            root,
            edge_start,
            edge_bytes,
            edge_next,
            fail: vec![0; n],
            out_start,
            out_patterns,
            dict: vec![NONE; n],
        };
        // Failure and dictionary links, breadth-first (a state's links need its parent's).
        for s in 0..n as u32 {
            for k in set.edge_start[s as usize]..set.edge_start[s as usize + 1] {
                let (b, c) = (set.edge_bytes[k as usize], set.edge_next[k as usize]);
                let f = if s == 0 { 0 } else { set.next(set.fail[s as usize], b) };
                set.fail[c as usize] = f;
                set.dict[c as usize] = if set.has_outputs(f) && f != 0 { f } else { set.dict[f as usize] };
            }
        }
        set
    }

    /// Checks stored tables and makes a set of them.
    ///
    /// # Errors
    /// A description of the first table that is inconsistent: wrong lengths, a range out of
    /// order, a state, link or pattern id out of range, a link that does not point to an
    /// earlier state.
    pub fn from_parts(p: PatternSetParts) -> Result<PatternSet, &'static str> {
        let n = p.fail.len();
        if n == 0 || n >= NONE as usize || p.root.len() != 256 || p.dict.len() != n {
            return Err("pattern set: table lengths");
        }
        let ranges_ok = |starts: &[u32], len: usize| {
            starts.len() == n + 1 && starts[0] == 0 && starts[n] as usize == len && starts.windows(2).all(|w| w[0] <= w[1])
        };
        if !ranges_ok(&p.edge_start, p.edge_bytes.len()) || p.edge_next.len() != p.edge_bytes.len() || !ranges_ok(&p.out_start, p.out_patterns.len()) {
            return Err("pattern set: edge or output ranges");
        }
        if p.root.iter().chain(&p.edge_next).any(|&s| s as usize >= n) || p.out_patterns.iter().any(|&i| i >= p.patterns) {
            return Err("pattern set: state or pattern id out of range");
        }
        if p.fail.iter().enumerate().skip(1).any(|(s, &f)| f as usize >= s) || p.fail[0] != 0 {
            return Err("pattern set: a failure link that does not point back");
        }
        if p.dict.iter().enumerate().any(|(s, &d)| d != NONE && d as usize >= s) {
            return Err("pattern set: a dictionary link that does not point back");
        }
        Ok(PatternSet {
            patterns: p.patterns,
            root: p.root,
            edge_start: p.edge_start,
            edge_bytes: p.edge_bytes,
            edge_next: p.edge_next,
            fail: p.fail,
            out_start: p.out_start,
            out_patterns: p.out_patterns,
            dict: p.dict,
        })
    }

    /// The tables, to store (see [`PatternSet::from_parts`]).
    pub fn parts(&self) -> PatternSetParts {
        PatternSetParts {
            patterns: self.patterns,
            root: self.root.clone(),
            edge_start: self.edge_start.clone(),
            edge_bytes: self.edge_bytes.clone(),
            edge_next: self.edge_next.clone(),
            fail: self.fail.clone(),
            out_start: self.out_start.clone(),
            out_patterns: self.out_patterns.clone(),
            dict: self.dict.clone(),
        }
    }

    /// Number of patterns.
    pub fn len(&self) -> usize {
        self.patterns as usize
    }

    /// Whether the set has no pattern.
    pub fn is_empty(&self) -> bool {
        self.patterns == 0
    }

    /// Calls `found` once with the id of each pattern that occurs in `text` (as bytes, anywhere,
    /// overlapping others), in no particular order. One pass over `text`: time linear in its
    /// length plus the number of distinct patterns found.
    pub fn each_present(&self, text: &[u8], mut found: impl FnMut(usize)) {
        let mut seen = vec![false; self.fail.len()];
        // An empty pattern ends at the root: it occurs in every text.
        self.report(0, &mut seen, &mut found);
        let mut s = 0u32;
        for &b in text {
            s = self.next(s, b);
            if s != 0 {
                let first = if self.has_outputs(s) { s } else { self.dict[s as usize] };
                self.report(first, &mut seen, &mut found);
            }
        }
    }

    /// Per pattern id, whether it occurs in `text` (see [`PatternSet::each_present`]).
    pub fn present(&self, text: &[u8]) -> Vec<bool> {
        let mut out = vec![false; self.len()];
        self.each_present(text, |i| out[i] = true);
        out
    }

    /// Reports the outputs of `s` and of its dictionary chain, stopping at a state already
    /// reported (whose chain was reported with it).
    fn report(&self, mut s: u32, seen: &mut [bool], found: &mut impl FnMut(usize)) {
        while s != NONE && !seen[s as usize] {
            seen[s as usize] = true;
            let (a, b) = (self.out_start[s as usize] as usize, self.out_start[s as usize + 1] as usize);
            for &p in &self.out_patterns[a..b] {
                found(p as usize);
            }
            s = self.dict[s as usize];
        }
    }

    fn has_outputs(&self, s: u32) -> bool {
        self.out_start[s as usize] < self.out_start[s as usize + 1]
    }

    /// The state after reading byte `b` in state `s`, following failure links.
    fn next(&self, mut s: u32, b: u8) -> u32 {
        loop {
            if s == 0 {
                return self.root[b as usize];
            }
            let (a, e) = (self.edge_start[s as usize] as usize, self.edge_start[s as usize + 1] as usize);
            let labels = &self.edge_bytes[a..e];
            // Most states have one or two edges: a linear scan beats a binary search there.
            let hit = if labels.len() <= 8 { labels.iter().position(|&x| x == b) } else { labels.binary_search(&b).ok() };
            if let Some(k) = hit {
                return self.edge_next[a + k];
            }
            s = self.fail[s as usize];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What one-by-one substring search finds.
    fn naive(patterns: &[&str], text: &str) -> Vec<bool> {
        patterns.iter().map(|p| text.contains(p)).collect()
    }

    #[test]
    fn finds_overlapping_nested_and_suffix_patterns() {
        let pats = ["he", "she", "his", "hers", "insufficient cpu", "cpu", "ffi", "x", "she"];
        let set = PatternSet::new(&pats);
        for text in ["ushers", "0/3 nodes: insufficient cpu.", "his", "", "xshe", "h", "hhhhers"] {
            assert_eq!(set.present(text.as_bytes()), naive(&pats, text), "text {text:?}");
        }
    }

    #[test]
    fn empty_pattern_and_empty_set() {
        let set = PatternSet::new(&["", "ab"]);
        assert_eq!(set.present(b"zz"), vec![true, false]);
        let none = PatternSet::new::<&str>(&[]);
        assert!(none.is_empty());
        assert_eq!(none.present(b"anything"), Vec::<bool>::new());
    }

    #[test]
    fn parts_round_trip_and_damaged_tables_are_refused() {
        let set = PatternSet::new(&["abc", "bcd", "cd"]);
        assert_eq!(PatternSet::from_parts(set.parts()).unwrap(), set);
        let mut p = set.parts();
        let last = p.fail.len() - 1;
        p.fail[last] = last as u32;
        assert!(PatternSet::from_parts(p).is_err(), "a self-loop on the failure chain");
        let mut p = set.parts();
        p.out_patterns[0] = 7;
        assert!(PatternSet::from_parts(p).is_err(), "a pattern id past the set");
        let mut p = set.parts();
        p.root.pop();
        assert!(PatternSet::from_parts(p).is_err(), "a short root table");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        /// Small alphabets make overlaps, shared prefixes and long failure chains common.
        #[test]
        fn agrees_with_substring_search(pats in proptest::collection::vec("[ab c]{0,6}", 0..24), text in "[abc d]{0,80}") {
            let refs: Vec<&str> = pats.iter().map(String::as_str).collect();
            let set = PatternSet::new(&refs);
            proptest::prop_assert_eq!(set.present(text.as_bytes()), naive(&refs, &text));
            proptest::prop_assert_eq!(PatternSet::from_parts(set.parts()).unwrap(), set);
        }
    }
}
