//! Where a compiled program's memory traffic and FLOPs go, operation by operation,
//! read off the optimized `HloModuleProto` a PJRT plugin returns
//! (`PJRT_Executable_OptimizedProgram`): what `tpuc report --top` lists.
//!
//! PJRT gives a program's cost analysis as totals only. This module estimates each
//! top-level operation (a fusion, a custom call, a collective, a copy...) from the
//! shapes, layouts and fused computations of the optimized program, with rules close
//! to XLA's own cost analysis:
//!
//! - An operand is read whole, except where the fused computation reads only part of
//!   it: a parameter used only by `slice`, `dynamic-slice` or `gather` (as the gathered
//!   operand) is charged the bytes those produce, and the buffer a `dynamic-update-slice`
//!   writes in place is not read at all.
//! - A result is written whole, except an in-place `dynamic-update-slice` (fused or
//!   not), which writes its update.
//! - `parameter`, `constant`, `tuple`, `get-tuple-element`, `bitcast` and the `-done`
//!   halves of asynchronous pairs move nothing; a `copy-start` moves its operand, an
//!   `async-start` what the operation it wraps moves.
//! - A `while` loop in canonical form (a counter from a constant, below a constant, by
//!   a constant step) is counted its trip count times; the body of any other loop
//!   once (the trip count is a run-time value), which [`ProgramCost::loops`] says.
//!   Every branch of a `conditional` is counted ([`ProgramCost::branches`]): an upper
//!   bound.
//!
//! Traffic is split by memory space: space 0 is the device's main memory (HBM on a
//! TPU). XLA's memory-space assignment moves values it prefetches into on-chip memory
//! (`S(1)` in the HLO text) with `copy-start` or asynchronous slices; reading them back
//! from there costs no HBM bandwidth. libtpu's own "bytes accessed" counts every memory
//! space (a program that reads its one weight once through such a prefetch reports
//! about 5x the weight's bytes), so [`ProgramCost::hbm_bytes`] is the figure to compare
//! with a program's argument bytes: each HBM byte a step must read, read once, is 1x.
//!
//! FLOPs: `dot` and `ragged-dot` are 2 x result elements x contracted size,
//! `convolution` 2 x result elements x the kernel's elements per output feature,
//! elementwise arithmetic and comparisons one per result element, `reduce` and
//! `reduce-window` one per input element; fused computations are summed.

use std::collections::HashMap;

use prost::Message;

use super::hlo::{HloComputationProto, HloInstructionProto, HloModuleProto, ShapeProto};
use super::opcodes::{element_bytes, shape_bytes};

/// One top-level operation of a program and what it moves and computes.
#[derive(Clone, Debug, PartialEq)]
pub struct OpCost {
    /// The instruction's name in the optimized program (`fusion.52`).
    pub name: String,
    /// Its kind: the opcode, with a fusion's kind or a custom call's target
    /// (`fusion kOutput`, `custom-call ConcatBitcast`, `all-reduce`).
    pub kind: String,
    /// The result's type in XLA's notation (`bf16[8,1024]`, a tuple's elements joined).
    pub shape: String,
    /// The graph node(s) it came from: XLA's `op_name` metadata, which tpuc's program
    /// sets to the exported node's name (`linear_3`, `index_copy_`); fused operations
    /// keep the names of the nodes they merge, `;`-separated. Empty when unknown.
    pub node: String,
    /// Bytes read from and written to main memory (memory space 0).
    pub hbm_bytes: u64,
    /// Bytes read and written in every memory space.
    pub bytes: u64,
    pub flops: f64,
    /// How many times a call runs it (a loop body's operations: the trip count; the
    /// figures above are for all of them).
    pub repeats: u64,
}

/// A program's operations and their totals.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProgramCost {
    /// Every top-level operation that moves or computes anything, in program order.
    pub ops: Vec<OpCost>,
    pub hbm_bytes: u64,
    pub bytes: u64,
    pub flops: f64,
    /// Whether the program has loops whose trip count it does not state: their bodies
    /// are counted once here.
    pub loops: bool,
    /// Whether the program has conditionals: every branch is counted (once per time the
    /// conditional runs), so the figures are an upper bound.
    pub branches: bool,
}

