//! Running a training step (`tpuc compile --train`): [`Trainer`] takes one step per
//! batch, keeps parameters, optimizer state, the step counter and buffers on the
//! device (the session's state, donated to each step), and saves and loads
//! checkpoints.
//!
//! ```no_run
//! use tpuc_runtime::{discover, training::Trainer, ClientOptions, HostTensor, Plugin, Session};
//!
//! # fn main() -> tpuc_runtime::Result<()> {
//! let plugin = Plugin::load(discover::find_plugin(None)?)?;
//! let client = plugin.create_client(&ClientOptions::default())?;
//! let mut trainer = Trainer::new(Session::load("step.tpuc", &client)?)?;
//! # let batch: Vec<HostTensor> = Vec::new();
//! let report = trainer.step(&batch)?;
//! println!("step {} loss {}", report.step, report.loss);
//! trainer.save_checkpoint("ckpt/step-000001".as_ref())?;
//! # Ok(())
//! # }
//! ```
//!
//! A checkpoint is a directory: `model.safetensors` (every parameter and buffer under
//! its state-dict name: `model.load_state_dict(safetensors.torch.load_file(...))`
//! loads it), `optimizer.safetensors` (`<name>.exp_avg`, `<name>.exp_avg_sq` or
//! `<name>.momentum_buffer` per trained parameter, and `step`) and `checkpoint.json`
//! (the step count, the program it belongs to, the optimizer). It is written into a
//! temporary sibling and renamed into place, so an interrupted write leaves the
//! previous checkpoint as it was and no partial one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

pub use tpuc_artifact::training::*;

use crate::error::{Result, RuntimeError};
use crate::manifest::ArgumentKind;
use crate::safetensors::SafeTensors;
use crate::{DType, HostTensor, Session};

/// The files of a checkpoint directory.
pub const MODEL_FILE: &str = "model.safetensors";
pub const OPTIMIZER_FILE: &str = "optimizer.safetensors";
pub const CHECKPOINT_FILE: &str = "checkpoint.json";

/// What one step reports (all computed on the device).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepReport {
    /// The step's number, from 1.
    pub step: u64,
    pub loss: f32,
    /// The gradients' total 2-norm, before clipping.
    pub grad_norm: f32,
    /// The learning rate the step used.
    pub lr: f32,
    /// Wall time of the step, inputs to report.
    pub seconds: f64,
}

/// A training step's session and where it stands.
pub struct Trainer {
    session: Session,
    training: Training,
    steps: u64,
}

fn checkpoint_error(dir: &Path, message: impl Into<String>) -> RuntimeError {
    RuntimeError::Checkpoint {
        dir: dir.to_path_buf(),
        message: message.into(),
    }
}

impl Trainer {
    /// A trainer for a session of a training-step artifact, at step 0. The session's
    /// copy of the initial parameters and optimizer state is released
    /// ([`Session::release_initial_state`]): the device holds the training state once.
    pub fn new(mut session: Session) -> Result<Trainer> {
        let training = session.manifest().training.clone().ok_or_else(|| {
            RuntimeError::InvalidArgument(format!(
                "{} is not a training step (compile a joint program with `tpuc compile --train`)",
                session.dir().display()
            ))
        })?;
        session.release_initial_state()?;
        Ok(Trainer {
            session,
            training,
            steps: 0,
        })
    }

    pub fn session(&self) -> &Session {
        &self.session
    }

    pub fn training(&self) -> &Training {
        &self.training
    }

    /// Optimizer steps taken (since step 0, across checkpoints).
    pub fn steps_taken(&self) -> u64 {
        self.steps
    }

