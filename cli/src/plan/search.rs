//! The planner's search (see the module above for the method): every candidate
//! compiled by tpuc, the best few compiled by XLA in a child process, the best plan
//! that fits chosen. Shared by `tpuc plan`, `tpuc compile --auto-shard` and the Python
//! package's `tpuc.compile(..., auto_shard=True)`; each names the child that measures
//! one candidate ([`PlanSettings::measurer`]).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use tpuc_compiler::{CompileOptions, ShardingRequest};
use tpuc_runtime::manifest::ShardingFormat;

use super::{Candidate, Evaluated, Measured};
use crate::plan;

/// What the planner is asked: where it plans for and how far it searches.
#[derive(Clone, Debug)]
pub struct PlanSettings {
    /// The TPU slice (`v5e:2x4`), compiled for by libtpu; or else
    pub topology: Option<String>,
    /// N devices of a PJRT plugin.
    pub devices: Option<usize>,
    /// The mesh axes candidates may use (dp, fsdp, ep, tp).
    pub axes: Vec<String>,
    /// How many candidates XLA compiles per round.
    pub top: usize,
    /// `highest`, `high` or `default`: the f32 matmul precision times are estimated at.
    pub matmul_precision: String,
    /// `shardy` or `gspmd`.
    pub sharding_format: String,
    pub libtpu: Option<PathBuf>,
    pub plugin: Option<PathBuf>,
    /// Compile every candidate again instead of reading measured ones from the cache.
    pub no_cache: bool,
    /// The child that measures one candidate: a program and its first arguments, to
    /// which the planner appends `ARTIFACT --passes P`, then `--topology T` or
    /// `--devices N`, and `--libtpu L` / `--plugin P` when set. The child prints the
    /// candidate's [`Measured`] as JSON on stdout, its progress as `plan: ` lines on
    /// stderr, and fails with an `error: ` line. `tpuc plan-measure` is one; the Python
    /// package's `tpuc._plan_measure` in a child Python another.
    pub measurer: Vec<OsString>,
}

impl PlanSettings {
    fn format(&self) -> ShardingFormat {
        match self.sharding_format.as_str() {
            "gspmd" => ShardingFormat::Gspmd,
            _ => ShardingFormat::Shardy,
        }
    }

