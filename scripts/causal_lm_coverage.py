#!/usr/bin/env python3
"""Compile, run and compare every causal-LM architecture testdata/causal_lm/generate.py
exported, and write the table (COVERAGE-causal-lm.md).

For each type of testdata/causal_lm/family.json whose forward exported:
  tpuc compile {exported,core}.pt2, tpuc run with the input, compared with the eager
  logits at the project's tolerances (f32 rtol 1e-4, atol 1e-5);
and whose static-cache decode step exported:
  tpuc compile decode/{exported,core}.pt2, tpuc generate --prompt --expect (the tokens of
  model.generate(do_sample=False)).

The programs are read from --programs (default target/causal_lm, where generate.py writes);
a file whose sha256 differs from family.json's is reported (another torch/transformers
made it), not measured silently.

  python3 scripts/causal_lm_coverage.py --tpuc target/release/tpuc [--jobs 2] [--out COVERAGE-causal-lm.md]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor, as_completed

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FAMILY = os.path.join(REPO, "testdata", "causal_lm", "family.json")
sys.path.insert(0, os.path.join(REPO, "testdata", "causal_lm"))
from generate import sha256  # noqa: E402  (the digest family.json records)
FORMS = ("exported", "core")

# Differences found with `tpuc diverge` and explained at their node (README, "Finding
# divergence"); listed with the explanation, never passed by a wider tolerance.
KNOWN = {
    "cpmant": "f32 rounding magnified, not a wrong lowering: `tpuc diverge` finds the first "
    "value outside the tolerances at an attention-score matmul whose inputs match PyTorch's "
    "within the tolerances but not exactly (summation order in earlier matmuls; CPM-Ant's "
    "init_std 1.0 makes large activations); README, Finding divergence",
}


def first_error(text):
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    errs = [l for l in lines if l.startswith("error")]
    line = (errs or lines or ["(no output)"])[0]
    return line[:300]


def run(cmd, timeout):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return 124, f"error: no result within {timeout} s"


def forward(tpuc, d, form, scratch):
    art = os.path.join(scratch, f"{form}.tpuc")
    rc, out = run([tpuc, "compile", os.path.join(d, f"{form}.pt2"), "-o", art], 600)
    if rc != 0:
        return "compile error", first_error(out)
    inputs = sorted(os.listdir(os.path.join(d, "inputs")))
    expected = sorted(os.listdir(os.path.join(d, "expected")))
    cmd = [tpuc, "run", art]
    for f in inputs:
        cmd += ["--input", os.path.join(d, "inputs", f)]
    for f in expected:
        cmd += ["--expect", os.path.join(d, "expected", f)]
    rc, out = run(cmd, 600)
    result_lines = [l for l in out.splitlines() if l.startswith("output ")]
    if rc == 0 and result_lines and all(l.rstrip().endswith("OK") for l in result_lines):
        err = result_lines[0].split("max_abs_error=")[1].split()[0] if "max_abs_error=" in result_lines[0] else "?"
        return "matched", err
    if result_lines:
        bad = next((l for l in result_lines if not l.rstrip().endswith("OK")), result_lines[0])
        return "mismatch", bad.strip()[:300]
    return "runtime error", first_error(out)


def decode(tpuc, d, form, scratch, new_tokens):
    art = os.path.join(scratch, f"decode-{form}.tpuc")
    rc, out = run([tpuc, "compile", os.path.join(d, "decode", f"{form}.pt2"), "-o", art], 600)
    if rc != 0:
        return "compile error", first_error(out)
    rc, out = run(
        [
            tpuc, "generate", art,
            "--prompt", os.path.join(d, "decode", "prompt.npy"),
            "--max-new-tokens", str(new_tokens),
            "--expect", os.path.join(d, "decode", "expected_tokens.npy"),
        ],
        600,
    )
    if rc == 0:
        return "matched", ""
    return ("differs" if "differ" in out.lower() or "expected" in out.lower() else "runtime error"), first_error(out)


def one(tpuc, root, name, entry, new_tokens):
    d = os.path.join(root, name)
    r = {"type": name, "class": entry.get("class", ""), "forward": {}, "decode": {}, "stale": []}
    for rel, digest in entry.get("files", {}).items():
        p = os.path.join(d, rel)
        if not os.path.exists(p):
            r["stale"].append(f"{rel} missing")
        elif sha256(p) != digest:
            r["stale"].append(f"{rel} differs from family.json")
    scratch = tempfile.mkdtemp(prefix=f"tpuc-clm-{name}-")
    try:
        if entry["forward"] == "ok" and not r["stale"]:
            for form in FORMS:
                r["forward"][form] = forward(tpuc, d, form, scratch)
        if entry.get("decode") == "ok" and not r["stale"]:
            for form in FORMS:
                r["decode"][form] = decode(tpuc, d, form, scratch, new_tokens)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return r


def reason(part):
    if part == "ok":
        return ""
    if isinstance(part, dict):
        return f"{part.get('stage')}: {part.get('error', '')}"
    return str(part)


def md_escape(s):
    return s.replace("|", "\\|").replace("\n", " ")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tpuc", default=os.path.join(REPO, "target", "release", "tpuc"))
    ap.add_argument("--programs", default=os.path.join(REPO, "target", "causal_lm"))
    ap.add_argument("--out", default=os.path.join(REPO, "COVERAGE-causal-lm.md"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--family", default=FAMILY)
    ap.add_argument("--command", default="python3 scripts/causal_lm_coverage.py")
    ap.add_argument("types", nargs="*")
    args = ap.parse_args()
    with open(args.family) as f:
        family = json.load(f)
    types = family["types"]
    names = args.types or list(types)
    new_tokens = family["decode"]["new_tokens"]
    results = []
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        jobs = [pool.submit(one, args.tpuc, args.programs, n, types[n], new_tokens) for n in names]
        for done, job in enumerate(as_completed(jobs), 1):
            r = job.result()
            results.append(r)
            f = " ".join(f"{k}={v[0]}" for k, v in r["forward"].items())
            g = " ".join(f"{k}={v[0]}" for k, v in r["decode"].items())
            print(f"[{done}/{len(names)}] {r['type']:28s} {f:45s} decode {g}", file=sys.stderr, flush=True)
    results.sort(key=lambda r: names.index(r["type"]))

    exported = [r for r in results if types[r["type"]]["forward"] == "ok" and not r["stale"]]
    both = [r for r in exported if all(r["forward"].get(f, ("",))[0] == "matched" for f in FORMS)]
    per_form = {f: sum(1 for r in exported if r["forward"].get(f, ("",))[0] == "matched") for f in FORMS}
    mism = [r for r in exported if any(r["forward"].get(f, ("",))[0] == "mismatch" for f in FORMS)]
    dec = [r for r in results if types[r["type"]].get("decode") == "ok" and not r["stale"]]
    dec_ok = [r for r in dec if all(r["decode"].get(f, ("",))[0] == "matched" for f in FORMS)]
    stale = [r for r in results if r["stale"]]
    pct = lambda a, b: f"{100.0 * a / b:.1f}%" if b else "-"

    L = []
    L.append("# Coverage: every causal-LM architecture of transformers")
    L.append("")
    L.append(f"Written by `{args.command}`; every number below comes from that run (regenerate, do not edit).")
    v = family["versions"]
    L.append(
        f"Each model type of `MODEL_FOR_CAUSAL_LM_MAPPING_NAMES` (torch {v['torch']}, transformers "
        f"{v['transformers']}: {len(types)} types) built from its default config, shrunk, with random "
        f"weights, by `testdata/causal_lm/generate.py` (see its docstring); input_ids "
        f"[{family['batch']}, {family['seq']}], vocabulary {family['vocab']}. Forward: logits compared with "
        "eager PyTorch at f32 `rtol 1e-4, atol 1e-5`. Decode: the static-cache step "
        f"(`convert_and_export_with_cache`) through `tpuc generate`, {new_tokens} tokens compared with "
        "`model.generate(do_sample=False)`."
    )
    L.append("")
    L.append("## Summary")
    L.append("")
    not_run = [n for n in names if types[n]["forward"] == "not run"]
    L.append(
        f"- Types: {len(types)}; generated: {len(names) - len(not_run)}"
        + (f" (not run in this sweep: {len(not_run)}, listed below)" if not_run else "")
        + f"; the forward exports (PyTorch) for {len(exported)}."
    )
    L.append(
        f"- Of those, compiled, ran and matched in both forms: **{len(both)}/{len(exported)} "
        f"({pct(len(both), len(exported))})**; as exported {per_form['exported']}, Core ATen {per_form['core']}."
    )
    L.append(f"- Ran and differed from PyTorch (in either form): {len(mism)}" + (
        ": " + ", ".join(f"`{r['type']}`" for r in mism) if mism else "."))
    L.append(
        f"- Decode steps that export: {len(dec)}; reproduce `generate()` through `tpuc generate` in both "
        f"forms: **{len(dec_ok)}/{len(dec)} ({pct(len(dec_ok), len(dec))})**."
    )
    if stale:
        L.append(f"- Not measured (programs missing or not the ones family.json records): {len(stale)}.")
    L.append("")
    L.append("## Not matched (tpuc)")
    L.append("")
    for r in results:
        for part in ("forward", "decode"):
            for form, (status, detail) in r[part].items():
                if status != "matched":
                    why = f" (known: {KNOWN[r['type']]})" if r["type"] in KNOWN and status == "mismatch" else ""
                    L.append(f"- `{r['type']}` {part} {form}: {status}: {md_escape(detail)}{why}")
    L.append("")
    L.append("## Not exported (PyTorch or transformers)")
    L.append("")
    for name in names:
        e = types[name]
        if e["forward"] not in ("ok", "not run"):
            L.append(f"- `{name}` forward: {md_escape(reason(e['forward']))[:300]}")
    L.append("")
    for name in names:
        e = types[name]
        if e["forward"] == "ok" and e.get("decode") not in (None, "ok"):
            L.append(f"- `{name}` decode: {md_escape(reason(e['decode']))[:300]}")
    L.append("")
    if not_run:
        L.append("## Not run in this sweep")
        L.append("")
        L.append(", ".join(f"`{n}`" for n in not_run))
        L.append("")
    L.append("## Table")
    L.append("")
    L.append("| type | class | forward exported | forward core | decode exported | decode core |")
    L.append("|---|---|---|---|---|---|")
    for r in results:
        e = types[r["type"]]

        def cell(part, form):
            if r["stale"]:
                return "not measured (stale)"
            got = r[part].get(form)
            if got:
                s, detail = got
                return f"{s} ({detail})" if s == "matched" and detail else s
            src = e["forward"] if part == "forward" else e.get("decode")
            if src == "not run":
                return "not run"
            return f"not exported ({src['stage']})" if isinstance(src, dict) else "-"

        L.append(
            f"| `{r['type']}` | {r['class']} | {cell('forward', 'exported')} | {cell('forward', 'core')} | "
            f"{cell('decode', 'exported')} | {cell('decode', 'core')} |"
        )
    with open(args.out, "w") as f:
        f.write("\n".join(L) + "\n")
    print(f"wrote {args.out}: {len(both)}/{len(exported)} forward, {len(dec_ok)}/{len(dec)} decode", file=sys.stderr)


if __name__ == "__main__":
    main()
