//! `make bench`'s decode rows: per-token latency of a static-KV-cache decode step
//! (testdata/decode, Core ATen form) run by tpuc's runtime against the same exported
//! program run eagerly by PyTorch (`decode_eager.py`) on this CPU, fed the same tokens.
//! tpuc's side is `Session::run` as `tpuc generate` calls it: token id and position
//! uploaded, logits downloaded, the cache kept on the device (its bytes per step are
//! reported from `Session::transfer_stats`). The JAX peer is torchax's lowering of the
//! same step run by jaxlib's CPU client (`decode_torchax.py`): torchax 0.0.13 drops
//! buffer mutations, so that script carries the cache itself; a model it cannot run is
//! reported with its error.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use tpuc_runtime::{Client, DType, HostTensor, Session};

use crate::{peer_cells, BoxError, Stats};

struct Row {
    model: String,
    tpuc: Stats,
    eager: Stats,
    /// torchax's step, or why it did not run.
    torchax: Result<Stats, String>,
    bytes_per_step: f64,
}

fn ids(v: i64, shape: &[i64]) -> HostTensor {
    HostTensor {
        dtype: DType::I64,
        shape: shape.to_vec(),
        data: v.to_le_bytes().to_vec(),
    }
}

fn argmax_last(t: &HostTensor) -> i64 {
    let v = t.to_f64_vec();
    let mut best = 0;
    for (i, x) in v.iter().enumerate() {
        if *x > v[best] {
            best = i;
        }
    }
    best as i64
}

fn read_ids(path: &Path) -> Result<Vec<i64>, BoxError> {
    let t = tpuc_runtime::npy::read_npy(path)?;
    Ok(t.to_f64_vec().into_iter().map(|v| v as i64).collect())
}

/// One greedy decode (prompt, then new tokens) on `session` from its initial state;
/// pushes each decode step's latency (ns) into `timings` and returns the new tokens.
fn decode(
    session: &Session,
    prompt: &[i64],
    new_tokens: usize,
    timings: Option<&mut Vec<u64>>,
) -> Result<Vec<i64>, BoxError> {
    session.reset_state()?;
    let mut samples = Vec::new();
    let mut feed = prompt.to_vec();
    let mut tokens = Vec::new();
    let mut logits = None;
    for pos in 0..prompt.len() + new_tokens - 1 {
        if pos >= prompt.len() {
            let t = argmax_last(logits.as_ref().ok_or("no logits")?);
            tokens.push(t);
            feed.push(t);
        }
        let start = Instant::now();
        let out = session.run(&[ids(feed[pos], &[1, 1]), ids(pos as i64, &[1])])?;
        if pos >= prompt.len() {
            samples.push(start.elapsed().as_nanos() as u64);
        }
        logits = out.into_iter().next();
    }
    tokens.push(argmax_last(logits.as_ref().ok_or("no logits")?));
    if let Some(t) = timings {
        t.extend(samples);
    }
    Ok(tokens)
}

