#!/usr/bin/env python3
"""Checks tpuc's shape-polymorphic StableHLO with jaxlib, independently of tpuc's runtime.

For each dynamic program of testdata/dynamic and each form, `tpuc compile --emit mlir`
(no --specialize) writes StableHLO whose `@main` takes `?` dimensions. For every call
of the program, this script wraps that module the way jax.export calls an exported
function (a static `@main` converting its arguments to the polymorphic types, calling
the polymorphic function and converting the results back), refines it with jaxlib's
`refine_polymorphic_shapes` (StableHLO's refine-arguments, refine-shapes and
canonicalize-dynamism passes), checks that no dynamic shape is left, compiles it with
jaxlib's CPU client and compares the outputs with eager PyTorch's (the call's
expected outputs). The weights come from an artifact of the same program compiled at
-O1 (its arguments are then the graph's inputs, in order, as are @main's).

Usage (the bench venv: jax, jaxlib, numpy, ml_dtypes):
  python3 scripts/check_polymorphic.py --tpuc target/release/tpuc --work target/polymorphic
Exits non-zero when a call does not refine, does not run or does not match.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "bench"))
from side_by_side import read_safetensors  # noqa: E402

DTYPES = {"f32": "f32", "f64": "f64", "i64": "i64", "i32": "i32", "bool": "i1", "f16": "f16", "bf16": "bf16"}


def ir_type(shape, dtype):
    elem = DTYPES[dtype]
    return "tensor<" + "".join(f"{d}x" for d in shape) + elem + ">"


def split_types(text):
    """Top-level comma-separated types of `(a, b) ` or a single type."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def wrap(poly_text, arg_types, result_types):
    """The polymorphic module with `@main` renamed `@poly` and a static `@main`."""
    m = re.search(r'function_type = \((.*?)\) -> (\(.*?\)|tensor<[^>]*>), sym_name = "main"', poly_text)
    if not m:
        raise ValueError("no @main function_type")
    dyn_args = split_types(m.group(1))
    res = m.group(2)
    dyn_results = split_types(res[1:-1] if res.startswith("(") else res)
    text = poly_text.replace('sym_name = "main"}', 'sym_name = "poly", sym_visibility = "private"}', 1)
    lines = []
    args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(arg_types))
    lines.append(
        f'  "func.func"() <{{function_type = ({", ".join(arg_types)}) -> ({", ".join(result_types)}), sym_name = "main"}}> ({{'
    )
    lines.append(f"  ^bb0({args}):")
    operands = []
    for i, (st, dt) in enumerate(zip(arg_types, dyn_args)):
        if st == dt:
            operands.append(f"%a{i}")
        else:
            lines.append(f'    %c{i} = "stablehlo.convert"(%a{i}) : ({st}) -> {dt}')
            operands.append(f"%c{i}")
    n = len(dyn_results)
    lines.append(
        f'    %r:{n} = "func.call"({", ".join(operands)}) {{callee = @poly}} : ({", ".join(dyn_args)}) -> ({", ".join(dyn_results)})'
    )
    outs = []
    for i, (st, dt) in enumerate(zip(result_types, dyn_results)):
        if st == dt:
            outs.append(f"%r#{i}")
        else:
            lines.append(f'    %o{i} = "stablehlo.convert"(%r#{i}) : ({dt}) -> {st}')
            outs.append(f"%o{i}")
    lines.append(f'    "func.return"({", ".join(outs)}) : ({", ".join(result_types)}) -> ()')
    lines.append("  }) : () -> ()")
    end = text.rstrip().rfind("})")
    return text[:end] + "\n".join(lines) + "\n" + text[end:]


def check(tpuc, work, name, form):
    from jax.extend import backend
    from jax._src.interpreters import mlir as jmlir
    from jax._src.lib import xla_client
    from jax._src.lib.mlir import ir
    import jax

    jax.config.update("jax_enable_x64", True)  # int64 inputs and buffers stay int64
    src = os.path.join(ROOT, "testdata/dynamic", name)
    pt2 = os.path.join(src, f"{form}.pt2")
    poly = os.path.join(work, f"{name}-{form}.mlir")
    art = os.path.join(work, f"{name}-{form}-O1.tpuc")
    for cmd in (
        [tpuc, "compile", pt2, "--emit", "mlir", "-o", poly],
        [tpuc, "compile", pt2, "-O1", "-o", art],
    ):
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            return [f"{' '.join(cmd)}: {r.stderr.strip()}"]
    poly_text = open(poly).read()
    if "?" not in poly_text:
        return ["the polymorphic program has no dynamic dimension"]
    manifest = json.load(open(os.path.join(art, "manifest.json")))
    weights = read_safetensors(os.path.join(art, manifest["weights"]["file"]))
    meta = json.load(open(os.path.join(src, "meta.json")))
    cpu = backend.get_backend("cpu")
    device = cpu.local_devices()[0]
    failures = []
    for k, call in enumerate(meta["calls"]):
        inputs = [np.load(os.path.join(src, p)) for p in call["inputs"]]
        expected = [np.load(os.path.join(src, p)) for p in call["expected"]]
        args, users = [], iter(inputs)
        arg_types = []
        for a in manifest["arguments"]:
            if a["kind"] == "user_input":
                x = next(users)
                args.append(x)
                arg_types.append(ir_type(x.shape, a["dtype"]))
            else:
                args.append(weights[a["weight"]])
                arg_types.append(ir_type(a["shape"], a["dtype"]))
        result_types = [
            ir_type(e.shape, o["dtype"]) for e, o in zip(expected, manifest["outputs"])
        ]
        tag = f"{name}/{form} call {k} {call['sizes']}"
        try:
            text = wrap(poly_text, arg_types, result_types)
            with jmlir.make_ir_context():
                module = ir.Module.parse(text)
                refined = jmlir.refine_polymorphic_shapes(module)
                refined_text = str(refined)
            if "?" in refined_text.replace("\"?\"", ""):
                raise ValueError("dynamic shapes are left after refinement")
            exe = cpu.compile_and_load(refined_text, xla_client.DeviceList((device,)), xla_client.CompileOptions())
            outs = exe.execute([jax.device_put(a, device) for a in args])
            outs = [np.asarray(o) for o in outs]
        except Exception as e:  # noqa: BLE001
            failures.append(f"{tag}: {type(e).__name__}: {str(e)[:2000]}")
            continue
        for i, (got, want) in enumerate(zip(outs, expected)):
            if got.shape != want.shape:
                failures.append(f"{tag}: output {i} has shape {got.shape}, PyTorch {want.shape}")
            elif not np.allclose(got, want, rtol=1e-4, atol=1e-5):
                err = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64))))
                failures.append(f"{tag}: output {i} max abs error {err:.3e}")
        print(f"  {tag}: refined, ran, {'matches' if not failures else 'see below'}")
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tpuc", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    index = json.load(open(os.path.join(ROOT, "testdata/dynamic/index.json")))
    names = a.names or index["programs"]
    failures = []
    for name in names:
        for form in ("exported", "core"):
            failures += check(a.tpuc, a.work, name, form)
    for f in failures:
        print(f"FAIL {f}", file=sys.stderr)
    print(f"polymorphic StableHLO: {len(names) * 2} programs, {'all calls match' if not failures else f'{len(failures)} failure(s)'}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
