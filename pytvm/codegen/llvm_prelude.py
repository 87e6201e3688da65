"""The fixed LLVM IR of every LLVM-built library: runtime hooks, exported markers, messages.

The same hooks as the C prelude (``c_prelude.py``), with the same behaviour: generated code
reaches pytvm's host runtime through weak references to its private ``pytvm_`` names, or a
stock Apache TVM 0.27 process through the ``__TVM...`` context pointers its loader fills. Error
messages are built without ``printf`` into a 320-byte buffer, exactly as the C helpers build
them, so both code generators raise the same text (``ValueError: f: argument A: expected shape
(4,), got (5,)``). Every helper is ``internal``; the library exports only the kernels, their
``__tvm_ffi_`` adapters, the context pointers and the ``__pytvm_packed_library`` marker.
"""

from __future__ import annotations

__all__ = ["HELPERS", "prelude_ir"]

#: Names of the helper functions the prelude defines (generated code declares and calls them).
HELPERS = (
    "pytvm_set_error",
    "pytvm_ws_alloc",
    "pytvm_ws_free",
    "pytvm_parallel",
    "pytvm_type_name",
    "pytvm_is_compact",
    "pytvm_arg_error",
    "pytvm_count_error",
    "pytvm_shape_error",
    "pytvm_value_error",
    "pytvm_dtype_error",
)

#: Attributes of the message builders: they run once, on a failing call, so they stay small
#: and out of line (the optimiser spends no time on them and the kernels stay compact).
_COLD = "nounwind noinline cold minsize optsize"

_TYPE_NAMES = {
    0: "None", 1: "int", 2: "bool", 3: "float", 4: "an opaque handle", 5: "a DataType",
    6: "a Device", 7: "an array", 8: "str", 9: "bytes", 68: "a function", 69: "a shape",
    70: "a tensor", 73: "a module",
}  # fmt: skip
_DTYPE_KINDS = ("int", "uint", "float", "handle", "bfloat")