/// Runs one of the Python peers (`bench/<script>`) on the models; its JSON output.
fn peer(
    python: &Path,
    script: &str,
    rounds: usize,
    dirs: &[String],
) -> Result<serde_json::Value, BoxError> {
    let out = Command::new(python)
        .arg(format!("bench/{script}"))
        .arg(rounds.to_string())
        .args(dirs)
        .output()?;
    if !out.status.success() {
        return Err(format!(
            "bench/{script} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )
        .into());
    }
    Ok(serde_json::from_slice(&out.stdout)?)
}

/// A peer's timings for `name`, after checking it decoded `expected`.
fn peer_timings(
    peer: &serde_json::Value,
    who: &str,
    name: &str,
    expected: &[i64],
) -> Result<Vec<u64>, String> {
    let theirs = &peer[name];
    if let Some(e) = theirs["error"].as_str() {
        return Err(e.to_string());
    }
    let tokens: Vec<i64> =
        serde_json::from_value(theirs["tokens"].clone()).map_err(|e| e.to_string())?;
    if tokens != expected {
        return Err(format!("{who} decoded {tokens:?}, generate {expected:?}"));
    }
    serde_json::from_value(theirs["step_ns"].clone()).map_err(|e| e.to_string())
}

/// Measures every model of `testdata/decode`; the Markdown section.
pub fn run(
    tpuc: &Path,
    python: &Path,
    client: &Client,
    work_dir: &Path,
    rounds: usize,
) -> Result<String, BoxError> {
    let root = Path::new("testdata/decode");
    let index: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("index.json"))?)?;
    let names: Vec<String> = index["models"]
        .as_array()
        .ok_or("testdata/decode/index.json has no models")?
        .iter()
        .filter_map(|m| m.as_str().map(String::from))
        .collect();
    let dirs: Vec<String> = names
        .iter()
        .map(|n| root.join(n).to_string_lossy().into_owned())
        .collect();
    eprintln!(
        "tpuc-bench: decode: PyTorch eager on {} models",
        names.len()
    );
    let eager = peer(python, "decode_eager.py", rounds, &dirs)?;
    eprintln!("tpuc-bench: decode: torchax on {} models", names.len());
    let torchax = peer(python, "decode_torchax.py", rounds, &dirs)?;
    let mut rows = Vec::new();
    for name in &names {
        let dir = root.join(name);
        let prompt = read_ids(&dir.join("prompt.npy"))?;
        let expected = read_ids(&dir.join("expected_tokens.npy"))?;
        let art = work_dir.join(format!("decode-{name}.tpuc"));
        if art.exists() {
            std::fs::remove_dir_all(&art)?;
        }
        let status = Command::new(tpuc)
            .arg("compile")
            .arg(dir.join("core.pt2"))
            .arg("-o")
            .arg(&art)
            .output()?;
        if !status.status.success() {
            return Err(format!(
                "tpuc compile {name}: {}",
                String::from_utf8_lossy(&status.stderr).trim()
            )
            .into());
        }
        let session = Session::load(&art, client)?;
        let mut timings = Vec::new();
        let before = session.transfer_stats();
        for r in 0..=rounds {
            let tokens = decode(
                &session,
                &prompt,
                expected.len(),
                (r > 0).then_some(&mut timings),
            )?;
            if tokens != expected {
                return Err(format!(
                    "{name}: tpuc decoded {tokens:?}, PyTorch's generate {expected:?}"
                )
                .into());
            }
        }
        let after = session.transfer_stats();
        let steps = (after.executions - before.executions) as f64;
        let bytes = (after.host_to_device_bytes + after.device_to_host_bytes
            - before.host_to_device_bytes
            - before.device_to_host_bytes) as f64;
        // PyTorch eager is the reference: a wrong decode there is an error of the bench.
        let eager_ns = peer_timings(&eager, "PyTorch eager", name, &expected)
            .map_err(|e| format!("{name}: {e}"))?;
        rows.push(Row {
            model: name.clone(),
            tpuc: Stats::of(&timings),
            eager: Stats::of(&eager_ns),
            torchax: peer_timings(&torchax, "torchax", name, &expected).map(|t| Stats::of(&t)),
            bytes_per_step: bytes / steps.max(1.0),
        });
    }
    let mut md = String::new();
    md.push_str("## Decode step (static KV cache)\n\n");
    md.push_str(&format!(
        "Per-token latency of one greedy decode step of each `testdata/decode` model (Core ATen form, {rounds} decodes of its prompt and new tokens, every decode step timed): tpuc's `Session::run` on the CPU plugin (token id and position in, logits out, the cache kept on the device) against the same exported program run eagerly by PyTorch (`torch.export.load(...).module()`, one thread) on this CPU, and against torchax {} (jax {}): its lowering of the same program, jitted with the state donated and run by jaxlib's CPU client, which is the same XLA as tpuc's plugin. torchax as shipped (`exported_program_to_jax`) returns only the user outputs and drops the cache update, so a decode step cannot carry its cache there; `bench/decode_torchax.py` keeps torchax's decompositions and interpreter and carries the mutated buffers itself. Every side decodes the tokens `model.generate(do_sample=False)` gives (checked).\n\n",
        torchax["torchax_version"].as_str().unwrap_or("?"),
        torchax["jax_version"].as_str().unwrap_or("?"),
    ));
    md.push_str("| model | tpuc median µs/token | PyTorch eager median µs/token | eager / tpuc | torchax median µs/token | **torchax / tpuc** | bytes moved per tpuc step |\n|---|---:|---:|---:|---:|---:|---:|\n");
    for r in &rows {
        let (tx, tx_ratio) = peer_cells(&r.torchax, &r.tpuc);
        md.push_str(&format!(
            "| {} | {} | {} | {:.2}× | {tx} | {tx_ratio} | {:.0} |\n",
            r.model,
            r.tpuc.spread_us(),
            r.eager.spread_us(),
            r.eager.median / r.tpuc.median,
            r.bytes_per_step
        ));
    }
    md.push('\n');
    Ok(md)
}
