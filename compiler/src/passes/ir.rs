//! Raw-IR helpers the in-place StableHLO passes share (DCE, CSE): the top-level
//! operations of each function body, use tests, replacement and erasure, and which
//! StableHLO ops are free of side effects.
//!
//! melior has no rewrite driver for unregistered operations, so these passes work on
//! the C API handles (`mlir-sys`) of a module they own for the duration of the call.

use melior::ir::Module;
use mlir_sys::{MlirBlock, MlirLocation, MlirOperation, MlirValue};

/// Ops that must stay even when their results are unused, or that must not be merged
/// with an identical twin: side effects (custom calls, I/O, collectives, tokens) and
/// ops that exist to constrain the compiler (optimization barriers).
const EFFECTFUL: &[&str] = &[
    "stablehlo.custom_call",
    "stablehlo.send",
    "stablehlo.recv",
    "stablehlo.infeed",
    "stablehlo.outfeed",
    "stablehlo.after_all",
    "stablehlo.all_reduce",
    "stablehlo.all_gather",
    "stablehlo.all_to_all",
    "stablehlo.reduce_scatter",
    "stablehlo.collective_permute",
    "stablehlo.collective_broadcast",
    "stablehlo.optimization_barrier",
    "stablehlo.rng",
    "stablehlo.while",
    "stablehlo.if",
    "stablehlo.case",
];

/// The name of `op` (`stablehlo.add`), without copying it: op names are identifiers,
/// interned in the context, which outlives the module and every pass over it. A name
/// that is not UTF-8 reads as `""` (it equals no name tpuc looks for).
pub fn op_name<'a>(op: MlirOperation) -> &'a str {
    // SAFETY: `op` is a live operation of the module being transformed; the
    // identifier's bytes belong to the context and are never freed before it.
    unsafe {
        let s = mlir_sys::mlirIdentifierStr(mlir_sys::mlirOperationGetName(op));
        let bytes = std::slice::from_raw_parts(s.data as *const u8, s.length);
        std::str::from_utf8(bytes).unwrap_or("")
    }
}

/// The uniqued identifier of `op`'s name: equal handles are equal names.
pub fn op_name_id(op: MlirOperation) -> usize {
    // SAFETY: as above.
    unsafe { mlir_sys::mlirOperationGetName(op).ptr as usize }
}

/// A StableHLO op with no side effects: removable when unused, mergeable with a twin.
pub fn is_pure(op: MlirOperation) -> bool {
    let name = op_name(op);
    name.starts_with("stablehlo.") && !EFFECTFUL.contains(&name)
}

/// Result `i` of `op` (which has more than `i` results).
pub fn result(op: MlirOperation, i: isize) -> MlirValue {
    // SAFETY: as above; the caller knows the result count.
    unsafe { mlir_sys::mlirOperationGetResult(op, i) }
}

pub fn num_results(op: MlirOperation) -> isize {
    // SAFETY: as above.
    unsafe { mlir_sys::mlirOperationGetNumResults(op) }
}

pub fn results(op: MlirOperation) -> Vec<MlirValue> {
    // SAFETY: as above; indices are below the result count.
    unsafe {
        (0..mlir_sys::mlirOperationGetNumResults(op))
            .map(|i| mlir_sys::mlirOperationGetResult(op, i))
            .collect()
    }
}

pub fn operands(op: MlirOperation) -> Vec<MlirValue> {
    // SAFETY: as above; indices are below the operand count.
    unsafe {
        (0..mlir_sys::mlirOperationGetNumOperands(op))
            .map(|i| mlir_sys::mlirOperationGetOperand(op, i))
            .collect()
    }
}

pub fn num_regions(op: MlirOperation) -> isize {
    // SAFETY: as above.
    unsafe { mlir_sys::mlirOperationGetNumRegions(op) }
}

pub fn has_uses(v: MlirValue) -> bool {
    // SAFETY: `v` belongs to the module being transformed.
    unsafe { !mlir_sys::mlirValueGetFirstUse(v).ptr.is_null() }
}

/// Points every use of `of` at `with`.
pub fn replace_uses(of: MlirValue, with: MlirValue) {
    // SAFETY: both values belong to the module being transformed and have one type.
    unsafe { mlir_sys::mlirValueReplaceAllUsesOfWith(of, with) }
}

/// Removes `op` from its block and destroys it. Its results must have no uses left.
pub fn erase(op: MlirOperation) {
    // SAFETY: the caller checked that no value of `op` is still used; once removed,
    // the operation is owned here and destroyed exactly once.
    unsafe {
        mlir_sys::mlirOperationRemoveFromParent(op);
        mlir_sys::mlirOperationDestroy(op);
    }
}

/// The operations of the entry block of every function of `module`, in order.
pub fn function_bodies(module: &Module<'_>) -> Vec<Vec<MlirOperation>> {
    let mut out = Vec::new();
    // SAFETY: walks the module's own blocks; nothing is modified while walking.
    unsafe {
        let mut func = mlir_sys::mlirBlockGetFirstOperation(module.body().to_raw());
        while !func.ptr.is_null() {
            if op_name(func) == "func.func" && mlir_sys::mlirOperationGetNumRegions(func) > 0 {
                let region = mlir_sys::mlirOperationGetRegion(func, 0);
                let block = mlir_sys::mlirRegionGetFirstBlock(region);
                let mut ops = Vec::new();
                if !block.ptr.is_null() {
                    let mut op = mlir_sys::mlirBlockGetFirstOperation(block);
                    while !op.ptr.is_null() {
                        ops.push(op);
                        op = mlir_sys::mlirOperationGetNextInBlock(op);
                    }
                }
                out.push(ops);
            }
            func = mlir_sys::mlirOperationGetNextInBlock(func);
        }
    }
    out
}

