#!/usr/bin/env python3
"""The as-exported op suite: one-op programs that keep the composite ATen ops Core ATen
decomposes away.

`torch.export.export` without `run_decompositions()` keeps ops such as `aten.square`,
`aten.log_sigmoid`, `aten.linear` or `aten.scaled_dot_product_attention`, which models'
pre-decomposition graphs carry and which the Core ATen suite (generate_ops.py next to
this file) never shows. Each case here is one such op on user inputs only (weights are
inputs, so the bare model.json holds everything), exported as is, checked to still call
the op, with PyTorch eager's outputs:

  testdata/ops/exported/index.json                 {"cases": [{id, op, dir, dtype, description}]}
  testdata/ops/exported/cases/<op>/<case>/model.json, inputs/<i>_<name>.npy, expected/<i>.npy
  testdata/ops/exported/refused/<op>/<case>/model.json   programs tpuc must refuse at a node

The layout is the Core ATen suite's (tpuc_cli::coverage::read_op_suite reads both);
`expected_failures.txt` beside index.json lists what tpuc fails, with why.

    python3 testdata/ops/generate_exported_ops.py        # torch from testdata/requirements.txt

Deterministic: each case's inputs come from torch.manual_seed(crc32(case id)) on one
thread, and files are written in a fixed form (the same torch gives byte-identical files).
"""

import json
import os
import shutil
import sys
import zlib

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from generate_ops import flat, graph_ops, npy_bytes, program_json, to_numpy  # noqa: E402

OUT = os.path.join(HERE, "exported")
A = torch.ops.aten


class Fn(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


def randn(shape, dtype=torch.float32, scale=1.0):
    return (torch.randn(shape) * scale).to(dtype)


def rotary_complex(x, angles):
    """Llama 4's rotary embedding: pairs of x as complex numbers times polar(1, angles)."""
    freqs = torch.polar(torch.ones_like(angles), angles)
    xc = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2))
    return torch.view_as_real(xc * freqs).flatten(-2)


def moe_dispatch(x, logits, w):
    """JetMoE-style expert dispatch: tokens sorted by expert, split by each expert's token
    count (`.tolist()`: sizes that depend on the values), one expert per piece, the pieces
    concatenated and put back in token order."""
    top = logits.argmax(-1)
    order = torch.sort(top, stable=True).indices
    sizes = F.one_hot(top, w.shape[0]).sum(0).tolist()
    pieces = x[order].split(sizes, 0)
    y = torch.cat([F.silu(p @ w[e]) * 2.0 + 1.0 for e, p in enumerate(pieces)], 0)
    return torch.zeros_like(y).index_copy(0, order, y)


def segments_dim1(x, counts, w, b):
    """A split along dimension 1 by counts read from a tensor, a linear layer per
    segment (reshaped on the way), concatenated along the same dimension."""
    sizes = counts.tolist()
    for s in sizes:
        torch._check(s >= 0)
    torch._check(sum(sizes) == x.shape[1])
    pieces = x.split(sizes, 1)
    outs = []
    for k, p in enumerate(pieces):
        h = F.linear(p, w[k], b[k])
        outs.append(torch.tanh(h).reshape(h.shape[0], -1, 2, 3).reshape(h.shape[0], -1, 6))
    return torch.cat(outs, 1)


def per_expert_sum(x, logits):
    """A reduction over a piece whose size depends on the values: refused at its node."""
    top = logits.argmax(-1)
    order = torch.sort(top, stable=True).indices
    sizes = F.one_hot(top, logits.shape[1]).sum(0).tolist()
    return torch.stack([p.sum(0) for p in x[order].split(sizes, 0)])


