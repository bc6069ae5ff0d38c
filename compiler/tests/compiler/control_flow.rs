//! Control flow (cond, while_loop, scan, map): every path matches PyTorch; bad
//! subgraphs are refused naming the subgraph.

use tpuc_compiler::passes::OptLevel;
use tpuc_compiler::CompileOptions;
use tpuc_runtime::Session;

use crate::common::{
    assert_calls_match, client, compile_err, edit_json, meta_calls, repo, rewrite_archive, temp_dir,
};

/// torch.cond, while_loop, scan and map programs (nested ones and data-dependent
/// predicates among them) compile in both forms and at -O0 and -O2 into StableHLO
/// control flow, and every call, each taking its own path (both branches, loops of
/// different trip counts, zero included), matches eager PyTorch.
#[test]
fn control_flow_programs_match_pytorch_on_every_path() {
    let out = temp_dir("control-flow");
    let root = repo().join("testdata/control_flow");
    let index: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("index.json")).unwrap()).unwrap();
    let names: Vec<&str> = index["programs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(names.len() >= 10, "{names:?}");
    for name in names {
        let dir = root.join(name);
        let calls = meta_calls(&dir);
        for form in ["exported", "core"] {
            for level in [OptLevel::O0, OptLevel::O2] {
                let tag = format!("{name}/{form}/{level:?}");
                let art = out.join(format!("{name}-{form}-{level:?}.tpuc"));
                let options = CompileOptions {
                    opt_level: level,
                    ..CompileOptions::default()
                };
                tpuc_compiler::compile(&dir.join(format!("{form}.pt2")), &art, &options)
                    .unwrap_or_else(|e| panic!("{tag}: {e}"));
                let program = std::fs::read_to_string(art.join("program.mlir")).unwrap();
                let loops = name.starts_with("while")
                    || name.starts_with("scan")
                    || name.starts_with("map");
                let conds = name.starts_with("cond") || name.ends_with("_cond");
                assert_eq!(program.contains("\"stablehlo.while\""), loops, "{tag}");
                assert_eq!(program.contains("\"stablehlo.if\""), conds, "{tag}");
                let session = Session::load(&art, client()).unwrap();
                assert_calls_match(&session, &calls, &tag);
            }
        }
    }
    let _ = std::fs::remove_dir_all(&out);
}

/// A damaged subgraph is refused naming the subgraph and its node, and a higher-order
/// operator tpuc has no lowering for is listed as an unsupported op with its node.
#[test]
fn bad_control_flow_is_refused_naming_the_subgraph() {
    let out = temp_dir("bad-control-flow");
    let src = repo().join("testdata/control_flow/cond_sign/core.pt2");
    let edited = |tag: &str, f: fn(&mut serde_json::Value)| {
        let dst = out.join(format!("{tag}.pt2"));
        rewrite_archive(&src, &dst, |name, bytes| {
            Some(if name.ends_with("models/model.json") {
                edit_json(bytes, f)
            } else {
                bytes
            })
        });
        dst
    };
    // The true branch's output names a tensor no node defines.
    let dangling = edited("dangling", |v| {
        let nodes = v["graph_module"]["graph"]["nodes"].as_array_mut().unwrap();
        let node = nodes
            .iter_mut()
            .find(|n| n["target"] == "torch.ops.higher_order.cond")
            .unwrap();
        node["inputs"][1]["arg"]["as_graph"]["graph"]["outputs"][0]["as_tensor"]["name"] =
            "ghost".into();
    });
    let e = compile_err(&dangling, &out.join("a.tpuc"));
    for want in ["subgraph `true_graph_0`", "`ghost`"] {
        assert!(e.contains(want), "{e}");
    }
    // An op inside a branch that no lowering knows: named by its path.
    let unknown_inner = edited("inner", |v| {
        let nodes = v["graph_module"]["graph"]["nodes"].as_array_mut().unwrap();
        let node = nodes
            .iter_mut()
            .find(|n| n["target"] == "torch.ops.higher_order.cond")
            .unwrap();
        node["inputs"][2]["arg"]["as_graph"]["graph"]["nodes"][0]["target"] =
            "torch.ops.mylib.nope.default".into();
    });
    let e = compile_err(&unknown_inner, &out.join("b.tpuc"));
    assert!(e.contains("mylib.nope.default"), "{e}");
    assert!(e.contains("cond/false_graph_0/"), "{e}");
    // A higher-order operator tpuc does not lower.
    let unknown = edited("unknown", |v| {
        let nodes = v["graph_module"]["graph"]["nodes"].as_array_mut().unwrap();
        let node = nodes
            .iter_mut()
            .find(|n| n["target"] == "torch.ops.higher_order.cond")
            .unwrap();
        node["target"] = "torch.ops.higher_order.invoke_subgraph".into();
    });
    let e = compile_err(&unknown, &out.join("c.tpuc"));
    assert!(e.contains("higher_order.invoke_subgraph"), "{e}");
    assert!(e.contains("cond"), "{e}");
    assert!(!out.join("a.tpuc").exists() && !out.join("c.tpuc").exists());
    let _ = std::fs::remove_dir_all(&out);
}
