//! A read-only view of one ATen-level op: named tensor operands (already lowered),
//! attributes parsed back into Rust values, and the result types from the graph.

use std::collections::HashMap;

use rustc_hash::FxHashMap;

use melior::ir::attribute::AttributeLike;
use melior::ir::operation::{OperationLike, OperationRef};
use melior::ir::ValueLike;
use tpuc_artifact::DType;
use tpuc_dialects::{aten, TValue, TensorType};

use super::{LResult, LowerError};

/// A parsed attribute value.
#[derive(Clone, Debug, PartialEq)]
pub enum AttrValue {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(String),
    Ints(Vec<i64>),
    Floats(Vec<f64>),
    Bools(Vec<bool>),
    Strs(Vec<String>),
    Other(String),
}

fn parse_float(s: &str) -> Option<f64> {
    let s = s.trim();
    if let Some(hex) = s.strip_prefix("0x") {
        let bits = u64::from_str_radix(hex, 16).ok()?;
        return Some(f64::from_bits(bits));
    }
    s.parse().ok()
}

fn parse_attr(text: &str) -> AttrValue {
    let t = text.trim();
    if t == "true" || t == "false" {
        return AttrValue::Bool(t == "true");
    }
    if let Some(v) = t.strip_suffix(" : i64") {
        if let Ok(i) = v.trim().parse() {
            return AttrValue::Int(i);
        }
    }
    if let Some(v) = t.strip_suffix(" : f64") {
        if let Some(f) = parse_float(v) {
            return AttrValue::Float(f);
        }
    }
    if let Some(inner) = t.strip_prefix("array<").and_then(|s| s.strip_suffix('>')) {
        let (elem, items) = match inner.split_once(':') {
            Some((e, items)) => (e.trim(), items.trim()),
            None => (inner.trim(), ""),
        };
        let items: Vec<&str> = if items.is_empty() {
            vec![]
        } else {
            items.split(',').map(str::trim).collect()
        };
        return match elem {
            "i64" => AttrValue::Ints(items.iter().filter_map(|s| s.parse().ok()).collect()),
            "f64" => AttrValue::Floats(items.iter().filter_map(|s| parse_float(s)).collect()),
            "i1" => AttrValue::Bools(items.iter().map(|s| *s == "true").collect()),
            _ => AttrValue::Other(t.to_string()),
        };
    }
    if t.starts_with('"') && t.ends_with('"') && t.len() >= 2 {
        return AttrValue::Str(unescape(&t[1..t.len() - 1]));
    }
    if t.starts_with('[') && t.ends_with(']') {
        let inner = &t[1..t.len() - 1];
        let items: Vec<String> = inner
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| unescape(s.trim_matches('"')))
            .collect();
        return AttrValue::Strs(items);
    }
    AttrValue::Other(t.to_string())
}

fn unescape(s: &str) -> String {
    s.replace("\\22", "\"")
        .replace("\\\"", "\"")
        .replace("\\\\", "\\")
}

/// Attribute values already read, by attribute handle: attributes are uniqued in the
/// context, so a handle always reads to the same value, and the ops of a graph share
/// most of theirs (operand name lists, flags, dimensions).
#[derive(Default)]
pub struct AttrCache {
    values: FxHashMap<usize, AttrValue>,
}

/// One `aten.*` op prepared for lowering.
pub struct AtenOp {
    /// `aten.add.Tensor`.
    pub target: String,
    /// The graph node's name (from the location).
    pub node: String,
    operands: Vec<(String, TValue)>,
    attrs: HashMap<String, AttrValue>,
    /// Result types from the graph's metadata.
    pub results: Vec<TensorType>,
    /// Whether anything reads each result (lowerings may skip work for unused ones).
    pub results_used: Vec<bool>,
}

impl AtenOp {
    /// Reads `op`, whose operands have been lowered to `operands` (same order).
    pub fn read(
        op: &OperationRef<'_, '_>,
        operands: &[TValue],
        node: String,
    ) -> Result<AtenOp, String> {
        AtenOp::read_with(op, operands, node, &mut AttrCache::default())
    }

