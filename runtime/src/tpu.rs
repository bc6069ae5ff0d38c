//! The TPU target's ahead-of-time step: `tpuc compile --topology v5e:2x2` compiles the
//! artifact's program with libtpu for a named TPU slice (no TPU needed), stores the
//! serialized executable next to the portable program, and records XLA's per-chip
//! figures (`tpuc report` prints them). Also the slices tpuc knows (names, chips, HBM
//! per chip) for `tpuc devices --topologies`.
//!
//! It lives in the runtime because it needs only PJRT ([`crate::pjrt::topology`]) and the
//! artifact contract: the full `tpuc` hands [`compile_for_topologies`] to the compiler
//! as its finish step (`tpuc_compiler::CompileOptions::finish`), and the runtime-only
//! `tpuc` lists topologies with it, so neither the CLI nor the compiler holds TPU logic.

use std::path::Path;
use std::time::Instant;

use crate::manifest::{FileRef, Manifest, TpuExecutable, TpuReport};
use crate::pjrt::{topology::Topology, NamedValue};
use crate::Plugin;

/// Topology names libtpu accepts, as measured with libtpu 0.0.52 (generation, then
/// the chip grid; `tpuc devices --topologies` checks each against the libtpu found).
pub const TOPOLOGY_FORMS: &[(&str, &str)] = &[
    ("v4", "v4:2x2x1 (2x2x1 and larger 3-D grids)"),
    ("v5e", "v5e:1x1, v5e:2x2, v5e:2x4, v5e:4x4 ... v5e:16x16"),
    ("v5p", "v5p:2x2x1 (and larger 3-D grids)"),
    ("v6e", "v6e:1x1, v6e:2x2, v6e:2x4, v6e:4x4 ... v6e:8x8"),
    ("tpu7x", "tpu7x:2x2x1"),
];

/// Example names `tpuc devices --topologies` tries.
pub const EXAMPLE_TOPOLOGIES: &[&str] = &[
    "v4:2x2x1",
    "v5e:1x1",
    "v5e:2x2",
    "v5e:2x4",
    "v5e:4x4",
    "v5p:2x2x1",
    "v6e:1x1",
    "v6e:2x2",
    "v6e:2x4",
    "tpu7x:2x2x1",
];

/// High-bandwidth memory per chip, by generation (Google's published figures): what
/// `fits` is judged against.
pub fn hbm_bytes_per_chip(topology: &str) -> Option<i64> {
    const GIB: i64 = 1 << 30;
    let generation = topology.split(':').next()?;
    Some(match generation {
        "v4" => 32 * GIB,
        "v5e" | "v5litepod" => 16 * GIB,
        "v5p" => 95 * GIB,
        "v6e" => 32 * GIB,
        "tpu7x" => 192 * GIB,
        _ => return None,
    })
}

fn mib(bytes: u64) -> String {
    format!("{:.2} MiB", bytes as f64 / (1u64 << 20) as f64)
}

/// The chips of a topology name: the product of its grid (`v5e:2x4` has 8).
pub fn chips_in(topology: &str) -> Option<usize> {
    let grid = topology.split(':').nth(1)?;
    grid.split('x')
        .map(|d| d.parse::<usize>().ok())
        .product::<Option<usize>>()
}

/// libtpu, loaded (once per process). Its initialization prints warnings about the TPU
/// VM it does not find (accelerator type, worker hostnames), which say nothing about a
/// compile for a named topology: unless `--verbose` (or `TF_CPP_MIN_LOG_LEVEL` below
/// 3), stderr is closed to them while it loads. Failures still come back as errors.
pub fn load_libtpu(explicit: Option<&Path>) -> Result<std::sync::Arc<Plugin>, String> {
    let path = crate::discover::find_libtpu(explicit).map_err(|e| e.to_string())?;
    // A compile for a named topology opens no TPU device, so it need not take libtpu's
    // one-process-per-machine lock (which makes two `tpuc compile --topology` at once
    // fail): allowed here, unless the user decided otherwise.
    // Written at most once per process (a second write while plugin threads read the
    // environment would race with their getenv), before libtpu is loaded, which reads
    // it; the same rule as the runtime's TPU_SKIP_MDS_QUERY.
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if std::env::var_os("ALLOW_MULTIPLE_LIBTPU_LOAD").is_none() {
            std::env::set_var("ALLOW_MULTIPLE_LIBTPU_LOAD", "1");
        }
    });
    let quiet = std::env::var(crate::plugin_logging::LOG_LEVEL_VAR).as_deref() == Ok("3");
    let _muted = quiet.then(StderrMuted::new);
    Plugin::load(&path).map_err(|e| lock_hint(e.to_string()))
}

