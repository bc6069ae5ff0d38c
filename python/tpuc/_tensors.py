"""Torch tensors and numpy arrays as the native module takes them: `(dtype, shape,
address, bytes)` views of contiguous host memory, read in place (no copy); outputs are
allocated here and written in place by the runtime."""

from __future__ import annotations

import numpy as np

from ._errors import InputError

# tpuc's dtype names and numpy's / torch's.
_NUMPY = {
    "f64": np.float64,
    "f32": np.float32,
    "f16": np.float16,
    "i64": np.int64,
    "i32": np.int32,
    "i16": np.int16,
    "i8": np.int8,
    "u8": np.uint8,
    "bool": np.bool_,
    "c64": np.complex64,
    "c128": np.complex128,
}
_FROM_NUMPY = {np.dtype(v).str: k for k, v in _NUMPY.items()}


def _torch():
    try:
        import torch

        return torch
    except ImportError:  # numpy-only use
        return None


_TORCH_DTYPES = None


def _torch_dtypes(torch):
    """tpuc's dtype names and torch's (built once)."""
    global _TORCH_DTYPES
    if _TORCH_DTYPES is None:
        _TORCH_DTYPES = _make_torch_dtypes(torch)
    return _TORCH_DTYPES


def _make_torch_dtypes(torch):
    return {
        "f64": torch.float64,
        "f32": torch.float32,
        "f16": torch.float16,
        "bf16": torch.bfloat16,
        "i64": torch.int64,
        "i32": torch.int32,
        "i16": torch.int16,
        "i8": torch.int8,
        "u8": torch.uint8,
        "bool": torch.bool,
        "c64": torch.complex64,
        "c128": torch.complex128,
    }


def _is_torch(x) -> bool:
    return type(x).__module__.startswith("torch") and hasattr(x, "data_ptr")


def wants_numpy(values) -> bool:
    """Numpy results for numpy inputs (no torch tensor among them)."""
    return not any(_is_torch(v) for v in values)


def tpuc_dtype(x) -> str:
    if _is_torch(x):
        torch = _torch()
        for name, d in _torch_dtypes(torch).items():
            if x.dtype == d:
                return name
        return str(x.dtype)
    a = np.asarray(x)
    if a.dtype.name == "bfloat16":
        return "bf16"
    # A non-native byte order ('>f4' here) is the same dtype: to_views swaps it.
    d = a.dtype if a.dtype.isnative else a.dtype.newbyteorder("=")
    return _FROM_NUMPY.get(d.str, d.name)


def to_views(values, specs):
    """Views of `values` for the inputs `specs` ([(name, dtype, shape)]), and the
    objects to keep alive while the native call reads them. A torch tensor on another
    device is copied to the host; a non-contiguous one made contiguous; a numpy array
    of the other byte order swapped."""
    views, keep = [], []
    for value, (name, dtype, shape) in zip(values, specs):
        got = tpuc_dtype(value)
        if got != dtype:
            raise InputError(f"input `{name}`: expected {dtype}{list(shape)}, got {got}{list(_shape(value))}")
        if _is_torch(value):
            t = value.detach()
            torch = _torch()
            if t.layout != torch.strided:
                raise InputError(f"input `{name}`: a {t.layout} tensor; pass a dense one (`.to_dense()`)")
            if t.device.type == "meta":
                raise InputError(f"input `{name}` is on the meta device: it has no values")
            if t.device.type != "cpu":
                t = t.cpu()
            # A conjugate or negative view shares memory with its base: its values
            # exist only once resolved.
            t = t.resolve_conj().resolve_neg().contiguous()
            keep.append(t)
            views.append((dtype, list(t.shape), t.data_ptr(), t.numel() * t.element_size()))
        else:
            a = np.asarray(value)
            if not a.dtype.isnative:
                a = a.astype(a.dtype.newbyteorder("="))
            a = np.ascontiguousarray(a)
            keep.append(a)
            views.append((dtype, list(a.shape), a.__array_interface__["data"][0], a.nbytes))
    return views, keep


def _shape(x):
    return tuple(x.shape) if hasattr(x, "shape") else np.shape(x)


def empty(dtype, shape, numpy_out: bool):
    """(array, (address, bytes)) of a new output array."""
    torch = None if numpy_out else _torch()
    if torch is not None:
        # device="cpu": the runtime writes host memory, whatever torch.set_default_device says.
        t = torch.empty(shape, dtype=_torch_dtypes(torch)[dtype], device="cpu")
        return t, (t.data_ptr(), t.numel() * t.element_size())
    if dtype == "bf16":
        import ml_dtypes

        a = np.empty(shape, dtype=ml_dtypes.bfloat16)
    else:
        a = np.empty(shape, dtype=_NUMPY[dtype])
    return a, (a.__array_interface__["data"][0], a.nbytes)


def from_host(dtype, shape, data: bytes, numpy_out: bool):
    """A tensor (numpy array with numpy_out) of `data`'s bytes."""
    torch = None if numpy_out else _torch()
    if torch is not None:
        t = torch.frombuffer(bytearray(data), dtype=_torch_dtypes(torch)[dtype]) if data else torch.empty(0, dtype=_torch_dtypes(torch)[dtype], device="cpu")
        return t.reshape(shape)
    if dtype == "bf16":
        import ml_dtypes

        return np.frombuffer(bytearray(data), dtype=ml_dtypes.bfloat16).reshape(shape)
    return np.frombuffer(bytearray(data), dtype=_NUMPY[dtype]).reshape(shape)
