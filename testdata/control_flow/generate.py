#!/usr/bin/env python3
"""Generate testdata/control_flow: programs with torch.export's control-flow operators.

torch.export saves `torch.cond`, `while_loop`, `scan` and `map` as higher-order operators
whose graph arguments are subgraphs (`as_graph`). Each program here is saved in both
forms and comes with several calls whose inputs take different paths through it
(both branches of a data-dependent predicate, loops of different trip counts), each with
the outputs eager PyTorch computed for it:

  <name>/exported.pt2                  torch.export (as exported)
  <name>/core.pt2                      ep.run_decompositions() (Core ATen)
  <name>/calls/<k>/inputs/<i>_<n>.npy  user inputs of call k
  <name>/calls/<k>/expected/<i>.npy    user outputs of call k (eager PyTorch)
  <name>/meta.json                     versions, calls, the higher-order ops of each form, notes

The calls are independent (no state); they are listed as calls so one compile is checked
on every path.

Usage (torch as in testdata/requirements.txt):
  python3 testdata/control_flow/generate.py [names...]
"""

from __future__ import annotations

import collections
import json
import os
import shutil
import sys
import zipfile

import numpy as np
import torch
import torch.nn as nn
from torch._higher_order_ops.map import map as hop_map
from torch._higher_order_ops.scan import scan
from torch._higher_order_ops.while_loop import while_loop

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from generate import max_abs_diff, save_call, save_program  # noqa: E402

ATOL = 1e-5


class CondSign(nn.Module):
    """A data-dependent predicate (the sign of x's sum) picks one of two branches, each
    returning two tensors."""

    def forward(self, x, y):
        def yes(x, y):
            return (x * y).sin() + 1.0, x + y

        def no(x, y):
            return x - y.cos(), x * 3.0

        return torch.cond(x.sum() > 0, yes, no, (x, y))


class CondModule(nn.Module):
    """A boolean input picks which of two linear layers runs (their weights are lifted
    into the branches' operands)."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(6, 4)
        self.b = nn.Linear(6, 4)

    def forward(self, flag, x):
        return torch.cond(flag, lambda x: torch.relu(self.a(x)), lambda x: self.b(x).tanh(), (x,))


class CondNested(nn.Module):
    """A cond inside a cond's branch: three paths, chosen by two data-dependent predicates."""

    def forward(self, x, y):
        def outer_yes(x, y):
            return torch.cond(y.max() > 1.0, lambda x, y: x * y, lambda x, y: x + y, (x, y))

        def outer_no(x, y):
            return x - 2.0 * y

        return torch.cond(x.mean() > 0, outer_yes, outer_no, (x, y))


class WhileCount(nn.Module):
    """A loop whose trip count is an input: x <- 1.5 x + 0.5, n times."""

    def forward(self, n, x):
        def cond(i, x):
            return i < n

        def body(i, x):
            return i + 1, x * 1.5 + 0.5

        return while_loop(cond, body, (torch.zeros((), dtype=torch.long), x))


class WhileLinear(nn.Module):
    """A loop over a linear layer until the state grows past a bound (or 8 steps): the
    weights are the loop's additional inputs."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 5)

    def forward(self, x):
        def cond(i, x):
            return (x.abs().sum() < 40.0) & (i < 8)

        def body(i, x):
            return i + 1, torch.tanh(self.fc(x)) * 3.0 + x

        return while_loop(cond, body, (torch.zeros((), dtype=torch.long), x))


class WhileCond(nn.Module):
    """A cond inside a loop's body: even steps double x, odd steps subtract one."""

    def forward(self, n, x):
        def cond(i, x):
            return i < n

        def body(i, x):
            y = torch.cond(i % 2 == 0, lambda x: x * 2.0, lambda x: x - 1.0, (x,))
            return i + 1, y

        return while_loop(cond, body, (torch.zeros((), dtype=torch.long), x))


class ScanRnn(nn.Module):
    """An Elman RNN written with scan: h <- tanh(W x_t + U h), every h stacked."""

    def __init__(self):
        super().__init__()
        self.w = nn.Linear(3, 4)
        self.u = nn.Linear(4, 4, bias=False)

    def forward(self, xs, h0):
        def step(h, x):
            h = torch.tanh(self.w(x) + self.u(h))
            return h, h * 2.0

        return scan(step, h0, xs)


class ScanReverse(nn.Module):
    """Scan along dimension 1, in reverse: a reversed cumulative sum and product."""

    def forward(self, xs):
        def step(carry, x):
            s, p = carry
            s = s + x
            p = p * x
            return (s, p), s - p

        init = (torch.zeros(xs.shape[0]), torch.ones(xs.shape[0]))
        return scan(step, init, xs, dim=1, reverse=True)


class ScanInCond(nn.Module):
    """A scan inside one branch of a data-dependent cond."""

    def forward(self, xs):
        def cumsum(xs):
            def step(c, x):
                c = c + x
                return c, c.clone()

            return scan(step, torch.zeros_like(xs[0]), xs)[1]

        return torch.cond(xs.sum() > 0, cumsum, lambda xs: xs * -1.0, (xs,))


class MapAffine(nn.Module):
    """map: each row of xs through the same function, with an extra operand."""

    def forward(self, xs, y):
        def f(x, y):
            return (x * y).sum(0, keepdim=True) + x

        return hop_map(f, xs, y)


