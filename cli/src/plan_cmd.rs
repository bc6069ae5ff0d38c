//! `tpuc plan MODEL --topology v5e:2x4` (or `--devices N` on a PJRT plugin): the
//! planner of `plan/` run, its table printed, its choice saved as a sharding-rules
//! file (`--write-rules`); and `tpuc compile --auto-shard`, which compiles with it.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use tpuc_cli::plan::{self, gib, nothing_fits, Evaluated, Measured, Outcome};
use tpuc_compiler::CompileOptions;

#[derive(clap::Args)]
pub struct PlanArgs {
    /// The exported program (.pt2 or model.json). Its shapes are the workload planned
    /// for: export with the batch and sequence length (or the decode step and cache)
    /// you serve.
    pub model: PathBuf,
    /// The TPU slice to plan for (`v5e:2x4`; see `tpuc devices --topologies`): every
    /// candidate spans all its devices and is compiled by libtpu, no TPU needed.
    #[arg(
        long,
        value_name = "NAME",
        conflicts_with = "devices",
        required_unless_present = "devices"
    )]
    pub topology: Option<String>,
    /// Plan for N devices of a PJRT plugin instead (the CPU plugin makes as many as
    /// asked); its compiled memory and collectives decide.
    #[arg(long, value_name = "N")]
    pub devices: Option<usize>,
    /// The mesh axes candidates may use: dp (data-parallel), fsdp, ep (expert), tp
    /// (megatron).
    #[arg(long, value_delimiter = ',', default_value = "dp,fsdp,ep,tp")]
    pub axes: Vec<String>,
    /// How many candidates XLA compiles per round (the best by tpuc's estimate); more
    /// rounds follow while none fits.
    #[arg(long, default_value_t = 3)]
    pub top: usize,
    /// Save the chosen plan as a sharding-rules file for `tpuc compile --sharding-rules
    /// FILE` (its mesh, strategies and every split weight). An existing file is
    /// replaced only when `tpuc plan` wrote it.
    #[arg(long, value_name = "FILE")]
    pub write_rules: Option<PathBuf>,
    /// Print the plans as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Weights the program does not hold (a bare model.json, an export on the meta
    /// device) become inputs, as `tpuc compile --weights-as-inputs`.
    #[arg(long)]
    pub weights_as_inputs: bool,
    /// Precision of f32 matmuls, as `tpuc compile`; the table also estimates each
    /// plan's time at `default` (one bf16 MXU pass).
    #[arg(long, default_value = "highest", value_parser = ["highest", "high", "default"])]
    pub matmul_precision: String,
    /// How the shardings are written (shardy or gspmd).
    #[arg(long, default_value = "shardy", value_parser = ["shardy", "gspmd"])]
    pub sharding_format: String,
    /// libtpu for --topology (default: as `tpuc compile --topology`).
    #[arg(long, value_name = "PATH")]
    pub libtpu: Option<PathBuf>,
    /// PJRT plugin for --devices (default: as `tpuc run`).
    #[arg(long, value_name = "PATH")]
    pub plugin: Option<PathBuf>,
    /// Compile every candidate again instead of reading measured ones from the cache.
    #[arg(long)]
    pub no_cache: bool,
}

impl PlanArgs {
    fn settings(&self) -> Result<plan::PlanSettings, String> {
        Ok(plan::PlanSettings {
            topology: self.topology.clone(),
            devices: self.devices,
            axes: self.axes.clone(),
            top: self.top,
            matmul_precision: self.matmul_precision.clone(),
            sharding_format: self.sharding_format.clone(),
            libtpu: self.libtpu.clone(),
            plugin: self.plugin.clone(),
            no_cache: self.no_cache,
            measurer: measurer()?,
        })
    }
}

/// `tpuc plan-measure ART`: the planner's child (`PlanSettings::measurer`); prints the
/// candidate's [`Measured`] as JSON.
#[derive(clap::Args)]
pub struct MeasureArgs {
    pub artifact: PathBuf,
    #[arg(long)]
    pub topology: Option<String>,
    #[arg(long)]
    pub devices: Option<usize>,
    #[arg(long, default_value_t = 1.0)]
    pub passes: f64,
    #[arg(long)]
    pub libtpu: Option<PathBuf>,
    #[arg(long)]
    pub plugin: Option<PathBuf>,
}

