#!/usr/bin/env python3
"""Generate testdata/dynamic: programs exported with `dynamic_shapes`, for one compile
that runs every size in range.

Each program is exported once with symbolic sizes (`torch.export.Dim`) and saved in both
forms; its calls use different sizes, both ends of every range included, each with the
outputs eager PyTorch computed for it:

  <name>/exported.pt2                  torch.export (as exported)
  <name>/core.pt2                      ep.run_decompositions() (Core ATen)
  <name>/calls/<k>/inputs/<i>_<n>.npy  user inputs of call k
  <name>/calls/<k>/expected/<i>.npy    user outputs of call k (eager PyTorch)
  <name>/meta.json                     versions, the dims asked for (name, range, which
                                       input dimensions), the range_constraints each
                                       form recorded (symbol -> [min, max]), each call's
                                       sizes, notes

The calls are independent (no state).

Usage (torch and transformers as in testdata/requirements.txt):
  python3 testdata/dynamic/generate.py [names...]
"""

from __future__ import annotations

import json
import os
import shutil
import sys

import numpy as np
import torch
import torch.nn as nn
from torch.export import Dim

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from generate import max_abs_diff, save_call, save_program  # noqa: E402

ATOL = 1e-5


class Mlp(nn.Module):
    """Two Linears with GELU, dynamic batch."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 8)

    def forward(self, x):
        return self.fc2(nn.functional.gelu(self.fc1(x)))


class Cnn(nn.Module):
    """Conv, BatchNorm (eval), ReLU, max pool, global average pool and a Linear head,
    dynamic batch; the flatten before the head reshapes by the batch size."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.head = nn.Linear(16, 10)

    def forward(self, x):
        x = nn.functional.max_pool2d(torch.relu(self.bn(self.conv1(x))), 2)
        x = nn.functional.adaptive_avg_pool2d(torch.relu(self.conv2(x)), 1)
        return self.head(x.flatten(1))


def _hf_bert():
    from transformers import BertConfig, BertModel

    cfg = BertConfig(
        vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
        max_position_embeddings=64, attn_implementation="eager",
    )
    return BertModel(cfg)


class Bert(nn.Module):
    """Hugging Face BERT (tiny config) with an attention mask, dynamic batch and
    sequence length: position ids, the extended mask and the attention reshapes all
    depend on both."""

    def __init__(self):
        super().__init__()
        self.bert = _hf_bert()

    def forward(self, input_ids, attention_mask):
        out = self.bert(input_ids=input_ids, attention_mask=attention_mask)
        return out.last_hidden_state, out.pooler_output


class Llama(nn.Module):
    """Hugging Face Llama (tiny config, no cache) returning logits, dynamic batch and
    sequence length: the causal mask, rotary positions and the GQA repeat depend on
    them."""

    def __init__(self):
        super().__init__()
        from transformers import LlamaConfig, LlamaForCausalLM

        cfg = LlamaConfig(
            vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, max_position_embeddings=64, attn_implementation="eager",
        )
        self.lm = LlamaForCausalLM(cfg)

    def forward(self, input_ids):
        return self.lm(input_ids=input_ids, use_cache=False).logits


def _f(*shape, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g)


def _ids(b, s, vocab, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, vocab, (b, s), generator=g)


def _mask(b, s, seed):
    """Ones with a padded tail on every row but the first (at least one token kept)."""
    g = torch.Generator().manual_seed(seed)
    m = torch.ones(b, s, dtype=torch.long)
    for r in range(1, b):
        keep = int(torch.randint(1, s + 1, (1,), generator=g))
        m[r, keep:] = 0
    return m


# name -> (module, dims {name: (min, max)}, dynamic_shapes over input names, calls)
PROGRAMS = {
    "mlp": (
        Mlp,
        {"batch": (1, 64)},
        {"x": {0: "batch"}},
        [{"x": _f(b, 16, seed=b)} for b in (1, 7, 64)],
    ),
    "cnn": (
        Cnn,
        {"batch": (1, 16)},
        {"x": {0: "batch"}},
        [{"x": _f(b, 3, 16, 16, seed=b)} for b in (1, 5, 16)],
    ),
    "bert": (
        Bert,
        {"batch": (1, 4), "seq": (2, 64)},
        {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}},
        [
            {"input_ids": _ids(b, s, 100, seed=b * 100 + s), "attention_mask": _mask(b, s, seed=s)}
            for b, s in ((1, 2), (2, 17), (4, 64), (3, 8))
        ],
    ),
    "llama": (
        Llama,
        {"batch": (1, 4), "seq": (2, 32)},
        {"input_ids": {0: "batch", 1: "seq"}},
        [{"input_ids": _ids(b, s, 128, seed=b * 100 + s)} for b, s in ((1, 2), (3, 9), (4, 32), (2, 5))],
    ),
}


