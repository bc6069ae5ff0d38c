//! Opening a client and loading an artifact, shared by `tpuc run` and `tpuc bench`:
//! plugin discovery, client options from the command line, the executable cache flag
//! and progress on a terminal.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tpuc_runtime::pjrt::NamedValue;
use tpuc_runtime::{CacheMode, Client, ClientOptions, LoadEvent, LoadOptions, Plugin, Session};

/// The plugin, client and cache flags `tpuc run` and `tpuc bench` share.
#[derive(clap::Args, Clone, Debug)]
pub struct ClientArgs {
    /// PJRT plugin (.so); default: $TPUC_PJRT_PLUGIN, then the project's .deps, then
    /// plugins installed in Python environments (see `tpuc devices`).
    #[arg(long)]
    pub plugin: Option<PathBuf>,
    /// A plugin create option, NAME=VALUE (repeatable; true/false, integers, 1,2,3
    /// lists, floats, strings), e.g. asynchronous=false for the CPU plugin.
    #[arg(long = "client-option", value_name = "NAME=VALUE", value_parser = parse_client_option)]
    pub client_options: Vec<(String, NamedValue)>,
    /// Compile the program even if the executable cache has it, and do not store it.
    #[arg(long)]
    pub no_cache: bool,
}

/// What opening the client took, for `tpuc bench`.
pub struct OpenedClient {
    pub plugin_path: PathBuf,
    pub plugin_load: Duration,
    pub client_create: Duration,
}

/// Parses `NAME=VALUE` into a plugin create option: `true`/`false` are booleans,
/// integers are int64, `1,2,3` an int64 list, other numbers floats, anything else a
/// string.
pub fn parse_client_option(s: &str) -> Result<(String, NamedValue), String> {
    let (name, value) = s
        .split_once('=')
        .filter(|(n, _)| !n.is_empty())
        .ok_or_else(|| format!("expected NAME=VALUE, got `{s}`"))?;
    let value = match value {
        "true" => NamedValue::Bool(true),
        "false" => NamedValue::Bool(false),
        v => {
            if let Ok(i) = v.parse::<i64>() {
                NamedValue::Int64(i)
            } else if let Some(list) = v
                .contains(',')
                .then(|| {
                    v.split(',')
                        .map(|x| x.trim().parse::<i64>())
                        .collect::<Result<Vec<_>, _>>()
                        .ok()
                })
                .flatten()
            {
                NamedValue::Int64List(list)
            } else if let Ok(f) = v.parse::<f32>() {
                NamedValue::Float(f)
            } else {
                NamedValue::String(v.to_string())
            }
        }
    };
    Ok((name.to_string(), value))
}

/// Create options for `plugin_path` ([`ClientOptions::for_plugin`]), with the
/// `--client-option`s over them.
pub fn client_options(
    plugin_path: &Path,
    extra: &[(String, NamedValue)],
    devices: usize,
) -> ClientOptions {
    let mut options = ClientOptions::for_plugin(plugin_path, devices);
    for (name, value) in extra {
        if name == "cpu_device_count" {
            options.cpu_device_count = None;
        }
        options.extra.retain(|(n, _)| n != name);
        options.extra.push((name.clone(), value.clone()));
    }
    options
}

/// The devices the artifact at `dir` runs on: its mesh's, or one (also when its
/// manifest cannot be read: loading it then says why).
pub fn artifact_devices(dir: &Path) -> usize {
    tpuc_runtime::session::read_manifest(dir)
        .ok()
        .and_then(|m| m.partitioning.map(|p| p.mesh.num_devices()))
        .unwrap_or(1)
}

/// Finds and loads the plugin (flag, `TPUC_PJRT_PLUGIN`, `.deps`, Python environments)
/// and creates a client with [`client_options`] for `devices` devices.
pub fn open_client(
    plugin: Option<&Path>,
    extra: &[(String, NamedValue)],
    devices: usize,
) -> Result<(Client, OpenedClient), String> {
    let plugin_path = tpuc_runtime::discover::find_plugin(plugin).map_err(|e| e.to_string())?;
    let t0 = Instant::now();
    let plugin = Plugin::load(&plugin_path).map_err(|e| e.to_string())?;
    let t1 = Instant::now();
    let options = client_options(&plugin_path, extra, devices);
    let client = plugin.create_client(&options).map_err(|e| e.to_string())?;
    let t2 = Instant::now();
    Ok((
        client,
        OpenedClient {
            plugin_path,
            plugin_load: t1 - t0,
            client_create: t2 - t1,
        },
    ))
}

