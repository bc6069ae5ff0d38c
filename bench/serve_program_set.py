#!/usr/bin/env python3
"""A production model's serving program set, compiled for a TPU slice without a TPU
(issue 40's bench): Llama-3.1-8B (testdata/zoo's configuration, built on the `meta`
device: no weights) as `python -m tpuc.llm export` builds it (python/tpuc/llm/
programs.py: one decode step over every slot, a prefill program per bucket, sampling
on device), exported as ExportedProgram JSON, then

  tpuc compile PROGRAM --weights-as-inputs --topology v5e:2x4 --mesh tp=8 --shard megatron
      --sharding-rules kv.rules   (the KV cache split over the heads, as the attention)
  tpuc report --json

for each program: compile time, memory per chip (arguments: weights and KV cache), the
decode step's estimated time at the roofline and from it tokens/s at full batch, beside
JetStream-PyTorch's published 8,249 tokens/s (batch 128, v5e-8).

  python3 bench/serve_program_set.py --tpuc target/release/tpuc [--out target/bench/serve-8b]
      [--model llama-3.1-8b] [--batch 128] [--len 2048] [--buckets 512,2048] [--layers N]

Prints a JSON summary on stdout (and BENCH rows with --markdown).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def export_set(model_name, batch, length, buckets, layers, out):
    import torch

    zoo = _load("zoo_generate", os.path.join(REPO, "testdata/zoo/generate.py"))
    P = _load("tpuc_llm_programs", os.path.join(REPO, "python/tpuc/llm/programs.py"))
    if layers:
        zoo.ZOO[model_name][1]["num_hidden_layers"] = layers
    model, config = zoo.build(model_name)
    programs = P.Programs(model, batch, length).eval()
    os.makedirs(out, exist_ok=True)
    paths = {}
    for label, ep in P.export_programs(programs, buckets).items():
        paths[label] = os.path.join(out, f"{label}.json")
        with open(paths[label], "wb") as f:
            f.write(zoo.serialize(ep))
    kv = sum((torch.Size(k).numel() + torch.Size(v).numel()) * programs.dtype.itemsize for k, v in programs.kv_shapes)
    params = sum(p.numel() for p in model.parameters())
    return paths, kv, params


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tpuc", required=True)
    ap.add_argument("--out", default=os.path.join(REPO, "target", "bench", "serve-8b"))
    ap.add_argument("--model", default="llama-3.1-8b")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--len", type=int, default=2048)
    ap.add_argument("--buckets", default="512,2048")
    ap.add_argument("--layers", type=int, default=0, help="a cut model (fewer layers), for a quick check")
    ap.add_argument("--topology", default="v5e:2x4")
    ap.add_argument("--mesh", default="tp=8")
    ap.add_argument("--shard", default="megatron")
    args = ap.parse_args()
    buckets = [int(b) for b in args.buckets.split(",")]

    t0 = time.time()
    paths, kv_bytes, params = export_set(args.model, args.batch, args.len, buckets, args.layers, args.out)
    export_s = time.time() - t0
    # The KV cache split over the heads' axis like the attention it serves. tpuc's
    # megatron preset does not yet infer it for state written by a scatter (it then
    # keeps the whole cache on every chip), so it is stated as a rule.
    rules = os.path.join(args.out, "kv.rules")
    with open(rules, "w") as f:
        axis = args.mesh.split("=")[0]
        f.write(f"programs.cache_keys_* [-, {axis}, -, -]\nprograms.cache_values_* [-, {axis}, -, -]\n")
    rows = {}
    for name, src in paths.items():
        art = os.path.join(args.out, name + ".tpuc")
        t = time.time()
        r = subprocess.run([args.tpuc, "compile", src, "--weights-as-inputs", "--topology", args.topology,
                            "--mesh", args.mesh, "--shard", args.shard, "--sharding-rules", rules, "-o", art],
                           capture_output=True, text=True)
        seconds = time.time() - t
        if r.returncode != 0:
            rows[name] = {"error": r.stderr.strip().splitlines()[-1:], "compile_s": seconds}
            continue
        rep = json.loads(subprocess.run([args.tpuc, "report", art, "--json"], capture_output=True, text=True,
                                        check=True).stdout)
        exe = rep["tpu_executables"][0]["report"]
        traffic = rep["traffic"][0]
        rows[name] = {
            "compile_s": round(seconds, 1),
            "argument_gib_per_chip": exe["argument_bytes"] / 2**30,
            "alias_gib_per_chip": exe["alias_bytes"] / 2**30,
            "peak_gib_per_chip": exe["peak_bytes"] / 2**30,
            "hbm_gib_per_chip": exe["hbm_bytes_per_device"] / 2**30,
            "fits": exe["fits"],
            "libtpu_compile_s": round(exe["compile_seconds"], 1),
            "hbm_gb_per_call": traffic["hbm_bytes"] / 1e9,
            "roofline_ms": traffic["roofline_seconds"] * 1e3,
        }
    summary = {
        "model": args.model + (f" ({args.layers} layers)" if args.layers else ""),
        "parameters": params,
        "topology": args.topology,
        "mesh": args.mesh,
        "max_batch": args.batch,
        "max_len": args.len,
        "kv_cache_gib": kv_bytes / 2**30,
        "export_s": round(export_s, 1),
        "programs": rows,
    }
    dec = rows.get("decode", {})
    if "roofline_ms" in dec:
        summary["decode_tokens_per_s_at_roofline"] = args.batch / (dec["roofline_ms"] / 1e3)
        summary["jetstream_pytorch_published_tokens_per_s"] = 8249
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    sys.exit(main())
