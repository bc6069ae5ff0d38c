//! Operators that popular libraries register outside ATen and that appear in exported
//! models as they are: `transformers.grouped_mm_fallback` (the mixture-of-experts
//! grouped matmul of transformers 5) and `aten._grouped_mm`.
//!
//! # The grouped matmul
//!
//! `grouped_mm(input [S, K], weight [E, K, N], offs [E])`: rows `offs[i-1]..offs[i]` of
//! the input (sorted by expert, `offs[-1]` being 0) are multiplied by `weight[i]`; rows
//! past `offs[E-1]` are zero. Two forms:
//!
//! - [`GroupedMmForm::Routed`] (every target that runs loops): a `stablehlo.while` over
//!   fixed-size chunks of each expert's contiguous row range. Chunk `i` belongs to one
//!   expert `e`; it reads `C` rows of the input and `weight[e]` with `dynamic_slice`,
//!   multiplies them (`[C, K] x [K, N]`, accumulated in f32 for f16/bf16) and writes the
//!   rows of its range into the output with `dynamic_update_slice`, the others kept. An
//!   expert with `n` rows takes `ceil(n / C)` chunks, an empty one none, so the work is
//!   `S*K*N` plus at most `C - 1` rows per expert that has rows: `C` is the largest power
//!   of two at most `S / (2E)` (1 to 512), which keeps it within 1.5x of the routed
//!   FLOPs whatever `E` is, with no `[S, E, N]` temporary. Each iteration also reads
//!   a few `[E]` vectors (the expert of the chunk is the number of experts whose first
//!   chunk is at or before it). The loop runs a fixed `ceil(S / C) + E` times (the most
//!   chunks groups that do not overlap have), each chunk under a `stablehlo.if`, so its
//!   trip count is in the program and a cost analysis counts its bound; a second loop
//!   takes any chunks past it, which only overlapping groups have (see
//!   [`chunk_loop`]). Under expert parallelism each device runs this loop on its own
//!   experts (`tpuc-expert-parallel`, [`ExpertShare`]).
//! - [`GroupedMmForm::Dense`] (Neuron, whose devices take no data-dependent loops or
//!   dynamic slices, and partitioned programs, see `pipeline::for_compile`, except
//!   where `tpuc-expert-parallel` replaces it by each device's routed loop): every row
//!   times every expert (`[S, E, N]`) and a one-hot select of the row's expert; E times
//!   the routed work.
//!
//! `aten._grouped_mm` of two matrices (`x [K, S]`, `y [S, N]`, offsets over S, to
//! `[E, K, N]`) is the ragged contraction autograd's `_grouped_mm_mat2_backward` emits
//! for the weight's gradient of a grouped matmul: the same chunk loop, each chunk's
//! `[K, C] x [C, N]` product added to its group's slot (f32 for f16/bf16, rounded once
//! at the end), or densely as one `[E, K, S] x [E, S, N]` product of per-group masked
//! operands. No training graph of the corpus holds one (none has a mixture of experts),
//! so only the lit and CPU tests check it. transformers' `grouped_mm_fallback` has no
//! backward op: its autograd function is a Python loop over `offs.tolist()`, which an
//! exported joint graph cannot hold as one op (tpuc would see its data-dependent ops,
//! if torch.export traced it at all; not tried here: no torch on this machine).
//!
//! On TPU, `aten-outline-composites` wraps the node in a `stablehlo.composite` (at -O2)
//! whose decomposition is the routed loop, and `tpu-grouped-mm-to-ragged-dot` replaces
//! that decomposition by `chlo.ragged_dot` in the program libtpu compiles.
//!
//! # Offsets outside the contract
//!
//! Both forms compute what PyTorch's loops compute (ATen's `_grouped_mm_fallback` on
//! CPU, transformers' `_grouped_mm_fallback`): group `i` is the slice
//! `rows[offs[i-1]:offs[i]]` with Python's slicing rules, a negative offset counting
//! from the end (`+ S`), both ends clamped into `[0, S]`, an end before its start an
//! empty group; groups are written in order, so with offsets that are not monotone a
//! later group overwrites the rows an earlier one wrote (`offs = [6, 2, 8]`, S = 8: rows
//! 0-1 take expert 0, rows 2-7 expert 2). Rows no group covers are zero (transformers'
//! output starts from zeros; ATen's starts from `torch.empty`, so PyTorch leaves them
//! undefined there). No offset reads or writes out of bounds: each chunk's start is
//! clamped to `S - C` by this lowering itself (not left to `dynamic_slice`), and its
//! row mask is computed from the clamped start, so a clamped chunk writes exactly the
//! rows of its range. The TPU form ([`ragged_dot`]) and expert parallelism's shares
//! ([`ExpertShare`]) give the same for any offsets.

use tpuc_artifact::DType;
use tpuc_dialects::stablehlo::{Cmp, DotDims, ReduceKind};
use tpuc_dialects::{Emitter, TValue, TensorType};

use super::{AtenOp, LResult, LowerError};

/// How `grouped_mm` is lowered (the lowering pass's `grouped-mm` option).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GroupedMmForm {
    /// A loop over row chunks of each expert: about the routed FLOPs.
    #[default]
    Routed,
    /// Every row times every expert, then a select: no loop, E times the FLOPs.
    Dense,
}

