//! Stateful programs: state kept on the device between runs.

use crate::common::*;

/// A run that fails after its execution consumed the state it donated (here: the
/// program for `s = 5` returns an output the manifest contradicts, found once the
/// execution is done) leaves the session with usable state: read_state and the next
/// run work, from the artifact's initial state, and the error says the state was reset.
#[test]
fn a_failed_stateful_run_leaves_usable_state() {
    let Some(client) = client() else { return };
    let dir = scratch("stateful-failed-run");
    write_stateful_artifact(&dir);
    let session = Session::load(&dir, client).unwrap();
    assert_eq!(session.state_names(), ["b_count"]);
    let x3 = HostTensor::from_f32(&[3], &[1.0, 2.0, 3.0]);
    // The first run reads the initial state; its update is what the next run donates.
    let out = session.run(std::slice::from_ref(&x3)).unwrap();
    assert_eq!(f32s(&out[0]), [2.0, 4.0, 6.0]);
    let out = session.run(std::slice::from_ref(&x3)).unwrap();
    assert_eq!(f32s(&out[0]), [2.0, 4.0, 6.0]);
    assert_eq!(
        f32s(&session.read_state("b_count").unwrap()),
        [12.0, 22.0, 32.0, 42.0]
    );

    // PJRT refuses an input on another device before it consumes anything: the state
    // stays as it was.
    let elsewhere = client.buffer_from_host(&x3, 1).unwrap();
    let err = session.run_buffers(&[&elsewhere]).unwrap_err();
    assert!(!err.to_string().contains("state"), "{err}");
    assert_eq!(
        f32s(&session.read_state("b_count").unwrap()),
        [12.0, 22.0, 32.0, 42.0]
    );

    let x5 = HostTensor::from_f32(&[5], &[1.0; 5]);
    let err = session.run(std::slice::from_ref(&x5)).unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(err, RuntimeError::OutputMismatch { index: 0, .. }),
        "{msg}"
    );
    assert!(
        msg.contains("state"),
        "the error says what became of the state: {msg}"
    );

    let state = session
        .read_state("b_count")
        .unwrap_or_else(|e| panic!("read_state after a failed run: {e}"));
    assert_eq!(f32s(&state), [10.0, 20.0, 30.0, 40.0]);
    session
        .run(std::slice::from_ref(&x3))
        .unwrap_or_else(|e| panic!("a run after a failed run: {e}"));
    assert_eq!(
        f32s(&session.read_state("b_count").unwrap()),
        [11.0, 21.0, 31.0, 41.0]
    );
    std::fs::remove_dir_all(dir).unwrap();
}
