#!/usr/bin/env python3
"""Compile and run every architecture's serving programs (issue 40's coverage table).

Reads what `testdata/serve/coverage.py --export` wrote (OUT/results.json and, for each
architecture whose programs matched `generate()` in PyTorch, OUT/<type>/ with
decode.pt2, prefill_*.pt2, serve.json and expected.json). For each: `tpuc compile` every
program into a serving directory, then `tpuc generate DIR --prompt ... --expect ...`
(the server's engine: both prompts in one decode step, the longer one read in chunks)
against `model.generate(do_sample=False)`'s tokens. Writes the table (COVERAGE-serve.md).

  python3 scripts/serve_coverage.py --tpuc target/release/tpuc [--programs target/serve_coverage]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FAMILY = os.path.join(REPO, "testdata", "causal_lm", "family.json")


def write_ids(path, ids):
    """An int64 vector as .npy (format 1.0), without numpy."""
    header = "{'descr': '<i8', 'fortran_order': False, 'shape': (%d,), }" % len(ids)
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * pad + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack(f"<{len(ids)}q", *ids))


def first_line(text, limit=220):
    lines = [ln for ln in text.strip().splitlines() if ln.strip() and not ln.startswith(("I0000", "W0000"))]
    line = next((ln for ln in lines if "error" in ln.lower() or "FAIL" in ln), lines[-1] if lines else "")
    return line.strip()[:limit].replace("|", "\\|")


def check(tpuc, src, work):
    d = os.path.join(work, "serve")
    os.makedirs(d)
    for f in sorted(os.listdir(src)):
        if f.endswith(".pt2"):
            r = subprocess.run([tpuc, "compile", os.path.join(src, f), "-o", os.path.join(d, f[:-4] + ".tpuc")],
                               capture_output=True, text=True)
            if r.returncode != 0:
                return f"compile {f}: {first_line(r.stderr)}"
        elif f == "serve.json":
            shutil.copy(os.path.join(src, f), d)
    exp = json.load(open(os.path.join(src, "expected.json")))
    args = [tpuc, "generate", d, "--max-new-tokens", str(exp["new_tokens"])]
    for i, (p, e) in enumerate(zip(exp["prompts"], exp["greedy_ids"])):
        write_ids(os.path.join(work, f"p{i}.npy"), p)
        write_ids(os.path.join(work, f"e{i}.npy"), e)
        args += ["--prompt", os.path.join(work, f"p{i}.npy"), "--expect", os.path.join(work, f"e{i}.npy")]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        return f"run: {first_line(r.stderr)}"
    return "ok"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tpuc", required=True)
    ap.add_argument("--programs", default=os.path.join(REPO, "target", "serve_coverage"))
    ap.add_argument("--out", default=os.path.join(REPO, "COVERAGE-serve.md"))
    ap.add_argument("--command", default="make coverage-serve")
    args = ap.parse_args()
    results = json.load(open(os.path.join(args.programs, "results.json")))
    family = json.load(open(FAMILY))["types"]
    rows = []
    for t in sorted(results):
        eager = results[t]
        decode = family.get(t, {}).get("decode")
        if eager != "ok":
            rows.append((t, decode == "ok", f"{eager['stage']}: {eager['error'][:200]}", None))
            continue
        with tempfile.TemporaryDirectory(prefix="tpuc-serve-cov-") as work:
            outcome = check(args.tpuc, os.path.join(args.programs, t), work)
        rows.append((t, decode == "ok", "ok", outcome))
        print(f"{t}: {outcome}", flush=True)
    static = [r for r in rows if r[1]]
    served = [r for r in static if r[3] == "ok"]
    all_served = [r for r in rows if r[3] == "ok"]
    with open(args.out, "w") as f:
        f.write("# Serving coverage: every causal-LM architecture through `tpuc.llm`'s programs\n\n")
        f.write(f"Written by `{args.command}` (`testdata/serve/coverage.py --export`, then "
                "`scripts/serve_coverage.py`); every entry comes from that run.\n\n")
        f.write("Each architecture of testdata/causal_lm (its default config shrunk, random weights) is driven as "
                "`tpuc serve` drives it: two prompts (5 and 11 tokens) in two slots, the longer read in chunks of "
                "8 by the prefill program, then one decode step for both slots at their own positions, 8 new tokens, "
                "greedy. PyTorch column: the programs (python/tpuc/llm/programs.py) run in PyTorch against "
                "`model.generate(do_sample=False)`; tpuc column: the same programs compiled by tpuc and run by "
                "`tpuc generate` (the server's engine) on the CPU plugin, against the same tokens.\n\n")
        f.write(f"- Of the {len(static)} architectures whose static-cache decode step exports "
                f"(COVERAGE-causal-lm.md), **{len(served)} serve** ({100.0 * len(served) / max(1, len(static)):.1f}%).\n")
        f.write(f"- Of all {len(rows)} types: {len(all_served)} serve.\n\n")
        f.write("| type | static-cache decode exports | PyTorch (programs vs generate) | tpuc (compiled, served) |\n")
        f.write("|---|---|---|---|\n")
        for t, dec, eager, outcome in rows:
            f.write(f"| {t} | {'yes' if dec else 'no'} | {eager.replace('|', '/')} | {outcome or '-'} |\n")
    print(f"{len(served)} of {len(static)} static-cache architectures serve; {len(all_served)} of {len(rows)} types")


if __name__ == "__main__":
    sys.exit(main())