impl ProgramCost {
    /// The `n` operations with the most main-memory traffic, most first (ties by FLOPs,
    /// then program order).
    pub fn top_by_hbm(&self, n: usize) -> Vec<&OpCost> {
        let mut ops: Vec<&OpCost> = self.ops.iter().collect();
        ops.sort_by(|a, b| {
            b.hbm_bytes
                .cmp(&a.hbm_bytes)
                .then(b.flops.total_cmp(&a.flops))
        });
        ops.truncate(n);
        ops
    }

    /// The `n` operations with the most FLOPs, most first.
    pub fn top_by_flops(&self, n: usize) -> Vec<&OpCost> {
        let mut ops: Vec<&OpCost> = self.ops.iter().filter(|o| o.flops > 0.0).collect();
        ops.sort_by(|a, b| {
            b.flops
                .total_cmp(&a.flops)
                .then(b.hbm_bytes.cmp(&a.hbm_bytes))
        });
        ops.truncate(n);
        ops
    }
}

/// The cost of every top-level operation of the serialized `HloModuleProto` `module`;
/// `None` when it does not parse or has no entry computation.
pub fn program_cost(module: &[u8]) -> Option<ProgramCost> {
    let module = HloModuleProto::decode(module).ok()?;
    let program = Program::new(&module);
    let entry = program
        .computations
        .get(&module.entry_computation_id)
        .copied()
        .or_else(|| {
            module
                .computations
                .iter()
                .find(|c| c.name == module.entry_computation_name)
        })
        .or_else(|| module.computations.last())?;
    let mut cost = ProgramCost::default();
    program.computation(entry, &mut cost, 0, 1);
    cost.hbm_bytes = cost.ops.iter().map(|o| o.hbm_bytes).sum();
    cost.bytes = cost.ops.iter().map(|o| o.bytes).sum();
    cost.flops = cost.ops.iter().map(|o| o.flops).sum();
    Some(cost)
}

/// Bytes of a shape split by memory space: (main memory, all).
#[derive(Clone, Copy, Default)]
struct Traffic {
    hbm: u64,
    all: u64,
}

impl Traffic {
    fn of(shape: &ShapeProto, bytes: u64) -> Traffic {
        let space = shape.layout.as_ref().map_or(0, |l| l.memory_space);
        Traffic {
            hbm: if space == 0 { bytes } else { 0 },
            all: bytes,
        }
    }
    fn whole(shape: &ShapeProto) -> Traffic {
        if !shape.tuple_shapes.is_empty() {
            return shape.tuple_shapes.iter().map(Traffic::whole).sum();
        }
        Traffic::of(shape, shape_bytes(shape))
    }
}

impl std::iter::Sum for Traffic {
    fn sum<I: Iterator<Item = Traffic>>(iter: I) -> Traffic {
        iter.fold(Traffic::default(), |a, b| Traffic {
            hbm: a.hbm + b.hbm,
            all: a.all + b.all,
        })
    }
}

impl std::ops::Add for Traffic {
    type Output = Traffic;
    fn add(self, b: Traffic) -> Traffic {
        [self, b].into_iter().sum()
    }
}

/// Operations that move and compute nothing themselves.
fn is_free(opcode: &str) -> bool {
    matches!(
        opcode,
        "parameter"
            | "constant"
            | "tuple"
            | "get-tuple-element"
            | "bitcast"
            | "copy-done"
            | "async-done"
            | "async-update"
            | "partition-id"
            | "replica-id"
            | "after-all"
            | "add-dependency"
            | "opt-barrier"
            | "domain"
    )
}

/// Elementwise operations counted as one FLOP per result element.
fn is_elementwise_flop(opcode: &str) -> bool {
    matches!(
        opcode,
        "add"
            | "subtract"
            | "multiply"
            | "divide"
            | "remainder"
            | "maximum"
            | "minimum"
            | "power"
            | "atan2"
            | "negate"
            | "abs"
            | "exponential"
            | "exponential-minus-one"
            | "log"
            | "log-plus-one"
            | "sqrt"
            | "rsqrt"
            | "cbrt"
            | "tanh"
            | "logistic"
            | "sine"
            | "cosine"
            | "tan"
            | "erf"
            | "floor"
            | "ceil"
            | "round-nearest-even"
            | "round-nearest-afz"
            | "sign"
            | "compare"
            | "select"
            | "clamp"
    )
}

fn elements(shape: &ShapeProto) -> f64 {
    shape.dimensions.iter().map(|&d| d.max(0) as f64).product()
}

