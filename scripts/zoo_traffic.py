#!/usr/bin/env python3
"""Where the zoo's programs spend: main-memory traffic, FLOPs and roofline per device.

For each zoo program (testdata/zoo/generate.py writes them, weights absent), compiled
for its slice with the plan BENCH-zoo.md's table names (the plan `make zoo` chose), this
runs `tpuc compile --topology SLICE` and `tpuc report --json --top 1` and writes a
table: per device, the HBM traffic per call (tpuc's estimate from libtpu's optimized
program) against the argument bytes (what a call must read at least: its weight and
KV-cache shards), libtpu's own "bytes accessed" against the same (it also counts the
copies its memory-space assignment makes into on-chip memory), XLA's FLOPs against the
model's own (its matmuls, attention and grouped matmuls at the routed rows), and the
share of the roofline: the time the arguments and the model's FLOPs need at the chip's
HBM bandwidth and bf16 peak, over the program's own roofline time (traffic and FLOPs as
compiled). Not measured on a TPU: rates are the chip's published ones.

With `--before OLD_TPUC` the same programs are compiled by another tpuc (an older
commit's, which keeps no optimized program: its HBM traffic is read from libtpu's dump of
the optimized module, XLA_FLAGS=--xla_dump_to) and both are listed.

Usage:
  python3 scripts/zoo_traffic.py --tpuc target/release/tpuc --zoo target/zoo \\
      --bench BENCH-zoo.md [--before OLD_TPUC] [--only NAME ...] [--form decode]

The table replaces the section "## Traffic, FLOPs and roofline" of BENCH-zoo.md (added
at its end the first time).
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time

SECTION = "## Traffic, FLOPs and roofline"
# chip: (bf16 FLOP/s, HBM bytes/s): runtime/src/tpu.rs chip_rates, for the ideal time.
RATES = {"v5e": (197e12, 819e9), "v5p": (459e12, 2765e9), "v6e": (918e12, 1640e9),
         "tpu7x": (2307e12, 7370e9), "v4": (275e12, 1228e9)}


def plans(bench):
    """(model, form) -> (slice, mesh, strategies) from BENCH-zoo.md's main table."""
    out = {}
    for line in open(bench):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 4:
            continue
        m = re.fullmatch(r"(\S+) \((\S+)\)", cells[3])
        if m:
            out[(cells[0], cells[1])] = (cells[2], m.group(1), m.group(2))
    return out


def varint(b, i):
    r = s = 0
    while True:
        c = b[i]
        i += 1
        r |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return r, i


def hlo_module_of_dump(path):
    """The HloModuleProto inside XLA's dumped HloProto (its field 1)."""
    b = open(path, "rb").read()
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        field, kind = key >> 3, key & 7
        if kind == 2:
            n, i = varint(b, i)
            if field == 1:
                return b[i:i + n]
            i += n
        elif kind == 0:
            _, i = varint(b, i)
        elif kind == 1:
            i += 8
        elif kind == 5:
            i += 4
        else:
            break
    return None


def adopt_dump(art, dump):
    """Puts the optimized module XLA dumped into `art` as its optimized program (for a
    tpuc that does not keep it), so that `tpuc report` reads it."""
    found = sorted(glob.glob(os.path.join(dump, "*after_optimizations.hlo.pb")))
    if not found:
        return False
    module = hlo_module_of_dump(found[-1])
    if module is None:
        return False
    manifest_path = os.path.join(art, "manifest.json")
    manifest = json.load(open(manifest_path))
    name = "tpu/optimized-from-dump.hlo.pb"
    with open(os.path.join(art, name), "wb") as f:
        f.write(module)
    manifest["tpu_executables"][0]["optimized_program"] = {
        "file": name, "sha256": hashlib.sha256(module).hexdigest()}
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=2)
    return True


def measure(tpuc, reporter, program, slice_, mesh, shard, timeout, model_flops=None, from_dump=False):
    """Compiles `program` with `tpuc`; the figures from `reporter`'s `tpuc report`."""
    with tempfile.TemporaryDirectory() as d:
        art = os.path.join(d, "a.tpuc")
        env = dict(os.environ)
        dump = os.path.join(d, "dump")
        if from_dump:
            env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + f" --xla_dump_to={dump} --xla_dump_hlo_as_proto"
                                ).strip()
        cmd = [tpuc, "compile", program, "--weights-as-inputs", "--topology", slice_, "-o", art]
        if mesh != "-":
            cmd += ["--mesh", mesh, "--shard", shard]
        t = time.time()
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        seconds = time.time() - t
        if p.returncode != 0:
            return {"error": (p.stderr.strip().splitlines() or ["?"])[-1][:300]}
        if from_dump and not adopt_dump(art, dump):
            return {"error": "no optimized module in the XLA dump"}
        r = subprocess.run([reporter, "report", art, "--json", "--top", "1"], capture_output=True, text=True,
                           timeout=600)
        if r.returncode != 0:
            return {"error": r.stderr.strip()[-300:]}
        rep = json.loads(r.stdout)
    e = rep["tpu_executables"][0]["report"]
    t = rep["traffic"][0]
    top = (t.get("top_by_hbm") or [{}])[0]
    row = {
        "seconds": seconds,
        "devices": e["partitions"],
        "argument_bytes": e["argument_bytes"],
        "peak_bytes": e["peak_bytes"],
        "libtpu_bytes": e["bytes_accessed"],
        # tpuc's count (loops at their trip counts), else libtpu's (loop bodies once).
        "flops": t.get("flops") or e["flops"],
        "libtpu_flops": e["flops"],
        "hbm_bytes": t.get("hbm_bytes"),
        "roofline_seconds": t.get("roofline_seconds"),
        "model_flops": rep.get("model_flops") or model_flops,
        "top": f"{top.get('node', '')[:40]} {top.get('hbm_bytes', 0) / 1e6:.0f} MB" if top else "",
    }
    gen = slice_.split(":")[0]
    if gen in RATES and row["model_flops"]:
        peak, bw = RATES[gen]
        ideal = max(row["argument_bytes"] / bw, row["model_flops"] / row["devices"] / peak)
        if row["roofline_seconds"]:
            row["roofline_share"] = ideal / row["roofline_seconds"]
    return row


