//! A reader for `.safetensors` files: an 8-byte little-endian header length, a JSON
//! header mapping tensor names to `{dtype, shape, data_offsets}` (plus an optional
//! `__metadata__` map of strings), then the tensor bytes.
//!
//! Files are memory-mapped: [`SafeTensors::view`] borrows a tensor's bytes without
//! copying; [`SafeTensors::tensor`] copies them into a [`HostTensor`]. Every offset is
//! validated against the file size before anything is read.

use crate::error::{ArtifactError, Result};
use crate::{DType, HostTensor};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// Largest JSON header accepted (as the reference implementation: 100 MB).
pub const MAX_HEADER_SIZE: u64 = 100_000_000;

/// A tensor entry of the header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorInfo {
    pub name: String,
    pub dtype: DType,
    pub shape: Vec<i64>,
    /// Byte range within the data section (after the header).
    pub data_offsets: (usize, usize),
}

/// A borrowed tensor of a [`SafeTensors`] file.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TensorView<'a> {
    pub name: &'a str,
    pub dtype: DType,
    pub shape: &'a [i64],
    pub data: &'a [u8],
}

impl TensorView<'_> {
    /// Copies the view into an owned tensor.
    pub fn to_host(&self) -> HostTensor {
        HostTensor {
            dtype: self.dtype,
            shape: self.shape.to_vec(),
            data: self.data.to_vec(),
        }
    }
}

enum Storage {
    Mapped(memmap2::Mmap),
    Owned(Vec<u8>),
}

impl Storage {
    fn bytes(&self) -> &[u8] {
        match self {
            Storage::Mapped(m) => m,
            Storage::Owned(v) => v,
        }
    }
}

/// An opened `.safetensors` file.
pub struct SafeTensors {
    source_name: String,
    storage: Storage,
    data_start: usize,
    /// In file order (by data offset).
    tensors: Vec<TensorInfo>,
    index: HashMap<String, usize>,
    metadata: BTreeMap<String, String>,
}

impl std::fmt::Debug for SafeTensors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SafeTensors")
            .field("source", &self.source_name)
            .field("tensors", &self.tensors)
            .field("metadata", &self.metadata)
            .finish()
    }
}

fn err(source_name: &str, message: impl Into<String>) -> ArtifactError {
    ArtifactError::Safetensors {
        source_name: source_name.to_string(),
        message: message.into(),
    }
}

/// Dtype of a safetensors dtype name.
pub fn dtype_from_name(name: &str) -> Option<DType> {
    Some(match name {
        "F64" => DType::F64,
        "F32" => DType::F32,
        "F16" => DType::F16,
        "BF16" => DType::Bf16,
        "I64" => DType::I64,
        "I32" => DType::I32,
        "I16" => DType::I16,
        "I8" => DType::I8,
        "U8" => DType::U8,
        "BOOL" => DType::Bool,
        "C64" => DType::C64,
        // Not in the safetensors specification: only tpuc's own artifacts write it.
        "C128" => DType::C128,
        _ => return None,
    })
}

/// Safetensors name of a dtype (`"F32"`).
pub fn dtype_name(dtype: DType) -> &'static str {
    match dtype {
        DType::F64 => "F64",
        DType::F32 => "F32",
        DType::F16 => "F16",
        DType::Bf16 => "BF16",
        DType::I64 => "I64",
        DType::I32 => "I32",
        DType::I16 => "I16",
        DType::I8 => "I8",
        DType::U8 => "U8",
        DType::Bool => "BOOL",
        DType::C64 => "C64",
        DType::C128 => "C128",
    }
}

