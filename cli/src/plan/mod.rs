//! `tpuc plan`: which mesh and strategies a program should be partitioned with on a
//! TPU slice (or on N devices of a PJRT plugin), found by compiling candidates.
//!
//! 1. Candidates: every way to lay the slice's devices out over the mesh axes `dp`
//!    (data-parallel), `fsdp`, `ep` (expert) and `tp` (megatron), each axis absent or
//!    of size at least 2, their product the device count (`dp=2,tp=4` on 8 devices).
//! 2. tpuc compiles each (fast: the program is lowered once per candidate); a candidate
//!    the program cannot take (a batch `dp` does not divide, no experts for `ep`) is
//!    skipped with its reason.
//! 3. Each is ranked by tpuc's own per-device estimate, before any XLA compile: the
//!    bytes of its arguments and outputs as split on the mesh, plus twice the program's
//!    largest intermediate tensor over the product of the axes that split activations
//!    (`dp`, `tp`, `ep`); candidates whose estimate fits come first, ordered by a proxy
//!    of the bytes they communicate per call (weights `fsdp` gathers, row-parallel
//!    outputs `tp` reduces, expert outputs `ep` combines), then the others by their
//!    estimate.
//! 4. The best few (`--top`) are compiled by XLA: libtpu for `--topology` (no TPU
//!    needed), the plugin for `--devices`. XLA's figures decide: the plan that fits
//!    with the least estimated time per call (a roofline over the chip's published peak
//!    FLOP rate, HBM and interconnect bandwidth: FLOPs (the f32-operand matmuls' share
//!    of them times the precision's MXU passes), bytes accessed, and the bytes
//!    the partitioned program's collectives produce), on a plugin without such figures
//!    the least collective bytes, then the least peak memory. When none of them fits,
//!    the next few are compiled, until one fits or none is left; once one fits, no
//!    candidate whose estimate is over the HBM is compiled.
//!
//! The search itself is `search.rs`.
//!
//! Measured candidates are cached (`plans/` in `$TPUC_CACHE_DIR`, else in
//! `~/.cache/tpuc`), keyed by the program, its compile options, the topology and the
//! libtpu build.

mod search;

pub use search::{
    auto_shard, gib, measure_on_topology, nothing_fits, run_planner, AutoShard, Outcome,
    PlanSettings,
};

use std::path::{Path, PathBuf};

use tpuc_compiler::{CompileOptions, ShardPreset, ShardingRequest};
use tpuc_runtime::hlo::OpcodeStats;
use tpuc_runtime::manifest::{ArgumentKind, Manifest, ShardingFormat};
use tpuc_runtime::sharding::{Mesh, TensorSharding};

/// The mesh axes a plan may use, in mesh order (the last varies fastest: `tp` on
/// neighbouring chips), each with the strategy that uses it.
pub const AXES: [(&str, ShardPreset); 4] = [
    ("dp", ShardPreset::DataParallel),
    ("fsdp", ShardPreset::Fsdp),
    ("ep", ShardPreset::Expert),
    ("tp", ShardPreset::Megatron),
];

/// One candidate: a mesh over the axes it uses.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    pub axes: Vec<(&'static str, i64)>,
}

impl Candidate {
    pub fn mesh_text(&self) -> String {
        self.axes
            .iter()
            .map(|(a, n)| format!("{a}={n}"))
            .collect::<Vec<_>>()
            .join(",")
    }

    pub fn presets(&self) -> Vec<ShardPreset> {
        self.axes
            .iter()
            .filter_map(|(a, _)| AXES.iter().find(|(n, _)| n == a).map(|(_, p)| *p))
            .collect()
    }

    pub fn strategies(&self) -> String {
        self.presets()
            .iter()
            .map(|p| preset_name(*p))
            .collect::<Vec<_>>()
            .join(",")
    }

    fn size(&self, axis: &str) -> i64 {
        self.axes
            .iter()
            .find(|(a, _)| *a == axis)
            .map_or(1, |(_, n)| *n)
    }
}

pub fn preset_name(p: ShardPreset) -> &'static str {
    match p {
        ShardPreset::DataParallel => "data-parallel",
        ShardPreset::Fsdp => "fsdp",
        ShardPreset::Expert => "expert",
        ShardPreset::Megatron => "megatron",
    }
}

