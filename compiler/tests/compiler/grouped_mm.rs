//! Mixture-of-experts grouped matmuls (`transformers.grouped_mm_fallback`,
//! `aten._grouped_mm`) on the CPU plugin: the routed loop (every target with loops) and
//! the dense form (Neuron) and the TPU form (a ragged dot where the groups tile the
//! rows) compute what PyTorch's loop computes, for offsets inside the op's contract and
//! outside it, and XLA's cost of the routed program is the routed
//! FLOPs, not E times them.

use tpuc_runtime::{DType, HostTensor};

use crate::common::client;

/// The node targets, with the weight operand's name and the offsets' type.
const OPS: [(&str, &str, &str); 2] = [
    ("transformers.grouped_mm_fallback.default", "weight", "i32"),
    ("aten._grouped_mm.default", "mat2", "i32"),
];

/// An ATen-level `@main(x [S, K], w [E, K, N], offs [E]) -> [S, N]` of one grouped matmul.
fn module(op: (&str, &str, &str), dtype: &str, s: i64, k: i64, e: i64, n: i64) -> String {
    let (target, weight, offs) = op;
    let (x, w, o, r) = (
        format!("tensor<{s}x{k}x{dtype}>"),
        format!("tensor<{e}x{k}x{n}x{dtype}>"),
        format!("tensor<{e}x{offs}>"),
        format!("tensor<{s}x{n}x{dtype}>"),
    );
    let first = if target.starts_with("aten") {
        "self"
    } else {
        "input"
    };
    format!(
        r#""func.func"() <{{function_type = ({x}, {w}, {o}) -> {r}, sym_name = "main"}}> ({{
^bb0(%x: {x}, %w: {w}, %o: {o}):
  %0 = "{target}"(%x, %w, %o) {{operand_names = ["{first}", "{weight}", "offs"]}} : ({x}, {w}, {o}) -> {r} loc("grouped_mm")
  "func.return"(%0) : ({r}) -> ()
}}) : () -> ()
"#
    )
}

/// The pipelines compared: the routed loop as -O2 builds it (inside its composite) and
/// at -O0, the dense form, and the TPU form (`chlo.ragged_dot` for groups that tile the
/// rows, the loop for others), its ragged dot emulated by its definition so that the
/// CPU plugin runs it.
const PIPELINES: [&str; 4] = [
    "aten-outline-composites,lower-aten-to-stablehlo,stablehlo-fold-constants,stablehlo-simplify,stablehlo-dce,stablehlo-cse,verify-stablehlo",
    "lower-aten-to-stablehlo,verify-stablehlo",
    "lower-aten-to-stablehlo{grouped-mm=dense},verify-stablehlo",
    "aten-outline-composites,lower-aten-to-stablehlo,tpu-grouped-mm-to-ragged-dot{emulated=true},stablehlo-fold-constants,stablehlo-simplify,stablehlo-dce,stablehlo-cse,verify-stablehlo",
];

fn lower(text: &str, pipeline: &str) -> String {
    tpuc_compiler::run_opt(text, "grouped_mm.mlir", pipeline, false)
        .unwrap_or_else(|e| panic!("{pipeline}: {e}"))
}

/// Deterministic values in [-1, 1).
fn values(count: usize, seed: u64) -> Vec<f32> {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..count)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

fn bf16_round(v: f32) -> f32 {
    let bits = v.to_bits();
    let rounded = bits.wrapping_add(0x7fff + ((bits >> 16) & 1)) & 0xffff_0000;
    f32::from_bits(rounded)
}

fn tensor(dtype: DType, shape: &[i64], v: &[f32]) -> HostTensor {
    match dtype {
        DType::F32 => HostTensor::from_f32(shape, v),
        DType::Bf16 => HostTensor {
            dtype,
            shape: shape.to_vec(),
            data: v
                .iter()
                .flat_map(|x| ((bf16_round(*x).to_bits() >> 16) as u16).to_le_bytes())
                .collect(),
        },
        _ => unreachable!(),
    }
}

