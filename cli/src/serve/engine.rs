//! The scheduler: one thread owns the [`ProgramSet`] and runs it step by step.
//!
//! Each iteration takes the requests that arrived, gives each free slot the oldest
//! waiting one, runs one prompt chunk of every sequence still reading its prompt
//! (chunks interleave with decode steps, so a long prompt does not stall the others),
//! then one decode step over every slot. A sequence leaves its slot when it samples a
//! stop token, reaches `max_tokens` or the end of the cache, or when its client is
//! gone (the receiver of its events dropped: a disconnect, or a stop string the HTTP
//! side found); the slot takes a new request at the next iteration.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::mpsc::UnboundedSender;
use tpuc_runtime::serving::{ProgramSet, Sampled, Sampling};

use super::metrics::Metrics;

/// What a request asks of the engine (already checked: the prompt and `max_tokens`
/// fit the cache).
pub struct Request {
    pub prompt: Vec<i64>,
    pub max_tokens: usize,
    pub sampling: Sampling,
    pub stop_ids: Vec<i64>,
    pub events: UnboundedSender<Event>,
    pub arrived: Instant,
}

/// What the engine tells a request's handler, in order: tokens, then one `Done` or
/// `Error`.
#[derive(Debug)]
pub enum Event {
    Token(Sampled),
    Done(Finish),
    Error(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finish {
    /// A stop token was sampled (not sent as a token).
    Stop,
    /// `max_tokens` tokens, or the end of the cache.
    Length,
}

impl Finish {
    pub fn reason(self) -> &'static str {
        match self {
            Finish::Stop => "stop",
            Finish::Length => "length",
        }
    }
}

struct Sequence {
    req: Request,
    /// Prompt tokens written so far (the prompt is read while this is below its
    /// length).
    prefilled: usize,
    /// The last token and its position (decode phase).
    last: i64,
    position: usize,
    generated: usize,
    last_token_at: Instant,
}

impl Sequence {
    /// Its whole prompt is in the cache: it takes part in decode steps.
    fn decoding(&self) -> bool {
        self.prefilled >= self.req.prompt.len()
    }
}

enum Outcome {
    Continue,
    Leave,
}

pub fn run(mut set: ProgramSet, requests: mpsc::Receiver<Request>, metrics: Arc<Metrics>) {
    let m = set.manifest().clone();
    let chunk = m.chunk();
    let mut waiting: VecDeque<Request> = VecDeque::new();
    let mut slots: Vec<Option<Sequence>> = (0..m.max_batch).map(|_| None).collect();
    loop {
        let idle = slots.iter().all(Option::is_none) && waiting.is_empty();
        if idle {
            match requests.recv() {
                Ok(r) => waiting.push_back(r),
                // Every sender gone (the server stopped) and nothing in flight.
                Err(_) => return,
            }
        }
        while let Ok(r) = requests.try_recv() {
            waiting.push_back(r);
        }
        for slot in slots.iter_mut().filter(|s| s.is_none()) {
            let Some(req) = waiting.pop_front() else {
                break;
            };
            if req.events.is_closed() {
                continue;
            }
            *slot = Some(Sequence {
                req,
                prefilled: 0,
                last: 0,
                position: 0,
                generated: 0,
                last_token_at: Instant::now(),
            });
        }
        metrics
            .queue_depth
            .store(waiting.len() as u64, Ordering::Relaxed);

        // One prompt chunk of each sequence still reading its prompt.
        for (i, slot) in slots.iter_mut().enumerate() {
            let Some(seq) = slot else { continue };
            if seq.decoding() {
                continue;
            }
            let start = seq.prefilled;
            let end = (start + chunk).min(seq.req.prompt.len());
            let result = set.prefill(i, start, &seq.req.prompt[start..end], seq.req.sampling);
            let outcome = match result {
                Err(e) => {
                    let _ = seq.req.events.send(Event::Error(e.to_string()));
                    Outcome::Leave
                }
                Ok(_) if end < seq.req.prompt.len() => {
                    seq.prefilled = end;
                    Outcome::Continue
                }
                Ok(first) => {
                    seq.prefilled = end;
                    seq.position = end;
                    metrics
                        .time_to_first_token
                        .observe(seq.req.arrived.elapsed().as_secs_f64());
                    deliver(seq, first, m.max_len, &metrics)
                }
            };
            if let Outcome::Leave = outcome {
                *slot = None;
            }
        }

        // One decode step over every slot; those without a decoding sequence sit at
        // the free position.
        let decoding = slots
            .iter()
            .filter(|s| s.as_ref().is_some_and(Sequence::decoding))
            .count();
        if decoding == 0 {
            continue;
        }
        let mut tokens = vec![0i64; m.max_batch];
        let mut positions = vec![m.free_position; m.max_batch];
        let mut sampling = vec![Sampling::GREEDY; m.max_batch];
        for (i, seq) in slots.iter().enumerate() {
            if let Some(q) = seq.as_ref().filter(|q| q.decoding()) {
                tokens[i] = q.last;
                positions[i] = q.position as i64;
                sampling[i] = q.req.sampling;
            }
        }
        metrics.steps.fetch_add(1, Ordering::Relaxed);
        metrics
            .step_slots_used
            .fetch_add(decoding as u64, Ordering::Relaxed);
        match set.decode(&tokens, &positions, &sampling) {
            Err(e) => {
                // The cache may be gone with the failed step: every sequence ends.
                let message = e.to_string();
                for slot in slots.iter_mut() {
                    if let Some(q) = slot.take() {
                        let _ = q.req.events.send(Event::Error(message.clone()));
                    }
                }
            }
            Ok(next) => {
                for (i, slot) in slots.iter_mut().enumerate() {
                    let Some(q) = slot.as_mut().filter(|q| q.decoding()) else {
                        continue;
                    };
                    q.position += 1;
                    if let Outcome::Leave = deliver(q, next[i], m.max_len, &metrics) {
                        *slot = None;
                    }
                }
            }
        }
    }
}

/// Hands a sampled token to the sequence's client; whether the sequence goes on.
fn deliver(seq: &mut Sequence, t: Sampled, max_len: usize, metrics: &Metrics) -> Outcome {
    let now = Instant::now();
    if seq.generated > 0 {
        metrics
            .inter_token
            .observe((now - seq.last_token_at).as_secs_f64());
    }
    seq.last_token_at = now;
    if seq.req.stop_ids.contains(&t.token) {
        let _ = seq.req.events.send(Event::Done(Finish::Stop));
        return Outcome::Leave;
    }
    seq.generated += 1;
    metrics.tokens_out.fetch_add(1, Ordering::Relaxed);
    if seq.req.events.send(Event::Token(t)).is_err() {
        return Outcome::Leave; // the client is gone
    }
    seq.last = t.token;
    // The next step would write this token at `position`: the cache ends at max_len - 1.
    if seq.generated >= seq.req.max_tokens || seq.position >= max_len {
        let _ = seq.req.events.send(Event::Done(Finish::Length));
        return Outcome::Leave;
    }
    Outcome::Continue
}