# (op the graph must keep, case name, dtype label, function, inputs maker, description)
CASES = [
    ("aten.square.default", "f32", "f32", torch.square, lambda: [randn((3, 5))], "x*x"),
    ("aten.square.default", "f16", "f16", torch.square, lambda: [randn((3, 5), torch.float16, 4.0)], "half, rounding once"),
    ("aten.square.default", "i64", "i64", torch.square, lambda: [torch.randint(-50, 50, (4, 4))], "integers stay integers"),
    ("aten.log_sigmoid.default", "f32", "f32", F.logsigmoid, lambda: [randn((4, 6), scale=3.0)], "log(sigmoid(x))"),
    ("aten.log_sigmoid.default", "large_values_f32", "f32", F.logsigmoid,
     lambda: [torch.tensor([-1000.0, -60.0, -20.0, -1e-8, 0.0, 1e-8, 20.0, 60.0, 1000.0])],
     "far tails: -x below, 0 above, no overflow"),
    ("aten.softplus.default", "beta_threshold_f32", "f32", lambda x: F.softplus(x, beta=2.0, threshold=5.0),
     lambda: [randn((4, 6), scale=4.0)], "beta 2, threshold 5"),
    ("aten.hardswish.default", "f32", "f32", F.hardswish, lambda: [randn((4, 6), scale=4.0)], ""),
    ("aten.mish.default", "f32", "f32", F.mish, lambda: [randn((4, 6), scale=4.0)], "x*tanh(softplus(x))"),
    ("aten.silu.default", "f32", "f32", F.silu, lambda: [randn((4, 6), scale=4.0)], ""),
    ("aten.gelu.default", "tanh_f32", "f32", lambda x: F.gelu(x, approximate="tanh"), lambda: [randn((4, 6), scale=3.0)], "tanh approximation"),
    ("aten.linear.default", "bias_f32", "f32", F.linear, lambda: [randn((2, 3, 8)), randn((5, 8)), randn((5,))], "batched input, bias"),
    ("aten.linear.default", "no_bias_f32", "f32", F.linear, lambda: [randn((4, 8)), randn((6, 8))], ""),
    ("aten.conv2d.default", "stride_pad_f32", "f32", lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1),
     lambda: [randn((1, 3, 9, 9)), randn((4, 3, 3, 3)), randn((4,))], ""),
    ("aten.conv1d.default", "groups_f32", "f32", lambda x, w: F.conv1d(x, w, groups=2),
     lambda: [randn((2, 4, 10)), randn((6, 2, 3))], "grouped"),
    ("aten.layer_norm.default", "f32", "f32", lambda x, w, b: F.layer_norm(x, (8,), w, b, eps=1e-5),
     lambda: [randn((2, 3, 8), scale=2.0), randn((8,)), randn((8,))], ""),
    ("aten.group_norm.default", "f32", "f32", lambda x, w, b: F.group_norm(x, 2, w, b),
     lambda: [randn((2, 4, 5, 5)), randn((4,)), randn((4,))], "two groups"),
    ("aten.scaled_dot_product_attention.default", "causal_f32", "f32",
     lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
     lambda: [randn((1, 2, 5, 8)), randn((1, 2, 5, 8)), randn((1, 2, 5, 8))], "is_causal"),
    ("aten.scaled_dot_product_attention.default", "mask_f32", "f32",
     lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
     lambda: [randn((2, 2, 4, 8)), randn((2, 2, 6, 8)), randn((2, 2, 6, 8)), torch.rand((4, 6)) > 0.3],
     "boolean mask, keys longer than queries"),
    ("aten.einsum.default", "bmm_f32", "f32", lambda a, b: torch.einsum("bij,bjk->bik", a, b),
     lambda: [randn((2, 3, 4)), randn((2, 4, 5))], ""),
    ("aten.einsum.default", "outer_sum_f32", "f32", lambda a, b: torch.einsum("i,j->ij", a, b),
     lambda: [randn((3,)), randn((4,))], "outer product"),
    ("aten.meshgrid.indexing", "xy_f32", "f32", lambda a, b: torch.meshgrid(a, b, indexing="xy"),
     lambda: [randn((3,)), randn((4,))], "two outputs"),
    ("aten.softmax.int", "f32", "f32", lambda x: torch.softmax(x, dim=-1), lambda: [randn((3, 7), scale=5.0)], ""),
    ("aten.dropout.default", "eval_f32", "f32", lambda x: F.dropout(x, p=0.5, training=False),
     lambda: [randn((3, 4))], "inference: identity"),
    ("aten.hardtanh.default", "f32", "f32", lambda x: F.hardtanh(x, -2.0, 3.0), lambda: [randn((4, 6), scale=4.0)], ""),
    ("aten.elu.default", "f32", "f32", lambda x: F.elu(x, alpha=0.7), lambda: [randn((4, 6), scale=3.0)], ""),
    ("aten.leaky_relu.default", "f32", "f32", lambda x: F.leaky_relu(x, 0.2), lambda: [randn((4, 6))], ""),
    ("aten.glu.default", "f32", "f32", lambda x: F.glu(x, dim=-1), lambda: [randn((3, 8))], "halves of the last dim"),
    ("aten.pixel_shuffle.default", "f32", "f32", lambda x: F.pixel_shuffle(x, 2), lambda: [randn((1, 8, 3, 3))], ""),
    ("aten.upsample_nearest2d.vec", "f32", "f32", lambda x: F.interpolate(x, scale_factor=2, mode="nearest"),
     lambda: [randn((1, 2, 3, 4))], "scale 2"),
    ("aten.upsample_bilinear2d.vec", "align_false_f32", "f32",
     lambda x: F.interpolate(x, size=(5, 7), mode="bilinear", align_corners=False),
     lambda: [randn((1, 2, 3, 4))], "to 5x7"),
    ("aten.adaptive_avg_pool2d.default", "f32", "f32", lambda x: F.adaptive_avg_pool2d(x, (2, 3)),
     lambda: [randn((1, 3, 7, 8))], "uneven windows"),
    ("aten.max_pool2d.default", "f32", "f32", lambda x: F.max_pool2d(x, 3, stride=2, padding=1),
     lambda: [randn((1, 2, 7, 7))], ""),
    ("aten.embedding.default", "f32", "f32", lambda w, i: F.embedding(i, w),
     lambda: [randn((10, 4)), torch.randint(0, 10, (2, 5))], ""),
    ("aten.cumsum.default", "i64", "i64", lambda x: torch.cumsum(x, dim=-1), lambda: [torch.randint(0, 5, (3, 6))], ""),
    ("aten.flatten.using_ints", "f32", "f32", lambda x: torch.flatten(x, 1), lambda: [randn((2, 3, 4))], ""),
    ("aten.chunk.default", "f32", "f32", lambda x: x.chunk(3, dim=1), lambda: [randn((2, 7))], "uneven chunks"),
    ("aten.repeat_interleave.self_int", "f32", "f32", lambda x: x.repeat_interleave(2, dim=1),
     lambda: [randn((2, 3, 4))], "GQA's key/value repeat"),
    ("aten.masked_fill.Scalar", "f32", "f32", lambda x, m: x.masked_fill(m, float("-inf")),
     lambda: [randn((3, 4)), torch.rand((3, 4)) > 0.5], ""),
    ("aten.baddbmm.default", "f32", "f32", lambda b, x, y: torch.baddbmm(b, x, y, beta=0.5, alpha=2.0),
     lambda: [randn((2, 3, 5)), randn((2, 3, 4)), randn((2, 4, 5))], "beta, alpha"),
    # Complex numbers: Llama 4's rotary embedding and the torch.fft functions.
    ("aten.view_as_complex.default", "rotary_f32", "f32", rotary_complex,
     lambda: [randn((2, 4, 8)), randn((4, 4), scale=3.0)], "Llama 4: x as complex pairs times polar(1, angles)"),
    ("aten.polar.default", "f64", "f64", lambda r, t: torch.view_as_real(torch.polar(r, t)),
     lambda: [randn((3, 4), torch.float64).abs(), randn((3, 4), torch.float64, 3.0)], "complex128"),
    ("aten.mul.Tensor", "complex64", "c64", lambda a, b: a * b + a,
     lambda: [torch.randn(3, 5, dtype=torch.complex64), torch.randn(3, 5, dtype=torch.complex64)],
     "complex inputs and outputs"),
    ("aten.abs.default", "complex_f32", "f32", lambda a, b: torch.abs(torch.complex(a, b)),
     lambda: [randn((4, 5)), randn((4, 5))], "|a + ib|, a real result"),
    ("aten.angle.default", "complex_f32", "f32", lambda a, b: torch.angle(torch.complex(a, b)),
     lambda: [randn((4, 5)), randn((4, 5))], "atan2(b, a)"),
    ("aten._conj.default", "f32", "f32", lambda a, b: torch.view_as_real(torch.conj(torch.complex(a, b)) * 2),
     lambda: [randn((4, 5)), randn((4, 5))], "conj, then arithmetic on the conjugate"),
    ("aten.exp.default", "complex_f32", "f32", lambda a, b: torch.view_as_real(torch.exp(torch.complex(a, b))),
     lambda: [randn((4, 5)), randn((4, 5))], "e^a (cos b + i sin b)"),
    ("aten.fft_rfft.default", "f32", "f32", lambda x: torch.view_as_real(torch.fft.rfft(x)), lambda: [randn((3, 10))], ""),
    ("aten.fft_rfft.default", "n_ortho_f32", "f32", lambda x: torch.view_as_real(torch.fft.rfft(x, n=12, dim=0, norm="ortho")),
     lambda: [randn((7, 3))], "zero-padded to n along dim 0"),
    ("aten.fft_irfft.default", "f32", "f32", lambda x: torch.fft.irfft(torch.view_as_complex(x)), lambda: [randn((3, 6, 2))], ""),
    ("aten.fft_irfft.default", "n_forward_f32", "f32", lambda x: torch.fft.irfft(torch.view_as_complex(x), n=7, norm="forward"),
     lambda: [randn((2, 6, 2))], "trimmed input, odd n"),
    ("aten.fft_fft.default", "real_input_f32", "f32", lambda x: torch.view_as_real(torch.fft.fft(x, n=6)),
     lambda: [randn((2, 8))], "real input, trimmed"),
    ("aten.fft_ifft2.default", "f64", "f64", lambda x: torch.view_as_real(torch.fft.ifft2(torch.view_as_complex(x))),
     lambda: [randn((2, 4, 6, 2), torch.float64)], ""),
    ("aten.fft_fftn.default", "s_f32", "f32", lambda x: torch.view_as_real(torch.fft.fftn(torch.view_as_complex(x), s=(3, 5))),
     lambda: [randn((2, 4, 4, 2))], "s over the last two dims"),
    ("aten.fft_rfft2.default", "f32", "f32", lambda x: torch.view_as_real(torch.fft.rfft2(x, norm="forward")),
     lambda: [randn((2, 6, 8))], ""),
    ("aten.fft_irfftn.default", "f32", "f32", lambda x: torch.fft.irfftn(torch.view_as_complex(x), dim=(0, 2)),
     lambda: [randn((4, 3, 5, 2))], "non-adjacent dims"),
    ("aten.one_hot.default", "i64", "i64", lambda x: F.one_hot(x, 5), lambda: [torch.randint(0, 5, (3, 4))],
     "routing masks: x[..., None] == arange(5)"),
    # Sizes that depend on the values (unbacked symbols), frontend/data_dependent.rs.
    ("aten.split_with_sizes.default", "moe_dispatch_f32", "f32", moe_dispatch,
     lambda: [randn((12, 8)), randn((12, 4)), randn((4, 8, 6))],
     "MoE dispatch: split by per-expert token counts, an expert per piece, cat"),
    ("aten.split_with_sizes.default", "empty_piece_f32", "f32", moe_dispatch,
     lambda: [randn((9, 8)), torch.cat([randn((9, 3)), torch.full((9, 1), -9.0)], 1), randn((4, 8, 6))],
     "an expert that gets no token (a piece of size 0)"),
    ("aten.split_with_sizes.default", "dim1_linear_f32", "f32", segments_dim1,
     lambda: [randn((2, 9, 8)), torch.tensor([4, 0, 5]), randn((3, 6, 8)), randn((3, 6))],
     "split along dim 1 by counts from an input, linear + reshapes per segment, cat along dim 1"),
]

