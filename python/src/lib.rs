//! `tpuc._tpuc`: the native half of the `tpuc` Python package. The Python half
//! (`python/tpuc/`) turns torch modules, tensors and keywords into what this module
//! takes: paths, option dictionaries and raw tensor views (`(dtype, shape, address,
//! bytes)`), and back. Everything here is a thin call into `tpuc_compiler` and
//! `tpuc_runtime`; the GIL is released while they work.
//!
//! Errors are the classes of `tpuc._errors`: `CompileError` (with `node`, `op` and
//! `hint` where the compiler names them), `InputError` (a `ValueError`: inputs of the
//! wrong count, dtype or shape, named), `OptionError` (a `ValueError`: a bad option,
//! named) and `RuntimeError` (plugin and artifact failures). A panic inside tpuc becomes `pyo3`'s `PanicException`,
//! never an abort of the interpreter.

mod glibc_compat;
mod marshal;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};

use tpuc_compiler::passes::{MatmulPrecision, OptLevel};
use tpuc_compiler::{CompileError as Ce, CompileOptions, Target};
use tpuc_runtime::training::Trainer;
use tpuc_runtime::{
    CacheMode, Client, ClientOptions, DType, HostTensor, HostView, LoadOptions, Plugin,
    RuntimeError as Re, Session,
};

/// An instance of `tpuc._errors.<class>` (defined in Python, so that `InputError` is
/// also a `ValueError` and `RuntimeError` a `RuntimeError`) with `message`.
fn error(class: &str, message: impl Into<String>) -> PyErr {
    let message = message.into();
    Python::attach(|py| {
        match py
            .import("tpuc._errors")
            .and_then(|m| m.getattr(class))
            .and_then(|c| c.call1((message.clone(),)))
        {
            Ok(instance) => PyErr::from_value(instance),
            Err(e) => e,
        }
    })
}

fn option_error(message: impl Into<String>) -> PyErr {
    error("OptionError", message)
}

/// A compile error as `CompileError`, with `node`, `op` and `hint` set when known.
fn compile_error(py: Python<'_>, e: Ce) -> PyErr {
    let message = e.to_string();
    let (node, op) = match &e {
        Ce::Node { node, target, .. } => (Some(node.clone()), Some(target.clone())),
        Ce::UnsupportedOps(ops) => match ops.first() {
            Some(first) => (Some(first.first_node.clone()), Some(first.target.clone())),
            None => (None, None),
        },
        Ce::Neuron(d) => match d.first() {
            Some(first) => (Some(first.node.clone()), Some(first.op.clone())),
            None => (None, None),
        },
        _ => (None, None),
    };
    let hint = message
        .split_once("hint: ")
        .map(|(_, h)| h.lines().next().unwrap_or(h).trim().to_string());
    let err = error("CompileError", message);
    let value = err.value(py);
    let _ = value.setattr("node", node);
    let _ = value.setattr("op", op);
    let _ = value.setattr("hint", hint);
    err
}

fn runtime_error(e: Re) -> PyErr {
    match e {
        Re::InputCount { .. } | Re::InputMismatch { .. } | Re::Sizes(_) => {
            error("InputError", e.to_string())
        }
        other => error("RuntimeError", other.to_string()),
    }
}

fn dtype(name: &str) -> PyResult<DType> {
    DType::parse(name).ok_or_else(|| option_error(format!("unknown dtype `{name}`")))
}

// ---------------------------------------------------------------------------------
// Compiling
// ---------------------------------------------------------------------------------

/// A value of the options dictionary, by its Python type.
fn get<'py, T: pyo3::conversion::FromPyObjectOwned<'py>>(
    options: &Bound<'py, PyDict>,
    key: &str,
) -> PyResult<Option<T>> {
    match options.get_item(key)? {
        None => Ok(None),
        Some(v) if v.is_none() => Ok(None),
        Some(v) => v.extract::<T>().map(Some).map_err(|_| {
            pyo3::exceptions::PyTypeError::new_err(format!(
                "option `{key}`: {} is not of the expected type",
                v.repr().map(|r| r.to_string()).unwrap_or_default()
            ))
        }),
    }
}