    /// One step on `batch` (the user inputs, in the program's order): forward,
    /// backward and update on the device; only the batch goes in and the report comes
    /// out.
    pub fn step(&mut self, batch: &[HostTensor]) -> Result<StepReport> {
        let start = Instant::now();
        let out = self.session.run(batch)?;
        let report = out
            .first()
            .filter(|t| t.dtype == DType::F32 && t.data.len() == 4 * REPORT_FIELDS.len())
            .ok_or_else(|| RuntimeError::OutputMismatch {
                index: 0,
                name: REPORT.into(),
                message: format!("a training step's report is f32[{}]", REPORT_FIELDS.len()),
            })?;
        let value = |i: usize| {
            f32::from_le_bytes([
                report.data[4 * i],
                report.data[4 * i + 1],
                report.data[4 * i + 2],
                report.data[4 * i + 3],
            ])
        };
        let (loss, grad_norm, lr) = (value(0), value(1), value(2));
        self.steps += 1;
        Ok(StepReport {
            step: self.steps,
            loss,
            grad_norm,
            lr,
            seconds: start.elapsed().as_secs_f64(),
        })
    }

    /// Every parameter and buffer of `state_dict()` under its state-dict name, as they
    /// are now (frozen parameters and buffers the step does not update from the
    /// artifact; buffers registered with `persistent=False` left out).
    pub fn parameters(&self) -> Result<Vec<(String, HostTensor)>> {
        let manifest = self.session.manifest();
        let state: Vec<&str> = self.session.state_names();
        let mut stored: Option<SafeTensors> = None;
        let mut out = Vec::new();
        for a in &manifest.arguments {
            if !matches!(a.kind, ArgumentKind::Parameter | ArgumentKind::Buffer) {
                continue;
            }
            let key = a.weight.clone().unwrap_or_else(|| a.name.clone());
            if self.training.non_persistent.contains(&key)
                || out.iter().any(|(k, _): &(String, HostTensor)| *k == key)
            {
                continue;
            }
            let value = if state.contains(&a.name.as_str()) {
                self.session.read_state(&a.name)?
            } else {
                if stored.is_none() {
                    let path = self.session.dir().join(&manifest.weights.file);
                    stored = Some(SafeTensors::open(path)?);
                }
                let weights = stored.as_ref().expect("opened above");
                weights.tensor(a.weight.as_deref().unwrap_or(&a.name))?
            };
            out.push((key, value));
        }
        Ok(out)
    }

    /// The optimizer state under `<name>.<slot>` and the step counter as `step`.
    pub fn optimizer_state(&self) -> Result<Vec<(String, HostTensor)>> {
        let mut out = Vec::new();
        for p in &self.training.parameters {
            for (slot, arg) in &p.state {
                out.push((format!("{}.{slot}", p.key), self.session.read_state(arg)?));
            }
        }
        out.push(("step".into(), self.session.read_state(&self.training.step)?));
        Ok(out)
    }

    fn info(&self) -> CheckpointInfo {
        CheckpointInfo {
            format: 1,
            step: self.steps,
            program: self.session.manifest().program.checksum.hex().to_string(),
            hyperparameters: self.training.hyperparameters.clone(),
        }
    }

    /// Writes a checkpoint to `dir` (a new directory, or a previous checkpoint it
    /// replaces) atomically: into a temporary sibling first, each file synced, then
    /// renamed into place.
    pub fn save_checkpoint(&self, dir: &Path) -> Result<()> {
        if dir.exists() && !dir.join(CHECKPOINT_FILE).is_file() {
            let empty = std::fs::read_dir(dir)
                .map(|mut d| d.next().is_none())
                .unwrap_or(false);
            if !empty {
                return Err(checkpoint_error(
                    dir,
                    "it exists and is not a checkpoint (no checkpoint.json); refusing to replace it",
                ));
            }
        }
        let model = self.parameters()?;
        let optimizer = self.optimizer_state()?;
        let info = serde_json::to_string_pretty(&self.info())
            .map_err(|e| checkpoint_error(dir, e.to_string()))?
            + "\n";
        let metadata = BTreeMap::from([("format".to_string(), "pt".to_string())]);
        let files: [(&str, Vec<u8>); 3] = [
            (MODEL_FILE, crate::safetensors::encode(&model, &metadata)),
            (
                OPTIMIZER_FILE,
                crate::safetensors::encode(&optimizer, &metadata),
            ),
            (CHECKPOINT_FILE, info.into_bytes()),
        ];
        write_dir_atomically(dir, &files)
    }

