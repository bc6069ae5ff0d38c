//! `tpuc compile --debug-outputs` and `tpuc diverge` from the command line: the corpus
//! MLP matches PyTorch node by node, an artifact without its values is refused with the
//! flag to use, and dynamic programs refuse the flag.
#![cfg(feature = "compiler")]

use crate::common::{compile_to, repo, temp, tpuc};

#[test]
fn diverge_compares_every_node_with_pytorch() {
    let dir = temp("diverge");
    let model = repo().join("testdata/models/mlp/core.pt2");
    let reference = repo().join("testdata/models/mlp/node_values/core");
    let art = dir.join("debug.tpuc");
    let (ok, _, err) = compile_to(&model, &art, &["--debug-outputs"]);
    assert!(ok, "{err}");
    let manifest = crate::common::manifest(&art);
    assert!(manifest.debug_values.iter().any(|v| v.node == "relu"));
    let (ok, out, err) = tpuc(&[
        "diverge",
        art.to_str().unwrap(),
        "--reference",
        reference.to_str().unwrap(),
        "--all",
    ]);
    assert!(ok, "{out}{err}");
    assert!(out.contains("relu (aten.relu.default):"), "{out}");
    assert!(
        out.contains("no value diverges: 10 of 10 compared"),
        "{out}"
    );

    let plain = dir.join("plain.tpuc");
    let (ok, _, err) = compile_to(&model, &plain, &[]);
    assert!(ok, "{err}");
    let (ok, _, err) = tpuc(&[
        "diverge",
        plain.to_str().unwrap(),
        "--reference",
        reference.to_str().unwrap(),
    ]);
    assert!(
        !ok && err.contains("compile it with `tpuc compile --debug-outputs`"),
        "{err}"
    );

    let (ok, _, err) = tpuc(&[
        "compile",
        "testdata/dynamic/mlp/core.pt2",
        "--debug-outputs",
        "--emit",
        "mlir",
        "-o",
        "-",
    ]);
    assert!(
        !ok && err.contains("--debug-outputs is not supported for dynamic programs"),
        "{err}"
    );
}
