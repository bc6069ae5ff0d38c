//! `tpuc serve`: an OpenAI-compatible HTTP server over a serving directory
//! (`python -m tpuc.llm export`), with continuous batching.
//!
//! - `engine.rs`: the scheduler thread that owns the programs (slots, prompt chunks
//!   interleaved with decode steps, sequences joining and leaving between steps).
//! - `http.rs`: the endpoints (axum): requests checked and turned into engine requests,
//!   answers whole or streamed (server-sent events), OpenAI's error objects.
//! - `text.rs`: tokenizer, chat template, incremental text and stop strings.
//! - `metrics.rs`: `GET /metrics` (Prometheus).
//!
//! Nothing is compiled at start-up beyond what the executable cache lacks: the
//! programs were compiled ahead of time, and their executables come from the cache on
//! every start after the first (the start-up line says how many were compiled).

pub(crate) mod engine;
mod http;
pub(crate) mod metrics;
mod text;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use tpuc_runtime::serving::ProgramSet;
use tpuc_runtime::session::CompileSource;
use tpuc_runtime::{CacheMode, LoadOptions};

use crate::load::{open_client, ClientArgs};

#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// The serving directory (`python -m tpuc.llm export MODEL_DIR -o SERVE_DIR`).
    pub dir: PathBuf,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Port to listen on (0: any free port; the start-up line says which).
    #[arg(long, default_value_t = 8000)]
    pub port: u16,
    /// Requests that may wait for a slot; past it a request gets 429.
    #[arg(long, default_value_t = 256)]
    pub max_queue: usize,
    /// The model name clients send (default: the serving manifest's).
    #[arg(long)]
    pub served_model_name: Option<String>,
    #[command(flatten)]
    pub client: ClientArgs,
}

pub fn serve(args: &ServeArgs) -> Result<std::process::ExitCode, String> {
    let t0 = Instant::now();
    let set = load_set(&args.dir, &args.client)?;
    let reports = set.load_reports();
    let compiled = reports
        .iter()
        .filter(|(_, r)| r.compile == CompileSource::Compiled)
        .count();
    let programs = reports.len();
    let m = set.manifest().clone();
    let text = text::Text::load(&args.dir)?;
    let model = args
        .served_model_name
        .clone()
        .unwrap_or_else(|| m.model.clone());

    let metrics = Arc::new(metrics::Metrics::new(m.max_batch));
    let (tx, rx) = std::sync::mpsc::channel();
    let engine_metrics = metrics.clone();
    let engine = std::thread::Builder::new()
        .name("tpuc-engine".into())
        .spawn(move || engine::run(set, rx, engine_metrics))
        .map_err(|e| format!("starting the engine: {e}"))?;

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("starting the server: {e}"))?;
    let shared = Arc::new(http::Shared::new(
        model.clone(),
        m.clone(),
        text,
        tx,
        metrics,
        args.max_queue,
    ));
    let addr = format!("{}:{}", args.host, args.port);
    let result: Result<(), String> = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(&addr)
            .await
            .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
        let local: SocketAddr = listener.local_addr().map_err(|e| e.to_string())?;
        eprintln!(
            "tpuc serve: {model} at http://{local} ({} slots, {} tokens each, prompt buckets {:?}; {programs} programs loaded in {:.1} s, {compiled} compiled, {} from the cache)",
            m.max_batch,
            m.max_len,
            m.prefill_buckets,
            t0.elapsed().as_secs_f64(),
            programs - compiled
        );
        axum::serve(listener, http::router(shared.clone()))
            .with_graceful_shutdown(shutdown_signal())
            .await
            .map_err(|e| format!("server: {e}"))
    });
    // Stop taking requests; the engine finishes what it holds, then ends.
    shared.close();
    drop(shared);
    let _ = engine.join();
    result?;
    eprintln!("tpuc serve: stopped");
    Ok(std::process::ExitCode::SUCCESS)
}

/// Opens the plugin's client and loads a serving directory's programs on it, through
/// the executable cache unless `--no-cache` (its warnings printed), for `tpuc serve`
/// and `tpuc generate`.
pub(crate) fn load_set(dir: &Path, client: &ClientArgs) -> Result<ProgramSet, String> {
    let (c, _) = open_client(client.plugin.as_deref(), &client.client_options, 1)?;
    let options = LoadOptions {
        cache: if client.no_cache {
            CacheMode::Bypass
        } else {
            CacheMode::ReadWrite
        },
        ..LoadOptions::default()
    };
    let set = ProgramSet::load(dir, &c, &options).map_err(|e| e.to_string())?;
    for (program, report) in set.load_reports() {
        for w in &report.cache_warnings {
            eprintln!("warning: executable cache ({program}): {w}");
        }
    }
    Ok(set)
}

/// Ctrl-C or SIGTERM: stop accepting, let the requests in flight finish.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
    eprintln!("tpuc serve: draining the requests in flight");
}