/// The entry block of every function of `module`, in order (what
/// [`function_bodies`] lists the ops of).
pub fn function_blocks(module: &Module<'_>) -> Vec<MlirBlock> {
    let mut out = Vec::new();
    // SAFETY: walks the module's own top-level ops; nothing is modified while walking.
    unsafe {
        let mut func = mlir_sys::mlirBlockGetFirstOperation(module.body().to_raw());
        while !func.ptr.is_null() {
            if op_name(func) == "func.func" && mlir_sys::mlirOperationGetNumRegions(func) > 0 {
                let region = mlir_sys::mlirOperationGetRegion(func, 0);
                let block = mlir_sys::mlirRegionGetFirstBlock(region);
                if !block.ptr.is_null() {
                    out.push(block);
                }
            }
            func = mlir_sys::mlirOperationGetNextInBlock(func);
        }
    }
    out
}

/// Calls `f` on each op of `block` in order, in the same walk (no list of the ops is
/// built, so each op is fetched from memory once). The next op is read before `f`
/// runs, so `f` may erase the op it is given and insert ops before it, but must not
/// erase others or insert after it.
pub fn for_each_op(block: MlirBlock, mut f: impl FnMut(MlirOperation)) {
    // SAFETY: `block` is live; `f` only erases the current op or inserts before it,
    // and the current op's successor was read before.
    unsafe {
        let mut op = mlir_sys::mlirBlockGetFirstOperation(block);
        while !op.ptr.is_null() {
            let next = mlir_sys::mlirOperationGetNextInBlock(op);
            f(op);
            op = next;
        }
    }
}

/// [`for_each_op`] on a block that may be absent (a function without a body).
pub fn for_each_op_of(block: Option<MlirBlock>, f: impl FnMut(MlirOperation)) {
    if let Some(b) = block {
        for_each_op(b, f);
    }
}

/// The op that defines `v`, unless `v` is a block argument.
pub fn defining_op(v: MlirValue) -> Option<MlirOperation> {
    // SAFETY: `v` belongs to the module being transformed.
    unsafe { mlir_sys::mlirValueIsAOpResult(v).then(|| mlir_sys::mlirOpResultGetOwner(v)) }
}

/// True when `a` and `b` have the same type (types are uniqued in the context).
pub fn same_type(a: MlirValue, b: MlirValue) -> bool {
    // SAFETY: both values belong to the module being transformed.
    unsafe { mlir_sys::mlirTypeEqual(mlir_sys::mlirValueGetType(a), mlir_sys::mlirValueGetType(b)) }
}

/// The tensor type of `v` as tpuc's plain value (`None` for non-tensor types).
pub fn tensor_type(v: MlirValue) -> Option<tpuc_dialects::TensorType> {
    // SAFETY: as above; the type outlives this call (it belongs to the context).
    let ty = unsafe { melior::ir::Type::from_raw(mlir_sys::mlirValueGetType(v)) };
    tpuc_dialects::TensorType::from_mlir(ty).ok()
}

/// Makes operand `i` of `op` be `v`.
pub fn set_operand(op: MlirOperation, i: isize, v: MlirValue) {
    // SAFETY: `i` is below the operand count and `v` has the operand's type.
    unsafe { mlir_sys::mlirOperationSetOperand(op, i, v) }
}

/// A C-API view of `s`; valid while `s` is.
fn string_ref(s: &str) -> mlir_sys::MlirStringRef {
    mlir_sys::MlirStringRef {
        data: s.as_ptr() as *const std::os::raw::c_char,
        length: s.len(),
    }
}

/// Attribute `name` of `op`, if set.
pub fn attribute(op: MlirOperation, name: &str) -> Option<mlir_sys::MlirAttribute> {
    // SAFETY: `op` is live; the string outlives the call.
    let a = unsafe { mlir_sys::mlirOperationGetAttributeByName(op, string_ref(name)) };
    (!a.ptr.is_null()).then_some(a)
}

/// Integer attribute `name` of `op`.
pub fn i64_attribute(op: MlirOperation, name: &str) -> Option<i64> {
    integer_value(attribute(op, name)?)
}

/// The value of `a` when it is an integer attribute.
pub fn integer_value(a: mlir_sys::MlirAttribute) -> Option<i64> {
    // SAFETY: guarded by the integer attribute test.
    unsafe { mlir_sys::mlirAttributeIsAInteger(a).then(|| mlir_sys::mlirIntegerAttrGetValueInt(a)) }
}

/// Every attribute of `op`, in its dictionary's (sorted) order.
pub fn named_attributes(op: MlirOperation) -> Vec<mlir_sys::MlirNamedAttribute> {
    // SAFETY: `op` is live; positions are in range.
    unsafe {
        (0..mlir_sys::mlirOperationGetNumAttributes(op))
            .map(|i| mlir_sys::mlirOperationGetAttribute(op, i))
            .collect()
    }
}

