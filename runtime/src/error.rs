//! The runtime's error type. Every fallible operation of this crate returns
//! [`RuntimeError`]; nothing a user controls (files, plugins, programs, inputs) panics.

use std::path::PathBuf;

/// Result alias used throughout the runtime.
pub type Result<T, E = RuntimeError> = std::result::Result<T, E>;

/// A PJRT error code (`PJRT_Error_Code`, which follows absl's status codes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    Cancelled,
    Unknown,
    InvalidArgument,
    DeadlineExceeded,
    NotFound,
    AlreadyExists,
    PermissionDenied,
    ResourceExhausted,
    FailedPrecondition,
    Aborted,
    OutOfRange,
    Unimplemented,
    Internal,
    Unavailable,
    DataLoss,
    Unauthenticated,
    /// A code this crate does not know (or the plugin failed to report one).
    Other(i32),
}

impl ErrorCode {
    pub fn from_raw(code: i32) -> ErrorCode {
        match code {
            1 => ErrorCode::Cancelled,
            2 => ErrorCode::Unknown,
            3 => ErrorCode::InvalidArgument,
            4 => ErrorCode::DeadlineExceeded,
            5 => ErrorCode::NotFound,
            6 => ErrorCode::AlreadyExists,
            7 => ErrorCode::PermissionDenied,
            8 => ErrorCode::ResourceExhausted,
            9 => ErrorCode::FailedPrecondition,
            10 => ErrorCode::Aborted,
            11 => ErrorCode::OutOfRange,
            12 => ErrorCode::Unimplemented,
            13 => ErrorCode::Internal,
            14 => ErrorCode::Unavailable,
            15 => ErrorCode::DataLoss,
            16 => ErrorCode::Unauthenticated,
            other => ErrorCode::Other(other),
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = match self {
            ErrorCode::Cancelled => "CANCELLED",
            ErrorCode::Unknown => "UNKNOWN",
            ErrorCode::InvalidArgument => "INVALID_ARGUMENT",
            ErrorCode::DeadlineExceeded => "DEADLINE_EXCEEDED",
            ErrorCode::NotFound => "NOT_FOUND",
            ErrorCode::AlreadyExists => "ALREADY_EXISTS",
            ErrorCode::PermissionDenied => "PERMISSION_DENIED",
            ErrorCode::ResourceExhausted => "RESOURCE_EXHAUSTED",
            ErrorCode::FailedPrecondition => "FAILED_PRECONDITION",
            ErrorCode::Aborted => "ABORTED",
            ErrorCode::OutOfRange => "OUT_OF_RANGE",
            ErrorCode::Unimplemented => "UNIMPLEMENTED",
            ErrorCode::Internal => "INTERNAL",
            ErrorCode::Unavailable => "UNAVAILABLE",
            ErrorCode::DataLoss => "DATA_LOSS",
            ErrorCode::Unauthenticated => "UNAUTHENTICATED",
            ErrorCode::Other(c) => return write!(f, "code {c}"),
        };
        f.write_str(s)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// A PJRT call returned a `PJRT_Error`; the plugin's message is kept verbatim
    /// (for compile errors it carries the MLIR parser's line and column).
    #[error("{call} failed ({code}): {message}")]
    Pjrt {
        call: &'static str,
        code: ErrorCode,
        message: String,
    },

    /// The plugin shared library could not be opened.
    #[error("cannot load PJRT plugin {path}: {source}")]
    PluginLoad {
        path: PathBuf,
        #[source]
        source: libloading::Error,
    },

    /// The plugin loaded but is unusable (no `GetPjrtApi`, wrong API major version,
    /// a function we need is missing from its table, ...).
    #[error("PJRT plugin {path}: {message}")]
    Plugin { path: PathBuf, message: String },

    /// No plugin was found by [`crate::discover::find_plugin`].
    #[error(
        "no PJRT plugin found; searched:\n{}\nhint: run `make setup` or set TPUC_PJRT_PLUGIN",
        .searched.iter().map(|p| format!("  {}", p.display())).collect::<Vec<_>>().join("\n")
    )]
    PluginNotFound { searched: Vec<PathBuf> },

