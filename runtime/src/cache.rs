//! The on-disk cache of compiled executables used by [`crate::Session`].
//!
//! An entry is the plugin's serialization of a compiled program
//! ([`crate::LoadedExecutable::serialize`]), stored under a key that covers everything
//! the compiled code depends on:
//!
//! - the program's bytes (their SHA-256) and format;
//! - the plugin: its PJRT API version, attributes (`xla_version`, StableHLO versions),
//!   platform name and version, and its file (canonical path, size, modification time),
//!   so that upgrading the plugin in place invalidates its entries;
//! - the devices the program is compiled for (kinds of the client's addressable devices)
//!   and the host CPU (model and feature flags: CPU executables are native code built
//!   for the host, and a cache directory may be shared between machines);
//! - the encoded compile options, and `XLA_FLAGS` (read by XLA when the plugin loads).
//!
//! Location: `$TPUC_CACHE_DIR`, else `$XDG_CACHE_HOME/tpuc/executables`, else
//! `$HOME/.cache/tpuc/executables`. Entries are written atomically (a temporary file in
//! the same directory, then a rename), so concurrent processes never see half an entry.
//! Each entry carries its key and a SHA-256 of its payload: a truncated, corrupt or
//! misplaced file is detected before its bytes reach the plugin, and the session then
//! compiles again and overwrites it. The cache is an optimisation: no failure to read or
//! write it is fatal.
//!
//! File layout (`<key hex>.pjrt`): magic `TPUCEXE\0`, format version (u32 LE), the key
//! (32 bytes), SHA-256 of the payload (32 bytes), payload length (u64 LE), payload.

use crate::error::{Result, RuntimeError};
use crate::pjrt::{Client, NamedValue};
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Environment variable naming the executable cache directory.
pub const CACHE_DIR_ENV: &str = "TPUC_CACHE_DIR";

const MAGIC: &[u8; 8] = b"TPUCEXE\0";
const FORMAT: u32 = 1;
const HEADER_LEN: usize = 8 + 4 + 32 + 32 + 8;
/// Bumped when what goes into a key changes.
const KEY_DOMAIN: &str = "tpuc executable cache key v1";

/// The default cache directory (see the module docs), or `None` when neither
/// `TPUC_CACHE_DIR`, `XDG_CACHE_HOME` nor `HOME` is set.
pub fn default_cache_dir() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    cache_dir_from(var(CACHE_DIR_ENV), var("XDG_CACHE_HOME"), var("HOME"))
}

fn cache_dir_from(
    explicit: Option<std::ffi::OsString>,
    xdg_cache_home: Option<std::ffi::OsString>,
    home: Option<std::ffi::OsString>,
) -> Option<PathBuf> {
    if let Some(dir) = explicit {
        return Some(PathBuf::from(dir));
    }
    // XDG says relative values are invalid and must be ignored.
    if let Some(xdg) = xdg_cache_home
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
    {
        return Some(xdg.join("tpuc").join("executables"));
    }
    home.map(|h| {
        PathBuf::from(h)
            .join(".cache")
            .join("tpuc")
            .join("executables")
    })
}

/// A cache key: SHA-256 over the program, the plugin's identity, the devices, the host
/// and the compile options.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct CacheKey([u8; 32]);

impl CacheKey {
    /// Lowercase hex, as used in the entry's file name.
    pub fn to_hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }

    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl std::fmt::Debug for CacheKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CacheKey({})", self.to_hex())
    }
}

/// Feeds length-prefixed fields into a hash, so that no two field lists collide.
struct KeyHasher(Sha256);

impl KeyHasher {
    fn field(&mut self, name: &str, value: &[u8]) {
        for part in [name.as_bytes(), value] {
            self.0.update((part.len() as u64).to_le_bytes());
            self.0.update(part);
        }
    }
}

/// The key of `program` (in PJRT format `format`) compiled with the encoded
/// `compile_options` for `client`.
pub fn cache_key(
    client: &Client,
    program: &[u8],
    format: &str,
    compile_options: &[u8],
) -> CacheKey {
    let mut h = KeyHasher(Sha256::new());
    h.field("domain", KEY_DOMAIN.as_bytes());
    h.field("program.sha256", &Sha256::digest(program));
    h.field("program.format", format.as_bytes());
    for (name, value) in plugin_identity(client) {
        h.field(&name, value.as_bytes());
    }
    static HOST: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    h.field("host", HOST.get_or_init(host_fingerprint).as_bytes());
    h.field("compile_options", compile_options);
    // XLA reads its flags from the environment when the plugin loads; they change the
    // code it generates (`--xla_cpu_max_isa=AVX2`, for one).
    let flags = std::env::var("XLA_FLAGS").unwrap_or_default();
    h.field("env.XLA_FLAGS", flags.as_bytes());
    CacheKey(h.0.finalize().into())
}