/// Every candidate over `devices` devices using only `allowed` axes (see the module
/// comment).
pub fn candidates(devices: i64, allowed: &[&str]) -> Vec<Candidate> {
    fn walk(
        rest: i64,
        axes: &[&'static str],
        taken: &mut Vec<(&'static str, i64)>,
        out: &mut Vec<Candidate>,
    ) {
        let Some((&axis, more)) = axes.split_first() else {
            if rest == 1 && !taken.is_empty() {
                out.push(Candidate {
                    axes: taken.clone(),
                });
            }
            return;
        };
        walk(rest, more, taken, out);
        for size in 2..=rest {
            if rest % size == 0 {
                taken.push((axis, size));
                walk(rest / size, more, taken, out);
                taken.pop();
            }
        }
    }
    let axes: Vec<&'static str> = AXES
        .iter()
        .map(|(a, _)| *a)
        .filter(|a| allowed.contains(a))
        .collect();
    let mut out = Vec::new();
    walk(devices, &axes, &mut Vec::new(), &mut out);
    out
}

/// The figures XLA gives for one compiled candidate, per device.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Measured {
    pub peak_bytes: i64,
    pub argument_bytes: i64,
    pub temp_bytes: i64,
    /// HBM per device (0: unknown, a plugin's host memory).
    pub hbm_bytes: i64,
    pub fits: bool,
    /// 0 where the plugin gives no cost analysis.
    pub flops: f64,
    pub bytes_accessed: f64,
    /// Collective opcode, count, result bytes.
    pub collectives: Vec<(String, usize, u64)>,
    pub compile_seconds: f64,
    /// Roofline time per call at the requested matmul precision and at `default`
    /// (seconds; 0 where the chip's rates are unknown).
    pub seconds: f64,
    pub seconds_default: f64,
}

impl Measured {
    pub fn collective_bytes(&self) -> u64 {
        self.collectives.iter().map(|(_, _, b)| b).sum()
    }
    pub fn collective_count(&self) -> usize {
        self.collectives.iter().map(|(_, n, _)| n).sum()
    }
}

/// One candidate as the planner saw it.
#[derive(Clone, Debug)]
pub struct Evaluated {
    pub candidate: Candidate,
    /// Why the program cannot take it (then nothing else is set).
    pub skipped: Option<String>,
    /// tpuc's per-device estimate, bytes.
    pub estimate: u64,
    /// Bytes communicated per call, the ranking proxy.
    pub traffic: u64,
    pub measured: Option<Measured>,
    /// The compiled candidate's manifest (its shardings, for `--write-rules`).
    pub manifest: Option<Manifest>,
    /// Whether `measured` came from the cache.
    pub cached: bool,
}

fn shard_factor(mesh: &Mesh, s: Option<&TensorSharding>) -> u64 {
    s.map_or(1, |s| s.num_pieces(mesh))
}

fn bytes_of(dtype: tpuc_runtime::DType, shape: &[i64]) -> u64 {
    shape.iter().map(|&d| d.max(0) as u64).product::<u64>() * dtype.size_in_bytes() as u64
}

/// The bytes of the largest value an operation of `program` (MLIR text, generic form)
/// computes: the tensor types after `->` on the lines of `stablehlo.*` operations.
pub fn largest_tensor_bytes(program: &str) -> u64 {
    program
        .lines()
        .filter(|l| l.contains("= \"stablehlo."))
        .filter_map(|l| l.rsplit_once("->").map(|(_, r)| r))
        .map(largest_in)
        .max()
        .unwrap_or(0)
}

/// The bytes of the largest tensor type written in `text`.
fn largest_in(text: &str) -> u64 {
    text.split("tensor<")
        .skip(1)
        .filter_map(|piece| piece.split_once('>'))
        .map(|(body, _)| tpuc_runtime::tpu::tensor_bytes(&format!("tensor<{body}>")))
        .max()
        .unwrap_or(0)
}

/// tpuc's per-device estimate and traffic proxy for a compiled candidate (see the
/// module comment); `largest` is the program's largest intermediate tensor.
pub fn estimate(manifest: &Manifest, candidate: &Candidate, largest: u64) -> (u64, u64) {
    let Some(p) = &manifest.partitioning else {
        return (0, 0);
    };
    let mesh = &p.mesh;
    let mut bytes = 0u64;
    let mut traffic = 0u64;
    // Tokens: the elements of the first user input that is not a weight passed as an
    // input (`input_ids [B, S]`).
    let tokens: u64 = manifest
        .arguments
        .iter()
        .find(|a| a.kind == ArgumentKind::UserInput && a.weight.is_none())
        .map_or(1, |a| a.shape.iter().map(|&d| d.max(1) as u64).product());
    for a in &manifest.arguments {
        let whole = bytes_of(a.dtype, &a.shape);
        bytes += whole / shard_factor(mesh, a.sharding.as_ref());
        let Some(s) = &a.sharding else { continue };
        let elem = a.dtype.size_in_bytes() as u64;
        for (d, axes) in s.dims.iter().enumerate() {
            for axis in axes {
                let k = mesh.axis_size(axis).unwrap_or(1).max(1) as u64;
                let part = (k - 1) * 1000 / k;
                traffic += match (axis.as_str(), a.shape.len(), d) {
                    ("fsdp", ..) => whole * part / 1000,
                    // Row-parallel ([out, in] split on in): its output is reduced.
                    ("tp", 2, 1) => tokens * a.shape[0] as u64 * elem * 2 * part / 1000,
                    // Expert weights [E, out, in]: each expert's output combined.
                    ("ep", 3, 0) => tokens * a.shape[1] as u64 * elem * part / 1000,
                    _ => 0,
                };
            }
        }
    }
    // Outputs (a state's next value is written into its argument, counted above).
    for o in manifest.outputs.iter().filter(|o| o.updates.is_none()) {
        bytes += bytes_of(o.dtype, &o.shape) / shard_factor(mesh, o.sharding.as_ref());
    }
    let split = (candidate.size("dp") * candidate.size("tp") * candidate.size("ep")).max(1) as u64;
    (bytes + 2 * largest / split, traffic)
}

pub use tpuc_runtime::tpu::chip_rates;

/// How many bf16 MXU passes an f32 matmul takes at `precision` (XLA's TPU
/// algorithms: `highest` six, `high` three, `default` one).
pub fn precision_passes(precision: &str) -> f64 {
    match precision {
        "highest" => 6.0,
        "high" => 3.0,
        _ => 1.0,
    }
}

/// The share of `program`'s matmul FLOPs whose operands are f32 (whose cost the
/// precision multiplies; a bf16 matmul accumulating in f32 takes one pass at any
/// precision): each `dot_general` counted as 2 x its result's elements x its
/// contracted size.
pub fn f32_matmul_share(program: &str) -> f64 {
    let (mut f32_flops, mut all) = (0f64, 0f64);
    for line in program.lines() {
        if !line.contains("\"stablehlo.dot_general\"") {
            continue;
        }
        let Some((_, types)) = line.rsplit_once(" : (") else {
            continue;
        };
        let Some((operands, result)) = types.split_once(") -> ") else {
            continue;
        };
        let lhs = operands.split(", ").next().unwrap_or("");
        use tpuc_runtime::tpu::tensor_type;
        let (Some((lhs_shape, lhs_type)), Some((out_shape, _))) =
            (tensor_type(lhs), tensor_type(result))
        else {
            continue;
        };
        let contracting = line
            .split("lhs_contracting_dimensions = [")
            .nth(1)
            .and_then(|r| r.split(']').next())
            .unwrap_or("");
        let contract: f64 = contracting
            .split(',')
            .filter_map(|d| d.trim().parse::<usize>().ok())
            .filter_map(|d| lhs_shape.get(d).map(|&n| n as f64))
            .product();
        let flops = 2.0 * out_shape.iter().product::<u64>() as f64 * contract;
        all += flops;
        if lhs_type == "f32" {
            f32_flops += flops;
        }
    }
    if all > 0.0 {
        f32_flops / all
    } else {
        0.0
    }
}

/// The MXU passes per matmul FLOP at `precision` when `share` of the FLOPs are f32.
pub fn effective_passes(precision: &str, share: f64) -> f64 {
    1.0 + share * (precision_passes(precision) - 1.0)
}

/// Roofline seconds per call on one chip of `topology` (0 when its rates are unknown):
/// the larger of compute (FLOPs times `passes`) and memory time, plus the collectives'
/// bytes over the interconnect.
pub fn roofline(topology: &str, m: &Measured, passes: f64) -> f64 {
    let Some((flops, hbm, ici)) = chip_rates(topology) else {
        return 0.0;
    };
    (m.flops * passes / flops).max(m.bytes_accessed / hbm) + m.collective_bytes() as f64 / ici
}

/// The order to measure candidates in (indices into `evaluated`): applicable ones
/// first; those whose estimate fits `hbm` (0: unknown) by traffic, then estimate; then
/// those over it, the smallest estimate first (the likeliest to fit after all).
pub fn rank(evaluated: &[Evaluated], hbm: u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..evaluated.len()).collect();
    order.sort_by_key(|&i| {
        let e = &evaluated[i];
        let over = hbm > 0 && e.estimate > hbm;
        let first = if over { e.estimate } else { e.traffic };
        (e.skipped.is_some(), over, first, e.estimate)
    });
    order
}

