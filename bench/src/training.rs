//! `make bench`'s training rows: the step time of each testdata/training model's
//! training step (AdamW, gradient clipping, warmup-cosine schedule: the `adamw`
//! reference configuration) compiled by tpuc (`tpuc compile --train`) and run by
//! `training::Trainer` on the CPU plugin, against PyTorch's eager loop on this CPU
//! (`train_eager.py`) and against the same step in JAX on the same XLA (`train_jax.py`:
//! torchax's lowering of the forward under `jax.value_and_grad`, optax's AdamW). Every
//! side trains over the same 30 batches from the same initial parameters, and its losses
//! are checked against PyTorch's reference loop before its times count.

use std::path::Path;
use std::process::Command;

use tpuc_runtime::training::Trainer;
use tpuc_runtime::{Client, HostTensor, Session};

use crate::{peer_cells, BoxError, Stats};

const MODELS: [&str; 3] = ["mlp", "cnn", "decoder_lm"];

/// The reference losses and `tpuc compile` flags of `model`'s adamw configuration.
fn reference(model: &str) -> Result<(Vec<f64>, Vec<String>), BoxError> {
    let path = Path::new("testdata/training")
        .join(model)
        .join("reference/adamw.json");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path)?)?;
    let losses = v["losses"]
        .as_array()
        .ok_or("no losses")?
        .iter()
        .filter_map(|x| x.as_f64())
        .collect();
    let flags = v["tpuc"]
        .as_array()
        .ok_or("no flags")?
        .iter()
        .filter_map(|x| x.as_str().map(String::from))
        .collect();
    Ok((losses, flags))
}

/// Where `losses` first leave the reference by more than rtol 1e-3, if anywhere.
fn check(who: &str, model: &str, losses: &[f64], want: &[f64]) -> Result<(), String> {
    if losses.len() != want.len() {
        return Err(format!(
            "{who} {model}: {} losses, the reference has {}",
            losses.len(),
            want.len()
        ));
    }
    match (0..want.len()).find(|&k| (losses[k] - want[k]).abs() > 1e-3 * want[k].abs()) {
        Some(k) => Err(format!(
            "{who} {model}: step {} loss {} vs PyTorch's reference {}",
            k + 1,
            losses[k],
            want[k]
        )),
        None => Ok(()),
    }
}

/// Each input's 30 batches, in the step's input order.
fn batches(session: &Session, model: &str) -> Result<Vec<Vec<HostTensor>>, BoxError> {
    let dir = Path::new("testdata/training").join(model).join("data");
    let mut per_input = Vec::new();
    for input in session.inputs() {
        let t = tpuc_runtime::npy::read_npy(dir.join(format!("{}.npy", input.name)))?;
        let n = t.shape[0] as usize;
        let per = t.data.len() / n;
        per_input.push(
            (0..n)
                .map(|k| HostTensor {
                    dtype: t.dtype,
                    shape: t.shape[1..].to_vec(),
                    data: t.data[k * per..(k + 1) * per].to_vec(),
                })
                .collect::<Vec<_>>(),
        );
    }
    let steps = per_input.first().map_or(0, Vec::len);
    Ok((0..steps)
        .map(|k| per_input.iter().map(|b| b[k].clone()).collect())
        .collect())
}

