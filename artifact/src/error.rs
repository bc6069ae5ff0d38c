//! The errors of the artifact crate's fallible operations (reading and writing tensor
//! files, encoding compile options). The runtime converts each into the
//! `RuntimeError` variant of the same name, with the same message.

use std::path::PathBuf;

/// Result alias of this crate.
pub type Result<T, E = ArtifactError> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum ArtifactError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// A malformed, truncated or unsupported `.npy` file.
    #[error("npy {source_name}: {message}")]
    Npy {
        source_name: String,
        message: String,
    },

    /// A malformed, truncated or unsupported `.safetensors` file.
    #[error("safetensors {source_name}: {message}")]
    Safetensors {
        source_name: String,
        message: String,
    },

    /// Compile options that would make a PJRT plugin abort (zero replicas, a device
    /// assignment that does not match, ...).
    #[error("invalid compile options: {0}")]
    CompileOptions(String),
}

impl ArtifactError {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> ArtifactError {
        ArtifactError::Io {
            path: path.into(),
            source,
        }
    }
}
