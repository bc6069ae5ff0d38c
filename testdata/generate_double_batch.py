#!/usr/bin/env python3
"""Write each corpus model's Core ATen graph at twice its batch, for the TPU report's
batch test (cli/tests/cli/tpu.rs, `report_figures_grow_with_the_batch`).

For every model of testdata/models and testdata/coverage/models that has a core.pt2,
this builds the model with its generator's own builder (same seed, same config),
repeats each example input whose leading size is the batch (the leading size of the
first tensor input) twice along dimension 0, exports it with torch.export and
run_decompositions(), and writes the program's models/model.json, as the generator
saves it (metadata stripped), to <model>/core_double_batch.json. No weights: the test
compiles it as a bare model.json (zero-filled weights) next to core.pt2's own
model.json compiled the same way, so the two differ in the batch alone.

Usage (needs testdata/requirements.txt and testdata/coverage/requirements.txt):
  python3 testdata/generate_double_batch.py            # every model
  python3 testdata/generate_double_batch.py bert t5    # only these
"""

from __future__ import annotations

import os
import sys
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "coverage"))

import torch  # noqa: E402

import generate as handwritten  # noqa: E402  (testdata/generate.py)
import generate_models as coverage  # noqa: E402  (testdata/coverage/generate_models.py)

OUT_NAME = "core_double_batch.json"


def doubled(args):
    """The example inputs with the batch doubled: tensors whose leading size is the
    first tensor's are repeated along dimension 0, anything else is kept."""
    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    batch = tensors[0].shape[0] if tensors and tensors[0].dim() > 0 else None
    out = []
    for a in args:
        if isinstance(a, torch.Tensor) and a.dim() > 0 and a.shape[0] == batch:
            out.append(torch.cat([a, a], dim=0))
        else:
            out.append(a)
    return tuple(out)


def model_json(ep, save_program):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "core.pt2")
        save_program(ep, path)
        with zipfile.ZipFile(path) as zf:
            name = next(n for n in zf.namelist() if n.endswith("/models/model.json"))
            return zf.read(name)


def write_one(name, build, save_program, out_dir, prepare=None):
    if not os.path.isfile(os.path.join(out_dir, "core.pt2")):
        print(f"== {name}: no core.pt2, skipped", flush=True)
        return True
    torch.manual_seed(0)
    model, args, _notes = build()
    model = model.eval()
    if prepare is not None:
        prepare(model)
    args = doubled(args)
    try:
        ep = torch.export.export(model, args, strict=False).run_decompositions()
    except Exception as exc:  # noqa: BLE001
        print(f"== {name}: FAILED: {type(exc).__name__}: {str(exc)[:300]}", flush=True)
        return False
    data = model_json(ep, save_program)
    with open(os.path.join(out_dir, OUT_NAME), "wb") as f:
        f.write(data)
    shapes = [tuple(a.shape) for a in args if isinstance(a, torch.Tensor)]
    print(f"== {name}: inputs {shapes}, {len(data)} bytes", flush=True)
    return True


def main(argv):
    import transformers

    transformers.logging.set_verbosity_error()
    torch.set_num_threads(1)
    wanted = set(argv)
    ok = True
    for name, build in handwritten.MODELS.items():
        if wanted and name not in wanted:
            continue
        out_dir = os.path.join(handwritten.MODELS_DIR, name)
        ok &= write_one(name, build, handwritten.save_program, out_dir)
    for name, (_family, build) in coverage.MODELS.items():
        if wanted and name not in wanted:
            continue
        out_dir = os.path.join(coverage.MODELS_DIR, name)

        def prepare(model):
            source = type(getattr(model, "inner", model)).__module__
            if source.startswith("torchvision."):
                coverage.reset_linears(model)

        ok &= write_one(name, build, coverage.save_program, out_dir, prepare)
    if not ok:
        sys.exit("some models failed (see above)")


if __name__ == "__main__":
    # As the generators: fixed string hashing keeps graph node order stable.
    if os.environ.get("PYTHONHASHSEED") != "0":
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable, os.path.abspath(__file__)] + sys.argv[1:])
    main(sys.argv[1:])
