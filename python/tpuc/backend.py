"""`torch.compile(model, backend="tpuc")`: the graph TorchDynamo captures is exported
with torch.export, compiled by tpuc and run on the CPU PJRT plugin (or the plugin
`options={"plugin": ...}` names). Registered through the package's
`torch_dynamo_backends` entry point.

What is covered: the graphs Dynamo hands a backend. Dynamo's guards decide when to
recompile, as for any backend. A graph with static shapes is compiled once, when Dynamo
hands it over. A graph with symbolic sizes (Dynamo marks a size dynamic after it saw two
values, or with `dynamic=True`) is compiled for each new set of concrete sizes at its
first call with them, then reused: every size runs, each one compiled once. Not covered:
graphs that write into their inputs (an in-place update of a buffer or argument: refused
with the node), and training through autograd (torch.compile's backward graph); compile a
training step with `tpuc.compile(..., train=True)` instead. Every option `tpuc.compile`
takes can be passed in `options`.
"""

from __future__ import annotations


def tpuc_backend(gm, example_inputs, options=None, **kwargs):
    import torch

    options = dict(options or {})
    options.update(kwargs)
    plugin = options.pop("plugin", None)
    symbolic = any(not isinstance(x, torch.Tensor) or _has_symbolic_size(torch, x) for x in example_inputs)
    if not symbolic:
        return _compile(gm, list(example_inputs), options, plugin, set())

    # Symbolic sizes: one program per set of concrete sizes, compiled at its first call.
    # A number Dynamo passes as a 0-d tensor the graph only reads with .item() (a float
    # such as LayerNorm's eps under dynamic=True) is bound by value, like the sizes.
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    scalars = {
        i
        for i, n in enumerate(placeholders)
        if n.users and all(u.op == "call_method" and u.target == "item" for u in n.users)
    }
    programs = {}

    def run(*args):
        key = tuple(
            (a.item(),)
            if i in scalars
            else (tuple(a.shape), a.dtype, a.device.type)
            if isinstance(a, torch.Tensor)
            else (type(a).__name__, a)
            for i, a in enumerate(args)
        )
        program = programs.get(key)
        if program is None:
            program = programs[key] = _compile(gm, list(args), options, plugin, scalars)
        return program(*args)

    run._tpuc_programs = programs
    return run


def _has_symbolic_size(torch, t) -> bool:
    return any(isinstance(s, torch.SymInt) for s in t.shape)


def _compile(gm, inputs, options, plugin, scalars):
    """A function of the graph's inputs that runs it compiled for these inputs' sizes.
    Plain numbers among the inputs (symbolic sizes, once concrete) and the inputs at
    `scalars` are bound into the program; the program takes the other tensors."""
    import torch

    from . import CompileError, load
    from . import compile as tpuc_compile

    for i, x in enumerate(inputs):
        if not isinstance(x, (torch.Tensor, int, float, bool)):
            raise TypeError(f"tpuc backend: graph input {i} is {type(x).__name__}, not a tensor or a number")
    tensor_at = [i for i, x in enumerate(inputs) if isinstance(x, torch.Tensor) and i not in scalars]
    if len(tensor_at) == len(inputs):
        module = gm
    else:
        module = _bound(gm, inputs, tensor_at)
    try:
        artifact = tpuc_compile(module, tuple(inputs[i] for i in tensor_at), **options)
    except CompileError as e:
        if "writes in place into user input" not in str(e):
            raise
        hint = (
            "torch.compile hands the backend the module's buffers as graph inputs, which tpuc "
            "cannot write back: a module that updates a buffer as it runs (BatchNorm in "
            "training mode, a counter) does not run through this backend; for inference call "
            "model.eval() first, for a stateful program use tpuc.compile and tpuc.load"
        )
        error = CompileError(f"{e}\nhint: {hint}")
        error.node, error.op, error.hint = e.node, e.op, hint
        raise error from e
    program = load(artifact, plugin=plugin)
    single = len(program.outputs) == 1

    def run(*args):
        out = program(*(args[i] for i in tensor_at))
        return (out,) if single else tuple(out)

    # Keep the artifact's directory alive as long as the compiled function.
    run._tpuc_artifact = artifact
    return run


def _bound(gm, inputs, tensor_at):
    """The graph as a module of its tensor inputs, its other inputs fixed to these values."""
    import torch

    class Bound(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.gm = gm

        def forward(self, *tensors):
            args = list(inputs)
            for i, t in zip(tensor_at, tensors):
                args[i] = t
            return self.gm(*args)

    return Bound()
