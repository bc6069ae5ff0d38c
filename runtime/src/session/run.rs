//! Single-device runs: the caller's inputs checked against the manifest, uploaded (or
//! given as device buffers), executed; and the host/device traffic they cause.

use super::validate::{describe, shape_matches};
use super::{Session, Slot};
use crate::error::{Result, RuntimeError};
use crate::pjrt::Buffer;
use crate::symbolic::Bindings;
use crate::{DType, HostTensor, HostView};
use std::sync::atomic::{AtomicU64, Ordering};

/// Host/device traffic of a session's runs since it was loaded (the weights' upload at
/// load is in [`LoadReport`](super::LoadReport) instead): every tensor, or shard of one, that crossed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TransferStats {
    /// Executions of the program.
    pub executions: u64,
    /// Buffers copied from the host to a device, and their bytes.
    pub host_to_device: u64,
    pub host_to_device_bytes: u64,
    /// Buffers copied from a device to the host, and their bytes.
    pub device_to_host: u64,
    pub device_to_host_bytes: u64,
}

/// [`TransferStats`] counted from several threads.
#[derive(Debug, Default)]
pub(super) struct Transfers {
    executions: AtomicU64,
    host_to_device: AtomicU64,
    host_to_device_bytes: AtomicU64,
    device_to_host: AtomicU64,
    device_to_host_bytes: AtomicU64,
}

impl Transfers {
    pub(super) fn executed(&self) {
        self.executions.fetch_add(1, Ordering::Relaxed);
    }

    pub(super) fn uploaded(&self, t: &HostTensor) {
        self.uploaded_bytes(t.data.len());
    }

    pub(super) fn uploaded_bytes(&self, bytes: usize) {
        self.host_to_device.fetch_add(1, Ordering::Relaxed);
        self.host_to_device_bytes
            .fetch_add(bytes as u64, Ordering::Relaxed);
    }

    pub(super) fn downloaded(&self, t: &HostTensor) {
        self.downloaded_bytes(t.data.len());
    }

    pub(super) fn downloaded_bytes(&self, bytes: usize) {
        self.device_to_host.fetch_add(1, Ordering::Relaxed);
        self.device_to_host_bytes
            .fetch_add(bytes as u64, Ordering::Relaxed);
    }

    pub(super) fn snapshot(&self) -> TransferStats {
        TransferStats {
            executions: self.executions.load(Ordering::Relaxed),
            host_to_device: self.host_to_device.load(Ordering::Relaxed),
            host_to_device_bytes: self.host_to_device_bytes.load(Ordering::Relaxed),
            device_to_host: self.device_to_host.load(Ordering::Relaxed),
            device_to_host_bytes: self.device_to_host_bytes.load(Ordering::Relaxed),
        }
    }
}

impl Session {
    pub(super) fn check_input(&self, index: usize, dtype: DType, shape: &[i64]) -> Result<()> {
        let arg = &self.manifest.arguments[self.user_inputs[index]];
        let mismatch = |what: &str| RuntimeError::InputMismatch {
            index,
            name: arg.name.clone(),
            message: format!(
                "{what}: expected {}, got {}",
                describe(arg.dtype, &arg.shape),
                describe(dtype, shape)
            ),
        };
        if dtype != arg.dtype {
            return Err(mismatch("wrong dtype"));
        }
        if !shape_matches(&arg.shape, shape) {
            return Err(mismatch("wrong shape"));
        }
        Ok(())
    }

    /// [`Session::check_input`] for a host tensor, and its data as long as its shape.
    pub(super) fn check_host_input(&self, index: usize, t: &HostTensor) -> Result<()> {
        self.check_input(index, t.dtype, &t.shape)?;
        let expected = t.num_elements() * t.dtype.size_in_bytes();
        if t.data.len() != expected {
            let arg = &self.manifest.arguments[self.user_inputs[index]];
            return Err(RuntimeError::InputMismatch {
                index,
                name: arg.name.clone(),
                message: format!(
                    "{} needs {expected} bytes of data, the tensor has {}",
                    describe(t.dtype, &t.shape),
                    t.data.len()
                ),
            });
        }
        Ok(())
    }

    /// An error about user input `index` (named from the manifest).
    pub(super) fn input_error(&self, index: usize, message: String) -> RuntimeError {
        RuntimeError::InputMismatch {
            index,
            name: self.manifest.arguments[self.user_inputs[index]]
                .name
                .clone(),
            message,
        }
    }

