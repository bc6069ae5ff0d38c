//! `tpuc inspect --sharding ARTIFACT`: how a partitioned artifact is laid out over its
//! mesh (every argument's and output's sharding and per-device shape), and the
//! collectives and memory of XLA's partitioned program, read back from the plugin.

use std::path::Path;
use std::process::ExitCode;

use tpuc_runtime::manifest::TensorSpec;
use tpuc_runtime::sharding::{Mesh, TensorSharding};
use tpuc_runtime::DType;

/// The opcodes XLA uses for communication between partitions.
const COLLECTIVES: &[&str] = &[
    "all-reduce",
    "all-reduce-start",
    "all-gather",
    "all-gather-start",
    "reduce-scatter",
    "all-to-all",
    "collective-permute",
    "collective-permute-start",
    "collective-broadcast",
];

fn row(
    mesh: &Mesh,
    name: &str,
    dtype: DType,
    shape: &[i64],
    s: Option<&TensorSharding>,
) -> (String, u64) {
    let whole = TensorSharding::replicated(shape.len());
    let s = s.unwrap_or(&whole);
    let shard = s
        .shard_shape(mesh, shape)
        .unwrap_or_else(|_| shape.to_vec());
    let bytes = shard.iter().product::<i64>().max(0) as u64 * dtype.size_in_bytes() as u64;
    (
        format!("  {name:<40} {dtype}{shape:?} {s:<14} per device {dtype}{shard:?} ({bytes} B)"),
        bytes,
    )
}

pub fn inspect(artifact: &Path, plugin: Option<&Path>) -> Result<ExitCode, String> {
    let manifest = tpuc_runtime::session::read_manifest(artifact).map_err(|e| e.to_string())?;
    let Some(p) = &manifest.partitioning else {
        outln!("{}: not partitioned (one device)", artifact.display());
        return Ok(ExitCode::SUCCESS);
    };
    let mesh = &p.mesh;
    outln!("artifact: {}", artifact.display());
    outln!(
        "mesh: {mesh} ({} devices, device order {:?}), {:?} shardings, {} partitions",
        mesh.num_devices(),
        mesh.device_ids,
        p.format,
        p.num_partitions
    );
    outln!("arguments:");
    let (mut weights, mut inputs) = (0u64, 0u64);
    for a in &manifest.arguments {
        let (line, bytes) = row(mesh, &a.name, a.dtype, &a.shape, a.sharding.as_ref());
        outln!("{line}");
        match a.kind {
            tpuc_runtime::manifest::ArgumentKind::UserInput => inputs += bytes,
            _ => weights += bytes,
        }
    }
    outln!("outputs:");
    for TensorSpec {
        name,
        dtype,
        shape,
        sharding,
        ..
    } in &manifest.outputs
    {
        outln!("{}", row(mesh, name, *dtype, shape, sharding.as_ref()).0);
    }
    outln!("per device: weights {weights} B, inputs {inputs} B (arguments tied to one weight count once each)");
    let (client, _) = crate::load::open_client(plugin, &[], mesh.num_devices())?;
    let session = crate::load::load_session(artifact, &client, true)?;
    match session.compiled_opcode_stats() {
        Ok(stats) => {
            let found: Vec<String> = COLLECTIVES
                .iter()
                .filter_map(|c| {
                    stats
                        .get(*c)
                        .map(|s| format!("{c} x{} ({} B per call)", s.count, s.result_bytes))
                })
                .collect();
            outln!(
                "collectives in XLA's partitioned program (each device): {}",
                if found.is_empty() {
                    "none".to_string()
                } else {
                    found.join(", ")
                }
            );
        }
        Err(e) => errln!("warning: the plugin's optimized program could not be read: {e}"),
    }
    match session.compiled_memory_stats() {
        Ok(m) => outln!(
            "XLA's memory per device: arguments {} B, outputs {} B, temporaries {} B, generated code {} B",
            m.argument_size_in_bytes,
            m.output_size_in_bytes,
            m.temp_size_in_bytes,
            m.generated_code_size_in_bytes
        ),
        Err(e) => errln!("warning: the plugin's memory statistics could not be read: {e}"),
    }
    Ok(ExitCode::SUCCESS)
}