_HOOKS = r"""
%pytvm_msg = type { [320 x i8], i64 }

declare extern_weak void @pytvm_TVMAPISetLastError(ptr)
declare extern_weak ptr @pytvm_TVMBackendAllocWorkspace(i32, i32, i64, i32, i32)
declare extern_weak i32 @pytvm_TVMBackendFreeWorkspace(i32, i32, ptr)
declare extern_weak i32 @pytvm_TVMBackendParallelLaunch(ptr, ptr, i32)

@__TVMFFIErrorSetRaisedFromCStr = global ptr null
@__TVMBackendAllocWorkspace = global ptr null
@__TVMBackendFreeWorkspace = global ptr null
@__TVMBackendParallelLaunch = global ptr null
@__pytvm_packed_library = constant i32 1

define internal void @pytvm_set_error(ptr %msg) COLD {
entry:
  %kind = alloca [32 x i8]
  %own = icmp ne ptr @pytvm_TVMAPISetLastError, null
  br i1 %own, label %call_own, label %try_ffi
call_own:
  call void @pytvm_TVMAPISetLastError(ptr %msg)
  ret void
try_ffi:
  %raise = load ptr, ptr @__TVMFFIErrorSetRaisedFromCStr
  %has = icmp ne ptr %raise, null
  br i1 %has, label %scan, label %done
scan:
  %i = phi i64 [0, %try_ffi], [%i.next, %copy]
  %p = getelementptr i8, ptr %msg, i64 %i
  %c = load i8, ptr %p
  %end = icmp eq i8 %c, 0
  %colon = icmp eq i8 %c, 58
  %full = icmp uge i64 %i, 31
  %stop.a = or i1 %end, %colon
  %stop = or i1 %stop.a, %full
  br i1 %stop, label %scanned, label %copy
copy:
  %k = getelementptr i8, ptr %kind, i64 %i
  store i8 %c, ptr %k
  %i.next = add i64 %i, 1
  br label %scan
scanned:
  %kend = getelementptr i8, ptr %kind, i64 %i
  store i8 0, ptr %kend
  br i1 %colon, label %skip, label %nokind
skip:
  %t0 = getelementptr i8, ptr %p, i64 1
  br label %spaces
spaces:
  %t = phi ptr [%t0, %skip], [%t.next, %space]
  %tc = load i8, ptr %t
  %is.space = icmp eq i8 %tc, 32
  br i1 %is.space, label %space, label %with_kind
space:
  %t.next = getelementptr i8, ptr %t, i64 1
  br label %spaces
with_kind:
  %k0 = load i8, ptr %kind
  %named = icmp ne i8 %k0, 0
  %kind.p = select i1 %named, ptr %kind, ptr @pytvm.s.RuntimeError
  call void %raise(ptr %kind.p, ptr %t)
  ret void
nokind:
  call void %raise(ptr @pytvm.s.RuntimeError, ptr %msg)
  ret void
done:
  ret void
}

define internal ptr @pytvm_ws_alloc(i32 %dev, i64 %nbytes, i32 %code, i32 %bits) nounwind {
entry:
  %own = icmp ne ptr @pytvm_TVMBackendAllocWorkspace, null
  br i1 %own, label %call_own, label %try_ffi
call_own:
  %p = call ptr @pytvm_TVMBackendAllocWorkspace(i32 1, i32 %dev, i64 %nbytes, i32 %code, i32 %bits)
  ret ptr %p
try_ffi:
  %f = load ptr, ptr @__TVMBackendAllocWorkspace
  %has = icmp ne ptr %f, null
  br i1 %has, label %call_ffi, label %none
call_ffi:
  %q = call ptr %f(i32 1, i32 %dev, i64 %nbytes, i32 %code, i32 %bits)
  ret ptr %q
none:
  ret ptr null
}

define internal i32 @pytvm_ws_free(i32 %dev, ptr %ptr) nounwind {
entry:
  %own = icmp ne ptr @pytvm_TVMBackendFreeWorkspace, null
  br i1 %own, label %call_own, label %try_ffi
call_own:
  %r = call i32 @pytvm_TVMBackendFreeWorkspace(i32 1, i32 %dev, ptr %ptr)
  ret i32 %r
try_ffi:
  %f = load ptr, ptr @__TVMBackendFreeWorkspace
  %has = icmp ne ptr %f, null
  br i1 %has, label %call_ffi, label %none
call_ffi:
  %s = call i32 %f(i32 1, i32 %dev, ptr %ptr)
  ret i32 %s
none:
  ret i32 -1
}

define internal i32 @pytvm_parallel(ptr %lambda, ptr %cdata) {
entry:
  %env = alloca { ptr, i32 }
  %own = icmp ne ptr @pytvm_TVMBackendParallelLaunch, null
  br i1 %own, label %call_own, label %try_ffi
call_own:
  %r = call i32 @pytvm_TVMBackendParallelLaunch(ptr %lambda, ptr %cdata, i32 0)
  ret i32 %r
try_ffi:
  %f = load ptr, ptr @__TVMBackendParallelLaunch
  %has = icmp ne ptr %f, null
  br i1 %has, label %call_ffi, label %inline
call_ffi:
  %s = call i32 %f(ptr %lambda, ptr %cdata, i32 0)
  ret i32 %s
inline:
  store ptr null, ptr %env
  %n = getelementptr { ptr, i32 }, ptr %env, i32 0, i32 1
  store i32 1, ptr %n
  %t = call i32 %lambda(i32 0, ptr %env, ptr %cdata)
  ret i32 %t
}

define internal i32 @pytvm_is_compact(ptr %shape, ptr %strides, i32 %ndim) nounwind {
entry:
  %none = icmp eq ptr %strides, null
  %last = sub i32 %ndim, 1
  br i1 %none, label %yes, label %loop
loop:
  %i = phi i32 [%last, %entry], [%i.next, %next]
  %expected = phi i64 [1, %entry], [%expected.next, %next]
  %more = icmp sge i32 %i, 0
  br i1 %more, label %body, label %yes
body:
  %ix = sext i32 %i to i64
  %dp = getelementptr i64, ptr %shape, i64 %ix
  %d = load i64, ptr %dp
  %sp = getelementptr i64, ptr %strides, i64 %ix
  %s = load i64, ptr %sp
  %not.one = icmp ne i64 %d, 1
  %off = icmp ne i64 %s, %expected
  %bad = and i1 %not.one, %off
  br i1 %bad, label %no, label %next
next:
  %expected.next = mul i64 %expected, %d
  %i.next = sub i32 %i, 1
  br label %loop
yes:
  ret i32 1
no:
  ret i32 0
}

define internal void @pytvm_msg_str(ptr %m, ptr %s) COLD {
entry:
  %lenp = getelementptr %pytvm_msg, ptr %m, i32 0, i32 1
  br label %loop
loop:
  %sp = phi ptr [%s, %entry], [%sp.next, %body]
  %c = load i8, ptr %sp
  %len = load i64, ptr %lenp
  %nz = icmp ne i8 %c, 0
  %room = icmp ult i64 %len, 319
  %go = and i1 %nz, %room
  br i1 %go, label %body, label %exit
body:
  %dst = getelementptr %pytvm_msg, ptr %m, i32 0, i32 0, i64 %len
  store i8 %c, ptr %dst
  %len.next = add i64 %len, 1
  store i64 %len.next, ptr %lenp
  %sp.next = getelementptr i8, ptr %sp, i64 1
  br label %loop
exit:
  %zero = getelementptr %pytvm_msg, ptr %m, i32 0, i32 0, i64 %len
  store i8 0, ptr %zero
  ret void
}

define internal void @pytvm_msg_i64(ptr %m, i64 %v) COLD {
entry:
  %digits = alloca [24 x i8]
  %lenp = getelementptr %pytvm_msg, ptr %m, i32 0, i32 1
  %neg = icmp slt i64 %v, 0
  %minus.v = sub i64 0, %v
  %u0 = select i1 %neg, i64 %minus.v, i64 %v
  br label %digit
digit:
  %n = phi i64 [0, %entry], [%n1, %digit]
  %u = phi i64 [%u0, %entry], [%u1, %digit]
  %r = urem i64 %u, 10
  %r8 = trunc i64 %r to i8
  %ch = add i8 %r8, 48
  %dp = getelementptr i8, ptr %digits, i64 %n
  store i8 %ch, ptr %dp
  %n1 = add i64 %n, 1
  %u1 = udiv i64 %u, 10
  %more = icmp ne i64 %u1, 0
  %room = icmp slt i64 %n1, 22
  %again = and i1 %more, %room
  br i1 %again, label %digit, label %sign
sign:
  %mp = getelementptr i8, ptr %digits, i64 %n1
  %n1.minus = add i64 %n1, 1
  br i1 %neg, label %minus, label %emit
minus:
  store i8 45, ptr %mp
  br label %emit
emit:
  %count = phi i64 [%n1, %sign], [%n1.minus, %minus]
  br label %out
out:
  %k = phi i64 [%count, %emit], [%k1, %put]
  %len = load i64, ptr %lenp
  %any = icmp sgt i64 %k, 0
  %fits = icmp ult i64 %len, 319
  %go = and i1 %any, %fits
  br i1 %go, label %put, label %done
put:
  %k1 = sub i64 %k, 1
  %src = getelementptr i8, ptr %digits, i64 %k1
  %ch2 = load i8, ptr %src
  %dst = getelementptr %pytvm_msg, ptr %m, i32 0, i32 0, i64 %len
  store i8 %ch2, ptr %dst
  %len.next = add i64 %len, 1
  store i64 %len.next, ptr %lenp
  br label %out
done:
  %zero = getelementptr %pytvm_msg, ptr %m, i32 0, i32 0, i64 %len
  store i8 0, ptr %zero
  ret void
}

define internal void @pytvm_msg_shape(ptr %m, ptr %shape, i32 %ndim) COLD {
entry:
  call void @pytvm_msg_str(ptr %m, ptr @pytvm.s.lparen)
  br label %loop
loop:
  %i = phi i32 [0, %entry], [%i.next, %num]
  %more = icmp slt i32 %i, %ndim
  br i1 %more, label %body, label %close
body:
  %later = icmp sgt i32 %i, 0
  br i1 %later, label %sep, label %num
sep:
  call void @pytvm_msg_str(ptr %m, ptr @pytvm.s.comma)
  br label %num
num:
  %ix = sext i32 %i to i64
  %dp = getelementptr i64, ptr %shape, i64 %ix
  %d = load i64, ptr %dp
  call void @pytvm_msg_i64(ptr %m, i64 %d)
  %i.next = add i32 %i, 1
  br label %loop
close:
  %one = icmp eq i32 %ndim, 1
  %tail = select i1 %one, ptr @pytvm.s.comma_rparen, ptr @pytvm.s.rparen
  call void @pytvm_msg_str(ptr %m, ptr %tail)
  ret void
}

define internal i32 @pytvm_dtype_error(ptr %where, ptr %expected, i32 %code, i32 %bits,
                                       i32 %lanes) COLD {
entry:
  %m = alloca %pytvm_msg
  %lenp = getelementptr %pytvm_msg, ptr %m, i32 0, i32 1
  store i64 0, ptr %lenp
  call void @pytvm_msg_str(ptr %m, ptr @pytvm.s.TypeError)
  call void @pytvm_msg_str(ptr %m, ptr %where)
  call void @pytvm_msg_str(ptr %m, ptr @pytvm.s.expected_dtype)
  call void @pytvm_msg_str(ptr %m, ptr %expected)
  call void @pytvm_msg_str(ptr %m, ptr @pytvm.s.got)
  %c6 = icmp eq i32 %code, 6
  %b8 = icmp eq i32 %bits, 8
  %is.bool = and i1 %c6, %b8
  br i1 %is.bool, label %bool, label %kind
bool:
  call void @pytvm_msg_str(ptr %m, ptr @pytvm.s.bool)
  br label %vector.check
kind:
  %known = icmp ult i32 %code, 5
  br i1 %known, label %known.kind, label %number
known.kind:
  %ix = zext i32 %code to i64
  %kp = getelementptr [5 x ptr], ptr @pytvm.dtype_kinds, i64 0, i64 %ix
  %kname = load ptr, ptr %kp
  br label %number
number:
  %name = phi ptr [%kname, %known.kind], [@pytvm.s.code, %kind]
  call void @pytvm_msg_str(ptr %m, ptr %name)
  %bits64 = sext i32 %bits to i64
  call void @pytvm_msg_i64(ptr %m, i64 %bits64)
  br label %vector.check
vector.check:
  %vector = icmp ne i32 %lanes, 1
  br i1 %vector, label %x, label %end
x:
  call void @pytvm_msg_str(ptr %m, ptr @pytvm.s.x)
  %lanes64 = sext i32 %lanes to i64
  call void @pytvm_msg_i64(ptr %m, i64 %lanes64)
  br label %end
end:
  call void @pytvm_set_error(ptr %m)
  ret i32 -1
}
"""

