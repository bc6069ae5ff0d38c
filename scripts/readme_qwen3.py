#!/usr/bin/env python3
"""The README's Python five lines at full size, where the Hugging Face download is not
possible: `from_config` of Qwen3-0.6B's published configuration (random weights, the
real architecture and size) in place of `from_pretrained`, then the same lines: compile
for v5e:2x2 (libtpu, no TPU), run on the CPU plugin, the TPU report, save. Checks the
logits against eager PyTorch and writes the inputs and eager's logits next to the saved
artifact, so that the runtime-only `tpuc` can run it:

    tpuc run OUT/qwen3.tpuc --input OUT/ids.npy --expect OUT/logits.npy

Usage (in .deps/python-venv after `make python`; about 9 GB of memory, a minute or two):
    python scripts/readme_qwen3.py OUT_DIR
"""

import os
import sys
import time

import numpy as np
import torch
from transformers import AutoModelForCausalLM, Qwen3Config

import tpuc

# Qwen/Qwen3-0.6B's config.json (the fields that shape the model).
QWEN3_0_6B = dict(
    vocab_size=151936, hidden_size=1024, intermediate_size=3072, num_hidden_layers=28,
    num_attention_heads=16, num_key_value_heads=8, head_dim=128,
    max_position_embeddings=40960, rms_norm_eps=1e-6, rope_theta=1000000,
    tie_word_embeddings=True,
)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "target/readme-qwen3"
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(Qwen3Config(**QWEN3_0_6B, use_cache=False)).eval()
    print(f"Qwen3-0.6B architecture: {sum(p.numel() for p in model.parameters()) / 1e9:.2f}B parameters")

    # The README's lines.
    ids = torch.tensor([[151644, 872, 198, 9707]])
    start = time.time()
    artifact = tpuc.compile(model, (ids,), topology="v5e:2x2")
    print(f"tpuc.compile (torch.export, tpuc, libtpu for v5e:2x2): {time.time() - start:.1f} s")
    logits = tpuc.load(artifact)(ids)
    report = artifact.report()["tpu_executables"][0]["report"]
    artifact.save(os.path.join(out, "qwen3.tpuc"))

    with torch.no_grad():
        want = model(input_ids=ids).logits
    err = (logits - want).abs().max().item()
    same_argmax = bool((logits.argmax(-1) == want.argmax(-1)).all())
    print(f"logits against eager: max abs error {err:.3g}, argmax equal: {same_argmax}")
    gib = 1 << 30
    print(
        f"v5e:2x2 report: peak {report['peak_bytes'] / gib:.2f} GiB of {report['hbm_bytes_per_device'] / gib:.0f} GiB "
        f"per device, fits: {report['fits']}, {report['flops'] / 1e9:.1f} GFLOP"
    )
    np.save(os.path.join(out, "ids.npy"), ids.numpy())
    np.save(os.path.join(out, "logits.npy"), want.numpy())
    if err > 1e-4 or not same_argmax:
        sys.exit("the logits differ from eager PyTorch")


if __name__ == "__main__":
    main()
