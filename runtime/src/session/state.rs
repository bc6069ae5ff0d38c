//! The state of a stateful program (a KV cache, a counter): outputs that update
//! arguments, kept on the device between runs.

use super::sharded::sharding_or_whole;
use super::validate::describe;
use super::{Session, Slot};
use crate::error::{Result, RuntimeError};
use crate::manifest::{ArgumentKind, Manifest};
use crate::pjrt::Buffer;
use crate::HostTensor;

/// An argument whose value the program computes anew each call.
#[derive(Clone, Copy, Debug)]
pub(super) struct StateSlot {
    /// Index into `manifest.arguments`.
    pub(super) arg: usize,
    /// Index into `manifest.outputs` of its next value.
    pub(super) output: usize,
}

/// The state of a manifest: every output that `updates` an argument, checked (a
/// buffer of the same type, updated once; of a partitioned program, split as the
/// argument is).
pub(super) fn state_slots(manifest: &Manifest) -> std::result::Result<Vec<StateSlot>, String> {
    let mut slots: Vec<StateSlot> = Vec::new();
    for (output, spec) in manifest.outputs.iter().enumerate() {
        let Some(name) = &spec.updates else { continue };
        let arg = manifest
            .arguments
            .iter()
            .position(|a| &a.name == name)
            .ok_or_else(|| {
                format!(
                    "output {output} `{}` updates `{name}`, which is not an argument",
                    spec.name
                )
            })?;
        let a = &manifest.arguments[arg];
        // Buffers, and of a training step its parameters and optimizer state.
        let kind_ok = match a.kind {
            ArgumentKind::Buffer => true,
            ArgumentKind::Parameter | ArgumentKind::OptimizerState => manifest.training.is_some(),
            _ => false,
        };
        if !kind_ok || a.dtype != spec.dtype || a.shape != spec.shape {
            return Err(format!(
                "output {output} `{}` ({}) updates argument `{name}` ({:?} {}): state must be a buffer (or a training step's parameter or optimizer state) of the same type",
                spec.name,
                describe(spec.dtype, &spec.shape),
                a.kind,
                describe(a.dtype, &a.shape)
            ));
        }
        if slots.iter().any(|s| s.arg == arg) {
            return Err(format!("argument `{name}` is updated by two outputs"));
        }
        slots.push(StateSlot { arg, output });
    }
    let first_state = manifest.outputs.len() - slots.len();
    if slots.iter().any(|s| s.output < first_state) {
        return Err("outputs that update state must follow every user output".into());
    }
    if manifest.partitioning.is_some() {
        for s in &slots {
            let (arg, out) = (&manifest.arguments[s.arg], &manifest.outputs[s.output]);
            if arg.sharding != out.sharding {
                return Err(format!(
                    "output `{}` updates argument `{}` but is split differently ({} and {}): state keeps one sharding",
                    out.name,
                    arg.name,
                    shown(out.sharding.as_ref()),
                    shown(arg.sharding.as_ref())
                ));
            }
        }
    }
    Ok(slots)
}

fn shown(s: Option<&crate::sharding::TensorSharding>) -> String {
    s.map_or("none".to_string(), |s| s.to_string())
}

impl Session {
    /// The names of the arguments the program keeps as state (a KV cache, a counter),
    /// in the manifest's order of the outputs that update them.
    pub fn state_names(&self) -> Vec<&str> {
        self.state
            .iter()
            .map(|s| self.manifest.arguments[s.arg].name.as_str())
            .collect()
    }

    fn state_index(&self, name: &str) -> Result<usize> {
        self.state
            .iter()
            .position(|s| self.manifest.arguments[s.arg].name == name)
            .ok_or_else(|| {
                RuntimeError::InvalidArgument(format!(
                    "`{name}` is not state of this program (state: {})",
                    if self.state.is_empty() {
                        "none".to_string()
                    } else {
                        self.state_names().join(", ")
                    }
                ))
            })
    }

    /// Back to the initial state (the artifact's values; they never left the device,
    /// unless [`Session::release_initial_state`] gave them up).
    pub fn reset_state(&self) -> Result<()> {
        if self.initial_released {
            return Err(RuntimeError::InvalidArgument(
                "the state's initial values were released (release_initial_state: a training session); reload the artifact to start over".into(),
            ));
        }
        let mut state = self.lock_state()?;
        state.iter_mut().for_each(|v| *v = None);
        Ok(())
    }

