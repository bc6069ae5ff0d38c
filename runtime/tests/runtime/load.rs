//! Loading a session: tampered or inconsistent artifacts, StableHLO versions.

use crate::common::*;

#[test]
fn session_rejects_tampered_or_inconsistent_artifacts() {
    let Some(client) = client() else { return };

    // Tampered weights: one flipped byte in the data.
    let dir = scratch("tampered-weights");
    write_artifact(&dir);
    let path = dir.join("weights.safetensors");
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x40;
    std::fs::write(&path, bytes).unwrap();
    let err = Session::load(&dir, client).unwrap_err();
    assert!(matches!(err, RuntimeError::Checksum { .. }), "{err}");
    assert!(err.to_string().contains("weights.safetensors"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();

    // Tampered program.
    let dir = scratch("tampered-program");
    write_artifact(&dir);
    std::fs::write(
        dir.join("program.mlir"),
        SESSION_PROGRAM.replace("multiply", "subtract"),
    )
    .unwrap();
    let err = Session::load(&dir, client).unwrap_err();
    assert!(matches!(err, RuntimeError::Checksum { .. }), "{err}");
    assert!(err.to_string().contains("program.mlir"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();

    // Format version 1 recorded SHA-256 checksums: such an artifact still loads, and
    // a flipped byte is still caught with the algorithm named.
    let dir = scratch("format-1");
    let mut m = write_artifact(&dir);
    m.format_version = 1;
    let sha256 = |name: &str| {
        use sha2::Digest;
        let bytes = std::fs::read(dir.join(name)).unwrap();
        let hex: String = sha2::Sha256::digest(bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        Checksum::Sha256(hex)
    };
    m.program.checksum = sha256("program.mlir");
    m.weights.checksum = sha256("weights.safetensors");
    write_manifest(&dir, &m);
    assert!(Session::load(&dir, client).is_ok());
    let path = dir.join("weights.safetensors");
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x40;
    std::fs::write(&path, bytes).unwrap();
    let err = Session::load(&dir, client).unwrap_err();
    assert!(err.to_string().contains("manifest says sha256"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();

    // Newer artifact format; missing weight; weight of the wrong shape; escaping path.
    let dir = scratch("inconsistent");
    let good = write_artifact(&dir);
    let mut m = good.clone();
    m.format_version = FORMAT_VERSION + 1;
    write_manifest(&dir, &m);
    let err = Session::load(&dir, client).unwrap_err();
    assert!(err.to_string().contains("format version"), "{err}");

    let mut m = good.clone();
    m.arguments[0].weight = Some("fc.missing".into());
    write_manifest(&dir, &m);
    let err = Session::load(&dir, client).unwrap_err();
    assert!(err.to_string().contains("fc.missing"), "{err}");

    let mut m = good.clone();
    m.arguments[1].shape = vec![4];
    write_manifest(&dir, &m);
    let err = Session::load(&dir, client).unwrap_err();
    assert!(err.to_string().contains("b_fc_bias"), "{err}");

    let mut m = good.clone();
    m.outputs.pop();
    write_manifest(&dir, &m);
    let err = Session::load(&dir, client).unwrap_err();
    assert!(err.to_string().contains("output"), "{err}");

    let mut m = good.clone();
    m.program.file = "../program.mlir".into();
    write_manifest(&dir, &m);
    let err = Session::load(&dir, client).unwrap_err();
    assert!(err.to_string().contains("inside the artifact"), "{err}");

    std::fs::write(dir.join("manifest.json"), "{ not json").unwrap();
    let err = Session::load(&dir, client).unwrap_err();
    assert!(err.to_string().contains("manifest.json"), "{err}");

    std::fs::remove_file(dir.join("manifest.json")).unwrap();
    let err = Session::load(&dir, client).unwrap_err();
    assert!(err.to_string().contains("not a tpuc artifact"), "{err}");
    let err = Session::load(dir.join("missing"), client).unwrap_err();
    assert!(
        err.to_string().ends_with("missing: no such directory"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn stablehlo_version_outside_the_plugin_range_is_rejected() {
    let Some(client) = client() else { return };
    let plugin = client.plugin();
    let current = plugin.stablehlo_current_version().unwrap();
    let dir = scratch("stablehlo-version");
    let good = write_artifact(&dir);
    let cache_dir = scratch("stablehlo-version-cache");
    let options = cache_options(&cache_dir, CacheMode::ReadWrite);

    let mut m = good.clone();
    m.stablehlo_version = "99.0.0".into();
    write_manifest(&dir, &m);
    let err = Session::load_with(&dir, client, &options).unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(err, RuntimeError::StablehloVersion { .. }),
        "{msg}"
    );
    assert!(msg.contains("99.0.0") && msg.contains(&current), "{msg}");
    assert!(msg.contains("newer plugin"), "{msg}");

    if let Some(minimum) = plugin.stablehlo_minimum_version() {
        let min = tpuc_runtime::version::Version::parse(&minimum).unwrap();
        if min > tpuc_runtime::version::Version::new(0, 0, 0) {
            let below = if min.patch > 0 {
                format!("{}.{}.{}", min.major, min.minor, min.patch - 1)
            } else if min.minor > 0 {
                format!("{}.{}.99", min.major, min.minor - 1)
            } else {
                format!("{}.99.99", min.major - 1)
            };
            let mut m = good.clone();
            m.stablehlo_version = below.clone();
            write_manifest(&dir, &m);
            let err = Session::load_with(&dir, client, &options).unwrap_err();
            let msg = err.to_string();
            assert!(
                matches!(err, RuntimeError::StablehloVersion { .. }),
                "{msg}"
            );
            assert!(msg.contains(&below) && msg.contains(&minimum), "{msg}");
        }
    }

    let mut m = good.clone();
    m.stablehlo_version = "one point oh".into();
    write_manifest(&dir, &m);
    let err = Session::load_with(&dir, client, &options).unwrap_err();
    assert!(err.to_string().contains("one point oh"), "{err}");

    // Nothing reached the compiler: no cache entry was written.
    assert!(cache_files(&cache_dir).is_empty());
    // The range's own ends are accepted.
    let mut m = good.clone();
    m.stablehlo_version = current.clone();
    write_manifest(&dir, &m);
    Session::load_with(&dir, client, &cache_options(&cache_dir, CacheMode::Bypass)).unwrap();
    std::fs::remove_dir_all(dir).unwrap();
    std::fs::remove_dir_all(cache_dir).unwrap();
}
