"""tpuc.llm: causal language models compiled for serving.

    python -m tpuc.llm export MODEL_DIR -o SERVE_DIR --max-batch 8 --max-len 2048
    tpuc.llm.export(model_or_dir, "serve_dir", max_batch=8, max_len=2048)

writes one decode program over every slot, one prefill program per prompt bucket (with
sampling on device in both), the tokenizer files and `serve.json`, which `tpuc serve`
loads. `programs.py` says how the programs are built from the model's own code.
"""

from .export import export

__all__ = ["export"]
