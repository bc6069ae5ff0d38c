//! A compact JSON tree for reading ExportedProgram files.
//!
//! `serde_json::Value` keeps every object in a `BTreeMap`, whose nodes are several
//! hundred bytes even for the one-key unions the export schema is made of
//! (`{"as_tensor": {"name": "x"}}`): a 55 MB `model.json` of 100k nodes became well
//! over a gigabyte of small allocations, and reading it was dominated by page faults.
//! [`Json`] holds objects as sorted vectors of entries and borrows strings from the
//! input when they have no escapes. It reads like `Value` (same syntax errors, same
//! integers, the last of duplicate keys wins, entries in key order; floats correctly
//! rounded, see [`parse`]), and converts to a `Value` for messages that quote a piece
//! of the input.

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// A JSON number, as `serde_json` keeps it (without `arbitrary_precision`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Number {
    PosInt(u64),
    NegInt(i64),
    Float(f64),
}

/// One JSON value borrowed from (or copied out of) the input bytes.
#[derive(Clone, Debug, PartialEq)]
pub enum Json<'a> {
    Null,
    Bool(bool),
    Number(Number),
    String(Cow<'a, str>),
    Array(Vec<Json<'a>>),
    /// Entries sorted by key, keys unique.
    Object(Vec<(Cow<'a, str>, Json<'a>)>),
    /// An item of one of the containers [`parse_with_lazy_items`] is asked to leave
    /// unbuilt: its text, whose structure (strings and brackets) was checked but not
    /// its syntax. Read it with [`expand`].
    Lazy(&'a str),
}

impl<'a> Json<'a> {
    /// The value of `key` when `self` is an object that has it.
    pub fn get(&self, key: &str) -> Option<&Json<'a>> {
        let Json::Object(entries) = self else {
            return None;
        };
        entries
            .binary_search_by(|(k, _)| k.as_ref().cmp(key))
            .ok()
            .map(|i| &entries[i].1)
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Json::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The number as an `i64` when it is an integer that fits.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Json::Number(Number::PosInt(u)) => i64::try_from(*u).ok(),
            Json::Number(Number::NegInt(i)) => Some(*i),
            _ => None,
        }
    }

    /// Any number as an `f64`.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Json::Number(Number::PosInt(u)) => Some(*u as f64),
            Json::Number(Number::NegInt(i)) => Some(*i as f64),
            Json::Number(Number::Float(f)) => Some(*f),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&Vec<Json<'a>>> {
        match self {
            Json::Array(v) => Some(v),
            _ => None,
        }
    }

    /// The entries of an object, in key order.
    pub fn as_object(&self) -> Option<&[(Cow<'a, str>, Json<'a>)]> {
        match self {
            Json::Object(entries) => Some(entries),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Json::Null)
    }

    /// The same value as a `serde_json::Value` (for quoting it in messages).
    pub fn to_value(&self) -> serde_json::Value {
        use serde_json::Value;
        match self {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(*b),
            Json::Number(Number::PosInt(u)) => Value::from(*u),
            Json::Number(Number::NegInt(i)) => Value::from(*i),
            Json::Number(Number::Float(f)) => {
                serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number)
            }
            Json::String(s) => Value::String(s.to_string()),
            Json::Array(v) => Value::Array(v.iter().map(Json::to_value).collect()),
            Json::Lazy(text) => Reader::new(text)
                .document()
                .map_or(Value::Null, |v| v.to_value()),
            Json::Object(entries) => Value::Object(
                entries
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_value()))
                    .collect(),
            ),
        }
    }
}

impl fmt::Display for Json<'_> {
    /// Compact JSON, as `serde_json::Value` prints it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.to_value(), f)
    }
}

/// Parses `bytes` (one JSON document) into a tree that borrows from them.
///
/// A hand-written reader takes the common path (about four times faster than
/// `serde_json`'s deserializer on export files, most of whose time is spent in the
/// reader). It accepts a subset of what `serde_json` accepts and builds the same tree;
/// anything it does not take (a syntax error, a lone surrogate, an integer beyond
/// 64 bits, nesting deeper than 128) is read again by `serde_json`, which gives its
/// tree or its error. Floats are read correctly rounded (Rust's `f64::from_str`),
/// which `serde_json` without its `float_roundtrip` feature is not always (one unit in
/// the last place, on long or extreme literals): the value is the one the exporter
/// printed.
pub fn parse(bytes: &[u8]) -> serde_json::Result<Json<'_>> {
    parse_with_lazy_items(bytes, &[])
}

