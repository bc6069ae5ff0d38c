//! Every corpus model through `tpuc run --expect`, and the Core ATen op suite.
#![cfg(feature = "compiler")]

use crate::common::{compile_to, repo, run_expect_args, temp, tpuc};

/// Issue 3's bar: every corpus model, compiled by `tpuc compile`, runs through
/// `tpuc run --expect` and matches PyTorch's outputs (dtype-aware default tolerances).
#[test]
fn every_corpus_model_passes_tpuc_run_expect() {
    let index = std::fs::read_to_string(repo().join("testdata/models/index.json")).unwrap();
    let index: serde_json::Value = serde_json::from_str(&index).unwrap();
    let dir = temp("corpus");
    let mut failures = Vec::new();
    for name in index["models"].as_array().unwrap() {
        let name = name.as_str().unwrap();
        let model_dir = repo().join("testdata/models").join(name);
        for form in ["exported", "core"] {
            let art = dir.join(format!("{name}-{form}.tpuc"));
            let model = model_dir.join(format!("{form}.pt2"));
            let (ok, _, err) = compile_to(&model, &art, &[]);
            if !ok {
                failures.push(format!("{name}/{form}: compile: {err}"));
                continue;
            }
            let args = run_expect_args(&art, &model_dir, &[]);
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            let (ok, out, err) = tpuc(&refs);
            if !ok || out.contains("FAIL") {
                failures.push(format!("{name}/{form}: run: {out}\n{err}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The op-level suite (testdata/ops): every Core ATen case compiles, runs on the CPU
/// plugin and matches PyTorch, except the cases listed with a reason in
/// `testdata/ops/expected_failures.txt` (`case-id  reason`), which must still fail, so
/// that a fixed case gets taken off the list.
#[test]
fn core_aten_op_suite_matches_pytorch() {
    assert_op_suite_matches("testdata/ops");
}

/// The as-exported op suite (testdata/ops/exported, `generate_exported_ops.py`): the
/// composite ops pre-decomposition graphs keep (`square`, `log_sigmoid`, `linear`,
/// `scaled_dot_product_attention`, `meshgrid`...), each as exported, held to the same
/// rule.
#[test]
fn as_exported_op_suite_matches_pytorch() {
    assert_op_suite_matches("testdata/ops/exported");
}

/// Every case of the op suite under `dir` matches PyTorch except those its
/// `expected_failures.txt` lists, which must still fail.
fn assert_op_suite_matches(dir: &str) {
    use tpuc_cli::coverage;
    let root = repo().join(dir);
    let suite = coverage::read_op_suite(&root).expect("the suite's index.json");
    assert!(!suite.cases.is_empty());
    let expected = &suite.known_failures;
    let plugin = tpuc_runtime::discover::find_plugin(None).expect("CPU plugin (make setup)");
    let plugin = tpuc_runtime::Plugin::load(&plugin).unwrap();
    let client = plugin
        .create_client(&tpuc_runtime::ClientOptions::cpu(1))
        .unwrap();
    let scratch = temp(&format!("op-suite-{}", dir.replace('/', "-")));
    let cache = scratch.join("cache");
    std::fs::create_dir_all(&cache).unwrap();
    let options = tpuc_compiler::CompileOptions::default();
    let runner = coverage::Runner {
        client: &client,
        options: &options,
        cache_dir: &cache,
        tolerance_floor: None,
    };
    let results = coverage::run_op_suite(&runner, &suite, &scratch, |_, _, _| {});
    let mut unexpected = Vec::new();
    let mut fixed = Vec::new();
    for (case, outcome) in &results {
        match (outcome.matched(), expected.contains_key(&case.id)) {
            (false, false) => unexpected.push(format!("{}: {}", case.id, outcome.summary())),
            (true, true) => fixed.push(case.id.clone()),
            _ => {}
        }
    }
    assert!(
        unexpected.is_empty(),
        "op cases failing:\n{}",
        unexpected.join("\n")
    );
    assert!(
        fixed.is_empty(),
        "now passing, remove from expected_failures.txt:\n{}",
        fixed.join("\n")
    );
    let _ = std::fs::remove_dir_all(&scratch);
}
