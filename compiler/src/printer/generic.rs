//! A printer for the modules `compile` builds, writing exactly MLIR's generic form.
//!
//! MLIR's printer streams every token through the C API's unbuffered callback and
//! looks every value up in a dense map; on a 100k-node graph (1.6M ops) that was the
//! largest stage of a compile. This printer writes the same text for the subset of IR
//! the compile pipeline produces, with the text of each distinct type and attribute
//! printed once by MLIR and reused (types and attributes are uniqued in the context):
//!
//! - `builtin.module` without attributes holding `func.func` ops whose only attributes
//!   are `function_type`, `sym_name` and `sym_visibility` (printed as properties);
//! - `func.return` without attributes, and unregistered ops (`stablehlo.*`), whose
//!   attributes are all discardable;
//! - regions of exactly one block, no successors, no locations.
//!
//! Value numbering follows MLIR's `SSANameState` in generic form, which implies unique
//! SSA ids across the module: regions are numbered depth first from a stack (the last
//! pushed first), each region's block arguments (`%argN`) and op results (`%N`, one id
//! per op, `%N:k` / `%N#i` for several results) in order, then the regions of its ops
//! pushed in op order. Anything else (and any attribute or type whose text could
//! involve an alias, a resource or a location) makes [`print`] return `None`, and the
//! caller prints with MLIR.

use std::fmt::Write as _;

use melior::ir::Module;
use mlir_sys::{MlirAttribute, MlirBlock, MlirOperation, MlirRegion, MlirType, MlirValue};
use rustc_hash::FxHashMap;
use std::collections::hash_map::Entry;

/// Text that only MLIR's printer writes correctly in a module (aliases, resources,
/// locations): an attribute or type containing it is not printed here.
const NEEDS_MLIR: &[&str] = &[
    "affine_map<",
    "affine_set<",
    "distinct[",
    "dense_resource<",
    "loc(",
    "#loc",
];

/// Appends each piece MLIR prints to the `String` behind `data`.
unsafe extern "C" fn append(piece: mlir_sys::MlirStringRef, data: *mut std::ffi::c_void) {
    // SAFETY: `data` is the `String` lent by `text_of`; the piece is valid for
    // `length` bytes during the callback. MLIR prints UTF-8; anything else is replaced
    // and then refused by the caller (it cannot match MLIR's own output).
    unsafe {
        let out = &mut *(data as *mut String);
        let bytes = std::slice::from_raw_parts(piece.data as *const u8, piece.length);
        match std::str::from_utf8(bytes) {
            Ok(s) => out.push_str(s),
            Err(_) => out.push('\u{FFFD}'),
        }
    }
}

fn text_of(print: impl FnOnce(mlir_sys::MlirStringCallback, *mut std::ffi::c_void)) -> String {
    let mut s = String::new();
    print(Some(append), &mut s as *mut String as *mut std::ffi::c_void);
    s
}

fn identifier(id: mlir_sys::MlirIdentifier) -> Option<&'static str> {
    // SAFETY: identifiers are interned in the context, which outlives the printing.
    unsafe {
        let s = mlir_sys::mlirIdentifierStr(id);
        std::str::from_utf8(std::slice::from_raw_parts(s.data as *const u8, s.length)).ok()
    }
}

/// `text` of a type or attribute, unless only MLIR's printer writes it correctly.
fn printable(text: String) -> Option<String> {
    let refused = NEEDS_MLIR.iter().any(|p| text.contains(p)) || text.contains('\u{FFFD}');
    (!refused).then_some(text)
}

/// True when MLIR prints `s` inside quotes unchanged (`llvm::printEscapedString`).
fn prints_unescaped(s: &str) -> bool {
    s.bytes()
        .all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\')
}

/// True when MLIR prints attribute name `s` bare (a keyword).
fn is_bare_identifier(s: &str) -> bool {
    let mut bytes = s.bytes();
    matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b == b'.')
}

