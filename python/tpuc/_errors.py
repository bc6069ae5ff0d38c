"""The exceptions tpuc raises (the native module raises these classes)."""

import builtins


class TpucError(Exception):
    """Base of every error tpuc raises."""


class CompileError(TpucError):
    """A program tpuc cannot compile exactly. `node` and `op` name the graph node and its
    operator where the compiler knows them, `hint` says what to do."""

    node = None
    op = None
    hint = None


class RuntimeError(TpucError, builtins.RuntimeError):  # noqa: A001
    """A failure running a program: the plugin, the artifact or the device."""


class InputError(TpucError, ValueError):
    """Inputs of the wrong count, dtype or shape (the input is named)."""


class OptionError(TpucError, ValueError):
    """An option of the wrong value (the option is named)."""
