#!/usr/bin/env python3
"""Plan and compile every zoo program for its TPU slice; write the table of BENCH-zoo.md.

For each program of the zoo (testdata/zoo/generate.py writes them, weights absent):

1. `tpuc plan PROGRAM --topology SLICE --weights-as-inputs --json --write-rules R`:
   the planner compiles candidate meshes with tpuc, ranks them by its own estimate and
   compiles the best few with libtpu (no TPU needed); its choice is the best plan that
   fits the slice's HBM.
2. `tpuc compile PROGRAM --weights-as-inputs --sharding-rules R --timing`: tpuc's own
   compile time for that plan (libtpu's is the planner's compile of the same program).

Writes a markdown table (model, program, slice, plan, peak HBM per device, libtpu
compile time, tpuc compile time, the planner's wall time) and the JSON of every plan.

Usage:
  python3 scripts/zoo_table.py --tpuc target/release/tpuc --zoo target/zoo \\
      --out BENCH-zoo.md [--only NAME ...] [--form prefill|decode]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

# The slice each model is planned for: the smallest of the generations tpuc knows whose
# HBM holds its bf16 weights with room for activations (Qwen3-235B-A22B's 470 GB fit
# four tpu7x chips of 192 GiB).
SLICES = {
    "llama-3.1-8b": "v5e:2x2",
    "qwen3-8b": "v5e:2x2",
    "deepseek-v2-lite": "v5e:2x2",
    "qwen3-30b-a3b": "v5e:2x4",
    "mixtral-8x7b": "v5e:2x4",
    "gemma-3-27b": "v5e:2x4",
    "gpt-oss-20b": "v5e:2x4",
    "llama-3.1-70b": "v5e:4x4",
    "qwen3-235b-a22b": "tpu7x:2x2x1",
}

GIB = 1 << 30


def run(cmd, timeout):
    t = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return p, time.time() - t


def tpuc_seconds(stderr):
    """tpuc's total from `--timing` (ms)."""
    m = re.search(r"^\s+total\s+([0-9.]+) ms", stderr, re.M)
    return float(m.group(1)) / 1e3 if m else None


def one(tpuc, program, name, form, topology, work, timeout):
    rules = os.path.join(work, f"{name}-{form}.rules")
    plan_cmd = [tpuc, "plan", program, "--topology", topology, "--weights-as-inputs", "--json",
                "--write-rules", rules]
    print(f"== {name} {form} on {topology}", flush=True)
    p, plan_seconds = run(plan_cmd, timeout)
    for line in p.stderr.splitlines():
        if line.startswith("plan:"):
            print(f"   {line}", flush=True)
    row = {"model": name, "form": form, "slice": topology, "plan_seconds": plan_seconds}
    if p.returncode != 0:
        row["error"] = (p.stderr.strip().splitlines() or ["(no message)"])[-1]
        print(f"   no plan: {row['error']}", flush=True)
        try:
            row["plans"] = json.loads(p.stdout)["plans"]
        except (ValueError, KeyError):
            pass
        return row
    plans = json.loads(p.stdout)
    chosen = next(x for x in plans["plans"] if x["chosen"])
    row.update(
        plan=f"{chosen['mesh']} ({chosen['strategies']})",
        peak=chosen["measured"]["peak_bytes"],
        hbm=plans["hbm_bytes_per_device"],
        libtpu_seconds=chosen["measured"]["compile_seconds"],
        cached=chosen["cached"],
        seconds=chosen["measured"]["seconds"],
        seconds_default=chosen["measured"]["seconds_default"],
        plans=plans["plans"],
    )
    with tempfile.TemporaryDirectory() as d:
        art = os.path.join(d, "a.tpuc")
        c, _ = run([tpuc, "compile", program, "--weights-as-inputs", "--sharding-rules", rules, "-o", art,
                    "--timing"], timeout)
        if c.returncode != 0:
            row["error"] = c.stderr.strip().splitlines()[-1]
        row["tpuc_seconds"] = tpuc_seconds(c.stderr)
    print(f"   {row.get('plan')}: peak {row['peak'] / GIB:.2f} GiB of {row['hbm'] / GIB:.2f}, libtpu "
          f"{row['libtpu_seconds']:.1f} s, tpuc {row.get('tpuc_seconds') or 0:.2f} s", flush=True)
    return row