    /// Loads a checkpoint [`Trainer::save_checkpoint`] wrote for this program: every
    /// trained parameter, buffer and optimizer state checked by name, dtype and shape
    /// against the program, then written to the device; the step count continues from
    /// the checkpoint's.
    pub fn load_checkpoint(&mut self, dir: &Path) -> Result<()> {
        let text = std::fs::read_to_string(dir.join(CHECKPOINT_FILE))
            .map_err(|e| checkpoint_error(dir, format!("cannot read {CHECKPOINT_FILE}: {e}")))?;
        let info: CheckpointInfo = serde_json::from_str(&text)
            .map_err(|e| checkpoint_error(dir, format!("{CHECKPOINT_FILE}: {e}")))?;
        let model = SafeTensors::open(dir.join(MODEL_FILE))?;
        let optimizer = SafeTensors::open(dir.join(OPTIMIZER_FILE))?;
        let manifest = self.session.manifest();
        // Everything is checked before anything is written.
        let mut writes: Vec<(String, HostTensor)> = Vec::new();
        let mut check = |file: &SafeTensors, fname: &str, key: &str, arg: &str| -> Result<()> {
            let a = manifest
                .arguments
                .iter()
                .find(|a| a.name == arg)
                .ok_or_else(|| RuntimeError::Internal(format!("state `{arg}` is no argument")))?;
            let view = file.get(key).ok_or_else(|| {
                checkpoint_error(
                    dir,
                    format!("{fname} has no `{key}`: the checkpoint is of another program"),
                )
            })?;
            if view.dtype != a.dtype || view.shape != a.shape.as_slice() {
                return Err(checkpoint_error(
                    dir,
                    format!(
                        "`{key}` in {fname} is {:?} {:?}, this program's is {:?} {:?}: the checkpoint is of another program",
                        view.dtype, view.shape, a.dtype, a.shape
                    ),
                ));
            }
            writes.push((arg.to_string(), view.to_host()));
            Ok(())
        };
        let state: Vec<String> = self
            .session
            .state_names()
            .iter()
            .map(|s| s.to_string())
            .collect();
        for a in &manifest.arguments {
            if !state.contains(&a.name) || a.kind == ArgumentKind::OptimizerState {
                continue;
            }
            let key = a.weight.clone().unwrap_or_else(|| a.name.clone());
            check(&model, MODEL_FILE, &key, &a.name)?;
        }
        for p in &self.training.parameters {
            for (slot, arg) in &p.state {
                check(
                    &optimizer,
                    OPTIMIZER_FILE,
                    &format!("{}.{slot}", p.key),
                    arg,
                )?;
            }
        }
        check(&optimizer, OPTIMIZER_FILE, "step", &self.training.step)?;
        // Frozen parameters are the artifact's (read from its weights file, nothing
        // downloaded); a checkpoint that changed them is of another run.
        if !self.training.frozen.is_empty() {
            let stored = SafeTensors::open(self.session.dir().join(&manifest.weights.file))?;
            for key in &self.training.frozen {
                let (Some(mine), Some(theirs)) = (stored.get(key), model.get(key)) else {
                    continue;
                };
                if mine.dtype != theirs.dtype
                    || mine.shape != theirs.shape
                    || mine.data != theirs.data
                {
                    return Err(checkpoint_error(
                        dir,
                        format!("frozen parameter `{key}` differs from this artifact's"),
                    ));
                }
            }
        }
        for (arg, value) in &writes {
            self.session.write_state(arg, value)?;
        }
        self.steps = info.step;
        Ok(())
    }
}