    /// [`AtenOp::read`], reading each distinct attribute once per `cache`.
    pub fn read_with(
        op: &OperationRef<'_, '_>,
        operands: &[TValue],
        node: String,
        cache: &mut AttrCache,
    ) -> Result<AtenOp, String> {
        let target = op.name().as_string_ref().as_str().unwrap_or("").to_string();
        let mut attrs = HashMap::new();
        for (name, attr) in op.attributes() {
            let key = name.as_string_ref().as_str().unwrap_or("").to_string();
            let value = cache
                .values
                .entry(attr.to_raw().ptr as usize)
                .or_insert_with(|| parse_attr(&attr.to_string()))
                .clone();
            attrs.insert(key, value);
        }
        let names = match attrs.remove(aten::OPERAND_NAMES) {
            Some(AttrValue::Strs(v)) => v,
            None if operands.is_empty() => vec![],
            Some(AttrValue::Other(s)) if s == "[]" => vec![],
            _ => {
                return Err(format!(
                    "`{}` attribute missing or malformed",
                    aten::OPERAND_NAMES
                ))
            }
        };
        if names.len() != operands.len() {
            return Err(format!(
                "`{}` names {} operands but the op has {}",
                aten::OPERAND_NAMES,
                names.len(),
                operands.len()
            ));
        }
        let results = op
            .results()
            .map(|r| TensorType::from_mlir(r.r#type()).map_err(|e| e.to_string()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(AtenOp {
            target,
            node,
            operands: names.into_iter().zip(operands.iter().cloned()).collect(),
            attrs,
            results_used: vec![true; results.len()],
            results,
        })
    }

    /// The op name without the overload: `aten.add` for `aten.add.Tensor`.
    pub fn base(&self) -> &str {
        match self.target.rfind('.') {
            Some(i) if self.target[..i].contains('.') => &self.target[..i],
            _ => &self.target,
        }
    }

    pub fn result(&self, i: usize) -> LResult<&TensorType> {
        self.results
            .get(i)
            .ok_or_else(|| LowerError::Invalid(format!("expected at least {} result(s)", i + 1)))
    }

    /// True unless result `i` is known to have no uses.
    pub fn result_used(&self, i: usize) -> bool {
        self.results_used.get(i).copied().unwrap_or(false)
    }

    /// The types of the tensor operands, in order.
    pub fn operand_types(&self) -> impl Iterator<Item = &TensorType> {
        self.operands.iter().map(|(_, v)| &v.ty)
    }

    pub fn tensor_opt(&self, name: &str) -> Option<&TValue> {
        self.operands
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
    }

    pub fn tensor(&self, name: &str) -> LResult<&TValue> {
        self.tensor_opt(name)
            .ok_or_else(|| LowerError::Invalid(format!("missing tensor argument `{name}`")))
    }

    /// The first tensor operand, whatever its name (`self`, `input`).
    pub fn first_tensor(&self) -> LResult<&TValue> {
        self.operands
            .first()
            .map(|(_, v)| v)
            .ok_or_else(|| LowerError::Invalid("missing tensor argument".into()))
    }

    /// Elements of a tensor-list argument, in order (absent optional entries skipped).
    pub fn tensor_list(&self, name: &str) -> Vec<&TValue> {
        self.optional_tensor_list(name)
            .into_iter()
            .flatten()
            .collect()
    }

    /// Elements of an optional-tensor list, with `None` where the list holds None.
    pub fn optional_tensor_list(&self, name: &str) -> Vec<Option<&TValue>> {
        let mut items: Vec<(usize, &TValue)> = self
            .operands
            .iter()
            .filter_map(|(n, v)| match aten::split_element_name(n) {
                (base, Some(i)) if base == name => Some((i, v)),
                _ => None,
            })
            .collect();
        items.sort_by_key(|(i, _)| *i);
        let len = match self.attrs.get(&format!("{name}_length")) {
            Some(AttrValue::Int(n)) => *n as usize,
            _ => items.last().map(|(i, _)| i + 1).unwrap_or(0),
        };
        let mut out = vec![None; len];
        for (i, v) in items {
            if i < len {
                out[i] = Some(v);
            }
        }
        out
    }