    /// Planning for a TPU slice over every axis, as `tpuc compile --auto-shard` does.
    pub fn for_topology(
        topology: &str,
        libtpu: Option<&Path>,
        base: &CompileOptions,
        sharding_format: &str,
        measurer: Vec<OsString>,
    ) -> PlanSettings {
        PlanSettings {
            topology: Some(topology.to_string()),
            devices: None,
            axes: plan::AXES.iter().map(|(a, _)| a.to_string()).collect(),
            top: 3,
            matmul_precision: base.matmul_precision.name().to_string(),
            sharding_format: sharding_format.to_string(),
            libtpu: libtpu.map(Path::to_path_buf),
            plugin: None,
            no_cache: false,
            measurer,
        }
    }
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

impl Outcome {
    /// What `tpuc plan --json` prints and `tpuc.plan()` returns: the target, its
    /// devices and HBM, and every plan with its figures, the chosen one marked.
    pub fn to_json(&self) -> serde_json::Value {
        let plans: Vec<serde_json::Value> = self
            .evaluated
            .iter()
            .enumerate()
            .map(|(i, e)| {
                serde_json::json!({
                    "mesh": e.candidate.mesh_text(),
                    "strategies": e.candidate.strategies(),
                    "chosen": Some(i) == self.chosen,
                    "skipped": e.skipped,
                    "estimate_bytes": e.estimate,
                    "traffic_bytes": e.traffic,
                    "measured": e.measured,
                    "cached": e.cached,
                })
            })
            .collect();
        serde_json::json!({
            "target": self.target,
            "devices": self.devices,
            "hbm_bytes_per_device": self.hbm,
            "plans": plans,
        })
    }
}

/// Bytes in the largest binary unit that keeps the number at least 1.
pub fn gib(bytes: f64) -> String {
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

/// Runs the planner on `model` with `base` compile options (see the module above).
pub fn run_planner(
    model: &Path,
    settings: &PlanSettings,
    base: &CompileOptions,
    say: &(dyn Fn(&str) + Sync),
) -> Result<Outcome, String> {
    let format = settings.format();
    for a in &settings.axes {
        if !plan::AXES.iter().any(|(n, _)| n == a) {
            return Err(format!(
                "--axes: unknown axis `{a}` (known: dp, fsdp, ep, tp)"
            ));
        }
    }
    if settings.top == 0 {
        return Err("--top must be at least 1".into());
    }
    let allowed: Vec<&str> = settings.axes.iter().map(String::as_str).collect();
    // The devices, and where XLA compiles.
    let libtpu = match &settings.topology {
        Some(_) => Some(tpuc_runtime::tpu::load_libtpu(settings.libtpu.as_deref())?),
        None => None,
    };
    let (devices, target, hbm) = match (&settings.topology, settings.devices) {
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
            settings.axes.join(",")
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
    let passes = plan::effective_passes(&settings.matmul_precision, f32_share);
    // libtpu's build, part of each measurement's cache key.
    let libtpu_version = match (&settings.topology, &libtpu) {
        (Some(t), Some(plugin)) => tpuc_runtime::tpu::topology(plugin, t)?
            .platform_version()
            .map_err(|e| e.to_string())?,
        _ => String::new(),
    };
    let cache = if settings.no_cache {
        None
    } else {
        plan::cache_dir()
    };
    let mut chosen = None;
    let over = |e: &Evaluated| hbm > 0 && e.estimate > hbm as u64;
    for round in applicable.chunks(settings.top) {
        for &i in round {
            // A cancelled compile (Ctrl-C in Python) starts no more XLA compiles.
            base.check_cancelled().map_err(|e| e.to_string())?;
            // Once a measured plan fits, candidates tpuc already sees over the HBM are
            // not worth a compile.
            if over(&evaluated[i]) && plan::choose(&evaluated).is_some() {
                break;
            }
            let dir = programs[i].clone().expect("applicable candidates compiled");
            let c = &evaluated[i].candidate.clone();
            let manifest = evaluated[i].manifest.clone().expect("compiled");
            let partitioning = manifest.partitioning.as_ref().expect("sharded");
            let measured = match (&settings.topology, &libtpu) {
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
                            let m = measure_in_child(&dir, settings, devices, passes, say);
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
                    measure_in_child(&dir, settings, devices, passes, say)
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

/// XLA's compile of one candidate, in the child `settings.measurer` names: an abort
/// inside XLA (its partitioner has CHECKs a program can fail) costs that candidate, not
/// the plan. The child's progress lines are passed on as they come.
fn measure_in_child(
    dir: &Path,
    settings: &PlanSettings,
    devices: usize,
    passes: f64,
    say: &(dyn Fn(&str) + Sync),
) -> Result<Measured, String> {
    use std::io::BufRead;
    let (program, first_args) = settings
        .measurer
        .split_first()
        .ok_or("the planner was given no command to measure candidates with")?;
    let name = Path::new(program)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut cmd = std::process::Command::new(program);
    cmd.args(first_args)
        .arg(dir)
        .arg("--passes")
        .arg(passes.to_string());
    match &settings.topology {
        Some(t) => cmd.args(["--topology", t]),
        None => cmd.args(["--devices", &devices.to_string()]),
    };
    if let Some(p) = &settings.libtpu {
        cmd.arg("--libtpu").arg(p);
    }
    if let Some(p) = &settings.plugin {
        cmd.arg("--plugin").arg(p);
    }
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start the planner's child {name}: {e}"))?;
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
        .map_err(|e| format!("the planner's child {name}: {e}"))?;
    if status.success() {
        return serde_json::from_str(&out)
            .map_err(|e| format!("the planner's child {name} printed no measurement: {e}"));
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

/// The closest plan when none fits, and by how much it is over, per device.
pub fn nothing_fits(o: &Outcome) -> String {
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

/// The plan `tpuc compile --auto-shard` compiles with.
pub struct AutoShard {
    pub request: ShardingRequest,
    /// `dp=2,tp=4`
    pub mesh: String,
    /// `data-parallel,megatron`
    pub strategies: String,
}

/// The planner's choice for `settings.topology` with the compile's own options `base`
/// (which must not compile for a topology themselves), as the sharding request to
/// compile with; an error saying how far the closest plan is over when none fits.
pub fn auto_shard(
    model: &Path,
    settings: &PlanSettings,
    base: &CompileOptions,
    say: &(dyn Fn(&str) + Sync),
) -> Result<AutoShard, String> {
    let outcome = run_planner(model, settings, base, say)?;
    let Some(chosen) = outcome.chosen else {
        return Err(nothing_fits(&outcome));
    };
    let c: &Candidate = &outcome.evaluated[chosen].candidate;
    let options = plan::candidate_options(base, c, settings.format())?;
    Ok(AutoShard {
        request: options.sharding.expect("candidates are sharded"),
        mesh: c.mesh_text(),
        strategies: c.strategies(),
    })
}

/// The child's side for a TPU slice: libtpu's compile of the partitioned artifact at
/// `artifact` for `topology`, as [`Measured`] with `passes` MXU passes per f32 matmul.
/// Progress (`plan: libtpu still compiling ...`) goes to `say`.
pub fn measure_on_topology(
    artifact: &Path,
    topology: &str,
    passes: f64,
    libtpu: Option<&Path>,
    say: &(dyn Fn(&str) + Sync),
) -> Result<Measured, String> {
    let manifest = tpuc_runtime::session::read_manifest(artifact).map_err(|e| e.to_string())?;
    let partitioning = manifest
        .partitioning
        .as_ref()
        .ok_or("plan-measure takes a partitioned artifact")?;
    let mesh = partitioning.mesh.to_string();
    let libtpu = tpuc_runtime::tpu::load_libtpu(libtpu)?;
    let program = std::fs::read_to_string(artifact.join(&manifest.program.file))
        .map_err(|e| e.to_string())?;
    let tick = |topology: &str, elapsed: std::time::Duration| {
        say(&format!(
            "plan: libtpu still compiling {mesh} for {topology} ({} s so far)",
            elapsed.as_secs()
        ))
    };
    let compiled = tpuc_runtime::tpu::compile_on(
        &libtpu,
        topology,
        &program,
        partitioning.num_partitions,
        &partitioning.compile_options(),
        &tick,
    )?;
    Ok(plan::measured_on_tpu(topology, &compiled, passes))
}
