#!/usr/bin/env python3
"""Generate the zoo: production-size decoders as torch.export programs, without weights.

Each model is built from its published configuration on the `meta` device (no weight is
allocated or downloaded), in bf16, and exported twice:

  <out>/<name>/prefill.json   forward over a batch of 1 x 2,048 tokens, returning the
                              last position's logits (what a serving prefill computes)
  <out>/<name>/decode.json    one static-KV-cache decode step, batch 8, cache 4,096
                              (transformers' convert_and_export_with_cache)
  <out>/<name>/meta.json      the configuration, versions, parameter count, programs
                              (a program transformers cannot export is recorded with
                              its error: DeepSeek-V2's decode step, whose latent KV
                              cache transformers' static cache does not hold)

The files are the ExportedProgram JSON of torch.export's serializer (weights absent:
compile them with `tpuc compile --weights-as-inputs`, or plan them with `tpuc plan
--weights-as-inputs`). The same torch and transformers give the same bytes.

The configurations are the published `config.json` values of each model (hidden size,
layers, heads, experts...), written here so that nothing is downloaded.

Usage (torch and transformers as in testdata/requirements.txt):
  python3 testdata/zoo/generate.py --out target/zoo [name ...]
  python3 testdata/zoo/generate.py --list
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import torch

BF16 = torch.bfloat16
PREFILL_TOKENS = 2048
DECODE_BATCH = 8
DECODE_CACHE = 4096

# name -> (transformers config class, published config values, what it is)
ZOO = {
    "llama-3.1-8b": (
        "LlamaConfig",
        dict(
            vocab_size=128256, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
            num_attention_heads=32, num_key_value_heads=8, max_position_embeddings=131072,
            rms_norm_eps=1e-5, rope_theta=500000.0, tie_word_embeddings=False,
            rope_scaling=dict(rope_type="llama3", factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
                              original_max_position_embeddings=8192),
        ),
        "Llama 3.1 8B: 32 layers, GQA 32/8 heads, SwiGLU 14336",
    ),
    "llama-3.1-70b": (
        "LlamaConfig",
        dict(
            vocab_size=128256, hidden_size=8192, intermediate_size=28672, num_hidden_layers=80,
            num_attention_heads=64, num_key_value_heads=8, max_position_embeddings=131072,
            rms_norm_eps=1e-5, rope_theta=500000.0, tie_word_embeddings=False,
            rope_scaling=dict(rope_type="llama3", factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
                              original_max_position_embeddings=8192),
        ),
        "Llama 3.1 70B: 80 layers, GQA 64/8 heads, SwiGLU 28672",
    ),
    "qwen3-8b": (
        "Qwen3Config",
        dict(
            vocab_size=151936, hidden_size=4096, intermediate_size=12288, num_hidden_layers=36,
            num_attention_heads=32, num_key_value_heads=8, head_dim=128, max_position_embeddings=40960,
            rms_norm_eps=1e-6, rope_theta=1000000.0, tie_word_embeddings=False,
        ),
        "Qwen3 8B: 36 layers, GQA 32/8 heads, q/k RMSNorm",
    ),
    "qwen3-30b-a3b": (
        "Qwen3MoeConfig",
        dict(
            vocab_size=151936, hidden_size=2048, intermediate_size=6144, moe_intermediate_size=768,
            num_hidden_layers=48, num_attention_heads=32, num_key_value_heads=4, head_dim=128,
            num_experts=128, num_experts_per_tok=8, norm_topk_prob=True, decoder_sparse_step=1,
            max_position_embeddings=40960, rms_norm_eps=1e-6, rope_theta=1000000.0, tie_word_embeddings=False,
        ),
        "Qwen3 30B-A3B: 48 layers, 128 experts (768 wide), top-8",
    ),
    "mixtral-8x7b": (
        "MixtralConfig",
        dict(
            vocab_size=32000, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
            num_attention_heads=32, num_key_value_heads=8, num_local_experts=8, num_experts_per_tok=2,
            max_position_embeddings=32768, rms_norm_eps=1e-5, rope_theta=1000000.0, sliding_window=None,
            tie_word_embeddings=False,
        ),
        "Mixtral 8x7B: 32 layers, 8 experts (14336 wide), top-2",
    ),
    "gemma-3-27b": (
        "Gemma3TextConfig",
        dict(
            vocab_size=262208, hidden_size=5376, intermediate_size=21504, num_hidden_layers=62,
            num_attention_heads=32, num_key_value_heads=16, head_dim=128, query_pre_attn_scalar=168,
            sliding_window=1024, max_position_embeddings=131072, rms_norm_eps=1e-6,
            rope_theta=1000000.0, rope_local_base_freq=10000.0,
            rope_scaling=dict(rope_type="linear", factor=8.0),
        ),
        "Gemma 3 27B (text): 62 layers, GQA 32/16 heads, sliding window 1024 on 5 of 6 layers",
    ),
    "deepseek-v2-lite": (
        "DeepseekV2Config",
        dict(
            vocab_size=102400, hidden_size=2048, intermediate_size=10944, moe_intermediate_size=1408,
            num_hidden_layers=27, num_attention_heads=16, num_key_value_heads=16, n_routed_experts=64,
            n_shared_experts=2, num_experts_per_tok=6, first_k_dense_replace=1, kv_lora_rank=512,
            q_lora_rank=None, qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128,
            topk_method="greedy", n_group=1, topk_group=1, routed_scaling_factor=1.0, norm_topk_prob=False,
            max_position_embeddings=163840, rms_norm_eps=1e-6, rope_theta=10000.0, tie_word_embeddings=False,
        ),
        "DeepSeek-V2-Lite: 27 layers, multi-head latent attention (kv rank 512), 64 experts top-6 + 2 shared",
    ),
    "gpt-oss-20b": (
        "GptOssConfig",
        dict(
            vocab_size=201088, hidden_size=2880, intermediate_size=2880, num_hidden_layers=24,
            num_attention_heads=64, num_key_value_heads=8, head_dim=64, num_local_experts=32,
            num_experts_per_tok=4, sliding_window=128, max_position_embeddings=131072, rms_norm_eps=1e-5,
            rope_theta=150000.0, tie_word_embeddings=False,
            rope_scaling=dict(rope_type="yarn", factor=32.0, beta_fast=32.0, beta_slow=1.0, truncate=False,
                              original_max_position_embeddings=4096),
        ),
        "GPT-OSS 20B: 24 layers, 32 experts top-4, attention sinks, sliding window 128 on alternate layers",
    ),
    "qwen3-235b-a22b": (
        "Qwen3MoeConfig",
        dict(
            vocab_size=151936, hidden_size=4096, intermediate_size=12288, moe_intermediate_size=1536,
            num_hidden_layers=94, num_attention_heads=64, num_key_value_heads=4, head_dim=128,
            num_experts=128, num_experts_per_tok=8, norm_topk_prob=True, decoder_sparse_step=1,
            max_position_embeddings=40960, rms_norm_eps=1e-6, rope_theta=1000000.0, tie_word_embeddings=False,
        ),
        "Qwen3 235B-A22B: 94 layers, 128 experts (1536 wide), top-8",
    ),
}


def build(name):
    import transformers

    cls_name, values, _ = ZOO[name]
    config = getattr(transformers, cls_name)(**values)
    # SDPA where transformers has it for the architecture (GPT-OSS has not: eager).
    for attention in ("sdpa", "eager"):
        config._attn_implementation = attention
        try:
            with torch.device("meta"):
                model = transformers.AutoModelForCausalLM.from_config(config, dtype=BF16)
            return model.eval(), config
        except ValueError as e:
            if "attention implementation" not in str(e) or attention == "eager":
                raise


class Prefill(torch.nn.Module):
    """The last position's logits of a forward over the prompt, no cache."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids):
        return self.model(input_ids=input_ids, use_cache=False, logits_to_keep=1).logits


