//! `stablehlo-fold-constants`: computes, at compile time, values that depend on no
//! argument, and replaces each such value that a run-time op reads by one constant.
//!
//! Exported decoders build their attention masks and position ids from `arange`,
//! comparisons, cumulative sums and gathers of those (Hugging Face's mask functions);
//! XLA does not fold chains that start at an `iota` (it keeps large literals out of its
//! programs), so they ran as kernels on every call: 8 of Llama's 38 on the CPU.
//!
//! The evaluator is exact or it declines:
//! - integers and booleans wrap to their type's width; f32 and f64 arithmetic is done
//!   in f64 and rounded once (`+ - * /` of two f32s rounded from f64 is the correctly
//!   rounded f32 result); f16/bf16 values and transcendental functions are never
//!   evaluated (XLA's kernels are not correctly rounded, so the folded value could
//!   differ from what the program computes at run time);
//! - `maximum`/`minimum` of floats only without NaN (backends disagree on NaN there);
//!   integer division by zero, float-to-integer conversion of NaN or out-of-range
//!   values, and `TOTALORDER` comparisons are left to run time;
//! - no value above `MAX_ELEMENTS` elements is evaluated, so the program text stays
//!   small (a 2048-token mask stays a run-time computation).
//!
//! Ops: `constant`, `iota`, `broadcast_in_dim`, `reshape`, `transpose`, `slice`,
//! `concatenate`, `convert`, `compare`, `select`, `add`, `subtract`, `multiply`,
//! `divide`, `negate`, `abs`, `maximum`, `minimum`, `and`, `or`, `xor`, `not`,
//! `reduce_window` whose body is one `add` (cumulative sums) and `gather` (without
//! batching dimensions). A folded value whose every element is equal becomes a splat
//! constant. Values the rest of the program no longer reads are left for
//! `stablehlo-dce`.

use melior::ir::Module;
use melior::Context;
use mlir_sys::{MlirOperation, MlirValue};
use rustc_hash::FxHashMap;
use tpuc_artifact::DType;
use tpuc_dialects::TensorType;

use super::{ir, Pass};
use crate::error::CompileError;

pub struct FoldConstants;

/// The largest value (in elements) the pass evaluates.
const MAX_ELEMENTS: usize = 1 << 16;

