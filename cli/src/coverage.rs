//! Coverage: compile, run and compare every op case of `testdata/ops` and every model
//! of a corpus, and render the results as `COVERAGE.md` (`make coverage`).
//!
//! Each item goes through the same steps a user's model does: `tpuc_compiler::compile`
//! to an artifact, `tpuc_runtime::Session` on the CPU plugin, comparison with PyTorch's
//! outputs at dtype-aware tolerances. Failures are classified by cause: unsupported ops
//! (with the targets), other compile errors, runtime/plugin errors, numerics.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use tpuc_compiler::{CompileError, CompileOptions};
use tpuc_runtime::compare::{compare, default_tolerances};
use tpuc_runtime::{CacheMode, Client, DType, HostTensor, LoadOptions, Session};

/// What happened to one program.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Compiled, ran and matched; the largest absolute error over its outputs.
    Matched { max_abs_error: f64 },
    /// Ran, but an output is outside tolerance.
    Mismatch { max_abs_error: f64, detail: String },
    /// `lower-aten-to-stablehlo` has no lowering for these targets.
    Unsupported { targets: Vec<String> },
    /// Any other compile error (message).
    CompileError(String),
    /// Loading or executing failed (plugin or runtime error).
    RuntimeError(String),
    /// The test data itself could not be read.
    BadData(String),
}

impl Outcome {
    pub fn matched(&self) -> bool {
        matches!(self, Outcome::Matched { .. })
    }

    pub fn compiled(&self) -> bool {
        matches!(
            self,
            Outcome::Matched { .. } | Outcome::Mismatch { .. } | Outcome::RuntimeError(_)
        )
    }

    pub fn ran(&self) -> bool {
        matches!(self, Outcome::Matched { .. } | Outcome::Mismatch { .. })
    }

    /// One short line for tables.
    pub fn summary(&self) -> String {
        match self {
            Outcome::Matched { max_abs_error } => format!("matched ({max_abs_error:.1e})"),
            Outcome::Mismatch { max_abs_error, .. } => format!("mismatch ({max_abs_error:.1e})"),
            Outcome::Unsupported { targets } => format!("unsupported: {}", targets.join(", ")),
            Outcome::CompileError(m) => format!("compile error: {}", first_line(m)),
            Outcome::RuntimeError(m) => format!("runtime error: {}", first_line(m)),
            Outcome::BadData(m) => format!("bad test data: {}", first_line(m)),
        }
    }
}

/// The gist of a message on one line: its first line, with the first item of the
/// list a line ending in `:` introduces (a Neuron diagnostic's node).
fn first_line(s: &str) -> String {
    let mut lines = s.lines().map(str::trim);
    let mut l = lines.next().unwrap_or("").to_string();
    if l.ends_with(':') {
        if let Some(next) = lines.next() {
            l = format!("{l} {next}");
        }
    }
    let l: String = l.chars().take(160).collect();
    l.replace('|', "\\|")
}

/// Tolerances for an output: the case's compute dtype (bf16 cases return f32) or the
/// output's own dtype.
pub fn tolerances(compute: Option<DType>, output: DType) -> (f64, f64) {
    let (r1, a1) = default_tolerances(output);
    match compute {
        Some(c) => {
            let (r2, a2) = default_tolerances(c);
            (r1.max(r2), a1.max(a2))
        }
        None => (r1, a1),
    }
}

fn read_tensors(dir: &Path) -> Result<Vec<HostTensor>, String> {
    // A program without inputs (arange, full...) has no inputs folder.
    if !dir.exists() {
        return Ok(vec![]);
    }
    tpuc_runtime::npy::read_numbered(dir).map_err(|e| e.to_string())
}

/// What every program of a coverage run shares: the plugin, the compile options (the
/// target) and the executable cache.
pub struct Runner<'a> {
    pub client: &'a Client,
    pub options: &'a CompileOptions,
    pub cache_dir: &'a Path,
    /// The loosest `(rtol, atol)` every float comparison gets at least: a whole model
    /// computed with bf16 matmul inputs (`--auto-cast bf16`) compounds bf16's rounding
    /// over its layers, beyond what one bf16 op is held to.
    pub tolerance_floor: Option<(f64, f64)>,
}

