//! Frontend: reads torch.export programs (`.pt2` archives or bare `model.json`).
//!
//! Output: a [`Graph`] (nodes, signature, tensor metadata) plus a [`WeightSet`] that
//! knows where every parameter, buffer and constant lives, so later stages can stream
//! weights without loading them.

pub mod archive;
pub mod data_dependent;
pub mod error;
pub mod graph;
pub mod json;
pub mod tree;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

pub use error::FrontendError;
pub use graph::{Arg, Graph, InputKind, InputSpec, Joint, Node, NodeOutput, TensorMeta};

use archive::{Archive, StoredTensor};
use error::Result;
use tpuc_artifact::symbolic::Bindings;

/// Where the values of the graph's weight inputs come from.
pub enum WeightSet {
    /// Read from a .pt2 archive (strided views of stored entries).
    Archive {
        archive: Archive,
        /// By graph placeholder name.
        stored: BTreeMap<String, StoredTensor>,
    },
    /// A bare `model.json` carries no weights.
    None,
}

/// An exported program ready for import.
pub struct ExportedModel {
    pub source: PathBuf,
    /// The program; of a dynamic program, its specialization for the sizes last given
    /// to [`ExportedModel::specialize`] (at first the example inputs' sizes).
    pub graph: Graph,
    pub weights: WeightSet,
    /// Of a program exported with `dynamic_shapes`: its symbols and the JSON it is
    /// specialized from.
    pub dynamic: Option<Dynamic>,
}

/// What a dynamic program keeps to be specialized for any sizes in its ranges.
pub struct Dynamic {
    pub signature: json::DynamicSignature,
    /// `models/model.json`, the program with its symbolic sizes.
    pub json: Vec<u8>,
    /// How messages name it (`model.pt2:models/model.json`).
    pub file: String,
    /// The sizes `graph` is specialized for.
    pub sizes: Bindings,
}

impl Dynamic {
    /// The example inputs' sizes (every symbol's hint, else its minimum).
    pub fn example_sizes(&self) -> Bindings {
        self.signature
            .symbols
            .iter()
            .map(|s| (s.name.clone(), s.hint.unwrap_or(s.min)))
            .collect()
    }

    /// Checks that `sizes` gives every symbol a value in its range and names no other.
    pub fn check_sizes(&self, sizes: &Bindings) -> Result<()> {
        let symbols = &self.signature.symbols;
        let names = || {
            symbols
                .iter()
                .map(|s| format!("{} ({})", s.name, s.range()))
                .collect::<Vec<_>>()
                .join(", ")
        };
        for name in sizes.keys() {
            if !symbols.iter().any(|s| &s.name == name) {
                return Err(FrontendError::Dynamic(format!(
                    "the program has no size `{name}` (its sizes: {})",
                    names()
                )));
            }
        }
        for s in symbols {
            match sizes.get(&s.name) {
                None => {
                    return Err(FrontendError::Dynamic(format!(
                        "no value for the size `{}` (its sizes: {})",
                        s.name,
                        names()
                    )))
                }
                Some(&v) if !s.contains(v) => {
                    return Err(FrontendError::Dynamic(format!(
                        "{}={v} is outside the range of `{}`, {}, the program was exported with",
                        s.name,
                        s.name,
                        s.range()
                    )))
                }
                Some(_) => {}
            }
        }
        Ok(())
    }

    /// Which user inputs' dimensions a symbol is (`s77: dimension 0 of \`x\``), for
    /// messages and `--help`-like listings.
    pub fn describe_symbol(&self, name: &str) -> String {
        let uses: Vec<String> = self
            .signature
            .inputs
            .iter()
            .flat_map(|(input, dims)| {
                dims.iter()
                    .enumerate()
                    .filter(|(_, dim)| {
                        matches!(dim, tpuc_artifact::symbolic::Dim::Sym(e) if e.as_symbol() == Some(name))
                    })
                    .map(move |(d, _)| format!("dimension {d} of `{input}`"))
            })
            .collect();
        if uses.is_empty() {
            name.to_string()
        } else {
            format!("{name} ({})", uses.join(", "))
        }
    }
}