impl Pass for FoldConstants {
    fn name(&self) -> &'static str {
        "stablehlo-fold-constants"
    }
    fn description(&self) -> &'static str {
        "evaluate argument-independent values (iota masks, position ids) exactly and emit them as constants"
    }
    fn run<'c>(&self, _ctx: &'c Context, module: Module<'c>) -> Result<Module<'c>, CompileError> {
        for body in ir::function_bodies(&module) {
            fold_body(&body);
        }
        Ok(module)
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Vals {
    I(Vec<i128>),
    F(Vec<f64>),
    B(Vec<bool>),
}

#[derive(Clone, Debug)]
struct Lit {
    ty: TensorType,
    v: Vals,
}

fn key(v: MlirValue) -> usize {
    v.ptr as usize
}

fn fold_body(body: &[MlirOperation]) {
    let mut known: FxHashMap<usize, Lit> = FxHashMap::default();
    // Constants and broadcasts of them are evaluated only when an op that reads them is
    // (most feed run-time ops and never need to be).
    let mut lazy: FxHashMap<usize, MlirOperation> = FxHashMap::default();
    for &op in body {
        let operands = operand_keys(op);
        if !operands
            .iter()
            .all(|k| known.contains_key(k) || lazy.contains_key(k))
        {
            continue;
        }
        let name = ir::op_name(op);
        if name == "stablehlo.constant"
            || (name == "stablehlo.broadcast_in_dim"
                && operands.iter().all(|k| lazy.contains_key(k)))
        {
            for r in ir::results(op) {
                lazy.insert(key(r), op);
            }
            continue;
        }
        for k in &operands {
            force(*k, &mut known, &mut lazy);
        }
        evaluate_into(op, &mut known);
    }
    for &op in body {
        // SAFETY: `op` is a live operation of the function being rewritten.
        let first = unsafe {
            (mlir_sys::mlirOperationGetNumResults(op) > 0)
                .then(|| mlir_sys::mlirOperationGetResult(op, 0))
        };
        if !first.is_some_and(|r| known.contains_key(&key(r))) {
            continue;
        }
        let name = ir::op_name(op);
        if name == "stablehlo.constant" || is_broadcast_of_constant(op) {
            continue;
        }
        for r in ir::results(op) {
            let Some(lit) = known.get(&key(r)) else {
                continue;
            };
            let read_at_run_time = ir::users(r).iter().any(|u| {
                ir::results(*u)
                    .iter()
                    .all(|x| !known.contains_key(&key(*x)))
            });
            if !read_at_run_time {
                continue;
            }
            if let Some(c) = materialize(op, lit) {
                ir::replace_uses(r, c);
            }
        }
    }
}

/// A constant holding `lit`, inserted before `anchor`. Booleans are written as an i8
/// constant and a convert: MLIR prints large i1 constants as bit-packed hex, which
/// XLA's parser reads as one byte per element and rejects.
fn materialize(anchor: MlirOperation, lit: &Lit) -> Option<MlirValue> {
    if let Vals::B(b) = &lit.v {
        let bytes = Lit {
            ty: lit.ty.with_dtype(DType::I8),
            v: Vals::I(b.iter().map(|&x| x as i128).collect()),
        };
        let c = create_before(
            anchor,
            "stablehlo.constant",
            &[],
            &bytes.ty,
            Some(&dense_text(&bytes)?),
        )?;
        return create_before(anchor, "stablehlo.convert", &[c], &lit.ty, None);
    }
    create_before(
        anchor,
        "stablehlo.constant",
        &[],
        &lit.ty,
        Some(&dense_text(lit)?),
    )
}

/// Inserts `name(operands) : ty` (with `value = <value>` when given) before `anchor`.
fn create_before(
    anchor: MlirOperation,
    name: &str,
    operands: &[MlirValue],
    ty: &TensorType,
    value: Option<&str>,
) -> Option<MlirValue> {
    let ctx = ir::context(anchor);
    let t = ir::parse_type(ctx, &ty.mlir())?;
    let attrs = match value {
        Some(v) => vec![("value", ir::parse_attribute(ctx, v)?)],
        None => vec![],
    };
    let op = ir::create_op_before(anchor, name, operands, &[t], &attrs);
    Some(ir::result(op, 0))
}

fn operand_keys(op: MlirOperation) -> Vec<usize> {
    // SAFETY: `op` is a live operation; operand indices are in range.
    unsafe {
        (0..mlir_sys::mlirOperationGetNumOperands(op))
            .map(|i| key(mlir_sys::mlirOperationGetOperand(op, i)))
            .collect()
    }
}

fn evaluate_into(op: MlirOperation, known: &mut FxHashMap<usize, Lit>) {
    if let Some(lits) = eval(op, known) {
        for (r, l) in ir::results(op).into_iter().zip(lits) {
            known.insert(key(r), l);
        }
    }
}

/// Evaluates the lazily kept constant behind `k`, and what it reads, if not done yet.
fn force(k: usize, known: &mut FxHashMap<usize, Lit>, lazy: &mut FxHashMap<usize, MlirOperation>) {
    if known.contains_key(&k) {
        return;
    }
    let Some(op) = lazy.remove(&k) else {
        return;
    };
    for o in operand_keys(op) {
        force(o, known, lazy);
    }
    evaluate_into(op, known);
}

fn is_broadcast_of_constant(op: MlirOperation) -> bool {
    ir::op_name(op) == "stablehlo.broadcast_in_dim"
        && ir::operands(op)
            .first()
            .and_then(|v| ir::defining_op(*v))
            .is_some_and(|d| ir::op_name(d) == "stablehlo.constant")
}

// ---- literals ------------------------------------------------------------------------

fn elements(shape: &[i64]) -> usize {
    shape.iter().product::<i64>().max(0) as usize
}

fn unflatten(mut i: usize, shape: &[i64]) -> Vec<i64> {
    let mut idx = vec![0i64; shape.len()];
    for d in (0..shape.len()).rev() {
        let n = shape[d].max(1) as usize;
        idx[d] = (i % n) as i64;
        i /= n;
    }
    idx
}

fn flatten(idx: &[i64], st: &[usize]) -> usize {
    idx.iter().zip(st).map(|(&i, &s)| i as usize * s).sum()
}

/// Wraps an integer to `dtype`'s width (two's complement).
fn wrap(v: i128, dtype: DType) -> i128 {
    let bits = match dtype {
        DType::I64 => 64,
        DType::I32 => 32,
        DType::I16 => 16,
        DType::I8 => 8,
        DType::U8 => return v.rem_euclid(256),
        _ => return v,
    };
    let m = 1i128 << bits;
    let r = v.rem_euclid(m);
    if r >= m / 2 {
        r - m
    } else {
        r
    }
}

/// Rounds an f64 to `dtype` (f32 or f64; others are not evaluated).
fn round(v: f64, dtype: DType) -> Option<f64> {
    match dtype {
        DType::F64 => Some(v),
        DType::F32 => Some(v as f32 as f64),
        _ => None,
    }
}

fn evaluable(ty: &TensorType) -> bool {
    !matches!(ty.dtype, DType::F16 | DType::Bf16) && elements(&ty.shape) <= MAX_ELEMENTS
}

/// Picks the same elements from `v` (a gather by flat index).
fn pick(v: &Vals, at: &[usize]) -> Option<Vals> {
    if len(v) == 1 {
        return Some(v.clone());
    }
    Some(match v {
        Vals::I(x) => Vals::I(
            at.iter()
                .map(|&i| x.get(i).copied())
                .collect::<Option<_>>()?,
        ),
        Vals::F(x) => Vals::F(
            at.iter()
                .map(|&i| x.get(i).copied())
                .collect::<Option<_>>()?,
        ),
        Vals::B(x) => Vals::B(
            at.iter()
                .map(|&i| x.get(i).copied())
                .collect::<Option<_>>()?,
        ),
    })
}

/// `v` with `n` elements: a splat (one element standing for all) repeated.
fn expand(v: &Vals, n: usize) -> Vals {
    if len(v) != 1 || n == 1 {
        return v.clone();
    }
    match v {
        Vals::I(x) => Vals::I(vec![x[0]; n]),
        Vals::F(x) => Vals::F(vec![x[0]; n]),
        Vals::B(x) => Vals::B(vec![x[0]; n]),
    }
}

fn len(v: &Vals) -> usize {
    match v {
        Vals::I(x) => x.len(),
        Vals::F(x) => x.len(),
        Vals::B(x) => x.len(),
    }
}

/// The text of a `dense<...> : tensor<...>` attribute holding `lit`, floats as their bit
/// patterns (exact).
fn dense_text(lit: &Lit) -> Option<String> {
    let el = |i: usize| -> String {
        match &lit.v {
            Vals::B(x) => x[i].to_string(),
            Vals::I(x) => x[i].to_string(),
            Vals::F(x) => match lit.ty.dtype {
                DType::F32 => format!("0x{:08X}", (x[i] as f32).to_bits()),
                _ => format!("0x{:016X}", x[i].to_bits()),
            },
        }
    };
    let n = len(&lit.v);
    if n == 0 {
        return None;
    }
    let all_equal = (1..n).all(|i| el(i) == el(0));
    let body = if all_equal {
        el(0)
    } else {
        let mut s = String::new();
        nested(&mut s, &lit.ty.shape, 0, &mut 0, &el);
        s
    };
    Some(format!("dense<{body}> : {}", lit.ty.mlir()))
}

fn nested(
    out: &mut String,
    shape: &[i64],
    d: usize,
    next: &mut usize,
    el: &dyn Fn(usize) -> String,
) {
    if d == shape.len() {
        out.push_str(&el(*next));
        *next += 1;
        return;
    }
    out.push('[');
    for i in 0..shape[d] {
        if i > 0 {
            out.push_str(", ");
        }
        nested(out, shape, d + 1, next, el);
    }
    out.push(']');
}

// ---- reading constants ---------------------------------------------------------------

fn ptrs(v: &[MlirValue]) -> Vec<usize> {
    v.iter().map(|x| key(*x)).collect()
}

fn read_constant(op: MlirOperation, ty: &TensorType) -> Option<Lit> {
    let attr = ir::attribute(op, "value")?;
    let n = elements(&ty.shape);
    // SAFETY: each accessor is guarded by the attribute and element type tests.
    unsafe {
        if !mlir_sys::mlirAttributeIsADenseElements(attr) {
            return None;
        }
        let splat = mlir_sys::mlirDenseElementsAttrIsSplat(attr);
        // A splat is kept as one element standing for all of them.
        let n = if splat { n.min(1) } else { n };
        let at = |i: usize| i as isize;
        let v = match ty.dtype {
            // Complex constants are not folded (the folder's values are real).
            DType::C64 | DType::C128 => return None,
            DType::Bool => Vals::B(
                (0..n)
                    .map(|i| mlir_sys::mlirDenseElementsAttrGetBoolValue(attr, at(i)))
                    .collect(),
            ),
            DType::I64 => Vals::I(
                (0..n)
                    .map(|i| mlir_sys::mlirDenseElementsAttrGetInt64Value(attr, at(i)) as i128)
                    .collect(),
            ),
            DType::I32 => Vals::I(
                (0..n)
                    .map(|i| mlir_sys::mlirDenseElementsAttrGetInt32Value(attr, at(i)) as i128)
                    .collect(),
            ),
            DType::I16 => Vals::I(
                (0..n)
                    .map(|i| mlir_sys::mlirDenseElementsAttrGetInt16Value(attr, at(i)) as i128)
                    .collect(),
            ),
            DType::I8 => Vals::I(
                (0..n)
                    .map(|i| mlir_sys::mlirDenseElementsAttrGetInt8Value(attr, at(i)) as i128)
                    .collect(),
            ),
            DType::U8 => Vals::I(
                (0..n)
                    .map(|i| mlir_sys::mlirDenseElementsAttrGetUInt8Value(attr, at(i)) as i128)
                    .collect(),
            ),
            DType::F32 => Vals::F(
                (0..n)
                    .map(|i| mlir_sys::mlirDenseElementsAttrGetFloatValue(attr, at(i)) as f64)
                    .collect(),
            ),
            DType::F64 => Vals::F(
                (0..n)
                    .map(|i| mlir_sys::mlirDenseElementsAttrGetDoubleValue(attr, at(i)))
                    .collect(),
            ),
            DType::F16 | DType::Bf16 => return None,
        };
        Some(Lit { ty: ty.clone(), v })
    }
}

// ---- evaluation ----------------------------------------------------------------------

const EVALUATED: &[&str] = &[
    "constant",
    "iota",
    "broadcast_in_dim",
    "reshape",
    "transpose",
    "slice",
    "concatenate",
    "convert",
    "compare",
    "select",
    "add",
    "subtract",
    "multiply",
    "divide",
    "maximum",
    "minimum",
    "and",
    "or",
    "xor",
    "negate",
    "abs",
    "not",
    "reduce_window",
    "gather",
];

fn eval(op: MlirOperation, known: &FxHashMap<usize, Lit>) -> Option<Vec<Lit>> {
    // Cheap tests first: most ops of a program read an argument somewhere.
    // SAFETY: `op` is a live operation; operand indices are in range.
    let args: Vec<&Lit> = unsafe {
        let n = mlir_sys::mlirOperationGetNumOperands(op);
        let mut args = Vec::with_capacity(n as usize);
        for i in 0..n {
            args.push(known.get(&key(mlir_sys::mlirOperationGetOperand(op, i)))?);
        }
        args
    };
    let name = ir::op_name(op);
    let name = name.strip_prefix("stablehlo.")?;
    if !EVALUATED.contains(&name) {
        return None;
    }
    let results = ir::results(op);
    let tys: Vec<TensorType> = results
        .iter()
        .map(|r| ir::tensor_type(*r))
        .collect::<Option<_>>()?;
    if tys.iter().any(|t| !evaluable(t)) {
        return None;
    }
    let ty = tys.first()?.clone();
    let one = |v: Vals| Some(vec![Lit { ty: ty.clone(), v }]);
    let n = elements(&ty.shape);
    let splats = args.iter().all(|a| len(&a.v) == 1);
    if splats
        && !args.is_empty()
        && ["broadcast_in_dim", "reshape", "transpose", "slice"].contains(&name)
    {
        return one(args[0].v.clone());
    }
    // Elementwise ops: on splats once, otherwise on full vectors.
    let full = |a: &Lit| if splats { a.v.clone() } else { expand(&a.v, n) };
    match name {
        "constant" => Some(vec![read_constant(op, &ty)?]),
        "iota" => {
            let dim = ir::i64_attribute(op, "iota_dimension")? as usize;
            if dim >= ty.rank() {
                return None;
            }
            let n = elements(&ty.shape);
            let idx: Vec<i128> = (0..n)
                .map(|i| unflatten(i, &ty.shape)[dim] as i128)
                .collect();
            one(match ty.dtype {
                DType::F32 | DType::F64 => Vals::F(idx.iter().map(|&i| i as f64).collect()),
                DType::Bool => return None,
                d => Vals::I(idx.into_iter().map(|i| wrap(i, d)).collect()),
            })
        }
        "broadcast_in_dim" => {
            let dims = ir::i64_array(op, "broadcast_dimensions")?;
            let x = args[0];
            if dims.len() != x.ty.rank() || dims.iter().any(|&d| d < 0 || d as usize >= ty.rank()) {
                return None;
            }
            let st = ir::row_major_strides(&x.ty.shape);
            let at: Vec<usize> = (0..elements(&ty.shape))
                .map(|i| {
                    let idx = unflatten(i, &ty.shape);
                    let src: Vec<i64> = dims
                        .iter()
                        .enumerate()
                        .map(|(k, &d)| {
                            if x.ty.shape[k] == 1 {
                                0
                            } else {
                                idx[d as usize]
                            }
                        })
                        .collect();
                    flatten(&src, &st)
                })
                .collect();
            one(pick(&x.v, &at)?)
        }
        "reshape" => one(args[0].v.clone()),
        "transpose" => {
            let perm = ir::i64_array(op, "permutation")?;
            let x = args[0];
            let r = ty.rank();
            if x.ty.rank() != r || perm.len() != r || perm.iter().any(|&p| p < 0 || p as usize >= r)
            {
                return None;
            }
            let st = ir::row_major_strides(&x.ty.shape);
            let at: Vec<usize> = (0..elements(&ty.shape))
                .map(|i| {
                    let idx = unflatten(i, &ty.shape);
                    let mut src = vec![0i64; idx.len()];
                    for (k, &p) in perm.iter().enumerate() {
                        src[p as usize] = idx[k];
                    }
                    flatten(&src, &st)
                })
                .collect();
            one(pick(&x.v, &at)?)
        }
        "slice" => {
            let start = ir::i64_array(op, "start_indices")?;
            let step = ir::i64_array(op, "strides")?;
            let x = args[0];
            let r = ty.rank();
            if x.ty.rank() != r || start.len() != r || step.len() != r {
                return None;
            }
            let st = ir::row_major_strides(&x.ty.shape);
            let at: Vec<usize> = (0..elements(&ty.shape))
                .map(|i| {
                    let idx = unflatten(i, &ty.shape);
                    let src: Vec<i64> = (0..idx.len())
                        .map(|d| start[d] + idx[d] * step[d])
                        .collect();
                    flatten(&src, &st)
                })
                .collect();
            one(pick(&x.v, &at)?)
        }
        "concatenate" => {
            let dim = ir::i64_attribute(op, "dimension")? as usize;
            if dim >= ty.rank() || args.iter().any(|a| a.ty.rank() != ty.rank()) {
                return None;
            }
            let mut offsets = Vec::new();
            let mut total = 0i64;
            for a in &args {
                offsets.push(total);
                total += a.ty.shape[dim];
            }
            let mut out: Vec<Vals> = Vec::new();
            let mut flat_at: Vec<(usize, usize)> = Vec::new();
            for i in 0..elements(&ty.shape) {
                let mut idx = unflatten(i, &ty.shape);
                let k = offsets.iter().rposition(|&o| o <= idx[dim])?;
                idx[dim] -= offsets[k];
                flat_at.push((k, flatten(&idx, &ir::row_major_strides(&args[k].ty.shape))));
            }
            for (k, i) in flat_at {
                out.push(pick(&args[k].v, &[i])?);
            }
            one(concat_vals(out)?)
        }
        "convert" => one(convert(&args[0].v, ty.dtype)?),
        "compare" => {
            let dir = ir::attribute_text(op, "comparison_direction")?;
            let kind = ir::attribute_text(op, "compare_type").unwrap_or_default();
            if kind.contains("TOTALORDER") {
                return None;
            }
            let dir = ["EQ", "NE", "GE", "GT", "LE", "LT"]
                .into_iter()
                .find(|d| dir.contains(&format!("direction {d}")))?;
            let cmp = |o: Option<std::cmp::Ordering>| -> bool {
                use std::cmp::Ordering::*;
                match (dir, o) {
                    ("NE", None) => true,
                    (_, None) => false,
                    ("EQ", Some(o)) => o == Equal,
                    ("NE", Some(o)) => o != Equal,
                    ("GE", Some(o)) => o != Less,
                    ("GT", Some(o)) => o == Greater,
                    ("LE", Some(o)) => o != Greater,
                    (_, Some(o)) => o == Less,
                }
            };
            let (a, b) = (full(args[0]), full(args[1]));
            if len(&a) != len(&b) {
                return None;
            }
            let v = match (&a, &b) {
                (Vals::I(a), Vals::I(b)) => a
                    .iter()
                    .zip(b)
                    .map(|(x, y)| cmp(x.partial_cmp(y)))
                    .collect(),
                (Vals::F(a), Vals::F(b)) => a
                    .iter()
                    .zip(b)
                    .map(|(x, y)| cmp(x.partial_cmp(y)))
                    .collect(),
                (Vals::B(a), Vals::B(b)) => a
                    .iter()
                    .zip(b)
                    .map(|(x, y)| cmp(x.partial_cmp(y)))
                    .collect(),
                _ => return None,
            };
            one(Vals::B(v))
        }
        "select" => {
            if splats {
                let Vals::B(p) = &args[0].v else { return None };
                return one(if p[0] {
                    args[1].v.clone()
                } else {
                    args[2].v.clone()
                });
            }
            let Vals::B(p) = &args[0].v else { return None };
            let n = elements(&ty.shape);
            let at_t: Vec<usize> = (0..n).collect();
            let (t, f) = (&args[1].v, &args[2].v);
            let choose = |i: usize| if p.len() == 1 { p[0] } else { p[i] };
            let out: Vec<Vals> = at_t
                .iter()
                .map(|&i| pick(if choose(i) { t } else { f }, &[i]))
                .collect::<Option<Vec<_>>>()?
                .into_iter()
                .collect();
            one(concat_vals(out)?)
        }
        "add" | "subtract" | "multiply" | "divide" | "maximum" | "minimum" | "and" | "or"
        | "xor" => one(binary(name, &full(args[0]), &full(args[1]), ty.dtype)?),
        "negate" | "abs" | "not" => one(unary(name, &args[0].v, ty.dtype)?),
        "reduce_window" => reduce_window_sum(op, &args, &ty).map(|l| vec![l]),
        "gather" => gather(op, &args, &ty).map(|l| vec![l]),
        _ => None,
    }
}

fn concat_vals(parts: Vec<Vals>) -> Option<Vals> {
    let mut it = parts.into_iter();
    let mut acc = it.next()?;
    for p in it {
        match (&mut acc, p) {
            (Vals::I(a), Vals::I(b)) => a.extend(b),
            (Vals::F(a), Vals::F(b)) => a.extend(b),
            (Vals::B(a), Vals::B(b)) => a.extend(b),
            _ => return None,
        }
    }
    Some(acc)
}

fn convert(v: &Vals, to: DType) -> Option<Vals> {
    Some(match (v, to) {
        (Vals::B(x), DType::Bool) => Vals::B(x.clone()),
        (Vals::B(x), DType::F32 | DType::F64) => {
            Vals::F(x.iter().map(|&b| b as u8 as f64).collect())
        }
        (Vals::B(x), d) => Vals::I(x.iter().map(|&b| wrap(b as i128, d)).collect()),
        (Vals::I(x), DType::Bool) => Vals::B(x.iter().map(|&i| i != 0).collect()),
        (Vals::I(x), DType::F32) => Vals::F(x.iter().map(|&i| (i as i64) as f32 as f64).collect()),
        (Vals::I(x), DType::F64) => Vals::F(x.iter().map(|&i| (i as i64) as f64).collect()),
        (Vals::I(x), d) => Vals::I(x.iter().map(|&i| wrap(i, d)).collect()),
        (Vals::F(x), DType::Bool) => {
            if x.iter().any(|f| f.is_nan()) {
                return None;
            }
            Vals::B(x.iter().map(|&f| f != 0.0).collect())
        }
        (Vals::F(x), d @ (DType::F32 | DType::F64)) => {
            Vals::F(x.iter().map(|&f| round(f, d)).collect::<Option<_>>()?)
        }
        (Vals::F(x), d) => {
            // Round toward zero; NaN or out of range is implementation-defined: decline.
            let t: Vec<i128> = x.iter().map(|f| f.trunc() as i128).collect();
            if x.iter()
                .zip(&t)
                .any(|(f, &i)| !f.is_finite() || wrap(i, d) != i)
            {
                return None;
            }
            Vals::I(t)
        }
    })
}

fn binary(name: &str, a: &Vals, b: &Vals, dtype: DType) -> Option<Vals> {
    // Operands come expanded to one length; a mismatch would silently truncate.
    if len(a) != len(b) {
        return None;
    }
    Some(match (a, b) {
        (Vals::I(x), Vals::I(y)) => {
            let f = |p: i128, q: i128| -> Option<i128> {
                Some(match name {
                    "add" => p + q,
                    "subtract" => p - q,
                    "multiply" => p.checked_mul(q)?,
                    "divide" => {
                        if q == 0 {
                            return None;
                        }
                        p / q
                    }
                    "maximum" => p.max(q),
                    "minimum" => p.min(q),
                    "and" => p & q,
                    "or" => p | q,
                    "xor" => p ^ q,
                    _ => return None,
                })
            };
            Vals::I(
                x.iter()
                    .zip(y)
                    .map(|(&p, &q)| f(p, q).map(|r| wrap(r, dtype)))
                    .collect::<Option<_>>()?,
            )
        }
        (Vals::F(x), Vals::F(y)) => {
            let f = |p: f64, q: f64| -> Option<f64> {
                let r = match name {
                    "add" => p + q,
                    "subtract" => p - q,
                    "multiply" => p * q,
                    "divide" => p / q,
                    "maximum" | "minimum" if p.is_nan() || q.is_nan() => return None,
                    "maximum" => p.max(q),
                    "minimum" => p.min(q),
                    _ => return None,
                };
                round(r, dtype)
            };
            Vals::F(
                x.iter()
                    .zip(y)
                    .map(|(&p, &q)| f(p, q))
                    .collect::<Option<_>>()?,
            )
        }
        (Vals::B(x), Vals::B(y)) => Vals::B(
            x.iter()
                .zip(y)
                .map(|(&p, &q)| match name {
                    "and" => Some(p && q),
                    "or" => Some(p || q),
                    "xor" => Some(p ^ q),
                    _ => None,
                })
                .collect::<Option<_>>()?,
        ),
        _ => return None,
    })
}

fn unary(name: &str, a: &Vals, dtype: DType) -> Option<Vals> {
    Some(match (name, a) {
        ("negate", Vals::I(x)) => Vals::I(x.iter().map(|&i| wrap(-i, dtype)).collect()),
        ("abs", Vals::I(x)) => Vals::I(x.iter().map(|&i| wrap(i.abs(), dtype)).collect()),
        ("not", Vals::I(x)) => Vals::I(x.iter().map(|&i| wrap(!i, dtype)).collect()),
        ("negate", Vals::F(x)) => Vals::F(x.iter().map(|&f| -f).collect()),
        ("abs", Vals::F(x)) => Vals::F(x.iter().map(|&f| f.abs()).collect()),
        ("not", Vals::B(x)) => Vals::B(x.iter().map(|&b| !b).collect()),
        _ => return None,
    })
}

/// A `reduce_window` whose body is exactly `return add(arg0, arg1)`, without dilations:
/// windowed sums (`cumsum` lowers to one).
fn reduce_window_sum(op: MlirOperation, args: &[&Lit], ty: &TensorType) -> Option<Lit> {
    if args.len() != 2 {
        return None;
    }
    let (params, body) = ir::region_body(op)?;
    let [add, ret] = body.as_slice() else {
        return None;
    };
    if ir::op_name(*add) != "stablehlo.add"
        || ir::op_name(*ret) != "stablehlo.return"
        || ptrs(&ir::operands(*add)) != ptrs(&params)
        || ptrs(&ir::operands(*ret)) != ptrs(&ir::results(*add))
    {
        return None;
    }
    let x = args[0];
    let r = x.ty.rank();
    let dims = ir::i64_array(op, "window_dimensions")?;
    let strd = ir::i64_array(op, "window_strides").unwrap_or_else(|| vec![1; r]);
    if dims.len() != r || strd.len() != r || ty.rank() != r {
        return None;
    }
    let ones = vec![1; r];
    if ir::i64_array(op, "base_dilations").is_some_and(|d| d != ones)
        || ir::i64_array(op, "window_dilations").is_some_and(|d| d != ones)
    {
        return None;
    }
    let pad = padding(op, r)?;
    let st = ir::row_major_strides(&x.ty.shape);
    let n = elements(&ty.shape);
    let window = elements(&dims);
    let sum_i = |vals: &[i128], init: i128, i: usize| -> i128 {
        let out = unflatten(i, &ty.shape);
        let mut acc = init;
        for w in 0..window {
            let off = unflatten(w, &dims);
            let src: Vec<i64> = (0..r).map(|d| out[d] * strd[d] + off[d] - pad[d]).collect();
            if src.iter().zip(&x.ty.shape).all(|(&s, &n)| s >= 0 && s < n) {
                acc += vals[flatten(&src, &st)];
            }
        }
        acc
    };
    let v = match (&expand(&x.v, elements(&x.ty.shape)), &args[1].v) {
        (Vals::I(vals), Vals::I(init)) => Vals::I(
            (0..n)
                .map(|i| wrap(sum_i(vals, init[0], i), ty.dtype))
                .collect(),
        ),
        // Float sums depend on the order XLA picks: left to run time.
        _ => return None,
    };
    Some(Lit { ty: ty.clone(), v })
}

/// Low padding of each dim from `padding = dense<[[lo, hi], ...]>`.
fn padding(op: MlirOperation, rank: usize) -> Option<Vec<i64>> {
    if ir::attribute(op, "padding").is_none() {
        return Some(vec![0; rank]);
    }
    let nums = ir::dense_i64_elements(op, "padding")?;
    match nums.len() {
        1 => Some(vec![nums[0]; rank]),
        n if n == 2 * rank => Some((0..rank).map(|d| nums[2 * d]).collect()),
        _ => None,
    }
}

/// `stablehlo.gather` without batching dimensions, by the spec's index mapping.
fn gather(op: MlirOperation, args: &[&Lit], ty: &TensorType) -> Option<Lit> {
    let (operand, indices) = (args[0], args[1]);
    let operand_v = expand(&operand.v, elements(&operand.ty.shape));
    let Vals::I(idx_vals) = expand(&indices.v, elements(&indices.ty.shape)) else {
        return None;
    };
    let tpuc_dialects::stablehlo::GatherDims {
        offset_dims,
        collapsed_slice_dims: collapsed,
        start_index_map: start_map,
        index_vector_dim: ivd,
        slice_sizes,
    } = ir::gather_dims(op)?;
    let or = operand.ty.rank();
    let ishape = &indices.ty.shape;
    let ist = ir::row_major_strides(ishape);
    let ost = ir::row_major_strides(&operand.ty.shape);
    let batch_dims: Vec<usize> = (0..ty.rank())
        .filter(|d| !offset_dims.contains(&(*d as i64)))
        .collect();
    // Operand dims that the offset dims of the result walk, in order.
    let window_dims: Vec<usize> = (0..or)
        .filter(|d| !collapsed.contains(&(*d as i64)))
        .collect();
    let well_formed = window_dims.len() == offset_dims.len()
        && slice_sizes.len() == or
        && slice_sizes
            .iter()
            .zip(&operand.ty.shape)
            .all(|(&s, &n)| (0..=n).contains(&s))
        && offset_dims
            .iter()
            .all(|&d| d >= 0 && (d as usize) < ty.rank())
        && start_map.iter().all(|&d| d >= 0 && (d as usize) < or)
        && ivd >= 0
        && (ivd as usize) <= ishape.len()
        && batch_dims.len() + usize::from((ivd as usize) < ishape.len()) == ishape.len();
    if !well_formed {
        return None;
    }
    let mut at = Vec::with_capacity(elements(&ty.shape));
    for i in 0..elements(&ty.shape) {
        let out = unflatten(i, &ty.shape);
        let batch: Vec<i64> = batch_dims.iter().map(|&d| out[d]).collect();
        // The start index vector: indices[batch with index_vector_dim inserted].
        let mut start = vec![0i64; or];
        for (k, &od) in start_map.iter().enumerate() {
            let mut ix = batch.clone();
            if (ivd as usize) < ishape.len() {
                ix.insert(ivd as usize, k as i64);
            }
            let s = *idx_vals.get(flatten(&ix, &ist))? as i64;
            let od = od as usize;
            start[od] = s.clamp(0, operand.ty.shape[od] - slice_sizes[od]);
        }
        let mut src = start;
        for (k, &wd) in window_dims.iter().enumerate() {
            src[wd] += out[offset_dims[k] as usize];
        }
        at.push(flatten(&src, &ost));
    }
    Some(Lit {
        ty: ty.clone(),
        v: pick(&operand_v, &at)?,
    })
}
