//! Sharding strategies (`tpuc compile --shard`): the shardings of `@main`'s arguments
//! that a preset implies, which `stablehlo-propagate-sharding` then carries through the
//! program. Meshes and shardings themselves are `tpuc_runtime::sharding`'s.

use tpuc_runtime::sharding::TensorSharding;

use crate::frontend::graph::{Graph, InputKind};
use crate::{CompileError, ShardPreset, ShardingRequest};

/// The sharding of each input of `graph` (in `@main`'s argument order) under the
/// presets of `request`; `None` leaves an argument replicated.
pub fn seeds(
    graph: &Graph,
    request: &ShardingRequest,
) -> Result<Vec<Option<TensorSharding>>, CompileError> {
    let mut out: Vec<Option<TensorSharding>> = vec![None; graph.inputs.len()];
    for preset in &request.presets {
        match preset {
            ShardPreset::DataParallel => {
                let dp = request.mesh.axis_size("dp").map_err(|_| {
                    CompileError::Sharding(format!(
                        "--shard data-parallel puts the batch on a mesh axis named `dp`; the mesh `{}` has none",
                        request.mesh
                    ))
                })?;
                for (i, spec) in graph.inputs.iter().enumerate() {
                    if spec.kind != InputKind::UserInput {
                        continue;
                    }
                    let shape = &graph.tensors[&spec.name].shape;
                    match shape.first() {
                        None => continue,
                        Some(&batch) if batch % dp != 0 => {
                            return Err(CompileError::Sharding(format!(
                                "input `{}` has batch size {batch} (shape {shape:?}), which the mesh axis dp={dp} does not divide; export with a batch size that is a multiple of {dp}",
                                spec.name
                            )))
                        }
                        Some(_) => {}
                    }
                    out[i] = Some(TensorSharding::split(shape.len(), 0, &["dp"]));
                }
            }
            ShardPreset::Fsdp => {
                let k = request.mesh.axis_size("fsdp").map_err(|_| {
                    CompileError::Sharding(format!(
                        "--shard fsdp splits parameters on a mesh axis named `fsdp`; the mesh `{}` has none",
                        request.mesh
                    ))
                })?;
                for (i, spec) in graph.inputs.iter().enumerate() {
                    if spec.kind != InputKind::Parameter {
                        continue;
                    }
                    let shape = &graph.tensors[&spec.name].shape;
                    // Presets apply in order; a dimension another preset split is kept.
                    let mut s = out[i]
                        .take()
                        .unwrap_or_else(|| TensorSharding::replicated(shape.len()));
                    if let Some(d) = (0..shape.len())
                        .find(|&d| s.dims[d].is_empty() && shape[d] >= k && shape[d] % k == 0)
                    {
                        s.dims[d] = vec!["fsdp".to_string()];
                    }
                    out[i] = Some(s);
                }
            }
        }
    }
    Ok(out)
}
