//! Running a compiled artifact: [`Session::load`] validates the manifest and checksums,
//! compiles the program once and uploads the weights once; [`Session::run`] checks the
//! caller's inputs against the manifest and executes.

use crate::compile_options::CompileOptions;
use crate::error::{Result, RuntimeError};
use crate::manifest::{Argument, ArgumentKind, FileRef, Manifest, TensorSpec, FORMAT_VERSION};
use crate::pjrt::{Buffer, Client, ClientOptions, LoadedExecutable, Plugin};
use crate::safetensors::SafeTensors;
use crate::{DType, HostTensor};
use sha2::{Digest, Sha256};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// Name of the manifest inside an artifact directory.
pub const MANIFEST_FILE: &str = "manifest.json";

/// Where an argument of `@main` comes from.
#[derive(Clone, Copy, Debug)]
enum Slot {
    /// Index into `Session::weights`.
    Weight(usize),
    /// Index into the caller's inputs.
    User(usize),
}

/// A loaded artifact, ready to run. `Send + Sync`: runs may be issued from several
/// threads (weights are never donated, so concurrent runs share them safely).
pub struct Session {
    dir: PathBuf,
    manifest: Manifest,
    client: Client,
    executable: LoadedExecutable,
    weights: Vec<Buffer>,
    slots: Vec<Slot>,
    /// Indices into `manifest.arguments` of the user inputs, in order.
    user_inputs: Vec<usize>,
    device_index: usize,
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

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn shape_matches(expected: &[i64], actual: &[i64]) -> bool {
    // A negative expected dimension is dynamic and matches any size.
    expected.len() == actual.len() && expected.iter().zip(actual).all(|(&e, &a)| e < 0 || e == a)
}

fn describe(dtype: DType, shape: &[i64]) -> String {
    format!("{dtype}{shape:?}")
}

impl Session {
    /// Loads the artifact in `dir` onto addressable device 0 of `client`.
    pub fn load(dir: impl AsRef<Path>, client: &Client) -> Result<Session> {
        let dir = dir.as_ref().to_path_buf();
        let manifest = read_manifest(&dir)?;
        let fail = |message: String| RuntimeError::Artifact {
            dir: dir.clone(),
            message,
        };
        if client.addressable_devices().is_empty() {
            return Err(fail("the client has no addressable device".into()));
        }
        let device_index = 0;

        // Program: checksum, then compile once.
        let program_path = resolve(&dir, &manifest.program, "program")?;
        let program =
            std::fs::read(&program_path).map_err(|e| RuntimeError::io(&program_path, e))?;
        verify_checksum(&program_path, &manifest.program.sha256, &program)?;

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
            verify_checksum(&path, &manifest.weights.sha256, st.file_bytes())?;
            Some(st)
        };

        let mut slots = Vec::with_capacity(manifest.arguments.len());
        let mut user_inputs = Vec::new();
        let mut weight_tensors = Vec::new();
        // Tied weights (several arguments naming one key) are uploaded once.
        let mut uploaded: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
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
            if let Some(&slot) = uploaded.get(key) {
                slots.push(Slot::Weight(slot));
                continue;
            }
            uploaded.insert(key, weight_tensors.len());
            slots.push(Slot::Weight(weight_tensors.len()));
            weight_tensors.push(view);
        }

        let executable = client.compile(&program, "mlir", &CompileOptions::default())?;
        if executable.num_outputs() != manifest.outputs.len() {
            return Err(fail(format!(
                "the program returns {} value(s), the manifest lists {} output(s)",
                executable.num_outputs(),
                manifest.outputs.len()
            )));
        }

        // Upload weights once; they stay on the device for every run.
        let mut weights = Vec::with_capacity(weight_tensors.len());
        for view in &weight_tensors {
            weights.push(client.buffer_from_slice(
                view.dtype,
                view.shape,
                view.data,
                device_index,
            )?);
        }

