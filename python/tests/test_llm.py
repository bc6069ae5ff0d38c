"""tpuc.llm: the serving program set of a tiny Llama, compiled and run on the CPU,
generates exactly what transformers' `generate` does, with sequences of different
lengths in one decode step and prompts longer than the largest bucket."""

import json
import os
import pathlib

import pytest
import torch

import tpuc
import tpuc.llm
from tpuc.llm.programs import Programs

B, L, BUCKETS = 4, 32, [4, 8]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=96, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                         eos_token_id=2, bos_token_id=1)
    model = LlamaForCausalLM(config).eval()
    out = tmp_path_factory.mktemp("serve") / "tiny"
    tpuc.llm.export(model, out, max_batch=B, max_len=L, prefill_buckets=BUCKETS)
    return model, out


class Engine:
    """The smallest driver of a serving directory: the cache moves between the
    programs through the host (tpuc serve keeps it on the device)."""

    def __init__(self, directory):
        self.m = json.load(open(os.path.join(directory, "serve.json")))
        self.decode = tpuc.load(os.path.join(directory, self.m["programs"]["decode"]["path"]))
        self.prefill = {p["tokens"]: tpuc.load(os.path.join(directory, p["path"])) for p in self.m["programs"]["prefill"]}
        self.at = self.decode

    def _move(self, program):
        if program is not self.at:
            program.load_state(self.at.state())
            self.at = program

    def prompt(self, slot, ids, params):
        """Every chunk of a prompt into `slot`; the first new token."""
        largest = max(self.prefill)
        for start in range(0, len(ids), largest):
            chunk = ids[start:start + largest]
            t = min(b for b in self.prefill if b >= len(chunk))
            program = self.prefill[t]
            self._move(program)
            tok, _ = program(torch.tensor([chunk + [0] * (t - len(chunk))]), torch.tensor([slot]),
                             torch.tensor([start]), torch.tensor([len(chunk)]), *params)
        return int(tok[0])

    def step(self, tokens, positions, params):
        self._move(self.decode)
        tok, logprob = self.decode(torch.tensor(tokens), torch.tensor(positions), *params)
        return tok.tolist(), logprob


def params(n, temperature=0.0, top_k=0, top_p=1.0, min_p=0.0, seed=0):
    return (torch.full((n,), float(temperature)), torch.full((n,), top_k, dtype=torch.int64),
            torch.full((n,), float(top_p)), torch.full((n,), float(min_p)),
            torch.arange(n, dtype=torch.int64) + seed)


PROMPTS = [[1, 5, 9, 40, 3], [1, 7], [1] + list(range(20, 37)), [1, 60, 61, 62, 63, 64, 65, 66]]


def test_serve_directory_lists_its_programs(tiny):
    _, out = tiny
    m = json.load(open(out / "serve.json"))
    assert m["format"] == "tpuc-serve/1"
    assert (m["max_batch"], m["max_len"], m["prefill_buckets"]) == (B, L, BUCKETS)
    assert m["free_position"] == L - 1 and m["eos_token_ids"] == [2]
    # 2 layers of keys and values, [B, H_kv, L, D] in f32.
    assert m["kv_cache"] == {"layers": 2, "shape": [B, 2, L, 8], "bytes": 2 * 2 * B * 2 * L * 8 * 4}
    for p in [m["programs"]["decode"]] + m["programs"]["prefill"]:
        assert (out / p["path"] / "manifest.json").is_file()
    # The weights are stored once: every program's file is the same one on disk.
    inodes = {os.stat(out / p["path"] / "weights.safetensors").st_ino
              for p in [m["programs"]["decode"]] + m["programs"]["prefill"]}
    assert len(inodes) == 1


