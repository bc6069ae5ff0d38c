//! Dynamic artifacts from the command line: specialization on demand, said so.

use crate::common::{temp, tpuc, tpuc_env};

/// A dynamic program: `tpuc compile` says which sizes it specialized, `tpuc inspect`
/// lists the sizes, and `tpuc run` says for each new size whether its program came from
/// the artifact or was specialized now, and whether its executable was compiled or
/// found in the cache; a size out of range exits non-zero naming the symbol.
#[test]
fn run_specializes_a_dynamic_artifact_and_says_so() {
    let dir = temp("dynamic");
    let cache = dir.join("cache");
    let env = [("TPUC_CACHE_DIR", cache.as_path())];
    let art = dir.join("mlp.tpuc");
    let art = art.to_str().unwrap();
    let (ok, out, err) = tpuc(&["inspect", "testdata/dynamic/mlp/core.pt2"]);
    assert!(ok, "{err}");
    assert!(
        out.contains("s77      1..=64     example 7      (dimension 0 of `x`)"),
        "{out}"
    );
    assert!(out.contains("[s77, 16]"), "{out}");
    let (ok, _, err) = tpuc(&[
        "compile",
        "testdata/dynamic/mlp/core.pt2",
        "-o",
        art,
        "--specialize",
        "s77=64",
    ]);
    assert!(ok, "{err}");
    assert!(
        err.contains("dynamic sizes s77 in 1..=64: specialized for s77=7; s77=64"),
        "{err}"
    );
    let call = |k: usize| {
        let d = format!("testdata/dynamic/mlp/calls/{k}");
        [format!("{d}/inputs/0_x.npy"), format!("{d}/expected/0.npy")]
    };
    let (c0, c2) = (call(0), call(2));
    let args = [
        "run", art, "--input", &c0[0], "--expect", &c0[1], "--then", "--input", &c2[0], "--expect",
        &c2[1],
    ];
    let (ok, out, err) = tpuc_env(&args, &env);
    assert!(ok, "{out}\n{err}");
    for want in [
        "sizes s77=7: program from the artifact, compiled",
        "sizes s77=1: specialized now",
        "sizes s77=64: program from the artifact, compiled",
        "f32 [1, 8]",
        "f32 [64, 8]",
    ] {
        assert!(out.contains(want), "{want}: {out}");
    }
    assert_eq!(out.matches(" OK").count(), 2, "{out}");
    let (ok, out, err) = tpuc_env(&args, &env);
    assert!(ok, "{out}\n{err}");
    for want in [
        "sizes s77=7: program from the artifact, executable cache hit",
        "sizes s77=1: specialized now",
        "sizes s77=64: program from the artifact, executable cache hit",
    ] {
        assert!(out.contains(want), "{want}: {out}");
    }
    assert!(!out.contains("compiled"), "{out}");
    // 65 rows: outside the range.
    let big = dir.join("x65.npy");
    let x = tpuc_runtime::HostTensor {
        dtype: tpuc_runtime::DType::F32,
        shape: vec![65, 16],
        data: vec![0u8; 65 * 16 * 4],
    };
    tpuc_runtime::npy::write_npy(&big, &x).unwrap();
    let (ok, _, err) = tpuc_env(&["run", art, "--input", big.to_str().unwrap()], &env);
    assert!(!ok);
    assert!(
        err.contains("size 65 of `x` dimension 0 is outside the range of `s77`, 1..=64"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