def table(rows, command):
    out = [
        "# The zoo on TPU slices",
        "",
        f"Regenerate with `{command}` (tpuc plan per program, libtpu compiles, no TPU). "
        "Weights are absent (exported on the meta device, compiled with `--weights-as-inputs`): "
        "the memory figures are the program's with its weights as arguments. Times per call "
        "are roofline estimates over the chip's published rates, not measurements. Each model's "
        "slice is the smallest tpuc knows whose HBM holds its bf16 weights with room for "
        "activations (scripts/zoo_table.py, SLICES).",
        "",
        "The mixture-of-experts prefills compute every expert for every routed row: tpuc lowers "
        "`grouped_mm` densely (exact on every PJRT device; XLA:CPU has no ragged dot), so their "
        "TFLOP column is E/k times what the routing needs (Qwen3-30B-A3B: about 1.7 TFLOP per "
        "device would do). They fit; they are not fast yet.",
        "",
        "| model | program | slice | plan | peak HBM / device | fits | libtpu compile | tpuc compile | TFLOP / device | est. ms/call (default precision) | planner wall |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if r.get("not_exported"):
            out.append(f"| {r['model']} | {r['form']} | {r['slice']} | {r['error']} | | | | | | | |")
            continue
        if "peak" not in r:
            out.append(f"| {r['model']} | {r['form']} | {r['slice']} | no plan fits: {r.get('error', '')} | | no | | | | | "
                       f"{r['plan_seconds']:.0f} s |")
            continue
        tpuc_s = r.get("tpuc_seconds")
        chosen = next((p for p in r.get("plans", []) if p.get("chosen")), {})
        tflops = (chosen.get("measured") or {}).get("flops", 0) / 1e12
        out.append(
            f"| {r['model']} | {r['form']} | {r['slice']} | {r['plan']} | {r['peak'] / GIB:.2f} GiB of "
            f"{r['hbm'] / GIB:.2f} | yes | {r['libtpu_seconds']:.1f} s{' (cached)' if r.get('cached') else ''} | "
            f"{'%.2f s' % tpuc_s if tpuc_s is not None else '-'} | {tflops:.2f} | {r['seconds_default'] * 1e3:.2f} | "
            f"{r['plan_seconds']:.0f} s |"
        )
    return "\n".join(out) + "\n"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tpuc", required=True)
    ap.add_argument("--zoo", default="target/zoo")
    ap.add_argument("--out", default="BENCH-zoo.md")
    ap.add_argument("--json", default=None, help="also write every plan as JSON here")
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--form", action="append", choices=["prefill", "decode"])
    ap.add_argument("--timeout", type=int, default=7200, help="seconds per command")
    ap.add_argument("--command", default="make zoo", help="how the table is regenerated (written in it)")
    ap.add_argument("--rows", default=None,
                    help="keep each program's row in this directory as it is done, and reuse rows "
                         "already there (resume a long run); the table lists every row there")
    a = ap.parse_args(argv)
    rows = []
    names = a.only or list(SLICES)
    with tempfile.TemporaryDirectory() as work:
        for name in names:
            for form in a.form or ["prefill", "decode"]:
                kept = os.path.join(a.rows, f"{name}-{form}.json") if a.rows else None
                if kept and os.path.exists(kept):
                    continue
                program = os.path.join(a.zoo, name, f"{form}.json")
                if not os.path.exists(program):
                    meta_path = os.path.join(a.zoo, name, "meta.json")
                    meta = json.load(open(meta_path)) if os.path.exists(meta_path) else {}
                    error = meta.get("programs", {}).get(form, {}).get("error")
                    if error is None:
                        sys.exit(f"{program} is missing: run testdata/zoo/generate.py --out {a.zoo} {name}")
                    rows.append({"model": name, "form": form, "slice": SLICES[name], "plan_seconds": 0,
                                 "error": f"not exported by transformers ({error.split('. ')[0][:160]})",
                                 "not_exported": True})
                    if kept:
                        os.makedirs(a.rows, exist_ok=True)
                        with open(kept, "w") as f:
                            json.dump(rows[-1], f, indent=1)
                    continue
                rows.append(one(a.tpuc, program, name, form, SLICES[name], work, a.timeout))
                if kept:
                    os.makedirs(a.rows, exist_ok=True)
                    with open(kept, "w") as f:
                        json.dump(rows[-1], f, indent=1)
    if a.rows:
        rows = []
        for name in SLICES:
            for form in ["prefill", "decode"]:
                kept = os.path.join(a.rows, f"{name}-{form}.json")
                if os.path.exists(kept):
                    with open(kept) as f:
                        rows.append(json.load(f))
    with open(a.out, "w") as f:
        f.write(table(rows, a.command))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    failed = [r for r in rows if ("peak" not in r or "error" in r) and not r.get("not_exported")]
    print(f"wrote {a.out}: {len(rows) - len(failed)} of {len(rows)} programs planned and compiled")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