def serialize(ep):
    from torch._export.serde.serialize import serialize as to_artifact

    for node in ep.graph_module.graph.nodes:
        node.meta.pop("nn_module_stack", None)  # object ids: not reproducible
    return to_artifact(ep).exported_program


def export_prefill(model):
    ids = torch.zeros(1, PREFILL_TOKENS, dtype=torch.long, device="meta")
    return torch.export.export(Prefill(model), (ids,), strict=False)


def export_decode(model):
    from transformers import GenerationConfig
    from transformers.integrations.executorch import convert_and_export_with_cache

    model.generation_config = GenerationConfig(
        use_cache=True,
        cache_implementation="static",
        max_length=DECODE_CACHE,
        cache_config={"batch_size": DECODE_BATCH, "max_cache_len": DECODE_CACHE, "device": "meta"},
    )
    return convert_and_export_with_cache(
        model,
        example_input_ids=torch.zeros(DECODE_BATCH, 1, dtype=torch.long, device="meta"),
        example_cache_position=torch.zeros(1, dtype=torch.long, device="meta"),
    )


def generate(name, out, forms):
    import transformers

    print(f"== {name}", flush=True)
    model, config = build(name)
    params = sum(p.numel() for p in model.parameters())
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    # Programs of other forms generated before stay listed.
    programs = {}
    meta_path = os.path.join(d, "meta.json")
    if os.path.exists(meta_path):
        with open(meta_path) as f:
            programs = {k: v for k, v in json.load(f).get("programs", {}).items() if k not in forms}
    for form in forms:
        t = time.time()
        try:
            ep = export_prefill(model) if form == "prefill" else export_decode(model)
        except Exception as e:  # noqa: BLE001 - recorded: the program is not in the zoo
            text = str(e)
            # Dynamo wraps the error that stopped the trace; name that one.
            inner = text.split("got RuntimeError('", 1)
            reason = inner[1].split("')", 1)[0] if len(inner) == 2 else text.strip().splitlines()[0]
            reason = f"{type(e).__name__}: {reason[:400]}"
            print(f"  {form}: not exported: {reason}", flush=True)
            programs[form] = {"error": reason}
            stale = os.path.join(d, f"{form}.json")
            if os.path.exists(stale):
                os.remove(stale)
            continue
        data = serialize(ep)
        path = os.path.join(d, f"{form}.json")
        with open(path, "wb") as f:
            f.write(data)
        nodes = len(ep.graph.nodes)
        print(f"  {form}: {nodes} nodes, {len(data) / 1e6:.1f} MB, {time.time() - t:.1f} s", flush=True)
        programs[form] = {"file": f"{form}.json", "nodes": nodes, "bytes": len(data)}
    meta = {
        "name": name,
        "what": ZOO[name][2],
        "config_class": ZOO[name][0],
        "config": ZOO[name][1],
        "parameters": params,
        "dtype": "bf16",
        "prefill": {"batch": 1, "tokens": PREFILL_TOKENS},
        "decode": {"batch": DECODE_BATCH, "max_cache_len": DECODE_CACHE},
        "programs": dict(sorted(programs.items(), key=lambda kv: kv[0] != "prefill")),
        "torch_version": torch.__version__,
        "transformers_version": transformers.__version__,
    }
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", help="models (default: all)")
    ap.add_argument("--out", default="target/zoo", help="output directory (default: target/zoo)")
    ap.add_argument("--form", action="append", choices=["prefill", "decode"], help="only these programs")
    ap.add_argument("--list", action="store_true", help="list the models and exit")
    a = ap.parse_args(argv)
    if a.list:
        for n, (_, _, what) in ZOO.items():
            print(f"{n:18} {what}")
        return
    unknown = [n for n in a.names if n not in ZOO]
    if unknown:
        sys.exit(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(ZOO)}")
    torch.set_num_threads(1)
    for n in a.names or list(ZOO):
        generate(n, a.out, a.form or ["prefill", "decode"])


if __name__ == "__main__":
    main(sys.argv[1:])
