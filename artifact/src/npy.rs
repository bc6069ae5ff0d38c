//! Reading and writing numpy `.npy` files (format versions 1.0, 2.0 and 3.0).
//!
//! Supported: little-endian, C-order arrays of `<f8 <f4 <f2 <i8 <i4 <i2 |i1 |u1 |b1`.
//! Fortran-order and big-endian arrays are rejected with an error that says so, as are
//! object arrays, structured dtypes and bfloat16 (which numpy does not have).

use crate::error::{ArtifactError, Result};
use crate::{DType, HostTensor};
use std::path::Path;

const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// Reads a `.npy` file.
pub fn read_npy(path: impl AsRef<Path>) -> Result<HostTensor> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|e| ArtifactError::io(path, e))?;
    decode_npy(&bytes, &path.display().to_string())
}

/// Writes a `.npy` file (format 1.0, or 2.0 for very long headers).
/// The `.npy` files of `dir` in the order of their leading number (`0_x.npy`,
/// `1_mask.npy`, `10_y.npy`): how tpuc's test data and `tpuc run`'s output folders
/// number a call's tensors. Files without a leading number come last, by name.
pub fn numbered_files(dir: impl AsRef<Path>) -> Result<Vec<std::path::PathBuf>> {
    let dir = dir.as_ref();
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| ArtifactError::io(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "npy"))
        .collect();
    files.sort_by_key(|p| {
        let stem = p
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let number = stem
            .split('_')
            .next()
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap_or(usize::MAX);
        (number, stem)
    });
    Ok(files)
}

/// The tensors of [`numbered_files`]`(dir)`, in that order.
pub fn read_numbered(dir: impl AsRef<Path>) -> Result<Vec<HostTensor>> {
    numbered_files(dir)?.iter().map(read_npy).collect()
}

pub fn write_npy(path: impl AsRef<Path>, tensor: &HostTensor) -> Result<()> {
    let path = path.as_ref();
    let bytes = encode_npy(tensor, &path.display().to_string())?;
    std::fs::write(path, bytes).map_err(|e| ArtifactError::io(path, e))
}

fn err(source_name: &str, message: impl Into<String>) -> ArtifactError {
    ArtifactError::Npy {
        source_name: source_name.to_string(),
        message: message.into(),
    }
}

/// Parses the bytes of a `.npy` file; `source_name` names it in errors.
pub fn decode_npy(bytes: &[u8], source_name: &str) -> Result<HostTensor> {
    if bytes.len() < 8 || &bytes[..6] != MAGIC {
        return Err(err(source_name, "not a .npy file (bad magic)"));
    }
    let (major, minor) = (bytes[6], bytes[7]);
    let (header_len, header_start): (usize, usize) = match major {
        1 => {
            if bytes.len() < 10 {
                return Err(err(source_name, "truncated header"));
            }
            (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10)
        }
        2 | 3 => {
            if bytes.len() < 12 {
                return Err(err(source_name, "truncated header"));
            }
            let n = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
            (n as usize, 12)
        }
        _ => {
            return Err(err(
                source_name,
                format!("unsupported format version {major}.{minor}"),
            ))
        }
    };
    let data_start = header_start
        .checked_add(header_len)
        .filter(|&end| end <= bytes.len())
        .ok_or_else(|| {
            err(
                source_name,
                format!(
                    "truncated header: says {header_len} bytes, file has {}",
                    bytes.len() - header_start
                ),
            )
        })?;
    let header_bytes = &bytes[header_start..data_start];
    let header = if major == 3 {
        std::str::from_utf8(header_bytes)
            .map_err(|_| err(source_name, "header is not valid UTF-8"))?
    } else {
        if !header_bytes.is_ascii() {
            return Err(err(source_name, "header is not ASCII (format 1.0/2.0)"));
        }
        std::str::from_utf8(header_bytes).map_err(|_| err(source_name, "header is not ASCII"))?
    };
    let header = parse_header(header).map_err(|m| err(source_name, format!("header: {m}")))?;
    if header.fortran_order {
        return Err(err(
            source_name,
            "Fortran-order arrays are not supported (save a C-contiguous array, e.g. np.ascontiguousarray)",
        ));
    }
    let dtype = dtype_from_descr(&header.descr).map_err(|m| err(source_name, m))?;
    let expected = header
        .shape
        .iter()
        .try_fold(dtype.size_in_bytes(), |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| err(source_name, "shape is too large"))?;
    let data = &bytes[data_start..];
    if data.len() < expected {
        return Err(err(
            source_name,
            format!(
                "truncated data: shape {:?} of {} needs {expected} bytes, file has {}",
                header.shape,
                header.descr,
                data.len()
            ),
        ));
    }
    if data.len() > expected {
        return Err(err(
            source_name,
            format!(
                "{} trailing bytes after the data of shape {:?}",
                data.len() - expected,
                header.shape
            ),
        ));
    }
    Ok(HostTensor {
        dtype,
        shape: header.shape.iter().map(|&d| d as i64).collect(),
        data: data.to_vec(),
    })
}

