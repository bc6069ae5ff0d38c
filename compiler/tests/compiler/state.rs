//! Stateful programs: buffers carried between calls.

use tpuc_compiler::CompileOptions;
use tpuc_runtime::compare::{compare, default_tolerances};
use tpuc_runtime::Session;

use crate::common::{client, compile_err, repo, temp_dir};

/// testdata/stateful: a static-KV-cache Llama decode step and a buffer counter keep
/// their buffers as state: in both forms the artifact marks which outputs update which
/// buffers, and successive calls of one session match PyTorch's successive calls. The
/// state stays on the device: each call moves only its user inputs and outputs.
/// `reset_state` starts over; `read_state`/`write_state` save and restore it. A write
/// into a user input is still refused, naming the tensor.
#[test]
fn stateful_programs_carry_their_buffers_between_calls() {
    let out = temp_dir("stateful");
    for (name, state_count) in [
        ("buffer_counter", 1),
        ("llama_decode", 6),
        ("batch_norm_train", 3),
    ] {
        let dir = repo().join("testdata/stateful").join(name);
        let meta: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json")).unwrap()).unwrap();
        let load = |list: &serde_json::Value| -> Vec<tpuc_runtime::HostTensor> {
            list.as_array()
                .unwrap()
                .iter()
                .map(|p| tpuc_runtime::npy::read_npy(dir.join(p.as_str().unwrap())).unwrap())
                .collect()
        };
        let calls: Vec<_> = meta["calls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (load(&c["inputs"]), load(&c["expected"])))
            .collect();
        assert!(calls.len() >= 3, "{name}: {} calls", calls.len());
        for form in ["exported", "core"] {
            let art = out.join(format!("{name}-{form}.tpuc"));
            tpuc_compiler::compile(
                &dir.join(format!("{form}.pt2")),
                &art,
                &CompileOptions::default(),
            )
            .unwrap_or_else(|e| panic!("{name}/{form}: {e}"));
            let session = Session::load(&art, client()).unwrap();
            assert_eq!(session.state_names().len(), state_count, "{name}/{form}");
            let check = |call: usize, outputs: &[tpuc_runtime::HostTensor]| {
                let expected = &calls[call].1;
                assert_eq!(outputs.len(), expected.len(), "{name}/{form} call {call}");
                for (got, want) in outputs.iter().zip(expected) {
                    let (rtol, atol) = default_tolerances(want.dtype);
                    let c = compare(got, want, rtol, atol);
                    assert!(c.passed(), "{name}/{form} call {call}: {c:?}");
                }
            };
            let mut saved = None;
            for (i, (inputs, _)) in calls.iter().enumerate() {
                let before = session.transfer_stats();
                let outputs = session.run(inputs).unwrap();
                check(i, &outputs);
                let after = session.transfer_stats();
                let in_bytes: u64 = inputs.iter().map(|t| t.data.len() as u64).sum();
                let out_bytes: u64 = outputs.iter().map(|t| t.data.len() as u64).sum();
                assert_eq!(
                    (
                        after.host_to_device - before.host_to_device,
                        after.host_to_device_bytes - before.host_to_device_bytes,
                        after.device_to_host - before.device_to_host,
                        after.device_to_host_bytes - before.device_to_host_bytes,
                    ),
                    (
                        inputs.len() as u64,
                        in_bytes,
                        outputs.len() as u64,
                        out_bytes
                    ),
                    "{name}/{form} call {i}: the state crossed to the host"
                );
                if i == 0 {
                    saved = Some(
                        session
                            .state_names()
                            .iter()
                            .map(|n| (n.to_string(), session.read_state(n).unwrap()))
                            .collect::<Vec<_>>(),
                    );
                }
            }
            // From the start again, and from the state saved after call 0.
            session.reset_state().unwrap();
            check(0, &session.run(&calls[0].0).unwrap());
            for (n, t) in saved.unwrap() {
                session.write_state(&n, &t).unwrap();
            }
            check(1, &session.run(&calls[1].0).unwrap());
            let err = session.read_state("nope").unwrap_err().to_string();
            assert!(err.contains("`nope` is not state of this program"), "{err}");
        }
    }
    for (form, needles) in [
        ("exported", vec!["user input `x`", "node `mul_`"]),
        ("core", vec!["user input `x`", "user_input_mutation"]),
    ] {
        let src = repo().join(format!("testdata/stateful/input_mutation/{form}.pt2"));
        let e = compile_err(&src, &out.join(format!("input-{form}.tpuc")));
        for n in needles {
            assert!(
                e.contains(n),
                "input_mutation/{form}: `{n}` missing from: {e}"
            );
        }
        assert!(e.contains("keep") && e.contains("buffers as state"), "{e}");
    }
    let _ = std::fs::remove_dir_all(&out);
}
