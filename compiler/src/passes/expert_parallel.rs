//! `tpuc-expert-parallel`: under expert parallelism, each device computes the grouped
//! matmuls of a mixture-of-experts layer for its own experts and the rows routed to
//! them only, instead of XLA's partitioning of the dense form.
//!
//! Runs after `stablehlo-propagate-sharding`, on the grouped-matmul composites of
//! `@main` (`aten._grouped_mm`, `transformers.grouped_mm_fallback`: `x [S, K]`, `w [E,
//! K, N]`, `offs [E]`, outlined at -O2) whose weight is a view (transposes, converts)
//! of an argument split on its expert dimension (`--shard expert`: axes `A0`, `p0`
//! shards). Each becomes a manual computation over every mesh axis:
//!
//! - in: `x` whole on every device (its feature dimension split like the weight's, if
//!   the weight's is), the argument the weight is a view of, as it is stored (each
//!   device's shard; the views, such as the transpose of transformers' `[E, N, K]`
//!   expert weights, are applied to the shard inside, so no transposed copy of the
//!   whole weight is made), giving `[E / p0, K / p1, N / p2]` per device, `offs` whole, and an iota `[p0]` split on `A0` (each device's index
//!   among the expert shards, read without `partition_id` or device numbering);
//! - body: the rows of the device's experts moved to the top ([`ExpertShare`]:
//!   contiguous for monotone offsets), the grouped-matmul composite of the local
//!   experts on them (its decomposition the routed loop of `library_ops`), the rows put
//!   back; rows of other devices' experts are zero;
//! - out: `[p0 * p1, S, N]`, each device's partial result on its own slice of the
//!   leading dimension (split on `A0` then `A1`), summed over it outside the manual
//!   computation, which XLA partitions as an all-reduce (or a reduce-scatter where the
//!   consumer is split). The sum is in f32 for f16/bf16 results when the contraction is
//!   split (`p1 > 1`); otherwise each row has one non-zero term and the sum is exact.
//!
//! Per device, the loop runs the chunks of its own experts' rows only (with balanced
//! routing, 1/p0 of the routed work), and no expert weight moves. A cost analysis
//! counts the loop at its bound, `ceil(S / C) + E / p0` chunks: every routed row once,
//! the case where all rows go to one device's experts. Up to `DENSE_ROWS` rows each
//! device multiplies every row by each of its experts and selects instead.
//!
//! Offsets outside the op's contract: bounded as PyTorch's slices are (negative from
//! the end, clamped into the rows), never read or written out of bounds; offsets that
//! are not monotone, which no router produces, give PyTorch's result too: each device
//! keeps only the rows whose last covering group is one of its experts (PyTorch's loop
//! lets a later group overwrite an earlier one's rows), so the sum over devices has
//! every row from one device (see [`ExpertShare`]).
//!
//! The manual computation is written in GSPMD's form (`Sharding` and
//! `SPMDFullToShardShape` custom calls into `{manual}`, a call of the body,
//! `SPMDShardToFullShape` out) in both of tpuc's sharding forms: XLA disables Shardy
//! for a module that carries GSPMD shardings, as tpuc's Shardy form does ("Module has
//! GSPMD attrs or ops, but Shardy is enabled. Disabling Shardy and falling back to
//! using GSPMD propagation", the CPU plugin and libtpu of `.deps`, Dec 2026), and then
//! leaves Shardy's round-trip form of a manual computation
//! (`xla.sdy.GlobalToLocalShape`) to the backend, which has no such custom call. For
//! the same reason libtpu's GSPMD partitioner refuses `chlo.ragged_dot` even inside
//! the manual computation (a CHECK: "RaggedDot is only supported with Shardy"), so a
//! TPU executable keeps the routed loop here (`driver.rs`).
//!
//! Composites whose weight is not split on its expert dimension, and programs without a
//! mesh, are left as they are (their dense form, see `pipeline::for_compile`).

use melior::ir::{Location, Module};
use melior::Context;
use mlir_sys::{MlirOperation, MlirValue};
use tpuc_artifact::sharding::{Mesh, TensorSharding};
use tpuc_artifact::DType;
use tpuc_dialects::stablehlo::ReduceKind;
use tpuc_dialects::{Emitter, TValue, TensorType};

