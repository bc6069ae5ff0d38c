//! The corpus half of `make bench`: what tpuc emits against what torchax emits for the
//! same exported programs, and how `tpuc compile` scales.
//!
//! - Every model of `testdata/models` and `testdata/coverage/models` (Core ATen form,
//!   `core.pt2`) is compiled by the release `tpuc` at `-O2` (timed, median of
//!   `compile_runs` runs, process start included) and at `-O0`.
//! - `bench/side_by_side.py` (bench venv: jax 0.12, torch, torchax) exports the same
//!   `.pt2` with torchax, compiles all three programs with jaxlib's CPU client, checks
//!   them against PyTorch's outputs and times them interleaved (see that file).
//! - Compile scaling: Linear+GELU chains of 1k, 10k and 100k nodes
//!   (`bench/synthetic_models.py chain`), compiled at `-O2` with `--timing`: wall time,
//!   the slowest stages and peak memory; and a real `.pt2` holding about 1 GiB of
//!   weights (`synthetic_models.py weights`) for the rate weights stream at.
//!
//! Returns Markdown sections; every figure comes from this run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::Value;

use crate::BoxError;

/// Families without attention blocks; every other model counts as a transformer for
/// the op-count check.
const NON_TRANSFORMER: &[&str] = &["cnn", "mlp", "ops"];

/// A run time counts as "matching" torchax's at or below this ratio (the bar).
const WORST_ALLOWED: f64 = 1.05;

pub struct CorpusOptions<'a> {
    pub tpuc: &'a Path,
    pub python: &'a Path,
    pub work_dir: &'a Path,
    pub rounds: usize,
    pub compile_runs: usize,
    pub chain_nodes: &'a [usize],
    pub weights_mib: f64,
    /// Only these models (all when empty).
    pub only: &'a [String],
}

struct Model {
    /// `name` for testdata/models, `name (coverage)` for testdata/coverage/models (the
    /// two corpora share some names).
    name: String,
    family: String,
    dir: PathBuf,
}

fn corpus(only: &[String]) -> Result<Vec<Model>, BoxError> {
    let mut out = Vec::new();
    for (root, default_family, suffix) in [
        ("testdata/models", None, ""),
        ("testdata/coverage/models", Some(""), " (coverage)"),
    ] {
        let index: Value =
            serde_json::from_str(&std::fs::read_to_string(format!("{root}/index.json"))?)?;
        for m in index["models"].as_array().ok_or("index.json: no models")? {
            let (name, family) = match (m.as_str(), default_family) {
                (Some(n), None) => (n.to_string(), corpus_family(n).to_string()),
                _ => (
                    m["name"]
                        .as_str()
                        .ok_or("index.json: model without name")?
                        .to_string(),
                    m["family"].as_str().unwrap_or("").to_string(),
                ),
            };
            let label = format!("{name}{suffix}");
            if only.is_empty() || only.contains(&name) || only.contains(&label) {
                out.push(Model {
                    dir: PathBuf::from(root).join(&name),
                    name: label,
                    family,
                });
            }
        }
    }
    Ok(out)
}

/// The family of a model of `testdata/models` (its index lists names only).
fn corpus_family(name: &str) -> &'static str {
    match name {
        "cnn" => "cnn",
        "mlp" | "mlp_f16" | "mlp_bf16" => "mlp",
        "int_ops" | "indexing" => "ops",
        "gpt2" | "llama" => "decoder",
        "bert" | "transformer_encoder" => "encoder",
        _ => "attention",
    }
}

fn is_transformer(m: &Model) -> bool {
    !NON_TRANSFORMER.contains(&m.family.as_str())
}

/// `tpuc compile MODEL --timing -o OUT`, median of `compile_runs` runs: (wall seconds,
/// stderr, stage times, peak memory in MiB).
type Timed = (f64, String, Vec<(String, f64)>, Option<f64>);
/// `tpuc compile MODEL --timing -o OUT`, timed; with `settle`, each timed run starts
/// after `sync` (see [`settle_writeback`]).
fn timed_compile(
    opts: &CorpusOptions,
    model: &Path,
    out: &Path,
    settle: bool,
) -> Result<Timed, BoxError> {
    let args = [
        model.to_str().unwrap_or_default(),
        "--timing",
        "-o",
        out.to_str().unwrap_or_default(),
    ];
    // One untimed run first: the input is then in the page cache, as it is right after
    // an export, and the rows measure compiling rather than the disk.
    tpuc_compile(opts.tpuc, &args)?;
    let (wall_s, stderr) = tpuc_compile_median(opts.tpuc, &args, opts.compile_runs, settle)?;
    let (stages, peak) = parse_timing(&stderr);
    Ok((wall_s, stderr, stages, peak))
}

