"""Independent check of tpuc's Neuron HLO: jaxlib reads it back and runs it.

For every model of the given corpora (both forms) this compiles the `.pt2` with
`tpuc compile --target trn2`, converts the artifact's `model.hlo.pb` to StableHLO with
jaxlib's own HLO importer (`hlo_to_stablehlo`, the path XLA's tools take), compiles that
with jaxlib's CPU client, runs it on the artifact's weights and the corpus inputs, and
compares the outputs with PyTorch's. The protobuf is thus decoded by XLA's code, not
tpuc's. Exits non-zero if any program fails; with --report, appends a table to it.

Run by `make coverage` in the bench venv (jax 0.12, ml_dtypes):
    python scripts/check_neuron_hlo.py --tpuc target/debug/tpuc --report COVERAGE-trn2.md
"""

import argparse
import json
import os
import shutil
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
from side_by_side import read_safetensors  # noqa: E402


def sorted_npy(folder):
    """The `.npy` files of `folder` in the order of their leading index (`0_x.npy`)."""
    if not os.path.isdir(folder):
        return []
    names = [f for f in os.listdir(folder) if f.endswith(".npy")]
    names.sort(key=lambda f: int(f.split("_")[0].split(".")[0]))
    return [np.load(os.path.join(folder, f)) for f in names]


# The comparison tpuc's own checks make (runtime/src/compare.rs): per dtype, and the
# coarser of the output's type and the precision it was computed in.
TOLERANCES = {"float64": (1e-7, 1e-8), "float32": (1e-4, 1e-5), "float16": (1e-2, 1e-3), "bfloat16": (2e-2, 1e-2)}
DTYPE_NAMES = {"f64": "float64", "f32": "float32", "f16": "float16", "bf16": "bfloat16"}


def tolerance(expected_dtype, computed):
    names = [str(expected_dtype)] + [c for c in computed if c]
    tols = [TOLERANCES[n] for n in names if n in TOLERANCES]
    if not tols:
        return 0.0, 0.0
    return max(t[0] for t in tols), max(t[1] for t in tols)


def count_ops(op):
    """The StableHLO ops under `op`, in every function and region."""
    n = 0
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                n += inner.operation.name.startswith("stablehlo.") + count_ops(inner.operation)
    return n


def run_hlo(artifact, inputs, cpu, device):
    from jax._src.interpreters import mlir as jmlir
    from jax._src.lib import _jax, xla_client
    from jax._src.lib.mlir import ir
    import jax

    manifest = json.load(open(os.path.join(artifact, "manifest.json")))
    neuron = manifest["neuron"]
    proto = open(os.path.join(artifact, neuron["hlo"]["file"]), "rb").read()
    module = _jax.mlir.hlo_to_stablehlo(proto)
    with jmlir.make_ir_context():
        parsed = ir.Module.parse(module)
        ops = count_ops(parsed.operation)
        text = parsed.operation.get_asm(enable_debug_info=False)
    weights = read_safetensors(os.path.join(artifact, manifest["weights"]["file"]))
    args, users = [], iter(inputs)
    for a in manifest["arguments"]:
        args.append(next(users) if a["kind"] == "user_input" else weights[a["weight"]])
    exe = cpu.compile_and_load(text, xla_client.DeviceList((device,)), xla_client.CompileOptions())
    dev_args = [jax.device_put(a, device) for a in args]
    outputs = [np.asarray(o) for o in exe.execute(dev_args)]
    return manifest, ops, outputs


