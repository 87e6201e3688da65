"""The argument checks of every packed function, once per library instead of once per kernel,
and the body of every ``__tvm_ffi_`` adapter.

``pytvm_check_array`` checks that argument ``index`` of a packed call is an array with the
expected dimension count, dtype and device type; ``pytvm_check_shape`` checks an array's shape
against a constant table and its strides for compactness. Each returns 0, or sets the very
message the inline checks of ``packed`` set and returns -1. A kernel's packed function
then holds one call per array instead of a few dozen compares and branches of its own: LLVM
spends its time on the kernels (the checks were a third of a MobileNet build's LLVM time).
``pytvm_ffi_call`` is tvm-ffi's safe call over a packed function (values copied, a tensor
object turned into its ``DLTensor``, a scalar result copied back): each kernel's
``__tvm_ffi_<name>`` is one call of it.
"""

from __future__ import annotations

from ..abi import (
    FFI_OBJECT_HEADER_BYTES,
    FFI_TENSOR_TYPE_INDEX,
    MSG_ARGUMENTS,
    MSG_DIMENSIONS,
    MSG_EXPECTED_ARRAY,
    MSG_EXPECTED_CPU,
    MSG_NOT_COMPACT,
    MSG_NOT_COMPACT_GOT,
)
from .messages import string_constant

__all__ = ["arg_checks_ir", "device_mask", "dtype_word"]

#: DLTensor field offsets (bytes) on a 64-bit host.
_DEVICE, _NDIM, _DTYPE, _SHAPE, _STRIDES = 8, 16, 20, 24, 32
_TVM_DLTENSOR = 7
#: The type codes of a scalar result a packed function returns: int (1), bool (2), float (3).
_TVM_ARG_INT, _TVM_ARG_FLOAT = 1, 3
_MAX_MASKED_DEVICE = 64

_STRINGS = {
    "TypeError": "TypeError",
    "ValueError": "ValueError",
    "NULL": "NULL",
    "expected_array": MSG_EXPECTED_ARRAY,
    "dimensions": MSG_DIMENSIONS,
    "expected_cpu": MSG_EXPECTED_CPU,
    "empty": "",
    "not_compact": MSG_NOT_COMPACT,
    "strides": MSG_NOT_COMPACT_GOT,
    "arguments": MSG_ARGUMENTS,
}

