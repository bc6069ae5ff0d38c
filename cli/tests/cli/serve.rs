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
