//! A serving directory (`python -m tpuc.llm export`): the decode and prefill programs
//! of one model, loaded on one client, sharing one KV cache.
//!
//! `serve.json` lists the programs; each is an artifact whose state is the cache
//! (`[B, H_kv, L, D]` per layer and kind, the same names in every program). The cache
//! lives in exactly one session at a time and is handed to the program about to run
//! ([`Session::move_state_to`]: the buffers change hands, nothing is copied), so the
//! device holds it once.
//!
//! The programs' inputs (see `python/tpuc/llm/programs.py`):
//! - decode: `tokens [B]`, `positions [B]`, then the sampling parameters `[B]`
//!   (`temperature`, `top_k`, `top_p`, `min_p`, `seed`); returns `tokens [B]`,
//!   `logprobs [B]`.
//! - prefill (bucket `T`): `tokens [1, T]`, `slot [1]`, `start [1]`, `length [1]`,
//!   then the sampling parameters `[1]`; returns the token after the chunk and its
//!   log-probability.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::{Result, RuntimeError};
use crate::pjrt::Client;
use crate::session::{LoadOptions, Session};
use crate::{DType, HostTensor};

/// The manifest format this runtime reads.
pub const FORMAT: &str = "tpuc-serve/1";

/// `serve.json`.
#[derive(Clone, Debug, Deserialize)]
pub struct ServeManifest {
    pub format: String,
    pub model: String,
    pub vocab_size: i64,
    pub max_batch: usize,
    pub max_len: usize,
    pub prefill_buckets: Vec<usize>,
    /// The decode position of a slot with no sequence (`max_len - 1`).
    pub free_position: i64,
    pub programs: ServePrograms,
    #[serde(default)]
    pub eos_token_ids: Vec<i64>,
    #[serde(default)]
    pub tokenizer_files: Vec<String>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct ServePrograms {
    pub decode: ProgramRef,
    pub prefill: Vec<PrefillRef>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct ProgramRef {
    pub path: String,
}

#[derive(Clone, Debug, Deserialize)]
pub struct PrefillRef {
    pub tokens: usize,
    pub path: String,
}

/// How a sequence picks its tokens (OpenAI's and vLLM's parameters): `temperature`
/// 0 is greedy; `top_k` 0, `top_p` 1 and `min_p` 0 filter nothing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sampling {
    pub temperature: f32,
    pub top_k: i64,
    pub top_p: f32,
    pub min_p: f32,
    pub seed: i64,
}

impl Sampling {
    pub const GREEDY: Sampling = Sampling {
        temperature: 0.0,
        top_k: 0,
        top_p: 1.0,
        min_p: 0.0,
        seed: 0,
    };
}

/// A sampled token and its log-probability under the model's distribution.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sampled {
    pub token: i64,
    pub logprob: f32,
}

/// The loaded programs of a serving directory.
pub struct ProgramSet {
    dir: PathBuf,
    manifest: ServeManifest,
    decode: Session,
    /// By bucket size, ascending.
    prefill: BTreeMap<usize, Session>,
    /// Which session holds the cache: `None` the decode program, else a bucket.
    holder: Option<usize>,
}

impl std::fmt::Debug for ProgramSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProgramSet")
            .field("dir", &self.dir)
            .field("buckets", &self.manifest.prefill_buckets)
            .finish_non_exhaustive()
    }
}

fn invalid(message: String) -> RuntimeError {
    RuntimeError::InvalidArgument(message)
}

