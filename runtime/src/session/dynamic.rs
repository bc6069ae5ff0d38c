//! Dynamic artifacts: a call's sizes from its inputs' shapes, and one executable per
//! sizes met (the artifact's specialization, or one made by the [`Specializer`]).

use super::load::{obtain_executable, LoadEvent, LoadOptions};
use super::validate::{resolve, verify_checksum};
use super::Session;
use crate::compile_options::CompileOptions;
use crate::error::{Result, RuntimeError};
use crate::manifest::DynamicShapes;
use crate::pjrt::LoadedExecutable;
use crate::symbolic::Bindings;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The executables of a dynamic artifact, by the sizes they are specialized for.
pub(super) struct DynamicState {
    pub(super) section: DynamicShapes,
    pub(super) options: LoadOptions,
    pub(super) executables: Mutex<BTreeMap<Bindings, Arc<LoadedExecutable>>>,
}

impl Session {
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
    pub(super) fn executable_for(
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
}