/// Loads an artifact; `no_cache` bypasses the executable cache. Draws progress on
/// stderr when it is a terminal.
pub fn load_session(artifact: &Path, client: &Client, no_cache: bool) -> Result<Session, String> {
    let options = LoadOptions {
        cache: if no_cache {
            CacheMode::Bypass
        } else {
            CacheMode::ReadWrite
        },
        progress: with_specializations(terminal_progress()),
        specializer: specializer(),
        ..LoadOptions::default()
    };
    let session = Session::load_with(artifact, client, &options).map_err(|e| e.to_string())?;
    for w in &session.load_report().cache_warnings {
        errln!("warning: executable cache: {w}");
    }
    if let Some(first) = session
        .manifest()
        .dynamic
        .as_ref()
        .and_then(|d| d.specializations.first())
    {
        let report = session.load_report();
        outln!(
            "sizes {}: program from the artifact, {} ({:.1} ms)",
            tpuc_runtime::symbolic::describe_bindings(&first.sizes),
            match report.compile {
                tpuc_runtime::CompileSource::Compiled => "compiled",
                tpuc_runtime::CompileSource::Cache => "executable cache hit",
            },
            report.compile_ms
        );
    }
    Ok(session)
}

/// The full `tpuc` specializes a dynamic artifact's program for sizes it holds none
/// for; the runtime-only one cannot (it links no compiler).
#[cfg(feature = "compiler")]
fn specializer() -> Option<tpuc_runtime::session::Specializer> {
    Some(Arc::new(|dir, manifest, sizes| {
        tpuc_compiler::dynamic::specialize_artifact(dir, manifest, sizes).map_err(|e| e.to_string())
    }))
}

#[cfg(not(feature = "compiler"))]
fn specializer() -> Option<tpuc_runtime::session::Specializer> {
    None
}

/// `progress`, and a line on stdout each time a dynamic artifact meets new sizes:
/// whether the program was specialized now or came from the artifact, and whether its
/// executable was compiled or found in the cache.
fn with_specializations(
    progress: Option<tpuc_runtime::ProgressFn>,
) -> Option<tpuc_runtime::ProgressFn> {
    Some(Arc::new(move |event: &LoadEvent<'_>| {
        if let LoadEvent::Specialized {
            sizes,
            specialized,
            source,
            elapsed,
        } = event
        {
            let program = match specialized {
                Some(t) => format!("specialized now ({:.1} ms)", t.as_secs_f64() * 1e3),
                None => "program from the artifact".to_string(),
            };
            let executable = match source {
                tpuc_runtime::CompileSource::Compiled => "compiled",
                tpuc_runtime::CompileSource::Cache => "executable cache hit",
            };
            outln!(
                "sizes {}: {program}, {executable} ({:.1} ms)",
                tpuc_runtime::symbolic::describe_bindings(sizes),
                elapsed.as_secs_f64() * 1e3
            );
        }
        if let Some(p) = &progress {
            p(event);
        }
    }))
}

/// Progress of a load on stderr when it is a terminal: the compile, then weight
/// megabytes (redrawn at most every 1%, so huge checkpoints do not flood the terminal).
fn terminal_progress() -> Option<tpuc_runtime::ProgressFn> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let last = AtomicU64::new(u64::MAX);
    Some(Arc::new(move |event: &LoadEvent<'_>| match event {
        LoadEvent::CompileStart { program_bytes } => err!(
            "\r\x1b[2Kcompiling the program ({})...",
            size(*program_bytes as u64)
        ),
        LoadEvent::CompileEnd { .. } | LoadEvent::UploadEnd { .. } => err!("\r\x1b[2K"),
        LoadEvent::UploadStart { total_bytes, .. } => {
            last.store(u64::MAX, Ordering::Relaxed);
            err!("\r\x1b[2Kuploading weights: 0 / {}", size(*total_bytes))
        }
        LoadEvent::WeightUploaded {
            uploaded_bytes,
            total_bytes,
            ..
        } => {
            let pct = (uploaded_bytes * 100)
                .checked_div(*total_bytes)
                .unwrap_or(100);
            if last.swap(pct, Ordering::Relaxed) != pct {
                err!(
                    "\r\x1b[2Kuploading weights: {} / {} ({pct}%)",
                    size(*uploaded_bytes),
                    size(*total_bytes)
                );
            }
        }
        _ => {}
    }))
}

/// `1234567` as `1.2 MB`.
pub fn size(bytes: u64) -> String {
    let b = bytes as f64;
    if b < 1e3 {
        format!("{bytes} B")
    } else if b < 1e6 {
        format!("{:.1} KB", b / 1e3)
    } else if b < 1e9 {
        format!("{:.1} MB", b / 1e6)
    } else {
        format!("{:.2} GB", b / 1e9)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_options_parse_by_shape() {
        let p = |s| parse_client_option(s).unwrap().1;
        assert_eq!(p("asynchronous=false"), NamedValue::Bool(false));
        assert_eq!(p("cpu_device_count=4"), NamedValue::Int64(4));
        assert_eq!(p("wrap=1,0,1"), NamedValue::Int64List(vec![1, 0, 1]));
        assert_eq!(p("memory_fraction=0.5"), NamedValue::Float(0.5));
        assert_eq!(p("platform=cuda"), NamedValue::String("cuda".into()));
        assert!(parse_client_option("novalue").is_err());
        assert!(parse_client_option("=1").is_err());
    }

    #[test]
    fn sizes_read_well() {
        assert_eq!(size(12), "12 B");
        assert_eq!(size(57_300), "57.3 KB");
        assert_eq!(size(1_250_000), "1.2 MB");
        assert_eq!(size(3_400_000_000), "3.40 GB");
    }
}
