//! Typed builders for the StableHLO operations tpuc emits.
//!
//! Every builder checks its operands, infers the result type and appends one op in
//! generic form to the emitter's block. The same inference rules back
//! [`crate::verify`], so what we build and what we accept agree.

use melior::ir::attribute::{Attribute, AttributeLike};
use melior::ir::block::BlockLike;
use melior::ir::r#type::TypeLike;
use melior::ir::{Block, Location, Region, RegionLike, Value, ValueLike};
use melior::Context;
use mlir_sys::{MlirBlock, MlirOperation, MlirType, MlirValue};
use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::rc::Rc;
use tpuc_artifact::DType;

use crate::types::TensorType;
use crate::DialectError;

type Result<T> = std::result::Result<T, DialectError>;

/// The attributes of a `stablehlo.reduce_window` over `p` (no base dilation).
fn window_attrs(p: &WindowParams) -> [(&'static str, String); 5] {
    [
        ("window_dimensions", i64_array(&p.dims)),
        ("window_strides", i64_array(&p.strides)),
        ("base_dilations", i64_array(&vec![1; p.dims.len()])),
        ("window_dilations", i64_array(&p.window_dilations)),
        ("padding", padding_attr(&p.padding)),
    ]
}

/// An SSA value with its tensor type.
///
/// It keeps the raw MLIR handle so that values can be stored in maps across the
/// rewrite of a function; a `TValue` is only meaningful while the module that owns the
/// defining operation is alive, which every user in tpuc scopes to one pass.
#[derive(Clone, Debug)]
pub struct TValue {
    raw: MlirValue,
    pub ty: TensorType,
}

/// True when `v` is a float splat constant that is not NaN, or a broadcast of one (the
/// form `splat` values take).
fn is_nan_free_constant(v: &TValue) -> bool {
    use mlir_sys::*;
    let mut raw = v.raw;
    // SAFETY: read-only queries on live values and operations of the module being built.
    unsafe {
        loop {
            if !mlirValueIsAOpResult(raw) {
                return false;
            }
            let op = mlirOpResultGetOwner(raw);
            let ident = mlirIdentifierStr(mlirOperationGetName(op));
            let name = std::slice::from_raw_parts(ident.data as *const u8, ident.length);
            match name {
                b"stablehlo.broadcast_in_dim" | b"stablehlo.convert" => {
                    raw = mlirOperationGetOperand(op, 0);
                }
                b"stablehlo.constant" => {
                    let key = "value";
                    let attr = mlirOperationGetAttributeByName(
                        op,
                        MlirStringRef {
                            data: key.as_ptr() as *const _,
                            length: key.len(),
                        },
                    );
                    if attr.ptr.is_null()
                        || !mlirAttributeIsADenseElements(attr)
                        || !mlirDenseElementsAttrIsSplat(attr)
                    {
                        return false;
                    }
                    let splat = mlirDenseElementsAttrGetSplatValue(attr);
                    return if mlirAttributeIsAFloat(splat) {
                        !mlirFloatAttrGetValueDouble(splat).is_nan()
                    } else {
                        // An integer constant converted to a float is never NaN.
                        mlirAttributeIsAInteger(splat)
                    };
                }
                _ => return false,
            }
        }
    }
}

impl TValue {
    /// Wraps an existing MLIR value, reading its type.
    pub fn from_value(value: Value<'_, '_>) -> Result<TValue> {
        Ok(TValue {
            raw: value.to_raw(),
            ty: TensorType::from_mlir(value.r#type())?,
        })
    }

    pub fn value<'c>(&self) -> Value<'c, '_> {
        // SAFETY: see the type's documentation: the defining module outlives the TValue.
        unsafe { Value::from_raw(self.raw) }
    }

    pub fn raw(&self) -> MlirValue {
        self.raw
    }

    pub fn dtype(&self) -> DType {
        self.ty.dtype
    }

    pub fn shape(&self) -> &[i64] {
        &self.ty.shape
    }

    pub fn rank(&self) -> usize {
        self.ty.rank()
    }
}
/// `stablehlo.fft`'s transform kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FftKind {
    /// complex -> complex, forward.
    Fft,
    /// complex -> complex, inverse (scaled by 1/n).
    Ifft,
    /// real -> complex, the n/2 + 1 non-redundant outputs of the last dimension.
    Rfft,
    /// complex (n/2 + 1 in the last dimension) -> real (n), inverse (scaled by 1/n).
    Irfft,
}

impl FftKind {
    pub fn name(self) -> &'static str {
        match self {
            FftKind::Fft => "FFT",
            FftKind::Ifft => "IFFT",
            FftKind::Rfft => "RFFT",
            FftKind::Irfft => "IRFFT",
        }
    }

    pub fn parse(name: &str) -> Option<FftKind> {
        Some(match name {
            "FFT" => FftKind::Fft,
            "IFFT" => FftKind::Ifft,
            "RFFT" => FftKind::Rfft,
            "IRFFT" => FftKind::Irfft,
            _ => return None,
        })
    }
}

/// The result type of `stablehlo.fft` (the rules of the StableHLO spec).
pub fn infer_fft(x: &TensorType, kind: FftKind, lengths: &[i64]) -> Result<TensorType> {
    let bad = |m: String| Err(DialectError::invalid("stablehlo.fft", m));
    let k = lengths.len();
    if !(1..=3).contains(&k) || k > x.rank() {
        return bad(format!("{k} fft lengths for a rank-{} operand", x.rank()));
    }
    let last = x.rank() - 1;
    let inner = &x.shape[x.rank() - k..];
    match kind {
        FftKind::Fft | FftKind::Ifft => {
            if !x.dtype.is_complex() || inner != lengths {
                return bad(format!(
                    "{} needs a complex operand ending in {lengths:?}, not {x}",
                    kind.name()
                ));
            }
            Ok(x.clone())
        }
        FftKind::Rfft => {
            let Some(c) = x.dtype.complex_of() else {
                return bad(format!("RFFT needs an f32 or f64 operand, not {x}"));
            };
            if inner != lengths {
                return bad(format!("RFFT of {x} with lengths {lengths:?}"));
            }
            let mut shape = x.shape.clone();
            shape[last] = lengths[k - 1] / 2 + 1;
            Ok(TensorType::new(shape, c))
        }
        FftKind::Irfft => {
            let n = lengths[k - 1];
            if !x.dtype.is_complex()
                || inner[..k - 1] != lengths[..k - 1]
                || x.shape[last] != n / 2 + 1
            {
                return bad(format!("IRFFT of {x} with lengths {lengths:?}"));
            }
            let mut shape = x.shape.clone();
            shape[last] = n;
            Ok(TensorType::new(shape, x.dtype.complex_part()))
        }
    }
}

/// Comparison directions of `stablehlo.compare`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Cmp {
    fn keyword(self) -> &'static str {
        match self {
            Cmp::Eq => "EQ",
            Cmp::Ne => "NE",
            Cmp::Lt => "LT",
            Cmp::Le => "LE",
            Cmp::Gt => "GT",
            Cmp::Ge => "GE",
        }
    }
}

/// The combining function of a `stablehlo.reduce` / `reduce_window` body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceKind {
    Add,
    Mul,
    /// Maximum that propagates NaN (PyTorch's `amax`, max pooling).
    Max,
    /// Plain `stablehlo.maximum`, whose NaN handling XLA leaves to the backend (its CPU
    /// backend drops NaNs). Only where NaNs are taken care of otherwise: a maximum used
    /// as a shift (softmax, logsumexp: a NaN in the row makes the result NaN through the
    /// rest of the formula whatever the maximum is), or max pooling with a separate
    /// any-NaN window. The checks of `Max` cost two compares and two selects per element
    /// in the reduction's inner loop.
    MaxUnchecked,
    Min,
    And,
    Or,
}

impl ReduceKind {
    fn op_name(self) -> &'static str {
        match self {
            ReduceKind::Add => "stablehlo.add",
            ReduceKind::Mul => "stablehlo.multiply",
            ReduceKind::Max | ReduceKind::MaxUnchecked => "stablehlo.maximum",
            ReduceKind::Min => "stablehlo.minimum",
            ReduceKind::And => "stablehlo.and",
            ReduceKind::Or => "stablehlo.or",
        }
    }
}

/// Dimension numbers of `stablehlo.dot_general`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DotDims {
    pub lhs_batch: Vec<i64>,
    pub rhs_batch: Vec<i64>,
    pub lhs_contract: Vec<i64>,
    pub rhs_contract: Vec<i64>,
}

/// Parameters of `stablehlo.convolution` in the layout PyTorch uses
/// (input `[N, C, spatial...]`, kernel `[O, I/groups, spatial...]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConvParams {
    pub strides: Vec<i64>,
    /// `(low, high)` per spatial dim.
    pub padding: Vec<(i64, i64)>,
    pub lhs_dilation: Vec<i64>,
    pub rhs_dilation: Vec<i64>,
    pub feature_groups: i64,
    /// `batch_group_count`: the input's batch split into groups, each convolved with its
    /// share of the kernel's output features (a grouped convolution's weight gradient).
    pub batch_groups: i64,
}

/// Parameters of `stablehlo.reduce_window`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WindowParams {
    pub dims: Vec<i64>,
    pub strides: Vec<i64>,
    pub padding: Vec<(i64, i64)>,
    pub window_dilations: Vec<i64>,
}

/// Dimension numbers of `stablehlo.gather`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GatherDims {
    pub offset_dims: Vec<i64>,
    pub collapsed_slice_dims: Vec<i64>,
    pub start_index_map: Vec<i64>,
    pub index_vector_dim: i64,
    pub slice_sizes: Vec<i64>,
}