/// Serializes a tensor as a `.npy` file; `source_name` names it in errors.
pub fn encode_npy(tensor: &HostTensor, source_name: &str) -> Result<Vec<u8>> {
    let descr = descr_of(tensor.dtype).ok_or_else(|| {
        err(
            source_name,
            format!(
                "numpy has no {} dtype; convert the tensor first",
                tensor.dtype
            ),
        )
    })?;
    if let Some(d) = tensor.shape.iter().find(|&&d| d < 0) {
        return Err(err(
            source_name,
            format!("shape {:?} has a negative dimension {d}", tensor.shape),
        ));
    }
    let expected = tensor.num_elements() * tensor.dtype.size_in_bytes();
    if tensor.data.len() != expected {
        return Err(err(
            source_name,
            format!(
                "tensor of shape {:?} and dtype {} needs {expected} bytes, has {}",
                tensor.shape,
                tensor.dtype,
                tensor.data.len()
            ),
        ));
    }
    let shape = match tensor.shape.as_slice() {
        [] => "()".to_string(),
        [d] => format!("({d},)"),
        dims => format!(
            "({})",
            dims.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    // Pad with spaces and a final newline so the data starts on a 64-byte boundary.
    let padded_total = |prefix: usize| (prefix + header.len() + 1).div_ceil(64) * 64;
    let (version, prefix) = if padded_total(10) - 10 <= u16::MAX as usize {
        (1u8, 10usize)
    } else {
        (2u8, 12usize)
    };
    let total = padded_total(prefix);
    header.push_str(&" ".repeat(total - prefix - header.len() - 1));
    header.push('\n');

    let mut out = Vec::with_capacity(total + tensor.data.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[version, 0]);
    if version == 1 {
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    } else {
        let len = u32::try_from(header.len()).map_err(|_| err(source_name, "header too long"))?;
        out.extend_from_slice(&len.to_le_bytes());
    }
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(&tensor.data);
    Ok(out)
}

fn descr_of(dtype: DType) -> Option<&'static str> {
    Some(match dtype {
        DType::F64 => "<f8",
        DType::F32 => "<f4",
        DType::F16 => "<f2",
        DType::I64 => "<i8",
        DType::I32 => "<i4",
        DType::I16 => "<i2",
        DType::I8 => "|i1",
        DType::U8 => "|u1",
        DType::Bool => "|b1",
        DType::C64 => "<c8",
        DType::C128 => "<c16",
        DType::Bf16 => return None,
    })
}

fn dtype_from_descr(descr: &str) -> std::result::Result<DType, String> {
    let mut chars = descr.chars();
    let order = chars.next().ok_or("empty dtype descr")?;
    let kind_size = chars.as_str();
    let dtype = match kind_size {
        "f8" => DType::F64,
        "f4" => DType::F32,
        "f2" => DType::F16,
        "i8" => DType::I64,
        "i4" => DType::I32,
        "i2" => DType::I16,
        "i1" => DType::I8,
        "u1" => DType::U8,
        "b1" => DType::Bool,
        "c8" => DType::C64,
        "c16" => DType::C128,
        _ => return Err(format!("unsupported dtype '{descr}'")),
    };
    let single_byte = dtype.size_in_bytes() == 1;
    match order {
        '<' => Ok(dtype),
        '|' if single_byte => Ok(dtype),
        '>' if single_byte => Ok(dtype),
        '=' if single_byte || cfg!(target_endian = "little") => Ok(dtype),
        '>' => Err(format!(
            "big-endian dtype '{descr}' is not supported (convert with arr.astype(arr.dtype.newbyteorder('<')))"
        )),
        _ => Err(format!("unsupported dtype '{descr}'")),
    }
}

#[derive(Debug, PartialEq)]
struct Header {
    descr: String,
    fortran_order: bool,
    shape: Vec<usize>,
}

/// Parses the Python dict literal of a `.npy` header.
fn parse_header(text: &str) -> std::result::Result<Header, String> {
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
    };
    let mut descr = None;
    let mut fortran_order = None;
    let mut shape = None;
    p.expect(b'{')?;
    loop {
        p.skip_ws();
        if p.eat(b'}') {
            break;
        }
        let key = p.string()?;
        p.expect(b':')?;
        match key.as_str() {
            "descr" => {
                p.skip_ws();
                if p.peek() != Some(b'\'') && p.peek() != Some(b'"') {
                    return Err("structured dtypes are not supported".into());
                }
                descr = Some(p.string()?);
            }
            "fortran_order" => fortran_order = Some(p.boolean()?),
            "shape" => shape = Some(p.int_tuple()?),
            other => return Err(format!("unexpected key '{other}'")),
        }
        p.skip_ws();
        if p.eat(b',') {
            continue;
        }
        p.expect(b'}')?;
        break;
    }
    p.skip_ws();
    if p.i != p.s.len() {
        return Err("unexpected text after the header dict".into());
    }
    Ok(Header {
        descr: descr.ok_or("missing 'descr'")?,
        fortran_order: fortran_order.ok_or("missing 'fortran_order'")?,
        shape: shape.ok_or("missing 'shape'")?,
    })
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn skip_ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        self.skip_ws();
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: u8) -> std::result::Result<(), String> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(format!("expected '{}' at offset {}", c as char, self.i))
        }
    }

    fn string(&mut self) -> std::result::Result<String, String> {
        self.skip_ws();
        let quote = match self.peek() {
            Some(q @ (b'\'' | b'"')) => q,
            _ => return Err(format!("expected a string at offset {}", self.i)),
        };
        self.i += 1;
        let start = self.i;
        while self.i < self.s.len() && self.s[self.i] != quote {
            if self.s[self.i] == b'\\' {
                return Err("escapes in header strings are not supported".into());
            }
            self.i += 1;
        }
        if self.i >= self.s.len() {
            return Err("unterminated string".into());
        }
        let text = String::from_utf8_lossy(&self.s[start..self.i]).into_owned();
        self.i += 1;
        Ok(text)
    }

    fn word(&mut self) -> &str {
        self.skip_ws();
        let start = self.i;
        while self.i < self.s.len() && self.s[self.i].is_ascii_alphanumeric() {
            self.i += 1;
        }
        std::str::from_utf8(&self.s[start..self.i]).unwrap_or("")
    }

    fn boolean(&mut self) -> std::result::Result<bool, String> {
        match self.word() {
            "True" => Ok(true),
            "False" => Ok(false),
            other => Err(format!("expected True or False, got '{other}'")),
        }
    }

    fn int_tuple(&mut self) -> std::result::Result<Vec<usize>, String> {
        self.expect(b'(')?;
        let mut dims = Vec::new();
        loop {
            if self.eat(b')') {
                return Ok(dims);
            }
            let w = self.word();
            // Python 2 era files may write longs as `3L`.
            let w = w.strip_suffix('L').unwrap_or(w);
            let d: usize = w
                .parse()
                .map_err(|_| format!("invalid dimension '{w}' in shape"))?;
            if d > i64::MAX as usize {
                return Err(format!("dimension {d} is too large"));
            }
            dims.push(d);
            if !self.eat(b',') {
                self.expect(b')')?;
                return Ok(dims);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_files_come_in_number_order() {
        let dir = std::env::temp_dir().join(format!("tpuc-npy-order-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for name in ["10_b.npy", "2_a.npy", "x.npy", "1.txt", "0.npy"] {
            std::fs::write(dir.join(name), b"").unwrap();
        }
        let names: Vec<String> = numbered_files(&dir)
            .unwrap()
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["0.npy", "2_a.npy", "10_b.npy", "x.npy"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn parses_numpy_headers() {
        let h = parse_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }   \n")
            .unwrap();
        assert_eq!(
            h,
            Header {
                descr: "<f4".into(),
                fortran_order: false,
                shape: vec![2, 3]
            }
        );
        let h = parse_header("{'descr': '|b1', 'fortran_order': True, 'shape': (5,)}").unwrap();
        assert_eq!(h.shape, vec![5]);
        assert!(h.fortran_order);
        let h =
            parse_header("{\"shape\": (), \"descr\": \"<i8\", \"fortran_order\": False}").unwrap();
        assert!(h.shape.is_empty());
        assert!(
            parse_header("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': ()}")
                .unwrap_err()
                .contains("structured")
        );
        assert!(parse_header("{'descr': '<f4', 'shape': ()}").is_err());
        assert!(parse_header("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}").is_err());
    }

    #[test]
    fn header_is_padded_to_64_bytes() {
        let t = HostTensor::from_f32(&[2], &[1.0, 2.0]);
        let bytes = encode_npy(&t, "t").unwrap();
        assert_eq!((bytes.len() - 8) % 64, 0);
        let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        assert_eq!((10 + header_len) % 64, 0);
        assert_eq!(bytes[10 + header_len - 1], b'\n');
    }

    #[test]
    fn descr_byte_orders() {
        assert_eq!(dtype_from_descr("<f4"), Ok(DType::F32));
        assert_eq!(dtype_from_descr("|u1"), Ok(DType::U8));
        assert_eq!(dtype_from_descr("|b1"), Ok(DType::Bool));
        assert!(dtype_from_descr(">f4").unwrap_err().contains("big-endian"));
        assert_eq!(dtype_from_descr("<c8"), Ok(DType::C64));
        assert_eq!(dtype_from_descr("<c16"), Ok(DType::C128));
        assert!(dtype_from_descr("<c32").is_err());
        assert!(dtype_from_descr("|O").is_err());
    }
}
