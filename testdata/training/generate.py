#!/usr/bin/env python3
"""Generate testdata/training: joint (forward + backward) programs and PyTorch's own
training loops over them, for `tpuc compile --train` and `tpuc train`.

Each model's forward takes its batch and returns `(loss,)`; the program is
`torch.export.experimental._export_forward_backward(torch.export.export(...),
joint_loss_index=0)`, whose outputs are the buffers' next values (BatchNorm's running
statistics), the loss and one gradient per parameter. For each optimizer configuration
below, PyTorch's eager loop (torch.optim, clip_grad_norm_, LambdaLR; same initial
parameters, same batches) gives the 30 steps' losses, gradient norms and learning rates
and the final parameters and buffers:

  <model>/joint.pt2                  the joint program, initial parameters included
  <model>/data/<input>.npy           one file per user input, [STEPS, ...]: step k reads [k]
  <model>/reference/<config>.json    losses, grad_norms, lrs per step; the config
  <model>/reference/<config>.safetensors   parameters and buffers after the last step
  <model>/meta.json                  versions, inputs, parameters, configs
  decoder_lm/wide.json               a wider Llama's joint program without its weights
                                     (hidden 512, vocab 4096: 9.4M parameters), for the
                                     TPU memory report of a sharded training step
  bad/                               programs a training compile refuses: a dropout
                                     layer (random), and the MLP's joint JSON without its
                                     loss output and with a non-scalar loss

Usage (torch and transformers as in testdata/requirements.txt):
  python3 testdata/training/generate.py
"""

from __future__ import annotations

import json
import math
import os
import shutil
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from safetensors.torch import save_file
from torch.export.experimental import _export_forward_backward

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from generate import save_program, tiny_llama_config, to_numpy  # noqa: E402

STEPS = 30


class MLP(nn.Module):
    """A classifier: Linear, LayerNorm, GELU, Linear; cross-entropy."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.norm = nn.LayerNorm(32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x, labels):
        logits = self.fc2(F.gelu(self.norm(self.fc1(x))))
        return (F.cross_entropy(logits, labels),)


class CNN(nn.Module):
    """Convs, BatchNorm (training mode: running statistics updated), ReLU, pooling, a
    strided, dilated, grouped conv with bias, Linear; cross-entropy. The convs before a
    BatchNorm have no bias (its gradient is zero up to rounding, and Adam would follow
    the rounding noise)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(8)
        self.conv3 = nn.Conv2d(8, 8, 3, stride=2, padding=2, dilation=2, groups=2)
        self.fc = nn.Linear(8 * 2 * 2, 5)

    def forward(self, x, labels):
        h = F.relu(self.bn(self.conv(x)))
        h = F.max_pool2d(F.relu(self.bn2(self.conv2(h))), 2)
        h = F.relu(self.conv3(h))
        return (F.cross_entropy(self.fc(h.flatten(1)), labels),)


def decoder_lm():
    """transformers' Llama with next-token cross-entropy (labels = input_ids; the model
    shifts them), tiny config, no dropout."""
    from transformers import LlamaForCausalLM

    class LM(LlamaForCausalLM):
        def forward(self, input_ids, labels):
            return (super().forward(input_ids=input_ids, labels=labels, use_cache=False).loss,)

    return LM(tiny_llama_config(use_cache=False, tie_word_embeddings=False))


def batches(model_name):
    """STEPS batches of the model's inputs, by input name, from a fixed generator."""
    g = torch.Generator().manual_seed(1234)
    if model_name == "mlp":
        x = torch.randn(STEPS, 8, 16, generator=g)
        # Labels that depend on x, so that the loss falls.
        labels = (x[..., :10].argmax(-1) + (x[..., 10] > 0).long()) % 10
        return {"x": x, "labels": labels}
    if model_name == "cnn":
        x = torch.randn(STEPS, 4, 3, 8, 8, generator=g)
        labels = torch.randint(0, 5, (STEPS, 4), generator=g)
        return {"x": x, "labels": labels}
    if model_name == "decoder_lm":
        # Sequences with structure: each token is the previous one plus a step.
        start = torch.randint(0, 128, (STEPS, 2, 1), generator=g)
        stride = torch.randint(1, 4, (STEPS, 2, 1), generator=g)
        ids = (start + stride * torch.arange(16)) % 128
        return {"input_ids": ids, "labels": ids.clone()}
    raise ValueError(model_name)


def warmup_cosine(warmup, total, min_ratio):
    def f(s):
        if s < warmup:
            return (s + 1) / warmup
        if s >= total:
            return min_ratio
        return min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * (s - warmup) / (total - warmup)))

    return f


def warmup_linear(warmup, total, min_ratio):
    def f(s):
        if s < warmup:
            return (s + 1) / warmup
        if s >= total:
            return min_ratio
        return min_ratio + (1 - min_ratio) * (total - s) / (total - warmup)

    return f


