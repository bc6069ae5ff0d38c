//! `tpuc train`: runs a training-step artifact (`tpuc compile --train`) over batches
//! read from `.npy` files, printing the loss, gradient norm, learning rate and step
//! time, with checkpoints and resumption.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use tpuc_runtime::training::{StepReport, Trainer};
use tpuc_runtime::HostTensor;

#[derive(clap::Args, Debug)]
pub struct TrainArgs {
    /// A training-step artifact (`tpuc compile joint.pt2 --train ...`).
    pub artifact: PathBuf,
    /// A directory with one NAME.npy per user input of the step, named as the input is
    /// in the exported signature (`x.npy`, `labels.npy`); the leading dimension runs
    /// over batches: step k reads index k of each.
    #[arg(long, value_name = "DIR")]
    pub data: PathBuf,
    /// How many steps to take (from step 1, or after the --resume checkpoint's).
    #[arg(long)]
    pub steps: u64,
    /// Print one line every N steps (the first and last always); on a terminal a
    /// progress line is redrawn between them.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub log_every: u64,
    /// Also write each step as one JSON object per line: step, loss, grad_norm, lr,
    /// seconds.
    #[arg(long, value_name = "FILE")]
    pub log_json: Option<PathBuf>,
    /// Write checkpoints under DIR (`DIR/step-000015/`: the parameters and buffers as
    /// model.safetensors under PyTorch's state-dict names, the optimizer state as
    /// optimizer.safetensors, checkpoint.json), each written atomically; DIR/latest
    /// names the newest. Also written after the last step.
    #[arg(long, value_name = "DIR")]
    pub checkpoint: Option<PathBuf>,
    /// Write a checkpoint every K steps (needs --checkpoint).
    #[arg(long, value_name = "K", requires = "checkpoint")]
    pub checkpoint_every: Option<u64>,
    /// Continue from a checkpoint: a checkpoint directory (`ckpt/step-000015`) or a
    /// --checkpoint DIR (its latest). Batches continue at the checkpoint's step.
    #[arg(long, value_name = "DIR")]
    pub resume: Option<PathBuf>,
    #[command(flatten)]
    pub client: crate::load::ClientArgs,
}

/// Each user input's batches: the whole `.npy` and the bytes of one batch.
struct Data {
    name: String,
    tensor: HostTensor,
    batch_bytes: usize,
}

impl Data {
    fn batch(&self, k: u64) -> HostTensor {
        let start = k as usize * self.batch_bytes;
        HostTensor {
            dtype: self.tensor.dtype,
            shape: self.tensor.shape[1..].to_vec(),
            data: self.tensor.data[start..start + self.batch_bytes].to_vec(),
        }
    }
}

/// Reads `dir/NAME.npy` for every input of `trainer`'s step, checked against the
/// input's dtype and shape; returns them and how many batches they hold.
fn read_data(trainer: &Trainer, dir: &Path) -> Result<(Vec<Data>, u64), String> {
    let mut out = Vec::new();
    let mut count: Option<(u64, String)> = None;
    for input in trainer.session().inputs() {
        let path = dir.join(format!("{}.npy", input.name));
        if !path.is_file() {
            let names: Vec<String> = trainer
                .session()
                .inputs()
                .iter()
                .map(|a| format!("{}.npy", a.name))
                .collect();
            return Err(format!(
                "--data {}: no {}.npy (the step's inputs: {})",
                dir.display(),
                input.name,
                names.join(", ")
            ));
        }
        let tensor = tpuc_runtime::npy::read_npy(&path).map_err(|e| e.to_string())?;
        let want = format!("{} [N, {}]", input.dtype, dims(&input.shape));
        if tensor.dtype != input.dtype
            || tensor.shape.len() != input.shape.len() + 1
            || tensor.shape[1..] != input.shape[..]
        {
            return Err(format!(
                "{}: is {} {:?}; input `{}` takes batches of {} {:?}, so the file must be {want}",
                path.display(),
                tensor.dtype,
                tensor.shape,
                input.name,
                input.dtype,
                input.shape
            ));
        }
        let n = tensor.shape[0].max(0) as u64;
        match &count {
            Some((c, other)) if *c != n => {
                return Err(format!(
                    "{}: holds {n} batches, {other} holds {c}; every input needs the same number",
                    path.display()
                ))
            }
            _ => count = Some((n, path.display().to_string())),
        }
        let batch_bytes = tensor.data.len() / (n.max(1) as usize);
        out.push(Data {
            name: input.name.clone(),
            tensor,
            batch_bytes,
        });
    }
    Ok((out, count.map_or(0, |(c, _)| c)))
}