/// File descriptor 2 pointed at /dev/null until dropped.
struct StderrMuted {
    saved: i32,
}

extern "C" {
    fn dup(fd: i32) -> i32;
    fn dup2(from: i32, to: i32) -> i32;
    fn close(fd: i32) -> i32;
}

impl StderrMuted {
    fn new() -> Option<StderrMuted> {
        use std::os::fd::AsRawFd;
        let null = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/null")
            .ok()?;
        // SAFETY: plain descriptor calls; `saved` is a new descriptor we own and
        // restore in `drop`; `null` stays open until after the dup2.
        unsafe {
            let saved = dup(2);
            if saved < 0 {
                return None;
            }
            if dup2(null.as_raw_fd(), 2) < 0 {
                close(saved);
                return None;
            }
            Some(StderrMuted { saved })
        }
    }
}

impl Drop for StderrMuted {
    fn drop(&mut self) {
        // SAFETY: restores the descriptor saved in `new`, then closes the copy.
        unsafe {
            dup2(self.saved, 2);
            close(self.saved);
        }
    }
}

/// libtpu takes a lock file per process; a second process that loads it fails.
fn lock_hint(message: String) -> String {
    if message.contains("lockfile") || message.contains("already in use") {
        format!(
            "{message}\nhint: another process has libtpu loaded (it allows one per machine); wait for it, or set ALLOW_MULTIPLE_LIBTPU_LOAD=1 if neither process uses TPU devices"
        )
    } else {
        message
    }
}

/// The topology `name`, with libtpu's refusal made readable.
pub fn topology(libtpu: &std::sync::Arc<Plugin>, name: &str) -> Result<Topology, String> {
    libtpu.topology(name).map_err(|e| {
        let forms: Vec<String> = TOPOLOGY_FORMS
            .iter()
            .map(|(_, f)| format!("  {f}"))
            .collect();
        format!(
            "--topology `{name}`: libtpu does not accept it ({e})\nvalid forms:\n{}",
            forms.join("\n")
        )
    })
}

