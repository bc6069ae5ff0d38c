//! `tpuc generate`: greedy decoding with a decode-step artifact, the form transformers'
//! `convert_and_export_with_cache` exports (inputs `input_ids` [1, 1] and
//! `cache_position` [1], logits out, a static KV cache as state), or with a serving
//! directory (`python -m tpuc.llm export`), through `tpuc serve`'s engine: every prompt
//! in its own slot, prompts read in chunks, one decode step for all.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use tpuc_runtime::{DType, HostTensor, Session};

#[derive(clap::Args, Debug)]
pub struct GenerateArgs {
    /// A decode-step artifact with a static KV cache (`tpuc compile` of a program
    /// exported by transformers' `convert_and_export_with_cache`), or a serving
    /// directory (`python -m tpuc.llm export`: several prompts decoded together).
    pub artifact: PathBuf,
    /// The prompt's token ids: an integer .npy, shape [P] or [1, P]. With a serving
    /// directory, repeatable: the prompts are decoded together, one line each.
    #[arg(long, required = true)]
    pub prompt: Vec<PathBuf>,
    /// How many tokens to generate after the prompt.
    #[arg(long, default_value_t = 16)]
    pub max_new_tokens: usize,
    /// Expected new tokens (.npy, as `model.generate(do_sample=False)` gives them
    /// without the prompt), one per --prompt; exits non-zero at the first difference.
    #[arg(long)]
    pub expect: Vec<PathBuf>,
    #[command(flatten)]
    pub client: crate::load::ClientArgs,
}

/// Token ids of an integer tensor, in order.
fn token_ids(t: &HostTensor, what: &str) -> Result<Vec<i64>, String> {
    if !t.dtype.is_integer() {
        return Err(format!(
            "{what}: token ids must be integers, not {}",
            t.dtype
        ));
    }
    Ok(t.to_f64_vec().into_iter().map(|v| v as i64).collect())
}

fn ids_tensor(dtype: DType, shape: &[i64], ids: &[i64]) -> HostTensor {
    let data = match dtype {
        DType::I32 => ids.iter().flat_map(|&v| (v as i32).to_le_bytes()).collect(),
        _ => ids.iter().flat_map(|&v| v.to_le_bytes()).collect(),
    };
    HostTensor {
        dtype,
        shape: shape.to_vec(),
        data,
    }
}

/// The index of the largest of the last `vocab` values (the first on ties, as
/// `torch.argmax`).
fn argmax_last(values: &[f64], vocab: usize) -> i64 {
    let last = &values[values.len() - vocab..];
    let mut best = 0;
    for (i, &v) in last.iter().enumerate() {
        if v > last[best] || (last[best].is_nan() && !v.is_nan()) {
            best = i;
        }
    }
    best as i64
}

/// What a decode step looks like in a session: its two inputs' positions and types,
/// the cache length, and the vocabulary size.
struct Step {
    ids: usize,
    position: usize,
    ids_dtype: DType,
    position_dtype: DType,
    cache_len: i64,
    vocab: usize,
}