/// Writes `files` into `dir` atomically: a temporary sibling directory, each file
/// synced, then renamed over `dir` (a previous `dir` is moved aside first and removed
/// after). A failure leaves `dir` as it was and removes the temporary directory.
fn write_dir_atomically(dir: &Path, files: &[(&str, Vec<u8>)]) -> Result<()> {
    use std::io::Write;
    let parent = dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| RuntimeError::io(parent, e))?;
    let base = dir
        .file_name()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_else(|| "checkpoint".into());
    let tmp: PathBuf = parent.join(format!(".{base}.tpuc-partial-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let written = (|| -> Result<()> {
        std::fs::create_dir_all(&tmp).map_err(|e| RuntimeError::io(&tmp, e))?;
        for (name, bytes) in files {
            let path = tmp.join(name);
            let mut f = std::fs::File::create(&path).map_err(|e| RuntimeError::io(&path, e))?;
            f.write_all(bytes).map_err(|e| RuntimeError::io(&path, e))?;
            f.sync_all().map_err(|e| RuntimeError::io(&path, e))?;
        }
        Ok(())
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    let old = parent.join(format!(".{base}.tpuc-old-{}", std::process::id()));
    let had_old = dir.exists();
    if had_old {
        if let Err(e) = std::fs::rename(dir, &old) {
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(RuntimeError::io(dir, e));
        }
    }
    if let Err(e) = std::fs::rename(&tmp, dir) {
        if had_old {
            let _ = std::fs::rename(&old, dir);
        }
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(RuntimeError::io(dir, e));
    }
    if had_old {
        let _ = std::fs::remove_dir_all(&old);
    }
    Ok(())
}

/// Leftovers of checkpoint writes a killed process never finished, in `parent`
/// (`.NAME.tpuc-partial-PID`): removed by the next run that writes there.
pub fn remove_partial_checkpoints(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if name.starts_with('.') && name.contains(".tpuc-partial-") {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// A training step's memory on one device of its mesh, by what it holds, from the
/// manifest's shapes and shardings (logical bytes: a TPU pads small tensors to its
/// tiles, which XLA's argument figure includes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryShares {
    /// Trained and frozen parameters.
    pub parameters: u64,
    /// Optimizer state and the step counter.
    pub optimizer_state: u64,
    pub buffers: u64,
    /// One batch of the user inputs.
    pub batch: u64,
    /// The gradients: as large as the trained parameters, split as they are. They live
    /// in XLA's temporaries, with the activations.
    pub gradients: u64,
}

impl MemoryShares {
    /// As `tpuc report --json` and the Python package write it.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "parameters": self.parameters,
            "optimizer_state": self.optimizer_state,
            "buffers": self.buffers,
            "batch": self.batch,
            "gradients": self.gradients,
        })
    }
}

/// [`MemoryShares`] of a training-step manifest; `None` for other programs.
pub fn memory_per_device(manifest: &crate::Manifest) -> Option<MemoryShares> {
    let training = manifest.training.as_ref()?;
    let mut m = MemoryShares::default();
    for a in &manifest.arguments {
        let elements: i64 = a.shape.iter().product();
        let whole = elements.max(0) as u64 * a.dtype.size_in_bytes() as u64;
        let pieces = match (&manifest.partitioning, &a.sharding) {
            (Some(p), Some(s)) => s.num_pieces(&p.mesh).max(1),
            _ => 1,
        };
        let share = whole.div_ceil(pieces);
        match a.kind {
            ArgumentKind::Parameter => {
                m.parameters += share;
                if training.parameters.iter().any(|p| p.argument == a.name) {
                    m.gradients += share;
                }
            }
            ArgumentKind::OptimizerState => m.optimizer_state += share,
            ArgumentKind::Buffer | ArgumentKind::Constant => m.buffers += share,
            ArgumentKind::UserInput => m.batch += share,
        }
    }
    Some(m)
}
