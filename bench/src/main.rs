//! `tpuc-bench` (run by `make bench`). With `--tpuc`, first the corpus: what tpuc emits
//! against what torchax emits for every corpus model, and compile scaling
//! (`corpus.rs`). Then the per-call cost of tpuc's runtime on tiny programs, measured
//! in one run against
//! - raw PJRT: `LoadedExecutable::execute` of the same program, compiled by the same
//!   client, on the same input buffers (no `Session` in between), and
//! - JAX: the same StableHLO text compiled by jaxlib's CPU backend and run with
//!   `LoadedExecutable.execute` on device-resident arrays, plus a `jax.jit` function that
//!   computes the same thing (bench/jax_dispatch.py, run with the Python given by
//!   `--python`).
//!
//! Prints a Markdown report and, with `--out`, writes it (BENCH.md). No assertions: the
//! numbers are reported, with the ratios computed from this run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use clap::Parser;

mod corpus;
mod decode;
mod dynamic;
mod python;
mod training;
use tpuc_runtime::compile_options::CompileOptions;
use tpuc_runtime::manifest::ArgumentKind;
use tpuc_runtime::pjrt::NamedValue;
use tpuc_runtime::safetensors::SafeTensors;
use tpuc_runtime::{
    Buffer, CacheMode, Client, ClientOptions, CompileSource, DType, HostTensor, LoadOptions,
    LoadReport, Plugin, Session,
};

#[derive(Parser)]
#[command(
    name = "tpuc-bench",
    about = "Per-call cost of tpuc's runtime against raw PJRT execute and JAX's dispatch"
)]
struct Args {
    /// An artifact to measure, as NAME=DIR (repeatable). A tiny `add` program
    /// (f32[8] + f32[8]) is always measured first.
    #[arg(long = "artifact", value_parser = parse_named)]
    artifacts: Vec<(String, PathBuf)>,
    /// Python with jax 0.12 installed (`make bench` makes .deps/bench-venv); without it
    /// the JAX columns are left out.
    #[arg(long)]
    python: Option<PathBuf>,
    /// Timed calls per round and variant.
    #[arg(long, default_value_t = 5000)]
    iterations: usize,
    /// Rounds; the variants take turns round by round so that drift hits all alike.
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Untimed calls before each round of each variant.
    #[arg(long, default_value_t = 500)]
    warmup: usize,
    /// Where to write the report (BENCH.md); it is always printed.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Scratch directory (the add artifact, the arrays handed to JAX).
    #[arg(long, default_value = "target/bench")]
    work_dir: PathBuf,
    /// PJRT plugin (.so); default: $TPUC_PJRT_PLUGIN, then the project's .deps.
    #[arg(long)]
    plugin: Option<PathBuf>,
    /// How the run was started, for the report (e.g. "make bench").
    #[arg(long)]
    command: Option<String>,
    /// The release `tpuc` (full build): measure the corpus against torchax and the
    /// compile scaling with it (needs --python with torch and torchax).
    #[arg(long)]
    tpuc: Option<PathBuf>,
    /// Interleaved rounds per corpus model (short turns, many rounds: on a shared
    /// machine bursts of noise then hit every program alike).
    #[arg(long, default_value_t = 400)]
    corpus_rounds: usize,
    /// `tpuc compile -O2` runs per corpus model and per compile-scaling row (the median
    /// is reported; five, because on a shared machine a burst of noise can take a run
    /// or two: the 100k-node read stage alone measured 318-822 ms between runs).
    #[arg(long, default_value_t = 5)]
    compile_runs: usize,
    /// Node counts of the synthetic Linear+GELU chains for compile scaling.
    #[arg(long, value_delimiter = ',', default_values_t = [1000, 10000, 100000])]
    chain_nodes: Vec<usize>,
    /// MiB of weights in the synthetic model for the weight-streaming rate (0: skip).
    #[arg(long, default_value_t = 1024.0)]
    weights_mib: f64,
    /// Only these corpus models (comma-separated; default all).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Only the TPU compile table of the corpus's transformers (needs --tpuc and libtpu;
    /// no peer, no runtime rows): printed as Markdown.
    #[arg(long)]
    tpu_only: bool,
    /// Decodes per testdata/decode model for the decode-step rows (needs --tpuc and
    /// --python).
    #[arg(long, default_value_t = 20)]
    decode_rounds: usize,
    /// Only the decode-step rows (printed as Markdown).
    #[arg(long)]
    decode_only: bool,
    /// Alternating rounds of the dynamic-shapes rows (specialized against static
    /// export; needs --tpuc).
    #[arg(long, default_value_t = 5)]
    dynamic_rounds: usize,
    /// Only the dynamic-shapes rows (printed as Markdown).
    #[arg(long)]
    dynamic_only: bool,
    /// Rounds of 30 steps per testdata/training model for the training-step rows
    /// (needs --tpuc and --python).
    #[arg(long, default_value_t = 10)]
    training_rounds: usize,
    /// Only the training-step rows (printed as Markdown).
    #[arg(long)]
    training_only: bool,
    /// Python with the `tpuc` package installed (`make python`'s .deps/python-venv):
    /// the package's per-call rows.
    #[arg(long)]
    python_package: Option<PathBuf>,
}