/// `CompileOptions` from the Python keywords (already checked for names by the Python
/// side); `cancel` aborts the compile before its artifact is moved into place.
fn compile_options(
    options: &Bound<'_, PyDict>,
    cancel: Arc<AtomicBool>,
) -> PyResult<CompileOptions> {
    let mut o = CompileOptions::default();
    if let Some(t) = get::<String>(options, "target")? {
        o.target = Target::parse(&t).map_err(|e| option_error(format!("target: {e}")))?;
    }
    if let Some(level) = get::<i64>(options, "opt_level")? {
        o.opt_level = OptLevel::parse(&level.to_string())
            .ok_or_else(|| option_error(format!("opt_level: {level} is not 0, 1 or 2")))?;
    }
    if let Some(p) = get::<String>(options, "matmul_precision")? {
        o.matmul_precision = MatmulPrecision::parse(&p).ok_or_else(|| {
            option_error(format!(
                "matmul_precision: `{p}` is not default, high or highest"
            ))
        })?;
    }
    let auto_cast = get::<String>(options, "auto_cast")?;
    let keep_int64 = get::<bool>(options, "keep_int64")?.unwrap_or(false);
    if o.target.neuron_chip().is_none() && (auto_cast.is_some() || keep_int64) {
        return Err(option_error(
            "auto_cast and keep_int64 are for Neuron targets (trn1, trn2, trn3, inf2)",
        ));
    }
    if let Some(a) = auto_cast {
        o.neuron.auto_cast = tpuc_compiler::targets::neuron::AutoCast::parse(&a)
            .ok_or_else(|| option_error(format!("auto_cast: `{a}` is not none, bf16 or fp16")))?;
    }
    o.neuron.narrow_int64 = !keep_int64;
    o.sharding = tpuc_compiler::ShardingSettings {
        mesh: get(options, "mesh")?,
        shard: get::<Vec<String>>(options, "shard")?.unwrap_or_default(),
        sharding_rules: get(options, "sharding_rules")?,
        sharding_format: get(options, "sharding_format")?,
    }
    .resolve("")
    .map_err(option_error)?;
    for s in get::<Vec<String>>(options, "specialize")?.unwrap_or_default() {
        o.specialize.push(
            tpuc_runtime::symbolic::parse_bindings(&s)
                .map_err(|e| option_error(format!("specialize: {e}")))?,
        );
    }
    o.debug_outputs = get::<bool>(options, "debug_outputs")?.unwrap_or(false);
    if get::<bool>(options, "weights_as_inputs")?.unwrap_or(false) {
        o.missing_weights = tpuc_compiler::MissingWeights::AsInputs;
    }
    let betas = get::<(f64, f64)>(options, "betas")?;
    o.training = tpuc_compiler::training::TrainSettings {
        train: get::<bool>(options, "train")?.unwrap_or(false),
        optimizer: get(options, "optimizer")?,
        lr: get(options, "lr")?,
        betas,
        eps: get(options, "eps")?,
        weight_decay: get(options, "weight_decay")?,
        momentum: get(options, "momentum")?,
        dampening: get(options, "dampening")?,
        nesterov: get::<bool>(options, "nesterov")?.unwrap_or(false),
        clip_grad_norm: get(options, "clip_grad_norm")?,
        schedule: get(options, "schedule")?,
        warmup_steps: get(options, "warmup_steps")?,
        total_steps: get(options, "total_steps")?,
        min_lr_ratio: get(options, "min_lr_ratio")?,
        freeze: get::<Vec<String>>(options, "freeze")?.unwrap_or_default(),
    }
    .resolve("")
    .map_err(option_error)?;
    let topologies = get::<Vec<String>>(options, "topology")?.unwrap_or_default();
    let libtpu = get::<PathBuf>(options, "libtpu")?;
    if !topologies.is_empty() {
        o.finish = Some(Arc::new(
            move |dir: &Path, manifest: &mut tpuc_runtime::Manifest, program: &str| {
                tpuc_runtime::tpu::compile_for_topologies(
                    dir,
                    manifest,
                    program,
                    &topologies,
                    libtpu.as_deref(),
                    &|_| {},
                )
            },
        ));
    } else if libtpu.is_some() {
        return Err(option_error(
            "libtpu is used with topology (for example topology=\"v5e:2x2\")",
        ));
    }
    o.cancel = Some(cancel);
    Ok(o)
}

