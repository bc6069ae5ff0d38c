//! `tpuc bench`: load time, per-call latency percentiles and throughput of an artifact.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use tpuc_runtime::{Buffer, CompileSource, DType, HostTensor, Session};

pub struct BenchArgs {
    pub artifact: PathBuf,
    pub inputs: Vec<PathBuf>,
    pub iterations: usize,
    pub warmup: usize,
    pub resident: bool,
    pub upload_per_call: bool,
    pub zeros: bool,
    pub client: crate::load::ClientArgs,
}

/// Latency summary of one measured loop.
pub struct Summary {
    pub min: Duration,
    pub p50: Duration,
    pub p90: Duration,
    pub p99: Duration,
    pub mean: Duration,
    /// Calls per second over the whole timed loop (timer overhead included).
    pub calls_per_second: f64,
}

/// Nearest-rank percentile of sorted samples.
fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn summarize(mut samples: Vec<Duration>, total: Duration) -> Summary {
    samples.sort_unstable();
    let sum: Duration = samples.iter().sum();
    Summary {
        min: samples[0],
        p50: percentile(&samples, 50.0),
        p90: percentile(&samples, 90.0),
        p99: percentile(&samples, 99.0),
        mean: sum / samples.len() as u32,
        calls_per_second: samples.len() as f64 / total.as_secs_f64(),
    }
}

/// Runs `call` `warmup` times untimed, then `iterations` times, timing each call.
fn measure(
    warmup: usize,
    iterations: usize,
    mut call: impl FnMut() -> Result<(), String>,
) -> Result<Summary, String> {
    for _ in 0..warmup {
        call()?;
    }
    let mut samples = Vec::with_capacity(iterations);
    let start = Instant::now();
    for _ in 0..iterations {
        let t = Instant::now();
        call()?;
        samples.push(t.elapsed());
    }
    Ok(summarize(samples, start.elapsed()))
}