_IR = rf"""
define internal i32 @pytvm_check_array(ptr %args, ptr %codes, i32 %index, ptr %where,
    i32 %ndim, i32 %dtype, ptr %dtype.name, i64 %devices) nounwind noinline {{
entry:
  %i = sext i32 %index to i64
  %code.p = getelementptr i32, ptr %codes, i64 %i
  %code = load i32, ptr %code.p
  %slot = getelementptr i64, ptr %args, i64 %i
  %h = load ptr, ptr %slot
  %is.tensor = icmp eq i32 %code, {_TVM_DLTENSOR}
  %set = icmp ne ptr %h, null
  %ok = and i1 %is.tensor, %set
  br i1 %ok, label %array, label %not.array
not.array:
  br i1 %is.tensor, label %null, label %other
null:
  %r.null = call i32 @pytvm_arg_error(ptr @pytvm.ac.TypeError, ptr %where,
      ptr @pytvm.ac.expected_array, ptr @pytvm.ac.NULL)
  ret i32 %r.null
other:
  %name = call ptr @pytvm_type_name(i32 %code)
  %r.other = call i32 @pytvm_arg_error(ptr @pytvm.ac.TypeError, ptr %where,
      ptr @pytvm.ac.expected_array, ptr %name)
  ret i32 %r.other
array:
  %ndim.p = getelementptr i8, ptr %h, i64 {_NDIM}
  %got.ndim = load i32, ptr %ndim.p
  %same.ndim = icmp eq i32 %got.ndim, %ndim
  br i1 %same.ndim, label %dtype.check, label %bad.ndim
bad.ndim:
  %want.ndim = sext i32 %ndim to i64
  %got.ndim64 = sext i32 %got.ndim to i64
  %r.ndim = call i32 @pytvm_count_error(ptr %where, i64 %want.ndim, i64 %got.ndim64,
      ptr @pytvm.ac.dimensions)
  ret i32 %r.ndim
dtype.check:
  %dt.code.p = getelementptr i8, ptr %h, i64 {_DTYPE}
  %dt.code8 = load i8, ptr %dt.code.p
  %dt.bits.p = getelementptr i8, ptr %h, i64 {_DTYPE + 1}
  %dt.bits8 = load i8, ptr %dt.bits.p
  %dt.lanes.p = getelementptr i8, ptr %h, i64 {_DTYPE + 2}
  %dt.lanes16 = load i16, ptr %dt.lanes.p
  %dt.code = zext i8 %dt.code8 to i32
  %dt.bits = zext i8 %dt.bits8 to i32
  %dt.lanes = zext i16 %dt.lanes16 to i32
  %dt.b = shl i32 %dt.bits, 8
  %dt.l = shl i32 %dt.lanes, 16
  %dt.cb = or i32 %dt.code, %dt.b
  %dt.word = or i32 %dt.cb, %dt.l
  %same.dt = icmp eq i32 %dt.word, %dtype
  br i1 %same.dt, label %device.check, label %bad.dtype
bad.dtype:
  %r.dt = call i32 @pytvm_dtype_error(ptr %where, ptr %dtype.name, i32 %dt.code,
      i32 %dt.bits, i32 %dt.lanes)
  ret i32 %r.dt
device.check:
  %dev.p = getelementptr i8, ptr %h, i64 {_DEVICE}
  %dev = load i32, ptr %dev.p
  %small = icmp ult i32 %dev, {_MAX_MASKED_DEVICE}
  %dev64 = zext i32 %dev to i64
  %shift = select i1 %small, i64 %dev64, i64 0
  %bit = shl i64 1, %shift
  %hit = and i64 %devices, %bit
  %hit.nz = icmp ne i64 %hit, 0
  %on = and i1 %small, %hit.nz
  br i1 %on, label %fine, label %bad.device
bad.device:
  %dev.s = sext i32 %dev to i64
  %r.dev = call i32 @pytvm_value_error(ptr @pytvm.ac.ValueError, ptr %where,
      ptr @pytvm.ac.expected_cpu, i64 %dev.s, ptr @pytvm.ac.empty)
  ret i32 %r.dev
fine:
  ret i32 0
}}

define internal i32 @pytvm_check_shape(ptr %h, ptr %where, ptr %expected, i32 %ndim)
    nounwind noinline {{
entry:
  %shape.p = getelementptr i8, ptr %h, i64 {_SHAPE}
  %shape = load ptr, ptr %shape.p
  br label %loop
loop:
  %i = phi i32 [0, %entry], [%i.next, %body]
  %more = icmp slt i32 %i, %ndim
  br i1 %more, label %body, label %compact
body:
  %ix = sext i32 %i to i64
  %got.p = getelementptr i64, ptr %shape, i64 %ix
  %got = load i64, ptr %got.p
  %want.p = getelementptr i64, ptr %expected, i64 %ix
  %want = load i64, ptr %want.p
  %same = icmp eq i64 %got, %want
  %i.next = add i32 %i, 1
  br i1 %same, label %loop, label %bad.shape
bad.shape:
  %r.shape = call i32 @pytvm_shape_error(ptr %where, ptr %expected, ptr %shape, i32 %ndim)
  ret i32 %r.shape
compact:
  %strides.p = getelementptr i8, ptr %h, i64 {_STRIDES}
  %strides = load ptr, ptr %strides.p
  %c = call i32 @pytvm_is_compact(ptr %shape, ptr %strides, i32 %ndim)
  %is.compact = icmp ne i32 %c, 0
  br i1 %is.compact, label %fine, label %bad.strides
bad.strides:
  %r.strides = call i32 @pytvm_arg_error(ptr @pytvm.ac.ValueError, ptr %where,
      ptr @pytvm.ac.not_compact, ptr @pytvm.ac.strides)
  ret i32 %r.strides
fine:
  ret i32 0
}}
"""


