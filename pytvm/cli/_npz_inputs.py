"""Reading ``pytvm run --inputs x.npz``: arrays by input name, checked before they are loaded.

An ``.npz`` is a zip of ``.npy`` files. Each array's header (shape, dtype) is read first and
compared with the module's input of that name, so a damaged or hostile file fails with one
line naming the file and the array: never unpickled (``allow_pickle=False``: an array of
Python objects is refused), never decompressed past the size the input takes.
"""

from __future__ import annotations

import zipfile
import zlib
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.lib import format as npy_format

from pytvm.ffi.errors import TVMOSError, TVMValueError

__all__ = ["read_inputs"]

_HOW = "write it with numpy.savez(path, name=array, ...)"


def _header(archive: zipfile.ZipFile, member: str) -> tuple[tuple[int, ...], np.dtype[Any]]:
    with archive.open(member) as f:
        version = npy_format.read_magic(f)
        if version == (1, 0):
            shape, _, dtype = npy_format.read_array_header_1_0(f)
        elif version == (2, 0):
            shape, _, dtype = npy_format.read_array_header_2_0(f)
        else:
            raise ValueError(f".npy format version {version} (1.0 and 2.0 are read)")
    return tuple(int(d) for d in shape), np.dtype(dtype)


def _checked(
    path: str, name: str, shape: tuple[int, ...], dtype: np.dtype[Any], want: tuple[Any, str]
) -> None:
    if dtype.hasobject:
        raise TVMValueError(
            f"--inputs {path}: array {name!r} holds Python objects (dtype {dtype}), which "
            f"would have to be unpickled, and input files are never unpickled; save numbers: "
            f"{_HOW}"
        )
    want_shape, want_dtype = tuple(int(d) for d in want[0]), str(want[1])
    if shape != want_shape or str(dtype) != want_dtype:
        raise TVMValueError(
            f"--inputs {path}: array {name!r} is {shape} {dtype}, but the module's input "
            f"{name!r} takes {want_shape} {want_dtype}"
        )


def read_inputs(
    path: str,
    shapes: Mapping[str, Sequence[int]],
    dtypes: Mapping[str, str],
    required: Collection[str],
) -> dict[str, np.ndarray]:
    """The arrays of the ``.npz`` at ``path``, each checked against the module's input of the
    same name (``shapes``/``dtypes``: inputs and parameters) before it is loaded; every name in
    ``required`` must have one.
    """
    try:
        archive = zipfile.ZipFile(path)
    except FileNotFoundError:
        raise TVMOSError(f"--inputs: no file {path!r}") from None
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as err:
        raise TVMValueError(
            f"--inputs {path}: not an .npz (a zip of .npy arrays): {err}; {_HOW}"
        ) from None
    with archive:
        members = [m for m in archive.namelist() if m.endswith(".npy")]
        names = {m[: -len(".npy")] for m in members}
        missing = sorted(set(required) - names)
        if missing:
            raise TVMValueError(f"{path} has no array for input(s) {missing}")
        for member in members:
            name = member[: -len(".npy")]
            if name not in shapes:
                raise TVMValueError(
                    f"--inputs {path}: array {name!r} is no input of the module (its inputs: "
                    f"{sorted(required)})"
                )
            try:
                shape, dtype = _header(archive, member)
            except (ValueError, OSError, EOFError, zipfile.BadZipFile, zlib.error) as err:
                raise TVMValueError(
                    f"--inputs {path}: array {name!r} has no readable .npy header ({err}); {_HOW}"
                ) from None
            _checked(path, name, shape, dtype, (shapes[name], dtypes[name]))
        return {m[: -len(".npy")]: _array(path, archive, m) for m in members}


def _array(path: str, archive: zipfile.ZipFile, member: str) -> np.ndarray:
    """The array of ``member``, whose header has been checked (never unpickled)."""
    try:
        with archive.open(member) as f:
            return npy_format.read_array(f, allow_pickle=False)
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, zlib.error) as err:
        raise TVMValueError(
            f"--inputs {path}: array {member[: -len('.npy')]!r} cannot be read ({err}); the "
            f"file is damaged; {_HOW}"
        ) from None
