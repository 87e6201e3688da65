"""The test functions an RPC server offers its clients: TVM's ``rpc.test.*`` and tvm-ffi's
``testing.echo``/``testing.test_raise_error``, with the same names and behaviour.

Examples
--------
>>> funcs = remote_test_functions()
>>> funcs["rpc.test.addone"](41), funcs["testing.echo"]("x", 2)
(42, 'x')
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from ...ffi.errors import TVMValueError, parse_error
from ...runtime.ndarray import NDArray, array

__all__ = ["remote_test_functions"]


def _echo(*args: Any) -> Any:
    """tvm-ffi's ``testing.echo``: the first argument (None without arguments)."""
    return args[0] if args else None


def _raise_error(kind: str, msg: str) -> None:
    """tvm-ffi's ``testing.test_raise_error``: raise an error of ``kind`` carrying ``msg``."""
    raise parse_error(f"{kind}: {msg}")


def _except(name: str) -> None:
    raise ValueError(f"{name}")


def _remote_tensor_func(y: NDArray) -> None:
    """Check that the client's array arrived as ``ones((3, 4))``."""
    np.testing.assert_equal(y.numpy(), np.ones((3, 4)))


def _remote_return_nd(name: str) -> Callable[..., Any]:
    """Closures over one server-side array: a check that returned arrays stay referenced.

    Each call makes its own array, as in TVM; ``ref_count`` returns the references held to its
    array besides the count's own (1: the closure).
    """
    nd = array(np.zeros(10, dtype="float32"))
    if name == "get_arr":
        return lambda: nd
    if name == "ref_count":
        return lambda: sys.getrefcount(nd) - 1  # minus getrefcount's own argument
    if name == "get_elem":
        return lambda idx: nd.numpy()[idx].item()
    if name == "get_arr_elem":
        return lambda arr, idx: arr.numpy()[idx].item()
    raise TVMValueError(
        f"rpc.test.remote_return_nd: unknown name {name!r}; expected get_arr, ref_count, "
        "get_elem or get_arr_elem"
    )


def remote_test_functions() -> dict[str, Callable[..., Any]]:
    """Name -> function of every test function a server offers (registered per session)."""
    return {
        "rpc.test.echo": lambda x: x,
        "rpc.test.addone": lambda x: x + 1,
        "rpc.test.strcat": lambda name, x: f"{name}:{x}",
        "rpc.test.except": _except,
        "rpc.test.runtime_str_concat": lambda x, y: x + y,
        "rpc.test.remote_tensor_func": _remote_tensor_func,
        "rpc.test.add_to_lhs": lambda x: lambda y: x + y,
        "rpc.test.remote_return_nd": _remote_return_nd,
        "testing.echo": _echo,
        "testing.test_raise_error": _raise_error,
    }