fn decode_step(session: &Session) -> Result<Step, String> {
    let inputs = session.inputs();
    let find = |name: &str, shape: &[i64]| {
        inputs
            .iter()
            .position(|a| a.name == name && a.shape == shape && a.dtype.is_integer())
            .ok_or_else(|| {
                format!(
                    "not a decode step: it has no integer input `{name}` of shape {shape:?} (inputs: {}); tpuc generate takes programs exported by transformers' convert_and_export_with_cache",
                    inputs
                        .iter()
                        .map(|a| format!("`{}` {}{:?}", a.name, a.dtype, a.shape))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })
    };
    let ids = find("input_ids", &[1, 1])?;
    let position = find("cache_position", &[1])?;
    if inputs.len() != 2 {
        return Err(format!(
            "not a decode step: {} inputs, expected `input_ids` and `cache_position`",
            inputs.len()
        ));
    }
    // transformers' StaticCache layout: [batch, kv heads, max_cache_len, head dim].
    let manifest = session.manifest();
    let cache_len = session
        .state_names()
        .iter()
        .filter_map(|n| manifest.arguments.iter().find(|a| &a.name == n))
        .filter(|a| a.shape.len() == 4)
        .map(|a| a.shape[2])
        .min()
        .ok_or("not a decode step: it keeps no KV cache as state (no [batch, heads, length, head_dim] buffer is updated)")?;
    let logits = session
        .outputs()
        .first()
        .ok_or("not a decode step: it has no outputs")?;
    let vocab = *logits.shape.last().unwrap_or(&0) as usize;
    if !logits.dtype.is_float()
        || vocab == 0
        || logits.shape.iter().product::<i64>() != vocab as i64
    {
        return Err(format!(
            "not a decode step: its first output `{}` is {}{:?}, not the logits of one token",
            logits.name, logits.dtype, logits.shape
        ));
    }
    Ok(Step {
        ids,
        position,
        ids_dtype: inputs[ids].dtype,
        position_dtype: inputs[position].dtype,
        cache_len,
        vocab,
    })
}

/// Token ids of each .npy file.
fn read_ids(paths: &[PathBuf]) -> Result<Vec<Vec<i64>>, String> {
    paths
        .iter()
        .map(|p| {
            let t = tpuc_runtime::npy::read_npy(p).map_err(|e| format!("{}: {e}", p.display()))?;
            let ids = token_ids(&t, &p.display().to_string())?;
            if ids.is_empty() {
                return Err(format!("{}: the prompt is empty", p.display()));
            }
            Ok(ids)
        })
        .collect()
}

/// The first difference between generated and expected tokens, reported; whether all
/// matched.
fn check(label: &str, tokens: &[i64], want: &[i64]) -> bool {
    let first_diff = (0..tokens.len().max(want.len())).find(|&i| tokens.get(i) != want.get(i));
    if let Some(i) = first_diff {
        errln!(
            "FAIL{label}: new token {i} is {}, expected {} ({} tokens generated, {} expected)",
            tokens.get(i).map_or("missing".into(), i64::to_string),
            want.get(i).map_or("missing".into(), i64::to_string),
            tokens.len(),
            want.len()
        );
        return false;
    }
    true
}

fn line(tokens: &[i64]) -> String {
    tokens
        .iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(" ")
}

pub fn generate(args: &GenerateArgs) -> Result<ExitCode, String> {
    let prompts = read_ids(&args.prompt)?;
    let expects = read_ids(&args.expect)?;
    if !expects.is_empty() && expects.len() != prompts.len() {
        return Err(format!(
            "{} --prompt and {} --expect: give one expectation per prompt",
            prompts.len(),
            expects.len()
        ));
    }
    if args.artifact.join("serve.json").is_file() {
        return generate_served(args, &prompts, &expects);
    }
    let [prompt] = prompts.as_slice() else {
        return Err(
            "a decode-step artifact takes one --prompt (a serving directory takes several)".into(),
        );
    };
    let prompt = prompt.clone();
    let expected = expects.first().cloned();
    let (client, _) = crate::load::open_client(
        args.client.plugin.as_deref(),
        &args.client.client_options,
        crate::load::artifact_devices(&args.artifact),
    )?;
    let session = crate::load::load_session(&args.artifact, &client, args.client.no_cache)?;
    let step = decode_step(&session)?;
    let total = prompt.len() + args.max_new_tokens;
    // The last new token is not fed back, so it needs no cache slot.
    if total as i64 - 1 > step.cache_len {
        return Err(format!(
            "{} prompt tokens + {} new tokens need {} cache positions; the artifact's static cache holds {} (export with a larger max_cache_len)",
            prompt.len(),
            args.max_new_tokens,
            total - 1,
            step.cache_len
        ));
    }
    let call = |token: i64, position: usize| -> Result<i64, String> {
        let mut inputs = vec![HostTensor::from_f32(&[], &[0.0]); 2];
        inputs[step.ids] = ids_tensor(step.ids_dtype, &[1, 1], &[token]);
        inputs[step.position] = ids_tensor(step.position_dtype, &[1], &[position as i64]);
        let outputs = session.run(&inputs).map_err(|e| e.to_string())?;
        Ok(argmax_last(&outputs[0].to_f64_vec(), step.vocab))
    };
    let start = Instant::now();
    let mut next = 0;
    for (pos, &t) in prompt.iter().enumerate() {
        next = call(t, pos)?;
    }
    let prefill = start.elapsed();
    let mut tokens = Vec::with_capacity(args.max_new_tokens);
    let decode_start = Instant::now();
    for k in 0..args.max_new_tokens {
        tokens.push(next);
        if k + 1 < args.max_new_tokens {
            next = call(next, prompt.len() + k)?;
        }
    }
    let decode = decode_start.elapsed();
    outln!(
        "{}",
        tokens
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(" ")
    );
    let decode_calls = args.max_new_tokens.saturating_sub(1).max(1);
    errln!(
        "prefill: {} tokens in {:.1} ms; decode: {} tokens in {:.1} ms ({:.1} tokens/s)",
        prompt.len(),
        prefill.as_secs_f64() * 1e3,
        tokens.len(),
        decode.as_secs_f64() * 1e3,
        decode_calls as f64 / decode.as_secs_f64().max(1e-9)
    );
    if let Some(want) = expected {
        if !check("", &tokens, &want) {
            return Ok(ExitCode::FAILURE);
        }
        errln!("OK: the {} tokens match", tokens.len());
    }
    Ok(ExitCode::SUCCESS)
}

/// Greedy decoding of every prompt together, through `tpuc serve`'s engine (no stop
/// token: --max-new-tokens each, as the single-step path).
fn generate_served(
    args: &GenerateArgs,
    prompts: &[Vec<i64>],
    expects: &[Vec<i64>],
) -> Result<ExitCode, String> {
    use crate::serve::engine::{self, Event, Request};
    use tpuc_runtime::serving::Sampling;

    let set = crate::serve::load_set(&args.artifact, &args.client)?;
    let m = set.manifest().clone();
    for p in prompts {
        if p.len() + args.max_new_tokens > m.max_len {
            return Err(format!(
                "{} prompt tokens + {} new tokens exceed the {} tokens the serving programs were compiled for",
                p.len(),
                args.max_new_tokens,
                m.max_len
            ));
        }
    }
    let metrics = std::sync::Arc::new(crate::serve::metrics::Metrics::new(m.max_batch));
    let (tx, rx) = std::sync::mpsc::channel();
    let worker = std::thread::spawn(move || engine::run(set, rx, metrics));
    let start = Instant::now();
    let mut receivers = Vec::new();
    for p in prompts {
        let (events, r) = tokio::sync::mpsc::unbounded_channel();
        tx.send(Request {
            prompt: p.clone(),
            max_tokens: args.max_new_tokens,
            sampling: Sampling::GREEDY,
            stop_ids: Vec::new(),
            events,
            arrived: Instant::now(),
        })
        .map_err(|_| "the engine stopped".to_string())?;
        receivers.push(r);
    }
    drop(tx);
    let mut outputs = Vec::new();
    for mut r in receivers {
        let mut tokens = Vec::new();
        while let Some(e) = r.blocking_recv() {
            match e {
                Event::Token(t) => tokens.push(t.token),
                Event::Done(_) => break,
                Event::Error(e) => return Err(e),
            }
        }
        outputs.push(tokens);
    }
    let elapsed = start.elapsed();
    let _ = worker.join();
    for tokens in &outputs {
        outln!("{}", line(tokens));
    }
    let total: usize = outputs.iter().map(Vec::len).sum();
    errln!(
        "{} prompts, {total} tokens in {:.1} ms ({:.1} tokens/s, prompts included)",
        prompts.len(),
        elapsed.as_secs_f64() * 1e3,
        total as f64 / elapsed.as_secs_f64().max(1e-9)
    );
    if !expects.is_empty() {
        let mut ok = true;
        for (i, (tokens, want)) in outputs.iter().zip(expects).enumerate() {
            ok &= check(&format!(" (prompt {i})"), tokens, want);
        }
        if !ok {
            return Ok(ExitCode::FAILURE);
        }
        errln!("OK: the {total} tokens match");
    }
    Ok(ExitCode::SUCCESS)
}
