//! [`NamedValue`]: plugin attributes and client create options (`PJRT_NamedValue`).

use super::{ffi, string_from_raw};
use std::ptr;

/// A value of a plugin attribute or a client create option (`PJRT_NamedValue`).
#[derive(Clone, Debug, PartialEq)]
pub enum NamedValue {
    String(String),
    Int64(i64),
    Int64List(Vec<i64>),
    Float(f32),
    Bool(bool),
}

impl NamedValue {
    /// A number (a float or an integer) as `f64`; other kinds give `None`.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            NamedValue::Float(f) => Some(*f as f64),
            NamedValue::Int64(i) => Some(*i as f64),
            _ => None,
        }
    }

    /// Versions are reported as int lists (`[1, 20, 0]`) or strings; both read `1.20.0`.
    pub(super) fn as_version(&self) -> Option<String> {
        match self {
            NamedValue::String(s) => Some(s.clone()),
            NamedValue::Int64List(v) => Some(
                v.iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join("."),
            ),
            NamedValue::Int64(v) => Some(v.to_string()),
            _ => None,
        }
    }
}

/// The `n` named values at `values` (a plugin's array), copied; null reads as none.
///
/// # Safety
/// `values` must be null or point to `n` valid `PJRT_NamedValue`s whose pointers are live.
pub(super) unsafe fn named_values_from_raw(
    values: *const ffi::PJRT_NamedValue,
    n: usize,
) -> Vec<(String, NamedValue)> {
    if values.is_null() {
        return Vec::new();
    }
    std::slice::from_raw_parts(values, n)
        .iter()
        .filter_map(|v| named_value_from_raw(v))
        .collect()
}

/// # Safety
/// `v` must be a valid `PJRT_NamedValue` whose pointers are live.
unsafe fn named_value_from_raw(v: &ffi::PJRT_NamedValue) -> Option<(String, NamedValue)> {
    let name = string_from_raw(v.name, v.name_size);
    let value = match v.type_ {
        ffi::PJRT_NamedValue_kString => {
            NamedValue::String(string_from_raw(v.value.string_value, v.value_size))
        }
        ffi::PJRT_NamedValue_kInt64 => NamedValue::Int64(v.value.int64_value),
        ffi::PJRT_NamedValue_kInt64List => {
            let p = v.value.int64_array_value;
            if p.is_null() || v.value_size == 0 {
                NamedValue::Int64List(Vec::new())
            } else {
                NamedValue::Int64List(std::slice::from_raw_parts(p, v.value_size).to_vec())
            }
        }
        ffi::PJRT_NamedValue_kFloat => NamedValue::Float(v.value.float_value),
        // Read the byte, not a `bool`, so a value other than 0/1 cannot be UB.
        ffi::PJRT_NamedValue_kBool => {
            NamedValue::Bool(ptr::addr_of!(v.value).cast::<u8>().read() != 0)
        }
        _ => return None,
    };
    Some((name, value))
}