/// The best measured candidate: fitting, then least time (or, without times, least
/// collective bytes), then least peak. `None` when none measured fits.
pub fn choose(evaluated: &[Evaluated]) -> Option<usize> {
    evaluated
        .iter()
        .enumerate()
        .filter_map(|(i, e)| Some((i, e.measured.as_ref()?)))
        .filter(|(_, m)| m.fits)
        .min_by(|(_, a), (_, b)| {
            a.seconds
                .total_cmp(&b.seconds)
                .then(a.collective_bytes().cmp(&b.collective_bytes()))
                .then(a.peak_bytes.cmp(&b.peak_bytes))
        })
        .map(|(i, _)| i)
}

/// The compile options of candidate `c` with the user's `base` options.
pub fn candidate_options(
    base: &CompileOptions,
    c: &Candidate,
    format: ShardingFormat,
) -> Result<CompileOptions, String> {
    let mesh = Mesh::parse(&c.mesh_text()).map_err(|e| e.to_string())?;
    Ok(CompileOptions {
        sharding: Some(ShardingRequest {
            mesh,
            presets: c.presets(),
            rules: Vec::new(),
            format,
        }),
        ..base.clone()
    })
}

/// The figures of a compiled plugin executable (`--devices`): memory and collectives;
/// host memory always fits.
pub fn measured_on_plugin(session: &tpuc_runtime::Session) -> Result<Measured, String> {
    let stats = session.compiled_memory_stats().map_err(|e| e.to_string())?;
    let collectives = session
        .compiled_opcode_stats()
        .map_err(|e| e.to_string())?
        .into_iter()
        .filter(|(op, _)| tpuc_runtime::tpu::is_collective(op))
        .map(|(op, s)| (op, s.count, s.result_bytes))
        .collect();
    Ok(Measured {
        peak_bytes: stats.peak_memory_in_bytes,
        argument_bytes: stats.argument_size_in_bytes,
        temp_bytes: stats.temp_size_in_bytes,
        fits: true,
        collectives,
        compile_seconds: session.load_report().compile_ms / 1e3,
        ..Measured::default()
    })
}