# Programs tpuc refuses, with the node it names (compiler/tests: bad_input.rs).
REFUSED = [
    ("aten.split_with_sizes.default", "reduced_piece_f32", per_expert_sum,
     lambda: [randn((12, 8)), randn((12, 4))], "a sum over a piece whose size depends on the values"),
]


def op_kept(ep, op):
    return op.removeprefix("aten.") in {o.removeprefix("aten.") for o in graph_ops(ep)} or op in graph_ops(ep)


def main():
    torch.set_num_threads(1)
    for sub in ("cases", "refused"):
        if os.path.isdir(os.path.join(OUT, sub)):
            shutil.rmtree(os.path.join(OUT, sub))
    entries = []
    for op, name, dtype, fn, make, desc in CASES:
        cid = f"{op.removeprefix('aten.')}/{name}"
        torch.manual_seed(zlib.crc32(cid.encode()))
        inputs = make()
        with torch.no_grad():
            expected = flat(fn(*inputs))
            ep = torch.export.export(Fn(fn).eval(), tuple(inputs))
        if not op_kept(ep, op):
            raise SystemExit(f"{cid}: the exported graph no longer calls {op}: {graph_ops(ep)}")
        got = flat(ep.module()(*inputs))
        for g, e in zip(got, expected):
            if not torch.equal(g, e) and not torch.allclose(g, e, rtol=1e-5, atol=1e-6, equal_nan=True):
                raise SystemExit(f"{cid}: ep.module() differs from eager")
        case_dir = os.path.join(OUT, "cases", cid)
        os.makedirs(os.path.join(case_dir, "inputs"))
        os.makedirs(os.path.join(case_dir, "expected"))
        with open(os.path.join(case_dir, "model.json"), "w") as f:
            f.write(program_json(ep))
        for i, (nm, t) in enumerate(zip(ep.graph_signature.user_inputs, inputs)):
            with open(os.path.join(case_dir, "inputs", f"{i}_{nm}.npy"), "wb") as f:
                f.write(npy_bytes(to_numpy(t)))
        for i, t in enumerate(expected):
            with open(os.path.join(case_dir, "expected", f"{i}.npy"), "wb") as f:
                f.write(npy_bytes(to_numpy(t)))
        entries.append({"id": cid, "op": op, "dir": f"cases/{cid}", "dtype": dtype, "description": desc})
    for op, name, fn, make, desc in REFUSED:
        cid = f"{op.removeprefix('aten.')}/{name}"
        torch.manual_seed(zlib.crc32(cid.encode()))
        inputs = make()
        ep = torch.export.export(Fn(fn).eval(), tuple(inputs))
        if not op_kept(ep, op):
            raise SystemExit(f"{cid}: the exported graph no longer calls {op}: {graph_ops(ep)}")
        case_dir = os.path.join(OUT, "refused", cid)
        os.makedirs(case_dir, exist_ok=True)
        with open(os.path.join(case_dir, "model.json"), "w") as f:
            f.write(program_json(ep))
    with open(os.path.join(OUT, "index.json"), "w") as f:
        f.write('{\n  "cases": [\n')
        f.write(",\n".join("    " + json.dumps(e, sort_keys=True) for e in entries))
        f.write("\n  ]\n}\n")
    print(f"generate_exported_ops: {len(entries)} cases in {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
