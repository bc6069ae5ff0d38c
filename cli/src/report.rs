//! `tpuc report ARTIFACT [--top N] [--json]`: what the artifact's TPU executables need
//! per chip, from the figures `tpuc compile --topology` recorded (XLA's memory
//! statistics and cost analysis from libtpu), and for a training step its memory by
//! what it holds (parameters, optimizer state, gradients, activations). From the
//! TPU-optimized program kept beside each executable: its main-memory traffic against
//! its argument bytes, its time at the chip's roofline, and with `--top N` the
//! operations that move the most bytes and do the most FLOPs, each with its graph node
//! (`tpuc_runtime::hlo_cost`). Reads the artifact only: no plugin, no TPU.

use std::path::Path;
use std::process::ExitCode;

use tpuc_runtime::hlo_cost::{program_cost, OpCost, ProgramCost};
use tpuc_runtime::manifest::TpuExecutable;
use tpuc_runtime::training::{memory_per_device, MemoryShares};

fn mib(bytes: i64) -> String {
    format!("{:.2} MiB", bytes as f64 / (1u64 << 20) as f64)
}

/// A training step's per-device memory by what it holds (`None` for other programs).
fn training_lines(shares: Option<MemoryShares>, temp_bytes: i64) -> Vec<String> {
    let Some(m) = shares else {
        return Vec::new();
    };
    vec![
        format!(
            "  training step, per device: parameters {}, optimizer state {}, buffers {}, batch {} \
             (from shapes and shardings; the TPU pads small tensors, which the arguments above include)",
            mib(m.parameters as i64),
            mib(m.optimizer_state as i64),
            mib(m.buffers as i64),
            mib(m.batch as i64)
        ),
        format!(
            "    gradients at most {} (the trained parameters' size; XLA fuses them into the update \
             where it can); activations, live gradients and workspace: the temporaries, {}",
            mib(m.gradients as i64),
            mib(temp_bytes)
        ),
    ]
}

fn line(e: &TpuExecutable) -> Vec<String> {
    let r = &e.report;
    let mut out = vec![
        format!(
            "{} ({} chips, {} devices; the program on {}), libtpu {}, StableHLO {}",
            e.topology, r.chips, r.devices, r.partitions, e.libtpu_version, e.stablehlo_version
        ),
        format!(
            "  per device: arguments {}, outputs {}, temporaries {}, peak {}, generated code {}",
            mib(r.argument_bytes),
            mib(r.output_bytes),
            mib(r.temp_bytes),
            mib(r.peak_bytes),
            mib(r.generated_code_bytes)
        ),
        format!(
            "  cost: {:.4e} FLOP, {:.4e} transcendentals, {:.4e} bytes accessed",
            r.flops, r.transcendentals, r.bytes_accessed
        ),
    ];
    out.push(if r.hbm_bytes_per_device == 0 {
        "  fits: unknown (no HBM figure for this generation)".to_string()
    } else {
        format!(
            "  fits: {} (peak {:.3}% of a device's {} GiB of HBM)",
            if r.fits { "yes" } else { "NO" },
            100.0 * r.peak_bytes as f64 / r.hbm_bytes_per_device as f64,
            r.hbm_bytes_per_device >> 30
        )
    });
    out.push(format!(
        "  TPU compile: {:.3} s; executable {}",
        r.compile_seconds, e.executable.file
    ));
    out
}

/// Seconds in milliseconds, or microseconds below one.
fn seconds(s: f64) -> String {
    if s >= 1e-3 {
        format!("{:.3} ms", s * 1e3)
    } else {
        format!("{:.3} us", s * 1e6)
    }
}

/// Bytes in the unit that suits them (decimal: what bandwidths are quoted in).
fn gb(bytes: f64) -> String {
    match bytes {
        b if b >= 1e9 => format!("{:.3} GB", b / 1e9),
        b if b >= 1e6 => format!("{:.2} MB", b / 1e6),
        b if b >= 1e3 => format!("{:.2} kB", b / 1e3),
        b => format!("{b:.0} B"),
    }
}

/// The cost of executable `e`'s optimized program, read from the artifact (`Ok(None)`
/// for an artifact compiled before tpuc kept it).
fn optimized_cost(artifact: &Path, e: &TpuExecutable) -> Result<Option<ProgramCost>, String> {
    let Some(file) = &e.optimized_program else {
        return Ok(None);
    };
    let path = artifact.join(&file.file);
    let bytes =
        std::fs::read(&path).map_err(|err| format!("cannot read `{}`: {err}", path.display()))?;
    if !file.checksum.matches(&bytes) {
        return Err(format!(
            "`{}` does not match its checksum in the manifest: the artifact is damaged; compile it again",
            path.display()
        ));
    }
    program_cost(&bytes)
        .map(Some)
        .ok_or_else(|| format!("`{}` is not an XLA HloModuleProto", path.display()))
}

