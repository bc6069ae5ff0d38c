#!/usr/bin/env python3
"""Write testdata/zoo/too_big.json: a program too big for small TPU slices, for the
tests of what tpuc says when a program does not fit (cli/tests/cli/plan.rs).

Two bf16 Linear layers, 65,536 -> 131,072 -> 65,536 features without bias (16 GiB of
weights each, 32 GiB in all), applied to 8 rows, built on the meta device (no weight is
allocated) and exported with torch.export; the file is the ExportedProgram JSON
(weights absent: `tpuc compile --weights-as-inputs`). One v5e chip (16 GiB) cannot
hold one layer, and two cannot hold both, however the weights are split.

Usage (torch as in testdata/requirements.txt):
  python3 testdata/zoo/too_big.py
"""

import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))


class TooBig(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.up = torch.nn.Linear(65536, 131072, bias=False, dtype=torch.bfloat16)
        self.down = torch.nn.Linear(131072, 65536, bias=False, dtype=torch.bfloat16)

    def forward(self, x):
        return self.down(torch.relu(self.up(x)))


def main():
    from torch._export.serde.serialize import serialize

    with torch.device("meta"):
        model = TooBig()
    x = torch.zeros(8, 65536, dtype=torch.bfloat16, device="meta")
    ep = torch.export.export(model, (x,), strict=False).run_decompositions()
    for node in ep.graph_module.graph.nodes:
        node.meta.pop("nn_module_stack", None)
        node.meta.pop("stack_trace", None)
    with open(os.path.join(HERE, "too_big.json"), "wb") as f:
        f.write(serialize(ep).exported_program)


if __name__ == "__main__":
    main()
