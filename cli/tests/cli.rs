//! The `tpuc` binary: exit codes and messages users see.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn tpuc(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tpuc"))
        .args(args)
        .current_dir(repo())
        .output()
        .expect("tpuc runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

fn temp(tag: &str) -> PathBuf {
    let d = repo()
        .join("target/test-tmp")
        .join(format!("cli-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn help_explains_the_commands() {
    let (ok, out, _) = tpuc(&["--help"]);
    assert!(ok);
    for cmd in ["compile", "opt", "inspect", "run"] {
        assert!(out.contains(cmd), "{out}");
    }
    let (ok, out, _) = tpuc(&["compile", "--help"]);
    assert!(
        ok && out.contains("--emit") && out.contains("torch.export.save"),
        "{out}"
    );
}

#[test]
fn compile_and_run_match_pytorch() {
    let dir = temp("run");
    let art = dir.join("mlp.tpuc");
    let art = art.to_str().unwrap();
    let (ok, _, err) = tpuc(&["compile", "testdata/models/mlp/exported.pt2", "-o", art]);
    assert!(ok, "{err}");
    let (ok, out, err) = tpuc(&[
        "run",
        art,
        "--input",
        "testdata/models/mlp/inputs/0_input.npy",
        "--expect",
        "testdata/models/mlp/expected/0.npy",
    ]);
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("max_abs_error") && out.contains("OK"), "{out}");

    // Against the wrong reference it reports the distance and exits non-zero.
    let (ok, out, _) = tpuc(&[
        "run",
        art,
        "--input",
        "testdata/models/mlp/inputs/0_input.npy",
        "--expect",
        "testdata/models/mlp/inputs/0_input.npy",
    ]);
    assert!(!ok);
    assert!(!out.contains(" OK"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_input_exits_non_zero_with_the_file_named() {
    let dir = temp("bad");
    let bogus = dir.join("bogus.pt2");
    std::fs::write(&bogus, b"not an archive").unwrap();
    let (ok, _, err) = tpuc(&[
        "compile",
        bogus.to_str().unwrap(),
        "-o",
        dir.join("o").to_str().unwrap(),
    ]);
    assert!(!ok);
    assert!(
        err.starts_with("error: ") && err.contains("bogus.pt2"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");

    let (ok, _, err) = tpuc(&[
        "compile",
        "does/not/exist.pt2",
        "-o",
        dir.join("o").to_str().unwrap(),
    ]);
    assert!(
        !ok && err.contains("cannot read `does/not/exist.pt2`"),
        "{err}"
    );

    let (ok, _, err) = tpuc(&["opt", "Cargo.toml", "--pass-pipeline=no-such-pass"]);
    assert!(!ok && err.contains("unknown pass `no-such-pass`"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn inspect_lists_ops_and_status() {
    let (ok, out, err) = tpuc(&["inspect", "testdata/models/cnn/core.pt2"]);
    assert!(ok, "{err}");
    assert!(
        out.contains("aten.convolution.default") && out.contains("every op lowers"),
        "{out}"
    );
}
