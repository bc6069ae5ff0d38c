//! Writing artifacts: `manifest.json`, `program.mlir` and `weights.safetensors` in a
//! directory (layout in `tpuc_artifact::layout`).
//!
//! Everything is written into a temporary sibling directory and renamed into place at
//! the end, so a failed compile leaves nothing half-written; an existing directory is
//! only replaced when it is itself a tpuc artifact. Weights stream from the source
//! archive to the safetensors file one chunk at a time. Output is deterministic: the
//! same input gives byte-identical files.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use tpuc_artifact::manifest::{
    Argument, ArgumentKind, Checksum, FileRef, Manifest, TensorSpec, FORMAT_VERSION,
};
use tpuc_artifact::DType;

use crate::error::CompileError;
use crate::frontend::{ExportedModel, InputKind, StreamError, WeightRange};
use crate::options::{CompileOptions, CompileReport};
use crate::{MissingWeights, Progress, STABLEHLO_VERSION};

pub use tpuc_artifact::layout::{MANIFEST_FILE, PROGRAM_FILE, WEIGHTS_FILE};

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> CompileError + '_ {
    move |source| CompileError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Refuses outputs that would overwrite the input or a file that is not an artifact.
pub fn check_output_path(input: &Path, output: &Path) -> Result<(), CompileError> {
    let refuse = |reason: &str| {
        Err(CompileError::Output {
            path: output.to_path_buf(),
            reason: reason.to_string(),
        })
    };
    if let (Ok(a), Ok(b)) = (input.canonicalize(), output.canonicalize()) {
        if a == b || a.starts_with(&b) {
            return refuse("it is (or contains) the input model");
        }
    }
    if output.exists() {
        if !output.is_dir() {
            return refuse("it exists and is not a tpuc artifact directory");
        }
        let is_artifact = output.join(MANIFEST_FILE).is_file();
        let empty = std::fs::read_dir(output)
            .map(|mut d| d.next().is_none())
            .unwrap_or(false);
        if !is_artifact && !empty {
            return refuse(
                "it is a non-empty directory that is not a tpuc artifact (no manifest.json)",
            );
        }
    }
    Ok(())
}

/// The checksum of a file ([`Checksum::of`]'s algorithm), streamed.
pub fn checksum_file(path: &Path) -> Result<Checksum, CompileError> {
    let mut f = File::open(path).map_err(io_err(path))?;
    let mut h = blake3::Hasher::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).map_err(io_err(path))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(Checksum::Blake3(h.finalize().to_hex().to_string()))
}

/// Bytes of the safetensors file for the hashing thread, in file order.
enum Piece<'m> {
    /// A weight's range of the mapped source; its entry's pages are released once
    /// hashed.
    Mapped(&'m [u8], &'m str),
    Owned(Vec<u8>),
}

/// The safetensors file being written, and the hashing thread's queue: the main
/// thread writes (or has the kernel copy) the bytes while a second thread hashes them.
struct WeightsFile<'m> {
    out: BufWriter<File>,
    hash: std::sync::mpsc::SyncSender<Piece<'m>>,
    written: u64,
}

impl<'m> WeightsFile<'m> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.out.write_all(bytes)?;
        self.written += bytes.len() as u64;
        // The hasher only ends early when the main thread has already failed.
        let _ = self.hash.send(Piece::Owned(bytes.to_vec()));
        Ok(())
    }

    /// Copies a weight's range of the source file by `copy_file_range` (through
    /// `std::io::copy`), without passing it through this process: on the machines
    /// measured, about four times faster than writing the same bytes.
    fn copy(&mut self, range: &WeightRange<'m>) -> std::io::Result<()> {
        use std::io::Seek;
        let mut src = range.file;
        src.seek(std::io::SeekFrom::Start(range.offset))?;
        let len = range.bytes.len() as u64;
        let n = std::io::copy(&mut src.take(len), &mut self.out)?;
        if n != len {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!("the source ended after {n} of {len} bytes of a weight"),
            ));
        }
        self.written += n;
        let _ = self.hash.send(Piece::Mapped(range.bytes, range.entry));
        Ok(())
    }
}

struct WeightEntry {
    /// The graph inputs whose bytes it holds, in order (several for a packed weight).
    sources: Vec<String>,
    key: String,
    dtype: DType,
    shape: Vec<i64>,
    bytes: u64,
}

