//! `tpuc run`: execute an artifact on .npy inputs, write and compare outputs.

use std::path::PathBuf;
use std::process::ExitCode;

use tpuc_runtime::compare::{compare, default_tolerances};
use tpuc_runtime::pjrt::NamedValue;

pub struct RunArgs {
    pub artifact: PathBuf,
    pub inputs: Vec<PathBuf>,
    pub expect: Vec<PathBuf>,
    pub output_dir: Option<PathBuf>,
    pub plugin: Option<PathBuf>,
    pub client_options: Vec<(String, NamedValue)>,
    pub no_cache: bool,
    pub rtol: Option<f64>,
    pub atol: Option<f64>,
}

pub fn run_artifact(args: &RunArgs) -> Result<ExitCode, String> {
    let RunArgs {
        artifact,
        inputs,
        expect,
        output_dir,
        plugin,
        client_options,
        no_cache,
        rtol,
        atol,
    } = args;
    let (client, _) = crate::load::open_client(plugin.as_deref(), client_options)?;
    let session = crate::load::load_session(artifact, &client, *no_cache)?;
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
                let (dr, da) = default_tolerances(out.dtype);
                let c = compare(out, &reference, rtol.unwrap_or(dr), atol.unwrap_or(da));
                println!(
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
            None => println!("output {i} ({}): {} {:?}", spec.name, out.dtype, out.shape),
        }
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
