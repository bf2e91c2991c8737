//! Flat look-up tables of the matcher (issue 13): lists of `u32`s by number or by string key,
//! each held in a few contiguous arrays so that compiled knowledge reads them back with a
//! handful of copies instead of one allocation per key or list.

use std::collections::BTreeMap;

/// Lists of `u32`s by number (`0..len()`), all in one array.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Postings {
    /// `len() + 1` offsets into `values`: list `i` is `values[starts[i]..starts[i + 1]]`.
    pub(crate) starts: Vec<u32>,
    /// The lists, one after the other.
    pub(crate) values: Vec<u32>,
}

impl Postings {
    /// The lists in order.
    pub fn new<I, L>(lists: I) -> Postings
    where
        I: IntoIterator<Item = L>,
        L: IntoIterator<Item = u32>,
    {
        let mut p = Postings { starts: vec![0], values: Vec::new() };
        for l in lists {
            p.values.extend(l);
            p.starts.push(p.values.len() as u32);
        }
        p
    }

    /// Number of lists.
    pub fn len(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    /// Whether there is no list.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// List `i`; empty past the end.
    pub fn get(&self, i: usize) -> &[u32] {
        match (self.starts.get(i), self.starts.get(i + 1)) {
            (Some(&a), Some(&b)) => &self.values[a as usize..b as usize],
            _ => &[],
        }
    }

    /// Whether the offsets start at 0, never go down and end at the end of the values, and
    /// every value is below `bound` (checked when read back from bytes).
    pub(crate) fn valid(&self, bound: u32) -> bool {
        self.starts.first() == Some(&0)
            && self.starts.windows(2).all(|w| w[0] <= w[1])
            && self.starts.last().is_some_and(|&e| e as usize == self.values.len())
            && self.values.iter().all(|&v| v < bound)
    }
}

/// An empty slot of a hash table of places (see [`hash_slots`]).
pub(crate) const EMPTY: u32 = u32::MAX;

/// FNV-1a over a key's bytes.
pub(crate) fn fnv1a(key: &[u8]) -> u64 {
    key.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// A hash table of the places `0..n` of keys (`key(i)` gives key `i`'s bytes): a power of two
/// of slots at least twice `n`, each place in the first free slot from its key's FNV-1a hash
/// (linear probing), [`EMPTY`] elsewhere. A key equal to an earlier one gets no slot: looking
/// it up finds the earlier place. Used by the tables here and by the compiled entity table.
pub(crate) fn hash_slots<'a>(n: usize, key: impl Fn(usize) -> &'a [u8]) -> Vec<u32> {
    let mut slots = vec![EMPTY; (2 * n).max(2).next_power_of_two()];
    let mask = slots.len() - 1;
    'keys: for i in 0..n {
        let k = key(i);
        let mut s = fnv1a(k) as usize & mask;
        while slots[s] != EMPTY {
            if key(slots[s] as usize) == k {
                continue 'keys;
            }
            s = (s + 1) & mask;
        }
        slots[s] = i as u32;
    }
    slots
}

/// The place of `key` in a table made by [`hash_slots`], if any: `is_key(place)` says whether
/// the key at a place is `key`. One hash and, almost always, one comparison; at most half full,
/// so an empty slot ends every probe sequence.
pub(crate) fn probe(slots: &[u32], key: &[u8], is_key: impl Fn(usize) -> bool) -> Option<usize> {
    if slots.is_empty() {
        return None;
    }
    let mask = slots.len() - 1;
    let mut s = fnv1a(key) as usize & mask;
    for _ in 0..slots.len() {
        let i = slots[s];
        if i == EMPTY {
            return None;
        }
        if is_key(i as usize) {
            return Some(i as usize);
        }
        s = (s + 1) & mask;
    }
    None
}

/// Lists of `u32`s by string key: the keys as a [`StrIndex`] and their lists as [`Postings`]
/// (list `i` is the list of key `i`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyPostings {
    /// The keys.
    pub(crate) keys: StrIndex,
    /// Per key (by number): its list.
    pub(crate) lists: Postings,
}

impl KeyPostings {
    /// The table of `map` (keys in the map's order).
    pub fn new(map: &BTreeMap<String, Vec<u32>>) -> KeyPostings {
        KeyPostings { keys: StrIndex::new(map.keys().map(String::as_str)), lists: Postings::new(map.values().map(|v| v.iter().copied())) }
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.lists.len()
    }

    /// Whether there is no key.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The list of `key`; empty when the key is not in the table.
    pub fn get(&self, key: &str) -> &[u32] {
        self.keys.position(key).map_or(&[], |i| self.lists.get(i))
    }

    /// Whether the parts fit together (checked when read back from bytes): valid keys, one list
    /// per key, and list values below `bound`.
    pub(crate) fn valid(&self, bound: u32) -> bool {
        self.keys.valid() && self.lists.len() == self.keys.len() && self.lists.valid(bound)
    }
}

