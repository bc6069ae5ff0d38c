//! Running a compiled artifact: [`Session::load`] validates the manifest (format
//! version, checksums, StableHLO version against the plugin's range), obtains the
//! executable once (from the on-disk [executable cache](crate::cache) or by compiling)
//! and uploads the weights once; [`Session::run`] checks the caller's inputs against the
//! manifest and executes.
//!
//! ```no_run
//! use tpuc_runtime::{discover, ClientOptions, HostTensor, Plugin, Session};
//!
//! # fn main() -> tpuc_runtime::Result<()> {
//! let plugin = Plugin::load(discover::find_plugin(None)?)?;
//! let client = plugin.create_client(&ClientOptions::default())?;
//! let session = Session::load("model.tpuc", &client)?;
//! println!("executable from {:?}", session.load_report().compile);
//! let x = HostTensor::from_f32(&[1, 4], &[1.0, 2.0, 3.0, 4.0]);
//! let outputs = session.run(&[x])?;
//! # let _ = outputs;
//! # Ok(())
//! # }
//! ```
//!
//! Where the code lives:
//! - `mod.rs`: the [`Session`] struct, its accessors (manifest, inputs, outputs,
//!   compiled-program figures) and the re-exports.
//! - `load.rs`: [`Session::load`] / [`Session::load_with`], obtaining the executable
//!   (cache or compile), the weights' upload; [`LoadOptions`], [`LoadEvent`],
//!   [`LoadReport`].
//! - `validate.rs`: reading and validating a manifest before any device work
//!   ([`read_manifest`], [`parse_manifest`], partitioning, dynamic section, file paths,
//!   checksums, mesh positions).
//! - `run.rs`: single-device runs ([`Session::run`], [`Session::run_buffers`]), input
//!   checks, [`TransferStats`].
//! - `sharded.rs`: partitioned runs ([`Session::upload_sharded`],
//!   [`Session::run_sharded`], [`Session::assemble`], [`ShardedBuffers`]).
//! - `state.rs`: a stateful program's state (state slots, [`Session::reset_state`],
//!   [`Session::read_state`], [`Session::write_state`], which buffers a run donates).
//! - `dynamic.rs`: dynamic artifacts ([`Session::sizes`], one executable per size,
//!   [`Specializer`]).

mod dynamic;
mod load;
mod run;
mod sharded;
mod state;
mod validate;

pub use load::{
    CacheMode, CompileSource, LoadEvent, LoadOptions, LoadReport, ProgramChoice, ProgressFn,
    Specializer,
};
pub use run::TransferStats;
pub use sharded::ShardedBuffers;
pub use validate::{parse_manifest, read_manifest, MANIFEST_FILE};

use crate::error::{Result, RuntimeError};
use crate::manifest::{Argument, Manifest, TensorSpec};
use crate::pjrt::{Buffer, Client, LoadedExecutable};
use dynamic::DynamicState;
use run::Transfers;
use state::StateSlot;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Where an argument of `@main` comes from.
#[derive(Clone, Copy, Debug)]
enum Slot {
    /// Index into `Session::weights`.
    Weight(usize),
    /// State `state` (index into `Session::state`), whose initial value is weight
    /// `weight`.
    State { weight: usize, state: usize },
    /// Index into the caller's inputs.
    User(usize),
}

/// A loaded artifact, ready to run. `Send + Sync`: runs may be issued from several
/// threads (weights are never donated, so concurrent runs share them safely).
pub struct Session {
    dir: PathBuf,
    manifest: Manifest,
    client: Client,
    executable: Arc<LoadedExecutable>,
    /// Of a dynamic artifact: the executables of the sizes met so far.
    dynamic: Option<DynamicState>,
    /// Each weight's buffer on each device, `[weight][position]` (one position unless
    /// the artifact is partitioned: its shard on each device of the mesh).
    weights: Vec<Vec<Buffer>>,
    slots: Vec<Slot>,
    /// Indices into `manifest.arguments` of the user inputs, in order.
    user_inputs: Vec<usize>,
    /// The addressable device index of each mesh position (one entry unpartitioned).
    positions: Vec<usize>,
    report: LoadReport,
    transfers: Transfers,
    /// The buffers the program updates (outputs with `updates`), in output order.
    state: Vec<StateSlot>,
    /// Each state buffer's current value on the devices, one buffer per mesh position
    /// (its shard there): `None` until a run (or [`Session::write_state`]) replaces
    /// the initial value, which stays in `weights`.
    state_values: Mutex<Vec<Option<Vec<Buffer>>>>,
    /// [`Session::release_initial_state`] gave up the state's initial values.
    initial_released: bool,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("dir", &self.dir)
            .field("inputs", &self.user_inputs.len())
            .field("weights", &self.weights.len())
            .finish_non_exhaustive()
    }
}

impl Session {
    /// How many instructions of each opcode the compiled program has (XLA's optimized
    /// HLO; for a partitioned artifact one partition's program, collectives included:
    /// `all-reduce`, `all-gather`, `reduce-scatter`, `all-to-all`, `collective-permute`).
    pub fn compiled_opcode_counts(&self) -> Result<std::collections::BTreeMap<String, usize>> {
        Ok(self
            .compiled_opcode_stats()?
            .into_iter()
            .map(|(k, v)| (k, v.count))
            .collect())
    }

    /// [`Session::compiled_opcode_counts`] with the bytes of each opcode's results
    /// summed (for a collective, what one call of the program moves through it).
    pub fn compiled_opcode_stats(
        &self,
    ) -> Result<std::collections::BTreeMap<String, crate::hlo::OpcodeStats>> {
        let (format, code) = self.executable.optimized_program()?;
        let module = crate::hlo::module_of(&format, &code).ok_or_else(|| {
            RuntimeError::InvalidArgument(format!(
                "the plugin's optimized program is in format `{format}`, not hlo or hlo_with_config"
            ))
        })?;
        crate::hlo::opcode_stats(&module).ok_or_else(|| {
            RuntimeError::InvalidArgument("the optimized program is not an HloModuleProto".into())
        })
    }

    /// XLA's memory account of the compiled program on one device (for a partitioned
    /// artifact, one partition: its arguments are that device's shares).
    pub fn compiled_memory_stats(&self) -> Result<crate::pjrt::CompiledMemoryStats> {
        self.executable.compiled_memory_stats()
    }

    /// How the session was loaded (executable from the cache or compiled, timings).
    pub fn load_report(&self) -> &LoadReport {
        &self.report
    }

    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The arguments the caller passes to [`Session::run`], in order.
    pub fn inputs(&self) -> Vec<&Argument> {
        self.user_inputs
            .iter()
            .map(|&i| &self.manifest.arguments[i])
            .collect()
    }

    /// The outputs [`Session::run`] returns: the user outputs, in order (a stateful
    /// program's next state values, which follow them in the manifest, stay in the
    /// session).
    pub fn outputs(&self) -> &[TensorSpec] {
        &self.manifest.outputs[..self.manifest.outputs.len() - self.state.len()]
    }
}