fn parse_named(s: &str) -> Result<(String, PathBuf), String> {
    let (name, dir) = s
        .split_once('=')
        .ok_or_else(|| format!("expected NAME=DIR, got `{s}`"))?;
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!("`{name}`: names are letters, digits and _"));
    }
    Ok((name.to_string(), PathBuf::from(dir)))
}

type BoxError = Box<dyn std::error::Error>;

fn main() {
    let args = Args::parse();
    tpuc_runtime::plugin_logging::configure(false);
    if let Err(e) = run(&args) {
        eprintln!("tpuc-bench: error: {e}");
        std::process::exit(1);
    }
}

// ----------------------------------------------------------------------------------------
// Statistics
// ----------------------------------------------------------------------------------------

/// Order statistics of per-call times, in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Stats {
    n: usize,
    min: f64,
    p10: f64,
    median: f64,
    p90: f64,
}

impl Stats {
    fn of(samples: &[u64]) -> Stats {
        assert!(!samples.is_empty(), "no samples");
        let mut s = samples.to_vec();
        s.sort_unstable();
        // Nearest rank.
        let at = |p: f64| s[((p * s.len() as f64).ceil() as usize).clamp(1, s.len()) - 1] as f64;
        let median = if s.len() % 2 == 1 {
            s[s.len() / 2] as f64
        } else {
            (s[s.len() / 2 - 1] + s[s.len() / 2]) as f64 / 2.0
        };
        Stats {
            n: s.len(),
            min: s[0] as f64,
            p10: at(0.10),
            median,
            p90: at(0.90),
        }
    }

    /// A table cell of nanosecond samples: `median (p10 .., p90 ..)` in µs.
    fn spread_us(&self) -> String {
        format!(
            "{:.1} (p10 {:.1}, p90 {:.1})",
            self.median / 1e3,
            self.p10 / 1e3,
            self.p90 / 1e3
        )
    }
}

/// A peer's two cells beside tpuc's: its spread and `peer / tpuc` of the medians, or
/// why it has none.
fn peer_cells(peer: &Result<Stats, String>, tpuc: &Stats) -> (String, String) {
    match peer {
        Ok(t) => (t.spread_us(), format!("{:.2}×", t.median / tpuc.median)),
        Err(e) => (
            format!("failed: {}", e.replace('|', "\\|")),
            "–".to_string(),
        ),
    }
}

fn us(ns: f64) -> String {
    format!("{:.2} µs", ns / 1e3)
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

// ----------------------------------------------------------------------------------------
// The programs
// ----------------------------------------------------------------------------------------

/// Writes the tiny `add` artifact (no weights): `@main(a: f32[8], b: f32[8]) -> a + b`, in
/// the generic MLIR form `tpuc compile` emits.
fn write_add_artifact(dir: &Path) -> Result<(), BoxError> {
    let program = r#""builtin.module"() ({
  "func.func"() <{function_type = (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>, sym_name = "main"}> ({
  ^bb0(%arg0: tensor<8xf32>, %arg1: tensor<8xf32>):
    %0 = "stablehlo.add"(%arg0, %arg1) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    "func.return"(%0) : (tensor<8xf32>) -> ()
  }) : () -> ()
}) : () -> ()
"#;
    let sum = tpuc_runtime::manifest::Checksum::of(program.as_bytes());
    let sum = sum.hex();
    let manifest = serde_json::json!({
        "format_version": tpuc_runtime::manifest::FORMAT_VERSION,
        "tpuc_version": env!("CARGO_PKG_VERSION"),
        "target": "tpu",
        "stablehlo_version": "1.0.0",
        "source": { "file": "(written by tpuc-bench)", "blake3": sum },
        "program": { "file": tpuc_runtime::layout::PROGRAM_FILE, "blake3": sum },
        "weights": { "file": "", "blake3": "" },
        "arguments": [
            { "name": "a", "kind": "user_input", "dtype": "f32", "shape": [8] },
            { "name": "b", "kind": "user_input", "dtype": "f32", "shape": [8] }
        ],
        "outputs": [ { "name": "sum", "dtype": "f32", "shape": [8] } ]
    });
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join(tpuc_runtime::layout::PROGRAM_FILE), program)?;
    std::fs::write(
        dir.join(tpuc_runtime::layout::MANIFEST_FILE),
        serde_json::to_string_pretty(&manifest)? + "\n",
    )?;
    Ok(())
}

/// Deterministic f32 inputs (small values, both signs).
fn input_for(dtype: DType, shape: &[i64], seed: usize) -> Result<HostTensor, BoxError> {
    if dtype != DType::F32 || shape.iter().any(|&d| d < 0) {
        return Err(
            format!("tpuc-bench generates static f32 inputs only (got {dtype} {shape:?})").into(),
        );
    }
    let n: i64 = shape.iter().product();
    let values: Vec<f32> = (0..n as usize)
        .map(|i| ((i * 7 + seed * 3) % 17) as f32 * 0.125 - 1.0)
        .collect();
    Ok(HostTensor::from_f32(shape, &values))
}

// ----------------------------------------------------------------------------------------
// Measuring
// ----------------------------------------------------------------------------------------

/// Client configurations measured: `ClientOptions::cpu(1)` with the CPU plugin's own
/// default (asynchronous execution on a worker thread), and with `asynchronous=false`
/// (the program runs on the calling thread), which is what `tpuc run` and `tpuc bench`
/// create for the CPU plugin.
const CLIENTS: [(&str, Option<bool>); 2] = [
    ("plugin default", None),
    ("asynchronous=false", Some(false)),
];