/// [`parse`], leaving each item of the arrays and objects at `paths` (keys from the
/// root, such as `["graph_module", "graph", "nodes"]`) as a checked [`Json::Lazy`]
/// to be built one at a time with [`expand`]. An export's node list is most of its
/// bytes; built whole, its tree is hundreds of megabytes of small allocations for a
/// 100,000-node graph, where one node at a time stays in cache.
///
/// A lazy item is only skipped over (its strings and brackets followed), so a syntax
/// error inside one is found when [`expand`] reads it, and reported there exactly as
/// `serde_json` reports it for the whole document.
pub fn parse_with_lazy_items<'a>(
    bytes: &'a [u8],
    paths: &[&[&str]],
) -> serde_json::Result<Json<'a>> {
    let tree = std::str::from_utf8(bytes).ok().and_then(|text| {
        let mut reader = Reader::new(text);
        reader.lazy = paths;
        reader.document()
    });
    match tree {
        Some(tree) => Ok(tree),
        None => serde_json::from_slice(bytes),
    }
}

/// `v` built: a [`Json::Lazy`] item of the document `doc` is read now, anything else
/// is itself. An item the fast reader does not take is read by `serde_json`: its
/// error, when it has one, is the one `serde_json` gives for the whole document
/// (with that document's line and column).
pub fn expand<'a, 'v>(doc: &'a [u8], v: &'v Json<'a>) -> serde_json::Result<Cow<'v, Json<'a>>> {
    let Json::Lazy(text) = v else {
        return Ok(Cow::Borrowed(v));
    };
    if let Some(tree) = Reader::new(text).document() {
        return Ok(Cow::Owned(tree));
    }
    match serde_json::from_str(text) {
        Ok(tree) => Ok(Cow::Owned(tree)),
        Err(item_error) => Err(serde_json::from_slice::<Json>(doc)
            .err()
            .unwrap_or(item_error)),
    }
}

/// `serde_json`'s default recursion limit (127 levels of nesting are read).
const MAX_DEPTH: usize = 128;

/// The fast reader: `None` means "not taken", never "invalid" (see [`parse`]).
struct Reader<'a, 'p> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    depth: usize,
    /// Containers whose items are left as [`Json::Lazy`].
    lazy: &'p [&'p [&'p str]],
    /// The keys from the root to the value being read (while `lazy` is not empty).
    path: Vec<Cow<'a, str>>,
    /// Items of the arrays being read, and entries of the objects (each container
    /// moves its own off the top when it ends, into a vector of exactly its size).
    items: Vec<Json<'a>>,
    entries: Vec<(Cow<'a, str>, Json<'a>)>,
}

impl<'a, 'p> Reader<'a, 'p> {
    fn new(text: &'a str) -> Self {
        Reader {
            text,
            bytes: text.as_bytes(),
            pos: 0,
            depth: 0,
            lazy: &[],
            path: Vec::new(),
            items: Vec::new(),
            entries: Vec::new(),
        }
    }

    /// Whether the container being entered is one whose items stay unbuilt.
    fn items_lazy(&self) -> bool {
        self.lazy.iter().any(|p| {
            p.len() == self.path.len() && p.iter().zip(&self.path).all(|(a, b)| *a == b.as_ref())
        })
    }

