"""`tpuc.llm.export`: a causal LM as the set of programs a server runs (see
`programs.py`), compiled ahead of time into one directory with its tokenizer files and
a `serve.json` manifest that `tpuc serve` reads."""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile

log = logging.getLogger("tpuc")

# Files of a Hugging Face model directory the server needs besides the programs.
TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "chat_template.jinja",
    "chat_template.json",
    "generation_config.json",
)

_DTYPES = {"bf16": "bfloat16", "f16": "float16", "f32": "float32"}


def _default_buckets(max_len: int) -> list[int]:
    """Powers of two from 16 up to min(max_len, 512)."""
    out, t = [], 16
    while t <= min(max_len, 512):
        out.append(t)
        t *= 2
    return out or [max_len]


def check_shape(max_batch: int, max_len: int, buckets: list[int]) -> list[int]:
    """The sorted buckets, or a ValueError saying what is wrong."""
    if max_batch < 1:
        raise ValueError(f"max_batch must be at least 1, got {max_batch}")
    if max_len < 2:
        raise ValueError(f"max_len must be at least 2 (a prompt token and a new one), got {max_len}")
    buckets = sorted(set(int(b) for b in buckets))
    if not buckets or buckets[0] < 1:
        raise ValueError(f"prefill buckets must be positive token counts, got {buckets}")
    for b in buckets:
        # A chunk starts at a multiple of the largest bucket and must end inside the
        # cache: every bucket divides max_len.
        if max_len % b:
            raise ValueError(
                f"prefill bucket {b} does not divide max_len {max_len}: chunks of a long prompt start at "
                f"multiples of the largest bucket and must end inside the cache (use powers of two)"
            )
    return buckets


def export(
    model,
    output,
    *,
    tokenizer_dir=None,
    max_batch: int = 8,
    max_len: int = 2048,
    prefill_buckets=None,
    dtype: str | None = None,
    **compile_options,
) -> str:
    """Exports and compiles `model` for serving into the directory `output` (created;
    an existing non-empty directory is refused, never overwritten).

    model: a transformers causal LM, or the path of a Hugging Face model directory
        (config.json and safetensors; its tokenizer and chat template files are copied).
    tokenizer_dir: where the tokenizer files are, when `model` is a module.
    max_batch: sequences decoded together (slots). max_len: tokens per sequence,
        prompt and completion. prefill_buckets: chunk sizes of prompt programs
        (powers of two dividing max_len; default 16 .. 512).
    dtype: "bf16", "f16" or "f32" (default: the model's; a module is converted in
        place, as `module.to` does).
    compile_options: as `tpuc.compile` takes them (topology, mesh, shard, auto_shard...).
    Returns the directory's path.
    """
    import torch

    from .programs import Programs

    output = os.fspath(output)
    if os.path.exists(output) and (not os.path.isdir(output) or os.listdir(output)):
        raise FileExistsError(f"{output}: exists and is not an empty directory (tpuc.llm.export never overwrites)")
    buckets = check_shape(max_batch, max_len, prefill_buckets or _default_buckets(max_len))

    if isinstance(model, (str, os.PathLike)):
        from transformers import AutoModelForCausalLM

        source = os.fspath(model)
        tokenizer_dir = tokenizer_dir or source
        kwargs = {"dtype": getattr(torch, _DTYPES[dtype])} if dtype else {}
        model = AutoModelForCausalLM.from_pretrained(source, **kwargs)
    elif dtype:
        model = model.to(getattr(torch, _DTYPES[dtype]))
    model = model.eval()

    programs = Programs(model, max_batch, max_len).eval()
    # Written beside `output` and renamed into place at the end: a failed or
    # interrupted export leaves nothing half-written under the name.
    parent = os.path.dirname(os.path.abspath(output))
    os.makedirs(parent, exist_ok=True)
    final, output = output, tempfile.mkdtemp(prefix=".tpuc-llm-", dir=parent)
    try:
        _write(model, programs, output, buckets, tokenizer_dir, compile_options)
        if os.path.isdir(final):
            os.rmdir(final)  # empty, checked above
        os.rename(output, final)
    except BaseException:
        shutil.rmtree(output, ignore_errors=True)
        raise
    return final


def _write(model, programs, output, buckets, tokenizer_dir, compile_options):
    from .. import compile as tpuc_compile
    from .programs import export_programs, serve_manifest

    listed = {"decode": None, "prefill": []}
    for label, ep in export_programs(programs, buckets).items():
        log.info("tpuc.llm: compiling %s", label)
        path = f"{label}.tpuc"
        tpuc_compile(ep, output=os.path.join(output, path), **compile_options)
        if label == "decode":
            listed["decode"] = {"path": path}
        else:
            listed["prefill"].append({"tokens": int(label.removeprefix("prefill_")), "path": path})

    _store_weights_once(output, [listed["decode"]["path"]] + [p["path"] for p in listed["prefill"]])

    copied = []
    if tokenizer_dir:
        for f in TOKENIZER_FILES:
            p = os.path.join(os.fspath(tokenizer_dir), f)
            if os.path.isfile(p):
                shutil.copyfile(p, os.path.join(output, f))
                copied.append(f)
    if "tokenizer.json" not in copied:
        log.warning("tpuc.llm: no tokenizer.json copied: `tpuc serve` will take token ids only")

    manifest = serve_manifest(model, programs, buckets, listed, copied, compile_options)
    with open(os.path.join(output, "serve.json"), "w") as f:
        json.dump(manifest, f, indent=2, sort_keys=True)
        f.write("\n")


def _store_weights_once(output, programs):
    """The programs hold the same parameters (and the same initial cache): where their
    weight files are identical, one file on disk, hard-linked into every program (a
    file system without hard links keeps the copies)."""
    import filecmp

    files = [os.path.join(output, p, "weights.safetensors") for p in programs]
    files = [f for f in files if os.path.isfile(f)]
    for f in files[1:]:
        if filecmp.cmp(files[0], f, shallow=False):
            linked = f + ".link"
            try:
                os.link(files[0], linked)
                os.replace(linked, f)
            except OSError:
                if os.path.exists(linked):
                    os.remove(linked)
