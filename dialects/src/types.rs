//! Ranked tensor types as plain Rust values.
//!
//! Builders and the verifier reason about shapes and element types with [`TensorType`]
//! instead of poking at MLIR's C API: it converts to and from the MLIR spelling
//! (`tensor<2x3xf32>`) in one place.

use melior::ir::Type;
use melior::Context;
use tpuc_runtime::DType;

use crate::DialectError;

/// A static-shaped ranked tensor type: `tensor<2x3xf32>`; a 0-d tensor has an empty shape.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TensorType {
    pub shape: Vec<i64>,
    pub dtype: DType,
}

impl TensorType {
    pub fn new(shape: impl Into<Vec<i64>>, dtype: DType) -> TensorType {
        TensorType {
            shape: shape.into(),
            dtype,
        }
    }

    /// A rank-0 tensor of `dtype`.
    pub fn scalar(dtype: DType) -> TensorType {
        TensorType::new(Vec::new(), dtype)
    }

    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    pub fn num_elements(&self) -> i64 {
        self.shape.iter().product()
    }

    /// Same shape, other element type.
    pub fn with_dtype(&self, dtype: DType) -> TensorType {
        TensorType::new(self.shape.clone(), dtype)
    }

    /// Same element type, other shape.
    pub fn with_shape(&self, shape: impl Into<Vec<i64>>) -> TensorType {
        TensorType::new(shape, self.dtype)
    }

    /// The MLIR spelling, `tensor<2x3xf32>` (`tensor<f32>` for rank 0).
    pub fn mlir(&self) -> String {
        let mut s = String::from("tensor<");
        for d in &self.shape {
            s.push_str(&d.to_string());
            s.push('x');
        }
        s.push_str(self.dtype.mlir_name());
        s.push('>');
        s
    }

    /// Parses the MLIR spelling back. Dynamic dimensions (`?`) and unranked tensors are
    /// rejected: tpuc compiles static shapes.
    pub fn parse(text: &str) -> Result<TensorType, DialectError> {
        let bad = || DialectError::UnsupportedType(text.to_string());
        let inner = text
            .trim()
            .strip_prefix("tensor<")
            .and_then(|s| s.strip_suffix('>'))
            .ok_or_else(bad)?;
        let mut parts: Vec<&str> = inner.split('x').collect();
        // Element types never contain 'x', so the last part is the element type.
        let elem = parts.pop().ok_or_else(bad)?;
        let dtype = DType::from_mlir_name(elem).ok_or_else(bad)?;
        let shape = parts
            .iter()
            .map(|p| p.parse::<i64>().map_err(|_| bad()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(TensorType { shape, dtype })
    }

    pub fn to_mlir<'c>(&self, ctx: &'c Context) -> Result<Type<'c>, DialectError> {
        Type::parse(ctx, &self.mlir()).ok_or_else(|| DialectError::UnsupportedType(self.mlir()))
    }

    pub fn from_mlir(ty: Type<'_>) -> Result<TensorType, DialectError> {
        TensorType::parse(&ty.to_string())
    }
}

impl std::fmt::Display for TensorType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.mlir())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_spelling() {
        for s in [
            "tensor<2x3xf32>",
            "tensor<f32>",
            "tensor<1x0xi1>",
            "tensor<4xbf16>",
            "tensor<7xui8>",
        ] {
            assert_eq!(TensorType::parse(s).unwrap().mlir(), s);
        }
        assert!(TensorType::parse("tensor<?x3xf32>").is_err());
        assert!(TensorType::parse("tensor<3xcomplex<f32>>").is_err());
    }
}
