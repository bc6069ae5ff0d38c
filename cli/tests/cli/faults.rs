//! Faults found while rebuilding the house (issue 27), each pinned by a test that failed
//! before its fix: refusals that held on the artifact path only, a target alias the
//! TPU step did not know, and `tpuc run --expect` comparing tensors of other shapes.
#![cfg(feature = "compiler")]

use crate::common::{libtpu_present, run_files, temp, tpuc};

/// `--target pjrt` is `--target tpu` (Target::parse); the TPU step used to compare the
/// flag's text with "tpu" and refused it.
#[test]
fn the_pjrt_target_alias_takes_topologies() {
    if !libtpu_present() {
        return;
    }
    let dir = temp("pjrt-topology");
    let art = dir.join("mlp.tpuc");
    let (ok, _, err) = tpuc(&[
        "compile",
        "testdata/models/mlp/exported.pt2",
        "-o",
        art.to_str().unwrap(),
        "--target",
        "pjrt",
        "--topology",
        "v5e:1x1",
    ]);
    assert!(ok, "{err}");
    assert!(art.join("manifest.json").is_file());
    // A Neuron target still has no TPU executables, said by its description.
    let (ok, _, err) = tpuc(&[
        "compile",
        "testdata/models/mlp/exported.pt2",
        "-o",
        dir.join("trn2.tpuc").to_str().unwrap(),
        "--target",
        "trn2",
        "--topology",
        "v5e:1x1",
    ]);
    assert!(
        !ok && err.contains("--topology is for --target tpu, not `trn2`"),
        "{err}"
    );
}

/// Runs `tpuc compile MODEL ARGS` for an artifact, `--emit mlir` and `--print-pipeline`;
/// each must fail with `message`.
fn refused_on_every_output(model: &str, args: &[&str], message: &str) {
    let dir = temp("refusals");
    let art = dir.join("out.tpuc");
    let outputs: [Vec<&str>; 3] = [
        vec!["-o", art.to_str().unwrap()],
        vec!["--emit", "mlir", "-o", "-"],
        vec!["--print-pipeline"],
    ];
    for output in outputs {
        let mut all = vec!["compile", model];
        all.extend(args);
        all.extend(&output);
        let (ok, out, err) = tpuc(&all);
        assert!(!ok, "{all:?} must be refused; wrote {} bytes", out.len());
        assert!(err.contains(message), "{all:?}: {err}");
        assert!(out.is_empty(), "{all:?} wrote to stdout: {out}");
    }
    assert!(!art.exists());
}

/// Neuron compiles one device's program: refused for --emit mlir too.
#[test]
fn neuron_targets_are_refused_partitioned_on_every_output() {
    refused_on_every_output(
        "testdata/models/mlp/core.pt2",
        &[
            "--target",
            "trn2",
            "--mesh",
            "dp=2",
            "--shard",
            "data-parallel",
        ],
        "--mesh/--shard are not supported with a Neuron target yet",
    );
}

/// A dynamic program with what dynamic programs do not support: the polymorphic
/// writer and `--emit mlir --specialize` used to ignore the target and the mesh.
#[test]
fn dynamic_programs_are_refused_what_they_cannot_do_on_every_output() {
    refused_on_every_output(
        "testdata/dynamic/mlp/core.pt2",
        &["--target", "trn2"],
        "a Neuron target is not supported for dynamic programs yet",
    );
    refused_on_every_output(
        "testdata/dynamic/mlp/core.pt2",
        &["--target", "trn2", "--specialize", "s77=8"],
        "a Neuron target is not supported for dynamic programs yet",
    );
    refused_on_every_output(
        "testdata/dynamic/mlp/core.pt2",
        &[
            "--mesh",
            "dp=2",
            "--shard",
            "data-parallel",
            "--specialize",
            "s77=8",
        ],
        "partitioning (--mesh/--shard) is not supported for dynamic programs yet",
    );
}

/// An `--expect` file of another shape is an error naming both shapes; it used to
/// print `mismatches=0/27 FAIL` on stdout as if the numbers had been compared.
#[test]
fn an_expectation_of_another_shape_is_an_error_naming_both_shapes() {
    let dir = temp("expect-shape");
    let art = dir.join("mlp.tpuc");
    let model = crate::common::repo().join("testdata/models/mlp");
    let (ok, _, err) = tpuc(&[
        "compile",
        model.join("exported.pt2").to_str().unwrap(),
        "-o",
        art.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    let input = crate::common::sorted_npy(&model.join("inputs"))[0].clone();
    let expected = crate::common::sorted_npy(&model.join("expected"))[0].clone();
    let want = tpuc_runtime::npy::read_npy(&expected).unwrap();
    let n: i64 = want.shape.iter().product();
    let other = tpuc_runtime::HostTensor::from_f32(&[n], &vec![0.0; n as usize]);
    let flat = dir.join("flat.npy");
    tpuc_runtime::npy::write_npy(&flat, &other).unwrap();
    let (ok, out, err) = run_files(&art, &[&input], &[&flat], &[]);
    assert!(!ok, "a shape mismatch fails");
    assert!(!out.contains("mismatches="), "nothing compared: {out}");
    assert!(
        err.contains(&format!("has shape {:?}", want.shape))
            && err.contains(&format!("has shape [{n}]"))
            && err.contains("flat.npy"),
        "{err}"
    );
}