/// The dictionary attribute holding `entries`.
pub fn dictionary_attribute(
    ctx: mlir_sys::MlirContext,
    entries: &[mlir_sys::MlirNamedAttribute],
) -> mlir_sys::MlirAttribute {
    // SAFETY: every entry belongs to `ctx`; the array outlives the call.
    unsafe { mlir_sys::mlirDictionaryAttrGet(ctx, entries.len() as isize, entries.as_ptr()) }
}

/// Entry `key` of the dictionary attribute `dict` (`None` when `dict` is not a
/// dictionary or has no such entry).
pub fn dictionary_entry(
    dict: mlir_sys::MlirAttribute,
    key: &str,
) -> Option<mlir_sys::MlirAttribute> {
    // SAFETY: checked to be a dictionary before it is read; the key outlives the call.
    unsafe {
        if !mlir_sys::mlirAttributeIsADictionary(dict) {
            return None;
        }
        let a = mlir_sys::mlirDictionaryAttrGetElementByName(dict, string_ref(key));
        (!a.ptr.is_null()).then_some(a)
    }
}

/// The value of `a` when it is a string attribute.
pub fn string_value(a: mlir_sys::MlirAttribute) -> Option<String> {
    // SAFETY: checked to be a string attribute before it is read.
    unsafe {
        mlir_sys::mlirAttributeIsAString(a).then(|| text(mlir_sys::mlirStringAttrGetValue(a)))
    }
}

/// The string attribute holding `s`.
pub fn string_attribute(ctx: mlir_sys::MlirContext, s: &str) -> mlir_sys::MlirAttribute {
    // SAFETY: the string outlives the call, which copies it into the context.
    unsafe { mlir_sys::mlirStringAttrGet(ctx, string_ref(s)) }
}

/// The `array<i64: ...>` attribute `name` of `op`.
pub fn i64_array(op: MlirOperation, name: &str) -> Option<Vec<i64>> {
    let a = attribute(op, name)?;
    // SAFETY: the attribute is checked to be a dense i64 array before it is read.
    unsafe {
        if !mlir_sys::mlirAttributeIsADenseI64Array(a) {
            return None;
        }
        let n = mlir_sys::mlirDenseArrayGetNumElements(a);
        Some(
            (0..n)
                .map(|i| mlir_sys::mlirDenseI64ArrayGetElement(a, i))
                .collect(),
        )
    }
}

/// Sets attribute `name` of `op` to the attribute written as `text`.
pub fn set_attribute(op: MlirOperation, name: &str, text: &str) -> bool {
    // SAFETY: `op` is live; the strings outlive the calls; a null parse is refused.
    unsafe {
        let ctx = mlir_sys::mlirOperationGetContext(op);
        let a = mlir_sys::mlirAttributeParseGet(ctx, string_ref(text));
        if a.ptr.is_null() {
            return false;
        }
        mlir_sys::mlirOperationSetAttributeByName(op, string_ref(name), a);
    }
    true
}

/// The value of every element of `v` when `v` is a splat constant, or a broadcast of
/// one (as the lowerings write scalars), read as f64 (sign of zero kept).
pub fn splat_value(v: MlirValue) -> Option<f64> {
    let mut op = defining_op(v)?;
    if op_name(op) == "stablehlo.broadcast_in_dim" {
        op = defining_op(*operands(op).first()?)?;
    }
    if op_name(op) != "stablehlo.constant" {
        return None;
    }
    let a = attribute(op, "value")?;
    // SAFETY: each accessor is guarded by the matching type test.
    unsafe {
        if !mlir_sys::mlirAttributeIsADenseElements(a) || !mlir_sys::mlirDenseElementsAttrIsSplat(a)
        {
            return None;
        }
        let e = mlir_sys::mlirDenseElementsAttrGetSplatValue(a);
        if mlir_sys::mlirAttributeIsAFloat(e) {
            Some(mlir_sys::mlirFloatAttrGetValueDouble(e))
        } else if mlir_sys::mlirAttributeIsAInteger(e) {
            Some(mlir_sys::mlirIntegerAttrGetValueInt(e) as f64)
        } else {
            None
        }
    }
}

/// The printed form of attribute `name` of `op`.
pub fn attribute_text(op: MlirOperation, name: &str) -> Option<String> {
    let a = attribute(op, name)?;
    // SAFETY: the attribute belongs to the context, which outlives this call.
    Some(unsafe { melior::ir::Attribute::from_raw(a) }.to_string())
}

/// The integers of a dense integer attribute `name` of `op` (`dense<[[0, 1], [2, 3]]>`),
/// in row-major order; a splat (`dense<0>`) gives its one value.
pub fn dense_i64_elements(op: MlirOperation, name: &str) -> Option<Vec<i64>> {
    let text = attribute_text(op, name)?;
    let body = text.split("dense<").nth(1)?.split('>').next()?;
    body.split(|c: char| !(c.is_ascii_digit() || c == '-'))
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().ok())
        .collect()
}

