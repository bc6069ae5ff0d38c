//! Serving programs (testdata/serve, the programs `python -m tpuc.llm export` compiles,
//! exported by its generator): compiled here, loaded as a `ProgramSet` sharing one KV
//! cache, and driven as a server drives them, against PyTorch's completions.
#![cfg(feature = "compiler")]

use std::path::{Path, PathBuf};

use serde_json::Value;
use tpuc_runtime::serving::{ProgramSet, Sampling};
use tpuc_runtime::LoadOptions;

use crate::common::{client, compile_to, repo, temp};

/// testdata/serve/tiny-llama with its programs compiled: a serving directory.
fn serving_dir() -> PathBuf {
    let src = repo().join("testdata/serve/tiny-llama");
    let dir = temp("serve");
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        match name.strip_suffix(".pt2") {
            Some(stem) => {
                let (ok, _, err) = compile_to(&path, &dir.join(format!("{stem}.tpuc")), &[]);
                assert!(ok, "{name}: {err}");
            }
            None => {
                std::fs::copy(&path, dir.join(&name)).unwrap();
            }
        }
    }
    dir
}

fn expected() -> Value {
    let text =
        std::fs::read_to_string(repo().join("testdata/serve/tiny-llama/expected.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn ids(v: &Value) -> Vec<i64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect()
}

fn sampling(v: &Value, greedy: bool) -> Sampling {
    if greedy {
        return Sampling::GREEDY;
    }
    Sampling {
        temperature: v["temperature"].as_f64().unwrap() as f32,
        top_k: v["top_k"].as_i64().unwrap(),
        top_p: v["top_p"].as_f64().unwrap() as f32,
        min_p: v["min_p"].as_f64().unwrap() as f32,
        seed: v["seed"].as_i64().unwrap(),
    }
}

/// Every prompt in its slot (chunked by the largest bucket), then decode steps over
/// all slots at once: the new tokens of each.
fn serve_all(
    set: &mut ProgramSet,
    prompts: &[Vec<i64>],
    rows: &[Sampling],
    n: usize,
) -> Vec<Vec<i64>> {
    let chunk = set.manifest().chunk();
    let mut out: Vec<Vec<i64>> = Vec::new();
    for (slot, p) in prompts.iter().enumerate() {
        let mut last = None;
        for (c, piece) in p.chunks(chunk).enumerate() {
            last = Some(set.prefill(slot, c * chunk, piece, rows[slot]).unwrap());
        }
        out.push(vec![last.unwrap().token]);
    }
    // The other slots are free, at the manifest's free position.
    let m = set.manifest().clone();
    let free = m.max_batch - prompts.len();
    let mut positions: Vec<i64> = prompts.iter().map(|p| p.len() as i64).collect();
    positions.extend(std::iter::repeat_n(m.free_position, free));
    let mut rows = rows.to_vec();
    rows.extend(std::iter::repeat_n(Sampling::GREEDY, free));
    for _ in 1..n {
        let mut tokens: Vec<i64> = out.iter().map(|o| *o.last().unwrap()).collect();
        tokens.extend(std::iter::repeat_n(0, free));
        let next = set.decode(&tokens, &positions, &rows).unwrap();
        for (s, o) in out.iter_mut().enumerate() {
            o.push(next[s].token);
            positions[s] += 1;
        }
    }
    out
}

fn load(dir: &Path, client: &tpuc_runtime::Client) -> ProgramSet {
    ProgramSet::load(dir, client, &LoadOptions::default()).unwrap()
}

#[test]
fn program_set_generates_pytorchs_tokens_batched_and_sampled() {
    let dir = serving_dir();
    let exp = expected();
    let prompts: Vec<&Value> = exp["prompts"].as_array().unwrap().iter().collect();
    let ids_in: Vec<Vec<i64>> = prompts.iter().map(|p| ids(&p["ids"])).collect();
    let n = exp["new_tokens"].as_u64().unwrap() as usize;
    let client = client();
    let mut set = load(&dir, &client);
    assert!(set.manifest().max_batch > prompts.len());

    // Greedy: generate(do_sample=False)'s tokens, with all four sequences in one
    // decode step (the other slots free) at different positions and the long prompt in chunks.
    let greedy: Vec<Sampling> = prompts
        .iter()
        .map(|p| sampling(&p["sampling"], true))
        .collect();
    let got = serve_all(&mut set, &ids_in, &greedy, n);
    let want: Vec<Vec<i64>> = prompts.iter().map(|p| ids(&p["greedy_ids"])).collect();
    assert_eq!(got, want);

    // Seeded sampling: the tokens the same modules draw in PyTorch, again on a second
    // pass (the slots are simply overwritten by the new prompts).
    let rows: Vec<Sampling> = prompts
        .iter()
        .map(|p| sampling(&p["sampling"], false))
        .collect();
    let want: Vec<Vec<i64>> = prompts.iter().map(|p| ids(&p["sampled_ids"])).collect();
    assert_eq!(serve_all(&mut set, &ids_in, &rows, n), want);
    assert_eq!(serve_all(&mut set, &ids_in, &rows, n), want);
}

#[test]
fn program_set_refuses_what_the_cache_cannot_hold() {
    let dir = serving_dir();
    let client = client();
    let mut set = load(&dir, &client);
    let m = set.manifest().clone();
    let b = m.max_batch;
    let err = set
        .prefill(b, 0, &[1, 2], Sampling::GREEDY)
        .unwrap_err()
        .to_string();
    assert!(err.contains("slot"), "{err}");
    let err = set
        .prefill(0, m.max_len - 4, &[1; 8], Sampling::GREEDY)
        .unwrap_err()
        .to_string();
    assert!(err.contains("outside the cache"), "{err}");
    let err = set
        .prefill(0, 0, &vec![1; m.chunk() + 1], Sampling::GREEDY)
        .unwrap_err()
        .to_string();
    assert!(err.contains("exceeds every prefill bucket"), "{err}");
    let err = set
        .decode(
            &vec![1; b],
            &vec![m.max_len as i64; b],
            &vec![Sampling::GREEDY; b],
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("outside the cache"), "{err}");
    let err = set
        .decode(&[1], &[0], &[Sampling::GREEDY])
        .unwrap_err()
        .to_string();
    assert!(err.contains("decode takes"), "{err}");
    // Still serving after the refusals.
    set.prefill(0, 0, &[1, 2, 3], Sampling::GREEDY).unwrap();
    set.decode(&vec![1; b], &vec![3; b], &vec![Sampling::GREEDY; b])
        .unwrap();
}

#[test]
fn a_bad_serving_manifest_is_refused_by_name() {
    let dir = temp("serve-bad");
    let client = client();
    let err = ProgramSet::load(&dir, &client, &LoadOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("serve.json") && err.contains("tpuc.llm export"),
        "{err}"
    );
    std::fs::write(dir.join("serve.json"), r#"{"format": "tpuc-serve/9"}"#).unwrap();
    let err = ProgramSet::load(&dir, &client, &LoadOptions::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("not a serving manifest"), "{err}");
}

// ---- `tpuc serve` over HTTP ----

/// A running `tpuc serve` on a free loopback port, stopped (SIGTERM) when dropped.
struct Server {
    child: std::process::Child,
    port: u16,
    /// The start-up line.
    banner: String,
}

impl Server {
    fn start(dir: &Path, cache: &Path) -> Server {
        use std::io::BufRead;
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_tpuc"))
            .args([
                "serve",
                dir.to_str().unwrap(),
                "--port",
                "0",
                "--max-queue",
                "4",
            ])
            .env("TPUC_CACHE_DIR", cache)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("tpuc serve starts");
        let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
        let banner = loop {
            let line = lines
                .next()
                .expect("tpuc serve printed its address")
                .unwrap();
            if line.starts_with("tpuc serve:") && line.contains("http://") {
                break line;
            }
        };
        // Keep draining stderr so the server never blocks on it.
        std::thread::spawn(move || for _ in lines {});
        let port = banner
            .split("http://127.0.0.1:")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|p| p.parse().ok())
            .expect("port in the start-up line");
        Server {
            child,
            port,
            banner,
        }
    }

    /// `(status, body)` of one request (HTTP/1.1, the connection closed after).
    fn request(&self, method: &str, path: &str, body: &str) -> (u16, String) {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        write!(
            s,
            "{method} {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut raw = Vec::new();
        s.read_to_end(&mut raw).unwrap();
        let raw = String::from_utf8(raw).unwrap();
        let (head, rest) = raw.split_once("\r\n\r\n").unwrap();
        let status = head.split(' ').nth(1).unwrap().parse().unwrap();
        let body = if head
            .to_ascii_lowercase()
            .contains("transfer-encoding: chunked")
        {
            unchunk(rest)
        } else {
            rest.to_string()
        };
        (status, body)
    }

    fn json(&self, path: &str, body: &Value) -> (u16, Value) {
        let (status, text) = self.request("POST", path, &body.to_string());
        (
            status,
            serde_json::from_str(&text).unwrap_or_else(|_| panic!("{status}: {text}")),
        )
    }

    fn stop(mut self) -> std::process::ExitStatus {
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let status = self.child.wait().unwrap();
        std::mem::forget(self);
        status
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn unchunk(mut rest: &str) -> String {
    let mut out = String::new();
    while let Some((size, tail)) = rest.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 {
            break;
        }
        out.push_str(&tail[..n]);
        rest = &tail[n + 2..];
    }
    out
}

/// The `data:` payloads of a server-sent event stream.
fn events(body: &str) -> Vec<String> {
    body.lines()
        .filter_map(|l| l.strip_prefix("data: ").or_else(|| l.strip_prefix("data:")))
        .map(str::to_string)
        .collect()
}

/// The stop tokens of the serving manifest.
fn exp_eos(dir: &Path) -> Vec<i64> {
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("serve.json")).unwrap()).unwrap();
    ids(&m["eos_token_ids"])
}

fn completion(prompt: &str, max_tokens: usize, extra: Value) -> Value {
    let mut body = serde_json::json!({"model": "tiny-llama", "prompt": prompt, "max_tokens": max_tokens, "temperature": 0});
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    body
}

#[test]
fn tpuc_serve_answers_as_pytorch_generates() {
    let dir = serving_dir();
    let cache = temp("serve-cache");
    let exp = expected();
    let prompts: Vec<Value> = exp["prompts"].as_array().unwrap().clone();
    let n = exp["new_tokens"].as_u64().unwrap() as usize;
    let server = Server::start(&dir, &cache);
    assert!(server.banner.contains("3 compiled"), "{}", server.banner);

    let (status, models) = server.request("GET", "/v1/models", "");
    assert_eq!(status, 200, "{models}");
    assert!(models.contains("\"tiny-llama\""), "{models}");
    assert_eq!(server.request("GET", "/health", "").0, 200);

    // Greedy completions, all at once: generate(do_sample=False)'s text and ids.
    let answers: Vec<(u16, Value)> = std::thread::scope(|scope| {
        let handles: Vec<_> = prompts
            .iter()
            .map(|p| {
                let server = &server;
                scope.spawn(move || {
                    server.json(
                        "/v1/completions",
                        &completion(p["text"].as_str().unwrap(), n, serde_json::json!({})),
                    )
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (p, (status, a)) in prompts.iter().zip(&answers) {
        assert_eq!(*status, 200, "{a}");
        let c = &a["choices"][0];
        assert_eq!(c["token_ids"], p["greedy_ids"], "{a}");
        assert_eq!(c["text"], p["greedy_text"], "{a}");
        assert_eq!(c["finish_reason"], "length");
        assert_eq!(
            a["usage"]["prompt_tokens"].as_u64().unwrap() as usize,
            p["ids"].as_array().unwrap().len()
        );
        assert_eq!(
            a["usage"]["completion_tokens"].as_u64().unwrap() as usize,
            n
        );
    }

    // The same text streamed: pieces that add up to it, a finish reason, [DONE] last.
    let p = &prompts[1];
    let body = completion(
        p["text"].as_str().unwrap(),
        n,
        serde_json::json!({"stream": true}),
    );
    let (status, text) = server.request("POST", "/v1/completions", &body.to_string());
    assert_eq!(status, 200, "{text}");
    let evs = events(&text);
    assert_eq!(evs.last().map(String::as_str), Some("[DONE]"), "{text}");
    let chunks: Vec<Value> = evs[..evs.len() - 1]
        .iter()
        .map(|e| serde_json::from_str(e).unwrap())
        .collect();
    let streamed: String = chunks
        .iter()
        .map(|c| c["choices"][0]["text"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(streamed, p["greedy_text"].as_str().unwrap());
    assert_eq!(
        chunks.last().unwrap()["choices"][0]["finish_reason"],
        "length"
    );

    // Chat: the model's template applied (its prompt ids, as transformers renders it).
    let chat =
        serde_json::json!({"messages": exp["chat"]["messages"], "max_tokens": n, "temperature": 0});
    let (status, a) = server.json("/v1/chat/completions", &chat);
    assert_eq!(status, 200, "{a}");
    assert_eq!(
        a["choices"][0]["message"]["content"], exp["chat"]["greedy_text"],
        "{a}"
    );
    assert_eq!(
        a["usage"]["prompt_tokens"].as_u64().unwrap() as usize,
        exp["chat"]["prompt_ids"].as_array().unwrap().len()
    );
    let mut streaming = chat.clone();
    streaming["stream"] = Value::Bool(true);
    let (_, text) = server.request("POST", "/v1/chat/completions", &streaming.to_string());
    let evs = events(&text);
    let chunks: Vec<Value> = evs[..evs.len() - 1]
        .iter()
        .map(|e| serde_json::from_str(e).unwrap())
        .collect();
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    let streamed: String = chunks
        .iter()
        .map(|c| c["choices"][0]["delta"]["content"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(streamed, exp["chat"]["greedy_text"].as_str().unwrap());

    // Seeded sampling: PyTorch's draws (up to the first end-of-sequence token, where
    // the server stops), and again the same.
    let eos = exp_eos(&dir);
    for p in &prompts {
        let drawn = ids(&p["sampled_ids"]);
        let (want, reason) = match drawn.iter().position(|t| eos.contains(t)) {
            Some(k) => (drawn[..k].to_vec(), "stop"),
            None => (drawn, "length"),
        };
        let s = &p["sampling"];
        let body = completion(
            p["text"].as_str().unwrap(),
            n,
            serde_json::json!({
            "temperature": s["temperature"], "top_k": s["top_k"], "top_p": s["top_p"], "min_p": s["min_p"], "seed": s["seed"]}),
        );
        for _ in 0..2 {
            let (status, a) = server.json("/v1/completions", &body);
            assert_eq!(status, 200, "{a}");
            assert_eq!(ids(&a["choices"][0]["token_ids"]), want, "{a}");
            assert_eq!(a["choices"][0]["finish_reason"], reason, "{a}");
        }
    }

    // A stop string ends the text before it.
    let p = &prompts[0];
    let full = p["greedy_text"].as_str().unwrap();
    let stop = full.split(' ').nth(3).unwrap();
    let (_, a) = server.json(
        "/v1/completions",
        &completion(
            p["text"].as_str().unwrap(),
            n,
            serde_json::json!({"stop": [stop]}),
        ),
    );
    let want = &full[..full.find(stop).unwrap()];
    assert_eq!(a["choices"][0]["text"], want, "{a}");
    assert_eq!(a["choices"][0]["finish_reason"], "stop");

    // Bad requests: 400 with an error object naming the field; the server goes on.
    let long = vec!["the"; 70].join(" ");
    for (body, param) in [
        ("{not json".to_string(), Value::Null),
        (r#"{"max_tokens": 4}"#.to_string(), "prompt".into()),
        (
            completion("hello", 0, serde_json::json!({})).to_string(),
            "max_tokens".into(),
        ),
        (
            completion("hello", 1000, serde_json::json!({})).to_string(),
            "max_tokens".into(),
        ),
        (
            serde_json::json!({"prompt": "hello", "max_tokens": -3}).to_string(),
            "max_tokens".into(),
        ),
        (
            completion(&long, 4, serde_json::json!({})).to_string(),
            "prompt".into(),
        ),
        (
            serde_json::json!({"model": "gpt-7", "prompt": "hello"}).to_string(),
            "model".into(),
        ),
        (
            completion("hello", 4, serde_json::json!({"temperature": -1})).to_string(),
            "temperature".into(),
        ),
        (
            completion("hello", 4, serde_json::json!({"top_p": 0})).to_string(),
            "top_p".into(),
        ),
        (
            completion("hello", 4, serde_json::json!({"stream": "yes"})).to_string(),
            "stream".into(),
        ),
        (
            serde_json::json!({"prompt": [1, 5, 100000]}).to_string(),
            "prompt".into(),
        ),
        (
            serde_json::json!({"messages": "hi"}).to_string(),
            "messages".into(),
        ),
    ] {
        let path = if body.contains("messages") {
            "/v1/chat/completions"
        } else {
            "/v1/completions"
        };
        let (status, text) = server.request("POST", path, &body);
        assert_eq!(status, 400, "{body}: {text}");
        let v: Value = serde_json::from_str(&text).unwrap();
        assert!(
            v["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "{text}"
        );
        assert_eq!(v["error"]["param"], param, "{body}: {text}");
    }
    let (status, a) = server.json(
        "/v1/completions",
        &completion("hello world", 2, serde_json::json!({})),
    );
    assert_eq!(status, 200, "{a}");

    let (_, metrics) = server.request("GET", "/metrics", "");
    for name in [
        "tpuc_requests_total",
        "tpuc_generation_tokens_total",
        "tpuc_queue_depth",
        "tpuc_time_to_first_token_seconds_bucket",
        "tpuc_batch_occupancy",
    ] {
        assert!(
            metrics.contains(name),
            "{name} missing from /metrics:\n{metrics}"
        );
    }
    assert!(server.stop().success());

    // A restart loads every program from the executable cache: nothing compiled.
    let again = Server::start(&dir, &cache);
    assert!(
        again.banner.contains("0 compiled, 3 from the cache"),
        "{}",
        again.banner
    );
    let (status, a) = again.json(
        "/v1/completions",
        &completion(
            prompts[0]["text"].as_str().unwrap(),
            n,
            serde_json::json!({}),
        ),
    );
    assert_eq!(status, 200);
    assert_eq!(a["choices"][0]["token_ids"], prompts[0]["greedy_ids"]);
    assert!(again.stop().success());
}

/// Continuous batching: 16 concurrent requests share decode steps, so they finish
/// well before the same 16 one after another (the issue asks 4x on 2 cores). The
/// decode steps, counted by the server, are the deterministic half of the check.
#[test]
fn tpuc_serve_batches_concurrent_requests() {
    let dir = serving_dir();
    let cache = temp("serve-cache");
    let server = Server::start(&dir, &cache);
    let n = 24;
    let body = |i: usize| {
        completion(
            &format!(
                "the cat and the dog {}",
                ["run", "walk", "see", "find"][i % 4]
            ),
            n,
            serde_json::json!({"temperature": 1.0, "seed": i, "ignore_eos": true}),
        )
    };
    let steps = |server: &Server| -> u64 {
        let (_, m) = server.request("GET", "/metrics", "");
        m.lines()
            .find_map(|l| l.strip_prefix("tpuc_decode_steps_total "))
            .and_then(|v| v.parse().ok())
            .unwrap()
    };
    // Warm up (the first calls of each program).
    server.json("/v1/completions", &body(0));

    let measure = || {
        let s0 = steps(&server);
        let t0 = std::time::Instant::now();
        for i in 0..16 {
            let (status, a) = server.json("/v1/completions", &body(i));
            assert_eq!(status, 200, "{a}");
        }
        let sequential = t0.elapsed();
        let s1 = steps(&server);
        let t1 = std::time::Instant::now();
        let answers: Vec<(u16, Value)> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..16)
                .map(|i| {
                    let server = &server;
                    let b = body(i);
                    scope.spawn(move || server.json("/v1/completions", &b))
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let concurrent = t1.elapsed();
        let s2 = steps(&server);
        for (status, a) in &answers {
            assert_eq!(*status, 200, "{a}");
            assert_eq!(
                a["usage"]["completion_tokens"].as_u64().unwrap() as usize,
                n,
                "{a}"
            );
        }
        (
            sequential.as_secs_f64() / concurrent.as_secs_f64(),
            s1 - s0,
            s2 - s1,
        )
    };
    let (mut speedup, seq_steps, conc_steps) = measure();
    // 16 x 23 steps one after another; together, about 23 plus the arrivals' spread.
    assert_eq!(seq_steps, 16 * (n as u64 - 1));
    assert!(
        conc_steps * 4 <= seq_steps,
        "{conc_steps} decode steps for 16 concurrent requests"
    );
    if speedup < 4.0 {
        // Once more, in case the machine was busy with something else.
        speedup = measure().0;
    }
    eprintln!("16 concurrent requests: {speedup:.1}x faster than one after another");
    assert!(
        speedup >= 4.0,
        "16 concurrent requests only {speedup:.1}x faster than sequential"
    );
    assert!(server.stop().success());
}

/// `tpuc generate SERVE_DIR`: the prompts decoded together through the server's engine,
/// one line of tokens each, checked against `generate`'s.
#[test]
fn tpuc_generate_runs_a_serving_directory() {
    let dir = serving_dir();
    let exp = expected();
    let work = temp("serve-generate");
    let n = exp["new_tokens"].as_u64().unwrap() as usize;
    let mut args: Vec<String> = vec!["generate".into(), dir.to_str().unwrap().into()];
    let mut lines = Vec::new();
    for (i, p) in exp["prompts"].as_array().unwrap().iter().enumerate() {
        for (flag, key) in [("--prompt", "ids"), ("--expect", "greedy_ids")] {
            let v = ids(&p[key]);
            let path = work.join(format!("{key}{i}.npy"));
            let t = tpuc_runtime::HostTensor {
                dtype: tpuc_runtime::DType::I64,
                shape: vec![v.len() as i64],
                data: v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            };
            tpuc_runtime::npy::write_npy(&path, &t).unwrap();
            args.extend([flag.to_string(), path.to_str().unwrap().to_string()]);
        }
        lines.push(
            ids(&p["greedy_ids"])
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(" "),
        );
    }
    args.extend(["--max-new-tokens".to_string(), n.to_string()]);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let (ok, out, err) = crate::common::tpuc(&refs);
    assert!(ok, "{err}");
    assert_eq!(out.lines().collect::<Vec<_>>(), lines, "{err}");
    assert!(err.contains("OK: the 48 tokens match"), "{err}");
    // One expectation off: a failure naming the prompt and the token.
    let swapped: Vec<&str> = refs
        .iter()
        .map(|a| {
            if a.ends_with("greedy_ids0.npy") {
                refs[refs.len() - 3]
            } else {
                a
            }
        })
        .collect();
    let (ok, _, err) = crate::common::tpuc(&swapped);
    assert!(!ok && err.contains("FAIL (prompt 0)"), "{err}");
}