impl SafeTensors {
    /// Opens and validates a file (memory-mapped).
    pub fn open(path: impl AsRef<Path>) -> Result<SafeTensors> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let file = std::fs::File::open(path).map_err(|e| ArtifactError::io(path, e))?;
        let len = file
            .metadata()
            .map_err(|e| ArtifactError::io(path, e))?
            .len();
        if len < 8 {
            return Err(err(
                &name,
                format!("truncated: {len} bytes, the header length alone takes 8"),
            ));
        }
        // SAFETY: the map is read-only. As with any mapped file, another process
        // truncating or rewriting it while it is open would be observed; artifacts are
        // written once and then only read.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| ArtifactError::io(path, e))?;
        SafeTensors::parse(Storage::Mapped(map), name)
    }

    /// Parses a file already in memory; `source_name` names it in errors.
    pub fn from_bytes(bytes: Vec<u8>, source_name: &str) -> Result<SafeTensors> {
        SafeTensors::parse(Storage::Owned(bytes), source_name.to_string())
    }

    fn parse(storage: Storage, source_name: String) -> Result<SafeTensors> {
        let bytes = storage.bytes();
        let name = source_name.as_str();
        if bytes.len() < 8 {
            return Err(err(
                name,
                format!(
                    "truncated: {} bytes, the header length alone takes 8",
                    bytes.len()
                ),
            ));
        }
        let mut len_bytes = [0u8; 8];
        len_bytes.copy_from_slice(&bytes[..8]);
        let header_len = u64::from_le_bytes(len_bytes);
        if header_len > MAX_HEADER_SIZE {
            return Err(err(
                name,
                format!("header length {header_len} exceeds the limit of {MAX_HEADER_SIZE}"),
            ));
        }
        let header_len = header_len as usize;
        if header_len > bytes.len() - 8 {
            return Err(err(
                name,
                format!(
                    "truncated: header says {header_len} bytes, only {} follow",
                    bytes.len() - 8
                ),
            ));
        }
        let data_start = 8 + header_len;
        let data_len = bytes.len() - data_start;
        let header: serde_json::Value = serde_json::from_slice(&bytes[8..data_start])
            .map_err(|e| err(name, format!("header is not valid JSON: {e}")))?;
        let serde_json::Value::Object(entries) = header else {
            return Err(err(name, "header is not a JSON object"));
        };

        let mut metadata = BTreeMap::new();
        let mut tensors = Vec::with_capacity(entries.len());
        for (key, value) in entries {
            if key == "__metadata__" {
                let serde_json::Value::Object(m) = value else {
                    return Err(err(name, "__metadata__ is not an object"));
                };
                for (k, v) in m {
                    let serde_json::Value::String(s) = v else {
                        return Err(err(
                            name,
                            format!("__metadata__ value `{k}` is not a string"),
                        ));
                    };
                    metadata.insert(k, s);
                }
                continue;
            }
            tensors.push(parse_entry(name, key, &value, data_len)?);
        }

        // File order, and no two tensors may share bytes.
        tensors.sort_by_key(|t| t.data_offsets);
        let mut end_so_far = 0usize;
        let mut previous: Option<&str> = None;
        for t in &tensors {
            let (begin, end) = t.data_offsets;
            if begin == end {
                continue;
            }
            if begin < end_so_far {
                return Err(err(
                    name,
                    format!(
                        "tensor `{}` overlaps tensor `{}`",
                        t.name,
                        previous.unwrap_or("?")
                    ),
                ));
            }
            end_so_far = end;
            previous = Some(&t.name);
        }
        let index = tensors
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name.clone(), i))
            .collect();
        Ok(SafeTensors {
            source_name,
            storage,
            data_start,
            tensors,
            index,
            metadata,
        })
    }

    /// Tensor entries, in file order.
    pub fn tensors(&self) -> &[TensorInfo] {
        &self.tensors
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tensors.iter().map(|t| t.name.as_str())
    }

    pub fn len(&self) -> usize {
        self.tensors.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tensors.is_empty()
    }

    /// The `__metadata__` map (empty if absent).
    pub fn metadata(&self) -> &BTreeMap<String, String> {
        &self.metadata
    }

    pub fn info(&self, name: &str) -> Option<&TensorInfo> {
        self.index.get(name).map(|&i| &self.tensors[i])
    }

    /// Borrows a tensor's bytes, if the file has it.
    pub fn get(&self, name: &str) -> Option<TensorView<'_>> {
        let t = self.info(name)?;
        let (begin, end) = t.data_offsets;
        // In range: validated against the file size when the file was opened.
        let data = &self.storage.bytes()[self.data_start + begin..self.data_start + end];
        Some(TensorView {
            name: &t.name,
            dtype: t.dtype,
            shape: &t.shape,
            data,
        })
    }

    /// Borrows a tensor's bytes; an error naming the file if it has no such tensor.
    pub fn view(&self, name: &str) -> Result<TensorView<'_>> {
        self.get(name)
            .ok_or_else(|| err(&self.source_name, format!("no tensor named `{name}`")))
    }

    /// Copies a tensor out of the file.
    pub fn tensor(&self, name: &str) -> Result<HostTensor> {
        Ok(self.view(name)?.to_host())
    }

    /// Copies every tensor out of the file, in file order.
    pub fn to_host_tensors(&self) -> Vec<(String, HostTensor)> {
        self.tensors
            .iter()
            .filter_map(|t| self.get(&t.name).map(|v| (t.name.clone(), v.to_host())))
            .collect()
    }

    /// The whole file's bytes (for checksums).
    pub fn file_bytes(&self) -> &[u8] {
        self.storage.bytes()
    }
}

