//! Every file and folder name of an artifact directory, in one place.
//!
//! ```text
//! model.tpuc/
//!   manifest.json                    MANIFEST_FILE: the manifest (crate::manifest)
//!   program.mlir                     PROGRAM_FILE: StableHLO, entry function @main
//!   weights.safetensors              WEIGHTS_FILE: parameters, buffers, constants
//!   model.hlo.pb, model.hlo.txt      HLO_FILE, HLO_TEXT_FILE: a Neuron artifact's XLA HLO
//!                                    (`neuronx-cc` writes NEFF_FILE, model.neff, next to it)
//!   program.json                     SOURCE_PROGRAM_FILE: a dynamic artifact's exported program
//!   specializations/<k=v,...>.mlir   specialization_file: its programs compiled ahead of time
//!   tpu/<topology>/libtpu-<build>.executable
//!                                    tpu_executable_file: TPU executables (--topology)
//!   tpu/<topology>/libtpu-<build>.optimized.hlo.pb
//!                                    tpu_optimized_program_file: the program as libtpu
//!                                    optimized it (`tpuc report --top`)
//! ```
//!
//! The manifest records each file it uses by its path relative to the directory; the
//! runtime reads the names from the manifest, except the manifest's own.

use std::path::PathBuf;

use crate::symbolic::Bindings;

/// The manifest inside an artifact directory.
pub const MANIFEST_FILE: &str = "manifest.json";
/// The StableHLO program (generic MLIR form), entry function `@main`.
pub const PROGRAM_FILE: &str = "program.mlir";
/// Parameters, buffers and constants, keyed by their graph-signature name.
pub const WEIGHTS_FILE: &str = "weights.safetensors";

/// A Neuron artifact's serialized XLA `HloModuleProto`.
pub const HLO_FILE: &str = "model.hlo.pb";
/// The same module as HLO text, for people.
pub const HLO_TEXT_FILE: &str = "model.hlo.txt";
/// What `neuronx-cc` writes (its `--output`), run in the artifact directory.
pub const NEFF_FILE: &str = "model.neff";

/// The exported program inside a dynamic artifact.
pub const SOURCE_PROGRAM_FILE: &str = "program.json";
/// The folder of the specializations compiled ahead of time, after the first.
pub const SPECIALIZATIONS_DIR: &str = "specializations";

/// The file of the specialization for `sizes`, relative to the artifact.
pub fn specialization_file(sizes: &Bindings) -> String {
    let key: Vec<String> = sizes.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{SPECIALIZATIONS_DIR}/{}.mlir", key.join(","))
}

/// The folder of the TPU executables compiled ahead of time.
pub const TPU_DIR: &str = "tpu";

/// The file of the TPU executable for `topology` (`v5e:2x2`) compiled by the libtpu
/// build whose digest is `build_key`, relative to the artifact:
/// `tpu/<topology>/libtpu-<build_key>.executable`, the topology with every character
/// but ASCII letters, digits, `.`, `_` and `-` written `-`.
pub fn tpu_executable_file(topology: &str, build_key: &str) -> PathBuf {
    PathBuf::from(TPU_DIR)
        .join(file_component(topology))
        .join(format!("libtpu-{build_key}.executable"))
}

/// The file of the TPU-optimized program (an XLA `HloModuleProto`) of the executable
/// [`tpu_executable_file`] names: `tpu/<topology>/libtpu-<build_key>.optimized.hlo.pb`.
pub fn tpu_optimized_program_file(topology: &str, build_key: &str) -> PathBuf {
    PathBuf::from(TPU_DIR)
        .join(file_component(topology))
        .join(format!("libtpu-{build_key}.optimized.hlo.pb"))
}

fn file_component(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '.' | '_' | '-' => c,
            _ => '-',
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        let mut sizes = Bindings::new();
        sizes.insert("s0".to_string(), 4);
        sizes.insert("s1".to_string(), 7);
        assert_eq!(
            specialization_file(&sizes),
            "specializations/s0=4,s1=7.mlir"
        );
        assert_eq!(
            tpu_executable_file("v5e:2x2", "0123abcd"),
            PathBuf::from("tpu/v5e-2x2/libtpu-0123abcd.executable")
        );
        assert_eq!(
            tpu_optimized_program_file("v5e:2x2", "0123abcd"),
            PathBuf::from("tpu/v5e-2x2/libtpu-0123abcd.optimized.hlo.pb")
        );
    }
}