/// PyTorch's grouped matmul on CPU, as ATen's `_grouped_mm_fallback` and transformers'
/// `_grouped_mm_fallback` write it: `start = 0; for i, end in enumerate(offs):
/// out[start:end] = x[start:end] @ w[i]; start = end`, each slice bounded as
/// `Tensor.slice` bounds it (a negative bound plus S, then clamped into [0, S], an end
/// below its start empty), over an output of zeros. In f64.
fn pytorch(x: &[f32], w: &[f32], offs: &[i64], s: i64, k: i64, n: i64) -> Vec<f64> {
    let (s_, k, n) = (s as usize, k as usize, n as usize);
    let bound = |v: i64| (if v < 0 { v + s } else { v }).clamp(0, s) as usize;
    let mut out = vec![0.0f64; s_ * n];
    let mut start = 0i64;
    for (g, &end) in offs.iter().enumerate() {
        let a = bound(start);
        let b = bound(end).max(a);
        for r in a..b {
            for j in 0..n {
                out[r * n + j] = (0..k)
                    .map(|c| x[r * k + c] as f64 * w[(g * k + c) * n + j] as f64)
                    .sum();
            }
        }
        start = end;
    }
    out
}

fn run(program: &str, inputs: &[HostTensor]) -> Vec<f64> {
    let exe = client()
        .compile_mlir(program, &tpuc_runtime::CompileOptions::default())
        .unwrap_or_else(|e| panic!("{e}\n{program}"));
    let buffers: Vec<_> = inputs
        .iter()
        .map(|t| client().buffer_from_host(t, 0).unwrap())
        .collect();
    let refs: Vec<_> = buffers.iter().collect();
    let out = exe.execute(&refs).unwrap();
    out[0].to_host().unwrap().to_f64_vec()
}

fn offsets_tensor(offs: &[i64]) -> HostTensor {
    HostTensor {
        dtype: DType::I32,
        shape: vec![offs.len() as i64],
        data: offs
            .iter()
            .flat_map(|o| (*o as i32).to_le_bytes())
            .collect(),
    }
}

/// Offsets inside the op's contract (monotone, at most S: balanced, empty experts,
/// uncovered trailing rows, every row on one expert) and outside it (not monotone,
/// past S, negative), with chunks that are clamped at the end of the rows (S = 300, C =
/// 64), all match PyTorch's loop in both node forms, the routed form at -O2 and -O0 and
/// the dense form, in f32 and bf16 (f32 accumulation, one rounding).
#[test]
fn grouped_mm_matches_pytorch_for_every_offset_pattern() {
    // (S, K, E, N, the offsets tried)
    type Case<'a> = (i64, i64, i64, i64, &'a [&'a [i64]]);
    let cases: &[Case] = &[
        (
            20,
            6,
            4,
            5,
            &[
                &[5, 10, 15, 20],
                &[0, 0, 20, 20],
                &[3, 3, 9, 14],
                &[20, 20, 20, 20],
                &[0, 0, 0, 0],
                &[1, 2, 3, 19],
                // Outside the contract: not monotone (a later group rewrites rows),
                // past S, negative (counted from the end, as Python slices).
                &[12, 4, 16, 20],
                &[6, 2, 8, 3],
                &[5, 30, 40, 50],
                &[-15, 8, -2, 20],
                &[-100, 100, -100, 100],
            ],
        ),
        (
            300,
            8,
            2,
            3,
            &[&[150, 299], &[1, 300], &[299, 300], &[300, 1]],
        ),
        (7, 3, 1, 2, &[&[7], &[4], &[-3]]),
    ];
    for dtype in [DType::F32, DType::Bf16] {
        let type_name = if dtype == DType::F32 { "f32" } else { "bf16" };
        for &(s, k, e, n, offsets) in cases {
            let x = values((s * k) as usize, 1);
            let mut w = values((e * k * n) as usize, 2);
            // An infinity in the last expert's weight: offsets that give it no row must
            // not see it (PyTorch never reads it; the dense form used to multiply it by
            // a zero mask, making NaN).
            w[((e - 1) * k * n) as usize] = f32::INFINITY;
            let (xr, wr): (Vec<f32>, Vec<f32>) = match dtype {
                DType::Bf16 => (
                    x.iter().map(|v| bf16_round(*v)).collect(),
                    w.iter().map(|v| bf16_round(*v)).collect(),
                ),
                _ => (x.clone(), w.clone()),
            };
            for op in OPS {
                let text = module(op, type_name, s, k, e, n);
                for pipeline in PIPELINES {
                    let program = lower(&text, pipeline);
                    let routed = !pipeline.contains("dense");
                    assert_eq!(
                        program.contains("\"stablehlo.while\""),
                        routed,
                        "{pipeline}"
                    );
                    if pipeline.contains("ragged") {
                        assert!(program.contains("\"stablehlo.if\"(%"), "{program}");
                    }
                    for offs in offsets.iter() {
                        let inputs = [
                            tensor(dtype, &[s, k], &x),
                            tensor(dtype, &[e, k, n], &w),
                            offsets_tensor(offs),
                        ];
                        let got = run(&program, &inputs);
                        let want = pytorch(&xr, &wr, offs, s, k, n);
                        let tolerance = if dtype == DType::F32 { 1e-5 } else { 1e-2 };
                        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                            assert!(
                                (g.is_nan() && w.is_nan())
                                    || g == w
                                    || (g - w).abs() <= tolerance * (1.0 + w.abs()),
                                "{} {type_name} {pipeline} S={s} offs={offs:?}: element {i} \
                                 (row {}) is {g}, PyTorch's {w}",
                                op.0,
                                i as i64 / n
                            );
                        }
                    }
                }
            }
        }
    }
}