/// `auto_shard=True`: the planner's settings for the first topology (None without
/// auto_shard).
fn plan_settings(
    py: Python<'_>,
    options: &Bound<'_, PyDict>,
    compile: &CompileOptions,
) -> PyResult<Option<tpuc_cli::plan::PlanSettings>> {
    if !get::<bool>(options, "auto_shard")?.unwrap_or(false) {
        return Ok(None);
    }
    planner_settings(py, options, compile, "auto_shard").map(Some)
}

/// The planner's settings for the first topology of `options`, with the child that
/// measures a candidate being this interpreter running `tpuc._plan_measure.main`.
/// `caller` names the keyword or function in messages.
fn planner_settings(
    py: Python<'_>,
    options: &Bound<'_, PyDict>,
    compile: &CompileOptions,
    caller: &str,
) -> PyResult<tpuc_cli::plan::PlanSettings> {
    let topologies = get::<Vec<String>>(options, "topology")?.unwrap_or_default();
    let Some(topology) = topologies.first() else {
        return Err(option_error(format!(
            "{caller} plans for a TPU slice: give topology (for example topology=\"v5e:2x4\")"
        )));
    };
    let python: String = py.import("sys")?.getattr("executable")?.extract()?;
    if python.is_empty() {
        return Err(error(
            "RuntimeError",
            format!("{caller} measures each plan in a child Python process, and this interpreter has no sys.executable"),
        ));
    }
    // The child imports this very package, whatever its working directory holds.
    let package: PathBuf = py.import("tpuc")?.getattr("__file__")?.extract()?;
    let root = package
        .parent()
        .and_then(Path::parent)
        .ok_or_else(|| error("RuntimeError", "cannot locate the tpuc package"))?;
    let root = root.into_pyobject(py)?.str()?.repr()?;
    let child = format!(
        "import sys; sys.path.insert(0, {root}); from tpuc._plan_measure import main; sys.exit(main(sys.argv[1:]))"
    );
    let format = get::<String>(options, "sharding_format")?.unwrap_or_else(|| "shardy".into());
    Ok(tpuc_cli::plan::PlanSettings::for_topology(
        topology,
        get::<PathBuf>(options, "libtpu")?.as_deref(),
        compile,
        &format,
        vec![python.into(), "-c".into(), child.into()],
    ))
}

/// `auto_shard` with options it replaces: named before those options are read.
fn check_auto_shard(options: &Bound<'_, PyDict>) -> PyResult<()> {
    if !get::<bool>(options, "auto_shard")?.unwrap_or(false) {
        return Ok(());
    }
    refuse_fixed_mesh(options, "auto_shard", &["mesh", "shard", "sharding_rules"])
}

/// The planner (named `who` in the message) chooses the mesh: any of `keys` given is
/// an OptionError naming it.
fn refuse_fixed_mesh(options: &Bound<'_, PyDict>, who: &str, keys: &[&str]) -> PyResult<()> {
    for key in keys {
        if get::<Bound<'_, PyAny>>(options, key)?.is_some() {
            return Err(option_error(format!(
                "{who} chooses the mesh and strategies itself: drop `{key}`"
            )));
        }
    }
    Ok(())
}

/// Why the compile thread failed.
enum Failed {
    Compile(Ce),
    /// The planner of `auto_shard` (its own message).
    Plan(String),
}

/// What the compile thread produced: the report, and the plan `auto_shard` chose.
type Compiled = (
    tpuc_compiler::CompileReport,
    Option<tpuc_cli::plan::AutoShard>,
);

