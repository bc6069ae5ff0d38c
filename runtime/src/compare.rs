//! Comparing results with reference outputs, as `torch.allclose` does:
//! `|actual - expected| <= atol + rtol * |expected|`, NaN equal to NaN.

use crate::{DType, HostTensor};

/// How far one tensor is from a reference.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    pub max_abs_error: f64,
    /// Max of `|a - e| / |e|` over elements with `e != 0`.
    pub max_rel_error: f64,
    /// Elements outside `atol + rtol * |expected|`.
    pub mismatches: usize,
    pub elements: usize,
    pub shape_matches: bool,
}

impl Comparison {
    pub fn passed(&self) -> bool {
        self.shape_matches && self.mismatches == 0
    }
}

/// Default tolerances for a dtype: f32 as the project's bar (`rtol=1e-4, atol=1e-5`),
/// looser for half types, exact for integers and bools; complex as their parts.
pub fn default_tolerances(dtype: DType) -> (f64, f64) {
    match dtype {
        // Complex values compare part by part, at their parts' tolerances.
        DType::F64 | DType::C128 => (1e-7, 1e-8),
        DType::F32 | DType::C64 => (1e-4, 1e-5),
        DType::F16 => (1e-2, 1e-3),
        DType::Bf16 => (2e-2, 1e-2),
        _ => (0.0, 0.0),
    }
}

pub fn compare(actual: &HostTensor, expected: &HostTensor, rtol: f64, atol: f64) -> Comparison {
    let shape_matches = actual.shape == expected.shape;
    let a = actual.to_f64_vec();
    let e = expected.to_f64_vec();
    let mut c = Comparison {
        max_abs_error: 0.0,
        max_rel_error: 0.0,
        mismatches: 0,
        elements: e.len(),
        shape_matches: shape_matches && a.len() == e.len(),
    };
    if !c.shape_matches {
        return c;
    }
    for (x, y) in a.iter().zip(&e) {
        if x.is_nan() && y.is_nan() {
            continue;
        }
        if x == y {
            continue;
        }
        // Unequal and one side NaN or infinite: always a mismatch (the bound below
        // would be NaN or infinite and accept it).
        let non_finite = !x.is_finite() || !y.is_finite();
        let d = (x - y).abs();
        let d = if d.is_nan() { f64::INFINITY } else { d };
        c.max_abs_error = c.max_abs_error.max(d);
        if *y != 0.0 {
            c.max_rel_error = c.max_rel_error.max(d / y.abs());
        }
        if non_finite || d > atol + rtol * y.abs() {
            c.mismatches += 1;
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allclose_semantics() {
        let e = HostTensor::from_f32(&[3], &[1.0, 0.0, f32::NAN]);
        let a = HostTensor::from_f32(&[3], &[1.00005, 0.000001, f32::NAN]);
        let c = compare(&a, &e, 1e-4, 1e-5);
        assert!(c.passed(), "{c:?}");
        let bad = HostTensor::from_f32(&[3], &[1.1, 0.0, 0.0]);
        assert_eq!(compare(&bad, &e, 1e-4, 1e-5).mismatches, 2);
        let inf = HostTensor::from_f32(&[3], &[f32::INFINITY, 0.0, f32::NAN]);
        let finite = HostTensor::from_f32(&[3], &[1e30, 0.0, f32::NAN]);
        assert_eq!(compare(&finite, &inf, 1e-4, 1e-5).mismatches, 1);
        assert!(compare(&inf, &inf, 1e-4, 1e-5).passed());
        let other_shape = HostTensor::from_f32(&[1, 3], &[1.0, 0.0, f32::NAN]);
        assert!(!compare(&other_shape, &e, 1e-4, 1e-5).passed());
    }
}