/// The FLOPs of one call per device: tpuc's count of the optimized program, which
/// multiplies a loop's body by its trip count, or else libtpu's, which counts it once.
fn device_flops(e: &TpuExecutable, cost: Option<&ProgramCost>) -> f64 {
    cost.map_or(e.report.flops, |c| c.flops)
}

/// The executable's FLOPs per device against the model's own, split evenly over its
/// devices.
fn flops_line(
    model_flops: Option<f64>,
    e: &TpuExecutable,
    cost: Option<&ProgramCost>,
) -> Option<String> {
    let model = model_flops?;
    let devices = e.report.partitions.max(1) as f64;
    let flops = device_flops(e, cost);
    Some(format!(
        "  FLOPs per device: {:.4e}{}, {:.2}x the model's own {:.4e}{} (its matmuls, attention and routed grouped matmuls by their definition)",
        flops,
        match cost {
            Some(c) => caveat(c, " (counted in the optimized program, loops by their trip counts"),
            None => String::new(),
        },
        flops * devices / model,
        model,
        if devices > 1.0 { format!(" over {devices} devices") } else { String::new() }
    ))
}

/// How a program's cost was counted, after `start` (an opening parenthesis and text,
/// or nothing): loops whose trip count is a run-time value once, conditionals by every
/// branch (an upper bound).
fn caveat(cost: &ProgramCost, start: &str) -> String {
    let mut notes = Vec::new();
    if cost.loops {
        notes.push("loops without a stated trip count counted once");
    }
    if cost.branches {
        notes.push("every conditional branch counted: an upper bound");
    }
    match (start.is_empty(), notes.is_empty()) {
        (true, true) => String::new(),
        (true, false) => format!(" ({})", notes.join("; ")),
        (false, true) => format!("{start})"),
        (false, false) => format!("{start}; {})", notes.join("; ")),
    }
}

/// Main-memory traffic against the arguments, and the roofline time per call.
fn traffic_lines(e: &TpuExecutable, cost: &ProgramCost) -> Vec<String> {
    let r = &e.report;
    let args = r.argument_bytes.max(1) as f64;
    let hbm = cost.hbm_bytes as f64;
    let mut out = vec![format!(
        "  traffic per call: {} of main memory (HBM), {:.2}x the arguments' {}{}; over every memory space, its prefetches into on-chip memory included, {} ({:.2}x; libtpu's cost analysis: {})",
        gb(hbm),
        hbm / args,
        gb(args),
        caveat(cost, ""),
        gb(cost.bytes as f64),
        cost.bytes as f64 / args,
        gb(r.bytes_accessed),
    )];
    if let Some(t) = Roofline::of(e, cost) {
        out.push(format!(
            "  roofline per call: {} ({}): memory {} at {:.0} GB/s, compute {} for {:.4e} FLOP at {:.0} bf16 TFLOP/s",
            seconds(t.memory.max(t.compute)),
            if t.memory >= t.compute { "memory-bound" } else { "compute-bound" },
            seconds(t.memory),
            t.hbm_per_s / 1e9,
            seconds(t.compute),
            cost.flops,
            t.flops_per_s / 1e12
        ));
    }
    out
}

/// An executable's time per call at its chip's published rates: its main-memory
/// traffic over the HBM bandwidth, its FLOPs (tpuc's count) over the bf16 peak.
struct Roofline {
    memory: f64,
    compute: f64,
    hbm_per_s: f64,
    flops_per_s: f64,
}

impl Roofline {
    fn of(e: &TpuExecutable, cost: &ProgramCost) -> Option<Roofline> {
        let (flops_per_s, hbm_per_s, _) = tpuc_runtime::tpu::chip_rates(&e.topology)?;
        Some(Roofline {
            memory: cost.hbm_bytes as f64 / hbm_per_s,
            compute: cost.flops / flops_per_s,
            hbm_per_s,
            flops_per_s,
        })
    }
}

