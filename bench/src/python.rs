//! `make bench`'s Python rows: the per-call cost of the `tpuc` Python package's
//! `program(*tensors)` (bench/python_dispatch.py, torch tensors and numpy arrays) on the
//! artifacts `main.rs` times from Rust, against `Session::run_into` (what the package
//! calls: the caller's arrays read and written in place) on the same client
//! configuration (`asynchronous=false`, what `tpuc.load` creates for the CPU plugin),
//! and against a `jax.jit` function on numpy input (jax_dispatch.py).

use std::path::Path;
use std::process::{Command, Stdio};

use crate::{us, BoxError, JaxReport, Measured, Stats, HOST_INTO};

/// Runs the package's side on `measured` (the `asynchronous=false` client's); the
/// Markdown section.
pub fn run(
    python: &Path,
    work_dir: &Path,
    measured: &[&Measured],
    jax: Option<&JaxReport>,
    iterations: usize,
    rounds: usize,
    warmup: usize,
) -> Result<String, BoxError> {
    let programs: Vec<serde_json::Value> = measured
        .iter()
        .map(|m| {
            serde_json::json!({
                "name": m.name,
                "artifact": m.dir,
                "inputs": m.user_indices.iter().map(|&i| &m.jax_args[i]).collect::<Vec<_>>(),
            })
        })
        .collect();
    let spec_path = work_dir.join("python_spec.json");
    std::fs::write(
        &spec_path,
        serde_json::to_string_pretty(&serde_json::json!({
            "programs": programs,
            "iterations": iterations,
            "rounds": rounds,
            "warmup": warmup,
        }))?,
    )?;
    eprintln!("tpuc-bench: the Python package ({})", python.display());
    let out = Command::new(python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("python_dispatch.py"))
        .arg(&spec_path)
        .stderr(Stdio::inherit())
        .output()?;
    if !out.status.success() {
        return Err(format!("{} bench/python_dispatch.py failed", python.display()).into());
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    let samples = |name: &str, key: &str| -> Option<Stats> {
        let s: Vec<u64> = serde_json::from_value(v[name][key].clone()).ok()?;
        (!s.is_empty()).then(|| Stats::of(&s))
    };
    let mut md = String::new();
    md.push_str("## The Python package: per-call cost\n\n");
    md.push_str(&format!(
        "`program(*tensors)` of the `tpuc` package (`tpuc.load(artifact)`, Python {}, bench/python_dispatch.py; host tensors of the input dtypes and shapes, which the package's native per-call path reads in place, writing the outputs into arrays it allocates) on the artifacts above, every call timed ({rounds} rounds × {iterations} calls after {warmup} warm-up calls), against the same call from Rust, `Session::run_into` on an `asynchronous=false` client (what the package creates for the CPU plugin), and against `jax.jit` on numpy input (JAX's own, above). Medians; the package's overhead is its median less Rust's.\n\n",
        v["python"].as_str().unwrap_or("?")
    ));
    md.push_str("| program | Rust `run_into` | Python, torch in/out | overhead | Python, numpy in/out | overhead | JAX `jit` (numpy in/out) |\n|---|---:|---:|---:|---:|---:|---:|\n");
    for m in measured {
        let Some(rust) = m.samples.get(HOST_INTO).map(|s| Stats::of(s)) else {
            continue;
        };
        let (Some(t), Some(n)) = (samples(&m.name, "torch_ns"), samples(&m.name, "numpy_ns"))
        else {
            continue;
        };
        let jit = jax
            .and_then(|j| j.programs.get(&m.name))
            .and_then(|p| p.samples.get("jax_jit_host"))
            .filter(|s| !s.is_empty())
            .map(|s| us(Stats::of(s).median))
            .unwrap_or_else(|| "–".into());
        md.push_str(&format!(
            "| {} | {} | {} | {:+.1} µs | {} | {:+.1} µs | {jit} |\n",
            m.name,
            us(rust.median),
            us(t.median),
            (t.median - rust.median) / 1e3,
            us(n.median),
            (n.median - rust.median) / 1e3,
        ));
    }
    md.push('\n');
    Ok(md)
}
