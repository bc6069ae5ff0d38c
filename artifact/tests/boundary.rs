//! The crate boundary "the runtime never links MLIR": tpuc-artifact (what compiler and
//! runtime share) and tpuc-runtime depend on no crate that links MLIR or LLVM, and
//! tpuc-artifact on nothing that loads plugins. Checked on the manifests' dependency
//! tables (the workspace crates they may name are listed, so nothing reaches MLIR
//! through them either).

use std::path::Path;

/// The dependency names of the `[dependencies]` table of `manifest` (a Cargo.toml).
fn dependencies(manifest: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(manifest).unwrap();
    let mut names = Vec::new();
    let mut in_dependencies = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_dependencies = line == "[dependencies]";
            continue;
        }
        if in_dependencies && !line.is_empty() && !line.starts_with('#') {
            let name = line.split(['=', '.']).next().unwrap().trim();
            names.push(name.to_string());
        }
    }
    names
}

const LINKS_MLIR: [&str; 4] = ["melior", "mlir-sys", "tpuc-compiler", "tpuc-dialects"];

#[test]
fn artifact_depends_on_small_crates_only() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let deps = dependencies(&root.join("Cargo.toml"));
    assert!(deps.contains(&"prost".to_string()), "{deps:?}");
    for name in &deps {
        assert!(
            !LINKS_MLIR.contains(&name.as_str())
                && !["libloading", "tpuc-runtime", "tpuc-cli"].contains(&name.as_str()),
            "tpuc-artifact must not depend on {name}"
        );
    }
}

#[test]
fn runtime_links_no_mlir() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let deps = dependencies(&root.join("../runtime/Cargo.toml"));
    assert!(deps.contains(&"tpuc-artifact".to_string()), "{deps:?}");
    for name in &deps {
        assert!(
            !LINKS_MLIR.contains(&name.as_str()),
            "tpuc-runtime must not depend on {name}: it never links MLIR"
        );
        assert!(
            !name.starts_with("tpuc-") || name == "tpuc-artifact",
            "tpuc-runtime may depend on tpuc-artifact only among tpuc's crates, not {name}"
        );
    }
}