/// Runs one program: compile `model` into `scratch`, run it with the `.npy` files of
/// `inputs`, compare with those of `expected`.
pub fn run_program(
    runner: &Runner,
    model: &Path,
    inputs: &Path,
    expected: &Path,
    compute: Option<DType>,
    scratch: &Path,
) -> Outcome {
    let (inputs, expected) = match (read_tensors(inputs), read_tensors(expected)) {
        (Ok(i), Ok(e)) => (i, e),
        (Err(e), _) | (_, Err(e)) => return Outcome::BadData(e),
    };
    let _ = std::fs::remove_dir_all(scratch);
    let compiled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        tpuc_compiler::compile(model, scratch, runner.options)
    }));
    match compiled {
        Err(_) => return Outcome::CompileError("the compiler panicked".into()),
        Ok(Err(CompileError::UnsupportedOps(ops))) => {
            return Outcome::Unsupported {
                targets: ops.iter().map(|o| o.target.clone()).collect(),
            }
        }
        Ok(Err(e)) => return Outcome::CompileError(e.to_string()),
        Ok(Ok(_)) => {}
    }
    let options = LoadOptions {
        cache: CacheMode::ReadWrite,
        cache_dir: Some(runner.cache_dir.to_path_buf()),
        progress: None,
        ..LoadOptions::default()
    };
    let session = match Session::load_with(scratch, runner.client, &options) {
        Ok(s) => s,
        Err(e) => return Outcome::RuntimeError(e.to_string()),
    };
    let outputs = match session.run(&inputs) {
        Ok(o) => o,
        Err(e) => return Outcome::RuntimeError(e.to_string()),
    };
    let _ = std::fs::remove_dir_all(scratch);
    if outputs.len() != expected.len() {
        return Outcome::Mismatch {
            max_abs_error: f64::INFINITY,
            detail: format!("{} outputs, PyTorch has {}", outputs.len(), expected.len()),
        };
    }
    let mut max_abs = 0.0f64;
    for (i, (got, want)) in outputs.iter().zip(&expected).enumerate() {
        let (mut rtol, mut atol) = tolerances(compute, want.dtype);
        let neuron = session.manifest().neuron.as_ref();
        if let Some(c) = neuron.and_then(|n| n.computed_in(want.dtype)) {
            let (cr, ca) = default_tolerances(c);
            (rtol, atol) = (rtol.max(cr), atol.max(ca));
        }
        if let Some((fr, fa)) = runner.tolerance_floor.filter(|_| want.dtype.is_float()) {
            (rtol, atol) = (rtol.max(fr), atol.max(fa));
        }
        // Outputs compare as PyTorch's dtype: a bool or integer output is exact.
        let c = compare(got, want, rtol, atol);
        max_abs = max_abs.max(c.max_abs_error);
        if !c.passed() {
            return Outcome::Mismatch {
                max_abs_error: c.max_abs_error,
                detail: format!(
                    "output {i}: {}/{} elements outside rtol={rtol:e} atol={atol:e}{}",
                    c.mismatches,
                    c.elements,
                    if c.shape_matches {
                        ""
                    } else {
                        " (shape differs)"
                    }
                ),
            };
        }
    }
    Outcome::Matched {
        max_abs_error: max_abs,
    }
}

/// One op case of `testdata/ops`.
#[derive(Clone, Debug)]
pub struct OpCase {
    pub id: String,
    pub op: String,
    pub dir: PathBuf,
    pub dtype: Option<DType>,
}

/// An op the suite does not run, with the reason (training-only, random, dynamic...).
#[derive(Clone, Debug)]
pub struct Excluded {
    pub op: String,
    pub category: String,
    pub reason: String,
}

pub struct OpSuite {
    /// Known failures with their reasons (`expected_failures.txt`).
    pub known_failures: BTreeMap<String, String>,
    pub core_overloads: Vec<String>,
    pub cases: Vec<OpCase>,
    pub excluded: Vec<Excluded>,
}