/// The argument and weight entry of a packed weight: the parameters at `sources`
/// (graph input positions) concatenated along dimension 0, named and keyed by their
/// names joined with `+`.
fn packed_weight(
    model: &ExportedModel,
    sources: &[usize],
) -> Result<(Argument, WeightEntry), CompileError> {
    let graph = &model.graph;
    let mut names = Vec::new();
    let mut keys = Vec::new();
    let mut shape: Option<Vec<i64>> = None;
    let mut dtype = None;
    for &i in sources {
        let spec = graph.inputs.get(i).ok_or_else(|| {
            CompileError::Internal(format!("packed weight source {i} is not an input"))
        })?;
        let meta = &graph.tensors[&spec.name];
        names.push(spec.name.clone());
        keys.push(spec.target.clone().unwrap_or_else(|| spec.name.clone()));
        match &mut shape {
            None => shape = Some(meta.shape.clone()),
            Some(s) if s.len() == meta.shape.len() && s[1..] == meta.shape[1..] => {
                s[0] += meta.shape[0];
            }
            Some(_) => {
                return Err(CompileError::Internal(format!(
                    "packed weight sources disagree in shape at `{}`",
                    spec.name
                )))
            }
        }
        dtype = Some(meta.dtype);
    }
    let (Some(shape), Some(dtype)) = (shape, dtype) else {
        return Err(CompileError::Internal(
            "a packed weight without sources".into(),
        ));
    };
    let key = keys.join("+");
    let n: i64 = shape.iter().product();
    let entry = WeightEntry {
        sources: names.clone(),
        key: key.clone(),
        dtype,
        shape: shape.clone(),
        bytes: n as u64 * dtype.size_in_bytes() as u64,
    };
    let argument = Argument {
        name: names.join("+"),
        kind: ArgumentKind::Parameter,
        dtype,
        shape,
        weight: Some(key),
        zero_filled: !model.has_weights(),
        packed: Some(keys),
        sharding: None,
    };
    Ok((argument, entry))
}

/// Writes the safetensors file, streaming each weight; returns its checksum and the
/// number of zero-filled weights.
fn write_safetensors(
    model: &ExportedModel,
    entries: &[WeightEntry],
    path: &Path,
    options: &CompileOptions,
) -> Result<(Checksum, usize), CompileError> {
    let mut sorted: Vec<&WeightEntry> = entries.iter().collect();
    sorted.sort_by(|a, b| a.key.cmp(&b.key));
    let mut header = serde_json::Map::new();
    let mut meta = serde_json::Map::new();
    meta.insert("format".into(), "tpuc".into());
    header.insert("__metadata__".into(), serde_json::Value::Object(meta));
    let mut offset = 0u64;
    for e in &sorted {
        header.insert(
            e.key.clone(),
            serde_json::json!({
                "dtype": tpuc_artifact::safetensors::dtype_name(e.dtype),
                "shape": e.shape,
                "data_offsets": [offset, offset + e.bytes],
            }),
        );
        offset += e.bytes;
    }
    let mut text = serde_json::to_string(&serde_json::Value::Object(header))
        .map_err(|e| CompileError::Internal(e.to_string()))?;
    while text.len() % 8 != 0 {
        text.push(' ');
    }
    let file = File::create(path).map_err(io_err(path))?;
    // A short queue: each mapped piece stays resident until it is hashed.
    let (hash, queue) = std::sync::mpsc::sync_channel::<Piece>(4);
    std::thread::scope(|s| {
        let hasher = s.spawn(move || {
            let mut h = blake3::Hasher::new();
            for piece in queue {
                match piece {
                    Piece::Mapped(bytes, entry) => {
                        h.update(bytes);
                        model.release_weight(entry);
                    }
                    Piece::Owned(bytes) => {
                        h.update(&bytes);
                    }
                }
            }
            Checksum::Blake3(h.finalize().to_hex().to_string())
        });
        let mut w = WeightsFile {
            out: BufWriter::with_capacity(1 << 20, file),
            hash,
            written: 0,
        };
        let zero_filled = write_weights(model, &sorted, &text, &mut w, path, options)?;
        w.out.flush().map_err(io_err(path))?;
        drop(w);
        let digest = hasher
            .join()
            .map_err(|_| CompileError::Internal("hashing the weights panicked".into()))?;
        Ok((digest, zero_filled))
    })
}

