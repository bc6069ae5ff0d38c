//! `--debug-outputs` and the divergence comparison (`tpuc diverge`): every value the
//! corpus's MLP (both forms) and tiny Llama (as exported) compute matches PyTorch's node
//! by node (`testdata/models/*/node_values`, written by `scripts/node_values.py`), and a
//! lowering broken on purpose (a custom lowering injected for one op) is found at its
//! node, with the values it read still matching.

use std::path::Path;

use tpuc_compiler::passes::lower_aten_to_stablehlo::{AtenOp, CustomLowering, LResult};
use tpuc_compiler::CompileOptions;
use tpuc_dialects::{Emitter, TValue};
use tpuc_runtime::divergence::{compare_debug_values, first_divergence, ValueComparison};
use tpuc_runtime::Session;

use crate::common::{client, model_path, repo, temp_dir};

/// Compiles `model`'s `form` with its values returned, runs it on the reference's
/// inputs and compares every value with PyTorch's.
fn compare_nodes(model: &str, form: &str, custom: Vec<CustomLowering>) -> Vec<ValueComparison> {
    let broken = if custom.is_empty() { "" } else { "-broken" };
    let out = temp_dir(&format!("divergence-{model}-{form}{broken}"));
    let art = out.join("a.tpuc");
    let options = CompileOptions {
        debug_outputs: true,
        custom_lowerings: custom,
        ..CompileOptions::default()
    };
    tpuc_compiler::compile(&model_path(model, form), &art, &options)
        .unwrap_or_else(|e| panic!("{model}/{form}: {e}"));
    let reference = repo().join(format!("testdata/models/{model}/node_values/{form}"));
    let inputs = tpuc_runtime::npy::read_numbered(reference.join("inputs")).unwrap();
    let session = Session::load(&art, client()).unwrap();
    let outputs = session.run(&inputs).unwrap();
    let values = compare_debug_values(session.manifest(), &outputs, &reference, None).unwrap();
    let _ = std::fs::remove_dir_all(&out);
    values
}

fn reference_files(model: &str, form: &str) -> usize {
    let dir = repo().join(format!("testdata/models/{model}/node_values/{form}"));
    tpuc_runtime::npy::numbered_files(Path::new(&dir))
        .unwrap()
        .len()
}

#[test]
fn every_node_value_matches_pytorch() {
    for (model, form) in [("mlp", "exported"), ("mlp", "core"), ("llama", "exported")] {
        let values = compare_nodes(model, form, Vec::new());
        // Every value PyTorch computed has its namesake among the returned ones.
        let compared = values.iter().filter(|v| v.comparison.is_some()).count();
        assert_eq!(compared, reference_files(model, form), "{model}/{form}");
        if let Some(v) = first_divergence(&values) {
            panic!(
                "{model}/{form}: `{}` ({}) differs: {:?}",
                v.name, v.op, v.comparison
            );
        }
    }
}

/// relu as `min(x, 0)`: wrong wherever x is not 0.
fn broken_relu(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let x = op.first_tensor()?;
    let zero = e.constant(&x.ty, 0.0)?;
    Ok(vec![e.min(x, &zero)?])
}

/// rsqrt as `sqrt`.
fn broken_rsqrt(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    Ok(vec![e.unary("stablehlo.sqrt", op.first_tensor()?)?])
}

/// A lowering function, as `CustomLowering` takes it.
type Lowering = fn(&AtenOp, &Emitter) -> LResult<Vec<TValue>>;

#[test]
fn a_broken_lowering_is_found_at_its_node() {
    let cases: [(&str, &str, &str, Lowering); 3] = [
        ("mlp", "core", "aten.relu.default", broken_relu),
        ("mlp", "exported", "aten.relu.default", broken_relu),
        ("llama", "exported", "aten.rsqrt.default", broken_rsqrt),
    ];
    for (model, form, target, lower) in cases {
        let custom = vec![CustomLowering {
            target: target.into(),
            lower,
        }];
        let values = compare_nodes(model, form, custom);
        let first = first_divergence(&values)
            .unwrap_or_else(|| panic!("{model}/{form}: the broken {target} went unnoticed"));
        assert_eq!(first.op, target, "{model}/{form}: {first:?}");
        // What the broken node read still matches: the divergence starts there.
        for input in &first.inputs {
            if let Some(v) = values.iter().find(|v| &v.name == input) {
                assert!(
                    !v.diverges(),
                    "{model}/{form}: input `{input}` differs already"
                );
            }
        }
    }
}