impl GroupedMmForm {
    pub fn parse(text: &str) -> Option<GroupedMmForm> {
        match text {
            "routed" => Some(GroupedMmForm::Routed),
            "dense" => Some(GroupedMmForm::Dense),
            _ => None,
        }
    }
}

/// The node targets of the grouped matmul.
pub const GROUPED_MM: &[&str] = &[
    "transformers.grouped_mm_fallback.default",
    "aten._grouped_mm.default",
];

pub fn lower(op: &AtenOp, e: &Emitter, form: GroupedMmForm) -> Option<LResult<Vec<TValue>>> {
    if GROUPED_MM.contains(&op.target.as_str()) {
        return Some(grouped_mm(op, e, form));
    }
    None
}

fn grouped_mm(op: &AtenOp, e: &Emitter, form: GroupedMmForm) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?;
    let input = op.first_tensor()?;
    let weight = op
        .tensor_opt("weight")
        .or(op.tensor_opt("mat2"))
        .ok_or_else(|| LowerError::Invalid("missing weight".into()))?;
    let offs = op.tensor("offs")?;
    if op.tensor_opt("bias").is_some() {
        return Err(LowerError::Unsupported(
            "grouped_mm with a bias (PyTorch does not support one yet either)".into(),
        ));
    }
    if input.rank() == 2 && weight.rank() == 2 && offs.rank() == 1 {
        return Ok(vec![contracting(e, input, weight, offs, ty, form)?]);
    }
    if input.rank() != 2 || weight.rank() != 3 || offs.rank() != 1 {
        return Err(LowerError::Unsupported(format!(
            "grouped_mm supports input [S, K], weight [E, K, N], offs [E] and input [K, S], \
             weight [S, N], offs [E]; got {}, {}, {}",
            input.ty, weight.ty, offs.ty
        )));
    }
    let (s, k) = (input.shape()[0], input.shape()[1]);
    let (ne, n) = (weight.shape()[0], weight.shape()[2]);
    if weight.shape()[1] != k || offs.shape()[0] != ne || ty.shape != [s, n] {
        return Err(LowerError::Invalid(format!(
            "grouped_mm of {}, {}, {} cannot give {ty}",
            input.ty, weight.ty, offs.ty
        )));
    }
    let x = e.convert(input, ty.dtype)?;
    let w = e.convert(weight, ty.dtype)?;
    if s == 0 || ne == 0 || n == 0 || k == 0 {
        // No rows, no experts (every row uncovered) or an empty product: zeros.
        return Ok(vec![e.constant(ty, 0.0)?]);
    }
    let groups = Groups::of(e, offs, s)?;
    let out = match form {
        GroupedMmForm::Routed => routed(e, &x, &w, &groups, ty, chunk_rows(s, ne))?,
        GroupedMmForm::Dense => dense(e, &x, &w, &groups, ty)?,
    };
    Ok(vec![out])
}

/// The ragged contraction (`aten._grouped_mm` of two matrices, what autograd's
/// `_grouped_mm_mat2_backward` emits for a weight's gradient): `x [K, S]`, `y [S, N]`,
/// `offs [E]` to `[E, K, N]`, group `e` being `x[:, lo:hi] @ y[lo:hi, :]` over its
/// rows bounded as in the forward form; an empty group gives zeros (PyTorch's `mm_out`
/// of an empty contraction), and each group writes only its own slot.
fn contracting(
    e: &Emitter,
    x: &TValue,
    y: &TValue,
    offs: &TValue,
    ty: &TensorType,
    form: GroupedMmForm,
) -> LResult<TValue> {
    let (k, s) = (x.shape()[0], x.shape()[1]);
    let (ne, n) = (offs.shape()[0], y.shape()[1]);
    if y.shape()[0] != s || ty.shape != [ne, k, n] {
        return Err(LowerError::Invalid(format!(
            "grouped_mm of {}, {}, {} cannot give {ty}",
            x.ty, y.ty, offs.ty
        )));
    }
    let x = e.convert(x, ty.dtype)?;
    let y = e.convert(y, ty.dtype)?;
    if [s, ne, k, n].contains(&0) {
        return Ok(e.constant(ty, 0.0)?);
    }
    let groups = Groups::of(e, offs, s)?;
    match form {
        GroupedMmForm::Routed => routed_contracting(e, &x, &y, &groups, ty, chunk_rows(s, ne)),
        GroupedMmForm::Dense => dense_contracting(e, &x, &y, &groups, ty),
    }
}

/// Rows per chunk of the routed loop: the largest power of two at most `S / (2E)`,
/// between 1 and 512. An expert's last chunk computes at most `C - 1` rows it does not
/// write, so the loop's work is below `(S + E*C) * K * N <= 1.5 * S * K * N`. Each chunk
/// reads its expert's `[K, N]` weight: chunks of fewer than about 240 rows take longer
/// to read it than to multiply on a v5e (197 TFLOP/s against 819 GB/s), hence chunks
/// of up to 512 rows where `S / (2E)` allows.
pub fn chunk_rows(s: i64, experts: i64) -> i64 {
    let bound = (s / (2 * experts.max(1))).clamp(1, 512);
    let mut c = 1;
    while c * 2 <= bound {
        c *= 2;
    }
    c.min(s.max(1))
}