def _f(*shape, seed, scale=1.0, shift=0.0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g) * scale + shift


PROGRAMS = {
    "cond_sign": (
        CondSign,
        [
            {"x": _f(3, 4, seed=1, shift=1.0), "y": _f(3, 4, seed=2)},
            {"x": _f(3, 4, seed=3, shift=-1.0), "y": _f(3, 4, seed=4)},
        ],
    ),
    "cond_module": (
        CondModule,
        [
            {"flag": torch.tensor(True), "x": _f(2, 6, seed=5)},
            {"flag": torch.tensor(False), "x": _f(2, 6, seed=6)},
        ],
    ),
    "cond_nested": (
        CondNested,
        [
            {"x": _f(4, seed=7, shift=1.0), "y": _f(4, seed=8, shift=2.0)},
            {"x": _f(4, seed=9, shift=1.0), "y": _f(4, seed=10, scale=0.1)},
            {"x": _f(4, seed=11, shift=-1.0), "y": _f(4, seed=12)},
        ],
    ),
    "while_count": (
        WhileCount,
        [
            {"n": torch.tensor(3), "x": _f(2, 3, seed=13)},
            {"n": torch.tensor(0), "x": _f(2, 3, seed=14)},
            {"n": torch.tensor(6), "x": _f(2, 3, seed=15)},
        ],
    ),
    "while_linear": (
        WhileLinear,
        [
            {"x": _f(2, 5, seed=16, scale=0.1)},
            {"x": _f(2, 5, seed=17, scale=10.0)},
        ],
    ),
    "while_cond": (
        WhileCond,
        [
            {"n": torch.tensor(5), "x": _f(3, seed=18)},
            {"n": torch.tensor(2), "x": _f(3, seed=19)},
        ],
    ),
    "scan_rnn": (
        ScanRnn,
        [
            {"xs": _f(5, 2, 3, seed=20), "h0": _f(2, 4, seed=21)},
            {"xs": _f(5, 2, 3, seed=22), "h0": torch.zeros(2, 4)},
        ],
    ),
    "scan_reverse": (ScanReverse, [{"xs": _f(3, 6, seed=23, scale=0.5, shift=1.0)}]),
    "scan_in_cond": (
        ScanInCond,
        [
            {"xs": _f(4, 3, seed=24, shift=1.0)},
            {"xs": _f(4, 3, seed=25, shift=-1.0)},
        ],
    ),
    "map_affine": (MapAffine, [{"xs": _f(4, 3, seed=26), "y": _f(3, seed=27)}]),
}

HIGHER_ORDER = ("higher_order.",)


def higher_order_ops(path):
    """Counts of the higher-order operators in a saved archive's graphs, subgraphs included."""
    with zipfile.ZipFile(path) as zf:
        name = next(n for n in zf.namelist() if n.endswith("/models/model.json"))
        prog = json.loads(zf.read(name))
    counts = collections.Counter()

    def walk(graph):
        for node in graph["nodes"]:
            t = node["target"].removeprefix("torch.ops.")
            if t.startswith(HIGHER_ORDER):
                counts[t] += 1
            for inp in node.get("inputs", []):
                arg = inp.get("arg", {})
                if "as_graph" in arg:
                    walk(arg["as_graph"]["graph"])

    walk(prog["graph_module"]["graph"])
    return dict(sorted(counts.items()))


def flat(out):
    if isinstance(out, torch.Tensor):
        return [out.detach()]
    return [t for o in out for t in flat(o)]


def generate(name):
    print(f"== {name}")
    module, calls = PROGRAMS[name]
    torch.manual_seed(0)
    model = module().eval()
    out_dir = os.path.join(HERE, name)
    if os.path.isdir(out_dir):
        shutil.rmtree(out_dir)
    os.makedirs(out_dir)
    ep = torch.export.export(model, tuple(calls[0].values()), strict=False)
    paths = {"exported": os.path.join(out_dir, "exported.pt2"), "core": os.path.join(out_dir, "core.pt2")}
    core = ep.run_decompositions()
    save_program(ep, paths["exported"])
    save_program(core, paths["core"])
    meta_calls = []
    for k, c in enumerate(calls):
        with torch.no_grad():
            want = flat(model(*[v.clone() for v in c.values()]))
        for form, path in paths.items():
            got = flat(torch.export.load(path).module()(*[v.clone() for v in c.values()]))
            assert len(got) == len(want), (name, form, k)
            d = max(max_abs_diff(g, w) for g, w in zip(got, want))
            print(f"  call {k} {form}: max |diff| vs eager = {d:.3e}")
            assert d <= ATOL, (name, form, k, d)
        inputs, expected = save_call(out_dir, k, c, want)
        meta_calls.append({"inputs": inputs, "expected": expected})
    meta = {
        "name": name,
        "torch_version": torch.__version__,
        "calls": meta_calls,
        "higher_order_ops": {form: higher_order_ops(p) for form, p in paths.items()},
        "notes": " ".join((module.__doc__ or "").split()),
    }
    with open(os.path.join(out_dir, "meta.json"), "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")


def main(argv):
    names = argv or list(PROGRAMS)
    torch.set_num_threads(1)
    for n in names:
        generate(n)
    with open(os.path.join(HERE, "index.json"), "w") as f:
        json.dump({"programs": list(PROGRAMS)}, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])