/// The `(sym_name, entry block)` of every function of `module`, in order (`None` for a
/// function whose region has no block).
pub fn named_function_blocks(module: &Module<'_>) -> Vec<(String, Option<MlirBlock>)> {
    let mut out = Vec::new();
    // SAFETY: walks the module's own top-level ops; nothing is modified while walking.
    unsafe {
        let mut func = mlir_sys::mlirBlockGetFirstOperation(module.body().to_raw());
        while !func.ptr.is_null() {
            if op_name(func) == "func.func" && mlir_sys::mlirOperationGetNumRegions(func) > 0 {
                let name = attribute(func, "sym_name")
                    .filter(|a| mlir_sys::mlirAttributeIsAString(*a))
                    .map(|a| text(mlir_sys::mlirStringAttrGetValue(a)))
                    .unwrap_or_default();
                let region = mlir_sys::mlirOperationGetRegion(func, 0);
                let block = mlir_sys::mlirRegionGetFirstBlock(region);
                out.push((name, (!block.ptr.is_null()).then_some(block)));
            }
            func = mlir_sys::mlirOperationGetNextInBlock(func);
        }
    }
    out
}

/// The blocks of every region of `op`, in order.
pub fn region_blocks(op: MlirOperation) -> Vec<MlirBlock> {
    let mut out = Vec::new();
    // SAFETY: region indices are below the op's region count; blocks are walked in
    // their region's list.
    unsafe {
        for r in 0..mlir_sys::mlirOperationGetNumRegions(op) {
            let region = mlir_sys::mlirOperationGetRegion(op, r);
            let mut block = mlir_sys::mlirRegionGetFirstBlock(region);
            while !block.ptr.is_null() {
                out.push(block);
                block = mlir_sys::mlirBlockGetNextInRegion(block);
            }
        }
    }
    out
}

/// Every op of `block` and of the regions nested in it, each op before the ops of its
/// own regions.
pub fn nested_ops(block: MlirBlock) -> Vec<MlirOperation> {
    let mut out = Vec::new();
    for op in block_ops(block) {
        out.push(op);
        for b in region_blocks(op) {
            out.extend(nested_ops(b));
        }
    }
    out
}

/// The entry block of `@main`.
pub fn main_block(module: &Module<'_>) -> Option<MlirBlock> {
    named_function_blocks(module)
        .into_iter()
        .find(|(n, _)| n == "main")
        .and_then(|(_, b)| b)
}

/// The text of an MLIR identifier (a location's name, a file name).
pub fn identifier_text(id: mlir_sys::MlirIdentifier) -> String {
    // SAFETY: identifiers belong to the context, which outlives the call.
    text(unsafe { mlir_sys::mlirIdentifierStr(id) })
}

/// The text of a C-API string.
fn text(s: mlir_sys::MlirStringRef) -> String {
    // SAFETY: the string belongs to the context and is valid for `length` bytes.
    let bytes = unsafe { std::slice::from_raw_parts(s.data as *const u8, s.length) };
    String::from_utf8_lossy(bytes).into_owned()
}

/// The operations of `block`, in order.
pub fn block_ops(block: MlirBlock) -> Vec<MlirOperation> {
    let mut ops = Vec::new();
    // SAFETY: `block` is live; nothing is modified while walking.
    unsafe {
        let mut op = mlir_sys::mlirBlockGetFirstOperation(block);
        while !op.ptr.is_null() {
            ops.push(op);
            op = mlir_sys::mlirOperationGetNextInBlock(op);
        }
    }
    ops
}

/// The symbol named by the flat symbol reference attribute `name` of `op`.
pub fn symbol_ref(op: MlirOperation, name: &str) -> Option<String> {
    let a = attribute(op, name)?;
    // SAFETY: the attribute is checked to be a flat symbol reference before it is read.
    unsafe {
        mlir_sys::mlirAttributeIsAFlatSymbolRef(a)
            .then(|| text(mlir_sys::mlirFlatSymbolRefAttrGetValue(a)))
    }
}

/// True when `a` comes before `b` in their (common) block.
pub fn is_before_in_block(a: MlirOperation, b: MlirOperation) -> bool {
    // SAFETY: both ops are live and in the same block (the caller checks).
    unsafe { mlir_sys::mlirOperationIsBeforeInBlock(a, b) }
}

/// The block that holds `op`.
pub fn parent_block(op: MlirOperation) -> MlirBlock {
    // SAFETY: `op` is live.
    unsafe { mlir_sys::mlirOperationGetBlock(op) }
}

pub fn location(op: MlirOperation) -> MlirLocation {
    // SAFETY: `op` is live.
    unsafe { mlir_sys::mlirOperationGetLocation(op) }
}

/// The operations that use `v` (once per use).
pub fn users(v: MlirValue) -> Vec<MlirOperation> {
    let mut out = Vec::new();
    // SAFETY: walks the use list of a live value; nothing is modified while walking.
    unsafe {
        let mut u = mlir_sys::mlirValueGetFirstUse(v);
        while !u.ptr.is_null() {
            out.push(mlir_sys::mlirOpOperandGetOwner(u));
            u = mlir_sys::mlirOpOperandGetNextUse(u);
        }
    }
    out
}