/// Runs `work` on its own thread while this one waits: the lines `work` says go to the
/// `tpuc` logger (INFO) as they come, and Ctrl-C sets `cancel` and raises
/// KeyboardInterrupt at once. The work then stops at its next stage boundary (a pass,
/// or before an XLA compile; a stage under way runs to its end) and never moves a
/// cancelled artifact into place.
fn in_background<T: Send + 'static>(
    py: Python<'_>,
    cancel: &AtomicBool,
    work: impl FnOnce(&(dyn Fn(&str) + Sync)) -> T + Send + 'static,
) -> PyResult<T> {
    let lines: Arc<Mutex<Vec<String>>> = Arc::default();
    let (tx, rx) = std::sync::mpsc::channel();
    let worker = {
        let lines = lines.clone();
        std::thread::spawn(move || {
            let say = |line: &str| lines.lock().unwrap().push(line.to_string());
            let _ = tx.send(work(&say));
        })
    };
    let log = |py: Python<'_>| -> PyResult<()> {
        let pending = std::mem::take(&mut *lines.lock().unwrap());
        if !pending.is_empty() {
            let logger = py.import("logging")?.call_method1("getLogger", ("tpuc",))?;
            for line in pending {
                logger.call_method1("info", (line,))?;
            }
        }
        Ok(())
    };
    let result = loop {
        match rx.try_recv() {
            Ok(r) => break r,
            Err(std::sync::mpsc::TryRecvError::Empty) => {
                py.detach(|| std::thread::sleep(std::time::Duration::from_millis(20)));
                log(py)?;
                if let Err(e) = py.check_signals() {
                    cancel.store(true, Ordering::SeqCst);
                    drop(worker);
                    return Err(e);
                }
            }
            Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                return Err(error(
                    "TpucError",
                    "internal error: the compile thread ended without a result (a tpuc bug)",
                ))
            }
        }
    };
    let _ = worker.join();
    log(py)?;
    Ok(result)
}

/// compile(source, output, keywords) -> dict: compiles the exported program at
/// `source` (.pt2 or model.json) into the artifact directory `output`. Ctrl-C raises
/// KeyboardInterrupt and leaves no artifact. With `auto_shard`, the planner first
/// chooses the mesh and strategies; its progress lines go to the `tpuc` logger (INFO).
#[pyfunction]
fn compile(
    py: Python<'_>,
    source: PathBuf,
    output: PathBuf,
    keywords: &Bound<'_, PyDict>,
) -> PyResult<Py<PyDict>> {
    check_auto_shard(keywords)?;
    let cancel = Arc::new(AtomicBool::new(false));
    let mut options = compile_options(keywords, cancel.clone())?;
    let plan = plan_settings(py, keywords, &options)?;
    let result = in_background(py, &cancel, move |say| -> Result<Compiled, Failed> {
        let mut chosen = None;
        if let Some(settings) = &plan {
            // The candidates compile without the topology's own libtpu step.
            let base = CompileOptions {
                finish: None,
                ..options.clone()
            };
            let c =
                tpuc_cli::plan::auto_shard(&source, settings, &base, say).map_err(Failed::Plan)?;
            say(&format!(
                "auto_shard: mesh={:?} shard={:?} on {}",
                c.mesh,
                c.strategies,
                settings.topology.as_deref().unwrap_or_default()
            ));
            options.sharding = Some(c.request.clone());
            chosen = Some(c);
        }
        let report = tpuc_compiler::compile(&source, &output, &options).map_err(Failed::Compile)?;
        Ok((report, chosen))
    })?;
    let (report, chosen) = result.map_err(|e| match e {
        Failed::Compile(e) => compile_error(py, e),
        Failed::Plan(message) => error("CompileError", format!("auto_shard: {message}")),
    })?;
    let d = PyDict::new(py);
    d.set_item("output", report.output.display().to_string())?;
    d.set_item("nodes", report.num_nodes)?;
    d.set_item("weights", report.num_weights)?;
    d.set_item("weight_bytes", report.weight_bytes)?;
    d.set_item("zero_filled", report.zero_filled)?;
    d.set_item("warnings", report.warnings)?;
    if let Some(c) = chosen {
        let plan = PyDict::new(py);
        plan.set_item("mesh", c.mesh)?;
        plan.set_item("shard", c.strategies)?;
        d.set_item("auto_shard", plan)?;
    }
    Ok(d.unbind())
}