/// An ATen-level `@main(x [K, S], y [S, N], offs [E]) -> [E, K, N]`: `aten._grouped_mm`
/// of two matrices, the ragged contraction autograd emits for the weight's gradient.
fn contracting_module(dtype: &str, k: i64, s: i64, e: i64, n: i64) -> String {
    let (x, y, o, r) = (
        format!("tensor<{k}x{s}x{dtype}>"),
        format!("tensor<{s}x{n}x{dtype}>"),
        format!("tensor<{e}xi32>"),
        format!("tensor<{e}x{k}x{n}x{dtype}>"),
    );
    format!(
        r#""func.func"() <{{function_type = ({x}, {y}, {o}) -> {r}, sym_name = "main"}}> ({{
^bb0(%x: {x}, %y: {y}, %o: {o}):
  %0 = "aten._grouped_mm.default"(%x, %y, %o) {{operand_names = ["self", "mat2", "offs"]}} : ({x}, {y}, {o}) -> {r} loc("grouped_mm_backward")
  "func.return"(%0) : ({r}) -> ()
}}) : () -> ()
"#
    )
}

/// ATen's `_grouped_mm_fallback` for two matrices: `start = 0; for i, end in
/// enumerate(offs): out[i] = x[:, start:end] @ y[start:end, :]; start = end`, the
/// slices bounded as in [`pytorch`]; an empty group's product is zeros. In f64.
fn pytorch_contracting(x: &[f32], y: &[f32], offs: &[i64], k: i64, s: i64, n: i64) -> Vec<f64> {
    let (k, s_, n) = (k as usize, s as usize, n as usize);
    let bound = |v: i64| (if v < 0 { v + s } else { v }).clamp(0, s) as usize;
    let mut out = vec![0.0f64; offs.len() * k * n];
    let mut start = 0i64;
    for (g, &end) in offs.iter().enumerate() {
        let (a, b) = (bound(start), bound(end).max(bound(start)));
        for i in 0..k {
            for j in 0..n {
                out[(g * k + i) * n + j] = (a..b)
                    .map(|r| x[i * s_ + r] as f64 * y[r * n + j] as f64)
                    .sum();
            }
        }
        start = end;
    }
    out
}