def cells(r):
    if "error" in r:
        return ["error: " + r["error"][:120], "", "", "", "", ""]
    args = r["argument_bytes"]
    hbm = r.get("hbm_bytes")
    mf = r.get("model_flops")
    return [
        f"{hbm / 1e9:.2f} GB ({hbm / args:.2f}x)" if hbm else "-",
        f"{r['libtpu_bytes'] / 1e9:.2f} GB ({r['libtpu_bytes'] / args:.2f}x)",
        f"{r['flops'] / 1e12:.3f} ({r['flops'] * r['devices'] / mf:.2f}x)" if mf else f"{r['flops'] / 1e12:.3f}",
        f"{r['roofline_seconds'] * 1e3:.2f}" if r.get("roofline_seconds") else "-",
        f"{100 * r['roofline_share']:.0f}%" if r.get("roofline_share") else "-",
        r.get("top", ""),
    ]


def table(rows, command, before):
    out = [
        SECTION,
        "",
        f"Regenerate with `{command}`. Per device and call, each program compiled by libtpu for its slice "
        "with the plan above. HBM: tpuc's estimate of the main-memory traffic from libtpu's optimized "
        "program (`tpuc report`), against the argument bytes (the weight and KV-cache shards a call must "
        "read at least; they include the embedding table, of which a call reads a few rows). libtpu: its "
        "cost analysis's bytes accessed, which also counts the copies its memory-space assignment makes "
        "into on-chip memory. TFLOP: tpuc's count of libtpu's optimized program (a loop at its trip "
        "count: the routed grouped matmuls' loops at their bound, every routed row once per device), "
        "against the model's own (its matmuls, attention and grouped matmuls at the routed rows, split "
        "evenly over the devices). Roofline: the program's time at the "
        "chip's HBM bandwidth and bf16 peak; share: the time the argument bytes and the model's FLOPs "
        "alone need, over that. Estimates from published rates, not measurements.",
        "",
    ]
    head = "| model | program | slice | plan | HBM / device (x args) | libtpu bytes (x args) | TFLOP / device (x model) | roofline ms | share of roofline | most traffic |"
    if before:
        head = head.replace("| model | program |", "| model | program | tpuc |")
    out += [head, "|" + "---|" * head.count(" | ") + "---|"]
    for r in rows:
        lead = [r["model"], r["form"]]
        for tag in (["before", "after"] if before else ["after"]):
            if tag not in r:
                continue
            c = lead + ([tag] if before else []) + [r["slice"], r["plan"]] + cells(r[tag])
            out.append("| " + " | ".join(c) + " |")
    return "\n".join(out) + "\n"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tpuc", required=True)
    ap.add_argument("--before", help="an older tpuc to compare with")
    ap.add_argument("--zoo", default="target/zoo")
    ap.add_argument("--bench", default="BENCH-zoo.md", help="the plans are read from it; the table written into it")
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--form", action="append", choices=["prefill", "decode"])
    ap.add_argument("--timeout", type=int, default=3600)
    ap.add_argument("--rows", help="keep rows here and reuse those already there")
    ap.add_argument("--redo-after", action="store_true",
                    help="measure the kept rows' programs again with --tpuc (their --before figures kept)")
    ap.add_argument("--command", default="make zoo-traffic")
    a = ap.parse_args(argv)
    chosen = plans(a.bench)
    rows = []
    for (name, form), (slice_, mesh, strategies) in chosen.items():
        if a.only and name not in a.only or a.form and form not in a.form:
            continue
        program = os.path.join(a.zoo, name, f"{form}.json")
        if not os.path.exists(program):
            print(f"== {name} {form}: {program} missing (testdata/zoo/generate.py), skipped", flush=True)
            continue
        kept = os.path.join(a.rows, f"{name}-{form}.json") if a.rows else None
        old = json.load(open(kept)) if kept and os.path.exists(kept) else None
        if old and not a.redo_after:
            rows.append(old)
            continue
        print(f"== {name} {form} on {slice_} ({mesh} {strategies})", flush=True)
        row = {"model": name, "form": form, "slice": slice_, "plan": f"{mesh} ({strategies})"}
        row["after"] = measure(a.tpuc, a.tpuc, program, slice_, mesh, strategies, a.timeout)
        print(f"   after:  {cells(row['after'])}", flush=True)
        if a.before and old and "before" in old:
            row["before"] = old["before"]
        elif a.before:
            row["before"] = measure(a.before, a.tpuc, program, slice_, mesh, strategies, a.timeout,
                                    model_flops=row["after"].get("model_flops"), from_dump=True)
            print(f"   before: {cells(row['before'])}", flush=True)
        rows.append(row)
        if kept:
            os.makedirs(a.rows, exist_ok=True)
            json.dump(row, open(kept, "w"), indent=1)
    text = open(a.bench).read()
    if SECTION in text:
        text = text[:text.index(SECTION)].rstrip("\n") + "\n"
    text += "\n" + table(rows, a.command, bool(a.before))
    with open(a.bench, "w") as f:
        f.write(text)
    print(f"wrote {a.bench}: {len(rows)} programs")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