    /// The current value of state `name` (downloaded: to save a cache, say).
    pub fn read_state(&self, name: &str) -> Result<HostTensor> {
        let k = self.state_index(name)?;
        // Downloaded under the lock: a run would donate the buffers.
        let state = self.lock_state()?;
        let shards = match &state[k] {
            Some(shards) => shards,
            None => self.initial_value(k)?,
        };
        let arg = &self.manifest.arguments[self.state[k].arg];
        match &self.manifest.partitioning {
            None => self.download(&shards[0]),
            Some(p) => {
                let host = shards
                    .iter()
                    .map(|b| self.download(b))
                    .collect::<Result<Vec<_>>>()?;
                sharding_or_whole(arg.sharding.as_ref(), arg.shape.len())
                    .assemble(&p.mesh, &arg.shape, &host)
                    .map_err(|e| RuntimeError::InvalidArgument(format!("state `{name}`: {e}")))
            }
        }
    }

    /// Replaces state `name` with `value` (of its dtype and shape) for the next run.
    pub fn write_state(&self, name: &str, value: &HostTensor) -> Result<()> {
        let k = self.state_index(name)?;
        let arg = &self.manifest.arguments[self.state[k].arg];
        if value.dtype != arg.dtype || value.shape != arg.shape {
            return Err(RuntimeError::InvalidArgument(format!(
                "state `{name}` is {}, the value given is {}",
                describe(arg.dtype, &arg.shape),
                describe(value.dtype, &value.shape)
            )));
        }
        let upload = |t: &HostTensor, device: usize| {
            let b = self.client.buffer_from_host(t, device)?;
            self.transfers.uploaded(t);
            Ok(b)
        };
        let buffers = match &self.manifest.partitioning {
            None => vec![upload(value, self.positions[0])?],
            Some(p) => sharding_or_whole(arg.sharding.as_ref(), arg.shape.len())
                .split_tensor(&p.mesh, value)
                .map_err(|e| RuntimeError::InvalidArgument(format!("state `{name}`: {e}")))?
                .iter()
                .zip(&self.positions)
                .map(|(shard, &device)| upload(shard, device))
                .collect::<Result<Vec<_>>>()?,
        };
        self.lock_state()?[k] = Some(buffers);
        Ok(())
    }

    /// Hands this session's current state to `to`, a program over the same state (a
    /// serving set's prefill and decode programs share one KV cache): every state
    /// argument of `to` takes this session's value of the same name, which must have
    /// the same dtype, shape and sharding and live on the same client. No data moves:
    /// the buffers change hands, and this session holds no state until one is handed
    /// back (a run in between is refused). Both sessions must have released their
    /// initial values ([`Session::release_initial_state`]), so that no state is kept
    /// twice on the device.
    pub fn move_state_to(&self, to: &Session) -> Result<()> {
        if std::ptr::eq(self, to) {
            return Ok(());
        }
        if !self.initial_released || !to.initial_released {
            return Err(RuntimeError::InvalidArgument(
                "move_state_to: release both sessions' initial state first (release_initial_state)"
                    .into(),
            ));
        }
        let mut from_state = self.lock_state()?;
        let mut to_state = to.lock_state()?;
        let mut pairs = Vec::with_capacity(to.state.len());
        for (k_to, st) in to.state.iter().enumerate() {
            let arg = &to.manifest.arguments[st.arg];
            let k_from = self.state_index(&arg.name)?;
            let mine = &self.manifest.arguments[self.state[k_from].arg];
            if mine.dtype != arg.dtype || mine.shape != arg.shape || mine.sharding != arg.sharding {
                return Err(RuntimeError::InvalidArgument(format!(
                    "move_state_to: state `{}` is {} here and {} in {}",
                    arg.name,
                    describe(mine.dtype, &mine.shape),
                    describe(arg.dtype, &arg.shape),
                    to.dir.display()
                )));
            }
            match &from_state[k_from] {
                Some(shards) if shards.iter().all(|b| b.belongs_to(&to.client)) => {}
                Some(_) => {
                    return Err(RuntimeError::InvalidArgument(format!(
                        "move_state_to: state `{}` lives on another client than {}'s (load both with one client)",
                        arg.name,
                        to.dir.display()
                    )))
                }
                None => {
                    return Err(RuntimeError::InvalidArgument(format!(
                        "move_state_to: this session holds no state `{}` to hand over",
                        arg.name
                    )))
                }
            }
            pairs.push((k_from, k_to));
        }
        if pairs.len() != self.state.len() {
            return Err(RuntimeError::InvalidArgument(format!(
                "move_state_to: {} keeps {} state values, {} keeps {}",
                self.dir.display(),
                self.state.len(),
                to.dir.display(),
                to.state.len()
            )));
        }
        for (k_from, k_to) in pairs {
            to_state[k_to] = from_state[k_from].take();
        }
        Ok(())
    }