/// Each group's row range as PyTorch's loop slices it (see the module comment):
/// `lo`, `hi` ([E] i64, `0 <= lo <= hi <= S`); `end` is each offset bounded as a slice
/// end (`hi` before it is raised to `lo`, so `lo[i] == end[i-1]`).
struct Groups {
    lo: TValue,
    hi: TValue,
    end: TValue,
}

impl Groups {
    fn of(e: &Emitter, offs: &TValue, s: i64) -> LResult<Groups> {
        let ne = offs.shape()[0];
        let vec_ty = TensorType::new(vec![ne], DType::I64);
        let ends = e.convert(offs, DType::I64)?;
        let zero = e.constant(&vec_ty, 0.0)?;
        let rows = e.constant(&vec_ty, s as f64)?;
        // A slice bound as Python reads it: negative counts from the end, then clamped.
        let bound = |v: &TValue| -> LResult<TValue> {
            let negative = e.compare(Cmp::Lt, v, &zero)?;
            let wrapped = e.select(&negative, &e.add(v, &rows)?, v)?;
            Ok(e.clamp(&zero, &wrapped, &rows)?)
        };
        // Group i starts where group i-1 ended (0 for the first).
        let starts = if ne == 1 {
            e.constant(&vec_ty, 0.0)?
        } else {
            let first = e.constant(&TensorType::new(vec![1], DType::I64), 0.0)?;
            let before = e.slice(&ends, &[0], &[ne - 1], &[1])?;
            e.concatenate(&[&first, &before], 0)?
        };
        let lo = bound(&starts)?;
        let end = bound(&ends)?;
        let hi = e.max(&end, &lo)?;
        Ok(Groups { lo, hi, end })
    }

    /// Each row's owner (`[S]` i64): the last group whose range holds it, whose write
    /// PyTorch's loop keeps; -1 for a row no group covers. `[S, E]` compares: E is small.
    fn owner(&self, e: &Emitter, s: i64) -> LResult<TValue> {
        let ne = self.lo.shape()[0];
        let grid = TensorType::new(vec![s, ne], DType::I64);
        let rows = e.iota(&grid, 0)?;
        let experts = e.iota(&grid, 1)?;
        let lo = e.broadcast_in_dim(&self.lo, &[s, ne], &[1])?;
        let hi = e.broadcast_in_dim(&self.hi, &[s, ne], &[1])?;
        let inside = e.binary(
            "stablehlo.and",
            &e.compare(Cmp::Le, &lo, &rows)?,
            &e.compare(Cmp::Lt, &rows, &hi)?,
        )?;
        let candidate = e.select(&inside, &experts, &e.constant(&grid, -1.0)?)?;
        Ok(e.reduce(&candidate, -1.0, &[1], ReduceKind::MaxUnchecked)?)
    }

    /// Whether the groups tile the rows in order (`hi[i-1] == lo[i]`, a `tensor<i1>`):
    /// true for monotone offsets, the op's contract; then no group overlaps another and
    /// the order of the writes does not matter.
    fn contiguous(&self, e: &Emitter) -> LResult<TValue> {
        let ne = self.lo.shape()[0];
        if ne == 1 {
            return Ok(e.constant(&TensorType::scalar(DType::Bool), 1.0)?);
        }
        let before = e.slice(&self.hi, &[0], &[ne - 1], &[1])?;
        let after = e.slice(&self.lo, &[1], &[ne], &[1])?;
        let ordered = e.compare(Cmp::Le, &before, &after)?;
        Ok(e.reduce(&ordered, 1.0, &[0], ReduceKind::And)?)
    }
}

/// `v[index]` of a rank-1 `v`, as a scalar.
fn element(e: &Emitter, v: &TValue, index: &TValue) -> LResult<TValue> {
    let one = e.dynamic_slice(v, &[index], &[1])?;
    Ok(e.reshape(&one, &[])?)
}

/// The running sum of a rank-1 i64 `v` of E (few) elements, `out[i] = sum(v[..i])`
/// (exclusive) or `sum(v[..=i])` (inclusive), as a masked [E, E] reduction.
fn prefix_sum(e: &Emitter, v: &TValue, inclusive: bool) -> LResult<TValue> {
    let n = v.shape()[0];
    let square = TensorType::new(vec![n, n], DType::I64);
    let cmp = if inclusive { Cmp::Le } else { Cmp::Lt };
    let counted = e.compare(cmp, &e.iota(&square, 1)?, &e.iota(&square, 0)?)?;
    let spread = e.broadcast_in_dim(v, &[n, n], &[1])?;
    let masked = e.select(&counted, &spread, &e.constant(&square, 0.0)?)?;
    Ok(e.reduce(&masked, 0.0, &[1], ReduceKind::Add)?)
}

/// The chunks of the routed loop: `c` rows each, `first[e]` the index of group e's
/// first chunk (the exclusive [`prefix_sum`] of `ceil(count / c)`) and `total` their
/// number.
struct Schedule {
    c: i64,
    first: TValue,
    total: TValue,
    /// The most chunks groups that do not overlap can have: `ceil(S / C) + E`.
    bound: i64,
}

