"""``HybridModule`` (a hybrid script kept as source) and ``build``, which dumps a schedule to one.

A hybrid module is to a hybrid script what a built module is to a kernel: called with numpy
arrays it runs the script in Python, called with tensors it builds the script's ``HybridOp``.
Its source starts with the ``import`` and decorator that make the file runnable on its own.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...ffi.errors import TVMValueError
from ..tensor import Tensor
from .dump import dump_hybrid
from .parser import source_to_op
from .script import is_tvm_args

__all__ = ["HybridModule", "build"]

_HEADER = "import pytvm\n@pytvm.te.hybrid.script\n"


class HybridModule:
    """A hybrid script as source (TVM's ``te.hybrid.HybridModule``).

    ``HybridModule(src, name)`` loads the function ``src`` defines; ``HybridModule()`` starts
    empty for :meth:`load`.
    """

    def __init__(self, src: str | None = None, name: str | None = None) -> None:
        self.name = name
        self.src_: str | None = None
        self.root_: ast.FunctionDef | None = None
        self.func_: Any = None
        self._namespace: dict[str, Any] = {}
        if src is not None:
            self._load_source(_HEADER + src, "<hybrid>")

    def __call__(self, *args: Any) -> Any:
        """Emulate the script on numpy arguments, or build its ``HybridOp`` from tensors."""
        if self.root_ is None:
            raise TVMValueError("HybridModule: nothing loaded; pass a source or call load()")
        if is_tvm_args(args):
            return source_to_op(self.root_, args, self._namespace, {})
        return self.func_(*args)

    def get_source(self) -> str | None:
        """The module's source (with its import and decorator lines)."""
        return self.src_

    def save(self, path: str) -> None:
        """Write the source to ``path`` (``.py`` appended when missing)."""
        if self.src_ is None:
            raise TVMValueError("HybridModule.save: nothing loaded")
        if not path.endswith(".py"):
            path += ".py"
        Path(path).write_text(self.src_, encoding="utf-8")

    def load(self, path: str) -> None:
        """Load the one function the Python file at ``path`` defines."""
        self._load_source(Path(path).read_text(encoding="utf-8"), path)

    def _load_source(self, src: str, filename: str) -> None:
        tree = ast.parse(src, filename)
        funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
        if len(funcs) != 1:
            raise TVMValueError(
                f"HybridModule: {filename} defines {len(funcs)} functions; expected exactly one"
            )
        namespace: dict[str, Any] = {}
        exec(compile(tree, filename, "exec"), namespace)
        self.src_ = src
        self.root_ = funcs[0]
        self.name = self.name or funcs[0].name
        self.func_ = namespace[funcs[0].name]
        self._namespace = namespace


def build(
    sch: Any, inputs: Sequence[Any], outputs: Sequence[Tensor], name: str = "hybrid_func"
) -> HybridModule:
    """Dump schedule ``sch`` as a hybrid script of ``inputs`` (tensors and variables) returning
    ``outputs`` (TVM's ``te.hybrid.build``).
    """
    from ..lower_schedule import lower_schedule  # lowering imports this package's HybridOp

    func = lower_schedule(sch, [*inputs, *outputs], name)
    return HybridModule(dump_hybrid(func, inputs, name), name)
