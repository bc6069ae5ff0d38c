//! Programs exported with `dynamic_shapes`: one artifact that runs every size in range.
//!
//! A dynamic program is compiled by specialization: for concrete values of its symbols
//! the frontend reads the program as torch.export would have written it for those sizes
//! (every size, symbolic argument and size computation evaluated, the runtime
//! assertions checked: [`crate::frontend::json::parse_specialized`]), and the usual
//! pipeline compiles that static program, so a specialization is exactly a static
//! export of the same sizes. The artifact holds:
//!
//! - `program.mlir`, the specialization for the example inputs' sizes, and one
//!   program under `specializations/` for each `--specialize` size;
//! - `program.json`, the exported program with its symbolic sizes, from which
//!   [`specialize_artifact`] (the full `tpuc`, at run time) makes any other size;
//! - the manifest's `dynamic` section: symbols and ranges, the inputs' and outputs'
//!   dimensions as expressions, the specializations, and what a specialization on
//!   demand must repeat of the compile (optimization level, weight packing).
//!
//! The runtime binds the symbols from a call's input shapes and picks (or asks for)
//! the specialization; see `tpuc_artifact::session`.

pub mod polymorphic;

use std::path::Path;
use std::sync::Arc;

use tpuc_artifact::manifest::{Checksum, DynamicShapes, FileRef, Manifest, Specialization};
use tpuc_artifact::symbolic::{describe_bindings, Bindings, Dim};

use crate::driver::{lower_program, Emit, Stopwatch};
use crate::error::CompileError;
use crate::frontend::{self, ExportedModel};
use crate::options::{CompileOptions, CompileReport};
use crate::passes;
use crate::pipeline::ProgramFacts;

/// The files of a dynamic artifact: its exported program and its specializations.
pub use tpuc_artifact::layout::{specialization_file, SOURCE_PROGRAM_FILE, SPECIALIZATIONS_DIR};

fn opt_level_name(level: passes::OptLevel) -> &'static str {
    match level {
        passes::OptLevel::O0 => "O0",
        passes::OptLevel::O1 => "O1",
        passes::OptLevel::O2 => "O2",
    }
}

/// `stablehlo-merge-dots`' record: the graph inputs each argument of `@main` holds.
type Origins = Vec<Vec<usize>>;

/// One specialization lowered and printed: the program and merge-dots' packing.
fn lower_one(
    model: &ExportedModel,
    options: &CompileOptions,
    packable: &[usize],
    watch: &mut Stopwatch,
) -> Result<(String, Option<Origins>), CompileError> {
    let ctx = crate::new_context();
    let facts = ProgramFacts {
        packable: packable.to_vec(),
        ..ProgramFacts::of(model, options, Emit::Artifact)?
    };
    let lowered = lower_program(&ctx, model, options, &facts, watch)?;
    let text = crate::print_program(&lowered.module)?;
    Ok((text, lowered.records.origins))
}