/// The parts of a client's plugin and devices a compiled executable depends on.
fn plugin_identity(client: &Client) -> Vec<(String, String)> {
    let plugin = client.plugin();
    let mut out = vec![
        (
            "plugin.api_version".to_string(),
            plugin.api_version().to_string(),
        ),
        (
            "platform.name".to_string(),
            client.platform_name().to_string(),
        ),
        (
            "platform.version".to_string(),
            client.platform_version().to_string(),
        ),
        (
            "plugin.path".to_string(),
            plugin.path().display().to_string(),
        ),
    ];
    // Size and modification time of the plugin file: an upgrade in place changes them.
    let file = match std::fs::metadata(plugin.path()) {
        Ok(m) => {
            let mtime = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or_else(|| "unknown".to_string(), |d| d.as_nanos().to_string());
            format!("{} bytes, mtime {mtime}", m.len())
        }
        Err(e) => format!("unreadable: {e}"),
    };
    out.push(("plugin.file".to_string(), file));
    for (name, value) in plugin.attributes() {
        let v = match value {
            NamedValue::String(s) => s.clone(),
            NamedValue::Int64(i) => i.to_string(),
            NamedValue::Int64List(l) => format!("{l:?}"),
            NamedValue::Float(f) => f.to_string(),
            NamedValue::Bool(b) => b.to_string(),
        };
        out.push((format!("plugin.attribute.{name}"), v));
    }
    let mut kinds: Vec<&str> = client
        .addressable_devices()
        .iter()
        .map(|d| d.kind.as_str())
        .collect();
    kinds.sort_unstable();
    kinds.dedup();
    out.push(("devices.kinds".to_string(), kinds.join(",")));
    out
}

/// The host CPU's model and feature flags (Linux: the first processor of
/// `/proc/cpuinfo`), plus the target triple's architecture and OS.
fn host_fingerprint() -> String {
    let mut s = format!("{}-{}", std::env::consts::ARCH, std::env::consts::OS);
    if let Ok(info) = std::fs::read_to_string("/proc/cpuinfo") {
        let first = info.split("\n\n").next().unwrap_or("");
        for line in first.lines() {
            let key = line.split(':').next().unwrap_or("").trim();
            // x86: vendor_id, model name, flags; aarch64: CPU implementer/part, Features.
            if matches!(
                key,
                "vendor_id"
                    | "model name"
                    | "flags"
                    | "Features"
                    | "CPU implementer"
                    | "CPU architecture"
                    | "CPU variant"
                    | "CPU part"
            ) {
                s.push('\n');
                s.push_str(line.trim());
            }
        }
    }
    s
}

/// Path of the entry for `key` in `dir`.
pub fn entry_path(dir: &Path, key: &CacheKey) -> PathBuf {
    dir.join(format!("{}.pjrt", key.to_hex()))
}

/// Why a cache entry could not be used.
#[derive(Debug)]
pub enum Miss {
    /// No entry (the normal first-run case).
    Absent,
    /// An entry exists but is unusable; the message says why.
    Invalid(String),
}

/// Reads the payload of the entry for `key` in `dir`, checking magic, key and checksum.
pub fn load(dir: &Path, key: &CacheKey) -> std::result::Result<Vec<u8>, Miss> {
    let path = entry_path(dir, key);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            return Err(Miss::Absent)
        }
        Err(e) => return Err(Miss::Invalid(format!("{}: {e}", path.display()))),
    };
    decode_entry(&bytes, key).map_err(|why| Miss::Invalid(format!("{}: {why}", path.display())))
}

