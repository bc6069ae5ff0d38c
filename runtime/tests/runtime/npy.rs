//! The `.npy` reader and writer.

use crate::common::*;

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// Bytes written by numpy 2.4 `np.save` (arange(6, dtype='<i4').reshape(2, 3);
/// array([True, False, True]); float16 scalar 2.5).
const NUMPY_I4: &str = "934e554d5059010076007b276465736372273a20273c6934272c2027666f727472616e5f6f72646572273a2046616c73652c20277368617065273a2028322c2033292c207d202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020200a000000000100000002000000030000000400000005000000";
const NUMPY_B1: &str = "934e554d5059010076007b276465736372273a20277c6231272c2027666f727472616e5f6f72646572273a2046616c73652c20277368617065273a2028332c292c207d2020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020200a010001";
const NUMPY_F2_SCALAR: &str = "934e554d5059010076007b276465736372273a20273c6632272c2027666f727472616e5f6f72646572273a2046616c73652c20277368617065273a2028292c207d20202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020200a0041";

#[test]
fn npy_matches_numpy_byte_for_byte() {
    let i4 = tensor(
        DType::I32,
        &[2, 3],
        (0..6i32).flat_map(|v| v.to_le_bytes()).collect(),
    );
    assert_eq!(decode_npy(&hex(NUMPY_I4), "i4.npy").unwrap(), i4);
    assert_eq!(encode_npy(&i4, "i4.npy").unwrap(), hex(NUMPY_I4));
    let b1 = bools(&[3], &[true, false, true]);
    assert_eq!(decode_npy(&hex(NUMPY_B1), "b1.npy").unwrap(), b1);
    assert_eq!(encode_npy(&b1, "b1.npy").unwrap(), hex(NUMPY_B1));
    let f2 = tensor(DType::F16, &[], 0x4100u16.to_le_bytes().to_vec());
    assert_eq!(decode_npy(&hex(NUMPY_F2_SCALAR), "f2.npy").unwrap(), f2);
    assert_eq!(encode_npy(&f2, "f2.npy").unwrap(), hex(NUMPY_F2_SCALAR));
    assert_eq!(f2.to_f64_vec(), [2.5]);
}

#[test]
fn npy_round_trips_every_dtype() {
    let dir = scratch("npy");
    for dtype in ALL_DTYPES {
        let t = sample_of(dtype);
        let path = dir.join(format!("{dtype}.npy"));
        if dtype == DType::Bf16 {
            let err = write_npy(&path, &t).unwrap_err();
            assert!(err.to_string().contains("bf16"), "{err}");
            continue;
        }
        write_npy(&path, &t).unwrap();
        assert_eq!(read_npy(&path).unwrap(), t, "{dtype}");
    }
    // Scalars, vectors, empty arrays.
    for t in [
        HostTensor::from_f32(&[], &[3.0]),
        HostTensor::from_f32(&[4], &[1.0, 2.0, 3.0, 4.0]),
        HostTensor::from_f32(&[0, 5], &[]),
        i64s(&[1, 1, 1, 2], &[-1, i64::MAX]),
    ] {
        let path = dir.join("shape.npy");
        write_npy(&path, &t).unwrap();
        assert_eq!(read_npy(&path).unwrap(), t);
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// A .npy file with the given version and header text (padded as numpy does).
fn npy_with_header(version: u8, header: &str, data: &[u8]) -> Vec<u8> {
    let prefix = if version == 1 { 10 } else { 12 };
    let mut h = header.to_string();
    let total = (prefix + h.len() + 1).div_ceil(64) * 64;
    h.push_str(&" ".repeat(total - prefix - h.len() - 1));
    h.push('\n');
    let mut out = b"\x93NUMPY".to_vec();
    out.extend_from_slice(&[version, 0]);
    if version == 1 {
        out.extend_from_slice(&(h.len() as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(h.len() as u32).to_le_bytes());
    }
    out.extend_from_slice(h.as_bytes());
    out.extend_from_slice(data);
    out
}

#[test]
fn npy_versions_2_and_3_are_read() {
    let data: Vec<u8> = [1.0f64, 2.0].iter().flat_map(|v| v.to_le_bytes()).collect();
    for version in [2, 3] {
        let bytes = npy_with_header(
            version,
            "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }",
            &data,
        );
        let t = decode_npy(&bytes, "v.npy").unwrap();
        assert_eq!(t.dtype, DType::F64);
        assert_eq!(t.to_f64_vec(), [1.0, 2.0]);
    }
}

#[test]
fn npy_rejects_what_it_cannot_read() {
    let dir = scratch("npy-bad");
    let four = [0u8; 16];
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "fortran.npy",
            npy_with_header(
                1,
                "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }",
                &four,
            ),
            "Fortran",
        ),
        (
            "bigendian.npy",
            npy_with_header(
                1,
                "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 2), }",
                &four,
            ),
            "big-endian",
        ),
        (
            "truncated-data.npy",
            npy_with_header(
                1,
                "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                &four,
            ),
            "truncated data",
        ),
        (
            "complex256.npy",
            npy_with_header(
                1,
                "{'descr': '<c32', 'fortran_order': False, 'shape': (2,), }",
                &four,
            ),
            "unsupported dtype",
        ),
        ("magic.npy", b"PK\x03\x04 not numpy".to_vec(), "magic"),
        (
            "truncated-header.npy",
            hex(NUMPY_I4)[..40].to_vec(),
            "truncated header",
        ),
        (
            "version.npy",
            npy_with_header(
                1,
                "{'descr': '<f4', 'fortran_order': False, 'shape': (), }",
                &four[..4],
            )
            .into_iter()
            .enumerate()
            .map(|(i, b)| if i == 6 { 9 } else { b })
            .collect(),
            "version 9",
        ),
        (
            "garbage-header.npy",
            npy_with_header(
                1,
                "{'descr': '<f4', 'fortran_order': False, 'shape': (2",
                &four,
            ),
            "header",
        ),
    ];
    for (name, bytes, needle) in cases {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        let err = read_npy(&path).unwrap_err();
        let msg = err.to_string();
        assert!(
            matches!(err, tpuc_runtime::ArtifactError::Npy { .. }),
            "{msg}"
        );
        assert!(msg.contains(needle), "{name}: {msg}");
        assert!(msg.contains(name), "error does not name the file: {msg}");
    }
    let err = read_npy(dir.join("missing.npy")).unwrap_err();
    assert!(err.to_string().contains("missing.npy"), "{err}");
    std::fs::remove_dir_all(dir).unwrap();
}