/// Rust-side variants, in report order.
const RESIDENT_TPUC: &str = "tpuc_run_buffers";
const RESIDENT_RAW: &str = "raw_execute";
const HOST_TPUC: &str = "tpuc_run";
/// `Session::run_into` (the caller's arrays read and written in place): what the
/// Python package calls.
const HOST_INTO: &str = "tpuc_run_into";
const HOST_RAW: &str = "raw_upload_execute_download";
const RAW_UPLOAD: &str = "raw_upload";
const RAW_DOWNLOAD: &str = "raw_download";

struct Measured {
    name: String,
    dir: PathBuf,
    /// Client configuration label (see `CLIENTS`).
    client: &'static str,
    /// First and second `Session::load_with` of the artifact (fresh cache directory),
    /// wall time and the session's own report; only for the first configuration.
    loads: Option<[(Duration, LoadReport); 2]>,
    raw_compile: Duration,
    samples: BTreeMap<&'static str, Vec<u64>>,
    /// Every `@main` argument (weights and inputs) and the outputs, for JAX.
    jax_args: Vec<PathBuf>,
    jax_expected: Vec<PathBuf>,
    user_indices: Vec<usize>,
}

fn time_calls(
    warmup: usize,
    iterations: usize,
    samples: &mut Vec<u64>,
    mut call: impl FnMut() -> Result<(), BoxError>,
) -> Result<(), BoxError> {
    for _ in 0..warmup {
        call()?;
    }
    for _ in 0..iterations {
        let t = Instant::now();
        call()?;
        samples.push(t.elapsed().as_nanos() as u64);
    }
    Ok(())
}

fn measure(
    args: &Args,
    client: &Client,
    config: &'static str,
    name: &str,
    dir: &Path,
    measure_loads: bool,
) -> Result<Measured, BoxError> {
    eprintln!(
        "tpuc-bench: {name} (client {config}): loading {}",
        dir.display()
    );
    // The bench's own cache directory, emptied before the first configuration: the first
    // load compiles and stores, the second finds the executable in the cache.
    let options = LoadOptions {
        cache: CacheMode::ReadWrite,
        cache_dir: Some(args.work_dir.join("cache")),
        ..LoadOptions::default()
    };
    let t = Instant::now();
    let session = Session::load_with(dir, client, &options)?;
    let first = (t.elapsed(), session.load_report().clone());
    let loads = if measure_loads {
        let t = Instant::now();
        let again = Session::load_with(dir, client, &options)?;
        Some([first, (t.elapsed(), again.load_report().clone())])
    } else {
        None
    };

    // The raw side: the same program compiled by the same client, its own copy of the
    // weights, and the very same user input buffers as the session.
    let manifest = session.manifest().clone();
    let program = std::fs::read(dir.join(&manifest.program.file))?;
    let t = Instant::now();
    let exe = client.compile(&program, "mlir", &CompileOptions::default())?;
    let raw_compile = t.elapsed();
    let weights = if manifest.weights.file.is_empty() {
        None
    } else {
        Some(SafeTensors::open(dir.join(&manifest.weights.file))?)
    };

    let mut host_inputs = Vec::new();
    let mut all_host = Vec::new(); // every argument, for JAX
    let mut user_indices = Vec::new();
    for (i, arg) in manifest.arguments.iter().enumerate() {
        if arg.kind == ArgumentKind::UserInput {
            let t = input_for(arg.dtype, &arg.shape, host_inputs.len())?;
            user_indices.push(i);
            host_inputs.push(t.clone());
            all_host.push(t);
        } else {
            let key = arg
                .weight
                .as_deref()
                .ok_or("a weight argument without a key")?;
            let st = weights
                .as_ref()
                .ok_or("weights named but no weights file")?;
            all_host.push(st.tensor(key)?);
        }
    }
    let device_args: Vec<Buffer> = all_host
        .iter()
        .map(|t| client.buffer_from_host(t, 0))
        .collect::<Result<_, _>>()?;
    let raw_args: Vec<&Buffer> = device_args.iter().collect();
    let user_buffers: Vec<&Buffer> = user_indices.iter().map(|&i| &device_args[i]).collect();

    // Same results both ways (bit for bit: same program, same plugin, same inputs).
    let from_session = session.run(&host_inputs)?;
    let from_raw: Vec<HostTensor> = exe
        .execute(&raw_args)?
        .iter()
        .map(Buffer::to_host)
        .collect::<Result<_, _>>()?;
    if from_session != from_raw {
        return Err(format!("{name}: the session and raw execute disagree").into());
    }

    let resident_outputs = exe.execute(&raw_args)?;
    let mut samples: BTreeMap<&'static str, Vec<u64>> = BTreeMap::new();
    for v in [
        RESIDENT_TPUC,
        RESIDENT_RAW,
        HOST_TPUC,
        HOST_INTO,
        HOST_RAW,
        RAW_UPLOAD,
        RAW_DOWNLOAD,
    ] {
        samples.insert(v, Vec::with_capacity(args.rounds * args.iterations));
    }
    eprintln!(
        "tpuc-bench: {name} (client {config}): {} rounds x {} calls per variant",
        args.rounds, args.iterations
    );
    for _ in 0..args.rounds {
        time_calls(
            args.warmup,
            args.iterations,
            samples.get_mut(RESIDENT_TPUC).unwrap(),
            || {
                session.run_buffers(&user_buffers)?;
                Ok(())
            },
        )?;
        time_calls(
            args.warmup,
            args.iterations,
            samples.get_mut(RESIDENT_RAW).unwrap(),
            || {
                exe.execute(&raw_args)?;
                Ok(())
            },
        )?;
        time_calls(
            args.warmup,
            args.iterations,
            samples.get_mut(HOST_TPUC).unwrap(),
            || {
                session.run(&host_inputs)?;
                Ok(())
            },
        )?;
        let mut into_outputs: Vec<Vec<u8>> = session
            .outputs()
            .iter()
            .map(|o| vec![0u8; o.shape.iter().product::<i64>() as usize * o.dtype.size_in_bytes()])
            .collect();
        let views: Vec<tpuc_runtime::HostView> = host_inputs
            .iter()
            .map(|t| tpuc_runtime::HostView {
                dtype: t.dtype,
                shape: &t.shape,
                data: &t.data,
            })
            .collect();
        time_calls(
            args.warmup,
            args.iterations,
            samples.get_mut(HOST_INTO).unwrap(),
            || {
                let mut dsts: Vec<&mut [u8]> =
                    into_outputs.iter_mut().map(|v| v.as_mut_slice()).collect();
                session.run_into(&views, &mut dsts)?;
                Ok(())
            },
        )?;
        time_calls(
            args.warmup,
            args.iterations,
            samples.get_mut(HOST_RAW).unwrap(),
            || {
                // The user inputs go up on every call; weights stay resident.
                let fresh: Vec<Buffer> = user_indices
                    .iter()
                    .map(|&i| client.buffer_from_host(&all_host[i], 0))
                    .collect::<Result<_, _>>()?;
                let mut call_args = raw_args.clone();
                for (k, &i) in user_indices.iter().enumerate() {
                    call_args[i] = &fresh[k];
                }
                for out in exe.execute(&call_args)? {
                    out.to_host_through_plugin()?;
                }
                Ok(())
            },
        )?;
        // Where the host path's time goes: the uploads alone, the downloads alone.
        time_calls(
            args.warmup,
            args.iterations,
            samples.get_mut(RAW_UPLOAD).unwrap(),
            || {
                for &i in &user_indices {
                    client.buffer_from_host(&all_host[i], 0)?;
                }
                Ok(())
            },
        )?;
        time_calls(
            args.warmup,
            args.iterations,
            samples.get_mut(RAW_DOWNLOAD).unwrap(),
            || {
                for out in &resident_outputs {
                    out.to_host_through_plugin()?;
                }
                Ok(())
            },
        )?;
    }

    // Arrays for JAX.
    let jax_dir = args.work_dir.join("jax").join(name);
    std::fs::create_dir_all(&jax_dir)?;
    let mut jax_args = Vec::new();
    for (i, t) in all_host.iter().enumerate() {
        let p = jax_dir.join(format!("arg_{i}.npy"));
        tpuc_runtime::npy::write_npy(&p, t)?;
        jax_args.push(p);
    }
    let mut jax_expected = Vec::new();
    for (i, t) in from_session.iter().enumerate() {
        let p = jax_dir.join(format!("expected_{i}.npy"));
        tpuc_runtime::npy::write_npy(&p, t)?;
        jax_expected.push(p);
    }
    Ok(Measured {
        name: name.to_string(),
        dir: dir.to_path_buf(),
        client: config,
        loads,
        raw_compile,
        samples,
        jax_args,
        jax_expected,
        user_indices,
    })
}

