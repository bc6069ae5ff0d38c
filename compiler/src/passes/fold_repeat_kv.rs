//! `aten-fold-repeat-kv`: scaled dot-product attention over Hugging Face's
//! `repeat_kv(k, n)` and `repeat_kv(v, n)` becomes attention over `k` and `v` with
//! `enable_gqa = true` (ATen level, before lowering).
//!
//! Grouped-query models (Llama, Qwen, Mistral, Gemma...) with SDPA attention repeat each
//! key/value head `n` times before calling `scaled_dot_product_attention`:
//! `x[:, :, None].expand(B, Hkv, n, S, D).reshape(B, Hkv * n, S, D)`, in ATen
//! `unsqueeze(dim=r-3)`, `expand`, then `reshape`/`view`/`_unsafe_view` (Core ATen puts a
//! `clone` before the view). A decode step reads its whole KV cache through those
//! repeats: lowered as written, XLA makes an `n`-times larger copy of every layer's
//! cache (or upcasts and reads it `n` times). PyTorch's own flag for the layout,
//! `enable_gqa` (query head `h` attends with key/value head `h / n`, exactly what
//! `repeat_kv` builds), says the same without the copy, and the lowering then computes
//! the two products over groups of query heads and the unrepeated key and value
//! (`lower_aten_to_stablehlo::attention`). Every score and output element is the same
//! sum of the same products.
//!
//! The rewrite fires when both key and value are such repeats with the same `n >= 2`
//! and the attention's `enable_gqa` is absent or false; it only redirects the
//! attention's operands (the repeats, left without uses, are dropped after lowering).

use melior::ir::Module;
use melior::Context;
use mlir_sys::{MlirOperation, MlirValue};

use super::{ir, Pass};
use crate::error::CompileError;

pub struct FoldRepeatKv;

pub const NAME: &str = "aten-fold-repeat-kv";

const SDPA: &str = "aten.scaled_dot_product_attention.default";

impl Pass for FoldRepeatKv {
    fn name(&self) -> &'static str {
        NAME
    }
    fn description(&self) -> &'static str {
        "SDPA over repeat_kv'd key/value as SDPA with enable_gqa over the unrepeated heads (ATen level)"
    }
    fn run<'c>(&self, _ctx: &'c Context, module: Module<'c>) -> Result<Module<'c>, CompileError> {
        for block in ir::function_blocks(&module) {
            let mut found = Vec::new();
            ir::for_each_op(block, |op| {
                if ir::op_name(op) == SDPA {
                    found.push(op);
                }
            });
            for op in found {
                rewrite(op);
            }
        }
        Ok(module)
    }
}

/// The position of operand `name` among the op's tensor operands (`operand_names`).
fn operand_index(op: MlirOperation, name: &str) -> Option<usize> {
    let names = ir::array_elements(op, "operand_names");
    names
        .iter()
        .position(|a| ir::string_value(*a).as_deref() == Some(name))
}

fn rewrite(op: MlirOperation) -> Option<()> {
    if ir::attribute_text(op, "enable_gqa").as_deref() == Some("true") {
        return None;
    }
    let (qi, ki, vi) = (
        operand_index(op, "query")?,
        operand_index(op, "key")?,
        operand_index(op, "value")?,
    );
    let operands = ir::operands(op);
    let q = ir::tensor_type(operands[qi])?;
    let r = q.shape.len();
    if r < 3 {
        return None;
    }
    let (k, nk) = repeated(operands[ki], r)?;
    let (v, nv) = repeated(operands[vi], r)?;
    let (kt, vt) = (ir::tensor_type(k)?, ir::tensor_type(v)?);
    // The query's heads are the repeated ones (query heads = n * key/value heads).
    if nk != nv
        || nk < 2
        || kt.shape[r - 3] * nk != q.shape[r - 3]
        || vt.shape[r - 3] != kt.shape[r - 3]
    {
        return None;
    }
    let ctx = ir::context(op);
    let yes = ir::parse_attribute(ctx, "true")?;
    ir::set_operand(op, ki as isize, k);
    ir::set_operand(op, vi as isize, v);
    ir::set_attribute_value(op, "enable_gqa", yes);
    Some(())
}

/// `x` and `n` when `v` is `repeat_kv(x, n)` of rank `r`: `x` `[..., H, S, D]` unsqueezed
/// at `r - 3`, expanded to `[..., H, n, S, D]` and viewed as `[..., H * n, S, D]`.
fn repeated(v: MlirValue, r: usize) -> Option<(MlirValue, i64)> {
    let view = ir::defining_op(v)?;
    if !matches!(
        ir::op_name(view),
        "aten.reshape.default" | "aten.view.default" | "aten._unsafe_view.default"
    ) {
        return None;
    }
    let mut expanded = ir::operands(view)[0];
    let mut expand = ir::defining_op(expanded)?;
    if matches!(ir::op_name(expand), "aten.clone.default") {
        expanded = ir::operands(expand)[0];
        expand = ir::defining_op(expanded)?;
    }
    if ir::op_name(expand) != "aten.expand.default" {
        return None;
    }
    let unsqueezed = ir::operands(expand)[0];
    let unsqueeze = ir::defining_op(unsqueezed)?;
    if ir::op_name(unsqueeze) != "aten.unsqueeze.default" {
        return None;
    }
    let x = ir::operands(unsqueeze)[0];
    let (xt, ut, et, out) = (
        ir::tensor_type(x)?,
        ir::tensor_type(unsqueezed)?,
        ir::tensor_type(expanded)?,
        ir::tensor_type(v)?,
    );
    let h = r - 3;
    let dim = ir::i64_attribute(unsqueeze, "dim")?;
    let dim = if dim < 0 { dim + r as i64 + 1 } else { dim };
    if xt.shape.len() != r
        || dim != h as i64 + 1
        || ut.shape.len() != r + 1
        || et.shape.len() != r + 1
    {
        return None;
    }
    if xt.dtype != out.dtype {
        return None;
    }
    // The expansion only along the new dimension; the view merges it into the heads.
    let n = et.shape[h + 1];
    let mut expect = xt.shape[..=h].to_vec();
    expect.push(n);
    expect.extend_from_slice(&xt.shape[h + 1..]);
    if et.shape != expect {
        return None;
    }
    let mut merged = xt.shape.clone();
    merged[h] *= n;
    (out.shape == merged).then_some((x, n))
}
