//! Ranked tensor types as plain Rust values.
//!
//! Builders and the verifier reason about shapes and element types with [`TensorType`]
//! instead of poking at MLIR's C API: it converts to and from the MLIR spelling
//! (`tensor<2x3xf32>`) in one place.

use melior::ir::r#type::TypeLike;
use melior::ir::Type;
use melior::Context;
use tpuc_artifact::DType;

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
        // The element type follows the last dimension's 'x'; only `complex<...>` among
        // tpuc's element types contains an 'x' itself.
        let split_at = match inner.find("complex<") {
            Some(0) => None,
            Some(at) => Some((at - 1, at)),
            None => inner.rfind('x').map(|at| (at, at + 1)),
        };
        let (dims, elem) = match split_at {
            None => ("", inner),
            Some((x, elem_at)) => {
                if x == 0 || inner.as_bytes()[x] != b'x' {
                    return Err(bad());
                }
                (&inner[..x], &inner[elem_at..])
            }
        };
        let dtype = DType::from_mlir_name(elem).ok_or_else(bad)?;
        let parts: Vec<&str> = if dims.is_empty() {
            Vec::new()
        } else {
            dims.split('x').collect()
        };
        let shape = parts
            .iter()
            .map(|p| p.parse::<i64>().map_err(|_| bad()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(TensorType { shape, dtype })
    }

    /// The MLIR type, built through the C API (the type [`TensorType::parse`] of
    /// [`TensorType::mlir`] gives; types are uniqued, so it is the same handle).
    /// Negative dimensions do not spell a type and are refused.
    pub fn to_mlir<'c>(&self, ctx: &'c Context) -> Result<Type<'c>, DialectError> {
        if self.shape.iter().any(|&d| d < 0) {
            return Err(DialectError::UnsupportedType(self.mlir()));
        }
        let raw = ctx.to_raw();
        // SAFETY: the context is live; the shape outlives the call, which copies it; a
        // null encoding is "none".
        unsafe {
            let elem = match self.dtype {
                DType::F64 => mlir_sys::mlirF64TypeGet(raw),
                DType::F32 => mlir_sys::mlirF32TypeGet(raw),
                DType::F16 => mlir_sys::mlirF16TypeGet(raw),
                DType::Bf16 => mlir_sys::mlirBF16TypeGet(raw),
                DType::I64 => mlir_sys::mlirIntegerTypeGet(raw, 64),
                DType::I32 => mlir_sys::mlirIntegerTypeGet(raw, 32),
                DType::I16 => mlir_sys::mlirIntegerTypeGet(raw, 16),
                DType::I8 => mlir_sys::mlirIntegerTypeGet(raw, 8),
                DType::U8 => mlir_sys::mlirIntegerTypeUnsignedGet(raw, 8),
                DType::Bool => mlir_sys::mlirIntegerTypeGet(raw, 1),
                DType::C64 => mlir_sys::mlirComplexTypeGet(mlir_sys::mlirF32TypeGet(raw)),
                DType::C128 => mlir_sys::mlirComplexTypeGet(mlir_sys::mlirF64TypeGet(raw)),
            };
            let ty = mlir_sys::mlirRankedTensorTypeGet(
                self.shape.len() as isize,
                self.shape.as_ptr(),
                elem,
                mlir_sys::mlirAttributeGetNull(),
            );
            Ok(Type::from_raw(ty))
        }
    }

    /// Reads an MLIR type through the C API, accepting exactly what
    /// [`TensorType::parse`] accepts of its spelling: a ranked tensor without
    /// encoding, static dimensions, one of tpuc's element types.
    pub fn from_mlir(ty: Type<'_>) -> Result<TensorType, DialectError> {
        let raw = ty.to_raw();
        let bad = || DialectError::UnsupportedType(ty.to_string());
        // SAFETY: `ty` is a live type; each accessor is guarded by its type test.
        unsafe {
            if !mlir_sys::mlirTypeIsARankedTensor(raw)
                || !mlir_sys::mlirRankedTensorTypeGetEncoding(raw).ptr.is_null()
            {
                return Err(bad());
            }
            let rank = mlir_sys::mlirShapedTypeGetRank(raw);
            let mut shape = Vec::with_capacity(rank as usize);
            for i in 0..rank as isize {
                if mlir_sys::mlirShapedTypeIsDynamicDim(raw, i) {
                    return Err(bad());
                }
                shape.push(mlir_sys::mlirShapedTypeGetDimSize(raw, i));
            }
            let elem = mlir_sys::mlirShapedTypeGetElementType(raw);
            let dtype = if mlir_sys::mlirTypeIsAComplex(elem) {
                let part = mlir_sys::mlirComplexTypeGetElementType(elem);
                if mlir_sys::mlirTypeIsAF32(part) {
                    DType::C64
                } else if mlir_sys::mlirTypeIsAF64(part) {
                    DType::C128
                } else {
                    return Err(bad());
                }
            } else if mlir_sys::mlirTypeIsAF64(elem) {
                DType::F64
            } else if mlir_sys::mlirTypeIsAF32(elem) {
                DType::F32
            } else if mlir_sys::mlirTypeIsAF16(elem) {
                DType::F16
            } else if mlir_sys::mlirTypeIsABF16(elem) {
                DType::Bf16
            } else if mlir_sys::mlirTypeIsAInteger(elem) {
                let width = mlir_sys::mlirIntegerTypeGetWidth(elem);
                let signless = mlir_sys::mlirIntegerTypeIsSignless(elem);
                let signed = mlir_sys::mlirIntegerTypeIsSigned(elem);
                match (width, signless, signed) {
                    (64, true, _) | (64, _, true) => DType::I64,
                    (32, true, _) | (32, _, true) => DType::I32,
                    (16, true, _) | (16, _, true) => DType::I16,
                    (8, true, _) | (8, _, true) => DType::I8,
                    (8, false, false) => DType::U8,
                    (1, true, _) => DType::Bool,
                    _ => return Err(bad()),
                }
            } else {
                return Err(bad());
            };
            Ok(TensorType { shape, dtype })
        }
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
            "tensor<2x4xcomplex<f32>>",
            "tensor<complex<f64>>",
        ] {
            assert_eq!(TensorType::parse(s).unwrap().mlir(), s);
        }
        assert!(TensorType::parse("tensor<?x3xf32>").is_err());
        assert_eq!(
            TensorType::parse("tensor<3x2xcomplex<f32>>").unwrap(),
            TensorType::new([3, 2], DType::C64)
        );
        assert_eq!(
            TensorType::parse("tensor<complex<f64>>").unwrap(),
            TensorType::scalar(DType::C128)
        );
        assert!(TensorType::parse("tensor<3xcomplex<f16>>").is_err());
        assert!(TensorType::parse("tensor<3complex<f32>>").is_err());
        assert!(TensorType::parse("tensor<xf32>").is_err());
    }

    /// The C-API conversions agree with the spelling: every type text either converts
    /// to the value `parse` gives (and back to the same MLIR type), or both refuse it.
    #[test]
    fn c_api_conversions_agree_with_the_spelling() {
        let ctx = crate::new_context();
        for s in [
            "tensor<2x3xf32>",
            "tensor<f64>",
            "tensor<1x0xi1>",
            "tensor<4xbf16>",
            "tensor<4xf16>",
            "tensor<7xui8>",
            "tensor<7xi8>",
            "tensor<7xsi8>",
            "tensor<7xsi16>",
            "tensor<2xi16>",
            "tensor<2x2xi32>",
            "tensor<2x2xsi32>",
            "tensor<5xi64>",
            "tensor<5xsi64>",
            "tensor<?x3xf32>",
            "tensor<*xf32>",
            "tensor<3xsi1>",
            "tensor<3xui1>",
            "tensor<3xui16>",
            "tensor<3xi4>",
            "tensor<3xf8E4M3FN>",
            "tensor<3xcomplex<f32>>",
            "tensor<complex<f64>>",
            "tensor<3xcomplex<f16>>",
            "tensor<3xindex>",
            "tensor<3xf32, \"enc\">",
            "vector<3xf32>",
            "memref<3xf32>",
            "f32",
            "i64",
        ] {
            let ty = Type::parse(&ctx, s).unwrap_or_else(|| panic!("{s} parses"));
            let by_text = TensorType::parse(&ty.to_string());
            let by_api = TensorType::from_mlir(ty);
            assert_eq!(by_api, by_text, "{s}");
            if let Ok(t) = by_api {
                let back = t.to_mlir(&ctx).unwrap();
                assert_eq!(back.to_string(), t.mlir(), "{s}");
                assert_eq!(Type::parse(&ctx, &t.mlir()), Some(back), "{s}");
            }
        }
        assert!(TensorType::new(vec![-1, 2], DType::F32)
            .to_mlir(&ctx)
            .is_err());
    }
}