impl Schedule {
    fn of(e: &Emitter, g: &Groups, s: i64, c: i64) -> LResult<Schedule> {
        let ne = g.lo.shape()[0];
        let vec_ty = TensorType::new(vec![ne], DType::I64);
        let count = e.sub(&g.hi, &g.lo)?;
        let chunks = if c == 1 {
            count
        } else {
            let spare = e.constant(&vec_ty, (c - 1) as f64)?;
            e.div(&e.add(&count, &spare)?, &e.constant(&vec_ty, c as f64)?)?
        };
        let first = prefix_sum(e, &chunks, false)?;
        let total = e.reduce(&chunks, 0.0, &[0], ReduceKind::Add)?;
        let bound = (s + c - 1) / c + ne;
        Ok(Schedule {
            c,
            first,
            total,
            bound,
        })
    }
}

/// Chunk `i` inside the loop body (`first`, `lo`, `hi` as the body reads them): its
/// group, and a `[C]` mask of the rows `start..start + C` it reads that are its own
/// (rows `from..to`). `start` is clamped to `S - C` here, not left to `dynamic_slice`,
/// and the mask is computed from the clamped start, so a clamped chunk still takes
/// exactly the rows of its range.
struct Chunk {
    group: TValue,
    start: TValue,
    mine: TValue,
}

impl Chunk {
    fn of(
        b: &Emitter,
        i: &TValue,
        (first, lo, hi): (&TValue, &TValue, &TValue),
        c: i64,
        s: i64,
    ) -> LResult<Chunk> {
        let ne = first.shape()[0];
        let scalar = TensorType::scalar(DType::I64);
        // The last group whose first chunk is at or before `i` (an empty group's first
        // chunk is the next group's, which comes later).
        let started = b.compare(Cmp::Le, first, &b.broadcast_in_dim(i, &[ne], &[])?)?;
        let started = b.reduce(
            &b.convert(&started, DType::I64)?,
            0.0,
            &[0],
            ReduceKind::Add,
        )?;
        let group = b.sub(&started, &b.constant(&scalar, 1.0)?)?;
        let chunk_c = b.constant(&scalar, c as f64)?;
        let within = b.sub(i, &element(b, first, &group)?)?;
        let from = b.add(&element(b, lo, &group)?, &b.mul(&within, &chunk_c)?)?;
        let to = b.min(&b.add(&from, &chunk_c)?, &element(b, hi, &group)?)?;
        let start = b.min(&from, &b.constant(&scalar, (s - c) as f64)?)?;
        let row_ty = TensorType::new(vec![c], DType::I64);
        let index = b.add(
            &b.iota(&row_ty, 0)?,
            &b.broadcast_in_dim(&start, &[c], &[])?,
        )?;
        let at_or_after = b.compare(Cmp::Ge, &index, &b.broadcast_in_dim(&from, &[c], &[])?)?;
        let before = b.compare(Cmp::Lt, &index, &b.broadcast_in_dim(&to, &[c], &[])?)?;
        let mine = b.binary("stablehlo.and", &at_or_after, &before)?;
        Ok(Chunk { group, start, mine })
    }
}

/// The chunks of `schedule` in two `stablehlo.while` loops. The loop state is a
/// counter, `out` (the result, carried), then `reads` (passed through unchanged: XLA
/// takes closed loops); `step` maps the counter, the output and the reads to the next
/// output.
///
/// The first loop runs a fixed `ceil(S / C) + E` times, the most chunks groups that do
/// not overlap can have, each iteration doing its chunk only if it exists
/// (`stablehlo.if`): its trip count is in the program, so a cost analysis counts the
/// loop's work at this bound (`tpuc report`). The second loop takes the chunks past
/// that bound, which only overlapping groups (offsets that are not monotone) have;
/// it runs no iteration otherwise.
fn chunk_loop(
    e: &Emitter,
    schedule: Schedule,
    out: TValue,
    reads: &[&TValue],
    step: impl Fn(&Emitter, &TValue, &TValue, &[TValue], &TValue) -> LResult<TValue>,
) -> LResult<TValue> {
    let scalar = TensorType::scalar(DType::I64);
    let bound = schedule.bound;
    let mut state = vec![
        e.constant(&scalar, 0.0)?,
        out,
        schedule.first,
        schedule.total,
    ];
    state.extend(reads.iter().map(|v| (*v).clone()));
    let types: Vec<TensorType> = state.iter().map(|v| v.ty.clone()).collect();
    let out_ty = types[1].clone();
    // The first loop: a counter below a constant, each chunk under an `if`.
    let cond = e.region(&types, |inner: &Emitter, a: &[TValue]| {
        let limit = inner.constant(&scalar, bound as f64)?;
        Ok::<_, LowerError>(vec![inner.compare(Cmp::Lt, &a[0], &limit)?])
    })?;
    let body = e.region(&types, |b: &Emitter, a: &[TValue]| {
        let exists = b.compare(Cmp::Lt, &a[0], &a[3])?;
        let then = b.region(&[], |t: &Emitter, _: &[TValue]| {
            Ok::<_, LowerError>(vec![step(t, &a[0], &a[1], &a[4..], &a[2])?])
        })?;
        let skip = b.region(&[], |_: &Emitter, _: &[TValue]| {
            Ok::<_, LowerError>(vec![a[1].clone()])
        })?;
        let out = b.if_(&exists, then, skip, std::slice::from_ref(&out_ty))?;
        let mut next = vec![b.add(&a[0], &b.constant(&scalar, 1.0)?)?, out[0].clone()];
        next.extend_from_slice(&a[2..]);
        Ok::<_, LowerError>(next)
    })?;
    let refs: Vec<&TValue> = state.iter().collect();
    let mut state = e.while_(&refs, cond, body)?;
    // The second loop: the chunks past the bound, while there are any.
    let cond = e.region(&types, |inner: &Emitter, a: &[TValue]| {
        Ok::<_, LowerError>(vec![inner.compare(Cmp::Lt, &a[0], &a[3])?])
    })?;
    let body = e.region(&types, |b: &Emitter, a: &[TValue]| {
        let out = step(b, &a[0], &a[1], &a[4..], &a[2])?;
        let mut next = vec![b.add(&a[0], &b.constant(&scalar, 1.0)?)?, out];
        next.extend_from_slice(&a[2..]);
        Ok::<_, LowerError>(next)
    })?;
    let refs: Vec<&TValue> = state.iter().collect();
    state = e.while_(&refs, cond, body)?;
    Ok(state[1].clone())
}