    /// No libtpu was found by [`crate::discover::find_libtpu`].
    #[error(
        "libtpu (the TPU compiler) not found; searched:\n{}\nhint: run `make setup` (scripts/setup_libtpu.sh), `pip install libtpu`, or set TPUC_LIBTPU",
        .searched.iter().map(|p| format!("  {}", p.display())).collect::<Vec<_>>().join("\n")
    )]
    LibtpuNotFound { searched: Vec<PathBuf> },

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

    /// An artifact whose manifest is missing, unreadable or inconsistent.
    #[error("artifact {dir}: {message}")]
    Artifact { dir: PathBuf, message: String },

    /// The artifact's StableHLO version is outside the range the plugin accepts (its
    /// `stablehlo_minimum_version` ..= `stablehlo_current_version` attributes). Checked
    /// before the program reaches the plugin's compiler.
    #[error(
        "artifact {dir} is written for StableHLO {artifact}, but the PJRT plugin {plugin} accepts StableHLO {}; {}",
        crate::version::describe_range(.minimum.as_deref(), .current.as_deref()),
        crate::version::mismatch_hint(.artifact, .current.as_deref())
    )]
    StablehloVersion {
        dir: PathBuf,
        plugin: PathBuf,
        /// The manifest's `stablehlo_version`.
        artifact: String,
        /// The plugin's `stablehlo_minimum_version`, if it reports one.
        minimum: Option<String>,
        /// The plugin's `stablehlo_current_version`, if it reports one.
        current: Option<String>,
    },

    /// A file of an artifact does not match the checksum recorded in its manifest.
    #[error(
        "checksum mismatch for {path}: manifest says {algorithm} {expected}, file has {actual}"
    )]
    Checksum {
        path: PathBuf,
        algorithm: &'static str,
        expected: String,
        actual: String,
    },

    /// Wrong number of inputs passed to [`crate::Session::run`].
    #[error("expected {expected} user input(s) ({names}), got {got}")]
    InputCount {
        expected: usize,
        got: usize,
        names: String,
    },

    /// An input whose dtype, shape or byte size does not match what the program expects.
    #[error("input {index} `{name}`: {message}")]
    InputMismatch {
        index: usize,
        name: String,
        message: String,
    },

    /// A result of the program that does not match the manifest (a compiler bug).
    #[error("output {index} `{name}`: {message}")]
    OutputMismatch {
        index: usize,
        name: String,
        message: String,
    },

    /// A PJRT buffer element type that has no [`crate::DType`] equivalent.
    #[error("unsupported PJRT element type {0} (no tpuc dtype for it)")]
    UnsupportedElementType(i32),

    /// Compile options that would make the plugin abort (zero replicas, a device
    /// assignment that does not match, ...).
    #[error("invalid compile options: {0}")]
    CompileOptions(String),

    /// The inputs of a call to a dynamic artifact have sizes it cannot run: outside a
    /// symbol's range, disagreeing on a symbol, or with no program for them.
    #[error("input sizes: {0}")]
    Sizes(String),

    /// A training checkpoint that cannot be written or does not fit the program.
    #[error("checkpoint {dir}: {message}")]
    Checkpoint { dir: PathBuf, message: String },

    /// A bug in tpuc (a state the code does not expect).
    #[error("internal error: {0}")]
    Internal(String),

    /// Any other misuse detectable before calling into PJRT.
    #[error("{0}")]
    InvalidArgument(String),
}

/// The artifact crate's errors become the variants of the same name, with the same
/// messages.
impl From<tpuc_artifact::ArtifactError> for RuntimeError {
    fn from(e: tpuc_artifact::ArtifactError) -> RuntimeError {
        use tpuc_artifact::ArtifactError as A;
        match e {
            A::Io { path, source } => RuntimeError::Io { path, source },
            A::Npy {
                source_name,
                message,
            } => RuntimeError::Npy {
                source_name,
                message,
            },
            A::Safetensors {
                source_name,
                message,
            } => RuntimeError::Safetensors {
                source_name,
                message,
            },
            A::CompileOptions(message) => RuntimeError::CompileOptions(message),
        }
    }
}

impl RuntimeError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> RuntimeError {
        RuntimeError::Io {
            path: path.into(),
            source,
        }
    }

    /// The PJRT error code, for [`RuntimeError::Pjrt`].
    pub fn pjrt_code(&self) -> Option<ErrorCode> {
        match self {
            RuntimeError::Pjrt { code, .. } => Some(*code),
            _ => None,
        }
    }
}

impl RuntimeError {
    /// The error with `note` added to its message (same variant where it has a
    /// message; otherwise an [`RuntimeError::InvalidArgument`] with the full text).
    pub(crate) fn with_note(self, note: &str) -> RuntimeError {
        use RuntimeError::*;
        match self {
            Pjrt {
                call,
                code,
                message,
            } => Pjrt {
                call,
                code,
                message: format!("{message}; {note}"),
            },
            OutputMismatch {
                index,
                name,
                message,
            } => OutputMismatch {
                index,
                name,
                message: format!("{message}; {note}"),
            },
            InputMismatch {
                index,
                name,
                message,
            } => InputMismatch {
                index,
                name,
                message: format!("{message}; {note}"),
            },
            Plugin { path, message } => Plugin {
                path,
                message: format!("{message}; {note}"),
            },
            Artifact { dir, message } => Artifact {
                dir,
                message: format!("{message}; {note}"),
            },
            Sizes(message) => Sizes(format!("{message}; {note}")),
            InvalidArgument(message) => InvalidArgument(format!("{message}; {note}")),
            other => InvalidArgument(format!("{other}; {note}")),
        }
    }
}