fn peer(python: &Path, script: &str, rounds: usize) -> Result<serde_json::Value, BoxError> {
    let out = Command::new(python)
        .arg(format!("bench/{script}"))
        .arg(rounds.to_string())
        .args(MODELS)
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

/// A peer's step times for `model`, once its losses match the reference.
fn peer_steps(
    v: &serde_json::Value,
    who: &str,
    model: &str,
    want: &[f64],
) -> Result<Vec<u64>, String> {
    let theirs = &v[model];
    if let Some(e) = theirs["error"].as_str() {
        return Err(e.to_string());
    }
    let losses: Vec<f64> =
        serde_json::from_value(theirs["losses"].clone()).map_err(|e| e.to_string())?;
    check(who, model, &losses, want)?;
    serde_json::from_value(theirs["step_ns"].clone()).map_err(|e| e.to_string())
}

struct Row {
    model: String,
    tpuc: Stats,
    eager: Stats,
    jax: Result<Stats, String>,
    bytes_per_step: f64,
}

/// Measures every model; the Markdown section.
pub fn run(
    tpuc: &Path,
    python: &Path,
    client: &Client,
    work_dir: &Path,
    rounds: usize,
) -> Result<String, BoxError> {
    eprintln!("tpuc-bench: training: PyTorch eager");
    let eager = peer(python, "train_eager.py", rounds)?;
    eprintln!("tpuc-bench: training: JAX (torchax + optax)");
    let jax = peer(python, "train_jax.py", rounds)?;
    let mut rows = Vec::new();
    for model in MODELS {
        let (want, flags) = reference(model)?;
        let art = work_dir.join(format!("train-{model}.tpuc"));
        if art.exists() {
            std::fs::remove_dir_all(&art)?;
        }
        let out = Command::new(tpuc)
            .arg("compile")
            .arg(Path::new("testdata/training").join(model).join("joint.pt2"))
            .arg("-o")
            .arg(&art)
            .arg("--train")
            .args(&flags)
            .output()?;
        if !out.status.success() {
            return Err(format!(
                "tpuc compile --train {model}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )
            .into());
        }
        let data = batches(&Session::load(&art, client)?, model)?;
        let mut timings = Vec::new();
        let (mut steps, mut bytes) = (0u64, 0u64);
        for r in 0..=rounds {
            // A fresh trainer per round: it holds the training state once (no initial
            // copy to reset to).
            let mut trainer = Trainer::new(Session::load(&art, client)?)?;
            let before = trainer.session().transfer_stats();
            let mut losses = Vec::new();
            for batch in &data {
                let report = trainer.step(batch)?;
                if r > 0 {
                    timings.push((report.seconds * 1e9) as u64);
                }
                losses.push(report.loss as f64);
            }
            check("tpuc", model, &losses, &want)?;
            let after = trainer.session().transfer_stats();
            steps += after.executions - before.executions;
            bytes += after.host_to_device_bytes + after.device_to_host_bytes
                - before.host_to_device_bytes
                - before.device_to_host_bytes;
        }
        rows.push(Row {
            model: model.to_string(),
            tpuc: Stats::of(&timings),
            eager: Stats::of(
                &peer_steps(&eager, "PyTorch eager", model, &want)
                    .map_err(|e| format!("{model}: {e}"))?,
            ),
            jax: peer_steps(&jax, "JAX", model, &want).map(|t| Stats::of(&t)),
            bytes_per_step: bytes as f64 / steps.max(1) as f64,
        });
    }
    let mut md = String::new();
    md.push_str("## Training step\n\n");
    md.push_str(&format!(
        "Step time of each `testdata/training` model's training step (forward, backward, `clip_grad_norm_` to 1.0, AdamW with a warmup-cosine schedule: the `adamw` reference configuration), over its 30 batches, {rounds} rounds after one untimed round, every step timed from the batch going in to the loss coming out: tpuc's step (`tpuc compile --train`, run by `training::Trainer` on the CPU plugin; parameters, optimizer state and buffers stay on the device, their update donated) against PyTorch's eager loop (`torch.optim.AdamW`, `LambdaLR`, one thread; `bench/train_eager.py`) on this CPU, and against the same step in JAX on the same XLA (`bench/train_jax.py`: torchax {} lowers the forward, `jax.value_and_grad` differentiates it, optax {} applies `clip_by_global_norm` and `adamw`; one `jax.jit` with parameters, optimizer state and buffers donated, jax {}). Each side's 30 losses are checked against PyTorch's reference loop (rtol 1e-3) before its times count.\n\n",
        jax["torchax_version"].as_str().unwrap_or("?"),
        jax["optax_version"].as_str().unwrap_or("?"),
        jax["jax_version"].as_str().unwrap_or("?"),
    ));
    md.push_str("| model | tpuc median µs/step | PyTorch eager median µs/step | eager / tpuc | JAX median µs/step | **JAX / tpuc** | bytes moved per tpuc step |\n|---|---:|---:|---:|---:|---:|---:|\n");
    for r in &rows {
        let (jx, ratio) = peer_cells(&r.jax, &r.tpuc);
        md.push_str(&format!(
            "| {} | {} | {} | {:.2}× | {jx} | {ratio} | {:.0} |\n",
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