/// Distinct strings by number, in one string, with a hash table from each to its number: the
/// failure-mode ids, symptom ids and alias words of the matcher, which compiled knowledge
/// reads back with three copies instead of one allocation per string.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StrIndex {
    /// The strings, one after the other.
    pub(crate) text: String,
    /// `len() + 1` offsets into `text`.
    pub(crate) starts: Vec<u32>,
    /// A power of two of slots (at least twice the number of strings): a string's number, or
    /// empty.
    pub(crate) slots: Vec<u32>,
}

impl StrIndex {
    /// The strings in order; a repeated string keeps its first number.
    pub fn new<'a>(strings: impl IntoIterator<Item = &'a str>) -> StrIndex {
        let mut t = StrIndex { starts: vec![0], ..StrIndex::default() };
        for s in strings {
            t.text.push_str(s);
            t.starts.push(t.text.len() as u32);
        }
        t.slots = hash_slots(t.len(), |i| t.get(i).unwrap_or_default().as_bytes());
        t
    }

    /// Number of strings.
    pub fn len(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    /// Whether there is no string.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// String `i`; `None` past the end.
    pub fn get(&self, i: usize) -> Option<&str> {
        let (a, b) = (*self.starts.get(i)? as usize, *self.starts.get(i + 1)? as usize);
        self.text.get(a..b)
    }

    /// The strings in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> + '_ {
        (0..self.len()).filter_map(|i| self.get(i))
    }

    /// The number of `key`, if it is one of the strings.
    pub fn position(&self, key: &str) -> Option<usize> {
        probe(&self.slots, key.as_bytes(), |i| self.get(i) == Some(key))
    }

    /// Whether the parts fit together (checked when read back from bytes): offsets in order,
    /// each on a character boundary of the text, and a power of two of slots more than the
    /// strings, each number in at most one slot.
    pub(crate) fn valid(&self) -> bool {
        let n = self.len();
        let mut seen = vec![false; n];
        self.starts.first() == Some(&0)
            && self.starts.windows(2).all(|w| w[0] <= w[1])
            && self.starts.last().is_some_and(|&e| e as usize == self.text.len())
            && self.starts.iter().all(|&a| self.text.is_char_boundary(a as usize))
            && self.slots.len().is_power_of_two()
            && self.slots.len() > n
            && self.slots.iter().filter(|&&i| i != EMPTY).all(|&i| (i as usize) < n && !std::mem::replace(&mut seen[i as usize], true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn postings_by_number() {
        let p = Postings::new([vec![3, 1], vec![], vec![7]]);
        assert_eq!(p.len(), 3);
        assert_eq!(p.get(0), &[3, 1]);
        assert!(p.get(1).is_empty());
        assert_eq!(p.get(2), &[7]);
        assert!(p.get(3).is_empty());
        assert!(p.valid(8));
        assert!(!p.valid(7), "7 is not below 7");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Every key finds its own list; a key not in the map finds nothing.
        #[test]
        fn key_postings_agree_with_the_map(map in proptest::collection::btree_map("[a-z0-9.:-]{0,12}", proptest::collection::vec(0u32..1000, 0..5), 0..60), probe in "[a-z0-9.:-]{0,12}") {
            let t = KeyPostings::new(&map);
            prop_assert!(t.valid(1000));
            prop_assert_eq!(t.len(), map.len());
            for (k, v) in &map {
                prop_assert_eq!(t.get(k), v.as_slice());
            }
            prop_assert_eq!(t.get(&probe), map.get(&probe).map_or(&[][..], Vec::as_slice));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Every string is found at its first number; others are not found.
        #[test]
        fn str_index_finds_each_string_at_its_first_place(strings in proptest::collection::vec("[a-zé/0-9-]{0,8}", 0..50), probe in "[a-z]{0,8}") {
            let t = StrIndex::new(strings.iter().map(String::as_str));
            prop_assert!(t.valid());
            prop_assert_eq!(t.len(), strings.len());
            for (i, s) in strings.iter().enumerate() {
                prop_assert_eq!(t.get(i), Some(s.as_str()));
                prop_assert_eq!(t.position(s), strings.iter().position(|x| x == s));
            }
            prop_assert_eq!(t.position(&probe), strings.iter().position(|x| *x == probe));
            prop_assert_eq!(t.iter().collect::<Vec<_>>(), strings.iter().map(String::as_str).collect::<Vec<_>>());
        }
    }

    #[test]
    fn damaged_tables_are_not_valid() {
        let mut t = StrIndex::new(["é", "b"]);
        assert!(t.valid());
        t.starts[1] = 1;
        assert!(!t.valid(), "an offset inside a character");
        let map: BTreeMap<String, Vec<u32>> = [("a".to_string(), vec![1]), ("b".to_string(), vec![2])].into();
        let good = KeyPostings::new(&map);
        assert!(good.valid(3));
        let mut t = good.clone();
        t.keys.slots.iter_mut().filter(|s| **s != EMPTY).for_each(|s| *s = 0);
        assert!(!t.valid(3), "one key in two slots, the other in none");
        let mut t = good.clone();
        t.keys.starts[1] = 99;
        assert!(!t.valid(3));
        let mut t = good.clone();
        t.keys.slots.truncate(3);
        assert!(!t.valid(3));
        let mut t = good;
        t.lists = Postings::new([vec![1]]);
        assert!(!t.valid(3), "one list for two keys");
    }
}