fn parse_entry(
    source: &str,
    name: String,
    value: &serde_json::Value,
    data_len: usize,
) -> Result<TensorInfo> {
    let bad = |m: String| err(source, format!("tensor `{name}`: {m}"));
    let serde_json::Value::Object(fields) = value else {
        return Err(bad("entry is not an object".into()));
    };
    let dtype_name = fields
        .get("dtype")
        .and_then(|v| v.as_str())
        .ok_or_else(|| bad("missing or non-string `dtype`".into()))?;
    let dtype = dtype_from_name(dtype_name)
        .ok_or_else(|| bad(format!("unsupported dtype {dtype_name}")))?;
    let shape = fields
        .get("shape")
        .and_then(|v| v.as_array())
        .ok_or_else(|| bad("missing or non-array `shape`".into()))?
        .iter()
        .map(|d| {
            d.as_u64()
                .filter(|&d| d <= i64::MAX as u64)
                .map(|d| d as i64)
        })
        .collect::<Option<Vec<i64>>>()
        .ok_or_else(|| bad("`shape` must hold non-negative integers".into()))?;
    let offsets = fields
        .get("data_offsets")
        .and_then(|v| v.as_array())
        .filter(|a| a.len() == 2)
        .and_then(|a| Some((a[0].as_u64()?, a[1].as_u64()?)))
        .ok_or_else(|| bad("`data_offsets` must be [begin, end]".into()))?;
    let (begin, end) = offsets;
    if begin > end {
        return Err(bad(format!("data_offsets [{begin}, {end}] run backwards")));
    }
    if end > data_len as u64 {
        return Err(bad(format!(
            "data_offsets [{begin}, {end}] lie beyond the data section ({data_len} bytes); file truncated?"
        )));
    }
    let (begin, end) = (begin as usize, end as usize);
    let expected = shape
        .iter()
        .try_fold(dtype.size_in_bytes(), |acc, &d| acc.checked_mul(d as usize));
    if expected != Some(end - begin) {
        return Err(bad(format!(
            "{} bytes in data_offsets, but shape {shape:?} of {dtype_name} needs {}",
            end - begin,
            expected.map_or_else(|| "too many".to_string(), |n| n.to_string())
        )));
    }
    Ok(TensorInfo {
        name,
        dtype,
        shape,
        data_offsets: (begin, end),
    })
}

