//! `make bench`'s dynamic-shapes rows: a program exported with `dynamic_shapes`,
//! specialized by tpuc for some sizes, against the same model exported statically at
//! those sizes (`testdata/dynamic/<name>/static`): StableHLO op count after `-O2`, XLA's
//! instruction count and run time, each pair compiled by the same `tpuc` and run by the
//! same client, timed in alternating rounds.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use tpuc_runtime::{Client, HostTensor, Session};

use crate::{BoxError, Stats};

struct Side {
    ops: usize,
    xla_instructions: usize,
    times: Vec<u64>,
}

struct Row {
    program: String,
    form: &'static str,
    sizes: String,
    dynamic: Side,
    fixed: Side,
}

fn compile(tpuc: &Path, input: &Path, out: &Path) -> Result<(), BoxError> {
    if out.exists() {
        std::fs::remove_dir_all(out)?;
    }
    let status = Command::new(tpuc)
        .arg("compile")
        .arg(input)
        .arg("-o")
        .arg(out)
        .output()?;
    if !status.status.success() {
        return Err(format!(
            "tpuc compile {}: {}",
            input.display(),
            String::from_utf8_lossy(&status.stderr).trim()
        )
        .into());
    }
    Ok(())
}

/// StableHLO ops of an artifact's program (its composites' decompositions included).
fn op_count(artifact: &Path) -> Result<usize, BoxError> {
    let text = std::fs::read_to_string(artifact.join(tpuc_runtime::layout::PROGRAM_FILE))?;
    Ok(text.matches("\"stablehlo.").count())
}

fn inputs(dir: &Path, call: usize) -> Result<Vec<HostTensor>, BoxError> {
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json"))?)?;
    meta["calls"][call]["inputs"]
        .as_array()
        .ok_or("meta.json: no inputs")?
        .iter()
        .map(|p| {
            let p = p.as_str().ok_or("meta.json: bad input")?;
            Ok(tpuc_runtime::npy::read_npy(dir.join(p))?)
        })
        .collect()
}

/// The rows: every program of testdata/dynamic in both forms, `iterations` timed calls
/// per side in each of `rounds` alternating rounds.
pub fn run(
    tpuc: &Path,
    client: &Client,
    work_dir: &Path,
    rounds: usize,
    iterations: usize,
) -> Result<String, BoxError> {
    let root: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/dynamic");
    let index: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("index.json"))?)?;
    let mut rows = Vec::new();
    for name in index["programs"]
        .as_array()
        .ok_or("index.json: no programs")?
    {
        let name = name.as_str().ok_or("index.json: bad name")?;
        let dir = root.join(name);
        let meta: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json"))?)?;
        let call = meta["static"]["call"]
            .as_u64()
            .ok_or("meta.json: no static call")? as usize;
        let args = inputs(&dir, call)?;
        for form in ["exported", "core"] {
            eprintln!("tpuc-bench: dynamic shapes: {name} ({form})");
            let dyn_art = work_dir.join(format!("dynamic-{name}-{form}.tpuc"));
            let fixed_art = work_dir.join(format!("dynamic-{name}-{form}-static.tpuc"));
            compile(tpuc, &dir.join(format!("{form}.pt2")), &dyn_art)?;
            compile(tpuc, &dir.join(format!("static/{form}.pt2")), &fixed_art)?;
            let dyn_session = Session::load(&dyn_art, client)?;
            let fixed_session = Session::load(&fixed_art, client)?;
            let sizes = dyn_session
                .sizes(&args.iter().map(|t| t.shape.as_slice()).collect::<Vec<_>>())?
                .ok_or("the dynamic artifact has no dynamic sizes")?;
            // The same outputs from both, bit for bit.
            let (a, b) = (dyn_session.run(&args)?, fixed_session.run(&args)?);
            if a.iter()
                .zip(&b)
                .any(|(x, y)| x.data != y.data || x.shape != y.shape)
            {
                return Err(format!(
                    "{name} ({form}): the specialization and the static export differ"
                )
                .into());
            }
            let mut sides = [(&dyn_session, Vec::new()), (&fixed_session, Vec::new())];
            for _ in 0..rounds {
                for (session, times) in sides.iter_mut() {
                    for _ in 0..iterations {
                        let t = Instant::now();
                        session.run(&args)?;
                        times.push(t.elapsed().as_nanos() as u64);
                    }
                }
            }
            let [(_, dyn_times), (_, fixed_times)] = sides;
            let count = |s: &Session| -> Result<usize, BoxError> {
                Ok(s.compiled_opcode_counts()?.values().sum())
            };
            rows.push(Row {
                program: name.to_string(),
                form,
                sizes: tpuc_runtime::symbolic::describe_bindings(&sizes),
                dynamic: Side {
                    ops: op_count(&dyn_art)?,
                    xla_instructions: count(&dyn_session)?,
                    times: dyn_times,
                },
                fixed: Side {
                    ops: op_count(&fixed_art)?,
                    xla_instructions: count(&fixed_session)?,
                    times: fixed_times,
                },
            });
        }
    }
    let mut md = String::new();
    md.push_str("## Dynamic shapes: a specialization against a static export\n\n");
    md.push_str(&format!(
        "Each `testdata/dynamic` program (exported once with `dynamic_shapes`) compiled by `tpuc compile` into one artifact, run at the example inputs' sizes, against the same model exported without `dynamic_shapes` at those sizes (`static/`), compiled by the same tpuc at `-O2` and run on the same client with the same inputs (outputs checked equal bit for bit). StableHLO ops are counted in `program.mlir`, XLA instructions in the compiled program; run time is `Session::run` (inputs uploaded, outputs downloaded), {rounds} alternating rounds of {iterations} calls per side.\n\n"
    ));
    md.push_str("| program | form | sizes | StableHLO ops static / specialized | XLA instructions static / specialized | static median µs | specialized median µs | **specialized / static** |\n|---|---|---|---:|---:|---:|---:|---:|\n");
    for r in &rows {
        let (d, f) = (Stats::of(&r.dynamic.times), Stats::of(&r.fixed.times));
        md.push_str(&format!(
            "| {} | {} | {} | {} / {} | {} / {} | {} | {} | {:.2}× |\n",
            r.program,
            r.form,
            r.sizes,
            r.fixed.ops,
            r.dynamic.ops,
            r.fixed.xla_instructions,
            r.dynamic.xla_instructions,
            f.spread_us(),
            d.spread_us(),
            d.median / f.median
        ));
    }
    md.push('\n');
    Ok(md)
}
