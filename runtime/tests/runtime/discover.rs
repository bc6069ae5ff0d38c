//! Finding plugins, and plugins that are not.

use crate::common::*;

#[test]
fn plugin_discovery_lists_the_installed_plugin() {
    if client().is_none() {
        return;
    }
    let found = discover::find_plugin(None).unwrap();
    let all = discover::all_plugins();
    let canonical = |p: &Path| p.canonicalize().unwrap();
    assert!(
        all.iter().any(|p| canonical(p) == canonical(&found)),
        "{found:?} not in {all:?}"
    );
    // Each file once.
    let mut canon: Vec<PathBuf> = all.iter().map(|p| canonical(p)).collect();
    canon.sort();
    canon.dedup();
    assert_eq!(canon.len(), all.len(), "{all:?}");
}

#[test]
fn broken_plugins_are_errors_not_crashes() {
    let dir = scratch("broken-plugin");
    let garbage = dir.join("libgarbage_pjrt.so");
    std::fs::write(&garbage, b"this is not a shared library").unwrap();
    let Err(err) = Plugin::load(&garbage) else {
        panic!("garbage must not load");
    };
    let err = err.to_string();
    assert!(err.contains("libgarbage_pjrt.so"), "{err}");

    // A real shared library that is not a PJRT plugin (no GetPjrtApi).
    let not_pjrt = [
        "/lib/x86_64-linux-gnu/libz.so.1",
        "/usr/lib/x86_64-linux-gnu/libz.so.1",
    ]
    .iter()
    .map(Path::new)
    .find(|p| p.exists());
    if let Some(lib) = not_pjrt {
        let Err(err) = Plugin::load(lib) else {
            panic!("libz is not a plugin");
        };
        let err = err.to_string();
        assert!(err.contains("GetPjrtApi"), "{err}");
    }

    let missing = dir.join("nowhere.so");
    let err = tpuc_runtime::discover::find_plugin(Some(&missing))
        .unwrap_err()
        .to_string();
    assert!(err.contains("nowhere.so"), "{err}");
}