def test_batched_greedy_decode_equals_generate(tiny):
    model, out = tiny
    n = 8
    with torch.no_grad():
        expected = [model.generate(torch.tensor([p]), max_new_tokens=n, do_sample=False, eos_token_id=None,
                                   pad_token_id=0)[0, len(p):].tolist() for p in PROMPTS]
    engine = Engine(out)
    got = [[engine.prompt(s, p, params(1))] for s, p in enumerate(PROMPTS)]
    positions = [len(p) for p in PROMPTS]
    for _ in range(n - 1):
        tokens, _ = engine.step([g[-1] for g in got], positions, params(B))
        for s in range(B):
            got[s].append(tokens[s])
            positions[s] += 1
    assert got == expected


def test_a_free_slot_leaves_the_others_unchanged(tiny):
    """Slot 1 free (position L - 1) while slot 0 decodes: slot 0's tokens as alone."""
    model, out = tiny
    p = PROMPTS[0]
    with torch.no_grad():
        expected = model.generate(torch.tensor([p]), max_new_tokens=4, do_sample=False, eos_token_id=None,
                                  pad_token_id=0)[0, len(p):].tolist()
    engine = Engine(out)
    got = [engine.prompt(0, p, params(1))]
    pos = len(p)
    for _ in range(3):
        tokens, _ = engine.step([got[-1], 0, 0, 0], [pos, L - 1, L - 1, L - 1], params(B))
        got.append(tokens[0])
        pos += 1
    assert got == expected


def test_seeded_sampling_is_reproducible_and_equals_pytorch(tiny):
    """The compiled decode step samples what the same module samples in PyTorch, for
    every filter; the same seed draws the same tokens again, another seed others."""
    model, out = tiny
    engine = Engine(out)
    engine._move(engine.decode)
    empty = {k: torch.zeros_like(v) for k, v in engine.decode.state().items()}
    reference = Programs(model, B, L).eval()
    tokens, positions = torch.tensor([3, 4, 5, 6]), torch.tensor([0, 1, 2, 3])
    draws = []
    for kw in [dict(temperature=0.8), dict(temperature=1.0, top_k=5), dict(temperature=1.2, top_p=0.7),
               dict(temperature=1.0, min_p=0.2), dict(temperature=0.7, top_k=10, top_p=0.9, min_p=0.05)]:
        ps = params(B, seed=11, **kw)
        for b in reference.buffers():
            if b.dim() == 4:
                b.zero_()
        with torch.no_grad():
            want, want_logprob = reference.decode(tokens, positions, *ps)
        got = []
        for _ in range(2):
            engine.decode.load_state(empty)
            t, logprob = engine.decode(tokens, positions, *ps)
            got.append(t.tolist())
        assert got[0] == got[1] == want.tolist(), kw
        torch.testing.assert_close(logprob, want_logprob, rtol=1e-4, atol=1e-5)
        draws.append(got[0])
    engine.decode.load_state(empty)
    other, _ = engine.decode(tokens, positions, *params(B, temperature=0.8, seed=12))
    assert other.tolist() != draws[0]  # 4 rows of 96 candidates at temperature 0.8


def test_bad_shapes_are_refused(tiny, tmp_path):
    model, out = tiny
    with pytest.raises(ValueError, match="does not divide max_len"):
        tpuc.llm.export(model, tmp_path / "a", max_batch=2, max_len=30, prefill_buckets=[8])
    with pytest.raises(FileExistsError):
        tpuc.llm.export(model, out, max_batch=2, max_len=32, prefill_buckets=[8])
    # A compile that fails leaves nothing behind, under the name or beside it.
    with pytest.raises(tpuc.OptionError):
        tpuc.llm.export(model, tmp_path / "b", max_batch=2, max_len=32, prefill_buckets=[8], opt_level=7)
    assert os.listdir(tmp_path) == []