/// The arguments and operations of the single block of `op`'s first region.
pub fn region_body(op: MlirOperation) -> Option<(Vec<MlirValue>, Vec<MlirOperation>)> {
    if num_regions(op) != 1 {
        return None;
    }
    // SAFETY: region 0 exists; its first block is checked for null before use.
    unsafe {
        let region = mlir_sys::mlirOperationGetRegion(op, 0);
        let block = mlir_sys::mlirRegionGetFirstBlock(region);
        if block.ptr.is_null() || !mlir_sys::mlirBlockGetNextInRegion(block).ptr.is_null() {
            return None;
        }
        Some((block_arguments(block), block_ops(block)))
    }
}

pub fn block_arguments(block: MlirBlock) -> Vec<MlirValue> {
    // SAFETY: indices are below the argument count of a live block.
    unsafe {
        (0..mlir_sys::mlirBlockGetNumArguments(block))
            .map(|i| mlir_sys::mlirBlockGetArgument(block, i))
            .collect()
    }
}

/// The type of `v`.
pub fn value_type(v: MlirValue) -> mlir_sys::MlirType {
    // SAFETY: `v` belongs to the module being transformed.
    unsafe { mlir_sys::mlirValueGetType(v) }
}

/// The attribute written as `text`, or `None` when it does not parse.
pub fn parse_attribute(ctx: mlir_sys::MlirContext, text: &str) -> Option<mlir_sys::MlirAttribute> {
    // SAFETY: the string outlives the call; a null result is a parse failure.
    let a = unsafe { mlir_sys::mlirAttributeParseGet(ctx, string_ref(text)) };
    (!a.ptr.is_null()).then_some(a)
}

fn named(
    ctx: mlir_sys::MlirContext,
    name: &str,
    a: mlir_sys::MlirAttribute,
) -> mlir_sys::MlirNamedAttribute {
    // SAFETY: the identifier is uniqued in the context; the string outlives the call.
    mlir_sys::MlirNamedAttribute {
        name: unsafe { mlir_sys::mlirIdentifierGet(ctx, string_ref(name)) },
        attribute: a,
    }
}

/// The function type `(args) -> results`.
fn function_type(
    ctx: mlir_sys::MlirContext,
    args: &[mlir_sys::MlirType],
    results: &[mlir_sys::MlirType],
) -> mlir_sys::MlirType {
    // SAFETY: the types belong to `ctx`; the arrays outlive the call, which copies them.
    unsafe {
        mlir_sys::mlirFunctionTypeGet(
            ctx,
            args.len() as isize,
            args.as_ptr(),
            results.len() as isize,
            results.as_ptr(),
        )
    }
}

/// Appends `func.func private @name` taking the types of `args` and returning the
/// types of `results` to `module`; returns its (empty) entry block.
pub fn append_private_function(
    module: &Module<'_>,
    name: &str,
    args: &[MlirValue],
    results: &[MlirValue],
    loc: MlirLocation,
) -> Option<MlirBlock> {
    let arg_types: Vec<mlir_sys::MlirType> = args.iter().map(|v| value_type(*v)).collect();
    let result_types: Vec<mlir_sys::MlirType> = results.iter().map(|v| value_type(*v)).collect();
    let locs = vec![loc; args.len()];
    // SAFETY: every handle belongs to the module's context; the state's arrays and
    // strings outlive `mlirOperationCreate`, which copies them; the region and block
    // are handed to the new op, which owns them from then on.
    unsafe {
        let ctx = mlir_sys::mlirLocationGetContext(loc);
        let fty = function_type(ctx, &arg_types, &result_types);
        let attrs = [
            named(ctx, "function_type", mlir_sys::mlirTypeAttrGet(fty)),
            named(
                ctx,
                "sym_name",
                mlir_sys::mlirStringAttrGet(ctx, string_ref(name)),
            ),
            named(
                ctx,
                "sym_visibility",
                mlir_sys::mlirStringAttrGet(ctx, string_ref("private")),
            ),
        ];
        let region = mlir_sys::mlirRegionCreate();
        let block =
            mlir_sys::mlirBlockCreate(arg_types.len() as isize, arg_types.as_ptr(), locs.as_ptr());
        mlir_sys::mlirRegionAppendOwnedBlock(region, block);
        let mut state = mlir_sys::mlirOperationStateGet(string_ref("func.func"), loc);
        mlir_sys::mlirOperationStateAddAttributes(&mut state, attrs.len() as isize, attrs.as_ptr());
        mlir_sys::mlirOperationStateAddOwnedRegions(&mut state, 1, &region);
        let func = mlir_sys::mlirOperationCreate(&mut state);
        if func.ptr.is_null() {
            return None;
        }
        mlir_sys::mlirBlockAppendOwnedOperation(module.body().to_raw(), func);
        Some(block)
    }
}

/// Appends a clone of `op` (regions included, same operands) to `block`.
pub fn clone_into(op: MlirOperation, block: MlirBlock) -> MlirOperation {
    // SAFETY: the clone is a new detached op, handed to `block`, which owns it.
    unsafe {
        let c = mlir_sys::mlirOperationClone(op);
        mlir_sys::mlirBlockAppendOwnedOperation(block, c);
        c
    }
}

