"""JAX's side of `make bench`: the per-call cost of running the same StableHLO programs
through JAX on its CPU backend.

Called by `tpuc-bench` with a JSON spec (see bench/src/main.rs) and prints one JSON
object on stdout. For each program:

- `jax_execute`: `get_backend("cpu").compile_and_load(<the artifact's program.mlir>)`,
  then `executable.execute(args)` on device-resident arrays, followed by
  `jax.block_until_ready` (tpuc's execute returns once the outputs are ready, so this is
  the like-for-like figure);
- `jax_execute_dispatch`: the same call without waiting for the outputs;
- `jax_jit`: a `jax.jit` function written in jax.numpy that computes the same thing, on
  device-resident arrays, blocked (only for programs this file knows: add, mlp);
- `jax_jit_host`: the jitted function on a numpy input, with `np.asarray` of the output
  (upload and download per call, like `Session::run`).

Each variant runs `rounds` rounds of `iterations` timed calls after `warmup` calls; every
call is timed separately with `time.perf_counter_ns`. Outputs are checked against tpuc's
(allclose) so the figures are for the same computation.
"""

import json
import sys
import time

import numpy as np
import jax
import jax.numpy as jnp
import jaxlib
from jax.extend import backend
from jax._src.lib import xla_client


def mlp(w0, b0, w2, b2, w5, b5, x):
    hi = jax.lax.Precision.HIGHEST
    h = jax.nn.relu(jnp.matmul(x, w0.T, precision=hi) + b0)
    h = jax.nn.gelu(jnp.matmul(h, w2.T, precision=hi) + b2, approximate=False)
    h = jnp.matmul(h, w5.T, precision=hi) + b5
    return jax.nn.silu(h)


def add(a, b):
    return a + b


# Jitted equivalents of the benchmark programs, by name; arguments in @main order.
EQUIVALENTS = {"add": add, "mlp": mlp}


def timed(call, warmup, iterations, rounds):
    for _ in range(warmup):
        call()
    samples = []
    for _ in range(rounds):
        for _ in range(iterations):
            t = time.perf_counter_ns()
            call()
            samples.append(time.perf_counter_ns() - t)
    return samples


def check(name, what, got, expected):
    for g, e in zip(got, expected):
        g = np.asarray(g)
        if g.shape != e.shape or not np.allclose(g, e, rtol=1e-4, atol=1e-5):
            sys.exit(
                f"jax_dispatch: {name} {what}: output differs from tpuc's "
                f"(max abs diff {np.max(np.abs(g.astype(np.float64) - e)):.3e})"
            )


def bench_program(p, cpu, device, warmup, iterations, rounds):
    name = p["name"]
    text = open(p["program"]).read()
    args_host = [np.load(f) for f in p["args"]]
    expected = [np.load(f) for f in p["expected"]]
    user = p["user_inputs"]
    args = [jax.device_put(a, device) for a in args_host]
    jax.block_until_ready(args)

    t = time.perf_counter()
    exe = cpu.compile_and_load(
        text, xla_client.DeviceList((device,)), xla_client.CompileOptions()
    )
    compile_s = time.perf_counter() - t
    check(name, "execute", exe.execute(args), expected)

    out = {"compile_and_load_s": compile_s}
    out["jax_execute"] = timed(
        lambda: jax.block_until_ready(exe.execute(args)), warmup, iterations, rounds
    )
    out["jax_execute_dispatch"] = timed(
        lambda: exe.execute(args), warmup, iterations, rounds
    )
    jax.block_until_ready(exe.execute(args))

    fn = EQUIVALENTS.get(name)
    if fn is not None:
        jitted = jax.jit(fn)
        check(name, "jit", [jitted(*args)], expected)
        out["jax_jit"] = timed(
            lambda: jax.block_until_ready(jitted(*args)), warmup, iterations, rounds
        )
        # Weights stay on the device, user inputs come from numpy and the output goes
        # back to numpy: the analogue of Session::run.
        mixed = [args_host[i] if i in user else args[i] for i in range(len(args))]
        check(name, "jit (host)", [np.asarray(jitted(*mixed))], expected)
        out["jax_jit_host"] = timed(
            lambda: np.asarray(jitted(*mixed)), warmup, iterations, rounds
        )
    return out


def main():
    spec = json.load(open(sys.argv[1]))
    cpu = backend.get_backend("cpu")
    device = cpu.local_devices()[0]
    result = {
        "jax_version": jax.__version__,
        "jaxlib_version": jaxlib.__version__,
        "backend": f"{cpu.platform} ({cpu.platform_version}), "
        f"{'PJRT C API' if cpu.is_c_api else 'in-process C++ PJRT client'}",
        "python": sys.version.split()[0],
        "programs": {},
    }
    for p in spec["programs"]:
        result["programs"][p["name"]] = bench_program(
            p, cpu, device, spec["warmup"], spec["iterations"], spec["rounds"]
        )
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