    pub(super) fn check_count(&self, got: usize) -> Result<()> {
        if got != self.user_inputs.len() {
            return Err(RuntimeError::InputCount {
                expected: self.user_inputs.len(),
                got,
                names: {
                    let mut names = self
                        .inputs()
                        .iter()
                        .map(|a| format!("`{}`", a.name))
                        .collect::<Vec<_>>()
                        .join(", ");
                    if !self.state.is_empty() {
                        // Someone passing the cache too: say where it lives.
                        names.push_str(&format!(
                            "; {} are state the session keeps, not inputs",
                            self.state_names()
                                .iter()
                                .map(|n| format!("`{n}`"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ));
                    }
                    names
                },
            });
        }
        Ok(())
    }

    /// Runs the program on host tensors (the user inputs, in manifest order) and
    /// returns the user outputs (a stateful program's state stays on the device).
    pub fn run(&self, inputs: &[HostTensor]) -> Result<Vec<HostTensor>> {
        self.check_count(inputs.len())?;
        if self.manifest.partitioning.is_some() {
            return self.run_partitioned(inputs);
        }
        for (i, t) in inputs.iter().enumerate() {
            self.check_host_input(i, t)?;
        }
        // Sizes are checked before anything is uploaded.
        let shapes: Vec<&[i64]> = inputs.iter().map(|t| t.shape.as_slice()).collect();
        self.sizes(&shapes)?;
        let mut uploaded = Vec::with_capacity(inputs.len());
        for t in inputs {
            uploaded.push(self.client.buffer_from_host(t, self.positions[0])?);
            self.transfers.uploaded(t);
        }
        let refs: Vec<&Buffer> = uploaded.iter().collect();
        let outputs = self.run_buffers(&refs)?;
        outputs.iter().map(|b| self.download(b)).collect()
    }

    /// [`Session::run`] on arrays the caller owns, without copies on the host: each
    /// input is uploaded from its view, and each user output is downloaded into
    /// `outputs[i]`, which must hold exactly its bytes (the caller allocates them from
    /// the manifest's output types; a dynamic artifact's outputs are sized by the
    /// call: use [`Session::run`] there). A partitioned session splits and assembles
    /// on the host as [`Session::run`] does.
    pub fn run_into(&self, inputs: &[HostView<'_>], outputs: &mut [&mut [u8]]) -> Result<()> {
        self.check_count(inputs.len())?;
        let n_out = self.outputs().len();
        if outputs.len() != n_out {
            return Err(RuntimeError::InvalidArgument(format!(
                "{} output destination(s) for {n_out} output(s)",
                outputs.len()
            )));
        }
        if self.manifest.partitioning.is_some() || self.manifest.dynamic.is_some() {
            let owned: Vec<HostTensor> = inputs.iter().map(HostView::to_tensor).collect();
            let results = self.run(&owned)?;
            for (i, (dst, t)) in outputs.iter_mut().zip(&results).enumerate() {
                if dst.len() != t.data.len() {
                    return Err(self.output_size_error(i, t.data.len(), dst.len()));
                }
                dst.copy_from_slice(&t.data);
            }
            return Ok(());
        }
        for (i, t) in inputs.iter().enumerate() {
            self.check_input(i, t.dtype, t.shape)?;
            let expected = t
                .shape
                .iter()
                .map(|&d| d.max(0) as usize)
                .product::<usize>()
                * t.dtype.size_in_bytes();
            if t.data.len() != expected {
                return Err(self.input_error(
                    i,
                    format!(
                        "{} needs {expected} bytes of data, the array has {}",
                        describe(t.dtype, t.shape),
                        t.data.len()
                    ),
                ));
            }
        }
        for (i, spec) in self.outputs().iter().enumerate() {
            let want = spec
                .shape
                .iter()
                .map(|&d| d.max(0) as usize)
                .product::<usize>()
                * spec.dtype.size_in_bytes();
            if outputs[i].len() != want {
                return Err(self.output_size_error(i, want, outputs[i].len()));
            }
        }
        let mut uploaded = Vec::with_capacity(inputs.len());
        for t in inputs {
            uploaded.push(self.client.buffer_from_slice(
                t.dtype,
                t.shape,
                t.data,
                self.positions[0],
            )?);
            self.transfers.uploaded_bytes(t.data.len());
        }
        let refs: Vec<&Buffer> = uploaded.iter().collect();
        let results = self.run_buffers(&refs)?;
        for (b, dst) in results.iter().zip(outputs.iter_mut()) {
            b.to_host_into(dst)?;
            self.transfers.downloaded_bytes(dst.len());
        }
        Ok(())
    }

    fn output_size_error(&self, i: usize, want: usize, got: usize) -> RuntimeError {
        RuntimeError::OutputMismatch {
            index: i,
            name: self.manifest.outputs[i].name.clone(),
            message: format!("needs {want} bytes, the destination has {got}"),
        }
    }

    /// What this session's runs moved between host and devices since it was loaded.
    /// Buffers a caller uploads or downloads itself around [`Session::run_buffers`] are
    /// the caller's and not counted.
    pub fn transfer_stats(&self) -> TransferStats {
        self.transfers.snapshot()
    }

    pub(super) fn download(&self, b: &Buffer) -> Result<HostTensor> {
        let t = b.to_host()?;
        self.transfers.downloaded(&t);
        Ok(t)
    }

    /// Runs the program on inputs already on the session's device; outputs stay there.
    /// Returns the user outputs; a stateful program's new state stays in the session.
    /// A run that fails after the execution consumed the state it was given (donated)
    /// resets the state to the artifact's initial values, and its error says so.
    /// A partitioned session takes its inputs per device instead
    /// ([`Session::upload_sharded`], [`Session::run_sharded`]).
    pub fn run_buffers(&self, inputs: &[&Buffer]) -> Result<Vec<Buffer>> {
        self.check_count(inputs.len())?;
        if let Some(p) = &self.manifest.partitioning {
            return Err(RuntimeError::InvalidArgument(format!(
                "the artifact is partitioned over the mesh {} ({} devices): run it with host tensors (Session::run), or with inputs split per device (Session::upload_sharded, Session::run_sharded)",
                p.mesh,
                p.mesh.num_devices()
            )));
        }
        for (i, b) in inputs.iter().enumerate() {
            self.check_input(i, b.dtype()?, b.shape())?;
            if !b.belongs_to(&self.client) {
                let arg = &self.manifest.arguments[self.user_inputs[i]];
                return Err(RuntimeError::InputMismatch {
                    index: i,
                    name: arg.name.clone(),
                    message: "buffer belongs to another client".into(),
                });
            }
        }
        // A stateful run holds the state from reading it to replacing it: runs of one
        // session take turns, each seeing the state the previous one left.
        let mut state = self.lock_state()?;
        let args: Vec<&Buffer> = self
            .slots
            .iter()
            .map(|s| match *s {
                Slot::Weight(w) => Ok(&self.weights[w][0]),
                Slot::State { state: k, .. } => match state[k].as_ref() {
                    Some(shards) => Ok(&shards[0]),
                    None => Ok(&self.initial_value(k)?[0]),
                },
                Slot::User(u) => Ok(inputs[u]),
            })
            .collect::<Result<_>>()?;
        let donate = self.donated(&state);
        let shapes: Vec<&[i64]> = inputs.iter().map(|b| b.shape()).collect();
        let (executable, sizes) = self.executable_for(&shapes)?;
        let result = executable
            .execute_donating(&args, &donate)
            .and_then(|outputs| {
                self.transfers.executed();
                self.check_outputs(&outputs, sizes.as_ref())?;
                Ok(outputs)
            });
        drop(args);
        // A failure once the state was donated may leave it consumed: never keep a
        // deleted buffer as the state (see `Session::after_failed_run`).
        let outputs = match result {
            Ok(outputs) => outputs,
            Err(e) if donate.is_empty() => return Err(e),
            Err(e) => return Err(self.after_failed_run(&mut state, e)),
        };
        let mut outputs = outputs;
        let next_state = outputs.split_off(outputs.len() - self.state.len());
        for (slot, b) in state.iter_mut().zip(next_state) {
            *slot = Some(vec![b]);
        }
        Ok(outputs)
    }
    /// The outputs of an execution against the manifest (for a dynamic artifact, the
    /// output sizes of the call's `sizes`).
    fn check_outputs(&self, outputs: &[Buffer], sizes: Option<&Bindings>) -> Result<()> {
        for (i, (b, spec)) in outputs.iter().zip(&self.manifest.outputs).enumerate() {
            let dtype = b.dtype()?;
            let expected = match (&self.dynamic, sizes) {
                (Some(d), Some(sizes)) if i < d.section.outputs.len() => d.section.outputs[i]
                    .iter()
                    .map(|dim| dim.eval(sizes).unwrap_or(-1))
                    .collect(),
                _ => spec.shape.clone(),
            };
            if dtype != spec.dtype || !shape_matches(&expected, b.shape()) {
                return Err(RuntimeError::OutputMismatch {
                    index: i,
                    name: spec.name.clone(),
                    message: format!(
                        "the program returned {}, the manifest says {}",
                        describe(dtype, b.shape()),
                        describe(spec.dtype, &spec.shape)
                    ),
                });
            }
        }
        Ok(())
    }
}
