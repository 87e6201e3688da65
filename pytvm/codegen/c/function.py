"""C for the body of one lowered ``PrimFunc``: loops, stores, allocations, parallel closures.

The body becomes ``static int32_t <name>_compute(<typed restrict pointers>, <scalars>,
int32_t dev_id)``; each parallel loop becomes a closure function run through
``TVMBackendParallelLaunch`` with the loop range split by task. Workspaces come from
``TVMBackendAllocWorkspace`` and are released on every path out (failures jump to the cleanup
of the innermost live allocation); small local buffers live on the stack. A kernel that returns
a value (``tir.ret``, see ``scalar_return``) also takes the packed function's return slots.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...ffi.errors import TVMValueError
from ...tir import expr as E
from ...tir import stmt as S
from ...tir.expr import IntImm, lanes_of
from ...tir.function import PrimFunc
from ..abi import STACK_LIMIT_BYTES, compute_params, dl_type_fields
from ..closure_vars import parallel_captures
from ..libc_names import C_LIBRARY_NAMES
from ..scalar_return import FLOAT_CODE, RETURNED, has_return, return_type_code, return_value
from .expr import ExprPrinter, has_vector_type
from .types import c_scalar_type

__all__ = ["CFunctionEmitter", "CNames"]

_INDENT = "  "
#: C's keywords and the names the prelude's headers define, which no variable may take.
_C_RESERVED = (
    frozenset(
        """auto break case char const continue default do double else enum extern float for goto
    if inline int long register restrict return short signed sizeof static struct switch
    typedef union unsigned void volatile while _Bool _Complex _Imaginary _Alignas _Alignof
    _Atomic _Generic _Noreturn _Static_assert _Thread_local asm typeof bool true false NULL
    INFINITY NAN rc c penv task_id cdata args type_codes num_args out_ret_value out_ret_tcode
    resource_handle""".split()
    )
    | C_LIBRARY_NAMES
)


class CNames:
    """Unique C identifiers for variables, by identity."""

    def __init__(self) -> None:
        self._names: dict[int, str] = {}
        self._taken: set[str] = set()
        self._keep: list[E.Var] = []

    def __call__(self, var: E.Var) -> str:
        """The C identifier of ``var``, the same on every call."""
        name = self._names.get(id(var))
        if name is None:
            base = re.sub(r"\W", "_", var.name) or "v"
            if base[0].isdigit():
                base = "v_" + base
            name, n = base, 0
            while name in self._taken or name.startswith("pytvm_") or name in _C_RESERVED:
                n += 1
                name = f"{base}_{n}"
            self._names[id(var)] = name
            self._taken.add(name)
            self._keep.append(var)
        return name

    def fresh(self, base: str) -> str:
        """A new identifier that no variable uses."""
        name, n = base, 0
        while name in self._taken:
            n += 1
            name = f"{base}{n}"
        self._taken.add(name)
        return name


@dataclass
class _Scope:
    """One C function being written: its lines, cleanup labels and pointer types."""

    lines: list[str] = field(default_factory=list)
    depth: int = 1
    labels: list[list[object]] = field(default_factory=list)  # [label, used]
    end_used: bool = False


class CFunctionEmitter:
    """Writes the C functions of one PrimFunc (its body function and parallel closures)."""

    def __init__(self, func: PrimFunc, name: str, names: CNames) -> None:
        self.func = func
        self.name = name
        self.names = names
        self.functions: list[str] = []
        self._scope = _Scope()
        self.dev_id = E.Var("dev_id", "int32")
        self.expr = self._printer(ExprPrinter(names, self._emit_pre))
        self._pointer_types: dict[int, str] = {}
        self._closures = 0

    def _printer(self, printer: ExprPrinter) -> ExprPrinter:
        """``printer``, able to call out of the kernel (failures leave through the cleanups)."""
        printer.fail = self._fail
        printer.dev_id = self.names(self.dev_id)
        return printer

    # ------------------------------------------------------------------ output

    def _emit_pre(self, line: str) -> None:
        self._scope.lines.append(_INDENT * self._scope.depth + line)

    def _line(self, text: str) -> None:
        self._scope.lines.append(_INDENT * self._scope.depth + text)

    def _fail(self) -> str:
        """A statement that jumps to the innermost cleanup with rc = -1."""
        return f"{{ rc = -1; {self._leave()} }}"

    def _leave(self) -> str:
        """A statement that jumps to the innermost cleanup, keeping rc."""
        if self._scope.labels:
            self._scope.labels[-1][1] = True
            return f"goto {self._scope.labels[-1][0]};"
        self._scope.end_used = True
        return "goto pytvm_end;"

    # ------------------------------------------------------------------ entry

    def emit(self) -> str:
        """The C text of the body function and its closures, closures first."""
        pointers, scalars = compute_params(self.func)
        for p in self.func.params:
            buffer = self.func.buffer_map.get(p)
            if buffer is not None:
                self._pointer_types[id(buffer.data)] = c_scalar_type(buffer.dtype)
        params = [
            f"{self._pointer_types.get(id(v), 'void')}* restrict {self.names(v)}" for v in pointers
        ]
        params += [f"{c_scalar_type(v.dtype)} {self.names(v)}" for v in scalars]
        params.append(f"int32_t {self.names(self.dev_id)}")
        if has_return(self.func.body):
            params += ["TVMValue* pytvm_ret_value", "int* pytvm_ret_tcode"]
        self.stmt(self.func.body)
        head = f"static int32_t {self.name}_compute({', '.join(params)}) {{"
        self.functions.append(self._finish(head))
        return "\n\n".join(self.functions)

    def _finish(self, head: str) -> str:
        scope = self._scope
        body = [head, f"{_INDENT}int32_t rc = 0;", *scope.lines]
        if scope.end_used:
            body.append("pytvm_end:")
        body += [f"{_INDENT}(void){self.names(self.dev_id)};", f"{_INDENT}return rc;", "}"]
        return "\n".join(body)

    # ------------------------------------------------------------------ statements

    def stmt(self, s: S.Stmt) -> None:  # noqa: PLR0912 - one case per statement kind
        """Write the C of statement ``s``."""
        if isinstance(s, S.SeqStmt):
            for item in s.seq:
                self.stmt(item)
        elif isinstance(s, S.For):
            self._for(s)
        elif isinstance(s, S.BufferStore):
            self._store(s)
        elif isinstance(s, S.Allocate):
            self._allocate(s)
        elif isinstance(s, S.IfThenElse):
            self._line(f"if ({self.expr.scalar(s.condition)}) {{")
            self._block(s.then_case)
            if s.else_case is not None:
                self._line("} else {")
                self._block(s.else_case)
            self._line("}")
        elif isinstance(s, S.LetStmt):
            value = self.expr.scalar(s.value)
            ctype = _c_type(s.var.dtype)
            self._line(f"{{ {ctype} {self.names(s.var)} = {value};")
            self._block(s.body, indent=False)
            self._line("}")
        elif isinstance(s, S.AttrStmt):
            self.stmt(s.body)
        elif isinstance(s, S.AssertStmt):
            cond = self.expr.scalar(s.condition)
            message = f"RuntimeError: {self.name}: {s.message}".replace('"', "'")
            self._line(f'if (!({cond})) {{ pytvm_set_error("{message}"); {self._fail()} }}')
            self.stmt(s.body)
        elif isinstance(s, S.Evaluate):
            returned = return_value(s)
            if returned is not None:
                self._return(returned)
            elif not isinstance(s.value, (E.IntImm, E.FloatImm)):
                self._line(f"(void){self.expr.scalar(s.value)};")
        else:
            raise TVMValueError(f"the C code generator cannot emit {type(s).__name__}")

    def _return(self, value: E.PrimExpr) -> None:
        """``tir.ret(value)``: the value and its type code into the return slots, then leave
        with the status RETURNED through every live cleanup.
        """
        code = return_type_code(value.dtype, self.name)
        field, ctype = ("v_float64", "double") if code == FLOAT_CODE else ("v_int64", "int64_t")
        self._line(f"pytvm_ret_value->{field} = ({ctype})({self.expr.scalar(value)});")
        self._line(f"*pytvm_ret_tcode = {code}; rc = {RETURNED}; {self._leave()}")

    def _block(self, s: S.Stmt, indent: bool = True) -> None:
        self._scope.depth += 1 if indent else 0
        self.stmt(s)
        self._scope.depth -= 1 if indent else 0

    def _for(self, s: S.For) -> None:
        if s.kind is S.ForKind.PARALLEL:
            self._parallel(s)
            return
        var = self.names(s.loop_var)
        ctype = c_scalar_type(s.loop_var.dtype)
        lo = self.expr.scalar(s.min)
        end = (
            self.expr.scalar(s.extent)
            if _is_zero(s.min)
            else f"{lo} + {self.expr.scalar(s.extent)}"
        )
        if s.kind is S.ForKind.UNROLLED and isinstance(s.extent, IntImm):
            self._scope.lines.append(f"#pragma GCC unroll {max(1, s.extent.value)}")
        elif s.kind is S.ForKind.VECTORIZED:
            self._scope.lines.append("#pragma GCC ivdep")
        self._line(f"for ({ctype} {var} = {lo}; {var} < {end}; ++{var}) {{")
        self._block(s.body)
        self._line("}")

    def _store(self, s: S.BufferStore) -> None:
        (index,) = s.indices
        pointer = self._pointer(s.buffer)
        lanes = lanes_of(s.value.dtype)
        if lanes == 1:
            self._line(f"{pointer}[{self.expr.scalar(index)}] = {self.expr.scalar(s.value)};")
            return
        unit = (
            isinstance(index, E.Ramp)
            and isinstance(index.stride, IntImm)
            and index.stride.value == 1
        )
        if unit and has_vector_type(s.value.dtype):
            assert isinstance(index, E.Ramp)
            value = self.expr.vector(s.value)
            base = self.expr.scalar(index.base)
            self._line(f"pytvm_vstore_{s.value.dtype}({pointer} + {base}, {value});")
            return
        lane = self.names.fresh("pytvm_sl")
        target = self.expr.lane(index, lane)
        value = self.expr.lane(s.value, lane)
        self._line(
            f"for (int {lane} = 0; {lane} < {lanes}; ++{lane}) {pointer}[{target}] = {value};"
        )

    def _pointer(self, buffer: E.Buffer) -> str:
        ctype = c_scalar_type(buffer.dtype)
        if self._pointer_types.get(id(buffer.data)) == ctype:
            return self.names(buffer.data)
        return f"(({ctype}*){self.names(buffer.data)})"

    def _allocate(self, s: S.Allocate) -> None:
        b = s.buffer
        ctype = c_scalar_type(b.dtype)
        count: E.PrimExpr = E.IntImm("int64", 1)
        for dim in b.shape:
            count = (
                count * dim.astype("int64") if not isinstance(dim, IntImm) else count * dim.value
            )
        name = self.names(b.data)
        self._pointer_types[id(b.data)] = ctype
        elem = max(1, int(re.sub(r"\D", "", b.dtype) or 8) // 8)
        if (
            isinstance(count, IntImm)
            and b.scope == "local"
            and count.value * elem <= STACK_LIMIT_BYTES
        ):
            self._line(f"{{ {ctype} {name}[{max(1, count.value)}] __attribute__((aligned(64)));")
            self._block(s.body, indent=False)
            self._line("}")
            return
        nbytes = f"((uint64_t)({self.expr.scalar(count)}) * {elem}u)"
        code, bits, _ = dl_type_fields(b.dtype)
        dev = self.names(self.dev_id)
        label = self.names.fresh(f"pytvm_free_{name}_")
        self._line(
            f"{{ {ctype}* {name} = ({ctype}*)pytvm_ws_alloc({dev}, {nbytes}, {code}, {bits});"
        )
        self._line(
            f'if ({name} == NULL) {{ (void)pytvm_value_error("MemoryError", "{self.name}", '
            f'": cannot allocate a workspace of ", (int64_t){nbytes}, " bytes"); '
            f"{self._fail()} }}"
        )
        self._scope.labels.append([label, False])
        self.stmt(s.body)
        _, used = self._scope.labels.pop()
        if used:
            self._scope.lines.append(f"{label}:;")
        self._line(f"if (pytvm_ws_free({dev}, {name}) != 0 && rc >= 0) rc = -1;")
        self._line(f"if (rc != 0) {self._leave()}")
        self._line("}")

    # ------------------------------------------------------------------ parallel loops

    def _parallel(self, s: S.For) -> None:
        captured = parallel_captures(self.name, s, self.dev_id)
        self._closures += 1
        fname = f"{self.name}_parallel{self._closures}"
        struct = f"{fname}_closure"
        fields = [f"  {self._var_type(v)} {self.names(v)};" for v in captured]
        outer = self._scope
        outer_expr = self.expr
        # The closure's own function.
        self._scope = _Scope()
        self.expr = self._printer(ExprPrinter(self.names, self._emit_pre))
        self.expr.vector_types, self.expr.minmax_types, self.expr.extern_decls = (
            outer_expr.vector_types,
            outer_expr.minmax_types,
            outer_expr.extern_decls,
        )
        self.expr._temps = outer_expr._temps + 1000 * self._closures
        for v in captured:
            restrict = " restrict" if v.dtype == "handle" else ""
            self._line(f"{self._var_type(v)}{restrict} {self.names(v)} = c->{self.names(v)};")
        var = self.names(s.loop_var)
        ctype = c_scalar_type(s.loop_var.dtype)
        extent = self.expr.scalar(s.extent)
        lo = self.expr.scalar(s.min)
        self._line(f"{ctype} pytvm_n = {extent};")
        self._line(f"{ctype} pytvm_chunk = (pytvm_n + penv->num_task - 1) / penv->num_task;")
        self._line(f"{ctype} pytvm_begin = ({ctype})task_id * pytvm_chunk;")
        self._line(
            f"{ctype} pytvm_stop = pytvm_begin + pytvm_chunk < pytvm_n ? "
            "pytvm_begin + pytvm_chunk : pytvm_n;"
        )
        self._line(
            f"for ({ctype} {var} = {lo} + pytvm_begin; {var} < {lo} + pytvm_stop; ++{var}) {{"
        )
        self._block(s.body)
        self._line("}")
        head = f"static int {fname}(int task_id, TVMParallelGroupEnv* penv, void* cdata) {{"
        body = self._finish(head).replace(
            f"{_INDENT}int32_t rc = 0;",
            f"{_INDENT}int32_t rc = 0;\n{_INDENT}{struct}* c = ({struct}*)cdata;",
            1,
        )
        self.functions.append(
            "typedef struct {\n"
            + "\n".join(fields or ["  int unused;"])
            + f"\n}} {struct};\n\n{body}"
        )
        self._scope, self.expr = outer, outer_expr
        # The launch.
        init = ", ".join(f".{self.names(v)} = {self.names(v)}" for v in captured) or ".unused = 0"
        self._line(f"{{ {struct} pytvm_c = {{{init}}};")
        self._line(f"  if (pytvm_parallel({fname}, &pytvm_c) != 0) {self._fail()}")
        self._line("}")

    def _var_type(self, v: E.Var) -> str:
        if v.dtype == "handle":
            return f"{self._pointer_types.get(id(v), 'void')}*"
        return c_scalar_type(v.dtype)


def _c_type(dtype: str) -> str:
    if lanes_of(dtype) > 1:
        return "pv_" + dtype
    return c_scalar_type(dtype)


def _is_zero(e: E.PrimExpr) -> bool:
    return isinstance(e, IntImm) and e.value == 0