        Ok(Session {
            dir,
            manifest,
            client: client.clone(),
            executable,
            weights,
            slots,
            user_inputs,
            device_index,
        })
    }

    /// Loads with a fresh client of `plugin` (default options).
    pub fn load_with_plugin(dir: impl AsRef<Path>, plugin: &Arc<Plugin>) -> Result<Session> {
        let client = plugin.create_client(&ClientOptions::default())?;
        Session::load(dir, &client)
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
    pub fn outputs(&self) -> &[TensorSpec] {
        &self.manifest.outputs
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

    fn check_count(&self, got: usize) -> Result<()> {
        if got != self.user_inputs.len() {
            return Err(RuntimeError::InputCount {
                expected: self.user_inputs.len(),
                got,
                names: self
                    .inputs()
                    .iter()
                    .map(|a| format!("`{}`", a.name))
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        Ok(())
    }

    /// Runs the program on host tensors (the user inputs, in manifest order) and
    /// returns the outputs.
    pub fn run(&self, inputs: &[HostTensor]) -> Result<Vec<HostTensor>> {
        self.check_count(inputs.len())?;
        let mut uploaded = Vec::with_capacity(inputs.len());
        for (i, t) in inputs.iter().enumerate() {
            self.check_input(i, t.dtype, &t.shape)?;
            let expected = t.num_elements() * t.dtype.size_in_bytes();
            if t.data.len() != expected {
                let arg = &self.manifest.arguments[self.user_inputs[i]];
                return Err(RuntimeError::InputMismatch {
                    index: i,
                    name: arg.name.clone(),
                    message: format!(
                        "{} needs {expected} bytes of data, the tensor has {}",
                        describe(t.dtype, &t.shape),
                        t.data.len()
                    ),
                });
            }
            uploaded.push(self.client.buffer_from_host(t, self.device_index)?);
        }
        let refs: Vec<&Buffer> = uploaded.iter().collect();
        let outputs = self.run_buffers(&refs)?;
        outputs.iter().map(Buffer::to_host).collect()
    }

    /// Runs the program on inputs already on the session's device; outputs stay there.
    pub fn run_buffers(&self, inputs: &[&Buffer]) -> Result<Vec<Buffer>> {
        self.check_count(inputs.len())?;
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
        let args: Vec<&Buffer> = self
            .slots
            .iter()
            .map(|s| match *s {
                Slot::Weight(w) => &self.weights[w],
                Slot::User(u) => inputs[u],
            })
            .collect();
        let outputs = self.executable.execute(&args)?;
        for (i, (b, spec)) in outputs.iter().zip(&self.manifest.outputs).enumerate() {
            let dtype = b.dtype()?;
            if dtype != spec.dtype || !shape_matches(&spec.shape, b.shape()) {
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
        Ok(outputs)
    }
}

/// Reads and validates `dir/manifest.json` (format version; no device work).
pub fn read_manifest(dir: &Path) -> Result<Manifest> {
    let path = dir.join(MANIFEST_FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| RuntimeError::io(&path, e))?;
    let manifest: Manifest = serde_json::from_str(&text).map_err(|e| RuntimeError::Artifact {
        dir: dir.to_path_buf(),
        message: format!("{MANIFEST_FILE} is invalid: {e}"),
    })?;
    if manifest.format_version != FORMAT_VERSION {
        return Err(RuntimeError::Artifact {
            dir: dir.to_path_buf(),
            message: format!(
                "artifact format version {} is not supported (this runtime reads version {FORMAT_VERSION}); recompile the model",
                manifest.format_version
            ),
        });
    }
    Ok(manifest)
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

fn verify_checksum(path: &Path, expected: &str, bytes: &[u8]) -> Result<()> {
    let actual = sha256_hex(bytes);
    if !actual.eq_ignore_ascii_case(expected.trim()) {
        return Err(RuntimeError::Checksum {
            path: path.to_path_buf(),
            expected: expected.to_string(),
            actual,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_of_known_input() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
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
            sha256: String::new(),
        };
        let dir = Path::new("/a");
        assert!(resolve(dir, &f("program.mlir"), "program").is_ok());
        assert!(resolve(dir, &f("../x"), "program").is_err());
        assert!(resolve(dir, &f("/etc/passwd"), "program").is_err());
        assert!(resolve(dir, &f(""), "program").is_err());
    }
}