    pub fn attr(&self, name: &str) -> Option<&AttrValue> {
        self.attrs.get(name)
    }

    pub fn int_opt(&self, name: &str) -> Option<i64> {
        match self.attrs.get(name)? {
            AttrValue::Int(i) => Some(*i),
            AttrValue::Bool(b) => Some(*b as i64),
            _ => None,
        }
    }

    pub fn int(&self, name: &str) -> LResult<i64> {
        self.int_opt(name)
            .ok_or_else(|| LowerError::Invalid(format!("missing integer argument `{name}`")))
    }

    pub fn int_or(&self, name: &str, default: i64) -> i64 {
        self.int_opt(name).unwrap_or(default)
    }

    /// A number argument (int, float or bool) as f64.
    pub fn number_opt(&self, name: &str) -> Option<f64> {
        match self.attrs.get(name)? {
            AttrValue::Int(i) => Some(*i as f64),
            AttrValue::Float(f) => Some(*f),
            AttrValue::Bool(b) => Some(*b as i64 as f64),
            _ => None,
        }
    }

    pub fn number_or(&self, name: &str, default: f64) -> f64 {
        self.number_opt(name).unwrap_or(default)
    }

    /// True when a scalar argument was given as a Python float (affects promotion).
    pub fn is_float_attr(&self, name: &str) -> bool {
        matches!(self.attrs.get(name), Some(AttrValue::Float(_)))
    }

    pub fn bool_or(&self, name: &str, default: bool) -> bool {
        match self.attrs.get(name) {
            Some(AttrValue::Bool(b)) => *b,
            Some(AttrValue::Int(i)) => *i != 0,
            _ => default,
        }
    }

    pub fn ints_opt(&self, name: &str) -> Option<Vec<i64>> {
        match self.attrs.get(name)? {
            AttrValue::Ints(v) => Some(v.clone()),
            AttrValue::Int(i) => Some(vec![*i]),
            _ => None,
        }
    }

    pub fn ints(&self, name: &str) -> LResult<Vec<i64>> {
        self.ints_opt(name)
            .ok_or_else(|| LowerError::Invalid(format!("missing integer-list argument `{name}`")))
    }

    pub fn string_opt(&self, name: &str) -> Option<&str> {
        match self.attrs.get(name)? {
            AttrValue::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn dtype_opt(&self, name: &str) -> Option<DType> {
        DType::from_mlir_name(match self.string_opt(name)? {
            "bool" => "i1",
            "u8" => "ui8",
            s => s,
        })
    }
}

/// Normalizes a possibly negative dimension for a tensor of `rank` (rank 0 accepts 0/-1).
pub fn norm_dim(dim: i64, rank: usize) -> LResult<i64> {
    let r = rank.max(1) as i64;
    let d = if dim < 0 { dim + r } else { dim };
    if d < 0 || d >= r {
        return Err(LowerError::Invalid(format!(
            "dimension {dim} out of range for a tensor of rank {rank}"
        )));
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_printed_attributes() {
        assert_eq!(parse_attr("2 : i64"), AttrValue::Int(2));
        assert_eq!(parse_attr("1.000000e-05 : f64"), AttrValue::Float(1e-5));
        assert_eq!(
            parse_attr("0xFFF0000000000000 : f64"),
            AttrValue::Float(f64::NEG_INFINITY)
        );
        assert_eq!(
            parse_attr("array<i64: 1, -1>"),
            AttrValue::Ints(vec![1, -1])
        );
        assert_eq!(parse_attr("array<i64>"), AttrValue::Ints(vec![]));
        assert_eq!(parse_attr("\"f32\""), AttrValue::Str("f32".into()));
        assert_eq!(
            parse_attr("[\"self\", \"tensors[0]\"]"),
            AttrValue::Strs(vec!["self".into(), "tensors[0]".into()])
        );
        assert_eq!(norm_dim(-1, 3).unwrap(), 2);
        assert!(norm_dim(3, 3).is_err());
    }
}
