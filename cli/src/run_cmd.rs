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
    /// Another call in the same session, with its own `--input`s and `--expect`s
    /// (repeatable: `--then --input a.npy --expect b.npy --then ...`). A stateful
    /// artifact (a KV-cache decode step) carries its state from call to call.
    #[arg(long = "then", num_args = 0.., allow_hyphen_values = true, value_name = "CALL")]
    pub then: Option<Vec<String>>,
}

/// One call of `tpuc run`: its inputs and reference outputs.
struct Call {
    inputs: Vec<PathBuf>,
    expect: Vec<PathBuf>,
}

/// The calls after the first, from what followed the first `--then`.
fn later_calls(raw: &[String]) -> Result<Vec<Call>, String> {
    let mut calls = vec![Call {
        inputs: vec![],
        expect: vec![],
    }];
    let mut it = raw.iter();
    while let Some(a) = it.next() {
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (a.as_str(), None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| it.next().cloned())
                .ok_or_else(|| format!("--then: `{flag}` needs a file"))
        };
        let call = calls.last_mut().expect("one call at least");
        match flag {
            "--then" => calls.push(Call {
                inputs: vec![],
                expect: vec![],
            }),
            "--input" => call.inputs.push(PathBuf::from(value()?)),
            "--expect" => call.expect.push(PathBuf::from(value()?)),
            other => {
                return Err(format!(
                    "after --then only --input, --expect and --then are taken, not `{other}` (put other options before the first --then)"
                ))
            }
        }
    }
    Ok(calls)
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
        then,
    } = args;
    let mut calls = vec![Call {
        inputs: inputs.clone(),
        expect: expect.clone(),
    }];
    if let Some(raw) = then {
        calls.extend(later_calls(raw)?);
    }
    let devices = crate::load::artifact_devices(artifact);
    let (client, _) =
        crate::load::open_client(flags.plugin.as_deref(), &flags.client_options, devices)?;
    let session = crate::load::load_session(artifact, &client, flags.no_cache)?;
    let mut ok = true;
    for (k, call) in calls.iter().enumerate() {
        if calls.len() > 1 {
            outln!("call {k}:");
        }
        let dir = output_dir.as_ref().map(|d| {
            if calls.len() > 1 {
                d.join(format!("call_{k}"))
            } else {
                d.clone()
            }
        });
        ok &= run_call(&session, call, dir.as_deref(), *rtol, *atol).map_err(|e| {
            if calls.len() > 1 {
                format!("call {k}: {e}")
            } else {
                e
            }
        })?;
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// One call: run, write the outputs to `output_dir`, compare with the references;
/// whether every compared output matched.
fn run_call(
    session: &tpuc_runtime::Session,
    call: &Call,
    output_dir: Option<&std::path::Path>,
    rtol: Option<f64>,
    atol: Option<f64>,
) -> Result<bool, String> {
    let Call { inputs, expect } = call;
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
                // Tensors of different shapes cannot be compared element by element: that
                // is a wrong --expect file (or a wrong program), not a count of mismatches.
                if reference.shape != out.shape {
                    return Err(format!(
                        "output {i} (`{}`) has shape {:?} ({}), but --expect `{}` has shape {:?} ({}); \
                         they cannot be compared (is the --expect file for another output or call?)",
                        spec.name,
                        out.shape,
                        out.dtype,
                        p.display(),
                        reference.shape,
                        reference.dtype
                    ));
                }
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
    Ok(ok)
}
