#!/usr/bin/env python3
"""Run the op-level suite (testdata/ops) through a built tpuc and group the failures.

For every case in index.json: `tpuc compile cases/<id>/model.json -o <tmp>`, then
`tpuc run <tmp> --input ... --output-dir <tmp>/out`, then compare the outputs with
expected/*.npy here (numpy only; torch is not needed):

  integer and bool outputs  exact
  f16 outputs               |a-e| <= 1e-3 + 1e-2 |e|
  outputs of "bf16" cases   |a-e| <= 1e-2 + 2e-2 |e|   (f32 files holding bf16 values)
  other float outputs       |a-e| <= 1e-5 + 1e-4 |e|   (f32, f64)
  NaN matches NaN; an infinity must match exactly.

Usage:
  python3 testdata/ops/run_tpuc.py [--tpuc target/debug/tpuc] [-j N] [--out results.json] [FILTER ...]

FILTER keeps the cases whose id contains one of the strings. The plugin comes from
$TPUC_PJRT_PLUGIN (or tpuc's own discovery). Writes a JSON list of per-case results
(default /tmp/tpuc-ops-results.json) and prints a summary grouped by cause.
"""

from __future__ import annotations

import collections
import concurrent.futures as cf
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def tolerances(case_dtype, out_dtype):
    if out_dtype == np.float16:
        return 1e-2, 1e-3
    if case_dtype == "bf16":
        return 2e-2, 1e-2
    return 1e-4, 1e-5


def compare(got, exp, case_dtype):
    """(ok, max_abs_error, message)"""
    if got.shape != exp.shape:
        return False, None, f"shape {list(got.shape)} != expected {list(exp.shape)}"
    if got.dtype != exp.dtype:
        return False, None, f"dtype {got.dtype} != expected {exp.dtype}"
    if got.size == 0:
        return True, 0.0, ""
    if exp.dtype.kind in "biu":
        bad = int((got != exp).sum())
        return bad == 0, float(bad), (f"{bad}/{exp.size} elements differ" if bad else "")
    rtol, atol = tolerances(case_dtype, exp.dtype)
    g = got.astype(np.float64)
    e = exp.astype(np.float64)
    both_nan = np.isnan(g) & np.isnan(e)
    same = (g == e) | both_nan
    with np.errstate(invalid="ignore"):
        d = np.abs(g - e)
    d = np.where(same, 0.0, d)
    d = np.where(np.isnan(d), np.inf, d)
    bound = atol + rtol * np.abs(np.where(np.isfinite(e), e, 0.0))
    bad = (d > bound) & ~same
    nb = int(bad.sum())
    mx = float(d.max())
    msg = ""
    if nb:
        i = int(np.argmax(bad.reshape(-1)))
        msg = f"{nb}/{exp.size} mismatches, max |err| {mx:.3e}; first at flat {i}: got {g.reshape(-1)[i]!r}, expected {e.reshape(-1)[i]!r}"
    return nb == 0, mx, msg


UNSUPPORTED_RE = re.compile(r"^\s+(\S+) x(\d+) \(first at node")


def first_line(text, skip=("WARNING: All log", "I0000", "W0000")):
    for line in text.splitlines():
        s = line.strip()
        if s and not s.startswith(skip):
            return s[:300]
    return ""