/// The routed loop (see the module comment): each chunk's `[C, K] x [K, N]` product
/// written into the rows of its range.
fn routed(
    e: &Emitter,
    x: &TValue,
    w: &TValue,
    g: &Groups,
    ty: &TensorType,
    c: i64,
) -> LResult<TValue> {
    let (s, k) = (x.shape()[0], x.shape()[1]);
    let n = w.shape()[2];
    let acc = super::elementwise::accumulator(ty.dtype);
    let schedule = Schedule::of(e, g, s, c)?;
    let c = schedule.c;
    let out = e.constant(ty, 0.0)?;
    let step = |b: &Emitter, i: &TValue, out: &TValue, r: &[TValue], first: &TValue| {
        let (x, w, lo, hi) = (&r[0], &r[1], &r[2], &r[3]);
        let zero = b.constant(&TensorType::scalar(DType::I64), 0.0)?;
        let chunk = Chunk::of(b, i, (first, lo, hi), c, s)?;
        let rows = b.dynamic_slice(x, &[&chunk.start, &zero], &[c, k])?;
        let expert = b.dynamic_slice(w, &[&chunk.group, &zero, &zero], &[1, k, n])?;
        let expert = b.reshape(&expert, &[k, n])?;
        let dims = DotDims {
            lhs_contract: vec![1],
            rhs_contract: vec![0],
            ..DotDims::default()
        };
        let product = b.convert(&b.dot_general_to(&rows, &expert, &dims, acc)?, ty.dtype)?;
        let mine = b.broadcast_in_dim(&chunk.mine, &[c, n], &[0])?;
        let old = b.dynamic_slice(out, &[&chunk.start, &zero], &[c, n])?;
        let written = b.select(&mine, &product, &old)?;
        Ok(b.dynamic_update_slice(out, &written, &[&chunk.start, &zero])?)
    };
    chunk_loop(e, schedule, out, &[x, w, &g.lo, &g.hi], step)
}

/// The routed loop of the ragged contraction (`x [K, S]`, `y [S, N]` to `[E, K, N]`):
/// each chunk's `[K, C] x [C, N]` product, the rows outside its range zeroed in both
/// operands (so that a non-finite value there cannot reach the sum), added to its
/// group's `[K, N]` in an f32 (`acc`) buffer, rounded once at the end.
fn routed_contracting(
    e: &Emitter,
    x: &TValue,
    y: &TValue,
    g: &Groups,
    ty: &TensorType,
    c: i64,
) -> LResult<TValue> {
    let (k, s) = (x.shape()[0], x.shape()[1]);
    let n = y.shape()[1];
    let acc = super::elementwise::accumulator(ty.dtype);
    let schedule = Schedule::of(e, g, s, c)?;
    let c = schedule.c;
    let out = e.constant(&ty.with_dtype(acc), 0.0)?;
    let step = |b: &Emitter, i: &TValue, out: &TValue, r: &[TValue], first: &TValue| {
        let (x, y, lo, hi) = (&r[0], &r[1], &r[2], &r[3]);
        let zero = b.constant(&TensorType::scalar(DType::I64), 0.0)?;
        let chunk = Chunk::of(b, i, (first, lo, hi), c, s)?;
        let cols = b.dynamic_slice(x, &[&zero, &chunk.start], &[k, c])?;
        let cols = b.select(
            &b.broadcast_in_dim(&chunk.mine, &[k, c], &[1])?,
            &cols,
            &b.constant(&cols.ty, 0.0)?,
        )?;
        let rows = b.dynamic_slice(y, &[&chunk.start, &zero], &[c, n])?;
        let rows = b.select(
            &b.broadcast_in_dim(&chunk.mine, &[c, n], &[0])?,
            &rows,
            &b.constant(&rows.ty, 0.0)?,
        )?;
        let dims = DotDims {
            lhs_contract: vec![1],
            rhs_contract: vec![0],
            ..DotDims::default()
        };
        let product = b.dot_general_to(&cols, &rows, &dims, acc)?;
        let at = [&chunk.group, &zero, &zero];
        let sum = b.add(
            &b.dynamic_slice(out, &at, &[1, k, n])?,
            &b.reshape(&product, &[1, k, n])?,
        )?;
        Ok(b.dynamic_update_slice(out, &sum, &at)?)
    };
    let sums = chunk_loop(e, schedule, out, &[x, y, &g.lo, &g.hi], step)?;
    Ok(e.convert(&sums, ty.dtype)?)
}