fn dtype_named(s: &str) -> Option<DType> {
    DType::from_mlir_name(match s {
        "bool" => "i1",
        "u8" => "ui8",
        other => other,
    })
}

/// Reads `testdata/ops/index.json`.
pub fn read_op_suite(root: &Path) -> Result<OpSuite, String> {
    let path = root.join("index.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let strings = |key: &str| -> Vec<String> {
        v[key]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let cases = v["cases"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|c| OpCase {
                    id: c["id"].as_str().unwrap_or("").to_string(),
                    op: c["op"].as_str().unwrap_or("").to_string(),
                    dir: root.join(c["dir"].as_str().unwrap_or("")),
                    dtype: c["dtype"].as_str().and_then(dtype_named),
                })
                .collect()
        })
        .unwrap_or_default();
    let excluded = v["excluded"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|c| Excluded {
                    op: c["op"].as_str().unwrap_or("").to_string(),
                    category: c["category"].as_str().unwrap_or("").to_string(),
                    reason: c["reason"].as_str().unwrap_or("").to_string(),
                })
                .collect()
        })
        .unwrap_or_default();
    let known_failures = std::fs::read_to_string(root.join("expected_failures.txt"))
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| match l.split_once(char::is_whitespace) {
            Some((id, why)) => (id.to_string(), why.trim().to_string()),
            None => (l.to_string(), String::new()),
        })
        .collect();
    Ok(OpSuite {
        known_failures,
        core_overloads: strings("core_overloads"),
        cases,
        excluded,
    })
}

/// Runs every case of the suite; results in case order.
pub fn run_op_suite(
    runner: &Runner,
    suite: &OpSuite,
    scratch: &Path,
    mut progress: impl FnMut(usize, usize, &OpCase),
) -> Vec<(OpCase, Outcome)> {
    let mut out = Vec::with_capacity(suite.cases.len());
    for (i, case) in suite.cases.iter().enumerate() {
        progress(i, suite.cases.len(), case);
        let outcome = run_program(
            runner,
            &case.dir.join("model.json"),
            &case.dir.join("inputs"),
            &case.dir.join("expected"),
            case.dtype,
            &scratch.join("op.tpuc"),
        );
        out.push((case.clone(), outcome));
    }
    out
}

/// One model of a corpus, in both forms.
#[derive(Clone, Debug)]
pub struct ModelResult {
    pub name: String,
    pub family: String,
    pub exported: Outcome,
    pub core: Outcome,
}

impl ModelResult {
    pub fn matched(&self) -> bool {
        self.exported.matched() && self.core.matched()
    }
}

/// A corpus index: `(name, family)` of each model, and `(name, family, error)` of each
/// model PyTorch could not export.
pub type ModelIndex = (Vec<(String, String)>, Vec<(String, String, String)>);