/// Dimension numbers of `stablehlo.scatter`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScatterDims {
    pub update_window_dims: Vec<i64>,
    pub inserted_window_dims: Vec<i64>,
    pub scatter_dims_to_operand_dims: Vec<i64>,
    pub index_vector_dim: i64,
}

/// Formats a list as `1, 2, 3`.
fn join(v: &[i64]) -> String {
    v.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `array<i64: 1, 2>` (an empty list prints as `array<i64>`).
pub fn i64_array(v: &[i64]) -> String {
    if v.is_empty() {
        "array<i64>".to_string()
    } else {
        format!("array<i64: {}>", join(v))
    }
}

fn padding_attr(padding: &[(i64, i64)]) -> String {
    let rows: Vec<String> = padding.iter().map(|(l, h)| format!("[{l}, {h}]")).collect();
    format!(
        "dense<[{}]> : tensor<{}x2xi64>",
        rows.join(", "),
        padding.len()
    )
}

/// The MLIR literal for a scalar of `dtype` holding `value`, exact for the type.
/// Non-finite floats use the hexadecimal bit pattern, which MLIR requires.
pub fn scalar_literal(dtype: DType, value: f64) -> String {
    match dtype {
        DType::Bool => (if value != 0.0 { "true" } else { "false" }).to_string(),
        d if d.is_integer() => {
            let (lo, hi) = integer_bounds(d);
            format!("{}", value.clamp(lo, hi) as i64)
        }
        DType::C64 | DType::C128 => {
            let part = dtype.complex_part();
            format!(
                "({}, {})",
                scalar_literal(part, value),
                scalar_literal(part, 0.0)
            )
        }
        _ if value.is_finite() => match dtype {
            DType::F64 => format!("{value:.17e}"),
            _ => format!("{:.9e}", value as f32),
        },
        DType::F64 => format!("0x{:016X}", value.to_bits()),
        DType::F32 => format!("0x{:08X}", (value as f32).to_bits()),
        DType::Bf16 => format!("0x{:04X}", (value as f32).to_bits() >> 16),
        _ => {
            // f16: infinities and NaN only reach this branch.
            let bits: u16 = if value.is_nan() {
                0x7E00
            } else if value > 0.0 {
                0x7C00
            } else {
                0xFC00
            };
            format!("0x{bits:04X}")
        }
    }
}

/// What an emitter family (an emitter, the ones made from it with `at`, and those of
/// its region bodies) has built so far. Attributes and types are uniqued in the
/// context, so one text always parses to the same attribute and one `TensorType` is
/// one MLIR type: building them again is wasted work (the lowerings write the same
/// constants, dimension lists and types for every node).
#[derive(Default)]
struct Caches<'c> {
    /// Attributes by text.
    attributes: RefCell<FxHashMap<String, Attribute<'c>>>,
    types: RefCell<FxHashMap<TensorType, MlirType>>,
    /// Splat constants' `value` attributes by type and value bits.
    constants: RefCell<FxHashMap<(TensorType, u64), Attribute<'c>>>,
}

/// Appends StableHLO operations at the end of one block (or inserts them before one of
/// its operations, [`Emitter::before`]), at one location.
pub struct Emitter<'c> {
    ctx: &'c Context,
    block: MlirBlock,
    /// Where new operations go: before this one of `block`, else at its end.
    anchor: Option<MlirOperation>,
    loc: Location<'c>,
    caches: Rc<Caches<'c>>,
}

impl<'c> Emitter<'c> {
    pub fn new<'a>(ctx: &'c Context, block: &impl BlockLike<'c, 'a>, loc: Location<'c>) -> Self
    where
        'c: 'a,
    {
        Emitter {
            ctx,
            block: block.to_raw(),
            anchor: None,
            loc,
            caches: Rc::default(),
        }
    }

    /// An emitter that inserts its operations right before `op` (in `op`'s block), for
    /// passes that rewrite a program in place.
    pub fn before(ctx: &'c Context, op: MlirOperation, loc: Location<'c>) -> Self {
        Emitter {
            ctx,
            // SAFETY: `op` is a live operation of `ctx`.
            block: unsafe { mlir_sys::mlirOperationGetBlock(op) },
            anchor: Some(op),
            loc,
            caches: Rc::default(),
        }
    }

    /// An emitter for a nested block (a region body), sharing this one's caches.
    pub fn in_block(&self, block: &Block<'c>) -> Emitter<'c> {
        Emitter {
            ctx: self.ctx,
            block: block.to_raw(),
            anchor: None,
            loc: self.loc,
            caches: self.caches.clone(),
        }
    }

    /// The attribute written as `text`, parsed once per emitter family.
    fn attribute(&self, text: &str) -> Result<Attribute<'c>> {
        if let Some(a) = self.caches.attributes.borrow().get(text) {
            return Ok(*a);
        }
        let a = Attribute::parse(self.ctx, text)
            .ok_or_else(|| DialectError::BadAttribute(text.to_string()))?;
        self.caches
            .attributes
            .borrow_mut()
            .insert(text.to_string(), a);
        Ok(a)
    }