/// [`crate::compile`] of a dynamic program: the specializations for the example sizes
/// and every size in `options.specialize`, one artifact.
pub(crate) fn compile(
    mut model: ExportedModel,
    output: &Path,
    options: &CompileOptions,
    mut watch: Stopwatch,
) -> Result<CompileReport, CompileError> {
    // The driver checked the request (crate::targets::check_request): no target,
    // partitioning or device executables that dynamic programs do not support.
    let dynamic = model.dynamic.as_ref().expect("a dynamic program");
    let signature = dynamic.signature.clone();
    let json = dynamic.json.clone();
    let mut all_sizes = vec![dynamic.example_sizes()];
    for s in &options.specialize {
        dynamic.check_sizes(s)?;
        if !all_sizes.contains(s) {
            all_sizes.push(s.clone());
        }
    }
    options.report(crate::Progress::Lowering);
    let packable = crate::driver::packable_weights(&model, options);
    let mut programs: Vec<(Bindings, String)> = Vec::new();
    let mut first_origins = None;
    for (k, sizes) in all_sizes.iter().enumerate() {
        model.specialize(sizes)?;
        let (text, origins) = lower_one(&model, options, &packable, &mut watch)?;
        if k == 0 {
            first_origins = Some(origins);
        } else if first_origins.as_ref() != Some(&origins) {
            return Err(CompileError::Internal(format!(
                "the specialization for {} packs its weights differently from the one for {}",
                describe_bindings(sizes),
                describe_bindings(&all_sizes[0])
            )));
        }
        programs.push((sizes.clone(), text));
    }
    let origins = first_origins.flatten();
    // The artifact's program and weights are those of the first specialization.
    model.specialize(&all_sizes[0])?;
    let (first_sizes, first_text) = programs.remove(0);
    let section = Arc::new(DynamicShapes {
        symbols: signature.symbols.clone(),
        inputs: signature.inputs.iter().map(|(_, d)| d.clone()).collect(),
        outputs: signature.outputs.iter().map(|(_, d)| d.clone()).collect(),
        specializations: Vec::new(),
        source_program: FileRef {
            file: SOURCE_PROGRAM_FILE.into(),
            checksum: Checksum::of(&json),
        },
        opt_level: opt_level_name(options.opt_level).into(),
        origins: origins.clone(),
        packable: packable.clone(),
    });
    let json = Arc::new(json);
    let programs = Arc::new(programs);
    let finish_section = section.clone();
    let finish: crate::FinishFn = Arc::new(move |dir: &Path, manifest: &mut Manifest, _: &str| {
        let write = |name: &str, bytes: &[u8]| -> Result<FileRef, String> {
            let path = dir.join(name);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| format!("cannot create `{}`: {e}", parent.display()))?;
            }
            std::fs::write(&path, bytes)
                .map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
            Ok(FileRef {
                file: name.into(),
                checksum: Checksum::of(bytes),
            })
        };
        let mut section = (*finish_section).clone();
        write(SOURCE_PROGRAM_FILE, &json)?;
        section.specializations.push(Specialization {
            sizes: first_sizes.clone(),
            program: manifest.program.clone(),
        });
        for (sizes, text) in programs.iter() {
            section.specializations.push(Specialization {
                sizes: sizes.clone(),
                program: write(&specialization_file(sizes), text.as_bytes())?,
            });
        }
        mark_dynamic_dims(manifest, &section)?;
        manifest.dynamic = Some(section);
        Ok(())
    });
    let options = CompileOptions {
        finish: Some(finish),
        ..options.clone()
    };
    let mut report = crate::artifact::write(
        &model,
        crate::artifact::Program {
            text: &first_text,
            located: None,
            origins: origins.as_deref(),
            partitioned: None,
            neuron: None,
            debug_values: Vec::new(),
            training: None,
            // A dynamic program's FLOPs depend on its sizes: not recorded.
            model_flops: 0.0,
        },
        output,
        &options,
    )
    .map_err(|e| match e {
        CompileError::Target(m) => CompileError::Dynamic(m),
        other => other,
    })?;
    watch.lap("write");
    options.report(crate::Progress::Done);
    report.timings = watch.times;
    let symbols: Vec<String> = signature
        .symbols
        .iter()
        .map(|s| format!("{} in {}", s.name, s.range()))
        .collect();
    report.dynamic = Some(format!(
        "dynamic sizes {}: specialized for {}; tpuc run specializes other sizes in range on demand",
        symbols.join(", "),
        all_sizes
            .iter()
            .map(describe_bindings)
            .collect::<Vec<_>>()
            .join("; ")
    ));
    Ok(report)
}

/// `-1` in the manifest's shapes where a user input's or output's dimension is
/// symbolic.
fn mark_dynamic_dims(manifest: &mut Manifest, section: &DynamicShapes) -> Result<(), String> {
    let users: Vec<usize> = manifest
        .arguments
        .iter()
        .enumerate()
        .filter(|(_, a)| a.kind == tpuc_artifact::manifest::ArgumentKind::UserInput)
        .map(|(i, _)| i)
        .collect();
    if users.len() != section.inputs.len() || manifest.outputs.len() < section.outputs.len() {
        return Err("the dynamic signature does not match the program's inputs and outputs".into());
    }
    for (&i, dims) in users.iter().zip(&section.inputs) {
        let arg = &mut manifest.arguments[i];
        if arg.shape.len() != dims.len() {
            return Err(format!(
                "input `{}`: rank differs from its signature",
                arg.name
            ));
        }
        arg.shape = dims.iter().map(Dim::static_or_dynamic).collect();
    }
    for (spec, dims) in manifest.outputs.iter_mut().zip(&section.outputs) {
        if spec.shape.len() != dims.len() {
            return Err(format!(
                "output `{}`: rank differs from its signature",
                spec.name
            ));
        }
        spec.shape = dims.iter().map(Dim::static_or_dynamic).collect();
    }
    Ok(())
}

