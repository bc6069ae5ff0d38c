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


def repeat_kv(x, n):
    """transformers' repeat_kv: each key/value head repeated n times in place."""
    b, h, s, d = x.shape
    return x[:, :, None, :, :].expand(b, h, n, s, d).reshape(b, h * n, s, d)


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


def masked_adapter(x, mask, w1, w2):
    """X-MOD's per-language adapter: the rows a boolean mask selects (a count that depends
    on the values) through two linear layers, written back into those rows."""
    out = torch.zeros_like(x)
    out[mask] = F.linear(F.gelu(F.linear(x[mask], w1)), w2)
    return out + x


def masked_accumulate(x, mask, w):
    """`index_put_(..., accumulate=True)` of the rows a mask selected, reshaped on the way."""
    rows = x[mask]
    h = torch.tanh(rows.reshape(-1, x.shape[-1]) @ w).reshape(rows.shape[0], x.shape[1], w.shape[1])
    return x.clone().index_put_((mask,), h, accumulate=True)


def axial_positions(a, b, pos):
    """Reformer's axial position embeddings: two tables cut to the rows the largest
    position needs (an end read with `.item()`), side by side, merged with the next dim,
    then read at the positions."""
    m = pos.max().item()
    torch._check(m >= 0)
    torch._check(m < a.shape[1] * a.shape[2])
    end = (m + a.shape[2]) // a.shape[2]
    table = torch.cat([a[:, :end], b[:, :end]], -1).reshape(a.shape[0], -1, a.shape[3] + b.shape[3])
    return torch.stack([table[i].index_select(0, pos[i]) for i in range(a.shape[0])])


def per_expert_sum(x, logits):
    """A reduction over a piece whose size depends on the values: refused at its node."""
    top = logits.argmax(-1)
    order = torch.sort(top, stable=True).indices
    sizes = F.one_hot(top, logits.shape[1]).sum(0).tolist()
    return torch.stack([p.sum(0) for p in x[order].split(sizes, 0)])


def inverse_permutation(perm):
    """Mixtral's expert dispatch: inv[perm] = arange(n) into an empty_like (every element
    is written, so the result does not depend on empty's values)."""
    inv = torch.empty_like(perm)
    inv[perm] = torch.arange(perm.shape[0])
    return inv


def shifted_window_mask(x):
    """Swin's attention mask for shifted windows: region ids written into new_zeros
    slices with fill_ (img_mask[:, h, w, :] = cnt)."""
    img = x.new_zeros((1, 8, 8, 1))
    cnt = 0
    for h in (slice(0, -4), slice(-4, -2), slice(-2, None)):
        for w in (slice(0, -4), slice(-4, -2), slice(-2, None)):
            img[:, h, w, :] = cnt
            cnt += 1
    return img + x