    /// An item of a lazy container, kept as its text: skipped by following its
    /// strings and brackets only (`expand` reads it).
    fn lazy_item(&mut self) -> Option<Json<'a>> {
        self.skip_ws();
        let start = self.pos;
        let mut depth = 0usize;
        loop {
            match *self.bytes.get(self.pos)? {
                b'"' => {
                    self.pos += 1;
                    loop {
                        let at = memchr::memchr2(b'"', b'\\', &self.bytes[self.pos..])?;
                        self.pos += at + 1;
                        if self.bytes[self.pos - 1] == b'"' {
                            break;
                        }
                        // An escape: skip the escaped byte.
                        self.pos += 1;
                    }
                    if depth == 0 {
                        break;
                    }
                }
                b'{' | b'[' => {
                    depth += 1;
                    if self.depth + depth >= MAX_DEPTH {
                        return None;
                    }
                    self.pos += 1;
                }
                b'}' | b']' => {
                    if depth == 0 {
                        break;
                    }
                    depth -= 1;
                    self.pos += 1;
                    if depth == 0 {
                        break;
                    }
                }
                b',' | b' ' | b'\n' | b'\t' | b'\r' if depth == 0 => break,
                _ => self.pos += 1,
            }
        }
        let text = self.text.get(start..self.pos)?;
        (!text.is_empty()).then_some(Json::Lazy(text))
    }

    fn document(mut self) -> Option<Json<'a>> {
        let v = self.value()?;
        self.skip_ws();
        (self.pos == self.bytes.len()).then_some(v)
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.bytes.get(self.pos).copied()
    }

    fn eat<const N: usize>(&mut self, literal: &[u8; N]) -> Option<()> {
        let end = self.pos.checked_add(N)?;
        let found: &[u8; N] = self.bytes.get(self.pos..end)?.try_into().ok()?;
        (found == literal).then(|| self.pos = end)
    }

    fn value(&mut self) -> Option<Json<'a>> {
        self.value_built(true)
    }

    /// A value; with `build` false containers are only checked (and read as null).
    fn value_built(&mut self, build: bool) -> Option<Json<'a>> {
        match self.peek()? {
            b'{' => self.object(build),
            b'[' => self.array(build),
            b'"' => Some(Json::String(self.string()?)),
            b't' => self.eat(b"true").map(|_| Json::Bool(true)),
            b'f' => self.eat(b"false").map(|_| Json::Bool(false)),
            b'n' => self.eat(b"null").map(|_| Json::Null),
            _ => self.number(),
        }
    }

    fn enter(&mut self) -> Option<()> {
        self.depth += 1;
        self.pos += 1;
        (self.depth < MAX_DEPTH).then_some(())
    }

    fn array(&mut self, build: bool) -> Option<Json<'a>> {
        self.enter()?;
        let lazy = build && !self.lazy.is_empty() && self.items_lazy();
        let base = self.items.len();
        if self.peek()? == b']' {
            self.pos += 1;
        } else {
            loop {
                let item = if lazy {
                    self.lazy_item()?
                } else {
                    self.value_built(build)?
                };
                if build {
                    self.items.push(item);
                }
                match self.peek()? {
                    b',' => self.pos += 1,
                    b']' => {
                        self.pos += 1;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        self.depth -= 1;
        Some(if build {
            Json::Array(self.items.drain(base..).collect())
        } else {
            Json::Null
        })
    }

    fn object(&mut self, build: bool) -> Option<Json<'a>> {
        self.enter()?;
        let lazy = build && !self.lazy.is_empty() && self.items_lazy();
        let base = self.entries.len();
        if self.peek()? == b'}' {
            self.pos += 1;
        } else {
            loop {
                if self.peek()? != b'"' {
                    return None;
                }
                let key = self.string()?;
                if self.peek()? != b':' {
                    return None;
                }
                self.pos += 1;
                let value = if lazy {
                    self.lazy_item()?
                } else if build && !self.lazy.is_empty() {
                    self.path.push(key.clone());
                    let v = self.value_built(true)?;
                    self.path.pop();
                    v
                } else {
                    self.value_built(build)?
                };
                if build {
                    self.entries.push((key, value));
                }
                match self.peek()? {
                    b',' => self.pos += 1,
                    b'}' => {
                        self.pos += 1;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        self.depth -= 1;
        Some(if build {
            Json::Object(sorted_entries(self.entries.drain(base..).collect()))
        } else {
            Json::Null
        })
    }

    /// A string starting at the current `"`; borrowed when it has no escapes.
    fn string(&mut self) -> Option<Cow<'a, str>> {
        self.pos += 1;
        let start = self.pos;
        loop {
            match *self.bytes.get(self.pos)? {
                b'"' => {
                    let s = self.text.get(start..self.pos)?;
                    self.pos += 1;
                    return Some(Cow::Borrowed(s));
                }
                b'\\' => break,
                0..=0x1f => return None,
                _ => self.pos += 1,
            }
        }
        // Escapes: decode into an owned string.
        let mut out: Vec<u8> = self.bytes[start..self.pos].to_vec();
        loop {
            match *self.bytes.get(self.pos)? {
                b'"' => {
                    self.pos += 1;
                    return String::from_utf8(out).ok().map(Cow::Owned);
                }
                b'\\' => {
                    self.pos += 1;
                    let c = match *self.bytes.get(self.pos)? {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let hi = self.hex4()?;
                            if (0xD800..0xDC00).contains(&hi) {
                                self.pos += 1;
                                self.eat(b"\\u")?;
                                self.pos -= 1;
                                let lo = self.hex4()?;
                                if !(0xDC00..0xE000).contains(&lo) {
                                    return None;
                                }
                                char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))?
                            } else {
                                char::from_u32(hi)?
                            }
                        }
                        _ => return None,
                    };
                    self.pos += 1;
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
                0..=0x1f => return None,
                b => {
                    out.push(b);
                    self.pos += 1;
                }
            }
        }
    }

    /// The four hex digits after the `u` at the current position; leaves the
    /// position on the last digit.
    fn hex4(&mut self) -> Option<u32> {
        let digits = self.bytes.get(self.pos + 1..self.pos + 5)?;
        let text = std::str::from_utf8(digits).ok()?;
        if !text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        self.pos += 4;
        u32::from_str_radix(text, 16).ok()
    }

    /// `-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`: integers as `u64`/`i64` when
    /// they fit (otherwise not taken), anything with a fraction or exponent as a
    /// finite `f64`. `-0` is not taken (`serde_json` decides what it is).
    fn number(&mut self) -> Option<Json<'a>> {
        let start = self.pos;
        let digits = |r: &mut Self| {
            let s = r.pos;
            while r.bytes.get(r.pos).is_some_and(u8::is_ascii_digit) {
                r.pos += 1;
            }
            r.pos > s
        };
        let negative = self.bytes.get(self.pos) == Some(&b'-');
        if negative {
            self.pos += 1;
        }
        let int_start = self.pos;
        if !digits(self) {
            return None;
        }
        if self.bytes[int_start] == b'0' && self.pos - int_start > 1 {
            return None;
        }
        let mut float = false;
        if self.bytes.get(self.pos) == Some(&b'.') {
            self.pos += 1;
            float = true;
            if !digits(self) {
                return None;
            }
        }
        if let Some(b'e' | b'E') = self.bytes.get(self.pos) {
            self.pos += 1;
            float = true;
            if let Some(b'+' | b'-') = self.bytes.get(self.pos) {
                self.pos += 1;
            }
            if !digits(self) {
                return None;
            }
        }
        let text = self.text.get(start..self.pos)?;
        if float {
            let f: f64 = text.parse().ok()?;
            return f.is_finite().then_some(Json::Number(Number::Float(f)));
        }
        if negative {
            let i: i64 = text.parse().ok()?;
            return (i != 0).then_some(Json::Number(Number::NegInt(i)));
        }
        text.parse().ok().map(|u| Json::Number(Number::PosInt(u)))
    }
}

/// Key order, the last of equal keys kept (a stable sort keeps them in input order;
/// `dedup_by` drops the later one, so swap it in first).
fn sorted_entries<'a>(mut entries: Vec<(Cow<'a, str>, Json<'a>)>) -> Vec<(Cow<'a, str>, Json<'a>)> {
    if entries.windows(2).all(|w| w[0].0 < w[1].0) {
        return entries;
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    entries.dedup_by(|later, earlier| {
        if later.0 == earlier.0 {
            std::mem::swap(later, earlier);
            true
        } else {
            false
        }
    });
    entries
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_bool<E>(self, b: bool) -> Result<Json<'de>, E> {
        Ok(Json::Bool(b))
    }

    fn visit_i64<E>(self, i: i64) -> Result<Json<'de>, E> {
        Ok(Json::Number(if i < 0 {
            Number::NegInt(i)
        } else {
            Number::PosInt(i as u64)
        }))
    }

    fn visit_u64<E>(self, u: u64) -> Result<Json<'de>, E> {
        Ok(Json::Number(Number::PosInt(u)))
    }

    fn visit_f64<E>(self, f: f64) -> Result<Json<'de>, E> {
        // As `serde_json::Value`: a non-finite float is null.
        Ok(if f.is_finite() {
            Json::Number(Number::Float(f))
        } else {
            Json::Null
        })
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Json<'de>, E> {
        Ok(Json::String(Cow::Borrowed(s)))
    }

    fn visit_str<E>(self, s: &str) -> Result<Json<'de>, E> {
        Ok(Json::String(Cow::Owned(s.to_string())))
    }

    fn visit_string<E>(self, s: String) -> Result<Json<'de>, E> {
        Ok(Json::String(Cow::Owned(s)))
    }

    fn visit_none<E>(self) -> Result<Json<'de>, E> {
        Ok(Json::Null)
    }

    fn visit_unit<E>(self) -> Result<Json<'de>, E> {
        Ok(Json::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Json<'de>, D::Error> {
        Deserialize::deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json<'de>, A::Error> {
        let mut v = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(x) = seq.next_element()? {
            v.push(x);
        }
        Ok(Json::Array(v))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json<'de>, A::Error> {
        let mut entries: Vec<(Cow<'de, str>, Json<'de>)> = Vec::new();
        while let Some(key) = map.next_key::<Key<'de>>()? {
            entries.push((key.0, map.next_value()?));
        }
        Ok(Json::Object(sorted_entries(entries)))
    }
}