/// The bytes of a safetensors file holding `tensors` (written in name order, so the
/// same tensors give the same bytes) and `metadata` (`__metadata__`). What
/// `safetensors.torch.load_file` reads.
pub fn encode(tensors: &[(String, HostTensor)], metadata: &BTreeMap<String, String>) -> Vec<u8> {
    let mut sorted: Vec<&(String, HostTensor)> = tensors.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let mut header = serde_json::Map::new();
    if !metadata.is_empty() {
        header.insert(
            "__metadata__".into(),
            serde_json::Value::Object(
                metadata
                    .iter()
                    .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
                    .collect(),
            ),
        );
    }
    let mut offset = 0usize;
    for (name, t) in &sorted {
        header.insert(
            name.clone(),
            serde_json::json!({
                "dtype": dtype_name(t.dtype),
                "shape": t.shape,
                "data_offsets": [offset, offset + t.data.len()],
            }),
        );
        offset += t.data.len();
    }
    let mut text = serde_json::Value::Object(header).to_string();
    while !text.len().is_multiple_of(8) {
        text.push(' ');
    }
    let mut out = Vec::with_capacity(8 + text.len() + offset);
    out.extend_from_slice(&(text.len() as u64).to_le_bytes());
    out.extend_from_slice(text.as_bytes());
    for (_, t) in &sorted {
        out.extend_from_slice(&t.data);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(header: &str, data: &[u8]) -> Vec<u8> {
        let mut out = (header.len() as u64).to_le_bytes().to_vec();
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(data);
        out
    }

    #[test]
    fn reads_tensors_and_metadata() {
        let h = r#"{"b":{"dtype":"I64","shape":[1],"data_offsets":[4,12]},"a":{"dtype":"F32","shape":[],"data_offsets":[0,4]},"__metadata__":{"format":"pt"}}"#;
        let mut data = 1.5f32.to_le_bytes().to_vec();
        data.extend_from_slice(&(-7i64).to_le_bytes());
        let st = SafeTensors::from_bytes(file(h, &data), "mem").unwrap();
        assert_eq!(st.names().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(st.metadata().get("format").map(String::as_str), Some("pt"));
        assert_eq!(st.tensor("a").unwrap().to_f64_vec(), [1.5]);
        assert_eq!(st.tensor("b").unwrap().to_f64_vec(), [-7.0]);
        assert!(st.view("c").is_err());
    }

    #[test]
    fn rejects_bad_files() {
        let cases: &[(&[u8], &str)] = &[
            (b"\x01\x00", "truncated"),
            (&file("{", b""), "JSON"),
            (&file("[]", b""), "object"),
            (
                &file(
                    r#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}"#,
                    &[0; 4],
                ),
                "beyond",
            ),
            (
                &file(
                    r#"{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}"#,
                    &[0; 8],
                ),
                "needs 12",
            ),
            (
                &file(
                    r#"{"a":{"dtype":"F8_E4M3","shape":[],"data_offsets":[0,1]}}"#,
                    &[0; 8],
                ),
                "unsupported dtype",
            ),
            (
                &file(
                    r#"{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]}}"#,
                    b"",
                ),
                "non-negative",
            ),
            (
                &file(
                    r#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}"#,
                    &[0; 8],
                ),
                "overlaps",
            ),
        ];
        for (bytes, needle) in cases {
            let e = SafeTensors::from_bytes(bytes.to_vec(), "bad.safetensors").unwrap_err();
            let msg = e.to_string();
            assert!(
                msg.contains(needle) && msg.contains("bad.safetensors"),
                "{msg} should mention {needle}"
            );
        }
        // A header length larger than the file.
        let mut bytes = 1000u64.to_le_bytes().to_vec();
        bytes.extend_from_slice(b"{}");
        let e = SafeTensors::from_bytes(bytes, "t").unwrap_err();
        assert!(e.to_string().contains("truncated"), "{e}");
    }
}