use super::lower_aten_to_stablehlo::{
    grouped_mm_chunk_rows, grouped_mm_in, ExpertShare, GroupedMmForm, GROUPED_MM,
};
use super::{composites, ir, Pass};
use crate::error::CompileError;
use crate::import::quote;

pub const NAME: &str = "tpuc-expert-parallel";

/// Up to this many rows (a decode step's routed tokens), each device multiplies every
/// row by each of its own experts and selects (the dense form) instead of looping over
/// row chunks: it reads each local expert's weight once, the least the worst case (all
/// rows routed to one device's experts) needs, where the loop's bound reads a weight per
/// chunk; and its FLOPs stay below the weight read's time on a TPU (128 bf16 rows per
/// weight element take about half the read's time at v5e's 197 TFLOP/s and 819 GB/s).
const DENSE_ROWS: i64 = 128;

pub struct ExpertParallel;

impl Pass for ExpertParallel {
    fn name(&self) -> &'static str {
        NAME
    }
    fn description(&self) -> &'static str {
        "With a mesh: grouped matmuls whose expert weights are split on their expert dimension computed per device on its own experts and routed rows (a manual computation), summed across the expert shards"
    }
    fn run<'c>(&self, ctx: &'c Context, module: Module<'c>) -> Result<Module<'c>, CompileError> {
        run(ctx, &module)?;
        Ok(module)
    }
}

fn internal(message: String) -> CompileError {
    CompileError::Internal(format!("{NAME}: {message}"))
}

fn run(ctx: &Context, module: &Module<'_>) -> Result<(), CompileError> {
    let module_op = module.as_operation().to_raw();
    let Some(mesh_text) = ir::attribute(module_op, "tpuc.mesh").and_then(ir::string_value) else {
        return Ok(());
    };
    let mesh = Mesh::parse(&mesh_text).map_err(|e| internal(format!("tpuc.mesh: {e}")))?;
    let Some(main) = ir::main_block(module) else {
        return Ok(());
    };
    let func = ir::block_parent(main);
    let arg_shardings: Vec<Option<TensorSharding>> = ir::array_elements(func, "arg_attrs")
        .into_iter()
        .map(|d| {
            ir::dictionary_entry(d, "tpuc.sharding")
                .and_then(ir::string_value)
                .and_then(|t| TensorSharding::parse(&t).ok())
        })
        .collect();
    let args = ir::block_arguments(main);
    let funcs = ir::named_function_blocks(module);
    let mut names = composites::Symbols::of(&funcs);
    let mut replaced = Vec::new();
    for op in ir::block_ops(main) {
        let is_grouped_mm = ir::op_name(op) == "stablehlo.composite"
            && ir::attribute(op, "name")
                .and_then(ir::string_value)
                .is_some_and(|n| GROUPED_MM.contains(&n.as_str()));
        if !is_grouped_mm {
            continue;
        }
        let Some(plan) = Plan::of(&mesh, op, &args, &arg_shardings) else {
            continue;
        };
        let old = ir::symbol_ref(op, "decomposition");
        let precision = old.as_ref().and_then(|old| {
            funcs
                .iter()
                .find(|(n, _)| n == old)
                .and_then(|(_, b)| *b)
                .and_then(composites::dot_precision)
        });
        rewrite(ctx, module, op, &plan, &mesh, &mut names, precision)?;
        if let Some(old) = old {
            replaced.push(old);
        }
    }
    // The dense decompositions no composite uses any more.
    let funcs = ir::named_function_blocks(module);
    let used = composites::decomposition_symbols(&funcs);
    for (name, block) in &funcs {
        if replaced.contains(name) && !used.contains(name) {
            if let Some(b) = block {
                ir::erase(ir::block_parent(*b));
            }
        }
    }
    Ok(())
}

/// How one grouped matmul is split: the weight's sharding (`[A0, A1, A2]`) and the
/// operand and result types.
struct Plan {
    x: TensorType,
    w: TensorType,
    offs: TensorType,
    out: TensorType,
    weight: TensorSharding,
    /// The argument the weight is a view of, its type and sharding, and the views
    /// (transposes, converts) from it to the weight, in order: the argument enters the
    /// manual computation as it is stored and the views are applied to each device's
    /// shard inside, so that no transposed copy of a whole weight is made to enter it.
    arg: MlirValue,
    arg_ty: TensorType,
    stored: TensorSharding,
    views: Vec<View>,
}