def check_program(tpuc, model, model_dir, artifact, cpu, device):
    """(ok, ops, max_abs_error, why) for one `.pt2`."""
    shutil.rmtree(artifact, ignore_errors=True)
    compiled = subprocess.run(
        [tpuc, "compile", model, "-o", artifact, "--target", "trn2"],
        capture_output=True,
        text=True,
    )
    if compiled.returncode != 0:
        return False, 0, float("inf"), "tpuc compile: " + compiled.stderr.strip().splitlines()[-1]
    inputs = sorted_npy(os.path.join(model_dir, "inputs"))
    expected = sorted_npy(os.path.join(model_dir, "expected"))
    try:
        manifest, ops, outputs = run_hlo(artifact, inputs, cpu, device)
    except Exception as e:  # jaxlib's errors are the finding: report, go on
        return False, 0, float("inf"), f"jaxlib: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]
    finally:
        shutil.rmtree(artifact, ignore_errors=True)
    if len(outputs) != len(expected):
        return False, ops, float("inf"), f"{len(outputs)} outputs, PyTorch has {len(expected)}"
    meta_path = os.path.join(model_dir, "meta.json")
    meta = json.load(open(meta_path)) if os.path.exists(meta_path) else {}
    neuron = manifest["neuron"]
    worst = 0.0
    for i, (got, want) in enumerate(zip(outputs, expected)):
        computed = [DTYPE_NAMES.get(meta.get("compute_dtype", ""))]
        if want.dtype == np.float64 and neuron.get("f64_narrowed"):
            computed.append("float32")
        rtol, atol = tolerance(want.dtype, computed)
        if got.shape != want.shape:
            return False, ops, float("inf"), f"output {i}: shape {got.shape}, PyTorch {want.shape}"
        g = got.astype(np.float64)
        w = want.astype(np.float64)
        err = float(np.max(np.abs(g - w), initial=0.0, where=~(np.isnan(g) & np.isnan(w))))
        worst = max(worst, err)
        if not np.allclose(g, w, rtol=rtol, atol=atol, equal_nan=True):
            return False, ops, err, f"output {i}: outside rtol={rtol:g} atol={atol:g}"
    return True, ops, worst, ""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tpuc", required=True, help="the tpuc binary (with the compiler)")
    parser.add_argument("--corpus", action="append", help="a corpus folder with index.json (repeatable)")
    parser.add_argument("--scratch", default="target/neuron-hlo-check")
    parser.add_argument("--report", help="append the results table to this Markdown file")
    args = parser.parse_args()
    corpora = args.corpus or ["testdata/models", "testdata/coverage/models"]

    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    from jax.extend import backend

    # The programs take PyTorch's int64 and f64 arguments as they are.
    jax.config.update("jax_enable_x64", True)

    cpu = backend.get_backend("cpu")
    device = cpu.local_devices()[0]
    os.makedirs(args.scratch, exist_ok=True)
    rows, failed = [], 0
    for corpus in corpora:
        index = json.load(open(os.path.join(corpus, "index.json")))
        for entry in index["models"]:
            name = entry if isinstance(entry, str) else entry["name"]
            model_dir = os.path.join(corpus, name)
            for form in ["exported", "core"]:
                model = os.path.join(model_dir, f"{form}.pt2")
                artifact = os.path.join(args.scratch, f"{name}-{form}.tpuc")
                ok, ops, err, why = check_program(args.tpuc, model, model_dir, artifact, cpu, device)
                failed += not ok
                rows.append((corpus, name, form, ok, ops, err, why))
                print(f"{'ok  ' if ok else 'FAIL'} {corpus}/{name}/{form} ops={ops} max_abs={err:.2e} {why}", file=sys.stderr)
    passed = len(rows) - failed
    lines = [
        "",
        "## Independent check: jaxlib reads the Neuron HLO",
        "",
        f"Written by `scripts/check_neuron_hlo.py`: each program's `model.hlo.pb` converted to StableHLO by "
        f"jaxlib's HLO importer, compiled by jaxlib's CPU client and run on the artifact's weights. "
        f"**{passed} of {len(rows)} programs match PyTorch.**",
        "",
        "| corpus | model | form | ops after import | max abs error | result |",
        "| --- | --- | --- | ---: | ---: | --- |",
    ]
    for corpus, name, form, ok, ops, err, why in rows:
        lines.append(f"| {corpus} | {name} | {form} | {ops} | {err:.2e} | {'matched' if ok else 'FAILED: ' + why} |")
    text = "\n".join(lines) + "\n"
    if args.report:
        with open(args.report, "a") as f:
            f.write(text)
    print(f"check_neuron_hlo: {passed}/{len(rows)} programs match PyTorch", file=sys.stderr)
    shutil.rmtree(args.scratch, ignore_errors=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