#: Error builders: name, parameters, then the pieces of the message in order (a literal in
#: quotes, ``%name`` for a string parameter, ``i64 %name`` for a number, ``shape %a %n`` for a
#: shape). Each sets the last error and returns -1, as the C helpers of the same name do.
_BUILDERS = (
    (
        "pytvm_arg_error",
        "ptr %kind, ptr %where, ptr %what, ptr %detail",
        ["%kind", '": "', "%where", "%what", "%detail"],
    ),
    (
        "pytvm_shape_error",
        "ptr %where, ptr %expected, ptr %got, i32 %ndim",
        [
            '"ValueError: "',
            "%where",
            '": expected shape "',
            "shape %expected %ndim",
            '", got "',
            "shape %got %ndim",
        ],
    ),
    (
        "pytvm_count_error",
        "ptr %where, i64 %expected, i64 %got, ptr %what",
        [
            '"TypeError: "',
            "%where",
            '": expected "',
            "i64 %expected",
            "%what",
            '", got "',
            "i64 %got",
        ],
    ),
    (
        "pytvm_value_error",
        "ptr %kind, ptr %where, ptr %text, i64 %value, ptr %tail",
        ["%kind", '": "', "%where", "%text", "i64 %value", "%tail"],
    ),
)

_FIXED_STRINGS = {
    "RuntimeError": "RuntimeError",
    "TypeError": "TypeError: ",
    "expected_dtype": ": expected dtype ",
    "got": ", got ",
    "bool": "bool",
    "code": "code",
    "x": "x",
    "lparen": "(",
    "comma": ", ",
    "rparen": ")",
    "comma_rparen": ",)",
}