/// The dense ragged contraction: each group's operands masked to its rows (zeros
/// elsewhere, in both, as in the loop), one batched `[E, K, S] x [E, S, N]` product.
fn dense_contracting(
    e: &Emitter,
    x: &TValue,
    y: &TValue,
    g: &Groups,
    ty: &TensorType,
) -> LResult<TValue> {
    let (k, s) = (x.shape()[0], x.shape()[1]);
    let n = y.shape()[1];
    let ne = g.lo.shape()[0];
    let acc = super::elementwise::accumulator(ty.dtype);
    let grid = TensorType::new(vec![ne, s], DType::I64);
    let rows = e.iota(&grid, 1)?;
    let inside = e.binary(
        "stablehlo.and",
        &e.compare(Cmp::Le, &e.broadcast_in_dim(&g.lo, &[ne, s], &[0])?, &rows)?,
        &e.compare(Cmp::Lt, &rows, &e.broadcast_in_dim(&g.hi, &[ne, s], &[0])?)?,
    )?;
    let xs = e.broadcast_in_dim(x, &[ne, k, s], &[1, 2])?;
    let xs = e.select(
        &e.broadcast_in_dim(&inside, &[ne, k, s], &[0, 2])?,
        &xs,
        &e.constant(&xs.ty, 0.0)?,
    )?;
    let ys = e.broadcast_in_dim(y, &[ne, s, n], &[1, 2])?;
    let ys = e.select(
        &e.broadcast_in_dim(&inside, &[ne, s, n], &[0, 1])?,
        &ys,
        &e.constant(&ys.ty, 0.0)?,
    )?;
    let dims = DotDims {
        lhs_batch: vec![0],
        rhs_batch: vec![0],
        lhs_contract: vec![2],
        rhs_contract: vec![1],
    };
    Ok(e.convert(&e.dot_general_to(&xs, &ys, &dims, acc)?, ty.dtype)?)
}

/// The dense form: every row times every expert, then each row's own expert selected
/// with a one-hot mask (the last group whose range holds the row, as the loop's later
/// writes win; none for an uncovered row).
fn dense(e: &Emitter, x: &TValue, w: &TValue, g: &Groups, ty: &TensorType) -> LResult<TValue> {
    let s = x.shape()[0];
    let (ne, n) = (w.shape()[0], w.shape()[2]);
    let acc = super::elementwise::accumulator(ty.dtype);
    // all[s, e, n] = sum_k x[s, k] * w[e, k, n]
    let dims = DotDims {
        lhs_contract: vec![1],
        rhs_contract: vec![1],
        ..DotDims::default()
    };
    let all = e.dot_general_to(x, w, &dims, acc)?;
    let experts = e.iota(&TensorType::new(vec![s, ne], DType::I64), 1)?;
    let owner = g.owner(e, s)?;
    let onehot = e.compare(
        Cmp::Eq,
        &e.broadcast_in_dim(&owner, &[s, ne], &[0])?,
        &experts,
    )?;
    // A select, not a product with the mask: another expert's product may be
    // infinite or NaN where PyTorch never computes it.
    let mask = e.broadcast_in_dim(&onehot, &[s, ne, n], &[0, 1])?;
    let kept = e.select(&mask, &all, &e.constant(&all.ty, 0.0)?)?;
    let picked = e.reduce(&kept, 0.0, &[1], ReduceKind::Add)?;
    Ok(e.convert(&picked, ty.dtype)?)
}

/// The grouped matmul in `form` on its own (`x [S, K]`, `w [E, K, N]`, `offs [E]` to
/// `ty`), the routed loop in chunks of `chunk` rows (at most [`chunk_rows`]): the
/// decomposition `tpuc-expert-parallel` gives each device's grouped matmul over its own
/// experts.
pub fn grouped_mm_in(
    e: &Emitter,
    form: GroupedMmForm,
    x: &TValue,
    w: &TValue,
    offs: &TValue,
    ty: &TensorType,
    chunk: i64,
) -> LResult<TValue> {
    let x = e.convert(x, ty.dtype)?;
    let w = e.convert(w, ty.dtype)?;
    if x.shape().contains(&0) || w.shape().contains(&0) {
        return Ok(e.constant(ty, 0.0)?);
    }
    let groups = Groups::of(e, offs, x.shape()[0])?;
    match form {
        GroupedMmForm::Routed => routed(e, &x, &w, &groups, ty, chunk),
        GroupedMmForm::Dense => dense(e, &x, &w, &groups, ty),
    }
}

