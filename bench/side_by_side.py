"""The peer side of `make bench`: tpuc's programs against torchax's for the same model.

Called by `tpuc-bench` (bench/src/corpus.rs) with a JSON spec and writes one JSON object
to the file named by its second argument. For every model of the spec:

1. **torchax export**: `torch.export.load(<core.pt2>)`, then
   `torchax.export.exported_program_to_stablehlo` and `.mlir_module()`; the wall time of
   the three is the export time compared with `tpuc compile`'s.
2. **Weights for torchax's program** are bound in the order of the decomposed program's
   `input_specs`, which is the order its placeholders (and so the exported function's
   arguments) have. torchax 0.0.13 itself returns them as parameters, then buffers, then
   constants; where that order differs the model is listed (`torchax_weight_order_differs`)
   because torchax as shipped computes with the wrong weights there.
3. **Three programs compiled by the same XLA**: tpuc `-O2`, tpuc `-O0` (each artifact's
   `program.mlir`, weights from its `weights.safetensors`) and torchax's, all through
   jaxlib's in-process CPU client (`compile_and_load`), compile time measured.
4. **Numbers checked** against PyTorch's outputs (the model's `expected/*.npy`): a program
   that does not match is reported and not timed as a fair peer.
5. **Run time**: inputs and weights on the device first; `rounds` rounds, the programs
   taking turns in an order rotated each round; in a round each program runs `calls`
   times back to back (chosen so one turn takes about `turn_ms`), and the round's figure
   is the mean of those calls. The result is the median over rounds, and every round's
   figure (`rounds_s`), from which tpuc-bench bootstraps an interval for each ratio.
6. **Op count**: operations in every function of the module (module, function and
   return ops not counted), parsed by jaxlib's MLIR, the same counter for all three.
7. **Noise floor**: torchax's program is compiled and timed twice (`torchax_again`,
   its own executable and device buffers, in the same rotation), so the report can say
   how far apart two identical programs measure in this run.
8. **Kernels**: the instructions of XLA's optimized entry computation that do work
   (fusions, dots, convolutions, custom calls...; not parameters, constants, bitcasts or
   tuples). On a CPU each is a call of its own, so for small models this count, which
   does not depend on the machine's noise, predicts much of the run time.

Errors in one model (torchax cannot export it, XLA rejects a program) are recorded for
that model and the run goes on.
"""

import contextlib
import json
import statistics
import struct
import sys
import time
import traceback

import numpy as np


def import_torchax():
    """torchax, imported with its op table registered (ATen names this torch lacks as
    placeholders, see below)."""
    with missing_ops_as_placeholders():
        import torchax
        import torchax.decompositions
        import torchax.export

        torchax.default_env()
    return torchax


def decomposed_for_torchax(torchax, ep):
    """`ep` as torchax traces it (the same two decompositions it runs), and the values
    of its parameters, buffers and constants by target."""
    decomposed = ep.run_decompositions().run_decompositions(torchax.decompositions.DECOMPOSITIONS)
    values = dict(decomposed.state_dict)
    values.update(getattr(decomposed, "constants", {}) or {})
    return decomposed, values


@contextlib.contextmanager
def missing_ops_as_placeholders():
    """torchax 0.0.13 names ATen overloads that torch 2.15 no longer has
    (`aten.prod.dim_Dimname`, `aten.cholesky`) in module-level tables; while it imports
    and registers its op table, such names resolve to inert placeholders."""
    import torch._ops as tops

    class Missing:
        def __init__(self, name):
            self._name = name

        def __repr__(self):
            return f"<op missing in this torch: {self._name}>"

        def __hash__(self):
            return hash(self._name)

        def __eq__(self, other):
            return isinstance(other, Missing) and other._name == self._name

        def __call__(self, *args, **kwargs):
            raise RuntimeError(f"{self._name} does not exist in this torch")

        def __getattr__(self, key):
            if key.startswith("__"):
                raise AttributeError(key)
            return Missing(f"{self._name}.{key}")

    packet_getattr = tops.OpOverloadPacket.__getattr__
    namespace_getattr = tops._OpNamespace.__getattr__

    def packet(self, key):
        try:
            return packet_getattr(self, key)
        except AttributeError:
            if key.startswith("__"):
                raise
            return Missing(f"{self}.{key}")

    def namespace(self, key):
        try:
            return namespace_getattr(self, key)
        except (AttributeError, RuntimeError):
            if key.startswith("__"):
                raise
            return Missing(f"{self.name}.{key}")

    tops.OpOverloadPacket.__getattr__ = packet
    tops._OpNamespace.__getattr__ = namespace
    try:
        yield
    finally:
        tops.OpOverloadPacket.__getattr__ = packet_getattr
        tops._OpNamespace.__getattr__ = namespace_getattr