/// Appends `func.return(values)` to `block`.
pub fn append_return(block: MlirBlock, values: &[MlirValue], loc: MlirLocation) {
    // SAFETY: as in `append_private_function`.
    unsafe {
        let mut state = mlir_sys::mlirOperationStateGet(string_ref("func.return"), loc);
        mlir_sys::mlirOperationStateAddOperands(&mut state, values.len() as isize, values.as_ptr());
        let op = mlir_sys::mlirOperationCreate(&mut state);
        mlir_sys::mlirBlockAppendOwnedOperation(block, op);
    }
}

/// Inserts the op `name(operands)` with the types of `like` as results and the
/// attributes written as `(name, text)` right before `anchor`; `None` when an
/// attribute does not parse.
pub fn insert_op_before(
    anchor: MlirOperation,
    name: &str,
    operands: &[MlirValue],
    like: &[MlirValue],
    attributes: &[(&str, String)],
) -> Option<MlirOperation> {
    let ctx = context(anchor);
    let attrs = attributes
        .iter()
        .map(|(n, t)| Some((*n, parse_attribute(ctx, t)?)))
        .collect::<Option<Vec<_>>>()?;
    let types: Vec<mlir_sys::MlirType> = like.iter().map(|v| value_type(*v)).collect();
    Some(create_op_before(anchor, name, operands, &types, &attrs))
}

/// Inserts the one-operand, one-result op `name(x) : ty` with the attributes written
/// as `(name, text)` right before `anchor`, returning its result; `None` when the type
/// or an attribute does not parse.
pub fn create_value_before(
    anchor: MlirOperation,
    name: &str,
    x: MlirValue,
    ty: &tpuc_dialects::TensorType,
    attributes: &[(&str, String)],
) -> Option<MlirValue> {
    let ctx = context(anchor);
    let ty = parse_type(ctx, &ty.mlir())?;
    let attrs = attributes
        .iter()
        .map(|(n, t)| Some((*n, parse_attribute(ctx, t)?)))
        .collect::<Option<Vec<_>>>()?;
    Some(result(
        create_op_before(anchor, name, &[x], &[ty], &attrs),
        0,
    ))
}

/// Inserts the op `name(operands) : types` with `attributes` right before `anchor`
/// (the one op builder of the in-place passes).
pub fn create_op_before(
    anchor: MlirOperation,
    name: &str,
    operands: &[MlirValue],
    types: &[mlir_sys::MlirType],
    attributes: &[(&str, mlir_sys::MlirAttribute)],
) -> MlirOperation {
    let loc = location(anchor);
    // SAFETY: as in `append_private_function`; the new op goes into `anchor`'s block.
    unsafe {
        let ctx = mlir_sys::mlirLocationGetContext(loc);
        let attrs: Vec<mlir_sys::MlirNamedAttribute> =
            attributes.iter().map(|(n, a)| named(ctx, n, *a)).collect();
        let mut state = mlir_sys::mlirOperationStateGet(string_ref(name), loc);
        mlir_sys::mlirOperationStateAddOperands(
            &mut state,
            operands.len() as isize,
            operands.as_ptr(),
        );
        mlir_sys::mlirOperationStateAddResults(&mut state, types.len() as isize, types.as_ptr());
        mlir_sys::mlirOperationStateAddAttributes(&mut state, attrs.len() as isize, attrs.as_ptr());
        let op = mlir_sys::mlirOperationCreate(&mut state);
        mlir_sys::mlirBlockInsertOwnedOperationBefore(parent_block(anchor), anchor, op);
        op
    }
}

/// Where `v` comes from: its argument's location, or its defining op's.
pub fn value_location(v: MlirValue) -> MlirLocation {
    // SAFETY: `v` is a live value.
    unsafe { mlir_sys::mlirValueGetLocation(v) }
}

/// Gives `op` the location `loc` (a node name for diagnostics and HLO metadata).
pub fn set_location(op: MlirOperation, loc: MlirLocation) {
    // SAFETY: `op` is live and `loc` belongs to its context.
    unsafe { mlir_sys::mlirOperationSetLocation(op, loc) }
}

/// The context `op` lives in.
pub fn context(op: MlirOperation) -> mlir_sys::MlirContext {
    // SAFETY: `op` is live.
    unsafe { mlir_sys::mlirOperationGetContext(op) }
}

/// The type written as `text`, or `None` when it does not parse.
pub fn parse_type(ctx: mlir_sys::MlirContext, text: &str) -> Option<mlir_sys::MlirType> {
    // SAFETY: the string outlives the call; a null result is a parse failure.
    let t = unsafe { mlir_sys::mlirTypeParseGet(ctx, string_ref(text)) };
    (!t.ptr.is_null()).then_some(t)
}

/// The op that holds `block`.
pub fn block_parent(block: MlirBlock) -> MlirOperation {
    // SAFETY: `block` is live and attached to an op.
    unsafe { mlir_sys::mlirBlockGetParentOperation(block) }
}

