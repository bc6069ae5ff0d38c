//! `GET /metrics`: Prometheus' text format, from counters the handlers and the engine
//! update without locks.

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};

/// A histogram of seconds over fixed buckets.
pub struct Histogram {
    bounds: &'static [f64],
    counts: Vec<AtomicU64>,
    /// Sum in microseconds.
    sum_us: AtomicU64,
    count: AtomicU64,
}

const LATENCY_BOUNDS: &[f64] = &[
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

impl Histogram {
    fn new(bounds: &'static [f64]) -> Histogram {
        Histogram {
            bounds,
            counts: bounds.iter().map(|_| AtomicU64::new(0)).collect(),
            sum_us: AtomicU64::new(0),
            count: AtomicU64::new(0),
        }
    }

    pub fn observe(&self, seconds: f64) {
        for (b, c) in self.bounds.iter().zip(&self.counts) {
            if seconds <= *b {
                c.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.sum_us
            .fetch_add((seconds * 1e6) as u64, Ordering::Relaxed);
        self.count.fetch_add(1, Ordering::Relaxed);
    }

    fn write(&self, out: &mut String, name: &str, help: &str) {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
        for (b, c) in self.bounds.iter().zip(&self.counts) {
            let _ = writeln!(
                out,
                "{name}_bucket{{le=\"{b}\"}} {}",
                c.load(Ordering::Relaxed)
            );
        }
        let n = self.count.load(Ordering::Relaxed);
        let _ = writeln!(out, "{name}_bucket{{le=\"+Inf\"}} {n}");
        let sum = self.sum_us.load(Ordering::Relaxed) as f64 / 1e6;
        let _ = writeln!(out, "{name}_sum {sum}\n{name}_count {n}");
    }
}

pub struct Metrics {
    pub requests: AtomicU64,
    pub rejected: AtomicU64,
    pub tokens_in: AtomicU64,
    pub tokens_out: AtomicU64,
    pub queue_depth: AtomicU64,
    /// Requests accepted and not yet answered (queued or in a slot).
    pub in_flight: AtomicU64,
    pub steps: AtomicU64,
    pub step_slots_used: AtomicU64,
    pub max_batch: u64,
    pub time_to_first_token: Histogram,
    pub inter_token: Histogram,
}

impl Metrics {
    pub fn new(max_batch: usize) -> Metrics {
        let z = || AtomicU64::new(0);
        Metrics {
            requests: z(),
            rejected: z(),
            tokens_in: z(),
            tokens_out: z(),
            queue_depth: z(),
            in_flight: z(),
            steps: z(),
            step_slots_used: z(),
            max_batch: max_batch as u64,
            time_to_first_token: Histogram::new(LATENCY_BOUNDS),
            inter_token: Histogram::new(LATENCY_BOUNDS),
        }
    }

    pub fn render(&self) -> String {
        let mut out = String::new();
        let counter = |out: &mut String, name: &str, help: &str, v: &AtomicU64| {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} counter\n{name} {}",
                v.load(Ordering::Relaxed)
            );
        };
        counter(
            &mut out,
            "tpuc_requests_total",
            "Completion requests accepted.",
            &self.requests,
        );
        counter(
            &mut out,
            "tpuc_requests_rejected_total",
            "Requests refused (bad request or full queue).",
            &self.rejected,
        );
        counter(
            &mut out,
            "tpuc_prompt_tokens_total",
            "Prompt tokens read.",
            &self.tokens_in,
        );
        counter(
            &mut out,
            "tpuc_generation_tokens_total",
            "Tokens generated.",
            &self.tokens_out,
        );
        counter(
            &mut out,
            "tpuc_decode_steps_total",
            "Decode steps run.",
            &self.steps,
        );
        let _ = writeln!(
            out,
            "# HELP tpuc_queue_depth Requests waiting for a slot.\n# TYPE tpuc_queue_depth gauge\ntpuc_queue_depth {}",
            self.queue_depth.load(Ordering::Relaxed)
        );
        let steps = self.steps.load(Ordering::Relaxed);
        let used = self.step_slots_used.load(Ordering::Relaxed);
        let occupancy = if steps == 0 {
            0.0
        } else {
            used as f64 / (steps * self.max_batch) as f64
        };
        let _ = writeln!(
            out,
            "# HELP tpuc_batch_occupancy Mean share of the decode step's slots in use.\n# TYPE tpuc_batch_occupancy gauge\ntpuc_batch_occupancy {occupancy}"
        );
        self.time_to_first_token.write(
            &mut out,
            "tpuc_time_to_first_token_seconds",
            "From a request's arrival to its first token.",
        );
        self.inter_token.write(
            &mut out,
            "tpuc_inter_token_latency_seconds",
            "Between a sequence's tokens.",
        );
        out
    }
}
