"""The exported packed function of a kernel: unpack and check every argument, then compute.

Checks, in order: the argument count; each argument's type index (an array for a buffer, an
int or float for a scalar); then for arrays ndim, dtype, device type, shape (constants, and
symbolic dimensions bound from the first array that has them and checked on the others) and
compact strides. A kernel that returns a value (``scalar_return``) passes its return slots to
the body function. A failed check sets the last error (``ValueError: mmult: argument A:
expected shape (1024, 1024), got (10, 1024)``) and returns -1, so a bad call from Python
raises instead of crashing.
"""

from __future__ import annotations

from ...tir import expr as E
from ...tir.function import PrimFunc
from ..abi import (
    CPU_DEVICE,
    DTYPE_KINDS,
    MSG_ARGUMENTS,
    MSG_DIMENSIONS,
    MSG_EXPECTED_ARRAY,
    MSG_EXPECTED_CPU,
    MSG_NOT_COMPACT,
    MSG_NOT_COMPACT_GOT,
    TYPE_NAMES,
    compute_params,
    dl_type_fields,
    internal_name,
)
from ..scalar_return import RETURNED, has_return
from .expr import ExprPrinter
from .function import CNames
from .types import c_scalar_type

__all__ = ["TYPE_NAMES_C", "emit_packed_function"]


_TYPE_CASES = "".join(f'    case {code}: return "{text}";\n' for code, text in TYPE_NAMES.items())
_KINDS = ", ".join(f'"{kind}"' for kind in DTYPE_KINDS)

#: The C helpers of the checks: type and dtype names (``abi.TYPE_NAMES``, ``abi.DTYPE_KINDS``)
#: and the compactness test.
TYPE_NAMES_C = (
    """
PYTVM_HELPER const char* pytvm_type_name(int code) {
  switch (code) {
"""
    + _TYPE_CASES
    + r"""    default: return "an object";
  }
}
PYTVM_HELPER int pytvm_is_compact(const int64_t* shape, const int64_t* strides, int ndim) {
  int64_t expected = 1;
  int i;
  if (strides == NULL) return 1;
  for (i = ndim - 1; i >= 0; --i) {
    if (shape[i] != 1 && strides[i] != expected) return 0;
    expected *= shape[i];
  }
  return 1;
}
PYTVM_HELPER int pytvm_dtype_error(const char* where, const char* expected, DLDataType got) {
  pytvm_msg m;
  static const char* kinds[] = {"""
    + _KINDS
    + r"""};
  m.len = 0;
  pytvm_msg_str(&m, "TypeError: ");
  pytvm_msg_str(&m, where);
  pytvm_msg_str(&m, ": expected dtype ");
  pytvm_msg_str(&m, expected);
  pytvm_msg_str(&m, ", got ");
  if (got.code == 6 && got.bits == 8) {
    pytvm_msg_str(&m, "bool");
  } else {
    pytvm_msg_str(&m, got.code < 5 ? kinds[got.code] : "code");
    pytvm_msg_i64(&m, got.bits);
  }
  if (got.lanes != 1) { pytvm_msg_str(&m, "x"); pytvm_msg_i64(&m, got.lanes); }
  pytvm_set_error(m.text);
  return -1;
}
"""
)


