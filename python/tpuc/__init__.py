"""tpuc: compile PyTorch programs ahead of time to StableHLO for TPUs and PJRT devices,
and run and train them, from Python, in process.

    import tpuc
    artifact = tpuc.compile(model, (x,))          # torch.export inside, then tpuc
    program = tpuc.load(artifact)                 # the CPU PJRT plugin unless told
    y = program(x)                                # torch in, torch out
    artifact.save("model.tpuc")                   # what the runtime-only `tpuc run` takes

The compiler and runtime are linked into this module (no subprocess, no temporary .npy
files). A fresh install runs programs on the CPU through the PJRT plugin it depends on;
`plugin=` names any other (CUDA, TPU, Neuron).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from typing import Any

# XLA's plugins log to stderr unless told; quiet as `tpuc` is, unless the user set it.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from . import _tpuc  # noqa: E402
from ._tensors import empty, from_host, to_views, wants_numpy  # noqa: E402

__all__ = [
    "compile",
    "plan",
    "load",
    "generate",
    "Artifact",
    "Program",
    "TpucError",
    "CompileError",
    "RuntimeError",
    "InputError",
    "OptionError",
    "find_plugin",
    "__version__",
]

__version__ = _tpuc.__version__

from ._errors import CompileError, InputError, OptionError, RuntimeError, TpucError  # noqa: A004,E402

# Every keyword `compile` takes, with the type it must have (tuples: any of).
_OPTIONS = {
    "opt_level": int,
    "target": str,
    "topology": (str, list, tuple),
    "libtpu": (str, os.PathLike),
    "mesh": str,
    "shard": (str, list, tuple),
    "sharding_rules": (str, os.PathLike),
    "sharding_format": str,
    "auto_shard": bool,
    "matmul_precision": str,
    "auto_cast": str,
    "keep_int64": bool,
    "specialize": (str, list, tuple),
    "debug_outputs": bool,
    "weights_as_inputs": bool,
    "train": bool,
    "optimizer": str,
    "lr": (int, float),
    "betas": (list, tuple),
    "eps": (int, float),
    "weight_decay": (int, float),
    "momentum": (int, float),
    "dampening": (int, float),
    "nesterov": bool,
    "clip_grad_norm": (int, float),
    "schedule": str,
    "warmup_steps": int,
    "total_steps": int,
    "min_lr_ratio": (int, float),
    "freeze": (str, list, tuple),
}

_LISTS = ("topology", "shard", "specialize", "freeze")


def _check_options(options: dict, caller: str = "compile()") -> dict:
    out = {}
    for key, value in options.items():
        if key not in _OPTIONS:
            raise TypeError(
                f"{caller} got an unknown option `{key}` (known: {', '.join(sorted(_OPTIONS))})"
            )
        if value is None:
            continue
        want = _OPTIONS[key]
        if isinstance(value, bool) and want in (int, (int, float)):
            raise TypeError(f"option `{key}`: expected a number, got a bool")
        if not isinstance(value, want):
            names = " or ".join(t.__name__ for t in (want if isinstance(want, tuple) else (want,)))
            raise TypeError(f"option `{key}`: expected {names}, got {type(value).__name__}")
        if key in _LISTS and isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()] if key != "specialize" else [value]
        if key in _LISTS:
            value = [str(v) for v in value]
        if key == "betas":
            if len(value) != 2:
                raise ValueError(f"option `betas`: expected (beta1, beta2), got {value!r}")
            value = (float(value[0]), float(value[1]))
        if key in ("lr", "eps", "weight_decay", "momentum", "dampening", "clip_grad_norm", "min_lr_ratio"):
            value = float(value)
        if key == "libtpu":
            value = os.fspath(value)
        out[key] = value
    return out


class Artifact:
    """A compiled artifact: a directory holding `manifest.json`, `program.mlir` and the
    weights (and TPU executables with `topology=`). Kept in a temporary directory that
    lives as long as this object unless `output=` named one; `save(path)` copies it."""

    def __init__(self, path: str, report: dict | None = None, temporary: tempfile.TemporaryDirectory | None = None):
        self.path = os.fspath(path)
        self.compile_report = report or {}
        self._temporary = temporary

    def __repr__(self) -> str:
        return f"tpuc.Artifact({self.path!r})"

    def __fspath__(self) -> str:
        return self.path

    @property
    def manifest(self) -> dict:
        """The manifest (arguments, outputs, dtypes, shapes, shardings, TPU figures)."""
        with open(os.path.join(self.path, "manifest.json")) as f:
            return json.load(f)

    def report(self) -> dict:
        """The TPU figures `topology=` recorded (per device: argument, output, temporary
        and peak bytes, FLOPs...; `tpuc report --json`), and a training step's memory
        by what it holds."""
        return json.loads(_tpuc.report_json(self.path))

    def inspect(self) -> str:
        """A summary of the artifact: target, inputs, outputs, state, TPU figures."""
        m = self.manifest
        lines = [f"artifact {self.path}: target {m['target']}, StableHLO {m['stablehlo_version']}"]
        lines.append("inputs:")
        for a in m["arguments"]:
            if a["kind"] == "user_input":
                lines.append(f"  {a['name']:<32} {a['dtype']:<6} {a['shape']}")
        lines.append("outputs:")
        for o in m["outputs"]:
            role = f" (updates {o['updates']})" if o.get("updates") else ""
            lines.append(f"  {o['name']:<32} {o['dtype']:<6} {o['shape']}{role}")
        for e in m.get("tpu_executables", []):
            r = e["report"]
            lines.append(
                f"TPU {e['topology']}: peak {r['peak_bytes'] / 2**20:.2f} MiB per device, "
                f"{r['flops']:.3e} FLOP, fits: {'yes' if r['fits'] else 'NO'}"
            )
        return "\n".join(lines)

    def save(self, path: str) -> "Artifact":
        """Copies the artifact to `path` (a new directory); returns it there."""
        path = os.fspath(path)
        if os.path.exists(path):
            raise FileExistsError(f"{path} exists; tpuc does not overwrite it")
        shutil.copytree(self.path, path)
        return Artifact(path, self.compile_report)

    def load(self, plugin: str | None = None, devices: int | None = None) -> "Program":
        return load(self, plugin=plugin, devices=devices)


def _export(model, args, kwargs, dynamic_shapes, train: bool):
    import torch

    try:
        ep = torch.export.export(model, tuple(args), kwargs or None, dynamic_shapes=dynamic_shapes, strict=False)
    except Exception as e:
        # torch.export's own error, unchanged, with tpuc's hint as a note.
        if hasattr(e, "add_note"):
            e.add_note(
                "hint (tpuc): torch.export could not export the module; the error above is "
                "torch.export's own. Export it yourself (torch.export.export(model, args, "
                "strict=False)) to work on it, then pass the ExportedProgram to tpuc.compile."
            )
        raise
    if train:
        from torch.export.experimental import _export_forward_backward

        try:
            ep = _export_forward_backward(ep, joint_loss_index=0)
        except Exception as e:
            if hasattr(e, "add_note"):
                e.add_note(
                    "hint (tpuc): train=True exports the joint forward and backward program; "
                    "the module's forward must return its scalar loss first, as (loss,)."
                )
            raise
    return ep


def compile(model, args=(), kwargs=None, *, dynamic_shapes=None, output=None, **options) -> Artifact:  # noqa: A001
    """Compiles a PyTorch program ahead of time into an artifact.

    model: an `nn.Module` (exported here with `torch.export.export(model, args, kwargs,
        strict=False)`; with `train=True` its forward must return `(loss,)` and the joint
        forward + backward program is exported), an `ExportedProgram`, or the path of a
        `.pt2` archive or its `model.json`.
    args, kwargs, dynamic_shapes: the example inputs and dynamic dimensions, as
        `torch.export.export` takes them (for a module).
    output: the artifact directory; by default a temporary one that lives as long as
        the returned `Artifact`.

    Options (as `tpuc compile`'s flags):
        opt_level (0, 1, 2; default 2), target ("tpu", "trn1", "trn2", "trn3", "inf2"),
        matmul_precision ("highest", "high", "default"), auto_cast ("bf16", "fp16":
        Neuron), keep_int64 (Neuron), mesh ("dp=2,tp=2") and shard (["data-parallel",
        "fsdp", "megatron", "expert"]) and/or sharding_rules (the path of a rules file,
        as `tpuc plan --write-rules` writes it; it may name the mesh and strategies)
        with sharding_format ("shardy", "gspmd"), topology ("v5e:2x2" or a list: TPU
        executables compiled by libtpu, no TPU needed; see Artifact.report()), libtpu
        (its path), auto_shard (True: the mesh and strategies `tpuc plan` would choose
        for the first topology, found by compiling candidates with libtpu, instead of
        mesh, shard and sharding_rules; the choice is in `Artifact.compile_report
        ["auto_shard"]`, the planner's progress on the "tpuc" logger at INFO),
        specialize ("s77=8": sizes of a dynamic program), debug_outputs,
        weights_as_inputs (a model.json without weights: its parameters become inputs
        instead of zeros).
    Training (train=True): optimizer ("adamw", "adam", "sgd"), lr, betas, eps,
        weight_decay, momentum, dampening, nesterov, clip_grad_norm, schedule
        ("constant", "warmup-cosine", "warmup-linear") with warmup_steps, total_steps,
        min_lr_ratio, and freeze (state-dict name patterns), with torch.optim's formulas
        and defaults; the loaded program's `step(*batch)` trains.

    Raises CompileError (with .node, .op, .hint) for a program tpuc cannot compile
    exactly, TypeError/OptionError (a ValueError) for options of the wrong type or
    value, KeyboardInterrupt on Ctrl-C (no artifact is left behind).
    """
    opts = _check_options(options)
    work = tempfile.TemporaryDirectory(prefix="tpuc-")
    try:
        source = _source(model, args, kwargs, dynamic_shapes, bool(opts.get("train")), work.name)
        if output is None:
            out_dir = tempfile.TemporaryDirectory(prefix="tpuc-artifact-")
            target = os.path.join(out_dir.name, "model.tpuc")
        else:
            out_dir = None
            target = os.fspath(output)
        report = _tpuc.compile(source, target, opts)
        return Artifact(target, report, out_dir)
    finally:
        work.cleanup()


def _source(model, args, kwargs, dynamic_shapes, train: bool, work: str) -> str:
    """The path of `model` as the compiler reads it: a module exported and an
    ExportedProgram saved into `work`, a path as it is."""
    if args is not None and not isinstance(args, (tuple, list)):
        args = (args,)
    if isinstance(model, (str, os.PathLike)):
        source = os.fspath(model)
        if train and not source.endswith((".pt2", ".json")):
            raise ValueError(f"{source}: expected a .pt2 archive or a model.json")
        return source
    import torch

    if isinstance(model, torch.export.ExportedProgram):
        ep = model
        if train and not any(s.kind.name == "LOSS_OUTPUT" for s in ep.graph_signature.output_specs):
            from torch.export.experimental import _export_forward_backward

            ep = _export_forward_backward(ep, joint_loss_index=0)
    elif isinstance(model, torch.nn.Module):
        ep = _export(model, args, kwargs, dynamic_shapes, train)
    else:
        raise TypeError(f"model: expected an nn.Module, an ExportedProgram or a path, got {type(model).__name__}")
    source = os.path.join(work, "model.pt2")
    torch.export.save(ep, source)
    return source


def plan(model, args=(), kwargs=None, *, dynamic_shapes=None, topology, axes=None, top=3, **options) -> dict:
    """The sharding plans `tpuc plan` weighs for a TPU slice, without a TPU.

    model, args, kwargs, dynamic_shapes: as `compile` takes them. topology: the slice
    ("v5e:2x4"). axes: the mesh axes candidates may use (default all of "dp", "fsdp",
    "ep", "tp"); top: how many candidates libtpu compiles per round (each in a child
    Python). options: `compile`'s options that do not fix the mesh (libtpu,
    matmul_precision, sharding_format, weights_as_inputs, ...).

    Returns the table of `tpuc plan --json`: {"target", "devices",
    "hbm_bytes_per_device", "plans": [{"mesh", "strategies", "chosen", "skipped",
    "estimate_bytes", "traffic_bytes", "measured", "cached"}]}, the chosen plan (the
    best that fits; none when nothing does) marked. Compile it with
    `compile(model, args, topology=..., mesh=p["mesh"], shard=p["strategies"])`, or let
    `compile(..., auto_shard=True)` choose. Progress goes to the "tpuc" logger (INFO).
    """
    opts = _check_options({"topology": topology, **options}, "plan()")
    if isinstance(axes, str):
        axes = [a.strip() for a in axes.split(",") if a.strip()]
    if axes is not None and not all(isinstance(a, str) for a in axes):
        raise TypeError("axes: expected a list of axis names (dp, fsdp, ep, tp)")
    if isinstance(top, bool) or not isinstance(top, int):
        raise TypeError(f"top: expected an int, got {type(top).__name__}")
    if top < 1:
        raise OptionError(f"top: {top} is not at least 1")
    work = tempfile.TemporaryDirectory(prefix="tpuc-")
    try:
        source = _source(model, args, kwargs, dynamic_shapes, bool(opts.get("train")), work.name)
        return json.loads(_tpuc.plan(source, opts, list(axes) if axes is not None else None, top))
    finally:
        work.cleanup()


def find_plugin(plugin: str | None = None) -> str:
    """The PJRT plugin `load` uses: `plugin` if given, else $TPUC_PJRT_PLUGIN, the CPU
    plugin this package depends on, then what `tpuc devices` finds."""
    if plugin is not None:
        return _tpuc.find_plugin(os.fspath(plugin))
    if os.environ.get("TPUC_PJRT_PLUGIN"):
        return _tpuc.find_plugin(None)
    try:
        import importlib.util

        spec = importlib.util.find_spec("lammps_jax_pjrt_cpu")
        if spec is not None and spec.submodule_search_locations:
            candidate = os.path.join(list(spec.submodule_search_locations)[0], "pjrt_c_api_cpu_plugin.so")
            if os.path.isfile(candidate):
                return candidate
    except (ImportError, ValueError):
        pass
    return _tpuc.find_plugin(None)


class Program:
    """A loaded artifact, ready to run: `program(*tensors)` takes torch tensors (or numpy
    arrays) and returns torch tensors (numpy for numpy in). A stateful program (a
    KV-cache decode step) carries its state across calls: `reset_state()`, `state()`,
    `load_state(dict)`. A training step (compiled with train=True) trains with
    `step(*batch)`; `state_dict()`, `save_checkpoint(dir)`, `load_checkpoint(dir)`."""

    def __init__(self, artifact, plugin=None, devices=None, cache=True):
        if devices is not None:
            if isinstance(devices, bool) or not isinstance(devices, int):
                raise TypeError(f"devices: expected an int, got {type(devices).__name__}")
            if devices < 1:
                raise OptionError(f"devices: {devices} is not a device count (at least 1)")
        self.artifact = artifact if isinstance(artifact, Artifact) else Artifact(os.fspath(artifact))
        self._native = _tpuc.NativeProgram(self.artifact.path, find_plugin(plugin), devices, cache)
        self._inputs = self._native.inputs()
        self._outputs = self._native.outputs()
        m = self.artifact.manifest
        self._dynamic = m.get("dynamic") is not None
        self.training = m.get("training")

    def __repr__(self) -> str:
        ins = ", ".join(f"{n}: {d}{s}" for n, d, s in self._inputs)
        return f"tpuc.Program({self.artifact.path!r}; {ins})"

    @property
    def inputs(self):
        """[(name, dtype, shape)] of the inputs, in order."""
        return list(self._inputs)

    @property
    def outputs(self):
        """[(name, dtype, shape)] of the outputs, in order."""
        return list(self._outputs)

    def _gather(self, args, kwargs):
        names = [n for n, _, _ in self._inputs]
        values = list(args)
        if len(values) > len(names):
            raise InputError(f"expected {len(names)} input(s) ({', '.join(names)}), got {len(values)}")
        for name in names[len(values):]:
            if name not in kwargs:
                raise InputError(
                    f"missing input `{name}` (the program takes {', '.join(names)}; got {len(values)} "
                    f"positional and {sorted(kwargs)} by name)"
                )
            values.append(kwargs.pop(name))
        if kwargs:
            raise InputError(f"unknown input(s) {sorted(kwargs)} (the program takes {', '.join(names)})")
        return values

    def __call__(self, *args, **kwargs):
        if self.training:
            raise RuntimeError("this program is a training step: call program.step(*batch), which returns the loss")
        if not kwargs and not self._dynamic:
            # Host tensors of exactly the input dtypes and shapes: read and allocated
            # natively (a few attribute reads per tensor); None sends everything else
            # down the general path below.
            out = self._native.call(args)
            if out is not None:
                return out
        values = self._gather(args, dict(kwargs))
        views, keep = to_views(values, self._inputs)
        numpy_out = wants_numpy(values)
        if self._dynamic:
            out = self._native.run(views)
            del keep
            return _single([from_host(d, s, b, numpy_out) for d, s, b in out])
        outs = [empty(d, s, numpy_out) for _, d, s in self._outputs]
        self._native.run_into(views, [o[1] for o in outs])
        del keep
        return _single([o[0] for o in outs])

    def reset_state(self):
        """Back to the artifact's initial state (a KV cache emptied)."""
        self._native.reset_state()

    def state(self, numpy=False):
        """The state (a KV cache, BatchNorm statistics) by argument name."""
        return {n: from_host(*self._native.read_state(n), numpy) for n in self._native.state_names()}

    def load_state(self, values: dict):
        """Replaces state values (by argument name, as `state()` names them)."""
        names = self._native.state_names()
        for name, value in values.items():
            if name not in names:
                raise InputError(f"`{name}` is not state of this program (state: {', '.join(names) or 'none'})")
            arg = next(a for a in self.artifact.manifest["arguments"] if a["name"] == name)
            views, keep = to_views([value], [(name, arg["dtype"], arg["shape"])])
            self._native.write_state(name, views[0])
            del keep

    # ---- training ----

    def step(self, *args, **kwargs):
        """One training step on a batch: forward, backward and update on the device.
        Returns a StepReport (step, loss, grad_norm, lr, seconds)."""
        values = self._gather(args, dict(kwargs))
        views, keep = to_views(values, self._inputs)
        step, loss, grad_norm, lr, seconds = self._native.step(views)
        del keep
        return StepReport(step, loss, grad_norm, lr, seconds)

    def state_dict(self, numpy=False):
        """The parameters and buffers under their state-dict names, as they are now
        (what `model.load_state_dict` takes)."""
        return {name: from_host(d, s, b, numpy) for name, d, s, b in self._native.parameters()}

    def save_checkpoint(self, directory):
        """Writes a checkpoint (model.safetensors, optimizer.safetensors,
        checkpoint.json) atomically, as `tpuc train --checkpoint` does."""
        self._native.save_checkpoint(os.fspath(directory))

    def load_checkpoint(self, directory):
        """Continues from a checkpoint of this program (refused, by name, for another's)."""
        self._native.load_checkpoint(os.fspath(directory))

    @property
    def steps_taken(self) -> int:
        return self._native.steps_taken()


class StepReport(tuple):
    """What a training step reports: step (from 1), loss, grad_norm (before clipping),
    lr, seconds."""

    __slots__ = ()

    def __new__(cls, step, loss, grad_norm, lr, seconds):
        return super().__new__(cls, (step, loss, grad_norm, lr, seconds))

    step = property(lambda self: self[0])
    loss = property(lambda self: self[1])
    grad_norm = property(lambda self: self[2])
    lr = property(lambda self: self[3])
    seconds = property(lambda self: self[4])

    def __repr__(self):
        return (
            f"StepReport(step={self.step}, loss={self.loss:.6g}, grad_norm={self.grad_norm:.4g}, "
            f"lr={self.lr:.3g}, seconds={self.seconds:.4g})"
        )


def _single(outputs):
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


def load(path_or_artifact, plugin=None, devices=None, cache=True) -> Program:
    """Loads an artifact (a path, or an Artifact from `compile`) on a PJRT plugin: the
    one `plugin` names (CUDA, TPU, Neuron .so), else the CPU plugin. `devices`: how
    many devices the CPU plugin makes (a sharded artifact gets its mesh's)."""
    return Program(path_or_artifact, plugin=plugin, devices=devices, cache=cache)


def generate(program: Program, prompt_ids, max_new_tokens: int = 16):
    """Greedy decoding with a static-KV-cache decode step (transformers'
    `convert_and_export_with_cache` form: inputs `input_ids` [1, 1] and `cache_position`
    [1]): the prompt fed token by token, then the argmax of each step's logits. Returns
    the new token ids (a list), as `model.generate(do_sample=False)` gives them after
    the prompt."""
    import numpy as np

    names = [n for n, _, _ in program.inputs]
    if names != ["input_ids", "cache_position"]:
        raise InputError(f"generate() needs a decode step taking input_ids and cache_position, not {names}")
    ids = np.asarray(getattr(prompt_ids, "numpy", lambda: prompt_ids)()).reshape(-1).tolist()
    if not ids:
        raise InputError("generate() needs at least one prompt token")
    if not isinstance(max_new_tokens, int) or max_new_tokens < 0:
        raise InputError(f"max_new_tokens must be a non-negative int, not {max_new_tokens!r}")
    id_dtype = program.inputs[0][1]
    pos_dtype = program.inputs[1][1]
    np_dtype = {"i64": np.int64, "i32": np.int32}
    program.reset_state()
    logits = None
    for pos, token in enumerate(ids):
        logits = program(
            np.array([[token]], dtype=np_dtype[id_dtype]), np.array([pos], dtype=np_dtype[pos_dtype])
        )
    out = []
    for k in range(max_new_tokens):
        logits = logits[0] if isinstance(logits, tuple) else logits
        nxt = int(np.argmax(np.asarray(logits).reshape(-1, np.asarray(logits).shape[-1])[-1]))
        out.append(nxt)
        if k + 1 < max_new_tokens:
            logits = program(
                np.array([[nxt]], dtype=np_dtype[id_dtype]),
                np.array([len(ids) + k], dtype=np_dtype[pos_dtype]),
            )
    return out