def test_export_command_on_a_model_directory(tiny, tmp_path):
    """`python -m tpuc.llm export MODEL_DIR`: the programs, the tokenizer files copied,
    exit 2 with a message for a bad bucket, the user's directory never overwritten."""
    import subprocess
    import sys

    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    model, _ = tiny
    src = tmp_path / "model"
    model.save_pretrained(src)
    vocab = {f"w{i}": i for i in range(96)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="w0"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="w2", bos_token="w1").save_pretrained(src)

    out = tmp_path / "serve"
    cmd = [sys.executable, "-m", "tpuc.llm", "export", str(src), "-o", str(out), "--max-batch", "2",
           "--max-len", "16", "--prefill-buckets", "8,4"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    m = json.load(open(out / "serve.json"))
    assert m["prefill_buckets"] == [4, 8] and m["max_batch"] == 2
    assert "tokenizer.json" in m["tokenizer_files"] and (out / "tokenizer.json").is_file()
    assert m["architecture"] == "LlamaForCausalLM"

    bad_cmd = [str(tmp_path / "other") if a == str(out) else a for a in cmd[:-1]] + ["6"]
    bad = subprocess.run(bad_cmd, capture_output=True, text=True)
    assert bad.returncode == 2 and "does not divide max_len" in bad.stderr
    assert not (tmp_path / "other").exists()
    again = subprocess.run(cmd, capture_output=True, text=True)
    assert again.returncode == 2 and "never overwrites" in again.stderr
    assert json.load(open(out / "serve.json")) == m


def test_exported_directory_served_by_tpuc_serve(tiny, tmp_path):
    """End to end: `python -m tpuc.llm export` on a model directory, then `tpuc serve`
    (the binary $TPUC_BIN, else the repository's debug build) on a free port: a greedy
    completion over HTTP is `generate(do_sample=False)`'s, streamed or not."""
    import re
    import subprocess
    import sys
    import urllib.request

    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    tpuc_bin = os.environ.get("TPUC_BIN") or str(pathlib.Path(__file__).resolve().parents[2] / "target/debug/tpuc")
    assert os.path.isfile(tpuc_bin), f"{tpuc_bin}: build the tpuc binary (cargo build -p tpuc-cli) or set TPUC_BIN"
    model, _ = tiny
    src = tmp_path / "model"
    model.save_pretrained(src)
    tok = Tokenizer(models.WordLevel({f"w{i}": i for i in range(96)}, unk_token="w0"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.decoder = decoders.WordPiece(prefix="##")
    tok.post_processor = processors.TemplateProcessing(single="w1 $A", special_tokens=[("w1", 1)])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="w1", eos_token="w2")
    fast.save_pretrained(src)
    out = tmp_path / "serve"
    r = subprocess.run([sys.executable, "-m", "tpuc.llm", "export", str(src), "-o", str(out), "--max-batch", "4",
                        "--max-len", "32", "--prefill-buckets", "4,8"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr

    prompt = "w5 w9 w40 w3 w17 w60 w61 w62 w63 w64"
    ids = fast(prompt)["input_ids"]
    with torch.no_grad():
        want = model.generate(torch.tensor([ids]), max_new_tokens=8, do_sample=False, eos_token_id=None,
                              pad_token_id=0)[0, len(ids):].tolist()
    server = subprocess.Popen([tpuc_bin, "serve", str(out), "--port", "0"], stderr=subprocess.PIPE, text=True,
                              env={**os.environ, "TPUC_CACHE_DIR": str(tmp_path / "cache")})
    try:
        port = None
        for line in server.stderr:
            m = re.search(r"http://127\.0\.0\.1:(\d+)", line)
            if m:
                port = int(m.group(1))
                break
        assert port, "tpuc serve printed no address"

        def post(body):
            req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/completions", data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req) as resp:
                return resp.read().decode()

        body = {"prompt": prompt, "max_tokens": 8, "temperature": 0, "ignore_eos": True}
        answer = json.loads(post(body))
        assert answer["choices"][0]["token_ids"] == want
        assert answer["choices"][0]["text"] == fast.decode(want, skip_special_tokens=True)
        streamed = post({**body, "stream": True})
        chunks = [json.loads(line[6:]) for line in streamed.splitlines()
                  if line.startswith("data: ") and line != "data: [DONE]"]
        assert "".join(c["choices"][0]["text"] for c in chunks) == answer["choices"][0]["text"]
        assert streamed.rstrip().endswith("data: [DONE]")
    finally:
        server.terminate()
        server.wait(timeout=30)
