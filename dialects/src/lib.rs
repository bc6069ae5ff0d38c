//! The MLIR operations tpuc emits, as typed Rust builders.
//!
//! Upstream MLIR 22 has no StableHLO dialect, so `stablehlo.*` operations are built as
//! unregistered operations in generic form (which XLA's parsers accept). This crate is
//! where their rules live: [`stablehlo::Emitter`] builds each op with its result type
//! inferred, and [`verify`] re-checks a whole module, since MLIR itself cannot.
//!
//! Architecture invariant: no knowledge of PyTorch here. The ATen-level ops (`aten.*`)
//! are described in [`aten`] only as far as their generic MLIR encoding goes.

pub mod aten;
pub mod func;
pub mod stablehlo;
pub mod types;
pub mod verify;

pub use stablehlo::{Emitter, TValue};
pub use types::TensorType;

/// Errors raised while building or verifying operations.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum DialectError {
    #[error("unsupported type `{0}` (tpuc compiles static-shaped tensors of f64, f32, f16, bf16, i64, i32, i16, i8, u8 and bool)")]
    UnsupportedType(String),
    #[error("{op}: {message}")]
    InvalidOp { op: String, message: String },
    #[error("internal error: could not parse attribute `{0}`")]
    BadAttribute(String),
    #[error("internal error building `{0}`")]
    Build(String),
}

impl DialectError {
    pub fn invalid(op: &str, message: impl Into<String>) -> DialectError {
        DialectError::InvalidOp {
            op: op.to_string(),
            message: message.into(),
        }
    }
}

/// Creates an MLIR context set up the way tpuc uses it: `func` registered, everything
/// else (stablehlo, aten, sdy) accepted as unregistered operations.
pub fn new_context() -> melior::Context {
    let ctx = melior::Context::new();
    let registry = melior::dialect::DialectRegistry::new();
    melior::dialect::DialectHandle::func().insert_dialect(&registry);
    ctx.append_dialect_registry(&registry);
    ctx.load_all_available_dialects();
    ctx.set_allow_unregistered_dialects(true);
    // One thread builds and verifies a program; with threading on, every attribute,
    // type and location lookup goes through MLIR's sharded, locked uniquer and a
    // thread-local cache (about a third of importing a 100k-node graph).
    ctx.enable_multi_threading(false);
    ctx
}