/// Runs `tpuc compile` `runs` times; returns the run with the median wall time
/// (seconds, stderr).
fn tpuc_compile_median(
    tpuc: &Path,
    args: &[&str],
    runs: usize,
    settle: bool,
) -> Result<(f64, String), BoxError> {
    let mut all = Vec::new();
    for _ in 0..runs.max(1) {
        if settle {
            settle_writeback();
        }
        all.push(tpuc_compile(tpuc, args)?);
    }
    all.sort_by(|a, b| a.0.total_cmp(&b.0));
    Ok(all.swap_remove(all.len() / 2))
}

/// Waits for the kernel to write back dirty pages (`sync`). Each weights run writes a
/// gigabyte; without this the next run starts while the last one's pages are still
/// being written back and the kernel throttles its writes (measured here: the same
/// compile, and a plain copy, took 2-6x as long), so the row would measure the disk's
/// backlog rather than the compiler.
fn settle_writeback() {
    let _ = Command::new("sync").status();
}

/// Runs `tpuc compile` and returns (wall seconds, stderr).
fn tpuc_compile(tpuc: &Path, args: &[&str]) -> Result<(f64, String), BoxError> {
    let start = Instant::now();
    let out = Command::new(tpuc).arg("compile").args(args).output()?;
    let seconds = start.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() {
        return Err(format!("tpuc compile {}: {}", args.join(" "), stderr.trim()).into());
    }
    Ok((seconds, stderr))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn geomean(v: &[f64]) -> f64 {
    (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp()
}

/// `--timing` output: per-stage milliseconds and the peak memory in MiB.
fn parse_timing(stderr: &str) -> (Vec<(String, f64)>, Option<f64>) {
    let mut stages = Vec::new();
    let mut peak = None;
    for line in stderr.lines().filter(|l| l.starts_with("  ")) {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("peak memory (VmHWM)") {
            peak = rest.split_whitespace().next().and_then(|v| v.parse().ok());
            continue;
        }
        let parts: Vec<&str> = t.split_whitespace().collect();
        if parts.len() >= 3 && parts[2] == "ms" && parts[0] != "total" {
            if let Ok(ms) = parts[1].parse::<f64>() {
                stages.push((parts[0].to_string(), ms));
            }
        }
    }
    (stages, peak)
}

struct Compiled {
    o2: Option<PathBuf>,
    o0: Option<PathBuf>,
    compile_s: Option<f64>,
    error: Option<String>,
}

fn compile_model(opts: &CorpusOptions, m: &Model) -> Compiled {
    let pt2 = m.dir.join("core.pt2");
    let base = opts
        .work_dir
        .join("corpus")
        .join(m.dir.strip_prefix("testdata").unwrap_or(&m.dir));
    let mut c = Compiled {
        o2: None,
        o0: None,
        compile_s: None,
        error: None,
    };
    let mut times = Vec::new();
    for level in ["2", "0"] {
        let out = base.join(format!("O{level}.tpuc"));
        let runs = if level == "2" { opts.compile_runs } else { 1 };
        for _ in 0..runs.max(1) {
            let args = [
                pt2.to_str().unwrap_or_default(),
                &format!("-O{level}"),
                "-o",
                out.to_str().unwrap_or_default(),
            ];
            match tpuc_compile(opts.tpuc, &args) {
                Ok((s, _)) if level == "2" => times.push(s),
                Ok(_) => {}
                Err(e) => {
                    c.error = Some(e.to_string());
                    return c;
                }
            }
        }
        if level == "2" {
            c.o2 = Some(out);
        } else {
            c.o0 = Some(out);
        }
    }
    c.compile_s = Some(median(times));
    c
}

/// Why tpuc's `-O2` program may be slower than torchax's, from this run's data: the
/// kernel kinds XLA's optimized programs differ in (tpuc's count minus torchax's) and
/// `-O0`'s ratio (`r0`).
fn why_slower(p: &Value, r0: Option<f64>) -> String {
    let kinds = |l: &str| {
        p[l]["kernel_kinds"]
            .as_object()
            .cloned()
            .unwrap_or_default()
    };
    let (ours, theirs) = (kinds("tpuc_O2"), kinds("torchax"));
    let mut names: Vec<&String> = ours.keys().chain(theirs.keys()).collect();
    names.sort();
    names.dedup();
    let count =
        |m: &serde_json::Map<String, Value>, k: &str| m.get(k).and_then(Value::as_i64).unwrap_or(0);
    let diffs: Vec<String> = names
        .iter()
        .filter_map(|k| {
            let d = count(&ours, k) - count(&theirs, k);
            (d != 0).then(|| format!("{d:+} {k}"))
        })
        .collect();
    let kernels = if ours.is_empty() || theirs.is_empty() {
        "kernel kinds not recorded".to_string()
    } else if diffs.is_empty() {
        "same XLA kernels".to_string()
    } else {
        format!("XLA kernels {}", diffs.join(", "))
    };
    match r0 {
        Some(r0) => format!("; {kernels}; -O0 {r0:.3}×"),
        None => format!("; {kernels}"),
    }
}

fn f(v: &Value, path: &[&str]) -> Option<f64> {
    let mut v = v;
    for p in path {
        v = v.get(p)?;
    }
    v.as_f64()
}

/// The run-time ratio of program `a` to program `b`: the ratio of their medians over
/// rounds, and, when the per-round figures are there, a 90% bootstrap interval of that
/// ratio (rounds resampled with replacement, 1000 times, a fixed-seed generator so that
/// the report is reproducible from side_by_side.json). On a shared 2-core machine one
/// round of a 30 µs program can be 20% off, so the interval says whether a ratio a few
/// percent above 1 is the programs or the machine.
fn ratio_with_interval(p: &Value, a: &str, b: &str) -> Option<(f64, Option<(f64, f64)>)> {
    let point = f(p, &[a, "run_s", "median"])? / f(p, &[b, "run_s", "median"])?;
    let rounds = |l: &str| -> Option<Vec<f64>> {
        p[l]["rounds_s"]
            .as_array()?
            .iter()
            .map(Value::as_f64)
            .collect()
    };
    let (Some(x), Some(y)) = (rounds(a), rounds(b)) else {
        return Some((point, None));
    };
    if x.len() < 10 || y.len() < 10 {
        return Some((point, None));
    }
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move |n: usize| {
        // xorshift64*: plenty for resampling indices.
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        (state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n
    };
    let mut ratios: Vec<f64> = (0..1000)
        .map(|_| {
            let xs: Vec<f64> = (0..x.len()).map(|_| x[next(x.len())]).collect();
            let ys: Vec<f64> = (0..y.len()).map(|_| y[next(y.len())]).collect();
            median(xs) / median(ys)
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    Some((point, Some((ratios[50], ratios[949]))))
}

fn us(s: f64) -> String {
    if s >= 1e-3 {
        format!("{:.2} ms", s * 1e3)
    } else {
        format!("{:.1} µs", s * 1e6)
    }
}

fn stats_line(label: &str, v: &[f64]) -> String {
    if v.is_empty() {
        return format!("- {label}: no models");
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    format!(
        "- {label}: geometric mean **{:.3}×**, median {:.3}×, min {:.3}×, max {:.3}× ({} models)",
        geomean(v),
        median(v.to_vec()),
        s[0],
        s[s.len() - 1],
        v.len()
    )
}

pub fn run(opts: &CorpusOptions) -> Result<String, BoxError> {
    let models = corpus(opts.only)?;
    std::fs::create_dir_all(opts.work_dir.join("corpus"))?;

    // 1. tpuc compiles.
    let mut compiled = Vec::new();
    for (i, m) in models.iter().enumerate() {
        eprintln!(
            "tpuc-bench: [{}/{}] tpuc compile {}",
            i + 1,
            models.len(),
            m.name
        );
        compiled.push(compile_model(opts, m));
    }

    // 2. The peer, side by side.
    let spec = serde_json::json!({
        "warmup": 20,
        "rounds": opts.rounds,
        // Short turns, many rounds: measured here, 600 rounds of 2 ms brought two
        // executables of one program within 2% of each other on most models, where
        // 100 rounds of 4 ms left them up to 7% apart.
        "turn_ms": 2,
        "models": models.iter().zip(&compiled).filter(|(_, c)| c.error.is_none()).map(|(m, c)| {
            serde_json::json!({
                "name": m.name,
                "dir": m.dir,
                "pt2": m.dir.join("core.pt2"),
                "artifacts": {"tpuc_O2": c.o2, "tpuc_O0": c.o0},
            })
        }).collect::<Vec<_>>(),
    });
    let spec_path = opts.work_dir.join("side_by_side_spec.json");
    let out_path = opts.work_dir.join("side_by_side.json");
    std::fs::write(&spec_path, serde_json::to_string_pretty(&spec)?)?;
    let status = Command::new(opts.python)
        .arg("bench/side_by_side.py")
        .arg(&spec_path)
        .arg(&out_path)
        .status()?;
    if !status.success() {
        return Err(format!("bench/side_by_side.py failed ({status})").into());
    }
    let peer: Value = serde_json::from_str(&std::fs::read_to_string(&out_path)?)?;
    let by_name: BTreeMap<&str, &Value> = peer["models"]
        .as_array()
        .ok_or("side_by_side.json: no models")?
        .iter()
        .filter_map(|m| Some((m["name"].as_str()?, m)))
        .collect();

    // 3. Scaling.
    let scaling = scaling_rows(opts)?;

    let mut md = report(opts, &models, &compiled, &peer, &by_name, &scaling);
    // 4. TPU compiles (libtpu, no TPU).
    md.push_str(&tpu_section(opts.tpuc, opts.work_dir, &models)?);
    Ok(md)
}

/// The `## TPU compiles` section: every transformer of the corpus compiled by libtpu for
/// `v5e:1x1` at -O2 and at -O0 (`tpuc compile --topology`, one process each); the TPU
/// compile's wall time and XLA's per-device peak memory, FLOPs and bytes accessed.
/// Without libtpu the section says so.
pub fn tpu_section_for_corpus(
    tpuc: &Path,
    work_dir: &Path,
    only: &[String],
) -> Result<String, BoxError> {
    tpu_section(tpuc, work_dir, &corpus(only)?)
}

fn tpu_section(tpuc: &Path, work_dir: &Path, models: &[Model]) -> Result<String, BoxError> {
    const TOPOLOGY: &str = "v5e:1x1";
    let mut md = String::from("\n## TPU compiles\n\n");
    if tpuc_runtime::discover::find_libtpu(None).is_err() {
        md.push_str("No libtpu found (`make setup` installs it): section skipped.\n");
        return Ok(md);
    }
    md.push_str(&format!(
        "Each transformer of the corpus compiled by libtpu 0.0.52 for `{TOPOLOGY}` with no TPU \
         (`tpuc compile core.pt2 --topology {TOPOLOGY}`, `-O2` and `-O0`): the wall time of the \
         TPU compile alone (as `tpuc` records it), and XLA's figures for one device: peak \
         memory, FLOPs and bytes accessed. Ratios are -O2 over -O0.\n\n"
    ));
    md.push_str("| model | TPU compile -O2 | -O0 | peak -O2 | -O0 | MFLOP -O2 | -O0 | bytes accessed -O2/-O0 |\n");
    md.push_str("|---|---:|---:|---:|---:|---:|---:|---:|\n");
    let dir = work_dir.join("tpu");
    std::fs::create_dir_all(&dir)?;
    let mut ratios = Vec::new();
    for m in models.iter().filter(|m| is_transformer(m)) {
        let mut reports = Vec::new();
        for level in ["-O2", "-O0"] {
            let out = dir.join(format!(
                "{}{level}.tpuc",
                m.name.replace([' ', '(', ')'], "_")
            ));
            let model = m.dir.join("core.pt2");
            let args = [
                "compile",
                model.to_str().unwrap_or_default(),
                "-o",
                out.to_str().unwrap_or_default(),
                level,
                "--topology",
                TOPOLOGY,
            ];
            let o = Command::new(tpuc).args(args).output()?;
            if !o.status.success() {
                reports.push(None);
                eprintln!(
                    "tpuc-bench: {} {level}: {}",
                    m.name,
                    String::from_utf8_lossy(&o.stderr)
                );
                continue;
            }
            let manifest = tpuc_runtime::session::read_manifest(&out)?;
            reports.push(manifest.tpu_executables.first().map(|e| e.report.clone()));
        }
        let (Some(Some(a)), Some(Some(b))) = (reports.first(), reports.get(1)) else {
            md.push_str(&format!("| {} | failed | | | | | | |\n", m.name));
            continue;
        };
        let mib = |x: i64| format!("{:.2} MiB", x as f64 / (1u64 << 20) as f64);
        let ratio = a.bytes_accessed / b.bytes_accessed.max(1.0);
        ratios.push(ratio);
        md.push_str(&format!(
            "| {} | {:.2} s | {:.2} s | {} | {} | {:.2} | {:.2} | {:.3} |\n",
            m.name,
            a.compile_seconds,
            b.compile_seconds,
            mib(a.peak_bytes),
            mib(b.peak_bytes),
            a.flops / 1e6,
            b.flops / 1e6,
            ratio
        ));
    }
    if !ratios.is_empty() {
        md.push_str(&format!(
            "\nGeometric mean of bytes accessed, -O2 over -O0: {:.3} ({} models).\n",
            geomean(&ratios),
            ratios.len()
        ));
    }
    md.push('\n');
    Ok(md)
}

struct ScalingRow {
    what: String,
    nodes: usize,
    weight_bytes: Option<u64>,
    wall_s: f64,
    stages: Vec<(String, f64)>,
    peak_mib: Option<f64>,
    /// For the weights row: the median time of a plain kernel copy of the source file
    /// (`std::fs::copy`, `copy_file_range` on Linux), the floor for writing its bytes.
    copy_s: Option<f64>,
}

fn scaling_rows(opts: &CorpusOptions) -> Result<Vec<ScalingRow>, BoxError> {
    let dir = opts.work_dir.join("scaling");
    std::fs::create_dir_all(&dir)?;
    let mut rows = Vec::new();
    for &n in opts.chain_nodes {
        let model = dir.join(format!("chain_{n}.json"));
        if !model.exists() {
            let status = Command::new(opts.python)
                .args(["bench/synthetic_models.py", "chain", &n.to_string()])
                .arg(&model)
                .status()?;
            if !status.success() {
                return Err(format!("synthetic_models.py chain {n} failed").into());
            }
        }
        eprintln!("tpuc-bench: compile scaling, {n} nodes");
        let out = dir.join(format!("chain_{n}.tpuc"));
        let (wall_s, _, stages, peak_mib) = timed_compile(opts, &model, &out, false)?;
        rows.push(ScalingRow {
            what: format!("Linear+GELU chain, {n} nodes"),
            nodes: n,
            weight_bytes: None,
            wall_s,
            stages,
            peak_mib,
            copy_s: None,
        });
    }
    if opts.weights_mib > 0.0 {
        let model = dir.join(format!("weights_{}mib.pt2", opts.weights_mib));
        if !model.exists() {
            eprintln!(
                "tpuc-bench: exporting a model with {} MiB of weights",
                opts.weights_mib
            );
            let status = Command::new(opts.python)
                .args([
                    "bench/synthetic_models.py",
                    "weights",
                    &opts.weights_mib.to_string(),
                ])
                .arg(&model)
                .status()?;
            if !status.success() {
                return Err("synthetic_models.py weights failed".into());
            }
        }
        let out = dir.join("weights.tpuc");
        let (wall_s, stderr, stages, peak_mib) = timed_compile(opts, &model, &out, true)?;
        let bytes = std::fs::metadata(out.join(tpuc_runtime::layout::WEIGHTS_FILE))?.len();
        let nodes = stderr
            .split(" nodes")
            .next()
            .and_then(|s| s.rsplit('(').next())
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0);
        rows.push(ScalingRow {
            what: format!(
                "Linear stack, {:.0} MiB of f32 weights (.pt2)",
                bytes as f64 / 1048576.0
            ),
            nodes,
            weight_bytes: Some(bytes),
            wall_s,
            stages,
            peak_mib,
            copy_s: Some(copy_time(opts, &model, &dir.join("copy_floor.bin"))?),
        });
    }
    Ok(rows)
}

/// Median wall time of `std::fs::copy(source, scratch)` over the compile runs (each
/// over the last one's copy and after `sync`, as the compiles).
fn copy_time(opts: &CorpusOptions, source: &Path, scratch: &Path) -> Result<f64, BoxError> {
    let mut times = Vec::new();
    for _ in 0..opts.compile_runs.max(1) {
        let _ = std::fs::remove_file(scratch);
        settle_writeback();
        let start = std::time::Instant::now();
        std::fs::copy(source, scratch)?;
        times.push(start.elapsed().as_secs_f64());
    }
    std::fs::remove_file(scratch)?;
    Ok(median(times))
}

fn report(
    opts: &CorpusOptions,
    models: &[Model],
    compiled: &[Compiled],
    peer: &Value,
    by_name: &BTreeMap<&str, &Value>,
    scaling: &[ScalingRow],
) -> String {
    let mut md = String::new();
    let mut line = |s: &str| {
        md.push_str(s);
        md.push('\n');
    };
    line("## tpuc against torchax, model by model");
    line("");
    line(&format!(
        "Every model of `testdata/models` and `testdata/coverage/models` in Core ATen form \
         (`core.pt2`): tpuc `-O2`, tpuc `-O0` and the StableHLO torchax {} emits for the \
         same `.pt2`, all three compiled by jaxlib {}'s CPU client in one process \
         (torchax's program a second time too, as its own executable with its own buffers: \
         the noise floor, column `torchax / itself`) \
         (`bench/side_by_side.py`, Python {}, torch {}), checked against PyTorch's outputs, \
         inputs and weights on the device, {} interleaved rounds, medians; for a model above \
         the limit, a 90% bootstrap interval of its ratio over the rounds. torchax's \
         weights are bound in the program's `input_specs` order (see below). tpuc compile \
         time: the release `tpuc compile -O2` process, median of {} runs; torchax export: \
         `torch.export.load` + `exported_program_to_stablehlo` + `mlir_module()`.",
        peer["torchax_version"].as_str().unwrap_or("?"),
        peer["jaxlib_version"].as_str().unwrap_or("?"),
        peer["python"].as_str().unwrap_or("?"),
        peer["torch_version"].as_str().unwrap_or("?"),
        opts.rounds,
        opts.compile_runs,
    ));
    line("");
    line("| model | family | ops -O0 | ops -O2 | ops torchax | XLA kernels -O2 | XLA kernels torchax | XLA compile -O2 / torchax | run -O2 | run -O0 | run torchax | **-O2 / torchax** | -O0 / torchax | torchax / itself | tpuc compile | torchax export | export / compile |");
    line("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut ratios_o2 = Vec::new();
    let mut ratios_o0 = Vec::new();
    let mut ratios_aa = Vec::new();
    let mut speedups = Vec::new();
    let mut xla_compile = Vec::new();
    // Models above the limit, each with what this run shows about why.
    let mut above = Vec::new();
    let mut clearly_above: Vec<String> = Vec::new();
    let mut peer_failed = Vec::new();
    let mut peer_wrong = Vec::new();
    let mut order_differs = Vec::new();
    let mut tpuc_failed = Vec::new();
    let mut more_ops = Vec::new();
    for (m, c) in models.iter().zip(compiled) {
        if let Some(e) = &c.error {
            tpuc_failed.push(format!("{}: {}", m.name, e.lines().next().unwrap_or("")));
            continue;
        }
        let Some(r) = by_name.get(m.name.as_str()) else {
            continue;
        };
        let p = &r["programs"];
        let ops = |l: &str| p[l]["ops"].as_u64();
        let run = |l: &str| f(p, &[l, "run_s", "median"]);
        let ok = |l: &str| p[l]["matches_pytorch"].as_bool() == Some(true);
        for l in ["tpuc_O2", "tpuc_O0"] {
            if !ok(l) {
                tpuc_failed.push(format!(
                    "{} ({l}): {}",
                    m.name,
                    p[l]["mismatch"]
                        .as_str()
                        .or(p[l]["error"].as_str())
                        .unwrap_or("does not match PyTorch")
                ));
            }
        }
        if let Some(e) = r["torchax_error"].as_str() {
            peer_failed.push(format!("{}: {e}", m.name));
        } else if !ok("torchax") {
            peer_wrong.push(format!(
                "{}: {}",
                m.name,
                p["torchax"]["mismatch"]
                    .as_str()
                    .or(p["torchax"]["error"].as_str())
                    .unwrap_or("?")
            ));
        }
        if r["torchax_weight_order_differs"].as_bool() == Some(true) {
            order_differs.push(m.name.clone());
        }
        if is_transformer(m) {
            if let (Some(a), Some(b)) = (ops("tpuc_O0"), ops("tpuc_O2")) {
                if b >= a {
                    more_ops.push(format!("{} ({b} ≥ {a})", m.name));
                }
            }
        }
        let peer_ok = ok("torchax") && r["torchax_error"].is_null();
        let ratio = |l: &str| match peer_ok && ok(l) {
            true => ratio_with_interval(p, l, "torchax"),
            false => None,
        };
        let (r2, r0) = (ratio("tpuc_O2"), ratio("tpuc_O0"));
        // The noise floor: torchax's program against a second executable of itself.
        let aa = match peer_ok && ok("torchax_again") {
            true => run("torchax_again").zip(run("torchax")).map(|(a, b)| a / b),
            false => None,
        };
        if let Some(x) = aa {
            ratios_aa.push(x);
        }
        let interval = r2.and_then(|(_, q)| q);
        let spread = interval
            .map(|(lo, hi)| format!("; 90% interval {lo:.3}-{hi:.3}×"))
            .unwrap_or_default();
        let (r2, r0) = (r2.map(|r| r.0), r0.map(|r| r.0));
        if let Some(x) = r2 {
            ratios_o2.push(x);
            if x > WORST_ALLOWED {
                if interval.is_some_and(|(lo, _)| lo > WORST_ALLOWED) {
                    clearly_above.push(m.name.clone());
                }
                let noise = aa
                    .map(|a| format!("; torchax against itself {a:.3}×"))
                    .unwrap_or_default();
                above.push(format!(
                    "{} ({x:.3}×{spread}{noise}{})",
                    m.name,
                    why_slower(p, r0)
                ));
            }
        }
        if let Some(x) = r0 {
            ratios_o0.push(x);
        }
        let xc = match (
            f(p, &["tpuc_O2", "xla_compile_s"]),
            f(p, &["torchax", "xla_compile_s"]),
        ) {
            (Some(a), Some(b)) => {
                xla_compile.push(a / b);
                format!("{:.2}×", a / b)
            }
            _ => "".into(),
        };
        let export = f(r, &["torchax_export_s"]);
        let speed = match (export, c.compile_s) {
            (Some(e), Some(t)) => {
                speedups.push(e / t);
                format!("{:.0}×", e / t)
            }
            _ => "".into(),
        };
        let opt = |v: Option<f64>| v.map(us).unwrap_or_default();
        let optr = |v: Option<f64>| v.map(|x| format!("{x:.3}×")).unwrap_or_default();
        let n = |v: Option<u64>| v.map(|x| x.to_string()).unwrap_or_default();
        line(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | **{}** | {} | {} | {} | {} | {} |",
            m.name,
            m.family,
            n(ops("tpuc_O0")),
            n(ops("tpuc_O2")),
            n(ops("torchax")),
            n(p["tpuc_O2"]["kernels"].as_u64()),
            n(p["torchax"]["kernels"].as_u64()),
            xc,
            opt(run("tpuc_O2")),
            opt(run("tpuc_O0")),
            opt(run("torchax")),
            optr(r2),
            optr(r0),
            optr(aa),
            c.compile_s
                .map(|s| format!("{:.3} s", s))
                .unwrap_or_default(),
            export.map(|s| format!("{:.2} s", s)).unwrap_or_default(),
            speed,
        ));
    }
    line("");
    line("Summary (ratios below 1 favour tpuc):");
    line("");
    line(&stats_line("run time, tpuc -O2 / torchax", &ratios_o2));
    line(&stats_line("run time, tpuc -O0 / torchax", &ratios_o0));
    line(&stats_line(
        "run time, torchax / itself (a second executable of the same program: the noise floor)",
        &ratios_aa,
    ));
    line(&stats_line(
        "XLA compile time, tpuc -O2 / torchax",
        &xla_compile,
    ));
    line(&stats_line(
        "torchax export time / tpuc compile time",
        &speedups,
    ));
    line("");
    let g = if ratios_o2.is_empty() {
        f64::NAN
    } else {
        geomean(&ratios_o2)
    };
    line(&format!(
        "- Target, run time ≤ 1.0× torchax's (geometric mean): **{}** ({:.3}×{}).",
        if g <= 1.0 { "met" } else { "missed" },
        g,
        if g > 1.0 {
            format!(", {:.1}% over", (g - 1.0) * 100.0)
        } else {
            String::new()
        }
    ));
    line(&format!(
        "- Target, no model above {WORST_ALLOWED}×: **{}**{}",
        if above.is_empty() { "met" } else { "missed" },
        if above.is_empty() {
            String::new()
        } else {
            format!(": {}", above.join("; "))
        }
    ));
    if !above.is_empty() {
        line(&format!(
            "  Of these, {} with the whole 90% interval above {WORST_ALLOWED}×{}.",
            clearly_above.len(),
            if clearly_above.is_empty() {
                String::new()
            } else {
                format!(": {}", clearly_above.join(", "))
            }
        ));
        line(
            "  For each: how XLA's optimized programs differ in kernels (tpuc's count minus \
              torchax's, by kind), `-O0`'s ratio, and torchax's program timed against a second \
              executable of itself in the same rounds (the column `torchax / itself`: how far \
              apart two identical programs measured). Where XLA runs the same kernels for both \
              and `-O0` (no tpuc optimization) is above 1.0× by as much, the difference is in \
              this run's timing of like programs, not in what tpuc emits; where the kernels \
              differ, those are the lead.",
        );
    }
    line(&format!(
        "- Target, `-O2` has fewer ops than `-O0` on every transformer: **{}**{}",
        if more_ops.is_empty() { "met" } else { "missed" },
        if more_ops.is_empty() {
            String::new()
        } else {
            format!(": {}", more_ops.join(", "))
        }
    ));
    let s = if speedups.is_empty() {
        f64::NAN
    } else {
        geomean(&speedups)
    };
    line(&format!(
        "- Target, tpuc compile ≥ 50× faster than torchax export (geometric mean): **{}** ({s:.0}×).",
        if s >= 50.0 { "met" } else { "missed" }
    ));
    line("");
    let list = |title: &str, v: &[String]| {
        if v.is_empty() {
            format!("- {title}: none.")
        } else {
            format!("- {title} ({}): {}.", v.len(), v.join("; "))
        }
    };
    line(&list(
        "tpuc programs that failed or did not match PyTorch",
        &tpuc_failed,
    ));
    line(&list(
        "Models torchax cannot export (no ratio)",
        &peer_failed,
    ));
    line(&list(
        "Models where torchax's program does not match PyTorch even with its weights bound in input_specs order (no ratio)",
        &peer_wrong,
    ));
    line(&list(
        "Models where torchax 0.0.13 as shipped binds weights in a different order than its program takes them (parameters, buffers, constants instead of input_specs order): computed wrongly unless rebound as here",
        &order_differs,
    ));
    line("");

    line("## Compile scaling");
    line("");
    line(&format!("The release `tpuc compile -O2 --timing` on synthetic graphs (`bench/synthetic_models.py`): \
          wall time of the whole process (the median of {} runs after one untimed run, each \
          writing over the last one's artifact; the weights runs and their plain-copy floor each start after \
          `sync`, so that the last run's gigabyte is not still being written back), that run's three slowest \
          stages, and its peak resident memory (`VmHWM`).", opts.compile_runs));
    line("");
    line("| graph | nodes | wall time | slowest stages | peak memory | weights | weight rate |");
    line("|---|---:|---:|---|---:|---:|---:|");
    for r in scaling {
        let mut st = r.stages.clone();
        st.sort_by(|a, b| b.1.total_cmp(&a.1));
        let slow: Vec<String> = st
            .iter()
            .take(3)
            .map(|(n, ms)| format!("{n} {ms:.0} ms"))
            .collect();
        let (weights, rate) = match r.weight_bytes {
            Some(b) => (
                format!("{:.0} MiB", b as f64 / 1048576.0),
                format!("{:.2} GB/s", b as f64 / r.wall_s / 1e9),
            ),
            None => (String::new(), String::new()),
        };
        line(&format!(
            "| {} | {} | {:.3} s | {} | {} | {} | {} |",
            r.what,
            r.nodes,
            r.wall_s,
            slow.join(", "),
            r.peak_mib
                .map(|m| format!("{m:.0} MiB"))
                .unwrap_or_default(),
            weights,
            rate
        ));
    }
    if let Some(r) = scaling
        .iter()
        .find(|r| r.nodes == 100_000 && r.weight_bytes.is_none())
    {
        line("");
        line(&format!(
            "- Target, a 100,000-node graph in under 2 s: **{}** ({:.2} s{}).",
            if r.wall_s < 2.0 { "met" } else { "missed" },
            r.wall_s,
            if r.wall_s >= 2.0 {
                format!(", {:.0}% over", (r.wall_s / 2.0 - 1.0) * 100.0)
            } else {
                String::new()
            }
        ));
        if r.wall_s >= 2.0 {
            let smaller = scaling
                .iter()
                .filter(|s| s.weight_bytes.is_none() && s.nodes < r.nodes && s.nodes > 0)
                .max_by_key(|s| s.nodes);
            let total: f64 = r.stages.iter().map(|(_, ms)| ms).sum();
            let mut st = r.stages.clone();
            st.sort_by(|a, b| b.1.total_cmp(&a.1));
            let top: f64 = st.iter().take(3).map(|(_, ms)| ms).sum();
            line(&format!(
                "  Why: the time is per-node work, spread over the stages (the three slowest hold {:.0}% of it){}; no single stage or pass dominates.",
                100.0 * top / total.max(1e-9),
                smaller
                    .map(|s| format!(
                        "; {:.0}× the nodes of the {}-node row took {:.1}× its time",
                        r.nodes as f64 / s.nodes as f64,
                        s.nodes,
                        r.wall_s / s.wall_s
                    ))
                    .unwrap_or_default()
            ));
        }
    }
    if let Some(r) = scaling.iter().find(|r| r.weight_bytes.is_some()) {
        let b = r.weight_bytes.unwrap_or(0) as f64;
        line(&format!(
            "- Target, weights stream at ≥ 1 GB/s (whole compile, weight bytes / wall time): **{}** ({:.2} GB/s); peak memory {} for {:.0} MiB of weights.",
            if b / r.wall_s >= 1e9 { "met" } else { "missed" },
            b / r.wall_s / 1e9,
            r.peak_mib.map(|m| format!("{m:.0} MiB")).unwrap_or_else(|| "?".into()),
            b / 1048576.0
        ));
        if let Some(c) = r.copy_s {
            line(&format!(
                "  A plain kernel copy of the same `.pt2` (`std::fs::copy`) takes {:.3} s in this run ({:.2} GB/s): tpuc's whole compile takes {:.2}× as long. tpuc has the kernel copy the weights too (`copy_file_range`); the rest is two BLAKE3 passes over the bytes (the source's, recorded for provenance, and the weights file's, checked by the runtime at load) and the CRC-32 check of each entry, run on two threads.",
                c,
                b / c / 1e9,
                r.wall_s / c
            ));
        }
    }
    line("");
    md
}
