//! `tpuc report ARTIFACT [--json]`: what the artifact's TPU executables need per chip,
//! from the figures `tpuc compile --topology` recorded (XLA's memory statistics and
//! cost analysis from libtpu), and for a training step its memory by what it holds
//! (parameters, optimizer state, gradients, activations). Reads the manifest only: no
//! plugin, no TPU.

use std::path::Path;
use std::process::ExitCode;

use tpuc_runtime::manifest::TpuExecutable;
use tpuc_runtime::training::{memory_per_device, MemoryShares};

fn mib(bytes: i64) -> String {
    format!("{:.2} MiB", bytes as f64 / (1u64 << 20) as f64)
}

/// A training step's per-device memory by what it holds (`None` for other programs).
fn training_lines(shares: Option<MemoryShares>, temp_bytes: i64) -> Vec<String> {
    let Some(m) = shares else {
        return Vec::new();
    };
    vec![
        format!(
            "  training step, per device: parameters {}, optimizer state {}, buffers {}, batch {} \
             (from shapes and shardings; the TPU pads small tensors, which the arguments above include)",
            mib(m.parameters as i64),
            mib(m.optimizer_state as i64),
            mib(m.buffers as i64),
            mib(m.batch as i64)
        ),
        format!(
            "    gradients at most {} (the trained parameters' size; XLA fuses them into the update \
             where it can); activations, live gradients and workspace: the temporaries, {}",
            mib(m.gradients as i64),
            mib(temp_bytes)
        ),
    ]
}

fn line(e: &TpuExecutable) -> Vec<String> {
    let r = &e.report;
    let mut out = vec![
        format!(
            "{} ({} chips, {} devices; the program on {}), libtpu {}, StableHLO {}",
            e.topology, r.chips, r.devices, r.partitions, e.libtpu_version, e.stablehlo_version
        ),
        format!(
            "  per device: arguments {}, outputs {}, temporaries {}, peak {}, generated code {}",
            mib(r.argument_bytes),
            mib(r.output_bytes),
            mib(r.temp_bytes),
            mib(r.peak_bytes),
            mib(r.generated_code_bytes)
        ),
        format!(
            "  cost: {:.4e} FLOP, {:.4e} transcendentals, {:.4e} bytes accessed",
            r.flops, r.transcendentals, r.bytes_accessed
        ),
    ];
    out.push(if r.hbm_bytes_per_device == 0 {
        "  fits: unknown (no HBM figure for this generation)".to_string()
    } else {
        format!(
            "  fits: {} (peak {:.3}% of a device's {} GiB of HBM)",
            if r.fits { "yes" } else { "NO" },
            100.0 * r.peak_bytes as f64 / r.hbm_bytes_per_device as f64,
            r.hbm_bytes_per_device >> 30
        )
    });
    out.push(format!(
        "  TPU compile: {:.3} s; executable {}",
        r.compile_seconds, e.executable.file
    ));
    out
}

pub fn report(artifact: &Path, json: bool) -> Result<ExitCode, String> {
    let manifest = tpuc_runtime::session::read_manifest(artifact).map_err(|e| e.to_string())?;
    let shares = memory_per_device(&manifest);
    if json {
        let training = shares.map(|m| m.to_json());
        let text = serde_json::to_string_pretty(&serde_json::json!({
            "artifact": artifact.display().to_string(),
            "matmul_precision": manifest.matmul_precision,
            "tpu_executables": manifest.tpu_executables,
            "training_memory_per_device": training,
        }))
        .map_err(|e| e.to_string())?;
        outln!("{text}");
        return Ok(ExitCode::SUCCESS);
    }
    if manifest.tpu_executables.is_empty() {
        return Err(format!(
            "{} has no TPU executables; compile with `tpuc compile MODEL -o {} --topology v5e:2x2` (see `tpuc devices --topologies`)",
            artifact.display(),
            artifact.display()
        ));
    }
    outln!(
        "artifact: {} (matmul precision {})",
        artifact.display(),
        manifest.matmul_precision
    );
    for e in &manifest.tpu_executables {
        for l in line(e) {
            outln!("{l}");
        }
        for l in training_lines(shares, e.report.temp_bytes) {
            outln!("{l}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
