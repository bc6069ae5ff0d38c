"""PyTorch's side of `make bench`'s training rows: each testdata/training model trained
eagerly by PyTorch on this CPU, as testdata/training/generate.py's reference loop does
(forward, backward, clip_grad_norm_, torch.optim.AdamW, LambdaLR), over the same 30
batches, every step timed (batch in, loss read out).

Prints one JSON object: {model: {"step_ns": [...], "losses": [...]}} ("losses" of the
last round, which the Rust side checks against the reference).

Usage: python bench/train_eager.py ROUNDS MODEL...
"""

import importlib.util
import json
import os
import sys
import time

import numpy as np
import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testdata")


def training_module():
    """testdata/training/generate.py, imported under its own name (it imports
    testdata/generate.py as `generate`)."""
    sys.path.insert(0, ROOT)
    path = os.path.join(ROOT, "training", "generate.py")
    spec = importlib.util.spec_from_file_location("training_generate", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    rounds = int(sys.argv[1])
    torch.set_num_threads(1)
    tg = training_module()
    config = tg.CONFIGS["adamw"]
    out = {}
    for name in sys.argv[2:]:
        data_dir = os.path.join(ROOT, "training", name, "data")
        data = {
            n[:-4]: torch.from_numpy(np.load(os.path.join(data_dir, n)))
            for n in sorted(os.listdir(data_dir))
        }
        steps = next(iter(data.values())).shape[0]
        timings, losses = [], []
        for r in range(rounds + 1):
            model = tg.build(name).train()
            params = list(model.parameters())
            opt = torch.optim.AdamW(params, **config["args"])
            kind, w, t, ratio = config["schedule"]
            sched = torch.optim.lr_scheduler.LambdaLR(opt, tg.warmup_cosine(w, t, ratio))
            losses = []
            for k in range(steps):
                batch = {n: v[k] for n, v in data.items()}
                start = time.perf_counter_ns()
                (loss,) = model(**batch)
                opt.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(params, config["clip"])
                opt.step()
                sched.step()
                value = loss.item()
                if r > 0:
                    timings.append(time.perf_counter_ns() - start)
                losses.append(value)
        out[name] = {"step_ns": timings, "losses": losses}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
