//! A verifier for the StableHLO tpuc emits.
//!
//! MLIR 22 has no StableHLO dialect, so `mlirOperationVerify` accepts any
//! `stablehlo.*` op. This walks a module and checks, for each op: the name is a
//! StableHLO op we know, operand/result counts, and the result type against the same
//! inference rules the builders use. Ops with regions are checked for their outer types.

use melior::ir::attribute::Attribute;
use melior::ir::operation::{OperationLike, OperationRef, WalkOrder, WalkResult};
use melior::ir::{Module, ValueLike};

use crate::stablehlo::{
    check_broadcast_in_dim, infer_concatenate, infer_dot_general, infer_reduce, infer_slice,
    infer_transpose, DotDims,
};
use crate::types::TensorType;
use crate::DialectError;

/// StableHLO ops whose result has exactly the operands' type.
const SAME_TYPE_ELEMENTWISE: &[&str] = &[
    "stablehlo.abs",
    "stablehlo.add",
    "stablehlo.and",
    "stablehlo.atan2",
    "stablehlo.cbrt",
    "stablehlo.ceil",
    "stablehlo.cosine",
    "stablehlo.divide",
    "stablehlo.exponential",
    "stablehlo.exponential_minus_one",
    "stablehlo.floor",
    "stablehlo.log",
    "stablehlo.log_plus_one",
    "stablehlo.logistic",
    "stablehlo.maximum",
    "stablehlo.minimum",
    "stablehlo.multiply",
    "stablehlo.negate",
    "stablehlo.not",
    "stablehlo.or",
    "stablehlo.power",
    "stablehlo.remainder",
    "stablehlo.round_nearest_afz",
    "stablehlo.round_nearest_even",
    "stablehlo.rsqrt",
    "stablehlo.shift_left",
    "stablehlo.shift_right_arithmetic",
    "stablehlo.shift_right_logical",
    "stablehlo.sign",
    "stablehlo.sine",
    "stablehlo.sqrt",
    "stablehlo.subtract",
    "stablehlo.tan",
    "stablehlo.tanh",
    "stablehlo.xor",
];

/// Other StableHLO ops tpuc may emit; checked for being known and for types where
/// a rule is implemented below.
const OTHER_KNOWN: &[&str] = &[
    "stablehlo.broadcast_in_dim",
    "stablehlo.clamp",
    "stablehlo.compare",
    "stablehlo.concatenate",
    "stablehlo.constant",
    "stablehlo.convert",
    "stablehlo.convolution",
    "stablehlo.dot_general",
    "stablehlo.gather",
    "stablehlo.iota",
    "stablehlo.is_finite",
    "stablehlo.pad",
    "stablehlo.reduce",
    "stablehlo.reduce_window",
    "stablehlo.reshape",
    "stablehlo.return",
    "stablehlo.reverse",
    "stablehlo.select",
    "stablehlo.slice",
    "stablehlo.transpose",
];

/// One problem found by the verifier, with the op's location.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    pub location: String,
    pub op: String,
    pub message: String,
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}: {}", self.location, self.op, self.message)
    }
}

/// Checks every `stablehlo.*` op in `module`; returns all problems found.
pub fn verify_module(module: &Module<'_>) -> Result<(), Vec<Diagnostic>> {
    let mut diags = Vec::new();
    module.as_operation().walk(WalkOrder::PreOrder, |op| {
        let name = op.name().as_string_ref().as_str().unwrap_or("").to_string();
        if let Some(message) = check_op(&name, &op).err() {
            diags.push(Diagnostic {
                location: op.location().to_string(),
                op: name,
                message,
            });
        }
        WalkResult::Advance
    });
    if diags.is_empty() {
        Ok(())
    } else {
        Err(diags)
    }
}

fn types_of<'a>(it: impl Iterator<Item = melior::ir::Type<'a>>) -> Result<Vec<TensorType>, String> {
    it.map(|t| TensorType::from_mlir(t).map_err(|e| e.to_string()))
        .collect()
}

/// Parses `array<i64: 1, 2>` (or `array<i64>`).
fn i64_list(attr: &Attribute<'_>) -> Result<Vec<i64>, String> {
    let text = attr.to_string();
    let inner = text
        .strip_prefix("array<i64")
        .and_then(|s| s.strip_suffix('>'))
        .ok_or_else(|| format!("expected array<i64>, found {text}"))?;
    let inner = inner.trim_start_matches(':').trim();
    if inner.is_empty() {
        return Ok(vec![]);
    }
    inner
        .split(',')
        .map(|s| {
            s.trim()
                .parse()
                .map_err(|_| format!("bad integer in {text}"))
        })
        .collect()
}

fn attr<'c>(op: &OperationRef<'c, '_>, name: &str) -> Result<Attribute<'c>, String> {
    op.attribute(name)
        .map_err(|_| format!("missing attribute `{name}`"))
}

/// Parses `name = [1, 2]` fields out of a `#stablehlo.dot<...>` attribute.
fn dot_field(text: &str, name: &str) -> Vec<i64> {
    let Some(pos) = text.find(&format!("{name} = [")) else {
        return vec![];
    };
    let rest = &text[pos + name.len() + 4..];
    let end = rest.find(']').unwrap_or(0);
    rest[..end]
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect()
}