/// The dimension numbers of a `stablehlo.gather` without batching dimensions (the
/// form tpuc's lowerings emit); `None` for one with batching dimensions or that does
/// not parse.
pub fn gather_dims(op: MlirOperation) -> Option<tpuc_dialects::stablehlo::GatherDims> {
    use tpuc_dialects::stablehlo::attr_list_field;
    let dn = attribute_text(op, "dimension_numbers")?;
    if dn.contains("batching_dims") {
        return None;
    }
    let index_vector_dim = dn
        .split("index_vector_dim = ")
        .nth(1)?
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()?;
    Some(tpuc_dialects::stablehlo::GatherDims {
        offset_dims: attr_list_field(&dn, "offset_dims"),
        collapsed_slice_dims: attr_list_field(&dn, "collapsed_slice_dims"),
        start_index_map: attr_list_field(&dn, "start_index_map"),
        index_vector_dim,
        slice_sizes: i64_array(op, "slice_sizes")?,
    })
}

/// Row-major strides, in elements, of `shape`.
pub fn row_major_strides(shape: &[i64]) -> Vec<usize> {
    let mut s = vec![1usize; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        s[d] = s[d + 1] * shape[d + 1] as usize;
    }
    s
}

/// `name = value` for one attribute of an op's dictionary, as printed.
pub fn named_attribute_text(a: mlir_sys::MlirNamedAttribute) -> String {
    // SAFETY: the identifier and attribute belong to the context, which outlives this
    // call.
    unsafe {
        let name = text(mlir_sys::mlirIdentifierStr(a.name));
        format!("{name} = {}", melior::ir::Attribute::from_raw(a.attribute))
    }
}

/// Removes attribute `name` of `op` (nothing when it is not set).
pub fn remove_attribute(op: MlirOperation, name: &str) {
    // SAFETY: `op` is live; the string outlives the call.
    unsafe {
        mlir_sys::mlirOperationRemoveAttributeByName(op, string_ref(name));
    }
}

/// The position of `v` among `block`'s arguments, when it is one of them.
pub fn block_argument_index(v: MlirValue, block: MlirBlock) -> Option<usize> {
    // SAFETY: `v` is live; its owner is read only when it is a block argument.
    unsafe {
        (mlir_sys::mlirValueIsABlockArgument(v)
            && mlir_sys::mlirBlockEqual(mlir_sys::mlirBlockArgumentGetOwner(v), block))
        .then(|| mlir_sys::mlirBlockArgumentGetArgNumber(v) as usize)
    }
}

/// Inserts an argument of type `ty` at position `at` of `block`; returns it.
pub fn insert_block_argument(
    block: MlirBlock,
    at: usize,
    ty: mlir_sys::MlirType,
    loc: MlirLocation,
) -> MlirValue {
    // SAFETY: `block` is live and `at` at most its argument count (the caller's
    // positions come from its arguments).
    unsafe { mlir_sys::mlirBlockInsertArgument(block, at as isize, ty, loc) }
}

/// Erases argument `at` of `block`, which must have no uses left.
pub fn erase_block_argument(block: MlirBlock, at: usize) {
    // SAFETY: `at` is a position of a live block's argument without uses.
    unsafe { mlir_sys::mlirBlockEraseArgument(block, at as std::os::raw::c_uint) }
}

/// A copy of `op` (attributes, operands and result types kept) inserted before `anchor`.
pub fn clone_before(op: MlirOperation, anchor: MlirOperation) -> MlirOperation {
    // SAFETY: both ops are live; the clone is handed to `anchor`'s block, which owns it.
    unsafe {
        let new = mlir_sys::mlirOperationClone(op);
        mlir_sys::mlirBlockInsertOwnedOperationBefore(parent_block(anchor), anchor, new);
        new
    }
}

/// The result types of the function `func`, as MLIR spells them.
pub fn function_result_types(func: MlirOperation) -> Option<Vec<String>> {
    let a = attribute(func, "function_type")?;
    // SAFETY: the attribute is checked to be a type attribute holding a function type
    // before it is read; result indices are below the function type's count.
    unsafe {
        if !mlir_sys::mlirAttributeIsAType(a) {
            return None;
        }
        let fty = mlir_sys::mlirTypeAttrGetValue(a);
        if !mlir_sys::mlirTypeIsAFunction(fty) {
            return None;
        }
        Some(
            (0..mlir_sys::mlirFunctionTypeGetNumResults(fty))
                .map(|i| {
                    melior::ir::Type::from_raw(mlir_sys::mlirFunctionTypeGetResult(fty, i))
                        .to_string()
                })
                .collect(),
        )
    }
}

/// Sets attribute `name` of `op` to `value`.
pub fn set_attribute_value(op: MlirOperation, name: &str, value: mlir_sys::MlirAttribute) {
    // SAFETY: `op` is live; the name outlives the call; the attribute belongs to the
    // op's context.
    unsafe { mlir_sys::mlirOperationSetAttributeByName(op, string_ref(name), value) }
}

/// Changes the type of result `i` of `op`.
pub fn set_result_type(op: MlirOperation, i: isize, ty: mlir_sys::MlirType) {
    // SAFETY: `i` is below the result count of a live op.
    unsafe { mlir_sys::mlirValueSetType(result(op, i), ty) }
}

/// Sets the `function_type` of `func` to its entry `block`'s argument types and the
/// results it had; false when `func` has no function type.
pub fn set_function_argument_types(func: MlirOperation, block: MlirBlock) -> bool {
    let args: Vec<mlir_sys::MlirType> =
        block_arguments(block).into_iter().map(value_type).collect();
    set_function_type(func, Some(&args), None)
}

