//! Stateful programs from the command line: `tpuc run --then` and `tpuc generate`.
#![cfg(feature = "compiler")]

use crate::common::{compile_to, repo, sorted_npy, temp, tpuc};

/// `tpuc run --then`: three decode steps of the static-cache Llama in one session, each
/// matching PyTorch's step (state carried); the second step alone does not match (it
/// needs the first step's cache). A stateless artifact just runs each call. Passing a
/// cache as an input, and options after `--then`, are errors that say why.
#[test]
fn run_then_carries_state_between_calls() {
    let dir = temp("then");
    let data = repo().join("testdata/stateful/llama_decode");
    let call = |k: usize| -> Vec<String> {
        let c = data.join(format!("calls/{k}"));
        [
            ("--input", c.join("inputs/0_input_ids.npy")),
            ("--input", c.join("inputs/1_cache_position.npy")),
            ("--expect", c.join("expected/0.npy")),
        ]
        .iter()
        .flat_map(|(f, p)| [f.to_string(), p.to_string_lossy().into_owned()])
        .collect()
    };
    for form in ["exported", "core"] {
        let art = dir.join(format!("llama-{form}.tpuc"));
        let model = data.join(format!("{form}.pt2"));
        let (ok, _, err) = compile_to(&model, &art, &[]);
        assert!(ok, "{err}");
        let mut args = vec!["run".to_string(), art.to_string_lossy().into_owned()];
        args.extend(call(0));
        for k in 1..3 {
            args.push("--then".into());
            args.extend(call(k));
        }
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let (ok, out, err) = tpuc(&refs);
        assert!(ok, "{form}: {out}{err}");
        assert_eq!(out.matches(" OK").count(), 3, "{form}: {out}");
        assert!(out.contains("call 2:"), "{out}");

        let mut alone = vec!["run".to_string(), art.to_string_lossy().into_owned()];
        alone.extend(call(1));
        let refs: Vec<&str> = alone.iter().map(String::as_str).collect();
        let (ok, out, _) = tpuc(&refs);
        assert!(
            !ok && out.contains("FAIL"),
            "step 1 without step 0 matched: {out}"
        );

        let mut extra = vec!["run".to_string(), art.to_string_lossy().into_owned()];
        extra.extend(call(0));
        extra.extend(["--input".into(), call(0)[1].clone()]);
        let refs: Vec<&str> = extra.iter().map(String::as_str).collect();
        let (ok, _, err) = tpuc(&refs);
        assert!(
            !ok && err.contains("cache") && err.contains("are state the session keeps, not inputs"),
            "{err}"
        );
    }
    let art = dir.join("llama-core.tpuc");
    let mut late = vec!["run".to_string(), art.to_string_lossy().into_owned()];
    late.extend(call(0));
    late.extend(["--then".into(), "--rtol".into(), "1".into()]);
    let refs: Vec<&str> = late.iter().map(String::as_str).collect();
    let (ok, _, err) = tpuc(&refs);
    assert!(
        !ok && err.contains("after --then only --input, --expect"),
        "{err}"
    );

    // Stateless: each call on its own.
    let mlp = dir.join("mlp.tpuc");
    let src = repo().join("testdata/models/mlp/core.pt2");
    let (ok, _, err) = compile_to(&src, &mlp, &[]);
    assert!(ok, "{err}");
    let m = repo().join("testdata/models/mlp");
    let input = sorted_npy(&m.join("inputs"))[0]
        .to_string_lossy()
        .into_owned();
    let want = sorted_npy(&m.join("expected"))[0]
        .to_string_lossy()
        .into_owned();
    let (ok, out, err) = tpuc(&[
        "run",
        mlp.to_str().unwrap(),
        "--input",
        &input,
        "--expect",
        &want,
        "--then",
        "--input",
        &input,
        "--expect",
        &want,
    ]);
    assert!(ok && out.matches(" OK").count() == 2, "{out}{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `tpuc generate` reproduces PyTorch's greedy tokens (`model.generate(do_sample=False)`,
/// 16 new tokens) for every decoder of testdata/decode (Llama, Qwen3, Gemma, GPT-2),
/// in both forms. A run past the static cache, a program that is not a decode step and
/// tokens that differ from --expect are errors that say so.
#[test]
fn generate_reproduces_pytorch_greedy_tokens() {
    let dir = temp("generate");
    let root = repo().join("testdata/decode");
    let names = crate::common::decode_models();
    for name in &names {
        let data = root.join(name);
        let prompt = data.join("prompt.npy");
        let expected = data.join("expected_tokens.npy");
        for form in ["exported", "core"] {
            let art = dir.join(format!("{name}-{form}.tpuc"));
            let model = data.join(format!("{form}.pt2"));
            let (ok, _, err) = compile_to(&model, &art, &[]);
            assert!(ok, "{name}/{form}: {err}");
            let (ok, out, err) = tpuc(&[
                "generate",
                art.to_str().unwrap(),
                "--prompt",
                prompt.to_str().unwrap(),
                "--max-new-tokens",
                "16",
                "--expect",
                expected.to_str().unwrap(),
            ]);
            assert!(ok, "{name}/{form}: {out}{err}");
            assert_eq!(out.split_whitespace().count(), 16, "{out}");
            assert!(
                err.contains("OK: the 16 tokens match") && err.contains("tokens/s"),
                "{err}"
            );
        }
    }
    let art = dir.join(format!("{}-core.tpuc", names[0]));
    let data = root.join(&names[0]);
    let prompt = data.join("prompt.npy");
    let (ok, _, err) = tpuc(&[
        "generate",
        art.to_str().unwrap(),
        "--prompt",
        prompt.to_str().unwrap(),
        "--max-new-tokens",
        "40",
    ]);
    assert!(
        !ok && err.contains("the artifact's static cache holds 32"),
        "{err}"
    );
    // One expected token changed: the run fails at that position.
    let mut want = tpuc_runtime::npy::read_npy(data.join("expected_tokens.npy")).unwrap();
    want.data[8 * 3] ^= 1;
    let wrong = dir.join("wrong.npy");
    tpuc_runtime::npy::write_npy(&wrong, &want).unwrap();
    let (ok, _, err) = tpuc(&[
        "generate",
        art.to_str().unwrap(),
        "--prompt",
        prompt.to_str().unwrap(),
        "--expect",
        wrong.to_str().unwrap(),
    ]);
    assert!(!ok && err.contains("FAIL: new token 3 is"), "{err}");
    let mlp = dir.join("mlp.tpuc");
    let src = repo().join("testdata/models/mlp/core.pt2");
    let (ok, _, err) = compile_to(&src, &mlp, &[]);
    assert!(ok, "{err}");
    let (ok, _, err) = tpuc(&[
        "generate",
        mlp.to_str().unwrap(),
        "--prompt",
        prompt.to_str().unwrap(),
    ]);
    assert!(!ok && err.contains("not a decode step"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