    pub fn context(&self) -> &'c Context {
        self.ctx
    }

    pub fn location(&self) -> Location<'c> {
        self.loc
    }

    /// The same block at another location.
    pub fn at(&self, loc: Location<'c>) -> Emitter<'c> {
        Emitter {
            ctx: self.ctx,
            block: self.block,
            anchor: self.anchor,
            loc,
            caches: self.caches.clone(),
        }
    }

    /// Appends a generic operation and wraps its results.
    pub fn op(
        &self,
        name: &str,
        operands: &[&TValue],
        attrs: &[(&str, String)],
        results: &[TensorType],
    ) -> Result<Vec<TValue>> {
        self.op_with_regions(name, operands, attrs, results, Vec::new())
    }

    /// Appends a copy of `op` (from another function: name, attributes, regions and
    /// location kept) that reads `operands` instead of its own, with result types
    /// `results` (those of `op`).
    pub fn append_copy(
        &self,
        op: mlir_sys::MlirOperation,
        operands: &[&TValue],
        results: &[TensorType],
    ) -> Result<Vec<TValue>> {
        // SAFETY: `op` is live and belongs to the emitter's context; the clone is a
        // detached op with as many operands as `op`, handed to the block, which owns it.
        unsafe {
            if mlir_sys::mlirOperationGetNumOperands(op) != operands.len() as isize
                || mlir_sys::mlirOperationGetNumResults(op) != results.len() as isize
            {
                return Err(DialectError::Build("copied operation".into()));
            }
            let c = mlir_sys::mlirOperationClone(op);
            for (i, v) in operands.iter().enumerate() {
                mlir_sys::mlirOperationSetOperand(c, i as isize, v.raw);
            }
            self.place(c);
            Ok(results
                .iter()
                .enumerate()
                .map(|(i, t)| TValue {
                    raw: mlir_sys::mlirOperationGetResult(c, i as isize),
                    ty: t.clone(),
                })
                .collect())
        }
    }

    /// [`Emitter::op`] for an op with regions, which the new op owns.
    pub fn op_with_regions(
        &self,
        name: &str,
        operands: &[&TValue],
        attrs: &[(&str, String)],
        results: &[TensorType],
        regions: Vec<Region<'c>>,
    ) -> Result<Vec<TValue>> {
        let mut named = Vec::with_capacity(attrs.len());
        for (key, text) in attrs {
            named.push((*key, self.attribute(text)?));
        }
        self.build(name, operands, &named, results, regions)
    }

    /// The MLIR type of `t`, built once per emitter family.
    fn mlir_type(&self, t: &TensorType) -> Result<MlirType> {
        if let Some(ty) = self.caches.types.borrow().get(t) {
            return Ok(*ty);
        }
        let ty = t.to_mlir(self.ctx)?.to_raw();
        self.caches.types.borrow_mut().insert(t.clone(), ty);
        Ok(ty)
    }

    /// Hands the detached `op` to the block: before the anchor, or at the end.
    ///
    /// # Safety
    /// `op` is a live, detached operation of the emitter's context.
    unsafe fn place(&self, op: MlirOperation) {
        match self.anchor {
            Some(anchor) => mlir_sys::mlirBlockInsertOwnedOperationBefore(self.block, anchor, op),
            None => mlir_sys::mlirBlockAppendOwnedOperation(self.block, op),
        }
    }

    /// Appends the generic operation `name` (through the C API, as melior's
    /// `OperationBuilder` does) and wraps its results.
    fn build(
        &self,
        name: &str,
        operands: &[&TValue],
        attrs: &[(&str, Attribute<'c>)],
        results: &[TensorType],
        regions: Vec<Region<'c>>,
    ) -> Result<Vec<TValue>> {
        let string_ref = |s: &str| mlir_sys::MlirStringRef {
            data: s.as_ptr() as *const std::os::raw::c_char,
            length: s.len(),
        };
        let result_types = results
            .iter()
            .map(|t| self.mlir_type(t))
            .collect::<Result<Vec<_>>>()?;
        let values: Vec<MlirValue> = operands.iter().map(|v| v.raw).collect();
        let ctx = self.ctx.to_raw();
        // SAFETY: every handle belongs to the emitter's context; the state's arrays and
        // strings outlive `mlirOperationCreate`, which copies them; the regions are
        // handed to the new op, which owns them from then on (as `into_raw` says), and
        // the op to the block.
        let op = unsafe {
            let named: Vec<mlir_sys::MlirNamedAttribute> = attrs
                .iter()
                .map(|(key, a)| mlir_sys::MlirNamedAttribute {
                    name: mlir_sys::mlirIdentifierGet(ctx, string_ref(key)),
                    attribute: a.to_raw(),
                })
                .collect();
            let regions: Vec<mlir_sys::MlirRegion> =
                regions.into_iter().map(Region::into_raw).collect();
            let mut state = mlir_sys::mlirOperationStateGet(string_ref(name), self.loc.to_raw());
            mlir_sys::mlirOperationStateAddOperands(
                &mut state,
                values.len() as isize,
                values.as_ptr(),
            );
            mlir_sys::mlirOperationStateAddResults(
                &mut state,
                result_types.len() as isize,
                result_types.as_ptr(),
            );
            mlir_sys::mlirOperationStateAddAttributes(
                &mut state,
                named.len() as isize,
                named.as_ptr(),
            );
            mlir_sys::mlirOperationStateAddOwnedRegions(
                &mut state,
                regions.len() as isize,
                regions.as_ptr(),
            );
            let op = mlir_sys::mlirOperationCreate(&mut state);
            if op.ptr.is_null() {
                return Err(DialectError::Build(name.to_string()));
            }
            self.place(op);
            op
        };
        Ok(results
            .iter()
            .enumerate()
            .map(|(i, t)| TValue {
                // SAFETY: the op was built with one result per type.
                raw: unsafe { mlir_sys::mlirOperationGetResult(op, i as isize) },
                ty: t.clone(),
            })
            .collect())
    }

    fn one(
        &self,
        name: &str,
        operands: &[&TValue],
        attrs: &[(&str, String)],
        result: TensorType,
    ) -> Result<TValue> {
        let mut v = self.op(name, operands, attrs, &[result])?;
        v.pop().ok_or_else(|| DialectError::Build(name.to_string()))
    }

    // ---- constants and shapes ------------------------------------------------------

    /// A splat constant of `ty` holding `value` (converted to the element type).
    pub fn constant(&self, ty: &TensorType, value: f64) -> Result<TValue> {
        let key = (ty.clone(), value.to_bits());
        let cached = self.caches.constants.borrow().get(&key).copied();
        let attr = match cached {
            Some(a) => a,
            None => {
                let text = format!("dense<{}> : {}", scalar_literal(ty.dtype, value), ty.mlir());
                let a = self.attribute(&text)?;
                self.caches.constants.borrow_mut().insert(key, a);
                a
            }
        };
        let mut v = self.build(
            "stablehlo.constant",
            &[],
            &[("value", attr)],
            std::slice::from_ref(ty),
            Vec::new(),
        )?;
        v.pop()
            .ok_or_else(|| DialectError::Build("stablehlo.constant".to_string()))
    }

    /// A rank-0 constant.
    pub fn scalar(&self, dtype: DType, value: f64) -> Result<TValue> {
        self.constant(&TensorType::scalar(dtype), value)
    }

    /// A constant with explicit elements, given as MLIR literals in row-major order.
    pub fn constant_elements(&self, ty: &TensorType, literals: &[String]) -> Result<TValue> {
        if literals.len() as i64 != ty.num_elements() {
            return Err(DialectError::invalid(
                "stablehlo.constant",
                "element count does not match the type",
            ));
        }
        let body = if ty.rank() == 0 {
            literals[0].clone()
        } else {
            format!("[{}]", literals.join(", "))
        };
        let attr = if ty.rank() <= 1 {
            format!("dense<{body}> : {}", ty.mlir())
        } else {
            // Flat lists are accepted for any shape only as splats; reshape a 1-D constant.
            let flat = TensorType::new(vec![ty.num_elements()], ty.dtype);
            let c = self.one(
                "stablehlo.constant",
                &[],
                &[("value", format!("dense<{body}> : {}", flat.mlir()))],
                flat,
            )?;
            return self.reshape(&c, &ty.shape);
        };
        self.one("stablehlo.constant", &[], &[("value", attr)], ty.clone())
    }

    pub fn iota(&self, ty: &TensorType, dim: i64) -> Result<TValue> {
        if dim < 0 || dim as usize >= ty.rank() {
            return Err(DialectError::invalid(
                "stablehlo.iota",
                "iota dimension out of range",
            ));
        }
        self.one(
            "stablehlo.iota",
            &[],
            &[("iota_dimension", format!("{dim} : i64"))],
            ty.clone(),
        )
    }

    pub fn reshape(&self, x: &TValue, shape: &[i64]) -> Result<TValue> {
        let out = x.ty.with_shape(shape.to_vec());
        if out.num_elements() != x.ty.num_elements() {
            return Err(DialectError::invalid(
                "stablehlo.reshape",
                format!("cannot reshape {} to {}", x.ty, out),
            ));
        }
        if out == x.ty {
            return Ok(x.clone());
        }
        self.one("stablehlo.reshape", &[x], &[], out)
    }

    pub fn transpose(&self, x: &TValue, perm: &[i64]) -> Result<TValue> {
        let out = infer_transpose(&x.ty, perm)?;
        if perm.iter().enumerate().all(|(i, &p)| i as i64 == p) {
            return Ok(x.clone());
        }
        self.one(
            "stablehlo.transpose",
            &[x],
            &[("permutation", i64_array(perm))],
            out,
        )
    }

    /// `broadcast_in_dim`: operand dim `i` maps to result dim `dims[i]`.
    pub fn broadcast_in_dim(&self, x: &TValue, shape: &[i64], dims: &[i64]) -> Result<TValue> {
        let out = x.ty.with_shape(shape.to_vec());
        check_broadcast_in_dim(&x.ty, &out, dims)?;
        if out == x.ty && dims.iter().enumerate().all(|(i, &d)| i as i64 == d) {
            return Ok(x.clone());
        }
        self.one(
            "stablehlo.broadcast_in_dim",
            &[x],
            &[("broadcast_dimensions", i64_array(dims))],
            out,
        )
    }

    /// Numpy-style broadcast of `x` to `shape` (trailing dims aligned).
    pub fn broadcast_to(&self, x: &TValue, shape: &[i64]) -> Result<TValue> {
        if x.shape() == shape {
            return Ok(x.clone());
        }
        let offset = shape.len() as i64 - x.rank() as i64;
        if offset < 0 {
            return Err(DialectError::invalid(
                "stablehlo.broadcast_in_dim",
                format!("cannot broadcast {} to rank {}", x.ty, shape.len()),
            ));
        }
        // Size-1 dims that must grow are broadcast; equal dims map straight through.
        let dims: Vec<i64> = (0..x.rank() as i64).map(|i| i + offset).collect();
        self.broadcast_in_dim(x, shape, &dims)
    }

    /// `stablehlo.bitcast_convert` to an element type of the same width: the same bits
    /// read as `dtype`.
    pub fn bitcast_convert(&self, x: &TValue, dtype: DType) -> Result<TValue> {
        if dtype.size_in_bytes() != x.dtype().size_in_bytes() {
            return Err(DialectError::invalid(
                "stablehlo.bitcast_convert",
                format!("{} and {} differ in width", x.dtype(), dtype),
            ));
        }
        self.one(
            "stablehlo.bitcast_convert",
            &[x],
            &[],
            x.ty.with_dtype(dtype),
        )
    }

    pub fn convert(&self, x: &TValue, dtype: DType) -> Result<TValue> {
        if x.dtype() == dtype {
            return Ok(x.clone());
        }
        self.one("stablehlo.convert", &[x], &[], x.ty.with_dtype(dtype))
    }

    pub fn slice(
        &self,
        x: &TValue,
        start: &[i64],
        limit: &[i64],
        strides: &[i64],
    ) -> Result<TValue> {
        let out = infer_slice(&x.ty, start, limit, strides)?;
        if out == x.ty {
            return Ok(x.clone());
        }
        self.one(
            "stablehlo.slice",
            &[x],
            &[
                ("start_indices", i64_array(start)),
                ("limit_indices", i64_array(limit)),
                ("strides", i64_array(strides)),
            ],
            out,
        )
    }

    /// `x[.., start:limit:stride, ..]` along `dim`, every other dimension whole.
    pub fn slice_in_dim(
        &self,
        x: &TValue,
        dim: usize,
        start: i64,
        limit: i64,
        stride: i64,
    ) -> Result<TValue> {
        let r = x.rank();
        if dim >= r {
            return Err(DialectError::invalid(
                "stablehlo.slice",
                format!("dimension {dim} of a rank-{r} tensor"),
            ));
        }
        let mut starts = vec![0; r];
        let mut limits = x.shape().to_vec();
        let mut strides = vec![1; r];
        starts[dim] = start;
        limits[dim] = limit;
        strides[dim] = stride;
        self.slice(x, &starts, &limits, &strides)
    }

    pub fn concatenate(&self, xs: &[&TValue], dim: i64) -> Result<TValue> {
        let tys: Vec<&TensorType> = xs.iter().map(|x| &x.ty).collect();
        let out = infer_concatenate(&tys, dim)?;
        if xs.len() == 1 {
            return Ok(xs[0].clone());
        }
        self.one(
            "stablehlo.concatenate",
            xs,
            &[("dimension", format!("{dim} : i64"))],
            out,
        )
    }

    /// Reverses the order of elements along `dims`.
    pub fn reverse(&self, x: &TValue, dims: &[i64]) -> Result<TValue> {
        check_dims("stablehlo.reverse", dims, x.rank())?;
        self.one(
            "stablehlo.reverse",
            &[x],
            &[("dimensions", i64_array(dims))],
            x.ty.clone(),
        )
    }

    pub fn pad(
        &self,
        x: &TValue,
        value: &TValue,
        low: &[i64],
        high: &[i64],
        interior: &[i64],
    ) -> Result<TValue> {
        if low.len() != x.rank() || high.len() != x.rank() || interior.len() != x.rank() {
            return Err(DialectError::invalid(
                "stablehlo.pad",
                "padding rank mismatch",
            ));
        }
        let shape: Vec<i64> = (0..x.rank())
            .map(|i| {
                let d = x.shape()[i];
                low[i] + high[i] + d + (d - 1).max(0) * interior[i]
            })
            .collect();
        if shape.iter().any(|&d| d < 0) {
            return Err(DialectError::invalid(
                "stablehlo.pad",
                "negative result size",
            ));
        }
        self.one(
            "stablehlo.pad",
            &[x, value],
            &[
                ("edge_padding_low", i64_array(low)),
                ("edge_padding_high", i64_array(high)),
                ("interior_padding", i64_array(interior)),
            ],
            x.ty.with_shape(shape),
        )
    }

    // ---- complex numbers -----------------------------------------------------------

    /// `stablehlo.complex`: a complex tensor from its real and imaginary parts (f32
    /// parts give complex<f32>, f64 parts complex<f64>).
    pub fn complex(&self, re: &TValue, im: &TValue) -> Result<TValue> {
        let dtype = re
            .dtype()
            .complex_of()
            .filter(|_| re.ty == im.ty)
            .ok_or_else(|| {
                DialectError::invalid(
                    "stablehlo.complex",
                    format!("parts must be one f32 or f64 type: {} and {}", re.ty, im.ty),
                )
            })?;
        self.one("stablehlo.complex", &[re, im], &[], re.ty.with_dtype(dtype))
    }

    /// `stablehlo.real` / `stablehlo.imag` of a complex tensor.
    pub fn complex_part(&self, x: &TValue, imaginary: bool) -> Result<TValue> {
        let name = if imaginary {
            "stablehlo.imag"
        } else {
            "stablehlo.real"
        };
        if !x.dtype().is_complex() {
            return Err(DialectError::invalid(
                name,
                format!("{} is not complex", x.ty),
            ));
        }
        self.one(name, &[x], &[], x.ty.with_dtype(x.dtype().complex_part()))
    }

    /// `|x|` of a complex tensor (`stablehlo.abs`, whose result is real).
    pub fn complex_abs(&self, x: &TValue) -> Result<TValue> {
        if !x.dtype().is_complex() {
            return Err(DialectError::invalid(
                "stablehlo.abs",
                format!("{} is not complex", x.ty),
            ));
        }
        self.one(
            "stablehlo.abs",
            &[x],
            &[],
            x.ty.with_dtype(x.dtype().complex_part()),
        )
    }

    /// `stablehlo.fft` over the last `lengths.len()` dimensions (1 to 3). XLA's inverse
    /// transforms (IFFT, IRFFT) include the 1/n scaling.
    pub fn fft(&self, x: &TValue, kind: FftKind, lengths: &[i64]) -> Result<TValue> {
        let result = infer_fft(&x.ty, kind, lengths)?;
        self.one(
            "stablehlo.fft",
            &[x],
            &[
                ("fft_type", format!("#stablehlo<fft_type {}>", kind.name())),
                ("fft_length", i64_array(lengths)),
            ],
            result,
        )
    }

    // ---- elementwise ---------------------------------------------------------------

    /// A unary op whose result has the operand's type (`stablehlo.exponential`, ...).
    /// Rounding ops on f16/bf16 are computed in f32 and rounded back (see
    /// [`rounds_result`]).
    pub fn unary(&self, name: &str, x: &TValue) -> Result<TValue> {
        if is_half(x.dtype()) && rounds_result(name) {
            let r = self.unary(name, &self.convert(x, DType::F32)?)?;
            return self.convert(&r, x.dtype());
        }
        self.one(name, &[x], &[], x.ty.clone())
    }

    /// A binary op on two operands of the same type. Rounding ops on f16/bf16 are
    /// computed in f32 and rounded back (see [`rounds_result`]).
    pub fn binary(&self, name: &str, a: &TValue, b: &TValue) -> Result<TValue> {
        if a.ty != b.ty {
            return Err(DialectError::invalid(
                name,
                format!("operand types differ: {} vs {}", a.ty, b.ty),
            ));
        }
        if is_half(a.dtype()) && rounds_result(name) {
            let (fa, fb) = (self.convert(a, DType::F32)?, self.convert(b, DType::F32)?);
            let r = self.binary(name, &fa, &fb)?;
            return self.convert(&r, a.dtype());
        }
        self.one(name, &[a, b], &[], a.ty.clone())
    }

    /// A binary op in the operands' own type, for the one-op bodies of reductions and
    /// scatters: nothing there can fuse with the op, so no widening is needed.
    fn body_binary(&self, name: &str, a: &TValue, b: &TValue) -> Result<TValue> {
        self.one(name, &[a, b], &[], a.ty.clone())
    }

    pub fn add(&self, a: &TValue, b: &TValue) -> Result<TValue> {
        self.binary("stablehlo.add", a, b)
    }
    pub fn sub(&self, a: &TValue, b: &TValue) -> Result<TValue> {
        self.binary("stablehlo.subtract", a, b)
    }
    pub fn mul(&self, a: &TValue, b: &TValue) -> Result<TValue> {
        self.binary("stablehlo.multiply", a, b)
    }
    pub fn div(&self, a: &TValue, b: &TValue) -> Result<TValue> {
        self.binary("stablehlo.divide", a, b)
    }
    /// Maximum that propagates NaN for floats (PyTorch's semantics; XLA's CPU backend
    /// does not always).
    pub fn max(&self, a: &TValue, b: &TValue) -> Result<TValue> {
        self.nan_propagating("stablehlo.maximum", a, b)
    }
    /// Minimum that propagates NaN for floats.
    pub fn min(&self, a: &TValue, b: &TValue) -> Result<TValue> {
        self.nan_propagating("stablehlo.minimum", a, b)
    }

    fn nan_propagating(&self, name: &str, a: &TValue, b: &TValue) -> Result<TValue> {
        let r = self.binary(name, a, b)?;
        if !a.dtype().is_float() {
            return Ok(r);
        }
        // An operand that is a NaN-free constant (relu's 0, clamp's bounds) needs no
        // check: each check is a compare and a select in every element of the kernel.
        let check = |x: &TValue| -> Result<Option<TValue>> {
            match is_nan_free_constant(x) {
                true => Ok(None),
                false => self.compare(Cmp::Ne, x, x).map(Some),
            }
        };
        let (a_nan, b_nan) = (check(a)?, check(b)?);
        let mut r = r;
        if let Some(b_nan) = b_nan {
            r = self.select(&b_nan, b, &r)?;
        }
        if let Some(a_nan) = a_nan {
            r = self.select(&a_nan, a, &r)?;
        }
        Ok(r)
    }

    pub fn compare(&self, dir: Cmp, a: &TValue, b: &TValue) -> Result<TValue> {
        if a.ty != b.ty {
            return Err(DialectError::invalid(
                "stablehlo.compare",
                format!("operand types differ: {} vs {}", a.ty, b.ty),
            ));
        }
        let kind = match a.dtype() {
            d if d.is_float() => "FLOAT",
            DType::U8 | DType::Bool => "UNSIGNED",
            _ => "SIGNED",
        };
        self.one(
            "stablehlo.compare",
            &[a, b],
            &[
                (
                    "comparison_direction",
                    format!("#stablehlo<comparison_direction {}>", dir.keyword()),
                ),
                (
                    "compare_type",
                    format!("#stablehlo<comparison_type {kind}>"),
                ),
            ],
            a.ty.with_dtype(DType::Bool),
        )
    }

    pub fn select(&self, pred: &TValue, on_true: &TValue, on_false: &TValue) -> Result<TValue> {
        if pred.dtype() != DType::Bool
            || on_true.ty != on_false.ty
            || pred.shape() != on_true.shape()
        {
            return Err(DialectError::invalid(
                "stablehlo.select",
                format!(
                    "bad operand types {}, {}, {}",
                    pred.ty, on_true.ty, on_false.ty
                ),
            ));
        }
        self.one(
            "stablehlo.select",
            &[pred, on_true, on_false],
            &[],
            on_true.ty.clone(),
        )
    }

    /// `clamp(min, x, max)`; `min`/`max` are rank 0 or the same shape as `x`.
    pub fn clamp(&self, min: &TValue, x: &TValue, max: &TValue) -> Result<TValue> {
        for bound in [min, max] {
            if bound.dtype() != x.dtype() || (bound.rank() != 0 && bound.shape() != x.shape()) {
                return Err(DialectError::invalid(
                    "stablehlo.clamp",
                    "bound type does not match operand",
                ));
            }
        }
        self.one("stablehlo.clamp", &[min, x, max], &[], x.ty.clone())
    }

    // ---- contractions --------------------------------------------------------------

    pub fn dot_general(&self, lhs: &TValue, rhs: &TValue, dims: &DotDims) -> Result<TValue> {
        self.dot_general_to(lhs, rhs, dims, lhs.dtype())
    }

    /// `dot_general` whose result has element type `result` (e.g. f32 accumulation of
    /// bf16 operands, as PyTorch's reduced-precision matmuls do).
    pub fn dot_general_to(
        &self,
        lhs: &TValue,
        rhs: &TValue,
        dims: &DotDims,
        result: DType,
    ) -> Result<TValue> {
        let out = infer_dot_general(&lhs.ty, &rhs.ty, dims)?.with_dtype(result);
        let mut attrs = vec![("dot_dimension_numbers", dot_dims_attr(dims))];
        if let Some(p) = precision_config(lhs.dtype()) {
            attrs.push(("precision_config", p));
        }
        self.one("stablehlo.dot_general", &[lhs, rhs], &attrs, out)
    }

    pub fn convolution(&self, input: &TValue, kernel: &TValue, p: &ConvParams) -> Result<TValue> {
        let out = infer_convolution(&input.ty, &kernel.ty, p)?;
        let spatial: Vec<String> = (0..p.strides.len()).map(|i| i.to_string()).collect();
        let sp = spatial.join(", ");
        let layout = if sp.is_empty() {
            "[b, f]x[o, i]->[b, f]".to_string()
        } else {
            format!("[b, f, {sp}]x[o, i, {sp}]->[b, f, {sp}]")
        };
        self.one(
            "stablehlo.convolution",
            &[input, kernel],
            &[
                ("dimension_numbers", format!("#stablehlo.conv<{layout}>")),
                ("window_strides", i64_array(&p.strides)),
                ("padding", padding_attr(&p.padding)),
                ("lhs_dilation", i64_array(&p.lhs_dilation)),
                ("rhs_dilation", i64_array(&p.rhs_dilation)),
                ("feature_group_count", format!("{} : i64", p.feature_groups)),
                ("batch_group_count", format!("{} : i64", p.batch_groups)),
            ]
            .into_iter()
            .chain(precision_config(input.dtype()).map(|p| ("precision_config", p)))
            .collect::<Vec<_>>(),
            out,
        )
    }

    // ---- reductions ----------------------------------------------------------------

    /// A body block `(tensor<T>, tensor<T>) -> tensor<T>` combining with `kind`.
    fn reducer_region(&self, kind: ReduceKind, dtype: DType) -> Result<Region<'c>> {
        let scalar = TensorType::scalar(dtype);
        let t = scalar.to_mlir(self.ctx)?;
        let block = Block::new(&[(t, self.loc), (t, self.loc)]);
        {
            let inner = self.in_block(&block);
            let a = block_arg(&block, 0)?;
            let b = block_arg(&block, 1)?;
            let r = match kind {
                ReduceKind::Max => inner.max(&a, &b)?,
                ReduceKind::Min => inner.min(&a, &b)?,
                _ => inner.body_binary(kind.op_name(), &a, &b)?,
            };
            inner.op("stablehlo.return", &[&r], &[], &[])?;
        }
        let region = Region::new();
        region.append_block(block);
        Ok(region)
    }

    /// Reduces `x` over `dims` with `kind`, starting from `init` (a scalar literal value).
    pub fn reduce(&self, x: &TValue, init: f64, dims: &[i64], kind: ReduceKind) -> Result<TValue> {
        let out = infer_reduce(&x.ty, dims)?;
        let init = self.scalar(x.dtype(), init)?;
        let region = self.reducer_region(kind, x.dtype())?;
        let mut v = self.op_with_regions(
            "stablehlo.reduce",
            &[x, &init],
            &[("dimensions", i64_array(dims))],
            &[out],
            vec![region],
        )?;
        v.pop()
            .ok_or_else(|| DialectError::Build("stablehlo.reduce".into()))
    }

    /// The body of an arg-max/arg-min reduction over `(value, index)` pairs: the extreme
    /// value wins, NaN counts as the extreme (as in PyTorch), ties keep the smaller index
    /// (which also makes the body commutative, as XLA requires).
    fn arg_extreme_region(&self, dtype: DType, take_max: bool) -> Result<Region<'c>> {
        let tv = TensorType::scalar(dtype).to_mlir(self.ctx)?;
        let ti = TensorType::scalar(DType::I64).to_mlir(self.ctx)?;
        let block = Block::new(&[
            (tv, self.loc),
            (ti, self.loc),
            (tv, self.loc),
            (ti, self.loc),
        ]);
        {
            let e = self.in_block(&block);
            let (av, ai, bv, bi) = (
                block_arg(&block, 0)?,
                block_arg(&block, 1)?,
                block_arg(&block, 2)?,
                block_arg(&block, 3)?,
            );
            let dir = if take_max { Cmp::Gt } else { Cmp::Lt };
            let a_wins = e.compare(dir, &av, &bv)?;
            let a_nan = e.compare(Cmp::Ne, &av, &av)?;
            let b_nan = e.compare(Cmp::Ne, &bv, &bv)?;
            // a wins when it is more extreme and b is not NaN, or a is NaN and b is not.
            let not_b_nan = e.unary("stablehlo.not", &b_nan)?;
            let a_pick = e.binary(
                "stablehlo.and",
                &e.binary("stablehlo.or", &a_wins, &a_nan)?,
                &not_b_nan,
            )?;
            // Equal values, or both NaN: the smaller index.
            let both_nan = e.binary("stablehlo.and", &a_nan, &b_nan)?;
            let tie = e.binary("stablehlo.or", &e.compare(Cmp::Eq, &av, &bv)?, &both_nan)?;
            let v = e.select(&a_pick, &av, &bv)?;
            let min_i = e.min(&ai, &bi)?;
            let i_pick = e.select(&a_pick, &ai, &bi)?;
            let i = e.select(&tie, &min_i, &i_pick)?;
            e.op("stablehlo.return", &[&v, &i], &[], &[])?;
        }
        let region = Region::new();
        region.append_block(block);
        Ok(region)
    }

    /// Initial `(value, index)` of an arg-extreme reduction: the identity of the
    /// comparison, and an index larger than any real one so real elements win ties.
    fn arg_extreme_init(&self, dtype: DType, take_max: bool) -> Result<(TValue, TValue)> {
        let (lo, hi) = integer_bounds(dtype);
        let v = self.scalar(dtype, if take_max { lo } else { hi })?;
        let i = self.scalar(DType::I64, i64::MAX as f64)?;
        Ok((v, i))
    }

    /// Reduces `(values, indices)` pairs over one dimension, keeping the extreme value
    /// and the smallest index among ties (PyTorch's argmax/argmin/max.dim rule).
    pub fn reduce_with_index(
        &self,
        x: &TValue,
        dim: i64,
        take_max: bool,
    ) -> Result<(TValue, TValue)> {
        let out = infer_reduce(&x.ty, &[dim])?;
        let indices = self.iota(&x.ty.with_dtype(DType::I64), dim)?;
        let (init_v, init_i) = self.arg_extreme_init(x.dtype(), take_max)?;
        let region = self.arg_extreme_region(x.dtype(), take_max)?;
        let mut v = self.op_with_regions(
            "stablehlo.reduce",
            &[x, &indices, &init_v, &init_i],
            &[("dimensions", i64_array(&[dim]))],
            &[out.clone(), out.with_dtype(DType::I64)],
            vec![region],
        )?;
        let i = v
            .pop()
            .ok_or_else(|| DialectError::Build("stablehlo.reduce".into()))?;
        let val = v
            .pop()
            .ok_or_else(|| DialectError::Build("stablehlo.reduce".into()))?;
        Ok((val, i))
    }

    /// Windowed arg-max/arg-min: for each window, the extreme of `x` and the matching
    /// element of `indices` (max pooling with indices).
    pub fn reduce_window_with_index(
        &self,
        x: &TValue,
        indices: &TValue,
        p: &WindowParams,
        take_max: bool,
    ) -> Result<(TValue, TValue)> {
        let out = infer_reduce_window(&x.ty, p)?;
        let (init_v, init_i) = self.arg_extreme_init(x.dtype(), take_max)?;
        let region = self.arg_extreme_region(x.dtype(), take_max)?;
        let mut v = self.op_with_regions(
            "stablehlo.reduce_window",
            &[x, indices, &init_v, &init_i],
            &window_attrs(p),
            &[out.clone(), out.with_dtype(DType::I64)],
            vec![region],
        )?;
        let i = v
            .pop()
            .ok_or_else(|| DialectError::Build("stablehlo.reduce_window".into()))?;
        let val = v
            .pop()
            .ok_or_else(|| DialectError::Build("stablehlo.reduce_window".into()))?;
        Ok((val, i))
    }

    /// Two windowed reductions in one variadic `stablehlo.reduce_window`: `x` with
    /// `kx` from `init_x`, `y` (same shape) with `ky` from `init_y`, each combined only
    /// with itself (one kernel where two reduce_windows would each be one).
    pub fn reduce_window_pair(
        &self,
        (x, init_x, kx): (&TValue, f64, ReduceKind),
        (y, init_y, ky): (&TValue, f64, ReduceKind),
        p: &WindowParams,
    ) -> Result<(TValue, TValue)> {
        if x.shape() != y.shape() {
            return Err(DialectError::Build(
                "reduce_window_pair: operands differ in shape".into(),
            ));
        }
        let out = infer_reduce_window(&x.ty, p)?;
        let (tx, ty) = (
            TensorType::scalar(x.dtype()).to_mlir(self.ctx)?,
            TensorType::scalar(y.dtype()).to_mlir(self.ctx)?,
        );
        let block = Block::new(&[
            (tx, self.loc),
            (ty, self.loc),
            (tx, self.loc),
            (ty, self.loc),
        ]);
        {
            let inner = Emitter::new(self.ctx, &block, self.loc);
            let combine = |k: ReduceKind, a: &TValue, b: &TValue| match k {
                ReduceKind::Max => inner.max(a, b),
                ReduceKind::Min => inner.min(a, b),
                _ => inner.body_binary(k.op_name(), a, b),
            };
            let rx = combine(kx, &block_arg(&block, 0)?, &block_arg(&block, 2)?)?;
            let ry = combine(ky, &block_arg(&block, 1)?, &block_arg(&block, 3)?)?;
            inner.op("stablehlo.return", &[&rx, &ry], &[], &[])?;
        }
        let region = Region::new();
        region.append_block(block);
        let (ix, iy) = (
            self.scalar(x.dtype(), init_x)?,
            self.scalar(y.dtype(), init_y)?,
        );
        let mut v = self.op_with_regions(
            "stablehlo.reduce_window",
            &[x, y, &ix, &iy],
            &window_attrs(p),
            &[out.clone(), out.with_dtype(y.dtype())],
            vec![region],
        )?;
        let ry = v.pop();
        let rx = v.pop();
        match (rx, ry) {
            (Some(rx), Some(ry)) => Ok((rx, ry)),
            _ => Err(DialectError::Build("stablehlo.reduce_window".into())),
        }
    }

    pub fn reduce_window(
        &self,
        x: &TValue,
        init: f64,
        p: &WindowParams,
        kind: ReduceKind,
    ) -> Result<TValue> {
        self.reduce_window_from(x, &self.scalar(x.dtype(), init)?, p, kind)
    }

    /// [`Emitter::reduce_window`] from an initial value given as a rank-0 tensor (for
    /// values a literal `f64` cannot hold, such as most 64-bit integers).
    pub fn reduce_window_from(
        &self,
        x: &TValue,
        init: &TValue,
        p: &WindowParams,
        kind: ReduceKind,
    ) -> Result<TValue> {
        let out = infer_reduce_window(&x.ty, p)?;
        let region = self.reducer_region(kind, x.dtype())?;
        let mut v = self.op_with_regions(
            "stablehlo.reduce_window",
            &[x, init],
            &window_attrs(p),
            &[out],
            vec![region],
        )?;
        v.pop()
            .ok_or_else(|| DialectError::Build("stablehlo.reduce_window".into()))
    }

    // ---- indexing ------------------------------------------------------------------

    pub fn gather(&self, operand: &TValue, indices: &TValue, d: &GatherDims) -> Result<TValue> {
        let out = infer_gather(&operand.ty, &indices.ty, d)?;
        let list = |v: &[i64]| format!("[{}]", join(v));
        let mut fields = vec![];
        if !d.offset_dims.is_empty() {
            fields.push(format!("offset_dims = {}", list(&d.offset_dims)));
        }
        if !d.collapsed_slice_dims.is_empty() {
            fields.push(format!(
                "collapsed_slice_dims = {}",
                list(&d.collapsed_slice_dims)
            ));
        }
        fields.push(format!("start_index_map = {}", list(&d.start_index_map)));
        fields.push(format!("index_vector_dim = {}", d.index_vector_dim));
        self.one(
            "stablehlo.gather",
            &[operand, indices],
            &[
                (
                    "dimension_numbers",
                    format!("#stablehlo.gather<{}>", fields.join(", ")),
                ),
                ("slice_sizes", i64_array(&d.slice_sizes)),
                ("indices_are_sorted", "false".to_string()),
            ],
            out,
        )
    }

    /// Sorts `operands` (same shape) together along `dim`, ordered by the first one:
    /// ascending or descending, NaN after every number ascending (before, descending),
    /// as PyTorch does. Stable.
    pub fn sort(&self, operands: &[&TValue], dim: i64, descending: bool) -> Result<Vec<TValue>> {
        let first = operands
            .first()
            .ok_or_else(|| DialectError::invalid("stablehlo.sort", "no operands"))?;
        if dim < 0
            || dim as usize >= first.rank()
            || operands.iter().any(|o| o.shape() != first.shape())
        {
            return Err(DialectError::invalid(
                "stablehlo.sort",
                "operands must share one shape and dim must be in range",
            ));
        }
        let mut args = Vec::new();
        for o in operands {
            let t = TensorType::scalar(o.dtype()).to_mlir(self.ctx)?;
            args.push((t, self.loc));
            args.push((t, self.loc));
        }
        let block = Block::new(&args);
        {
            let e = self.in_block(&block);
            let (a, b) = (block_arg(&block, 0)?, block_arg(&block, 1)?);
            let (lo, hi) = if descending { (&b, &a) } else { (&a, &b) };
            // lo goes first when lo < hi, or when hi is NaN and lo is not.
            let less = e.compare(Cmp::Lt, lo, hi)?;
            let r = if a.dtype().is_float() {
                let hi_nan = e.compare(Cmp::Ne, hi, hi)?;
                let lo_num = e.compare(Cmp::Eq, lo, lo)?;
                let nan_last = e.binary("stablehlo.and", &hi_nan, &lo_num)?;
                e.binary("stablehlo.or", &less, &nan_last)?
            } else {
                less
            };
            e.op("stablehlo.return", &[&r], &[], &[])?;
        }
        let region = Region::new();
        region.append_block(block);
        let types: Vec<TensorType> = operands.iter().map(|o| o.ty.clone()).collect();
        self.op_with_regions(
            "stablehlo.sort",
            operands,
            &[
                ("dimension", format!("{dim} : i64")),
                ("is_stable", "true".to_string()),
            ],
            &types,
            vec![region],
        )
    }

    /// `stablehlo.scatter` of `updates` into `operand` at `indices`, combining with
    /// `kind` (`None` replaces).
    pub fn scatter(
        &self,
        operand: &TValue,
        indices: &TValue,
        updates: &TValue,
        d: &ScatterDims,
        kind: Option<ReduceKind>,
    ) -> Result<TValue> {
        if updates.dtype() != operand.dtype() {
            return Err(DialectError::invalid(
                "stablehlo.scatter",
                "updates must have the operand's element type",
            ));
        }
        let t = TensorType::scalar(operand.dtype()).to_mlir(self.ctx)?;
        let block = Block::new(&[(t, self.loc), (t, self.loc)]);
        {
            let e = self.in_block(&block);
            let (old, new) = (block_arg(&block, 0)?, block_arg(&block, 1)?);
            let r = match kind {
                None => new,
                Some(ReduceKind::Max) => e.max(&old, &new)?,
                Some(ReduceKind::Min) => e.min(&old, &new)?,
                Some(k) => e.body_binary(k.op_name(), &old, &new)?,
            };
            e.op("stablehlo.return", &[&r], &[], &[])?;
        }
        let region = Region::new();
        region.append_block(block);
        let list = |v: &[i64]| format!("[{}]", join(v));
        let mut fields = vec![];
        if !d.update_window_dims.is_empty() {
            fields.push(format!(
                "update_window_dims = {}",
                list(&d.update_window_dims)
            ));
        }
        if !d.inserted_window_dims.is_empty() {
            fields.push(format!(
                "inserted_window_dims = {}",
                list(&d.inserted_window_dims)
            ));
        }
        fields.push(format!(
            "scatter_dims_to_operand_dims = {}",
            list(&d.scatter_dims_to_operand_dims)
        ));
        fields.push(format!("index_vector_dim = {}", d.index_vector_dim));
        let mut v = self.op_with_regions(
            "stablehlo.scatter",
            &[operand, indices, updates],
            &[
                (
                    "scatter_dimension_numbers",
                    format!("#stablehlo.scatter<{}>", fields.join(", ")),
                ),
                ("indices_are_sorted", "false".to_string()),
                ("unique_indices", "false".to_string()),
            ],
            std::slice::from_ref(&operand.ty),
            vec![region],
        )?;
        v.pop()
            .ok_or_else(|| DialectError::Build("stablehlo.scatter".into()))
    }

    // ---- control flow ----------------------------------------------------------

    /// A region of one block whose arguments have `arg_types`. `body` fills the block
    /// (given an emitter for it and its arguments) and returns what the block's
    /// `stablehlo.return` yields.
    pub fn region<E: From<DialectError>>(
        &self,
        arg_types: &[TensorType],
        body: impl FnOnce(&Emitter<'c>, &[TValue]) -> std::result::Result<Vec<TValue>, E>,
    ) -> std::result::Result<Region<'c>, E> {
        let mut types = Vec::with_capacity(arg_types.len());
        for t in arg_types {
            types.push((t.to_mlir(self.ctx)?, self.loc));
        }
        let block = Block::new(&types);
        {
            let inner = self.in_block(&block);
            let args = (0..arg_types.len())
                .map(|i| block_arg(&block, i))
                .collect::<Result<Vec<_>>>()?;
            let yielded = body(&inner, &args)?;
            let refs: Vec<&TValue> = yielded.iter().collect();
            inner.op("stablehlo.return", &refs, &[], &[])?;
        }
        let region = Region::new();
        region.append_block(block);
        Ok(region)
    }

    /// `stablehlo.if`: `on_true` or `on_false` (regions without arguments, which read
    /// the values they need from the enclosing block) by a `tensor<i1>` predicate.
    pub fn if_(
        &self,
        pred: &TValue,
        on_true: Region<'c>,
        on_false: Region<'c>,
        results: &[TensorType],
    ) -> Result<Vec<TValue>> {
        if pred.ty != TensorType::scalar(DType::Bool) {
            return Err(DialectError::invalid(
                "stablehlo.if",
                format!("the predicate is {}, not tensor<i1>", pred.ty),
            ));
        }
        self.op_with_regions(
            "stablehlo.if",
            &[pred],
            &[],
            results,
            vec![on_true, on_false],
        )
    }

    /// `stablehlo.while` over the loop state `operands`: `cond` maps the state to a
    /// `tensor<i1>`, `body` to the next state; the results are the final state.
    pub fn while_(
        &self,
        operands: &[&TValue],
        cond: Region<'c>,
        body: Region<'c>,
    ) -> Result<Vec<TValue>> {
        let types: Vec<TensorType> = operands.iter().map(|v| v.ty.clone()).collect();
        self.op_with_regions("stablehlo.while", operands, &[], &types, vec![cond, body])
    }

    /// `stablehlo.dynamic_slice`: `sizes` elements of `x` from the run-time `starts`
    /// (one integer scalar per dimension, clamped into range by the op).
    pub fn dynamic_slice(&self, x: &TValue, starts: &[&TValue], sizes: &[i64]) -> Result<TValue> {
        check_start_indices("stablehlo.dynamic_slice", x, starts)?;
        if sizes.len() != x.rank() || sizes.iter().zip(x.shape()).any(|(s, d)| *s < 0 || s > d) {
            return Err(DialectError::invalid(
                "stablehlo.dynamic_slice",
                format!("slice sizes {sizes:?} do not fit {}", x.ty),
            ));
        }
        let mut operands = vec![x];
        operands.extend_from_slice(starts);
        self.one(
            "stablehlo.dynamic_slice",
            &operands,
            &[("slice_sizes", i64_array(sizes))],
            TensorType::new(sizes.to_vec(), x.dtype()),
        )
    }

    /// `stablehlo.dynamic_update_slice`: `x` with `update` written at the run-time
    /// `starts`.
    pub fn dynamic_update_slice(
        &self,
        x: &TValue,
        update: &TValue,
        starts: &[&TValue],
    ) -> Result<TValue> {
        check_start_indices("stablehlo.dynamic_update_slice", x, starts)?;
        if update.dtype() != x.dtype()
            || update.rank() != x.rank()
            || update.shape().iter().zip(x.shape()).any(|(u, d)| u > d)
        {
            return Err(DialectError::invalid(
                "stablehlo.dynamic_update_slice",
                format!("update {} does not fit {}", update.ty, x.ty),
            ));
        }
        let mut operands = vec![x, update];
        operands.extend_from_slice(starts);
        self.one(
            "stablehlo.dynamic_update_slice",
            &operands,
            &[],
            x.ty.clone(),
        )
    }

    /// `func.return`.
    pub fn func_return(&self, values: &[&TValue]) -> Result<()> {
        self.op("func.return", values, &[], &[])?;
        Ok(())
    }
}