/// One op between an argument and the weight a grouped matmul reads.
enum View {
    Transpose(Vec<i64>),
    Convert(DType),
}

impl Plan {
    fn of(
        mesh: &Mesh,
        op: MlirOperation,
        args: &[MlirValue],
        arg_shardings: &[Option<TensorSharding>],
    ) -> Option<Plan> {
        let operands = ir::operands(op);
        let [x, w, offs] = operands.as_slice() else {
            return None;
        };
        let results = ir::results(op);
        let [out] = results.as_slice() else {
            return None;
        };
        let (x, wt, offs, out) = (
            ir::tensor_type(*x)?,
            ir::tensor_type(*w)?,
            ir::tensor_type(*offs)?,
            ir::tensor_type(*out)?,
        );
        if x.rank() != 2
            || wt.rank() != 3
            || offs.rank() != 1
            || !offs.dtype.is_integer()
            || wt.shape[0] != offs.shape[0]
            || [x.shape.as_slice(), wt.shape.as_slice()]
                .concat()
                .contains(&0)
        {
            return None;
        }
        // The weight as a view of an argument: `view[d]` is the argument's dimension
        // that the weight's dimension `d` is.
        let mut view: Vec<usize> = vec![0, 1, 2];
        let mut views = Vec::new();
        let mut v = *w;
        let arg = loop {
            if let Some(i) = args.iter().position(|a| a.ptr == v.ptr) {
                break i;
            }
            let def = ir::defining_op(v)?;
            match ir::op_name(def) {
                "stablehlo.convert" => {
                    views.push(View::Convert(ir::tensor_type(ir::result(def, 0))?.dtype));
                }
                "stablehlo.transpose" => {
                    let perm = ir::i64_array(def, "permutation")?;
                    for d in view.iter_mut() {
                        *d = *perm.get(*d)? as usize;
                    }
                    views.push(View::Transpose(perm));
                }
                _ => return None,
            }
            v = ir::operands(def).first().copied()?;
        };
        views.reverse();
        let stored = arg_shardings.get(arg)?.as_ref()?;
        let weight = TensorSharding {
            dims: view
                .iter()
                .map(|&d| stored.dims.get(d).cloned())
                .collect::<Option<_>>()?,
        };
        if weight.dims[0].is_empty() {
            return None;
        }
        weight.check(mesh, &wt.shape).ok()?;
        Some(Plan {
            arg: args[arg],
            arg_ty: ir::tensor_type(args[arg])?,
            stored: stored.clone(),
            views,
            x,
            w: wt,
            offs,
            out,
            weight,
        })
    }
}

/// The product of the sizes of `axes`.
fn shards(mesh: &Mesh, axes: &[String]) -> i64 {
    axes.iter()
        .map(|a| mesh.axis(a).map_or(1, |a| a.size))
        .product()
}

