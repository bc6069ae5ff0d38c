//! Compilation targets: one module per target, each described by a [`TargetSpec`] that
//! the driver asks instead of testing for targets itself.
//!
//! - [`stablehlo`]: portable StableHLO for TPUs and any PJRT plugin (`--target tpu`,
//!   also spelled `stablehlo` and `pjrt`).
//! - [`neuron`]: AWS Trainium and Inferentia (`--target trn1|trn2|trn3|inf2`): its
//!   vocabulary, its passes (`neuron-legalize`, `neuron-auto-cast-*`, `neuron-check`
//!   with its op table per chip), its HLO emitter and the files it adds to an artifact.
//!
//! A target decides three things: whether composites are outlined (the input and
//! fusion phases of the pipeline), the passes of the pipeline's target phase, and which
//! features of a compile it supports ([`Feature`]). [`check_request`] is the one place a
//! compile is refused for its target or for a combination of features tpuc does not
//! support yet; every output path (artifact, `--emit mlir`, the shape-polymorphic
//! writer, `--print-pipeline`) calls it before lowering anything.

pub mod neuron;
pub mod stablehlo;

use crate::error::CompileError;
use crate::options::CompileOptions;
use crate::pipeline::PassSpec;

/// Compilation targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Target {
    /// Portable StableHLO, for TPUs and any PJRT plugin.
    #[default]
    Tpu,
    /// AWS Trainium / Inferentia: the program legalized for Neuron, as StableHLO and
    /// as the XLA HLO `neuronx-cc` compiles (see [`neuron`]).
    Neuron(neuron::Chip),
}

impl Target {
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    pub fn parse(s: &str) -> Result<Target, CompileError> {
        match s {
            "tpu" | "stablehlo" | "pjrt" => Ok(Target::Tpu),
            other => neuron::Chip::parse(other)
                .map(Target::Neuron)
                .ok_or_else(|| CompileError::UnknownTarget(other.to_string())),
        }
    }

    /// The Neuron chip of a Neuron target.
    pub fn neuron_chip(self) -> Option<neuron::Chip> {
        match self {
            Target::Neuron(chip) => Some(chip),
            Target::Tpu => None,
        }
    }

    /// What the driver needs to know of the target.
    pub fn spec(self) -> TargetSpec {
        match self {
            Target::Tpu => stablehlo::spec(),
            Target::Neuron(chip) => neuron::spec(chip),
        }
    }

    /// The passes of the pipeline's target phase (after fusion, before verification).
    pub fn pipeline_passes(self, options: &CompileOptions) -> Vec<PassSpec> {
        match self {
            Target::Tpu => Vec::new(),
            Target::Neuron(chip) => neuron::pipeline_passes(chip, &options.neuron),
        }
    }
}

/// Something a compile asks for that a target, or tpuc as a whole, may not support.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feature {
    /// Partitioning over a device mesh (`--mesh`, `--shard`, `--sharding-rules`).
    Sharding,
    /// A program exported with `dynamic_shapes`.
    DynamicShapes,
    /// Buffers the program updates, kept on the device between calls.
    State,
    /// Device executables compiled ahead of time next to the program (`--topology`).
    DeviceExecutables,
    /// Higher-order operators (`torch.cond`, `while_loop`, `scan`, `map`) as
    /// `stablehlo.if` / `stablehlo.while` regions.
    ControlFlow,
}

/// A target as the driver sees it.
#[derive(Debug, Clone)]
pub struct TargetSpec {
    /// `tpu`, `trn2`...: the manifest's `target`.
    pub name: &'static str,
    /// Whether the pipeline outlines `stablehlo.composite` ops (a target whose
    /// compiler has no composites gets plain ops).
    pub outlines_composites: bool,
    /// Whether the target's compiler takes data-dependent loops (`stablehlo.while`
    /// with `dynamic_slice`): without them, grouped matmuls are lowered densely
    /// (`lower-aten-to-stablehlo{grouped-mm=dense}`).
    pub runs_loops: bool,
    /// The features the target cannot compile, each with the sentence that says so.
    pub unsupported: Vec<(Feature, String)>,
}

/// What one compile asks for, as [`check_request`] weighs it.
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub sharded: bool,
    pub dynamic: bool,
    /// The buffers the program keeps as state (by input name).
    pub state: Vec<String>,
    pub device_executables: bool,
    pub control_flow: bool,
}