/// Sets the result types of the function `func` (its argument types kept).
pub fn set_function_result_types(func: MlirOperation, results: &[mlir_sys::MlirType]) -> bool {
    set_function_type(func, None, Some(results))
}

/// Replaces the argument and/or result types of `func`'s function type (`None`: kept).
fn set_function_type(
    func: MlirOperation,
    args: Option<&[mlir_sys::MlirType]>,
    results: Option<&[mlir_sys::MlirType]>,
) -> bool {
    let Some(old) = attribute(func, "function_type") else {
        return false;
    };
    // SAFETY: the attribute is checked to be a type attribute holding a function type
    // before it is read; the arrays outlive the call.
    unsafe {
        if !mlir_sys::mlirAttributeIsAType(old) {
            return false;
        }
        let fty = mlir_sys::mlirTypeAttrGetValue(old);
        if !mlir_sys::mlirTypeIsAFunction(fty) {
            return false;
        }
        let old_args: Vec<mlir_sys::MlirType> = (0..mlir_sys::mlirFunctionTypeGetNumInputs(fty))
            .map(|i| mlir_sys::mlirFunctionTypeGetInput(fty, i))
            .collect();
        let old_results: Vec<mlir_sys::MlirType> =
            (0..mlir_sys::mlirFunctionTypeGetNumResults(fty))
                .map(|i| mlir_sys::mlirFunctionTypeGetResult(fty, i))
                .collect();
        let new = function_type(
            mlir_sys::mlirOperationGetContext(func),
            args.unwrap_or(&old_args),
            results.unwrap_or(&old_results),
        );
        mlir_sys::mlirOperationSetAttributeByName(
            func,
            string_ref("function_type"),
            mlir_sys::mlirTypeAttrGet(new),
        );
    }
    true
}

/// The elements of an array attribute of `array<i64: ...>` attributes.
pub fn i64_array_list(a: mlir_sys::MlirAttribute) -> Option<Vec<Vec<i64>>> {
    // SAFETY: each accessor is guarded by the matching attribute kind test.
    unsafe {
        if !mlir_sys::mlirAttributeIsAArray(a) {
            return None;
        }
        (0..mlir_sys::mlirArrayAttrGetNumElements(a))
            .map(|i| {
                let e = mlir_sys::mlirArrayAttrGetElement(a, i);
                mlir_sys::mlirAttributeIsADenseI64Array(e).then(|| {
                    (0..mlir_sys::mlirDenseArrayGetNumElements(e))
                        .map(|j| mlir_sys::mlirDenseI64ArrayGetElement(e, j))
                        .collect()
                })
            })
            .collect()
    }
}

/// The elements of the array attribute `name` of `op` (`arg_attrs`, `res_attrs`).
pub fn array_elements(op: MlirOperation, name: &str) -> Vec<mlir_sys::MlirAttribute> {
    let Some(a) = attribute(op, name) else {
        return Vec::new();
    };
    // SAFETY: checked to be an array attribute; indices are in range.
    unsafe {
        if !mlir_sys::mlirAttributeIsAArray(a) {
            return Vec::new();
        }
        (0..mlir_sys::mlirArrayAttrGetNumElements(a))
            .map(|i| mlir_sys::mlirArrayAttrGetElement(a, i))
            .collect()
    }
}

/// Rewrites the array of dictionaries `name` of `func` (`arg_attrs`, `res_attrs`) with
/// `count` entries: entry `i` becomes `edit(i, its current entries)` (none when the
/// array is missing or shorter). Entries are named attributes of `func`'s context.
pub fn edit_attribute_dictionaries(
    func: MlirOperation,
    name: &str,
    count: usize,
    mut edit: impl FnMut(usize, Vec<mlir_sys::MlirNamedAttribute>) -> Vec<mlir_sys::MlirNamedAttribute>,
) {
    let ctx = context(func);
    let old = array_elements(func, name);
    let dicts: Vec<mlir_sys::MlirAttribute> = (0..count)
        .map(|i| {
            // SAFETY: a dictionary's elements are read within its element count.
            let entries = match old.get(i) {
                Some(&d) if unsafe { mlir_sys::mlirAttributeIsADictionary(d) } => unsafe {
                    (0..mlir_sys::mlirDictionaryAttrGetNumElements(d))
                        .map(|k| mlir_sys::mlirDictionaryAttrGetElement(d, k))
                        .collect()
                },
                _ => Vec::new(),
            };
            dictionary_attribute(ctx, &edit(i, entries))
        })
        .collect();
    // SAFETY: the dictionaries belong to `ctx`; the vector outlives the call.
    let array = unsafe { mlir_sys::mlirArrayAttrGet(ctx, dicts.len() as isize, dicts.as_ptr()) };
    set_attribute_value(func, name, array);
}

/// The named attribute `name = value` (in `value`'s context).
pub fn named_attribute(name: &str, value: mlir_sys::MlirAttribute) -> mlir_sys::MlirNamedAttribute {
    // SAFETY: the identifier is interned in the attribute's context before the name's
    // string goes away.
    unsafe {
        let ctx = mlir_sys::mlirAttributeGetContext(value);
        mlir_sys::mlirNamedAttributeGet(mlir_sys::mlirIdentifierGet(ctx, string_ref(name)), value)
    }
}