/// The id of a value: `%argN` or `%N`.
#[derive(Clone, Copy)]
enum Id {
    Arg(u32),
    Op(u32),
}

struct Printer {
    out: String,
    /// Block argument ids, by value handle.
    args: FxHashMap<usize, u32>,
    /// Result ids, by the defining op's handle.
    results: FxHashMap<usize, u32>,
    types: FxHashMap<usize, String>,
    attributes: FxHashMap<usize, String>,
    /// Per op-name identifier: `Some(registered)` once checked to print unescaped.
    names: FxHashMap<usize, bool>,
    ctx: mlir_sys::MlirContext,
}

/// The single block of `region`, or `None` (empty or several blocks).
fn single_block(region: MlirRegion) -> Option<MlirBlock> {
    // SAFETY: `region` is live.
    unsafe {
        let block = mlir_sys::mlirRegionGetFirstBlock(region);
        (!block.ptr.is_null() && mlir_sys::mlirBlockGetNextInRegion(block).ptr.is_null())
            .then_some(block)
    }
}

fn ops_of(block: MlirBlock) -> impl Iterator<Item = MlirOperation> {
    // SAFETY: the block is live and not modified while printing.
    let mut op = unsafe { mlir_sys::mlirBlockGetFirstOperation(block) };
    std::iter::from_fn(move || {
        if op.ptr.is_null() {
            return None;
        }
        let cur = op;
        // SAFETY: as above.
        op = unsafe { mlir_sys::mlirOperationGetNextInBlock(cur) };
        Some(cur)
    })
}

impl Printer {
    /// Numbers every value of `module` as MLIR's generic printer does.
    fn number(&mut self, module: MlirOperation) -> Option<()> {
        let (mut next_value, mut next_arg) = (0u32, 0u32);
        // SAFETY: walks live IR without modifying it.
        unsafe {
            let mut stack: Vec<MlirRegion> = (0..mlir_sys::mlirOperationGetNumRegions(module))
                .map(|i| mlir_sys::mlirOperationGetRegion(module, i))
                .collect();
            while let Some(region) = stack.pop() {
                let block = single_block(region)?;
                for i in 0..mlir_sys::mlirBlockGetNumArguments(block) {
                    let a = mlir_sys::mlirBlockGetArgument(block, i);
                    self.args.insert(a.ptr as usize, next_arg);
                    next_arg += 1;
                }
                // The regions of this block's ops go on the stack after it is
                // numbered, in op order.
                let mut nested = Vec::new();
                for op in ops_of(block) {
                    if mlir_sys::mlirOperationGetNumResults(op) > 0 {
                        self.results.insert(op.ptr as usize, next_value);
                        next_value += 1;
                    }
                    for i in 0..mlir_sys::mlirOperationGetNumRegions(op) {
                        nested.push(mlir_sys::mlirOperationGetRegion(op, i));
                    }
                }
                stack.extend(nested);
            }
        }
        Some(())
    }

    fn value(&mut self, v: MlirValue) -> Option<()> {
        // SAFETY: `v` is a live value of the module.
        unsafe {
            if mlir_sys::mlirValueIsABlockArgument(v) {
                let id = *self.args.get(&(v.ptr as usize))?;
                self.push_id(Id::Arg(id), None);
            } else {
                let owner = mlir_sys::mlirOpResultGetOwner(v);
                let id = *self.results.get(&(owner.ptr as usize))?;
                let n = mlir_sys::mlirOperationGetNumResults(owner);
                let number = (n != 1).then(|| mlir_sys::mlirOpResultGetResultNumber(v));
                self.push_id(Id::Op(id), number);
            }
        }
        Some(())
    }

    fn push_id(&mut self, id: Id, number: Option<isize>) {
        let _ = match id {
            Id::Arg(n) => write!(self.out, "%arg{n}"),
            Id::Op(n) => write!(self.out, "%{n}"),
        };
        if let Some(i) = number {
            let _ = write!(self.out, "#{i}");
        }
    }

