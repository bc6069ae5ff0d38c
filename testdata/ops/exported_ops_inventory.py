#!/usr/bin/env python3
"""Which ATen ops of a family of exported programs have no case in the op suites.

Reads every `exported.pt2` and `decode/exported.pt2` under DIR (the layout
testdata/causal_lm/generate.py writes, e.g. target/causal_lm), collects the ops their
pre-decomposition graphs call, from each archive's model.json (subgraphs included; in-place ops counted as their
functional form, which tpuc compiles them as), and lists those with a case in neither
testdata/ops/index.json (Core ATen) nor testdata/ops/exported/index.json (as exported),
with how many programs call each and one of them.

    python3 testdata/ops/exported_ops_inventory.py target/causal_lm
"""

import collections
import json
import os
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))


def op_name(target):
    """`torch.ops.aten.index_copy_.default` -> `aten.index_copy.default`, as the suites'
    `op` fields (in-place ops as their functional form)."""
    name = target.removeprefix("torch.ops.")
    parts = name.split(".")
    if parts[0] != "aten" or len(parts) != 3:
        return name
    base = parts[1]
    if base.endswith("_") and not base.endswith("__"):
        base = base[:-1]
    return f"aten.{base}.{parts[2]}"


# What a graph calls that computes no tensor tpuc lowers: size arithmetic over symbols,
# runtime assertions, metadata and device moves, autograd bookkeeping.
BOOKKEEPING = {
    "aten._assert_async.msg",
    "aten._assert_scalar.default",
    "aten._assert_tensor_metadata.default",
    "aten._is_all_true.default",
    "aten.detach.default",
    "aten.item.default",
    "aten.lift_fresh_copy.default",
    "aten.sym_size.int",
    "aten.sym_storage_offset.default",
    "aten.to.device",
    "higher_order.wrap_with_set_grad_enabled",
}


def bookkeeping(op):
    return op in BOOKKEEPING or op.startswith(("_operator.", "torch.sym_", "math."))


def graph_targets(graph, out):
    for n in graph.get("nodes", []):
        out.add(op_name(n["target"]))
        for i in n.get("inputs", []):
            sub = i.get("arg", {}).get("as_graph")
            if sub:
                graph_targets(sub["graph"], out)


def program_ops(path):
    """The ops a .pt2's program calls, read from its model.json (no torch needed)."""
    with zipfile.ZipFile(path) as z:
        name = next(n for n in z.namelist() if "/models/" in n and n.endswith(".json"))
        program = json.loads(z.read(name))
    ops = set()
    graph_targets(program["graph_module"]["graph"], ops)
    return ops


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "target/causal_lm"
    count, example = collections.Counter(), {}
    for t in sorted(os.listdir(root)):
        for rel in ("exported.pt2", os.path.join("decode", "exported.pt2")):
            p = os.path.join(root, t, rel)
            if os.path.exists(p):
                for o in program_ops(p):
                    count[o] += 1
                    example.setdefault(o, t)
    with_cases = set()
    for index in ("index.json", os.path.join("exported", "index.json")):
        with open(os.path.join(HERE, index)) as f:
            with_cases |= {c["op"] for c in json.load(f)["cases"]}
    missing = sorted(o for o in count if o not in with_cases and not bookkeeping(o))
    kept = sorted(o for o in count if bookkeeping(o))
    print(f"{len(count)} ops in the programs under {root}; {len(missing)} without a case:")
    for o in missing:
        print(f"  {o}  ({count[o]} programs, e.g. {example[o]})")
    print(f"not ops to case (size arithmetic, runtime assertions, metadata): {', '.join(kept)}")


if __name__ == "__main__":
    main()