/// One device's share of a grouped matmul under expert parallelism: the experts
/// `index * local .. (index + 1) * local` of `offs`'s groups (`index` a `[1]` integer
/// tensor). Their rows are moved to the top: `x` from row `lo` on, zeros past the end,
/// `lo` being the lowest bound of any local group's slice (for monotone offsets the
/// first local group's start, so the rows `lo..hi` of the local experts are
/// contiguous), and `offs` becomes the local ends counted from `lo`, so that
/// `grouped_mm(x, local weights, offs)` is the ordinary grouped matmul of the local
/// experts; [`ExpertShare::place`] moves its rows back.
///
/// Exact for any offsets, as PyTorch's loop: every local group's rows are in the
/// window (the first local group's start may be read lower, at `lo`, which only adds
/// rows that a later group or the mask takes back), and `place` keeps only the rows
/// whose owner (the last group covering them, see [`Groups::owner`]) is local, so the
/// sum of the devices' results has each row from exactly its owner.
pub struct ExpertShare {
    pub x: TValue,
    pub offs: TValue,
    lo: TValue,
    /// `[S]`: the rows whose owner is one of this device's experts.
    mine: TValue,
}

impl ExpertShare {
    pub fn of(e: &Emitter, x: &TValue, offs: &TValue, index: &TValue, local: i64) -> LResult<Self> {
        let (s, k) = (x.shape()[0], x.shape()[1]);
        let g = Groups::of(e, offs, s)?;
        let scalar = TensorType::scalar(DType::I64);
        let index = e.reshape(&e.convert(index, DType::I64)?, &[])?;
        let base = e.mul(&index, &e.constant(&scalar, local as f64)?)?;
        // The local groups' slice bounds: `end[base - 1]` (0 for the first expert) to
        // `end[base + local - 1]`; the window starts at the lowest.
        let zero_first = e.constant(&TensorType::new(vec![1], DType::I64), 0.0)?;
        let bounds = e.concatenate(&[&zero_first, &g.end], 0)?;
        let around = e.dynamic_slice(&bounds, &[&base], &[local + 1])?;
        let lo = e.reduce(&around, s as f64, &[0], ReduceKind::Min)?;
        let ends = e.dynamic_slice(&g.end, &[&base], &[local])?;
        let from_lo = e.sub(&ends, &e.broadcast_in_dim(&lo, &[local], &[])?)?;
        let offs = e.convert(&from_lo, offs.dtype())?;
        // x's rows from lo on, then zeros: a slice of x over S rows of zeros.
        let padded = e.concatenate(&[x, &e.constant(&x.ty, 0.0)?], 0)?;
        let zero = e.constant(&scalar, 0.0)?;
        let x = e.dynamic_slice(&padded, &[&lo, &zero], &[s, k])?;
        let owner = g.owner(e, s)?;
        let row_ty = TensorType::new(vec![s], DType::I64);
        let mine = e.binary(
            "stablehlo.and",
            &e.compare(Cmp::Ge, &owner, &e.broadcast_in_dim(&base, &[s], &[])?)?,
            &e.compare(
                Cmp::Lt,
                &owner,
                &e.add(
                    &e.broadcast_in_dim(&base, &[s], &[])?,
                    &e.constant(&row_ty, local as f64)?,
                )?,
            )?,
        )?;
        Ok(ExpertShare { x, offs, lo, mine })
    }

    /// The local grouped matmul's `[S, N]` result with its rows back at `lo..`: row `r`
    /// is `y[r - lo]` where its owner is a local expert, zero elsewhere.
    pub fn place(&self, e: &Emitter, y: &TValue) -> LResult<TValue> {
        let (s, n) = (y.shape()[0], y.shape()[1]);
        let padded = e.concatenate(&[&e.constant(&y.ty, 0.0)?, y], 0)?;
        let scalar = TensorType::scalar(DType::I64);
        let start = e.sub(&e.constant(&scalar, s as f64)?, &self.lo)?;
        let zero = e.constant(&scalar, 0.0)?;
        let back = e.dynamic_slice(&padded, &[&start, &zero], &[s, n])?;
        let mine = e.broadcast_in_dim(&self.mine, &[s, n], &[0])?;
        Ok(e.select(&mine, &back, &e.constant(&back.ty, 0.0)?)?)
    }
}