def run_case(case, tpuc, env):
    d = os.path.join(HERE, case["dir"])
    res = {"id": case["id"], "op": case["op"], "dtype": case["dtype"]}
    tmp = tempfile.mkdtemp(prefix="tpuc-ops-")
    try:
        art = os.path.join(tmp, "a.tpuc")
        p = subprocess.run([tpuc, "compile", os.path.join(d, "model.json"), "-o", art],
                           capture_output=True, text=True, env=env, timeout=300)
        if p.returncode != 0:
            err = p.stderr
            unsup = [m.group(1) for m in map(UNSUPPORTED_RE.match, err.splitlines()) if m]
            if unsup:
                res.update(status="unsupported", targets=unsup, detail=first_line(err))
            elif p.returncode < 0:
                res.update(status="compile_crash", detail=f"signal {-p.returncode}: {first_line(err)}")
            else:
                res.update(status="compile_error", detail=first_line(err))
            return res
        inputs = sorted(os.listdir(os.path.join(d, "inputs")), key=lambda n: int(n.split("_")[0])) \
            if os.path.isdir(os.path.join(d, "inputs")) else []
        outdir = os.path.join(tmp, "out")
        cmd = [tpuc, "run", art, "--output-dir", outdir]
        for n in inputs:
            cmd += ["--input", os.path.join(d, "inputs", n)]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
        except subprocess.TimeoutExpired:
            res.update(status="run_error", detail="timeout (300 s)")
            return res
        if p.returncode != 0:
            status = "run_crash" if p.returncode < 0 else "run_error"
            res.update(status=status, detail=(f"signal {-p.returncode}: " if p.returncode < 0 else "") + first_line(p.stderr + p.stdout))
            return res
        exps = sorted(os.listdir(os.path.join(d, "expected")), key=lambda n: int(n.split(".")[0]))
        errs, msgs, ok = [], [], True
        for i, n in enumerate(exps):
            e = np.load(os.path.join(d, "expected", n))
            op = os.path.join(outdir, f"output_{i}.npy")
            if not os.path.exists(op):
                ok = False
                msgs.append(f"output {i} missing")
                continue
            g = np.load(op)
            o, mx, msg = compare(g, e, case["dtype"])
            errs.append(mx)
            if not o:
                ok = False
                msgs.append(f"output {i}: {msg}")
        res["max_abs_error"] = errs
        if ok:
            res["status"] = "ok"
        else:
            res.update(status="mismatch", detail="; ".join(msgs)[:400])
        return res
    except subprocess.TimeoutExpired:
        res.update(status="compile_error", detail="timeout (300 s)")
        return res
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv):
    tpuc = os.path.join(ROOT, "target", "debug", "tpuc")
    jobs = os.cpu_count() or 2
    out = "/tmp/tpuc-ops-results.json"
    filters = []
    it = iter(argv)
    for a in it:
        if a == "--tpuc":
            tpuc = next(it)
        elif a == "-j":
            jobs = int(next(it))
        elif a == "--out":
            out = next(it)
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        else:
            filters.append(a)
    with open(os.path.join(HERE, "index.json")) as f:
        index = json.load(f)
    cases = [c for c in index["cases"] if not filters or any(s in c["id"] for s in filters)]
    env = dict(os.environ)
    env.setdefault("TPUC_CACHE_DIR", os.path.join(tempfile.gettempdir(), "tpuc-cache"))
    results = []
    with cf.ThreadPoolExecutor(jobs) as ex:
        futs = [ex.submit(run_case, c, tpuc, env) for c in cases]
        for i, fu in enumerate(cf.as_completed(futs)):
            results.append(fu.result())
            if (i + 1) % 200 == 0:
                print(f"  {i + 1}/{len(cases)}", file=sys.stderr, flush=True)
    results.sort(key=lambda r: r["id"])
    with open(out, "w") as f:
        json.dump(results, f, indent=0)
    summarize(results, index)
    print(f"\nper-case results: {out}")
    return 0


def summarize(results, index):
    by_status = collections.Counter(r["status"] for r in results)
    ops = collections.defaultdict(list)
    for r in results:
        ops[r["op"]].append(r)
    ops_ok = [o for o, rs in ops.items() if all(r["status"] == "ok" for r in rs)]
    print(f"cases: {len(results)}  " + "  ".join(f"{k}={v}" for k, v in sorted(by_status.items())))
    print(f"overloads with every case passing: {len(ops_ok)}/{len(ops)}")

    unsup = collections.defaultdict(set)
    for r in results:
        if r["status"] == "unsupported":
            for t in r["targets"]:
                unsup[t].add(r["id"])
    if unsup:
        print("\n== unsupported op targets (cases)")
        for t, ids in sorted(unsup.items(), key=lambda kv: -len(kv[1])):
            print(f"  {t:45s} {len(ids)}")
    for status in ["compile_error", "compile_crash", "run_error", "run_crash", "mismatch"]:
        rs = [r for r in results if r["status"] == status]
        if not rs:
            continue
        print(f"\n== {status} ({len(rs)} cases)")
        groups = collections.defaultdict(list)
        for r in rs:
            groups[r["op"]].append(r)
        for op, grp in sorted(groups.items()):
            print(f"  {op}: {len(grp)} case(s)")
            for r in grp[:6]:
                print(f"    {r['id'].split('/', 1)[1]:28s} [{r['dtype']}] {r.get('detail', '')[:240]}")
            if len(grp) > 6:
                print(f"    ... {len(grp) - 6} more")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