fn expect(found: &TensorType, want: &TensorType) -> Result<(), String> {
    if found == want {
        Ok(())
    } else {
        Err(format!("result type {found} should be {want}"))
    }
}

fn check_op(name: &str, op: &OperationRef<'_, '_>) -> Result<(), String> {
    if !name.starts_with("stablehlo.") {
        return Ok(());
    }
    let known = SAME_TYPE_ELEMENTWISE.contains(&name) || OTHER_KNOWN.contains(&name);
    if !known {
        return Err("not a StableHLO operation tpuc knows".to_string());
    }
    if name == "stablehlo.return" {
        return Ok(());
    }
    let operands = types_of(op.operands().map(|v| v.r#type()))?;
    let results = types_of(op.results().map(|v| v.r#type()))?;
    let e = |r: Result<TensorType, DialectError>| r.map_err(|e| e.to_string());
    let result = results.first().ok_or("operation has no result")?;
    if SAME_TYPE_ELEMENTWISE.contains(&name) {
        let first = operands.first().ok_or("operation has no operands")?;
        let arity = if [
            "stablehlo.add",
            "stablehlo.subtract",
            "stablehlo.multiply",
            "stablehlo.divide",
            "stablehlo.maximum",
            "stablehlo.minimum",
            "stablehlo.power",
            "stablehlo.remainder",
            "stablehlo.and",
            "stablehlo.or",
            "stablehlo.xor",
            "stablehlo.atan2",
            "stablehlo.shift_left",
            "stablehlo.shift_right_arithmetic",
            "stablehlo.shift_right_logical",
        ]
        .contains(&name)
        {
            2
        } else {
            1
        };
        if operands.len() != arity {
            return Err(format!(
                "expected {arity} operands, found {}",
                operands.len()
            ));
        }
        if operands.iter().any(|t| t != first) {
            return Err("operand types differ".to_string());
        }
        return expect(result, first);
    }
    match name {
        "stablehlo.convert" => {
            let x = operands.first().ok_or("missing operand")?;
            if x.shape != result.shape {
                return Err(format!("convert changes the shape: {x} -> {result}"));
            }
        }
        "stablehlo.compare" => {
            if operands.len() != 2 || operands[0] != operands[1] {
                return Err("compare needs two operands of one type".to_string());
            }
            expect(result, &operands[0].with_dtype(tpuc_runtime::DType::Bool))?;
        }
        "stablehlo.select" => {
            if operands.len() != 3
                || operands[1] != operands[2]
                || operands[0].shape != operands[1].shape
            {
                return Err("select needs a predicate and two operands of one shape".to_string());
            }
            expect(result, &operands[1])?;
        }
        "stablehlo.reverse" => {
            expect(result, operands.first().ok_or("missing operand")?)?;
        }
        "stablehlo.reshape" => {
            let x = operands.first().ok_or("missing operand")?;
            if x.num_elements() != result.num_elements() || x.dtype != result.dtype {
                return Err(format!(
                    "reshape {x} -> {result} changes the element count or type"
                ));
            }
        }
        "stablehlo.transpose" => {
            let perm = i64_list(&attr(op, "permutation")?)?;
            expect(result, &e(infer_transpose(&operands[0], &perm))?)?;
        }
        "stablehlo.broadcast_in_dim" => {
            let dims = i64_list(&attr(op, "broadcast_dimensions")?)?;
            check_broadcast_in_dim(&operands[0], result, &dims).map_err(|e| e.to_string())?;
        }
        "stablehlo.slice" => {
            let s = i64_list(&attr(op, "start_indices")?)?;
            let l = i64_list(&attr(op, "limit_indices")?)?;
            let st = i64_list(&attr(op, "strides")?)?;
            expect(result, &e(infer_slice(&operands[0], &s, &l, &st))?)?;
        }
        "stablehlo.concatenate" => {
            let text = attr(op, "dimension")?.to_string();
            let dim: i64 = text
                .split(':')
                .next()
                .and_then(|s| s.trim().parse().ok())
                .ok_or("bad dimension attribute")?;
            let refs: Vec<&TensorType> = operands.iter().collect();
            expect(result, &e(infer_concatenate(&refs, dim))?)?;
        }
        "stablehlo.dot_general" => {
            let text = attr(op, "dot_dimension_numbers")?.to_string();
            let d = DotDims {
                lhs_batch: dot_field(&text, "lhs_batching_dimensions"),
                rhs_batch: dot_field(&text, "rhs_batching_dimensions"),
                lhs_contract: dot_field(&text, "lhs_contracting_dimensions"),
                rhs_contract: dot_field(&text, "rhs_contracting_dimensions"),
            };
            if operands.len() != 2 {
                return Err("dot_general needs two operands".to_string());
            }
            let inferred = e(infer_dot_general(&operands[0], &operands[1], &d))?;
            if inferred.shape != result.shape {
                return Err(format!(
                    "result type {result} should have shape {:?}",
                    inferred.shape
                ));
            }
        }
        "stablehlo.reduce" => {
            let dims = i64_list(&attr(op, "dimensions")?)?;
            let n = operands.len() / 2;
            for (i, operand) in operands.iter().take(n).enumerate() {
                let want = e(infer_reduce(operand, &dims))?;
                expect(results.get(i).ok_or("missing result")?, &want)?;
            }
        }
        _ => {}
    }
    Ok(())
}
