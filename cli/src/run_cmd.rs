//! `tpuc run`: execute an artifact on .npy inputs, write and compare outputs.

use std::path::PathBuf;
use std::process::ExitCode;

use tpuc_runtime::compare::{compare, default_tolerances};

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    pub artifact: PathBuf,
    /// User inputs in order, as .npy files.
    #[arg(long = "input")]
    pub inputs: Vec<PathBuf>,
    /// Reference outputs in order; prints errors and fails outside tolerance.
    #[arg(long = "expect")]
    pub expect: Vec<PathBuf>,
    /// Directory to write outputs to (output_0.npy, ...).
    #[arg(long)]
    pub output_dir: Option<PathBuf>,
    #[command(flatten)]
    pub client: crate::load::ClientArgs,
    /// Relative tolerance (default depends on dtype: f32 1e-4, f16 1e-2, bf16 2e-2).
    #[arg(long)]
    pub rtol: Option<f64>,
    /// Absolute tolerance (default depends on dtype: f32 1e-5, f16 1e-3, bf16 1e-2).
    #[arg(long)]
    pub atol: Option<f64>,
}

pub fn run_artifact(args: &RunArgs) -> Result<ExitCode, String> {
    let RunArgs {
        artifact,
        inputs,
        expect,
        output_dir,
        client: flags,
        rtol,
        atol,
    } = args;
    let devices = crate::load::artifact_devices(artifact);
    let (client, _) =
        crate::load::open_client(flags.plugin.as_deref(), &flags.client_options, devices)?;
    let session = crate::load::load_session(artifact, &client, flags.no_cache)?;
    let tensors = inputs
        .iter()
        .map(|p| tpuc_runtime::npy::read_npy(p).map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    let outputs = session.run(&tensors).map_err(|e| e.to_string())?;
    if let Some(dir) = output_dir {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
        for (i, t) in outputs.iter().enumerate() {
            let p = dir.join(format!("output_{i}.npy"));
            tpuc_runtime::npy::write_npy(&p, t).map_err(|e| e.to_string())?;
        }
    }
    if !expect.is_empty() && expect.len() != outputs.len() {
        return Err(format!(
            "{} --expect files for {} outputs",
            expect.len(),
            outputs.len()
        ));
    }
    let mut ok = true;
    for (i, out) in outputs.iter().enumerate() {
        let spec = &session.outputs()[i];
        match expect.get(i) {
            Some(p) => {
                let reference = tpuc_runtime::npy::read_npy(p).map_err(|e| e.to_string())?;
                let (mut dr, mut da) = default_tolerances(out.dtype);
                // A Neuron artifact may compute an output more coarsely than its type.
                let neuron = session.manifest().neuron.as_ref();
                if let Some(c) = neuron.and_then(|n| n.computed_in(out.dtype)) {
                    let (cr, ca) = default_tolerances(c);
                    (dr, da) = (dr.max(cr), da.max(ca));
                }
                let c = compare(out, &reference, rtol.unwrap_or(dr), atol.unwrap_or(da));
                outln!(
                    "output {i} ({}): {} {:?}  max_abs_error={:.3e} max_rel_error={:.3e} mismatches={}/{} {}",
                    spec.name,
                    out.dtype,
                    out.shape,
                    c.max_abs_error,
                    c.max_rel_error,
                    c.mismatches,
                    c.elements,
                    if c.passed() { "OK" } else { "FAIL" }
                );
                ok &= c.passed();
            }
            None => outln!("output {i} ({}): {} {:?}", spec.name, out.dtype, out.shape),
        }
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
