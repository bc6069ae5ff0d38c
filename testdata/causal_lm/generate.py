#!/usr/bin/env python3
"""Export every causal-LM architecture of the installed transformers, for `make coverage`.

For each model type in `MODEL_FOR_CAUSAL_LM_MAPPING_NAMES` (196 in transformers 5.24)
this builds the model from its own default config, shrunk (depth, width, heads, experts,
vocabulary; see `shrunk_config`) with random weights, and writes to OUT/<type>/:

  exported.pt2, core.pt2        the forward (input_ids [2, 8] -> logits), as exported by
                                torch.export and after run_decompositions()
  inputs/0_input_ids.npy        the input
  expected/0.npy                the eager model's logits
  decode/exported.pt2, core.pt2 one decode step with transformers' static KV cache
                                (convert_and_export_with_cache, as testdata/decode)
  decode/prompt.npy             int64 [P]
  decode/expected_tokens.npy    model.generate(do_sample=False)'s new tokens
  result.json                   what happened: per part, "ok" or the stage PyTorch (or
                                transformers) failed at and its error

and the summary `testdata/causal_lm/family.json` (committed): every type, its class, the
outcome of each part and the sha256 of every file written. The programs themselves are
not committed (about 100 MB for the family); `make coverage` regenerates them into
target/causal_lm and checks them against the recorded digests, so a different torch or
transformers is reported, never measured silently.

A failure recorded here is PyTorch's or transformers', never tpuc's: tpuc does not run in
this script. Each type runs in its own process (a crash or a hang in one model does not
stop the sweep), with a time limit.

Usage (torch and transformers as in testdata/requirements.txt):
  python3 testdata/causal_lm/generate.py [--out DIR] [--jobs N] [--no-decode] [type ...]
  python3 testdata/causal_lm/generate.py --list
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
FAMILY_JSON = os.path.join(HERE, "family.json")
DEFAULT_OUT = os.path.join(REPO, "target", "causal_lm")
TIME_LIMIT_S = 300

BATCH, SEQ = 2, 8
VOCAB = 256
PROMPT = [5, 77, 12, 91, 33]
NEW_TOKENS = 12
CACHE = 32

# Sizes every architecture is shrunk to, applied only to the keys its default config has
# (the config then derives what depends on them: layer types, head_dim...).
SHRINK = dict(
    vocab_size=VOCAB,
    # Gemma 3n/4's per-layer embeddings and BLT's hashed byte n-grams are vocabularies too
    vocab_size_per_layer_input=VOCAB,
    encoder_hash_byte_group_vocab=VOCAB,
    hidden_size=64,
    # widths a composite model's towers and adapters must share with the hidden size
    hidden_size_global=64,
    adapter_in_dim=64,
    adapter_input_size=64,
    adapter_out_dim=64,
    d_model=64,
    emb_dim=64,
    n_embd=64,
    n_embed=64,
    dim=64,
    embed_dim=64,
    intermediate_size=128,
    ffn_dim=128,
    ffn_hidden_size=128,
    n_inner=128,
    d_ff=128,
    dim_ff=128,
    moe_intermediate_size=32,
    shared_expert_intermediate_size=32,
    expert_intermediate_size=32,
    num_hidden_layers=2,
    num_layers=2,
    n_layer=2,
    n_layers=2,
    decoder_layers=2,
    num_attention_heads=4,
    n_head=4,
    n_heads=4,
    decoder_attention_heads=4,
    num_key_value_heads=2,
    head_dim=16,
    dim_head=16,
    num_experts=4,
    n_routed_experts=4,
    num_local_experts=4,
    moe_num_experts=4,
    num_experts_per_tok=2,
    num_experts_per_token=2,
    num_expert_group=2,
    linear_num_heads=4,
    linear_head_dim=16,
    expert_ffn_hidden_size=32,
    moe_topk=2,
    top_k=2,
    n_group=2,
    topk_group=1,
    num_shared_experts=1,
    n_shared_experts=1,
    num_dense_layers=1,
    first_k_dense_replace=1,
    max_position_embeddings=128,
    n_positions=128,
    n_ctx=128,
    sliding_window=8,
    global_attn_every_n_layers=2,
    position_bias_num_buckets=32,
    position_bias_max_distance=64,
)

# Shrunk sizes of multi-head latent attention (DeepSeek-V2 style: `kv_lora_rank` in the
# config), applied instead of the generic head sizes: its key/value heads equal the query
# heads, and head_dim is the rotary part of a query head.
MLA = dict(
    num_key_value_heads=4,
    kv_lora_rank=16,
    q_lora_rank=32,
    qk_nope_head_dim=16,
    qk_rope_head_dim=8,
    qk_head_dim=24,
    v_head_dim=16,
    head_dim=8,
)

# Size keys a default config may leave unset (None) although the model needs them; they
# get the shrunk size. Any other key left None stays None (e.g. sliding_window: None means
# no sliding window).
FILL_NONE = ("head_dim", "num_key_value_heads", "n_routed_experts", "num_experts_per_tok", "n_shared_experts")

# Per-layer lists (layer kinds) shortened with the depth: the first layer of each kind
# is kept, in order, so a hybrid model keeps every kind of layer it has.
LAYER_LISTS = ("layer_types", "layers_block_type", "mlp_layer_types")
DEPTH_KEYS = ("num_hidden_layers", "num_layers", "n_layer", "n_layers", "decoder_layers")

# Where the generic shrink breaks an architecture's own invariants: keys to keep at their
# defaults, or extra settings.
KEEP: dict[str, tuple] = {}
EXTRA: dict[str, dict] = {
    # rotary_dim (64 by default) must fit the shrunk head (16)
    "codegen": dict(rotary_dim=8),
    "gptj": dict(rotary_dim=8),
    # experts per token must not exceed the shrunk expert count
    "ernie4_5_moe": dict(moe_k=2),
    # one attention type per layer
    "gpt_neo": dict(attention_types=[[["global", "local"], 1]]),
    # LongCat-Flash's "zero experts" (identity experts) are counted apart
    "longcat_flash": dict(zero_expert_num=2),
    # Mamba-2: heads * head_dim must equal expand * hidden_size (2 * 64)
    "mamba2": dict(num_heads=8, n_groups=2, state_size=16, time_step_rank=8),
    # ZAYA supports one expert per token only
    "zaya": dict(num_experts_per_tok=1),
    # Reformer: the axial position embedding's parts sum to the width, its shape
    # multiplies to the positions
    "reformer": dict(is_decoder=True, axial_pos_embds_dim=[32, 32], axial_pos_shape=[8, 16]),
    # Zamba ties the shared transformer of its hybrid layers: two of them
    "zamba": dict(
        num_hidden_layers=4,
        layers_block_type=["linear_attention", "hybrid", "linear_attention", "hybrid"],
    ),
    # the default config leaves rope_parameters empty; the model reads one per layer type
    "cohere_compass_text": dict(
        rope_parameters={
            "full_attention": {"rope_type": "default", "rope_theta": 10000.0},
            "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
        }
    ),
    # the default config leaves layer_types unset: one convolution, one attention layer
    "lfm2_moe": dict(layer_types=["conv", "full_attention"]),
    # X-MOD runs one language adapter: the default config names none
    "xmod": dict(default_language="en_XX"),
    # Gemma 3n shares the KV cache of its last layers: keep two pattern lengths, one shared
    "gemma3n_text": dict(
        num_hidden_layers=4,
        layer_types=["sliding_attention", "full_attention"] * 2,
        num_kv_shared_layers=2,
    ),
}


def derives_layer_lists(model_type, kw, depth_key):
    """Whether the config, given the shrunk depth, derives per-layer lists of that length."""
    from transformers import CONFIG_MAPPING, AutoConfig

    if model_type not in CONFIG_MAPPING:
        return True
    try:
        cfg = AutoConfig.for_model(model_type, **{**kw, **EXTRA.get(model_type, {})}).to_dict()
    except Exception:
        return False
    depth = cfg.get(depth_key)
    return all(len(cfg[k]) == depth for k in LAYER_LISTS if isinstance(cfg.get(k), list))


def shrunk_layer_lists(default, depth_key):
    """Per-layer lists cut to the first layer of each kind, and the depth that goes with them."""
    depth = default[depth_key]
    lists = {k: default[k] for k in LAYER_LISTS if isinstance(default.get(k), list) and len(default[k]) == depth}
    keep = set()
    for values in lists.values():
        seen = set()
        for i, v in enumerate(values):
            if repr(v) not in seen:
                seen.add(repr(v))
                keep.add(i)
    i = 0
    while len(keep) < SHRINK[depth_key]:
        keep.add(i)
        i += 1
    idx = sorted(keep)
    return {depth_key: len(idx), **{k: [v[j] for j in idx] for k, v in lists.items()}}


def model_types():
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    return sorted(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES)


def shrunk_kwargs(model_type, default):
    """The overrides that shrink one config (given as its default dict), sub-configs included."""
    keep = KEEP.get(model_type, ())
    kw = {
        k: v
        for k, v in SHRINK.items()
        if k in default and k not in keep and (default[k] is not None or k in FILL_NONE)
    }
    if default.get("kv_lora_rank") is not None:
        kw.update({k: v for k, v in MLA.items() if k in default})
    depth_key = next((k for k in DEPTH_KEYS if isinstance(default.get(k), int)), None)
    if depth_key is not None and depth_key in kw and not derives_layer_lists(model_type, kw, depth_key):
        kw.update(shrunk_layer_lists(default, depth_key))
    # Special token ids must stay inside the shrunk vocabulary.
    for k, v in default.items():
        if k.endswith("_token_id") and isinstance(v, int) and v >= VOCAB:
            kw[k] = min(v, 2)
    # A composite model (text + vision + audio towers) shrinks each of its sub-configs:
    # built at their default sizes, the towers take minutes and gigabytes.
    for k, v in default.items():
        if k.endswith("_config") and isinstance(v, dict) and v.get("model_type"):
            sub = shrunk_kwargs(v["model_type"], v)
            if sub:
                kw[k] = {"model_type": v["model_type"], **sub}
    kw.update(EXTRA.get(model_type, {}))
    return kw


def shrunk_config(model_type, **extra):
    from transformers import CONFIG_MAPPING, AutoConfig

    default = CONFIG_MAPPING[model_type]().to_dict()
    kw = shrunk_kwargs(model_type, default)
    kw.update(extra)
    cfg = AutoConfig.for_model(model_type, **kw)
    return cfg, kw


def build(model_type, **extra):
    import torch
    from transformers import AutoModelForCausalLM

    cfg, kw = shrunk_config(model_type, **extra)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(cfg, attn_implementation="eager").eval()
    # Parameters a config initializes to exactly zero (routers, gates, some norms) get
    # random values: with them a tiny model's routers tie, and which of equal scores topk
    # picks is PyTorch's kernel's choice, not the architecture's.
    randomized = []
    with torch.no_grad():
        g = torch.Generator().manual_seed(1)
        for name, p in model.named_parameters():
            if p.is_floating_point() and p.numel() > 0 and bool((p == 0).all()):
                p.copy_(torch.randn(p.shape, generator=g, dtype=torch.float32).to(p.dtype) * 0.1)
                randomized.append(name)
    return model, kw, randomized


class Logits:
    """input_ids -> logits, no cache."""

    def __new__(cls, model):
        import torch

        class W(torch.nn.Module):
            def __init__(self, m):
                super().__init__()
                self.m = m

            def forward(self, input_ids):
                return self.m(input_ids=input_ids, use_cache=False).logits

        return W(model).eval()


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def error_text(exc, limit=600):
    msg = " ".join(f"{type(exc).__name__}: {exc}".split())
    return msg if len(msg) <= limit else msg[:limit] + " ..."


def save(ep, path):
    sys.path.insert(0, os.path.join(REPO, "testdata", "coverage"))
    from generate_models import save_program  # strips metadata, deterministic archive

    save_program(ep, path)


def forward_part(model_type, out):
    import numpy as np
    import torch

    stage = "config"
    try:
        stage = "build"
        model, kw, randomized = build(model_type, use_cache=False)
        w = Logits(model)
        g = torch.Generator().manual_seed(0)
        ids = torch.randint(3, VOCAB, (BATCH, SEQ), generator=g)
        stage = "eager"
        with torch.no_grad():
            ref = w(ids)
        if not torch.isfinite(ref).all():
            return {"stage": "eager", "error": "the eager model's logits are not finite"}, None
        stage = "export"
        with torch.no_grad():
            ep = torch.export.export(w, (ids,), strict=False)
        stage = "run_decompositions"
        core = ep.run_decompositions()
        stage = "save"
        os.makedirs(os.path.join(out, "inputs"))
        os.makedirs(os.path.join(out, "expected"))
        save(ep, os.path.join(out, "exported.pt2"))
        save(core, os.path.join(out, "core.pt2"))
        np.save(os.path.join(out, "inputs", "0_input_ids.npy"), ids.numpy())
        np.save(os.path.join(out, "expected", "0.npy"), ref.numpy())
        stage = "check"
        worst = 0.0
        for form in ("exported", "core"):
            with torch.no_grad():
                got = torch.export.load(os.path.join(out, f"{form}.pt2")).module()(ids)
            d = (got - ref).abs().max().item()
            worst = max(worst, d)
            if not d <= 1e-5 + 1e-5 * ref.abs().max().item():
                return {"stage": "check", "error": f"the {form} program differs from eager by {d:.3g} in PyTorch"}, None
        return "ok", {
            "class": type(model).__name__,
            "config_overrides": kw,
            "randomized_zero_parameters": randomized,
            "check_max_abs_diff_vs_eager": worst,
        }
    except Exception as exc:  # noqa: BLE001 - recorded, this is the point
        return {"stage": stage, "error": error_text(exc)}, None


def step_tokens(module, prompt, new_tokens):
    import torch

    tokens, logits = [], None
    for pos, t in enumerate(prompt + [None] * new_tokens):
        if t is None:
            t = int(torch.argmax(logits[0, -1]))
            tokens.append(t)
            if len(tokens) == new_tokens:
                break
        logits = module(
            input_ids=torch.tensor([[t]], dtype=torch.long),
            cache_position=torch.tensor([pos], dtype=torch.long),
        )
    return tokens


def decode_part(model_type, out):
    import numpy as np
    import torch
    from transformers import GenerationConfig

    stage = "build"
    try:
        # A wide initialization: tiny random models with the default one repeat one token.
        model, kw, _ = build(model_type, use_cache=True, initializer_range=0.3)
        model.generation_config = GenerationConfig(
            use_cache=True,
            cache_implementation="static",
            max_length=CACHE,
            cache_config={"batch_size": 1, "max_cache_len": CACHE},
            do_sample=False,
            pad_token_id=0,
        )
        stage = "generate"
        prompt = torch.tensor([PROMPT], dtype=torch.long)
        with torch.no_grad():
            generated = model.generate(
                prompt, max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS, do_sample=False
            )
        expected = generated[0, len(PROMPT) :].tolist()
        if len(expected) != NEW_TOKENS:
            return {"stage": "generate", "error": f"generate() gave {len(expected)} tokens"}
        stage = "export"
        from transformers.integrations.executorch import convert_and_export_with_cache

        with torch.no_grad():
            ep = convert_and_export_with_cache(
                model,
                example_input_ids=torch.tensor([[PROMPT[0]]], dtype=torch.long),
                example_cache_position=torch.tensor([0], dtype=torch.long),
            )
        stage = "run_decompositions"
        core = ep.run_decompositions()
        # A model without cache support exports a step that sees one token: it writes
        # no state but position counters (openai-gpt). Not a decode step. (Read from the
        # Core ATen form, which lists every buffer write; the as-exported one writes the
        # cache in place.)
        mutated = [
            s.target for s in core.graph_signature.output_specs if s.kind.name == "BUFFER_MUTATION"
        ]
        buffers = dict(core.named_buffers())
        if not any(m not in buffers or buffers[m].dim() >= 2 for m in mutated):
            return {
                "stage": "export",
                "error": "the exported step keeps no cache (it writes only "
                f"{', '.join(mutated) or 'nothing'}): the model has no KV cache support",
            }
        stage = "save"
        os.makedirs(out)
        save(ep, os.path.join(out, "exported.pt2"))
        save(core, os.path.join(out, "core.pt2"))
        np.save(os.path.join(out, "prompt.npy"), np.array(PROMPT, dtype=np.int64))
        np.save(os.path.join(out, "expected_tokens.npy"), np.array(expected, dtype=np.int64))
        stage = "check"
        for form in ("exported", "core"):
            with torch.no_grad():
                got = step_tokens(torch.export.load(os.path.join(out, f"{form}.pt2")).module(), PROMPT, NEW_TOKENS)
            if got != expected:
                return {
                    "stage": "check",
                    "error": f"the {form} step, run token by token in PyTorch, gives {got}, generate() {expected}",
                }
        return "ok"
    except Exception as exc:  # noqa: BLE001
        return {"stage": stage, "error": error_text(exc)}


def one(model_type, out, decode):
    """Child process: one architecture into `out` (emptied first); writes result.json."""
    import torch
    import transformers

    torch.set_num_threads(1)
    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(out)
    forward, info = forward_part(model_type, out)
    if forward != "ok":
        shutil.rmtree(os.path.join(out, "inputs"), ignore_errors=True)
        shutil.rmtree(os.path.join(out, "expected"), ignore_errors=True)
        for f in ("exported.pt2", "core.pt2"):
            if os.path.exists(os.path.join(out, f)):
                os.remove(os.path.join(out, f))
    result = {"type": model_type, "forward": forward}
    if info:
        result.update(info)
    if decode:
        d = decode_part(model_type, os.path.join(out, "decode"))
        if d != "ok":
            shutil.rmtree(os.path.join(out, "decode"), ignore_errors=True)
        result["decode"] = d
    result["versions"] = {"torch": torch.__version__.split("+")[0], "transformers": transformers.__version__}
    with open(os.path.join(out, "result.json"), "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
        f.write("\n")


def files_of(d):
    out = {}
    for root, _, names in os.walk(d):
        for n in sorted(names):
            if n == "result.json":
                continue
            p = os.path.join(root, n)
            out[os.path.relpath(p, d)] = sha256(p)
    return dict(sorted(out.items()))


def run_one(model_type, out_root, decode, resume=False):
    out = os.path.join(out_root, model_type)
    done = os.path.join(out, "result.json")
    if resume and os.path.exists(done):
        with open(done) as f:
            result = json.load(f)
        result["files"] = files_of(out)
        result["seconds"] = 0.0
        return result
    cmd = [sys.executable, os.path.abspath(__file__), "--one", model_type, "--out", out_root]
    if not decode:
        cmd.append("--no-decode")
    env = dict(os.environ, PYTHONHASHSEED="0", HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    t0 = time.time()
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=TIME_LIMIT_S)
        crashed = None if p.returncode == 0 else f"exit status {p.returncode}: {' '.join(p.stderr.split()[-60:])}"
    except subprocess.TimeoutExpired:
        crashed = f"no result within {TIME_LIMIT_S} s"
    path = os.path.join(out, "result.json")
    if crashed or not os.path.exists(path):
        result = {"type": model_type, "forward": {"stage": "process", "error": crashed or "no result.json"}}
        if decode:
            result["decode"] = {"stage": "process", "error": "not reached"}
        # Recorded where --collect and --resume find it.
        os.makedirs(out, exist_ok=True)
        with open(path, "w") as f:
            json.dump(result, f, indent=1, sort_keys=True)
    else:
        with open(path) as f:
            result = json.load(f)
    result["files"] = files_of(out) if os.path.isdir(out) else {}
    result["seconds"] = round(time.time() - t0, 1)
    return result


def summary_line(r):
    def part(x):
        return "ok" if x == "ok" else (f"{x['stage']}" if isinstance(x, dict) else "-")

    return f"{r['type']:28s} forward {part(r['forward']):18s} decode {part(r.get('decode')):18s} {r['seconds']:6.1f}s"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("types", nargs="*")
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--no-decode", action="store_true")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--resume", action="store_true", help="keep the types OUT already has a result.json for")
    ap.add_argument(
        "--collect",
        action="store_true",
        help="write family.json from the result.json files OUT has (types without one: not run)",
    )
    ap.add_argument(
        "--check",
        action="store_true",
        help="compare what is written with family.json's digests instead of rewriting family.json",
    )
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.one:
        one(args.one, os.path.join(args.out, args.one), not args.no_decode)
        return
    all_types = model_types()
    if args.list:
        print("\n".join(all_types))
        return
    types = args.types or all_types
    unknown = [t for t in types if t not in all_types]
    if unknown:
        sys.exit(f"unknown model types: {unknown} (see --list)")
    os.makedirs(args.out, exist_ok=True)
    from concurrent.futures import ThreadPoolExecutor

    results = {}
    if args.collect:
        for t in types:
            if os.path.exists(os.path.join(args.out, t, "result.json")):
                results[t] = run_one(t, args.out, not args.no_decode, resume=True)
            else:
                results[t] = {"type": t, "forward": "not run", "decode": "not run", "files": {}}
    else:
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            for r in pool.map(lambda t: run_one(t, args.out, not args.no_decode, args.resume), types):
                results[r["type"]] = r
                print(summary_line(r), flush=True)

    if args.check:
        with open(FAMILY_JSON) as f:
            recorded = json.load(f)["types"]
        differ = [t for t, r in results.items() if t in recorded and r["files"] != recorded[t]["files"]]
        for t in differ:
            print(f"{t}: the programs differ from family.json's (another torch or transformers?)")
        print(f"{len(results)} types regenerated, {len(differ)} differ from family.json")
        return
    # Merge into family.json (types not regenerated keep their entries).
    family = {"types": {}}
    if os.path.exists(FAMILY_JSON) and args.types:
        with open(FAMILY_JSON) as f:
            family = json.load(f)
    import torch
    import transformers

    family["versions"] = {"torch": torch.__version__.split("+")[0], "transformers": transformers.__version__}
    family["batch"], family["seq"], family["vocab"] = BATCH, SEQ, VOCAB
    family["decode"] = {"prompt": PROMPT, "new_tokens": NEW_TOKENS, "max_cache_len": CACHE}
    for t, r in results.items():
        r.pop("seconds", None)
        r.pop("versions", None)
        family["types"][t] = r
    family["types"] = dict(sorted(family["types"].items()))
    with open(FAMILY_JSON, "w") as f:
        json.dump(family, f, indent=1, sort_keys=True)
        f.write("\n")
    n = len(family["types"])
    ok = sum(1 for r in family["types"].values() if r["forward"] == "ok")
    dec = sum(1 for r in family["types"].values() if r.get("decode") == "ok")
    print(f"{n} types: forward exported {ok}, decode step exported {dec}")


if __name__ == "__main__":
    main()
