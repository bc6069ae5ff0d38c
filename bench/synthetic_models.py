"""Synthetic models for `make bench`'s compile-scaling rows (run by tpuc-bench).

    synthetic_models.py chain NODES OUT.json
        An ExportedProgram JSON (bare `model.json`, no weights) whose graph is a chain of
        Linear + GELU nodes, NODES nodes in all, sharing one f32[32,32] weight and bias.
        The nodes are copied from the corpus MLP's own exported graph
        (testdata/models/mlp/exported.pt2), renamed and rewired, so the schema is
        exactly what torch.export writes; only the graph's length is synthetic.

    synthetic_models.py weights MIB OUT.pt2
        A real torch.export archive (needs torch) of a stack of Linear(1024, 1024)
        layers holding about MIB MiB of f32 weights, for the weight-streaming rate.
"""

import copy
import json
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TEMPLATE = REPO / "testdata/models/mlp/exported.pt2"
WIDTH, BATCH = 32, 4


def chain(nodes, out):
    with zipfile.ZipFile(TEMPLATE) as z:
        name = next(n for n in z.namelist() if n.endswith("models/model.json"))
        program = json.loads(z.read(name))
    graph = program["graph_module"]["graph"]
    signature = program["graph_module"]["signature"]
    linear = next(n for n in graph["nodes"] if n["target"].endswith("linear.default"))
    gelu = next(n for n in graph["nodes"] if n["target"].endswith("gelu.default"))
    x_meta = graph["tensor_values"][linear["inputs"][0]["arg"]["as_tensor"]["name"]]

    def meta(shape):
        m = copy.deepcopy(x_meta)
        m["sizes"] = [{"as_int": s} for s in shape]
        return m

    def node(template, name, inputs):
        n = copy.deepcopy(template)
        n["name"] = name
        for slot, value in zip(n["inputs"], inputs):
            slot["arg"] = {"as_tensor": {"name": value}}
        n["outputs"] = [{"as_tensor": {"name": name}}]
        n["metadata"] = {}
        return n

    values = {"w": meta([WIDTH, WIDTH]), "b": meta([WIDTH]), "x": meta([BATCH, WIDTH])}
    body, prev = [], "x"
    for i in range(nodes // 2):
        body.append(node(linear, f"linear_{i}", [prev, "w", "b"]))
        body.append(node(gelu, f"gelu_{i}", [f"linear_{i}"]))
        values[f"linear_{i}"] = meta([BATCH, WIDTH])
        values[f"gelu_{i}"] = meta([BATCH, WIDTH])
        prev = f"gelu_{i}"
    graph["nodes"] = body
    graph["tensor_values"] = values
    graph["inputs"] = [{"as_tensor": {"name": n}} for n in ("w", "b", "x")]
    graph["outputs"] = [{"as_tensor": {"name": prev}}]

    parameter = next(s for s in signature["input_specs"] if "parameter" in s)
    user = next(s for s in signature["input_specs"] if "user_input" in s)
    specs = []
    for n in ("w", "b"):
        s = copy.deepcopy(parameter)
        s["parameter"]["arg"] = {"name": n}
        s["parameter"]["parameter_name"] = n
        specs.append(s)
    u = copy.deepcopy(user)
    u["user_input"]["arg"] = {"as_tensor": {"name": "x"}}
    signature["input_specs"] = specs + [u]
    signature["output_specs"] = [{"user_output": {"arg": {"as_tensor": {"name": prev}}}}]
    Path(out).write_text(json.dumps(program))


def weights(mib, out):
    import torch

    layers = max(1, round(mib * 1024 * 1024 / (1024 * 1024 * 4)))
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[torch.nn.Linear(1024, 1024, bias=False) for _ in range(layers)])
    ep = torch.export.export(model.eval(), (torch.randn(2, 1024),))
    torch.export.save(ep, out)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "chain":
        chain(int(sys.argv[2]), sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "weights":
        weights(float(sys.argv[2]), sys.argv[3])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