/// What bench/jax_dispatch.py reports for one program.
#[derive(serde::Deserialize)]
struct JaxProgram {
    compile_and_load_s: f64,
    #[serde(flatten)]
    samples: BTreeMap<String, Vec<u64>>,
}

#[derive(serde::Deserialize)]
struct JaxReport {
    jax_version: String,
    jaxlib_version: String,
    backend: String,
    python: String,
    programs: BTreeMap<String, JaxProgram>,
}

fn run_jax(args: &Args, python: &Path, measured: &[&Measured]) -> Result<JaxReport, BoxError> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("jax_dispatch.py");
    let programs: Vec<serde_json::Value> = measured
        .iter()
        .map(|m| {
            serde_json::json!({
                "name": m.name,
                "program": m.dir.join(tpuc_runtime::layout::PROGRAM_FILE),
                "args": m.jax_args,
                "expected": m.jax_expected,
                "user_inputs": m.user_indices,
            })
        })
        .collect();
    let spec = serde_json::json!({
        "programs": programs,
        "iterations": args.iterations,
        "rounds": args.rounds,
        "warmup": args.warmup,
    });
    let spec_path = args.work_dir.join("jax").join("spec.json");
    std::fs::write(&spec_path, serde_json::to_string_pretty(&spec)?)?;
    eprintln!("tpuc-bench: running JAX ({})", python.display());
    let out = Command::new(python)
        .arg(&script)
        .arg(&spec_path)
        .env("JAX_PLATFORMS", "cpu")
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
    if !out.status.success() {
        return Err(format!("{} {} failed", python.display(), script.display()).into());
    }
    Ok(serde_json::from_slice(&out.stdout)?)
}

// ----------------------------------------------------------------------------------------
// The report
// ----------------------------------------------------------------------------------------

fn first_line_with(path: &str, key: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_once([':', '=']))
        .map(|(_, v)| v.trim().trim_matches('"').to_string())
}