_FFI_CALL = rf"""
define internal i32 @pytvm_ffi_call(ptr %packed, ptr %args, i32 %num_args, ptr %result,
    i32 %num_params, ptr %where) nounwind noinline {{
entry:
  %same = icmp eq i32 %num_args, %num_params
  br i1 %same, label %convert, label %bad.count
bad.count:
  %want = sext i32 %num_params to i64
  %got = sext i32 %num_args to i64
  %r.count = call i32 @pytvm_count_error(ptr %where, i64 %want, i64 %got,
      ptr @pytvm.ac.arguments)
  ret i32 %r.count
convert:
  %slots = zext i32 %num_params to i64
  %values = alloca i64, i64 %slots, align 8
  %codes = alloca i32, i64 %slots, align 4
  br label %loop
loop:
  %i = phi i64 [0, %convert], [%i.next, %body]
  %more = icmp slt i64 %i, %slots
  br i1 %more, label %body, label %call
body:
  %any = getelementptr {{ i32, i32, i64 }}, ptr %args, i64 %i
  %code = load i32, ptr %any
  %payload.p = getelementptr i8, ptr %any, i64 8
  %payload = load i64, ptr %payload.p
  %is.tensor = icmp eq i32 %code, {FFI_TENSOR_TYPE_INDEX}
  %set = icmp ne i64 %payload, 0
  %tensor = and i1 %is.tensor, %set
  %inner = add i64 %payload, {FFI_OBJECT_HEADER_BYTES}
  %value = select i1 %tensor, i64 %inner, i64 %payload
  %kind = select i1 %tensor, i32 {_TVM_DLTENSOR}, i32 %code
  %value.p = getelementptr i64, ptr %values, i64 %i
  store i64 %value, ptr %value.p
  %code.p = getelementptr i32, ptr %codes, i64 %i
  store i32 %kind, ptr %code.p
  %i.next = add i64 %i, 1
  br label %loop
call:
  store {{ i32, i32, i64 }} zeroinitializer, ptr %result
  %ret = alloca i64, align 8
  %ret.code = alloca i32, align 4
  store i64 0, ptr %ret
  store i32 0, ptr %ret.code
  %r = call i32 %packed(ptr %values, ptr %codes, i32 %num_args, ptr %ret, ptr %ret.code,
      ptr null)
  %done = icmp eq i32 %r, 0
  %got.code = load i32, ptr %ret.code
  %from.int = icmp sge i32 %got.code, {_TVM_ARG_INT}
  %to.float = icmp sle i32 %got.code, {_TVM_ARG_FLOAT}
  %is.scalar = and i1 %from.int, %to.float
  %give = and i1 %done, %is.scalar
  br i1 %give, label %result.scalar, label %finish
result.scalar:
  %got.value = load i64, ptr %ret
  store i32 %got.code, ptr %result
  %result.payload = getelementptr i8, ptr %result, i64 8
  store i64 %got.value, ptr %result.payload
  br label %finish
finish:
  ret i32 %r
}}
"""


def arg_checks_ir() -> str:
    """The two check functions' IR text, with their string constants."""
    constants = [string_constant(f"pytvm.ac.{key}", text) for key, text in _STRINGS.items()]
    return "\n".join(constants) + "\n" + _IR + _FFI_CALL


def dtype_word(code: int, bits: int, lanes: int) -> int:
    """A ``DLDataType`` as the word ``pytvm_check_array`` compares: ``code | bits << 8 |
    lanes << 16``.

    >>> hex(dtype_word(2, 32, 1))
    '0x12002'
    """
    return code | bits << 8 | lanes << 16


def device_mask(device_types: tuple[int, ...]) -> int:
    """The bit mask of accepted device types (each below 64) ``pytvm_check_array`` tests.

    >>> device_mask((1,)), device_mask((1, 12))
    (2, 4098)
    """
    mask = 0
    for dev in device_types:
        if not 0 <= dev < _MAX_MASKED_DEVICE:
            raise ValueError(f"device type {dev} cannot be checked (types 0 to 63 can)")
        mask |= 1 << dev
    return mask
