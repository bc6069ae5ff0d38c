//! Runs of a partitioned artifact over its device mesh: inputs split per device,
//! one execution over the mesh, outputs assembled from their shards.

use super::validate::describe;
use super::{Session, Slot};
use crate::error::{Result, RuntimeError};
use crate::pjrt::Buffer;
use crate::sharding::TensorSharding;
use crate::HostTensor;

/// `sharding`, or whole on every device when the manifest gives none (every argument
/// and output of a partitioned manifest has one; checked when it was read).
pub(super) fn sharding_or_whole(sharding: Option<&TensorSharding>, rank: usize) -> TensorSharding {
    sharding
        .cloned()
        .unwrap_or_else(|| TensorSharding::replicated(rank))
}

/// Tensors of a partitioned session, each as one buffer per mesh position (in the
/// order of the mesh's positions): user inputs from [`Session::upload_sharded`], outputs
/// from [`Session::run_sharded`].
pub struct ShardedBuffers {
    tensors: Vec<Vec<Buffer>>,
}

impl ShardedBuffers {
    /// Tensor `i`'s shards, one per mesh position.
    pub fn shards(&self, i: usize) -> Option<&[Buffer]> {
        self.tensors.get(i).map(Vec::as_slice)
    }

    pub fn len(&self) -> usize {
        self.tensors.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tensors.is_empty()
    }
}

impl Session {
    /// [`Session::run`] of a partitioned artifact: each input split by its sharding and
    /// each shard uploaded to its device, one execution over the mesh, and each output
    /// assembled from the devices' shards.
    pub(super) fn run_partitioned(&self, inputs: &[HostTensor]) -> Result<Vec<HostTensor>> {
        let uploaded = self.upload_sharded(inputs)?;
        let outputs = self.run_sharded(&uploaded)?;
        self.assemble(&outputs)
    }

    pub(super) fn mesh(&self) -> Result<&crate::sharding::Mesh> {
        self.manifest
            .partitioning
            .as_ref()
            .map(|p| &p.mesh)
            .ok_or_else(|| {
                RuntimeError::InvalidArgument(
                    "the artifact is not partitioned: use Session::run or Session::run_buffers"
                        .into(),
                )
            })
    }

    /// For a partitioned artifact: the user inputs (in manifest order) split by their
    /// shardings, each shard uploaded to its mesh position's device, for
    /// [`Session::run_sharded`].
    pub fn upload_sharded(&self, inputs: &[HostTensor]) -> Result<ShardedBuffers> {
        let mesh = self.mesh()?;
        self.check_count(inputs.len())?;
        let mut uploaded: Vec<Vec<Buffer>> = Vec::with_capacity(inputs.len());
        for (i, t) in inputs.iter().enumerate() {
            self.check_host_input(i, t)?;
            let arg = &self.manifest.arguments[self.user_inputs[i]];
            let shards = sharding_or_whole(arg.sharding.as_ref(), t.shape.len())
                .split_tensor(mesh, t)
                .map_err(|e| self.input_error(i, e.to_string()))?;
            uploaded.push(
                shards
                    .iter()
                    .zip(&self.positions)
                    .map(|(s, &d)| {
                        self.transfers.uploaded(s);
                        self.client.buffer_from_host(s, d)
                    })
                    .collect::<Result<Vec<_>>>()?,
            );
        }
        Ok(ShardedBuffers { tensors: uploaded })
    }

