"""PyTorch's side of `make bench`'s decode rows: the decode step of each
testdata/decode model (Core ATen form), loaded with torch.export and run eagerly by
PyTorch on this CPU, fed the same tokens as tpuc (the prompt, then the expected greedy
tokens), timed per step.

Prints one JSON object: {model: {"step_ns": [...], "tokens": [...]}}; "tokens" are the
greedy tokens PyTorch produced, so the Rust side can check both ran the same decode.

Usage: python bench/decode_eager.py ROUNDS MODEL_DIR...
"""

import json
import os
import sys
import time

import numpy as np
import torch


def decode(module, prompt, new_tokens, timings):
    tokens, logits = [], None
    feed = list(prompt)
    for pos in range(len(prompt) + new_tokens - 1):
        if pos >= len(prompt):
            t = int(torch.argmax(logits[0, -1]))
            tokens.append(t)
            feed.append(t)
        start = time.perf_counter_ns()
        logits = module(
            input_ids=torch.tensor([[feed[pos]]], dtype=torch.long),
            cache_position=torch.tensor([pos], dtype=torch.long),
        )
        if timings is not None and pos >= len(prompt):
            timings.append(time.perf_counter_ns() - start)
    tokens.append(int(torch.argmax(logits[0, -1])))
    return tokens


def main():
    rounds = int(sys.argv[1])
    torch.set_num_threads(1)
    out = {}
    for d in sys.argv[2:]:
        prompt = np.load(os.path.join(d, "prompt.npy")).tolist()
        new_tokens = len(np.load(os.path.join(d, "expected_tokens.npy")))
        timings, tokens = [], None
        with torch.no_grad():
            for r in range(rounds + 1):
                # A fresh module per round: its buffers are the cache.
                module = torch.export.load(os.path.join(d, "core.pt2")).module()
                tokens = decode(module, prompt, new_tokens, timings if r > 0 else None)
        out[os.path.basename(d.rstrip("/"))] = {"step_ns": timings, "tokens": tokens}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
