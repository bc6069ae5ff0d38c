//! The HTTP endpoints, in OpenAI's shapes: `POST /v1/completions`,
//! `POST /v1/chat/completions` (both with `stream`), `GET /v1/models`, `GET /health`,
//! `GET /metrics`. Every bad request gets a 400 with an `error` object naming the
//! field; a full queue gets 429; nothing a client sends stops the server.

use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::sse::{Event as SseEvent, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};
use tokio::sync::mpsc as tmpsc;
use tokio_stream::wrappers::UnboundedReceiverStream;
use tpuc_runtime::serving::{Sampling, ServeManifest};

use super::engine::{Event, Finish, Request};
use super::metrics::Metrics;
use super::text::{Incremental, Text};

pub struct Shared {
    model: String,
    manifest: ServeManifest,
    text: Text,
    engine: Mutex<Option<mpsc::Sender<Request>>>,
    metrics: Arc<Metrics>,
    max_queue: usize,
    next_id: AtomicU64,
    next_seed: AtomicU64,
}

impl Shared {
    pub fn new(
        model: String,
        manifest: ServeManifest,
        text: Text,
        engine: mpsc::Sender<Request>,
        metrics: Arc<Metrics>,
        max_queue: usize,
    ) -> Shared {
        Shared {
            model,
            manifest,
            text,
            engine: Mutex::new(Some(engine)),
            metrics,
            max_queue,
            next_id: AtomicU64::new(0),
            next_seed: AtomicU64::new(0),
        }
    }

    /// No more requests reach the engine.
    pub fn close(&self) {
        if let Ok(mut e) = self.engine.lock() {
            e.take();
        }
    }
}

pub fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/v1/completions", post(completions))
        .route("/v1/chat/completions", post(chat_completions))
        .route("/v1/models", get(models))
        .route("/health", get(|| async { "ok" }))
        .route("/metrics", get(metrics))
        .fallback(|| async {
            error(StatusCode::NOT_FOUND, "no such endpoint (POST /v1/completions, POST /v1/chat/completions, GET /v1/models, /health, /metrics)", None)
        })
        .with_state(shared)
}

/// OpenAI's error object.
fn error(status: StatusCode, message: &str, param: Option<&str>) -> Response {
    let kind = match status {
        StatusCode::TOO_MANY_REQUESTS => "rate_limit_error",
        StatusCode::BAD_REQUEST | StatusCode::NOT_FOUND => "invalid_request_error",
        _ => "server_error",
    };
    (
        status,
        Json(json!({"error": {"message": message, "type": kind, "param": param, "code": Value::Null}})),
    )
        .into_response()
}