/// Reads and checks `dir/serve.json`.
pub fn read_manifest(dir: &Path) -> Result<ServeManifest> {
    let path = dir.join("serve.json");
    let text = std::fs::read_to_string(&path).map_err(|e| {
        invalid(format!(
            "{}: {e} (a serving directory is written by `python -m tpuc.llm export`)",
            path.display()
        ))
    })?;
    let m: ServeManifest = serde_json::from_str(&text)
        .map_err(|e| invalid(format!("{}: not a serving manifest: {e}", path.display())))?;
    if m.format != FORMAT {
        return Err(invalid(format!(
            "{}: format `{}`, this tpuc reads `{FORMAT}`",
            path.display(),
            m.format
        )));
    }
    if m.max_batch == 0 || m.max_len < 2 || m.programs.prefill.is_empty() {
        return Err(invalid(format!(
            "{}: max_batch {}, max_len {} and {} prefill programs: nothing to serve",
            path.display(),
            m.max_batch,
            m.max_len,
            m.programs.prefill.len()
        )));
    }
    Ok(m)
}

impl ServeManifest {
    /// The largest prefill bucket: prompts are cut into chunks of this size.
    pub fn chunk(&self) -> usize {
        self.programs
            .prefill
            .iter()
            .map(|p| p.tokens)
            .max()
            .unwrap_or(0)
    }
}

fn i64_tensor(shape: &[i64], values: &[i64]) -> HostTensor {
    HostTensor {
        dtype: DType::I64,
        shape: shape.to_vec(),
        data: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
    }
}

fn f32_tensor(shape: &[i64], values: &[f32]) -> HostTensor {
    HostTensor::from_f32(shape, values)
}

fn sampling_tensors(rows: &[Sampling]) -> [HostTensor; 5] {
    let n = [rows.len() as i64];
    let f = |g: fn(&Sampling) -> f32| f32_tensor(&n, &rows.iter().map(g).collect::<Vec<_>>());
    let i = |g: fn(&Sampling) -> i64| i64_tensor(&n, &rows.iter().map(g).collect::<Vec<_>>());
    [
        f(|s| s.temperature),
        i(|s| s.top_k),
        f(|s| s.top_p),
        f(|s| s.min_p),
        i(|s| s.seed),
    ]
}

/// `(tokens, logprobs)` outputs as [`Sampled`] rows.
fn sampled(outputs: &[HostTensor], program: &str) -> Result<Vec<Sampled>> {
    let [tokens, logprobs, ..] = outputs else {
        return Err(invalid(format!(
            "{program}: expected token and log-probability outputs"
        )));
    };
    if tokens.dtype != DType::I64 || logprobs.dtype != DType::F32 {
        return Err(invalid(format!(
            "{program}: outputs are {:?} and {:?}, expected i64 tokens and f32 log-probabilities",
            tokens.dtype, logprobs.dtype
        )));
    }
    let t = tokens
        .data
        .chunks_exact(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap_or([0; 8])));
    let l = logprobs
        .data
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap_or([0; 4])));
    Ok(t.zip(l)
        .map(|(token, logprob)| Sampled { token, logprob })
        .collect())
}

impl ProgramSet {
    /// Loads every program of `dir` on `client` (compiled once each, from the
    /// executable cache when `options` allow), and gives the cache to the decode
    /// program.
    pub fn load(
        dir: impl AsRef<Path>,
        client: &Client,
        options: &LoadOptions,
    ) -> Result<ProgramSet> {
        let dir = dir.as_ref().to_path_buf();
        let manifest = read_manifest(&dir)?;
        let mut decode =
            Session::load_with(dir.join(&manifest.programs.decode.path), client, options)?;
        decode.release_initial_state()?;
        let mut prefill = BTreeMap::new();
        for p in &manifest.programs.prefill {
            let mut s = Session::load_with(dir.join(&p.path), client, options)?;
            s.release_initial_state()?;
            // Each program's own initial cache is dropped when one is handed to it.
            decode.move_state_to(&s)?;
            s.move_state_to(&decode)?;
            prefill.insert(p.tokens, s);
        }
        Ok(ProgramSet {
            dir,
            manifest,
            decode,
            prefill,
            holder: None,
        })
    }