fn dims(shape: &[i64]) -> String {
    shape
        .iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The checkpoint directory `--resume` names: a checkpoint itself, or a `--checkpoint`
/// directory's latest.
fn resume_dir(path: &Path) -> Result<PathBuf, String> {
    if path.join(tpuc_runtime::training::CHECKPOINT_FILE).is_file() {
        return Ok(path.to_path_buf());
    }
    let latest = path.join("latest");
    let name = std::fs::read_to_string(&latest).map_err(|_| {
        format!(
            "--resume {}: neither a checkpoint (no {}) nor a --checkpoint directory (no latest)",
            path.display(),
            tpuc_runtime::training::CHECKPOINT_FILE
        )
    })?;
    Ok(path.join(name.trim()))
}

/// Writes `ckpt/step-NNNNNN` and points `ckpt/latest` at it (written atomically).
fn checkpoint(trainer: &Trainer, dir: &Path) -> Result<PathBuf, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("--checkpoint {}: {e}", dir.display()))?;
    tpuc_runtime::training::remove_partial_checkpoints(dir);
    let name = format!("step-{:06}", trainer.steps_taken());
    let path = dir.join(&name);
    trainer.save_checkpoint(&path).map_err(|e| e.to_string())?;
    let tmp = dir.join(format!(".latest.tpuc-partial-{}", std::process::id()));
    std::fs::write(&tmp, format!("{name}\n"))
        .and_then(|_| std::fs::rename(&tmp, dir.join("latest")))
        .map_err(|e| format!("--checkpoint {}: cannot write latest: {e}", dir.display()))?;
    Ok(path)
}

/// A value with `digits` decimals, or in e-notation when it is very large or small.
fn num(x: f32, digits: usize) -> String {
    if x != 0.0 && x.is_finite() && !(1e-3..1e5).contains(&x.abs()) {
        format!("{x:.3e}")
    } else {
        format!("{x:.digits$}")
    }
}

fn line(r: &StepReport, total: u64) -> String {
    format!(
        "step {:>width$}/{total}  loss {}  grad_norm {}  lr {:.3e}  {:.1} ms",
        r.step,
        num(r.loss, 6),
        num(r.grad_norm, 4),
        r.lr,
        r.seconds * 1e3,
        width = total.to_string().len()
    )
}

pub fn train(args: &TrainArgs) -> Result<ExitCode, String> {
    if args.steps == 0 {
        return Err("--steps must be at least 1".into());
    }
    if args.log_every == 0 || args.checkpoint_every == Some(0) {
        return Err("--log-every and --checkpoint-every count steps: at least 1".into());
    }
    let (client, _) = crate::load::open_client(
        args.client.plugin.as_deref(),
        &args.client.client_options,
        crate::load::artifact_devices(&args.artifact),
    )?;
    let session = crate::load::load_session(&args.artifact, &client, args.client.no_cache)?;
    let mut trainer = Trainer::new(session).map_err(|e| e.to_string())?;
    if let Some(dir) = &args.resume {
        let dir = resume_dir(dir)?;
        trainer.load_checkpoint(&dir).map_err(|e| e.to_string())?;
        errln!(
            "resumed from {} (after step {})",
            dir.display(),
            trainer.steps_taken()
        );
    }
    let (data, batches) = read_data(&trainer, &args.data)?;
    let first = trainer.steps_taken();
    let last = first + args.steps;
    if batches < last {
        return Err(format!(
            "--data {} holds {batches} batches; steps {}..{last} need {last}",
            args.data.display(),
            first + 1
        ));
    }
    let mut log = match &args.log_json {
        Some(p) => Some(std::io::BufWriter::new(
            std::fs::File::create(p).map_err(|e| format!("--log-json {}: {e}", p.display()))?,
        )),
        None => None,
    };
    let terminal = std::io::stderr().is_terminal();
    let mut last_checkpoint: Option<PathBuf> = None;
    for k in first..last {
        let batch: Vec<HostTensor> = data.iter().map(|d| d.batch(k)).collect();
        let report = trainer.step(&batch).map_err(|e| {
            format!(
                "step {}: {e} (inputs {})",
                k + 1,
                data.iter()
                    .map(|d| d.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?;
        if let Some(w) = &mut log {
            let record = serde_json::json!({
                "step": report.step,
                "loss": report.loss,
                "grad_norm": report.grad_norm,
                "lr": report.lr,
                "seconds": report.seconds,
            });
            writeln!(w, "{record}").map_err(|e| format!("--log-json: {e}"))?;
        }
        if !report.loss.is_finite() {
            if let Some(w) = &mut log {
                let _ = w.flush();
            }
            let kept = match &last_checkpoint {
                Some(p) => format!("; the last checkpoint, {}, is intact", p.display()),
                None => String::new(),
            };
            return Err(format!(
                "step {}: the loss is {} (gradient norm {}); stopping{kept}. hint: lower --lr, \
                 add --clip-grad-norm, or check the batch",
                report.step, report.loss, report.grad_norm
            ));
        }
        let shown =
            report.step == first + 1 || report.step == last || report.step % args.log_every == 0;
        if shown {
            if terminal {
                eprint!("\r\x1b[2K");
            }
            outln!("{}", line(&report, last));
        } else if terminal {
            eprint!("\r\x1b[2K{}", line(&report, last));
        }
        let due = args
            .checkpoint_every
            .is_some_and(|every| report.step % every == 0)
            || report.step == last;
        if let (Some(dir), true) = (&args.checkpoint, due) {
            last_checkpoint = Some(checkpoint(&trainer, dir)?);
        }
    }
    if let Some(w) = &mut log {
        w.flush().map_err(|e| format!("--log-json: {e}"))?;
    }
    if let Some(p) = &last_checkpoint {
        errln!("checkpoint: {}", p.display());
    }
    Ok(ExitCode::SUCCESS)
}