pub fn measure_command(args: &MeasureArgs) -> Result<ExitCode, String> {
    let m = match (&args.topology, args.devices) {
        (Some(t), _) => plan::measure_on_topology(
            &args.artifact,
            t,
            args.passes,
            args.libtpu.as_deref(),
            &|line| errln!("{line}"),
        )?,
        (None, Some(n)) => {
            let (client, _) = crate::load::open_client(args.plugin.as_deref(), &[], n)?;
            let session = tpuc_runtime::Session::load_with(
                &args.artifact,
                &client,
                &tpuc_runtime::LoadOptions {
                    cache: tpuc_runtime::CacheMode::Bypass,
                    ..Default::default()
                },
            )
            .map_err(|e| e.to_string())?;
            plan::measured_on_plugin(&session)?
        }
        (None, None) => return Err("give --topology or --devices".into()),
    };
    outln!("{}", serde_json::to_string(&m).map_err(|e| e.to_string())?);
    Ok(ExitCode::SUCCESS)
}

/// Seconds as milliseconds with four significant digits.
fn milliseconds(seconds: f64) -> String {
    let ms = seconds * 1e3;
    let decimals = (3 - ms.abs().log10().floor() as i32).clamp(0, 9) as usize;
    format!("{ms:.decimals$}")
}

fn measured_cells(m: Option<&Measured>, skipped: Option<&str>) -> Vec<String> {
    match (m, skipped) {
        (_, Some(_)) => vec!["skipped".into()],
        (None, None) => vec!["not compiled".into()],
        (Some(m), None) => {
            let mut cells = vec![
                if m.fits { "yes" } else { "NO" }.to_string(),
                gib(m.peak_bytes as f64),
                format!(
                    "{} ({})",
                    m.collective_count(),
                    gib(m.collective_bytes() as f64)
                ),
            ];
            if m.flops > 0.0 {
                cells.push(format!("{:.1}", m.flops / 1e9));
                cells.push(format!("{:.2}", m.bytes_accessed / 1e9));
            } else {
                cells.push("-".into());
                cells.push("-".into());
            }
            if m.seconds > 0.0 {
                cells.push(milliseconds(m.seconds));
                cells.push(milliseconds(m.seconds_default));
            } else {
                cells.push("-".into());
                cells.push("-".into());
            }
            cells.push(format!("{:.1}", m.compile_seconds));
            cells
        }
    }
}

fn print_table(model: &Path, args: &PlanArgs, o: &Outcome) {
    let applicable = o.evaluated.iter().filter(|e| e.skipped.is_none()).count();
    outln!(
        "plan for {} on {} ({} devices{}): {} candidates, {} applicable",
        model.display(),
        o.target,
        o.devices,
        if o.hbm > 0 {
            format!(", {} HBM each", gib(o.hbm as f64))
        } else {
            String::new()
        },
        o.evaluated.len(),
        applicable
    );
    let precision = &args.matmul_precision;
    let header = [
        "mesh".to_string(),
        "strategies".into(),
        "estimate".into(),
        "fits".into(),
        "peak/device".into(),
        "collectives".into(),
        "GFLOP".into(),
        "GB accessed".into(),
        format!("ms ({precision})"),
        "ms (default)".into(),
        "compile s".into(),
    ];
    let mut rows: Vec<Vec<String>> = vec![header.to_vec()];
    for (i, e) in o.evaluated.iter().enumerate() {
        if e.skipped.is_some() && e.measured.is_none() {
            continue;
        }
        let mark = if Some(i) == o.chosen { "* " } else { "  " };
        let mut row = vec![
            format!("{mark}{}", e.candidate.mesh_text()),
            e.candidate.strategies(),
            gib(e.estimate as f64),
        ];
        row.extend(measured_cells(e.measured.as_ref(), e.skipped.as_deref()));
        rows.push(row);
    }
    rows[0][0] = format!("  {}", rows[0][0]);
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for r in &rows {
        let cells: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(c, s)| format!("{s:<w$}", w = widths[c]))
            .collect();
        outln!("{}", cells.join("  ").trim_end());
    }
    let skipped: Vec<&Evaluated> = o.evaluated.iter().filter(|e| e.skipped.is_some()).collect();
    if !skipped.is_empty() {
        outln!("skipped:");
        for e in skipped {
            let why = e.skipped.as_deref().unwrap_or("");
            outln!(
                "  {}: {}",
                e.candidate.mesh_text(),
                why.lines().next().unwrap_or("")
            );
        }
    }
    outln!(
        "estimate: tpuc's per-device bytes before XLA (arguments and outputs as split, plus the largest activation); \
         times: a roofline over the chip's published rates, not a measurement"
    );
}

