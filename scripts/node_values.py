#!/usr/bin/env python3
"""PyTorch's value of every node of an exported program, for `tpuc diverge`.

Runs the program saved with torch.export.save node by node (torch.fx.Interpreter over
the ExportedProgram's graph, its parameters, buffers and constants bound as the graph
signature lists them) on the given user inputs, and writes each tensor a node computes
as OUT/<node name>.npy: the names tpuc gives the values of an artifact compiled with
`tpuc compile --debug-outputs`. The user inputs are copied to OUT/inputs/ in order, so

    python scripts/node_values.py model.pt2 --inputs inputs/ --out ref/
    tpuc compile model.pt2 -o m.tpuc --debug-outputs
    tpuc diverge m.tpuc --reference ref/

finds the first node whose value leaves the tolerances. bf16 values are written as f32
(numpy has no bf16). Needs torch (testdata/requirements.txt).
"""

import argparse
import importlib
import shutil
import sys
from pathlib import Path

import numpy as np
import torch
from torch.export.graph_signature import InputKind


def numbered_npy(folder: Path) -> list:
    """The .npy files of `folder` in the order of their leading number (0_x.npy, ...)."""
    files = [p for p in folder.iterdir() if p.suffix == ".npy"]

    def key(p: Path):
        head = p.stem.split("_")[0]
        return (int(head) if head.isdigit() else sys.maxsize, p.stem)

    return sorted(files, key=key)


def to_numpy(t: torch.Tensor) -> np.ndarray:
    t = t.detach().cpu()
    if t.dtype == torch.bfloat16:
        t = t.to(torch.float32)
    return t.contiguous().numpy()


def graph_arguments(ep, user_inputs: list) -> list:
    """The graph's placeholders in order: weights from the program, then user inputs."""
    users = iter(user_inputs)
    args = []
    for spec in ep.graph_signature.input_specs:
        if spec.kind == InputKind.USER_INPUT:
            args.append(next(users))
        elif spec.kind == InputKind.PARAMETER:
            args.append(ep.state_dict[spec.target])
        elif spec.kind == InputKind.BUFFER:
            source = ep.state_dict if spec.target in ep.state_dict else ep.constants
            args.append(source[spec.target])
        elif spec.kind in (InputKind.CONSTANT_TENSOR, InputKind.CUSTOM_OBJ):
            args.append(ep.constants[spec.target])
        else:
            raise SystemExit(f"error: input `{spec.arg.name}` of kind {spec.kind} is not supported")
    return args


class Recorder(torch.fx.Interpreter):
    """Runs the graph and keeps every tensor a call_function node computes."""

    def __init__(self, module):
        super().__init__(module)
        self.values = {}

    def run_node(self, n):
        result = super().run_node(n)
        if n.op == "call_function" and isinstance(result, torch.Tensor):
            # Clone: an in-place op later in the graph would change the saved tensor.
            self.values[n.name] = result.clone()
        return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("program", type=Path, help="a .pt2 written by torch.export.save")
    parser.add_argument("--inputs", type=Path, required=True, help="folder of numbered user-input .npy files")
    parser.add_argument("--out", type=Path, required=True, help="folder to write <node>.npy files into")
    parser.add_argument(
        "--import",
        dest="imports",
        action="append",
        default=[],
        metavar="MODULE",
        help="a module to import first, registering the custom operators the program calls "
        "(transformers' MoE layers call transformers.grouped_mm_fallback: "
        "--import transformers.integrations.moe)",
    )
    args = parser.parse_args()

    for module in args.imports:
        importlib.import_module(module)
    ep = torch.export.load(str(args.program))
    input_files = numbered_npy(args.inputs)
    user_inputs = [torch.from_numpy(np.load(p)) for p in input_files]
    recorder = Recorder(ep.graph_module)
    with torch.no_grad():
        recorder.run(*graph_arguments(ep, user_inputs))

    if args.out.exists():
        shutil.rmtree(args.out)
    (args.out / "inputs").mkdir(parents=True)
    for p in input_files:
        shutil.copyfile(p, args.out / "inputs" / p.name)
    for name, value in recorder.values.items():
        np.save(args.out / f"{name}.npy", to_numpy(value))
    print(f"node_values: {len(recorder.values)} values of {args.program} -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
