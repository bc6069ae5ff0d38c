#!/usr/bin/env python3
"""Generate testdata/decode: one decode step of tiny decoder LMs with transformers'
static KV cache, for `tpuc generate`, with PyTorch's greedy tokens.

Each model is exported the way transformers' ExecuTorch integration does it
(`convert_and_export_with_cache`, called with `input_ids` [1, 1] and `cache_position`
[1]), in both forms:

  <name>/exported.pt2           torch.export (as exported: in-place cache writes)
  <name>/core.pt2               ep.run_decompositions() (buffer_mutation outputs)
  <name>/prompt.npy             int64 [P]: the prompt's token ids
  <name>/expected_tokens.npy    int64 [N]: model.generate(do_sample=False)'s new tokens
  <name>/meta.json              versions, cache size, notes

The script checks that the exported step, run token by token in PyTorch (the prompt,
then greedy decoding), gives the same tokens as `generate`, so the expected tokens are
what the step program must reproduce.

Usage (torch and transformers as in testdata/requirements.txt):
  python3 testdata/decode/generate.py [name ...]
"""

from __future__ import annotations

import json
import os
import shutil
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from generate import save_program  # noqa: E402

VOCAB = 128
CACHE = 32
NEW_TOKENS = 16
PROMPT = [5, 77, 12, 91, 33]
# A wide initialization: tiny random models with the default one repeat one token.
COMMON = dict(vocab_size=VOCAB, max_position_embeddings=64, attn_implementation="eager", initializer_range=0.3)
DEC = dict(COMMON, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2)


def llama():
    from transformers import LlamaConfig, LlamaForCausalLM

    return LlamaForCausalLM(LlamaConfig(**DEC)), "Llama: RMSNorm, rotary, GQA (4 heads, 2 kv), SwiGLU"


def qwen3():
    from transformers import Qwen3Config, Qwen3ForCausalLM

    return Qwen3ForCausalLM(Qwen3Config(**DEC, head_dim=16)), "Qwen3: q/k RMSNorm, head_dim 16 (q_proj wider than hidden)"


def gemma():
    from transformers import GemmaConfig, GemmaForCausalLM

    return GemmaForCausalLM(GemmaConfig(**DEC, head_dim=8)), "Gemma: scaled embeddings, GeGLU, (1 + w) RMSNorm, tied lm_head"


def gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(
        n_embd=32, n_layer=2, n_head=4, vocab_size=VOCAB, n_positions=64, attn_implementation="eager",
        initializer_range=0.3, bos_token_id=0, eos_token_id=0,
    )
    return GPT2LMHeadModel(cfg), "GPT-2: learned positions, Conv1D projections, gelu_new, tied lm_head"


MODELS = {"llama": llama, "qwen3": qwen3, "gemma": gemma, "gpt2": gpt2}


def step_tokens(module, prompt, new_tokens):
    """The exported step run token by token: the prompt, then greedy decoding."""
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


def generate(name):
    import transformers
    from transformers import GenerationConfig
    from transformers.integrations.executorch import convert_and_export_with_cache

    print(f"== {name}")
    torch.manual_seed(0)
    model, what = MODELS[name]()
    model = model.eval()
    model.generation_config = GenerationConfig(
        use_cache=True,
        cache_implementation="static",
        max_length=CACHE,
        cache_config={"batch_size": 1, "max_cache_len": CACHE},
        do_sample=False,
        pad_token_id=0,
    )
    prompt = torch.tensor([PROMPT], dtype=torch.long)
    with torch.no_grad():
        generated = model.generate(prompt, max_new_tokens=NEW_TOKENS, do_sample=False, min_new_tokens=NEW_TOKENS)
    expected = generated[0, len(PROMPT):].tolist()
    assert len(expected) == NEW_TOKENS, expected
    ep = convert_and_export_with_cache(
        model,
        example_input_ids=torch.tensor([[PROMPT[0]]], dtype=torch.long),
        example_cache_position=torch.tensor([0], dtype=torch.long),
    )
    out_dir = os.path.join(HERE, name)
    if os.path.isdir(out_dir):
        shutil.rmtree(out_dir)
    os.makedirs(out_dir)
    programs = {"exported": ep, "core": ep.run_decompositions()}
    for form, prog in programs.items():
        for node in prog.graph_module.graph.nodes:
            node.meta.pop("nn_module_stack", None)  # object ids: not reproducible
        path = os.path.join(out_dir, f"{form}.pt2")
        save_program(prog, path)
        with torch.no_grad():
            got = step_tokens(torch.export.load(path).module(), PROMPT, NEW_TOKENS)
        print(f"  {form}: step by step {got}")
        assert got == expected, (name, form, got, expected)
    print(f"  generate(): {expected}")
    np.save(os.path.join(out_dir, "prompt.npy"), np.array(PROMPT, dtype=np.int64))
    np.save(os.path.join(out_dir, "expected_tokens.npy"), np.array(expected, dtype=np.int64))
    meta = {
        "name": name,
        "torch_version": torch.__version__,
        "transformers_version": transformers.__version__,
        "max_cache_len": CACHE,
        "new_tokens": NEW_TOKENS,
        "notes": (
            f"transformers {what}; random weights (seed 0), vocab {VOCAB}, static cache "
            f"(batch 1, max_cache_len {CACHE}), exported with convert_and_export_with_cache. "
            "expected_tokens.npy: model.generate(prompt, do_sample=False) new tokens, which "
            "the exported step reproduces token by token."
        ),
    }
    with open(os.path.join(out_dir, "meta.json"), "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")


def main(argv):
    torch.set_num_threads(1)
    for n in argv or list(MODELS):
        generate(n)
    with open(os.path.join(HERE, "index.json"), "w") as f:
        json.dump({"models": sorted(d for d in os.listdir(HERE) if os.path.isfile(os.path.join(HERE, d, "meta.json")))}, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])