/// The StableHLO program of the dynamic artifact in `dir` for `sizes`, made from its
/// `program.json` with the compile settings it records, for a size it holds no
/// specialization of (the full `tpuc` passes this to the runtime).
pub fn specialize_artifact(
    dir: &Path,
    manifest: &Manifest,
    sizes: &Bindings,
) -> Result<String, CompileError> {
    let section = manifest
        .dynamic
        .as_ref()
        .ok_or_else(|| CompileError::Dynamic("the artifact has no dynamic sizes".into()))?;
    let file = &section.source_program;
    let path = dir.join(&file.file);
    if file.file.contains("..") || Path::new(&file.file).is_absolute() {
        return Err(CompileError::Dynamic(format!(
            "the manifest's source program `{}` is outside the artifact",
            file.file
        )));
    }
    let json = std::fs::read(&path).map_err(|source| CompileError::Io {
        path: path.clone(),
        source,
    })?;
    if !file.checksum.matches(&json) {
        return Err(CompileError::Dynamic(format!(
            "`{}` does not match the checksum in the manifest: the artifact is damaged",
            path.display()
        )));
    }
    let name = path.display().to_string();
    let signature = frontend::json::dynamic_signature(&json, &name)?
        .ok_or_else(|| CompileError::Dynamic(format!("`{name}` has no dynamic sizes")))?;
    let dynamic = frontend::Dynamic {
        signature,
        json,
        file: name,
        sizes: sizes.clone(),
    };
    dynamic.check_sizes(sizes)?;
    let model = ExportedModel {
        source: path.clone(),
        graph: frontend::json::parse_specialized(&dynamic.json, &dynamic.file, sizes)?,
        weights: frontend::WeightSet::None,
        dynamic: Some(dynamic),
    };
    let options = CompileOptions {
        opt_level: match section.opt_level.as_str() {
            "O0" => passes::OptLevel::O0,
            "O1" => passes::OptLevel::O1,
            "O2" => passes::OptLevel::O2,
            other => {
                return Err(CompileError::Dynamic(format!(
                    "the manifest's optimization level `{other}` is not one this tpuc knows"
                )))
            }
        },
        matmul_precision: passes::MatmulPrecision::parse(&manifest.matmul_precision).ok_or_else(
            || {
                CompileError::Dynamic(format!(
                    "the manifest's matmul precision `{}` is not one this tpuc knows",
                    manifest.matmul_precision
                ))
            },
        )?,
        ..CompileOptions::default()
    };
    let (text, origins) = lower_one(&model, &options, &section.packable, &mut Stopwatch::start())?;
    if origins != section.origins {
        return Err(CompileError::Dynamic(format!(
            "the program specialized for {} packs its weights differently from the artifact's; recompile the artifact with this tpuc",
            describe_bindings(sizes)
        )));
    }
    Ok(text)
}

/// For `--emit mlir` / `--emit aten`: a dynamic program specialized for the one size of
/// `options.specialize`; a static one as it is.
pub(crate) fn specialize_for_text(
    model: &mut ExportedModel,
    options: &CompileOptions,
    emit: &str,
) -> Result<(), CompileError> {
    let Some(dynamic) = &model.dynamic else {
        if options.specialize.is_empty() {
            return Ok(());
        }
        return Err(CompileError::Dynamic(
            "--specialize: the program has no dynamic sizes (it was exported without dynamic_shapes)".into(),
        ));
    };
    match options.specialize.as_slice() {
        [sizes] => {
            let sizes = sizes.clone();
            model.specialize(&sizes)?;
            Ok(())
        }
        _ => Err(CompileError::Dynamic(format!(
            "the program has dynamic sizes ({}); --emit {emit} writes one specialization: name its sizes with one --specialize (for example `--specialize {}`){}",
            dynamic
                .signature
                .symbols
                .iter()
                .map(|s| format!("{} in {}", dynamic.describe_symbol(&s.name), s.range()))
                .collect::<Vec<_>>()
                .join(", "),
            describe_bindings(&dynamic.example_sizes()).replace(' ', ""),
            if emit == "mlir" {
                "; without --specialize it writes shape-polymorphic StableHLO"
            } else {
                ""
            }
        ))),
    }
}
