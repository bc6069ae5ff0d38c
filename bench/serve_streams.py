#!/usr/bin/env python3
"""`tpuc serve` on the CPU plugin against transformers' own `generate` (issue 40's bench).

The model is testdata/serve's tiny Llama (rebuilt from its generator: same seed, same
weights). For 1, 4, 8 and 16 concurrent streams:

- tpuc serve: that many clients at once, each a greedy completion of N tokens with
  `ignore_eos` (the same work every time): tokens/s over all streams, mean time to first
  token and mean time per token after it, from the client's side (HTTP included);
- transformers: `model.generate` on a batch of that many prompts (static cache, greedy,
  N new tokens): tokens/s;
- the raw decode step: the decode program alone, timed by `tpuc bench`, so that the
  server's own cost per step (scheduler, sampling outputs, HTTP) shows as the difference.

  python3 bench/serve_streams.py --tpuc target/release/tpuc [--tokens 48]
      [--program-set SUMMARY.json] [--out BENCH-serve.md]

Writes BENCH-serve.md (stdout without --out): this table, and with --program-set the
production-size program set `bench/serve_program_set.py` compiled for a TPU slice.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SRC = os.path.join(REPO, "testdata", "serve", "tiny-llama")
PROMPT = "the cat and the dog walk to the river"


def serving_dir(tpuc, work):
    d = os.path.join(work, "serve")
    os.makedirs(d)
    for f in os.listdir(SRC):
        p = os.path.join(SRC, f)
        if f.endswith(".pt2"):
            subprocess.run([tpuc, "compile", p, "-o", os.path.join(d, f[:-4] + ".tpuc")], check=True,
                           capture_output=True)
        else:
            shutil.copy(p, d)
    return d


def post(port, body, stream_times):
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    t0 = time.perf_counter()
    first = None
    n = 0
    with urllib.request.urlopen(req) as r:
        for line in r:
            line = line.decode().strip()
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            if chunk["choices"][0].get("text"):
                n += 1
                if first is None:
                    first = time.perf_counter() - t0
    stream_times.append((first, time.perf_counter() - t0, n))


def bench_server(tpuc, d, streams, tokens):
    proc = subprocess.Popen([tpuc, "serve", d, "--port", "0"], stderr=subprocess.PIPE, text=True)
    try:
        port = None
        for line in proc.stderr:
            m = re.search(r"http://127\.0\.0\.1:(\d+)", line)
            if m:
                port = int(m.group(1))
                break
        threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()
        body = {"prompt": PROMPT, "max_tokens": tokens, "temperature": 0, "ignore_eos": True, "stream": True}
        post(port, body, [])  # warm-up
        rows = {}
        for n in streams:
            times = []
            threads = [threading.Thread(target=post, args=(port, body, times)) for _ in range(n)]
            t0 = time.perf_counter()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            wall = time.perf_counter() - t0
            total = sum(k for _, _, k in times)
            ttft = sum(f for f, _, _ in times) / n
            per_token = sum((w - f) / max(1, k - 1) for f, w, k in times) / n
            rows[n] = {"tokens_per_s": total / wall, "ttft_ms": ttft * 1e3, "per_token_ms": per_token * 1e3}
        return rows
    finally:
        proc.terminate()
        proc.wait()


def bench_transformers(streams, tokens):
    import torch

    gen = importlib.util.spec_from_file_location("serve_generate", os.path.join(REPO, "testdata/serve/generate.py"))
    g = importlib.util.module_from_spec(gen)
    gen.loader.exec_module(g)
    tok = g.tokenizer()
    model = g.model(len(tok))
    torch.set_num_threads(os.cpu_count() or 1)
    ids = tok(PROMPT, return_tensors="pt")["input_ids"]
    rows = {}
    for n in streams:
        batch = ids.repeat(n, 1)
        kw = dict(max_new_tokens=tokens, min_new_tokens=tokens, do_sample=False, cache_implementation="static",
                  pad_token_id=0)
        with torch.no_grad():
            model.generate(batch, **kw)  # warm-up
            t0 = time.perf_counter()
            model.generate(batch, **kw)
            wall = time.perf_counter() - t0
        rows[n] = {"tokens_per_s": n * tokens / wall}
    return rows


def bench_step(tpuc, d):
    r = subprocess.run([tpuc, "bench", os.path.join(d, "decode.tpuc"), "--iterations", "200"], capture_output=True,
                       text=True)
    m = re.search(r"p50[^\d]*([\d.]+)\s*(µs|us|ms)", r.stdout + r.stderr)
    if not m:
        return None, (r.stdout + r.stderr)[-400:]
    v = float(m.group(1))
    return (v / 1e3 if m.group(2) in ("µs", "us") else v), None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tpuc", required=True)
    ap.add_argument("--tokens", type=int, default=48)
    ap.add_argument("--program-set", help="bench/serve_program_set.py's JSON summary")
    ap.add_argument("--out")
    ap.add_argument("--command", default="make bench-serve")
    args = ap.parse_args()
    streams = [1, 4, 8, 16]
    with tempfile.TemporaryDirectory(prefix="tpuc-serve-bench-") as work:
        d = serving_dir(args.tpuc, work)
        server = bench_server(args.tpuc, d, streams, args.tokens)
        step_ms, err = bench_step(args.tpuc, d)
    hf = bench_transformers(streams, args.tokens)
    lines = [
        "# Serving benchmark: `tpuc serve` and its program set",
        "",
        f"Written by `{args.command}` (bench/serve_streams.py, bench/serve_program_set.py); every number comes "
        "from that run, on this machine.",
        "",
        "## Concurrent streams on the CPU plugin",
        "",
        f"Tiny Llama (testdata/serve: 2 layers, width 64, 16 slots), {args.tokens} new tokens per stream, greedy, "
        f"CPU ({os.cpu_count()} cores). tpuc serve is measured from its HTTP clients (streamed, HTTP included); "
        "transformers' `generate` runs the same model on a batch of the same size with its static cache.",
    ]
    if step_ms is not None:
        lines.append(f"The decode program alone (`tpuc bench`, inputs resident, p50): {step_ms:.3f} ms per step of "
                     "16 slots; the per-token time at 16 streams above it is the server's own cost per step.")
    else:
        lines.append(f"`tpuc bench` gave no p50: {err}")
    lines += ["", "| streams | tpuc serve tokens/s | time to first token (ms) | per token (ms) | transformers generate "
              "tokens/s | tpuc / transformers |", "|---|---|---|---|---|---|"]
    for n in streams:
        s, h = server[n], hf[n]
        lines.append(f"| {n} | {s['tokens_per_s']:.0f} | {s['ttft_ms']:.1f} | {s['per_token_ms']:.2f} | "
                     f"{h['tokens_per_s']:.0f} | {s['tokens_per_s'] / h['tokens_per_s']:.2f}x |")
    if args.program_set:
        ps = json.load(open(args.program_set))
        lines += ["", f"## {ps['model']}'s program set for {ps['topology']} ({ps['mesh']}), deviceless", "",
                  f"{ps['parameters'] / 1e9:.2f}B parameters (bf16), {ps['max_batch']} slots of {ps['max_len']} "
                  f"tokens: KV cache {ps['kv_cache_gib']:.1f} GiB in all. Each program compiled by `tpuc compile "
                  "--weights-as-inputs --topology` (libtpu, no TPU) and read with `tpuc report`: memory per chip "
                  "(arguments are the weight shard and the KV cache shard, aliased in place), main-memory traffic "
                  "per call and its roofline time (v5e: 819 GB/s, 197 bf16 TFLOP/s).", "",
                  "| program | compile (s) | arguments per chip (GiB) | of which KV cache, aliased (GiB) | peak per chip "
                  "(GiB of 16) | fits | HBM traffic per call (GB) | roofline (ms) |",
                  "|---|---|---|---|---|---|---|---|"]
        for name, r in ps["programs"].items():
            if "error" in r:
                lines.append(f"| {name} | {r['compile_s']:.0f} | error: {' '.join(r['error'])} | | | | | |")
                continue
            lines.append(f"| {name} | {r['compile_s']:.0f} | {r['argument_gib_per_chip']:.2f} | "
                         f"{r['alias_gib_per_chip']:.2f} | {r['peak_gib_per_chip']:.2f} | {'yes' if r['fits'] else 'no'} | "
                         f"{r['hbm_gb_per_call']:.2f} | {r['roofline_ms']:.2f} |")
        if "decode_tokens_per_s_at_roofline" in ps:
            lines += ["", f"Estimated decode throughput at full batch from the decode step's roofline time: "
                      f"**{ps['decode_tokens_per_s_at_roofline']:.0f} tokens/s** ({ps['max_batch']} sequences per step), "
                      f"beside JetStream-PyTorch's published {ps['jetstream_pytorch_published_tokens_per_s']:,} tokens/s "
                      "(Llama-3-8B bf16, v5e-8, batch 128). An estimate from libtpu's optimized program, not a "
                      "measurement on a TPU."]
    text = "\n".join(lines) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    else:
        print(text, end="")

if __name__ == "__main__":
    sys.exit(main())