struct Bad(String, Option<&'static str>);

fn bad<T>(message: impl Into<String>, param: &'static str) -> Result<T, Bad> {
    Err(Bad(message.into(), Some(param)))
}

async fn models(State(s): State<Arc<Shared>>) -> Json<Value> {
    Json(json!({"object": "list", "data": [{
        "id": s.model, "object": "model", "created": 0, "owned_by": "tpuc",
        "max_model_len": s.manifest.max_len,
    }]}))
}

async fn metrics(State(s): State<Arc<Shared>>) -> impl IntoResponse {
    (
        [("content-type", "text/plain; version=0.0.4")],
        s.metrics.render(),
    )
}

/// What both endpoints take, checked.
struct Params {
    prompt: Vec<i64>,
    max_tokens: usize,
    sampling: Sampling,
    stops: Vec<String>,
    stream: bool,
    include_usage: bool,
    /// vLLM's `ignore_eos`: generate `max_tokens` tokens whatever is sampled.
    ignore_eos: bool,
}

fn number(body: &Value, key: &'static str, default: f64) -> Result<f64, Bad> {
    match &body[key] {
        Value::Null => Ok(default),
        Value::Number(n) => Ok(n.as_f64().unwrap_or(default)),
        other => bad(format!("`{key}` must be a number, got {other}"), key),
    }
}

fn boolean(body: &Value, key: &'static str) -> Result<bool, Bad> {
    match &body[key] {
        Value::Null => Ok(false),
        Value::Bool(b) => Ok(*b),
        other => bad(format!("`{key}` must be true or false, got {other}"), key),
    }
}

fn integer(body: &Value, key: &'static str) -> Result<Option<i64>, Bad> {
    match &body[key] {
        Value::Null => Ok(None),
        Value::Number(n) if n.as_i64().is_some() => Ok(n.as_i64()),
        other => bad(format!("`{key}` must be an integer, got {other}"), key),
    }
}

impl Shared {
    fn parse_body(&self, body: &Bytes) -> Result<Value, Bad> {
        let v: Value = serde_json::from_slice(body)
            .map_err(|e| Bad(format!("the body is not valid JSON: {e}"), None))?;
        if !v.is_object() {
            return Err(Bad("the body must be a JSON object".into(), None));
        }
        match &v["model"] {
            Value::Null => {}
            Value::String(m) if *m == self.model => {}
            other => {
                return bad(
                    format!(
                        "model {other} is not served here (this server serves \"{}\")",
                        self.model
                    ),
                    "model",
                )
            }
        }
        Ok(v)
    }

    /// Checks everything but the prompt, which `prompt` is.
    fn params(
        &self,
        body: &Value,
        prompt: Vec<i64>,
        default_max: Option<usize>,
    ) -> Result<Params, Bad> {
        let m = &self.manifest;
        if prompt.is_empty() {
            return bad("the prompt is empty", "prompt");
        }
        if let Some(t) = prompt.iter().find(|&&t| t < 0 || t >= m.vocab_size) {
            return bad(
                format!(
                    "token id {t} is outside the vocabulary (0..{})",
                    m.vocab_size
                ),
                "prompt",
            );
        }
        if prompt.len() >= m.max_len {
            return bad(
                format!(
                    "the prompt is {} tokens; this model was compiled for {} tokens in all (prompt and completion)",
                    prompt.len(),
                    m.max_len
                ),
                "prompt",
            );
        }
        let room = m.max_len - prompt.len();
        let max_tokens = match integer(body, "max_tokens")?.or(integer(body, "max_completion_tokens")?) {
            None => default_max.unwrap_or(room).min(room),
            Some(n) if n < 1 => return bad(format!("max_tokens must be at least 1, got {n}"), "max_tokens"),
            Some(n) if n as usize > room => {
                return bad(
                    format!(
                        "max_tokens {n} with a prompt of {} tokens exceeds the {} tokens this model was compiled for (at most {room})",
                        prompt.len(),
                        m.max_len
                    ),
                    "max_tokens",
                )
            }
            Some(n) => n as usize,
        };
        if let Some(n) = integer(body, "n")? {
            if n != 1 {
                return bad("only n = 1 is served", "n");
            }
        }
        let temperature = number(body, "temperature", 1.0)?;
        if !(0.0..=100.0).contains(&temperature) {
            return bad(
                format!("temperature must be in [0, 100], got {temperature}"),
                "temperature",
            );
        }
        let top_p = number(body, "top_p", 1.0)?;
        if !(top_p > 0.0 && top_p <= 1.0) {
            return bad(format!("top_p must be in (0, 1], got {top_p}"), "top_p");
        }
        let min_p = number(body, "min_p", 0.0)?;
        if !(0.0..=1.0).contains(&min_p) {
            return bad(format!("min_p must be in [0, 1], got {min_p}"), "min_p");
        }
        let top_k = integer(body, "top_k")?.unwrap_or(0);
        if top_k < -1 {
            return bad(
                format!("top_k must be -1 or 0 (all) or positive, got {top_k}"),
                "top_k",
            );
        }
        let seed = match integer(body, "seed")? {
            Some(s) => s,
            // Unseeded: a different draw per request.
            None => {
                let t = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map(|d| d.as_nanos() as i64)
                    .unwrap_or(0);
                t ^ (self.next_seed.fetch_add(1, Ordering::Relaxed) as i64)
                    .wrapping_mul(0x9E37_79B9)
            }
        };
        let stops = match &body["stop"] {
            Value::Null => Vec::new(),
            Value::String(s) => vec![s.clone()],
            Value::Array(a) if a.iter().all(Value::is_string) && a.len() <= 16 => a
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            other => {
                return bad(
                    format!("`stop` must be a string or a list of at most 16 strings, got {other}"),
                    "stop",
                )
            }
        };
        if stops.iter().any(String::is_empty) {
            return bad("a stop string is empty", "stop");
        }
        if !stops.is_empty() && !self.text.has_tokenizer() {
            return bad(
                "stop strings need the model's tokenizer, which this server was not given",
                "stop",
            );
        }
        let stream = boolean(body, "stream")?;
        let include_usage = body["stream_options"]["include_usage"]
            .as_bool()
            .unwrap_or(false);
        let ignore_eos = boolean(body, "ignore_eos")?;
        Ok(Params {
            prompt,
            max_tokens,
            sampling: Sampling {
                temperature: temperature as f32,
                top_k: top_k.max(0),
                top_p: top_p as f32,
                min_p: min_p as f32,
                seed,
            },
            stops,
            stream,
            include_usage,
            ignore_eos,
        })
    }

    /// Queues `p` with the engine: the receiver of its events, and the guard that
    /// counts it in flight.
    fn submit(
        self: &Arc<Self>,
        p: &Params,
    ) -> Result<(tmpsc::UnboundedReceiver<Event>, InFlight), Response> {
        let limit = (self.manifest.max_batch + self.max_queue) as u64;
        if self.metrics.in_flight.load(Ordering::Relaxed) >= limit {
            self.metrics.rejected.fetch_add(1, Ordering::Relaxed);
            return Err(error(
                StatusCode::TOO_MANY_REQUESTS,
                &format!(
                    "the server is full ({} in slots, {} queued): retry later",
                    self.manifest.max_batch, self.max_queue
                ),
                None,
            ));
        }
        let (tx, rx) = tmpsc::unbounded_channel();
        let req = Request {
            prompt: p.prompt.clone(),
            max_tokens: p.max_tokens,
            sampling: p.sampling,
            stop_ids: if p.ignore_eos {
                Vec::new()
            } else {
                self.manifest.eos_token_ids.clone()
            },
            events: tx,
            arrived: Instant::now(),
        };
        let sent = self
            .engine
            .lock()
            .ok()
            .and_then(|e| e.as_ref().map(|e| e.send(req).is_ok()))
            .unwrap_or(false);
        if !sent {
            return Err(error(
                StatusCode::SERVICE_UNAVAILABLE,
                "the server is shutting down",
                None,
            ));
        }
        self.metrics.requests.fetch_add(1, Ordering::Relaxed);
        self.metrics
            .tokens_in
            .fetch_add(p.prompt.len() as u64, Ordering::Relaxed);
        Ok((rx, InFlight::new(self.metrics.clone())))
    }
}

/// Counts a request in flight while it lives.
struct InFlight(Arc<Metrics>);

impl InFlight {
    fn new(m: Arc<Metrics>) -> InFlight {
        m.in_flight.fetch_add(1, Ordering::Relaxed);
        InFlight(m)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Completion,
    Chat,
}

async fn completions(State(s): State<Arc<Shared>>, body: Bytes) -> Response {
    respond(s, body, Kind::Completion).await
}

async fn chat_completions(State(s): State<Arc<Shared>>, body: Bytes) -> Response {
    respond(s, body, Kind::Chat).await
}

fn prompt_of(s: &Shared, body: &Value, kind: Kind) -> Result<Vec<i64>, Bad> {
    match kind {
        Kind::Completion => match &body["prompt"] {
            Value::String(text) => s
                .text
                .encode(text, true)
                .map_err(|e| Bad(e, Some("prompt"))),
            Value::Array(a) if a.len() == 1 && a[0].is_string() => s
                .text
                .encode(a[0].as_str().unwrap_or(""), true)
                .map_err(|e| Bad(e, Some("prompt"))),
            Value::Array(a) if a.iter().all(|t| t.as_i64().is_some()) => {
                Ok(a.iter().filter_map(Value::as_i64).collect())
            }
            Value::Null => bad("`prompt` is required", "prompt"),
            _ => bad(
                "`prompt` must be a string or a list of token ids (one prompt per request)",
                "prompt",
            ),
        },
        Kind::Chat => {
            let messages = &body["messages"];
            let Some(list) = messages.as_array() else {
                return bad(
                    "`messages` is required: a list of {role, content}",
                    "messages",
                );
            };
            if list.is_empty() || list.iter().any(|m| !m["role"].is_string()) {
                return bad(
                    "`messages` must be a non-empty list of objects with a `role`",
                    "messages",
                );
            }
            let text = s
                .text
                .chat_prompt(messages)
                .map_err(|e| Bad(e, Some("messages")))?;
            s.text
                .encode(&text, false)
                .map_err(|e| Bad(e, Some("messages")))
        }
    }
}

async fn respond(s: Arc<Shared>, body: Bytes, kind: Kind) -> Response {
    let checked = s.parse_body(&body).and_then(|v| {
        let prompt = prompt_of(&s, &v, kind)?;
        let default_max = (kind == Kind::Completion).then_some(16);
        s.params(&v, prompt, default_max)
    });
    let p = match checked {
        Ok(p) => p,
        Err(Bad(message, param)) => {
            s.metrics.rejected.fetch_add(1, Ordering::Relaxed);
            return error(StatusCode::BAD_REQUEST, &message, param);
        }
    };
    let (events, guard) = match s.submit(&p) {
        Ok(x) => x,
        Err(r) => return r,
    };
    let id = format!(
        "{}-{}",
        if kind == Kind::Chat {
            "chatcmpl"
        } else {
            "cmpl"
        },
        s.next_id.fetch_add(1, Ordering::Relaxed)
    );
    let created = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    if p.stream {
        stream(s, p, events, guard, id, created, kind)
    } else {
        whole(s, p, events, guard, id, created, kind).await
    }
}

fn usage(prompt: usize, completion: usize) -> Value {
    json!({"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion})
}

async fn whole(
    s: Arc<Shared>,
    p: Params,
    mut events: tmpsc::UnboundedReceiver<Event>,
    _guard: InFlight,
    id: String,
    created: u64,
    kind: Kind,
) -> Response {
    let mut inc = Incremental::new(p.stops.clone());
    let mut text = String::new();
    let mut ids = Vec::new();
    let finish = loop {
        match events.recv().await {
            Some(Event::Token(t)) => {
                ids.push(t.token);
                let (piece, stopped) = inc.push(&s.text, t.token);
                text.push_str(&piece);
                if stopped {
                    break Finish::Stop; // dropping `events` frees the slot
                }
            }
            Some(Event::Done(f)) => {
                text.push_str(&inc.finish(&s.text));
                break f;
            }
            Some(Event::Error(e)) => {
                return error(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    &format!("the model failed: {e}"),
                    None,
                )
            }
            None => return error(StatusCode::SERVICE_UNAVAILABLE, "the engine stopped", None),
        }
    };
    let choice = match kind {
        Kind::Completion => {
            json!({"index": 0, "text": text, "finish_reason": finish.reason(), "logprobs": Value::Null, "token_ids": ids})
        }
        Kind::Chat => {
            json!({"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish.reason(), "logprobs": Value::Null})
        }
    };
    let object = if kind == Kind::Chat {
        "chat.completion"
    } else {
        "text_completion"
    };
    Json(json!({
        "id": id, "object": object, "created": created, "model": s.model,
        "choices": [choice], "usage": usage(p.prompt.len(), inc.tokens()),
    }))
    .into_response()
}

fn stream(
    s: Arc<Shared>,
    p: Params,
    mut events: tmpsc::UnboundedReceiver<Event>,
    guard: InFlight,
    id: String,
    created: u64,
    kind: Kind,
) -> Response {
    let (out, rx) = tmpsc::unbounded_channel::<Result<SseEvent, Infallible>>();
    let object = if kind == Kind::Chat {
        "chat.completion.chunk"
    } else {
        "text_completion"
    };
    let model = s.model.clone();
    let chunk = move |piece: Option<&str>, finish: Option<Finish>, first: bool| -> Value {
        let reason = finish.map(Finish::reason);
        let choice = match kind {
            Kind::Completion => {
                json!({"index": 0, "text": piece.unwrap_or(""), "finish_reason": reason, "logprobs": Value::Null})
            }
            Kind::Chat => {
                let mut delta = serde_json::Map::new();
                if first {
                    delta.insert("role".into(), json!("assistant"));
                }
                if let Some(t) = piece {
                    delta.insert("content".into(), json!(t));
                }
                json!({"index": 0, "delta": delta, "finish_reason": reason, "logprobs": Value::Null})
            }
        };
        json!({"id": id, "object": object, "created": created, "model": model, "choices": [choice]})
    };
    tokio::spawn(async move {
        let _guard = guard;
        let send = |v: &Value| {
            out.send(Ok(SseEvent::default().data(v.to_string())))
                .is_ok()
        };
        let mut inc = Incremental::new(p.stops.clone());
        let mut first = kind == Kind::Chat;
        if first && !send(&chunk(None, None, true)) {
            return;
        }
        first = false;
        let finish = loop {
            match events.recv().await {
                Some(Event::Token(t)) => {
                    let (piece, stopped) = inc.push(&s.text, t.token);
                    if !piece.is_empty() && !send(&chunk(Some(&piece), None, first)) {
                        return; // the client is gone: dropping `events` frees the slot
                    }
                    if stopped {
                        break Finish::Stop;
                    }
                }
                Some(Event::Done(f)) => {
                    let rest = inc.finish(&s.text);
                    if !rest.is_empty() && !send(&chunk(Some(&rest), None, first)) {
                        return;
                    }
                    break f;
                }
                Some(Event::Error(e)) => {
                    let _ = send(
                        &json!({"error": {"message": format!("the model failed: {e}"), "type": "server_error"}}),
                    );
                    return;
                }
                None => return,
            }
        };
        let mut last = chunk(None, Some(finish), false);
        if p.include_usage {
            last["usage"] = usage(p.prompt.len(), inc.tokens());
        }
        if send(&last) {
            let _ = out.send(Ok(SseEvent::default().data("[DONE]")));
        }
    });
    Sse::new(UnboundedReceiverStream::new(rx)).into_response()
}