/// Reads a corpus index: `{"models": ["name", ...]}` or `{"models": [{"name", "family"}]}`,
/// plus optional `"failed_export": [{"name", "family", "error"}]`.
pub fn read_model_index(root: &Path) -> Result<ModelIndex, String> {
    let path = root.join("index.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let models = v["models"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|m| match m {
                    Value::String(s) => (s.clone(), String::new()),
                    other => (
                        other["name"].as_str().unwrap_or("").to_string(),
                        other["family"].as_str().unwrap_or("").to_string(),
                    ),
                })
                .collect()
        })
        .unwrap_or_default();
    let failed = v["failed_export"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|m| {
                    (
                        m["name"].as_str().unwrap_or("").to_string(),
                        m["family"].as_str().unwrap_or("").to_string(),
                        m["error"].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    Ok((models, failed))
}

/// Runs every model of the corpus at `root` in both forms.
pub fn run_models(
    runner: &Runner,
    root: &Path,
    scratch: &Path,
    mut progress: impl FnMut(usize, usize, &str),
) -> Result<Vec<ModelResult>, String> {
    let (models, failed) = read_model_index(root)?;
    let mut out = Vec::new();
    for (i, (name, family)) in models.iter().enumerate() {
        progress(i, models.len(), name);
        let dir = root.join(name);
        let meta: Value = std::fs::read_to_string(dir.join("meta.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or(Value::Null);
        let compute = meta["compute_dtype"].as_str().and_then(dtype_named);
        let run = |form: &str| {
            run_program(
                runner,
                &dir.join(format!("{form}.pt2")),
                &dir.join("inputs"),
                &dir.join("expected"),
                compute,
                &scratch.join(format!("{name}-{form}.tpuc")),
            )
        };
        out.push(ModelResult {
            name: name.clone(),
            family: family.clone(),
            exported: run("exported"),
            core: run("core"),
        });
    }
    for (name, family, error) in failed {
        let o = Outcome::BadData(format!("PyTorch could not export it: {error}"));
        out.push(ModelResult {
            name,
            family,
            exported: o.clone(),
            core: o,
        });
    }
    Ok(out)
}

/// Per-overload status: an overload is covered when every one of its cases matched.
pub fn op_status(results: &[(OpCase, Outcome)]) -> BTreeMap<String, Vec<(&OpCase, &Outcome)>> {
    let mut m: BTreeMap<String, Vec<(&OpCase, &Outcome)>> = BTreeMap::new();
    for (c, o) in results {
        m.entry(c.op.clone()).or_default().push((c, o));
    }
    m
}

fn cause(o: &Outcome) -> String {
    match o {
        Outcome::Matched { .. } => "matched".into(),
        Outcome::Mismatch { .. } => "numerics (outside tolerance)".into(),
        Outcome::Unsupported { targets } => format!("unsupported op: {}", targets.join(", ")),
        Outcome::CompileError(m) => format!("compile error: {}", first_line(m)),
        Outcome::RuntimeError(m) => format!("plugin/runtime error: {}", first_line(m)),
        Outcome::BadData(m) => format!("test data: {}", first_line(m)),
    }
}

fn pct(n: usize, d: usize) -> String {
    if d == 0 {
        "n/a".into()
    } else {
        format!("{:.1}%", 100.0 * n as f64 / d as f64)
    }
}

/// What COVERAGE.md reports beside the Core ATen suite and the model corpora.
#[derive(Default)]
pub struct Extra<'a> {
    /// The as-exported op suite (testdata/ops/exported) and its results.
    pub exported: Option<(&'a OpSuite, &'a [(OpCase, Outcome)])>,
    /// The summary of the causal-LM family's report (COVERAGE-causal-lm.md), with the
    /// file's name.
    pub causal_lm: Option<(String, String)>,
}

/// The lines of a Markdown report's `## Summary` section.
pub fn summary_section(report: &str) -> Option<String> {
    let start = report.find("## Summary\n")? + "## Summary\n".len();
    let rest = &report[start..];
    let end = rest.find("\n## ").unwrap_or(rest.len());
    Some(rest[..end].trim().to_string())
}

/// Renders COVERAGE.md.
pub fn render(
    suite: &OpSuite,
    ops: &[(OpCase, Outcome)],
    corpora: &[(String, Vec<ModelResult>)],
    extra: &Extra<'_>,
    command: &str,
    target: &str,
) -> String {
    let mut s = String::new();
    let by_op = op_status(ops);
    let covered = by_op
        .values()
        .filter(|v| v.iter().all(|(_, o)| o.matched()))
        .count();
    let relevant = by_op.len();
    if target == "tpu" {
        s.push_str("# Coverage\n\n");
    } else {
        s.push_str(&format!(
            "# Coverage, target {target}\n\n\
             Programs are compiled with `tpuc compile --target {target}` and what runs is the \
             Neuron artifact's XLA HLO (model.hlo.pb), legalized for Neuron devices (64-bit \
             integers and floats narrowed inside the program, `--auto-cast none`). A case \
             `neuron-check` refuses (integer matmuls, f64 arithmetic that cannot be narrowed, \
             ops outside Neuron's set) counts as a compile error with its diagnostic.\n\n"
        ));
    }
    s.push_str(&format!(
        "Written by `{command}`; every number below comes from that run (regenerate, do not edit).\n\
         Programs are compiled by `tpuc compile`, run on the CPU PJRT plugin and compared with\n\
         PyTorch's eager outputs: f32 `allclose(rtol=1e-4, atol=1e-5)`, f64 `rtol=1e-7, atol=1e-8`,\n\
         f16 `rtol=1e-2, atol=1e-3`, bf16 `rtol=2e-2, atol=1e-2` (bf16 cases compare their f32\n\
         outputs at bf16 tolerance), integers and bools exactly.\n\n"
    ));
    s.push_str("## Summary\n\n");
    s.push_str(&format!(
        "- Core ATen overloads (PyTorch's `torch.Tag.core`): {}; inference-relevant with cases: {relevant}; \
         excluded with a reason: {}.\n",
        suite.core_overloads.len(),
        suite.excluded.len()
    ));
    s.push_str(&format!(
        "- Inference-relevant overloads whose every case compiled, ran and matched: **{covered}/{relevant} ({})**.\n",
        pct(covered, relevant)
    ));
    let cases_ok = ops.iter().filter(|(_, o)| o.matched()).count();
    s.push_str(&format!(
        "- Op cases matched: {cases_ok}/{} ({}).\n",
        ops.len(),
        pct(cases_ok, ops.len())
    ));
    for (name, models) in corpora {
        let ok = models.iter().filter(|m| m.matched()).count();
        let forms_ok: usize = models
            .iter()
            .map(|m| m.exported.matched() as usize + m.core.matched() as usize)
            .sum();
        s.push_str(&format!(
            "- Models in `{name}` matching in both forms: **{ok}/{} ({})**; programs (model × form) matched: {forms_ok}/{}.\n",
            models.len(),
            pct(ok, models.len()),
            2 * models.len()
        ));
    }
    if let Some((exported_suite, exported)) = extra.exported {
        let ok = exported.iter().filter(|(_, o)| o.matched()).count();
        let mut op_names: Vec<&str> = exported.iter().map(|(c, _)| c.op.as_str()).collect();
        op_names.sort();
        op_names.dedup();
        s.push_str(&format!(
            "- As-exported op suite (composite ops of pre-decomposition graphs, complex dtypes, \
             data-dependent sizes; `testdata/ops/exported`): {} ops, cases matched: **{ok}/{} ({})**; \
             known failures listed: {}.\n",
            op_names.len(),
            exported.len(),
            pct(ok, exported.len()),
            exported_suite.known_failures.len()
        ));
    }
    if let Some((file, summary)) = &extra.causal_lm {
        s.push_str(&format!(
            "\n### Every causal-LM architecture of transformers ([{file}]({file}))\n\n{summary}\n"
        ));
    }
    // Failures grouped by cause.
    let mut causes: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let exported_ops = extra.exported.map(|(_, e)| e).unwrap_or(&[]);
    let exported_known = extra.exported.map(|(suite, _)| &suite.known_failures);
    for (c, o) in exported_ops {
        if !o.matched() {
            let known = exported_known
                .and_then(|k| k.get(&c.id))
                .map(|r| format!(" (known: {r})"))
                .unwrap_or_default();
            causes.entry(group(o)).or_default().push(format!(
                "as-exported op case `{}`: {}{known}",
                c.id,
                o.summary()
            ));
        }
    }
    for (c, o) in ops {
        if !o.matched() {
            let known = suite
                .known_failures
                .get(&c.id)
                .map(|r| format!(" (known: {r})"))
                .unwrap_or_default();
            causes.entry(group(o)).or_default().push(format!(
                "op case `{}`: {}{known}",
                c.id,
                o.summary()
            ));
        }
    }
    for (_, models) in corpora {
        for m in models {
            for (form, o) in [("exported", &m.exported), ("core", &m.core)] {
                if !o.matched() {
                    causes.entry(group(o)).or_default().push(format!(
                        "model `{}` ({form}): {}",
                        m.name,
                        o.summary()
                    ));
                }
            }
        }
    }
    s.push_str("\n## Failures by cause\n\n");
    if causes.is_empty() {
        s.push_str("None.\n");
    }
    for (cause, items) in &causes {
        s.push_str(&format!("### {cause} ({})\n\n", items.len()));
        for i in items {
            s.push_str(&format!("- {i}\n"));
        }
        s.push('\n');
    }
    for (name, models) in corpora {
        s.push_str(&format!(
            "\n## Models: `{name}`\n\n| model | family | exported | core |\n|---|---|---|---|\n"
        ));
        for m in models {
            s.push_str(&format!(
                "| {} | {} | {} | {} |\n",
                m.name,
                m.family,
                m.exported.summary(),
                m.core.summary()
            ));
        }
    }
    s.push_str("\n## Core ATen overloads\n\n| overload | cases | compiled | ran | matched | max abs error | failures |\n|---|---:|---:|---:|---:|---:|---|\n");
    for (op, cases) in &by_op {
        let n = cases.len();
        let compiled = cases.iter().filter(|(_, o)| o.compiled()).count();
        let ran = cases.iter().filter(|(_, o)| o.ran()).count();
        let matched = cases.iter().filter(|(_, o)| o.matched()).count();
        let max_err = cases
            .iter()
            .filter_map(|(_, o)| match o {
                Outcome::Matched { max_abs_error } | Outcome::Mismatch { max_abs_error, .. } => {
                    Some(*max_abs_error)
                }
                _ => None,
            })
            .fold(None, |a: Option<f64>, b| Some(a.map_or(b, |a| a.max(b))));
        let fails: Vec<String> = cases
            .iter()
            .filter(|(_, o)| !o.matched())
            .map(|(c, o)| {
                format!(
                    "`{}`: {}",
                    c.id.rsplit('/').next().unwrap_or(&c.id),
                    cause(o)
                )
            })
            .collect();
        s.push_str(&format!(
            "| {op} | {n} | {compiled} | {ran} | {matched} | {} | {} |\n",
            max_err
                .map(|e| format!("{e:.1e}"))
                .unwrap_or_else(|| "-".into()),
            fails.join("; ")
        ));
    }
    s.push_str("\n## Excluded overloads\n\nNot run as op cases: why, and what tpuc does when a graph contains one.\n\n| overload | category | reason | tpuc |\n|---|---|---|---|\n");
    for e in &suite.excluded {
        let tpuc = match e.category.as_str() {
            "dynamic-shape" => "size computations: evaluated when a dynamic program is specialized; over sizes that depend on values, dropped or refused at their node (frontend::data_dependent)",
            "data-dependent-shape" => "refused at its node: its result's size depends on the values (frontend::data_dependent; MoE dispatch by split_with_sizes is compiled)",
            _ => "compile error: unsupported op target, with its count and first node",
        };
        let reason = e.reason.replace('|', "\\|").replace('\n', " ");
        s.push_str(&format!(
            "| {} | {} | {reason} | {tpuc} |\n",
            e.op, e.category
        ));
    }
    s
}

/// The heading a failure is grouped under.
fn group(o: &Outcome) -> String {
    match o {
        Outcome::Unsupported { targets } => format!("Unsupported op: {}", targets.join(", ")),
        Outcome::Mismatch { .. } => "Numerics".into(),
        Outcome::CompileError(_) => "Compile error".into(),
        Outcome::RuntimeError(_) => "Plugin or runtime error".into(),
        Outcome::BadData(_) => "Test data or export".into(),
        Outcome::Matched { .. } => "Matched".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::summary_section;

    #[test]
    fn summary_section_is_the_text_between_its_heading_and_the_next() {
        let report = "# Title\n\nintro\n\n## Summary\n\n- a: 1\n- b: 2\n\n## Details\n\nmore\n";
        assert_eq!(summary_section(report).as_deref(), Some("- a: 1\n- b: 2"));
        assert_eq!(
            summary_section("## Summary\n- last\n").as_deref(),
            Some("- last")
        );
        assert_eq!(summary_section("# no summary\n"), None);
    }
}
