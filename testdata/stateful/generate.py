#!/usr/bin/env python3
"""Generate testdata/stateful: programs whose calls change state that outlives them.

tpuc refuses these today (in-place writes into parameters, buffers, constants or user
inputs, and `buffer_mutation` / `user_input_mutation` output specs); the stateful
programs issue will run them. Each program is saved in both forms and comes with the
inputs and eager PyTorch outputs of several successive calls, state carried:

  <name>/exported.pt2                torch.export (as exported: in-place ops)
  <name>/core.pt2                    ep.run_decompositions() (mutation output specs)
  <name>/calls/<k>/inputs/<i>_<n>.npy   user inputs of call k
  <name>/calls/<k>/expected/<i>.npy     user outputs of call k
  <name>/meta.json                   versions, inputs, the state each form writes, notes

Usage (torch and transformers as in testdata/requirements.txt):
  python3 testdata/stateful/generate.py
"""

from __future__ import annotations

import json
import os
import shutil
import sys

import numpy as np
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from generate import max_abs_diff, save_program, tiny_llama_config, to_numpy  # noqa: E402

ATOL = 1e-5


class BufferCounter(nn.Module):
    """Counts its calls in a buffer and scales the input by the count."""

    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.zeros(1))

    def forward(self, x):
        self.count.add_(1.0)
        return x * self.count


class InputMutation(nn.Module):
    """Doubles its input in place (the caller's tensor changes) and returns 2x + 1."""

    def forward(self, x):
        x.mul_(2.0)
        return x + 1.0