/// plan(source, keywords, axes=None, top=3) -> str: `tpuc plan` on the exported
/// program at `source` for the slice `keywords["topology"]` names, as the JSON of
/// `tpuc plan --json`. The keywords are compile options (those that fix the mesh are
/// refused: the planner chooses it); progress goes to the `tpuc` logger. Ctrl-C
/// raises KeyboardInterrupt.
#[pyfunction]
#[pyo3(signature = (source, keywords, axes=None, top=3))]
fn plan(
    py: Python<'_>,
    source: PathBuf,
    keywords: &Bound<'_, PyDict>,
    axes: Option<Vec<String>>,
    top: usize,
) -> PyResult<String> {
    refuse_fixed_mesh(
        keywords,
        "plan()",
        &["mesh", "shard", "sharding_rules", "auto_shard"],
    )?;
    let cancel = Arc::new(AtomicBool::new(false));
    let mut base = compile_options(keywords, cancel.clone())?;
    // The candidates compile without the topology's own libtpu step.
    base.finish = None;
    let mut settings = planner_settings(py, keywords, &base, "plan()")?;
    if let Some(axes) = axes {
        settings.axes = axes;
    }
    settings.top = top;
    let outcome = in_background(py, &cancel, move |say| {
        tpuc_cli::plan::run_planner(&source, &settings, &base, say)
    })?
    .map_err(|message| error("CompileError", format!("plan: {message}")))?;
    serde_json::to_string(&outcome.to_json()).map_err(|e| error("RuntimeError", e.to_string()))
}

/// plan_measure(artifact, topology, passes, libtpu) -> str: the planner's child
/// (`tpuc._plan_measure`, run in a child Python): libtpu's compile of one candidate for the slice, as
/// the JSON the planner reads. Its progress lines go to stderr.
#[pyfunction]
#[pyo3(signature = (artifact, topology, passes, libtpu=None))]
fn plan_measure(
    py: Python<'_>,
    artifact: PathBuf,
    topology: String,
    passes: f64,
    libtpu: Option<PathBuf>,
) -> PyResult<String> {
    let measured = py
        .detach(|| {
            tpuc_cli::plan::measure_on_topology(
                &artifact,
                &topology,
                passes,
                libtpu.as_deref(),
                &|line| eprintln!("{line}"),
            )
        })
        .map_err(|e| error("RuntimeError", e))?;
    serde_json::to_string(&measured).map_err(|e| error("RuntimeError", e.to_string()))
}

/// The TPU figures and a training step's memory shares of the artifact at `path`, as
/// JSON (`tpuc report --json`).
#[pyfunction]
fn report_json(path: PathBuf) -> PyResult<String> {
    let manifest = tpuc_runtime::session::read_manifest(&path).map_err(runtime_error)?;
    let training = tpuc_runtime::training::memory_per_device(&manifest).map(|m| m.to_json());
    Ok(serde_json::json!({
        "matmul_precision": manifest.matmul_precision,
        "tpu_executables": manifest.tpu_executables,
        "training_memory_per_device": training,
    })
    .to_string())
}

/// The PJRT plugin tpuc would use: `path` if given, else `$TPUC_PJRT_PLUGIN`, the
/// project's `.deps`, then Python environments (as `tpuc devices` finds one).
#[pyfunction]
#[pyo3(signature = (path=None))]
fn find_plugin(path: Option<PathBuf>) -> PyResult<String> {
    tpuc_runtime::discover::find_plugin(path.as_deref())
        .map(|p| p.display().to_string())
        .map_err(runtime_error)
}

// ---------------------------------------------------------------------------------
// Running
// ---------------------------------------------------------------------------------

enum Loaded {
    Plain(Box<Session>),
    Training(Box<Trainer>),
}

