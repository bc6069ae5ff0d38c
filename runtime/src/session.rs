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

use crate::cache::{self, CacheKey, Miss};
use crate::compile_options::CompileOptions;
use crate::error::{Result, RuntimeError};
use crate::manifest::DynamicShapes;
use crate::manifest::{
    Argument, ArgumentKind, Checksum, FileRef, Manifest, TensorSpec, FORMAT_VERSION,
    OLDEST_FORMAT_VERSION,
};
use crate::pjrt::{Buffer, Client, ClientOptions, LoadedExecutable, Plugin};
use crate::safetensors::SafeTensors;
use crate::sharding::TensorSharding;
use crate::symbolic::Bindings;
use crate::{DType, HostTensor};
use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How [`Session::load_with`] uses the on-disk executable cache.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CacheMode {
    /// Load the executable from the cache when an entry exists and is valid; otherwise
    /// compile and store it.
    #[default]
    ReadWrite,
    /// Always compile; neither read nor write the cache.
    Bypass,
}

/// Where a session's executable came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompileSource {
    /// Compiled by the plugin during this load.
    Compiled,
    /// Deserialized from the on-disk executable cache.
    Cache,
}

/// Progress of [`Session::load_with`], for a caller that draws progress (large weights,
/// slow compiles). Events come in this order, on the loading thread:
/// `CompileStart` (only when the program is actually compiled, not on a cache hit),
/// `CompileEnd` (always), `UploadStart`, one `WeightUploaded` per weight, `UploadEnd`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum LoadEvent<'a> {
    /// The plugin starts compiling the program (cache miss or [`CacheMode::Bypass`]).
    CompileStart { program_bytes: usize },
    /// The executable is ready.
    CompileEnd {
        source: CompileSource,
        elapsed: Duration,
    },
    /// Weight upload starts: `count` tensors, `total_bytes` in all.
    UploadStart { count: usize, total_bytes: u64 },
    /// Weight `index` of `count` (its safetensors key `name`, `bytes` long) is on the
    /// device; `uploaded_bytes` of `total_bytes` are done.
    WeightUploaded {
        index: usize,
        count: usize,
        name: &'a str,
        bytes: u64,
        uploaded_bytes: u64,
        total_bytes: u64,
    },
    /// Every weight is on the device.
    UploadEnd { total_bytes: u64, elapsed: Duration },
    /// A dynamic artifact met sizes it had no executable for yet: the program for
    /// `sizes` came from the artifact or was specialized now (`specialized`, how long
    /// that took), and its executable was compiled or found in the cache.
    Specialized {
        sizes: &'a Bindings,
        specialized: Option<Duration>,
        source: CompileSource,
        elapsed: Duration,
    },
}

/// Makes the StableHLO program of a dynamic artifact (its directory and manifest) for
/// sizes it holds no specialization of. The runtime links no compiler: the full `tpuc`
/// passes one (`tpuc_compiler::dynamic::specialize_artifact`).
pub type Specializer =
    Arc<dyn Fn(&Path, &Manifest, &Bindings) -> std::result::Result<String, String> + Send + Sync>;

/// Receives [`LoadEvent`]s.
pub type ProgressFn = Arc<dyn Fn(&LoadEvent<'_>) + Send + Sync>;

/// Options of [`Session::load_with`]. `LoadOptions::default()` is what
/// [`Session::load`] uses: read and write the cache in its default directory, no progress.
#[derive(Clone, Default)]
pub struct LoadOptions {
    pub cache: CacheMode,
    /// Cache directory; `None` means [`cache::default_cache_dir`] (`$TPUC_CACHE_DIR`,
    /// `$XDG_CACHE_HOME/tpuc/executables`, `~/.cache/tpuc/executables`).
    pub cache_dir: Option<PathBuf>,
    /// Called with each [`LoadEvent`].
    pub progress: Option<ProgressFn>,
    /// Which of an artifact's programs to run (default: its HLO when it has one).
    pub program: ProgramChoice,
    /// Of a dynamic artifact: makes the program for sizes it holds none for.
    pub specializer: Option<Specializer>,
}

/// Which program of an artifact [`Session::load_with`] compiles.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ProgramChoice {
    /// The XLA HLO of a Neuron artifact (what `neuronx-cc` compiles), else the
    /// StableHLO program.
    #[default]
    Auto,
    /// Always the StableHLO program (`program.mlir`).
    StableHlo,
}

impl LoadOptions {
    /// Default options with a progress callback.
    pub fn with_progress(f: impl Fn(&LoadEvent<'_>) + Send + Sync + 'static) -> LoadOptions {
        LoadOptions {
            progress: Some(Arc::new(f)),
            ..LoadOptions::default()
        }
    }

    fn emit(&self, event: LoadEvent<'_>) {
        if let Some(f) = &self.progress {
            f(&event);
        }
    }
}

impl std::fmt::Debug for LoadOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadOptions")
            .field("program", &self.program)
            .field("cache", &self.cache)
            .field("cache_dir", &self.cache_dir)
            .field("progress", &self.progress.as_ref().map(|_| "Fn"))
            .field("specializer", &self.specializer.as_ref().map(|_| "Fn"))
            .finish()
    }
}