#: Bytes a quoted IR string holds as they are: printable ASCII but the quote and backslash.
_PLAIN = frozenset(range(32, 127)) - {ord('"'), ord("\\")}


def _string(name: str, text: str) -> str:
    data = text.encode() + b"\0"
    body = "".join(chr(b) if b in _PLAIN else f"\\{b:02X}" for b in data)
    return f'@{name} = private unnamed_addr constant [{len(data)} x i8] c"{body}"'


def _builder(name: str, params: str, pieces: list[str], strings: dict[str, str]) -> str:
    lines = [
        f"define internal i32 @{name}({params}) {_COLD} {{",
        "entry:",
        "  %m = alloca %pytvm_msg",
        "  %lenp = getelementptr %pytvm_msg, ptr %m, i32 0, i32 1",
        "  store i64 0, ptr %lenp",
    ]
    for piece in pieces:
        if piece.startswith('"'):
            text = piece.strip('"')
            label = strings.setdefault(text, f"pytvm.m{len(strings)}")
            lines.append(f"  call void @pytvm_msg_str(ptr %m, ptr @{label})")
        elif piece.startswith("i64 "):
            lines.append(f"  call void @pytvm_msg_i64(ptr %m, {piece})")
        elif piece.startswith("shape "):
            _, values, ndim = piece.split()
            lines.append(f"  call void @pytvm_msg_shape(ptr %m, ptr {values}, i32 {ndim})")
        else:
            lines.append(f"  call void @pytvm_msg_str(ptr %m, ptr {piece})")
    lines += ["  call void @pytvm_set_error(ptr %m)", "  ret i32 -1", "}"]
    return "\n".join(lines)