def emit_packed_function(  # noqa: PLR0915 - one check after another, in order
    func: PrimFunc,
    name: str,
    names: CNames,
    device_types: tuple[int, ...] = (CPU_DEVICE,),
    symbol: str | None = None,
) -> str:
    """The exported packed function ``symbol`` (default ``name``) that checks its arguments and
    calls the body function ``<name>_compute``; messages name the kernel ``name``.
    """
    lines: list[str] = []
    pre: list[str] = []
    printer = ExprPrinter(names, pre.append)
    params = list(func.params)
    n = len(params)
    say = lines.append
    say(
        f"TVM_DLL int32_t {symbol or name}(TVMValue* args, int* type_codes, int num_args, "
        "TVMValue* out_ret_value, int* out_ret_tcode, void* resource_handle) {"
    )
    say("  (void)out_ret_value; (void)resource_handle;")
    say(
        f'  if (num_args != {n}) return pytvm_count_error("{name}", {n}, num_args, '
        f'"{MSG_ARGUMENTS}");'
    )
    arrays: list[tuple[E.Var, E.Buffer, str]] = []
    bound: set[int] = set()
    for index, param in enumerate(params):
        buffer = func.buffer_map.get(param)
        label = buffer.name if buffer is not None else param.name
        where = f"{name}: argument {label}"
        code = f"type_codes[{index}]"
        if buffer is None:
            ctype = c_scalar_type(param.dtype)
            if param.dtype.startswith("float"):
                ok, field = f"{code} == kTVMArgFloat", "v_float64"
                expect = "a float"
            else:
                ok, field = f"{code} == kTVMArgInt || {code} == kTVMArgBool", "v_int64"
                expect = "an int"
            say(
                f'  if (!({ok})) return pytvm_arg_error("TypeError", "{where}", ": expected '
                f'{expect}, got ", pytvm_type_name({code}));'
            )
            say(f"  {ctype} {names(param)} = ({ctype})args[{index}].{field};")
            bound.add(id(param))
            continue
        t = f"pytvm_t{index}"
        arrays.append((param, buffer, t))
        say(
            f"  if ({code} != kTVMDLTensorHandle || args[{index}].v_handle == NULL) "
            f'return pytvm_arg_error("TypeError", "{where}", "{MSG_EXPECTED_ARRAY}", '
            f'{code} == kTVMDLTensorHandle ? "NULL" : pytvm_type_name({code}));'
        )
        say(f"  DLTensor* {t} = (DLTensor*)args[{index}].v_handle;")
        ndim = buffer.ndim
        say(
            f'  if ({t}->ndim != {ndim}) return pytvm_count_error("{where}", {ndim}, '
            f'{t}->ndim, "{MSG_DIMENSIONS}");'
        )
        dcode, bits, lanes = dl_type_fields(buffer.dtype)
        say(
            f"  if ({t}->dtype.code != {dcode} || {t}->dtype.bits != {bits} || "
            f'{t}->dtype.lanes != {lanes}) return pytvm_dtype_error("{where}", "{buffer.dtype}", '
            f"{t}->dtype);"
        )
        devices = " && ".join(f"{t}->device.device_type != {d}" for d in device_types)
        say(
            f'  if ({devices}) return pytvm_value_error("ValueError", "{where}", '
            f'"{MSG_EXPECTED_CPU}", {t}->device.device_type, "");'
        )
    # Bind symbolic dimensions from their first occurrence.
    for _, buffer, t in arrays:
        for axis, dim in enumerate(buffer.shape):
            if isinstance(dim, E.Var) and id(dim) not in bound:
                ctype = c_scalar_type(dim.dtype)
                say(f"  {ctype} {names(dim)} = ({ctype}){t}->shape[{axis}];")
                bound.add(id(dim))
    # Check every dimension against the (now known) expected shape.
    for param, buffer, t in arrays:
        where = f"{name}: argument {buffer.name}"
        if buffer.ndim == 0:
            continue
        expected = ", ".join(f"(int64_t)({printer.scalar(d)})" for d in buffer.shape)
        checks = " || ".join(
            f"{t}->shape[{axis}] != (int64_t)({printer.scalar(d)})"
            for axis, d in enumerate(buffer.shape)
        )
        say(f"  if ({checks}) {{")
        say(f"    int64_t pytvm_expected[{buffer.ndim}] = {{{expected}}};")
        say(f'    return pytvm_shape_error("{where}", pytvm_expected, {t}->shape, {buffer.ndim});')
        say("  }")
        say(
            f"  if (!pytvm_is_compact({t}->shape, {t}->strides, {buffer.ndim})) return "
            f'pytvm_arg_error("ValueError", "{where}", "{MSG_NOT_COMPACT}", '
            f'"{MSG_NOT_COMPACT_GOT}");'
        )
        del param
    lines[3:3] = [f"  {line}" for line in pre]
    pointers, scalars = compute_params(func)
    call_args = []
    by_data = {id(b.data): t for _, b, t in arrays}
    for v in pointers:
        t = by_data[id(v)]
        ctype = next(c_scalar_type(b.dtype) for _, b, tt in arrays if tt == t)
        call_args.append(f"({ctype}*)((char*){t}->data + {t}->byte_offset)")
    call_args += [names(v) for v in scalars]
    dev = f"{arrays[0][2]}->device.device_id" if arrays else "0"
    call_args.append(f"(int32_t){dev}")
    say("  *out_ret_tcode = kTVMNullptr;")
    if not has_return(func.body):
        say(f"  return {internal_name(name)}_compute({', '.join(call_args)});")
    else:  # the body writes the return slots and finishes with RETURNED
        call_args += ["out_ret_value", "out_ret_tcode"]
        say(f"  int32_t pytvm_rc = {internal_name(name)}_compute({', '.join(call_args)});")
        say(f"  return pytvm_rc == {RETURNED} ? 0 : pytvm_rc;")
    say("}")
    return "\n".join(lines)