/// [`Measured`] from a libtpu compile for `topology` with `passes` MXU passes per f32
/// matmul at the requested precision.
pub fn measured_on_tpu(
    topology: &str,
    compiled: &tpuc_runtime::tpu::TopologyCompile,
    passes: f64,
) -> Measured {
    let r = &compiled.report;
    let mut m = Measured {
        peak_bytes: r.peak_bytes,
        argument_bytes: r.argument_bytes,
        temp_bytes: r.temp_bytes,
        hbm_bytes: r.hbm_bytes_per_device,
        fits: r.fits,
        flops: r.flops,
        bytes_accessed: r.bytes_accessed,
        collectives: compiled
            .collectives
            .iter()
            .map(|(op, s): &(String, OpcodeStats)| (op.clone(), s.count, s.result_bytes))
            .collect(),
        compile_seconds: r.compile_seconds,
        ..Measured::default()
    };
    // tpuc's count of the optimized program where libtpu gives it: a loop at its trip
    // count (libtpu's cost analysis counts a loop body once, which would favour plans
    // whose work sits in loops, such as expert parallelism's routed loops).
    if let Some(cost) = compiled
        .optimized
        .as_deref()
        .and_then(tpuc_runtime::hlo_cost::program_cost)
    {
        m.flops = cost.flops;
    }
    m.seconds = roofline(topology, &m, passes);
    m.seconds_default = roofline(topology, &m, 1.0);
    m
}

/// Where measured candidates are cached: `plans/` in `$TPUC_CACHE_DIR`, else beside
/// the executable cache (`~/.cache/tpuc/plans`).
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(dir) =
        std::env::var_os(tpuc_runtime::cache::CACHE_DIR_ENV).filter(|d| !d.is_empty())
    {
        return Some(PathBuf::from(dir).join("plans"));
    }
    let executables = tpuc_runtime::cache::default_cache_dir()?;
    Some(executables.parent()?.join("plans"))
}

/// The cache file of a measurement keyed by `parts`.
pub fn cache_file(dir: &Path, parts: &[&[u8]]) -> PathBuf {
    let mut all = Vec::new();
    for p in parts {
        all.extend_from_slice(&(p.len() as u64).to_le_bytes());
        all.extend_from_slice(p);
    }
    let key = tpuc_runtime::manifest::Checksum::of(&all);
    dir.join(format!("{}.json", &key.hex()[..32]))
}