impl Request {
    /// The request of compiling `model` with `options`.
    pub fn of(model: &crate::frontend::ExportedModel, options: &CompileOptions) -> Request {
        Request {
            sharded: options.sharding.is_some(),
            dynamic: model.dynamic.is_some(),
            state: crate::import::state_updates(&model.graph)
                .into_iter()
                .map(|u| u.input)
                .collect(),
            device_executables: options.finish.is_some(),
            control_flow: model
                .graph
                .nodes
                .iter()
                .any(|n| n.target.starts_with("higher_order.")),
        }
    }

    fn uses(&self, feature: Feature) -> bool {
        match feature {
            Feature::Sharding => self.sharded,
            Feature::DynamicShapes => self.dynamic,
            Feature::State => !self.state.is_empty(),
            Feature::DeviceExecutables => self.device_executables,
            Feature::ControlFlow => self.control_flow,
        }
    }
}

/// The sentence refusing `what` for a dynamic program.
pub fn dynamic_unsupported(what: &str) -> String {
    format!(
        "the program has dynamic sizes, and {what} is not supported for dynamic programs yet; \
         export with static shapes (no dynamic_shapes) for it"
    )
}

fn dynamic_refusal(what: &str) -> CompileError {
    CompileError::Dynamic(dynamic_unsupported(what))
}

/// Refuses what `target` or tpuc cannot compile: a feature the target's spec lists as
/// unsupported, or a combination no target supports yet (dynamic shapes with
/// partitioning or device executables).
pub fn check_request(target: Target, request: &Request) -> Result<(), CompileError> {
    let spec = target.spec();
    // Dynamic programs first: their refusals name the dynamic sizes as the cause.
    if request.dynamic {
        if let Some((_, why)) = spec
            .unsupported
            .iter()
            .find(|(f, _)| *f == Feature::DynamicShapes)
        {
            return Err(CompileError::Dynamic(why.clone()));
        }
        if request.sharded {
            return Err(dynamic_refusal("partitioning (--mesh/--shard)"));
        }
        if request.device_executables {
            return Err(dynamic_refusal(
                "a TPU executable compiled ahead of time (--topology)",
            ));
        }
    }
    for (feature, why) in &spec.unsupported {
        if request.uses(*feature) {
            return Err(match feature {
                Feature::Sharding => CompileError::Sharding(why.clone()),
                Feature::DynamicShapes => CompileError::Dynamic(why.clone()),
                Feature::State | Feature::DeviceExecutables | Feature::ControlFlow => {
                    CompileError::Target(why.clone())
                }
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(target: Target, request: Request) -> Option<String> {
        check_request(target, &request).err().map(|e| e.to_string())
    }

    #[test]
    fn each_target_refuses_what_its_spec_lists() {
        let trn2 = Target::Neuron(neuron::Chip::Trn2);
        let sharded = Request {
            sharded: true,
            ..Request::default()
        };
        assert!(refusal(Target::Tpu, sharded.clone()).is_none());
        assert!(refusal(trn2, sharded)
            .unwrap()
            .contains("not supported with a Neuron target"));
        let executables = Request {
            device_executables: true,
            ..Request::default()
        };
        assert!(refusal(Target::Tpu, executables.clone()).is_none());
        assert!(refusal(trn2, executables)
            .unwrap()
            .contains("--topology is for --target tpu, not `trn2`"));
        // State and control flow: every target compiles them.
        let stateful_loop = Request {
            state: vec!["cache".into()],
            control_flow: true,
            ..Request::default()
        };
        assert!(refusal(Target::Tpu, stateful_loop.clone()).is_none());
        assert!(refusal(trn2, stateful_loop).is_none());
        // State with partitioning: a sharded KV cache, wherever partitioning is.
        let state_sharded = Request {
            sharded: true,
            state: vec!["key_cache_0".into()],
            ..Request::default()
        };
        assert!(refusal(Target::Tpu, state_sharded).is_none());
    }

    #[test]
    fn unsupported_combinations_are_refused_for_every_target() {
        for target in [Target::Tpu, Target::Neuron(neuron::Chip::Trn1)] {
            let dynamic_executables = Request {
                dynamic: true,
                device_executables: true,
                ..Request::default()
            };
            // The dynamic sizes are named as the cause, before the target's own limits.
            assert!(refusal(target, dynamic_executables)
                .unwrap()
                .contains("dynamic sizes"));
        }
    }
}