/// One integer scalar start index per dimension of `x`, all of one type.
fn check_start_indices(op: &str, x: &TValue, starts: &[&TValue]) -> Result<()> {
    let ok = starts.len() == x.rank()
        && starts
            .iter()
            .all(|s| s.rank() == 0 && s.dtype().is_integer() && s.dtype() == starts[0].dtype());
    if ok {
        Ok(())
    } else {
        Err(DialectError::invalid(
            op,
            format!(
                "needs {} integer scalar start indices of one type for {}",
                x.rank(),
                x.ty
            ),
        ))
    }
}

fn block_arg(block: &Block<'_>, i: usize) -> Result<TValue> {
    let a = block
        .argument(i)
        .map_err(|_| DialectError::Build("block argument".into()))?;
    TValue::from_value(a.into())
}

/// Smallest and largest value of an integer type, as f64 (exact for all but i64
/// extremes, which round to the nearest representable double and still bound every value).
/// f16 and bf16.
fn is_half(d: DType) -> bool {
    matches!(d, DType::F16 | DType::Bf16)
}

/// Elementwise ops whose result is rounded to the result type. On f16/bf16 the emitter
/// computes them in f32 and converts back, one rounding per op. For `+ - * /` and
/// `sqrt` this is exactly the IEEE half-precision result (f32 carries more than twice
/// the significand bits plus two, so the double rounding is harmless); transcendental
/// functions are what PyTorch's CPU kernels compute (f32, then rounded). What it
/// removes is the backend's freedom to choose: with native half arithmetic (Intel's
/// AVX512-FP16) XLA's CPU backend fuses a half multiply and add into one rounding and
/// evaluates chains in half, so the same program gave host-dependent results. Exact
/// ops (negate, abs, floor, max, remainder, compare...) are left in their own type.
pub fn rounds_result(name: &str) -> bool {
    matches!(
        name,
        "stablehlo.add"
            | "stablehlo.subtract"
            | "stablehlo.multiply"
            | "stablehlo.divide"
            | "stablehlo.power"
            | "stablehlo.atan2"
            | "stablehlo.sqrt"
            | "stablehlo.rsqrt"
            | "stablehlo.cbrt"
            | "stablehlo.exponential"
            | "stablehlo.exponential_minus_one"
            | "stablehlo.log"
            | "stablehlo.log_plus_one"
            | "stablehlo.logistic"
            | "stablehlo.tanh"
            | "stablehlo.sine"
            | "stablehlo.cosine"
            | "stablehlo.tan"
    )
}

