//! The tpuc artifact contract: what `tpuc compile` writes and the runtime reads.
//!
//! Both sides depend on this crate, and it depends on neither: it links no MLIR (the
//! runtime never does) and no PJRT plugin. The rule "the runtime never links MLIR" is
//! this crate boundary: everything the compiler and the runtime must agree on lives
//! here, in small dependencies only.
//!
//! - [`manifest`]: the manifest (`manifest.json`), file references and checksums.
//! - [`layout`]: every file and folder name of an artifact directory.
//! - [`dtype`]: element types.
//! - [`tensor`]: host tensors (dtype, shape, bytes).
//! - [`sharding`]: device meshes and tensor shardings.
//! - [`symbolic`]: dynamic sizes (symbol expressions, ranges, binding to inputs).
//! - [`npy`], [`safetensors`]: tensor file formats.
//! - [`training`]: optimizers and the manifest's section of a training step.
//! - [`xla`]: the XLA protobufs tpuc writes and reads (`HloModuleProto`,
//!   `CompileOptionsProto`), as `prost` messages.
//! - [`error`]: the errors of this crate's fallible operations.

pub mod dtype;
pub mod error;
pub mod layout;
pub mod manifest;
pub mod npy;
pub mod safetensors;
pub mod sharding;
pub mod symbolic;
pub mod tensor;
pub mod training;
pub mod xla;

pub use dtype::DType;
pub use error::{ArtifactError, Result};
pub use manifest::{Checksum, FileRef, Manifest};
pub use tensor::HostTensor;
pub use xla::compile_options::CompileOptions;