    /// How each program was loaded (compiled now or from the executable cache), by
    /// its path in the directory.
    pub fn load_reports(&self) -> Vec<(String, &crate::LoadReport)> {
        let mut out = vec![(
            self.manifest.programs.decode.path.clone(),
            self.decode.load_report(),
        )];
        for p in &self.manifest.programs.prefill {
            out.push((p.path.clone(), self.prefill[&p.tokens].load_report()));
        }
        out
    }

    pub fn manifest(&self) -> &ServeManifest {
        &self.manifest
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn session(&self, bucket: Option<usize>) -> &Session {
        match bucket {
            None => &self.decode,
            Some(t) => &self.prefill[&t],
        }
    }

    /// Moves the cache to the program about to run.
    fn hand_cache_to(&mut self, bucket: Option<usize>) -> Result<()> {
        if self.holder != bucket {
            self.session(self.holder)
                .move_state_to(self.session(bucket))?;
            self.holder = bucket;
        }
        Ok(())
    }

    /// Writes one chunk of a prompt, `tokens` at positions `start..`, into `slot`;
    /// returns the token after the chunk's last token. The chunk runs in the smallest
    /// bucket that holds it (padded).
    pub fn prefill(
        &mut self,
        slot: usize,
        start: usize,
        tokens: &[i64],
        sampling: Sampling,
    ) -> Result<Sampled> {
        let m = &self.manifest;
        // The prefill sessions are keyed by bucket size, ascending.
        let bucket = *self
            .prefill
            .range(tokens.len()..)
            .next()
            .map(|(t, _)| t)
            .ok_or_else(|| {
                invalid(format!(
                    "a chunk of {} tokens exceeds every prefill bucket",
                    tokens.len()
                ))
            })?;
        if tokens.is_empty() || slot >= m.max_batch || start + bucket > m.max_len {
            return Err(invalid(format!(
                "prefill of {} tokens at {start} into slot {slot}: outside the cache (slots {}, length {})",
                tokens.len(),
                m.max_batch,
                m.max_len
            )));
        }
        let mut padded = tokens.to_vec();
        padded.resize(bucket, 0);
        let [t, k, p, mp, sd] = sampling_tensors(&[sampling]);
        let inputs = [
            i64_tensor(&[1, bucket as i64], &padded),
            i64_tensor(&[1], &[slot as i64]),
            i64_tensor(&[1], &[start as i64]),
            i64_tensor(&[1], &[tokens.len() as i64]),
            t,
            k,
            p,
            mp,
            sd,
        ];
        self.hand_cache_to(Some(bucket))?;
        let out = self.prefill[&bucket].run(&inputs)?;
        sampled(&out, "prefill")?
            .into_iter()
            .next()
            .ok_or_else(|| invalid("prefill returned no token".into()))
    }

    /// One decode step over every slot: `tokens[b]` at `positions[b]` (a free slot at
    /// the manifest's `free_position`); each slot's next token.
    pub fn decode(
        &mut self,
        tokens: &[i64],
        positions: &[i64],
        sampling: &[Sampling],
    ) -> Result<Vec<Sampled>> {
        let b = self.manifest.max_batch;
        if tokens.len() != b || positions.len() != b || sampling.len() != b {
            return Err(invalid(format!(
                "decode takes {b} tokens, positions and sampling rows, got {}, {} and {}",
                tokens.len(),
                positions.len(),
                sampling.len()
            )));
        }
        if let Some(p) = positions
            .iter()
            .find(|&&p| p < 0 || p >= self.manifest.max_len as i64)
        {
            return Err(invalid(format!(
                "decode position {p} is outside the cache (length {})",
                self.manifest.max_len
            )));
        }
        let [t, k, p, mp, sd] = sampling_tensors(sampling);
        let inputs = [
            i64_tensor(&[b as i64], tokens),
            i64_tensor(&[b as i64], positions),
            t,
            k,
            p,
            mp,
            sd,
        ];
        self.hand_cache_to(None)?;
        let out = self.decode.run(&inputs)?;
        sampled(&out, "decode")
    }
}
