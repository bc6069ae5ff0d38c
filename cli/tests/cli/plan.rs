//! `tpuc plan`: the planner on the tiny corpus decoders for 4 CPU devices picks plans
//! whose programs run and match PyTorch (compiled from the rules file it writes); on a
//! TPU slice (with libtpu) it prints XLA's figures and `tpuc compile --auto-shard`
//! compiles its choice; bad input is refused with a reason, and a program too big for
//! a slice gets the closest plan and what takes the memory.
#![cfg(feature = "compiler")]

use crate::common::{libtpu_present, manifest, repo, run_expect_args, temp, tpuc};

/// The coverage decoders (families `decoder` and `moe`).
fn decoders() -> Vec<String> {
    let (models, _) =
        tpuc_cli::coverage::read_model_index(&repo().join("testdata/coverage/models")).unwrap();
    let names: Vec<String> = models
        .into_iter()
        .filter(|(_, family)| family == "decoder" || family == "moe")
        .map(|(name, _)| name)
        .collect();
    assert!(names.len() >= 15, "{names:?}");
    names
}

#[test]
fn plans_for_four_cpu_devices_run_and_match_pytorch() {
    let dir = temp("plan-cpu");
    let mut failures = Vec::new();
    for name in decoders() {
        let model_dir = repo().join("testdata/coverage/models").join(&name);
        let model = model_dir.join("core.pt2");
        let rules = dir.join(format!("{name}.rules"));
        let (ok, out, err) = tpuc(&[
            "plan",
            model.to_str().unwrap(),
            "--devices",
            "4",
            "--write-rules",
            rules.to_str().unwrap(),
        ]);
        if !ok {
            failures.push(format!("{name}: plan: {err}"));
            continue;
        }
        // The table marks one plan, and the rules file names its mesh.
        let chosen: Vec<&str> = out.lines().filter(|l| l.starts_with("* ")).collect();
        assert_eq!(chosen.len(), 1, "{name}: {out}");
        let mesh = chosen[0][2..]
            .split_whitespace()
            .next()
            .unwrap()
            .to_string();
        let text = std::fs::read_to_string(&rules).unwrap();
        assert!(
            text.starts_with("# tpuc plan") && text.contains(&format!("mesh: {mesh}\n")),
            "{name}: {text}"
        );
        let art = dir.join(format!("{name}.tpuc"));
        let (ok, _, err) = tpuc(&[
            "compile",
            model.to_str().unwrap(),
            "-o",
            art.to_str().unwrap(),
            "--sharding-rules",
            rules.to_str().unwrap(),
        ]);
        if !ok {
            failures.push(format!("{name}: compile --sharding-rules: {err}"));
            continue;
        }
        assert_eq!(
            manifest(&art).partitioning.unwrap().mesh.to_string(),
            mesh,
            "{name}"
        );
        let args = run_expect_args(&art, &model_dir, &[]);
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let (ok, out, err) = tpuc(&refs);
        if !ok {
            failures.push(format!("{name} --mesh {mesh}: run: {out}{err}"));
        }
        let _ = std::fs::remove_dir_all(&art);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));

    // A second plan of a model reads nothing from the TPU cache (CPU plans are not
    // cached) but gives the same choice: the planner is deterministic.
    let model = repo().join("testdata/coverage/models/llama/core.pt2");
    let m = model.to_str().unwrap();
    let (ok1, out1, _) = tpuc(&["plan", m, "--devices", "4", "--json"]);
    let (ok2, out2, _) = tpuc(&["plan", m, "--devices", "4", "--json"]);
    assert!(ok1 && ok2);
    let chosen = |out: &str| -> String {
        let v: serde_json::Value = serde_json::from_str(out).unwrap();
        v["plans"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["chosen"] == true)
            .unwrap()["mesh"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(chosen(&out1), chosen(&out2));

    // Bad input: each refused with its reason.
    let rules = dir.join("user.rules");
    std::fs::write(&rules, "*.weight [tp, -]\n").unwrap();
    for (args, wanted) in [
        (
            vec!["plan", m, "--devices", "4", "--axes", "dp,pp"],
            "unknown axis `pp`",
        ),
        (vec!["plan", m, "--devices", "1"], "at least 2 devices"),
        (
            vec!["plan", m, "--devices", "4", "--axes", "ep"],
            "no candidate plan applies",
        ),
        (
            vec![
                "plan",
                m,
                "--devices",
                "4",
                "--write-rules",
                rules.to_str().unwrap(),
            ],
            "was not written by tpuc plan",
        ),
        (
            vec!["compile", m, "-o", "x.tpuc", "--auto-shard"],
            "give --topology",
        ),
        (
            vec![
                "compile",
                m,
                "-o",
                "x.tpuc",
                "--mesh",
                "dp=2,tpp=2",
                "--shard",
                "data-parallel",
            ],
            "mesh axis `tpp` is used by no --shard strategy",
        ),
    ] {
        let (ok, _, err) = tpuc(&args);
        assert!(!ok && err.contains(wanted), "{args:?}: {err}");
    }
    // The user's file is kept as it was.
    assert_eq!(
        std::fs::read_to_string(&rules).unwrap(),
        "*.weight [tp, -]\n"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// On a TPU slice: XLA's figures for the compiled plans (peak memory, FLOPs, bytes,
/// roofline times at the requested precision and at `default`), the choice cached for
/// the next run, and `tpuc compile --auto-shard` compiling the same plan for the slice.
#[test]
fn plans_for_a_tpu_slice_and_auto_shard() {
    if !libtpu_present() {
        return;
    }
    let dir = temp("plan-tpu");
    let cache = dir.join("cache");
    let model = repo().join("testdata/coverage/models/llama/core.pt2");
    let m = model.to_str().unwrap();
    let env = [("TPUC_CACHE_DIR", cache.as_path())];
    let (ok, out, err) =
        crate::common::tpuc_env(&["plan", m, "--topology", "v5e:2x2", "--json"], &env);
    assert!(ok, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["devices"], 4);
    let plans = v["plans"].as_array().unwrap();
    let chosen = plans.iter().find(|p| p["chosen"] == true).unwrap();
    let measured = &chosen["measured"];
    assert!(measured["fits"] == true, "{chosen}");
    for key in [
        "peak_bytes",
        "flops",
        "bytes_accessed",
        "seconds",
        "seconds_default",
    ] {
        assert!(measured[key].as_f64().unwrap() > 0.0, "{key}: {chosen}");
    }
    // f32 matmuls at `highest` take more MXU passes than at `default`.
    assert!(measured["seconds"].as_f64().unwrap() >= measured["seconds_default"].as_f64().unwrap());
    // Again: the measured plans come from the cache.
    let (ok, out, err) =
        crate::common::tpuc_env(&["plan", m, "--topology", "v5e:2x2", "--json"], &env);
    assert!(ok && err.contains("from the cache"), "{err}");
    let again: serde_json::Value = serde_json::from_str(&out).unwrap();
    let chosen_again = again["plans"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["chosen"] == true)
        .unwrap();
    assert_eq!(chosen_again["mesh"], chosen["mesh"]);
    // --auto-shard compiles that plan for the slice.
    let art = dir.join("auto.tpuc");
    let (ok, _, err) = crate::common::tpuc_env(
        &[
            "compile",
            m,
            "-o",
            art.to_str().unwrap(),
            "--topology",
            "v5e:2x2",
            "--auto-shard",
        ],
        &env,
    );
    assert!(ok, "{err}");
    let manifest = manifest(&art);
    assert_eq!(
        manifest.partitioning.unwrap().mesh.to_string(),
        chosen["mesh"].as_str().unwrap()
    );
    assert_eq!(manifest.tpu_executables.len(), 1);
    assert!(manifest.tpu_executables[0].report.fits);

    // A program no plan fits (testdata/zoo/too_big.json: 32 GiB of bf16 weights): on one
    // v5e chip libtpu's out-of-memory refusal comes with what takes the memory, by
    // weight and graph node; on two, the planner names the closest plan and how far over
    // it is.
    let too_big = repo().join("testdata/zoo/too_big.json");
    let t = too_big.to_str().unwrap();
    let art = dir.join("too_big.tpuc");
    let (ok, _, err) = crate::common::tpuc_env(
        &[
            "compile",
            t,
            "--weights-as-inputs",
            "-o",
            art.to_str().unwrap(),
            "--topology",
            "v5e:1x1",
        ],
        &env,
    );
    assert!(!ok, "{err}");
    for wanted in [
        "Ran out of memory",
        "the arguments take 32.00 GiB per device; the largest: `down.weight` 16.00 GiB, `up.weight` 16.00 GiB",
        "(graph node, whole tensor): `mm` tensor<8x131072xf32>",
        "hint: partition it over more devices: `tpuc plan",
    ] {
        assert!(err.contains(wanted), "{wanted}: {err}");
    }
    assert!(!art.exists());
    let (ok, _, err) = crate::common::tpuc_env(
        &["plan", t, "--weights-as-inputs", "--topology", "v5e:2x1"],
        &env,
    );
    assert!(
        !ok && err.contains("no plan fits v5e:2x1: the closest is --mesh")
            && err.contains("over the"),
        "{err}"
    );
    // A mesh that does not span the slice.
    let (ok, _, err) = tpuc(&[
        "compile",
        m,
        "-o",
        art.to_str().unwrap(),
        "--topology",
        "v5e:2x4",
        "--mesh",
        "tp=4",
        "--shard",
        "megatron",
    ]);
    assert!(!ok && err.contains("partition over all 8"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