/// The (output position, window tap) pairs of one convolution window dimension that
/// read an input element (`n_in` of them, base-dilated) rather than padding: summed
/// over the `n_out` output positions. Counted in closed form per tap.
fn valid_pairs(w: &super::hlo::WindowDimension, n_in: i64, n_out: i64) -> i64 {
    let (stride, wdil, bdil) = (
        w.stride.max(1),
        w.window_dilation.max(1),
        w.base_dilation.max(1),
    );
    // Input positions in the dilated, padded frame: 0, bdil, ..., (n_in - 1) * bdil.
    let extent = (n_in - 1) * bdil;
    let mut total = 0;
    for tap in 0..w.size.max(1) {
        // Output o reads position o * stride + tap * wdil - padding_low.
        let offset = tap * wdil - w.padding_low;
        for o in 0..n_out.min(1 << 20) {
            let pos = o * stride + offset;
            if pos >= 0 && pos <= extent && pos % bdil == 0 {
                total += 1;
            }
        }
    }
    total
}

/// `bf16[8,1024]`, a tuple as `(f32[2], s32[])`.
fn shape_text(shape: &ShapeProto) -> String {
    if !shape.tuple_shapes.is_empty() {
        let parts: Vec<String> = shape.tuple_shapes.iter().map(shape_text).collect();
        return format!("({})", parts.join(", "));
    }
    let dims: Vec<String> = shape.dimensions.iter().map(i64::to_string).collect();
    format!("{}[{}]", type_name(shape.element_type), dims.join(","))
}

fn type_name(primitive_type: i32) -> &'static str {
    match primitive_type {
        1 => "pred",
        2 => "s8",
        3 => "s16",
        4 => "s32",
        5 => "s64",
        6 => "u8",
        7 => "u16",
        8 => "u32",
        9 => "u64",
        10 => "f16",
        11 => "f32",
        12 => "f64",
        15 => "c64",
        16 => "bf16",
        18 => "c128",
        19 => "f8e5m2",
        20 => "f8e4m3fn",
        _ => "?",
    }
}

/// The instructions and computations of a module, by id.
struct Program<'m> {
    computations: HashMap<i64, &'m HloComputationProto>,
    instructions: HashMap<i64, &'m HloInstructionProto>,
}

impl<'m> Program<'m> {
    fn new(module: &'m HloModuleProto) -> Program<'m> {
        let mut computations = HashMap::new();
        let mut instructions = HashMap::new();
        for c in &module.computations {
            computations.insert(c.id, c);
            for i in &c.instructions {
                instructions.insert(i.id, i);
            }
        }
        Program {
            computations,
            instructions,
        }
    }

    fn shape(&self, id: i64) -> Option<&'m ShapeProto> {
        self.instructions.get(&id)?.shape.as_ref()
    }

    /// Adds the operations of `computation` (a top-level one: the entry, or a loop's
    /// body) to `cost`.
    fn computation(
        &self,
        computation: &HloComputationProto,
        cost: &mut ProgramCost,
        depth: u32,
        repeats: u64,
    ) {
        for inst in &computation.instructions {
            let op = inst.opcode.as_str();
            if is_free(op) {
                continue;
            }
            if matches!(op, "while" | "conditional" | "call") {
                // A loop whose trip count the program states is counted that many
                // times; any other loop or branch once.
                let trips = match op {
                    "while" => self.trip_count(inst),
                    _ => Some(1),
                };
                cost.loops |= trips.is_none();
                cost.branches |= op == "conditional";
                if depth < 16 {
                    for id in &inst.called_computation_ids {
                        if let Some(c) = self.computations.get(id) {
                            self.computation(c, cost, depth + 1, repeats * trips.unwrap_or(1));
                        }
                    }
                }
                continue;
            }
            let (traffic, flops) = self.instruction(inst);
            if traffic.all == 0 && flops == 0.0 {
                continue;
            }
            let kind = match op {
                "fusion" if !inst.fusion_kind.is_empty() => format!("fusion {}", inst.fusion_kind),
                "custom-call" if !inst.custom_call_target.is_empty() => {
                    format!("custom-call {}", inst.custom_call_target)
                }
                "async-start" => match self.wrapped(inst) {
                    Some(w) => format!("async-start {}", w.opcode),
                    None => op.to_string(),
                },
                _ => op.to_string(),
            };
            cost.ops.push(OpCost {
                name: inst.name.clone(),
                kind,
                shape: inst.shape.as_ref().map(shape_text).unwrap_or_default(),
                node: self.node(inst),
                hbm_bytes: traffic.hbm * repeats,
                bytes: traffic.all * repeats,
                flops: flops * repeats as f64,
                repeats,
            });
        }
    }

