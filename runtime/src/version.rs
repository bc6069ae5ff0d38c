//! StableHLO versions: parsing, comparison, and the check that an artifact's program is
//! within what a plugin accepts.
//!
//! Plugins report `stablehlo_minimum_version` and `stablehlo_current_version` as
//! attributes (`[1, 20, 0]` or `"1.20.0"`); artifacts record the version their program
//! is written against (`manifest.stablehlo_version`). A program newer than the plugin's
//! current version may use ops or attributes the plugin cannot read, and one older than
//! its minimum is no longer guaranteed to be understood; both are refused before the
//! program reaches the plugin's compiler (whose failures are far less clear).

use crate::error::{Result, RuntimeError};
use crate::pjrt::Plugin;
use std::path::Path;

/// A `major.minor.patch` version. Missing components read as 0 (`"1.2"` is `1.2.0`);
/// a pre-release or build suffix (`-rc1`, `+abc`) is ignored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
}

impl Version {
    pub const fn new(major: u64, minor: u64, patch: u64) -> Version {
        Version {
            major,
            minor,
            patch,
        }
    }

    /// Parses `1`, `1.2` or `1.2.3` (surrounding whitespace and a `v` prefix allowed).
    pub fn parse(text: &str) -> Option<Version> {
        let t = text.trim();
        let t = t.strip_prefix('v').unwrap_or(t);
        let core = t.split(['-', '+']).next().unwrap_or("");
        let mut parts = [0u64; 3];
        let mut n = 0;
        for piece in core.split('.') {
            if n == 3 || piece.is_empty() || !piece.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            parts[n] = piece.parse().ok()?;
            n += 1;
        }
        (n > 0).then_some(Version::new(parts[0], parts[1], parts[2]))
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// Checks `artifact_version` (the manifest's `stablehlo_version`) against the range the
/// plugin reports. A bound the plugin does not report (or reports in a form that is not
/// a version) is not checked; an artifact version that does not parse is an error.
pub fn check_stablehlo_version(dir: &Path, artifact_version: &str, plugin: &Plugin) -> Result<()> {
    check_range(
        dir,
        plugin.path(),
        artifact_version,
        plugin.stablehlo_minimum_version(),
        plugin.stablehlo_current_version(),
    )
}

fn check_range(
    dir: &Path,
    plugin: &Path,
    artifact_version: &str,
    minimum: Option<String>,
    current: Option<String>,
) -> Result<()> {
    let artifact = Version::parse(artifact_version).ok_or_else(|| RuntimeError::Artifact {
        dir: dir.to_path_buf(),
        message: format!(
            "stablehlo_version `{artifact_version}` in the manifest is not a version (expected major.minor.patch)"
        ),
    })?;
    let below = minimum
        .as_deref()
        .and_then(Version::parse)
        .is_some_and(|min| artifact < min);
    let above = current
        .as_deref()
        .and_then(Version::parse)
        .is_some_and(|cur| artifact > cur);
    if below || above {
        return Err(RuntimeError::StablehloVersion {
            dir: dir.to_path_buf(),
            plugin: plugin.to_path_buf(),
            artifact: artifact_version.to_string(),
            minimum,
            current,
        });
    }
    Ok(())
}

/// `"0.9.0 ..= 1.20.0"`, `"up to 1.20.0"`, ... (for error messages).
pub fn describe_range(minimum: Option<&str>, current: Option<&str>) -> String {
    match (minimum, current) {
        (Some(min), Some(cur)) => format!("{min} ..= {cur} (minimum ..= current)"),
        (Some(min), None) => format!("{min} or newer"),
        (None, Some(cur)) => format!("up to {cur}"),
        (None, None) => "any version".to_string(),
    }
}

/// What to do about a version mismatch (for error messages).
pub fn mismatch_hint(artifact: &str, current: Option<&str>) -> &'static str {
    let newer = match (Version::parse(artifact), current.and_then(Version::parse)) {
        (Some(a), Some(c)) => a > c,
        _ => false,
    };
    if newer {
        "use a newer plugin, or recompile the model targeting an older StableHLO version"
    } else {
        "recompile the model with a newer tpuc, or use an older plugin"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_orders_versions() {
        assert_eq!(Version::parse("1.20.0"), Some(Version::new(1, 20, 0)));
        assert_eq!(Version::parse(" v1.2 "), Some(Version::new(1, 2, 0)));
        assert_eq!(Version::parse("2"), Some(Version::new(2, 0, 0)));
        assert_eq!(Version::parse("1.0.0-rc1"), Some(Version::new(1, 0, 0)));
        for bad in ["", "1.", "1..2", "a.b.c", "1.2.3.4", "-1.0", "1.x"] {
            assert_eq!(Version::parse(bad), None, "{bad}");
        }
        // Numeric, not lexicographic.
        assert!(Version::parse("1.9.0") < Version::parse("1.10.0"));
        assert!(Version::parse("0.99.99") < Version::parse("1.0.0"));
        assert_eq!(Version::new(1, 20, 0).to_string(), "1.20.0");
    }

    #[test]
    fn range_check() {
        let dir = Path::new("/a");
        let plugin = Path::new("/p.so");
        let check = |v: &str, min: Option<&str>, cur: Option<&str>| {
            check_range(dir, plugin, v, min.map(String::from), cur.map(String::from))
        };
        let (min, cur) = (Some("0.9.0"), Some("1.20.0"));
        for ok in ["0.9.0", "1.0.0", "1.20.0", "1.19.7"] {
            assert!(check(ok, min, cur).is_ok(), "{ok}");
        }
        let e = check("99.0.0", min, cur).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, RuntimeError::StablehloVersion { .. }), "{msg}");
        assert!(msg.contains("99.0.0") && msg.contains("1.20.0"), "{msg}");
        assert!(msg.contains("newer plugin"), "{msg}");
        let msg = check("0.8.0", min, cur).unwrap_err().to_string();
        assert!(msg.contains("0.8.0") && msg.contains("0.9.0"), "{msg}");
        assert!(msg.contains("newer tpuc"), "{msg}");
        // Unreported or unreadable bounds are not checked.
        assert!(check("99.0.0", None, None).is_ok());
        assert!(check("99.0.0", min, Some("unknown")).is_ok());
        assert!(check("0.1.0", None, cur).is_ok());
        // The artifact's version must parse.
        let e = check("latest", min, cur).unwrap_err();
        assert!(matches!(e, RuntimeError::Artifact { .. }), "{e}");
        assert!(e.to_string().contains("latest"), "{e}");
    }
}
