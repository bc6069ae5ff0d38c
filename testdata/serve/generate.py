#!/usr/bin/env python3
"""Generate testdata/serve: the serving programs of a tiny Llama (what `python -m
tpuc.llm export` compiles), exported but not compiled, with PyTorch's completions.

  tiny-llama/decode.pt2, prefill_8.pt2, prefill_16.pt2
                         the programs of python/tpuc/llm/programs.py (Decode, Prefill)
  tiny-llama/serve.json  the serving manifest, naming the compiled programs
                         (decode.tpuc, prefill_T.tpuc: the tests compile the .pt2 there)
  tiny-llama/tokenizer.json, tokenizer_config.json (with a chat template),
                         generation_config.json
  tiny-llama/expected.json
                         prompts (text and ids) with `model.generate(do_sample=False)`'s
                         new tokens and text, and seeded sampled completions drawn by the
                         same modules run in PyTorch (the sampler's reference)

The script checks that the modules, driven as a server drives them (all prompts in one
batch, long prompts in chunks), reproduce `generate`'s tokens before writing anything.

Usage (torch and transformers as in testdata/requirements.txt; no tpuc package needed):
  python3 testdata/serve/generate.py
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
from generate import save_program  # noqa: E402

# python/tpuc/llm/programs.py needs only torch and transformers: loaded by path, so this
# script runs without the tpuc package built.
_spec = importlib.util.spec_from_file_location("tpuc_llm_programs", os.path.join(REPO, "python/tpuc/llm/programs.py"))
P = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(P)

MAX_BATCH, MAX_LEN, BUCKETS = 16, 64, [8, 16]
NEW_TOKENS = 12
WORDS = (
    "the a an of to in is it that and on for with as was at by be this from or have not are but had "
    "they his her she he we you i one all were there been if more when will would who so no time "
    "cat dog bird tree river stone house road light night day sun moon star rain wind sea ship "
    "red blue green old new small big long short fast slow warm cold "
    "run walk see hear find make take give tell ask come go know think say look "
    "hello world tpu chip graph token model answer question user assistant system"
).split()
SPECIAL = ["<pad>", "<s>", "</s>", "<unk>", "<|user|>", "<|assistant|>", "<|end|>"]
CHAT_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}{% if m['role'] == 'user' %}<|user|> {{ m['content'] }} <|end|> "
    "{% elif m['role'] == 'assistant' %}<|assistant|> {{ m['content'] }} <|end|> {% else %}{{ m['content'] }} "
    "{% endif %}{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
PROMPTS = [
    "hello world",
    "the cat and the dog walk to the river",
    "a small bird in the old tree",
    # Longer than the largest bucket: three chunks.
    "the sun the moon and the star see the sea and the ship on a long night "
    "with cold wind and rain by the old stone house on the road",
]
SAMPLED = [
    {"temperature": 0.8, "top_k": 0, "top_p": 1.0, "min_p": 0.0, "seed": 7},
    {"temperature": 1.0, "top_k": 20, "top_p": 0.9, "min_p": 0.0, "seed": 8},
    {"temperature": 0.7, "top_k": 0, "top_p": 1.0, "min_p": 0.1, "seed": 9},
    {"temperature": 1.2, "top_k": 8, "top_p": 0.8, "min_p": 0.02, "seed": 10},
]


def tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(SPECIAL + WORDS)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.decoder = decoders.WordPiece(prefix="##")  # joins words with spaces
    # A sequence starts with <s>, as Llama's tokenizers add it (not in a chat template's
    # text, which names it itself: encoded without special tokens).
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>", unk_token="<unk>",
        additional_special_tokens=SPECIAL[4:],
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


def model(vocab_size):
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=vocab_size, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
        bos_token_id=1, eos_token_id=2, pad_token_id=0,
    )
    m = LlamaForCausalLM(config).eval()
    m.generation_config = GenerationConfig(bos_token_id=1, eos_token_id=2, pad_token_id=0)
    return m


def params(rows):
    f = lambda k: torch.tensor([float(r[k]) for r in rows])  # noqa: E731
    return (f("temperature"), torch.tensor([int(r["top_k"]) for r in rows]), f("top_p"), f("min_p"),
            torch.tensor([int(r["seed"]) for r in rows]))


def serve(programs, prompts, rows, n):
    """The prompts in slots 0.., prefilled chunk by chunk, then decoded together."""
    largest = max(BUCKETS)
    out = []
    for slot, ids in enumerate(prompts):
        for start in range(0, len(ids), largest):
            chunk = ids[start:start + largest]
            t = min(b for b in BUCKETS if b >= len(chunk))
            tok, _ = programs.prefill(torch.tensor([chunk + [0] * (t - len(chunk))]), torch.tensor([slot]),
                                      torch.tensor([start]), torch.tensor([len(chunk)]), *params([rows[slot]]))
        out.append([int(tok[0])])
    # The other slots are free: at the free position, as a server leaves them.
    free = MAX_BATCH - len(prompts)
    rows = list(rows) + [dict(SAMPLED[0], temperature=0.0)] * free
    positions = [len(p) for p in prompts] + [MAX_LEN - 1] * free
    for _ in range(n - 1):
        tokens = [o[-1] for o in out] + [0] * free
        toks, _ = programs.decode(torch.tensor(tokens), torch.tensor(positions), *params(rows))
        for s, t in enumerate(toks.tolist()[:len(out)]):
            out[s].append(t)
            positions[s] += 1
    return out


def main():
    tok = tokenizer()
    m = model(len(tok))
    prompts = [tok(p)["input_ids"] for p in PROMPTS]
    assert all(ids[0] == tok.bos_token_id for ids in prompts)
    assert all(tok.unk_token_id not in ids for ids in prompts)
    assert max(map(len, prompts)) > max(BUCKETS) and len(prompts) <= MAX_BATCH

    with torch.no_grad():
        greedy = [m.generate(torch.tensor([ids]), max_new_tokens=NEW_TOKENS, do_sample=False, eos_token_id=None)
                  [0, len(ids):].tolist() for ids in prompts]
        programs = P.Programs(m, MAX_BATCH, MAX_LEN).eval()
        served = serve(programs, prompts, [dict(SAMPLED[0], temperature=0.0)] * len(prompts), NEW_TOKENS)
        assert served == greedy, (served, greedy)
        sampled = serve(P.Programs(m, MAX_BATCH, MAX_LEN).eval(), prompts, SAMPLED, NEW_TOKENS)
        assert sampled != greedy

    out = os.path.join(HERE, "tiny-llama")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    programs = P.Programs(m, MAX_BATCH, MAX_LEN).eval()
    for label, ep in P.export_programs(programs, BUCKETS).items():
        save_program(ep, os.path.join(out, f"{label}.pt2"))

    tok.save_pretrained(out)
    m.generation_config.save_pretrained(out)
    for extra in ("special_tokens_map.json",):
        path = os.path.join(out, extra)
        if os.path.exists(path):
            os.remove(path)
    files = sorted(f for f in os.listdir(out) if f.endswith((".json", ".jinja")))
    listed = {"decode": {"path": "decode.tpuc"},
              "prefill": [{"tokens": t, "path": f"prefill_{t}.tpuc"} for t in BUCKETS]}
    manifest = P.serve_manifest(m, programs, BUCKETS, listed, files, {})
    manifest["model"] = "tiny-llama"
    with open(os.path.join(out, "serve.json"), "w") as f:
        json.dump(manifest, f, indent=2, sort_keys=True)
        f.write("\n")
    expected = {
        "new_tokens": NEW_TOKENS,
        "prompts": [
            {"text": text, "ids": ids, "greedy_ids": g, "greedy_text": tok.decode(g, skip_special_tokens=True),
             "sampling": s, "sampled_ids": sm, "sampled_text": tok.decode(sm, skip_special_tokens=True)}
            for text, ids, g, s, sm in zip(PROMPTS, prompts, greedy, SAMPLED, sampled)
        ],
        "chat": {
            "messages": [{"role": "user", "content": "hello world"}],
            "prompt_text": tok.apply_chat_template([{"role": "user", "content": "hello world"}], tokenize=False,
                                                   add_generation_prompt=True),
        },
        "versions": {"torch": torch.__version__, "transformers": __import__("transformers").__version__},
    }
    chat_ids = tok.apply_chat_template(expected["chat"]["messages"], tokenize=True, add_generation_prompt=True)
    if hasattr(chat_ids, "keys"):
        chat_ids = chat_ids["input_ids"]
    expected["chat"]["prompt_ids"] = list(chat_ids)
    with torch.no_grad():
        g = m.generate(torch.tensor([list(chat_ids)]), max_new_tokens=NEW_TOKENS, do_sample=False,
                       eos_token_id=None)[0, len(chat_ids):].tolist()
    expected["chat"]["greedy_ids"] = g
    expected["chat"]["greedy_text"] = tok.decode(g, skip_special_tokens=True)
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
        f.write("\n")
    print(f"wrote {out}: {sorted(os.listdir(out))}")


if __name__ == "__main__":
    main()
