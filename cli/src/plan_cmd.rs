//! `tpuc plan MODEL --topology v5e:2x4` (or `--devices N` on a PJRT plugin): the
//! planner of `plan.rs` run, its table printed, its choice saved as a sharding-rules
//! file (`--write-rules`); and `tpuc compile --auto-shard`, which compiles with it.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use tpuc_cli::plan::{self, Candidate, Evaluated, Measured};
use tpuc_compiler::CompileOptions;
use tpuc_runtime::manifest::ShardingFormat;

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

/// What a planning run found.
pub struct Outcome {
    pub evaluated: Vec<Evaluated>,
    pub chosen: Option<usize>,
    pub devices: usize,
    /// The slice (`v5e:2x4`) or `N devices of PLUGIN`.
    pub target: String,
    /// HBM per device (0: unknown).
    pub hbm: i64,
}

/// Bytes in the largest binary unit that keeps the number at least 1.
fn gib(bytes: f64) -> String {
    let units = [("GiB", 30), ("MiB", 20), ("KiB", 10)];
    for (unit, shift) in units {
        let scale = (1u64 << shift) as f64;
        if bytes.abs() >= scale {
            return format!("{:.2} {unit}", bytes / scale);
        }
    }
    format!("{bytes:.0} B")
}

/// A temporary directory removed when dropped.
struct WorkDir(PathBuf);

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs the planner on `model` with `base` compile options (see `plan.rs`).
pub fn run_planner(
    model: &Path,
    args: &PlanArgs,
    base: &CompileOptions,
    say: &(dyn Fn(&str) + Sync),
) -> Result<Outcome, String> {
    let format = match args.sharding_format.as_str() {
        "gspmd" => ShardingFormat::Gspmd,
        _ => ShardingFormat::Shardy,
    };
    for a in &args.axes {
        if !plan::AXES.iter().any(|(n, _)| n == a) {
            return Err(format!(
                "--axes: unknown axis `{a}` (known: dp, fsdp, ep, tp)"
            ));
        }
    }
    if args.top == 0 {
        return Err("--top must be at least 1".into());
    }
    let allowed: Vec<&str> = args.axes.iter().map(String::as_str).collect();
    // The devices, and where XLA compiles.
    let libtpu = match &args.topology {
        Some(_) => Some(tpuc_runtime::tpu::load_libtpu(args.libtpu.as_deref())?),
        None => None,
    };
    let (devices, target, hbm) = match (&args.topology, args.devices) {
        (Some(t), _) => {
            let plugin = libtpu.as_ref().expect("loaded above");
            let topo = tpuc_runtime::tpu::topology(plugin, t)?;
            let devices = topo.num_devices().map_err(|e| e.to_string())?;
            let chips = tpuc_runtime::tpu::chips_in(t).unwrap_or(devices).max(1);
            let hbm = tpuc_runtime::tpu::hbm_bytes_per_chip(t).unwrap_or(0)
                / (devices / chips).max(1) as i64;
            (devices, t.clone(), hbm)
        }
        (None, Some(n)) if n >= 2 => (n, "the plugin".to_string(), 0),
        (None, Some(n)) => {
            return Err(format!(
                "--devices {n}: a plan partitions over at least 2 devices"
            ))
        }
        (None, None) => return Err("give --topology or --devices".into()),
    };
    let all = plan::candidates(devices as i64, &allowed);
    if all.is_empty() {
        return Err(format!(
            "no mesh over the axes {} spans {devices} devices",
            args.axes.join(",")
        ));
    }
    let work = WorkDir(std::env::temp_dir().join(format!(
        "tpuc-plan-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    )));
    std::fs::create_dir_all(&work.0).map_err(|e| format!("cannot create a work directory: {e}"))?;
    // tpuc's compile of every candidate, and its estimate.
    let mut evaluated: Vec<Evaluated> = Vec::with_capacity(all.len());
    let mut largest: Option<u64> = None;
    let mut f32_share = 0.0;
    let mut programs: Vec<Option<PathBuf>> = Vec::new();
    for (i, c) in all.iter().enumerate() {
        let dir = work.0.join(format!("{i}.tpuc"));
        let options = plan::candidate_options(base, c, format)?;
        let result = tpuc_compiler::compile(model, &dir, &options);
        let mut e = Evaluated {
            candidate: c.clone(),
            skipped: None,
            estimate: 0,
            traffic: 0,
            measured: None,
            manifest: None,
            cached: false,
        };
        match result {
            Err(err) => {
                // A model error (not the candidate's) stops the plan.
                let text = err.to_string();
                if !matches!(err, tpuc_compiler::CompileError::Sharding(_)) {
                    return Err(text);
                }
                e.skipped = Some(text.trim_start_matches("sharding: ").to_string());
                programs.push(None);
            }
            Ok(_) => {
                let manifest =
                    tpuc_runtime::session::read_manifest(&dir).map_err(|e| e.to_string())?;
                let program_path = dir.join(&manifest.program.file);
                if largest.is_none() {
                    let text = std::fs::read_to_string(&program_path)
                        .map_err(|e| format!("{}: {e}", program_path.display()))?;
                    largest = Some(plan::largest_tensor_bytes(&text));
                    f32_share = plan::f32_matmul_share(&text);
                }
                let (estimate, traffic) = plan::estimate(&manifest, c, largest.unwrap_or(0));
                e.estimate = estimate;
                e.traffic = traffic;
                e.manifest = Some(manifest);
                programs.push(Some(dir));
            }
        }
        evaluated.push(e);
    }
    let order = plan::rank(&evaluated, hbm.max(0) as u64);
    let applicable: Vec<usize> = order
        .iter()
        .copied()
        .filter(|&i| evaluated[i].skipped.is_none())
        .collect();
    if applicable.is_empty() {
        let reasons: Vec<String> = evaluated
            .iter()
            .map(|e| {
                format!(
                    "  {}: {}",
                    e.candidate.mesh_text(),
                    e.skipped.as_deref().unwrap_or("")
                )
            })
            .collect();
        return Err(format!(
            "no candidate plan applies to this program on {target}:\n{}",
            reasons.join("\n")
        ));
    }
    // XLA's compile of the best few, round after round until one fits.
    let passes = plan::effective_passes(&args.matmul_precision, f32_share);
    // libtpu's build, part of each measurement's cache key.
    let libtpu_version = match (&args.topology, &libtpu) {
        (Some(t), Some(plugin)) => tpuc_runtime::tpu::topology(plugin, t)?
            .platform_version()
            .map_err(|e| e.to_string())?,
        _ => String::new(),
    };
    let cache = if args.no_cache {
        None
    } else {
        plan::cache_dir()
    };
    let mut chosen = None;
    let over = |e: &Evaluated| hbm > 0 && e.estimate > hbm as u64;
    for round in applicable.chunks(args.top) {
        for &i in round {
            // Once a measured plan fits, candidates tpuc already sees over the HBM are
            // not worth a compile.
            if over(&evaluated[i]) && plan::choose(&evaluated).is_some() {
                break;
            }
            let dir = programs[i].clone().expect("applicable candidates compiled");
            let c = &evaluated[i].candidate.clone();
            let manifest = evaluated[i].manifest.clone().expect("compiled");
            let partitioning = manifest.partitioning.as_ref().expect("sharded");
            let measured = match (&args.topology, &libtpu) {
                (Some(t), Some(_)) => {
                    let program = std::fs::read_to_string(dir.join(&manifest.program.file))
                        .map_err(|e| e.to_string())?;
                    let options = partitioning.compile_options();
                    let file = cache.as_ref().map(|d| {
                        plan::cache_file(
                            d,
                            &[
                                program.as_bytes(),
                                format!("{options:?}").as_bytes(),
                                t.as_bytes(),
                                libtpu_version.as_bytes(),
                                env!("CARGO_PKG_VERSION").as_bytes(),
                            ],
                        )
                    });
                    match file.as_deref().and_then(plan::read_cached) {
                        Some(mut m) => {
                            m.seconds = plan::roofline(t, &m, passes);
                            m.seconds_default = plan::roofline(t, &m, 1.0);
                            evaluated[i].cached = true;
                            say(&format!(
                                "plan: {} ({}) on {t}: from the cache",
                                c.mesh_text(),
                                c.strategies()
                            ));
                            Ok(m)
                        }
                        None => {
                            say(&format!(
                                "plan: compiling {} ({}) for {t} with libtpu",
                                c.mesh_text(),
                                c.strategies()
                            ));
                            let m = measure_in_child(&dir, args, devices, passes, say);
                            if let (Ok(m), Some(f)) = (&m, &file) {
                                plan::write_cached(f, m);
                            }
                            m
                        }
                    }
                }
                _ => {
                    say(&format!(
                        "plan: compiling {} ({}) on {devices} plugin devices",
                        c.mesh_text(),
                        c.strategies()
                    ));
                    measure_in_child(&dir, args, devices, passes, say)
                }
            };
            match measured {
                Ok(m) => evaluated[i].measured = Some(m),
                Err(e) => {
                    // libtpu's out-of-memory refusal is a measurement: it does not fit.
                    if let Some(m) = out_of_memory(&e, hbm) {
                        evaluated[i].measured = Some(m);
                    } else {
                        evaluated[i].skipped = Some(format!("XLA refused it: {e}"));
                    }
                }
            }
        }
        chosen = plan::choose(&evaluated);
        if chosen.is_some() {
            break;
        }
    }
    // Table order: the ranking.
    let ranked: Vec<Evaluated> = order.iter().map(|&i| evaluated[i].clone()).collect();
    let chosen = chosen.map(|c| {
        order
            .iter()
            .position(|&i| i == c)
            .expect("chosen is a candidate")
    });
    Ok(Outcome {
        evaluated: ranked,
        chosen,
        devices,
        target,
        hbm,
    })
}

/// XLA's compile of one candidate, in a child `tpuc plan-measure`: an abort inside XLA
/// (its partitioner has CHECKs a program can fail) costs that candidate, not the plan.
/// The child's progress lines are passed on as they come.
fn measure_in_child(
    dir: &Path,
    args: &PlanArgs,
    devices: usize,
    passes: f64,
    say: &(dyn Fn(&str) + Sync),
) -> Result<Measured, String> {
    use std::io::BufRead;
    let exe = std::env::current_exe().map_err(|e| format!("cannot find tpuc itself: {e}"))?;
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("plan-measure")
        .arg(dir)
        .arg("--passes")
        .arg(passes.to_string());
    match &args.topology {
        Some(t) => cmd.args(["--topology", t]),
        None => cmd.args(["--devices", &devices.to_string()]),
    };
    if let Some(p) = &args.libtpu {
        cmd.arg("--libtpu").arg(p);
    }
    if let Some(p) = &args.plugin {
        cmd.arg("--plugin").arg(p);
    }
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start tpuc plan-measure: {e}"))?;
    let stderr = child.stderr.take().expect("piped");
    let mut stdout = child.stdout.take().expect("piped");
    let (out, errors) = std::thread::scope(|scope| {
        let reader = scope.spawn(move || {
            let mut errors = Vec::new();
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                if line.starts_with("plan:") {
                    say(&line);
                } else if !line.trim().is_empty() {
                    errors.push(line);
                }
            }
            errors
        });
        let mut out = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut out);
        (out, reader.join().unwrap_or_default())
    });
    let status = child
        .wait()
        .map_err(|e| format!("tpuc plan-measure: {e}"))?;
    if status.success() {
        return serde_json::from_str(&out).map_err(|e| format!("tpuc plan-measure: {e}"));
    }
    let message = errors
        .iter()
        .rev()
        .find(|l| l.starts_with("error: "))
        .map(|l| l.trim_start_matches("error: ").to_string());
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return Err(format!(
                "XLA aborted compiling it (signal {signal}{}): its partitioner cannot take this plan",
                errors
                    .iter()
                    .find(|l| l.contains("Check failed"))
                    .map(|l| format!("; {}", l.trim()))
                    .unwrap_or_default()
            ));
        }
    }
    Err(message.unwrap_or_else(|| errors.join("\n")))
}

