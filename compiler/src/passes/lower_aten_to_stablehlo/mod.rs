//! `lower-aten-to-stablehlo`: rewrites every `aten.*` op into StableHLO.
//!
//! The pass rebuilds each function: it walks the ATen-level body in order, maps every
//! value to its lowered counterpart and emits StableHLO through the typed builders of
//! `tpuc-dialects`. Conversions are grouped by op family, one file each (see
//! [`lower_op`]). Every op that has no lowering is collected, so one run reports all of
//! them with counts and the first node of each.

mod attention;
mod complex;
mod control_flow;
mod creation;
mod elementwise;
mod gather;
mod library_ops;
mod linear;
mod normalization;
mod op;
mod pooling;
mod reduction;
mod resize;
mod sorting;
mod view_like;

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use melior::ir::attribute::AttributeLike;
use melior::ir::block::{BlockLike, BlockRef};
use melior::ir::operation::{OperationLike, OperationRef};
use melior::ir::{Location, Module, RegionLike, ValueLike};
use melior::Context;
use tpuc_dialects::func::append_function;
use tpuc_dialects::{DialectError, Emitter, TValue, TensorType};

pub use library_ops::{
    chunk_rows as grouped_mm_chunk_rows, grouped_mm_in, ragged_dot as grouped_mm_ragged_dot,
    ExpertShare, GroupedMmForm, GROUPED_MM,
};
pub use op::{AtenOp, AttrCache};

use crate::error::{CompileError, UnsupportedOp};

/// Why one op could not be lowered.
#[derive(Debug)]
pub enum LowerError {
    /// No lowering exists for this target (collected and reported together).
    UnknownTarget,
    /// A lowering exists but not for these arguments.
    Unsupported(String),
    /// The op's arguments are inconsistent.
    Invalid(String),
}

impl From<DialectError> for LowerError {
    fn from(e: DialectError) -> Self {
        LowerError::Invalid(e.to_string())
    }
}

pub type LResult<T> = Result<T, LowerError>;

/// A family's entry point: `None` when the op is not one of its ops.
type Family = fn(&AtenOp, &Emitter) -> Option<LResult<Vec<TValue>>>;

/// A lowering supplied by a user of the library for a target tpuc does not know (a
/// custom operator such as `mylib.my_op.default`, or an ATen op to override). It gets
/// the same op view and emitter as the built-in families.
#[derive(Clone, Debug)]
pub struct CustomLowering {
    /// The node target without `torch.ops.`: `mylib.my_op.default`.
    pub target: String,
    pub lower: fn(&AtenOp, &Emitter) -> LResult<Vec<TValue>>,
}

/// Dispatches one ATen op to its family. `Ok(results)` replaces the op's results.
fn lower_op(
    op: &AtenOp,
    e: &Emitter,
    custom: &[CustomLowering],
    grouped_mm: GroupedMmForm,
) -> LResult<Vec<TValue>> {
    if let Some(c) = custom.iter().find(|c| c.target == op.target) {
        return (c.lower)(op, e);
    }
    complex::refuse_complex(op)?;
    if let Some(result) = library_ops::lower(op, e, grouped_mm) {
        return result;
    }
    let families: [Family; 12] = [
        complex::lower,
        elementwise::lower,
        view_like::lower,
        linear::lower,
        reduction::lower,
        normalization::lower,
        pooling::lower,
        resize::lower,
        sorting::lower,
        gather::lower,
        creation::lower,
        attention::lower,
    ];
    for family in families {
        if let Some(result) = family(op, e) {
            return result;
        }
    }
    Err(LowerError::UnknownTarget)
}

