//! Reading and validating a manifest, and the checks of an artifact's files, all
//! before any device work.

use crate::error::{Result, RuntimeError};
use crate::manifest::{Checksum, FileRef, Manifest, FORMAT_VERSION, OLDEST_FORMAT_VERSION};
use crate::pjrt::Client;
use crate::DType;
use std::path::{Component, Path, PathBuf};

pub use crate::layout::MANIFEST_FILE;

/// Reads and validates `dir/manifest.json` (format version; no device work).
pub fn read_manifest(dir: &Path) -> Result<Manifest> {
    let path = dir.join(MANIFEST_FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        if e.kind() != std::io::ErrorKind::NotFound {
            return RuntimeError::io(&path, e);
        }
        let message = if dir.is_dir() {
            format!("no {MANIFEST_FILE}: not a tpuc artifact (`tpuc compile` makes one)")
        } else {
            "no such directory".to_string()
        };
        RuntimeError::Artifact {
            dir: dir.to_path_buf(),
            message,
        }
    })?;
    parse_manifest(&text, dir)
}

/// Parses and validates the text of a manifest (of the artifact at `dir`, for messages).
pub fn parse_manifest(text: &str, dir: &Path) -> Result<Manifest> {
    let manifest: Manifest = serde_json::from_str(text).map_err(|e| RuntimeError::Artifact {
        dir: dir.to_path_buf(),
        message: format!("{MANIFEST_FILE} is invalid: {e}"),
    })?;
    if !(OLDEST_FORMAT_VERSION..=FORMAT_VERSION).contains(&manifest.format_version) {
        return Err(RuntimeError::Artifact {
            dir: dir.to_path_buf(),
            message: format!(
                "artifact format version {} is not supported (this runtime reads versions {OLDEST_FORMAT_VERSION} to {FORMAT_VERSION}); recompile the model",
                manifest.format_version
            ),
        });
    }
    check_partitioning(&manifest).map_err(|message| RuntimeError::Artifact {
        dir: dir.to_path_buf(),
        message,
    })?;
    Ok(manifest)
}

/// The addressable device index that runs each mesh position: device 0 for an
/// unpartitioned artifact; the device of each id of the mesh's device order otherwise,
/// an error when the client does not have them all.
pub(super) fn device_positions(
    client: &Client,
    manifest: &Manifest,
) -> std::result::Result<Vec<usize>, String> {
    let Some(p) = &manifest.partitioning else {
        return Ok(vec![0]);
    };
    let devices = client.addressable_devices();
    if devices.len() < p.mesh.num_devices() {
        return Err(format!(
            "the artifact is partitioned over the mesh {} ({} devices), but the client has {} addressable device(s){}",
            p.mesh,
            p.mesh.num_devices(),
            devices.len(),
            if client.platform_name() == "cpu" {
                format!(" (the CPU plugin makes as many as asked: ClientOptions::cpu({}))", p.mesh.num_devices())
            } else {
                String::new()
            }
        ));
    }
    p.mesh
        .device_ids
        .iter()
        .map(|&id| {
            devices
                .iter()
                .position(|d| i64::from(d.id) == id)
                .ok_or_else(|| {
                    format!("the mesh's device {id} is not an addressable device of the client")
                })
        })
        .collect()
}

/// The checks of a partitioned manifest: its compile options agree with its mesh, and
/// every argument and output has a sharding valid on the mesh for its shape.
pub(super) fn check_partitioning(manifest: &Manifest) -> std::result::Result<(), String> {
    let Some(p) = &manifest.partitioning else {
        return Ok(());
    };
    crate::sharding::Mesh::new(p.mesh.axes.clone(), Some(p.mesh.device_ids.clone()))
        .map_err(|e| format!("partitioning: {e}"))?;
    if p.num_partitions as usize != p.mesh.num_devices() || !p.use_spmd_partitioning {
        return Err(format!(
            "partitioning: {} partitions (SPMD {}) for a mesh of {} devices",
            p.num_partitions,
            p.use_spmd_partitioning,
            p.mesh.num_devices()
        ));
    }
    if p.use_shardy_partitioner != (p.format == crate::manifest::ShardingFormat::Shardy) {
        return Err(
            "partitioning: the Shardy partitioner is used exactly for Shardy shardings".into(),
        );
    }
    let specs = manifest
        .arguments
        .iter()
        .map(|a| ("argument", &a.name, &a.shape, &a.sharding))
        .chain(
            manifest
                .outputs
                .iter()
                .map(|o| ("output", &o.name, &o.shape, &o.sharding)),
        );
    for (what, name, shape, sharding) in specs {
        let Some(sharding) = sharding else {
            return Err(format!(
                "{what} `{name}` of a partitioned artifact has no sharding"
            ));
        };
        sharding
            .check(&p.mesh, shape)
            .map_err(|e| format!("{what} `{name}`: {e}"))?;
    }
    Ok(())
}