def flat(out):
    if isinstance(out, torch.Tensor):
        return [out.detach()]
    return [t for o in out for t in flat(o)]


def range_constraints(ep):
    """symbol -> [min, max] as the program records them (ints; an unbounded max is None)."""
    out = {}
    for sym, vr in ep.range_constraints.items():
        hi = vr.upper
        out[str(sym)] = [int(vr.lower), int(hi) if hi.is_finite else None]
    return dict(sorted(out.items()))


def generate(name):
    print(f"== {name}")
    module, dims, spec, calls = PROGRAMS[name]
    torch.manual_seed(0)
    model = module().eval()
    out_dir = os.path.join(HERE, name)
    if os.path.isdir(out_dir):
        shutil.rmtree(out_dir)
    os.makedirs(out_dir)
    made = {n: Dim(n, min=lo, max=hi) for n, (lo, hi) in dims.items()}
    dynamic_shapes = {inp: {d: made[n] for d, n in m.items()} for inp, m in spec.items()}
    # The example has sizes inside every range and away from 0 and 1 (which torch.export
    # would specialize).
    example = calls[1]
    with torch.no_grad():
        ep = torch.export.export(model, (), dict(example), dynamic_shapes=dynamic_shapes, strict=False)
    paths = {"exported": os.path.join(out_dir, "exported.pt2"), "core": os.path.join(out_dir, "core.pt2")}
    core = ep.run_decompositions()
    save_program(ep, paths["exported"])
    save_program(core, paths["core"])
    # <name>/static/{exported,core}.pt2: the same model exported without dynamic_shapes
    # at the example's sizes, what a specialization of the dynamic program is compared
    # with (op counts, run time).
    with torch.no_grad():
        static = torch.export.export(model, (), dict(example), strict=False)
    os.makedirs(os.path.join(out_dir, "static"))
    save_program(static, os.path.join(out_dir, "static", "exported.pt2"))
    save_program(static.run_decompositions(), os.path.join(out_dir, "static", "core.pt2"))
    assert not static.range_constraints, f"{name}: the static export has symbols"
    # Every dim asked for must have stayed symbolic (torch.export would otherwise have
    # specialized it silently to the example's size).
    for inp, m in spec.items():
        for d, n in m.items():
            node = next(p for p in ep.graph.nodes if p.op == "placeholder" and p.name == inp)
            size = node.meta["val"].shape[d]
            assert not isinstance(size, int), f"{name}: {inp} dim {d} ({n}) was specialized to {size}"
    meta_calls = []
    for k, c in enumerate(calls):
        with torch.no_grad():
            want = flat(model(**{n: v.clone() for n, v in c.items()}))
            for form, path in paths.items():
                got = flat(torch.export.load(path).module()(**{n: v.clone() for n, v in c.items()}))
                assert len(got) == len(want), (name, form, k)
                d = max(max_abs_diff(g, w) for g, w in zip(got, want))
                print(f"  call {k} {[list(v.shape) for v in c.values()]} {form}: max |diff| vs eager = {d:.3e}")
                assert d <= ATOL, (name, form, k, d)
        inputs, expected = save_call(out_dir, k, c, want)
        sizes = {n: c[inp].shape[d] for inp, m in spec.items() for d, n in m.items()}
        meta_calls.append({"inputs": inputs, "expected": expected, "sizes": dict(sorted(sizes.items()))})
    meta = {
        "name": name,
        "torch_version": torch.__version__,
        "dims": {n: {"min": lo, "max": hi} for n, (lo, hi) in dims.items()},
        "dynamic_shapes": {inp: {str(d): n for d, n in m.items()} for inp, m in spec.items()},
        "range_constraints": {form: range_constraints(torch.export.load(p)) for form, p in paths.items()},
        "calls": meta_calls,
        "static": {"call": 1, "sizes": meta_calls[1]["sizes"]},
        "notes": " ".join((module.__doc__ or "").split()),
    }
    with open(os.path.join(out_dir, "meta.json"), "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")


def main(argv):
    names = argv or list(PROGRAMS)
    torch.set_num_threads(1)
    for n in names:
        generate(n)
    with open(os.path.join(HERE, "index.json"), "w") as f:
        json.dump({"programs": list(PROGRAMS)}, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])