/// Name of a location created by the importer (`loc("node"(...))`), or its text.
pub fn location_name(loc: Location<'_>) -> String {
    // A name location whose name prints as itself (printable ASCII without `"` or
    // `\`, which MLIR would escape) reads without printing.
    // SAFETY: the location belongs to the live context; its name is interned there.
    unsafe {
        let raw = loc.to_raw();
        if mlir_sys::mlirLocationIsAName(raw) {
            let s = mlir_sys::mlirIdentifierStr(mlir_sys::mlirLocationNameGetName(raw));
            let bytes = std::slice::from_raw_parts(s.data as *const u8, s.length);
            if bytes
                .iter()
                .all(|&b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\')
            {
                if let Ok(name) = std::str::from_utf8(bytes) {
                    return name.to_string();
                }
            }
        }
    }
    let text = loc.to_string();
    // loc("name"(...)) or loc("name")
    if let Some(rest) = text.strip_prefix("loc(\"") {
        if let Some(end) = rest.find('"') {
            return rest[..end].to_string();
        }
    }
    text
}

fn has_uses(v: &TValue) -> bool {
    // SAFETY: the value belongs to the module being lowered, alive for this call.
    let first = unsafe { mlir_sys::mlirValueGetFirstUse(v.raw()) };
    !first.ptr.is_null()
}

/// Maps the results of an op that failed to lower to placeholder values of the same
/// types, so that the ops after it are still checked (and every unsupported target
/// reported). The module is discarded with an error, so placeholders never escape.
fn stand_in(
    e: &Emitter,
    old_results: &[TValue],
    map: &mut FxHashMap<usize, TValue>,
) -> Result<(), CompileError> {
    for old in old_results {
        let v = e
            .op("tpuc.unlowered", &[], &[], std::slice::from_ref(&old.ty))
            .map_err(internal)?;
        if let Some(v) = v.into_iter().next() {
            map.insert(old.raw().ptr as usize, v);
        }
    }
    Ok(())
}

fn internal(e: impl std::fmt::Display) -> CompileError {
    CompileError::Internal(e.to_string())
}

/// Runs the conversion on every function of `module`, returning the lowered module.
pub fn run<'c>(ctx: &'c Context, module: &Module<'c>) -> Result<Module<'c>, CompileError> {
    run_with(ctx, module, &[], GroupedMmForm::default())
}

/// [`run`] with user-supplied lowerings, tried before the built-in ones, and the form
/// of grouped matmuls.
pub fn run_with<'c>(
    ctx: &'c Context,
    module: &Module<'c>,
    custom: &[CustomLowering],
    grouped_mm: GroupedMmForm,
) -> Result<Module<'c>, CompileError> {
    let out = Module::new(Location::unknown(ctx));
    let mut unsupported: BTreeMap<String, UnsupportedOp> = BTreeMap::new();
    let mut first_error: Option<CompileError> = None;

    let mut funcs = Vec::new();
    let mut cursor = module.body().first_operation();
    while let Some(op) = cursor {
        funcs.push(op);
        cursor = op.next_in_block();
    }
    for func in funcs {
        if func.name().as_string_ref().as_str().unwrap_or("") != "func.func" {
            return Err(internal(
                "module contains an operation other than func.func",
            ));
        }
        lower_function(
            ctx,
            &out,
            &func,
            (custom, grouped_mm),
            &mut unsupported,
            &mut first_error,
        )?;
    }
    if !unsupported.is_empty() {
        return Err(CompileError::UnsupportedOps(
            unsupported.into_values().collect(),
        ));
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    Ok(out)
}

fn lower_function<'c>(
    ctx: &'c Context,
    out: &Module<'c>,
    func: &OperationRef<'c, '_>,
    (custom, grouped_mm): (&[CustomLowering], GroupedMmForm),
    unsupported: &mut BTreeMap<String, UnsupportedOp>,
    first_error: &mut Option<CompileError>,
) -> Result<(), CompileError> {
    let name = func
        .attribute("sym_name")
        .map_err(internal)?
        .to_string()
        .trim_matches('"')
        .to_string();
    let block = func
        .region(0)
        .ok()
        .and_then(|r| r.first_block())
        .ok_or_else(|| internal("function without a body"))?;
    let mut args = Vec::new();
    for i in 0..block.argument_count() {
        let a = block.argument(i).map_err(internal)?;
        let ty = TensorType::from_mlir(a.r#type()).map_err(|e| CompileError::Node {
            node: format!("argument #{i}"),
            target: "func.func".into(),
            message: e.to_string(),
        })?;
        args.push((ty, a.location()));
    }
    let terminator = block
        .terminator()
        .ok_or_else(|| internal("function without a terminator"))?;
    let results = terminator
        .operands()
        .map(|v| TensorType::from_mlir(v.r#type()).map_err(internal))
        .collect::<Result<Vec<_>, _>>()?;
    let new_func =
        append_function(ctx, out, &name, &args, &results, func.location()).map_err(internal)?;
    if let Ok(visibility) = func.attribute("sym_visibility") {
        // Decompositions of composites are private, and stay so.
        // SAFETY: the function was just appended; the attribute belongs to its context.
        unsafe {
            let name = mlir_sys::mlirStringRefCreateFromCString(c"sym_visibility".as_ptr());
            mlir_sys::mlirOperationSetAttributeByName(new_func.op, name, visibility.to_raw());
        }
    }

    let mut lowering = Lowering {
        custom,
        grouped_mm,
        unsupported,
        first_error,
        attr_cache: AttrCache::default(),
        map: FxHashMap::default(),
    };
    for i in 0..block.argument_count() {
        let a = block.argument(i).map_err(internal)?;
        lowering
            .map
            .insert(key(a.to_raw()), new_func.arguments[i].clone());
    }
    if let Some(returned) = lowering.lower_block(&block, &new_func.emitter)? {
        let refs: Vec<&TValue> = returned.iter().collect();
        new_func.emitter.func_return(&refs).map_err(internal)?;
    }
    Ok(())
}

fn key(v: mlir_sys::MlirValue) -> usize {
    v.ptr as usize
}

/// The state of one function's lowering: the map from ATen-level values to their
/// lowered counterparts (nested regions included) and what went wrong so far.
struct Lowering<'a> {
    custom: &'a [CustomLowering],
    grouped_mm: GroupedMmForm,
    unsupported: &'a mut BTreeMap<String, UnsupportedOp>,
    first_error: &'a mut Option<CompileError>,
    attr_cache: AttrCache,
    map: FxHashMap<usize, TValue>,
}

