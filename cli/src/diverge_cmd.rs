//! `tpuc diverge`: the first graph node whose value leaves PyTorch's.

use std::path::PathBuf;
use std::process::ExitCode;

use tpuc_runtime::divergence::{compare_debug_values, explain, first_divergence, ValueComparison};

#[derive(clap::Args, Debug)]
pub struct DivergeArgs {
    /// An artifact compiled with `tpuc compile --debug-outputs`.
    pub artifact: PathBuf,
    /// PyTorch's values: one `<node>.npy` per value, as `scripts/node_values.py` writes
    /// them (its `inputs/` folder holds the user inputs they were computed from).
    #[arg(long)]
    pub reference: PathBuf,
    /// User inputs in order (default: the reference's `inputs/` folder).
    #[arg(long = "input")]
    pub inputs: Vec<PathBuf>,
    /// Relative tolerance (default: by dtype, as `tpuc run`).
    #[arg(long, requires = "atol")]
    pub rtol: Option<f64>,
    /// Absolute tolerance (default: by dtype, as `tpuc run`).
    #[arg(long, requires = "rtol")]
    pub atol: Option<f64>,
    /// Print every value's comparison, not only the first divergence.
    #[arg(long)]
    pub all: bool,
    #[command(flatten)]
    pub client: crate::load::ClientArgs,
}

fn describe(v: &ValueComparison) -> String {
    match &v.comparison {
        None => "no reference".into(),
        Some(c) if !c.shape_matches => "shape differs from the reference".into(),
        Some(c) => format!(
            "max_abs_error={:.3e} max_rel_error={:.3e} mismatches={}/{}",
            c.max_abs_error, c.max_rel_error, c.mismatches, c.elements
        ),
    }
}

pub fn diverge(args: &DivergeArgs) -> Result<ExitCode, String> {
    let inputs = if args.inputs.is_empty() {
        tpuc_runtime::npy::numbered_files(args.reference.join("inputs"))
            .map_err(|e| format!("{e} (give the inputs with --input)"))?
    } else {
        args.inputs.clone()
    };
    let tensors = inputs
        .iter()
        .map(|p| tpuc_runtime::npy::read_npy(p).map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    let flags = &args.client;
    let devices = crate::load::artifact_devices(&args.artifact);
    let (client, _) =
        crate::load::open_client(flags.plugin.as_deref(), &flags.client_options, devices)?;
    let session = crate::load::load_session(&args.artifact, &client, flags.no_cache)?;
    let outputs = session.run(&tensors).map_err(|e| e.to_string())?;
    let tolerances = args.rtol.zip(args.atol);
    let values = compare_debug_values(session.manifest(), &outputs, &args.reference, tolerances)
        .map_err(|e| e.to_string())?;
    if args.all {
        for v in &values {
            let mark = match &v.comparison {
                None => "-",
                Some(c) if c.passed() => "OK",
                Some(_) => "DIFFERS",
            };
            outln!("{} ({}): {}  {mark}", v.name, v.op, describe(v));
        }
    }
    let compared = values.iter().filter(|v| v.comparison.is_some()).count();
    let differ = values.iter().filter(|v| v.diverges()).count();
    let Some(first) = first_divergence(&values) else {
        outln!(
            "no value diverges: {compared} of {} compared with the reference, all within tolerance",
            values.len()
        );
        return Ok(ExitCode::SUCCESS);
    };
    outln!(
        "first divergence: `{}` (node `{}`, {}): {}",
        first.name,
        first.node,
        first.op,
        describe(first)
    );
    for input in &first.inputs {
        let state = match values.iter().find(|v| &v.name == input) {
            Some(v) if v.diverges() => format!("differs already ({})", describe(v)),
            Some(v) if v.comparison.is_some() => format!("matches ({})", describe(v)),
            Some(_) => "no reference".into(),
            None => "a program input (as given)".into(),
        };
        outln!("  reads `{input}`: {state}");
    }
    if let Some(why) = explain(first, &values, &args.reference) {
        outln!("note: {why}");
    }
    outln!("{differ} of {compared} compared values differ");
    Ok(ExitCode::FAILURE)
}
