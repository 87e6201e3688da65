"""TVMScript for pytvm: ``from tvm.script import ir as I`` and ``from tvm.script import tirx
as T`` (``tir`` is TVM 0.18's spelling). ``@T.prim_func`` parses a documented subset of Python
into loop IR (:mod:`pytvm.script.parser`); ``@I.ir_module`` collects such functions into an
``IRModule``.
"""

from __future__ import annotations

from . import ir, parser, tir, tirx

__all__ = ["ir", "parser", "tir", "tirx"]
