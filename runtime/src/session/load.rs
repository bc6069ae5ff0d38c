//! Loading an artifact: [`Session::load_with`] validates everything it can without
//! the device, obtains the executable (from the [executable cache](crate::cache) or by
//! compiling) and uploads the weights once.

use super::dynamic::DynamicState;
use super::run::Transfers;
use super::sharded::sharding_or_whole;
use super::state::state_slots;
use super::validate::{
    check_dynamic, describe, device_positions, read_manifest, resolve, verify_checksum,
};
use super::{Session, Slot};
use crate::cache::{self, CacheKey, Miss};
use crate::compile_options::CompileOptions;
use crate::error::{Result, RuntimeError};
use crate::manifest::{Argument, ArgumentKind, Manifest};
use crate::pjrt::{Client, ClientOptions, LoadedExecutable, Plugin};
use crate::safetensors::SafeTensors;
use crate::sharding::TensorSharding;
use crate::symbolic::Bindings;
use crate::HostTensor;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
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

    pub(super) fn emit(&self, event: LoadEvent<'_>) {
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

pub(super) fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The executable of a load and how it was obtained.
pub(super) struct Obtained {
    pub(super) executable: LoadedExecutable,
    pub(super) source: CompileSource,
    pub(super) elapsed: Duration,
    pub(super) key: Option<CacheKey>,
    pub(super) entry: Option<PathBuf>,
    pub(super) warnings: Vec<String>,
}

/// Gets the executable of `program` from the cache, or compiles it (and stores it).
pub(super) fn obtain_executable(
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
    /// the program and the weights, every weight's dtype and shape, the state and the
    /// dynamic section. Then the executable comes from the cache or the compiler (per
    /// `options.cache`), and the weights are uploaded once; they stay on the device for
    /// every run.
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
        check_dynamic(&manifest).map_err(fail)?;

        // Program: checksum, then compile once.
        let program_path = resolve(&dir, program_ref, "program")?;
        let program =
            std::fs::read(&program_path).map_err(|e| RuntimeError::io(&program_path, e))?;
        verify_checksum(&program_path, &program_ref.checksum, &program)?;

        // Weights: checksum, then check every weight argument against the file.
        let weight_args: Vec<&Argument> = manifest
            .arguments
            .iter()
            .filter(|a| {
                !matches!(
                    a.kind,
                    ArgumentKind::UserInput | ArgumentKind::OptimizerState
                )
            })
            .collect();
        // Optimizer state starts at zero and is not stored: its initial values view
        // one buffer of zeros, as long as the largest.
        let zero_bytes = manifest
            .arguments
            .iter()
            .filter(|a| a.kind == ArgumentKind::OptimizerState)
            .map(|a| a.shape.iter().product::<i64>().max(0) as usize * a.dtype.size_in_bytes())
            .max()
            .unwrap_or(0);
        let zeros = vec![0u8; zero_bytes];
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
            if arg.kind == ArgumentKind::OptimizerState {
                let k = state.iter().position(|st| st.arg == i).ok_or_else(|| {
                    fail(format!(
                        "argument {i} `{}` is optimizer state but no output updates it",
                        arg.name
                    ))
                })?;
                let n =
                    arg.shape.iter().product::<i64>().max(0) as usize * arg.dtype.size_in_bytes();
                slots.push(Slot::State {
                    weight: weight_tensors.len(),
                    state: k,
                });
                weight_tensors.push((
                    arg.name.as_str(),
                    crate::safetensors::TensorView {
                        name: arg.name.as_str(),
                        dtype: arg.dtype,
                        shape: &arg.shape,
                        data: &zeros[..n],
                    },
                ));
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
                if let Slot::Weight(w) | Slot::State { weight: w, .. } = *slot {
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

        // The dynamic section was checked before anything was compiled or uploaded.
        let dynamic = match &manifest.dynamic {
            Some(section) => {
                let mut executables = BTreeMap::new();
                if let Some(first) = section.specializations.first() {
                    executables.insert(first.sizes.clone(), executable.clone());
                }
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
            initial_released: false,
            state,
        })
    }

    /// Loads with a fresh client of `plugin` (default options).
    pub fn load_with_plugin(dir: impl AsRef<Path>, plugin: &Arc<Plugin>) -> Result<Session> {
        let client = plugin.create_client(&ClientOptions::default())?;
        Session::load(dir, &client)
    }
}