pub fn read_cached(file: &Path) -> Option<Measured> {
    serde_json::from_slice(&std::fs::read(file).ok()?).ok()
}

pub fn write_cached(file: &Path, m: &Measured) {
    let Some(dir) = file.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let tmp = file.with_extension(format!("tmp{}", std::process::id()));
    if let Ok(text) = serde_json::to_vec(m) {
        if std::fs::write(&tmp, text).is_ok() {
            let _ = std::fs::rename(&tmp, file);
        }
    }
}

/// The sharding-rules file of a chosen plan: its mesh and strategies, then every split
/// weight by its state-dict name (what `tpuc compile --sharding-rules` takes; the
/// strategies alone would decide the same, the weights make it readable and editable).
pub fn rules_text(chosen: &Evaluated, header: &[String]) -> String {
    let mut out = String::new();
    for line in header {
        out.push_str(&format!("# {line}\n"));
    }
    out.push_str(&format!("mesh: {}\n", chosen.candidate.mesh_text()));
    out.push_str(&format!("shard: {}\n", chosen.candidate.strategies()));
    if let Some(m) = &chosen.manifest {
        for a in &m.arguments {
            let (Some(w), Some(s)) = (&a.weight, &a.sharding) else {
                continue;
            };
            if s.dims.iter().any(|d| !d.is_empty()) {
                out.push_str(&format!("{w} {s}\n"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_cover_every_layout_of_the_devices() {
        let all = candidates(8, &["dp", "fsdp", "ep", "tp"]);
        // 2^3 over four axes: C(3 + 3, 3) = 20 ways.
        assert_eq!(all.len(), 20, "{all:?}");
        assert!(all.iter().any(|c| c.mesh_text() == "dp=2,tp=4"));
        assert!(all.iter().any(|c| c.mesh_text() == "ep=8"));
        assert!(all
            .iter()
            .all(|c| c.axes.iter().map(|(_, n)| n).product::<i64>() == 8));
        let tp_only = candidates(4, &["tp"]);
        assert_eq!(tp_only.len(), 1);
        assert_eq!(tp_only[0].strategies(), "megatron");
        // dp=6, tp=6, dp=2,tp=3 and dp=3,tp=2.
        assert_eq!(candidates(6, &["dp", "tp"]).len(), 4);
        assert!(candidates(1, &["dp", "tp"]).is_empty());
    }

    #[test]
    fn the_largest_value_of_a_program() {
        let text = "^bb0(%a: tensor<64x64xf32>):\n  %0 = \"stablehlo.add\"(%a, %b) : (tensor<2x3xf32>, tensor<4xbf16>) -> tensor<16x16xi64>\n  %1 = \"stablehlo.abs\"(%c) : (tensor<f32>) -> tensor<?x4xf32>";
        // Results only: the 64x64 argument is not a value the program computes.
        assert_eq!(largest_tensor_bytes(text), 16 * 16 * 8);
        assert_eq!(largest_in("tensor<f32> tensor<?x4xf32>"), 4);
    }

    #[test]
    fn only_f32_operands_make_an_f32_matmul() {
        let bf16 = "%0 = \"stablehlo.dot_general\"(%a, %b) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<4x8xbf16>, tensor<8x2xbf16>) -> tensor<4x2xf32>";
        let f32 = "%1 = \"stablehlo.dot_general\"(%a, %b) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<4x24xf32>, tensor<24x2xf32>) -> tensor<4x2xf32>";
        assert_eq!(f32_matmul_share(bf16), 0.0);
        assert_eq!(f32_matmul_share(f32), 1.0);
        // 4*2*8 bf16 multiply-adds, 4*2*24 f32: a quarter and three quarters.
        let both = format!("{bf16}\n{f32}");
        assert!((f32_matmul_share(&both) - 0.75).abs() < 1e-12);
        assert!((effective_passes("highest", 0.75) - 4.75).abs() < 1e-12);
        assert_eq!(effective_passes("default", 0.75), 1.0);
    }

    #[test]
    fn roofline_weighs_compute_memory_and_collectives() {
        let m = Measured {
            flops: 197e12,
            bytes_accessed: 819e9 / 2.0,
            collectives: vec![("all-reduce".into(), 2, 200_000_000_000)],
            ..Measured::default()
        };
        assert!((roofline("v5e:2x2", &m, 1.0) - 2.0).abs() < 1e-9);
        assert!((roofline("v5e:2x2", &m, 6.0) - 7.0).abs() < 1e-9);
        assert_eq!(roofline("unknown", &m, 1.0), 0.0);
    }
}
