"""Which call arguments C code in this process can use: never memory of another process.

A tensor on an RPC device (``device_type >= RPC_SESS_MASK``) is described by a ``DLTensor`` in
this process whose ``data`` pointer is an address in the server's memory; a local compiled
function that dereferences it crashes the interpreter. Every Python -> C call path refuses such
an argument before the call, naming the function, the argument and the device:

- the fast-call extension tests the device type of each ``DLTensor*`` it packs (one load and a
  compare) and calls :func:`raise_foreign_tensor` only for a remote one;
- the ctypes path and callback returns use :func:`check_dltensor`;
- another call path (one that packs arguments its own way) calls :func:`check_local_args`.

Remote functions and modules stay usable: C receives a function or module handle whose calls
come back to Python and travel over RPC, where each argument is checked against its session.

Examples
--------
>>> from pytvm.ffi import Device
>>> err = foreign_tensor_error("vadd", 0, "NDArray", Device(129, 0))
>>> str(err).split(";")[0]
'vadd: argument 0: NDArray on remote[0]:cpu(0) lives in another process'
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from typing import Any

from .device import RPC_SESS_MASK, Device
from .errors import TVMValueError

__all__ = [
    "check_dltensor",
    "check_local_args",
    "foreign_tensor_error",
    "raise_foreign_tensor",
]

# Offset of DLTensor.device in the struct (after the ``void* data`` pointer).
_DEVICE_OFFSET = ctypes.sizeof(ctypes.c_void_p)
_PLAIN = frozenset({int, float, bool, str, bytes, bytearray, type(None)})


def foreign_tensor_error(
    func: str | None, index: int | None, kind: str, device: Device
) -> TVMValueError:
    """The error for a tensor on ``device`` (an RPC device) given to local C code: argument
    ``index`` of the C function ``func``, or (``index`` None) the value the Python function
    ``func`` returns to C.
    """
    where = f"{func}: " if func else ""
    what = "the returned value" if index is None else f"argument {index}"
    return TVMValueError(
        f"{where}{what}: {kind} on {device} lives in another process; copy it here "
        "with .copyto(pytvm.cpu())"
    )


def _device_at(address: int) -> Device:
    dev = (ctypes.c_int32 * 2).from_address(address + _DEVICE_OFFSET)
    return Device(dev[0], dev[1])


def raise_foreign_tensor(func: str | None, index: int | None, arg: Any, address: int) -> None:
    """Raise :func:`foreign_tensor_error` for ``arg``, whose ``DLTensor`` sits at ``address``
    (called by the fast-call extension once it has seen a remote device type).
    """
    raise foreign_tensor_error(func, index, type(arg).__name__, _device_at(address))


def check_dltensor(func: str | None, index: int | None, arg: Any, address: int) -> None:
    """Raise if the ``DLTensor`` at ``address`` (the value ``arg`` is passed as) is on an RPC
    device; a null address passes (C sees a null pointer, not foreign memory).
    """
    if address and ctypes.c_int32.from_address(address + _DEVICE_OFFSET).value >= RPC_SESS_MASK:
        raise_foreign_tensor(func, index, arg, address)


def check_local_args(func: str, args: Sequence[Any]) -> None:
    """Raise for the first of ``args`` that lives in another process (a tensor whose
    ``device`` is an RPC device), for call paths that pack arguments themselves.
    """
    for index, arg in enumerate(args):
        if type(arg) in _PLAIN:
            continue
        device = getattr(arg, "device", None)
        if isinstance(device, Device) and device.device_type >= RPC_SESS_MASK:
            raise foreign_tensor_error(func, index, type(arg).__name__, device)
