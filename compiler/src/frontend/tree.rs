//! A compact JSON tree for reading ExportedProgram files.
//!
//! `serde_json::Value` keeps every object in a `BTreeMap`, whose nodes are several
//! hundred bytes even for the one-key unions the export schema is made of
//! (`{"as_tensor": {"name": "x"}}`): a 55 MB `model.json` of 100k nodes became well
//! over a gigabyte of small allocations, and reading it was dominated by page faults.
//! [`Json`] holds objects as sorted vectors of entries and borrows strings from the
//! input when they have no escapes. It reads exactly like `Value` (same syntax
//! errors, same numbers, the last of duplicate keys wins, entries in key order), and
//! converts to a `Value` for messages that quote a piece of the input.

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
pub fn parse(bytes: &[u8]) -> serde_json::Result<Json<'_>> {
    serde_json::from_slice(bytes)
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
        // Key order, the last of equal keys kept (a stable sort keeps them in input
        // order; `dedup_by` drops the later one, so swap it in first).
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        entries.dedup_by(|later, earlier| {
            if later.0 == earlier.0 {
                std::mem::swap(later, earlier);
                true
            } else {
                false
            }
        });
        Ok(Json::Object(entries))
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
        ];
        for doc in docs {
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