impl Lowering<'_> {
    /// Records an op that could not be lowered; the first error is kept.
    fn fail(&mut self, node: String, target: String, message: String) {
        if self.first_error.is_none() {
            *self.first_error = Some(CompileError::Node {
                node,
                target,
                message,
            });
        }
    }

    /// Lowers the ops of `block` (whose arguments are already mapped) into `e`'s
    /// block, and returns the lowered operands of its terminator (`func.return` or a
    /// subgraph's `tpuc.yield`), which the caller emits as its own terminator; `None`
    /// when one of them could not be lowered (already reported).
    fn lower_block<'c>(
        &mut self,
        block: &BlockRef<'c, '_>,
        e: &Emitter<'c>,
    ) -> Result<Option<Vec<TValue>>, CompileError> {
        let mut cursor = block.first_operation();
        while let Some(op) = cursor {
            cursor = op.next_in_block();
            let op_name = op.name().as_string_ref().as_str().unwrap_or("").to_string();
            let loc = op.location();
            let e = e.at(loc);
            // Operands whose producer failed to lower are skipped silently: the
            // producer was already reported.
            let mut operands = Vec::new();
            let mut missing = false;
            for v in op.operands() {
                match self.map.get(&key(v.to_raw())) {
                    Some(t) => operands.push(t.clone()),
                    None => missing = true,
                }
            }
            if op_name == "func.return" || op_name == "tpuc.yield" {
                return Ok((!missing).then_some(operands));
            }
            if missing {
                continue;
            }
            let node = location_name(loc);
            if op_name == "stablehlo.composite" {
                // From `aten-outline-composites`: its decomposition is lowered as a
                // function of its own; the op itself only needs its operands mapped.
                let refs: Vec<&TValue> = operands.iter().collect();
                let types = result_types(&op)?;
                let copy = e
                    .append_copy(op.to_raw(), &refs, &types)
                    .map_err(internal)?;
                for (i, new) in copy.into_iter().enumerate() {
                    let r = op.result(i).map_err(internal)?;
                    self.map.insert(key(r.to_raw()), new);
                }
                continue;
            }
            if op_name.starts_with("stablehlo.") {
                // Already lowered (partial pipelines in lit tests): keep as is.
                return Err(CompileError::Node {
                    node,
                    target: op_name,
                    message: "input already contains StableHLO; run lower-aten-to-stablehlo on ATen-level modules".into(),
                });
            }
            let old_results: Vec<TValue> = (0..op.result_count())
                .map(|i| {
                    let r = op.result(i).map_err(internal)?;
                    TValue::from_value(r.into()).map_err(internal)
                })
                .collect::<Result<_, _>>()?;
            let attempt = if op_name.starts_with("higher_order.") {
                self.lower_control_flow(&op, &op_name, &operands, &old_results, &e)?
            } else {
                let mut aten =
                    AtenOp::read_with(&op, &operands, node.clone(), &mut self.attr_cache).map_err(
                        |m| CompileError::Node {
                            node: node.clone(),
                            target: op_name.clone(),
                            message: m,
                        },
                    )?;
                aten.results_used = old_results.iter().map(has_uses).collect();
                // A lowering bug must not take the process down: a panic becomes an
                // error that names the node.
                let (custom, grouped_mm) = (self.custom, self.grouped_mm);
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    lower_op(&aten, &e, custom, grouped_mm)
                }))
                    .unwrap_or_else(|_| {
                        Err(LowerError::Invalid(
                            "internal error: the lowering of this op panicked (please report it with this model)".into(),
                        ))
                    })
            };
            let lowered = match attempt {
                Ok(v) => v,
                Err(LowerError::UnknownTarget) => {
                    let entry =
                        self.unsupported
                            .entry(op_name.clone())
                            .or_insert_with(|| UnsupportedOp {
                                target: op_name.clone(),
                                count: 0,
                                first_node: node.clone(),
                            });
                    entry.count += 1;
                    stand_in(&e, &old_results, &mut self.map)?;
                    continue;
                }
                Err(LowerError::Unsupported(m)) | Err(LowerError::Invalid(m)) => {
                    self.fail(node, op_name, m);
                    stand_in(&e, &old_results, &mut self.map)?;
                    continue;
                }
            };
            if lowered.len() < old_results.len() {
                // Extra results nobody reads may be left out by a lowering (e.g. the
                // saved statistics of a normalization); used ones must exist.
                if old_results[lowered.len()..].iter().any(has_uses) {
                    let m = format!(
                        "only the first {} result(s) of this op are supported, but a later one is used",
                        lowered.len()
                    );
                    self.fail(node, op_name, m);
                    stand_in(&e, &old_results, &mut self.map)?;
                    continue;
                }
            }
            for (old, new) in old_results.iter().zip(lowered) {
                // The graph's metadata is the contract: element types follow it; a
                // shape disagreement is a bug in a lowering.
                let new = if new.ty.dtype != old.ty.dtype {
                    e.convert(&new, old.ty.dtype).map_err(internal)?
                } else {
                    new
                };
                if new.ty != old.ty {
                    return Err(CompileError::Node {
                        node: node.clone(),
                        target: op_name.clone(),
                        message: format!(
                            "internal: lowering produced {} where the graph says {}",
                            new.ty, old.ty
                        ),
                    });
                }
                self.map.insert(key(old.raw()), new);
            }
        }
        Err(internal("block without a terminator"))
    }

    /// A `higher_order.*` op (see [`control_flow`]): its regions are lowered by this
    /// same walk, each into the block the control-flow lowering builds for it.
    fn lower_control_flow<'c>(
        &mut self,
        op: &OperationRef<'c, '_>,
        target: &str,
        operands: &[TValue],
        old_results: &[TValue],
        e: &Emitter<'c>,
    ) -> Result<LResult<Vec<TValue>>, CompileError> {
        let segments: Vec<usize> =
            crate::passes::ir::i64_array(op.to_raw(), "tpuc.operand_segments")
                .ok_or_else(|| internal("a higher-order op without tpuc.operand_segments"))?
                .into_iter()
                .map(|n| n as usize)
                .collect();
        let results: Vec<TensorType> = old_results.iter().map(|v| v.ty.clone()).collect();
        let mut internal_error = None;
        let mut region =
            |index: usize, inner: &Emitter<'c>, args: &[TValue]| -> LResult<Vec<TValue>> {
                let block = op
                    .region(index)
                    .ok()
                    .and_then(|r| r.first_block())
                    .ok_or_else(|| LowerError::Invalid(format!("subgraph #{index} is missing")))?;
                if block.argument_count() != args.len() {
                    return Err(LowerError::Invalid(format!(
                        "subgraph #{index} takes {} inputs but is given {}",
                        block.argument_count(),
                        args.len()
                    )));
                }
                for (i, v) in args.iter().enumerate() {
                    let a = block
                        .argument(i)
                        .map_err(|e| LowerError::Invalid(e.to_string()))?;
                    self.map.insert(key(a.to_raw()), v.clone());
                }
                match self.lower_block(&block, inner) {
                    Ok(Some(v)) => Ok(v),
                    Ok(None) => Err(LowerError::Invalid(format!(
                        "subgraph #{index} could not be lowered"
                    ))),
                    Err(err) => {
                        let message = err.to_string();
                        internal_error = Some(err);
                        Err(LowerError::Invalid(message))
                    }
                }
            };
        let lowered = control_flow::lower(target, operands, &segments, &results, e, &mut region);
        if let Some(err) = internal_error {
            return Err(err);
        }
        Ok(lowered.unwrap_or(Err(LowerError::UnknownTarget)))
    }
}

/// The result types of `op`.
fn result_types(op: &OperationRef<'_, '_>) -> Result<Vec<TensorType>, CompileError> {
    (0..op.result_count())
        .map(|i| {
            let r = op.result(i).map_err(internal)?;
            TensorType::from_mlir(r.r#type()).map_err(internal)
        })
        .collect()
}