/// Writes the header `text` and each weight in `sorted` order to `w`; returns the
/// number of zero-filled weights.
fn write_weights<'m>(
    model: &'m ExportedModel,
    sorted: &[&WeightEntry],
    text: &str,
    w: &mut WeightsFile<'m>,
    path: &Path,
    options: &CompileOptions,
) -> Result<usize, CompileError> {
    let err = io_err(path);
    let stream_err = |e| match e {
        StreamError::Read(e) => CompileError::Frontend(e),
        StreamError::Write(e) => err(e),
    };
    w.write(&(text.len() as u64).to_le_bytes()).map_err(&err)?;
    w.write(text.as_bytes()).map_err(&err)?;
    let mut zero_filled = 0;
    let total: u64 = sorted.iter().map(|e| e.bytes).sum();
    let start = w.written;
    options.report(Progress::Weights { done: 0, total });
    for e in sorted {
        let before = w.written;
        for arg in &e.sources {
            if let Some(range) = model.weight_range(arg).map_err(stream_err)? {
                w.copy(&range).map_err(&err)?;
                options.report(Progress::Weights {
                    done: w.written - start,
                    total,
                });
                continue;
            }
            let found = model
                .stream_weight(arg, &mut |chunk| {
                    w.write(chunk)?;
                    options.report(Progress::Weights {
                        done: w.written - start,
                        total,
                    });
                    Ok(())
                })
                .map_err(stream_err)?;
            if !found {
                zero_filled += 1;
                let meta = &model.graph.tensors[arg];
                let bytes =
                    meta.shape.iter().product::<i64>() as u64 * meta.dtype.size_in_bytes() as u64;
                let zeros = vec![0u8; (1 << 16).min(bytes as usize)];
                let mut left = bytes;
                while left > 0 {
                    let n = left.min(zeros.len() as u64) as usize;
                    w.write(&zeros[..n]).map_err(&err)?;
                    left -= n as u64;
                }
            }
        }
        if w.written - before != e.bytes {
            return Err(CompileError::Internal(format!(
                "weight `{}` wrote {} bytes, expected {}",
                e.key,
                w.written - before,
                e.bytes
            )));
        }
    }
    Ok(zero_filled)
}

/// How a sharded compile partitioned the program: the manifest's `partitioning` and
/// the sharding of every argument and output of `@main`, in order.
pub struct Partitioned {
    pub partitioning: tpuc_artifact::manifest::Partitioning,
    pub arguments: Vec<tpuc_artifact::sharding::TensorSharding>,
    pub outputs: Vec<tpuc_artifact::sharding::TensorSharding>,
}

/// A Neuron artifact's HLO: the serialized module, its text, and the manifest
/// section (whose file references [`write`] fills in).
pub struct NeuronFiles {
    pub hlo: Vec<u8>,
    pub text: String,
    pub program: tpuc_artifact::manifest::NeuronProgram,
}

/// What a compile produced, for [`write`]: the StableHLO `program` and what goes with it.
pub struct Program<'a> {
    pub text: &'a str,
    /// The program with node locations: what [`CompileOptions::finish`] gets.
    pub located: Option<&'a str>,
    /// `stablehlo-merge-dots`' record when it packed weights: for each argument of the
    /// program, the graph inputs it holds (several for a packed weight).
    pub origins: Option<&'a [Vec<usize>]>,
    pub partitioned: Option<Partitioned>,
    /// A Neuron target's HLO.
    pub neuron: Option<NeuronFiles>,
    /// `--debug-outputs`: the graph values returned as outputs, for the manifest.
    pub debug_values: Vec<tpuc_artifact::manifest::DebugValue>,
    /// `--train`: the training step's layout (its optimizer's arguments and outputs).
    pub training: Option<&'a crate::training::Layout>,
    /// The exported graph's own FLOPs per call ([`crate::model_flops`]).
    pub model_flops: f64,
}

/// The manifest's outputs of an inference program: the user outputs, then the
/// buffers' next values (what `@main` returns).
fn user_and_state_outputs(
    graph: &crate::frontend::Graph,
    updates: &[crate::import::StateUpdate],
    partitioned: Option<&Partitioned>,
) -> Vec<TensorSpec> {
    graph
        .outputs
        .iter()
        .map(|n| (n, None))
        .chain(updates.iter().map(|u| (&u.input, Some(u.input.clone()))))
        .enumerate()
        .map(|(i, (n, updates))| {
            let m = &graph.tensors[n];
            TensorSpec {
                name: n.clone(),
                dtype: m.dtype,
                shape: m.shape.clone(),
                sharding: partitioned.and_then(|p| p.outputs.get(i).cloned()),
                updates,
            }
        })
        .collect()
}