impl Loaded {
    fn session(&self) -> &Session {
        match self {
            Loaded::Plain(s) => s,
            Loaded::Training(t) => t.session(),
        }
    }
}

/// A loaded artifact: its session (or training session) on a plugin's client.
#[pyclass(module = "tpuc._tpuc")]
struct NativeProgram {
    inner: Mutex<Loaded>,
    /// Set when a call failed inside the plugin: later calls raise instead of
    /// touching a client in an unknown state.
    broken: AtomicBool,
    /// The inputs' and outputs' dtypes and shapes, for the per-call path.
    specs: marshal::Specs,
}

/// A view of caller memory: `(dtype, shape, address, bytes)`.
type RawView = (String, Vec<i64>, usize, usize);

/// The runtime's views of raw views.
fn views(raw: &[RawView]) -> PyResult<Vec<HostView<'_>>> {
    raw.iter()
        .map(|(d, shape, address, bytes)| {
            Ok(HostView {
                dtype: dtype(d)?,
                shape,
                data: raw_slice(*address, *bytes),
            })
        })
        .collect()
}

/// The caller's memory at `address`.
fn raw_slice<'a>(address: usize, bytes: usize) -> &'a [u8] {
    if bytes == 0 {
        &[]
    } else {
        // SAFETY: the caller (the Python side, or `call` for arrays it holds) passes the
        // address and size of a live, contiguous array it keeps referenced for the
        // duration of the call.
        unsafe { std::slice::from_raw_parts(address as *const u8, bytes) }
    }
}

/// Copies of views, for the runtime calls that take owned tensors.
fn owned(views: &[HostView<'_>]) -> Vec<HostTensor> {
    views.iter().map(HostView::to_tensor).collect()
}

fn host_tuple<'py>(py: Python<'py>, t: &HostTensor) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(
        py,
        [
            t.dtype.name().into_pyobject(py)?.into_any(),
            PyList::new(py, &t.shape)?.into_any(),
            PyBytes::new(py, &t.data).into_any(),
        ],
    )
}

impl NativeProgram {
    /// Runs on caller memory: inputs as views, outputs written into the caller's
    /// arrays (`[(address, bytes)]`, sized from the output specs).
    fn run_views(
        &self,
        py: Python<'_>,
        views: &[HostView<'_>],
        outputs: &[(usize, usize)],
    ) -> PyResult<()> {
        py.detach(|| {
            self.with(|l| {
                let mut dsts: Vec<&mut [u8]> = outputs
                    .iter()
                    .map(|&(address, bytes)| {
                        if bytes == 0 {
                            &mut [][..]
                        } else {
                            // SAFETY: the caller allocated each destination array
                            // and keeps it referenced for the duration of the call.
                            unsafe { std::slice::from_raw_parts_mut(address as *mut u8, bytes) }
                        }
                    })
                    .collect();
                l.session().run_into(views, &mut dsts)
            })
        })
    }

    fn with<R>(&self, f: impl FnOnce(&mut Loaded) -> Result<R, Re>) -> PyResult<R> {
        if self.broken.load(Ordering::SeqCst) {
            return Err(error(
                "RuntimeError",
                "an earlier call of this program failed inside the plugin; load the artifact again",
            ));
        }
        let mut inner = self
            .inner
            .lock()
            .map_err(|_| error("RuntimeError", "an earlier call panicked"))?;
        f(&mut inner).map_err(|e| {
            if matches!(e, Re::Pjrt { .. } | Re::Plugin { .. }) {
                self.broken.store(true, Ordering::SeqCst);
            }
            runtime_error(e)
        })
    }
}

#[pymethods]
impl NativeProgram {
    /// NativeProgram(path, plugin=None, devices=None, cache=True)
    #[new]
    #[pyo3(signature = (path, plugin=None, devices=None, cache=true))]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        plugin: Option<PathBuf>,
        devices: Option<usize>,
        cache: bool,
    ) -> PyResult<NativeProgram> {
        py.detach(|| -> PyResult<NativeProgram> {
            let manifest = tpuc_runtime::session::read_manifest(&path).map_err(runtime_error)?;
            let mesh_devices = manifest
                .partitioning
                .as_ref()
                .map_or(1, |p| p.mesh.num_devices());
            let plugin_path =
                tpuc_runtime::discover::find_plugin(plugin.as_deref()).map_err(runtime_error)?;
            let loaded = Plugin::load(&plugin_path).map_err(runtime_error)?;
            let client: Client = loaded
                .create_client(&ClientOptions::for_plugin(
                    &plugin_path,
                    devices.unwrap_or(mesh_devices),
                ))
                .map_err(runtime_error)?;
            let options = LoadOptions {
                cache: if cache {
                    CacheMode::ReadWrite
                } else {
                    CacheMode::Bypass
                },
                // The compiler is linked in: a dynamic artifact runs every size in range.
                specializer: Some(Arc::new(|dir, manifest, sizes| {
                    tpuc_compiler::dynamic::specialize_artifact(dir, manifest, sizes)
                        .map_err(|e| e.to_string())
                })),
                ..LoadOptions::default()
            };
            let session = Session::load_with(&path, &client, &options).map_err(runtime_error)?;
            let inner = if session.manifest().training.is_some() {
                Loaded::Training(Box::new(Trainer::new(session).map_err(runtime_error)?))
            } else {
                Loaded::Plain(Box::new(session))
            };
            let session = inner.session();
            let specs = marshal::Specs {
                inputs: (session.inputs().iter())
                    .map(|a| (a.dtype, a.shape.clone()))
                    .collect(),
                outputs: (session.outputs().iter())
                    .map(|o| (o.dtype, o.shape.clone()))
                    .collect(),
            };
            Ok(NativeProgram {
                inner: Mutex::new(inner),
                broken: AtomicBool::new(false),
                specs,
            })
        })
    }