pub fn integer_bounds(dtype: DType) -> (f64, f64) {
    match dtype {
        DType::I64 => (i64::MIN as f64, i64::MAX as f64),
        DType::I32 => (i32::MIN as f64, i32::MAX as f64),
        DType::I16 => (i16::MIN as f64, i16::MAX as f64),
        DType::I8 => (i8::MIN as f64, i8::MAX as f64),
        DType::U8 => (0.0, 255.0),
        DType::Bool => (0.0, 1.0),
        _ => (f64::NEG_INFINITY, f64::INFINITY),
    }
}

/// f32 and f64 contractions ask for full precision: PyTorch computes them in full
/// precision, while TPUs default to bf16 passes for f32 matmuls.
fn precision_config(dtype: DType) -> Option<String> {
    matches!(dtype, DType::F32 | DType::F64)
        .then(|| "[#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]".to_string())
}

impl DotDims {
    /// Reads the dimension lists of a printed `#stablehlo.dot<...>` attribute (absent
    /// lists are empty).
    pub fn parse(text: &str) -> DotDims {
        let field = |name: &str| attr_list_field(text, name);
        DotDims {
            lhs_batch: field("lhs_batching_dimensions"),
            rhs_batch: field("rhs_batching_dimensions"),
            lhs_contract: field("lhs_contracting_dimensions"),
            rhs_contract: field("rhs_contracting_dimensions"),
        }
    }
}