def read_safetensors(path):
    import ml_dtypes

    dtypes = {
        "F64": np.float64,
        "F32": np.float32,
        "F16": np.float16,
        "BF16": ml_dtypes.bfloat16,
        "I64": np.int64,
        "I32": np.int32,
        "I16": np.int16,
        "I8": np.int8,
        "U8": np.uint8,
        "BOOL": np.bool_,
    }
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        arr = np.frombuffer(data[base + start : base + end], dtype=dtypes[info["dtype"]])
        out[name] = arr.reshape(info["shape"])
    return out


def tpuc_arguments(artifact, user_inputs):
    manifest = json.load(open(f"{artifact}/manifest.json"))
    weights = read_safetensors(f"{artifact}/{manifest['weights']['file']}")
    args, users = [], iter(user_inputs)
    for a in manifest["arguments"]:
        if a["kind"] == "user_input":
            args.append(next(users))
        else:
            args.append(weights[a["weight"]])
    return open(f"{artifact}/{manifest['program']['file']}").read(), args


def count_ops(text):
    from jax._src.interpreters import mlir as jmlir
    from jax._src.lib.mlir import ir

    ctx = jmlir.make_ir_context()
    ctx.allow_unregistered_dialects = True
    with ctx:
        module = ir.Module.parse(text)
        count = 0

        def visit(op):
            nonlocal count
            name = op.operation.name
            if name not in ("builtin.module", "func.func", "func.return"):
                count += 1
            for region in op.operation.regions:
                for block in region.blocks:
                    for inner in block.operations:
                        visit(inner)

        for op in module.body.operations:
            visit(op)
    return count


NOT_KERNELS = {"parameter", "constant", "bitcast", "tuple", "get-tuple-element"}


def count_kernels(exe):
    """(kernels, kernels by kind) of the entry computation of XLA's optimized module:
    each instruction that is not a parameter, constant, bitcast or tuple, fusions by
    their fusion kind (`fusion:kLoop`, `fusion:kOutput`, ...)."""
    import re

    text = exe.hlo_modules()[0].to_string()
    entry = text[text.index("\nENTRY") :]
    entry = entry[: entry.index("\n}")]
    kinds = {}
    for line in entry.splitlines()[1:]:
        m = re.match(r"\s*(?:ROOT )?%\S+ = .*?\s([a-z][a-z0-9-]*)\(", line)
        if m and m.group(1) not in NOT_KERNELS:
            kind = m.group(1)
            if kind == "fusion":
                k = re.search(r"kind=(k\w+)", line)
                kind += ":" + (k.group(1) if k else "?")
            kinds[kind] = kinds.get(kind, 0) + 1
    return sum(kinds.values()), dict(sorted(kinds.items()))


def torchax_export(torch, torchax, pt2):
    """Returns (text, weights in input_specs order, kept argument indices, order differs,
    seconds)."""
    from torch.fx.passes.shape_prop import _extract_tensor_metadata
    from torch.export.graph_signature import InputKind

    start = time.perf_counter()
    ep = torch.export.load(pt2)
    # torch.export.load does not restore tensor_meta, which torchax reads.
    for node in ep.graph.nodes:
        val = node.meta.get("val")
        if node.op == "placeholder" and "tensor_meta" not in node.meta and isinstance(val, torch.Tensor):
            node.meta["tensor_meta"] = _extract_tensor_metadata(val)
    shipped_weights, exported = torchax.export.exported_program_to_stablehlo(ep)
    text = exported.mlir_module()
    seconds = time.perf_counter() - start

    # The program torchax traced.
    decomposed, state = decomposed_for_torchax(torchax, ep)
    weights = []
    for spec in decomposed.graph_signature.input_specs:
        if spec.kind == InputKind.USER_INPUT:
            continue
        weights.append(state[spec.target].detach().cpu().numpy())
    if len(weights) != len(shipped_weights):
        raise RuntimeError(
            f"torchax returned {len(shipped_weights)} weights, the program has {len(weights)}"
        )
    differs = any(
        w.shape != tuple(s.shape) or not np.array_equal(w, np.asarray(s))
        for w, s in zip(weights, shipped_weights)
    )
    return text, weights, list(exported.module_kept_var_idx), differs, seconds


def compare(outputs, expected, rtol, atol):
    """(matches, max abs error) of a program's outputs against PyTorch's."""
    outputs = [np.asarray(o) for o in outputs]
    if len(outputs) != len(expected):
        return False, None, f"{len(outputs)} outputs, PyTorch has {len(expected)}"
    worst = 0.0
    for o, e in zip(outputs, expected):
        if o.shape != e.shape:
            return False, None, f"output shape {o.shape}, PyTorch's {e.shape}"
        if o.dtype == np.bool_ or e.dtype == np.bool_:
            if not np.array_equal(o, e):
                return False, None, "boolean output differs"
            continue
        o64, e64 = o.astype(np.float64), e.astype(np.float64)
        finite = np.isfinite(e64)
        if not np.array_equal(np.isfinite(o64), finite) or not np.array_equal(
            o64[~finite], e64[~finite]
        ):
            return False, None, "non-finite values differ"
        if finite.any():
            diff = np.abs(o64[finite] - e64[finite])
            worst = max(worst, float(diff.max()))
            if not np.all(diff <= atol + rtol * np.abs(e64[finite])):
                return False, worst, f"max abs error {worst:.3e}"
    return True, worst, None