/// The checks of a dynamic manifest: not partitioned, no Neuron form, and its first
/// specialization is the program (the one the load compiles). Run with the other
/// checks, before anything is compiled or uploaded.
pub(super) fn check_dynamic(manifest: &Manifest) -> std::result::Result<(), String> {
    let Some(section) = &manifest.dynamic else {
        return Ok(());
    };
    if manifest.partitioning.is_some() || manifest.neuron.is_some() {
        return Err("a dynamic program cannot be partitioned or have a Neuron form".into());
    }
    let first = section
        .specializations
        .first()
        .ok_or("the dynamic section lists no specialization")?;
    if first.program != manifest.program {
        return Err("the first specialization of the dynamic section is not the program".into());
    }
    Ok(())
}

/// Resolves a file of the artifact, refusing paths that leave the artifact directory.
pub(super) fn resolve(dir: &Path, file: &FileRef, what: &str) -> Result<PathBuf> {
    let rel = Path::new(&file.file);
    let inside = !file.file.is_empty()
        && rel
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if !inside {
        return Err(RuntimeError::Artifact {
            dir: dir.to_path_buf(),
            message: format!(
                "{what} file `{}` must be a relative path inside the artifact",
                file.file
            ),
        });
    }
    Ok(dir.join(rel))
}

pub(super) fn verify_checksum(path: &Path, expected: &Checksum, bytes: &[u8]) -> Result<()> {
    if !expected.matches(bytes) {
        return Err(RuntimeError::Checksum {
            path: path.to_path_buf(),
            algorithm: expected.algorithm(),
            expected: expected.hex().to_string(),
            actual: expected.same_kind_of(bytes).hex().to_string(),
        });
    }
    Ok(())
}

pub(super) fn shape_matches(expected: &[i64], actual: &[i64]) -> bool {
    // A negative expected dimension is dynamic and matches any size.
    expected.len() == actual.len() && expected.iter().zip(actual).all(|(&e, &a)| e < 0 || e == a)
}

pub(super) fn describe(dtype: DType, shape: &[i64]) -> String {
    format!("{dtype}{shape:?}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksums_of_known_input() {
        // The published test vectors of both algorithms for "abc".
        let blake3 = "6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85";
        let sha256 = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(Checksum::of(b"abc"), Checksum::Blake3(blake3.into()));
        assert!(Checksum::Sha256(sha256.into()).matches(b"abc"));
        assert!(Checksum::Sha256(sha256.to_uppercase()).matches(b"abc"));
        assert!(!Checksum::Sha256(sha256.into()).matches(b"abd"));
        assert!(!Checksum::Blake3(sha256.into()).matches(b"abc"));
    }

    #[test]
    fn checksum_is_one_field_named_by_its_algorithm() {
        let r = FileRef {
            file: "w".into(),
            checksum: Checksum::Blake3("00".into()),
        };
        let text = serde_json::to_string(&r).unwrap();
        assert_eq!(text, r#"{"file":"w","blake3":"00"}"#);
        let old: FileRef = serde_json::from_str(r#"{"file":"w","sha256":"ab"}"#).unwrap();
        assert_eq!(old.checksum, Checksum::Sha256("ab".into()));
    }

    #[test]
    fn dynamic_dims_match_anything() {
        assert!(shape_matches(&[-1, 3], &[7, 3]));
        assert!(!shape_matches(&[2, 3], &[3, 2]));
        assert!(!shape_matches(&[2], &[2, 1]));
    }

    #[test]
    fn artifact_paths_stay_inside() {
        let f = |s: &str| FileRef {
            file: s.into(),
            checksum: Checksum::of(b""),
        };
        let dir = Path::new("/a");
        assert!(resolve(dir, &f("program.mlir"), "program").is_ok());
        assert!(resolve(dir, &f("../x"), "program").is_err());
        assert!(resolve(dir, &f("/etc/passwd"), "program").is_err());
        assert!(resolve(dir, &f(""), "program").is_err());
    }
}