# The configurations each model is trained with: the optimizer and its arguments as
# torch.optim takes them, the clipping norm, the schedule and which parameters are
# frozen. `tpuc` is the matching `tpuc compile --train` command line.
CONFIGS = {
    "adamw": dict(
        optimizer="AdamW",
        args=dict(lr=3e-3, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1),
        clip=1.0,
        schedule=("warmup-cosine", 5, STEPS, 0.1),
        tpuc="--optimizer adamw --lr 3e-3 --betas 0.9,0.95 --eps 1e-8 --weight-decay 0.1 "
        "--clip-grad-norm 1.0 --schedule warmup-cosine --warmup-steps 5 --total-steps 30 "
        "--min-lr-ratio 0.1",
    ),
    "sgd": dict(
        optimizer="SGD",
        args=dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-4),
        clip=1.0,
        schedule=("warmup-cosine", 5, STEPS, 0.1),
        tpuc="--optimizer sgd --lr 0.05 --momentum 0.9 --nesterov --weight-decay 1e-4 "
        "--clip-grad-norm 1.0 --schedule warmup-cosine --warmup-steps 5 --total-steps 30 "
        "--min-lr-ratio 0.1",
    ),
}

# Further configurations, on the MLP only: the other optimizer, SGD's dampening,
# the linear schedule past its end, no clipping, frozen parameters.
MLP_CONFIGS = {
    "adam": dict(
        optimizer="Adam",
        args=dict(lr=1e-2, weight_decay=0.01),
        clip=None,
        schedule=("warmup-linear", 3, 20, 0.2),
        tpuc="--optimizer adam --lr 1e-2 --weight-decay 0.01 --schedule warmup-linear "
        "--warmup-steps 3 --total-steps 20 --min-lr-ratio 0.2",
    ),
    "sgd_dampening": dict(
        optimizer="SGD",
        args=dict(lr=0.1, momentum=0.8, dampening=0.3),
        clip=0.5,
        schedule=None,
        tpuc="--optimizer sgd --lr 0.1 --momentum 0.8 --dampening 0.3 --clip-grad-norm 0.5",
    ),
    "adamw_frozen": dict(
        optimizer="AdamW",
        args=dict(lr=3e-3),
        clip=1.0,
        schedule=None,
        freeze="fc1.*",
        tpuc="--optimizer adamw --lr 3e-3 --clip-grad-norm 1.0 --freeze fc1.*",
    ),
}


def build(model_name):
    torch.manual_seed(0)
    if model_name == "mlp":
        return MLP()
    if model_name == "cnn":
        return CNN()
    return decoder_lm()


def frozen(name, pattern):
    import fnmatch

    return pattern is not None and fnmatch.fnmatchcase(name, pattern)


def train_reference(model_name, config, data):
    """PyTorch's loop: forward, backward, clip_grad_norm_, step, scheduler step."""
    model = build(model_name).train()
    params = []
    for name, p in model.named_parameters():
        if frozen(name, config.get("freeze")):
            p.requires_grad_(False)
        else:
            params.append(p)
    opt = getattr(torch.optim, config["optimizer"])(params, **config["args"])
    sched = None
    if config["schedule"] is not None:
        kind, w, t, r = config["schedule"]
        f = (warmup_cosine if kind == "warmup-cosine" else warmup_linear)(w, t, r)
        sched = torch.optim.lr_scheduler.LambdaLR(opt, f)
    losses, norms, lrs = [], [], []
    for k in range(STEPS):
        batch = {n: v[k] for n, v in data.items()}
        (loss,) = model(**batch)
        opt.zero_grad()
        loss.backward()
        if config["clip"] is not None:
            norm = torch.nn.utils.clip_grad_norm_(params, config["clip"])
        else:
            norm = torch.linalg.vector_norm(
                torch.stack([torch.linalg.vector_norm(p.grad) for p in params])
            )
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        if sched is not None:
            sched.step()
        losses.append(loss.item())
        norms.append(norm.item())
    final = {n: t.detach().clone().contiguous() for n, t in model.state_dict().items()}
    return losses, norms, lrs, final


def export_joint(model_name, data):
    model = build(model_name).train()
    example = tuple(v[0] for v in data.values())
    ep = torch.export.export(model, example, strict=False)
    return _export_forward_backward(ep, joint_loss_index=0)