/// Writes the artifact for `model` with `program` to `output`.
pub fn write(
    model: &ExportedModel,
    program: Program<'_>,
    output: &Path,
    options: &CompileOptions,
) -> Result<CompileReport, CompileError> {
    let Program {
        text: program,
        located: located_program,
        origins,
        partitioned,
        neuron,
        debug_values,
        training,
        model_flops,
    } = program;
    check_output_path(&model.source, output)?;
    let graph = &model.graph;
    let as_inputs = !model.has_weights() && options.missing_weights == MissingWeights::AsInputs;
    let mut arguments = Vec::new();
    let mut weights = Vec::new();
    // Tied weights (one storage, several parameters) are stored once under the first
    // name; every argument that shares it names that key.
    let mut keys_by_identity: std::collections::HashMap<String, String> =
        std::collections::HashMap::new();
    let unpacked: Vec<Vec<usize>>;
    let origins = match origins {
        Some(o) => o,
        None => {
            unpacked = (0..graph.inputs.len()).map(|i| vec![i]).collect();
            &unpacked
        }
    };
    for sources in origins {
        if sources.len() > 1 {
            let (argument, entry) = packed_weight(model, sources)?;
            arguments.push(argument);
            weights.push(entry);
            continue;
        }
        let spec = graph.inputs.get(sources[0]).ok_or_else(|| {
            CompileError::Internal(format!("argument origin {} is not an input", sources[0]))
        })?;
        let meta = &graph.tensors[&spec.name];
        let kind = match spec.kind {
            InputKind::Parameter => ArgumentKind::Parameter,
            InputKind::Buffer => ArgumentKind::Buffer,
            InputKind::Constant => ArgumentKind::Constant,
            InputKind::UserInput => ArgumentKind::UserInput,
        };
        let is_weight = kind != ArgumentKind::UserInput && !as_inputs;
        let mut key = spec.target.clone().unwrap_or_else(|| spec.name.clone());
        let identity = model.weight_identity(&spec.name);
        let shared = identity
            .as_ref()
            .and_then(|id| keys_by_identity.get(id))
            .cloned();
        if let (true, Some(existing)) = (is_weight, shared) {
            key = existing;
        } else if is_weight {
            if let Some(id) = identity {
                keys_by_identity.insert(id, key.clone());
            }
            let n: i64 = meta.shape.iter().product();
            weights.push(WeightEntry {
                sources: vec![spec.name.clone()],
                key: key.clone(),
                dtype: meta.dtype,
                shape: meta.shape.clone(),
                bytes: n as u64 * meta.dtype.size_in_bytes() as u64,
            });
        }
        arguments.push(Argument {
            name: spec.name.clone(),
            kind: if is_weight {
                kind
            } else {
                ArgumentKind::UserInput
            },
            dtype: meta.dtype,
            shape: meta.shape.clone(),
            // A weight passed as an input (`--weights-as-inputs`) keeps the name of the
            // state-dict tensor it stands for.
            weight: (is_weight || (as_inputs && kind != ArgumentKind::UserInput)).then_some(key),
            zero_filled: is_weight && !model.has_weights(),
            packed: None,
            sharding: partitioned
                .as_ref()
                .and_then(|p| p.arguments.get(arguments.len()).cloned()),
        });
    }
    // A training step: the optimizer's arguments follow the graph's, and its outputs
    // are the report, then every state's next value.
    let training = training.map(|layout| {
        let shardings = partitioned.as_ref().map(|p| p.arguments.as_slice());
        arguments.extend(layout.arguments(graph, shardings));
        let results = partitioned.as_ref().map(|p| p.outputs.as_slice());
        (
            layout.outputs(&arguments, results),
            layout.section(&arguments),
        )
    });
    // The user outputs, then the buffers' next values (what `@main` returns).
    let updates = crate::import::state_updates(graph);
    let (outputs, training) = match training {
        Some((outputs, section)) => (outputs, Some(section)),
        None => (
            user_and_state_outputs(graph, &updates, partitioned.as_ref()),
            None,
        ),
    };

    // Build everything in a sibling temporary directory, then move it into place.
    let parent = output
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let base = output
        .file_name()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_else(|| "artifact".into());
    let tmp: PathBuf = parent.join(format!(".{base}.tpuc-tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(io_err(&tmp))?;
    let result = (|| {
        let program_path = tmp.join(PROGRAM_FILE);
        std::fs::write(&program_path, program).map_err(io_err(&program_path))?;
        // The source and program hashes are computed on a second thread while the
        // weights stream (each is a full pass over up to gigabytes).
        let (written, source_sha, program_sha) = std::thread::scope(|s| {
            let source = s.spawn(|| checksum_file(&model.source));
            let program_sha = s.spawn(|| Checksum::of(program.as_bytes()));
            let written = write_safetensors(model, &weights, &tmp.join(WEIGHTS_FILE), options);
            let source = source.join().unwrap_or_else(|_| {
                Err(CompileError::Internal("hashing the source panicked".into()))
            });
            let program_sha = program_sha
                .join()
                .map_err(|_| CompileError::Internal("hashing the program panicked".into()));
            (written, source, program_sha)
        });
        let (weights_sha, zero_filled) = written?;
        let source_sha = source_sha?;
        let program_sha = program_sha?;
        let neuron = match neuron {
            Some(files) => {
                let mut section = files.program;
                for (name, bytes, slot) in [
                    (
                        crate::targets::neuron::HLO_FILE,
                        files.hlo.as_slice(),
                        &mut section.hlo,
                    ),
                    (
                        crate::targets::neuron::HLO_TEXT_FILE,
                        files.text.as_bytes(),
                        &mut section.hlo_text,
                    ),
                ] {
                    let path = tmp.join(name);
                    std::fs::write(&path, bytes).map_err(io_err(&path))?;
                    *slot = FileRef {
                        file: name.into(),
                        checksum: Checksum::of(bytes),
                    };
                }
                Some(section)
            }
            None => None,
        };
        let manifest = Manifest {
            format_version: FORMAT_VERSION,
            tpuc_version: env!("CARGO_PKG_VERSION").to_string(),
            target: options.target.name().to_string(),
            stablehlo_version: STABLEHLO_VERSION.to_string(),
            matmul_precision: options.matmul_precision.name().to_string(),
            source: FileRef {
                file: model
                    .source
                    .file_name()
                    .map(|s| s.to_string_lossy().to_string())
                    .unwrap_or_default(),
                checksum: source_sha,
            },
            program: FileRef {
                file: PROGRAM_FILE.into(),
                checksum: program_sha,
            },
            weights: FileRef {
                file: WEIGHTS_FILE.into(),
                checksum: weights_sha,
            },
            arguments,
            outputs,
            partitioning: partitioned.map(|p| p.partitioning),
            tpu_executables: Vec::new(),
            neuron,
            dynamic: None,
            debug_values,
            training,
            model_flops: (model_flops > 0.0).then_some(model_flops),
        };
        // A target's own step (a TPU executable compiled next to the program) adds its
        // files and manifest entries before anything is moved into place.
        let mut manifest = manifest;
        if let Some(finish) = &options.finish {
            options.check_cancelled()?;
            finish(&tmp, &mut manifest, located_program.unwrap_or(program))
                .map_err(CompileError::Target)?;
        }
        let text = serde_json::to_string_pretty(&manifest)
            .map_err(|e| CompileError::Internal(e.to_string()))?
            + "\n";
        let mpath = tmp.join(MANIFEST_FILE);
        std::fs::write(&mpath, text).map_err(io_err(&mpath))?;
        Ok(CompileReport {
            output: output.to_path_buf(),
            num_nodes: graph.nodes.len(),
            num_weights: weights.len(),
            weight_bytes: weights.iter().map(|w| w.bytes).sum(),
            zero_filled,
            timings: Vec::new(),
            warnings: Vec::new(),
            dynamic: None,
        })
    })();
    // A compile cancelled while its last stage ran is not published either.
    let report = match result.and_then(|r| options.check_cancelled().map(|()| r)) {
        Ok(r) => r,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(e);
        }
    };
    // Replace a previous artifact: move it aside, move the new one in, delete the old.
    let old = parent.join(format!(".{base}.tpuc-old-{}", std::process::id()));
    let had_old = output.exists();
    if had_old {
        std::fs::rename(output, &old).map_err(io_err(output))?;
    }
    if let Err(e) = std::fs::rename(&tmp, output) {
        if had_old {
            let _ = std::fs::rename(&old, output);
        }
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(CompileError::Io {
            path: output.to_path_buf(),
            source: e,
        });
    }
    if had_old {
        let _ = std::fs::remove_dir_all(&old);
    }
    Ok(report)
}