/// The `n` operations with the most traffic and the `n` with the most FLOPs.
fn top_lines(cost: &ProgramCost, n: usize) -> Vec<String> {
    let row = |o: &OpCost, share: f64| {
        let node = if o.node.is_empty() {
            "-"
        } else {
            o.node.as_str()
        };
        format!(
            "    {:>10} {:>5.1}% {:>10.3e} FLOP  {:<28} {:<28} {} ({})",
            gb(o.hbm_bytes as f64),
            100.0 * share,
            o.flops,
            o.kind,
            o.shape,
            node,
            o.name
        )
    };
    let mut out = vec![format!(
        "  top {n} operations by main-memory traffic (of {}; graph node, then XLA's name):",
        gb(cost.hbm_bytes as f64)
    )];
    for o in cost.top_by_hbm(n) {
        out.push(row(o, o.hbm_bytes as f64 / cost.hbm_bytes.max(1) as f64));
    }
    out.push(format!(
        "  top {n} operations by FLOPs (of {:.4e}; the share is of the FLOPs):",
        cost.flops
    ));
    for o in cost.top_by_flops(n) {
        out.push(row(o, o.flops / cost.flops.max(1.0)));
    }
    out
}

fn op_json(o: &OpCost) -> serde_json::Value {
    serde_json::json!({
        "name": o.name,
        "kind": o.kind,
        "shape": o.shape,
        "node": o.node,
        "hbm_bytes": o.hbm_bytes,
        "bytes": o.bytes,
        "flops": o.flops,
    })
}

pub fn report(artifact: &Path, json: bool, top: Option<usize>) -> Result<ExitCode, String> {
    let manifest = tpuc_runtime::session::read_manifest(artifact).map_err(|e| e.to_string())?;
    let shares = memory_per_device(&manifest);
    let costs = manifest
        .tpu_executables
        .iter()
        .map(|e| optimized_cost(artifact, e))
        .collect::<Result<Vec<_>, String>>()?;
    if top.is_some() && costs.iter().all(Option::is_none) && !manifest.tpu_executables.is_empty() {
        return Err(format!(
            "{} keeps no TPU-optimized program (compiled by an older tpuc): compile it again with --topology to list its operations",
            artifact.display()
        ));
    }
    if json {
        let training = shares.map(|m| m.to_json());
        let traffic: Vec<serde_json::Value> = manifest
            .tpu_executables
            .iter()
            .zip(&costs)
            .map(|(e, c)| match c {
                None => serde_json::json!({"topology": e.topology}),
                Some(c) => serde_json::json!({
                    "topology": e.topology,
                    "flops_per_model_flop": manifest.model_flops.map(|m| c.flops * e.report.partitions.max(1) as f64 / m),
                    "hbm_bytes": c.hbm_bytes,
                    "bytes": c.bytes,
                    "flops": c.flops,
                    "hbm_bytes_per_argument_byte": c.hbm_bytes as f64 / e.report.argument_bytes.max(1) as f64,
                    "loops_counted_once": c.loops,
                    "every_branch_counted": c.branches,
                    "roofline_seconds": Roofline::of(e, c).map(|t| t.memory.max(t.compute)),
                    "roofline_memory_seconds": Roofline::of(e, c).map(|t| t.memory),
                    "roofline_compute_seconds": Roofline::of(e, c).map(|t| t.compute),
                    "top_by_hbm": c.top_by_hbm(top.unwrap_or(10)).into_iter().map(op_json).collect::<Vec<_>>(),
                    "top_by_flops": c.top_by_flops(top.unwrap_or(10)).into_iter().map(op_json).collect::<Vec<_>>(),
                }),
            })
            .collect();
        let text = serde_json::to_string_pretty(&serde_json::json!({
            "artifact": artifact.display().to_string(),
            "matmul_precision": manifest.matmul_precision,
            "model_flops": manifest.model_flops,
            "tpu_executables": manifest.tpu_executables,
            "traffic": traffic,
            "training_memory_per_device": training,
        }))
        .map_err(|e| e.to_string())?;
        outln!("{text}");
        return Ok(ExitCode::SUCCESS);
    }
    if manifest.tpu_executables.is_empty() {
        return Err(format!(
            "{} has no TPU executables; compile with `tpuc compile MODEL -o {} --topology v5e:2x2` (see `tpuc devices --topologies`)",
            artifact.display(),
            artifact.display()
        ));
    }
    outln!(
        "artifact: {} (matmul precision {})",
        artifact.display(),
        manifest.matmul_precision
    );
    for (e, cost) in manifest.tpu_executables.iter().zip(&costs) {
        for l in line(e) {
            outln!("{l}");
        }
        if let Some(l) = flops_line(manifest.model_flops, e, cost.as_ref()) {
            outln!("{l}");
        }
        if let Some(cost) = cost {
            for l in traffic_lines(e, cost) {
                outln!("{l}");
            }
            if let Some(n) = top {
                for l in top_lines(cost, n) {
                    outln!("{l}");
                }
            }
        }
        for l in training_lines(shares, e.report.temp_bytes) {
            outln!("{l}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