    /// For a partitioned artifact: one execution over the mesh on inputs from
    /// [`Session::upload_sharded`]; the outputs' shards stay on their devices
    /// ([`Session::assemble`] brings them back whole). Returns the user outputs; a
    /// stateful program's new state stays in the session, on its devices.
    pub fn run_sharded(&self, inputs: &ShardedBuffers) -> Result<ShardedBuffers> {
        let mesh = self.mesh()?;
        self.check_count(inputs.tensors.len())?;
        for (i, shards) in inputs.tensors.iter().enumerate() {
            let arg = &self.manifest.arguments[self.user_inputs[i]];
            let mismatch = |message: String| self.input_error(i, message);
            let want = sharding_or_whole(arg.sharding.as_ref(), arg.shape.len())
                .shard_shape(mesh, &arg.shape)
                .map_err(|e| mismatch(e.to_string()))?;
            if shards.len() != self.positions.len() {
                return Err(mismatch(format!(
                    "{} shards for a mesh of {} devices",
                    shards.len(),
                    self.positions.len()
                )));
            }
            for b in shards {
                if !b.belongs_to(&self.client) || b.shape() != want.as_slice() {
                    return Err(mismatch(format!(
                        "a shard of shape {:?} (want {want:?} on this session's client): upload with this session's upload_sharded",
                        b.shape()
                    )));
                }
            }
        }
        // As in `Session::run_buffers`: runs take turns on the state, a value a run
        // produced is donated to the next (on every device), and a failure once it was
        // donated never leaves a consumed buffer as the state.
        let mut state = self.lock_state()?;
        let lists: Vec<Vec<&Buffer>> = (0..self.positions.len())
            .map(|pos| {
                self.slots
                    .iter()
                    .map(|s| match *s {
                        Slot::Weight(w) => Ok(&self.weights[w][pos]),
                        Slot::State { state: k, .. } => match state[k].as_ref() {
                            Some(shards) => Ok(&shards[pos]),
                            None => Ok(&self.initial_value(k)?[pos]),
                        },
                        Slot::User(u) => Ok(&inputs.tensors[u][pos]),
                    })
                    .collect::<Result<Vec<_>>>()
            })
            .collect::<Result<_>>()?;
        let donate = self.donated(&state);
        let refs: Vec<&[&Buffer]> = lists.iter().map(|l| l.as_slice()).collect();
        let result = self
            .executable
            .execute_sharded_donating(&refs, &donate)
            .and_then(|per_device| {
                self.transfers.executed();
                let n = self.manifest.outputs.len();
                match per_device.iter().position(|outputs| outputs.len() != n) {
                    Some(d) => Err(RuntimeError::OutputMismatch {
                        index: per_device[d].len().min(n),
                        name: String::new(),
                        message: format!(
                            "device {d} returned {} outputs, the manifest has {n}",
                            per_device[d].len()
                        ),
                    }),
                    None => Ok(per_device),
                }
            });
        drop(refs);
        drop(lists);
        let per_device = match result {
            Ok(per_device) => per_device,
            Err(e) if donate.is_empty() => return Err(e),
            Err(e) => return Err(self.after_failed_run(&mut state, e)),
        };
        // per_device[position][output] -> tensors[output][position]
        let mut tensors: Vec<Vec<Buffer>> = (0..self.manifest.outputs.len())
            .map(|_| Vec::with_capacity(per_device.len()))
            .collect();
        for outputs in per_device {
            for (t, b) in tensors.iter_mut().zip(outputs) {
                t.push(b);
            }
        }
        let next_state = tensors.split_off(tensors.len() - self.state.len());
        for (slot, shards) in state.iter_mut().zip(next_state) {
            *slot = Some(shards);
        }
        Ok(ShardedBuffers { tensors })
    }

    /// For a partitioned artifact: the outputs of [`Session::run_sharded`] downloaded
    /// and assembled from their shards.
    pub fn assemble(&self, outputs: &ShardedBuffers) -> Result<Vec<HostTensor>> {
        let mesh = self.mesh()?;
        let mut whole_outputs = Vec::with_capacity(self.outputs().len());
        for (i, spec) in self.outputs().iter().enumerate() {
            let mismatch = |message: String| RuntimeError::OutputMismatch {
                index: i,
                name: spec.name.clone(),
                message,
            };
            let shards = outputs
                .tensors
                .get(i)
                .ok_or_else(|| mismatch("the program returned fewer outputs".into()))?
                .iter()
                .map(|b| self.download(b))
                .collect::<Result<Vec<_>>>()?;
            let whole = sharding_or_whole(spec.sharding.as_ref(), spec.shape.len())
                .assemble(mesh, &spec.shape, &shards)
                .map_err(|e| mismatch(e.to_string()))?;
            if whole.dtype != spec.dtype {
                return Err(mismatch(format!(
                    "the program returned {}, the manifest says {}",
                    describe(whole.dtype, &whole.shape),
                    describe(spec.dtype, &spec.shape)
                )));
            }
            whole_outputs.push(whole);
        }
        Ok(whole_outputs)
    }
}