/// `1234 ns` as `1.23 µs`, `45.6 ms`, ...
pub fn human(d: Duration) -> String {
    let ns = d.as_nanos() as f64;
    if ns < 1e3 {
        format!("{ns:.0} ns")
    } else if ns < 1e6 {
        format!("{:.2} µs", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

fn print_summary(label: &str, s: &Summary) {
    outln!("{label}");
    outln!(
        "  latency:    p50 {}  p90 {}  p99 {}  min {}  mean {}",
        human(s.p50),
        human(s.p90),
        human(s.p99),
        human(s.min),
        human(s.mean)
    );
    outln!("  throughput: {:.0} calls/s", s.calls_per_second);
}

/// Exactly representable small values of each dtype: `i` wrapped into 0..256 for the
/// narrow types (i8 into 0..100, bool into 0..2), `i` itself for the wide ones.
fn iota_value(dtype: DType, i: usize) -> Vec<u8> {
    match dtype {
        DType::F64 => (i as f64).to_le_bytes().to_vec(),
        DType::F32 => (i as f32).to_le_bytes().to_vec(),
        DType::F16 => f16_bits((i % 256) as u32).to_le_bytes().to_vec(),
        // bf16 is the top half of an f32; integers below 256 are exact.
        DType::Bf16 => (((i % 256) as f32).to_bits() >> 16)
            .to_le_bytes()
            .into_iter()
            .take(2)
            .collect(),
        DType::I64 => (i as i64).to_le_bytes().to_vec(),
        DType::I32 => (i as i32).to_le_bytes().to_vec(),
        DType::I16 => ((i % 32768) as i16).to_le_bytes().to_vec(),
        DType::I8 => vec![(i % 100) as u8],
        DType::U8 => vec![(i % 256) as u8],
        DType::Bool => vec![(i % 2) as u8],
        // (i, 0): the real part as its float, imaginary part zero.
        DType::C64 => [(i as f32).to_le_bytes(), 0f32.to_le_bytes()].concat(),
        DType::C128 => [(i as f64).to_le_bytes(), 0f64.to_le_bytes()].concat(),
    }
}

/// IEEE half bits of a small non-negative integer (< 2048, exact).
fn f16_bits(n: u32) -> u16 {
    if n == 0 {
        return 0;
    }
    let e = 31 - n.leading_zeros(); // floor(log2 n)
    let mantissa = (n << (10 - e)) & 0x3ff;
    (((e + 15) << 10) | mantissa) as u16
}

/// Inputs of the manifest's dtypes and shapes, zeros or iota; a dynamic artifact's at
/// the sizes of its first specialization (the example inputs').
fn generated_inputs(session: &Session, zeros: bool) -> Result<Vec<HostTensor>, String> {
    let dynamic = session.manifest().dynamic.as_ref();
    session
        .inputs()
        .iter()
        .enumerate()
        .map(|(j, arg)| {
            let mut arg = (*arg).clone();
            if let (Some(d), Some(first)) =
                (dynamic, dynamic.and_then(|d| d.specializations.first()))
            {
                if let Some(dims) = d.inputs.get(j) {
                    arg.shape = dims
                        .iter()
                        .map(|dim| dim.eval(&first.sizes).unwrap_or(-1))
                        .collect();
                }
            }
            if arg.shape.iter().any(|&d| d < 0) {
                return Err(format!(
                    "input `{}` has a dynamic shape {:?}: pass the inputs with --input",
                    arg.name, arg.shape
                ));
            }
            let n: usize = arg.shape.iter().map(|&d| d as usize).product();
            let data = if zeros {
                vec![0u8; n * arg.dtype.size_in_bytes()]
            } else {
                (0..n).flat_map(|i| iota_value(arg.dtype, i)).collect()
            };
            Ok(HostTensor {
                dtype: arg.dtype,
                shape: arg.shape.clone(),
                data,
            })
        })
        .collect()
}

pub fn bench(args: &BenchArgs) -> Result<ExitCode, String> {
    if args.iterations == 0 {
        return Err("--iterations must be at least 1".into());
    }
    let devices = crate::load::artifact_devices(&args.artifact);
    let (client, opened) = crate::load::open_client(
        args.client.plugin.as_deref(),
        &args.client.client_options,
        devices,
    )?;
    let t = Instant::now();
    let session = crate::load::load_session(&args.artifact, &client, args.client.no_cache)?;
    let session_load = t.elapsed();

    let inputs = if args.inputs.is_empty() {
        generated_inputs(&session, args.zeros)?
    } else {
        args.inputs
            .iter()
            .map(|p| tpuc_runtime::npy::read_npy(p).map_err(|e| e.to_string()))
            .collect::<Result<Vec<_>, _>>()?
    };

    let manifest = session.manifest();
    let weights = manifest
        .arguments
        .iter()
        .filter(|a| a.kind != tpuc_runtime::manifest::ArgumentKind::UserInput)
        .count();
    outln!(
        "artifact:   {} ({} input(s), {} output(s), {} weight argument(s))",
        args.artifact.display(),
        inputs.len(),
        session.outputs().len(),
        weights
    );
    let plugin = client.plugin();
    outln!(
        "plugin:     {} (platform {}, PJRT C API {})",
        opened.plugin_path.display(),
        client.platform_name(),
        plugin.api_version()
    );
    let report = session.load_report();
    outln!(
        "load:       {} = plugin {} + client {} + artifact {}",
        human(opened.plugin_load + opened.client_create + session_load),
        human(opened.plugin_load),
        human(opened.client_create),
        human(session_load)
    );
    outln!(
        "            executable {} in {}; {} weight(s), {} uploaded in {}",
        match report.compile {
            CompileSource::Cache => "loaded from the cache",
            CompileSource::Compiled if args.client.no_cache => "compiled (cache bypassed)",
            CompileSource::Compiled if report.cache_entry.is_some() => {
                "compiled and stored in the cache"
            }
            CompileSource::Compiled => "compiled (no cache directory)",
        },
        human(Duration::from_secs_f64(report.compile_ms / 1e3)),
        report.weight_count,
        crate::load::size(report.weight_bytes),
        human(Duration::from_secs_f64(report.weights_upload_ms / 1e3)),
    );
    outln!(
        "inputs:     {}",
        if args.inputs.is_empty() {
            if args.zeros {
                "generated (zeros)"
            } else {
                "generated (iota)"
            }
        } else {
            "from .npy files"
        }
    );
    outln!(
        "calls:      {} timed after {} warm-up, per mode",
        args.iterations,
        args.warmup
    );

    if args.resident && session.manifest().partitioning.is_some() {
        let uploaded = session.upload_sharded(&inputs).map_err(|e| e.to_string())?;
        let s = measure(args.warmup, args.iterations, || {
            session
                .run_sharded(&uploaded)
                .map(drop)
                .map_err(|e| e.to_string())
        })?;
        print_summary(
            "resident: inputs split on the mesh's devices, output shards left there (Session::run_sharded)",
            &s,
        );
    } else if args.resident {
        let buffers = inputs
            .iter()
            .map(|t| client.buffer_from_host(t, 0).map_err(|e| e.to_string()))
            .collect::<Result<Vec<_>, _>>()?;
        let refs: Vec<&Buffer> = buffers.iter().collect();
        let s = measure(args.warmup, args.iterations, || {
            session
                .run_buffers(&refs)
                .map(drop)
                .map_err(|e| e.to_string())
        })?;
        print_summary(
            "resident: inputs on the device, outputs left there (Session::run_buffers)",
            &s,
        );
    }
    if args.upload_per_call {
        let s = measure(args.warmup, args.iterations, || {
            session.run(&inputs).map(drop).map_err(|e| e.to_string())
        })?;
        print_summary(
            "upload per call: host inputs uploaded, outputs downloaded (Session::run)",
            &s,
        );
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let samples: Vec<Duration> = (1..=100).map(Duration::from_micros).collect();
        let s = summarize(samples, Duration::from_millis(10));
        assert_eq!(s.min, Duration::from_micros(1));
        assert_eq!(s.p50, Duration::from_micros(50));
        assert_eq!(s.p90, Duration::from_micros(90));
        assert_eq!(s.p99, Duration::from_micros(99));
        assert_eq!(s.mean, Duration::from_nanos(50_500));
        assert!((s.calls_per_second - 10_000.0).abs() < 1e-6);
        let one = summarize(vec![Duration::from_nanos(7)], Duration::from_nanos(7));
        assert_eq!(one.p99, Duration::from_nanos(7));
    }

    #[test]
    fn generated_values_are_exact() {
        for n in [0u32, 1, 2, 3, 7, 100, 255, 1000] {
            let bits = f16_bits(n);
            // Decode the normal half back.
            let v = if bits == 0 {
                0.0
            } else {
                let e = ((bits >> 10) & 0x1f) as i32 - 15;
                (1.0 + (bits & 0x3ff) as f64 / 1024.0) * 2f64.powi(e)
            };
            assert_eq!(v, n as f64);
        }
        assert_eq!(iota_value(DType::Bf16, 3), vec![0x40, 0x40]);
        assert_eq!(iota_value(DType::Bool, 3), vec![1]);
    }
}
