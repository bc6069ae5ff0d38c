//! `tpuc devices`: every PJRT plugin tpuc can find, what it reports, and its devices.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use tpuc_runtime::discover;
use tpuc_runtime::pjrt::NamedValue;
use tpuc_runtime::{ClientOptions, Plugin, RuntimeError};

/// A plugin to list and why it is listed.
struct Candidate {
    path: PathBuf,
    origin: &'static str,
}

/// `--plugin`, then `TPUC_PJRT_PLUGIN`, then every plugin discovery finds; each file
/// once (by canonical path). A flag or variable naming a missing file is listed too.
fn candidates(explicit: Option<&Path>) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = Vec::new();
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut push = |path: PathBuf, origin: &'static str| {
        let key = path.canonicalize().unwrap_or_else(|_| path.clone());
        if !seen.contains(&key) {
            seen.push(key);
            out.push(Candidate { path, origin });
        }
    };
    if let Some(p) = explicit {
        push(p.to_path_buf(), "--plugin");
    }
    if let Some(v) = std::env::var_os(discover::PLUGIN_ENV).filter(|v| !v.is_empty()) {
        push(PathBuf::from(v), "$TPUC_PJRT_PLUGIN");
    }
    for p in discover::all_plugins() {
        push(p, "found");
    }
    out
}

pub fn devices(explicit: Option<&Path>) -> Result<ExitCode, String> {
    let found = candidates(explicit);
    if found.is_empty() {
        return Err(RuntimeError::PluginNotFound {
            searched: discover::searched_locations(),
        }
        .to_string());
    }
    let mut usable = 0;
    for (i, c) in found.iter().enumerate() {
        if i > 0 {
            outln!();
        }
        outln!("plugin {} ({})", c.path.display(), c.origin);
        if !c.path.is_file() {
            outln!("  error: no such file");
            continue;
        }
        let plugin = match Plugin::load(&c.path) {
            Ok(p) => p,
            Err(e) => {
                outln!("  error: {e}");
                continue;
            }
        };
        outln!("  PJRT C API:  {}", plugin.api_version());
        outln!(
            "  StableHLO:   current {}, minimum {}",
            plugin
                .stablehlo_current_version()
                .as_deref()
                .unwrap_or("(not reported)"),
            plugin
                .stablehlo_minimum_version()
                .as_deref()
                .unwrap_or("(not reported)")
        );
        if let Some(NamedValue::String(v)) = plugin.attribute("xla_version") {
            outln!("  XLA:         {v}");
        }
        // Default options: list what the plugin offers (the CPU plugin defaults to 4
        // devices; `tpuc run` asks for 1).
        match plugin.create_client(&ClientOptions::default()) {
            Ok(client) => {
                usable += 1;
                if client.platform_version().is_empty()
                    || client.platform_version() == client.platform_name()
                {
                    outln!("  platform:    {}", client.platform_name());
                } else {
                    outln!(
                        "  platform:    {} ({})",
                        client.platform_name(),
                        client.platform_version()
                    );
                }
                outln!("  devices:     {}", client.devices().len());
                for d in client.devices() {
                    outln!(
                        "    id {:<3} {}{}",
                        d.id,
                        d.kind,
                        if d.addressable {
                            ""
                        } else {
                            " (not addressable)"
                        }
                    );
                }
            }
            Err(e) => outln!("  error: cannot create a client: {e}"),
        }
    }
    Ok(if usable > 0 {
        ExitCode::SUCCESS
    } else {
        errln!("error: none of the plugins found is usable");
        ExitCode::FAILURE
    })
}

/// `tpuc devices --topologies`: the topology forms `tpuc compile --topology` takes, and
/// example names checked against the libtpu found (chips per slice).
pub fn topologies(libtpu: Option<&Path>) -> Result<ExitCode, String> {
    outln!("TPU topologies for `tpuc compile --topology NAME` (generation:chip grid):");
    for (generation, forms) in tpuc_runtime::tpu::TOPOLOGY_FORMS {
        let hbm = tpuc_runtime::tpu::hbm_bytes_per_chip(&format!("{generation}:"))
            .map(|b| format!("{} GiB HBM per chip", b >> 30))
            .unwrap_or_default();
        outln!("  {generation:<6} {forms}  ({hbm})");
    }
    let plugin = tpuc_runtime::tpu::load_libtpu(libtpu)?;
    outln!("checked with libtpu {}:", plugin.path().display());
    let mut ok = 0;
    for name in tpuc_runtime::tpu::EXAMPLE_TOPOLOGIES {
        match tpuc_runtime::tpu::topology(&plugin, name).and_then(|t| {
            let chips = t.num_devices().map_err(|e| e.to_string())?;
            Ok(chips)
        }) {
            Ok(devices) => {
                ok += 1;
                let chips = tpuc_runtime::tpu::chips_in(name).unwrap_or(devices);
                outln!("  {name:<12} {chips} chips, {devices} devices");
            }
            Err(e) => outln!("  {name:<12} error: {}", e.lines().next().unwrap_or("")),
        }
    }
    Ok(if ok > 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