/// `tpuc plan-measure ART`: the child side of [`measure_in_child`]; prints the
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
    let manifest =
        tpuc_runtime::session::read_manifest(&args.artifact).map_err(|e| e.to_string())?;
    let partitioning = manifest
        .partitioning
        .as_ref()
        .ok_or("plan-measure takes a partitioned artifact")?;
    let mesh = partitioning.mesh.to_string();
    let m = match (&args.topology, args.devices) {
        (Some(t), _) => {
            let libtpu = tpuc_runtime::tpu::load_libtpu(args.libtpu.as_deref())?;
            let program = std::fs::read_to_string(args.artifact.join(&manifest.program.file))
                .map_err(|e| e.to_string())?;
            let tick = |topology: &str, elapsed: std::time::Duration| {
                errln!(
                    "plan: libtpu still compiling {mesh} for {topology} ({} s so far)",
                    elapsed.as_secs()
                )
            };
            let compiled = tpuc_runtime::tpu::compile_on(
                &libtpu,
                t,
                &program,
                partitioning.num_partitions,
                &partitioning.compile_options(),
                &tick,
            )?;
            plan::measured_on_tpu(t, &compiled, args.passes)
        }
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

/// libtpu's compile-time out-of-memory error as a measurement that does not fit: the
/// memory it says the program needs (`... (54.42G) exceeds available HBM (15.75G)`).
fn out_of_memory(message: &str, hbm: i64) -> Option<Measured> {
    if !tpuc_runtime::tpu::is_out_of_memory(message) {
        return None;
    }
    let figure = |after: &str| {
        message
            .split(after)
            .nth(1)
            .and_then(|rest| rest.split('(').nth(1))
            .and_then(|n| n.split(')').next())
            .and_then(parse_size)
    };
    let needed = figure("required for").unwrap_or(0.0);
    // What libtpu says a device has (less than the chip's HBM: it keeps some).
    let available = figure("exceeds available HBM").map_or(hbm, |a| a as i64);
    Some(Measured {
        peak_bytes: needed as i64,
        hbm_bytes: available,
        fits: false,
        ..Measured::default()
    })
}

/// `54.42G`, `512.00M`, `3.1K` as bytes (XLA's binary units).
fn parse_size(text: &str) -> Option<f64> {
    let text = text.trim();
    let (num, unit) = text.split_at(text.find(|c: char| c.is_ascii_alphabetic())?);
    let n: f64 = num.trim().parse().ok()?;
    let scale = match unit.chars().next()? {
        'K' => 1u64 << 10,
        'M' => 1 << 20,
        'G' => 1 << 30,
        'T' => 1 << 40,
        _ => 1,
    };
    Some(n * scale as f64)
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
    let plans: Vec<serde_json::Value> = o
        .evaluated
        .iter()
        .enumerate()
        .map(|(i, e)| {
            serde_json::json!({
                "mesh": e.candidate.mesh_text(),
                "strategies": e.candidate.strategies(),
                "chosen": Some(i) == o.chosen,
                "skipped": e.skipped,
                "estimate_bytes": e.estimate,
                "traffic_bytes": e.traffic,
                "measured": e.measured,
                "cached": e.cached,
            })
        })
        .collect();
    let v = serde_json::json!({
        "target": o.target,
        "devices": o.devices,
        "hbm_bytes_per_device": o.hbm,
        "plans": plans,
    });
    outln!(
        "{}",
        serde_json::to_string_pretty(&v).map_err(|e| e.to_string())?
    );
    Ok(())
}

/// The closest plan when none fits, and by how much it is over, per device.
fn nothing_fits(o: &Outcome) -> String {
    let closest = o
        .evaluated
        .iter()
        .filter_map(|e| Some((e, e.measured.as_ref()?)))
        .min_by_key(|(_, m)| m.peak_bytes);
    match closest {
        Some((e, m)) => {
            let has = if m.hbm_bytes > 0 { m.hbm_bytes } else { o.hbm };
            format!(
                "no plan fits {}: the closest is --mesh {} --shard {}, which needs {} per device, {} over the {} a device has (libtpu's figure); a slice with more devices, or more HBM per chip, would hold it",
                o.target,
                e.candidate.mesh_text(),
                e.candidate.strategies(),
                gib(m.peak_bytes as f64),
                gib((m.peak_bytes - has).max(0) as f64),
                gib(has as f64)
            )
        }
        None => format!("no plan could be compiled for {}", o.target),
    }
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
    let outcome = run_planner(&args.model, args, &base_options(args), &|line| {
        errln!("{line}")
    })?;
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

/// `tpuc compile --auto-shard`: the planner's choice for `topology` with the compile's
/// own options, as the sharding request to compile with.
pub fn auto_shard(
    model: &Path,
    topology: &str,
    libtpu: Option<&Path>,
    base: &CompileOptions,
    format: &str,
) -> Result<tpuc_compiler::ShardingRequest, String> {
    let args = PlanArgs {
        model: model.to_path_buf(),
        topology: Some(topology.to_string()),
        devices: None,
        axes: plan::AXES.iter().map(|(a, _)| a.to_string()).collect(),
        top: 3,
        write_rules: None,
        json: false,
        weights_as_inputs: false,
        matmul_precision: base.matmul_precision.name().to_string(),
        sharding_format: format.to_string(),
        libtpu: libtpu.map(Path::to_path_buf),
        plugin: None,
        no_cache: false,
    };
    let outcome = run_planner(model, &args, base, &|line| errln!("{line}"))?;
    let Some(chosen) = outcome.chosen else {
        return Err(nothing_fits(&outcome));
    };
    let c: &Candidate = &outcome.evaluated[chosen].candidate;
    errln!(
        "auto-shard: --mesh {} --shard {} on {topology}",
        c.mesh_text(),
        c.strategies()
    );
    let options = plan::candidate_options(
        base,
        c,
        if format == "gspmd" {
            ShardingFormat::Gspmd
        } else {
            ShardingFormat::Shardy
        },
    )?;
    Ok(options.sharding.expect("candidates are sharded"))
}