impl ExportedModel {
    /// Makes `graph` the specialization of a dynamic program for `sizes` (a value in
    /// range for every symbol). Weights are untouched: their shapes are static.
    pub fn specialize(&mut self, sizes: &Bindings) -> Result<()> {
        let dynamic = self.dynamic.as_mut().ok_or_else(|| {
            FrontendError::Dynamic("the program has no dynamic sizes to specialize".into())
        })?;
        dynamic.check_sizes(sizes)?;
        let graph = json::parse_specialized(&dynamic.json, &dynamic.file, sizes)?;
        if graph.inputs != self.graph.inputs {
            return Err(FrontendError::Dynamic(
                "a specialization changed the program's inputs".into(),
            ));
        }
        self.graph = graph;
        dynamic.sizes = sizes.clone();
        Ok(())
    }
}

impl ExportedModel {
    /// True when the weights come with the model (a .pt2 archive).
    pub fn has_weights(&self) -> bool {
        matches!(self.weights, WeightSet::Archive { .. })
    }

    /// An identity for the bytes of weight input `name`: equal for tied weights (the same
    /// view of the same storage), `None` when the model carries no data for it.
    pub fn weight_identity(&self, name: &str) -> Option<String> {
        let WeightSet::Archive { stored, .. } = &self.weights else {
            return None;
        };
        let st = stored.get(name)?;
        let meta = self.graph.tensors.get(name)?;
        Some(format!(
            "{}|{:?}|{:?}|{}|{}",
            st.entry, meta.shape, st.strides, st.storage_offset, meta.dtype
        ))
    }

    /// Streams the row-major bytes of weight input `name` to `sink`, after checking the
    /// entry's CRC-32. Returns `Ok(false)` when the model carries no data for it.
    pub fn stream_weight(
        &self,
        name: &str,
        sink: &mut dyn FnMut(&[u8]) -> std::io::Result<()>,
    ) -> std::result::Result<bool, StreamError> {
        let WeightSet::Archive { archive, stored } = &self.weights else {
            return Ok(false);
        };
        let (Some(st), Some(meta)) = (stored.get(name), self.graph.tensors.get(name)) else {
            return Ok(false);
        };
        let bytes = archive.read(&st.entry).map_err(StreamError::Read)?;
        archive::for_each_row_major_chunk(
            &bytes,
            &meta.shape,
            &st.strides,
            st.storage_offset,
            meta.dtype.size_in_bytes(),
            sink,
        )
        .map_err(StreamError::Write)?;
        drop(bytes);
        archive.release(&st.entry);
        Ok(true)
    }
}

/// A weight whose row-major bytes are one range of the source file (a stored entry
/// read whole, or a row-major view of it): a writer can have the kernel copy them file
/// to file, and read `bytes` (the same range, mapped and CRC-checked) to hash them.
pub struct WeightRange<'m> {
    pub file: &'m std::fs::File,
    pub offset: u64,
    pub bytes: &'m [u8],
    /// The archive entry, for [`ExportedModel::release_weight`].
    pub entry: &'m str,
}

impl ExportedModel {
    /// Weight input `name` as one range of the source file, when it is one (see
    /// [`WeightRange`]); `Ok(None)` when it is not, or the model carries no data for it
    /// (use [`ExportedModel::stream_weight`]).
    pub fn weight_range(
        &self,
        name: &str,
    ) -> std::result::Result<Option<WeightRange<'_>>, StreamError> {
        let WeightSet::Archive { archive, stored } = &self.weights else {
            return Ok(None);
        };
        let (Some(st), Some(meta)) = (stored.get(name), self.graph.tensors.get(name)) else {
            return Ok(None);
        };
        if !archive::is_row_major(&meta.shape, &st.strides) {
            return Ok(None);
        }
        let Some((file, entry_offset)) = archive.file_offset(&st.entry) else {
            return Ok(None);
        };
        let std::borrow::Cow::Borrowed(entry_bytes) =
            archive.read(&st.entry).map_err(StreamError::Read)?
        else {
            return Ok(None);
        };
        let elem = meta.dtype.size_in_bytes();
        let n: i64 = meta.shape.iter().product();
        let start = st.storage_offset as usize * elem;
        let len = n as usize * elem;
        // Checked when the archive was opened; an empty view streams instead.
        let Some(bytes) = entry_bytes
            .get(start..start + len)
            .filter(|b| !b.is_empty())
        else {
            return Ok(None);
        };
        Ok(Some(WeightRange {
            file,
            offset: entry_offset + start as u64,
            bytes,
            entry: &st.entry,
        }))
    }

    /// Drops the mapped pages of a weight's entry from this process (see
    /// [`archive::Archive::release`]).
    pub fn release_weight(&self, entry: &str) {
        if let WeightSet::Archive { archive, .. } = &self.weights {
            archive.release(entry);
        }
    }
}

