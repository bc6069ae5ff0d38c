#!/usr/bin/env python3
"""Generate the tpuc test corpus: tiny PyTorch models exported with torch.export.

For every model this writes, under testdata/models/<name>/:

  exported.pt2        torch.export.export(model, args)          (pre-decomposition)
  core.pt2            exported.run_decompositions()             (Core ATen opset)
  inputs/<i>_<n>.npy  the user inputs, in order
  expected/<i>.npy    the user outputs of the EAGER model on those inputs, in order
  meta.json           names, dtypes, shapes, op counts of both graphs, notes

and testdata/models/index.json listing the models.

Usage:
  pip install -r testdata/requirements.txt
  python3 testdata/generate.py            # every model
  python3 testdata/generate.py mlp cnn    # only these

Everything is seeded: the same script with the same torch/transformers versions
gives the same weights, inputs and outputs. The .pt2 archives are also made
byte-for-byte reproducible (torch writes a random `.data/serialization_id`;
we replace it with a digest of the archive's contents).
"""

from __future__ import annotations

import collections
import hashlib
import json
import math
import os
import shutil
import struct
import sys
import zipfile
import zlib

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS_DIR = os.path.join(HERE, "models")

# eager vs ep.module() vs core_ep.module() must agree within this.
ATOL = 1e-5
# Ops that must never appear (PyTorch inference fast paths that have no
# decomposition and would be pointless to lower).
FORBIDDEN_OPS = {
    "aten._transformer_encoder_layer_fwd.default",
    "aten._native_multi_head_attention.default",
}


# --------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------


def make_mlp():
    return nn.Sequential(
        nn.Linear(16, 32),
        nn.ReLU(),
        nn.Linear(32, 32),
        nn.GELU(),
        nn.Dropout(0.1),
        nn.Linear(32, 8),
        nn.SiLU(),
    )


def build_mlp():
    torch.manual_seed(0)
    model = make_mlp().eval()
    x = torch.randn(2, 16)
    return model, (x,), "Linear(16,32)-ReLU-Linear(32,32)-GELU-Dropout(0.1)-Linear(32,8)-SiLU, f32."


def build_mlp_f16():
    torch.manual_seed(0)
    model = make_mlp().half().eval()
    x = torch.randn(2, 16).half()
    return (
        model,
        (x,),
        "Same architecture as mlp with float16 weights and input. "
        "Core ATen upcasts SiLU to f32 internally (_to_copy f16->f32->f16).",
    )


def build_cnn():
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, stride=2, padding=1, bias=False),
        nn.BatchNorm2d(16),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(16, 10),
    )
    # Give the BatchNorms non-trivial running statistics and affine params.
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.5, 0.5)
    model.train()
    with torch.no_grad():
        for _ in range(4):
            model(torch.randn(4, 3, 16, 16) * 2.0 + 0.5)
    model.eval()
    x = torch.randn(2, 3, 16, 16)
    return (
        model,
        (x,),
        "Conv2d-BatchNorm2d-ReLU-MaxPool2d-Conv2d(stride 2, no bias)-BatchNorm2d-ReLU-"
        "AdaptiveAvgPool2d(1)-Flatten-Linear, f32. BatchNorm running stats come from 4 "
        "train-mode forward passes (num_batches_tracked is an unused buffer input).",
    )


class HandAttention(nn.Module):
    """Causal self-attention block written out by hand, + residual + LayerNorm."""

    def __init__(self, d_model=16, n_heads=2, use_sdpa=False):
        super().__init__()
        self.n_heads = n_heads
        self.head_dim = d_model // n_heads
        self.q = nn.Linear(d_model, d_model)
        self.k = nn.Linear(d_model, d_model)
        self.v = nn.Linear(d_model, d_model)
        self.o = nn.Linear(d_model, d_model)
        self.ln = nn.LayerNorm(d_model)
        self.use_sdpa = use_sdpa

    def forward(self, x):
        B, T, C = x.shape
        H, D = self.n_heads, self.head_dim
        q = self.q(x).view(B, T, H, D).transpose(1, 2)
        k = self.k(x).view(B, T, H, D).transpose(1, 2)
        v = self.v(x).view(B, T, H, D).transpose(1, 2)
        if self.use_sdpa:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            att = q @ k.transpose(-2, -1) / math.sqrt(D)
            mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
            att = att.masked_fill(mask, float("-inf"))
            att = torch.softmax(att, dim=-1)
            y = att @ v
        y = y.transpose(1, 2).reshape(B, T, C)
        return self.ln(x + self.o(y))