    /// The manifest, as JSON.
    fn manifest_json(&self) -> PyResult<String> {
        self.with(|l| {
            serde_json::to_string(l.session().manifest())
                .map_err(|e| Re::InvalidArgument(e.to_string()))
        })
    }

    /// `[(name, dtype, shape)]` of the user inputs.
    fn inputs(&self) -> PyResult<Vec<(String, String, Vec<i64>)>> {
        self.with(|l| {
            Ok(l.session()
                .inputs()
                .iter()
                .map(|a| (a.name.clone(), a.dtype.name().to_string(), a.shape.clone()))
                .collect())
        })
    }

    /// `[(name, dtype, shape)]` of the user outputs.
    fn outputs(&self) -> PyResult<Vec<(String, String, Vec<i64>)>> {
        self.with(|l| {
            Ok(l.session()
                .outputs()
                .iter()
                .map(|a| (a.name.clone(), a.dtype.name().to_string(), a.shape.clone()))
                .collect())
        })
    }

    /// Runs on caller memory: inputs as views, outputs written into the caller's
    /// arrays (`[(address, bytes)]`, sized from `outputs()`).
    fn run_into(
        &self,
        py: Python<'_>,
        inputs: Vec<RawView>,
        outputs: Vec<(usize, usize)>,
    ) -> PyResult<()> {
        self.run_views(py, &views(&inputs)?, &outputs)
    }