/// Why streaming a weight failed: its input (a damaged archive) or the sink.
#[derive(Debug)]
pub enum StreamError {
    Read(FrontendError),
    Write(std::io::Error),
}

/// Reads a `.pt2` archive, or a bare ExportedProgram JSON file (anything whose first
/// non-blank byte is `{`).
pub fn load(path: &Path) -> Result<ExportedModel> {
    let mut head = [0u8; 64];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .map_err(|source| FrontendError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    let first = head[..n].iter().find(|b| !b.is_ascii_whitespace()).copied();
    if first == Some(b'{') {
        load_json(path)
    } else {
        load_pt2(path)
    }
}

fn load_json(path: &Path) -> Result<ExportedModel> {
    let io = |source| FrontendError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    // Mapped rather than read: the file's pages are already in the page cache, where a
    // copy would fault in as many fresh pages (tens of megabytes for a large graph).
    // SAFETY: read-only, as for archives (see `Archive::open`).
    let bytes = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
    let (graph, dynamic) = parse_graph(&bytes, path.display().to_string())?;
    Ok(ExportedModel {
        source: path.to_path_buf(),
        graph,
        weights: WeightSet::None,
        dynamic,
    })
}

fn load_pt2(path: &Path) -> Result<ExportedModel> {
    from_archive(path, Archive::open(path)?)
}

/// Reads a `.pt2` archive already in memory; `path` names it in messages (the fuzzers
/// use this; it checks exactly what [`load`] checks).
pub fn load_pt2_bytes(path: &Path, bytes: Vec<u8>) -> Result<ExportedModel> {
    from_archive(path, Archive::from_bytes(path, bytes)?)
}

fn from_archive(path: &Path, archive: Archive) -> Result<ExportedModel> {
    let json_bytes = archive.model_json()?;
    let file = format!("{}:models/model.json", path.display());
    let (graph, dynamic) = parse_graph(&json_bytes, file)?;
    drop(json_bytes);
    let configs = archive.tensor_configs()?;
    let mut stored = BTreeMap::new();
    for spec in &graph.inputs {
        if spec.kind == InputKind::UserInput {
            continue;
        }
        let target = spec.target.clone().unwrap_or_default();
        let st = configs
            .get(&target)
            .ok_or_else(|| FrontendError::MissingWeight {
                name: target.clone(),
                file: "data/weights/model_weights_config.json (no entry)".to_string(),
            })?;
        let size = archive
            .entry_size(&st.entry)
            .ok_or_else(|| FrontendError::MissingWeight {
                name: target.clone(),
                file: st.entry.clone(),
            })?;
        let meta = &graph.tensors[&spec.name];
        let elem = meta.dtype.size_in_bytes() as u64;
        let needed = archive::storage_elements_needed(&meta.shape, &st.strides, st.storage_offset)
            .map(|n| n * elem);
        if needed.is_none_or(|n| n > size) || st.strides.len() != meta.shape.len() {
            return Err(FrontendError::WeightSizeMismatch {
                name: target,
                file: st.entry.clone(),
                expected: needed.unwrap_or(u64::MAX),
                found: size,
                sizes: meta.shape.clone(),
                strides: st.strides.clone(),
                offset: st.storage_offset,
            });
        }
        stored.insert(spec.name.clone(), st.clone());
    }
    Ok(ExportedModel {
        source: path.to_path_buf(),
        graph,
        weights: WeightSet::Archive { archive, stored },
        dynamic,
    })
}

/// The graph of `model.json`: a static program as it is; a dynamic one specialized for
/// its example inputs' sizes, with what it needs to be specialized for others.
fn parse_graph(bytes: &[u8], file: String) -> Result<(Graph, Option<Dynamic>)> {
    let Some(signature) = json::dynamic_signature(bytes, &file)? else {
        return Ok((json::parse_exported_program(bytes, &file)?, None));
    };
    let mut dynamic = Dynamic {
        signature,
        json: bytes.to_vec(),
        file,
        sizes: Bindings::new(),
    };
    let sizes = dynamic.example_sizes();
    let graph = json::parse_specialized(bytes, &dynamic.file, &sizes)?;
    dynamic.sizes = sizes;
    Ok((graph, Some(dynamic)))
}
