//! Errors of the frontend: everything that can be wrong with a user's exported model.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum FrontendError {
    #[error("cannot read `{path}`: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("`{path}` is not a readable .pt2 archive ({message}); hint: produce it with torch.export.save(ep, path), or pass the ExportedProgram JSON (model.json)")]
    CorruptArchive { path: PathBuf, message: String },
    #[error("`{path}`: entry `{entry}` is damaged: its bytes have CRC-32 {found:08x}, the archive records {expected:08x}; hint: copy or download the archive again, or re-save it with torch.export.save")]
    ChecksumMismatch {
        path: PathBuf,
        entry: String,
        expected: u32,
        found: u32,
    },
    #[error("`{path}` has no `{entry}` entry; hint: is this a torch.export archive (torch.export.save)?")]
    MissingEntry { path: PathBuf, entry: String },
    #[error("invalid JSON in `{file}`: {message}")]
    InvalidJson { file: String, message: String },
    #[error("`{file}` uses torch.export schema {major}.{minor}; tpuc reads schema {supported}.x (re-export with a torch release that writes it)")]
    UnsupportedSchema {
        file: String,
        major: i64,
        minor: i64,
        supported: i64,
    },
    #[error("malformed exported program: {0}")]
    Malformed(String),
    #[error("joint training program: {0}")]
    Joint(String),
    #[error("weight `{name}` is missing: `{file}` is not in the archive")]
    MissingWeight { name: String, file: String },
    #[error("weight `{name}`: metadata needs {expected} bytes of storage (sizes {sizes:?}, strides {strides:?}, offset {offset}) but `{file}` holds {found}")]
    WeightSizeMismatch {
        name: String,
        file: String,
        expected: u64,
        found: u64,
        sizes: Vec<i64>,
        strides: Vec<i64>,
        offset: i64,
    },
    #[error("tensor `{tensor}` has dtype {dtype}, which tpuc does not support (supported: f64, f32, f16, bf16, i64, i32, i16, i8, u8, bool, complex64, complex128)")]
    UnsupportedDtype { tensor: String, dtype: String },
    #[error("the program writes tensors the caller keeps: {writes}. tpuc keeps buffers as state between calls (a KV cache, a counter); writes into parameters and user inputs are not supported, and dropping them would give wrong results from the second call on")]
    StateMutation { writes: String },
    #[error("{tensor}: the symbolic size `{size}` is not determined by the program's input sizes; hint: tpuc compiles sizes given by the inputs (export with dynamic_shapes naming them) and, for sizes read from tensor values, the patterns frontend::data_dependent rewrites")]
    DynamicShape { tensor: String, size: String },
    #[error("{what}: cannot evaluate the size `{expr}`: {message}")]
    SizeExpression {
        what: String,
        expr: String,
        message: String,
    },
    #[error("node `{node}`: the program asserts `{condition}`, which fails for the sizes {sizes}")]
    AssertionFailed {
        node: String,
        condition: String,
        sizes: String,
    },
    #[error("{0}")]
    Dynamic(String),
    #[error("node `{node}` ({op}): {message}; hint: {hint}")]
    DataDependent {
        node: String,
        op: String,
        message: String,
        hint: String,
    },
}

pub type Result<T> = std::result::Result<T, FrontendError>;