/// The ragged contraction (the weight gradient of a grouped matmul) matches ATen's loop
/// for the same offset patterns, routed and dense, f32 and bf16; a non-finite value in a
/// row no group covers does not reach the result (PyTorch never reads it).
#[test]
fn grouped_mm_weight_gradient_form_matches_pytorch() {
    let (k, s, e, n) = (3i64, 20i64, 4i64, 5i64);
    let offsets: &[&[i64]] = &[
        &[5, 10, 15, 20],
        &[0, 0, 20, 20],
        &[3, 3, 9, 14],
        &[12, 4, 16, 20],
        &[5, 30, 40, 50],
        &[-15, 8, -2, 20],
    ];
    for dtype in [DType::F32, DType::Bf16] {
        let type_name = if dtype == DType::F32 { "f32" } else { "bf16" };
        let mut x = values((k * s) as usize, 3);
        let mut y = values((s * n) as usize, 4);
        // Row 19 is covered by no group of the third pattern: an infinity there.
        x[19] = f32::INFINITY;
        y[19 * n as usize] = f32::NAN;
        let round = |v: &[f32]| -> Vec<f32> {
            match dtype {
                DType::Bf16 => v.iter().map(|v| bf16_round(*v)).collect(),
                _ => v.to_vec(),
            }
        };
        let (xr, yr) = (round(&x), round(&y));
        let text = contracting_module(type_name, k, s, e, n);
        for pipeline in PIPELINES {
            let program = lower(&text, pipeline);
            for offs in offsets {
                let got = run(
                    &program,
                    &[
                        tensor(dtype, &[k, s], &x),
                        tensor(dtype, &[s, n], &y),
                        offsets_tensor(offs),
                    ],
                );
                let want = pytorch_contracting(&xr, &yr, offs, k, s, n);
                let tolerance = if dtype == DType::F32 { 1e-5 } else { 1e-2 };
                for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                    let same = (g.is_nan() && w.is_nan())
                        || g == w
                        || (g - w).abs() <= tolerance * (1.0 + w.abs());
                    assert!(
                        same,
                        "{type_name} {pipeline} offs={offs:?}: element {i} (group {}) is {g}, \
                         PyTorch's {w}",
                        i as i64 / (k * n)
                    );
                }
            }
        }
    }
}

/// Matmul FLOPs of XLA CPU's optimized program (`LoadedExecutable::optimized_program`;
/// the CPU plugin does not implement `PJRT_Executable_GetCostAnalysis`): each `dot` is
/// 2 x its result's elements x its contracted size, counted in the computations it
/// reaches through fusions and calls. Returns the FLOPs outside any `while` and those of
/// one trip through the loops' bodies (XLA's own cost analysis also counts a body once:
/// the trip count is a run-time value).
fn xla_cpu_dot_flops(program: &str) -> (f64, f64) {
    use prost::Message;
    use tpuc_artifact::xla::hlo::HloModuleProto;
    let exe = client().compile_mlir(program, &Default::default()).unwrap();
    let (format, bytes) = exe.optimized_program().unwrap();
    let code = tpuc_artifact::xla::opcodes::module_of(&format, &bytes).unwrap();
    let module = HloModuleProto::decode(&*code).unwrap();
    let by_id: std::collections::HashMap<i64, _> =
        module.computations.iter().map(|c| (c.id, c)).collect();
    // (outside loops, inside loops) of computation `id`.
    fn walk(
        id: i64,
        in_loop: bool,
        by_id: &std::collections::HashMap<i64, &tpuc_artifact::xla::hlo::HloComputationProto>,
        out: &mut (f64, f64),
    ) {
        let Some(c) = by_id.get(&id) else { return };
        let shapes: std::collections::HashMap<i64, Vec<i64>> = c
            .instructions
            .iter()
            .map(|i| {
                (
                    i.id,
                    i.shape
                        .as_ref()
                        .map(|s| s.dimensions.clone())
                        .unwrap_or_default(),
                )
            })
            .collect();
        for i in &c.instructions {
            if i.opcode == "dot" {
                let result: f64 = shapes[&i.id].iter().map(|&d| d as f64).product();
                let lhs = &shapes[&i.operand_ids[0]];
                let contract: f64 = i
                    .dot_dimension_numbers
                    .as_ref()
                    .map(|d| {
                        d.lhs_contracting_dimensions
                            .iter()
                            .map(|&k| lhs[k as usize] as f64)
                            .product()
                    })
                    .unwrap_or(1.0);
                let flops = 2.0 * result * contract;
                if in_loop {
                    out.1 += flops;
                } else {
                    out.0 += flops;
                }
            }
            for &called in &i.called_computation_ids {
                walk(called, in_loop || i.opcode == "while", by_id, out);
            }
        }
    }
    let mut out = (0.0, 0.0);
    walk(module.entry_computation_id, false, &by_id, &mut out);
    out
}

