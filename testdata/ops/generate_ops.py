#!/usr/bin/env python3
"""Generate tpuc's op-level suite: one-op exported programs for every Core ATen overload.

PyTorch tags a set of operator overloads as Core ATen (`torch.Tag.core in op.tags`).
For every one of them this script either generates a few cases or lists it as
excluded, with a category and a reason (see README.md next to this file):

  testdata/ops/index.json
      core_overloads   every Core ATen overload, sorted ("aten.add.Tensor", ...)
      excluded         [{op, category, reason}]: not inference-relevant
      notes            [{op, note}]: partial coverage worth knowing
      cases            [{id, op, dir, dtype, description, decomposed, [replaced_by],
                         [ep_vs_eager_max_diff, ep_mismatch]}] (one line per case)
      eager_unsupported [{case, dtype, error}]: combinations PyTorch eager rejects
                       (skipped: no reference exists)
      generation_errors [{case, dtype, error}]: cases that could not be exported or
                       whose exported program disagrees with eager (none expected)
  testdata/ops/cases/<op_overload>/<case>/model.json         ExportedProgram JSON
                                          (after run_decompositions(); node
                                          metadata stripped to {})
  testdata/ops/cases/<op_overload>/<case>/inputs/<i>_<name>.npy
  testdata/ops/cases/<op_overload>/<case>/expected/<i>.npy   eager outputs

Usage:
  python3 testdata/ops/generate_ops.py               # every overload
  python3 testdata/ops/generate_ops.py add sin.default aten.max.dim   # only these
  python3 testdata/ops/generate_ops.py -j 8          # in 8 processes
  python3 testdata/ops/generate_ops.py --list        # overloads and their case count

An op name is an overload ("add.Tensor", "aten.add.Tensor", "abs.default") or a
packet ("add": all of its Core ATen overloads). Regenerating a subset rewrites
only those ops' case directories and their entries in index.json.

Deterministic: every case's inputs come from torch.manual_seed(crc32(case id)),
torch runs on one thread, and the files are written in a fixed form, so the same
torch version gives byte-identical files whether the whole suite or a subset is
regenerated, in one process or several.
"""

from __future__ import annotations

import io
import json
import math
import os
import shutil
import sys
import zipfile
import zlib

import numpy as np
import torch
import torch.nn as nn
import torch.utils._pytree as pytree

HERE = os.path.dirname(os.path.abspath(__file__))
CASES_DIR = os.path.join(HERE, "cases")
INDEX = os.path.join(HERE, "index.json")

A = torch.ops.aten
NAN, INF = float("nan"), float("inf")

# --------------------------------------------------------------------------
# Dtypes
# --------------------------------------------------------------------------

TD = {
    "f32": torch.float32,
    "f16": torch.float16,
    "bf16": torch.bfloat16,
    "f64": torch.float64,
    "i8": torch.int8,
    "i16": torch.int16,
    "i32": torch.int32,
    "i64": torch.int64,
    "u8": torch.uint8,
    "bool": torch.bool,
}
DT_NAME = {v: k for k, v in TD.items()}
ALL = list(TD)
FLOAT = ["f32", "f16", "bf16", "f64"]
INT = ["i8", "i16", "i32", "i64", "u8"]
INTB = INT + ["bool"]
NP = {
    torch.float32: np.float32,
    torch.float16: np.float16,
    torch.float64: np.float64,
    torch.int8: np.int8,
    torch.int16: np.int16,
    torch.int32: np.int32,
    torch.int64: np.int64,
    torch.uint8: np.uint8,
    torch.bool: np.bool_,
    torch.complex64: np.complex64,
    torch.complex128: np.complex128,
}

# Tolerances for "ep.module() agrees with eager" (normally bit-exact: the same kernels run).
TOL = {torch.float32: 1e-5, torch.float64: 1e-10, torch.float16: 1e-3, torch.bfloat16: 1e-2}

# --------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------

# NaN, infinities, signed zeros, halfway values, overflow-prone and tiny values.
SPECIALS = [NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0, 0.5, -1.5, 2.5, 1e-3, 100.0]


def _is_float(dt):
    return TD[dt].is_floating_point