fn print_json(o: &Outcome) -> Result<(), String> {
    outln!(
        "{}",
        serde_json::to_string_pretty(&o.to_json()).map_err(|e| e.to_string())?
    );
    Ok(())
}

/// The base compile options of `tpuc plan`'s flags.
fn base_options(args: &PlanArgs) -> CompileOptions {
    CompileOptions {
        missing_weights: if args.weights_as_inputs {
            tpuc_compiler::MissingWeights::AsInputs
        } else {
            tpuc_compiler::MissingWeights::ZeroFill
        },
        matmul_precision: tpuc_compiler::passes::MatmulPrecision::parse(&args.matmul_precision)
            .unwrap_or_default(),
        ..CompileOptions::default()
    }
}

/// Writes `text` to `path` unless it holds something `tpuc plan` did not write.
fn write_rules_file(path: &Path, text: &str) -> Result<(), String> {
    if let Ok(existing) = std::fs::read_to_string(path) {
        if !existing.starts_with("# tpuc plan") {
            return Err(format!(
                "--write-rules: `{}` exists and was not written by tpuc plan; choose another file",
                path.display()
            ));
        }
    } else if path.exists() {
        return Err(format!(
            "--write-rules: `{}` exists and is not a rules file",
            path.display()
        ));
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, text).map_err(|e| format!("cannot write `{}`: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot write `{}`: {e}", path.display())
    })
}

pub fn plan_command(args: &PlanArgs) -> Result<ExitCode, String> {
    let outcome = plan::run_planner(
        &args.model,
        &args.settings()?,
        &base_options(args),
        &|line| errln!("{line}"),
    )?;
    if args.json {
        print_json(&outcome)?;
    } else {
        print_table(&args.model, args, &outcome);
    }
    let Some(chosen) = outcome.chosen else {
        return Err(nothing_fits(&outcome));
    };
    let e = &outcome.evaluated[chosen];
    let m = e.measured.as_ref().expect("chosen plans are measured");
    let summary = format!(
        "chosen: --mesh {} --shard {} ({} peak per device{})",
        e.candidate.mesh_text(),
        e.candidate.strategies(),
        gib(m.peak_bytes as f64),
        if outcome.hbm > 0 {
            format!(" of {}", gib(outcome.hbm as f64))
        } else {
            String::new()
        }
    );
    if !args.json {
        outln!("{summary}");
    }
    if let Some(path) = &args.write_rules {
        let header = vec![
            format!(
                "tpuc plan {} for {} ({} devices)",
                args.model.display(),
                outcome.target,
                outcome.devices
            ),
            summary.clone(),
            format!(
                "use: tpuc compile {} --sharding-rules {}{}",
                args.model.display(),
                path.display(),
                args.topology
                    .as_ref()
                    .map(|t| format!(" --topology {t}"))
                    .unwrap_or_default()
            ),
        ];
        write_rules_file(path, &plan::rules_text(e, &header))?;
        errln!("wrote {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// The command that measures one candidate: this tpuc's `plan-measure`.
fn measurer() -> Result<Vec<std::ffi::OsString>, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find tpuc itself: {e}"))?;
    Ok(vec![exe.into_os_string(), "plan-measure".into()])
}

/// `tpuc compile --auto-shard`: the planner's choice for `topology` with the compile's
/// own options, as the sharding request to compile with.
pub fn auto_shard(
    model: &Path,
    topology: &str,
    libtpu: Option<&Path>,
    base: &CompileOptions,
    format: &str,
) -> Result<tpuc_compiler::ShardingRequest, String> {
    let settings = plan::PlanSettings::for_topology(topology, libtpu, base, format, measurer()?);
    let chosen = plan::auto_shard(model, &settings, base, &|line| errln!("{line}"))?;
    errln!(
        "auto-shard: --mesh {} --shard {} on {topology}",
        chosen.mesh,
        chosen.strategies
    );
    Ok(chosen.request)
}