def bench_model(m, cpu, device, spec, torch, torchax, jax, xla_client):
    meta = json.load(open(f"{m['dir']}/meta.json"))
    user_inputs = [np.load(f"{m['dir']}/{i['file']}") for i in meta["inputs"]]
    expected = [np.load(f"{m['dir']}/{o['file']}") for o in meta["outputs"]]
    tolerance = m.get("tolerance", {"rtol": 1e-4, "atol": 1e-4})
    result = {"name": m["name"], "programs": {}}

    programs = {}
    for label, artifact in m["artifacts"].items():
        text, args = tpuc_arguments(artifact, user_inputs)
        programs[label] = (text, args)
    try:
        text, weights, kept, differs, seconds = torchax_export(torch, torchax, m["pt2"])
        flat = weights + user_inputs
        programs["torchax"] = (text, [flat[i] for i in kept])
        # The noise floor: the same program compiled again, with its own device buffers,
        # timed in the same rotation (the A/A ratio torchax_again / torchax).
        programs["torchax_again"] = programs["torchax"]
        result["torchax_export_s"] = seconds
        result["torchax_weight_order_differs"] = differs
    except Exception as e:  # noqa: BLE001 - any failure of the peer is a result
        result["torchax_error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]
        traceback.print_exc(file=sys.stderr)

    executables = {}
    for label, (text, args) in programs.items():
        entry = result["programs"].setdefault(label, {})
        try:
            entry["ops"] = count_ops(text)
            start = time.perf_counter()
            exe = cpu.compile_and_load(text, xla_client.DeviceList((device,)), xla_client.CompileOptions())
            entry["xla_compile_s"] = time.perf_counter() - start
            entry["kernels"], entry["kernel_kinds"] = count_kernels(exe)
            dev_args = [jax.device_put(a, device) for a in args]
            jax.block_until_ready(dev_args)
            outputs = exe.execute(dev_args)
            jax.block_until_ready(outputs)
            ok, err, why = compare(outputs, expected, tolerance["rtol"], tolerance["atol"])
            entry["matches_pytorch"] = ok
            entry["max_abs_error"] = err
            if why:
                entry["mismatch"] = why
            executables[label] = (exe, dev_args)
        except Exception as e:  # noqa: BLE001
            entry["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]

    # Calls per turn, from the first program's warm-up time.
    def run(label):
        exe, args = executables[label]
        jax.block_until_ready(exe.execute(args))

    labels = sorted(executables)
    if not labels or spec["rounds"] == 0:
        return result
    for label in labels:
        for _ in range(spec["warmup"]):
            run(label)
    start = time.perf_counter()
    for _ in range(5):
        run(labels[0])
    per_call = (time.perf_counter() - start) / 5
    calls = max(1, min(1000, int(spec["turn_ms"] / 1000 / max(per_call, 1e-7))))
    samples = {label: [] for label in labels}
    for r in range(spec["rounds"]):
        order = labels[r % len(labels) :] + labels[: r % len(labels)]
        for label in order:
            exe, args = executables[label]
            start = time.perf_counter()
            for _ in range(calls):
                out = exe.execute(args)
            jax.block_until_ready(out)
            samples[label].append((time.perf_counter() - start) / calls)
    result["calls_per_turn"] = calls
    for label in labels:
        s = samples[label]
        result["programs"][label]["run_s"] = {
            "median": statistics.median(s),
            "min": min(s),
            "max": max(s),
        }
        # Round by round, for the interval of each ratio (see corpus.rs).
        result["programs"][label]["rounds_s"] = s
    return result


def main():
    spec = json.load(open(sys.argv[1]))
    import torch

    torchax = import_torchax()
    import jax
    import jaxlib
    from jax.extend import backend
    from jax._src.lib import xla_client

    # int64 inputs stay int64 (torchax's programs take the graph's dtypes).
    jax.config.update("jax_enable_x64", True)
    cpu = backend.get_backend("cpu")
    device = cpu.local_devices()[0]
    import importlib.metadata as md

    out = {
        "jax_version": jax.__version__,
        "jaxlib_version": jaxlib.__version__,
        "torch_version": torch.__version__,
        "torchax_version": md.version("torchax"),
        "python": sys.version.split()[0],
        "backend": f"{cpu.platform} ({cpu.platform_version})",
        "models": [],
    }
    for i, m in enumerate(spec["models"]):
        print(f"side_by_side: [{i + 1}/{len(spec['models'])}] {m['name']}", file=sys.stderr, flush=True)
        out["models"].append(bench_model(m, cpu, device, spec, torch, torchax, jax, xla_client))
        with open(sys.argv[2], "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
