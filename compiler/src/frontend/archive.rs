//! `.pt2` archives as `torch.export.save` writes them.
//!
//! The archive is an uncompressed zip whose entries sit under one root folder (found
//! through the entry ending in `/archive_format`). Weights are raw little-endian
//! storages (`data/weights/weight_N`, `data/constants/tensor_N`) described by JSON
//! configs; each tensor is a strided view of its storage. The file is memory-mapped and
//! stored entries are read in place, so weights are never copied into memory whole.
//! Every entry's bytes are checked against the zip's CRC-32 the first time they are
//! read (as weights stream into the artifact), so a damaged archive is an error naming
//! the entry, never silently different weights.

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::tree::Json;
use memmap2::Mmap;

use super::error::{FrontendError, Result};
use super::json;

/// Where an entry's bytes live in the mapped file.
#[derive(Clone, Debug)]
struct EntryLocation {
    data_start: u64,
    size: u64,
    stored: bool,
    /// CRC-32 the central directory records for the uncompressed bytes.
    crc32: u32,
}

/// The archive's bytes: the mapped file (kept open, for copies made by the kernel),
/// or bytes already in memory.
enum Bytes {
    Mapped(Mmap, File),
    Owned(Vec<u8>),
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Mapped(m, _) => m,
            Bytes::Owned(v) => v,
        }
    }
}

/// A .pt2 archive, memory-mapped (or in memory, see [`Archive::from_bytes`]).
pub struct Archive {
    path: PathBuf,
    map: Arc<Bytes>,
    root: String,
    entries: BTreeMap<String, EntryLocation>,
    /// Entries whose CRC-32 has been checked (tied weights read one entry many times).
    verified: Mutex<BTreeSet<String>>,
}

/// How one weight is stored: a strided view of a storage entry.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredTensor {
    /// Entry path relative to the archive root (`data/weights/weight_0`).
    pub entry: String,
    pub strides: Vec<i64>,
    pub storage_offset: i64,
}

impl Archive {
    pub fn open(path: &Path) -> Result<Archive> {
        let io = |source| FrontendError::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = File::open(path).map_err(io)?;
        // SAFETY: the mapping is read-only; tpuc never writes to its input, and a file
        // truncated underneath a running compile is outside what any reader can defend.
        let map = unsafe { Mmap::map(&file) }.map_err(io)?;
        Archive::from_source(path, Bytes::Mapped(map, file))
    }

    /// An archive held in memory; `path` names it in messages (used by the fuzzers).
    pub fn from_bytes(path: &Path, bytes: Vec<u8>) -> Result<Archive> {
        Archive::from_source(path, Bytes::Owned(bytes))
    }

