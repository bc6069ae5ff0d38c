//! Element types shared by the compiler (which writes manifests) and the runtime
//! (which reads them and moves bytes to and from devices).

use serde::{Deserialize, Serialize};

/// Element type of a tensor, named as in the artifact manifest (`"f32"`, `"bf16"`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    F64,
    F32,
    F16,
    Bf16,
    I64,
    I32,
    I16,
    I8,
    U8,
    Bool,
    /// complex<f32>: (real, imag) f32 pairs, as `torch.complex64` and numpy's `<c8`.
    C64,
    /// complex<f64>: (real, imag) f64 pairs, as `torch.complex128` and numpy's `<c16`.
    C128,
}

impl DType {
    /// Bytes per element in memory (bool is one byte, as in PyTorch and numpy).
    pub fn size_in_bytes(self) -> usize {
        match self {
            DType::C128 => 16,
            DType::F64 | DType::I64 | DType::C64 => 8,
            DType::F32 | DType::I32 => 4,
            DType::F16 | DType::Bf16 | DType::I16 => 2,
            DType::I8 | DType::U8 | DType::Bool => 1,
        }
    }

    /// The manifest / safetensors-independent short name (`"f32"`).
    pub fn name(self) -> &'static str {
        match self {
            DType::F64 => "f64",
            DType::F32 => "f32",
            DType::F16 => "f16",
            DType::Bf16 => "bf16",
            DType::I64 => "i64",
            DType::I32 => "i32",
            DType::I16 => "i16",
            DType::I8 => "i8",
            DType::U8 => "u8",
            DType::Bool => "bool",
            DType::C64 => "c64",
            DType::C128 => "c128",
        }
    }

    /// The dtype of a short name ([`DType::name`]).
    pub fn parse(name: &str) -> Option<DType> {
        [
            DType::F64,
            DType::F32,
            DType::F16,
            DType::Bf16,
            DType::I64,
            DType::I32,
            DType::I16,
            DType::I8,
            DType::U8,
            DType::Bool,
            DType::C64,
            DType::C128,
        ]
        .into_iter()
        .find(|d| d.name() == name)
    }

    /// MLIR element type spelling (`f32`, `bf16`, `i64`, `i1`, `ui8`).
    pub fn mlir_name(self) -> &'static str {
        match self {
            DType::Bool => "i1",
            DType::U8 => "ui8",
            DType::C64 => "complex<f32>",
            DType::C128 => "complex<f64>",
            other => other.name(),
        }
    }

    /// Inverse of [`DType::mlir_name`].
    pub fn from_mlir_name(name: &str) -> Option<DType> {
        Some(match name {
            "f64" => DType::F64,
            "f32" => DType::F32,
            "f16" => DType::F16,
            "bf16" => DType::Bf16,
            "i64" | "si64" => DType::I64,
            "i32" | "si32" => DType::I32,
            "i16" | "si16" => DType::I16,
            "i8" | "si8" => DType::I8,
            "ui8" => DType::U8,
            "i1" => DType::Bool,
            "complex<f32>" => DType::C64,
            "complex<f64>" => DType::C128,
            _ => return None,
        })
    }

    pub fn is_float(self) -> bool {
        matches!(self, DType::F64 | DType::F32 | DType::F16 | DType::Bf16)
    }

    /// complex64 or complex128.
    pub fn is_complex(self) -> bool {
        matches!(self, DType::C64 | DType::C128)
    }

    /// The element type of a complex dtype's parts (f32 for c64, f64 for c128); the
    /// dtype itself otherwise.
    pub fn complex_part(self) -> DType {
        match self {
            DType::C64 => DType::F32,
            DType::C128 => DType::F64,
            other => other,
        }
    }

    /// The complex dtype whose parts are `self` (c64 for f32 and narrower floats, c128
    /// for f64), as `torch.view_as_complex` and `torch.polar` type their results.
    pub fn complex_of(self) -> Option<DType> {
        match self {
            DType::F32 => Some(DType::C64),
            DType::F64 => Some(DType::C128),
            _ => None,
        }
    }

    pub fn is_integer(self) -> bool {
        matches!(
            self,
            DType::I64 | DType::I32 | DType::I16 | DType::I8 | DType::U8
        )
    }
}

impl std::fmt::Display for DType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