/// The grouped matmul as XLA's `chlo.ragged_dot` (for TPU compilers, which turn it
/// into grouped-matmul kernels; XLA's CPU backend refuses it): `x [S, K]`, `w [E, K,
/// N]`, `offs [E]` to `[S, ty.dtype]`, with `precision` (a `precision_config` value in
/// StableHLO's spelling, `#stablehlo<precision ...>` entries) when given.
///
/// `chlo.ragged_dot` takes groups that tile the rows in order, which is what monotone
/// offsets (the op's contract, what every router produces) give: group sizes are
/// `hi - lo` of the bounded groups ([`Groups`]) and rows from the last end on are zero,
/// masked after the product. Offsets whose groups overlap or go back (not monotone)
/// cannot be said that way, so the result is a `stablehlo.if` on
/// [`Groups::contiguous`]: the ragged dot when the groups tile, else the routed loop,
/// which computes exactly what PyTorch's loop does for any offsets. Only one branch
/// runs; XLA's cost analysis counts the loop's body once, so the figures stay the
/// ragged dot's.
///
/// With `emulated`, the ragged dot itself is computed as its definition says (the
/// routed loop over groups of the given sizes, one after another from row 0), so
/// that a plugin without `ragged-dot` (XLA's CPU) can run the whole decomposition:
/// what the tests use to check the branch taken for each kind of offsets.
pub fn ragged_dot(
    e: &Emitter,
    x: &TValue,
    w: &TValue,
    offs: &TValue,
    ty: &TensorType,
    precision: Option<&str>,
    emulated: bool,
) -> LResult<TValue> {
    let s = x.shape()[0];
    let ne = w.shape()[0];
    let x = e.convert(x, ty.dtype)?;
    let w = e.convert(w, ty.dtype)?;
    let g = Groups::of(e, offs, s)?;
    let tiled = e.region(&[], |t: &Emitter, _: &[TValue]| {
        Ok::<_, LowerError>(vec![ragged_in_order(
            t, &x, &w, &g, ty, precision, emulated,
        )?])
    })?;
    let overlapping = e.region(&[], |t: &Emitter, _: &[TValue]| {
        Ok::<_, LowerError>(vec![routed(t, &x, &w, &g, ty, chunk_rows(s, ne))?])
    })?;
    let out = e.if_(
        &g.contiguous(e)?,
        tiled,
        overlapping,
        std::slice::from_ref(ty),
    )?;
    out.into_iter()
        .next()
        .ok_or_else(|| LowerError::Invalid("stablehlo.if has no result".into()))
}

/// `chlo.ragged_dot` of groups that tile the rows in order (see [`ragged_dot`]).
fn ragged_in_order(
    e: &Emitter,
    x: &TValue,
    w: &TValue,
    g: &Groups,
    ty: &TensorType,
    precision: Option<&str>,
    emulated: bool,
) -> LResult<TValue> {
    let s = x.shape()[0];
    let ne = w.shape()[0];
    if emulated {
        // chlo.ragged_dot's definition: group i is rows sum(sizes[..i])..sum(sizes[..=i]).
        let ends = prefix_sum(e, &e.sub(&g.hi, &g.lo)?, true)?;
        let groups = Groups::of(e, &ends, s)?;
        return routed(e, x, w, &groups, ty, chunk_rows(s, ne));
    }
    let sizes = e.convert(&e.sub(&g.hi, &g.lo)?, DType::I32)?;
    let mut attrs = vec![(
        "ragged_dot_dimension_numbers",
        "#chlo.ragged_dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], \
         lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1], \
         lhs_ragged_dimensions = [0], rhs_group_dimensions = [0]>"
            .to_string(),
    )];
    if let Some(p) = precision {
        // In CHLO's spelling.
        attrs.push(("precision_config", p.replace("#stablehlo<", "#chlo<")));
    }
    // The result in the output's type: TPU matrix units accumulate bf16/f16 products in
    // f32 and round once, as the loop's f32 product and convert do; an f32 result
    // converted afterwards measured 99 instead of 86 MB accessed on [4096, 2048] x
    // [16, 2048, 768] in bf16 (libtpu, v5e).
    let product = e
        .op(
            "chlo.ragged_dot",
            &[x, w, &sizes],
            &attrs,
            std::slice::from_ref(ty),
        )?
        .pop()
        .ok_or_else(|| LowerError::Invalid("chlo.ragged_dot has no result".into()))?;
    // Rows at or past the last end belong to no group.
    let last = e.slice(&g.hi, &[ne - 1], &[ne], &[1])?;
    let last = e.broadcast_in_dim(&e.reshape(&last, &[])?, &[s], &[])?;
    let covered = e.compare(
        Cmp::Lt,
        &e.iota(&TensorType::new(vec![s], DType::I64), 0)?,
        &last,
    )?;
    let covered = e.broadcast_in_dim(&covered, &ty.shape, &[0])?;
    Ok(e.select(&covered, &product, &e.constant(ty, 0.0)?)?)
}

#[cfg(test)]
mod tests {
    use super::chunk_rows;

    /// The chunk keeps the loop's extra rows (at most C - 1 per expert) within half
    /// of S.
    #[test]
    fn chunks_bound_the_extra_work() {
        for s in [1, 2, 7, 8, 20, 100, 4096, 32768, 100_000] {
            for experts in [1, 2, 4, 8, 16, 60, 64, 128, 256] {
                let c = chunk_rows(s, experts);
                assert!((1..=512).contains(&c) && c <= s, "{s} {experts} {c}");
                assert!(c.count_ones() == 1);
                // Extra rows: at most (C - 1) for each expert that has rows (at most
                // min(E, S) of them).
                let extra = (c - 1) * experts.min(s);
                assert!(2 * extra <= s, "S={s} E={experts} C={c}");
            }
        }
        assert_eq!(chunk_rows(4096, 16), 128);
        assert_eq!(chunk_rows(4096, 2), 512);
        assert_eq!(chunk_rows(20, 4), 2);
    }
}