/// How a session was loaded: where its executable came from, and how long each part took.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadReport {
    /// Whether the executable was compiled or loaded from the cache.
    pub compile: CompileSource,
    /// Time to obtain the executable: cache lookup plus deserialization on a hit; lookup
    /// plus compilation on a miss (writing the cache entry is not included).
    pub compile_ms: f64,
    /// Time to upload every weight to the device.
    pub weights_upload_ms: f64,
    /// Bytes of weights uploaded (tied weights count once).
    pub weight_bytes: u64,
    /// Number of weight tensors uploaded.
    pub weight_count: usize,
    /// Bytes of weights on each device, in mesh position order (one entry for an
    /// unpartitioned artifact): a weight split over the mesh counts its shard.
    pub weight_bytes_per_device: Vec<u64>,
    /// Whole load, from reading the manifest to the last weight on the device.
    pub total_ms: f64,
    /// The cache key of the executable (`None` with [`CacheMode::Bypass`] or when no
    /// cache directory is known).
    pub cache_key: Option<CacheKey>,
    /// The cache entry read or written, if any.
    pub cache_entry: Option<PathBuf>,
    /// Cache problems that did not stop the load (a corrupt entry that was replaced, a
    /// directory that is not writable, ...).
    pub cache_warnings: Vec<String>,
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The executable of a load and how it was obtained.
struct Obtained {
    executable: LoadedExecutable,
    source: CompileSource,
    elapsed: Duration,
    key: Option<CacheKey>,
    entry: Option<PathBuf>,
    warnings: Vec<String>,
}

/// Gets the executable of `program` from the cache, or compiles it (and stores it).
fn obtain_executable(
    client: &Client,
    program: &[u8],
    format: &str,
    compile_options: &CompileOptions,
    options: &LoadOptions,
) -> Result<Obtained> {
    let start = Instant::now();
    let mut warnings = Vec::new();
    let cache_dir = match options.cache {
        CacheMode::Bypass => None,
        CacheMode::ReadWrite => options.cache_dir.clone().or_else(cache::default_cache_dir),
    };
    let key = match &cache_dir {
        Some(_) => Some(cache::cache_key(
            client,
            program,
            format,
            &compile_options.encode()?,
        )),
        None => None,
    };
    if let (Some(dir), Some(key)) = (&cache_dir, &key) {
        let path = cache::entry_path(dir, key);
        match cache::load(dir, key) {
            Ok(bytes) => match client.deserialize(&bytes) {
                Ok(executable) => {
                    return Ok(Obtained {
                        executable,
                        source: CompileSource::Cache,
                        elapsed: start.elapsed(),
                        key: Some(*key),
                        entry: Some(path),
                        warnings,
                    })
                }
                Err(e) => warnings.push(format!(
                    "cache entry {} could not be loaded, recompiling: {e}",
                    path.display()
                )),
            },
            Err(Miss::Absent) => {}
            Err(Miss::Invalid(why)) => {
                warnings.push(format!("ignoring cache entry, recompiling: {why}"))
            }
        }
    }
    options.emit(LoadEvent::CompileStart {
        program_bytes: program.len(),
    });
    let executable = client.compile(program, format, compile_options)?;
    let elapsed = start.elapsed();
    let mut entry = None;
    if let (Some(dir), Some(key)) = (&cache_dir, &key) {
        match executable
            .serialize()
            .and_then(|bytes| cache::store(dir, key, &bytes))
        {
            Ok(path) => entry = Some(path),
            Err(e) => warnings.push(format!("the executable was not cached: {e}")),
        }
    }
    Ok(Obtained {
        executable,
        source: CompileSource::Compiled,
        elapsed,
        key,
        entry,
        warnings,
    })
}

/// Name of the manifest inside an artifact directory.
pub const MANIFEST_FILE: &str = "manifest.json";

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