fn decode_entry(bytes: &[u8], key: &CacheKey) -> std::result::Result<Vec<u8>, String> {
    if bytes.len() < HEADER_LEN {
        return Err(format!("truncated ({} bytes)", bytes.len()));
    }
    let (header, payload) = bytes.split_at(HEADER_LEN);
    if &header[..8] != MAGIC {
        return Err("not a tpuc cache entry (bad magic)".into());
    }
    let mut u32_bytes = [0u8; 4];
    u32_bytes.copy_from_slice(&header[8..12]);
    let format = u32::from_le_bytes(u32_bytes);
    if format != FORMAT {
        return Err(format!("entry format {format}, expected {FORMAT}"));
    }
    if &header[12..44] != key.as_bytes() {
        return Err("entry belongs to another key".into());
    }
    let mut len_bytes = [0u8; 8];
    len_bytes.copy_from_slice(&header[76..84]);
    let len = u64::from_le_bytes(len_bytes);
    if len != payload.len() as u64 {
        return Err(format!(
            "payload is {} bytes, header says {len}",
            payload.len()
        ));
    }
    if payload.is_empty() {
        return Err("empty payload".into());
    }
    if Sha256::digest(payload).as_slice() != &header[44..76] {
        return Err("payload checksum mismatch (corrupt entry)".into());
    }
    Ok(payload.to_vec())
}

fn encode_entry(key: &CacheKey, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT.to_le_bytes());
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(&Sha256::digest(payload));
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

/// Writes `payload` as the entry for `key` in `dir` atomically (temporary file in `dir`, then rename),
/// replacing any previous entry. Returns the entry's path.
pub fn store(dir: &Path, key: &CacheKey, payload: &[u8]) -> Result<PathBuf> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    std::fs::create_dir_all(dir).map_err(|e| RuntimeError::io(dir, e))?;
    let path = entry_path(dir, key);
    let tmp = dir.join(format!(
        ".{}.tmp-{}-{}",
        key.to_hex(),
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(&encode_entry(key, payload))?;
        f.sync_all()?;
        std::fs::rename(&tmp, &path)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(RuntimeError::io(&path, e));
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(b: u8) -> CacheKey {
        CacheKey([b; 32])
    }

    #[test]
    fn cache_dir_precedence() {
        let os = |s: &str| Some(std::ffi::OsString::from(s));
        assert_eq!(
            cache_dir_from(os("/c"), os("/x"), os("/h")),
            Some(PathBuf::from("/c"))
        );
        assert_eq!(
            cache_dir_from(None, os("/x"), os("/h")),
            Some(PathBuf::from("/x/tpuc/executables"))
        );
        assert_eq!(
            cache_dir_from(None, os("relative"), os("/h")),
            Some(PathBuf::from("/h/.cache/tpuc/executables"))
        );
        assert_eq!(
            cache_dir_from(None, None, os("/h")),
            Some(PathBuf::from("/h/.cache/tpuc/executables"))
        );
        assert_eq!(cache_dir_from(None, None, None), None);
    }

    #[test]
    fn entries_round_trip_and_reject_damage() {
        let payload = b"serialized executable bytes".to_vec();
        let entry = encode_entry(&key(1), &payload);
        assert_eq!(decode_entry(&entry, &key(1)).unwrap(), payload);
        assert!(decode_entry(&entry, &key(2))
            .unwrap_err()
            .contains("another key"));
        let mut flipped = entry.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 1;
        assert!(decode_entry(&flipped, &key(1))
            .unwrap_err()
            .contains("checksum"));
        assert!(decode_entry(&entry[..entry.len() - 1], &key(1))
            .unwrap_err()
            .contains("payload is"));
        assert!(decode_entry(&entry[..10], &key(1))
            .unwrap_err()
            .contains("truncated"));
        assert!(decode_entry(b"garbage garbage garbage garbage garbage garbage garbage garbage garbage garbage garbage", &key(1))
            .unwrap_err()
            .contains("magic"));
        assert!(decode_entry(&encode_entry(&key(1), b""), &key(1)).is_err());
    }

    #[test]
    fn write_then_read() {
        let dir = std::env::temp_dir().join(format!("tpuc-cache-unit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        assert!(matches!(load(&dir, &key(3)), Err(Miss::Absent)));
        let path = store(&dir, &key(3), b"abc").unwrap();
        assert_eq!(path, entry_path(&dir, &key(3)));
        assert_eq!(load(&dir, &key(3)).unwrap(), b"abc");
        // Overwrite in place.
        store(&dir, &key(3), b"defg").unwrap();
        assert_eq!(load(&dir, &key(3)).unwrap(), b"defg");
        // No temporary files left behind.
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
        std::fs::write(&path, b"junk").unwrap();
        assert!(matches!(load(&dir, &key(3)), Err(Miss::Invalid(_))));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