    /// The graph node an instruction came from: its own `op_name`, or else the names
    /// of the instructions fused into it, or else (a copy or an asynchronous slice of
    /// an argument) its operands' (a parameter's is the argument's name, a weight's
    /// `p_...`).
    fn node(&self, inst: &HloInstructionProto) -> String {
        let name_of = |i: &HloInstructionProto| {
            i.metadata
                .as_ref()
                .map(|m| m.op_name.clone())
                .unwrap_or_default()
        };
        let own = name_of(inst);
        if !own.is_empty() {
            return own;
        }
        if matches!(inst.opcode.as_str(), "copy-start" | "async-start" | "copy") {
            let names: Vec<String> = inst
                .operand_ids
                .iter()
                .filter_map(|id| self.instructions.get(id))
                .map(|i| name_of(i))
                .filter(|n| !n.is_empty())
                .collect();
            if !names.is_empty() {
                return names.join(";");
            }
        }
        let mut names: Vec<&str> = Vec::new();
        for id in &inst.called_computation_ids {
            if let Some(c) = self.computations.get(id) {
                for i in &c.instructions {
                    let n = i
                        .metadata
                        .as_ref()
                        .map(|m| m.op_name.as_str())
                        .unwrap_or("");
                    if !n.is_empty() && !names.contains(&n) {
                        names.push(n);
                    }
                }
            }
        }
        names.join(";")
    }

    /// The trip count of a `while` of the canonical form: a counter element of the
    /// loop state starting at a constant, compared `LT` with a constant in the
    /// condition (directly or in a fusion), stepped by a constant in the body (through converts, copies and
    /// bitcasts); `None` for any other loop.
    fn trip_count(&self, w: &HloInstructionProto) -> Option<u64> {
        let comps: Vec<&HloComputationProto> = w
            .called_computation_ids
            .iter()
            .filter_map(|id| self.computations.get(id).copied())
            .collect();
        let is_cond = |c: &HloComputationProto| {
            self.shape(c.root_id).is_some_and(|s| {
                s.element_type == 1 && s.dimensions.is_empty() && s.tuple_shapes.is_empty()
            })
        };
        let cond = comps.iter().find(|c| is_cond(c))?;
        let body = comps.iter().find(|c| !is_cond(c))?;
        let root = self.instructions.get(&cond.root_id)?;
        // The comparison, at the root or as the root of a fusion there (XLA's CPU
        // compiler wraps it).
        let (compare, [a, b]) = self.binary(root)?;
        if compare.opcode != "compare" {
            return None;
        }
        let (index, limit) = match compare.comparison_direction.as_str() {
            "LT" => (self.state_index(a)?, self.constant(b)?),
            "GT" => (self.state_index(b)?, self.constant(a)?),
            _ => return None,
        };
        // The initial value: the while's operand is a tuple of the state.
        let init = self.instructions.get(w.operand_ids.first()?)?;
        if init.opcode != "tuple" {
            return None;
        }
        let start = self.constant(*init.operand_ids.get(index)?)?;
        // The step: the body's root tuple element `index` adds a constant to itself.
        let next = self.instructions.get(&body.root_id)?;
        if next.opcode != "tuple" {
            return None;
        }
        let (add, [x, y]) = self.binary(self.through_casts(*next.operand_ids.get(index)?)?)?;
        if add.opcode != "add" {
            return None;
        }
        let step = match (
            self.state_index(x),
            self.constant(y),
            self.state_index(y),
            self.constant(x),
        ) {
            (Some(i), Some(s), _, _) | (_, _, Some(i), Some(s)) if i == index => s,
            _ => return None,
        };
        if step <= 0 || limit <= start {
            return Some(0).filter(|_| step > 0);
        }
        Some(((limit - start + step - 1) / step) as u64)
    }