def T(shape, dt="f32", kind="normal"):
    """A random tensor of logical dtype `dt` (a TD key). kinds:
    normal   floats ~ N(0, 2); ints in [-5, 5] ([0, 10] for u8); random bools
    pos      floats in [0.25, 4); ints in [1, 7]; True
    unit     floats in (-0.9, 0.9); ints in {-1, 0, 1} ({0, 1} for u8)
    ge1      floats in [1.1, 4); ints in [1, 4]
    nonzero  |x| in [0.5, 4) with random sign; ints in [-5, 5] without 0 ([1, 10] for u8); True
    expo     exponents: floats in [-2, 3); ints in [0, 3]
    distinct no two equal values (random permutation, scaled for floats)
    special  SPECIALS tiled (floats only)
    """
    shape = tuple(shape)
    n = int(np.prod(shape)) if shape else 1
    d = TD[dt]
    if kind == "special":
        assert d.is_floating_point, dt
        vals = [SPECIALS[i % len(SPECIALS)] for i in range(n)]
        return torch.tensor(vals, dtype=torch.float32).reshape(shape).to(d)
    if kind == "distinct":
        perm = torch.randperm(n)
        if d == torch.bool:  # each row of the last dim (size <= 2) a permutation of [True, False]
            last = shape[-1] if shape else 1
            assert last <= 2, shape
            rows = [torch.randperm(last) == 0 for _ in range(n // last)]
            return torch.stack(rows).reshape(shape) if rows else torch.zeros(shape, dtype=torch.bool)
        if d == torch.uint8:
            return perm.reshape(shape).to(d)
        v = perm - n // 2
        if d.is_floating_point:
            return (v.to(torch.float32) * 0.75).reshape(shape).to(d)
        return v.reshape(shape).to(d)
    if d == torch.bool:
        if kind in ("pos", "nonzero", "ge1"):
            return torch.ones(shape, dtype=torch.bool)
        return torch.randint(0, 2, shape).bool()
    if d.is_floating_point:
        if kind == "normal":
            x = torch.randn(shape) * 2.0
        elif kind == "pos":
            x = torch.rand(shape) * 3.75 + 0.25
        elif kind == "unit":
            x = (torch.rand(shape) * 2.0 - 1.0) * 0.9
        elif kind == "ge1":
            x = torch.rand(shape) * 2.9 + 1.1
        elif kind == "nonzero":
            s = torch.randint(0, 2, shape).float() * 2 - 1
            x = s * (torch.rand(shape) * 3.5 + 0.5)
        elif kind == "expo":
            x = torch.rand(shape) * 5.0 - 2.0
        else:
            raise ValueError(kind)
        return x.to(d)
    unsigned = d == torch.uint8
    if kind == "normal":
        x = torch.randint(0, 11, shape) if unsigned else torch.randint(-5, 6, shape)
    elif kind == "pos":
        x = torch.randint(1, 8, shape)
    elif kind == "unit":
        x = torch.randint(0, 2, shape) if unsigned else torch.randint(-1, 2, shape)
    elif kind == "ge1":
        x = torch.randint(1, 5, shape)
    elif kind == "nonzero":
        if unsigned:
            x = torch.randint(1, 11, shape)
        else:
            x = torch.randint(1, 6, shape) * (torch.randint(0, 2, shape) * 2 - 1)
    elif kind == "expo":
        x = torch.randint(0, 4, shape)
    else:
        raise ValueError(kind)
    return x.to(d)


def I(vals, dt="i64"):
    """An index (or any literal) tensor."""
    return torch.tensor(vals, dtype=TD[dt])


def perm_index(rows, n, k, dim_last=True):
    """[rows, k] int64 indices, each row k distinct values in [0, n)."""
    return torch.stack([torch.randperm(n)[:k] for _ in range(rows)])


# --------------------------------------------------------------------------
# Case registry
# --------------------------------------------------------------------------


class Case:
    """One case: `make()` (called after seeding) returns (fn, [(arg name, tensor)]),
    tensors in their logical dtype (bf16 allowed)."""

    def __init__(self, name, dtype, desc, make):
        self.name, self.dtype, self.desc, self.make = name, dtype, desc, make


BUILDERS = {}  # "aten.add.Tensor" -> function returning a list of Case
EXCLUDED = {}  # "aten.rand.default" -> (category, reason)
NOTES = {}  # op -> note


def ov(name):
    """'add.Tensor' / 'abs' (default) -> the OpOverload."""
    packet, _, overload = name.partition(".")
    return getattr(getattr(A, packet), overload or "default")


def opname(op):
    return str(op)  # "aten.add.Tensor", "aten.abs.default"


def register(name, builder):
    key = opname(ov(name))
    assert key not in BUILDERS, key
    BUILDERS[key] = builder


def cases(name):
    """Decorator: the function returns/yields Case objects for overload `name`."""

    def deco(f):
        register(name, lambda: list(f()))
        return f

    return deco


def exclude(name, category, reason):
    EXCLUDED[opname(ov(name))] = (category, reason)


def C(name, dtype, desc, make):
    return Case(name, dtype, desc, make)


def sweep(dtypes, desc, make):
    """One case per dtype, named by the dtype: make(dt) -> (fn, inputs)."""
    return [C(dt, dt, desc.format(dt=dt), (lambda dt=dt: make(dt))) for dt in dtypes]


# --------------------------------------------------------------------------
# Exclusions: every Core ATen overload that gets no case
# --------------------------------------------------------------------------

for _n in [
    "_adaptive_avg_pool2d_backward",
    "avg_pool2d_backward",
    "embedding_dense_backward",
    "native_group_norm_backward",
    "native_layer_norm_backward",
]:
    exclude(
        _n,
        "training",
        "backward op: torch.export's joint (training) graphs decompose it (measured on "
        "testdata/training); convolution_backward and max_pool2d_with_indices_backward, "
        "which they keep, have cases",
    )
for _n in ["rand", "randn", "randperm"]:
    exclude(
        _n,
        "random",
        "random values: no reference output to compare against; an inference graph "
        "does not draw random numbers (lowering needs a deterministic RNG, e.g. rng_bit_generator)",
    )
exclude(
    "_native_batch_norm_legit",
    "training",
    "mutates running_mean/running_var (Tensor(a!)): functionalization turns it into the "
    "non-core aten._native_batch_norm_legit_functional, so it never appears in an exported "
    "graph; eval-mode BatchNorm exports as _native_batch_norm_legit_no_training (covered)",
)
for _n, _why in [
    ("sym_size.int", "returns a SymInt (symbolic size); only in graphs with dynamic shapes"),
    ("sym_numel", "returns a SymInt (symbolic numel); only in graphs with dynamic shapes"),
    ("sym_stride.int", "returns a SymInt (symbolic stride); only in graphs with dynamic shapes"),
    ("sym_storage_offset", "returns a SymInt; only in graphs with dynamic shapes"),
    (
        "_local_scalar_dense",
        "Tensor.item(): returns a Python scalar (unbacked SymInt/SymFloat) that feeds "
        "data-dependent control or shapes; belongs to the dynamic-shape work",
    ),
]:
    exclude(_n, "dynamic-shape", _why)
exclude(
    "nonzero",
    "data-dependent-shape",
    "output shape [count of nonzero, ndim] depends on the input values (unbacked SymInt); "
    "not expressible with static shapes",
)
exclude(
    "atan2.out",
    "out-variant",
    "out= variant writes into a preallocated tensor; functionalization turns it into "
    "aten.atan2.default (covered), so it never appears in an exported graph",
)

NOTES["aten.native_dropout.default"] = (
    "cases use train=False (deterministic: identity + all-true mask), what an inference "
    "graph can hold; train=True is random and not covered"
)
NOTES["aten._native_batch_norm_legit.no_stats"] = (
    "training=True here means batch statistics (InstanceNorm / BatchNorm without running "
    "stats in eval); deterministic"
)
NOTES["aten._embedding_bag.default"] = (
    "only output 0 is returned (offset2bag/bag_size/max_indices are backward helpers)"
)
NOTES["aten.empty.memory_format"] = (
    "values are uninitialised: cases fill the result (fill.Scalar -> full_like) or use a size-0 shape"
)
NOTES["aten.empty_strided.default"] = NOTES["aten.empty.memory_format"]
NOTES["*"] = (
    "non-contiguous inputs cannot be expressed: exported programs take contiguous inputs "
    "(npy files are C-order); strided views are exercised inside graphs instead "
    "(permute/slice/as_strided before the op: the 'permuted_*' and 'strided_*' cases)"
)

# --------------------------------------------------------------------------
# Families
# --------------------------------------------------------------------------


def unary(name, kind="normal", dtypes=ALL, edge="f32", special=True, args=(), kw=None,
          permuted=False, extra=()):
    op = ov(name)
    kw = kw or {}

    def f(x):
        return op(x, *args, **kw)

    def build():
        cs = sweep(dtypes, f"{name} on [3,4] {{dt}} ({kind} values)", lambda dt: (f, [("x", T((3, 4), dt, kind))]))
        if special and _is_float(edge):
            cs.append(C(f"special_{edge}", edge, "NaN, +-inf, +-0, halfway and large values",
                        lambda: (f, [("x", T((3, 4), edge, "special"))])))
        cs.append(C(f"0d_{edge}", edge, "0-d (scalar) tensor", lambda: (f, [("x", T((), edge, kind))])))
        cs.append(C(f"empty_{edge}", edge, "size-0 dim [0,4]", lambda: (f, [("x", T((0, 4), edge, kind))])))
        if permuted:
            cs.append(C(f"permuted_{edge}", edge, "input permuted inside the graph (strided view) before the op",
                        lambda: (lambda x: op(A.permute.default(x, [1, 0]), *args, **kw),
                                 [("x", T((4, 3), edge, kind))])))
        cs.extend(extra)
        return cs

    register(name, build)


LITE_PROMOTE = {"promote_i32_f32", "promote_f16_0d_f64", "promote_u8_i8"}


def binary(name, kinds=("normal", "normal"), dtypes=ALL, edge="f32", special=True, kw=None,
           promote=True, extra=(), lite=False):
    """Tensor-Tensor elementwise op."""
    op = ov(name)
    kw = kw or {}
    ka, kb = kinds

    def f(a, b):
        return op(a, b, **kw)

    def build():
        cs = sweep(dtypes, f"{name}: [3,4] {{dt}} with [3,4] {{dt}}",
                   lambda dt: (f, [("a", T((3, 4), dt, ka)), ("b", T((3, 4), dt, kb))]))
        e = edge
        cs += [
            C(f"bcast_{e}", e, "broadcasting [2,1,4] with [3,1] -> [2,3,4]",
              lambda: (f, [("a", T((2, 1, 4), e, ka)), ("b", T((3, 1), e, kb))])),
            C(f"bcast_0d_{e}", e, "[3,4] with a 0-d tensor",
              lambda: (f, [("a", T((3, 4), e, ka)), ("b", T((), e, kb))])),
            C(f"0d_lhs_{e}", e, "0-d tensor with [4]",
              lambda: (f, [("a", T((), e, ka)), ("b", T((4,), e, kb))])),
            C(f"empty_{e}", e, "size-0 dim: [0,4] with [4]",
              lambda: (f, [("a", T((0, 4), e, ka)), ("b", T((4,), e, kb))])),
        ]
        if special and _is_float(e):
            cs.append(C(f"special_{e}", e, "NaN/inf/signed-zero operands against each other",
                        lambda: (f, [("a", T((3, 4), e, "special")),
                                     ("b", T((3, 4), e, "special").roll(5))])))
        if promote:
            cs += [
                C("promote_i32_f32", "mixed", "type promotion: i32 [3,4] with f32 [4] -> f32",
                  lambda: (f, [("a", T((3, 4), "i32", ka)), ("b", T((4,), "f32", kb))])),
                C("promote_f16_0d_f64", "mixed", "f16 [3,4] with 0-d f64: a 0-d tensor does not promote -> f16",
                  lambda: (f, [("a", T((3, 4), "f16", ka)), ("b", T((), "f64", kb))])),
                C("promote_i8_0d_i64", "mixed", "i8 [3,4] with 0-d i64 -> i8",
                  lambda: (f, [("a", T((3, 4), "i8", ka)), ("b", T((), "i64", kb))])),
                C("promote_i32_0d_f64", "mixed", "i32 [3,4] with 0-d f64 -> f32 (default float dtype)",
                  lambda: (f, [("a", T((3, 4), "i32", ka)), ("b", T((), "f64", kb))])),
                C("promote_u8_i8", "mixed", "u8 with i8 -> i16",
                  lambda: (f, [("a", T((3, 4), "u8", ka)), ("b", T((3, 4), "i8", kb))])),
                C("promote_bool_i32", "mixed", "bool with i32 -> i32",
                  lambda: (f, [("a", T((3, 4), "bool", ka)), ("b", T((3, 4), "i32", kb))])),
                C("promote_bf16_f16", "mixed", "bf16 with f16 -> f32",
                  lambda: (f, [("a", T((3, 4), "bf16", ka)), ("b", T((3, 4), "f16", kb))])),
            ]
        if lite:  # comparisons / logical ops: fewer promotion and shape variants
            cs = [c for c in cs if not (c.name.startswith("promote_") and c.name not in LITE_PROMOTE) and not c.name.startswith("0d_lhs")]
        cs.extend(extra)
        return cs

    register(name, build)


def binary_scalar(name, scalar=2, kind="normal", dtypes=ALL, edge="f32", special=True,
                  float_scalar=2.5, neg_scalar=-3, kw=None, extra=(), lite=False):
    """Tensor-Scalar elementwise op (the scalar is a Python number in the graph)."""
    op = ov(name)
    kw = kw or {}

    def fs(s):
        return lambda x: op(x, s, **kw)

    def build():
        cs = sweep(dtypes, f"{name}(x [3,4] {{dt}}, {scalar!r})", lambda dt: (fs(scalar), [("x", T((3, 4), dt, kind))]))
        e = edge
        if float_scalar is not None:
            cs += [
                C("float_scalar_i32", "mixed", f"i32 tensor with float scalar {float_scalar!r} -> f32",
                  lambda: (fs(float_scalar), [("x", T((3, 4), "i32", kind))])),
                C("float_scalar_f16", "f16", f"f16 tensor with float scalar {float_scalar!r} stays f16",
                  lambda: (fs(float_scalar), [("x", T((3, 4), "f16", kind))])),
                C("float_scalar_bool", "mixed", f"bool tensor with float scalar {float_scalar!r} -> f32",
                  lambda: (fs(float_scalar), [("x", T((3, 4), "bool", kind))])),
            ]
        if neg_scalar is not None:
            cs.append(C(f"neg_scalar_{e}", e, f"negative scalar {neg_scalar!r}",
                        lambda: (fs(neg_scalar), [("x", T((3, 4), e, kind))])))
            if e != "i32":
                cs.append(C("neg_scalar_i32", "i32", f"i32 tensor, negative scalar {neg_scalar!r}",
                            lambda: (fs(neg_scalar), [("x", T((3, 4), "i32", kind))])))
        cs.append(C("int_scalar_u8", "u8", f"u8 tensor with int scalar {scalar!r} stays u8",
                    lambda: (fs(scalar), [("x", T((3, 4), "u8", kind))])))
        if special and _is_float(e):
            cs.append(C(f"special_{e}", e, "NaN/inf/signed-zero tensor values",
                        lambda: (fs(float_scalar if float_scalar is not None else scalar),
                                 [("x", T((3, 4), e, "special"))])))
            cs.append(C(f"inf_scalar_{e}", e, "scalar = inf",
                        lambda: (fs(INF), [("x", T((3, 4), e, kind))])))
            cs.append(C(f"nan_scalar_{e}", e, "scalar = NaN (serialized into the graph)",
                        lambda: (fs(NAN), [("x", T((3, 4), e, kind))])))
        cs.append(C(f"0d_{e}", e, "0-d tensor", lambda: (fs(scalar), [("x", T((), e, kind))])))
        cs.append(C(f"empty_{e}", e, "size-0 dim [2,0]", lambda: (fs(scalar), [("x", T((2, 0), e, kind))])))
        if lite:  # comparisons: fewer variants
            cs = [c for c in cs if c.name not in ("float_scalar_bool", "int_scalar_u8", f"inf_scalar_{e}")]
        cs.extend(extra)
        return cs

    register(name, build)


# ---- unary math -----------------------------------------------------------

unary("abs", permuted=True)
unary("acos", kind="unit")
unary("acosh", kind="ge1")
unary("asin", kind="unit")
unary("asinh")
unary("atan")
unary("atanh", kind="unit")
unary("ceil")
unary("cos")
unary("cosh")
unary("erf")
unary("exp", permuted=True)
unary("expm1")
unary("floor")
unary("log", kind="pos")
unary("log10", kind="pos")
unary("log1p", kind="pos")
unary("log2", kind="pos")
unary("neg", permuted=True)
unary("reciprocal", kind="nonzero")
unary(
    "round",
    extra=[C("halfway_f32", "f32", "halfway values round to even: +-0.5, 1.5, 2.5, -2.5, 3.5 ...",
             lambda: (lambda x: A.round.default(x),
                      [("x", torch.tensor([[0.5, 1.5, 2.5, 3.5], [-0.5, -1.5, -2.5, -3.5], [0.49999997, 2.5000002, 1e7 + 0.5, -4.5]]))]))],
)
unary("rsqrt", kind="pos")
unary("sigmoid", permuted=True)
unary("sign")
unary("sin", permuted=True)
unary("sinh")
unary("sqrt", kind="pos")
unary("tan", kind="unit")
unary("tanh")
unary("trunc")
unary("bitwise_not", edge="i32", special=False,
      extra=[C("0d_bool", "bool", "0-d bool", lambda: (A.bitwise_not.default, [("x", I(True, "bool"))]))])
unary("logical_not")
unary("isinf")
unary("isnan")
unary("relu", permuted=True)
unary("gelu",
      extra=[C("tanh_" + dt, dt, "approximate='tanh'",
               (lambda dt=dt: (lambda x: A.gelu.default(x, approximate="tanh"), [("x", T((3, 4), dt))])))
             for dt in FLOAT])
unary("elu",
      extra=[C("params_f32", "f32", "alpha=0.5, scale=2.0, input_scale=1.5",
               lambda: (lambda x: A.elu.default(x, 0.5, 2.0, 1.5), [("x", T((3, 4)))])),
             C("selu_params_bf16", "bf16", "SELU constants",
               lambda: (lambda x: A.elu.default(x, 1.6732632423543772, 1.0507009873554805, 1),
                        [("x", T((3, 4), "bf16"))]))])
unary("hardtanh",
      extra=[C("bounds_f32", "f32", "min_val=-2, max_val=0.5",
               lambda: (lambda x: A.hardtanh.default(x, -2.0, 0.5), [("x", T((3, 4)))])),
             C("relu6_i32", "i32", "hardtanh(x, 0, 6) on ints (ReLU6)",
               lambda: (lambda x: A.hardtanh.default(x, 0, 6), [("x", T((3, 4), "i32") * 2)]))])
unary("leaky_relu",
      extra=[C("slope_f32", "f32", "negative_slope=0.2",
               lambda: (lambda x: A.leaky_relu.default(x, 0.2), [("x", T((3, 4)))])),
             C("neg_slope_f32", "f32", "negative_slope=-0.5",
               lambda: (lambda x: A.leaky_relu.default(x, -0.5), [("x", T((3, 4)))]))])

# ---- binary ---------------------------------------------------------------

binary("add.Tensor",
       extra=[C("alpha_f32", "f32", "alpha=2.5", lambda: (lambda a, b: A.add.Tensor(a, b, alpha=2.5), [("a", T((3, 4))), ("b", T((4,)))])),
              C("alpha_i32", "i32", "alpha=-3 on ints", lambda: (lambda a, b: A.add.Tensor(a, b, alpha=-3), [("a", T((3, 4), "i32")), ("b", T((3, 4), "i32"))])),
              C("overflow_i8", "i8", "i8 wraps around", lambda: (A.add.Tensor, [("a", I([[100, 127, -128]], "i8")), ("b", I([[100, 1, -1]], "i8"))]))])
binary("sub.Tensor",
       extra=[C("alpha_f32", "f32", "alpha=0.5", lambda: (lambda a, b: A.sub.Tensor(a, b, alpha=0.5), [("a", T((3, 4))), ("b", T((3, 4)))])),
              C("u8_underflow", "u8", "u8 wraps below 0", lambda: (A.sub.Tensor, [("a", I([[0, 1, 5]], "u8")), ("b", I([[1, 3, 2]], "u8"))]))])
binary("mul.Tensor",
       extra=[C("bool_bool", "bool", "bool * bool is logical and", lambda: (A.mul.Tensor, [("a", T((3, 4), "bool")), ("b", T((3, 4), "bool"))]))])
binary("div.Tensor", kinds=("normal", "nonzero"),
       extra=[C("int_true_div", "i64", "i64 / i64 -> f32 (true division)", lambda: (A.div.Tensor, [("a", T((3, 4), "i64")), ("b", T((3, 4), "i64", "nonzero"))])),
              C("by_zero_f32", "f32", "x / +-0 -> +-inf or NaN", lambda: (A.div.Tensor, [("a", I([[1.0, -1.0, 0.0, NAN]], "f32")), ("b", I([[0.0, 0.0, 0.0, -0.0]], "f32"))]))])
binary("atan2")
binary("maximum", extra=[C("nan_propagates_f32", "f32", "NaN in either operand propagates",
                           lambda: (A.maximum.default, [("a", I([NAN, 1.0, 2.0, -INF], "f32")), ("b", I([0.0, NAN, -1.0, INF], "f32"))]))])
binary("minimum", extra=[C("nan_propagates_f32", "f32", "NaN in either operand propagates",
                           lambda: (A.minimum.default, [("a", I([NAN, 1.0, 2.0, -INF], "f32")), ("b", I([0.0, NAN, -1.0, INF], "f32"))]))])
binary("fmod.Tensor", kinds=("normal", "nonzero"),
       extra=[C("neg_operands_i32", "i32", "fmod keeps the dividend's sign", lambda: (A.fmod.Tensor, [("a", I([[-7, 7, -7, 7]], "i32")), ("b", I([[3, -3, -3, 3]], "i32"))])),
              C("neg_operands_f32", "f32", "fmod keeps the dividend's sign", lambda: (A.fmod.Tensor, [("a", I([[-7.5, 7.5, -7.5, 7.5, 5.0]], "f32")), ("b", I([[2.0, -2.0, -2.0, 2.0, INF]], "f32"))]))])
binary("remainder.Tensor", kinds=("normal", "nonzero"),
       extra=[C("neg_operands_i32", "i32", "remainder takes the divisor's sign (Python %)", lambda: (A.remainder.Tensor, [("a", I([[-7, 7, -7, 7, 0]], "i32")), ("b", I([[3, -3, -3, 3, -2]], "i32"))])),
              C("neg_operands_f32", "f32", "remainder takes the divisor's sign", lambda: (A.remainder.Tensor, [("a", I([[-7.5, 7.5, -7.5, 7.5, 0.0, -1.0]], "f32")), ("b", I([[2.0, -2.0, -2.0, 2.0, -2.0, INF]], "f32"))]))])
binary("pow.Tensor_Tensor", kinds=("pos", "expo"),
       extra=[C("neg_base_f32", "f32", "negative base, integral and fractional exponents (NaN)",
                lambda: (A.pow.Tensor_Tensor, [("a", I([[-2.0, -2.0, -0.5, 0.0, 0.0, -8.0]], "f32")), ("b", I([[2.0, 3.0, 0.5, -1.0, 0.0, 1.0 / 3.0]], "f32"))])),
              C("int_neg_base", "i32", "negative int base, non-negative exponents",
                lambda: (A.pow.Tensor_Tensor, [("a", I([[-2, -3, 0, 5, -1]], "i32")), ("b", I([[3, 2, 0, 0, 7]], "i32"))]))])
for _n in ["bitwise_and.Tensor", "bitwise_or.Tensor", "bitwise_xor.Tensor"]:
    binary(_n, edge="i32", special=False, promote=False,
           extra=[C("promote_i32_i64", "mixed", "i32 with i64 -> i64",
                    (lambda _n=_n: (ov(_n), [("a", T((3, 4), "i32")), ("b", T((4,), "i64"))]))),
                  C("promote_bool_u8", "mixed", "bool with u8 -> u8",
                    (lambda _n=_n: (ov(_n), [("a", T((3, 4), "bool")), ("b", T((3, 4), "u8"))]))),
                  C("neg_i8", "i8", "negative values (two's complement)",
                    (lambda _n=_n: (ov(_n), [("a", I([[-1, -128, 127, -5]], "i8")), ("b", I([[5, -1, -1, 3]], "i8"))])))])
for _n in ["eq.Tensor", "ne.Tensor", "lt.Tensor", "le.Tensor", "gt.Tensor", "ge.Tensor"]:
    binary(_n, lite=True, extra=[C("ties_i32", "i32", "equal elements (ties)",
                        (lambda _n=_n: (ov(_n), [("a", I([[1, 2, 3, -1]], "i32")), ("b", I([[1, 3, 3, -2]], "i32"))])))])
for _n in ["logical_and", "logical_or", "logical_xor"]:
    binary(_n, lite=True)

# ---- tensor-scalar --------------------------------------------------------

binary_scalar("add.Scalar", extra=[C("alpha_f32", "f32", "alpha=-2", lambda: (lambda x: A.add.Scalar(x, 1.5, -2), [("x", T((3, 4)))]))])
binary_scalar("sub.Scalar", extra=[C("alpha_i32", "i32", "alpha=3", lambda: (lambda x: A.sub.Scalar(x, 2, 3), [("x", T((3, 4), "i32"))]))])
binary_scalar("mul.Scalar")
binary_scalar("div.Scalar", scalar=3, extra=[C("by_zero_f32", "f32", "division by 0.0", lambda: (lambda x: A.div.Scalar(x, 0.0), [("x", I([1.0, -1.0, 0.0, NAN], "f32"))]))])
binary_scalar("fmod.Scalar", scalar=3, float_scalar=1.5, neg_scalar=-3)
binary_scalar("remainder.Scalar", scalar=3, float_scalar=1.5, neg_scalar=-3)
binary_scalar("pow.Tensor_Scalar", scalar=2, kind="normal", float_scalar=0.5, neg_scalar=-1,
              extra=[C("cube_i32", "i32", "exponent 3 on ints", lambda: (lambda x: A.pow.Tensor_Scalar(x, 3), [("x", T((3, 4), "i32"))])),
                     C("zero_exp_f32", "f32", "exponent 0 (NaN ** 0 = 1)", lambda: (lambda x: A.pow.Tensor_Scalar(x, 0), [("x", T((3, 4), "f32", "special"))])),
                     C("float_exp_pos_f32", "f32", "exponent 2.5 on positive values", lambda: (lambda x: A.pow.Tensor_Scalar(x, 2.5), [("x", T((3, 4), "f32", "pos"))]))])
for _n in ["bitwise_and.Scalar", "bitwise_or.Scalar", "bitwise_xor.Scalar"]:
    binary_scalar(_n, scalar=5, edge="i32", special=False, float_scalar=None, neg_scalar=-3,
                  extra=[C("bool_true", "bool", "bool tensor with True",
                           (lambda _n=_n: (lambda x: ov(_n)(x, True), [("x", T((3, 4), "bool"))])))])
for _n in ["eq.Scalar", "ne.Scalar", "lt.Scalar", "le.Scalar", "gt.Scalar", "ge.Scalar"]:
    binary_scalar(_n, scalar=1, float_scalar=0.5, neg_scalar=-1, lite=True)

# div with rounding modes


@cases("div.Tensor_mode")
def _div_tensor_mode():
    for mode in ["trunc", "floor"]:
        f = (lambda m: lambda a, b: A.div.Tensor_mode(a, b, rounding_mode=m))(mode)
        yield from [C(f"{mode}_{dt}", dt, f"div rounding_mode={mode!r} on {dt}",
                      (lambda dt=dt, f=f: (f, [("a", T((3, 4), dt)), ("b", T((3, 4), dt, "nonzero"))]))) for dt in ALL]
        yield C(f"{mode}_neg_i32", "i32", f"{mode}: negative quotients on ints (-7/2, 7/-2, ...)",
                lambda f=f: (f, [("a", I([[-7, 7, -7, 7, -1, 0]], "i32")), ("b", I([[2, -2, -2, 2, 3, -3]], "i32"))]))
        yield C(f"{mode}_special_f32", "f32", f"{mode}: NaN/inf/zero divisors",
                lambda f=f: (f, [("a", T((3, 4), "f32", "special")), ("b", T((3, 4), "f32", "special").roll(3))]))
        yield C(f"{mode}_bcast_f32", "f32", f"{mode}: broadcasting [2,1,4] / [3,1]",
                lambda f=f: (f, [("a", T((2, 1, 4))), ("b", T((3, 1), "f32", "nonzero"))]))
        yield C(f"{mode}_promote_i32_f32", "mixed", f"{mode}: i32 / f32 -> f32",
                lambda f=f: (f, [("a", T((3, 4), "i32")), ("b", T((4,), "f32", "nonzero"))]))
    yield C("none_f32", "f32", "rounding_mode=None is true division",
            lambda: (lambda a, b: A.div.Tensor_mode(a, b, rounding_mode=None), [("a", T((3, 4))), ("b", T((3, 4), "f32", "nonzero"))]))
    yield C("none_i32", "i32", "rounding_mode=None on ints -> f32",
            lambda: (lambda a, b: A.div.Tensor_mode(a, b, rounding_mode=None), [("a", T((3, 4), "i32")), ("b", T((3, 4), "i32", "nonzero"))]))


@cases("div.Scalar_mode")
def _div_scalar_mode():
    for mode in ["trunc", "floor"]:
        yield from [C(f"{mode}_{dt}", dt, f"div(x, 3, rounding_mode={mode!r}) on {dt}",
                      (lambda dt=dt, mode=mode: (lambda x: A.div.Scalar_mode(x, 3, rounding_mode=mode), [("x", T((3, 4), dt))]))) for dt in ALL]
        yield C(f"{mode}_neg_scalar_i32", "i32", f"{mode}: divisor -2 on ints",
                lambda mode=mode: (lambda x: A.div.Scalar_mode(x, -2, rounding_mode=mode), [("x", I([[-7, 7, -1, 0, 5]], "i32"))]))
        yield C(f"{mode}_float_scalar_i64", "mixed", f"{mode}: i64 tensor, scalar 1.5 -> f32",
                lambda mode=mode: (lambda x: A.div.Scalar_mode(x, 1.5, rounding_mode=mode), [("x", T((3, 4), "i64"))]))
        yield C(f"{mode}_special_f32", "f32", f"{mode}: NaN/inf values",
                lambda mode=mode: (lambda x: A.div.Scalar_mode(x, -0.75, rounding_mode=mode), [("x", T((3, 4), "f32", "special"))]))
    yield C("none_f32", "f32", "rounding_mode=None",
            lambda: (lambda x: A.div.Scalar_mode(x, 3, rounding_mode=None), [("x", T((3, 4)))]))


@cases("pow.Scalar")
def _pow_scalar():
    yield from sweep(ALL, "pow(2, exponent [3,4] {dt})", lambda dt: (lambda e: A.pow.Scalar(2, e), [("e", T((3, 4), dt, "expo"))]))
    yield C("float_base_i32", "mixed", "pow(2.5, i32 exponents) -> f32", lambda: (lambda e: A.pow.Scalar(2.5, e), [("e", T((3, 4), "i32", "expo"))]))
    yield C("float_base_f16", "f16", "pow(0.5, f16) stays f16", lambda: (lambda e: A.pow.Scalar(0.5, e), [("e", T((3, 4), "f16", "expo"))]))
    yield C("neg_base_f32", "f32", "pow(-2.0, e): NaN for fractional e", lambda: (lambda e: A.pow.Scalar(-2.0, e), [("e", I([[2.0, 3.0, 0.5, -1.0, 0.0]], "f32"))]))
    yield C("zero_base_f32", "f32", "pow(0.0, e): inf for negative e", lambda: (lambda e: A.pow.Scalar(0.0, e), [("e", I([[2.0, 0.0, -1.0, -0.5, NAN]], "f32"))]))
    yield C("special_f32", "f32", "pow(1.5, NaN/inf...)", lambda: (lambda e: A.pow.Scalar(1.5, e), [("e", T((3, 4), "f32", "special"))]))
    yield C("0d_f32", "f32", "0-d exponent", lambda: (lambda e: A.pow.Scalar(3.0, e), [("e", T((), "f32", "expo"))]))
    yield C("empty_f32", "f32", "size-0", lambda: (lambda e: A.pow.Scalar(3.0, e), [("e", T((0, 2), "f32"))]))


# ---- where / clamp ---------------------------------------------------------


@cases("where.self")
def _where():
    yield from sweep(ALL, "where(cond [3,4], x [3,4] {dt}, y [3,4] {dt})",
                     lambda dt: (A.where.self, [("cond", T((3, 4), "bool")), ("x", T((3, 4), dt)), ("y", T((3, 4), dt))]))
    yield C("bcast_f32", "f32", "broadcasting: cond [3,1], x [4], y 0-d",
            lambda: (A.where.self, [("cond", T((3, 1), "bool")), ("x", T((4,))), ("y", T(()))]))
    yield C("promote_i32_f32", "mixed", "x i32, y f32 -> f32", lambda: (A.where.self, [("cond", T((3, 4), "bool")), ("x", T((3, 4), "i32")), ("y", T((3, 4)))]))
    yield C("promote_f16_0d_f32", "mixed", "x f16, y 0-d f32 -> f16", lambda: (A.where.self, [("cond", T((3, 4), "bool")), ("x", T((3, 4), "f16")), ("y", T((), "f32"))]))
    yield C("special_f32", "f32", "NaN/inf in the unselected branch do not leak",
            lambda: (A.where.self, [("cond", T((3, 4), "bool")), ("x", T((3, 4), "f32", "special")), ("y", T((3, 4)))]))
    yield C("0d_f32", "f32", "all 0-d", lambda: (A.where.self, [("cond", I(True, "bool")), ("x", T(())), ("y", T(()))]))
    yield C("empty_f32", "f32", "size-0", lambda: (A.where.self, [("cond", T((0, 4), "bool")), ("x", T((0, 4))), ("y", T((4,)))]))


@cases("clamp")
def _clamp():
    yield from sweep(ALL, "clamp(x [3,4] {dt}, -2, 3)", lambda dt: (lambda x: A.clamp.default(x, -2, 3), [("x", T((3, 4), dt))]))
    yield C("min_only_f32", "f32", "min=0.5 only", lambda: (lambda x: A.clamp.default(x, 0.5, None), [("x", T((3, 4)))]))
    yield C("max_only_f32", "f32", "max=-0.5 only", lambda: (lambda x: A.clamp.default(x, None, -0.5), [("x", T((3, 4)))]))
    yield C("min_gt_max_f32", "f32", "min > max: every element becomes max", lambda: (lambda x: A.clamp.default(x, 2.0, -1.0), [("x", T((3, 4)))]))
    yield C("special_f32", "f32", "NaN passes through, inf clamps", lambda: (lambda x: A.clamp.default(x, -1.0, 1.0), [("x", T((3, 4), "f32", "special"))]))
    yield C("float_bounds_i32", "mixed", "i32 tensor with float bounds -> f32", lambda: (lambda x: A.clamp.default(x, -1.5, 2.5), [("x", T((3, 4), "i32"))]))
    yield C("0d_f32", "f32", "0-d", lambda: (lambda x: A.clamp.default(x, -1.0, 1.0), [("x", T(()))]))
    yield C("empty_f32", "f32", "size-0", lambda: (lambda x: A.clamp.default(x, -1.0, 1.0), [("x", T((0, 3)))]))


@cases("clamp.Tensor")
def _clamp_t():
    yield from sweep(ALL, "clamp(x [3,4] {dt}, min [4] {dt}, max [3,1] {dt}) (broadcast bounds)",
                     lambda dt: (A.clamp.Tensor, [("x", T((3, 4), dt)), ("lo", T((4,), dt)), ("hi", T((3, 1), dt))]))
    yield C("min_only_f32", "f32", "max=None", lambda: (lambda x, lo: A.clamp.Tensor(x, lo, None), [("x", T((3, 4))), ("lo", T((3, 4)))]))
    yield C("max_only_f32", "f32", "min=None, 0-d max", lambda: (lambda x, hi: A.clamp.Tensor(x, None, hi), [("x", T((3, 4))), ("hi", T(()))]))
    yield C("promote_i32_f32", "mixed", "i32 x with f32 bounds -> f32", lambda: (A.clamp.Tensor, [("x", T((3, 4), "i32")), ("lo", T((4,))), ("hi", T((4,)))]))
    yield C("special_f32", "f32", "NaN in x and in the bounds", lambda: (A.clamp.Tensor, [("x", T((3, 4), "f32", "special")), ("lo", T((3, 4), "f32", "special").roll(1)), ("hi", T((3, 4), "f32", "pos"))]))


# ---- reductions -------------------------------------------------------------


def dims_reduction(name, dtypes=ALL, dtype_kw=None, listdims=True, extra=(), kind="normal"):
    """op(x, dim, keepdim[, dtype=]) with dim an int list (listdims) or an int."""
    op = ov(name)

    def f(d, k=False, **kw):
        dd = ([d] if isinstance(d, int) else d) if listdims else d
        return lambda x: op(x, dd, k, **kw)

    def build():
        cs = sweep(dtypes, f"{name}(x [3,4,5] {{dt}}, dim=1)", lambda dt: (f(1), [("x", T((3, 4, 5), dt, kind))]))
        cs += [
            C("neg_dim_keepdim_f32", "f32", "dim=-1, keepdim=True", lambda: (f(-1, True), [("x", T((3, 4, 5), "f32", kind))])),
            C("size1_dim_f32", "f32", "reduce a size-1 dim", lambda: (f(0), [("x", T((1, 4, 2), "f32", kind))])),
            C("empty_kept_f32", "f32", "[0,4] reduced over dim 1 -> [0]", lambda: (f(1), [("x", T((0, 4), "f32", kind))])),
            C("special_f32", "f32", "NaN/inf along the reduced dim", lambda: (f(1), [("x", T((3, 4), "f32", "special"))])),
            C("0d_f32", "f32", "0-d input, dim=0", lambda: (f(0), [("x", T((), "f32", kind))])),
        ]
        if listdims:
            cs += [
                C("multi_dim_f32", "f32", "dim=[0,2], keepdim=True", lambda: (f([0, 2], True), [("x", T((3, 4, 5), "f32", kind))])),
                C("all_dims_i32", "i32", "dim=[] (empty list: sum/mean/amax/amin reduce every dim, any.dims reduces none)", lambda: (f([]), [("x", T((3, 4), "i32", kind))])),
            ]
        if dtype_kw:
            cs.append(C(f"dtype_arg_{dtype_kw[0]}", "mixed", f"dtype={dtype_kw[1]} from i32",
                        lambda: (f(1, False, dtype=TD[dtype_kw[1]]), [("x", T((3, 4), dtype_kw[0], kind))])))
        cs.extend(extra)
        return cs

    register(name, build)


dims_reduction("sum.dim_IntList", dtype_kw=("i32", "f64"),
               extra=[C("dim_none_f32", "f32", "dim=None (full reduction)", lambda: (lambda x: A.sum.dim_IntList(x, None), [("x", T((3, 4)))])),
                      C("empty_reduced_f32", "f32", "reduce a size-0 dim -> zeros", lambda: (lambda x: A.sum.dim_IntList(x, [0]), [("x", T((0, 4)))])),
                      C("bool_to_i64", "bool", "bool sums to i64", lambda: (lambda x: A.sum.dim_IntList(x, [1]), [("x", T((3, 5), "bool"))]))])
dims_reduction("mean.dim", dtype_kw=("i32", "f32"),
               extra=[C("dim_none_f16", "f16", "dim=None", lambda: (lambda x: A.mean.dim(x, None), [("x", T((3, 4), "f16"))])),
                      C("empty_reduced_f32", "f32", "mean over a size-0 dim -> NaN", lambda: (lambda x: A.mean.dim(x, [0]), [("x", T((0, 3)))]))])
dims_reduction("amax", extra=[C("default_dim_f32", "f32", "dim=[] (default): full reduction", lambda: (lambda x: A.amax.default(x), [("x", T((3, 4)))]))])
dims_reduction("amin", extra=[C("default_dim_f32", "f32", "dim=[] (default): full reduction", lambda: (lambda x: A.amin.default(x), [("x", T((3, 4)))]))])
dims_reduction("any.dims", extra=[C("dim_none_f32", "f32", "dim=None", lambda: (lambda x: A.any.dims(x, None), [("x", T((3, 4)))])),
                                  C("empty_reduced_bool", "bool", "any over a size-0 dim -> False", lambda: (lambda x: A.any.dims(x, [1]), [("x", T((3, 0), "bool"))]))])
dims_reduction("any.dim", listdims=False,
               extra=[C("zeros_f32", "f32", "-0.0 and 0.0 are false, NaN is true", lambda: (lambda x: A.any.dim(x, 1), [("x", I([[0.0, -0.0], [NAN, 0.0], [0.0, 0.0]], "f32"))]))])
dims_reduction("prod.dim_int", listdims=False, dtype_kw=("i32", "f64"))


@cases("cumsum")
def _cumsum():
    yield from sweep(ALL, "cumsum(x [3,4] {dt}, 1) (ints and bool -> i64)", lambda dt: (lambda x: A.cumsum.default(x, 1), [("x", T((3, 4), dt))]))
    yield C("neg_dim_f32", "f32", "dim=-2", lambda: (lambda x: A.cumsum.default(x, -2), [("x", T((3, 4, 2)))]))
    yield C("dtype_arg_i32", "mixed", "dtype=f64 from i32", lambda: (lambda x: A.cumsum.default(x, 0, dtype=torch.float64), [("x", T((5,), "i32"))]))
    yield C("dtype_arg_f32_to_f16", "mixed", "dtype=f16 from f32", lambda: (lambda x: A.cumsum.default(x, 0, dtype=torch.float16), [("x", T((6,)))]))
    yield C("special_f32", "f32", "inf then -inf gives NaN onwards", lambda: (lambda x: A.cumsum.default(x, 1), [("x", T((3, 4), "f32", "special"))]))
    yield C("0d_f32", "f32", "0-d", lambda: (lambda x: A.cumsum.default(x, 0), [("x", T(()))]))
    yield C("empty_f32", "f32", "size-0 scanned dim", lambda: (lambda x: A.cumsum.default(x, 1), [("x", T((2, 0)))]))
    yield C("long_f32", "f32", "a 64-long scan", lambda: (lambda x: A.cumsum.default(x, 0), [("x", T((64,)))]))


@cases("any")
def _any():
    yield from sweep(ALL, "any(x [3,4] {dt})", lambda dt: (A.any.default, [("x", T((3, 4), dt, "unit"))]))
    yield C("all_zero_f32", "f32", "all zeros (incl. -0.0) -> False", lambda: (A.any.default, [("x", I([[0.0, -0.0], [0.0, 0.0]], "f32"))]))
    yield C("nan_f32", "f32", "NaN is true", lambda: (A.any.default, [("x", I([0.0, NAN], "f32"))]))
    yield C("empty_bool", "bool", "empty -> False", lambda: (A.any.default, [("x", T((0, 3), "bool"))]))
    yield C("0d_i32", "i32", "0-d", lambda: (A.any.default, [("x", I(0, "i32"))]))


@cases("mean")
def _mean():
    yield from sweep(ALL, "mean(x [3,4] {dt})", lambda dt: (A.mean.default, [("x", T((3, 4), dt))]))
    yield C("dtype_arg_i64", "mixed", "mean(i64, dtype=f32)", lambda: (lambda x: A.mean.default(x, dtype=torch.float32), [("x", T((3, 4), "i64"))]))
    yield C("dtype_arg_f16_to_f32", "mixed", "mean(f16, dtype=f32)", lambda: (lambda x: A.mean.default(x, dtype=torch.float32), [("x", T((3, 4), "f16"))]))
    yield C("special_f32", "f32", "NaN/inf", lambda: (A.mean.default, [("x", T((3, 4), "f32", "special"))]))
    yield C("empty_f32", "f32", "empty -> NaN", lambda: (A.mean.default, [("x", T((0, 3)))]))
    yield C("0d_f32", "f32", "0-d", lambda: (A.mean.default, [("x", T(()))]))


@cases("prod")
def _prod():
    yield from sweep(ALL, "prod(x [2,3] {dt}) (ints/bool -> i64)", lambda dt: (A.prod.default, [("x", T((2, 3), dt, "unit" if dt in ("i8", "u8") else "normal"))]))
    yield C("dtype_arg_i32", "mixed", "prod(i32, dtype=f64)", lambda: (lambda x: A.prod.default(x, dtype=torch.float64), [("x", T((2, 3), "i32"))]))
    yield C("special_f32", "f32", "inf * 0 -> NaN", lambda: (A.prod.default, [("x", I([1.0, INF, 0.0], "f32"))]))
    yield C("empty_f32", "f32", "empty -> 1", lambda: (A.prod.default, [("x", T((0, 3)))]))
    yield C("0d_f32", "f32", "0-d", lambda: (A.prod.default, [("x", T(()))]))


def arg_reduction(name):
    op = ov(name)

    def build():
        cs = sweep(ALL, f"{name}(x [3,5] {{dt}}, dim=1) (ties: first index)", lambda dt: (lambda x: op(x, 1), [("x", T((3, 5), dt))]))
        cs += [
            C("dim_none_f32", "f32", "dim=None: index into the flattened input", lambda: (lambda x: op(x), [("x", T((3, 4)))])),
            C("dim_none_keepdim_f32", "f32", "dim=None, keepdim=True -> [1,1]", lambda: (lambda x: op(x, None, True), [("x", T((3, 4)))])),
            C("neg_dim_keepdim_f32", "f32", "dim=-2, keepdim=True", lambda: (lambda x: op(x, -2, True), [("x", T((3, 4, 2)))])),
            C("ties_i32", "i32", "ties resolve to the first index", lambda: (lambda x: op(x, 1), [("x", I([[1, 3, 3, 1], [2, 2, 2, 2], [-1, 5, -1, 5]], "i32"))])),
            C("nan_f32", "f32", "NaN wins (first NaN index)", lambda: (lambda x: op(x, 1), [("x", I([[1.0, NAN, 3.0, NAN], [INF, -INF, 0.0, 1.0]], "f32"))])),
            C("0d_f32", "f32", "0-d input", lambda: (lambda x: op(x, 0), [("x", T(()))])),
            C("empty_kept_f32", "f32", "[0,4] over dim 1 -> [0]", lambda: (lambda x: op(x, 1), [("x", T((0, 4)))])),
        ]
        return cs

    register(name, build)


arg_reduction("argmax")
arg_reduction("argmin")


def minmax_dim(name):
    op = ov(name)

    def build():
        cs = sweep(ALL, f"{name}(x [3,5] {{dt}}, 1) -> (values, indices)", lambda dt: (lambda x: op(x, 1), [("x", T((3, 5), dt))]))
        cs += [
            C("neg_dim_keepdim_f32", "f32", "dim=-1, keepdim=True", lambda: (lambda x: op(x, -1, True), [("x", T((2, 3, 4)))])),
            C("ties_i32", "i32", "ties", lambda: (lambda x: op(x, 1), [("x", I([[1, 3, 3, 1], [2, 2, 2, 2]], "i32"))])),
            C("nan_f32", "f32", "NaN propagates (index of the NaN)", lambda: (lambda x: op(x, 1), [("x", I([[1.0, NAN, 3.0], [INF, -INF, 0.0]], "f32"))])),
            C("0d_f32", "f32", "0-d", lambda: (lambda x: op(x, 0), [("x", T(()))])),
            C("size1_f32", "f32", "reduce a size-1 dim", lambda: (lambda x: op(x, 1), [("x", T((3, 1)))])),
        ]
        return cs

    register(name, build)


minmax_dim("max.dim")
minmax_dim("min.dim")


def var_cases(name):
    op = ov(name)
    if name == "var.correction":
        def f(dim, corr, keep=False):
            return lambda x: op(x, dim, correction=corr, keepdim=keep)
        variants = [("corr1", [1], 1), ("corr0", [1], 0), ("corr_none", [1], None), ("corr2_float", [1], 2.5)]
    else:
        def f(dim, corr, keep=False):
            return lambda x: op(x, dim, bool(corr), keep)
        variants = [("unbiased", [1], 1), ("biased", [1], 0)]

    def build():
        cs = sweep(FLOAT + ["i32"], f"{name}(x [3,5] {{dt}}, dim=[1])", lambda dt: (f([1], 1), [("x", T((3, 5), dt))]))
        for vn, d, c in variants:
            cs.append(C(f"{vn}_f32", "f32", f"{name} dim={d} correction/unbiased={c}", (lambda d=d, c=c: (f(d, c), [("x", T((3, 5)))]))))
        cs += [
            C("dim_none_f32", "f32", "dim=None: over everything", lambda: (f(None, 1), [("x", T((3, 4)))])),
            C("multi_dim_keepdim_f32", "f32", "dim=[0,-1], keepdim=True", lambda: (f([0, -1], 1, True), [("x", T((3, 4, 5)))])),
            C("single_element_f32", "f32", "one element with correction 1 -> NaN (0/0)", lambda: (f([1], 1), [("x", T((3, 1)))])),
            C("special_f32", "f32", "NaN/inf", lambda: (f([1], 1), [("x", T((3, 4), "f32", "special"))])),
        ]
        return cs

    register(name, build)


var_cases("var.correction")
var_cases("var.dim")

# ---- matmul ---------------------------------------------------------------


@cases("mm")
def _mm():
    yield from sweep(ALL, "mm([3,4] {dt}, [4,5] {dt})", lambda dt: (A.mm.default, [("a", T((3, 4), dt)), ("b", T((4, 5), dt))]))
    yield C("vec_like_f32", "f32", "[1,4] @ [4,1]", lambda: (A.mm.default, [("a", T((1, 4))), ("b", T((4, 1)))]))
    yield C("k0_f32", "f32", "contraction dim 0 -> zeros", lambda: (A.mm.default, [("a", T((3, 0))), ("b", T((0, 2)))]))
    yield C("m0_f32", "f32", "empty rows", lambda: (A.mm.default, [("a", T((0, 4))), ("b", T((4, 2)))]))
    yield C("special_f32", "f32", "NaN/inf operands", lambda: (A.mm.default, [("a", T((3, 4), "f32", "special")), ("b", T((4, 2)))]))
    yield C("transposed_f32", "f32", "rhs is a permuted view inside the graph", lambda: (lambda a, b: A.mm.default(a, A.permute.default(b, [1, 0])), [("a", T((3, 4))), ("b", T((5, 4)))]))
    yield C("large_k_f32", "f32", "k=96 accumulation", lambda: (A.mm.default, [("a", T((2, 96))), ("b", T((96, 3)))]))


@cases("bmm")
def _bmm():
    yield from sweep(ALL, "bmm([2,3,4] {dt}, [2,4,5] {dt})", lambda dt: (A.bmm.default, [("a", T((2, 3, 4), dt)), ("b", T((2, 4, 5), dt))]))
    yield C("batch1_f32", "f32", "batch 1", lambda: (A.bmm.default, [("a", T((1, 3, 4))), ("b", T((1, 4, 2)))]))
    yield C("k0_f32", "f32", "contraction dim 0", lambda: (A.bmm.default, [("a", T((2, 3, 0))), ("b", T((2, 0, 2)))]))
    yield C("batch0_f32", "f32", "empty batch", lambda: (A.bmm.default, [("a", T((0, 3, 4))), ("b", T((0, 4, 2)))]))


@cases("addmm")
def _addmm():
    yield from sweep(ALL, "addmm(bias [5] {dt}, [3,4] {dt}, [4,5] {dt})",
                     lambda dt: (A.addmm.default, [("bias", T((5,), dt)), ("a", T((3, 4), dt)), ("b", T((4, 5), dt))]))
    yield C("bias_col_f32", "f32", "bias [3,1]", lambda: (A.addmm.default, [("bias", T((3, 1))), ("a", T((3, 4))), ("b", T((4, 5)))]))
    yield C("bias_full_f32", "f32", "bias [3,5]", lambda: (A.addmm.default, [("bias", T((3, 5))), ("a", T((3, 4))), ("b", T((4, 5)))]))
    yield C("bias_0d_f32", "f32", "bias 0-d", lambda: (A.addmm.default, [("bias", T(())), ("a", T((3, 4))), ("b", T((4, 5)))]))
    yield C("alpha_beta_f32", "f32", "beta=0.5, alpha=2", lambda: (lambda c, a, b: A.addmm.default(c, a, b, beta=0.5, alpha=2.0), [("bias", T((5,))), ("a", T((3, 4))), ("b", T((4, 5)))]))
    yield C("beta0_nan_bias_f32", "f32", "beta=0 ignores the bias, even NaN/inf",
            lambda: (lambda c, a, b: A.addmm.default(c, a, b, beta=0), [("bias", T((5,), "f32", "special")), ("a", T((3, 4))), ("b", T((4, 5)))]))
    yield C("k0_f32", "f32", "contraction dim 0: bias only", lambda: (A.addmm.default, [("bias", T((2,))), ("a", T((3, 0))), ("b", T((0, 2)))]))


# ---- convolution ------------------------------------------------------------


def conv(x, w, b, stride, pad, dil, transposed=False, out_pad=None, groups=1):
    nd = len(stride)
    return A.convolution.default(x, w, b, stride, pad, dil, transposed, out_pad or [0] * nd, groups)


@cases("convolution")
def _convolution():
    yield from sweep(ALL, "conv2d x [1,2,5,5] {dt}, w [3,2,3,3], bias, stride 1, pad 1",
                     lambda dt: (lambda x, w, b: conv(x, w, b, [1, 1], [1, 1], [1, 1]), [("x", T((1, 2, 5, 5), dt)), ("w", T((3, 2, 3, 3), dt)), ("b", T((3,), dt))]))
    yield C("stride2_pad_f32", "f32", "conv2d stride 2, pad (1,0), no bias, non-square input",
            lambda: (lambda x, w: conv(x, w, None, [2, 2], [1, 0], [1, 1]), [("x", T((2, 3, 6, 7))), ("w", T((4, 3, 3, 2)))]))
    yield C("dilation_f32", "f32", "conv2d dilation (2,1)", lambda: (lambda x, w, b: conv(x, w, b, [1, 1], [0, 0], [2, 1]), [("x", T((1, 2, 7, 6))), ("w", T((2, 2, 3, 3))), ("b", T((2,)))]))
    yield C("groups_f32", "f32", "conv2d groups=2", lambda: (lambda x, w, b: conv(x, w, b, [1, 1], [1, 1], [1, 1], groups=2), [("x", T((1, 4, 5, 5))), ("w", T((6, 2, 3, 3))), ("b", T((6,)))]))
    yield C("depthwise_f32", "f32", "depthwise (groups = channels = 3, multiplier 2)", lambda: (lambda x, w: conv(x, w, None, [1, 1], [1, 1], [1, 1], groups=3), [("x", T((1, 3, 4, 4))), ("w", T((6, 1, 3, 3)))]))
    yield C("conv1d_f32", "f32", "conv1d stride 2 pad 2 dilation 2", lambda: (lambda x, w, b: conv(x, w, b, [2], [2], [2]), [("x", T((2, 3, 9))), ("w", T((4, 3, 3))), ("b", T((4,)))]))
    yield C("conv3d_f32", "f32", "conv3d", lambda: (lambda x, w, b: conv(x, w, b, [1, 2, 1], [1, 0, 1], [1, 1, 1]), [("x", T((1, 2, 4, 5, 4))), ("w", T((2, 2, 3, 3, 3))), ("b", T((2,)))]))
    yield C("transposed_f32", "f32", "conv_transpose2d stride 2, pad 1, output_padding 1",
            lambda: (lambda x, w, b: conv(x, w, b, [2, 2], [1, 1], [1, 1], True, [1, 1]), [("x", T((1, 3, 4, 4))), ("w", T((3, 2, 3, 3))), ("b", T((2,)))]))
    yield C("transposed_groups_dil_f32", "f32", "conv_transpose2d groups=2, dilation 2",
            lambda: (lambda x, w: conv(x, w, None, [1, 2], [0, 1], [2, 2], True, [0, 1], 2), [("x", T((1, 4, 3, 3))), ("w", T((4, 3, 2, 2)))]))
    yield C("transposed1d_f32", "f32", "conv_transpose1d stride 3", lambda: (lambda x, w: conv(x, w, None, [3], [0], [1], True), [("x", T((2, 2, 4))), ("w", T((2, 3, 2)))]))
    yield C("unbatched_k1_f32", "f32", "1x1 kernel (pointwise)", lambda: (lambda x, w: conv(x, w, None, [1, 1], [0, 0], [1, 1]), [("x", T((2, 4, 3, 3))), ("w", T((5, 4, 1, 1)))]))


def conv_backward(x_shape, w_shape, stride, pad, dil, groups=1, mask=(True, True, True), dt="f32"):
    """convolution_backward of conv(x, w) with a random output gradient of the
    convolution's output shape; `mask` is output_mask (bias gradient of size Cout)."""
    nd = len(stride)
    out = conv(torch.zeros(x_shape), torch.zeros(w_shape), None, stride, pad, dil, groups=groups).shape

    def fn(gy, x, w):
        grads = A.convolution_backward.default(
            gy, x, w, [w_shape[0]], stride, pad, dil, False, [0] * nd, groups, list(mask)
        )
        # The gradients output_mask leaves out are None.
        return tuple(g for g in grads if g is not None)

    return fn, [("gy", T(out, dt)), ("x", T(x_shape, dt)), ("w", T(w_shape, dt))]


@cases("convolution_backward")
def _convolution_backward():
    yield from sweep(FLOAT, "gradients of conv2d x [2,3,5,5] {dt}, w [4,3,3,3], stride 1, pad 1",
                     lambda dt: conv_backward((2, 3, 5, 5), (4, 3, 3, 3), [1, 1], [1, 1], [1, 1], dt=dt))
    yield C("stride2_pad_f32", "f32", "stride 2, pad (1,0), non-square input: rows past the last window",
            lambda: conv_backward((2, 3, 6, 7), (4, 3, 3, 2), [2, 2], [1, 0], [1, 1]))
    yield C("dilation_f32", "f32", "dilation (2,1)", lambda: conv_backward((1, 2, 7, 6), (2, 2, 3, 3), [1, 1], [0, 0], [2, 1]))
    yield C("groups_f32", "f32", "groups=2", lambda: conv_backward((1, 4, 5, 5), (6, 2, 3, 3), [1, 1], [1, 1], [1, 1], groups=2))
    yield C("depthwise_f32", "f32", "depthwise (groups = channels = 3, multiplier 2), stride 2",
            lambda: conv_backward((2, 3, 6, 6), (6, 1, 3, 3), [2, 2], [1, 1], [1, 1], groups=3))
    yield C("strided_dilated_grouped_f32", "f32", "stride 2, dilation 2, pad 2, groups 2",
            lambda: conv_backward((4, 8, 4, 4), (8, 4, 3, 3), [2, 2], [2, 2], [2, 2], groups=2))
    yield C("pad_past_reach_f32", "f32", "padding 3 past a 3x3 kernel's reach (the input gradient cropped)",
            lambda: conv_backward((1, 2, 5, 5), (3, 2, 3, 3), [1, 1], [3, 3], [1, 1]))
    yield C("conv1d_f32", "f32", "conv1d stride 2 pad 2 dilation 2", lambda: conv_backward((2, 3, 9), (4, 3, 3), [2], [2], [2]))
    yield C("conv3d_f32", "f32", "conv3d", lambda: conv_backward((1, 2, 4, 5, 4), (2, 2, 3, 3, 3), [1, 2, 1], [1, 0, 1], [1, 1, 1]))
    yield C("mask_weight_only_f32", "f32", "output_mask [False, True, False] (a first layer without bias)",
            lambda: conv_backward((2, 3, 5, 5), (4, 3, 3, 3), [1, 1], [1, 1], [1, 1], mask=(False, True, False)))


def maxpool_backward(x_shape, kernel, stride, pad, dil, ceil, dt="f32"):
    """max_pool{2,3}d_with_indices_backward with the indices the forward gives on x
    (an input of the case) and a random output gradient."""
    x = T(x_shape, dt, "distinct")
    fwd = A.max_pool2d_with_indices if len(kernel) == 2 else A.max_pool3d_with_indices
    bwd = A.max_pool2d_with_indices_backward if len(kernel) == 2 else A.max_pool3d_with_indices_backward
    values, indices = fwd.default(x, kernel, stride, pad, dil, ceil)

    def fn(gy, x, idx):
        return bwd.default(gy, x, kernel, stride, pad, dil, ceil, idx)

    return fn, [("gy", T(values.shape, dt)), ("x", x), ("indices", indices)]


@cases("max_pool2d_with_indices_backward")
def _maxpool2d_backward():
    yield from sweep(FLOAT, "gradient of max_pool2d([2,3,6,6] {dt}, kernel 2)",
                     lambda dt: maxpool_backward((2, 3, 6, 6), [2, 2], [2, 2], [0, 0], [1, 1], False, dt))
    yield C("overlapping_f32", "f32", "kernel 3 stride 1: windows share maxima, gradients add up",
            lambda: maxpool_backward((1, 2, 5, 5), [3, 3], [1, 1], [0, 0], [1, 1], False))
    yield C("pad_ceil_f32", "f32", "kernel 3 stride 2 pad 1 ceil_mode",
            lambda: maxpool_backward((2, 2, 7, 6), [3, 3], [2, 2], [1, 1], [1, 1], True))
    yield C("dilation_f32", "f32", "kernel 2 dilation 2", lambda: maxpool_backward((1, 2, 7, 7), [2, 2], [1, 1], [0, 0], [2, 2], False))
    yield C("unbatched_f32", "f32", "unbatched [C, H, W] input", lambda: maxpool_backward((3, 4, 4), [2, 2], [2, 2], [0, 0], [1, 1], False))


# ---- pooling ------------------------------------------------------------------


@cases("max_pool2d_with_indices")
def _maxpool2d():
    yield from sweep(ALL, "max_pool2d([1,2,4,6] {dt}, kernel 2) -> (values, flat indices)",
                     lambda dt: (lambda x: A.max_pool2d_with_indices.default(x, [2, 2]), [("x", T((1, 2, 4, 6), dt, "distinct" if dt != "bool" else "normal"))]))
    yield C("stride_pad_f32", "f32", "kernel 3, stride 2, padding 1 (padding never wins)",
            lambda: (lambda x: A.max_pool2d_with_indices.default(x, [3, 3], [2, 2], [1, 1]), [("x", T((2, 3, 7, 6), "f32", "distinct"))]))
    yield C("dilation_f32", "f32", "kernel 2, dilation 2", lambda: (lambda x: A.max_pool2d_with_indices.default(x, [2, 2], [1, 1], [0, 0], [2, 2]), [("x", T((1, 1, 6, 6), "f32", "distinct"))]))
    yield C("ceil_mode_f32", "f32", "ceil_mode=True (partial windows)", lambda: (lambda x: A.max_pool2d_with_indices.default(x, [2, 2], [2, 2], [0, 0], [1, 1], True), [("x", T((1, 2, 5, 5), "f32", "distinct"))]))
    yield C("all_negative_pad_f32", "f32", "all-negative input with padding", lambda: (lambda x: A.max_pool2d_with_indices.default(x, [2, 2], [1, 1], [1, 1]), [("x", -T((1, 1, 3, 3), "f32", "pos"))]))
    yield C("nan_f32", "f32", "NaN in a window", lambda: (lambda x: A.max_pool2d_with_indices.default(x, [2, 2]), [("x", T((1, 1, 4, 4), "f32", "special"))]))
    for dt in ("f32", "f64", "f16", "bf16"):
        yield C(f"nan_values_only_{dt}", dt, "NaN, +-inf, +-0 in windows, indices unused (the values-only lowering)",
                lambda dt=dt: (lambda x: A.max_pool2d_with_indices.default(x, [2, 2], [1, 1])[0], [("x", T((1, 2, 5, 5), dt, "special"))]))
    yield C("nan_values_only_disjoint_f32", "f32", "NaN, +-inf, +-0 in disjoint windows (kernel 2, stride 2), indices unused",
            lambda: (lambda x: A.max_pool2d_with_indices.default(x, [2, 2], [2, 2])[0], [("x", T((1, 2, 6, 6), "f32", "special"))]))
    yield C("unbatched_f32", "f32", "3-D input [C,H,W]", lambda: (lambda x: A.max_pool2d_with_indices.default(x, [2, 3], [1, 2]), [("x", T((2, 4, 7), "f32", "distinct"))]))


@cases("max_pool3d_with_indices")
def _maxpool3d():
    yield from sweep(ALL, "max_pool3d([1,2,4,4,4] {dt}, kernel 2)",
                     lambda dt: (lambda x: A.max_pool3d_with_indices.default(x, [2, 2, 2]), [("x", T((1, 2, 4, 4, 4), dt, "distinct" if dt not in ("bool", "i8") else "normal"))]))
    yield C("stride_pad_ceil_f32", "f32", "kernel 3, stride 2, padding 1, ceil_mode",
            lambda: (lambda x: A.max_pool3d_with_indices.default(x, [3, 3, 3], [2, 2, 2], [1, 1, 1], [1, 1, 1], True), [("x", T((1, 1, 5, 6, 5), "f32", "distinct"))]))
    yield C("dilation_f32", "f32", "dilation 2", lambda: (lambda x: A.max_pool3d_with_indices.default(x, [2, 2, 2], [1, 1, 1], [0, 0, 0], [2, 1, 2]), [("x", T((1, 1, 5, 4, 5), "f32", "distinct"))]))


@cases("avg_pool2d")
def _avgpool2d():
    yield from sweep(ALL, "avg_pool2d([1,2,4,6] {dt}, kernel 2)", lambda dt: (lambda x: A.avg_pool2d.default(x, [2, 2]), [("x", T((1, 2, 4, 6), dt))]))
    yield C("pad_include_f32", "f32", "kernel 3, stride 2, padding 1, count_include_pad=True",
            lambda: (lambda x: A.avg_pool2d.default(x, [3, 3], [2, 2], [1, 1]), [("x", T((2, 2, 7, 6)))]))
    yield C("pad_exclude_f32", "f32", "kernel 3, stride 2, padding 1, count_include_pad=False",
            lambda: (lambda x: A.avg_pool2d.default(x, [3, 3], [2, 2], [1, 1], False, False), [("x", T((2, 2, 7, 6)))]))
    yield C("ceil_mode_f32", "f32", "ceil_mode=True: the last window is partial",
            lambda: (lambda x: A.avg_pool2d.default(x, [2, 2], [2, 2], [0, 0], True), [("x", T((1, 1, 5, 5)))]))
    yield C("ceil_pad_exclude_f32", "f32", "ceil_mode, padding 1, count_include_pad=False",
            lambda: (lambda x: A.avg_pool2d.default(x, [3, 2], [2, 2], [1, 1], True, False), [("x", T((1, 2, 6, 5)))]))
    yield C("divisor_override_f32", "f32", "divisor_override=3",
            lambda: (lambda x: A.avg_pool2d.default(x, [2, 2], [1, 1], [0, 0], False, True, 3), [("x", T((1, 1, 4, 4)))]))
    yield C("unbatched_f32", "f32", "3-D input", lambda: (lambda x: A.avg_pool2d.default(x, [2, 2], [1, 1]), [("x", T((3, 4, 4)))]))


@cases("avg_pool3d")
def _avgpool3d():
    yield from sweep(ALL, "avg_pool3d([1,2,4,4,4] {dt}, kernel 2)", lambda dt: (lambda x: A.avg_pool3d.default(x, [2, 2, 2]), [("x", T((1, 2, 4, 4, 4), dt))]))
    yield C("pad_exclude_ceil_f32", "f32", "kernel 3, stride 2, padding 1, ceil_mode, count_include_pad=False",
            lambda: (lambda x: A.avg_pool3d.default(x, [3, 3, 3], [2, 2, 2], [1, 1, 1], True, False), [("x", T((1, 1, 5, 4, 5)))]))
    yield C("divisor_override_f32", "f32", "divisor_override=5",
            lambda: (lambda x: A.avg_pool3d.default(x, [2, 2, 2], [1, 1, 1], [0, 0, 0], False, True, 5), [("x", T((1, 1, 3, 3, 3)))]))


@cases("_adaptive_avg_pool2d")
def _aap2d():
    yield from sweep(ALL, "adaptive_avg_pool2d([1,2,6,6] {dt}, [3,3])", lambda dt: (lambda x: A._adaptive_avg_pool2d.default(x, [3, 3]), [("x", T((1, 2, 6, 6), dt))]))
    yield C("uneven_f32", "f32", "[5,7] -> [3,4]: overlapping, uneven windows", lambda: (lambda x: A._adaptive_avg_pool2d.default(x, [3, 4]), [("x", T((2, 2, 5, 7)))]))
    yield C("global_f32", "f32", "-> [1,1]", lambda: (lambda x: A._adaptive_avg_pool2d.default(x, [1, 1]), [("x", T((2, 3, 4, 5)))]))
    yield C("upsample_f32", "f32", "[2,3] -> [4,5] (output larger than input)", lambda: (lambda x: A._adaptive_avg_pool2d.default(x, [4, 5]), [("x", T((1, 1, 2, 3)))]))
    yield C("unbatched_f32", "f32", "3-D input", lambda: (lambda x: A._adaptive_avg_pool2d.default(x, [2, 2]), [("x", T((3, 4, 4)))]))


@cases("_adaptive_avg_pool3d")
def _aap3d():
    yield from sweep(ALL, "adaptive_avg_pool3d([1,2,4,4,4] {dt}, [2,2,2])", lambda dt: (lambda x: A._adaptive_avg_pool3d.default(x, [2, 2, 2]), [("x", T((1, 2, 4, 4, 4), dt))]))
    yield C("uneven_f32", "f32", "[3,5,4] -> [2,3,1]", lambda: (lambda x: A._adaptive_avg_pool3d.default(x, [2, 3, 1]), [("x", T((1, 2, 3, 5, 4)))]))
    yield C("global_f32", "f32", "-> [1,1,1]", lambda: (lambda x: A._adaptive_avg_pool3d.default(x, [1, 1, 1]), [("x", T((2, 2, 3, 3, 3)))]))


# ---- normalization / softmax -----------------------------------------------------


@cases("native_layer_norm")
def _layer_norm():
    yield from sweep(ALL, "layer_norm([2,3,8] {dt}, [8], w, b) -> (out, mean, rstd)",
                     lambda dt: (lambda x, w, b: A.native_layer_norm.default(x, [8], w, b, 1e-5), [("x", T((2, 3, 8), dt)), ("w", T((8,), dt)), ("b", T((8,), dt))]))
    yield C("no_affine_f32", "f32", "weight=None, bias=None", lambda: (lambda x: A.native_layer_norm.default(x, [6], None, None, 1e-5), [("x", T((4, 6)))]))
    yield C("two_dims_f32", "f32", "normalized_shape [3,4], eps 1e-3", lambda: (lambda x, w, b: A.native_layer_norm.default(x, [3, 4], w, b, 1e-3), [("x", T((2, 3, 4))), ("w", T((3, 4))), ("b", T((3, 4)))]))
    yield C("constant_row_f32", "f32", "constant rows: variance 0, rstd = 1/sqrt(eps)", lambda: (lambda x: A.native_layer_norm.default(x, [4], None, None, 1e-5), [("x", I([[2.0, 2.0, 2.0, 2.0], [1.0, -1.0, 1.0, -1.0]], "f32"))]))
    yield C("large_offset_f32", "f32", "values around 1e3 (cancellation)", lambda: (lambda x: A.native_layer_norm.default(x, [16], None, None, 1e-5), [("x", T((2, 16)) * 0.01 + 1000.0)]))
    yield C("weight_only_f16", "f16", "weight only, f16", lambda: (lambda x, w: A.native_layer_norm.default(x, [8], w, None, 1e-5), [("x", T((3, 8), "f16")), ("w", T((8,), "f16"))]))


@cases("native_group_norm")
def _group_norm():
    yield from sweep(ALL, "group_norm([2,6,3,4] {dt}, groups 3, w, b) -> (out, mean, rstd)",
                     lambda dt: (lambda x, w, b: A.native_group_norm.default(x, w, b, 2, 6, 12, 3, 1e-5), [("x", T((2, 6, 3, 4), dt)), ("w", T((6,), dt)), ("b", T((6,), dt))]))
    yield C("no_affine_3d_f32", "f32", "3-D input [2,4,5], groups 2, no weight/bias", lambda: (lambda x: A.native_group_norm.default(x, None, None, 2, 4, 5, 2, 1e-5), [("x", T((2, 4, 5)))]))
    yield C("one_group_f32", "f32", "groups 1 (LayerNorm over C,H,W)", lambda: (lambda x, w, b: A.native_group_norm.default(x, w, b, 1, 4, 6, 1, 1e-3), [("x", T((1, 4, 2, 3))), ("w", T((4,))), ("b", T((4,)))]))
    yield C("instance_f32", "f32", "groups = channels (InstanceNorm-like)", lambda: (lambda x: A.native_group_norm.default(x, None, None, 2, 3, 4, 3, 1e-5), [("x", T((2, 3, 2, 2)))]))


@cases("_native_batch_norm_legit_no_training")
def _bn_eval():
    yield from sweep(ALL, "batch_norm eval [2,3,4,4] {dt}, w, b, running mean/var -> (out, save_mean[0], save_rstd[0])",
                     lambda dt: (lambda x, w, b, m, v: A._native_batch_norm_legit_no_training.default(x, w, b, m, v, 0.1, 1e-5),
                                 [("x", T((2, 3, 4, 4), dt)), ("w", T((3,), dt)), ("b", T((3,), dt)), ("mean", T((3,), dt)), ("var", T((3,), dt, "pos"))]))
    yield C("no_affine_2d_f32", "f32", "[4,3] input (BatchNorm1d), weight/bias None", lambda: (lambda x, m, v: A._native_batch_norm_legit_no_training.default(x, None, None, m, v, 0.1, 1e-3), [("x", T((4, 3))), ("mean", T((3,))), ("var", T((3,), "f32", "pos"))]))
    yield C("3d_input_f32", "f32", "[2,3,5] (BatchNorm1d over length)", lambda: (lambda x, w, b, m, v: A._native_batch_norm_legit_no_training.default(x, w, b, m, v, 0.1, 1e-5), [("x", T((2, 3, 5))), ("w", T((3,))), ("b", T((3,))), ("mean", T((3,))), ("var", T((3,), "f32", "pos"))]))
    yield C("5d_input_f32", "f32", "[1,2,2,3,2] (BatchNorm3d)", lambda: (lambda x, w, b, m, v: A._native_batch_norm_legit_no_training.default(x, w, b, m, v, 0.1, 1e-5), [("x", T((1, 2, 2, 3, 2))), ("w", T((2,))), ("b", T((2,))), ("mean", T((2,))), ("var", T((2,), "f32", "pos"))]))
    yield C("mixed_f16_x_f32_stats", "mixed", "f16 input with f32 weight and stats (autocast-style)",
            lambda: (lambda x, w, b, m, v: A._native_batch_norm_legit_no_training.default(x, w, b, m, v, 0.1, 1e-5), [("x", T((2, 3, 4), "f16")), ("w", T((3,))), ("b", T((3,))), ("mean", T((3,))), ("var", T((3,), "f32", "pos"))]))


@cases("_native_batch_norm_legit.no_stats")
def _bn_no_stats():
    yield from sweep(ALL, "batch_norm with batch statistics [2,3,4,4] {dt}, w, b -> (out, mean, invstd)",
                     lambda dt: (lambda x, w, b: A._native_batch_norm_legit.no_stats(x, w, b, True, 0.1, 1e-5), [("x", T((2, 3, 4, 4), dt)), ("w", T((3,), dt)), ("b", T((3,), dt))]))
    yield C("no_affine_2d_f32", "f32", "[5,3], weight/bias None", lambda: (lambda x: A._native_batch_norm_legit.no_stats(x, None, None, True, 0.1, 1e-5), [("x", T((5, 3)))]))
    yield C("3d_input_f32", "f32", "[2,3,5]", lambda: (lambda x, w, b: A._native_batch_norm_legit.no_stats(x, w, b, True, 0.1, 1e-3), [("x", T((2, 3, 5))), ("w", T((3,))), ("b", T((3,)))]))


def softmax_cases(name):
    op = ov(name)

    def build():
        cs = sweep(ALL, f"{name}([3,5] {{dt}}, dim=1)", lambda dt: (lambda x: op(x, 1, False), [("x", T((3, 5), dt))]))
        cs += [
            C("neg_dim_f32", "f32", "dim=-2 on 3-D", lambda: (lambda x: op(x, -2, False), [("x", T((2, 4, 3)))])),
            C("dim0_f32", "f32", "dim=0", lambda: (lambda x: op(x, 0, False), [("x", T((4, 3)))])),
            C("large_values_f32", "f32", "values ~1e3 (needs max subtraction)", lambda: (lambda x: op(x, 1, False), [("x", T((2, 4)) * 300.0 + 500.0)])),
            C("masked_rows_f32", "f32", "-inf entries; an all -inf row gives NaN",
              lambda: (lambda x: op(x, 1, False), [("x", I([[0.5, -INF, 1.0, -INF], [-INF, -INF, -INF, -INF], [INF, 0.0, 1.0, 2.0]], "f32"))])),
            C("special_f32", "f32", "NaN in a row", lambda: (lambda x: op(x, 1, False), [("x", T((3, 4), "f32", "special"))])),
            C("0d_f32", "f32", "0-d", lambda: (lambda x: op(x, 0, False), [("x", T(()))])),
            C("size1_f32", "f32", "softmax over a size-1 dim", lambda: (lambda x: op(x, 1, False), [("x", T((3, 1)))])),
            C("empty_f32", "f32", "size-0 batch", lambda: (lambda x: op(x, 1, False), [("x", T((0, 4)))])),
            C("half_to_float_f16", "f16", "half_to_float=True (eager CPU rejects it; kept to record that)", lambda: (lambda x: op(x, 1, True), [("x", T((2, 4), "f16"))])),
        ]
        return cs

    register(name, build)


softmax_cases("_softmax")
softmax_cases("_log_softmax")

# ---- indexing -----------------------------------------------------------------


@cases("embedding")
def _embedding():
    yield from sweep(ALL, "embedding(weight [10,4] {dt}, indices [2,3] i64)", lambda dt: (A.embedding.default, [("weight", T((10, 4), dt)), ("indices", torch.randint(0, 10, (2, 3)))]))
    yield C("i32_indices_f32", "f32", "int32 indices", lambda: (A.embedding.default, [("weight", T((10, 4))), ("indices", torch.randint(0, 10, (5,), dtype=torch.int32))]))
    yield C("padding_idx_f32", "f32", "padding_idx=0 (forward is a plain lookup)", lambda: (lambda w, i: A.embedding.default(w, i, 0), [("weight", T((6, 3))), ("indices", I([[0, 2, 0, 5]]))]))
    yield C("0d_index_f32", "f32", "0-d index -> [4]", lambda: (A.embedding.default, [("weight", T((10, 4))), ("indices", I(7))]))
    yield C("empty_indices_f32", "f32", "size-0 indices", lambda: (A.embedding.default, [("weight", T((10, 4))), ("indices", torch.zeros((2, 0), dtype=torch.int64))]))


@cases("_embedding_bag")
def _embedding_bag():
    def f(mode, psw=False, last=False, pad=-1):
        if psw:
            return lambda w, i, o, s: A._embedding_bag.default(w, i, o, False, mode, False, s, last, pad)[0]
        return lambda w, i, o: A._embedding_bag.default(w, i, o, False, mode, False, None, last, pad)[0]

    def inp(dt="f32"):
        return [("weight", T((10, 4), dt)), ("indices", I([1, 2, 4, 5, 4, 3, 2, 9])), ("offsets", I([0, 2, 2, 5]))]

    yield from sweep(ALL, "embedding_bag sum, weight [10,4] {dt}, 8 indices, offsets [0,2,2,5] (bag 1 empty)", lambda dt: (f(0), inp(dt)))
    yield C("mean_f32", "f32", "mode=mean (empty bag -> 0)", lambda: (f(1), inp()))
    yield C("max_f32", "f32", "mode=max (empty bag -> 0)", lambda: (f(2), inp()))
    yield C("per_sample_weights_f32", "f32", "mode=sum with per_sample_weights", lambda: (f(0, psw=True), inp() + [("psw", T((8,)))]))
    yield C("include_last_offset_f32", "f32", "include_last_offset=True, mode=mean", lambda: (f(1, last=True), [("weight", T((10, 4))), ("indices", I([1, 2, 4, 5, 4, 3])), ("offsets", I([0, 2, 6]))]))
    yield C("padding_idx_f32", "f32", "padding_idx=4 (skipped in the bag), mode=sum", lambda: (f(0, pad=4), inp()))


@cases("gather")
def _gather():
    yield from sweep(ALL, "gather(x [3,5] {dt}, 1, index [3,2])", lambda dt: (lambda x, i: A.gather.default(x, 1, i), [("x", T((3, 5), dt)), ("index", torch.randint(0, 5, (3, 2)))]))
    yield C("dim0_smaller_index_f32", "f32", "dim 0, index smaller than x in the other dim", lambda: (lambda x, i: A.gather.default(x, 0, i), [("x", T((4, 5))), ("index", torch.randint(0, 4, (2, 3)))]))
    yield C("neg_dim_3d_f32", "f32", "dim=-1 on 3-D, repeated indices", lambda: (lambda x, i: A.gather.default(x, -1, i), [("x", T((2, 3, 4))), ("index", torch.randint(0, 4, (2, 3, 6)))]))
    yield C("0d_f32", "f32", "0-d x and index", lambda: (lambda x, i: A.gather.default(x, 0, i), [("x", T(())), ("index", I(0))]))
    yield C("empty_index_f32", "f32", "size-0 index", lambda: (lambda x, i: A.gather.default(x, 1, i), [("x", T((3, 4))), ("index", torch.zeros((3, 0), dtype=torch.int64))]))


@cases("index.Tensor")
def _index():
    yield from sweep(ALL, "x [5,4] {dt} indexed by [3] (with a negative index)", lambda dt: (lambda x, i: A.index.Tensor(x, [i]), [("x", T((5, 4), dt)), ("i", I([3, -1, 0]))]))
    yield C("none_then_index_f32", "f32", "x[:, idx]: indices [None, idx]", lambda: (lambda x, i: A.index.Tensor(x, [None, i]), [("x", T((3, 5, 2))), ("i", I([4, 0, -2, 4]))]))
    yield C("two_broadcast_f32", "f32", "x[i0, i1] with i0 [2,1], i1 [3] broadcast to [2,3]", lambda: (lambda x, a, b: A.index.Tensor(x, [a, b]), [("x", T((4, 5, 2))), ("i0", I([[1], [3]])), ("i1", I([0, 4, 2]))]))
    yield C("separated_indices_f32", "f32", "x[i0, :, i1]: advanced indices around a slice move to the front",
            lambda: (lambda x, a, b: A.index.Tensor(x, [a, None, b]), [("x", T((3, 4, 5))), ("i0", I([0, 2])), ("i1", I([1, 4]))]))
    yield C("i32_index_f32", "f32", "int32 index", lambda: (lambda x, i: A.index.Tensor(x, [i]), [("x", T((5, 3))), ("i", I([4, 1], "i32"))]))
    yield C("0d_index_f32", "f32", "0-d index tensor removes the dim", lambda: (lambda x, i: A.index.Tensor(x, [None, i]), [("x", T((3, 4))), ("i", I(2))]))
    yield C("2d_index_f32", "f32", "a [2,2] index on dim 0", lambda: (lambda x, i: A.index.Tensor(x, [i]), [("x", T((5, 3))), ("i", I([[0, 1], [4, -5]]))]))


@cases("index_put")
def _index_put():
    yield from sweep(ALL, "index_put(x [5,3] {dt}, [idx [3] distinct], values [3,3] {dt})",
                     lambda dt: (lambda x, i, v: A.index_put.default(x, [i], v), [("x", T((5, 3), dt)), ("i", I([4, 0, -3])), ("values", T((3, 3), dt))]))
    yield C("accumulate_dups_f32", "f32", "accumulate=True with duplicate indices", lambda: (lambda x, i, v: A.index_put.default(x, [i], v, True), [("x", T((4, 3))), ("i", I([1, 1, 3, 1])), ("values", T((4, 3)))]))
    yield C("accumulate_i64", "i64", "accumulate=True on ints", lambda: (lambda x, i, v: A.index_put.default(x, [i], v, True), [("x", T((4,), "i64")), ("i", I([0, 2, 0])), ("values", T((3,), "i64"))]))
    yield C("bcast_values_f32", "f32", "values [3] broadcast over the indexed rows", lambda: (lambda x, i, v: A.index_put.default(x, [i], v), [("x", T((4, 3))), ("i", I([0, 2])), ("values", T((3,)))]))
    yield C("scalar_value_f32", "f32", "0-d value", lambda: (lambda x, i, v: A.index_put.default(x, [i], v), [("x", T((4, 3))), ("i", I([3, 1])), ("values", T(()))]))
    yield C("two_indices_f32", "f32", "x[i0, i1] = v (element-wise points)", lambda: (lambda x, a, b, v: A.index_put.default(x, [a, b], v), [("x", T((3, 4))), ("i0", I([0, 2, 1])), ("i1", I([3, 0, -1])), ("values", T((3,)))]))
    yield C("none_index_f32", "f32", "x[:, idx] = v", lambda: (lambda x, i, v: A.index_put.default(x, [None, i], v), [("x", T((3, 4))), ("i", I([2, 0])), ("values", T((3, 2)))]))
    yield C("bool_mask_index_f32", "f32", "bool mask index (x[mask] = 0-d value)", lambda: (lambda x, m, v: A.index_put.default(x, [m], v), [("x", T((2, 3))), ("mask", I([[True, False, True], [False, False, True]], "bool")), ("values", T(()))]))


@cases("index_select")
def _index_select():
    yield from sweep(ALL, "index_select(x [4,5] {dt}, 1, idx [3])", lambda dt: (lambda x, i: A.index_select.default(x, 1, i), [("x", T((4, 5), dt)), ("i", I([4, 0, 4]))]))
    yield C("neg_dim_f32", "f32", "dim=-3", lambda: (lambda x, i: A.index_select.default(x, -3, i), [("x", T((3, 2, 2))), ("i", I([2, 1]))]))
    yield C("i32_index_f32", "f32", "int32 index", lambda: (lambda x, i: A.index_select.default(x, 0, i), [("x", T((4, 3))), ("i", I([3, 3, 0], "i32"))]))
    yield C("0d_x_f32", "f32", "0-d x with a 1-element index", lambda: (lambda x, i: A.index_select.default(x, 0, i), [("x", T(())), ("i", I([0]))]))
    yield C("empty_index_f32", "f32", "empty index", lambda: (lambda x, i: A.index_select.default(x, 0, i), [("x", T((4, 3))), ("i", torch.zeros((0,), dtype=torch.int64))]))


@cases("masked_scatter")
def _masked_scatter():
    yield from sweep(ALL, "masked_scatter(x [3,4] {dt}, mask [3,4], source [12] {dt})",
                     lambda dt: (A.masked_scatter.default, [("x", T((3, 4), dt)), ("mask", T((3, 4), "bool")), ("source", T((12,), dt))]))
    yield C("bcast_mask_f32", "f32", "mask [4] broadcast over rows; source [2,8] larger than needed", lambda: (A.masked_scatter.default, [("x", T((3, 4))), ("mask", I([True, False, True, True], "bool")), ("source", T((2, 8)))]))
    yield C("all_false_f32", "f32", "no element selected", lambda: (A.masked_scatter.default, [("x", T((2, 3))), ("mask", torch.zeros((2, 3), dtype=torch.bool)), ("source", T((6,)))]))


def _scatter_index(rows, n, k):
    return perm_index(rows, n, k)


@cases("scatter.src")
def _scatter_src():
    yield from sweep(ALL, "scatter(x [3,5] {dt}, 1, index [3,2] (distinct per row), src [3,2] {dt})",
                     lambda dt: (lambda x, i, s: A.scatter.src(x, 1, i, s), [("x", T((3, 5), dt)), ("index", _scatter_index(3, 5, 2)), ("src", T((3, 2), dt))]))
    yield C("dim0_larger_src_f32", "f32", "dim 0; src larger than index (only index's extent is used)",
            lambda: (lambda x, i, s: A.scatter.src(x, 0, i, s), [("x", T((4, 3))), ("index", _scatter_index(3, 4, 2).t().contiguous()), ("src", T((3, 4)))]))
    yield C("neg_dim_f32", "f32", "dim=-1 on 3-D", lambda: (lambda x, i, s: A.scatter.src(x, -1, i, s), [("x", T((2, 2, 4))), ("index", _scatter_index(4, 4, 3).reshape(2, 2, 3)), ("src", T((2, 2, 3)))]))


@cases("scatter.value")
def _scatter_value():
    yield from sweep(ALL, "scatter(x [3,5] {dt}, 1, index [3,2], value 1)",
                     lambda dt: (lambda x, i: A.scatter.value(x, 1, i, 1), [("x", T((3, 5), dt)), ("index", _scatter_index(3, 5, 2))]))
    yield C("float_value_f32", "f32", "value -2.5 along dim 0", lambda: (lambda x, i: A.scatter.value(x, 0, i, -2.5), [("x", T((4, 3))), ("index", _scatter_index(3, 4, 2).t().contiguous())]))
    yield C("dup_same_value_f32", "f32", "duplicate indices writing the same value", lambda: (lambda x, i: A.scatter.value(x, 1, i, 7.0), [("x", T((2, 4))), ("index", I([[1, 1, 3], [0, 0, 0]]))]))


@cases("scatter_add")
def _scatter_add():
    yield from sweep(ALL, "scatter_add(x [3,5] {dt}, 1, index [3,4] (duplicates), src [3,4] {dt})",
                     lambda dt: (lambda x, i, s: A.scatter_add.default(x, 1, i, s), [("x", T((3, 5), dt)), ("index", torch.randint(0, 5, (3, 4))), ("src", T((3, 4), dt))]))
    yield C("dim0_f32", "f32", "dim 0, index smaller than src", lambda: (lambda x, i, s: A.scatter_add.default(x, 0, i, s), [("x", T((3, 4))), ("index", torch.randint(0, 3, (5, 2))), ("src", T((5, 4)))]))
    yield C("neg_dim_f32", "f32", "dim=-1, 3-D", lambda: (lambda x, i, s: A.scatter_add.default(x, -1, i, s), [("x", T((2, 2, 3))), ("index", torch.randint(0, 3, (2, 2, 5))), ("src", T((2, 2, 5)))]))


@cases("scatter_reduce.two")
def _scatter_reduce():
    for red in ["sum", "prod", "mean", "amax", "amin"]:
        yield from [C(f"{red}_{dt}", dt, f"scatter_reduce {red!r} include_self=True on {dt}",
                      (lambda dt=dt, red=red: (lambda x, i, s: A.scatter_reduce.two(x, 1, i, s, red),
                                               [("x", T((3, 4), dt)), ("index", torch.randint(0, 4, (3, 5))), ("src", T((3, 5), dt))])))
                    for dt in (ALL if red in ("sum", "amax") else ["f32", "i32", "bf16"])]
        yield C(f"{red}_exclude_self_f32", "f32", f"scatter_reduce {red!r} include_self=False (untouched positions keep x)",
                lambda red=red: (lambda x, i, s: A.scatter_reduce.two(x, 0, i, s, red, include_self=False),
                                 [("x", T((4, 3))), ("index", I([[0, 1, 0], [0, 1, 2], [2, 1, 0]])), ("src", T((3, 3)))]))


@cases("select.int")
def _select():
    yield from sweep(ALL, "select(x [3,4,2] {dt}, 1, 2)", lambda dt: (lambda x: A.select.int(x, 1, 2), [("x", T((3, 4, 2), dt))]))
    yield C("neg_index_f32", "f32", "index -1", lambda: (lambda x: A.select.int(x, 0, -1), [("x", T((3, 4)))]))
    yield C("neg_dim_f32", "f32", "dim -1", lambda: (lambda x: A.select.int(x, -1, 0), [("x", T((3, 4)))]))
    yield C("to_0d_f32", "f32", "selecting from 1-D gives 0-d", lambda: (lambda x: A.select.int(x, 0, 2), [("x", T((5,)))]))
    yield C("size1_f32", "f32", "selecting from a size-1 dim", lambda: (lambda x: A.select.int(x, 1, 0), [("x", T((3, 1, 2)))]))


@cases("slice.Tensor")
def _slice():
    yield from sweep(ALL, "x [6,5] {dt} [1:5:2]", lambda dt: (lambda x: A.slice.Tensor(x, 0, 1, 5, 2), [("x", T((6, 5), dt))]))
    yield C("neg_start_huge_end_f32", "f32", "dim 1, start -3, end 2**63-1 (slice to the end)", lambda: (lambda x: A.slice.Tensor(x, 1, -3, 9223372036854775807), [("x", T((3, 5)))]))
    yield C("out_of_range_clamped_f32", "f32", "start -100, end 100: clamped to the dim", lambda: (lambda x: A.slice.Tensor(x, 0, -100, 100), [("x", T((4, 2)))]))
    yield C("empty_result_f32", "f32", "start > end: size-0 result", lambda: (lambda x: A.slice.Tensor(x, 1, 4, 2), [("x", T((3, 5)))]))
    yield C("step3_neg_dim_f32", "f32", "dim -1, step 3, start None", lambda: (lambda x: A.slice.Tensor(x, -1, None, None, 3), [("x", T((2, 3, 8)))]))
    yield C("neg_end_f32", "f32", "end -1", lambda: (lambda x: A.slice.Tensor(x, 0, 0, -1), [("x", T((5, 2)))]))


@cases("slice_scatter")
def _slice_scatter():
    yield from sweep(ALL, "slice_scatter(x [6,4] {dt}, src [2,4] {dt}, 0, 1, 5, 2)",
                     lambda dt: (lambda x, s: A.slice_scatter.default(x, s, 0, 1, 5, 2), [("x", T((6, 4), dt)), ("src", T((2, 4), dt))]))
    yield C("dim1_neg_start_f32", "f32", "dim 1, start -2 to the end", lambda: (lambda x, s: A.slice_scatter.default(x, s, 1, -2, 9223372036854775807), [("x", T((3, 5))), ("src", T((3, 2)))]))
    yield C("full_f32", "f32", "whole-dim slice (replace everything)", lambda: (lambda x, s: A.slice_scatter.default(x, s, 0), [("x", T((2, 3))), ("src", T((2, 3)))]))
    yield C("empty_slice_f32", "f32", "empty slice: x unchanged", lambda: (lambda x, s: A.slice_scatter.default(x, s, 1, 3, 3), [("x", T((2, 4))), ("src", T((2, 0)))]))


@cases("select_scatter")
def _select_scatter():
    yield from sweep(ALL, "select_scatter(x [3,4] {dt}, src [4] {dt}, 0, 1)",
                     lambda dt: (lambda x, s: A.select_scatter.default(x, s, 0, 1), [("x", T((3, 4), dt)), ("src", T((4,), dt))]))
    yield C("neg_dim_neg_index_f32", "f32", "dim -1, index -1", lambda: (lambda x, s: A.select_scatter.default(x, s, -1, -1), [("x", T((2, 3, 4))), ("src", T((2, 3)))]))
    yield C("1d_0d_src_f32", "f32", "1-D x, 0-d src", lambda: (lambda x, s: A.select_scatter.default(x, s, 0, 2), [("x", T((5,))), ("src", T(()))]))


@cases("diagonal")
def _diagonal():
    yield from sweep(ALL, "diagonal(x [4,4] {dt})", lambda dt: (A.diagonal.default, [("x", T((4, 4), dt))]))
    yield C("offset_pos_f32", "f32", "offset 1 on [3,5]", lambda: (lambda x: A.diagonal.default(x, 1), [("x", T((3, 5)))]))
    yield C("offset_neg_f32", "f32", "offset -2 on [4,3]", lambda: (lambda x: A.diagonal.default(x, -2), [("x", T((4, 3)))]))
    yield C("dims_3d_f32", "f32", "dim1=-1, dim2=0 on [3,2,3]: diagonal appended last", lambda: (lambda x: A.diagonal.default(x, 0, -1, 0), [("x", T((3, 2, 3)))]))
    yield C("offset_out_of_range_f32", "f32", "offset 5 beyond the matrix: empty", lambda: (lambda x: A.diagonal.default(x, 5), [("x", T((3, 3)))]))


@cases("split_with_sizes")
def _split():
    yield from sweep(ALL, "split_with_sizes(x [6,4] {dt}, [1,3,2]) -> 3 outputs", lambda dt: (lambda x: A.split_with_sizes.default(x, [1, 3, 2]), [("x", T((6, 4), dt))]))
    yield C("neg_dim_f32", "f32", "dim -1, sizes [2,2,1]", lambda: (lambda x: A.split_with_sizes.default(x, [2, 2, 1], -1), [("x", T((3, 5)))]))
    yield C("zero_size_piece_f32", "f32", "a size-0 piece [2,0,2]", lambda: (lambda x: A.split_with_sizes.default(x, [2, 0, 2], 1), [("x", T((3, 4)))]))
    yield C("single_f32", "f32", "one piece (whole tensor)", lambda: (lambda x: A.split_with_sizes.default(x, [3]), [("x", T((3, 2)))]))


# ---- shape ------------------------------------------------------------------


@cases("view")
def _view():
    yield from sweep(ALL, "view(x [3,4] {dt}, [2,6])", lambda dt: (lambda x: A.view.default(x, [2, 6]), [("x", T((3, 4), dt))]))
    yield C("infer_dim_f32", "f32", "view [-1, 2] (inferred size)", lambda: (lambda x: A.view.default(x, [-1, 2]), [("x", T((3, 4)))]))
    yield C("flatten_f32", "f32", "view [-1]", lambda: (lambda x: A.view.default(x, [-1]), [("x", T((2, 3, 2)))]))
    yield C("0d_to_1_f32", "f32", "0-d -> [1,1]", lambda: (lambda x: A.view.default(x, [1, 1]), [("x", T(()))]))
    yield C("to_0d_f32", "f32", "[1,1] -> []", lambda: (lambda x: A.view.default(x, []), [("x", T((1, 1)))]))
    yield C("empty_f32", "f32", "[0,3] -> [3,0,2]", lambda: (lambda x: A.view.default(x, [3, 0, 2]), [("x", T((0, 3)))]))


@cases("expand")
def _expand():
    yield from sweep(ALL, "expand(x [3,1] {dt}, [2,3,4])", lambda dt: (lambda x: A.expand.default(x, [2, 3, 4]), [("x", T((3, 1), dt))]))
    yield C("minus_one_f32", "f32", "expand [-1, 4] keeps dim 0", lambda: (lambda x: A.expand.default(x, [-1, 4]), [("x", T((3, 1)))]))
    yield C("0d_f32", "f32", "0-d -> [2,3]", lambda: (lambda x: A.expand.default(x, [2, 3]), [("x", T(()))]))
    yield C("to_zero_f32", "f32", "[1,3] -> [0,3]", lambda: (lambda x: A.expand.default(x, [0, 3]), [("x", T((1, 3)))]))
    yield C("same_shape_f32", "f32", "no-op expand", lambda: (lambda x: A.expand.default(x, [2, 3]), [("x", T((2, 3)))]))


@cases("permute")
def _permute():
    yield from sweep(ALL, "permute(x [2,3,4] {dt}, [2,0,1])", lambda dt: (lambda x: A.permute.default(x, [2, 0, 1]), [("x", T((2, 3, 4), dt))]))
    yield C("neg_dims_f32", "f32", "dims [-1,-3,-2]", lambda: (lambda x: A.permute.default(x, [-1, -3, -2]), [("x", T((2, 3, 4)))]))
    yield C("0d_f32", "f32", "0-d, dims []", lambda: (lambda x: A.permute.default(x, []), [("x", T(()))]))
    yield C("identity_4d_f32", "f32", "identity on 4-D", lambda: (lambda x: A.permute.default(x, [0, 1, 2, 3]), [("x", T((1, 2, 1, 3)))]))


@cases("squeeze.dim")
def _squeeze_dim():
    yield from sweep(ALL, "squeeze(x [3,1,4] {dt}, 1)", lambda dt: (lambda x: A.squeeze.dim(x, 1), [("x", T((3, 1, 4), dt))]))
    yield C("neg_dim_f32", "f32", "dim -1 on [2,3,1]", lambda: (lambda x: A.squeeze.dim(x, -1), [("x", T((2, 3, 1)))]))
    yield C("non_one_noop_f32", "f32", "squeezing a size-3 dim is a no-op", lambda: (lambda x: A.squeeze.dim(x, 0), [("x", T((3, 2)))]))
    yield C("to_0d_f32", "f32", "[1] -> 0-d", lambda: (lambda x: A.squeeze.dim(x, 0), [("x", T((1,)))]))


@cases("squeeze.dims")
def _squeeze_dims():
    yield from sweep(ALL, "squeeze(x [1,3,1,2] {dt}, [0,2])", lambda dt: (lambda x: A.squeeze.dims(x, [0, 2]), [("x", T((1, 3, 1, 2), dt))]))
    yield C("mixed_noop_f32", "f32", "dims [0,1,-1]: only size-1 dims go", lambda: (lambda x: A.squeeze.dims(x, [0, 1, -1]), [("x", T((1, 3, 1)))]))
    yield C("empty_dims_f32", "f32", "dims [] is a no-op", lambda: (lambda x: A.squeeze.dims(x, []), [("x", T((1, 2)))]))
    yield C("size0_f32", "f32", "size-0 tensor", lambda: (lambda x: A.squeeze.dims(x, [1]), [("x", T((0, 1, 2)))]))


@cases("unsqueeze")
def _unsqueeze():
    yield from sweep(ALL, "unsqueeze(x [3,4] {dt}, 1)", lambda dt: (lambda x: A.unsqueeze.default(x, 1), [("x", T((3, 4), dt))]))
    yield C("neg_dim_f32", "f32", "dim -1 (append)", lambda: (lambda x: A.unsqueeze.default(x, -1), [("x", T((3, 4)))]))
    yield C("end_dim_f32", "f32", "dim = ndim (append)", lambda: (lambda x: A.unsqueeze.default(x, 2), [("x", T((3, 4)))]))
    yield C("0d_f32", "f32", "0-d -> [1]", lambda: (lambda x: A.unsqueeze.default(x, 0), [("x", T(()))]))


@cases("repeat")
def _repeat():
    yield from sweep(ALL, "repeat(x [2,3] {dt}, [2,1])", lambda dt: (lambda x: A.repeat.default(x, [2, 1]), [("x", T((2, 3), dt))]))
    yield C("more_dims_f32", "f32", "repeats [2,1,3] on 2-D adds a leading dim", lambda: (lambda x: A.repeat.default(x, [2, 1, 3]), [("x", T((2, 3)))]))
    yield C("0d_f32", "f32", "0-d repeated [3]", lambda: (lambda x: A.repeat.default(x, [3]), [("x", T(()))]))
    yield C("zero_repeat_f32", "f32", "repeat 0 gives size 0", lambda: (lambda x: A.repeat.default(x, [0, 2]), [("x", T((2, 3)))]))


@cases("flip")
def _flip():
    yield from sweep(ALL, "flip(x [3,4] {dt}, [0])", lambda dt: (lambda x: A.flip.default(x, [0]), [("x", T((3, 4), dt))]))
    yield C("multi_neg_f32", "f32", "dims [0,-1] on 3-D", lambda: (lambda x: A.flip.default(x, [0, -1]), [("x", T((2, 3, 4)))]))
    yield C("no_dims_f32", "f32", "dims [] (no-op)", lambda: (lambda x: A.flip.default(x, []), [("x", T((2, 3)))]))
    yield C("0d_f32", "f32", "0-d", lambda: (lambda x: A.flip.default(x, []), [("x", T(()))]))


@cases("cat")
def _cat():
    yield from sweep(ALL, "cat([a [2,3], b [2,1]] {dt}, 1)", lambda dt: (lambda a, b: A.cat.default([a, b], 1), [("a", T((2, 3), dt)), ("b", T((2, 1), dt))]))
    yield C("neg_dim_three_f32", "f32", "three tensors, dim -3", lambda: (lambda a, b, c: A.cat.default([a, b, c], -3), [("a", T((1, 2, 2))), ("b", T((3, 2, 2))), ("c", T((2, 2, 2)))]))
    yield C("empty_member_f32", "f32", "a [2,0] member", lambda: (lambda a, b: A.cat.default([a, b], 1), [("a", T((2, 3))), ("b", T((2, 0)))]))
    yield C("legacy_empty_1d_f32", "f32", "a legacy [0] 1-D empty tensor is skipped", lambda: (lambda a, b: A.cat.default([a, b], 0), [("a", T((2, 3))), ("b", T((0,)))]))
    yield C("promote_i32_f16", "mixed", "i32 with f16 -> f16", lambda: (lambda a, b: A.cat.default([a, b], 0), [("a", T((1, 3), "i32")), ("b", T((2, 3), "f16"))]))
    yield C("promote_bool_i64", "mixed", "bool with i64 -> i64", lambda: (lambda a, b: A.cat.default([a, b], 0), [("a", T((2,), "bool")), ("b", T((2,), "i64"))]))
    yield C("single_f32", "f32", "one tensor", lambda: (lambda a: A.cat.default([a], 0), [("a", T((2, 3)))]))


def pad_op(name, shapes, pads, dtypes=ALL):
    op = ov(name)

    def build():
        (s0, p0), rest = (shapes[0], pads[0]), list(zip(shapes[1:], pads[1:]))
        cs = sweep(dtypes, f"{name}(x {list(s0)} {{dt}}, {p0})", lambda dt: (lambda x: op(x, p0), [("x", T(s0, dt))]))
        for j, (s, p) in enumerate(rest):
            cs.append(C(f"variant{j + 1}_f32", "f32", f"{name}(x {list(s)}, {p})", (lambda s=s, p=p: (lambda x: op(x, p), [("x", T(s))]))))
        return cs

    register(name, build)


pad_op("reflection_pad1d", [(2, 3, 5), (3, 5), (1, 2, 4)], [[2, 1], [0, 3], [3, 3]])
pad_op("reflection_pad2d", [(1, 2, 4, 5), (2, 3, 3), (1, 1, 4, 4)], [[1, 2, 2, 1], [2, 2, 0, 1], [3, 0, 0, 3]])
pad_op("reflection_pad3d", [(1, 1, 3, 4, 4), (1, 3, 3, 3)], [[1, 1, 1, 1, 1, 1], [2, 0, 1, 2, 0, 1]])
pad_op("replication_pad2d", [(1, 2, 3, 4), (2, 3, 3), (1, 1, 1, 1)], [[1, 2, 2, 1], [3, 0, 0, 2], [2, 2, 2, 2]])
pad_op("replication_pad3d", [(1, 1, 2, 3, 3), (1, 2, 2, 2)], [[1, 1, 1, 1, 1, 1], [0, 2, 1, 0, 3, 1]])


@cases("constant_pad_nd")
def _constant_pad():
    yield from sweep(ALL, "constant_pad_nd(x [2,3] {dt}, [1,2])", lambda dt: (lambda x: A.constant_pad_nd.default(x, [1, 2]), [("x", T((2, 3), dt))]))
    yield C("two_dims_value_f32", "f32", "pad the last two dims, value 3.5", lambda: (lambda x: A.constant_pad_nd.default(x, [1, 1, 2, 0], 3.5), [("x", T((2, 3, 4)))]))
    yield C("negative_crop_f32", "f32", "negative padding crops", lambda: (lambda x: A.constant_pad_nd.default(x, [-1, 2, 0, -1]), [("x", T((3, 4)))]))
    yield C("int_value_i32", "i32", "int tensor, value 7", lambda: (lambda x: A.constant_pad_nd.default(x, [2, 0], 7), [("x", T((2, 3), "i32"))]))
    yield C("neg_inf_value_f32", "f32", "value -inf (max-pool style)", lambda: (lambda x: A.constant_pad_nd.default(x, [1, 1], -INF), [("x", T((2, 2)))]))
    yield C("all_dims_f32", "f32", "pad every dim of a 3-D tensor", lambda: (lambda x: A.constant_pad_nd.default(x, [1, 0, 0, 1, 1, 1]), [("x", T((1, 2, 2)))]))
    yield C("empty_input_f32", "f32", "size-0 input padded to non-empty", lambda: (lambda x: A.constant_pad_nd.default(x, [1, 1], 2.0), [("x", T((2, 0)))]))


@cases("as_strided")
def _as_strided():
    yield from sweep(ALL, "as_strided(x [3,4] {dt}, [2,3], [4,1], 1)", lambda dt: (lambda x: A.as_strided.default(x, [2, 3], [4, 1], 1), [("x", T((3, 4), dt))]))
    yield C("transpose_f32", "f32", "strides [1,4]: a transposed view", lambda: (lambda x: A.as_strided.default(x, [4, 3], [1, 4]), [("x", T((3, 4)))]))
    yield C("overlapping_f32", "f32", "overlapping windows [4,3] strides [1,1] (unfold-like)", lambda: (lambda x: A.as_strided.default(x, [4, 3], [1, 1]), [("x", T((6,)))]))
    yield C("zero_stride_f32", "f32", "stride 0 (broadcast)", lambda: (lambda x: A.as_strided.default(x, [3, 2], [0, 1], 2), [("x", T((5,)))]))
    yield C("to_0d_f32", "f32", "0-d at offset 3", lambda: (lambda x: A.as_strided.default(x, [], [], 3), [("x", T((2, 2)))]))


@cases("alias")
def _alias():
    yield from sweep(ALL, "alias(x [2,3] {dt})", lambda dt: (A.alias.default, [("x", T((2, 3), dt))]))
    yield C("0d_f32", "f32", "0-d", lambda: (A.alias.default, [("x", T(()))]))


@cases("clone")
def _clone():
    yield from sweep(ALL, "clone(x [2,3] {dt})", lambda dt: (A.clone.default, [("x", T((2, 3), dt))]))
    yield C("channels_last_f32", "f32", "memory_format=channels_last (a layout request; values unchanged)", lambda: (lambda x: A.clone.default(x, memory_format=torch.channels_last), [("x", T((1, 3, 2, 2)))]))
    yield C("empty_f32", "f32", "size-0", lambda: (A.clone.default, [("x", T((0, 2)))]))


@cases("copy")
def _copy():
    yield from sweep(ALL, "copy(self [3,4] {dt}, src [3,4] {dt})", lambda dt: (A.copy.default, [("x", T((3, 4), dt)), ("src", T((3, 4), dt))]))
    yield C("bcast_f32", "f32", "src [4] broadcast into self [3,4]", lambda: (A.copy.default, [("x", T((3, 4))), ("src", T((4,)))]))
    yield C("cast_i32_to_f32", "mixed", "src i32 into self f32 (result f32)", lambda: (A.copy.default, [("x", T((3, 4))), ("src", T((3, 4), "i32"))]))
    yield C("cast_f32_to_i64", "mixed", "src f32 into self i64 (truncation)", lambda: (A.copy.default, [("x", T((3, 4), "i64")), ("src", T((3, 4)))]))
    yield C("0d_src_f16", "mixed", "0-d f32 src into f16 self", lambda: (A.copy.default, [("x", T((2, 3), "f16")), ("src", T(()))]))


@cases("_to_copy")
def _to_copy():
    for dt in ALL:
        if dt != "f32":
            yield C(f"f32_to_{dt}", dt, f"_to_copy f32 -> {dt} (values in range; floats truncate toward 0 for ints)",
                    (lambda dt=dt: (lambda x: A._to_copy.default(x, dtype=TD[dt]), [("x", T((3, 4), "f32", "pos" if dt == "u8" else "normal"))])))
            yield C(f"{dt}_to_f32", dt, f"_to_copy {dt} -> f32", (lambda dt=dt: (lambda x: A._to_copy.default(x, dtype=torch.float32), [("x", T((3, 4), dt))])))
    yield C("no_dtype_f32", "f32", "_to_copy without dtype (a copy)", lambda: (A._to_copy.default, [("x", T((2, 3)))]))
    yield C("special_f32_to_f16", "f16", "NaN/inf, and 1e5/1e-8 overflow/underflow in f16", lambda: (lambda x: A._to_copy.default(x, dtype=torch.float16), [("x", I([NAN, INF, -INF, 1e5, -1e5, 1e-8, 65504.0, 0.1], "f32"))]))
    yield C("special_f32_to_bf16", "bf16", "NaN/inf, rounding to nearest even in bf16", lambda: (lambda x: A._to_copy.default(x, dtype=torch.bfloat16), [("x", I([NAN, INF, -INF, 1.00390625, 1.01171875, 3e38, 1e-40, 0.1], "f32"))]))
    yield C("special_f32_to_bool", "bool", "NaN, -0.0, tiny values to bool", lambda: (lambda x: A._to_copy.default(x, dtype=torch.bool), [("x", I([NAN, -0.0, 0.0, 1e-30, -INF], "f32"))]))
    yield C("i64_to_i8_wrap", "i8", "i64 -> i8 wraps", lambda: (lambda x: A._to_copy.default(x, dtype=torch.int8), [("x", I([127, 128, 255, -129, 1000], "i64"))]))
    yield C("i32_to_u8_wrap", "u8", "negative i32 -> u8 wraps", lambda: (lambda x: A._to_copy.default(x, dtype=torch.uint8), [("x", I([-1, -128, 256, 300], "i32"))]))
    yield C("f16_to_bf16", "bf16", "f16 -> bf16", lambda: (lambda x: A._to_copy.default(x, dtype=torch.bfloat16), [("x", T((3, 4), "f16"))]))
    yield C("neg_float_to_i32", "i32", "negative floats truncate toward zero", lambda: (lambda x: A._to_copy.default(x, dtype=torch.int32), [("x", I([-2.7, -0.5, 2.7, 0.9, -1e9], "f32"))]))
    yield C("0d_f64_to_f32", "f64", "0-d", lambda: (lambda x: A._to_copy.default(x, dtype=torch.float32), [("x", T((), "f64"))]))


# ---- creation ------------------------------------------------------------------


@cases("arange.start_step")
def _arange():
    yield from sweep(ALL, "arange(0, 7, 2, dtype={dt})", lambda dt: (lambda: A.arange.start_step(0, 7, 2, dtype=TD[dt]), []))
    yield C("int_default_i64", "i64", "int arguments, no dtype -> i64", lambda: (lambda: A.arange.start_step(-3, 5, 1), []))
    yield C("float_step_f32", "f32", "arange(0.5, 3.0, 0.5) -> f32", lambda: (lambda: A.arange.start_step(0.5, 3.0, 0.5), []))
    yield C("neg_step_i64", "i64", "arange(10, 0, -3)", lambda: (lambda: A.arange.start_step(10, 0, -3), []))
    yield C("fractional_len_f32", "f32", "arange(0, 1, 0.1): length from ceil((end-start)/step)", lambda: (lambda: A.arange.start_step(0, 1, 0.1), []))
    yield C("empty_i64", "i64", "empty range", lambda: (lambda: A.arange.start_step(3, 3, 1), []))
    yield C("with_input_f32", "f32", "arange added to an input (the usual position-id pattern)", lambda: (lambda x: A.add.Tensor(x, A.arange.start_step(0, 4, 1)), [("x", T((2, 4)))]))


@cases("full")
def _full():
    yield from sweep(ALL, "full([2,3], 1, dtype={dt})", lambda dt: (lambda: A.full.default([2, 3], 1, dtype=TD[dt]), []))
    yield C("float_value_f32", "f32", "float value, no dtype -> f32", lambda: (lambda: A.full.default([2, 3], 1.5), []))
    yield C("int_value_i64", "i64", "int value, no dtype -> i64", lambda: (lambda: A.full.default([3], -4), []))
    yield C("bool_value", "bool", "bool value -> bool", lambda: (lambda: A.full.default([2], True), []))
    yield C("0d_f32", "f32", "size [] (0-d)", lambda: (lambda: A.full.default([], 2.0), []))
    yield C("empty_f32", "f32", "size [0,3]", lambda: (lambda: A.full.default([0, 3], 2.0), []))
    yield C("neg_inf_f32", "f32", "value -inf", lambda: (lambda: A.full.default([2, 2], -INF), []))
    yield C("nan_f16", "f16", "value NaN in f16", lambda: (lambda: A.full.default([2], NAN, dtype=torch.float16), []))


@cases("full_like")
def _full_like():
    yield from sweep(ALL, "full_like(x [2,3] {dt}, 1)", lambda dt: (lambda x: A.full_like.default(x, 1), [("x", T((2, 3), dt))]))
    yield C("dtype_arg_f32_to_i32", "mixed", "dtype=i32 from an f32 input", lambda: (lambda x: A.full_like.default(x, 7, dtype=torch.int32), [("x", T((2, 3)))]))
    yield C("float_value_on_int", "i64", "value 2.7 on an i64 input truncates", lambda: (lambda x: A.full_like.default(x, 2.7), [("x", T((3,), "i64"))]))
    yield C("inf_f32", "f32", "value inf", lambda: (lambda x: A.full_like.default(x, INF), [("x", T((2,)))]))
    yield C("0d_f32", "f32", "0-d", lambda: (lambda x: A.full_like.default(x, -1.0), [("x", T(()))]))


@cases("fill.Scalar")
def _fill():
    yield from sweep(ALL, "fill(x [2,3] {dt}, 1)", lambda dt: (lambda x: A.fill.Scalar(x, 1), [("x", T((2, 3), dt))]))
    yield C("float_value_f32", "f32", "value -2.5", lambda: (lambda x: A.fill.Scalar(x, -2.5), [("x", T((2, 3)))]))
    yield C("float_value_on_i32", "i32", "value 2.7 on an i32 tensor truncates", lambda: (lambda x: A.fill.Scalar(x, 2.7), [("x", T((2, 3), "i32"))]))
    yield C("empty_f32", "f32", "size-0", lambda: (lambda x: A.fill.Scalar(x, 3.0), [("x", T((0, 2)))]))


@cases("empty.memory_format")
def _empty():
    yield from sweep(["f32", "f16", "bf16", "i64", "bool"], "empty([2,3], dtype={dt}) then fill(1)",
                     lambda dt: (lambda: A.fill.Scalar(A.empty.memory_format([2, 3], dtype=TD[dt]), 1), []))
    yield C("size0_f32", "f32", "empty([0,3]) returned directly (no values to read)", lambda: (lambda: A.empty.memory_format([0, 3]), []))
    yield C("size0_i32", "i32", "empty([2,0,4], dtype=i32)", lambda: (lambda: A.empty.memory_format([2, 0, 4], dtype=torch.int32), []))
    yield C("like_input_f32", "f32", "empty of an input's shape, filled, added to the input", lambda: (lambda x: A.add.Tensor(x, A.fill.Scalar(A.empty.memory_format([2, 3]), 2.0)), [("x", T((2, 3)))]))


@cases("empty_strided")
def _empty_strided():
    yield from sweep(["f32", "f16", "bf16", "i64", "bool"], "empty_strided([2,3], [3,1], dtype={dt}) then fill(1)",
                     lambda dt: (lambda: A.fill.Scalar(A.empty_strided.default([2, 3], [3, 1], dtype=TD[dt]), 1), []))
    yield C("transposed_strides_f32", "f32", "strides [1,2] (column-major) then fill", lambda: (lambda: A.fill.Scalar(A.empty_strided.default([2, 3], [1, 2]), 4.0), []))
    yield C("size0_f32", "f32", "size [0,2] returned directly", lambda: (lambda: A.empty_strided.default([0, 2], [2, 1]), []))


@cases("scalar_tensor")
def _scalar_tensor():
    yield from sweep(ALL, "scalar_tensor(1, dtype={dt})", lambda dt: (lambda: A.scalar_tensor.default(1, dtype=TD[dt]), []))
    yield C("float_default_f32", "f32", "3.5 without dtype -> f32", lambda: (lambda: A.scalar_tensor.default(3.5), []))
    yield C("int_default", "f32", "int value without dtype -> f32 (scalar_tensor defaults to float)", lambda: (lambda: A.scalar_tensor.default(-2), []))
    yield C("nan_f32", "f32", "NaN", lambda: (lambda: A.scalar_tensor.default(NAN), []))
    yield C("used_with_input_f32", "f32", "0-d constant combined with an input", lambda: (lambda x: A.mul.Tensor(x, A.scalar_tensor.default(0.5)), [("x", T((2, 3)))]))


@cases("native_dropout")
def _native_dropout():
    yield from sweep(FLOAT, "native_dropout(x [3,4] {dt}, 0.5, train=False) -> (x, all-true mask)",
                     lambda dt: (lambda x: A.native_dropout.default(x, 0.5, False), [("x", T((3, 4), dt))]))
    yield C("p0_f32", "f32", "p=0.0, train=False", lambda: (lambda x: A.native_dropout.default(x, 0.0, False), [("x", T((2, 3)))]))


# ---- sort / topk -------------------------------------------------------------------


@cases("sort")
def _sort():
    yield from sweep(ALL, "sort(x [3,5] {dt} (bool: [3,2]), -1), distinct values per row -> (values, indices)",
                     lambda dt: (A.sort.default, [("x", T((3, 5), dt, "distinct") if dt != "bool" else T((3, 2), dt, "distinct"))]))
    yield C("descending_dim0_f32", "f32", "dim 0, descending", lambda: (lambda x: A.sort.default(x, 0, True), [("x", T((5, 3), "f32", "distinct"))]))
    yield C("nan_inf_f32", "f32", "NaN sorts last (ascending), infs at the ends", lambda: (A.sort.default, [("x", I([[3.0, NAN, -INF, 1.0, INF, -2.0]], "f32"))]))
    yield C("nan_descending_f32", "f32", "NaN sorts first when descending", lambda: (lambda x: A.sort.default(x, -1, True), [("x", I([[3.0, NAN, -INF, 1.0, INF, -2.0]], "f32"))]))
    yield C("0d_f32", "f32", "0-d", lambda: (A.sort.default, [("x", T(()))]))
    yield C("size1_f32", "f32", "sort along a size-1 dim", lambda: (A.sort.default, [("x", T((3, 1)))]))
    yield C("long_f32", "f32", "64 distinct values", lambda: (A.sort.default, [("x", T((64,), "f32", "distinct"))]))


@cases("topk")
def _topk():
    yield from sweep(ALL, "topk(x [3,6] {dt} (bool: [3,2]), 2), distinct values per row",
                     lambda dt: (lambda x: A.topk.default(x, 2), [("x", T((3, 6), dt, "distinct") if dt != "bool" else T((3, 2), dt, "distinct"))]))
    yield C("smallest_dim0_f32", "f32", "k=3, dim 0, largest=False", lambda: (lambda x: A.topk.default(x, 3, 0, False), [("x", T((5, 2), "f32", "distinct"))]))
    yield C("k_full_f32", "f32", "k = the whole dim", lambda: (lambda x: A.topk.default(x, 4), [("x", T((2, 4), "f32", "distinct"))]))
    yield C("k0_f32", "f32", "k=0: empty outputs", lambda: (lambda x: A.topk.default(x, 0), [("x", T((2, 4)))]))
    yield C("nan_f32", "f32", "NaN counts as the largest", lambda: (lambda x: A.topk.default(x, 2), [("x", I([[1.0, NAN, 3.0, -INF, 2.0]], "f32"))]))
    yield C("unsorted_k1_f32", "f32", "sorted=False with k=1 (order is trivially defined)", lambda: (lambda x: A.topk.default(x, 1, -1, True, False), [("x", T((3, 5), "f32", "distinct"))]))


# ---- distances, resampling, misc --------------------------------------------------


@cases("_cdist_forward")
def _cdist():
    yield from sweep(ALL, "cdist(x1 [2,3,4] {dt}, x2 [2,5,4] {dt}, p=2)", lambda dt: (lambda a, b: A._cdist_forward.default(a, b, 2.0, None), [("x1", T((2, 3, 4), dt)), ("x2", T((2, 5, 4), dt))]))
    for p in [1.0, 0.0, 3.0, INF]:
        yield C(f"p{p}_f32".replace(".0", "").replace("inf", "inf"), "f32", f"p={p}", (lambda p=p: (lambda a, b: A._cdist_forward.default(a, b, p, None), [("x1", T((3, 4))), ("x2", T((5, 4)))])))
    yield C("mm_mode_f32", "f32", "p=2 compute_mode=1 (use the matmul formula)", lambda: (lambda a, b: A._cdist_forward.default(a, b, 2.0, 1), [("x1", T((3, 4))), ("x2", T((5, 4)))]))
    yield C("identical_points_f32", "f32", "distance 0 between identical rows", lambda: (lambda a: A._cdist_forward.default(a, a, 2.0, None), [("x1", T((3, 4)))]))


@cases("_pdist_forward")
def _pdist():
    yield from sweep(ALL, "pdist(x [5,3] {dt}, p=2)", lambda dt: (lambda x: A._pdist_forward.default(x, 2.0), [("x", T((5, 3), dt))]))
    for p in [1.0, 0.0, INF, 3.0]:
        yield C(f"p{p}_f32".replace(".0", ""), "f32", f"p={p}", (lambda p=p: (lambda x: A._pdist_forward.default(x, p), [("x", T((4, 3)))])))
    yield C("one_row_f32", "f32", "one row: empty output", lambda: (lambda x: A._pdist_forward.default(x, 2.0), [("x", T((1, 3)))]))


@cases("col2im")
def _col2im():
    # input [N, C*kh*kw, L]
    yield from sweep(ALL, "col2im([1,8,12] {dt}, out (4,5), kernel (2,2), stride 1)",
                     lambda dt: (lambda x: A.col2im.default(x, [4, 5], [2, 2], [1, 1], [0, 0], [1, 1]), [("x", T((1, 8, 12), dt))]))
    yield C("stride_pad_f32", "f32", "kernel (3,3), padding 1, stride 2 on (5,5)", lambda: (lambda x: A.col2im.default(x, [5, 5], [3, 3], [1, 1], [1, 1], [2, 2]), [("x", T((2, 18, 9)))]))
    yield C("dilation_f32", "f32", "kernel (2,2), dilation 2 on (5,4)", lambda: (lambda x: A.col2im.default(x, [5, 4], [2, 2], [2, 2], [0, 0], [1, 1]), [("x", T((1, 4, 6)))]))
    yield C("unbatched_f32", "f32", "2-D input [C*kh*kw, L]", lambda: (lambda x: A.col2im.default(x, [3, 3], [2, 2], [1, 1], [0, 0], [1, 1]), [("x", T((4, 4)))]))


@cases("grid_sampler_2d")
def _grid_sampler():
    def g(shape):
        return (torch.rand(shape) * 2.4 - 1.2)

    yield from sweep(ALL, "grid_sampler_2d([1,2,4,5] {dt}, grid [1,3,3,2] in [-1.2,1.2], bilinear, zeros, align_corners=False)",
                     lambda dt: (lambda x, gr: A.grid_sampler_2d.default(x, gr, 0, 0, False), [("x", T((1, 2, 4, 5), dt)), ("grid", g((1, 3, 3, 2)).to(TD[dt]))]))
    for interp, iname in [(0, "bilinear"), (1, "nearest"), (2, "bicubic")]:
        for pad, pname in [(0, "zeros"), (1, "border"), (2, "reflection")]:
            for ac in [False, True]:
                if (interp, pad, ac) == (0, 0, False):
                    continue
                if interp != 0 and ac:
                    continue
                yield C(f"{iname}_{pname}_{'ac' if ac else 'noac'}_f32", "f32", f"mode {iname}, padding {pname}, align_corners={ac}",
                        (lambda interp=interp, pad=pad, ac=ac: (lambda x, gr: A.grid_sampler_2d.default(x, gr, interp, pad, ac), [("x", T((2, 2, 4, 5))), ("grid", g((2, 3, 4, 2)))])))


@cases("upsample_bilinear2d.vec")
def _up_bilinear():
    yield from sweep(ALL, "upsample_bilinear2d([1,2,3,4] {dt}, output_size [6,8], align_corners=False)",
                     lambda dt: (lambda x: A.upsample_bilinear2d.vec(x, [6, 8], False, None), [("x", T((1, 2, 3, 4), dt))]))
    yield C("align_corners_f32", "f32", "output [5,7], align_corners=True", lambda: (lambda x: A.upsample_bilinear2d.vec(x, [5, 7], True, None), [("x", T((2, 1, 3, 4)))]))
    yield C("scale_factors_f32", "f32", "scale_factors [1.5, 2.0]", lambda: (lambda x: A.upsample_bilinear2d.vec(x, None, False, [1.5, 2.0]), [("x", T((1, 2, 4, 3)))]))
    yield C("downsample_f32", "f32", "output [2,3] from [5,7]", lambda: (lambda x: A.upsample_bilinear2d.vec(x, [2, 3], False, None), [("x", T((1, 1, 5, 7)))]))
    yield C("from_1x1_f32", "f32", "[1,1] -> [3,3], align_corners=True", lambda: (lambda x: A.upsample_bilinear2d.vec(x, [3, 3], True, None), [("x", T((1, 2, 1, 1)))]))


@cases("upsample_nearest2d.vec")
def _up_nearest():
    yield from sweep(ALL, "upsample_nearest2d([1,2,3,4] {dt}, output_size [6,8])",
                     lambda dt: (lambda x: A.upsample_nearest2d.vec(x, [6, 8], None), [("x", T((1, 2, 3, 4), dt))]))
    yield C("non_integer_ratio_f32", "f32", "output [5,7] from [3,4]", lambda: (lambda x: A.upsample_nearest2d.vec(x, [5, 7], None), [("x", T((1, 1, 3, 4)))]))
    yield C("scale_factors_f32", "f32", "scale_factors [2.0, 3.0]", lambda: (lambda x: A.upsample_nearest2d.vec(x, None, [2.0, 3.0]), [("x", T((2, 1, 2, 2)))]))
    yield C("fractional_scale_f32", "f32", "scale_factors [1.7, 0.6]", lambda: (lambda x: A.upsample_nearest2d.vec(x, None, [1.7, 0.6]), [("x", T((1, 2, 3, 5)))]))
    yield C("downsample_f32", "f32", "output [2,3] from [5,7]", lambda: (lambda x: A.upsample_nearest2d.vec(x, [2, 3], None), [("x", T((1, 1, 5, 7)))]))


@cases("_fft_r2c")
def _fft_r2c():
    def f(dims, norm, onesided):
        return lambda x: A.view_as_real.default(A._fft_r2c.default(x, dims, norm, onesided))

    yield from sweep(FLOAT, "rfft: _fft_r2c(x [3,8] {dt}, [1], norm 0, onesided) -> view_as_real",
                     lambda dt: (f([1], 0, True), [("x", T((3, 8), dt))]))
    yield C("twosided_f32", "f32", "onesided=False (full spectrum)", lambda: (f([1], 0, False), [("x", T((2, 6)))]))
    yield C("norm_ortho_f32", "f32", "normalization 1 (1/sqrt(n))", lambda: (f([1], 1, True), [("x", T((2, 5)))]))
    yield C("norm_forward_f32", "f32", "normalization 2 (1/n)", lambda: (f([0], 2, True), [("x", T((6, 2)))]))
    yield C("2d_f32", "f32", "rfft2 over dims [0,1]", lambda: (f([0, 1], 0, True), [("x", T((4, 6)))]))
    yield C("odd_len_f32", "f32", "odd length 7", lambda: (f([0], 0, True), [("x", T((7,)))]))


@cases("_fft_c2r")
def _fft_c2r():
    def f(dims, norm, n):
        return lambda x: A._fft_c2r.default(A.view_as_complex.default(x), dims, norm, n)

    yield from sweep(FLOAT, "irfft: _fft_c2r(view_as_complex(x [3,5,2] {dt}), [1], norm 2, last_dim_size 8)",
                     lambda dt: (f([1], 2, 8), [("x", T((3, 5, 2), dt))]))
    yield C("odd_out_f32", "f32", "last_dim_size 7 from 4 bins", lambda: (f([1], 2, 7), [("x", T((2, 4, 2)))]))
    yield C("norm_none_f32", "f32", "normalization 0", lambda: (f([0], 0, 6), [("x", T((4, 3, 2)))]))
    yield C("2d_f32", "f32", "irfft2 over [0,1], normalization 1", lambda: (f([0, 1], 1, 6), [("x", T((3, 4, 2)))]))


# --------------------------------------------------------------------------
# Generation
# --------------------------------------------------------------------------


def core_overloads():
    res = []
    for pname in dir(torch.ops.aten):
        try:
            pkt = getattr(torch.ops.aten, pname)
        except Exception:  # noqa: BLE001
            continue
        if not isinstance(pkt, torch._ops.OpOverloadPacket):
            continue
        for o in pkt.overloads():
            op = getattr(pkt, o)
            if torch.Tag.core in op.tags:
                res.append(opname(op))
    return sorted(set(res))


def op_dir(op):
    return op[len("aten."):]  # "add.Tensor", "abs.default"


def make_module(argnames, fn):
    """An nn.Module whose forward(<argnames>) casts f32 inputs standing for bf16
    to bf16, calls fn, and casts bf16 outputs to f32."""

    class OpCase(nn.Module):
        def __init__(self, casts):
            super().__init__()
            self.casts = casts

        def body(self, *xs):
            xs = [A._to_copy.default(x, dtype=torch.bfloat16) if c else x for x, c in zip(xs, self.casts)]
            out = fn(*xs)
            if isinstance(out, (list, tuple)):
                out = tuple(out)
            return pytree.tree_map(
                lambda t: A._to_copy.default(t, dtype=torch.float32)
                if isinstance(t, torch.Tensor) and t.dtype == torch.bfloat16 else t,
                out,
            )

    src = f"def forward(self{''.join(', ' + a for a in argnames)}):\n    return self.body({', '.join(argnames)})\n"
    ns = {}
    exec(src, ns)  # noqa: S102: named parameters become the graph's input names
    OpCase.forward = ns["forward"]
    return OpCase


def flat(out):
    if isinstance(out, torch.Tensor):
        return [out]
    leaves, _ = pytree.tree_flatten(tuple(out))
    for t in leaves:
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"non-tensor output {type(t).__name__}")
    return leaves


def to_numpy(t):
    t = t.detach().contiguous()
    if t.dtype not in NP:
        raise TypeError(f"dtype {t.dtype} has no .npy type")
    # (np.ascontiguousarray would turn a 0-d array into shape [1])
    arr = np.array(t.numpy().astype(np.dtype(NP[t.dtype]).newbyteorder("<"), copy=False), order="C", copy=True)
    assert arr.shape == tuple(t.shape), (arr.shape, t.shape)
    return arr


def npy_bytes(arr):
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    return buf.getvalue()


def max_diff(a, b):
    if a.shape != b.shape or a.dtype != b.dtype:
        return INF
    if a.numel() == 0:
        return 0.0
    if not a.dtype.is_floating_point:
        return float((a != b).sum())
    a64, b64 = a.double(), b.double()
    same = (a64 == b64) | (torch.isnan(a64) & torch.isnan(b64))
    d = (a64 - b64).abs()
    d[same] = 0
    return float(d.max())


def program_json(ep):
    """models/model.json of torch.export.save(ep), with node metadata -> {}."""
    buf = io.BytesIO()
    torch.export.save(ep, buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as zf:
        name = next(n for n in zf.namelist() if n.endswith("/models/model.json"))
        prog = json.loads(zf.read(name))

    def strip(graph):
        for node in graph["nodes"]:
            node["metadata"] = {}
            for inp in node.get("inputs", []):
                arg = inp.get("arg", {})
                if "as_graph" in arg:
                    strip(arg["as_graph"]["graph"])

    strip(prog["graph_module"]["graph"])
    return json.dumps(prog, separators=(",", ":"), allow_nan=False) + "\n"


def graph_ops(ep):
    out = []
    for n in ep.graph.nodes:
        if n.op == "call_function" and isinstance(n.target, torch._ops.OpOverload):
            out.append(opname(n.target))
    return out


def short_err(e):
    s = f"{type(e).__name__}: {e}".strip().splitlines()[0]
    return s[:160]


def gen_case(op, case):
    """Returns ("ok", entry, files) | ("unsupported", record) | ("error", record)."""
    cid = f"{op_dir(op)}/{case.name}"
    torch.manual_seed(zlib.crc32(cid.encode()))
    fn, named = case.make()
    names = [n for n, _ in named]
    tensors = [t for _, t in named]
    assert len(set(names)) == len(names), cid
    # 1. Does PyTorch eager support it (in the logical dtypes)?
    try:
        flat(fn(*tensors))
    except Exception as e:  # noqa: BLE001
        return "unsupported", {"case": cid, "dtype": case.dtype, "error": short_err(e)}
    casts = [t.dtype == torch.bfloat16 for t in tensors]
    stored = [t.float() if c else t for t, c in zip(tensors, casts)]
    m = make_module(names, fn)(casts).eval()
    expected = [t.detach() for t in flat(m(*stored))]
    try:
        ep = torch.export.export(m, tuple(stored))
        ep = ep.run_decompositions()
    except Exception as e:  # noqa: BLE001
        return "error", {"case": cid, "dtype": case.dtype, "error": "export: " + short_err(e)}
    ops = graph_ops(ep)
    target = op
    decomposed = target not in ops
    got = flat(ep.module()(*stored))
    assert len(got) == len(expected), cid
    ep_diff, ep_mismatch = 0.0, False
    half = case.dtype == "bf16" or any(t.dtype in (torch.float16, torch.bfloat16) for t in tensors)
    for i, (g, e) in enumerate(zip(got, expected)):
        g = g.detach()
        d = max_diff(g, e)
        ep_diff = max(ep_diff, d)
        tol = TOL[torch.bfloat16] if case.dtype == "bf16" else TOL.get(e.dtype, 0.0)
        if d > 0 and not (e.dtype.is_floating_point and g.shape == e.shape and torch.allclose(g, e, rtol=tol, atol=tol, equal_nan=True)):
            if half and g.shape == e.shape and e.dtype.is_floating_point:
                # A decomposition computing in f32 where eager rounds to f16/bf16 along the
                # way (e.g. col2im): keep the case, the reference stays eager's result.
                ep_mismatch = True
                continue
            return "error", {"case": cid, "dtype": case.dtype, "error": f"ep.module() output {i} differs from eager by {d}"}
    files = {"model.json": program_json(ep).encode()}
    in_names = list(ep.graph_signature.user_inputs)
    assert len(in_names) == len(stored), (cid, in_names)
    for i, (nm, t) in enumerate(zip(in_names, stored)):
        fname = f"inputs/{i}_{nm}.npy"
        files[fname] = npy_bytes(to_numpy(t))
    for i, t in enumerate(expected):
        files[f"expected/{i}.npy"] = npy_bytes(to_numpy(t))
    uniq = sorted(set(ops))
    entry = {
        "id": cid,
        "op": op,
        "dir": f"cases/{cid}",
        "dtype": case.dtype,
        "description": case.desc,
        "decomposed": decomposed,
    }
    if decomposed:
        entry["replaced_by"] = uniq
    if ep_diff:
        # ep.module() (the decomposed graph run by PyTorch) is not bit-exact with eager:
        # within the dtype's tolerance, or (ep_mismatch) beyond it for a half-precision case.
        entry["ep_vs_eager_max_diff"] = ep_diff
    if ep_mismatch:
        entry["ep_mismatch"] = True
    return "ok", entry, files


def gen_op(op):
    """Generate every case of one op; write its directory; return index parts."""
    torch.set_num_threads(1)
    cs = BUILDERS[op]()
    seen = set()
    for c in cs:
        assert c.name not in seen, (op, c.name)
        seen.add(c.name)
    op_root = os.path.join(CASES_DIR, op_dir(op))
    if os.path.isdir(op_root):
        shutil.rmtree(op_root)
    entries, unsupported, errors = [], [], []
    for c in cs:
        r = gen_case(op, c)
        if r[0] == "ok":
            _, entry, files = r
            base = os.path.join(HERE, entry["dir"])
            for rel, data in files.items():
                p = os.path.join(base, rel)
                os.makedirs(os.path.dirname(p), exist_ok=True)
                with open(p, "wb") as f:
                    f.write(data)
            entries.append(entry)
        elif r[0] == "unsupported":
            unsupported.append(r[1])
        else:
            errors.append(r[1])
    return op, entries, unsupported, errors


def write_index(index):
    """index.json with one case / record per line."""
    lines = ["{"]
    lines.append(f'  "torch_version": {json.dumps(index["torch_version"])},')
    lines.append(f'  "summary": {json.dumps(index["summary"])},')
    for key in ["core_overloads", "excluded", "notes", "cases", "eager_unsupported", "generation_errors"]:
        items = index[key]
        lines.append(f"  {json.dumps(key)}: [")
        for i, it in enumerate(items):
            lines.append("    " + json.dumps(it) + ("," if i + 1 < len(items) else ""))
        lines.append("  ]" + ("," if key != "generation_errors" else ""))
    lines.append("}")
    with open(INDEX, "w") as f:
        f.write("\n".join(lines) + "\n")


def resolve_names(args, core):
    out = []
    for a in args:
        a = a[len("aten."):] if a.startswith("aten.") else a
        if "." in a:
            cand = ["aten." + a]
        else:
            cand = [o for o in core if o.split(".")[1] == a]
        cand = [c for c in cand if c in core]
        if not cand:
            sys.exit(f"not a Core ATen overload or packet: {a}")
        out.extend(cand)
    return sorted(set(out))


def main(argv):
    jobs = 1
    listing = False
    names = []
    it = iter(argv)
    for a in it:
        if a == "-j":
            jobs = int(next(it))
        elif a.startswith("-j"):
            jobs = int(a[2:])
        elif a == "--list":
            listing = True
        elif a in ("-h", "--help"):
            print(__doc__)
            return
        else:
            names.append(a)
    torch.set_num_threads(1)
    core = core_overloads()
    # Every core overload is either generated or excluded, and nothing else is.
    both = set(BUILDERS) & set(EXCLUDED)
    assert not both, both
    missing = set(core) - set(BUILDERS) - set(EXCLUDED)
    assert not missing, f"core overloads with neither cases nor an exclusion: {sorted(missing)}"
    extra = (set(BUILDERS) | set(EXCLUDED)) - set(core)
    assert not extra, f"not Core ATen: {sorted(extra)}"

    if listing:
        for o in core:
            if o in EXCLUDED:
                print(f"{o:45s} excluded ({EXCLUDED[o][0]})")
            else:
                print(f"{o:45s} {len(BUILDERS[o]())} cases")
        return

    todo = resolve_names(names, core) if names else [o for o in core if o in BUILDERS]
    todo = [o for o in todo if o in BUILDERS]
    full = not names

    old = {"cases": [], "eager_unsupported": [], "generation_errors": []}
    if not full and os.path.exists(INDEX):
        with open(INDEX) as f:
            old = json.load(f)
    if full and os.path.isdir(CASES_DIR):
        shutil.rmtree(CASES_DIR)
    os.makedirs(CASES_DIR, exist_ok=True)

    results = []
    if jobs > 1:
        import multiprocessing as mp

        with mp.get_context("fork").Pool(jobs) as pool:
            for r in pool.imap_unordered(gen_op, todo):
                print(f"  {r[0]:45s} {len(r[1])} cases, {len(r[2])} eager-unsupported, {len(r[3])} errors", flush=True)
                results.append(r)
    else:
        for o in todo:
            r = gen_op(o)
            print(f"  {r[0]:45s} {len(r[1])} cases, {len(r[2])} eager-unsupported, {len(r[3])} errors", flush=True)
            results.append(r)

    done = set(todo)

    def keep(items, key):
        return [x for x in items if key(x) not in done]

    def op_of_id(cid):
        return "aten." + cid.split("/")[0]

    cases_ = keep(old["cases"], lambda x: x["op"]) + [e for r in results for e in r[1]]
    unsup = keep(old["eager_unsupported"], lambda x: op_of_id(x["case"])) + [e for r in results for e in r[2]]
    errs = keep(old.get("generation_errors", []), lambda x: op_of_id(x["case"])) + [e for r in results for e in r[3]]
    cases_.sort(key=lambda x: x["id"])
    unsup.sort(key=lambda x: x["case"])
    errs.sort(key=lambda x: x["case"])

    covered = {c["op"] for c in cases_}
    no_case = [o for o in core if o in BUILDERS and o not in covered]
    cats = {}
    for o, (cat, _) in EXCLUDED.items():
        cats[cat] = cats.get(cat, 0) + 1
    index = {
        "torch_version": torch.__version__,
        "summary": {
            "core_overloads": len(core),
            "with_cases": len(covered),
            "excluded": len(EXCLUDED),
            "excluded_by_category": dict(sorted(cats.items())),
            "cases": len(cases_),
            "decomposed_cases": sum(1 for c in cases_ if c["decomposed"]),
            "eager_unsupported_combinations": len(unsup),
            "generation_errors": len(errs),
            "inference_overloads_without_cases": no_case,
        },
        "core_overloads": core,
        "excluded": [{"op": o, "category": EXCLUDED[o][0], "reason": EXCLUDED[o][1]} for o in sorted(EXCLUDED)],
        "notes": [{"op": o, "note": NOTES[o]} for o in sorted(NOTES)],
        "cases": cases_,
        "eager_unsupported": unsup,
        "generation_errors": errs,
    }
    write_index(index)
    s = index["summary"]
    print(f"{s['core_overloads']} core overloads: {s['with_cases']} with {s['cases']} cases, "
          f"{s['excluded']} excluded {s['excluded_by_category']}; "
          f"{s['eager_unsupported_combinations']} eager-unsupported combinations skipped; "
          f"{s['generation_errors']} generation errors")
    if no_case:
        print("WARNING: inference-relevant overloads without any case:", no_case)
    if errs:
        for e in errs:
            print("  error:", e["case"], e["error"])


if __name__ == "__main__":
    main(sys.argv[1:])
