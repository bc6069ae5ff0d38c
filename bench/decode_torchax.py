"""torchax's side of `make bench`'s decode rows: the decode step of each testdata/decode
model (Core ATen form) lowered by torchax to JAX and run by jaxlib's CPU client, fed
the same tokens as tpuc (the prompt, then the greedy tokens), timed per step.

torchax 0.0.13's `exported_program_to_jax` drops a program's buffer mutations (its
function returns only the user outputs), so as shipped it cannot carry a KV cache from
one step to the next. This script keeps torchax's lowering (its decompositions and its
`JaxInterpreter`) and carries the state itself: the step returns the mutated buffers
with the logits, they replace the old ones for the next step, and the jitted step
donates the state it is given, as tpuc's runtime does. That is the peer as a user who
wrote the missing part would have it; the output says so.

Prints one JSON object: {model: {"step_ns": [...], "tokens": [...]}} or
{model: {"error": "..."}}.

Usage: python bench/decode_torchax.py ROUNDS MODEL_DIR...
"""

import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from side_by_side import decomposed_for_torchax, import_torchax  # noqa: E402


def step_function(torch, torchax, jax, pt2):
    """(jitted step(state, ids, pos) -> (state, logits), initial state as jax arrays)."""
    from torch.export.graph_signature import InputKind, OutputKind

    ep, values = decomposed_for_torchax(torchax, torch.export.load(pt2))
    sig = ep.graph_signature
    # Bound in input_specs order (the graph's placeholder order), not torchax's
    # parameters-then-buffers order, which differs for some programs.
    state_names = [s.target for s in sig.input_specs if s.kind != InputKind.USER_INPUT]
    user_inputs = [s.arg.name for s in sig.input_specs if s.kind == InputKind.USER_INPUT]
    if user_inputs != ["input_ids", "cache_position"]:
        raise RuntimeError(f"user inputs {user_inputs}, expected input_ids, cache_position")
    mutated = [
        state_names.index(s.target)
        for s in sig.output_specs
        if s.kind == OutputKind.BUFFER_MUTATION
    ]
    state = [jax.numpy.asarray(values[n].detach().cpu().numpy()) for n in state_names]
    interpreter = torchax.export.JaxInterpreter(ep.graph_module)

    def step(state, ids, pos):
        out = interpreter.run(*state, ids, pos, enable_io_processing=False)
        new_state = list(state)
        for i, v in zip(mutated, out[: len(mutated)]):
            new_state[i] = v
        return new_state, out[len(mutated)]

    return jax.jit(step, donate_argnums=0), state


def decode(step, state, prompt, new_tokens, timings):
    tokens, logits = [], None
    feed = list(prompt)
    for pos in range(len(prompt) + new_tokens - 1):
        if pos >= len(prompt):
            t = int(np.argmax(np.asarray(logits)[0, -1]))
            tokens.append(t)
            feed.append(t)
        ids = np.array([[feed[pos]]], dtype=np.int64)
        at = np.array([pos], dtype=np.int64)
        start = time.perf_counter_ns()
        state, logits = step(state, ids, at)
        logits = np.asarray(logits)  # the download is part of the step, as in tpuc's
        if timings is not None and pos >= len(prompt):
            timings.append(time.perf_counter_ns() - start)
    tokens.append(int(np.argmax(logits[0, -1])))
    return tokens


def main():
    rounds = int(sys.argv[1])
    import torch

    torchax = import_torchax()
    import jax

    jax.config.update("jax_enable_x64", True)
    torch.set_num_threads(1)
    out = {"torchax_version": torchax.__version__, "jax_version": jax.__version__}
    for d in sys.argv[2:]:
        name = os.path.basename(d.rstrip("/"))
        try:
            prompt = np.load(os.path.join(d, "prompt.npy")).tolist()
            new_tokens = len(np.load(os.path.join(d, "expected_tokens.npy")))
            step, initial = step_function(torch, torchax, jax, os.path.join(d, "core.pt2"))
            timings, tokens = [], None
            for r in range(rounds + 1):
                # The step donates its state: each round starts from a fresh copy.
                state = [jax.numpy.array(s, copy=True) for s in initial]
                tokens = decode(step, state, prompt, new_tokens, timings if r > 0 else None)
            out[name] = {"step_ns": timings, "tokens": tokens}
        except Exception as e:  # recorded for the report, as side_by_side.py does
            out[name] = {"error": f"{type(e).__name__}: {e}".splitlines()[0][:300]}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