/// The list `name = [a, b, ...]` inside a printed dialect attribute such as
/// `#stablehlo.dot<...>` or `#stablehlo.gather<...>` (empty when absent).
pub fn attr_list_field(text: &str, name: &str) -> Vec<i64> {
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

pub fn dot_dims_attr(d: &DotDims) -> String {
    let mut fields = vec![];
    let mut push = |name: &str, v: &[i64]| {
        if !v.is_empty() {
            fields.push(format!("{name} = [{}]", join(v)));
        }
    };
    push("lhs_batching_dimensions", &d.lhs_batch);
    push("rhs_batching_dimensions", &d.rhs_batch);
    push("lhs_contracting_dimensions", &d.lhs_contract);
    push("rhs_contracting_dimensions", &d.rhs_contract);
    format!("#stablehlo.dot<{}>", fields.join(", "))
}

// ---- result-type inference (shared with the verifier) -----------------------------

fn check_dims(op: &str, dims: &[i64], rank: usize) -> Result<()> {
    let mut seen = vec![false; rank];
    for &d in dims {
        if d < 0 || d as usize >= rank || seen[d as usize] {
            return Err(DialectError::invalid(
                op,
                format!("bad dimension list {dims:?} for rank {rank}"),
            ));
        }
        seen[d as usize] = true;
    }
    Ok(())
}

pub fn infer_transpose(x: &TensorType, perm: &[i64]) -> Result<TensorType> {
    if perm.len() != x.rank() {
        return Err(DialectError::invalid(
            "stablehlo.transpose",
            "permutation length differs from rank",
        ));
    }
    check_dims("stablehlo.transpose", perm, x.rank())?;
    Ok(x.with_shape(
        perm.iter()
            .map(|&p| x.shape[p as usize])
            .collect::<Vec<_>>(),
    ))
}

pub fn check_broadcast_in_dim(x: &TensorType, out: &TensorType, dims: &[i64]) -> Result<()> {
    let op = "stablehlo.broadcast_in_dim";
    if dims.len() != x.rank() || x.dtype != out.dtype {
        return Err(DialectError::invalid(
            op,
            format!("cannot broadcast {x} to {out} with {dims:?}"),
        ));
    }
    for (i, &d) in dims.iter().enumerate() {
        if d < 0 || d as usize >= out.rank() {
            return Err(DialectError::invalid(
                op,
                format!("dimension {d} out of range for {out}"),
            ));
        }
        let (src, dst) = (x.shape[i], out.shape[d as usize]);
        if src != 1 && src != dst {
            return Err(DialectError::invalid(
                op,
                format!("cannot broadcast {x} to {out} with {dims:?}"),
            ));
        }
    }
    Ok(())
}

pub fn infer_slice(
    x: &TensorType,
    start: &[i64],
    limit: &[i64],
    strides: &[i64],
) -> Result<TensorType> {
    let op = "stablehlo.slice";
    if start.len() != x.rank() || limit.len() != x.rank() || strides.len() != x.rank() {
        return Err(DialectError::invalid(
            op,
            "index lists must match the operand rank",
        ));
    }
    let mut shape = Vec::with_capacity(x.rank());
    for i in 0..x.rank() {
        if start[i] < 0 || limit[i] > x.shape[i] || start[i] > limit[i] || strides[i] < 1 {
            return Err(DialectError::invalid(
                op,
                format!(
                    "slice [{}:{}:{}] out of range for dim {} of {x}",
                    start[i], limit[i], strides[i], i
                ),
            ));
        }
        shape.push((limit[i] - start[i] + strides[i] - 1) / strides[i]);
    }
    Ok(x.with_shape(shape))
}

pub fn infer_concatenate(xs: &[&TensorType], dim: i64) -> Result<TensorType> {
    let op = "stablehlo.concatenate";
    let first = xs
        .first()
        .ok_or_else(|| DialectError::invalid(op, "no operands"))?;
    if dim < 0 || dim as usize >= first.rank() {
        return Err(DialectError::invalid(op, "dimension out of range"));
    }
    let mut shape = first.shape.clone();
    shape[dim as usize] = 0;
    for x in xs {
        if x.rank() != first.rank() || x.dtype != first.dtype {
            return Err(DialectError::invalid(op, format!("mismatched operand {x}")));
        }
        for i in 0..x.rank() {
            if i != dim as usize && x.shape[i] != first.shape[i] {
                return Err(DialectError::invalid(op, format!("mismatched operand {x}")));
            }
        }
        shape[dim as usize] += x.shape[dim as usize];
    }
    Ok(first.with_shape(shape))
}

pub fn infer_dot_general(lhs: &TensorType, rhs: &TensorType, d: &DotDims) -> Result<TensorType> {
    let op = "stablehlo.dot_general";
    check_dims(
        op,
        &[d.lhs_batch.clone(), d.lhs_contract.clone()].concat(),
        lhs.rank(),
    )?;
    check_dims(
        op,
        &[d.rhs_batch.clone(), d.rhs_contract.clone()].concat(),
        rhs.rank(),
    )?;
    if d.lhs_batch.len() != d.rhs_batch.len() || d.lhs_contract.len() != d.rhs_contract.len() {
        return Err(DialectError::invalid(
            op,
            "batch/contracting dimension counts differ",
        ));
    }
    for (l, r) in d
        .lhs_batch
        .iter()
        .zip(&d.rhs_batch)
        .chain(d.lhs_contract.iter().zip(&d.rhs_contract))
    {
        if lhs.shape[*l as usize] != rhs.shape[*r as usize] {
            return Err(DialectError::invalid(
                op,
                format!("dimension sizes differ: {lhs} vs {rhs}"),
            ));
        }
    }
    if lhs.dtype != rhs.dtype {
        return Err(DialectError::invalid(
            op,
            format!("element types differ: {lhs} vs {rhs}"),
        ));
    }
    let mut shape: Vec<i64> = d.lhs_batch.iter().map(|&b| lhs.shape[b as usize]).collect();
    for i in 0..lhs.rank() as i64 {
        if !d.lhs_batch.contains(&i) && !d.lhs_contract.contains(&i) {
            shape.push(lhs.shape[i as usize]);
        }
    }
    for i in 0..rhs.rank() as i64 {
        if !d.rhs_batch.contains(&i) && !d.rhs_contract.contains(&i) {
            shape.push(rhs.shape[i as usize]);
        }
    }
    Ok(lhs.with_shape(shape))
}

pub fn infer_convolution(
    input: &TensorType,
    kernel: &TensorType,
    p: &ConvParams,
) -> Result<TensorType> {
    let op = "stablehlo.convolution";
    let n = p.strides.len();
    if input.rank() != n + 2
        || kernel.rank() != n + 2
        || p.padding.len() != n
        || p.lhs_dilation.len() != n
        || p.rhs_dilation.len() != n
    {
        return Err(DialectError::invalid(
            op,
            format!("rank mismatch: input {input}, kernel {kernel}"),
        ));
    }
    if p.feature_groups < 1
        || input.shape[1] != kernel.shape[1] * p.feature_groups
        || kernel.shape[0] % p.feature_groups != 0
    {
        return Err(DialectError::invalid(
            op,
            format!(
                "channels of input {input} do not match kernel {kernel} with {} groups",
                p.feature_groups
            ),
        ));
    }
    if p.batch_groups < 1
        || input.shape[0] % p.batch_groups != 0
        || kernel.shape[0] % p.batch_groups != 0
        || (p.batch_groups > 1 && p.feature_groups > 1)
    {
        return Err(DialectError::invalid(
            op,
            format!(
                "batch of input {input} and kernel {kernel} do not split into {} batch groups",
                p.batch_groups
            ),
        ));
    }
    let mut shape = vec![input.shape[0] / p.batch_groups, kernel.shape[0]];
    for i in 0..n {
        let dilated_in = (input.shape[i + 2] - 1) * p.lhs_dilation[i] + 1;
        let padded = dilated_in + p.padding[i].0 + p.padding[i].1;
        let window = (kernel.shape[i + 2] - 1) * p.rhs_dilation[i] + 1;
        if padded < window || p.strides[i] < 1 {
            return Err(DialectError::invalid(
                op,
                format!("window larger than padded input: {input}, {kernel}"),
            ));
        }
        shape.push((padded - window) / p.strides[i] + 1);
    }
    Ok(input.with_shape(shape))
}

pub fn infer_reduce(x: &TensorType, dims: &[i64]) -> Result<TensorType> {
    check_dims("stablehlo.reduce", dims, x.rank())?;
    let shape: Vec<i64> = (0..x.rank() as i64)
        .filter(|i| !dims.contains(i))
        .map(|i| x.shape[i as usize])
        .collect();
    Ok(x.with_shape(shape))
}

pub fn infer_reduce_window(x: &TensorType, p: &WindowParams) -> Result<TensorType> {
    let op = "stablehlo.reduce_window";
    let r = x.rank();
    if p.dims.len() != r
        || p.strides.len() != r
        || p.padding.len() != r
        || p.window_dilations.len() != r
    {
        return Err(DialectError::invalid(
            op,
            "window lists must match the operand rank",
        ));
    }
    let mut shape = Vec::with_capacity(r);
    for i in 0..r {
        let padded = x.shape[i] + p.padding[i].0 + p.padding[i].1;
        let window = (p.dims[i] - 1) * p.window_dilations[i] + 1;
        if padded < window || p.strides[i] < 1 {
            return Err(DialectError::invalid(
                op,
                format!("window larger than padded input {x}"),
            ));
        }
        shape.push((padded - window) / p.strides[i] + 1);
    }
    Ok(x.with_shape(shape))
}

pub fn infer_gather(
    operand: &TensorType,
    indices: &TensorType,
    d: &GatherDims,
) -> Result<TensorType> {
    let op = "stablehlo.gather";
    if d.slice_sizes.len() != operand.rank()
        || d.index_vector_dim < 0
        || d.index_vector_dim as usize > indices.rank()
    {
        return Err(DialectError::invalid(
            op,
            "slice sizes or index_vector_dim out of range",
        ));
    }
    let mut batch: Vec<i64> = indices.shape.clone();
    if (d.index_vector_dim as usize) < indices.rank() {
        batch.remove(d.index_vector_dim as usize);
    }
    let offsets: Vec<i64> = (0..operand.rank() as i64)
        .filter(|i| !d.collapsed_slice_dims.contains(i))
        .map(|i| d.slice_sizes[i as usize])
        .collect();
    if offsets.len() != d.offset_dims.len() {
        return Err(DialectError::invalid(
            op,
            "offset_dims does not match the slice rank",
        ));
    }
    let rank = batch.len() + offsets.len();
    let mut shape = vec![0; rank];
    let (mut bi, mut oi) = (0, 0);
    for (i, s) in shape.iter_mut().enumerate() {
        if d.offset_dims.contains(&(i as i64)) {
            *s = offsets[oi];
            oi += 1;
        } else {
            *s = *batch
                .get(bi)
                .ok_or_else(|| DialectError::invalid(op, "bad offset_dims"))?;
            bi += 1;
        }
    }
    Ok(operand.with_shape(shape))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_are_exact_and_parseable() {
        assert_eq!(scalar_literal(DType::F32, 1.0), "1.000000000e0");
        assert_eq!(scalar_literal(DType::F32, f64::NEG_INFINITY), "0xFF800000");
        assert_eq!(scalar_literal(DType::Bf16, f64::INFINITY), "0x7F80");
        assert_eq!(scalar_literal(DType::F16, f64::NEG_INFINITY), "0xFC00");
        assert_eq!(scalar_literal(DType::I64, 3.0), "3");
        assert_eq!(scalar_literal(DType::Bool, 1.0), "true");
    }

    #[test]
    fn dot_general_infers_batch_then_free_dims() {
        let l = TensorType::new(vec![2, 3, 4], DType::F32);
        let r = TensorType::new(vec![2, 4, 5], DType::F32);
        let d = DotDims {
            lhs_batch: vec![0],
            rhs_batch: vec![0],
            lhs_contract: vec![2],
            rhs_contract: vec![1],
        };
        assert_eq!(infer_dot_general(&l, &r, &d).unwrap().shape, vec![2, 3, 5]);
        let bad = TensorType::new(vec![2, 5, 5], DType::F32);
        assert!(infer_dot_general(&l, &bad, &d).is_err());
    }

    #[test]
    fn gather_shape_for_embedding() {
        let table = TensorType::new(vec![10, 4], DType::F32);
        let idx = TensorType::new(vec![2, 3, 1], DType::I64);
        let d = GatherDims {
            offset_dims: vec![2],
            collapsed_slice_dims: vec![0],
            start_index_map: vec![0],
            index_vector_dim: 2,
            slice_sizes: vec![1, 4],
        };
        assert_eq!(infer_gather(&table, &idx, &d).unwrap().shape, vec![2, 3, 4]);
    }
}