    /// `program(*args)` for host torch tensors or numpy arrays of exactly the input
    /// dtypes and shapes: the outputs (one array, or a tuple), or None when the arguments
    /// need the Python path (`tpuc/_tensors.py`).
    fn call(&self, py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<Option<Py<PyAny>>> {
        let Some(m) = marshal::marshal(py, &self.specs, args) else {
            return Ok(None);
        };
        let views: Vec<HostView<'_>> = (self.specs.inputs.iter())
            .zip(&m.inputs)
            .map(|((d, shape), &(address, bytes))| HostView {
                dtype: *d,
                shape,
                data: raw_slice(address, bytes),
            })
            .collect();
        let outputs: Vec<(usize, usize)> = m.outputs.iter().map(|(_, o)| *o).collect();
        self.run_views(py, &views, &outputs)?;
        let arrays = m.outputs.into_iter().map(|(a, _)| a).collect();
        marshal::result(py, arrays).map(Some)
    }

    /// Runs and returns the outputs as `[(dtype, shape, bytes)]` (for programs whose
    /// output sizes depend on the call: dynamic shapes).
    fn run<'py>(&self, py: Python<'py>, inputs: Vec<RawView>) -> PyResult<Bound<'py, PyList>> {
        let views = views(&inputs)?;
        let out = py.detach(|| self.with(|l| l.session().run(&owned(&views))))?;
        let items = out
            .iter()
            .map(|t| host_tuple(py, t))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, items)
    }

    fn state_names(&self) -> PyResult<Vec<String>> {
        self.with(|l| {
            Ok(l.session()
                .state_names()
                .iter()
                .map(|s| s.to_string())
                .collect())
        })
    }

    fn reset_state(&self) -> PyResult<()> {
        self.with(|l| l.session().reset_state())
    }

    /// `(dtype, shape, bytes)` of state `name`.
    fn read_state<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyTuple>> {
        let t = py.detach(|| self.with(|l| l.session().read_state(name)))?;
        host_tuple(py, &t)
    }

    fn write_state(&self, py: Python<'_>, name: &str, value: RawView) -> PyResult<()> {
        let t = owned(&views(std::slice::from_ref(&value))?).remove(0);
        py.detach(|| self.with(|l| l.session().write_state(name, &t)))
    }

    /// A training step: `(step, loss, grad_norm, lr, seconds)`.
    fn step(&self, py: Python<'_>, inputs: Vec<RawView>) -> PyResult<(u64, f32, f32, f32, f64)> {
        let views = views(&inputs)?;
        py.detach(|| {
            self.with(|l| {
                let Loaded::Training(t) = l else {
                    return Err(Re::InvalidArgument(
                        "not a training step (compile with train=True)".into(),
                    ));
                };
                let r = t.step(&owned(&views))?;
                Ok((r.step, r.loss, r.grad_norm, r.lr, r.seconds))
            })
        })
    }

    /// A training step's parameters and buffers: `[(state-dict name, dtype, shape, bytes)]`.
    fn parameters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = py.detach(|| {
            self.with(|l| match l {
                Loaded::Training(t) => t.parameters(),
                Loaded::Plain(_) => Err(Re::InvalidArgument(
                    "not a training step (compile with train=True)".into(),
                )),
            })
        })?;
        let items = list
            .iter()
            .map(|(name, t)| {
                let tuple = host_tuple(py, t)?;
                PyTuple::new(
                    py,
                    [
                        name.into_pyobject(py)?.into_any(),
                        tuple.get_item(0)?,
                        tuple.get_item(1)?,
                        tuple.get_item(2)?,
                    ],
                )
            })
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, items)
    }

    fn save_checkpoint(&self, py: Python<'_>, dir: PathBuf) -> PyResult<()> {
        py.detach(|| {
            self.with(|l| match l {
                Loaded::Training(t) => t.save_checkpoint(&dir),
                Loaded::Plain(_) => Err(Re::InvalidArgument("not a training step".into())),
            })
        })
    }

    fn load_checkpoint(&self, py: Python<'_>, dir: PathBuf) -> PyResult<()> {
        py.detach(|| {
            self.with(|l| match l {
                Loaded::Training(t) => t.load_checkpoint(&dir),
                Loaded::Plain(_) => Err(Re::InvalidArgument("not a training step".into())),
            })
        })
    }

    fn steps_taken(&self) -> PyResult<u64> {
        self.with(|l| match l {
            Loaded::Training(t) => Ok(t.steps_taken()),
            Loaded::Plain(_) => Ok(0),
        })
    }
}

#[pymodule]
fn _tpuc(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(compile, m)?)?;
    m.add_function(wrap_pyfunction!(report_json, m)?)?;
    m.add_function(wrap_pyfunction!(find_plugin, m)?)?;
    m.add_function(wrap_pyfunction!(plan_measure, m)?)?;
    m.add_function(wrap_pyfunction!(plan, m)?)?;
    m.add_class::<NativeProgram>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
