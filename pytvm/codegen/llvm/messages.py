"""Error messages in LLVM IR, built without ``printf`` exactly as the C helpers build them.

Each builder (``pytvm_arg_error``, ``pytvm_count_error``, ``pytvm_shape_error``,
``pytvm_value_error``, ``pytvm_dtype_error``) writes its pieces into a 320-byte buffer, sets
the last error through ``pytvm_set_error`` (see ``prelude``) and returns -1, so both code
generators raise the same text (``ValueError: f: argument A: expected shape (4,), got (5,)``).
The builders run once, on a failing call: they are cold, small and never inlined.
"""

from __future__ import annotations

from ..abi import DTYPE_KINDS, TYPE_NAMES

__all__ = ["COLD", "messages_ir", "string_constant"]

#: Attributes of the message builders: they run once, on a failing call, so they stay out of
#: line and unoptimised (optimising them cost every library ~20 ms of LLVM time).
COLD = "nounwind noinline cold optnone"


_MESSAGES = r"""
%pytvm_msg = type { [320 x i8], i64 }

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


def string_constant(name: str, text: str) -> str:
    """A private NUL-terminated IR constant ``@name`` holding ``text``."""
    data = text.encode() + b"\0"
    body = "".join(chr(b) if b in _PLAIN else f"\\{b:02X}" for b in data)
    return f'@{name} = private unnamed_addr constant [{len(data)} x i8] c"{body}"'


def _builder(name: str, params: str, pieces: list[str], strings: dict[str, str]) -> str:
    lines = [
        f"define internal i32 @{name}({params}) {COLD} {{",
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
    cases = " ".join(f"i32 {code}, label %t{code}" for code in TYPE_NAMES)
    lines = [
        f"define internal ptr @pytvm_type_name(i32 %code) {COLD} {{",
        "entry:",
        f"  switch i32 %code, label %other [ {cases} ]",
    ]
    for code in TYPE_NAMES:
        lines += [f"t{code}:", f"  ret ptr @pytvm.type{code}"]
    lines += ["other:", "  ret ptr @pytvm.type_other", "}"]
    return "\n".join(lines)


def messages_ir() -> str:
    """The message builders' IR text, with their string constants."""
    strings: dict[str, str] = {}
    builders = [_builder(name, params, pieces, strings) for name, params, pieces in _BUILDERS]
    constants = [string_constant(f"pytvm.s.{key}", text) for key, text in _FIXED_STRINGS.items()]
    constants += [string_constant(label, text) for text, label in strings.items()]
    constants += [string_constant(f"pytvm.type{code}", text) for code, text in TYPE_NAMES.items()]
    constants.append(string_constant("pytvm.type_other", "an object"))
    constants += [string_constant(f"pytvm.kind.{kind}", kind) for kind in DTYPE_KINDS]
    kinds = ", ".join(f"ptr @pytvm.kind.{kind}" for kind in DTYPE_KINDS)
    count = len(DTYPE_KINDS)
    constants.append(f"@pytvm.dtype_kinds = private constant [{count} x ptr] [{kinds}]")
    text = _MESSAGES.replace(" COLD {", f" {COLD} {{")
    return "\n".join([*constants, text, *builders, _type_name()]) + "\n"