def zeroed_bias(x, w, b):
    """Swin V2: the key third of a qkv bias zeroed in place (qkv_bias[C:2C].zero_())."""
    qkv_bias = b.clone()
    qkv_bias[w.shape[0] // 3:2 * w.shape[0] // 3].zero_()
    return F.linear(x, w, qkv_bias)


def accumulate_rows(x, idx, v):
    """Rows added in place at indices with repeats (index_put_ accumulate) on a copy."""
    y = x.clone()
    y.index_put_((idx,), v, accumulate=True)
    return y


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
    ("aten.scaled_dot_product_attention.default", "gqa_f32", "f32",
     lambda q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
     lambda: [randn((2, 6, 3, 8)), randn((2, 2, 5, 8)), randn((2, 2, 5, 8))],
     "enable_gqa: 6 query heads over 2 key/value heads"),
    ("aten.scaled_dot_product_attention.default", "repeat_kv_decode_f16", "f16",
     lambda q, k, v, m: F.scaled_dot_product_attention(q, repeat_kv(k, 4), repeat_kv(v, 4), attn_mask=m),
     lambda: [randn((2, 8, 1, 16), torch.float16), randn((2, 2, 12, 16), torch.float16),
              randn((2, 2, 12, 16), torch.float16), torch.arange(12).reshape(1, 1, 1, 12) < torch.tensor([[[[7]]], [[[12]]]])],
     "a decode step as transformers writes it: Hugging Face's repeat_kv of an f16 cache, one query, a mask by position"),
    ("aten.scaled_dot_product_attention.default", "long_causal_f32", "f32",
     lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
     lambda: [randn((1, 4, 2048, 8)), randn((1, 4, 2048, 8)), randn((1, 4, 2048, 8))],
     "2,048 queries: tpuc computes the scores in blocks of query rows (a loop), the causal mask offset per block"),
    ("aten.scaled_dot_product_attention.default", "long_mask_gqa_f16", "f16",
     lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m, enable_gqa=True),
     lambda: [randn((1, 8, 1100, 8), torch.float16), randn((1, 2, 1280, 8), torch.float16),
              randn((1, 2, 1280, 8), torch.float16), torch.rand((1100, 1280)) > 0.2],
     "1,100 queries in blocks of 512 (the last block overlaps the one before), a boolean mask per row, grouped heads"),
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
    ("aten.concat.default", "f32", "f32", lambda a, b: torch.concat([a, b], dim=1),
     lambda: [randn((2, 3)), randn((2, 5))], "torch.concat, as Phi-MoE calls it"),
    ("aten.squeeze.default", "f32", "f32", lambda x: x.squeeze() * 2.0, lambda: [randn((1, 3, 1, 4))],
     "every size-1 dim"),
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
    # Ops of the causal-LM family's and the coverage models' pre-decomposition graphs
    # (tensor methods, operators and factories that Core ATen rewrites).
    ("aten.matmul.default", "attention_4d_f32", "f32", torch.matmul,
     lambda: [randn((2, 2, 8, 4)), randn((2, 2, 4, 8))], "attention scores q @ k^T"),
    ("aten.matmul.default", "3d_2d_f32", "f32", torch.matmul, lambda: [randn((2, 8, 16)), randn((16, 32))],
     "activations times a weight"),
    ("aten.matmul.default", "broadcast_batch_f32", "f32", torch.matmul,
     lambda: [randn((2, 1, 3, 4)), randn((3, 4, 5))], "batch dims broadcast"),
    ("aten.matmul.default", "matrix_vector_f32", "f32", torch.matmul, lambda: [randn((2, 3, 4)), randn((4,))],
     "1-D right operand"),
    ("aten.matmul.default", "vector_matrix_f32", "f32", torch.matmul, lambda: [randn((4,)), randn((2, 4, 3))],
     "1-D left operand"),
    ("aten.numpy_T.default", "f32", "f32", lambda x, w: x @ w.T, lambda: [randn((2, 8, 16)), randn((32, 16))],
     "Falcon: x @ weight.T"),
    ("aten.transpose.int", "f32", "f32", lambda x: x.transpose(1, 2), lambda: [randn((2, 8, 2, 4))], "heads to dim 1"),
    ("aten.transpose.int", "negative_dims_f32", "f32", lambda x: x.transpose(-1, -2) * 1.0,
     lambda: [randn((2, 3, 5))], "k^T"),
    ("aten.contiguous.default", "f32", "f32", lambda x: x.transpose(1, 2).contiguous().reshape(2, 8, -1),
     lambda: [randn((2, 2, 8, 4))], "heads merged back: transpose, contiguous, reshape"),
    ("aten.reshape.default", "f32", "f32", lambda x: x.reshape(2, 8, 2, -1), lambda: [randn((2, 8, 8))],
     "split heads"),
    ("aten.reshape.default", "transposed_f32", "f32", lambda x: x.transpose(0, 1).reshape(-1, 6),
     lambda: [randn((4, 3, 2))], "a non-contiguous view reshaped (a copy)"),
    ("aten.reshape_as.default", "f32", "f32", lambda x, y: x.reshape_as(y) + y,
     lambda: [randn((2, 12)), randn((4, 3, 2))], ""),
    ("aten.view_as.default", "f32", "f32", lambda x, y: x.view_as(y) * y, lambda: [randn((2, 12)), randn((4, 6))], ""),
    ("aten.expand_as.default", "f32", "f32", lambda n, x: x / n.expand_as(x),
     lambda: [randn((4, 2, 16, 1)).abs() + 0.5, randn((4, 2, 16, 4))], "Swin V2: x / norm.expand_as(x)"),
    ("aten.broadcast_to.default", "f32", "f32", lambda x: x.broadcast_to((2, 8, 2, 2, 4)),
     lambda: [randn((2, 8, 2, 1, 4))], "Falcon's key/value heads"),
    ("aten.unflatten.int", "f32", "f32", lambda x: x.unflatten(-1, (3, 16)), lambda: [randn((17, 1, 48))],
     "ViT: qkv split into 3"),
    ("aten.unflatten.int", "inferred_f32", "f32", lambda x: x.unflatten(0, (2, -1)), lambda: [randn((6, 4))],
     "a -1 size"),
    ("aten.swapaxes.default", "f32", "f32", lambda x: x.swapaxes(-2, -3), lambda: [randn((1, 4, 16, 8))], "MaxViT"),
    ("aten.unbind.int", "f32", "f32", lambda x: x.unbind(2), lambda: [randn((2, 8, 3, 2, 4))],
     "q, k, v = qkv.unbind(2): three outputs"),
    ("aten.split.Tensor", "f32", "f32", lambda x: x.split(16, dim=2), lambda: [randn((2, 8, 48))], "GPT-2: q, k, v"),
    ("aten.split.Tensor", "uneven_f32", "f32", lambda x: x.split(3, dim=-1), lambda: [randn((2, 8))],
     "8 into 3, 3, 2"),
    ("aten.stack.default", "f32", "f32", lambda a, b: torch.stack((-b, a), dim=-1).flatten(-2),
     lambda: [randn((2, 8, 2, 2)), randn((2, 8, 2, 2))], "GPT-J's rotate_every_two: stack on a new last dim"),
    ("aten.stack.default", "dim0_i64", "i64", lambda a, b, c: torch.stack([a, b, c]),
     lambda: [torch.randint(-9, 9, (2, 3)), torch.randint(-9, 9, (2, 3)), torch.randint(-9, 9, (2, 3))], ""),
    ("aten.concatenate.default", "f32", "f32", lambda a, b: torch.concatenate([a, b], dim=-1),
     lambda: [randn((2, 8, 4)), randn((2, 8, 2))], "rotate_half's halves back together"),
    ("aten.unfold.default", "f32", "f32", lambda x: x.unfold(-1, 4, 2), lambda: [randn((2, 3, 11))],
     "size 4 step 2, the remainder dropped"),
    ("aten.unfold.default", "step_gt_size_f32", "f32", lambda x: x.unfold(1, 2, 3), lambda: [randn((2, 8, 3))],
     "windows with gaps along dim 1"),
    ("aten.roll.default", "f32", "f32", lambda x: torch.roll(x, shifts=(-2, -2), dims=(1, 2)),
     lambda: [randn((1, 8, 8, 4))], "Swin's cyclic shift"),
    ("aten.roll.default", "flat_f32", "f32", lambda x: torch.roll(x, 3), lambda: [randn((3, 4))],
     "no dims: the flattened tensor"),
    ("aten.pad.default", "constant_f32", "f32", lambda x: F.pad(x, (1, 2, -1, 0), value=0.5),
     lambda: [randn((2, 3, 4))], "a value, a negative pad (cropping)"),
    ("aten.pad.default", "zero_4d_f32", "f32", lambda x: F.pad(x, (0, 0, 0, 3, 0, 1)),
     lambda: [randn((1, 5, 5, 4))], "Swin: pad the window grid"),
    ("aten.pad.default", "reflect_f32", "f32", lambda x: F.pad(x, (2, 1), mode="reflect"),
     lambda: [randn((2, 3, 6))], ""),
    ("aten.pad.default", "replicate_f32", "f32", lambda x: F.pad(x, (1, 2, 2, 0), mode="replicate"),
     lambda: [randn((1, 2, 3, 4))], ""),
    ("aten.diff.default", "prepend_i64", "i64", lambda p, first: torch.diff(p, n=1, dim=-1, prepend=first),
     lambda: [torch.randint(-20, 20, (2, 8)), torch.randint(-20, 20, (2, 1))],
     "position ids: diff with prepend (packed-sequence detection)"),
    ("aten.diff.default", "n2_append_f32", "f32", lambda x, a: torch.diff(x, n=2, dim=0, append=a),
     lambda: [randn((5, 3)), randn((2, 3))], "second difference, append, dim 0"),
    ("aten.tril.default", "f32", "f32", lambda x: torch.tril(x, diagonal=-1), lambda: [randn((2, 4, 6))], "diagonal -1"),
    ("aten.tril.default", "causal_bool", "bool", lambda m: torch.tril(m), lambda: [torch.rand(8, 8) > 0.2],
     "causal mask"),
    ("aten.triu.default", "f32", "f32", lambda x: torch.triu(x, diagonal=1), lambda: [randn((5, 4))],
     "diagonal 1: the masked part of a causal mask"),
    ("aten.triu.default", "negative_diagonal_i64", "i64", lambda x: torch.triu(x, -2),
     lambda: [torch.randint(-9, 9, (2, 5, 5))], ""),
    ("aten.logsumexp.default", "keepdim_f32", "f32", lambda x: torch.logsumexp(x, dim=-1, keepdim=True),
     lambda: [randn((2, 4, 6), scale=3.0)], ""),
    ("aten.logsumexp.default", "large_and_inf_f32", "f32", lambda x: torch.logsumexp(x, dim=1),
     lambda: [torch.tensor([[1000.0, 999.0, -1000.0], [-1000.0, -1001.0, -999.0],
                            [float("-inf"), 2.0, float("-inf")], [float("-inf")] * 3])],
     "no overflow; a row of -inf gives -inf"),
    ("aten.rms_norm.default", "weight_eps_f32", "f32", lambda x, w: F.rms_norm(x, (16,), w, eps=1e-6),
     lambda: [randn((2, 8, 16), scale=3.0), randn((16,))], "Llama's RMSNorm"),
    ("aten.rms_norm.default", "no_weight_f32", "f32", lambda x: F.rms_norm(x, (4, 6)), lambda: [randn((3, 4, 6))],
     "two normalized dims, default eps"),
    ("aten.batch_norm.default", "f32", "f32", lambda x, m, v, w, b: F.batch_norm(x, m, v, w, b, False, 0.1, 1e-3),
     lambda: [randn((1, 8, 6, 6)), randn((8,)), torch.rand(8) + 0.5, randn((8,)), randn((8,))],
     "eval: running statistics"),
    ("aten.batch_norm.default", "no_affine_f32", "f32", lambda x, m, v: F.batch_norm(x, m, v, eps=1e-5),
     lambda: [randn((2, 3, 5)), randn((3,)), torch.rand(3) + 0.5], "no weight or bias, 3-D input"),
    ("aten._weight_norm.default", "dim2_f32", "f32", lambda v, g: torch._weight_norm(v, g, 2),
     lambda: [randn((16, 8, 8)), randn((1, 1, 8))], "Wav2Vec2's positional conv weight"),
    ("aten._weight_norm.default", "dim0_f32", "f32", lambda v, g: torch._weight_norm(v, g, 0),
     lambda: [randn((6, 3, 4)), randn((6, 1, 1))], ""),
    ("aten.linalg_vector_norm.default", "keepdim_f32", "f32",
     lambda x: torch.linalg.vector_norm(x, 2.0, dim=-1, keepdim=True), lambda: [randn((4, 2, 16, 4))],
     "Swin V2's F.normalize"),
    ("aten.linalg_vector_norm.default", "ord1_all_f32", "f32", lambda x: torch.linalg.vector_norm(x, 1), lambda: [randn((3, 5))],
     "ord 1 over every dim"),
    ("aten.clamp_min.default", "f32", "f32", lambda x: x.clamp_min(1e-12),
     lambda: [torch.cat([randn((7,)).abs(), torch.zeros(1)])], "norm.clamp_min(eps)"),
    ("aten.hardsigmoid.default", "f32", "f32", F.hardsigmoid, lambda: [randn((1, 8, 1, 1), scale=4.0)],
     "MobileNetV3's squeeze-excitation gate"),
    ("aten.relu_.default", "f32", "f32", lambda x, b: (x + b).relu_(), lambda: [randn((1, 4, 5, 5)), randn((4, 1, 1))],
     "in place on an intermediate"),
    ("aten.silu_.default", "f32", "f32", lambda x, b: F.silu(x + b, inplace=True),
     lambda: [randn((1, 4, 5, 5), scale=3.0), randn((4, 1, 1))], ""),
    ("aten.hardswish_.default", "f32", "f32", lambda x, b: F.hardswish(x + b, inplace=True),
     lambda: [randn((1, 4, 5, 5), scale=3.0), randn((4, 1, 1))], ""),
    ("aten.hardtanh_.default", "relu6_f32", "f32", lambda x, b: F.hardtanh(x + b, 0.0, 6.0, inplace=True),
     lambda: [randn((1, 4, 5, 5), scale=4.0), randn((4, 1, 1))], "MobileNetV2's ReLU6"),
    ("aten.dropout_.default", "eval_f32", "f32", lambda x, b: F.dropout(x + b, 0.2, False, inplace=True),
     lambda: [randn((1, 48)), randn((48,))], "inference: identity"),
    ("aten.add_.Tensor", "f32", "f32", lambda x, r: F.relu(x).add_(r), lambda: [randn((1, 4, 5, 5)), randn((1, 4, 5, 5))],
     "residual: out += identity"),
    ("aten.div_.Tensor", "f32", "f32", lambda x: (lambda w: w.div_(w.sum(-1, keepdim=True)))(torch.softmax(x, -1).topk(2, -1).values),
     lambda: [randn((16, 4))], "Mixtral: routing weights /= their sum"),
    ("aten.div_.Tensor", "scalar_f32", "f32", lambda q, k: torch.matmul(q, k).div_(2.0),
     lambda: [randn((2, 4, 8, 4)), randn((2, 4, 4, 8))], "Falcon: scores /= sqrt(head_dim)"),
    ("aten.zero_.default", "f32", "f32", zeroed_bias, lambda: [randn((2, 8)), randn((24, 8)), randn((24,))],
     "Swin V2: qkv_bias[C:2C].zero_()"),
    ("aten.fill_.Scalar", "f32", "f32", shifted_window_mask, lambda: [randn((2, 8, 8, 1))],
     "Swin: region ids written into new_zeros slices"),
    ("aten.new_zeros.default", "f32", "f32", lambda x: x.new_zeros((3, 4)) + x, lambda: [randn((3, 4))], ""),
    ("aten.new_ones.default", "f32", "f32", lambda x: x - x.new_ones((4,)), lambda: [randn((3, 4))], ""),
    ("aten.new_ones.default", "bool", "bool", lambda m, p: p.new_ones((), dtype=torch.bool) & m,
     lambda: [torch.rand(2, 1, 8, 8) > 0.3, torch.randint(0, 8, (1, 1, 8, 1))],
     "a 0-d bool from an int tensor, and-ed with a mask"),
    ("aten.new_empty.default", "filled_f32", "f32", lambda x: x.new_empty((3, 4)).fill_(2.0) * x,
     lambda: [randn((3, 4))], "empty then filled: no undefined value reaches the output"),
    ("aten.empty_like.default", "inverse_permutation_i64", "i64", inverse_permutation, lambda: [torch.randperm(16)],
     "Mixtral: inv[perm] = arange(n)"),
    ("aten.index_put_.default", "accumulate_f32", "f32", accumulate_rows,
     lambda: [randn((5, 4)), torch.tensor([3, 0, 3, 4]), randn((4, 4))], "repeated rows add up"),
    ("aten.index_copy.default", "dim1_f32", "f32", lambda x, i, s: x.index_copy(1, i, s),
     lambda: [randn((2, 6, 4)), torch.tensor([4, 0, 2]), randn((2, 3, 4))], "KV-cache style update along dim 1"),
    ("aten.index_add.default", "dim1_alpha_f32", "f32", lambda x, i, s: x.index_add(1, i, s, alpha=0.5),
     lambda: [randn((2, 5, 3)), torch.tensor([1, 4, 1, 0]), randn((2, 4, 3))], "repeated indices add up, alpha"),
    ("aten.histc.default", "expert_ids_f32", "f32", lambda ids: torch.histc(ids.float(), bins=4, min=0, max=3),
     lambda: [torch.randint(0, 4, (16, 2))], "Mixtral: tokens per expert (the last bin includes max)"),
    ("aten.histc.default", "range_f32", "f32", lambda x: torch.histc(x, bins=5, min=-1.5, max=2.0),
     lambda: [randn((40,), scale=1.5)], "values outside [min, max] ignored"),
    ("aten.to.dtype", "f32_to_f16", "f16", lambda x: x.to(torch.float16),
     lambda: [torch.cat([randn((12,), scale=100.0), torch.tensor([70000.0, -1e-8, 2049.0, 2051.0])])],
     "round to nearest even, overflow to inf"),
    ("aten.to.dtype", "f16_to_f32", "f32", lambda x: x.to(torch.float32) * 3.0, lambda: [randn((3, 4), torch.float16)], ""),
    ("aten.to.dtype", "i64_to_f32", "f32", lambda p: p.to(torch.float32), lambda: [torch.randint(-1000, 1000, (2, 8))],
     "position ids to float"),
    ("aten.to.dtype", "f32_to_i64", "i64", lambda x: x.to(torch.int64), lambda: [randn((3, 5), scale=50.0)],
     "truncation toward zero"),
    ("aten.to.dtype", "bool_to_f32", "f32", lambda m: m.to(torch.float32), lambda: [torch.rand(2, 8) > 0.5],
     "an attention mask as float"),
    ("aten.to.dtype_layout", "f32", "f32", lambda x, p: x + p.to(x.device),
     lambda: [randn((2, 8, 16)), randn((1, 8, 16))], "GPT-2: position_embeds.to(inputs_embeds.device)"),
    ("aten.to.dtype_layout", "bool", "bool", lambda m, c: m.to(c.device) & c,
     lambda: [torch.rand(1, 1, 8, 1) > 0.3, torch.rand(2, 1, 8, 8) > 0.3], "mask.to(device), and-ed"),
    ("aten.type_as.default", "i64_to_i32", "i32", lambda c, m: c.type_as(m) * m,
     lambda: [torch.randint(0, 9, (2, 8)), torch.randint(0, 2, (2, 8), dtype=torch.int32)],
     "RoBERTa's position ids"),
    ("aten.type_as.default", "f32_to_f16", "f16", lambda x, y: x.type_as(y), lambda: [randn((3, 4), scale=8.0), randn((1,), torch.float16)], ""),
    ("aten.where.ScalarOther", "f32", "f32", lambda m, x: torch.where(m, x, torch.finfo(torch.float32).min),
     lambda: [torch.rand(2, 1, 8, 8) > 0.3, randn((2, 2, 8, 8))], "masked scores: finfo.min elsewhere"),
    ("aten.where.ScalarSelf", "f32", "f32", lambda m, x: torch.where(m, 0.0, x),
     lambda: [torch.rand(3, 4) > 0.5, randn((3, 4))], ""),
    ("aten.where.Scalar", "f32", "f32", lambda m: torch.where(m, 1.0, -2.5), lambda: [torch.rand(2, 5) > 0.5],
     "two scalars"),
    ("aten.masked_fill.Tensor", "f32", "f32", lambda x, m, v: x.masked_fill(m, v),
     lambda: [randn((2, 2, 4, 4)), torch.rand(2, 1, 4, 4) > 0.5, torch.tensor(-3.5)], "a 0-d tensor value, broadcast mask"),
    ("aten.__and__.Tensor", "bool", "bool", lambda a, b: a & b,
     lambda: [torch.rand(2, 1, 8, 8) > 0.3, torch.rand(1, 1, 8, 8) > 0.3], "padding mask & causal mask"),
    ("aten.__or__.Tensor", "bool", "bool", lambda a, b: a | b,
     lambda: [torch.rand(2, 1, 8, 8) > 0.7, torch.rand(8, 1) > 0.7], ""),
    ("aten.all.dim", "bool", "bool", lambda m: m.all(dim=-1), lambda: [torch.rand(3, 4) > 0.2], ""),
    ("aten.all.dim", "keepdim_f32", "f32", lambda x: x.all(dim=1, keepdim=True),
     lambda: [torch.randint(0, 4, (3, 3, 2)).float()], "non-zero floats are true"),
    ("aten.floor_divide.default", "i64", "i64", torch.floor_divide,
     lambda: [torch.randint(-20, 20, (3, 5)), torch.tensor([3, -3, 7, -2, 1])], "rounds toward -inf"),
    ("aten.floor_divide.default", "scalar_i64", "i64", lambda x: x // 2, lambda: [torch.randint(-9, 9, (16,))],
     "Mixtral: expert index // top_k"),
    ("aten.floor_divide.default", "f32", "f32", torch.floor_divide,
     lambda: [randn((3, 4), scale=10.0), torch.tensor([1.5, -2.0, 3.0, -0.7])], ""),
    ("aten.rsub.Scalar", "f32", "f32", lambda m: (1.0 - m) * -10000.0, lambda: [(torch.rand(2, 8) > 0.5).float()],
     "BERT-style extended mask: (1 - mask) * min"),
    ("aten.rsub.Scalar", "i64", "i64", lambda x: 5 - x, lambda: [torch.randint(-9, 9, (3, 4))], ""),
    ("aten.multiply.Tensor", "f32", "f32", torch.multiply, lambda: [randn((2, 3, 4)), randn((4,))], ""),
    ("aten.max.default", "f32", "f32", torch.max, lambda: [randn((3, 5))], "full reduction"),
    ("aten.max.default", "i64", "i64", torch.max, lambda: [torch.randint(-50, 50, (4, 3))], ""),
    ("aten.max.other", "f32", "f32", torch.max, lambda: [randn((3, 4)), randn((4,))], "elementwise, broadcast"),
    ("aten.max.other", "nan_f32", "f32", torch.max,
     lambda: [torch.tensor([1.0, float("nan"), -2.0, float("inf")]), torch.tensor([float("nan"), 0.0, -3.0, 1.0])],
     "NaN propagates"),
    ("aten.min.other", "i64", "i64", torch.min,
     lambda: [torch.randint(0, 20, (8, 8)), torch.full((8, 8), 7)], "T5's relative-position buckets"),
    ("aten.eye.default", "f32", "f32", lambda x: x + torch.eye(4), lambda: [randn((2, 4, 4))], ""),
    ("aten.eye.m", "f32", "f32", lambda x: x * torch.eye(3, 5), lambda: [randn((3, 5))], "n by m"),
    ("aten.ones.default", "f32", "f32", lambda x: x + torch.ones(3, 4), lambda: [randn((3, 4))], ""),
    ("aten.ones.default", "i64", "i64", lambda p: torch.ones(2, 8, dtype=torch.int64).cumsum(-1) + p,
     lambda: [torch.randint(0, 9, (2, 1))], "OPT: a default attention mask"),
    ("aten.zeros.default", "f32", "f32", lambda m: torch.where(m, torch.zeros([]), torch.finfo(torch.float32).min),
     lambda: [torch.rand(2, 1, 8, 8) > 0.3], "a 0-d zeros in a where: the additive mask"),
    ("aten.zeros.default", "i32", "i32", lambda x: x + torch.zeros(3, 4, dtype=torch.int32),
     lambda: [torch.randint(-9, 9, (3, 4), dtype=torch.int32)], ""),
    ("aten.ones_like.default", "f32", "f32", lambda x: x - torch.ones_like(x), lambda: [randn((3, 4))], ""),
    ("aten.ones_like.default", "dtype_i64", "i64", lambda m: torch.ones_like(m, dtype=torch.int64).cumsum(-1) * m,
     lambda: [torch.rand(2, 8) > 0.3], "with a dtype"),
    ("aten.zeros_like.default", "i64", "i64", lambda r: torch.min(r, torch.zeros_like(r)),
     lambda: [torch.randint(-5, 5, (4, 4))], "T5: min(relative_position, 0)"),
    ("aten.arange.default", "i64", "i64", lambda p: p + torch.arange(8), lambda: [torch.randint(0, 9, (2, 1))],
     "position ids from an offset"),
    ("aten.arange.default", "f32", "f32", lambda x: x * torch.arange(4, dtype=torch.float32),
     lambda: [randn((3, 4))], ""),
    ("aten.arange.start", "i64", "i64", lambda p: p + torch.arange(2, 10), lambda: [torch.randint(0, 9, (2, 1))],
     "BART's learned positions start after an offset"),
    ("aten.arange.start", "float_f32", "f32", lambda x: x + torch.arange(0.5, 4.0), lambda: [randn((2, 4))],
     "a float start: 0.5, 1.5, 2.5, 3.5"),
    ("aten.arange.start_step", "float_step_f32", "f32", lambda x: x + torch.arange(0.0, 1.0, 0.125),
     lambda: [randn((2, 8))], "a float step"),
    ("aten.arange.start_step", "rotary_f32", "f32",
     lambda p: p[:, None] * (1.0 / 10000.0 ** (torch.arange(0, 16, 2, dtype=torch.int64).float() / 16)),
     lambda: [torch.arange(8).float()], "rotary inverse frequencies times positions"),
    ("aten.view_as_real.default", "c64", "f32", torch.view_as_real,
     lambda: [torch.randn(3, 4, dtype=torch.complex64)], "a complex input viewed as pairs"),
    ("aten.index.Tensor", "row_mask_adapter_f32", "f32", masked_adapter,
     lambda: [randn((4, 3, 8)), torch.tensor([True, False, True, True]), randn((6, 8)), randn((8, 6))],
     "x[mask] through an adapter, written back with out[mask] = ...: where(mask, adapter(x), out)"),
    ("aten.index.Tensor", "row_mask_accumulate_f32", "f32", masked_accumulate,
     lambda: [randn((5, 2, 4)), torch.tensor([False, True, False, True, True]), randn((4, 4))],
     "x[mask] merged with the next dim and back, index_put_ with accumulate"),
    ("aten.slice.Tensor", "item_end_prefix_f32", "f32", axial_positions,
     lambda: [randn((2, 6, 4, 3)), randn((2, 6, 4, 5)), torch.tensor([[0, 3, 9, 2], [5, 1, 7, 4]])],
     "Reformer: x[:, :end] by an end read with .item(), side by side, merged, index_select"),
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