/// XLA CPU's matmul FLOPs for the DESIGN.md case, [4096, 2048] x [16, 2048, 768] in
/// bf16, routed FLOPs 2*S*K*N = 12.9 GFLOP: the dense form computes E times that; the
/// routed program has no matmul outside its loops and one [C, K] x [K, N] chunk in
/// each of its two loop bodies (the bounded loop's and the one for overlapping groups).
/// With balanced offsets (256 rows per expert) the chunks are sum(ceil(256 / C)) = S/C,
/// exactly the routed FLOPs. The bounded loop's trip count is in the program, so
/// tpuc's cost model of XLA's optimized program (`tpuc report`) counts it: at most
/// ceil(S/C) + E chunks, within 1.5x of the routed FLOPs whatever the offsets (see
/// `library_ops::chunk_rows` and its test).
#[test]
fn routed_grouped_mm_costs_the_routed_flops_on_xla_cpu() {
    let (s, k, e, n) = (4096i64, 2048i64, 16i64, 768i64);
    let routed = 2.0 * (s * k * n) as f64;
    let text = module(OPS[0], "bf16", s, k, e, n);
    let (dense, dense_loop) = xla_cpu_dot_flops(&lower(&text, PIPELINES[2]));
    let routed_program = lower(&text, PIPELINES[0]);
    let (outside, bodies) = xla_cpu_dot_flops(&routed_program);
    let c = tpuc_compiler::passes::lower_aten_to_stablehlo::grouped_mm_chunk_rows(s, e);
    let per_expert = s / e;
    let trips = (e * ((per_expert + c - 1) / c)) as f64;
    let chunk = 2.0 * (c * k * n) as f64;
    let exe = client()
        .compile_mlir(&routed_program, &Default::default())
        .unwrap();
    let (format, bytes) = exe.optimized_program().unwrap();
    let code = tpuc_artifact::xla::opcodes::module_of(&format, &bytes).unwrap();
    let cost = tpuc_artifact::xla::cost::program_cost(&code).unwrap();
    let bound = ((s + c - 1) / c + e) as f64 * chunk;
    eprintln!(
        "grouped_mm {s}x{k} x {e}x{k}x{n} bf16 on XLA CPU: dense {:.1} GFLOP; routed loop: \
         {:.3} GFLOP outside, {:.3} GFLOP per chunk ({c} rows) x {trips} chunks = {:.2} GFLOP; \
         routed {:.2} GFLOP; tpuc's cost model: {:.2} GFLOP (bound {:.2})",
        dense / 1e9,
        outside / 1e9,
        chunk / 1e9,
        chunk * trips / 1e9,
        routed / 1e9,
        cost.flops / 1e9,
        bound / 1e9,
    );
    assert_eq!(dense_loop, 0.0);
    assert!(
        (dense - e as f64 * routed).abs() < 1e-6 * dense,
        "dense {dense}"
    );
    assert_eq!(outside, 0.0);
    assert_eq!(bodies, 2.0 * chunk);
    assert!(chunk * trips <= 1.5 * routed);
    // The model counts the bounded loop at its trip count, the other loop's body once
    // (its trip count is a run-time value), and the few elementwise FLOPs around.
    assert!(
        cost.flops >= bound && cost.flops <= 1.5 * routed + 1.01 * chunk + 1e-3 * routed,
        "{} vs routed {routed}, bound {bound}",
        cost.flops
    );
}