#[allow(clippy::too_many_arguments)]
fn rewrite(
    ctx: &Context,
    module: &Module<'_>,
    op: MlirOperation,
    plan: &Plan,
    mesh: &Mesh,
    names: &mut composites::Symbols,
    precision: Option<String>,
) -> Result<(), CompileError> {
    let build = |e: tpuc_dialects::DialectError| internal(e.to_string());
    let lower = |e| internal(format!("{e:?}"));
    let [a0, a1, a2] = [0, 1, 2].map(|d| plan.weight.dims[d].clone());
    let (p0, p1, p2) = (shards(mesh, &a0), shards(mesh, &a1), shards(mesh, &a2));
    let s = plan.x.shape[0];
    let (ne, n) = (plan.w.shape[0], plan.w.shape[2]);
    let local = ne / p0;
    // A split contraction sums partial products: in f32 for 16-bit results.
    let sum_dtype = if p1 > 1 && matches!(plan.out.dtype, DType::F16 | DType::Bf16) {
        DType::F32
    } else {
        plan.out.dtype
    };
    let partial_ty = TensorType::new(vec![p0 * p1, s, n], sum_dtype);
    let index_ty = TensorType::new(vec![p0], DType::I32);
    let in_shardings = [
        TensorSharding {
            dims: vec![Vec::new(), a1.clone()],
        },
        plan.stored.clone(),
        TensorSharding::replicated(1),
        TensorSharding {
            dims: vec![a0.clone()],
        },
    ];
    let out_sharding = TensorSharding {
        dims: vec![[a0.clone(), a1.clone()].concat(), Vec::new(), a2.clone()],
    };
    let global = [
        plan.x.clone(),
        plan.arg_ty.clone(),
        plan.offs.clone(),
        index_ty.clone(),
    ];
    let locals: Vec<TensorType> = global
        .iter()
        .zip(&in_shardings)
        .map(|(t, sh)| {
            let shape = sh.shard_shape(mesh, &t.shape)?;
            Ok(TensorType::new(shape, t.dtype))
        })
        .collect::<Result<_, tpuc_artifact::sharding::ShardingError>>()
        .map_err(|e| internal(e.to_string()))?;
    let local_out = TensorType::new(vec![1, s, n / p2], sum_dtype);
    // SAFETY: the composite's location belongs to the module's context.
    let loc = unsafe { Location::from_raw(ir::location(op)) };

    // The local composite's decomposition: the routed loop of the local experts (or,
    // for a few rows, the dense form, see `DENSE_ROWS`).
    let lx = &locals[0];
    let lw = &TensorType::new(
        plan.weight
            .shard_shape(mesh, &plan.w.shape)
            .map_err(|e| internal(e.to_string()))?,
        plan.w.dtype,
    );
    let local_mm_ty = TensorType::new(vec![s, n / p2], plan.out.dtype);
    let decomposition = names.fresh("tpuc.expert_parallel.grouped_mm");
    {
        let args: Vec<_> = [
            lx.clone(),
            lw.clone(),
            TensorType::new(vec![local], plan.offs.dtype),
        ]
        .into_iter()
        .map(|t| (t, loc))
        .collect();
        let f = tpuc_dialects::func::append_function(
            ctx,
            module,
            &decomposition,
            &args,
            std::slice::from_ref(&local_mm_ty),
            loc,
        )
        .map_err(build)?;
        ir::set_attribute(f.op, "sym_visibility", "\"private\"");
        let a = &f.arguments;
        let form = if s <= DENSE_ROWS {
            GroupedMmForm::Dense
        } else {
            GroupedMmForm::Routed
        };
        // Chunks of about the rows an expert gets with balanced routing (S / E), so that
        // a chunk's padding stays small, within what bounds the loop's work (see
        // `chunk_rows`).
        let per_expert = (s / ne).max(1);
        let mut chunk = grouped_mm_chunk_rows(s, local);
        while chunk > per_expert {
            chunk /= 2;
        }
        let y = grouped_mm_in(&f.emitter, form, &a[0], &a[1], &a[2], &local_mm_ty, chunk)
            .map_err(lower)?;
        f.emitter.func_return(&[&y]).map_err(build)?;
        if let (Some(p), Some(&block)) = (&precision, ir::region_blocks(f.op).first()) {
            for dot in ir::nested_ops(block) {
                if ir::op_name(dot) == "stablehlo.dot_general" {
                    ir::set_attribute(dot, "precision_config", p);
                }
            }
        }
    }

    // The manual computation's body.
    let body_name = names.fresh("tpuc.expert_parallel.body");
    {
        let args: Vec<_> = locals.iter().map(|t| (t.clone(), loc)).collect();
        let f = tpuc_dialects::func::append_function(
            ctx,
            module,
            &body_name,
            &args,
            std::slice::from_ref(&local_out),
            loc,
        )
        .map_err(build)?;
        ir::set_attribute(f.op, "sym_visibility", "\"private\"");
        let (e, a) = (&f.emitter, &f.arguments);
        let share = ExpertShare::of(e, &a[0], &a[2], &a[3], local).map_err(lower)?;
        // The weight's views, on this device's shard of the argument.
        let mut w = a[1].clone();
        for v in &plan.views {
            w = match v {
                View::Transpose(perm) => e.transpose(&w, perm),
                View::Convert(dtype) => e.convert(&w, *dtype),
            }
            .map_err(build)?;
        }
        let mut attrs = vec![
            ("name", ir::attribute_text(op, "name").unwrap_or_default()),
            ("decomposition", format!("@{decomposition}")),
        ];
        for key in ["composite_attributes", "version"] {
            if let Some(t) = ir::attribute_text(op, key) {
                attrs.push((key, t));
            }
        }
        let y = e
            .op(
                "stablehlo.composite",
                &[&share.x, &w, &share.offs],
                &attrs,
                std::slice::from_ref(&local_mm_ty),
            )
            .map_err(build)?
            .remove(0);
        let placed = share.place(e, &y).map_err(lower)?;
        let placed = e.convert(&placed, sum_dtype).map_err(build)?;
        let out = e.reshape(&placed, &local_out.shape).map_err(build)?;
        e.func_return(&[&out]).map_err(build)?;
    }

    // In @main, in place of the composite.
    let e = Emitter::before(ctx, op, loc);
    let mut operands_raw = ir::operands(op);
    operands_raw[1] = plan.arg;
    let operands: Vec<TValue> = operands_raw
        .into_iter()
        .map(|v| {
            // SAFETY: `v` is a live value of the module.
            TValue::from_value(unsafe { melior::ir::Value::from_raw(v) })
        })
        .collect::<Result<_, _>>()
        .map_err(build)?;
    let index = e.iota(&index_ty, 0).map_err(build)?;
    let inputs: Vec<&TValue> = operands.iter().chain([&index]).collect();
    // GSPMD's manual sharding (see the module comment for why not Shardy's form).
    let gspmd = |s: &TensorSharding| s.gspmd(mesh).map_err(|e| internal(e.to_string()));
    let mut local_values = Vec::new();
    for ((v, sh), t) in inputs.iter().zip(&in_shardings).zip(&locals) {
        let tagged = sharding_call(&e, "Sharding", v, &gspmd(sh)?, &v.ty)?;
        local_values.push(sharding_call(
            &e,
            "SPMDFullToShardShape",
            &tagged,
            "{manual}",
            t,
        )?);
    }
    let local_refs: Vec<&TValue> = local_values.iter().collect();
    let body = e
        .op(
            "func.call",
            &local_refs,
            &[("callee", format!("@{body_name}"))],
            std::slice::from_ref(&local_out),
        )
        .map_err(build)?;
    let tagged = sharding_call(&e, "Sharding", &body[0], "{manual}", &local_out)?;
    let partial = sharding_call(
        &e,
        "SPMDShardToFullShape",
        &tagged,
        &gspmd(&out_sharding)?,
        &partial_ty,
    )?;
    let summed = e
        .reduce(&partial, 0.0, &[0], ReduceKind::Add)
        .map_err(build)?;
    let result = e.convert(&summed, plan.out.dtype).map_err(build)?;
    let weight = ir::operands(op)[1];
    ir::replace_uses(ir::result(op, 0), result.raw());
    ir::erase(op);
    // The views the manual computation now applies itself, unless something else
    // reads them.
    let mut v = weight;
    while let Some(def) = ir::defining_op(v).filter(|_| !ir::has_uses(v)) {
        if !matches!(
            ir::op_name(def),
            "stablehlo.transpose" | "stablehlo.convert"
        ) {
            break;
        }
        v = ir::operands(def)[0];
        ir::erase(def);
    }
    Ok(())
}

/// `stablehlo.custom_call @target(v) {mhlo.sharding = sharding} : ty`, one of GSPMD's
/// sharding markers.
fn sharding_call(
    e: &Emitter,
    target: &str,
    v: &TValue,
    sharding: &str,
    ty: &TensorType,
) -> Result<TValue, CompileError> {
    e.op(
        "stablehlo.custom_call",
        &[v],
        &[
            ("call_target_name", quote(target)),
            ("mhlo.sharding", quote(sharding)),
        ],
        std::slice::from_ref(ty),
    )
    .map_err(|e| internal(e.to_string()))?
    .pop()
    .ok_or_else(|| internal(format!("custom_call @{target} has no result")))
}