def build_attention():
    torch.manual_seed(0)
    model = HandAttention(use_sdpa=False).eval()
    x = torch.randn(2, 8, 16)
    return (
        model,
        (x,),
        "Hand-written causal attention (2 heads, head dim 8): q/k/v Linear, "
        "q@k^T/sqrt(d), triu bool mask + masked_fill(-inf), softmax, @v, out Linear, "
        "residual, LayerNorm. f32.",
    )


def build_sdpa():
    torch.manual_seed(0)
    model = HandAttention(use_sdpa=True).eval()
    x = torch.randn(2, 8, 16)
    return (
        model,
        (x,),
        "Same as attention but with F.scaled_dot_product_attention(q,k,v,is_causal=True). f32.",
    )


def build_transformer_encoder():
    torch.manual_seed(0)
    model = nn.TransformerEncoderLayer(
        d_model=16, nhead=2, dim_feedforward=32, batch_first=True, dropout=0.1
    ).eval()
    x = torch.randn(2, 8, 16)
    return (
        model,
        (x,),
        "nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, batch_first=True) "
        "in eval. Exported with grad enabled so the inference fast path "
        "(_transformer_encoder_layer_fwd) is not taken. f32.",
    )


class LogitsOnly(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, input_ids):
        return self.inner(input_ids=input_ids).logits


class BertWrapper(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, input_ids, attention_mask):
        out = self.inner(input_ids=input_ids, attention_mask=attention_mask)
        return out.last_hidden_state, out.pooler_output


def _token_ids(vocab, shape):
    g = torch.Generator().manual_seed(1234)
    return torch.randint(0, vocab, shape, generator=g, dtype=torch.int64)


def build_gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    cfg = GPT2Config(
        n_embd=32,
        n_layer=2,
        n_head=2,
        vocab_size=128,
        n_positions=32,
        bos_token_id=0,
        eos_token_id=0,
        use_cache=False,
        attn_implementation="eager",
    )
    model = LogitsOnly(GPT2LMHeadModel(cfg)).eval()
    ids = _token_ids(128, (2, 8))
    return (
        model,
        (ids,),
        "transformers GPT2LMHeadModel, tiny config (n_embd 32, 2 layers, 2 heads, vocab 128, "
        "n_positions 32), eager attention, use_cache=False, random weights; returns logits. "
        "lm_head is tied to wte.",
    )


def build_bert():
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    cfg = BertConfig(
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        vocab_size=128,
        max_position_embeddings=32,
        attn_implementation="eager",
    )
    model = BertWrapper(BertModel(cfg)).eval()
    ids = _token_ids(128, (2, 8))
    mask = torch.ones(2, 8, dtype=torch.int64)
    mask[1, 5:] = 0
    return (
        model,
        (ids, mask),
        "transformers BertModel, tiny config (hidden 32, 2 layers, 2 heads, intermediate 64, "
        "vocab 128, max_position_embeddings 32), eager attention, random weights; "
        "attention_mask row 1 has zeros at positions 5..7; returns "
        "(last_hidden_state, pooler_output).",
    )


def tiny_llama_config(**overrides):
    """The corpus' tiny Llama: hidden 32, intermediate 64, 2 layers, 4 heads, 2 kv heads
    (GQA), vocab 128, 64 positions, eager attention (also used by stateful/generate.py)."""
    from transformers import LlamaConfig

    cfg = dict(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=128,
        max_position_embeddings=64,
        attn_implementation="eager",
    )
    cfg.update(overrides)
    return LlamaConfig(**cfg)


