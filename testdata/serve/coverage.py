#!/usr/bin/env python3
"""Which causal-LM architectures serve through tpuc.llm's programs (issue 40's coverage).

For every model type of testdata/causal_lm (built the same way: its default config
shrunk, random weights), this drives python/tpuc/llm/programs.py's `Programs` as a
server does (two prompts of different lengths in two slots of one decode step, the
longer one read in chunks) in PyTorch, and compares the tokens with
`model.generate(do_sample=False)` per prompt. With `--export`, each type that matches is
also exported as a serving directory's programs (decode.pt2, prefill_8.pt2, serve.json,
expected.json) into OUT/<type>/ for `tpuc-coverage --serve` to compile and run.

Each type runs in its own process with a time limit. Writes OUT/results.json.

Usage (torch and transformers as in testdata/requirements.txt):
  python3 testdata/serve/coverage.py [--out DIR] [--export] [type ...]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
TIME_LIMIT_S = 300
MAX_BATCH, MAX_LEN, BUCKETS = 2, 32, [8]
PROMPTS = [[5, 77, 12, 91, 33], [7, 19, 3, 44, 60, 2, 11, 90, 15, 28, 6]]
NEW_TOKENS = 8


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def serve_tokens(P, model):
    import torch

    programs = P.Programs(model, MAX_BATCH, MAX_LEN).eval()
    greedy = lambda n: (torch.zeros(n), torch.zeros(n, dtype=torch.int64), torch.ones(n),  # noqa: E731
                        torch.zeros(n), torch.zeros(n, dtype=torch.int64))
    out = []
    chunk = max(BUCKETS)
    with torch.no_grad():
        for slot, ids in enumerate(PROMPTS):
            for start in range(0, len(ids), chunk):
                piece = ids[start:start + chunk]
                tok, _ = programs.prefill(torch.tensor([piece + [0] * (chunk - len(piece))]), torch.tensor([slot]),
                                          torch.tensor([start]), torch.tensor([len(piece)]), *greedy(1))
            out.append([int(tok[0])])
        positions = [len(p) for p in PROMPTS]
        for _ in range(NEW_TOKENS - 1):
            toks, _ = programs.decode(torch.tensor([o[-1] for o in out]), torch.tensor(positions), *greedy(MAX_BATCH))
            for s, t in enumerate(toks.tolist()):
                out[s].append(t)
                positions[s] += 1
    return programs, out


def one(model_type, out_dir, export):
    import torch

    torch.set_num_threads(1)
    C = _load("causal_lm_generate", os.path.join(REPO, "testdata/causal_lm/generate.py"))
    P = _load("tpuc_llm_programs", os.path.join(REPO, "python/tpuc/llm/programs.py"))
    stage = "build"
    try:
        model, _, _ = C.build(model_type, use_cache=True, initializer_range=0.3)
        stage = "generate"
        with torch.no_grad():
            # No end-of-sequence token: every step compared (a minimum length would
            # instead mask it out of generate()'s choices, which the programs do not).
            model.generation_config.eos_token_id = None
            want = [model.generate(torch.tensor([p]), max_new_tokens=NEW_TOKENS, do_sample=False,
                                   pad_token_id=0)[0, len(p):].tolist() for p in PROMPTS]
            if any(len(w) != NEW_TOKENS for w in want):
                return {"stage": "generate", "error": f"generate() gave {[len(w) for w in want]} tokens"}
        stage = "serve"
        programs, got = serve_tokens(P, model)
        if got != want:
            return {"stage": "compare", "error": f"served {got}, generate() {want}"}
        if export:
            stage = "export"
            d = os.path.join(out_dir, model_type)
            os.makedirs(d, exist_ok=True)
            fresh = P.Programs(model, MAX_BATCH, MAX_LEN).eval()
            for label, ep in P.export_programs(fresh, BUCKETS).items():
                torch.export.save(ep, os.path.join(d, f"{label}.pt2"))
            listed = {"decode": {"path": "decode.tpuc"},
                      "prefill": [{"tokens": t, "path": f"prefill_{t}.tpuc"} for t in BUCKETS]}
            m = P.serve_manifest(model, fresh, BUCKETS, listed, [], {})
            m["eos_token_ids"] = []  # the comparison runs every token
            with open(os.path.join(d, "serve.json"), "w") as f:
                json.dump(m, f, indent=2, sort_keys=True)
            with open(os.path.join(d, "expected.json"), "w") as f:
                json.dump({"prompts": PROMPTS, "new_tokens": NEW_TOKENS, "greedy_ids": want}, f)
        return "ok"
    except Exception as exc:  # noqa: BLE001
        text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return {"stage": stage, "error": text[:600]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(REPO, "target", "serve_coverage"))
    ap.add_argument("--export", action="store_true")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("types", nargs="*")
    args = ap.parse_args()
    if args.child:
        print(json.dumps(one(args.child, args.out, args.export)))
        return
    C = _load("causal_lm_generate", os.path.join(REPO, "testdata/causal_lm/generate.py"))
    family = json.load(open(os.path.join(REPO, "testdata/causal_lm/family.json")))
    types = args.types or sorted(family["types"] if "types" in family else C.model_types())
    os.makedirs(args.out, exist_ok=True)
    results = {}
    for t in types:
        cmd = [sys.executable, __file__, "--out", args.out, "--child", t] + (["--export"] if args.export else [])
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=TIME_LIMIT_S)
            lines = [ln for ln in r.stdout.splitlines() if ln.startswith(("{", '"'))]
            results[t] = json.loads(lines[-1]) if lines else {"stage": "crash", "error": r.stderr[-600:]}
        except subprocess.TimeoutExpired:
            results[t] = {"stage": "timeout", "error": f"over {TIME_LIMIT_S} s"}
        r = results[t]
        print(f"{t}: {'ok' if r == 'ok' else r['stage'] + ': ' + r['error'][:160]}", flush=True)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(results, f, indent=1, sort_keys=True)
    ok = sum(r == "ok" for r in results.values())
    print(f"{ok} of {len(results)} serve")


if __name__ == "__main__":
    main()
