"""`python -m tpuc.llm export MODEL_DIR -o SERVE_DIR ...`: see `tpuc.llm.export`."""

from __future__ import annotations

import argparse
import logging
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tpuc.llm",
        description="Compile a causal LM for `tpuc serve`: prefill programs per prompt bucket and one batched "
        "decode step, sampling on device, ahead of time.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    ex = sub.add_parser(
        "export",
        help="export and compile a Hugging Face model directory into a serving directory",
        description="Export and compile a Hugging Face model directory (config.json, safetensors, tokenizer files) "
        "into SERVE_DIR: decode.tpuc, prefill_T.tpuc per bucket, the tokenizer files and serve.json.",
    )
    ex.add_argument("model_dir", help="Hugging Face model directory")
    ex.add_argument("-o", "--output", required=True, help="serving directory to create (must not exist or be empty)")
    ex.add_argument("--max-batch", type=int, default=8, help="sequences decoded together (default 8)")
    ex.add_argument("--max-len", type=int, default=2048, help="tokens per sequence, prompt and completion (default 2048)")
    ex.add_argument(
        "--prefill-buckets",
        default=None,
        help="comma-separated prompt chunk sizes, powers of two dividing --max-len (default 16,32,...,512)",
    )
    ex.add_argument("--dtype", choices=["bf16", "f16", "f32"], default=None, help="weights and cache dtype (default: the model's)")
    ex.add_argument("--topology", default=None, help="also compile for these TPU slices with libtpu (as tpuc compile)")
    ex.add_argument("--mesh", default=None, help="device mesh axes, e.g. tp=8 (as tpuc compile)")
    ex.add_argument("--shard", default=None, help="sharding strategies (as tpuc compile)")
    ex.add_argument("--auto-shard", action="store_true", help="the plan tpuc plan chooses for the first --topology")
    args = parser.parse_args(argv)

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    from . import export

    options = {}
    for key in ("topology", "mesh", "shard"):
        if getattr(args, key):
            options[key] = getattr(args, key)
    if args.auto_shard:
        options["auto_shard"] = True
    buckets = [int(b) for b in args.prefill_buckets.split(",")] if args.prefill_buckets else None
    try:
        out = export(
            args.model_dir,
            args.output,
            max_batch=args.max_batch,
            max_len=args.max_len,
            prefill_buckets=buckets,
            dtype=args.dtype,
            **options,
        )
    except (ValueError, FileExistsError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
