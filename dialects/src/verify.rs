//! A verifier for the StableHLO tpuc emits.
//!
//! MLIR 22 has no StableHLO dialect, so `mlirOperationVerify` accepts any
//! `stablehlo.*` op. This walks a module and checks, for each op: the name is a
//! StableHLO op we know, operand/result counts, and the result type against the same
//! inference rules the builders use. Ops with regions are checked for their outer types.

use std::collections::HashMap;

use rustc_hash::{FxHashMap, FxHashSet};

use melior::ir::attribute::{
    Attribute, AttributeLike, FlatSymbolRefAttribute, IntegerAttribute, StringAttribute,
    TypeAttribute,
};
use melior::ir::block::BlockLike;
use melior::ir::operation::{OperationLike, OperationRef, WalkOrder, WalkResult};
use melior::ir::r#type::FunctionType;
use melior::ir::Type;
use melior::ir::{Module, RegionLike, ValueLike};

use crate::stablehlo::{
    attr_list_field, check_broadcast_in_dim, infer_concatenate, infer_convolution,
    infer_dot_general, infer_gather, infer_reduce, infer_reduce_window, infer_slice,
    infer_transpose, ConvParams, DotDims, GatherDims, WindowParams,
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

/// The ops of [`SAME_TYPE_ELEMENTWISE`] that take two operands (the others take one).
const BINARY_ELEMENTWISE: &[&str] = &[
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
];

/// Other StableHLO ops tpuc may emit; checked for being known and for types where
/// a rule is implemented below.
const OTHER_KNOWN: &[&str] = &[
    "stablehlo.bitcast_convert",
    "stablehlo.broadcast_in_dim",
    "stablehlo.clamp",
    "stablehlo.compare",
    "stablehlo.complex",
    "stablehlo.composite",
    "stablehlo.concatenate",
    "stablehlo.constant",
    "stablehlo.convert",
    "stablehlo.convolution",
    "stablehlo.dot_general",
    "stablehlo.dynamic_slice",
    "stablehlo.dynamic_update_slice",
    "stablehlo.fft",
    "stablehlo.gather",
    "stablehlo.if",
    "stablehlo.imag",
    "stablehlo.iota",
    "stablehlo.is_finite",
    "stablehlo.pad",
    "stablehlo.real",
    "stablehlo.reduce",
    "stablehlo.reduce_window",
    "stablehlo.reshape",
    "stablehlo.return",
    "stablehlo.reverse",
    "stablehlo.scatter",
    "stablehlo.select",
    "stablehlo.slice",
    "stablehlo.sort",
    "stablehlo.transpose",
    "stablehlo.while",
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

/// Checks every op in `module` (StableHLO ops against their rules, anything outside
/// StableHLO and `func` refused); returns all problems found.
pub fn verify_module(module: &Module<'_>) -> Result<(), Vec<Diagnostic>> {
    let mut diags = Vec::new();
    let functions = function_types(module);
    let known: FxHashMap<&str, bool> = SAME_TYPE_ELEMENTWISE
        .iter()
        .map(|n| (*n, true))
        .chain(OTHER_KNOWN.iter().map(|n| (*n, false)))
        .collect();
    let binary: FxHashSet<&str> = BINARY_ELEMENTWISE.iter().copied().collect();
    let mut texts = Memo::default();
    module.as_operation().walk(WalkOrder::PreOrder, |op| {
        let name_id = op.name();
        let name = name_id.as_string_ref().as_str().unwrap_or("");
        let checked = if name == "stablehlo.composite" {
            check_composite(&op, &functions)
        } else {
            check_op(name, &op, &known, &binary, &mut texts)
        };
        if let Some(message) = checked.err() {
            diags.push(Diagnostic {
                location: op.location().to_string(),
                op: name.to_string(),
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

/// The (argument, result) types of every function of `module`, by symbol name.
fn function_types<'c>(module: &Module<'c>) -> HashMap<String, (Vec<Type<'c>>, Vec<Type<'c>>)> {
    let mut out = HashMap::new();
    let mut next = module.body().first_operation();
    while let Some(op) = next {
        next = op.next_in_block();
        if op.name().as_string_ref().as_str() != Ok("func.func") {
            continue;
        }
        let (Ok(name), Ok(fty)) = (op.attribute("sym_name"), op.attribute("function_type")) else {
            continue;
        };
        let (Ok(name), Ok(fty)) = (
            StringAttribute::try_from(name),
            TypeAttribute::try_from(fty).and_then(|t| FunctionType::try_from(t.value())),
        ) else {
            continue;
        };
        let inputs = (0..fty.input_count())
            .filter_map(|i| fty.input(i).ok())
            .collect();
        let results = (0..fty.result_count())
            .filter_map(|i| fty.result(i).ok())
            .collect();
        out.insert(name.value().to_string(), (inputs, results));
    }
    out
}

/// `stablehlo.composite`: a string `name`, a dictionary `composite_attributes` if
/// present, an i32 `version` if present, and a `decomposition` naming a function of
/// the module whose type is the composite's operand and result types.
fn check_composite(
    op: &OperationRef<'_, '_>,
    functions: &HashMap<String, (Vec<Type<'_>>, Vec<Type<'_>>)>,
) -> Result<(), String> {
    if !attr(op, "name")?.is_string() {
        return Err("`name` must be a string".to_string());
    }
    if let Ok(a) = op.attribute("composite_attributes") {
        if !a.is_dictionary() {
            return Err("`composite_attributes` must be a dictionary".to_string());
        }
    }
    if let Ok(v) = op.attribute("version") {
        let ok = IntegerAttribute::try_from(v).is_ok_and(|i| i.r#type().to_string() == "i32");
        if !ok {
            return Err(format!("`version` must be an i32, found {v}"));
        }
    }
    let callee = FlatSymbolRefAttribute::try_from(attr(op, "decomposition")?)
        .map_err(|_| "`decomposition` must be a symbol reference".to_string())?;
    let (inputs, results) = functions.get(callee.value()).ok_or_else(|| {
        format!(
            "decomposition @{} is not a function of the module",
            callee.value()
        )
    })?;
    let operands: Vec<Type<'_>> = op.operands().map(|v| v.r#type()).collect();
    let produced: Vec<Type<'_>> = op.results().map(|v| v.r#type()).collect();
    if &operands != inputs || &produced != results {
        let list = |t: &[Type<'_>]| t.iter().map(Type::to_string).collect::<Vec<_>>().join(", ");
        return Err(format!(
            "decomposition @{} has type ({}) -> ({}), the composite ({}) -> ({})",
            callee.value(),
            list(inputs),
            list(results),
            list(&operands),
            list(&produced)
        ));
    }
    Ok(())
}

fn types_of<'a>(it: impl Iterator<Item = melior::ir::Type<'a>>) -> Result<Vec<TensorType>, String> {
    it.map(|t| TensorType::from_mlir(t).map_err(|e| e.to_string()))
        .collect()
}

/// Parses `array<i64: 1, 2>` (or `array<i64>`): a dense i64 array is read through the
/// C API (it is the only attribute spelled so); anything else is read from its text,
/// which gives the error message.
fn i64_list(attr: &Attribute<'_>) -> Result<Vec<i64>, String> {
    let raw = attr.to_raw();
    // SAFETY: the attribute is live; elements are read below the element count of an
    // attribute checked to be a dense i64 array.
    unsafe {
        if mlir_sys::mlirAttributeIsADenseI64Array(raw) {
            let n = mlir_sys::mlirDenseArrayGetNumElements(raw);
            return Ok((0..n)
                .map(|i| mlir_sys::mlirDenseI64ArrayGetElement(raw, i))
                .collect());
        }
    }
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

/// True when `op` has `arity` operands and at least one result, all of one type
/// (types are uniqued: one handle) that is a tpuc tensor type.
fn one_valid_type(op: &OperationRef<'_, '_>, arity: usize, texts: &mut Memo) -> bool {
    let raw = op.to_raw();
    // SAFETY: `op` is live; indices are below the counts.
    unsafe {
        let n = mlir_sys::mlirOperationGetNumOperands(raw);
        let r = mlir_sys::mlirOperationGetNumResults(raw);
        if n as usize != arity || r == 0 {
            return false;
        }
        let t = mlir_sys::mlirValueGetType(mlir_sys::mlirOperationGetOperand(raw, 0));
        let same = (0..n).all(|i| {
            mlir_sys::mlirValueGetType(mlir_sys::mlirOperationGetOperand(raw, i)).ptr == t.ptr
        }) && (0..r).all(|i| {
            mlir_sys::mlirValueGetType(mlir_sys::mlirOperationGetResult(raw, i)).ptr == t.ptr
        });
        same && *texts
            .valid_types
            .entry(t.ptr as usize)
            .or_insert_with(|| TensorType::from_mlir(Type::from_raw(t)).is_ok())
    }
}

/// Printed attributes, by handle (attributes are uniqued, so a handle always prints
/// the same; most ops share their dimension numbers).
#[derive(Default)]
struct Memo {
    texts: FxHashMap<usize, std::rc::Rc<str>>,
    /// Whether each type (by handle) is a tpuc tensor type.
    valid_types: FxHashMap<usize, bool>,
}

impl Memo {
    fn of(&mut self, a: &Attribute<'_>) -> std::rc::Rc<str> {
        self.texts
            .entry(a.to_raw().ptr as usize)
            .or_insert_with(|| a.to_string().into())
            .clone()
    }
}

fn attr<'c>(op: &OperationRef<'c, '_>, name: &str) -> Result<Attribute<'c>, String> {
    op.attribute(name)
        .map_err(|_| format!("missing attribute `{name}`"))
}

/// Parses `3 : i64`.
fn scalar_int(attr: &Attribute<'_>) -> Result<i64, String> {
    let text = attr.to_string();
    text.split(':')
        .next()
        .and_then(|s| s.trim().parse().ok())
        .ok_or_else(|| format!("expected an integer, found {text}"))
}

/// Parses `dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>` (or a splat `dense<1> : ...`)
/// into `n` (low, high) pairs.
fn dense_pairs(attr: &Attribute<'_>, n: usize) -> Result<Vec<(i64, i64)>, String> {
    let text = attr.to_string();
    let body = text
        .strip_prefix("dense<")
        .and_then(|s| s.split('>').next())
        .ok_or_else(|| format!("expected a dense padding attribute, found {text}"))?;
    let nums: Vec<i64> = body
        .split(['[', ']', ','])
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let nums = if nums.len() == 1 {
        vec![nums[0]; 2 * n]
    } else {
        nums
    };
    if nums.len() != 2 * n {
        return Err(format!("padding {text} does not have {n} pairs"));
    }
    Ok(nums.chunks(2).map(|c| (c[0], c[1])).collect())
}

/// Parses `name = [1, 2]` fields out of a `#stablehlo.dot<...>` attribute.
fn expect(found: &TensorType, want: &TensorType) -> Result<(), String> {
    if found == want {
        Ok(())
    } else {
        Err(format!("result type {found} should be {want}"))
    }
}

/// The types region `index` of `op` yields (its block's terminator operands) and its
/// block's argument types.
fn region_signature(
    op: &OperationRef<'_, '_>,
    index: usize,
) -> Result<(Vec<TensorType>, Vec<TensorType>), String> {
    let block = op
        .region(index)
        .ok()
        .and_then(|r| r.first_block())
        .ok_or_else(|| format!("region #{index} has no block"))?;
    let args = (0..block.argument_count())
        .map(|i| {
            block
                .argument(i)
                .map_err(|e| e.to_string())
                .and_then(|a| TensorType::from_mlir(a.r#type()).map_err(|e| e.to_string()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    // `stablehlo.return` is unregistered, so MLIR does not know it is a terminator: it
    // is the block's last op.
    let mut last = block.first_operation();
    while let Some(next) = last.and_then(|o| o.next_in_block()) {
        last = Some(next);
    }
    let terminator = last
        .filter(|o| o.name().as_string_ref().as_str() == Ok("stablehlo.return"))
        .ok_or_else(|| format!("region #{index} does not end with stablehlo.return"))?;
    let yields = types_of(terminator.operands().map(|v| v.r#type()))?;
    Ok((args, yields))
}

fn show(types: &[TensorType]) -> String {
    let v: Vec<String> = types.iter().map(|t| t.to_string()).collect();
    format!("({})", v.join(", "))
}

/// `stablehlo.if`: a `tensor<i1>` predicate; both branches take no arguments and yield
/// the result types.
fn check_if(
    op: &OperationRef<'_, '_>,
    operands: &[TensorType],
    results: &[TensorType],
) -> Result<(), String> {
    if operands.len() != 1 || operands[0] != TensorType::scalar(tpuc_artifact::DType::Bool) {
        return Err(format!(
            "expected one tensor<i1> predicate, found {}",
            show(operands)
        ));
    }
    if op.region_count() != 2 {
        return Err(format!("expected 2 regions, found {}", op.region_count()));
    }
    for (i, branch) in ["true", "false"].iter().enumerate() {
        let (args, yields) = region_signature(op, i)?;
        if !args.is_empty() {
            return Err(format!("the {branch} branch takes arguments"));
        }
        if yields != results {
            return Err(format!(
                "the {branch} branch yields {} but the op returns {}",
                show(&yields),
                show(results)
            ));
        }
    }
    Ok(())
}

/// `stablehlo.while`: results, the condition's and the body's arguments and the body's
/// yields all have the operands' types; the condition yields one `tensor<i1>`.
fn check_while(
    op: &OperationRef<'_, '_>,
    operands: &[TensorType],
    results: &[TensorType],
) -> Result<(), String> {
    if results != operands {
        return Err(format!(
            "results {} differ from the loop state {}",
            show(results),
            show(operands)
        ));
    }
    if op.region_count() != 2 {
        return Err(format!("expected 2 regions, found {}", op.region_count()));
    }
    let (cond_args, cond_yields) = region_signature(op, 0)?;
    let (body_args, body_yields) = region_signature(op, 1)?;
    if cond_args != operands || body_args != operands {
        return Err("the condition's or the body's arguments differ from the loop state".into());
    }
    if cond_yields != [TensorType::scalar(tpuc_artifact::DType::Bool)] {
        return Err(format!(
            "the condition yields {}, not one tensor<i1>",
            show(&cond_yields)
        ));
    }
    if body_yields != operands {
        return Err(format!(
            "the body yields {} for the loop state {}",
            show(&body_yields),
            show(operands)
        ));
    }
    Ok(())
}

/// `known` maps the ops of [`SAME_TYPE_ELEMENTWISE`] (to `true`) and [`OTHER_KNOWN`];
/// `binary` holds [`BINARY_ELEMENTWISE`] (built once per module).
fn check_op(
    name: &str,
    op: &OperationRef<'_, '_>,
    known: &FxHashMap<&str, bool>,
    binary: &FxHashSet<&str>,
    texts: &mut Memo,
) -> Result<(), String> {
    if !name.starts_with("stablehlo.") {
        // The structure around the StableHLO ops; anything else (an op name without
        // its dialect, an ATen op left unlowered) is nothing a PJRT plugin takes.
        return match name {
            "builtin.module" | "func.func" | "func.return" | "func.call" => Ok(()),
            _ => Err("not an operation of StableHLO or func: no PJRT plugin takes it".to_string()),
        };
    }
    let Some(&same_type_elementwise) = known.get(name) else {
        return Err("not a StableHLO operation tpuc knows".to_string());
    };
    if name == "stablehlo.return" {
        return Ok(());
    }
    if same_type_elementwise && one_valid_type(op, if binary.contains(name) { 2 } else { 1 }, texts)
    {
        // What the checks below accept when every operand and result has one type.
        return Ok(());
    }
    let operands = types_of(op.operands().map(|v| v.r#type()))?;
    let results = types_of(op.results().map(|v| v.r#type()))?;
    // Inference errors already name the op; keep only their message.
    let e = |r: Result<TensorType, DialectError>| {
        r.map_err(|e| match e {
            DialectError::InvalidOp { message, .. } => message,
            other => other.to_string(),
        })
    };
    match name {
        "stablehlo.if" => return check_if(op, &operands, &results),
        "stablehlo.while" => return check_while(op, &operands, &results),
        _ => {}
    }
    let result = results.first().ok_or("operation has no result")?;
    if name == "stablehlo.abs" && operands.len() == 1 && operands[0].dtype.is_complex() {
        // |z| of a complex tensor is real.
        return expect(
            result,
            &operands[0].with_dtype(operands[0].dtype.complex_part()),
        );
    }
    if same_type_elementwise {
        let first = operands.first().ok_or("operation has no operands")?;
        let arity = if binary.contains(name) { 2 } else { 1 };
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
        "stablehlo.complex" => {
            let [re, im] = operands.as_slice() else {
                return Err("complex needs a real and an imaginary part".to_string());
            };
            let Some(c) = re.dtype.complex_of().filter(|_| re == im) else {
                return Err(format!("parts must be one f32 or f64 type: {re} and {im}"));
            };
            expect(result, &re.with_dtype(c))?;
        }
        "stablehlo.real" | "stablehlo.imag" => {
            let x = operands.first().ok_or("missing operand")?;
            expect(result, &x.with_dtype(x.dtype.complex_part()))?;
        }
        "stablehlo.fft" => {
            let x = operands.first().ok_or("missing operand")?;
            let text = texts.of(&attr(op, "fft_type")?);
            let kind = text
                .trim_start_matches("#stablehlo<fft_type ")
                .trim_end_matches('>')
                .trim();
            let kind = crate::stablehlo::FftKind::parse(kind)
                .ok_or_else(|| format!("unknown fft_type {text}"))?;
            let lengths = i64_list(&attr(op, "fft_length")?)?;
            expect(result, &e(crate::stablehlo::infer_fft(x, kind, &lengths))?)?;
        }
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
            expect(result, &operands[0].with_dtype(tpuc_artifact::DType::Bool))?;
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
        "stablehlo.sort" if operands != results => {
            return Err("sort results must have the operands' types".to_string());
        }
        "stablehlo.scatter" => {
            expect(result, operands.first().ok_or("missing operand")?)?;
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
        "stablehlo.dynamic_slice" | "stablehlo.dynamic_update_slice" => {
            let update = name == "stablehlo.dynamic_update_slice";
            let x = operands.first().ok_or("missing operand")?;
            let first_index = if update { 2 } else { 1 };
            let starts = &operands[first_index.min(operands.len())..];
            if starts.len() != x.rank()
                || starts
                    .iter()
                    .any(|s| s.rank() != 0 || !s.dtype.is_integer())
            {
                return Err(format!(
                    "expected {} integer scalar start indices, found {}",
                    x.rank(),
                    show(starts)
                ));
            }
            if update {
                expect(result, x)?;
            } else {
                let sizes = i64_list(&attr(op, "slice_sizes")?)?;
                expect(result, &TensorType::new(sizes, x.dtype))?;
            }
        }
        "stablehlo.slice" => {
            let s = i64_list(&attr(op, "start_indices")?)?;
            let l = i64_list(&attr(op, "limit_indices")?)?;
            let st = i64_list(&attr(op, "strides")?)?;
            expect(result, &e(infer_slice(&operands[0], &s, &l, &st))?)?;
        }
        "stablehlo.concatenate" => {
            let text = texts.of(&attr(op, "dimension")?);
            let dim: i64 = text
                .split(':')
                .next()
                .and_then(|s| s.trim().parse().ok())
                .ok_or("bad dimension attribute")?;
            let refs: Vec<&TensorType> = operands.iter().collect();
            expect(result, &e(infer_concatenate(&refs, dim))?)?;
        }
        "stablehlo.dot_general" => {
            let text = texts.of(&attr(op, "dot_dimension_numbers")?);
            let d = DotDims::parse(&text);
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
        "stablehlo.iota" => {
            let dim = scalar_int(&attr(op, "iota_dimension")?)?;
            if dim < 0 || dim as usize >= result.rank() {
                return Err(format!("iota_dimension {dim} out of range for {result}"));
            }
        }
        "stablehlo.pad" => {
            let x = operands.first().ok_or("missing operand")?;
            let low = i64_list(&attr(op, "edge_padding_low")?)?;
            let high = i64_list(&attr(op, "edge_padding_high")?)?;
            let interior = i64_list(&attr(op, "interior_padding")?)?;
            if low.len() != x.rank() || high.len() != x.rank() || interior.len() != x.rank() {
                return Err("padding lists must match the operand rank".to_string());
            }
            let shape: Vec<i64> = (0..x.rank())
                .map(|i| low[i] + high[i] + x.shape[i] + (x.shape[i] - 1).max(0) * interior[i])
                .collect();
            expect(result, &x.with_shape(shape))?;
        }
        "stablehlo.reduce_window" => {
            let x = operands.first().ok_or("missing operand")?;
            if let Ok(base) = attr(op, "base_dilations") {
                if i64_list(&base)?.iter().any(|&d| d != 1) {
                    // Base dilation is valid StableHLO that tpuc never emits; not checked.
                    return Ok(());
                }
            }
            let p = WindowParams {
                dims: i64_list(&attr(op, "window_dimensions")?)?,
                strides: i64_list(&attr(op, "window_strides")?)?,
                padding: dense_pairs(&attr(op, "padding")?, x.rank())?,
                window_dilations: i64_list(&attr(op, "window_dilations")?)?,
            };
            expect(result, &e(infer_reduce_window(x, &p))?)?;
        }
        "stablehlo.convolution" => {
            let layout = texts.of(&attr(op, "dimension_numbers")?);
            if !layout.contains("[b, f") {
                // Only tpuc's own NCHW-style layout is checked.
                return Ok(());
            }
            if operands.len() != 2 {
                return Err("convolution needs an input and a kernel".to_string());
            }
            let n = operands[0].rank().saturating_sub(2);
            let p = ConvParams {
                strides: i64_list(&attr(op, "window_strides")?)?,
                padding: dense_pairs(&attr(op, "padding")?, n)?,
                lhs_dilation: i64_list(&attr(op, "lhs_dilation")?)?,
                rhs_dilation: i64_list(&attr(op, "rhs_dilation")?)?,
                feature_groups: scalar_int(&attr(op, "feature_group_count")?)?,
                batch_groups: match op.attribute("batch_group_count") {
                    Ok(a) => scalar_int(&a)?,
                    Err(_) => 1,
                },
            };
            let inferred = e(infer_convolution(&operands[0], &operands[1], &p))?;
            if inferred.shape != result.shape {
                return Err(format!(
                    "result type {result} should have shape {:?}",
                    inferred.shape
                ));
            }
        }
        "stablehlo.gather" => {
            let text = texts.of(&attr(op, "dimension_numbers")?);
            if operands.len() != 2 {
                return Err("gather needs an operand and indices".to_string());
            }
            let d = GatherDims {
                offset_dims: attr_list_field(&text, "offset_dims"),
                collapsed_slice_dims: attr_list_field(&text, "collapsed_slice_dims"),
                start_index_map: attr_list_field(&text, "start_index_map"),
                index_vector_dim: text
                    .split("index_vector_dim = ")
                    .nth(1)
                    .and_then(|t| {
                        t.trim_end_matches('>')
                            .split(|c: char| !c.is_ascii_digit())
                            .next()
                    })
                    .and_then(|t| t.parse().ok())
                    .ok_or("bad index_vector_dim")?,
                slice_sizes: i64_list(&attr(op, "slice_sizes")?)?,
            };
            expect(result, &e(infer_gather(&operands[0], &operands[1], &d))?)?;
        }
        _ => {}
    }
    Ok(())
}