    /// Makes the artifact's initial values of the state the current state, so that the
    /// first run donates them: the device then holds the state once, not also a copy
    /// to return to (what a training step's parameters and optimizer state need).
    /// [`Session::reset_state`] is refused afterwards, and a run that fails after
    /// consuming the state leaves the session without one (its error says so).
    pub fn release_initial_state(&mut self) -> Result<()> {
        let mut taken = Vec::new();
        for st in &self.state {
            match self.slots[st.arg] {
                Slot::State { weight, .. } => taken.push(std::mem::take(&mut self.weights[weight])),
                _ => unreachable!("state arguments have state slots"),
            }
        }
        let state = self.state_values.get_mut().map_err(|_| {
            RuntimeError::InvalidArgument("a run panicked while holding the state".into())
        })?;
        for (slot, initial) in state.iter_mut().zip(taken) {
            if slot.is_none() {
                *slot = Some(initial);
            }
        }
        self.initial_released = true;
        Ok(())
    }

    /// The initial value of state `k`, while the session holds it.
    pub(super) fn initial_value(&self, k: usize) -> Result<&Vec<Buffer>> {
        let weight = match self.slots[self.state[k].arg] {
            Slot::State { weight, .. } => weight,
            _ => unreachable!("state arguments have state slots"),
        };
        let shards = &self.weights[weight];
        if shards.is_empty() {
            return Err(RuntimeError::InvalidArgument(format!(
                "state `{}` is not held by this session: it was moved to another program's session (move_state_to), or a failed run consumed it after its initial values were released; load a checkpoint (write_state) or reload the artifact",
                self.manifest.arguments[self.state[k].arg].name
            )));
        }
        Ok(shards)
    }

    /// The arguments a run donates: each state value a previous run produced, which
    /// the run writes its update into (the program aliases each state argument to its
    /// output). The artifact's initial values are never donated, so `reset_state` can
    /// return to them.
    pub(super) fn donated(&self, state: &[Option<Vec<Buffer>>]) -> Vec<usize> {
        self.state
            .iter()
            .zip(state)
            .filter(|(_, held)| held.is_some())
            .map(|(st, _)| st.arg)
            .collect()
    }

    pub(super) fn lock_state(&self) -> Result<std::sync::MutexGuard<'_, Vec<Option<Vec<Buffer>>>>> {
        self.state_values.lock().map_err(|_| {
            RuntimeError::InvalidArgument("a run panicked while holding the state".into())
        })
    }
    /// After a run that failed once it had donated state values (an execution error,
    /// or outputs the manifest contradicts): PJRT may have consumed them, and a
    /// session must never hold a deleted buffer as its state. The previous values
    /// cannot be brought back (donation is what lets a KV cache be updated in place;
    /// keeping a copy would double its memory), so when any donated value is gone
    /// (`PJRT_Buffer_IsDeleted`, or a plugin that cannot say) every state goes back to
    /// the artifact's initial values, which are never donated, and the error says so.
    /// When PJRT refused the call before consuming anything (an input on the wrong
    /// device, say), the state stays as it was.
    pub(super) fn after_failed_run(
        &self,
        state: &mut [Option<Vec<Buffer>>],
        error: RuntimeError,
    ) -> RuntimeError {
        let consumed = state
            .iter()
            .flatten()
            .flatten()
            .any(|b| b.is_deleted().unwrap_or(true));
        if !consumed {
            return error;
        }
        state.iter_mut().for_each(|v| *v = None);
        if self.initial_released {
            return error.with_note(&format!(
                "the failed run had consumed the state it was given ({}), and its initial values were released: load a checkpoint or reload the artifact",
                self.state_names().join(", ")
            ));
        }
        error.with_note(&format!(
            "the failed run had consumed the state it was given, so the state ({}) is reset to the artifact's initial values",
            self.state_names().join(", ")
        ))
    }
}