    fn ty(&mut self, t: MlirType) -> Option<()> {
        let text = match self.types.entry(t.ptr as usize) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => {
                // SAFETY: the type is live; the callback appends to a local string.
                let text = text_of(|cb, data| unsafe { mlir_sys::mlirTypePrint(t, cb, data) });
                e.insert(printable(text)?)
            }
        };
        self.out.push_str(text);
        Some(())
    }

    fn attribute(&mut self, a: MlirAttribute) -> Option<()> {
        let text = match self.attributes.entry(a.ptr as usize) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => {
                // SAFETY: as in `ty`.
                let text = text_of(|cb, data| unsafe { mlir_sys::mlirAttributePrint(a, cb, data) });
                e.insert(printable(text)?)
            }
        };
        self.out.push_str(text);
        Some(())
    }

    /// `name = value` (a unit attribute prints its name only).
    fn named_attribute(&mut self, a: mlir_sys::MlirNamedAttribute) -> Option<()> {
        let name = identifier(a.name)?;
        if !is_bare_identifier(name) {
            return None;
        }
        self.out.push_str(name);
        // SAFETY: the attribute is live.
        if unsafe { mlir_sys::mlirAttributeIsAUnit(a.attribute) } {
            return Some(());
        }
        self.out.push_str(" = ");
        self.attribute(a.attribute)
    }

    /// Whether the op's name is registered, once it is known to print unescaped.
    fn registered(&mut self, op: MlirOperation) -> Option<(bool, &'static str)> {
        // SAFETY: `op` is live; the name is interned in the context.
        let id = unsafe { mlir_sys::mlirOperationGetName(op) };
        let name = identifier(id)?;
        if let Some(&r) = self.names.get(&(id.ptr as usize)) {
            return Some((r, name));
        }
        if !prints_unescaped(name) {
            return None;
        }
        // SAFETY: as above; the string outlives the call.
        let r = unsafe {
            mlir_sys::mlirContextIsRegisteredOperation(
                self.ctx,
                mlir_sys::MlirStringRef {
                    data: name.as_ptr() as *const std::os::raw::c_char,
                    length: name.len(),
                },
            )
        };
        self.names.insert(id.ptr as usize, r);
        Some((r, name))
    }

    fn indent(&mut self, n: usize) {
        self.out.extend(std::iter::repeat_n(' ', n));
    }

    fn op(&mut self, op: MlirOperation, indent: usize) -> Option<()> {
        let (registered, name) = self.registered(op)?;
        // SAFETY (whole function): reads live IR; indices are below the counts.
        unsafe {
            let num_attrs = mlir_sys::mlirOperationGetNumAttributes(op);
            let properties = match (registered, name) {
                (false, _) => false,
                (true, "func.return" | "builtin.module") if num_attrs == 0 => false,
                (true, "func.func") => {
                    let allowed = (0..num_attrs).all(|i| {
                        let a = mlir_sys::mlirOperationGetAttribute(op, i);
                        matches!(
                            identifier(a.name),
                            Some("function_type" | "sym_name" | "sym_visibility")
                        )
                    });
                    if !allowed || mlir_sys::mlirOperationGetNumDiscardableAttributes(op) != 0 {
                        return None;
                    }
                    true
                }
                _ => return None,
            };
            if mlir_sys::mlirOperationGetNumSuccessors(op) != 0 {
                return None;
            }
            self.indent(indent);
            let num_results = mlir_sys::mlirOperationGetNumResults(op);
            if num_results > 0 {
                let id = *self.results.get(&(op.ptr as usize))?;
                self.push_id(Id::Op(id), None);
                if num_results > 1 {
                    let _ = write!(self.out, ":{num_results}");
                }
                self.out.push_str(" = ");
            }
            self.out.push('"');
            self.out.push_str(name);
            self.out.push_str("\"(");
            let num_operands = mlir_sys::mlirOperationGetNumOperands(op);
            for i in 0..num_operands {
                if i > 0 {
                    self.out.push_str(", ");
                }
                self.value(mlir_sys::mlirOperationGetOperand(op, i))?;
            }
            self.out.push(')');
            if properties && num_attrs > 0 {
                self.out.push_str(" <{");
                for i in 0..num_attrs {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    self.named_attribute(mlir_sys::mlirOperationGetAttribute(op, i))?;
                }
                self.out.push_str("}>");
            }
            let num_regions = mlir_sys::mlirOperationGetNumRegions(op);
            if num_regions > 0 {
                self.out.push_str(" (");
                for i in 0..num_regions {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    self.region(mlir_sys::mlirOperationGetRegion(op, i), indent)?;
                }
                self.out.push(')');
            }
            if !properties && num_attrs > 0 {
                self.out.push_str(" {");
                for i in 0..num_attrs {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    self.named_attribute(mlir_sys::mlirOperationGetAttribute(op, i))?;
                }
                self.out.push('}');
            }
            self.out.push_str(" : (");
            for i in 0..num_operands {
                if i > 0 {
                    self.out.push_str(", ");
                }
                self.ty(mlir_sys::mlirValueGetType(
                    mlir_sys::mlirOperationGetOperand(op, i),
                ))?;
            }
            self.out.push_str(") -> ");
            let wrapped = num_results != 1
                || mlir_sys::mlirTypeIsAFunction(mlir_sys::mlirValueGetType(
                    mlir_sys::mlirOperationGetResult(op, 0),
                ));
            if wrapped {
                self.out.push('(');
            }
            for i in 0..num_results {
                if i > 0 {
                    self.out.push_str(", ");
                }
                self.ty(mlir_sys::mlirValueGetType(
                    mlir_sys::mlirOperationGetResult(op, i),
                ))?;
            }
            if wrapped {
                self.out.push(')');
            }
        }
        Some(())
    }

    /// `{`, the block (with its header when it has arguments or no ops), `}`.
    fn region(&mut self, region: MlirRegion, indent: usize) -> Option<()> {
        let block = single_block(region)?;
        self.out.push_str("{\n");
        // SAFETY: reads live IR; indices are below the counts.
        unsafe {
            let num_args = mlir_sys::mlirBlockGetNumArguments(block);
            let empty = mlir_sys::mlirBlockGetFirstOperation(block).ptr.is_null();
            if empty || num_args > 0 {
                self.indent(indent);
                self.out.push_str("^bb0");
                if num_args > 0 {
                    self.out.push('(');
                    for i in 0..num_args {
                        if i > 0 {
                            self.out.push_str(", ");
                        }
                        let a = mlir_sys::mlirBlockGetArgument(block, i);
                        self.value(a)?;
                        self.out.push_str(": ");
                        self.ty(mlir_sys::mlirValueGetType(a))?;
                    }
                    self.out.push(')');
                }
                self.out.push_str(":\n");
            }
        }
        for op in ops_of(block) {
            self.op(op, indent + 2)?;
            self.out.push('\n');
        }
        self.indent(indent);
        self.out.push('}');
        Some(())
    }
}

/// The generic form of `module` as MLIR prints it without locations, or `None` when
/// the module holds IR outside what this printer handles (see the module doc).
pub fn print(module: &Module<'_>) -> Option<String> {
    let op = module.as_operation().to_raw();
    let mut p = Printer {
        out: String::new(),
        args: FxHashMap::default(),
        results: FxHashMap::default(),
        types: FxHashMap::default(),
        attributes: FxHashMap::default(),
        names: FxHashMap::default(),
        // SAFETY: the module is live.
        ctx: unsafe { mlir_sys::mlirOperationGetContext(op) },
    };
    p.number(op)?;
    // Room for the whole text at once (about 320 bytes an op on large graphs): growing
    // by doubling would copy it several times and fault in twice the pages. Capacity
    // that is not written is never touched.
    p.out.reserve((p.results.len() + p.args.len()) * 384);
    p.op(op, 0)?;
    p.out.push('\n');
    Some(p.out)
}
