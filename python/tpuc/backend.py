"""`torch.compile(model, backend="tpuc")`: the graph TorchDynamo captures is exported
with torch.export, compiled by tpuc and run on the CPU PJRT plugin (or the plugin
`options={"plugin": ...}` names). Registered through the package's
`torch_dynamo_backends` entry point.

What is covered: the graphs Dynamo hands a backend, with static shapes (each new shape
is a new graph: Dynamo's guards decide when to recompile, as for any backend; pass
`dynamic=False` to keep it from trying symbolic shapes first). Not covered: graphs that
write into their inputs (an in-place update of a buffer or argument: refused with the
node), and training through autograd (torch.compile's backward graph); compile a training
step with `tpuc.compile(..., train=True)` instead. Every option `tpuc.compile` takes can
be passed in `options`.
"""

from __future__ import annotations


def tpuc_backend(gm, example_inputs, options=None, **kwargs):
    import torch

    from . import compile as tpuc_compile
    from . import load

    options = dict(options or {})
    options.update(kwargs)
    plugin = options.pop("plugin", None)
    for i, x in enumerate(example_inputs):
        if not isinstance(x, torch.Tensor):
            raise TypeError(
                f"tpuc backend: graph input {i} is {type(x).__name__}, not a tensor (a symbolic "
                "size): compile with torch.compile(..., dynamic=False)"
            )
    artifact = tpuc_compile(gm, tuple(example_inputs), **options)
    program = load(artifact, plugin=plugin)
    single = len(program.outputs) == 1

    def run(*args):
        out = program(*args)
        return (out,) if single else tuple(out)

    # Keep the artifact's directory alive as long as the compiled function.
    run._tpuc_artifact = artifact
    return run