/// libtpu's refusal of the program for topology `name`, with the graph nodes it blames.
/// libtpu ends its message with the locations of the ops it suspects ("Suspected Python
/// Code Location:", then `file:line [node]` lines); the program it got carries each
/// op's node, so those name graph nodes.
pub fn rejection(name: &str, message: &str) -> String {
    let message = message.trim_end();
    let nodes: Vec<&str> = message
        .split_once("Suspected Python Code Location:")
        .map(|(_, rest)| {
            rest.lines()
                .filter_map(|l| {
                    let l = l.trim();
                    let inner = l.strip_suffix(']')?;
                    Some(&inner[inner.rfind('[')? + 1..])
                })
                .filter(|n| !n.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let mut text = format!("libtpu rejected the program for {name}: {message}");
    if !nodes.is_empty() {
        let list: Vec<String> = nodes.iter().map(|n| format!("`{n}`")).collect();
        text.push_str(&format!(
            "\nat graph node {} (`tpuc inspect MODEL` lists the nodes; the TPU compiler does not take this op as written)",
            list.join(", ")
        ));
    }
    text
}

fn figure(cost: &[(String, NamedValue)], name: &str) -> f64 {
    cost.iter()
        .find(|(n, _)| n == name)
        .and_then(|(_, v)| v.as_f64())
        .unwrap_or(0.0)
}

/// One program compiled by libtpu for one topology: the executable's figures and the
/// serialized executable.
pub struct TopologyCompile {
    pub report: TpuReport,
    /// libtpu's build description, one line.
    pub libtpu_version: String,
    /// The first 16 hex digits of the build description's digest (file names).
    pub build_key: String,
    /// Bytes the program's collectives produce per device and call, by opcode
    /// (`all-reduce`, `all-gather`, ..., from the TPU-optimized HLO; empty when libtpu
    /// does not give it).
    pub collectives: Vec<(String, crate::hlo::OpcodeStats)>,
    pub serialized: Vec<u8>,
    /// The TPU-optimized program, a serialized `HloModuleProto` (`None` when libtpu
    /// does not give it).
    pub optimized: Option<Vec<u8>>,
}

/// The opcodes of XLA's collectives (and their asynchronous `-start` halves).
pub fn is_collective(opcode: &str) -> bool {
    let base = opcode.strip_suffix("-start").unwrap_or(opcode);
    matches!(
        base,
        "all-reduce"
            | "all-gather"
            | "reduce-scatter"
            | "all-to-all"
            | "collective-permute"
            | "ragged-all-to-all"
    )
}

/// `options` with the libtpu flags `program` needs: `chlo.ragged_dot` (the grouped
/// matmuls of mixture-of-experts layers) is compiled into libtpu's grouped-matmul
/// kernels only with `xla_tpu_enable_ragged_dot_kernel`, which libtpu (measured: the
/// build in `.deps`, Dec 2026) enables by default on v5p alone; without it v5e, v6e,
/// tpu7x and v4 rewrite the op into a dense masked matmul over every group (E times the
/// FLOPs: 206 instead of 12.9 GFLOP on [4096, 2048] x [16, 2048, 768]).
fn with_kernels(program: &str, options: &crate::CompileOptions) -> crate::CompileOptions {
    let mut options = options.clone();
    if program.contains("\"chlo.ragged_dot\"") {
        options
            .flags
            .push(("xla_tpu_enable_ragged_dot_kernel".into(), true));
    }
    options
}

/// How often a long libtpu compile says it is still running.
const TICK: std::time::Duration = std::time::Duration::from_secs(30);

/// Compiles `program` (with `options`, over `partitions` devices) for topology `name`
/// with libtpu. A compile past 30 s calls `tick` with the topology and the time so far,
/// every 30 s, from another thread.
pub fn compile_on(
    plugin: &std::sync::Arc<Plugin>,
    name: &str,
    program: &str,
    partitions: u32,
    options: &crate::CompileOptions,
    tick: &(dyn Fn(&str, std::time::Duration) + Sync),
) -> Result<TopologyCompile, String> {
    let topology = topology(plugin, name)?;
    let devices = topology.num_devices().map_err(|e| e.to_string())?;
    let chips = chips_in(name).unwrap_or(devices).max(1);
    if devices < partitions as usize {
        return Err(format!(
            "--topology {name} has {devices} devices; the program is partitioned over {partitions} (--mesh): use a topology with at least {partitions}"
        ));
    }
    if partitions > 1 && devices != partitions as usize {
        return Err(format!(
            "--topology {name} has {devices} devices; the program is partitioned over {partitions} (--mesh): partition over all {devices} (`tpuc plan MODEL --topology {name}` finds a mesh), or compile for a slice of {partitions}"
        ));
    }
    // libtpu's version is a build description over two lines; one line for people,
    // a digest of it in the file name.
    let version = topology
        .platform_version()
        .map_err(|e| e.to_string())?
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let build_key: String = crate::manifest::Checksum::of(version.as_bytes())
        .hex()
        .chars()
        .take(16)
        .collect();
    let start = Instant::now();
    let done = std::sync::atomic::AtomicBool::new(false);
    let compiled = std::thread::scope(|s| {
        s.spawn(|| {
            let mut next = TICK;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                std::thread::sleep(std::time::Duration::from_millis(200));
                if start.elapsed() >= next {
                    tick(name, start.elapsed());
                    next += TICK;
                }
            }
        });
        let r = topology.compile(program.as_bytes(), "mlir", &with_kernels(program, options));
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        r
    });
    let exe = compiled.map_err(|e| rejection(name, &e.to_string()))?;
    let compile_seconds = start.elapsed().as_secs_f64();
    let stats = exe.compiled_memory_stats().map_err(|e| e.to_string())?;
    let cost = exe.cost_analysis().map_err(|e| e.to_string())?;
    let code = exe.generated_code_size().unwrap_or(0);
    let serialized = exe.serialize().map_err(|e| e.to_string())?;
    let optimized: Option<Vec<u8>> = exe
        .optimized_program()
        .ok()
        .and_then(|(format, code)| crate::hlo::module_of(&format, &code).map(|m| m.into_owned()));
    let collectives = optimized
        .as_deref()
        .and_then(crate::hlo::opcode_stats)
        .map(|stats| {
            stats
                .into_iter()
                .filter(|(op, _)| is_collective(op))
                .collect()
        })
        .unwrap_or_default();
    // A chip's HBM is shared by the devices it exposes.
    let per_chip = (devices / chips).max(1) as i64;
    let hbm = hbm_bytes_per_chip(name).unwrap_or(0) / per_chip;
    let report = TpuReport {
        chips,
        devices,
        partitions,
        argument_bytes: stats.argument_size_in_bytes,
        output_bytes: stats.output_size_in_bytes,
        alias_bytes: stats.alias_size_in_bytes,
        temp_bytes: stats.temp_size_in_bytes,
        peak_bytes: stats.peak_memory_in_bytes,
        generated_code_bytes: code.max(stats.generated_code_size_in_bytes),
        flops: figure(&cost, "flops"),
        transcendentals: figure(&cost, "transcendentals"),
        bytes_accessed: figure(&cost, "bytes accessed"),
        hbm_bytes_per_device: hbm,
        fits: hbm == 0 || stats.peak_memory_in_bytes <= hbm,
        compile_seconds,
    };
    Ok(TopologyCompile {
        report,
        libtpu_version: version,
        build_key,
        collectives,
        serialized,
        optimized,
    })
}

/// A TPU generation's published peak rates per chip: bf16 FLOP/s, HBM bytes/s and
/// inter-chip interconnect bytes/s.
pub fn chip_rates(topology: &str) -> Option<(f64, f64, f64)> {
    let generation = topology.split(':').next()?;
    Some(match generation {
        "v4" => (275e12, 1228e9, 300e9),
        "v5e" | "v5litepod" => (197e12, 819e9, 200e9),
        "v5p" => (459e12, 2765e9, 600e9),
        "v6e" => (918e12, 1640e9, 448e9),
        "tpu7x" => (2307e12, 7370e9, 1200e9),
        _ => return None,
    })
}

/// Whether `message` is libtpu's compile-time out-of-memory refusal.
pub fn is_out_of_memory(message: &str) -> bool {
    message.contains("Ran out of memory") || message.contains("HbmOom")
}

/// What takes the memory libtpu's out-of-memory refusal totals, named: the largest
/// arguments as each device holds them (weights by state-dict name), and the largest
/// values the program computes, by graph node (from `program`'s node locations; whole
/// tensors: a partitioned program holds a part of each), with a hint.
pub fn memory_culprits(manifest: &Manifest, program: &str) -> String {
    fn size(bytes: u64) -> String {
        let gib = bytes as f64 / (1u64 << 30) as f64;
        if gib >= 1.0 {
            format!("{gib:.2} GiB")
        } else {
            format!("{:.2} MiB", bytes as f64 / (1u64 << 20) as f64)
        }
    }
    let mesh = manifest.partitioning.as_ref().map(|p| &p.mesh);
    let mut args: Vec<(u64, String)> = manifest
        .arguments
        .iter()
        .map(|a| {
            let whole = a.shape.iter().map(|&d| d.max(0) as u64).product::<u64>()
                * a.dtype.size_in_bytes() as u64;
            let parts = match (mesh, &a.sharding) {
                (Some(m), Some(s)) => s.num_pieces(m),
                _ => 1,
            };
            (
                whole / parts,
                a.weight.clone().unwrap_or_else(|| a.name.clone()),
            )
        })
        .collect();
    let total: u64 = args.iter().map(|(b, _)| b).sum();
    args.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let listed: Vec<String> = args
        .iter()
        .take(5)
        .map(|(b, n)| format!("`{n}` {}", size(*b)))
        .collect();
    let mut text = format!(
        "the arguments take {} per device; the largest: {}",
        size(total),
        listed.join(", ")
    );
    let values = largest_values(program);
    if !values.is_empty() {
        let listed: Vec<String> = values
            .iter()
            .take(5)
            .map(|(b, node, ty)| format!("`{node}` {ty} {}", size(*b)))
            .collect();
        text.push_str(&format!(
            "\nthe largest values the program computes (graph node, whole tensor): {}",
            listed.join(", ")
        ));
    }
    text.push_str(
        "\nhint: partition it over more devices: `tpuc plan MODEL --topology SLICE` compiles the meshes that split these and says which fits",
    );
    text
}

/// The values `program` (generic MLIR with node locations) computes, largest first,
/// one per graph node: (bytes, node, type).
fn largest_values(program: &str) -> Vec<(u64, String, String)> {
    let mut names: std::collections::HashMap<&str, &str> = std::collections::HashMap::new();
    for line in program.lines() {
        if let Some((alias, rest)) = line.split_once(" = loc(\"") {
            if let Some(name) = rest.split('"').next() {
                names.insert(alias.trim(), name);
            }
        }
    }
    let mut best: std::collections::HashMap<String, (u64, String)> = Default::default();
    for line in program.lines() {
        if !line.contains("= \"stablehlo.") {
            continue;
        }
        let Some((_, tail)) = line.rsplit_once("->") else {
            continue;
        };
        let Some((ty, loc)) = tail.rsplit_once(" loc(") else {
            continue;
        };
        let loc = loc.trim_end_matches(')');
        let node = match loc.strip_prefix('"') {
            Some(inline) => inline.split('"').next().unwrap_or(""),
            None => names.get(loc).copied().unwrap_or(""),
        };
        if node.is_empty() {
            continue;
        }
        let ty = ty.trim();
        let bytes = tensor_bytes(ty);
        let entry = best.entry(node.to_string()).or_insert((0, String::new()));
        if bytes > entry.0 {
            *entry = (bytes, ty.to_string());
        }
    }
    let mut out: Vec<(u64, String, String)> =
        best.into_iter().map(|(n, (b, t))| (b, n, t)).collect();
    out.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    out
}

/// The bytes of a `tensor<AxBxdtype>` type written in MLIR (0 when it is not a static
/// tensor of an element type of known size).
pub fn tensor_bytes(ty: &str) -> u64 {
    let Some((dims, elem)) = tensor_type(ty) else {
        return 0;
    };
    let size = match elem {
        "complex<f64" => 16,
        "f64" | "i64" | "ui64" | "complex<f32" => 8,
        "f32" | "i32" | "ui32" => 4,
        "f16" | "bf16" | "i16" | "ui16" => 2,
        "i8" | "ui8" | "i1" | "f8E4M3FN" | "f8E5M2" => 1,
        _ => return 0,
    };
    dims.iter().product::<u64>() * size
}

/// A static `tensor<AxBxdtype>` type written in MLIR: its dimensions and its element
/// type (`f32`, `complex<f32`); `None` for another type or a dynamic dimension.
pub fn tensor_type(ty: &str) -> Option<(Vec<u64>, &str)> {
    // `2x3xf32>`, `2xcomplex<f32>>`: the dimensions, then the element type.
    let body = ty.trim().strip_prefix("tensor<")?.trim_end_matches('>');
    let (dims, elem) = match body.find("complex<") {
        Some(at) => (body[..at].trim_end_matches('x'), &body[at..]),
        None => body.rsplit_once('x').unwrap_or(("", body)),
    };
    let dims = dims
        .split('x')
        .filter(|d| !d.is_empty())
        .map(|d| d.parse::<u64>().ok())
        .collect::<Option<Vec<_>>>()?;
    Some((dims, elem))
}

/// Compiles `program` (the program of the artifact directory `dir`, being written, with
/// node locations, `tpuc_compiler::program_with_node_locations`; its manifest is
/// `manifest`) for each topology, writing `tpu/<topology>/libtpu-<digest of the libtpu
/// build>.executable` and adding the manifest's entries. `say` gets one line per
/// topology compiled, a warning for each the program does not fit, and a line every
/// 30 s of a long compile (`tpuc compile` prints them on stderr).
pub fn compile_for_topologies(
    dir: &Path,
    manifest: &mut Manifest,
    program: &str,
    topologies: &[String],
    libtpu: Option<&Path>,
    say: &(dyn Fn(&str) + Sync),
) -> Result<(), String> {
    let plugin = load_libtpu(libtpu)?;
    crate::version::check_stablehlo_version(dir, &manifest.stablehlo_version, &plugin)
        .map_err(|e| e.to_string())?;
    let (partitions, options) = match &manifest.partitioning {
        Some(p) => (p.num_partitions, p.compile_options()),
        None => (1, crate::CompileOptions::default()),
    };
    for name in topologies {
        let tick = |topology: &str, elapsed: std::time::Duration| {
            say(&format!(
                "libtpu: still compiling for TPU {topology} ({} s so far)",
                elapsed.as_secs()
            ))
        };
        let compiled =
            compile_on(&plugin, name, program, partitions, &options, &tick).map_err(|e| {
                match is_out_of_memory(&e) {
                    true => format!("{e}\n{}", memory_culprits(manifest, program)),
                    false => e,
                }
            })?;
        let report = compiled.report;
        let relative = crate::layout::tpu_executable_file(name, &compiled.build_key);
        let path = dir.join(&relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create `{}`: {e}", parent.display()))?;
        }
        std::fs::write(&path, &compiled.serialized)
            .map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
        let optimized_program = match &compiled.optimized {
            Some(module) => {
                let relative = crate::layout::tpu_optimized_program_file(name, &compiled.build_key);
                let path = dir.join(&relative);
                std::fs::write(&path, module)
                    .map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
                Some(FileRef {
                    file: relative.to_string_lossy().into_owned(),
                    checksum: crate::manifest::Checksum::of(module),
                })
            }
            None => None,
        };
        if !report.fits {
            say(&format!(
                "warning: on {name} the program needs {} per device at its peak; a device has {}",
                mib(report.peak_bytes.max(0) as u64),
                mib(report.hbm_bytes_per_device as u64)
            ));
        }
        say(&format!(
            "compiled for TPU {name} ({} chips, {} devices; libtpu {}) in {:.2} s: peak {} per device, {:.3e} FLOP",
            report.chips,
            report.devices,
            compiled.libtpu_version,
            report.compile_seconds,
            mib(report.peak_bytes.max(0) as u64),
            report.flops
        ));
        manifest.tpu_executables.push(TpuExecutable {
            topology: name.clone(),
            libtpu_version: compiled.libtpu_version,
            stablehlo_version: manifest.stablehlo_version.clone(),
            executable: FileRef {
                file: relative.to_string_lossy().into_owned(),
                checksum: crate::manifest::Checksum::of(&compiled.serialized),
            },
            optimized_program,
            report,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn tensor_type_bytes() {
        use super::tensor_bytes;
        assert_eq!(tensor_bytes("tensor<2x3xf32>"), 24);
        assert_eq!(tensor_bytes("tensor<f32>"), 4);
        assert_eq!(tensor_bytes("tensor<8x131072xbf16>"), 8 * 131072 * 2);
        assert_eq!(tensor_bytes("tensor<2xcomplex<f32>>"), 16);
        assert_eq!(tensor_bytes("tensor<complex<f64>>"), 16);
        assert_eq!(tensor_bytes("tensor<?x4xf32>"), 0);
        assert_eq!(tensor_bytes("tensor<4x!quant>"), 0);
    }
}