fn command_output(cmd: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(cmd).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn machine() -> String {
    let cpu = first_line_with("/proc/cpuinfo", "model name").unwrap_or_else(|| "?".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let mem = first_line_with("/proc/meminfo", "MemTotal")
        .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        .map_or("?".into(), |kb| format!("{:.0} GiB", kb / 1024.0 / 1024.0));
    let os = first_line_with("/etc/os-release", "PRETTY_NAME").unwrap_or_else(|| "?".into());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "?".into());
    format!("{cpu}, {cores} cores, {mem} RAM, {os}, Linux {kernel}")
}

/// The programs measured, in order, each once.
fn program_names(measured: &[Measured]) -> Vec<&str> {
    let mut names: Vec<&str> = Vec::new();
    for m in measured {
        if !names.contains(&m.name.as_str()) {
            names.push(&m.name);
        }
    }
    names
}

/// Observations that hold for this run, each checked against its figures.
fn reading_notes(
    measured: &[Measured],
    stats_of: &dyn Fn(&Measured, &str) -> Option<Stats>,
) -> Vec<String> {
    let mut notes = Vec::new();
    let median = |name: &str, client: &str, key: &str| {
        measured
            .iter()
            .find(|m| m.name == name && m.client == client)
            .and_then(|m| stats_of(m, key))
            .map(|s| s.median)
    };
    let (default, sync) = (CLIENTS[0].0, CLIENTS[1].0);
    let names = program_names(measured);
    let slow: Vec<String> = names
        .iter()
        .filter_map(|&n| {
            let (d, s) = (
                median(n, default, RESIDENT_RAW)?,
                median(n, sync, RESIDENT_RAW)?,
            );
            (d > 1.5 * s).then(|| format!("`{n}` ({} vs {})", us(d), us(s)))
        })
        .collect();
    if !slow.is_empty() {
        notes.push(format!(
            "- The gap between the `plugin default` and `asynchronous=false` clients is the CPU plugin's, not the \
             session's: raw PJRT execute shows it too, on {}. In its default asynchronous mode the plugin \
             runs a program that is not trivially cheap on a worker thread, and the caller waits for its \
             completion event; for a program this small the hand-off costs more than the work.",
            slow.join(", ")
        ));
    }
    for &n in &names {
        if let (Some(total), Some(up), Some(down)) = (
            median(n, default, HOST_RAW),
            median(n, default, RAW_UPLOAD),
            median(n, default, RAW_DOWNLOAD),
        ) {
            if down > 0.5 * total {
                notes.push(format!(
                    "- `{n}`: the raw host path (upload + execute + download, {}) is mostly the download: \
                     the plugin's copy alone (`PJRT_Buffer_ToHostBuffer`, which the CPU plugin hands to a \
                     worker thread, and waiting for its completion event) takes {}, the upload alone {}. \
                     tpuc's `Session::run` and `run_into` read a host-resident output on the calling \
                     thread instead.",
                    us(total),
                    us(down),
                    us(up)
                ));
            }
        }
    }
    notes
}

fn latency_row(program: &str, client: &str, what: &str, s: &Stats) -> String {
    format!(
        "| {program} | {client} | {what} | {} | {} | {} | {} |",
        us(s.median),
        us(s.p10),
        us(s.p90),
        us(s.min)
    )
}

fn ratio(a: f64, b: f64) -> String {
    format!("{:.2}×", a / b)
}

struct Row<'a> {
    key: &'a str,
    what: &'a str,
}

/// Rows of the latency table, by group: tpuc and raw rows once per client configuration,
/// then JAX's rows once per program.
const RESIDENT_ROWS: [Row; 2] = [
    Row {
        key: RESIDENT_TPUC,
        what: "tpuc `Session::run_buffers` (inputs resident, outputs stay on device)",
    },
    Row {
        key: RESIDENT_RAW,
        what: "raw PJRT `LoadedExecutable::execute`, same buffers",
    },
];
const JAX_RESIDENT_ROWS: [Row; 3] = [
    Row {
        key: "jax_execute",
        what: "JAX `compile_and_load(text).execute` + `block_until_ready`",
    },
    Row {
        key: "jax_execute_dispatch",
        what: "JAX `execute`, not waiting for the outputs",
    },
    Row {
        key: "jax_jit",
        what: "JAX `jax.jit` equivalent + `block_until_ready`",
    },
];
const HOST_ROWS: [Row; 5] = [
    Row {
        key: HOST_TPUC,
        what: "tpuc `Session::run` (upload inputs, download outputs)",
    },
    Row {
        key: HOST_INTO,
        what: "tpuc `Session::run_into` (the caller's arrays in place: what Python calls)",
    },
    Row {
        key: HOST_RAW,
        what: "raw PJRT upload + `execute` + download (the plugin's `PJRT_Buffer_ToHostBuffer`)",
    },
    Row {
        key: RAW_UPLOAD,
        what: "raw PJRT upload of the inputs alone (`Client::buffer_from_host`)",
    },
    Row {
        key: RAW_DOWNLOAD,
        what: "raw PJRT download of the outputs alone (`Buffer::to_host_through_plugin`)",
    },
];
const JAX_HOST_ROWS: [Row; 1] = [Row {
    key: "jax_jit_host",
    what: "JAX `jax.jit` on numpy input, `np.asarray` of the output",
}];

