//! Host-side tensors: a dtype, a shape and little-endian, row-major bytes.

use crate::DType;

/// A dense tensor in memory someone else owns (row-major, little-endian, no padding):
/// a caller's array handed to the runtime without a copy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostView<'a> {
    pub dtype: DType,
    pub shape: &'a [i64],
    pub data: &'a [u8],
}

impl HostView<'_> {
    /// An owned copy.
    pub fn to_tensor(&self) -> HostTensor {
        HostTensor {
            dtype: self.dtype,
            shape: self.shape.to_vec(),
            data: self.data.to_vec(),
        }
    }
}

/// A dense tensor in host memory (row-major, little-endian, no padding).
#[derive(Clone, Debug, PartialEq)]
pub struct HostTensor {
    pub dtype: DType,
    pub shape: Vec<i64>,
    pub data: Vec<u8>,
}

impl HostTensor {
    /// Number of elements (1 for a 0-d tensor).
    pub fn num_elements(&self) -> usize {
        self.shape.iter().map(|&d| d.max(0) as usize).product()
    }

    /// Builds an f32 tensor from values; panics only on a programming error
    /// (values.len() not matching the shape), never on user input.
    pub fn from_f32(shape: &[i64], values: &[f32]) -> HostTensor {
        let n: i64 = shape.iter().product();
        assert_eq!(n as usize, values.len(), "shape/value count mismatch");
        HostTensor {
            dtype: DType::F32,
            shape: shape.to_vec(),
            data: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
        }
    }

    /// Reads every element as f64 (floats widened, integers and bools converted), for
    /// comparisons and reports. A complex element gives two values, its real part then
    /// its imaginary part (so complex tensors compare part by part).
    pub fn to_f64_vec(&self) -> Vec<f64> {
        let d = &self.data;
        match self.dtype {
            DType::F64 | DType::C128 => d
                .chunks_exact(8)
                .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
                .collect(),
            DType::F32 | DType::C64 => d
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes(c.try_into().unwrap()) as f64)
                .collect(),
            DType::F16 => d
                .chunks_exact(2)
                .map(|c| f16_to_f32(u16::from_le_bytes([c[0], c[1]])) as f64)
                .collect(),
            DType::Bf16 => d
                .chunks_exact(2)
                .map(|c| f32::from_bits((u16::from_le_bytes([c[0], c[1]]) as u32) << 16) as f64)
                .collect(),
            DType::I64 => d
                .chunks_exact(8)
                .map(|c| i64::from_le_bytes(c.try_into().unwrap()) as f64)
                .collect(),
            DType::I32 => d
                .chunks_exact(4)
                .map(|c| i32::from_le_bytes(c.try_into().unwrap()) as f64)
                .collect(),
            DType::I16 => d
                .chunks_exact(2)
                .map(|c| i16::from_le_bytes([c[0], c[1]]) as f64)
                .collect(),
            DType::I8 => d.iter().map(|&b| b as i8 as f64).collect(),
            DType::U8 => d.iter().map(|&b| b as f64).collect(),
            DType::Bool => d.iter().map(|&b| if b != 0 { 1.0 } else { 0.0 }).collect(),
        }
    }
}

/// IEEE half to single precision.
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h >> 15) & 1) as u32;
    let exp = ((h >> 10) & 0x1f) as u32;
    let frac = (h & 0x3ff) as u32;
    let bits = if exp == 0 {
        if frac == 0 {
            sign << 31
        } else {
            // Subnormal: renormalise.
            let mut e = 127 - 15 + 1;
            let mut f = frac;
            while f & 0x400 == 0 {
                f <<= 1;
                e -= 1;
            }
            (sign << 31) | ((e as u32) << 23) | ((f & 0x3ff) << 13)
        }
    } else if exp == 0x1f {
        (sign << 31) | (0xff << 23) | (frac << 13)
    } else {
        (sign << 31) | ((exp + 127 - 15) << 23) | (frac << 13)
    };
    f32::from_bits(bits)
}
