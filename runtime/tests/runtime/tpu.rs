//! The deviceless TPU path through libtpu (`make setup` installs it into
//! `.deps/libtpu`): a topology by name, a StableHLO program compiled for it with no TPU
//! attached, and XLA's per-chip figures. Without libtpu every test here says SKIPPED
//! on stderr (and `make test` prints a banner); with `TPUC_LIBTPU` set, a missing
//! libtpu is a failure.

use crate::common::*;

const MATMUL_GELU: &str = r#"module {
  func.func @main(%a: tensor<256x512xf32>, %b: tensor<512x256xf32>) -> tensor<256x256xf32> {
    %0 = "stablehlo.dot_general"(%a, %b) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<256x512xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %1 = "stablehlo.tanh"(%0) : (tensor<256x256xf32>) -> tensor<256x256xf32>
    "func.return"(%1) : (tensor<256x256xf32>) -> ()
  }
}
"#;

fn figure(cost: &[(String, NamedValue)], name: &str) -> Option<f64> {
    cost.iter()
        .find(|(n, _)| n == name)
        .and_then(|(_, v)| v.as_f64())
}

#[test]
fn compiles_for_a_named_topology_without_a_tpu() {
    let Some(tpu) = libtpu() else { return };
    let topology = tpu.topology("v5e:2x2").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(topology.platform_name().unwrap(), "tpu");
    assert_eq!(topology.num_devices().unwrap(), 4);
    let exe = topology
        .compile(MATMUL_GELU.as_bytes(), "mlir", &CompileOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let stats = exe.compiled_memory_stats().unwrap();
    // Two f32 arguments of 512 KiB each, one 256 KiB output.
    assert_eq!(stats.argument_size_in_bytes, 2 * 256 * 512 * 4);
    assert_eq!(stats.output_size_in_bytes, 256 * 256 * 4);
    let cost = exe.cost_analysis().unwrap();
    let flops = figure(&cost, "flops").unwrap_or_else(|| panic!("{cost:?}"));
    assert!(flops >= 2.0 * 256.0 * 512.0 * 256.0, "{cost:?}");
    assert!(!exe.serialize().unwrap().is_empty());
    let (format, code) = exe.optimized_program().unwrap();
    assert!(!code.is_empty(), "{format}");
}

#[test]
fn unknown_topologies_are_the_plugins_error() {
    let Some(tpu) = libtpu() else { return };
    let err = tpu.topology("v99:1x1").err().unwrap().to_string();
    assert!(err.contains("PJRT_TopologyDescription_Create"), "{err}");
}
