"""``load_module`` of object code not yet linked: an object file (``.o``) or a tar of them
(``.tar``, as ``export_library("x.tar")`` writes it), linked by the system C compiler into a
shared object first, as TVM's ``load_module`` does.

The shared object is written into a private temporary folder that lives as long as the module
(it is removed when the module is collected or at exit); nothing is written beside the input.
Registered as ``runtime.module.loadfile_o`` and ``runtime.module.loadfile_tar``, so a server
loads them too (``remote.load_module("x.tar")``).

Examples
--------
>>> import numpy as np, os, tempfile, pytvm
>>> from pytvm import te
>>> a = te.placeholder((4,), name="A")
>>> b = te.compute(a.shape, lambda i: a[i] + 1.0, name="B")
>>> func = te.create_prim_func([a, b]).with_attr("global_symbol", "addone")
>>> path = os.path.join(tempfile.mkdtemp(), "addone.tar")
>>> pytvm.build(func, target="llvm").export_library(path)  # doctest: +SKIP
>>> mod = pytvm.runtime.load_module(path)  # doctest: +SKIP
>>> out = pytvm.nd.empty((4,), "float32")  # doctest: +SKIP
>>> mod["addone"](pytvm.nd.array(np.zeros(4, "float32")), out)  # doctest: +SKIP
>>> out.numpy()  # doctest: +SKIP
array([1., 1., 1., 1.], dtype=float32)
"""

from __future__ import annotations

import tarfile
import weakref

from ..ffi.registry import register_func
from ..support.cc import create_shared
from ..support.tar import link_tar
from ..support.utils import tempdir
from .module import Module, load_shared_object

__all__ = ["load_linked"]


def load_linked(path: str) -> Module:
    """The module of the object file or tar ``path`` (told apart by its content), linked into
    a shared object in a private temporary folder.
    """
    folder = tempdir()
    output = folder.relpath("linked.so")
    if _is_tar(path):
        link_tar(path, output)
    else:
        create_shared(output, [path, "-lm"])
    module = load_shared_object(output)
    weakref.finalize(module, folder.remove)  # the folder lives as long as the module
    return module


def _is_tar(path: str) -> bool:
    try:
        return tarfile.is_tarfile(path)
    except OSError:
        return False


for _ext in ("o", "tar"):
    register_func(f"runtime.module.loadfile_{_ext}", load_linked)
del _ext