/// A command line as a shell would take it back.
fn shell_join(args: &[String]) -> String {
    args.iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
            {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[allow(clippy::too_many_arguments)]
fn report(
    args: &Args,
    plugin: &Plugin,
    client: &Client,
    plugin_path: &Path,
    measured: &[Measured],
    jax: Option<&JaxReport>,
    jax_note: &str,
    corpus_md: Option<&str>,
    total: Duration,
) -> String {
    let mut md = String::new();
    let mut line = |s: &str| {
        md.push_str(s);
        md.push('\n');
    };
    line("# Benchmark: tpuc's programs against torchax's, compile scaling, and the runtime's per-call cost");
    line("");
    line("Written by `make bench` (`bench/src/main.rs`, `bench/src/corpus.rs`,");
    line("`bench/side_by_side.py`, `bench/jax_dispatch.py`); regenerate it rather than");
    line("editing it. All figures below come from one run.");
    line("");
    let argv = shell_join(&std::env::args().collect::<Vec<_>>());
    match &args.command {
        Some(c) => line(&format!("- Command: `{c}`, which ran `{argv}`")),
        None => line(&format!("- Command: `{argv}`")),
    }
    if let Some(date) = command_output("date", &["-u", "+%Y-%m-%d %H:%M UTC"]) {
        line(&format!("- Date: {date}"));
    }
    line(&format!("- Machine: {}", machine()));
    line(&format!(
        "- tpuc: release build{}; plugin `{}` (PJRT C API {}, platform {}, StableHLO {}), one CPU device",
        command_output("rustc", &["-V"])
            .map(|v| format!(" ({v})"))
            .unwrap_or_default(),
        plugin_path.display(),
        plugin.api_version(),
        client.platform_name(),
        plugin
            .stablehlo_current_version()
            .unwrap_or_else(|| "?".into()),
    ));
    match jax {
        Some(j) => line(&format!(
            "- JAX: jax {}, jaxlib {}, Python {}; backend {}",
            j.jax_version, j.jaxlib_version, j.python, j.backend
        )),
        None => line(&format!("- JAX: not measured ({jax_note})")),
    }
    line(&format!(
        "- Calls: {} rounds × {} timed calls per variant (after {} warm-up calls each round), every call timed on its own; whole run {:.0} s",
        args.rounds,
        args.iterations,
        args.warmup,
        total.as_secs_f64()
    ));
    line("- Client `plugin default` is `ClientOptions::cpu(1)` with the CPU plugin's default");
    line("  (asynchronous execution); `asynchronous=false` adds that create option and is what");
    line("  `tpuc run` and `tpuc bench` create for the CPU plugin (`cli/src/load.rs`).");
    line("");
    if let Some(c) = corpus_md {
        for l in c.lines() {
            line(l);
        }
    }
    line("## Per-call latency");
    line("");
    line("| program | client | variant | median | p10 | p90 | min |");
    line("|---|---|---|---:|---:|---:|---:|");
    let stats_of = |m: &Measured, key: &str| -> Option<Stats> {
        if let Some(s) = m.samples.get(key) {
            return Some(Stats::of(s));
        }
        let s = jax?.programs.get(&m.name)?.samples.get(key)?;
        (!s.is_empty()).then(|| Stats::of(s))
    };
    let names = program_names(measured);
    for name in &names {
        let of_program: Vec<&Measured> = measured.iter().filter(|m| m.name == *name).collect();
        for (ours, theirs) in [
            (&RESIDENT_ROWS[..], &JAX_RESIDENT_ROWS[..]),
            (&HOST_ROWS[..], &JAX_HOST_ROWS[..]),
        ] {
            for m in &of_program {
                for row in ours {
                    if let Some(s) = stats_of(m, row.key) {
                        line(&latency_row(name, m.client, row.what, &s));
                    }
                }
            }
            // JAX figures belong to the program: shown once, with the first configuration.
            if let Some(m) = of_program.first() {
                for row in theirs {
                    if let Some(s) = stats_of(m, row.key) {
                        line(&latency_row(name, "(JAX's own)", row.what, &s));
                    }
                }
            }
        }
    }
    line("");
    line("## Ratios (medians, same run)");
    line("");
    line("| program | client | tpuc / raw PJRT | tpuc / JAX execute | tpuc / JAX jit | tpuc `run` / raw upload+execute+download | tpuc `run` / JAX jit (numpy in/out) |");
    line("|---|---|---:|---:|---:|---:|---:|");
    let mut verdicts: Vec<(&str, bool, bool)> = Vec::new();
    for m in measured {
        let med = |key: &str| stats_of(m, key).map(|s| s.median);
        let cell = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => ratio(a, b),
            _ => "n/a".into(),
        };
        let (t, r, j) = (med(RESIDENT_TPUC), med(RESIDENT_RAW), med("jax_execute"));
        let within = matches!((t, r), (Some(t), Some(r)) if t <= 1.5 * r);
        let below = matches!((t, j), (Some(t), Some(j)) if t < j);
        match verdicts.iter_mut().find(|v| v.0 == m.client) {
            Some(v) => {
                v.1 &= within;
                v.2 &= below;
            }
            None => verdicts.push((m.client, within, below)),
        }
        line(&format!(
            "| {} | {} | {} | {} | {} | {} | {} |",
            m.name,
            m.client,
            cell(t, r),
            cell(t, j),
            cell(t, med("jax_jit")),
            cell(med(HOST_TPUC), med(HOST_RAW)),
            cell(med(HOST_TPUC), med("jax_jit_host")),
        ));
    }
    line("");
    for (client, within, below) in verdicts {
        line(&format!(
            "- Client `{client}`: tpuc's resident-input median within 1.5× of raw PJRT on every program: **{}**; below JAX's `execute` on every program: **{}**.",
            if within { "yes" } else { "no" },
            if jax.is_none() {
                "not measured"
            } else if below {
                "yes"
            } else {
                "no"
            }
        ));
    }
    let notes = reading_notes(measured, &stats_of);
    if !notes.is_empty() {
        line("");
        line("Reading the numbers:");
        line("");
        for n in notes {
            line(&n);
        }
    }
    line("");
    line("## Load (executable cache)");
    line("");
    line(
        "Two `Session::load_with` calls per artifact on the default client, with the bench's own,",
    );
    line("initially empty cache directory: the first compiles and stores the executable, the");
    line("second finds it in the cache. Weights are uploaded by each load.");
    line("");
    line("| program | load | executable | obtaining the executable | weight upload | whole load | raw `Client::compile` | JAX `compile_and_load` |");
    line("|---|---|---|---:|---:|---:|---:|---:|");
    for m in measured {
        let Some(loads) = &m.loads else { continue };
        let jax_compile = jax
            .and_then(|j| j.programs.get(&m.name))
            .map_or("n/a".into(), |p| {
                ms(Duration::from_secs_f64(p.compile_and_load_s))
            });
        for (i, (wall, r)) in loads.iter().enumerate() {
            line(&format!(
                "| {} | {} | {} | {:.1} ms | {:.2} ms | {} | {} | {} |",
                m.name,
                if i == 0 { "first" } else { "second" },
                match r.compile {
                    CompileSource::Compiled => "compiled",
                    CompileSource::Cache => "from the cache",
                },
                r.compile_ms,
                r.weights_upload_ms,
                ms(*wall),
                if i == 0 {
                    ms(m.raw_compile)
                } else {
                    String::new()
                },
                if i == 0 {
                    jax_compile.clone()
                } else {
                    String::new()
                },
            ));
        }
    }
    line("");
    line("## How it is measured");
    line("");
    line("- Programs: `add` is `@main(a: f32[8], b: f32[8]) -> a + b`, written by the bench as a");
    line("  weightless artifact; `mlp` is the corpus MLP (`testdata/models/mlp`: Linear(16,32),");
    line("  ReLU, Linear(32,32), GELU, Linear(32,8), SiLU; input f32[2,16]) compiled by");
    line("  `tpuc compile`. JAX compiles the artifact's own `program.mlir`, with the weights as");
    line("  device-resident arguments.");
    line("- tpuc and raw PJRT share one client and the same input buffers; the raw executable");
    line("  is compiled from the same text with the same options. Their outputs are checked to be");
    line("  identical, and JAX's to be allclose to them, before timing.");
    line("- Every variant waits for its outputs to be ready (tpuc's and raw `execute` return once");
    line("  the device is done; JAX calls `block_until_ready`). The JAX row without it shows");
    line("  dispatch alone.");
    line("- JAX uses jaxlib's own CPU client (the same XLA CPU backend, in-process C++ rather");
    line("  than the PJRT C API plugin tpuc loads); tpuc uses the CPU plugin from `make setup`.");
    line("- The tpuc and raw variants take turns round by round; JAX runs afterwards in its own");
    line("  process with the same counts. Medians are robust to the scheduler noise of a small");
    line("  shared machine; p90 and min show the spread.");
    md
}

/// A one-device client of the CPU plugin, for the modes that print one section.
fn cpu_client(args: &Args) -> Result<Client, BoxError> {
    let plugin = Plugin::load(&tpuc_runtime::discover::find_plugin(
        args.plugin.as_deref(),
    )?)?;
    Ok(plugin.create_client(&ClientOptions::cpu(1))?)
}

fn run(args: &Args) -> Result<(), BoxError> {
    if args.iterations == 0 || args.rounds == 0 {
        return Err("--iterations and --rounds must be at least 1".into());
    }
    let started = Instant::now();
    std::fs::create_dir_all(&args.work_dir)?;
    if args.tpu_only {
        let tpuc = args.tpuc.as_deref().ok_or("--tpu-only needs --tpuc")?;
        let md = corpus::tpu_section_for_corpus(tpuc, &args.work_dir, &args.only)?;
        println!("{md}");
        return Ok(());
    }
    if args.decode_only {
        let (tpuc, python) = match (&args.tpuc, &args.python) {
            (Some(t), Some(p)) => (t, p),
            _ => return Err("--decode-only needs --tpuc and --python".into()),
        };
        let client = cpu_client(args)?;
        print!(
            "{}",
            decode::run(tpuc, python, &client, &args.work_dir, args.decode_rounds)?
        );
        return Ok(());
    }
    if args.training_only {
        let (tpuc, python) = match (&args.tpuc, &args.python) {
            (Some(t), Some(p)) => (t, p),
            _ => return Err("--training-only needs --tpuc and --python".into()),
        };
        let client = cpu_client(args)?;
        print!(
            "{}",
            training::run(tpuc, python, &client, &args.work_dir, args.training_rounds)?
        );
        return Ok(());
    }
    if args.dynamic_only {
        let tpuc = args.tpuc.as_deref().ok_or("--dynamic-only needs --tpuc")?;
        let client = cpu_client(args)?;
        print!(
            "{}",
            dynamic::run(tpuc, &client, &args.work_dir, args.dynamic_rounds, 200)?
        );
        return Ok(());
    }
    let corpus_md = match (&args.tpuc, &args.python) {
        (Some(tpuc), Some(python)) => Some(corpus::run(&corpus::CorpusOptions {
            tpuc,
            python,
            work_dir: &args.work_dir,
            rounds: args.corpus_rounds,
            compile_runs: args.compile_runs,
            chain_nodes: &args.chain_nodes,
            weights_mib: args.weights_mib,
            only: &args.only,
        })?),
        (Some(_), None) => return Err("--tpuc needs --python (torch, torchax, jax)".into()),
        _ => None,
    };
    let add_dir = args.work_dir.join("add.tpuc");
    write_add_artifact(&add_dir)?;
    let mut programs = vec![("add".to_string(), add_dir)];
    programs.extend(args.artifacts.iter().cloned());

    let plugin_path = tpuc_runtime::discover::find_plugin(args.plugin.as_deref())?;
    let plugin = Plugin::load(&plugin_path)?;
    let cache_dir = args.work_dir.join("cache");
    if cache_dir.exists() {
        std::fs::remove_dir_all(&cache_dir)?;
    }

    let mut measured = Vec::new();
    let mut default_client = None;
    for (c, (config, asynchronous)) in CLIENTS.iter().enumerate() {
        let mut options = ClientOptions::cpu(1);
        if let Some(a) = asynchronous {
            options
                .extra
                .push(("asynchronous".into(), NamedValue::Bool(*a)));
        }
        let client = match plugin.create_client(&options) {
            Ok(client) => client,
            Err(e) if c > 0 => {
                eprintln!("tpuc-bench: skipping client {config}: {e}");
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        for (name, dir) in &programs {
            measured.push(measure(args, &client, config, name, dir, c == 0)?);
        }
        default_client.get_or_insert(client);
    }
    let client = default_client.ok_or("no client")?;

    let (jax, jax_note) = match &args.python {
        Some(python) => {
            let first: Vec<&Measured> = measured.iter().filter(|m| m.loads.is_some()).collect();
            (Some(run_jax(args, python, &first)?), String::new())
        }
        None => (None, "no --python given".to_string()),
    };
    let decode_md = match (&args.tpuc, &args.python) {
        (Some(tpuc), Some(python)) => {
            decode::run(tpuc, python, &client, &args.work_dir, args.decode_rounds)?
        }
        _ => String::new(),
    };
    let mut md = report(
        args,
        &plugin,
        &client,
        &plugin_path,
        &measured,
        jax.as_ref(),
        &jax_note,
        corpus_md.as_deref(),
        started.elapsed(),
    );
    if let Some(py) = &args.python_package {
        let sync: Vec<&Measured> = measured
            .iter()
            .filter(|m| m.client == "asynchronous=false")
            .collect();
        md.push_str(&python::run(
            py,
            &args.work_dir,
            &sync,
            jax.as_ref(),
            args.iterations,
            args.rounds,
            args.warmup,
        )?);
    }
    md.push_str(&decode_md);
    if let (Some(tpuc), Some(python)) = (&args.tpuc, &args.python) {
        md.push_str(&training::run(
            tpuc,
            python,
            &client,
            &args.work_dir,
            args.training_rounds,
        )?);
    }
    if let Some(tpuc) = &args.tpuc {
        md.push_str(&dynamic::run(
            tpuc,
            &client,
            &args.work_dir,
            args.dynamic_rounds,
            200,
        )?);
    }
    print!("{md}");
    if let Some(out) = &args.out {
        std::fs::write(out, &md)?;
        eprintln!("tpuc-bench: wrote {}", out.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_are_order_statistics() {
        let s = Stats::of(&[5, 1, 4, 2, 3]);
        assert_eq!((s.n, s.min, s.median), (5, 1.0, 3.0));
        let s = Stats::of(&(1..=10).collect::<Vec<u64>>());
        assert_eq!((s.median, s.p10, s.p90), (5.5, 1.0, 9.0));
        let us = Stats::of(&[1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 10000]);
        assert_eq!(us.spread_us(), "5.5 (p10 1.0, p90 9.0)");
        assert_eq!(peer_cells(&Ok(us), &us).1, "1.00×");
        assert_eq!(peer_cells(&Err("a|b".into()), &us).0, "failed: a\\|b");
    }

    #[test]
    fn command_lines_quote_what_needs_it() {
        let args = ["a", "--command", "make bench", "it's"].map(String::from);
        assert_eq!(shell_join(&args), r"a --command 'make bench' 'it'\''s'");
    }

    #[test]
    fn named_artifacts_parse() {
        assert_eq!(
            parse_named("mlp=target/x").unwrap(),
            ("mlp".to_string(), PathBuf::from("target/x"))
        );
        assert!(parse_named("nodir").is_err());
        assert!(parse_named("a b=x").is_err());
    }

    #[test]
    fn generated_inputs_are_f32_only() {
        let t = input_for(DType::F32, &[2, 3], 0).unwrap();
        assert_eq!(t.shape, vec![2, 3]);
        assert!(input_for(DType::I32, &[2], 0).is_err());
        assert!(input_for(DType::F32, &[-1], 0).is_err());
    }
}