def generate(model_name, out):
    data = batches(model_name)
    os.makedirs(os.path.join(out, "data"))
    os.makedirs(os.path.join(out, "reference"))
    for name, v in data.items():
        np.save(os.path.join(out, "data", f"{name}.npy"), to_numpy(v))
    joint = export_joint(model_name, data)
    save_program(joint, os.path.join(out, "joint.pt2"))
    kinds = [s.kind.name for s in joint.graph_signature.output_specs]
    configs = dict(CONFIGS)
    if model_name == "mlp":
        configs.update(MLP_CONFIGS)
    for cname, config in configs.items():
        losses, norms, lrs, final = train_reference(model_name, config, data)
        with open(os.path.join(out, "reference", f"{cname}.json"), "w") as f:
            json.dump(
                {
                    "tpuc": config["tpuc"].split(),
                    "torch": {
                        "optimizer": config["optimizer"],
                        "args": config["args"],
                        "clip_grad_norm": config["clip"],
                        "schedule": config["schedule"],
                        "freeze": config.get("freeze"),
                    },
                    "losses": losses,
                    "grad_norms": norms,
                    "lrs": lrs,
                },
                f,
                indent=1,
            )
            f.write("\n")
        save_file(final, os.path.join(out, "reference", f"{cname}.safetensors"))
        print(f"  {model_name}/{cname}: loss {losses[0]:.4f} -> {losses[-1]:.4f}")
    model = build(model_name)
    meta = {
        "torch": torch.__version__,
        "steps": STEPS,
        "inputs": {n: {"dtype": str(v.dtype), "shape": list(v.shape[1:])} for n, v in data.items()},
        "parameters": [n for n, _ in model.named_parameters()],
        "buffers": [n for n, _ in model.named_buffers()],
        "output_kinds": kinds,
        "configs": sorted(configs),
    }
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")


class WithDropout(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 10)
        self.drop = nn.Dropout(0.1)

    def forward(self, x, labels):
        return (F.cross_entropy(self.fc(self.drop(x)), labels),)


def generate_bad(out):
    """Programs `tpuc compile --train` must refuse, each with its reason."""
    import zipfile

    os.makedirs(out)
    torch.manual_seed(0)
    model = WithDropout().train()
    args = (torch.randn(8, 16), torch.randint(0, 10, (8,)))
    joint = _export_forward_backward(torch.export.export(model, args, strict=False), joint_loss_index=0)
    save_program(joint, os.path.join(out, "dropout.pt2"))
    with zipfile.ZipFile(os.path.join(HERE, "mlp", "joint.pt2")) as zf:
        name = next(n for n in zf.namelist() if n.endswith("/models/model.json"))
        program = json.loads(zf.read(name))
    specs = program["graph_module"]["signature"]["output_specs"]
    loss = next(s for s in specs if "loss_output" in s)
    loss_name = loss["loss_output"]["arg"]["name"]
    # No loss: the loss reported as a plain user output.
    no_loss = json.loads(json.dumps(program))
    for s in no_loss["graph_module"]["signature"]["output_specs"]:
        if "loss_output" in s:
            s["user_output"] = {"arg": {"as_tensor": {"name": loss_name}}}
            del s["loss_output"]
    with open(os.path.join(out, "no_loss.json"), "w") as f:
        json.dump(no_loss, f)
    # A loss of shape [1] instead of a scalar.
    vector = json.loads(json.dumps(program))
    vector["graph_module"]["graph"]["tensor_values"][loss_name]["sizes"] = [{"as_int": 1}]
    vector["graph_module"]["graph"]["tensor_values"][loss_name]["strides"] = [{"as_int": 1}]
    with open(os.path.join(out, "vector_loss.json"), "w") as f:
        json.dump(vector, f)


def generate_wide(path):
    """The decoder LM's architecture at a size whose parameters outweigh the TPU's tile
    padding, exported joint; only its model.json is kept (tpuc zero-fills weights)."""
    import tempfile
    import zipfile

    from transformers import LlamaForCausalLM

    class LM(LlamaForCausalLM):
        def forward(self, input_ids, labels):
            return (super().forward(input_ids=input_ids, labels=labels, use_cache=False).loss,)

    torch.manual_seed(0)
    cfg = tiny_llama_config(
        use_cache=False,
        tie_word_embeddings=False,
        hidden_size=512,
        intermediate_size=1024,
        num_attention_heads=8,
        num_key_value_heads=4,
        vocab_size=4096,
    )
    model = LM(cfg).train()
    ids = torch.randint(0, 4096, (4, 64), generator=torch.Generator().manual_seed(5))
    ep = torch.export.export(model, (ids, ids.clone()), strict=False)
    joint = _export_forward_backward(ep, joint_loss_index=0)
    with tempfile.TemporaryDirectory() as tmp:
        pt2 = os.path.join(tmp, "wide.pt2")
        save_program(joint, pt2)
        with zipfile.ZipFile(pt2) as zf:
            name = next(n for n in zf.namelist() if n.endswith("/models/model.json"))
            with open(path, "wb") as f:
                f.write(zf.read(name))


def main():
    torch.set_num_threads(1)
    for model_name in ("mlp", "cnn", "decoder_lm"):
        out = os.path.join(HERE, model_name)
        shutil.rmtree(out, ignore_errors=True)
        print(model_name)
        generate(model_name, out)
    generate_wide(os.path.join(HERE, "decoder_lm", "wide.json"))
    shutil.rmtree(os.path.join(HERE, "bad"), ignore_errors=True)
    generate_bad(os.path.join(HERE, "bad"))


if __name__ == "__main__":
    main()
