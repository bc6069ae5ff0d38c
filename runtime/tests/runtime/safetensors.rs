//! The safetensors reader.

use crate::common::*;

#[test]
fn safetensors_reader_reads_every_dtype() {
    let dir = scratch("st");
    let samples: Vec<(String, HostTensor)> = ALL_DTYPES
        .iter()
        .map(|&d| (format!("layer.{d}"), sample_of(d)))
        .collect();
    let scalar = HostTensor::from_f32(&[], &[7.0]);
    let empty = HostTensor::from_f32(&[0], &[]);
    let mut named: Vec<(&str, &HostTensor)> =
        samples.iter().map(|(n, t)| (n.as_str(), t)).collect();
    named.push(("scalar", &scalar));
    named.push(("empty", &empty));
    let path = dir.join("w.safetensors");
    write_safetensors(&path, &named, &[("format", "pt"), ("tpuc", "test")]);

    let st = SafeTensors::open(&path).unwrap();
    assert_eq!(st.len(), named.len());
    assert_eq!(st.metadata().get("tpuc").map(String::as_str), Some("test"));
    for (name, t) in &named {
        let view = st.view(name).unwrap();
        assert_eq!(view.dtype, t.dtype);
        assert_eq!(view.shape, t.shape.as_slice());
        assert_eq!(view.data, t.data.as_slice());
        assert_eq!(&st.tensor(name).unwrap(), *t);
    }
    // File order follows the data offsets.
    let order: Vec<&str> = st.names().collect();
    assert_eq!(order.first(), Some(&"layer.f64"));
    assert_eq!(st.to_host_tensors().len(), named.len());
    let err = st.view("nope").unwrap_err();
    assert!(err.to_string().contains("w.safetensors"), "{err}");

    // Truncation is detected and the file named.
    let bytes = std::fs::read(&path).unwrap();
    let cut = dir.join("cut.safetensors");
    std::fs::write(&cut, &bytes[..bytes.len() - 3]).unwrap();
    let err = SafeTensors::open(&cut).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("cut.safetensors") && msg.contains("beyond"),
        "{msg}"
    );
    let tiny = dir.join("tiny.safetensors");
    std::fs::write(&tiny, [1u8, 2, 3]).unwrap();
    let err = SafeTensors::open(&tiny).unwrap_err();
    assert!(err.to_string().contains("truncated"), "{err}");
    std::fs::remove_dir_all(dir).unwrap();
}