class BatchNormTrain(nn.Module):
    """A linear layer and BatchNorm1d in training mode: each call normalizes with the
    batch's statistics and updates running_mean and running_var (inside batch_norm) and
    num_batches_tracked (add_). Returns the output and the running statistics after the
    call, flattened into one tensor."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)
        self.bn = nn.BatchNorm1d(3, momentum=0.3)

    def forward(self, x):
        y = self.bn(self.lin(x))
        return torch.cat([y.flatten(), self.bn.running_mean, self.bn.running_var])


def llama_decode(batch=1):
    """Decode steps of a tiny Llama with transformers' static KV cache, exported the
    way transformers' ExecuTorch integration does (called with input_ids, cache_position);
    `batch` sequences side by side (batch 2 is the data-parallel test's program)."""
    from transformers import GenerationConfig, LlamaForCausalLM
    from transformers.integrations.executorch import convert_and_export_with_cache

    torch.manual_seed(0)
    model = LlamaForCausalLM(tiny_llama_config()).eval()
    model.generation_config = GenerationConfig(
        use_cache=True,
        cache_implementation="static",
        max_length=16,
        cache_config={"batch_size": batch, "max_cache_len": 16},
    )
    rows = [[3, 17, 42], [9, 50, 7]][:batch]
    calls = [
        {
            "input_ids": torch.tensor([[r[k]] for r in rows], dtype=torch.long),
            "cache_position": torch.tensor([k], dtype=torch.long),
        }
        for k in range(len(rows[0]))
    ]
    ep = convert_and_export_with_cache(
        model, example_input_ids=calls[0]["input_ids"], example_cache_position=calls[0]["cache_position"]
    )
    # Independent reference for call k: the logits of the last position of a full,
    # cache-free forward over each row's tokens[: k + 1].
    full = model(torch.tensor(rows, dtype=torch.long), use_cache=False).logits
    reference = [full[:, k : k + 1, :].detach() for k in range(len(rows[0]))]
    sequences = "; ".join(f"tokens {', '.join(map(str, r))}" for r in rows)
    notes = (
        "transformers LlamaForCausalLM (hidden 32, 2 layers, 4 heads, 2 kv heads, vocab 128), "
        f"static cache (batch {batch}, max_cache_len 16), exported with "
        "transformers.integrations.executorch.convert_and_export_with_cache; three decode "
        f"calls ({sequences} at cache positions 0, 1, 2). Expected outputs are the "
        "exported program's (state carried), checked against a cache-free forward over "
        "the same prefix."
    )
    return ep, calls, reference, notes


def small(module, make_calls, notes, train=False):
    def build():
        torch.manual_seed(0)
        m = module().train(train)
        calls = make_calls()
        ep = torch.export.export(m, (), {k: v.clone() for k, v in calls[0].items()}, strict=False)
        torch.manual_seed(0)
        eager = module().train(train)
        reference = [eager(**{k: v.clone() for k, v in c.items()}).detach() for c in calls]
        return ep, calls, reference, notes

    return build


PROGRAMS = {
    "llama_decode": llama_decode,
    "llama_decode_batch2": lambda: llama_decode(batch=2),
    "buffer_counter": small(
        BufferCounter,
        lambda: [{"x": torch.arange(4, dtype=torch.float32) + k} for k in range(3)],
        "A buffer `count` incremented in place by every call (add_); returns x * count.",
    ),
    "batch_norm_train": small(
        BatchNormTrain,
        lambda: [{"x": torch.randn(5, 4, generator=torch.Generator().manual_seed(k))} for k in range(3)],
        "Linear(4, 3) and BatchNorm1d(3, momentum=0.3) in training mode: batch statistics, "
        "running_mean/running_var updated inside batch_norm, num_batches_tracked by add_; "
        "returns cat(y.flatten(), running_mean, running_var) after the update.",
        train=True,
    ),
    "input_mutation": small(
        InputMutation,
        lambda: [{"x": torch.arange(4, dtype=torch.float32)}],
        "Doubles the user input x in place (mul_), returns x + 1.",
    ),
}


def mutations(prog):
    return [
        {"kind": s.kind.name.lower(), "tensor": s.arg.name, "target": s.target}
        for s in prog.graph_signature.output_specs
        if s.kind.name != "USER_OUTPUT"
    ]


def drop_module_stacks(prog):
    """Strict export (as transformers' ExecuTorch wrapper does it) records
    nn_module_stack entries holding Python object ids, which differ on every run; tpuc
    reads stack traces only, so drop them to keep the archives reproducible."""
    for node in prog.graph_module.graph.nodes:
        node.meta.pop("nn_module_stack", None)


def generate(name):
    import transformers

    print(f"== {name}")
    ep, calls, reference, notes = PROGRAMS[name]()
    out_dir = os.path.join(HERE, name)
    if os.path.isdir(out_dir):
        shutil.rmtree(out_dir)
    os.makedirs(out_dir)
    programs = {"exported": ep, "core": ep.run_decompositions()}
    for prog in programs.values():
        drop_module_stacks(prog)
    # Expected outputs: the exported program run call after call (its state carried),
    # which must agree with the reference.
    runner = torch.export.load(_saved(ep, os.path.join(out_dir, "exported.pt2"))).module()
    expected = []
    for k, (c, ref) in enumerate(zip(calls, reference)):
        got = runner(**{n: v.clone() for n, v in c.items()}).detach()
        d = max_abs_diff(got, ref)
        print(f"  call {k}: max |diff| vs reference = {d:.3e}")
        assert d <= ATOL, (name, k, d)
        expected.append(got)
    save_program(programs["core"], os.path.join(out_dir, "core.pt2"))
    core_runner = torch.export.load(os.path.join(out_dir, "core.pt2")).module()
    for k, (c, want) in enumerate(zip(calls, expected)):
        d = max_abs_diff(core_runner(**{n: v.clone() for n, v in c.items()}).detach(), want)
        assert d <= ATOL, (name, "core", k, d)
    meta_calls = []
    for k, (c, want) in enumerate(zip(calls, expected)):
        os.makedirs(os.path.join(out_dir, "calls", str(k), "inputs"))
        os.makedirs(os.path.join(out_dir, "calls", str(k), "expected"))
        files = []
        for i, (n, v) in enumerate(c.items()):
            f = f"calls/{k}/inputs/{i}_{n}.npy"
            np.save(os.path.join(out_dir, f), to_numpy(v))
            files.append(f)
        np.save(os.path.join(out_dir, f"calls/{k}/expected/0.npy"), to_numpy(want))
        meta_calls.append({"inputs": files, "expected": [f"calls/{k}/expected/0.npy"]})
    meta = {
        "name": name,
        "torch_version": torch.__version__,
        "transformers_version": transformers.__version__,
        "calls": meta_calls,
        "mutations": {kind: mutations(p) for kind, p in programs.items()},
        "notes": notes,
    }
    with open(os.path.join(out_dir, "meta.json"), "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")


def _saved(ep, path):
    save_program(ep, path)
    return path


def main(argv):
    names = argv or list(PROGRAMS)
    torch.set_num_threads(1)
    for n in names:
        generate(n)


if __name__ == "__main__":
    main(sys.argv[1:])