    /// A two-operand instruction and its operands, or the same of a fusion whose root
    /// is one reading two of its parameters (the operands then the fusion's).
    fn binary(&self, inst: &'m HloInstructionProto) -> Option<(&'m HloInstructionProto, [i64; 2])> {
        let (op, outer) = if inst.opcode == "fusion" {
            let fused = self
                .computations
                .get(inst.called_computation_ids.first()?)?;
            (self.instructions.get(&fused.root_id).copied()?, Some(inst))
        } else {
            (inst, None)
        };
        let [a, b] = op.operand_ids.as_slice() else {
            return None;
        };
        let outside = |id: i64| match outer {
            None => Some(id),
            Some(f) => {
                let p = self.instructions.get(&id)?;
                if p.opcode != "parameter" {
                    return None;
                }
                f.operand_ids.get(p.parameter_number as usize).copied()
            }
        };
        Some((op, [outside(*a)?, outside(*b)?]))
    }

    /// The instruction defining `id`, looking through converts, copies and bitcasts.
    fn through_casts(&self, mut id: i64) -> Option<&'m HloInstructionProto> {
        for _ in 0..8 {
            let i = self.instructions.get(&id)?;
            match i.opcode.as_str() {
                "convert" | "copy" | "bitcast" | "bitcast-convert" => {
                    id = *i.operand_ids.first()?
                }
                _ => return Some(i),
            }
        }
        None
    }

    /// The tuple index when `id` reads an element of a computation's parameter.
    fn state_index(&self, id: i64) -> Option<usize> {
        let i = self.through_casts(id)?;
        let from = self.instructions.get(i.operand_ids.first()?)?;
        (i.opcode == "get-tuple-element" && from.opcode == "parameter")
            .then_some(i.tuple_index as usize)
    }

    /// The value of an integer scalar constant.
    fn constant(&self, id: i64) -> Option<i64> {
        let i = self.through_casts(id)?;
        let l = i.literal.as_ref().filter(|_| i.opcode == "constant")?;
        l.s32s
            .first()
            .map(|&v| v as i64)
            .or_else(|| l.s64s.first().copied())
    }

    /// The operation an `async-start` runs: its called computation's root.
    fn wrapped(&self, inst: &HloInstructionProto) -> Option<&'m HloInstructionProto> {
        let c = self
            .computations
            .get(inst.called_computation_ids.first()?)?;
        self.instructions.get(&c.root_id).copied()
    }

    /// What one top-level instruction moves and computes.
    fn instruction(&self, inst: &HloInstructionProto) -> (Traffic, f64) {
        let Some(shape) = inst.shape.as_ref() else {
            return (Traffic::default(), 0.0);
        };
        let operand = |i: usize| inst.operand_ids.get(i).and_then(|id| self.shape(*id));
        match inst.opcode.as_str() {
            "fusion" => self.fusion(inst, shape),
            // Reads its operand, writes the first element of its (dest, src, context).
            "copy-start" => {
                let read = operand(0).map(Traffic::whole).unwrap_or_default();
                let write = shape
                    .tuple_shapes
                    .first()
                    .map(Traffic::whole)
                    .unwrap_or_default();
                (read + write, 0.0)
            }
            "async-start" => {
                let Some(w) = self.wrapped(inst) else {
                    return (Traffic::default(), 0.0);
                };
                // ((operands...), result, context): the wrapped op reads the operands
                // (as it would at top level) and writes the result's memory space.
                let result = shape.tuple_shapes.get(1);
                let out_bytes = w.shape.as_ref().map(shape_bytes).unwrap_or(0);
                let write = result
                    .map(|r| Traffic::of(r, out_bytes))
                    .unwrap_or_default();
                let read = match w.opcode.as_str() {
                    "slice" | "dynamic-slice" | "gather" => operand(0)
                        .map(|o| Traffic::of(o, out_bytes))
                        .unwrap_or_default(),
                    _ => inst
                        .operand_ids
                        .iter()
                        .filter_map(|id| self.shape(*id))
                        .map(Traffic::whole)
                        .sum(),
                };
                (read + write, self.flops_of(w, 0))
            }
            "dynamic-update-slice" => {
                let update = operand(1).map(shape_bytes).unwrap_or(0);
                let indices: Traffic = inst.operand_ids[2.min(inst.operand_ids.len())..]
                    .iter()
                    .filter_map(|id| self.shape(*id))
                    .map(Traffic::whole)
                    .sum();
                let read = operand(1).map(Traffic::whole).unwrap_or_default();
                (read + indices + Traffic::of(shape, update), 0.0)
            }
            "slice" | "dynamic-slice" | "gather" => {
                let out = Traffic::whole(shape);
                let read = operand(0)
                    .map(|o| Traffic::of(o, out.all))
                    .unwrap_or_default();
                let rest: Traffic = inst
                    .operand_ids
                    .iter()
                    .skip(1)
                    .filter_map(|id| self.shape(*id))
                    .map(Traffic::whole)
                    .sum();
                (read + rest + out, 0.0)
            }
            _ => {
                let read: Traffic = inst
                    .operand_ids
                    .iter()
                    .filter_map(|id| self.shape(*id))
                    .map(Traffic::whole)
                    .sum();
                (read + Traffic::whole(shape), self.flops_of(inst, 0))
            }
        }
    }

    /// A fusion: each operand read as its fused parameter's uses read it, the result
    /// written (an in-place update's only where it changes).
    fn fusion(&self, inst: &HloInstructionProto, shape: &ShapeProto) -> (Traffic, f64) {
        let Some(body) = inst
            .called_computation_ids
            .first()
            .and_then(|id| self.computations.get(id))
        else {
            let read: Traffic = inst
                .operand_ids
                .iter()
                .filter_map(|id| self.shape(*id))
                .map(Traffic::whole)
                .sum();
            return (read + Traffic::whole(shape), 0.0);
        };
        let mut users: HashMap<i64, Vec<&HloInstructionProto>> = HashMap::new();
        for i in &body.instructions {
            for o in &i.operand_ids {
                users.entry(*o).or_default().push(i);
            }
        }
        let mut read = Traffic::default();
        for p in body.instructions.iter().filter(|i| i.opcode == "parameter") {
            let Some(outer) = inst
                .operand_ids
                .get(p.parameter_number.max(0) as usize)
                .and_then(|id| self.shape(*id))
            else {
                continue;
            };
            let whole = Traffic::whole(outer);
            let bytes = self.read_bytes(p.id, &users, 0).unwrap_or(whole.all);
            read = read + Traffic::of(outer, bytes.min(whole.all));
        }
        let root = self.instructions.get(&body.root_id).copied();
        let write = match root {
            Some(r) if !shape.tuple_shapes.is_empty() && r.opcode == "tuple" => shape
                .tuple_shapes
                .iter()
                .zip(&r.operand_ids)
                .map(|(s, id)| self.written(s, self.instructions.get(id).copied()))
                .sum(),
            r => self.written(shape, r),
        };
        let flops = body.instructions.iter().map(|i| self.flops_of(i, 0)).sum();
        (read + write, flops)
    }

    /// What a fusion writes of one result `shape` computed by `root`: an in-place
    /// `dynamic-update-slice` writes its update, anything else the whole result.
    fn written(&self, shape: &ShapeProto, root: Option<&HloInstructionProto>) -> Traffic {
        let mut r = root;
        while let Some(i) = r.filter(|i| i.opcode == "bitcast") {
            r = i
                .operand_ids
                .first()
                .and_then(|id| self.instructions.get(id).copied());
        }
        match r {
            Some(i) if i.opcode == "dynamic-update-slice" => {
                let update = i
                    .operand_ids
                    .get(1)
                    .and_then(|id| self.shape(*id))
                    .map(shape_bytes);
                Traffic::of(shape, update.unwrap_or_else(|| shape_bytes(shape)))
            }
            _ => Traffic::whole(shape),
        }
    }

    /// The bytes a fused computation reads of value `id` when every use reads only part
    /// of it (slices, gathers, an in-place update's buffer), following bitcasts; `None`
    /// when some use reads it whole.
    fn read_bytes(
        &self,
        id: i64,
        users: &HashMap<i64, Vec<&HloInstructionProto>>,
        depth: u32,
    ) -> Option<u64> {
        let mut total = 0u64;
        for u in users.get(&id).map(Vec::as_slice).unwrap_or(&[]) {
            let first = u.operand_ids.first() == Some(&id);
            total += match u.opcode.as_str() {
                "slice" | "dynamic-slice" if first => u.shape.as_ref().map(shape_bytes)?,
                "gather" if first => u.shape.as_ref().map(shape_bytes)?,
                "dynamic-update-slice" if first => 0,
                "bitcast" if depth < 8 => self.read_bytes(u.id, users, depth + 1)?,
                _ => return None,
            };
        }
        Some(total)
    }

    /// FLOPs of one instruction (a fusion's or a call's computations summed).
    fn flops_of(&self, inst: &HloInstructionProto, depth: u32) -> f64 {
        let Some(shape) = inst.shape.as_ref() else {
            return 0.0;
        };
        let operand = |i: usize| inst.operand_ids.get(i).and_then(|id| self.shape(*id));
        match inst.opcode.as_str() {
            "dot" | "ragged-dot" => {
                let contracted: f64 = match (operand(0), inst.dot_dimension_numbers.as_ref()) {
                    (Some(lhs), Some(d)) => d
                        .lhs_contracting_dimensions
                        .iter()
                        .filter_map(|&c| lhs.dimensions.get(c as usize))
                        .map(|&n| n as f64)
                        .product(),
                    _ => 1.0,
                };
                2.0 * elements(shape) * contracted
            }
            "convolution" => {
                let (Some(input), Some(kernel), Some(d)) = (
                    operand(0),
                    operand(1),
                    inst.convolution_dimension_numbers.as_ref(),
                ) else {
                    return 0.0;
                };
                let features = kernel
                    .dimensions
                    .get(d.kernel_input_feature_dimension as usize)
                    .copied()
                    .unwrap_or(1)
                    .max(1) as f64;
                // Each spatial dimension's (output position, window tap) pairs that land
                // on an input element, not on padding or between dilated elements: XLA
                // writes batched and grouped matmuls as convolutions whose windows
                // mostly miss (one tap of eight, say).
                let dims = inst
                    .window
                    .as_ref()
                    .map(|w| w.dimensions.as_slice())
                    .unwrap_or(&[]);
                let mut spatial_outputs = 1.0;
                let mut pairs = 1.0;
                for (i, w) in dims.iter().enumerate() {
                    let size = |s: &ShapeProto, dim: Option<&i64>| {
                        dim.and_then(|&x| s.dimensions.get(x as usize))
                            .copied()
                            .unwrap_or(1)
                            .max(1)
                    };
                    let n_in = size(input, d.input_spatial_dimensions.get(i));
                    let n_out = size(shape, d.output_spatial_dimensions.get(i));
                    spatial_outputs *= n_out as f64;
                    pairs *= valid_pairs(w, n_in, n_out) as f64;
                }
                let per_position = elements(shape) / spatial_outputs.max(1.0);
                2.0 * per_position * features * pairs
            }
            "reduce" | "reduce-window" => operand(0).map(elements).unwrap_or(0.0),
            "fusion" | "call" if depth < 16 => inst
                .called_computation_ids
                .iter()
                .filter_map(|id| self.computations.get(id))
                .flat_map(|c| c.instructions.iter())
                .map(|i| self.flops_of(i, depth + 1))
                .sum(),
            op if is_elementwise_flop(op) => {
                if element_bytes(shape.element_type) == 0 {
                    0.0
                } else {
                    elements(shape)
                }
            }
            _ => 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xla::hlo::{primitive, DotDimensionNumbers, LayoutProto, OpMetadata};

    fn shape(element_type: i32, dims: &[i64], space: i64) -> ShapeProto {
        ShapeProto {
            element_type,
            dimensions: dims.to_vec(),
            layout: Some(LayoutProto {
                minor_to_major: (0..dims.len() as i64).rev().collect(),
                memory_space: space,
            }),
            ..Default::default()
        }
    }

    fn inst(id: i64, opcode: &str, shape: ShapeProto, operands: &[i64]) -> HloInstructionProto {
        HloInstructionProto {
            id,
            name: format!("{opcode}.{id}"),
            opcode: opcode.into(),
            shape: Some(shape),
            operand_ids: operands.to_vec(),
            ..Default::default()
        }
    }

    /// A weight prefetched into on-chip memory and read there by a dot: main memory is
    /// read once; every memory space sees it three times (the copy's read and write,
    /// the dot's read).
    #[test]
    fn prefetched_weight_is_read_from_main_memory_once() {
        let w = shape(primitive::BF16, &[64, 32], 0);
        let w_chip = shape(primitive::BF16, &[64, 32], 1);
        let x = shape(primitive::BF16, &[8, 32], 0);
        let out = shape(primitive::F32, &[8, 64], 0);
        let mut copy = inst(3, "copy-start", ShapeProto::default(), &[1]);
        copy.shape = Some(ShapeProto {
            tuple_shapes: vec![w_chip.clone(), w.clone(), shape(primitive::S32, &[], 2)],
            ..Default::default()
        });
        let mut dot = inst(5, "dot", out, &[2, 4]);
        dot.dot_dimension_numbers = Some(DotDimensionNumbers {
            lhs_contracting_dimensions: vec![1],
            rhs_contracting_dimensions: vec![1],
            ..Default::default()
        });
        dot.metadata = Some(OpMetadata {
            op_name: "linear".into(),
            ..Default::default()
        });
        let entry = HloComputationProto {
            name: "main".into(),
            id: 1,
            root_id: 5,
            program_shape: None,
            instructions: vec![
                inst(1, "parameter", w.clone(), &[]),
                inst(2, "parameter", x, &[]),
                copy,
                inst(4, "copy-done", w_chip, &[3]),
                dot,
            ],
        };
        let module = HloModuleProto {
            entry_computation_id: 1,
            computations: vec![entry],
            ..Default::default()
        };
        let cost = program_cost(&module.encode_to_vec()).unwrap();
        let (wb, xb, ob) = (64 * 32 * 2, 8 * 32 * 2, 8 * 64 * 4);
        assert_eq!(cost.hbm_bytes, wb + xb + ob);
        assert_eq!(cost.bytes, 3 * wb + xb + ob);
        assert_eq!(cost.flops, 2.0 * 8.0 * 64.0 * 32.0);
        // The copy reads the weight from main memory; the dot reads it on chip.
        let top = cost.top_by_hbm(2);
        assert_eq!((top[0].kind.as_str(), top[0].hbm_bytes), ("copy-start", wb));
        assert_eq!((top[1].kind.as_str(), top[1].hbm_bytes), ("dot", xb + ob));
        assert_eq!(top[1].node, "linear");
        assert_eq!(top[1].shape, "f32[8,64]");
        assert_eq!(cost.top_by_flops(5).len(), 1);
        assert!(!cost.loops);
    }

    /// A fused in-place cache update reads and writes only the new row; a fused slice
    /// of a parameter reads only the slice.
    #[test]
    fn in_place_updates_and_slices_move_only_what_they_touch() {
        let cache = shape(primitive::BF16, &[16, 4], 0);
        let row = shape(primitive::BF16, &[1, 4], 0);
        let index = shape(primitive::S32, &[], 0);
        let body = HloComputationProto {
            name: "fused".into(),
            id: 2,
            root_id: 14,
            program_shape: None,
            instructions: vec![
                HloInstructionProto {
                    parameter_number: 0,
                    ..inst(10, "parameter", cache.clone(), &[])
                },
                HloInstructionProto {
                    parameter_number: 1,
                    ..inst(11, "parameter", row.clone(), &[])
                },
                HloInstructionProto {
                    parameter_number: 2,
                    ..inst(12, "parameter", index.clone(), &[])
                },
                inst(13, "negate", row.clone(), &[11]),
                inst(14, "dynamic-update-slice", cache.clone(), &[10, 13, 12, 12]),
            ],
        };
        let slice_body = HloComputationProto {
            name: "sliced".into(),
            id: 3,
            root_id: 21,
            program_shape: None,
            instructions: vec![
                HloInstructionProto {
                    parameter_number: 0,
                    ..inst(20, "parameter", cache.clone(), &[])
                },
                inst(21, "slice", row.clone(), &[20]),
            ],
        };
        let entry = HloComputationProto {
            name: "main".into(),
            id: 1,
            root_id: 5,
            program_shape: None,
            instructions: vec![
                inst(1, "parameter", cache.clone(), &[]),
                inst(2, "parameter", row.clone(), &[]),
                inst(3, "parameter", index, &[]),
                HloInstructionProto {
                    called_computation_ids: vec![2],
                    fusion_kind: "kLoop".into(),
                    ..inst(4, "fusion", cache.clone(), &[1, 2, 3])
                },
                HloInstructionProto {
                    called_computation_ids: vec![3],
                    fusion_kind: "kLoop".into(),
                    ..inst(5, "fusion", row, &[4])
                },
            ],
        };
        let module = HloModuleProto {
            entry_computation_id: 1,
            computations: vec![body, slice_body, entry],
            ..Default::default()
        };
        let cost = program_cost(&module.encode_to_vec()).unwrap();
        // update: the row read, the index read, the row written; slice: a row read and
        // written.
        assert_eq!(cost.ops[0].hbm_bytes, 8 + 4 + 8);
        assert_eq!(cost.ops[0].kind, "fusion kLoop");
        assert_eq!(cost.ops[1].hbm_bytes, 8 + 8);
        assert_eq!(cost.flops, 4.0);
    }
}