    fn from_source(path: &Path, map: Bytes) -> Result<Archive> {
        let corrupt = |message: String| FrontendError::CorruptArchive {
            path: path.to_path_buf(),
            message,
        };
        // torch's archives confuse the zip crate's offset detection (a nested zip and a
        // zip64 record): the archive starts at byte 0, say so.
        let config = zip::read::Config {
            archive_offset: zip::read::ArchiveOffset::Known(0),
        };
        let mut zip = zip::ZipArchive::with_config(config, std::io::Cursor::new(&map[..]))
            .map_err(|e| corrupt(e.to_string()))?;
        let mut entries = BTreeMap::new();
        for i in 0..zip.len() {
            let f = zip.by_index_raw(i).map_err(|e| corrupt(e.to_string()))?;
            let loc = EntryLocation {
                data_start: f.data_start(),
                size: f.size(),
                stored: f.compression() == zip::CompressionMethod::Stored,
                crc32: f.crc32(),
            };
            // A stored entry's bytes are its data: both sizes must agree (fuzzing found
            // archives where they do not, which would have read past the entry).
            if loc.stored && f.compressed_size() != loc.size {
                return Err(corrupt(format!(
                    "stored entry `{}` records {} bytes of data but a size of {}",
                    f.name(),
                    f.compressed_size(),
                    loc.size
                )));
            }
            let end = loc.data_start.saturating_add(f.compressed_size());
            if end > map.len() as u64 {
                return Err(corrupt(format!(
                    "entry `{}` extends past the end of the file (truncated archive?)",
                    f.name()
                )));
            }
            entries.insert(f.name().to_string(), loc);
        }
        let root = entries
            .keys()
            .find_map(|n| n.strip_suffix("/archive_format").map(str::to_string))
            .ok_or_else(|| FrontendError::MissingEntry {
                path: path.to_path_buf(),
                entry: "<root>/archive_format".to_string(),
            })?;
        Ok(Archive {
            path: path.to_path_buf(),
            map: Arc::new(map),
            root,
            entries,
            verified: Mutex::new(BTreeSet::new()),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn full_name(&self, entry: &str) -> String {
        format!("{}/{}", self.root, entry)
    }

    pub fn has(&self, entry: &str) -> bool {
        self.entries.contains_key(&self.full_name(entry))
    }

    /// Tells the kernel that the mapped pages of `entry` are not needed for now: they
    /// stay in the page cache and are read back if touched again, but no longer count
    /// in this process's resident memory. Streaming gigabytes of weights then keeps
    /// the resident set at about one weight instead of the whole archive.
    pub fn release(&self, entry: &str) {
        let Some(loc) = self.entries.get(&self.full_name(entry)) else {
            return;
        };
        #[cfg(unix)]
        if let Bytes::Mapped(m, _) = &*self.map {
            // SAFETY: the mapping is a read-only private mapping of a file that tpuc
            // never writes through: discarded pages hold no changes and are read back
            // from the file, unchanged, on the next access.
            let _ = unsafe {
                m.unchecked_advise_range(
                    memmap2::UncheckedAdvice::DontNeed,
                    loc.data_start as usize,
                    loc.size as usize,
                )
            };
        }
    }

    /// The open archive file and the byte offset of `entry`'s data in it, when the
    /// archive is a mapped file and the entry is stored (its data is its bytes).
    pub fn file_offset(&self, entry: &str) -> Option<(&File, u64)> {
        let loc = self.entries.get(&self.full_name(entry))?;
        match &*self.map {
            Bytes::Mapped(_, file) if loc.stored => Some((file, loc.data_start)),
            _ => None,
        }
    }

    /// Size in bytes of an entry's uncompressed data.
    pub fn entry_size(&self, entry: &str) -> Option<u64> {
        self.entries.get(&self.full_name(entry)).map(|e| e.size)
    }

    /// The bytes of an entry: borrowed from the mapping when stored, inflated otherwise.
    pub fn read(&self, entry: &str) -> Result<std::borrow::Cow<'_, [u8]>> {
        let full = self.full_name(entry);
        let loc = self
            .entries
            .get(&full)
            .ok_or_else(|| FrontendError::MissingEntry {
                path: self.path.clone(),
                entry: full.clone(),
            })?;
        if loc.stored {
            let start = loc.data_start as usize;
            let bytes = &self.map[start..start + loc.size as usize];
            self.verify(&full, loc, bytes)?;
            return Ok(std::borrow::Cow::Borrowed(bytes));
        }
        Err(FrontendError::CorruptArchive {
            path: self.path.clone(),
            message: format!(
                "entry `{full}` is compressed; torch.export.save writes stored entries (tpuc reads weights in place)"
            ),
        })
    }

    /// Checks `bytes` (entry `full`) against its recorded CRC-32, once per entry.
    fn verify(&self, full: &str, loc: &EntryLocation, bytes: &[u8]) -> Result<()> {
        let mut done = self.verified.lock().unwrap_or_else(|p| p.into_inner());
        if done.contains(full) {
            return Ok(());
        }
        let found = crc32fast::hash(bytes);
        if found != loc.crc32 {
            return Err(FrontendError::ChecksumMismatch {
                path: self.path.clone(),
                entry: full.to_string(),
                expected: loc.crc32,
                found,
            });
        }
        done.insert(full.to_string());
        Ok(())
    }

    /// Reads `models/model.json`.
    pub fn model_json(&self) -> Result<std::borrow::Cow<'_, [u8]>> {
        self.read("models/model.json")
    }

    /// Reads a weights or constants config (`{"config": {name: {path_name, tensor_meta}}}`)
    /// into name -> (entry, strides, offset). A missing config is empty.
    pub fn tensor_configs(&self) -> Result<BTreeMap<String, StoredTensor>> {
        let mut out = BTreeMap::new();
        for (config, folder) in [
            ("data/weights/model_weights_config.json", "data/weights"),
            (
                "data/constants/model_constants_config.json",
                "data/constants",
            ),
        ] {
            if !self.has(config) {
                continue;
            }
            let bytes = self.read(config)?;
            let v = super::tree::parse(&bytes).map_err(|e| FrontendError::InvalidJson {
                file: self.full_name(config),
                message: e.to_string(),
            })?;
            let Some(entries) = v.get("config").and_then(Json::as_object) else {
                continue;
            };
            for (name, spec) in entries {
                if spec.get("use_pickle").and_then(Json::as_bool) == Some(true) {
                    return Err(FrontendError::Malformed(format!(
                        "weight `{name}` is pickled (a tensor subclass); tpuc reads plain tensors only"
                    )));
                }
                let path_name = spec
                    .get("path_name")
                    .and_then(Json::as_str)
                    .ok_or_else(|| {
                        FrontendError::Malformed(format!(
                            "weight `{name}` has no path_name in {config}"
                        ))
                    })?;
                let meta = spec.get("tensor_meta").ok_or_else(|| {
                    FrontendError::Malformed(format!(
                        "weight `{name}` has no tensor_meta in {config}"
                    ))
                })?;
                let (strides, storage_offset) = json::strides_and_offset(name, meta)?;
                out.insert(
                    name.to_string(),
                    StoredTensor {
                        entry: format!("{folder}/{path_name}"),
                        strides,
                        storage_offset,
                    },
                );
            }
        }
        Ok(out)
    }
}

/// Number of storage elements a strided view touches (0 for an empty tensor).
pub fn storage_elements_needed(shape: &[i64], strides: &[i64], offset: i64) -> Option<u64> {
    if shape.contains(&0) {
        return Some(0);
    }
    let mut last = offset;
    for (&s, &st) in shape.iter().zip(strides) {
        if st < 0 || offset < 0 {
            return None;
        }
        last = last.checked_add((s - 1).checked_mul(st)?)?;
    }
    Some(last as u64 + 1)
}

/// True when a view with these strides is the plain row-major layout.
pub fn is_row_major(shape: &[i64], strides: &[i64]) -> bool {
    let mut expected = 1i64;
    for (&s, &st) in shape.iter().zip(strides).rev() {
        if s != 1 && st != expected {
            return false;
        }
        expected *= s;
    }
    true
}

/// Calls `sink` with the row-major bytes of a strided view, in chunks, without
/// materialising the whole tensor when it is contiguous.
pub fn for_each_row_major_chunk(
    storage: &[u8],
    shape: &[i64],
    strides: &[i64],
    offset: i64,
    elem_size: usize,
    sink: &mut dyn FnMut(&[u8]) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let n: i64 = shape.iter().product();
    if n == 0 {
        return Ok(());
    }
    if is_row_major(shape, strides) {
        let start = offset as usize * elem_size;
        let end = start + n as usize * elem_size;
        return sink(&storage[start..end]);
    }
    // General strided view: walk the index space, gathering elements into a buffer.
    let mut buf = Vec::with_capacity((1 << 16).min(n as usize * elem_size));
    let mut index = vec![0i64; shape.len()];
    for _ in 0..n {
        let pos: i64 = offset + index.iter().zip(strides).map(|(i, s)| i * s).sum::<i64>();
        let start = pos as usize * elem_size;
        buf.extend_from_slice(&storage[start..start + elem_size]);
        if buf.len() >= 1 << 16 {
            sink(&buf)?;
            buf.clear();
        }
        for d in (0..shape.len()).rev() {
            index[d] += 1;
            if index[d] < shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
    if !buf.is_empty() {
        sink(&buf)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strided_views_gather_row_major() {
        // A 2x3 storage viewed transposed (3x2, strides [1, 3]).
        let storage: Vec<u8> = (0u8..6).collect();
        let mut out = Vec::new();
        for_each_row_major_chunk(&storage, &[3, 2], &[1, 3], 0, 1, &mut |c| {
            out.extend_from_slice(c);
            Ok(())
        })
        .unwrap();
        assert_eq!(out, vec![0, 3, 1, 4, 2, 5]);
        assert_eq!(storage_elements_needed(&[3, 2], &[1, 3], 0), Some(6));
        assert_eq!(storage_elements_needed(&[2], &[1], 4), Some(6));
        assert!(is_row_major(&[2, 1, 3], &[3, 7, 1]));
    }
}