def build_llama():
    from transformers import LlamaForCausalLM

    torch.manual_seed(0)
    cfg = tiny_llama_config(use_cache=False)
    model = LogitsOnly(LlamaForCausalLM(cfg)).eval()
    ids = _token_ids(128, (2, 8))
    return (
        model,
        (ids,),
        "transformers LlamaForCausalLM, tiny config (hidden 32, intermediate 64, 2 layers, "
        "4 heads, 2 kv heads (GQA), vocab 128, max_position_embeddings 64), eager attention, "
        "use_cache=False, random weights; returns logits.",
    )


class MlpBf16(nn.Module):
    """bfloat16 MLP behind an f32 interface (numpy has no bfloat16): the input
    is cast to bf16 inside forward and the output back to f32."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.act = nn.GELU(approximate="tanh")
        self.fc2 = nn.Linear(32, 8)
        self.ln = nn.LayerNorm(8)

    def forward(self, x):
        h = x.to(torch.bfloat16)
        h = self.fc2(self.act(self.fc1(h)))
        h = torch.softmax(self.ln(h), dim=-1)
        return h.float()


def build_mlp_bf16():
    torch.manual_seed(0)
    model = MlpBf16().to(torch.bfloat16).eval()
    x = torch.randn(2, 16)
    return (
        model,
        (x,),
        "Linear(16,32)-GELU(tanh)-Linear(32,8)-LayerNorm(8)-softmax(-1) with bfloat16 weights. "
        "Input and output are f32 (numpy has no bfloat16): forward casts x to bf16 and "
        "returns out.float(); everything in between is bf16. Expected output is eager "
        "PyTorch CPU bf16 (its rounding, not an f32 reference).",
    )


class IntOps(nn.Module):
    """Integer / bool semantics: promotion, floor division, remainder of
    negatives, where, logical ops, integer reductions, clamp, casts."""

    def forward(self, a, b, m):
        return (
            a + b,  # i32 + i64 -> i64
            torch.div(b, 3, rounding_mode="floor"),  # floor, not trunc, for negatives
            torch.remainder(a, 3),  # sign of the divisor (Python %), for negatives
            torch.where(m, a, -a),
            (a > 0) & m,
            torch.cumsum(a, dim=1),  # i32 -> i64
            a.argmax(dim=1),
            a.sum(dim=0),  # i32 -> i64
            a.to(torch.float32) / 2,
            torch.bitwise_not(m),
            a.max(dim=1).values,
            torch.clamp(a, -2, 2),
            b * 2 - 1,
            (a == 0).any(dim=1),
        )


def build_int_ops():
    a = torch.tensor(
        [[-5, -3, 0, 2, 7], [0, 4, -1, -6, 3], [9, -2, 5, 1, -8]], dtype=torch.int32
    )
    b = torch.tensor(
        [[7, -4, 10, -11, 3], [1, -1, 6, -9, 12], [-2, 5, -7, 8, -3]], dtype=torch.int64
    )
    m = torch.tensor(
        [[1, 0, 1, 1, 0], [0, 0, 1, 0, 1], [1, 1, 0, 0, 1]], dtype=torch.bool
    )
    return (
        IntOps(),
        (a, b, m),
        "No parameters. Inputs: a int32 [3,5] (negatives and zeros), b int64 [3,5] "
        "(nonzero, negatives), m bool [3,5]. 14 outputs, in order: a+b (i32+i64 -> i64), "
        "div(b,3,rounding_mode='floor'), remainder(a,3) (result has the divisor's sign), "
        "where(m,a,-a), (a>0)&m, cumsum(a,1) (-> i64), argmax(a,1), sum(a,0) (-> i64), "
        "a.float()/2, bitwise_not(m), max(a,1).values, clamp(a,-2,2), b*2-1, "
        "(a==0).any(1). Row maxima of a are unique (no argmax ties); row 2 of a has no zero, so (a==0).any(1) is [True, True, False].",
    )


class Indexing(nn.Module):
    """Indexing, slicing, gathers, shape ops and a few reductions."""

    def forward(self, x, idx, g):
        return (
            x[idx],
            x[:, idx],
            x[:, 1:5:2, -3:],
            x[..., 0],
            torch.gather(x, 1, g),
            torch.index_select(x, 2, idx.abs()),
            x.flip(0),
            x.permute(2, 0, 1).reshape(5, -1),
            torch.cat([x, x * 2], dim=-1),
            torch.stack([x[0], x[1]], dim=1),
            x.chunk(3, dim=1)[1],
            F.pad(x, (1, 2)),
            x.repeat(1, 2, 1),
            torch.tril(x[0]),
            x.mean(dim=(0, 2), keepdim=True),
            x.var(dim=1),
            F.log_softmax(x, dim=0),
            x.amax(dim=-1),
        )


def build_indexing():
    torch.manual_seed(0)
    x = torch.randn(4, 6, 5)
    idx = torch.tensor([3, -1, 0], dtype=torch.int64)
    gen = torch.Generator().manual_seed(1234)
    g = torch.randint(0, 6, (4, 2, 5), generator=gen, dtype=torch.int64)
    return (
        Indexing(),
        (x, idx, g),
        "No parameters. Inputs: x f32 [4,6,5], idx int64 [3] = [3,-1,0] (a negative "
        "index), g int64 [4,2,5] in [0,6) (gather along dim 1). 18 f32 outputs, in order: "
        "x[idx], x[:,idx], x[:,1:5:2,-3:], x[...,0], gather(x,1,g), "
        "index_select(x,2,idx.abs()), x.flip(0), x.permute(2,0,1).reshape(5,-1), "
        "cat([x,x*2],-1), stack([x[0],x[1]],1), x.chunk(3,1)[1], F.pad(x,(1,2)), "
        "x.repeat(1,2,1), tril(x[0]), x.mean((0,2),keepdim=True), x.var(1) (unbiased), "
        "log_softmax(x,0), x.amax(-1).",
    )


MODELS = collections.OrderedDict(
    [
        ("mlp", build_mlp),
        ("mlp_f16", build_mlp_f16),
        ("cnn", build_cnn),
        ("attention", build_attention),
        ("sdpa", build_sdpa),
        ("transformer_encoder", build_transformer_encoder),
        ("gpt2", build_gpt2),
        ("bert", build_bert),
        ("llama", build_llama),
        ("mlp_bf16", build_mlp_bf16),
        ("int_ops", build_int_ops),
        ("indexing", build_indexing),
    ]
)


# --------------------------------------------------------------------------
# Deterministic .pt2 archives
# --------------------------------------------------------------------------


def _make_zip_deterministic(data: bytearray) -> None:
    """Replace every `.data/serialization_id` (random per save) in an
    uncompressed torch zip archive, in place and at the same length, by a
    digest of the archive's other entries; recurse into nested archives
    (data/sample_inputs/model.pt). Fixes the CRC-32 in the data descriptor
    and the central directory. Offsets never move, so alignment is kept."""
    zf = zipfile.ZipFile(__import__("io").BytesIO(bytes(data)))
    infos = zf.infolist()
    digest = hashlib.sha256()
    changed = []
    for info in infos:
        assert info.compress_type == zipfile.ZIP_STORED, info.filename
        o = info.header_offset
        n, e = struct.unpack("<HH", data[o + 26 : o + 30])
        start = o + 30 + n + e
        end = start + info.file_size
        body = data[start:end]
        if body[:4] == b"PK\x03\x04":
            sub = bytearray(body)
            _make_zip_deterministic(sub)
            data[start:end] = sub
            changed.append(info)
            body = sub
        if info.filename.endswith(".data/serialization_id"):
            continue
        digest.update(info.filename.encode() + b"\0" + bytes(body) + b"\0")
    for info in infos:
        if not info.filename.endswith(".data/serialization_id"):
            continue
        o = info.header_offset
        n, e = struct.unpack("<HH", data[o + 26 : o + 30])
        start = o + 30 + n + e
        ln = info.file_size
        new_id = str(int(digest.hexdigest(), 16))[:ln].rjust(ln, "0").encode()
        data[start : start + ln] = new_id
        changed.append(info)

    # Patch CRCs of changed entries.
    cd_offsets = {}
    pos = zf.start_dir
    for _ in infos:
        assert data[pos : pos + 4] == b"PK\x01\x02"
        n, m, k = struct.unpack("<HHH", data[pos + 28 : pos + 34])
        name = bytes(data[pos + 46 : pos + 46 + n]).decode()
        cd_offsets[name] = pos
        pos += 46 + n + m + k
    for info in changed:
        o = info.header_offset
        flag = struct.unpack("<H", data[o + 6 : o + 8])[0]
        n, e = struct.unpack("<HH", data[o + 26 : o + 30])
        start = o + 30 + n + e
        end = start + info.file_size
        crc = zlib.crc32(bytes(data[start:end])) & 0xFFFFFFFF
        if flag & 0x8:
            if data[end : end + 4] == b"PK\x07\x08":
                data[end + 4 : end + 8] = struct.pack("<I", crc)
            else:
                data[end : end + 4] = struct.pack("<I", crc)
        else:
            data[o + 14 : o + 18] = struct.pack("<I", crc)
        c = cd_offsets[info.filename]
        data[c + 16 : c + 20] = struct.pack("<I", crc)


def _path_prefixes():
    import site
    import sysconfig

    prefixes = set()
    for key in ("purelib", "platlib", "stdlib", "platstdlib"):
        p = sysconfig.get_paths().get(key)
        if p:
            prefixes.add(os.path.realpath(p))
            prefixes.add(p)
    for p in site.getsitepackages() + [site.getusersitepackages()]:
        prefixes.add(os.path.realpath(p))
        prefixes.add(p)
    repo_root = os.path.dirname(HERE)
    prefixes.add(repo_root)
    prefixes.add(os.path.realpath(repo_root))
    # Longest first so nested prefixes (site-packages inside stdlib) win.
    return sorted((p.rstrip("/") + "/" for p in prefixes if p), key=len, reverse=True)


def sanitize_metadata(ep):
    """Make node metadata machine-independent and smaller:
    - drop `from_node` (provenance chains that embed Python object ids, so
      differ on every run, and double the size of decomposed graphs);
    - make stack_trace paths relative (to site-packages / the stdlib / the
      repository root), so the archives do not depend on where Python or the
      checkout live."""
    prefixes = _path_prefixes()

    def fix_graph(gm):
        for node in gm.graph.nodes:
            node.meta.pop("from_node", None)
            st = node.meta.get("stack_trace")
            if st:
                for p in prefixes:
                    st = st.replace(p, "")
                node.meta["stack_trace"] = st
        for _, sub in gm.named_children():
            if isinstance(sub, torch.fx.GraphModule):
                fix_graph(sub)

    fix_graph(ep.graph_module)


def save_program(ep, path):
    sanitize_metadata(ep)
    torch.export.save(ep, path)
    with open(path, "rb") as f:
        data = bytearray(f.read())
    _make_zip_deterministic(data)
    with open(path, "wb") as f:
        f.write(data)
    # Sanity: the archive still loads and passes CRC checks.
    with zipfile.ZipFile(path) as zf:
        bad = zf.testzip()
        assert bad is None, f"{path}: bad CRC in {bad}"


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------


def op_counts_from_archive(path):
    """Count node targets in models/model.json of a saved .pt2 (what the
    compiler will actually read), recursing into nested graphs."""
    with zipfile.ZipFile(path) as zf:
        name = next(n for n in zf.namelist() if n.endswith("/models/model.json"))
        prog = json.loads(zf.read(name))
    counts = collections.Counter()

    def walk_graph(graph):
        for node in graph["nodes"]:
            t = node["target"]
            if t.startswith("torch.ops."):
                t = t[len("torch.ops.") :]
            counts[t] += 1
            for inp in node.get("inputs", []):
                arg = inp.get("arg", {})
                if "as_graph" in arg:
                    walk_graph(arg["as_graph"]["graph"])

    walk_graph(prog["graph_module"]["graph"])
    return dict(sorted(counts.items()))


def flatten_outputs(out):
    leaves, _ = torch.utils._pytree.tree_flatten(out)
    assert all(isinstance(t, torch.Tensor) for t in leaves), [type(t) for t in leaves]
    return leaves


NP_DTYPES = {
    torch.float32: np.float32,
    torch.float16: np.float16,
    torch.float64: np.float64,
    torch.int64: np.int64,
    torch.int32: np.int32,
    torch.int8: np.int8,
    torch.uint8: np.uint8,
    torch.bool: np.bool_,
}


def to_numpy(t: torch.Tensor) -> np.ndarray:
    t = t.detach().cpu().contiguous()
    if t.dtype not in NP_DTYPES:
        raise TypeError(f"dtype {t.dtype} has no native numpy .npy type")
    arr = t.numpy().astype(np.dtype(NP_DTYPES[t.dtype]).newbyteorder("<"), copy=False)
    # np.array keeps 0-d tensors 0-d (np.ascontiguousarray would make them shape [1]).
    return np.array(arr, order="C", copy=True)


def save_call(out_dir, k, inputs, outputs):
    """Writes call k of a program: `inputs` (name -> tensor) as
    calls/<k>/inputs/<i>_<name>.npy and `outputs` as calls/<k>/expected/<i>.npy;
    returns (input paths, expected paths) relative to out_dir."""
    for sub in ("inputs", "expected"):
        os.makedirs(os.path.join(out_dir, "calls", str(k), sub))
    in_files = [f"calls/{k}/inputs/{i}_{n}.npy" for i, n in enumerate(inputs)]
    out_files = [f"calls/{k}/expected/{i}.npy" for i in range(len(outputs))]
    for f, t in zip(in_files + out_files, list(inputs.values()) + list(outputs)):
        np.save(os.path.join(out_dir, f), to_numpy(t))
    return in_files, out_files


def dtype_name(t: torch.Tensor) -> str:
    return str(t.dtype).replace("torch.", "")


def max_abs_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, b.shape, a.dtype, b.dtype)
    if a.dtype == torch.bool or not a.dtype.is_floating_point:
        return float((a != b).sum())
    a64, b64 = a.double(), b.double()
    both_inf = torch.isinf(a64) & torch.isinf(b64) & (a64 == b64)
    d = (a64 - b64).abs()
    d[both_inf] = 0
    d[torch.isnan(a64) & torch.isnan(b64)] = 0
    return float(d.max()) if d.numel() else 0.0


def remove_own_outputs(out_dir):
    for fname in ("exported.pt2", "core.pt2", "meta.json"):
        p = os.path.join(out_dir, fname)
        if os.path.exists(p):
            os.remove(p)
    for sub in ("inputs", "expected"):
        p = os.path.join(out_dir, sub)
        if os.path.isdir(p):
            shutil.rmtree(p)


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------


def generate(name):
    import transformers

    print(f"== {name}")
    model, args, notes = MODELS[name]()
    notes = [notes]
    out_dir = os.path.join(MODELS_DIR, name)
    os.makedirs(out_dir, exist_ok=True)
    remove_own_outputs(out_dir)
    os.makedirs(os.path.join(out_dir, "inputs"))
    os.makedirs(os.path.join(out_dir, "expected"))

    # Eager reference. Grad stays enabled everywhere (no torch.no_grad()):
    # under no_grad nn.TransformerEncoderLayer / MultiheadAttention take the
    # fused inference fast path, which we do not want in the graphs.
    expected = [t.detach() for t in flatten_outputs(model(*args))]

    ep = torch.export.export(model, args, strict=False)
    core_ep = None
    try:
        core_ep = ep.run_decompositions()
    except Exception as exc:  # noqa: BLE001
        notes.append(f"run_decompositions() failed: {type(exc).__name__}: {exc}; core.pt2 omitted.")
        print(f"  run_decompositions failed: {exc}")

    programs = {"exported": ep}
    if core_ep is not None:
        programs["core"] = core_ep

    for kind, prog in programs.items():
        got = flatten_outputs(prog.module()(*args))
        assert len(got) == len(expected), (kind, len(got), len(expected))
        for i, (g, e) in enumerate(zip(got, expected)):
            d = max_abs_diff(g.detach(), e)
            print(f"  {kind:8s} output {i}: max |diff| vs eager = {d:.3e}")
            assert d <= ATOL, f"{name}/{kind} output {i}: diff {d} > {ATOL}"

    sig = ep.graph_signature
    in_names = list(sig.user_inputs)
    assert len(in_names) == len(args), (in_names, len(args))

    meta_inputs = []
    for i, (nm, t) in enumerate(zip(in_names, args)):
        fname = f"inputs/{i}_{nm}.npy"
        np.save(os.path.join(out_dir, fname), to_numpy(t))
        meta_inputs.append(
            {"name": nm, "dtype": dtype_name(t), "shape": list(t.shape), "file": fname}
        )
    meta_outputs = []
    for i, t in enumerate(expected):
        fname = f"expected/{i}.npy"
        np.save(os.path.join(out_dir, fname), to_numpy(t))
        meta_outputs.append({"dtype": dtype_name(t), "shape": list(t.shape), "file": fname})

    ops = {}
    for kind, prog in programs.items():
        path = os.path.join(out_dir, f"{kind}.pt2")
        save_program(prog, path)
        ops[kind] = op_counts_from_archive(path)
        bad = FORBIDDEN_OPS & set(ops[kind])
        assert not bad, f"{name}/{kind}: forbidden ops in graph: {bad}"
        # Round trip: the saved archive loads and still computes the same thing.
        loaded = torch.export.load(path)
        got = flatten_outputs(loaded.module()(*args))
        for i, (g, e) in enumerate(zip(got, expected)):
            d = max_abs_diff(g.detach(), e)
            assert d <= ATOL, f"{name}/{kind} (reloaded) output {i}: diff {d}"
        print(f"  {kind}.pt2: {os.path.getsize(path)} bytes, {sum(ops[kind].values())} nodes")

    meta = {
        "name": name,
        "torch_version": torch.__version__,
        "transformers_version": transformers.__version__,
        "inputs": meta_inputs,
        "outputs": meta_outputs,
        "ops": ops,
        "notes": " ".join(notes),
    }
    with open(os.path.join(out_dir, "meta.json"), "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")


def write_index():
    """index.json: the model names. ops_union.json: every node target over all
    models, per form, with total count and the models using it (the lowering
    worklist)."""
    names = [n for n in MODELS if os.path.exists(os.path.join(MODELS_DIR, n, "meta.json"))]
    with open(os.path.join(MODELS_DIR, "index.json"), "w") as f:
        json.dump({"models": names}, f, indent=2)
        f.write("\n")
    union = {}
    for n in names:
        with open(os.path.join(MODELS_DIR, n, "meta.json")) as f:
            meta = json.load(f)
        for kind, counts in meta["ops"].items():
            for op, c in counts.items():
                e = union.setdefault(kind, {}).setdefault(op, {"count": 0, "models": []})
                e["count"] += c
                e["models"].append(n)
    union = {k: dict(sorted(v.items())) for k, v in sorted(union.items(), key=lambda kv: kv[0] != "exported")}
    # One op per line: easy to read and to diff.
    lines = ["{"]
    for ki, (kind, ops) in enumerate(union.items()):
        lines.append(f"  {json.dumps(kind)}: {{")
        for oi, (op, e) in enumerate(ops.items()):
            comma = "," if oi + 1 < len(ops) else ""
            lines.append(f"    {json.dumps(op)}: {json.dumps(e)}{comma}")
        lines.append("  }" + ("," if ki + 1 < len(union) else ""))
    lines.append("}")
    with open(os.path.join(MODELS_DIR, "ops_union.json"), "w") as f:
        f.write("\n".join(lines) + "\n")


def main(argv):
    names = argv or list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        sys.exit(f"unknown model(s): {', '.join(unknown)}; known: {', '.join(MODELS)}")
    torch.set_num_threads(1)  # bit-stable CPU reductions
    os.makedirs(MODELS_DIR, exist_ok=True)
    for n in names:
        generate(n)
    write_index()


if __name__ == "__main__":
    main(sys.argv[1:])