impl<'de> Deserialize<'de> for Json<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Json<'de>, D::Error> {
        d.deserialize_any(JsonVisitor)
    }
}

/// An object key, borrowed when it has no escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Key<'de>, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string key")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s.to_string())))
            }
            fn visit_string<E>(self, s: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s)))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads like `serde_json::Value`: the same tree (key order, duplicates, numbers,
    /// escapes) and the same syntax errors.
    #[test]
    fn reads_like_serde_json_value() {
        let deep_bad = "[".repeat(129);
        let deep_ok = format!("{}{}", "[".repeat(127), "]".repeat(127));
        let deep_limit = format!("{}{}", "[".repeat(128), "]".repeat(128));
        let docs = [
            r#"{"b": 1, "a": [true, null, -2, 3.5, 18446744073709551615], "c": "x\"y"}"#,
            r#"{"k": 1, "k": 2, "j": {"z": {}, "y": []}, "k": 3}"#,
            r#"{"as_tensor": {"name": "linear_0"}, "\u0041": "\u00e9", "e": 1e300}"#,
            r#"[1, -0, 0.0, -9223372036854775808, 9223372036854775808, "", {"": ""}]"#,
            "{\"a\": 1,}",
            "{\"a\" 1}",
            "[1, 2",
            "1e400",
            "{\"a\": nul}",
            "\"\\ud800\"",
            "",
            "  [] x",
            r#"{"s": "a\u00e9\ud83d\ude00\n\t\/\b\f\r\\z\"", "k\u0000": "\u0000"}"#,
            r#"{"t": "\ud83d"}"#,
            r#"{"u": "\udc00"}"#,
            r#"{"v": "\ud83dx"}"#,
            r#"[-1, 1.5e-3, 1E+2, -0.0, 0e0, 0.1, 1e-5, 0.044715]"#,
            "[-0]",
            "[01]",
            "[1.]",
            "[.5]",
            "[-]",
            "[1e]",
            "[18446744073709551616, -9223372036854775809, 123456789012345678901234567890]",
            "[\"tab\there\"]",
            "{\"a\":1 , \"b\" :\t[ ] }",
            deep_bad.as_str(),
            deep_ok.as_str(),
            deep_limit.as_str(),
            "[true, false, null, tru]",
        ];
        let mut taken = 0;
        for doc in docs {
            // What the fast reader takes, it reads exactly as serde_json does.
            if let Some(fast) = Reader::new(doc).document() {
                let theirs: serde_json::Value = serde_json::from_str(doc).unwrap();
                assert_eq!(fast.to_value(), theirs, "{doc}");
                taken += 1;
            }
            let ours = parse(doc.as_bytes()).map(|j| j.to_value());
            let theirs: serde_json::Result<serde_json::Value> = serde_json::from_str(doc);
            match (ours, theirs) {
                (Ok(a), Ok(b)) => {
                    assert_eq!(a, b, "{doc}");
                    assert_eq!(a.to_string(), b.to_string(), "{doc}");
                }
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{doc}"),
                (a, b) => panic!("{doc}: {a:?} vs {b:?}"),
            }
        }
        // Every valid document above but those with `-0` or integers beyond 64 bits.
        assert_eq!(taken, 7);
    }

    /// Floats are correctly rounded, where `serde_json` without `float_roundtrip`
    /// may be one unit in the last place off.
    #[test]
    fn floats_are_correctly_rounded() {
        for text in [
            "2.5E-308",
            "9007199254740993.0",
            "0.30000000000000004",
            "1e-7",
        ] {
            let doc = format!("[{text}]");
            let tree = parse(doc.as_bytes()).unwrap();
            let got = tree.as_array().unwrap()[0].as_f64().unwrap();
            assert_eq!(
                got.to_bits(),
                text.parse::<f64>().unwrap().to_bits(),
                "{text}"
            );
        }
    }

    /// Items left lazy read as the same trees, and a syntax error inside one is
    /// `serde_json`'s error for the whole document, line and column included.
    #[test]
    fn lazy_items_read_like_serde_json() {
        let docs = [
            r#"{"g": {"nodes": [{"a": [1, "x]\"y"]}, "s", 2, {}, []], "n": 1}}"#,
            r#"{"g": {"nodes": {"k": {"b": "}"}, "j": -0, "k": [3]}}}"#,
            "{\"g\": {\"nodes\": [{\"a\": 1,}, {\"b\": 2}]}}",
            "{\"g\": {\"nodes\": [{\"a\": nul}]}}",
            "{\"g\": {\"nodes\": [{\"a\": 1]}]}}",
            "{\"g\": {\"nodes\": [1 2]}}",
            "{\"g\": {\"nodes\": [{\"s\": \"tab\there\"}]}}",
            "{\"g\": {\"nodes\": [\n{\"a\":\n [01]}]}}",
            "{\"g\": {\"nodes\": [{\"a\": \"open]}]}}",
        ];
        for doc in docs {
            let theirs: serde_json::Result<serde_json::Value> = serde_json::from_str(doc);
            let ours = parse_with_lazy_items(doc.as_bytes(), &[&["g", "nodes"]]).and_then(|root| {
                let items = root.get("g").and_then(|g| g.get("nodes")).unwrap();
                let expanded = match items {
                    Json::Array(v) => v
                        .iter()
                        .map(|i| expand(doc.as_bytes(), i).map(|t| t.to_value()))
                        .collect::<serde_json::Result<Vec<_>>>()
                        .map(serde_json::Value::Array)?,
                    Json::Object(e) => e
                        .iter()
                        .map(|(k, i)| Ok((k.to_string(), expand(doc.as_bytes(), i)?.to_value())))
                        .collect::<serde_json::Result<serde_json::Map<_, _>>>()
                        .map(serde_json::Value::Object)?,
                    other => panic!("{doc}: {other:?}"),
                };
                let mut whole = root.to_value();
                whole["g"]["nodes"] = expanded;
                Ok(whole)
            });
            match (ours, theirs) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{doc}"),
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{doc}"),
                (a, b) => panic!("{doc}: {a:?} vs {b:?}"),
            }
        }
    }

    #[test]
    fn accessors_match_serde_json_value() {
        let doc = r#"{"i": -3, "u": 7, "big": 18446744073709551615, "f": 2.5, "s": "t", "b": false, "n": null, "o": {"x": 1}}"#;
        let ours = parse(doc.as_bytes()).unwrap();
        let theirs: serde_json::Value = serde_json::from_str(doc).unwrap();
        for k in ["i", "u", "big", "f", "s", "b", "n", "o", "missing"] {
            let (a, b) = (ours.get(k), theirs.get(k));
            assert_eq!(a.is_some(), b.is_some(), "{k}");
            let (Some(a), Some(b)) = (a, b) else { continue };
            assert_eq!(a.as_i64(), b.as_i64(), "{k}");
            assert_eq!(a.as_f64(), b.as_f64(), "{k}");
            assert_eq!(a.as_str(), b.as_str(), "{k}");
            assert_eq!(a.as_bool(), b.as_bool(), "{k}");
            assert_eq!(a.is_null(), b.is_null(), "{k}");
            assert_eq!(a.as_object().is_some(), b.as_object().is_some(), "{k}");
            assert_eq!(a.to_string(), b.to_string(), "{k}");
        }
        assert!(ours.get("o").unwrap().get("x").is_some());
        assert!(ours.get("s").unwrap().get("x").is_none());
    }
}