/// `sharding`, or whole on every device when the manifest gives none (every argument
/// and output of a partitioned manifest has one; checked when it was read).
fn sharding_or_whole(sharding: Option<&TensorSharding>, rank: usize) -> TensorSharding {
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

/// Host/device traffic of a session's runs since it was loaded (the weights' upload at
/// load is in [`LoadReport`] instead): every tensor, or shard of one, that crossed.
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
struct Transfers {
    executions: AtomicU64,
    host_to_device: AtomicU64,
    host_to_device_bytes: AtomicU64,
    device_to_host: AtomicU64,
    device_to_host_bytes: AtomicU64,
}

impl Transfers {
    fn executed(&self) {
        self.executions.fetch_add(1, Ordering::Relaxed);
    }

    fn uploaded(&self, t: &HostTensor) {
        self.host_to_device.fetch_add(1, Ordering::Relaxed);
        self.host_to_device_bytes
            .fetch_add(t.data.len() as u64, Ordering::Relaxed);
    }

    fn downloaded(&self, t: &HostTensor) {
        self.device_to_host.fetch_add(1, Ordering::Relaxed);
        self.device_to_host_bytes
            .fetch_add(t.data.len() as u64, Ordering::Relaxed);
    }

    fn snapshot(&self) -> TransferStats {
        TransferStats {
            executions: self.executions.load(Ordering::Relaxed),
            host_to_device: self.host_to_device.load(Ordering::Relaxed),
            host_to_device_bytes: self.host_to_device_bytes.load(Ordering::Relaxed),
            device_to_host: self.device_to_host.load(Ordering::Relaxed),
            device_to_host_bytes: self.device_to_host_bytes.load(Ordering::Relaxed),
        }
    }
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
    /// Each state buffer's current value on the device: `None` until a run (or
    /// [`Session::write_state`]) replaces the initial value, which stays in `weights`.
    state_values: Mutex<Vec<Option<Buffer>>>,
}

/// The executables of a dynamic artifact, by the sizes they are specialized for.
struct DynamicState {
    section: DynamicShapes,
    options: LoadOptions,
    executables: Mutex<BTreeMap<Bindings, Arc<LoadedExecutable>>>,
}

/// An argument whose value the program computes anew each call.
#[derive(Clone, Copy, Debug)]
struct StateSlot {
    /// Index into `manifest.arguments`.
    arg: usize,
    /// Index into `manifest.outputs` of its next value.
    output: usize,
}

/// The state of a manifest: every output that `updates` an argument, checked (a
/// buffer of the same type, updated once; not with a partitioned program).
fn state_slots(manifest: &Manifest) -> std::result::Result<Vec<StateSlot>, String> {
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
        if a.kind != ArgumentKind::Buffer || a.dtype != spec.dtype || a.shape != spec.shape {
            return Err(format!(
                "output {output} `{}` ({}) updates argument `{name}` ({:?} {}): state must be a buffer of the same type",
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
    if !slots.is_empty() && manifest.partitioning.is_some() {
        return Err("a partitioned program with state is not supported".into());
    }
    Ok(slots)
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

fn shape_matches(expected: &[i64], actual: &[i64]) -> bool {
    // A negative expected dimension is dynamic and matches any size.
    expected.len() == actual.len() && expected.iter().zip(actual).all(|(&e, &a)| e < 0 || e == a)
}

fn describe(dtype: DType, shape: &[i64]) -> String {
    format!("{dtype}{shape:?}")
}

impl Session {
    /// Loads the artifact in `dir` onto addressable device 0 of `client`, using the
    /// executable cache in its default directory (see [`LoadOptions`]).
    pub fn load(dir: impl AsRef<Path>, client: &Client) -> Result<Session> {
        Session::load_with(dir, client, &LoadOptions::default())
    }

    /// Loads the artifact in `dir` onto addressable device 0 of `client`.
    ///
    /// Everything that can be checked without the device is checked first: manifest
    /// format, the StableHLO version against the plugin's accepted range, checksums of
    /// the program and the weights, and every weight's dtype and shape. Then the
    /// executable comes from the cache or the compiler (per `options.cache`), and the
    /// weights are uploaded once; they stay on the device for every run.
    pub fn load_with(
        dir: impl AsRef<Path>,
        client: &Client,
        options: &LoadOptions,
    ) -> Result<Session> {
        let load_start = Instant::now();
        let dir = dir.as_ref().to_path_buf();
        let manifest = read_manifest(&dir)?;
        // The HLO of a Neuron artifact (PJRT format "hlo"), else the StableHLO program,
        // whose version the plugin must accept.
        let (program_ref, format) = match (&manifest.neuron, options.program) {
            (Some(neuron), ProgramChoice::Auto) => (&neuron.hlo, "hlo"),
            _ => (&manifest.program, "mlir"),
        };
        if format == "mlir" {
            crate::version::check_stablehlo_version(
                &dir,
                &manifest.stablehlo_version,
                client.plugin(),
            )?;
        }
        let fail = |message: String| RuntimeError::Artifact {
            dir: dir.clone(),
            message,
        };
        if client.addressable_devices().is_empty() {
            return Err(fail("the client has no addressable device".into()));
        }
        let positions = device_positions(client, &manifest).map_err(fail)?;
        let state = state_slots(&manifest).map_err(fail)?;

        // Program: checksum, then compile once.
        let program_path = resolve(&dir, program_ref, "program")?;
        let program =
            std::fs::read(&program_path).map_err(|e| RuntimeError::io(&program_path, e))?;
        verify_checksum(&program_path, &program_ref.checksum, &program)?;

        // Weights: checksum, then check every weight argument against the file.
        let weight_args: Vec<&Argument> = manifest
            .arguments
            .iter()
            .filter(|a| a.kind != ArgumentKind::UserInput)
            .collect();
        let weights_file = if weight_args.is_empty() && manifest.weights.file.is_empty() {
            None
        } else {
            let path = resolve(&dir, &manifest.weights, "weights")?;
            let st = SafeTensors::open(&path)?;
            verify_checksum(&path, &manifest.weights.checksum, st.file_bytes())?;
            Some(st)
        };

        let mut slots = Vec::with_capacity(manifest.arguments.len());
        let mut user_inputs = Vec::new();
        let mut weight_tensors: Vec<(&str, crate::safetensors::TensorView)> = Vec::new();
        // Tied weights (several arguments naming one key) are uploaded once.
        // Of a partitioned artifact, per key and sharding: two arguments tied to one
        // weight may be split differently (an embedding and the LM head that reuses it).
        let mut uploaded: std::collections::HashMap<(&str, Option<&TensorSharding>), usize> =
            std::collections::HashMap::new();
        for (i, arg) in manifest.arguments.iter().enumerate() {
            if arg.kind == ArgumentKind::UserInput {
                slots.push(Slot::User(user_inputs.len()));
                user_inputs.push(i);
                continue;
            }
            let key = arg.weight.as_deref().ok_or_else(|| {
                fail(format!(
                    "argument {i} `{}` is a {:?} but names no weight",
                    arg.name, arg.kind
                ))
            })?;
            let st = weights_file
                .as_ref()
                .ok_or_else(|| fail("the manifest names no weights file".into()))?;
            let view = st.get(key).ok_or_else(|| {
                fail(format!(
                    "argument {i} `{}`: weight `{key}` is not in {}",
                    arg.name, manifest.weights.file
                ))
            })?;
            if view.dtype != arg.dtype || view.shape != arg.shape.as_slice() {
                return Err(fail(format!(
                    "argument {i} `{}`: weight `{key}` is {} in {}, the manifest says {}",
                    arg.name,
                    describe(view.dtype, view.shape),
                    manifest.weights.file,
                    describe(arg.dtype, &arg.shape)
                )));
            }
            let tie = (key, arg.sharding.as_ref());
            // A state argument gets its own buffer: its value changes, its tie's does not.
            let weight = weight_tensors.len();
            if let Some(k) = state.iter().position(|st| st.arg == i) {
                slots.push(Slot::State { weight, state: k });
                weight_tensors.push((key, view));
                continue;
            }
            if let Some(&slot) = uploaded.get(&tie) {
                slots.push(Slot::Weight(slot));
                continue;
            }
            uploaded.insert(tie, weight);
            slots.push(Slot::Weight(weight));
            weight_tensors.push((key, view));
        }

        let compile_options = match &manifest.partitioning {
            Some(p) => p.compile_options(),
            None => CompileOptions::default(),
        };
        let obtained = obtain_executable(client, &program, format, &compile_options, options)?;
        options.emit(LoadEvent::CompileEnd {
            source: obtained.source,
            elapsed: obtained.elapsed,
        });
        let executable = Arc::new(obtained.executable);
        if executable.num_outputs() != manifest.outputs.len() {
            return Err(fail(format!(
                "the program returns {} value(s), the manifest lists {} output(s)",
                executable.num_outputs(),
                manifest.outputs.len()
            )));
        }

        // Upload weights once; they stay on the device for every run.
        let upload_start = Instant::now();
        let count = weight_tensors.len();
        let total_bytes: u64 = weight_tensors
            .iter()
            .map(|(_, v)| v.data.len() as u64)
            .sum();
        options.emit(LoadEvent::UploadStart { count, total_bytes });
        let mut weights = Vec::with_capacity(count);
        let mut uploaded_bytes = 0u64;
        let weight_shardings: Vec<Option<&TensorSharding>> = {
            // The sharding of each uploaded weight: that of its first argument.
            let mut by_weight = vec![None; weight_tensors.len()];
            for (slot, arg) in slots.iter().zip(&manifest.arguments) {
                if let Slot::Weight(w) = *slot {
                    by_weight[w] = by_weight[w].or(arg.sharding.as_ref());
                }
            }
            by_weight
        };
        for (index, (name, view)) in weight_tensors.iter().enumerate() {
            weights.push(match &manifest.partitioning {
                Some(p) => {
                    // Every argument of a partitioned manifest has a sharding (checked
                    // when it was read); a full copy per device otherwise.
                    let sharding = sharding_or_whole(weight_shardings[index], view.shape.len());
                    let whole = HostTensor {
                        dtype: view.dtype,
                        shape: view.shape.to_vec(),
                        data: view.data.to_vec(),
                    };
                    let shards = sharding
                        .split_tensor(&p.mesh, &whole)
                        .map_err(|e| fail(format!("weight `{name}`: {e}")))?;
                    shards
                        .iter()
                        .zip(&positions)
                        .map(|(t, &d)| client.buffer_from_host(t, d))
                        .collect::<Result<Vec<_>>>()?
                }
                None => vec![client.buffer_from_slice(
                    view.dtype,
                    view.shape,
                    view.data,
                    positions[0],
                )?],
            });
            let bytes = view.data.len() as u64;
            uploaded_bytes += bytes;
            options.emit(LoadEvent::WeightUploaded {
                index,
                count,
                name,
                bytes,
                uploaded_bytes,
                total_bytes,
            });
        }
        let upload_elapsed = upload_start.elapsed();
        options.emit(LoadEvent::UploadEnd {
            total_bytes,
            elapsed: upload_elapsed,
        });
        let mut weight_bytes_per_device = vec![0u64; positions.len()];
        for per_position in &weights {
            for (p, b) in per_position.iter().enumerate() {
                let shape_bytes =
                    b.shape().iter().product::<i64>() as u64 * b.dtype()?.size_in_bytes() as u64;
                weight_bytes_per_device[p] += shape_bytes;
            }
        }
        let report = LoadReport {
            compile: obtained.source,
            compile_ms: millis(obtained.elapsed),
            weights_upload_ms: millis(upload_elapsed),
            weight_bytes: total_bytes,
            weight_count: count,
            weight_bytes_per_device,
            total_ms: millis(load_start.elapsed()),
            cache_key: obtained.key,
            cache_entry: obtained.entry,
            cache_warnings: obtained.warnings,
        };

        let dynamic = match &manifest.dynamic {
            Some(section) => {
                if manifest.partitioning.is_some() || manifest.neuron.is_some() {
                    return Err(fail(
                        "a dynamic program cannot be partitioned or have a Neuron form".into(),
                    ));
                }
                let first = section
                    .specializations
                    .first()
                    .ok_or_else(|| fail("the dynamic section lists no specialization".into()))?;
                if first.program != manifest.program {
                    return Err(fail(
                        "the first specialization of the dynamic section is not the program".into(),
                    ));
                }
                let mut executables = BTreeMap::new();
                executables.insert(first.sizes.clone(), executable.clone());
                Some(DynamicState {
                    section: section.clone(),
                    options: options.clone(),
                    executables: Mutex::new(executables),
                })
            }
            None => None,
        };

        Ok(Session {
            dir,
            manifest,
            client: client.clone(),
            executable,
            dynamic,
            weights,
            slots,
            user_inputs,
            positions,
            report,
            transfers: Transfers::default(),
            state_values: Mutex::new(state.iter().map(|_| None).collect()),
            state,
        })
    }

    /// Loads with a fresh client of `plugin` (default options).
    pub fn load_with_plugin(dir: impl AsRef<Path>, plugin: &Arc<Plugin>) -> Result<Session> {
        let client = plugin.create_client(&ClientOptions::default())?;
        Session::load(dir, &client)
    }

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
        crate::hlo::opcode_stats(module).ok_or_else(|| {
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

    /// The outputs [`Session::run`] returns, in order.
    /// The user outputs, in order (a stateful program's next state values, which
    /// follow them in the manifest, stay in the session).
    pub fn outputs(&self) -> &[TensorSpec] {
        &self.manifest.outputs[..self.manifest.outputs.len() - self.state.len()]
    }

    fn check_input(&self, index: usize, dtype: DType, shape: &[i64]) -> Result<()> {
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
    fn check_host_input(&self, index: usize, t: &HostTensor) -> Result<()> {
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
    fn input_error(&self, index: usize, message: String) -> RuntimeError {
        RuntimeError::InputMismatch {
            index,
            name: self.manifest.arguments[self.user_inputs[index]]
                .name
                .clone(),
            message,
        }
    }

    fn check_count(&self, got: usize) -> Result<()> {
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

    /// [`Session::run`] of a partitioned artifact: each input split by its sharding and
    /// each shard uploaded to its device, one execution over the mesh, and each output
    /// assembled from the devices' shards.
    fn run_partitioned(&self, inputs: &[HostTensor]) -> Result<Vec<HostTensor>> {
        let uploaded = self.upload_sharded(inputs)?;
        let outputs = self.run_sharded(&uploaded)?;
        self.assemble(&outputs)
    }

    fn mesh(&self) -> Result<&crate::sharding::Mesh> {
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
    /// ([`Session::assemble`] brings them back whole).
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
        let lists: Vec<Vec<&Buffer>> = (0..self.positions.len())
            .map(|pos| {
                self.slots
                    .iter()
                    .map(|s| match *s {
                        // A partitioned program has no state (refused at load).
                        Slot::Weight(w) | Slot::State { weight: w, .. } => &self.weights[w][pos],
                        Slot::User(u) => &inputs.tensors[u][pos],
                    })
                    .collect()
            })
            .collect();
        let refs: Vec<&[&Buffer]> = lists.iter().map(|l| l.as_slice()).collect();
        let per_device = self.executable.execute_sharded(&refs)?;
        self.transfers.executed();
        // per_device[position][output] -> tensors[output][position]
        let mut tensors: Vec<Vec<Buffer>> = (0..self.manifest.outputs.len())
            .map(|_| Vec::with_capacity(per_device.len()))
            .collect();
        for outputs in per_device {
            for (i, b) in outputs.into_iter().enumerate() {
                if let Some(t) = tensors.get_mut(i) {
                    t.push(b);
                }
            }
        }
        Ok(ShardedBuffers { tensors })
    }

    /// For a partitioned artifact: the outputs of [`Session::run_sharded`] downloaded
    /// and assembled from their shards.
    pub fn assemble(&self, outputs: &ShardedBuffers) -> Result<Vec<HostTensor>> {
        let mesh = self.mesh()?;
        let mut whole_outputs = Vec::with_capacity(self.manifest.outputs.len());
        for (i, spec) in self.manifest.outputs.iter().enumerate() {
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

    /// What this session's runs moved between host and devices since it was loaded.
    /// Buffers a caller uploads or downloads itself around [`Session::run_buffers`] are
    /// the caller's and not counted.
    pub fn transfer_stats(&self) -> TransferStats {
        self.transfers.snapshot()
    }

    fn download(&self, b: &Buffer) -> Result<HostTensor> {
        let t = b.to_host()?;
        self.transfers.downloaded(&t);
        Ok(t)
    }

    /// Runs the program on inputs already on the session's device; outputs stay there.
    /// Returns the user outputs; a stateful program's new state stays in the session.
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
                Slot::Weight(w) => &self.weights[w][0],
                Slot::State { weight, state: k } => {
                    state[k].as_ref().unwrap_or(&self.weights[weight][0])
                }
                Slot::User(u) => inputs[u],
            })
            .collect();
        // A state value a run produced is donated to the next run, which writes its
        // update into it (the program aliases each state argument to its output); the
        // artifact's initial values are never donated, so reset_state can return to
        // them.
        let donate: Vec<usize> = self
            .state
            .iter()
            .zip(state.iter())
            .filter(|(_, held)| held.is_some())
            .map(|(st, _)| st.arg)
            .collect();
        let shapes: Vec<&[i64]> = inputs.iter().map(|b| b.shape()).collect();
        let (executable, sizes) = self.executable_for(&shapes)?;
        let outputs = executable.execute_donating(&args, &donate)?;
        self.transfers.executed();
        for (i, (b, spec)) in outputs.iter().zip(&self.manifest.outputs).enumerate() {
            let dtype = b.dtype()?;
            let expected = match (&self.dynamic, &sizes) {
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
        let mut outputs = outputs;
        let next_state = outputs.split_off(outputs.len() - self.state.len());
        for (slot, b) in state.iter_mut().zip(next_state) {
            *slot = Some(b);
        }
        Ok(outputs)
    }

    /// Of a dynamic artifact, the sizes of a call with inputs of `shapes` (user inputs
    /// in order): an error names the symbol, its range and the inputs; `None` for a
    /// static artifact.
    pub fn sizes(&self, shapes: &[&[i64]]) -> Result<Option<Bindings>> {
        let Some(d) = &self.dynamic else {
            return Ok(None);
        };
        let inputs = self.inputs();
        if inputs.len() != d.section.inputs.len() || shapes.len() != inputs.len() {
            return Err(RuntimeError::Artifact {
                dir: self.dir.clone(),
                message: "the dynamic section does not list every user input".into(),
            });
        }
        let tensors: Vec<crate::symbolic::DimsOf<'_>> = inputs
            .iter()
            .zip(&d.section.inputs)
            .map(|(a, dims)| crate::symbolic::DimsOf {
                name: &a.name,
                dims,
            })
            .collect();
        crate::symbolic::bind(&d.section.symbols, &tensors, shapes)
            .map(Some)
            .map_err(RuntimeError::Sizes)
    }

    /// The executable for inputs of `shapes`, and their sizes (dynamic artifacts): the
    /// artifact's specialization for them, or one made by the load options'
    /// specializer, compiled (or found in the cache) once per session.
    fn executable_for(
        &self,
        shapes: &[&[i64]],
    ) -> Result<(Arc<LoadedExecutable>, Option<Bindings>)> {
        let (Some(d), Some(sizes)) = (&self.dynamic, self.sizes(shapes)?) else {
            return Ok((self.executable.clone(), None));
        };
        let mut held = d
            .executables
            .lock()
            .map_err(|_| RuntimeError::InvalidArgument("a run panicked mid-compile".into()))?;
        if let Some(e) = held.get(&sizes) {
            return Ok((e.clone(), Some(sizes)));
        }
        let start = Instant::now();
        let fail = |message: String| RuntimeError::Artifact {
            dir: self.dir.clone(),
            message,
        };
        let listed = d.section.specializations.iter().find(|s| s.sizes == sizes);
        let (program, specialized) = match (listed, &d.options.specializer) {
            (Some(spec), _) => {
                let path = resolve(&self.dir, &spec.program, "program")?;
                let bytes = std::fs::read(&path).map_err(|e| RuntimeError::io(&path, e))?;
                verify_checksum(&path, &spec.program.checksum, &bytes)?;
                (bytes, None)
            }
            (None, Some(specialize)) => {
                let text = specialize(&self.dir, &self.manifest, &sizes).map_err(|e| {
                    RuntimeError::Sizes(format!(
                        "specializing the program for {}: {e}",
                        crate::symbolic::describe_bindings(&sizes)
                    ))
                })?;
                (text.into_bytes(), Some(start.elapsed()))
            }
            (None, None) => {
                let has: Vec<String> = d
                    .section
                    .specializations
                    .iter()
                    .map(|s| crate::symbolic::describe_bindings(&s.sizes))
                    .collect();
                return Err(RuntimeError::Sizes(format!(
                    "the artifact holds no program for the sizes {} (it holds {}); compile it with `--specialize {}`, or run it with the full tpuc, which specializes on demand",
                    crate::symbolic::describe_bindings(&sizes),
                    has.join("; "),
                    crate::symbolic::describe_bindings(&sizes).replace(' ', "")
                )));
            }
        };
        let obtained = obtain_executable(
            &self.client,
            &program,
            "mlir",
            &CompileOptions::default(),
            &d.options,
        )?;
        if obtained.executable.num_outputs() != self.manifest.outputs.len() {
            return Err(fail(format!(
                "the program for {} returns {} value(s), the manifest lists {} output(s)",
                crate::symbolic::describe_bindings(&sizes),
                obtained.executable.num_outputs(),
                self.manifest.outputs.len()
            )));
        }
        d.options.emit(LoadEvent::Specialized {
            sizes: &sizes,
            specialized,
            source: obtained.source,
            elapsed: obtained.elapsed,
        });
        let executable = Arc::new(obtained.executable);
        held.insert(sizes.clone(), executable.clone());
        Ok((executable, Some(sizes)))
    }

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

    /// Back to the initial state (the artifact's values; they never left the device).
    pub fn reset_state(&self) -> Result<()> {
        let mut state = self.lock_state()?;
        state.iter_mut().for_each(|v| *v = None);
        Ok(())
    }

    /// The current value of state `name` (downloaded: to save a cache, say).
    pub fn read_state(&self, name: &str) -> Result<HostTensor> {
        let k = self.state_index(name)?;
        // Downloaded under the lock: a run would donate the buffer.
        let state = self.lock_state()?;
        match &state[k] {
            Some(b) => self.download(b),
            None => match self.slots[self.state[k].arg] {
                Slot::State { weight, .. } => self.download(&self.weights[weight][0]),
                _ => unreachable!("state arguments have state slots"),
            },
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
        let b = self.client.buffer_from_host(value, self.positions[0])?;
        self.transfers.uploaded(value);
        self.lock_state()?[k] = Some(b);
        Ok(())
    }

    fn lock_state(&self) -> Result<std::sync::MutexGuard<'_, Vec<Option<Buffer>>>> {
        self.state_values.lock().map_err(|_| {
            RuntimeError::InvalidArgument("a run panicked while holding the state".into())
        })
    }
}

/// Reads and validates `dir/manifest.json` (format version; no device work).
pub fn read_manifest(dir: &Path) -> Result<Manifest> {
    let path = dir.join(MANIFEST_FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| RuntimeError::io(&path, e))?;
    parse_manifest(&text, dir)
}

/// Parses and validates the text of a manifest (of the artifact at `dir`, for messages).
pub fn parse_manifest(text: &str, dir: &Path) -> Result<Manifest> {
    let manifest: Manifest = serde_json::from_str(text).map_err(|e| RuntimeError::Artifact {
        dir: dir.to_path_buf(),
        message: format!("{MANIFEST_FILE} is invalid: {e}"),
    })?;
    if !(OLDEST_FORMAT_VERSION..=FORMAT_VERSION).contains(&manifest.format_version) {
        return Err(RuntimeError::Artifact {
            dir: dir.to_path_buf(),
            message: format!(
                "artifact format version {} is not supported (this runtime reads versions {OLDEST_FORMAT_VERSION} to {FORMAT_VERSION}); recompile the model",
                manifest.format_version
            ),
        });
    }
    check_partitioning(&manifest).map_err(|message| RuntimeError::Artifact {
        dir: dir.to_path_buf(),
        message,
    })?;
    Ok(manifest)
}

/// The addressable device index that runs each mesh position: device 0 for an
/// unpartitioned artifact; the device of each id of the mesh's device order otherwise,
/// an error when the client does not have them all.
fn device_positions(
    client: &Client,
    manifest: &Manifest,
) -> std::result::Result<Vec<usize>, String> {
    let Some(p) = &manifest.partitioning else {
        return Ok(vec![0]);
    };
    let devices = client.addressable_devices();
    if devices.len() < p.mesh.num_devices() {
        return Err(format!(
            "the artifact is partitioned over the mesh {} ({} devices), but the client has {} addressable device(s){}",
            p.mesh,
            p.mesh.num_devices(),
            devices.len(),
            if client.platform_name() == "cpu" {
                format!(" (the CPU plugin makes as many as asked: ClientOptions::cpu({}))", p.mesh.num_devices())
            } else {
                String::new()
            }
        ));
    }
    p.mesh
        .device_ids
        .iter()
        .map(|&id| {
            devices
                .iter()
                .position(|d| i64::from(d.id) == id)
                .ok_or_else(|| {
                    format!("the mesh's device {id} is not an addressable device of the client")
                })
        })
        .collect()
}

/// The checks of a partitioned manifest: its compile options agree with its mesh, and
/// every argument and output has a sharding valid on the mesh for its shape.
fn check_partitioning(manifest: &Manifest) -> std::result::Result<(), String> {
    let Some(p) = &manifest.partitioning else {
        return Ok(());
    };
    crate::sharding::Mesh::new(p.mesh.axes.clone(), Some(p.mesh.device_ids.clone()))
        .map_err(|e| format!("partitioning: {e}"))?;
    if p.num_partitions as usize != p.mesh.num_devices() || !p.use_spmd_partitioning {
        return Err(format!(
            "partitioning: {} partitions (SPMD {}) for a mesh of {} devices",
            p.num_partitions,
            p.use_spmd_partitioning,
            p.mesh.num_devices()
        ));
    }
    if p.use_shardy_partitioner != (p.format == crate::manifest::ShardingFormat::Shardy) {
        return Err(
            "partitioning: the Shardy partitioner is used exactly for Shardy shardings".into(),
        );
    }
    let specs = manifest
        .arguments
        .iter()
        .map(|a| ("argument", &a.name, &a.shape, &a.sharding))
        .chain(
            manifest
                .outputs
                .iter()
                .map(|o| ("output", &o.name, &o.shape, &o.sharding)),
        );
    for (what, name, shape, sharding) in specs {
        let Some(sharding) = sharding else {
            return Err(format!(
                "{what} `{name}` of a partitioned artifact has no sharding"
            ));
        };
        sharding
            .check(&p.mesh, shape)
            .map_err(|e| format!("{what} `{name}`: {e}"))?;
    }
    Ok(())
}

/// Resolves a file of the artifact, refusing paths that leave the artifact directory.
fn resolve(dir: &Path, file: &FileRef, what: &str) -> Result<PathBuf> {
    let rel = Path::new(&file.file);
    let inside = !file.file.is_empty()
        && rel
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if !inside {
        return Err(RuntimeError::Artifact {
            dir: dir.to_path_buf(),
            message: format!(
                "{what} file `{}` must be a relative path inside the artifact",
                file.file
            ),
        });
    }
    Ok(dir.join(rel))
}

fn verify_checksum(path: &Path, expected: &Checksum, bytes: &[u8]) -> Result<()> {
    if !expected.matches(bytes) {
        return Err(RuntimeError::Checksum {
            path: path.to_path_buf(),
            algorithm: expected.algorithm(),
            expected: expected.hex().to_string(),
            actual: expected.same_kind_of(bytes).hex().to_string(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksums_of_known_input() {
        // The published test vectors of both algorithms for "abc".
        let blake3 = "6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85";
        let sha256 = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(Checksum::of(b"abc"), Checksum::Blake3(blake3.into()));
        assert!(Checksum::Sha256(sha256.into()).matches(b"abc"));
        assert!(Checksum::Sha256(sha256.to_uppercase()).matches(b"abc"));
        assert!(!Checksum::Sha256(sha256.into()).matches(b"abd"));
        assert!(!Checksum::Blake3(sha256.into()).matches(b"abc"));
    }

    #[test]
    fn checksum_is_one_field_named_by_its_algorithm() {
        let r = FileRef {
            file: "w".into(),
            checksum: Checksum::Blake3("00".into()),
        };
        let text = serde_json::to_string(&r).unwrap();
        assert_eq!(text, r#"{"file":"w","blake3":"00"}"#);
        let old: FileRef = serde_json::from_str(r#"{"file":"w","sha256":"ab"}"#).unwrap();
        assert_eq!(old.checksum, Checksum::Sha256("ab".into()));
    }

    #[test]
    fn dynamic_dims_match_anything() {
        assert!(shape_matches(&[-1, 3], &[7, 3]));
        assert!(!shape_matches(&[2, 3], &[3, 2]));
        assert!(!shape_matches(&[2], &[2, 1]));
    }

    #[test]
    fn artifact_paths_stay_inside() {
        let f = |s: &str| FileRef {
            file: s.into(),
            checksum: Checksum::of(b""),
        };
        let dir = Path::new("/a");
        assert!(resolve(dir, &f("program.mlir"), "program").is_ok());
        assert!(resolve(dir, &f("../x"), "program").is_err());
        assert!(resolve(dir, &f("/etc/passwd"), "program").is_err());
        assert!(resolve(dir, &f(""), "program").is_err());
    }
}
