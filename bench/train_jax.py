"""JAX's side of `make bench`'s training rows: each testdata/training model's forward
(exported with torch.export, as for tpuc) lowered to JAX by torchax, differentiated with
`jax.value_and_grad` and updated by optax's AdamW behind `clip_by_global_norm`, with
the same warmup-cosine schedule: one `jax.jit` step, parameters, optimizer state and
buffers donated, run by jaxlib's CPU client (the same XLA as tpuc's plugin) over the
same 30 batches, every step timed (batch in, loss read out).

torchax 0.0.13's `exported_program_to_jax` drops buffer mutations (BatchNorm's running
statistics); this script runs torchax's interpreter itself and carries them, as
decode_torchax.py does for a KV cache.

Prints one JSON object: {"torchax_version", "jax_version", "optax_version",
model: {"step_ns": [...], "losses": [...]} or {"error": ...}}.

Usage: python bench/train_jax.py ROUNDS MODEL...
"""

import json
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from side_by_side import decomposed_for_torchax, import_torchax  # noqa: E402
from train_eager import ROOT, training_module  # noqa: E402


def step_function(torch, torchax, jax, optax, tg, name, data):
    """(jitted step, initial params, optimizer state, other inputs) for `name`."""
    from torch.export.graph_signature import InputKind, OutputKind

    jnp = jax.numpy
    model = tg.build(name).train()
    ep = torch.export.export(model, (), {n: torch.from_numpy(v[0]) for n, v in data.items()}, strict=False)
    ep, values = decomposed_for_torchax(torchax, ep)
    sig = ep.graph_signature
    specs = sig.input_specs
    params = [i for i, s in enumerate(specs) if s.kind == InputKind.PARAMETER]
    others = [
        i for i, s in enumerate(specs) if s.kind not in (InputKind.PARAMETER, InputKind.USER_INPUT)
    ]
    users = [i for i, s in enumerate(specs) if s.kind == InputKind.USER_INPUT]
    order = [specs[i].arg.name for i in users]
    other_targets = [specs[i].target for i in others]
    mutated = [
        other_targets.index(s.target) for s in sig.output_specs if s.kind == OutputKind.BUFFER_MUTATION
    ]
    as_jax = lambda t: jnp.asarray(t.detach().cpu().numpy())  # noqa: E731
    init_params = [as_jax(values[specs[i].target]) for i in params]
    init_others = [as_jax(values[specs[i].target]) for i in others]
    interpreter = torchax.export.JaxInterpreter(ep.graph_module)

    def loss_fn(p, o, batch):
        args = [None] * len(specs)
        for i, v in zip(params, p):
            args[i] = v
        for i, v in zip(others, o):
            args[i] = v
        for i, v in zip(users, batch):
            args[i] = v
        out = interpreter.run(*args, enable_io_processing=False)
        new_o = list(o)
        for k, v in zip(mutated, out[: len(mutated)]):
            new_o[k] = v
        return out[len(mutated)], new_o

    config = tg.CONFIGS["adamw"]
    a = config["args"]
    _, warmup, total, ratio = config["schedule"]

    def schedule(count):
        s = count.astype(jnp.float32)
        warm = (s + 1) / warmup
        decay = ratio + (1 - ratio) * 0.5 * (1 + jnp.cos(math.pi * (s - warmup) / (total - warmup)))
        return a["lr"] * jnp.where(s < warmup, warm, jnp.where(s >= total, ratio, decay))

    tx = optax.chain(
        optax.clip_by_global_norm(config["clip"]),
        optax.adamw(schedule, b1=a["betas"][0], b2=a["betas"][1], eps=a["eps"], weight_decay=a["weight_decay"]),
    )

    def step(p, opt_state, o, batch):
        (loss, new_o), grads = jax.value_and_grad(loss_fn, has_aux=True)(p, o, batch)
        updates, opt_state = tx.update(grads, opt_state, p)
        return optax.apply_updates(p, updates), opt_state, new_o, loss

    jitted = jax.jit(step, donate_argnums=(0, 1, 2))
    return jitted, order, init_params, tx.init(init_params), init_others


def main():
    rounds = int(sys.argv[1])
    import torch

    torchax = import_torchax()
    import jax
    import optax

    jax.config.update("jax_enable_x64", True)
    torch.set_num_threads(1)
    tg = training_module()
    out = {
        "torchax_version": torchax.__version__,
        "jax_version": jax.__version__,
        "optax_version": optax.__version__,
    }
    for name in sys.argv[2:]:
        try:
            data_dir = os.path.join(ROOT, "training", name, "data")
            data = {n[:-4]: np.load(os.path.join(data_dir, n)) for n in sorted(os.listdir(data_dir))}
            step, order, p0, s0, o0 = step_function(torch, torchax, jax, optax, tg, name, data)
            steps = next(iter(data.values())).shape[0]
            timings, losses = [], []
            for r in range(rounds + 1):
                copy = lambda xs: jax.tree_util.tree_map(lambda x: jax.numpy.array(x, copy=True), xs)  # noqa: E731
                p, s, o = copy(p0), copy(s0), copy(o0)
                losses = []
                for k in range(steps):
                    batch = [data[n][k] for n in order]
                    start = time.perf_counter_ns()
                    p, s, o, loss = step(p, s, o, batch)
                    value = float(loss)  # the loss read out is part of the step, as in tpuc's
                    if r > 0:
                        timings.append(time.perf_counter_ns() - start)
                    losses.append(value)
            out[name] = {"step_ns": timings, "losses": losses}
        except Exception as e:  # recorded for the report, as side_by_side.py does
            out[name] = {"error": f"{type(e).__name__}: {e}".splitlines()[0][:300]}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
