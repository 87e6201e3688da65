"""C for one lowered kernel with the unpacked calling convention (TVM's ``unpacked-api``).

The kernel becomes an external function ``int32_t <symbol>(<T>* restrict p0, ..., uint8_t*
restrict workspace)`` that an ahead-of-time run function calls directly: raw data pointers in
the order of the kernel's parameters, then the caller's scratch memory. There is no packed
wrapper, no argument check, no runtime call: allocations bigger than
:data:`STACK_ALLOCA_BYTES` (or not ``local``) are carved out of ``workspace`` at constant
offsets (nested allocations stack up, siblings reuse the same bytes; ``scratch_bytes`` is the
most the kernel needs at once), a parallel loop runs serially, and a failed assertion returns
-1. A kernel whose scratch size is not a constant, that calls a packed function, returns a
value or takes scalar parameters cannot be called this way and raises ``TVMValueError``.
"""

from __future__ import annotations

import dataclasses
import re

from ...ffi.dtype import DataType
from ...ffi.errors import TVMValueError
from ...tir import stmt as S
from ...tir.expr import IntImm
from ...tir.function import PrimFunc
from ..abi import compute_params
from ..scalar_return import has_return
from .expr import ExprPrinter
from .function import CFunctionEmitter, CNames
from .types import c_scalar_type

__all__ = ["SCRATCH_ALIGNMENT", "STACK_ALLOCA_BYTES", "UnpackedFunctionEmitter"]

#: Constant ``local`` allocations up to this many bytes stay on the stack (TVM's
#: ``kMaxStackAlloca``); the rest come from the workspace.
STACK_ALLOCA_BYTES = 1024
#: Byte alignment of every allocation in the workspace.
SCRATCH_ALIGNMENT = 16


def _align(n: int) -> int:
    return (n + SCRATCH_ALIGNMENT - 1) // SCRATCH_ALIGNMENT * SCRATCH_ALIGNMENT


class UnpackedFunctionEmitter(CFunctionEmitter):
    """Writes ``kernel`` as the external C function ``symbol`` (see the module docstring)."""

    def __init__(self, func: PrimFunc, kernel: str, symbol: str, names: CNames) -> None:
        super().__init__(func, symbol, names)
        self.kernel = kernel
        #: The most workspace bytes the kernel uses at once.
        self.scratch_bytes = 0
        self._top = 0
        self.workspace = names.fresh("workspace")
        self.prototype = ""
        #: The C element type of each data pointer parameter, in order.
        self.param_types: tuple[str, ...] = ()

    def _printer(self, printer: ExprPrinter) -> ExprPrinter:
        printer.fail = None  # no packed calls: they need a runtime
        printer.group_prefix = "__extension__ "  # GCC's and Clang's braced groups, -pedantic
        return printer

    def emit(self) -> str:
        """The C text of the function; ``prototype`` is its declaration."""
        if has_return(self.func.body):
            raise TVMValueError(
                f"kernel {self.kernel} returns a value (tir.ret); the unpacked C interface "
                "only returns a status"
            )
        pointers, scalars = compute_params(self.func)
        if scalars:
            raise TVMValueError(
                f"kernel {self.kernel} takes scalar parameters "
                f"({', '.join(v.name for v in scalars)}); the unpacked C interface needs "
                "static shapes"
            )
        for p in self.func.params:
            buffer = self.func.buffer_map.get(p)
            if buffer is not None:
                self._pointer_types[id(buffer.data)] = c_scalar_type(buffer.dtype)
        self.param_types = tuple(self._pointer_types.get(id(v), "void") for v in pointers)
        params = [
            f"{ctype}* restrict {self.names(v)}"
            for ctype, v in zip(self.param_types, pointers, strict=True)
        ]
        params.append(f"uint8_t* restrict {self.workspace}")
        self.stmt(self.func.body)
        signature = f"int32_t {self.name}({', '.join(params)})"
        self.prototype = signature + ";"
        used = "\n".join(self._scope.lines)
        unused = [
            n
            for n in [*(self.names(v) for v in pointers), self.workspace]
            if not re.search(rf"\b{n}\b", used)
        ]
        self._scope.lines[:0] = [f"  (void){n};" for n in unused]
        self.functions.append(self._finish(signature + " {"))
        return "\n\n".join(self.functions)

    def _finish(self, head: str) -> str:
        scope = self._scope
        body = [head, "  int32_t rc = 0;", *scope.lines]
        if scope.end_used:
            body.append("pytvm_end:")
        body += ["  return rc;", "}"]
        return "\n".join(body)

    def stmt(self, s: S.Stmt) -> None:
        """Write the C of ``s``; a failed assertion returns -1 without a message."""
        if isinstance(s, S.AssertStmt):
            self._line(f"if (!({self.expr.scalar(s.condition)})) {self._fail()}")
            self.stmt(s.body)
            return
        super().stmt(s)

    def _parallel(self, s: S.For) -> None:
        self._for(dataclasses.replace(s, kind=S.ForKind.SERIAL))

    def _allocate(self, s: S.Allocate) -> None:
        b = s.buffer
        ctype = c_scalar_type(b.dtype)
        count = 1
        for dim in b.shape:
            if not isinstance(dim, IntImm):
                raise TVMValueError(
                    f"kernel {self.kernel}: scratch buffer {b.name} has a size that is not "
                    f"constant (shape {tuple(str(d) for d in b.shape)}); the AOT executor's "
                    "static workspace needs constant sizes"
                )
            count *= dim.value
        t = DataType(b.dtype)
        elem = max(1, t.bits * t.lanes // 8)
        nbytes = max(1, count) * elem
        name = self.names(b.data)
        self._pointer_types[id(b.data)] = ctype
        if b.scope == "local" and nbytes <= STACK_ALLOCA_BYTES:
            self._line(f"{{ {ctype} {name}[{max(1, count)}] __attribute__((aligned(16)));")
            self._block(s.body, indent=False)
            self._line("}")
            return
        offset = self._top
        self._top = offset + _align(nbytes)
        self.scratch_bytes = max(self.scratch_bytes, self._top)
        self._line(f"{{ {ctype}* {name} = ({ctype}*)(void*)({self.workspace} + {offset});")
        self._block(s.body, indent=False)
        self._line("}")
        self._top = offset
