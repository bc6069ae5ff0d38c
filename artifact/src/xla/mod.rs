//! The XLA protobufs tpuc writes and reads, on one codec (`prost`).
//!
//! - [`hlo`]: `HloModuleProto` and the messages under it (the Neuron target writes its
//!   program as one; PJRT plugins return compiled programs as one).
//! - [`compile_options`]: `CompileOptionsProto`, what `PJRT_Client_Compile` takes.
//! - [`opcodes`]: opcode counts and result bytes of a serialized `HloModuleProto`.
//! - [`cost`]: each top-level operation's memory traffic (by memory space) and FLOPs
//!   in an optimized `HloModuleProto` (`tpuc report --top`).
//!
//! Only the fields tpuc sets or reads are declared; a decoder skips the others. Field
//! numbers are XLA's (`xla/service/hlo.proto`, `xla/xla_data.proto`, `xla/xla.proto`,
//! `xla/pjrt/proto/compile_options.proto`), and messages keep XLA's names so that the
//! numbers can be checked against the schema.

pub mod compile_options;
pub mod cost;
pub mod hlo;
pub mod opcodes;

pub use prost::Message;