def _type_name() -> str:
    cases = " ".join(f"i32 {code}, label %t{code}" for code in _TYPE_NAMES)
    lines = [
        f"define internal ptr @pytvm_type_name(i32 %code) {_COLD} {{",
        "entry:",
        f"  switch i32 %code, label %other [ {cases} ]",
    ]
    for code in _TYPE_NAMES:
        lines += [f"t{code}:", f"  ret ptr @pytvm.type{code}"]
    lines += ["other:", "  ret ptr @pytvm.type_other", "}"]
    return "\n".join(lines)


def prelude_ir() -> str:
    """The prelude's IR text (helpers, hooks, markers, their string constants)."""
    strings: dict[str, str] = {}
    builders = [_builder(name, params, pieces, strings) for name, params, pieces in _BUILDERS]
    constants = [_string(f"pytvm.s.{key}", text) for key, text in _FIXED_STRINGS.items()]
    constants += [_string(label, text) for text, label in strings.items()]
    constants += [_string(f"pytvm.type{code}", text) for code, text in _TYPE_NAMES.items()]
    constants.append(_string("pytvm.type_other", "an object"))
    constants += [_string(f"pytvm.kind.{kind}", kind) for kind in _DTYPE_KINDS]
    kinds = ", ".join(f"ptr @pytvm.kind.{kind}" for kind in _DTYPE_KINDS)
    constants.append(f"@pytvm.dtype_kinds = private constant [5 x ptr] [{kinds}]")
    hooks = _HOOKS.replace(" COLD {", f" {_COLD} {{")
    return "\n".join([*constants, hooks, *builders, _type_name()]) + "\n"
