"""The fixed LLVM IR of every LLVM-built library: runtime hooks, exported markers, helpers.

The same hooks as the C prelude (``c/prelude.py``), with the same behaviour: generated code
reaches pytvm's host runtime through weak references to its private ``pytvm_`` names, or a
stock Apache TVM 0.27 process through the ``__TVM...`` context pointers its loader fills. The
library exports only the kernels, their ``__tvm_ffi_`` adapters, the context pointers and the
``__pytvm_packed_library`` marker; every helper is ``internal``. Error messages come from
``messages``.
"""

from __future__ import annotations

from ..abi import PACKED_LIBRARY_MARKER
from .arg_checks import arg_checks_ir
from .messages import COLD, messages_ir

__all__ = ["prelude_ir"]

#: Attributes of the runtime hooks (workspace allocation, parallel launch): each picks the
#: host's function at run time; inlined at every call site, their three-way choices multiplied
#: into a kernel's control flow (twice the LLVM time of a softmax) for no run-time gain.
HOOK = "nounwind noinline"

_HOOKS = r"""
declare extern_weak void @pytvm_TVMAPISetLastError(ptr)
declare extern_weak ptr @pytvm_TVMBackendAllocWorkspace(i32, i32, i64, i32, i32)
declare extern_weak i32 @pytvm_TVMBackendFreeWorkspace(i32, i32, ptr)
declare extern_weak i32 @pytvm_TVMBackendParallelLaunch(ptr, ptr, i32)
declare extern_weak i32 @pytvm_TVMBackendGetFuncFromEnv(ptr, ptr, ptr)
declare extern_weak i32 @pytvm_TVMFuncCall(ptr, ptr, ptr, i32, ptr, ptr)
declare extern_weak i32 @pytvm_TVMFuncFree(ptr)

EXPORTED_VARIABLES

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

define internal noalias ptr @pytvm_ws_alloc(i32 %dev, i64 %nbytes, i32 %code, i32 %bits) HOOK {
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

define internal i32 @pytvm_ws_free(i32 %dev, ptr %ptr) HOOK {
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

define internal i32 @pytvm_parallel(ptr %lambda, ptr %cdata) noinline {
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

; A packed call (c/prelude.py's pytvm_call_packed): the function found once per call site
; through TVMBackendGetFuncFromEnv on the module context, kept in %cache; then TVMFuncCall.
@pytvm.s.no_packed_runtime = private unnamed_addr constant [71 x i8]
    c"RuntimeError: a kernel calling a packed function needs pytvm's runtime\00"

define internal i32 @pytvm_call_packed(ptr %cache, ptr %name, ptr %args, ptr %codes, i32 %n,
                                       ptr %ret, ptr %ret_code) HOOK {
entry:
  %found = alloca ptr
  %cached = load atomic ptr, ptr %cache acquire, align 8
  %have = icmp ne ptr %cached, null
  br i1 %have, label %call, label %lookup
lookup:
  %own = icmp ne ptr @pytvm_TVMBackendGetFuncFromEnv, null
  br i1 %own, label %find, label %no_runtime
find:
  store ptr null, ptr %found
  %ctx = load ptr, ptr @__tvm_module_ctx
  %r = call i32 @pytvm_TVMBackendGetFuncFromEnv(ptr %ctx, ptr %name, ptr %found)
  %ok = icmp eq i32 %r, 0
  br i1 %ok, label %keep, label %failed
keep:
  %f = load ptr, ptr %found
  %pair = cmpxchg ptr %cache, ptr null, ptr %f acq_rel acquire
  %won = extractvalue { ptr, i1 } %pair, 1
  br i1 %won, label %call, label %lost
lost:
  %freed = call i32 @pytvm_TVMFuncFree(ptr %f)
  %other = extractvalue { ptr, i1 } %pair, 0
  br label %call
call:
  %h = phi ptr [%cached, %entry], [%f, %keep], [%other, %lost]
  %c = call i32 @pytvm_TVMFuncCall(ptr %h, ptr %args, ptr %codes, i32 %n, ptr %ret, ptr %ret_code)
  ret i32 %c
failed:
  ret i32 %r
no_runtime:
  call void @pytvm_set_error(ptr @pytvm.s.no_packed_runtime)
  ret i32 -1
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

"""


#: The library's exported variables: defined by the first module of a library compiled in
#: parts, declared by the others (the helpers are internal to each part).
_EXPORTED_VARIABLES = (
    ("__TVMFFIErrorSetRaisedFromCStr", "global ptr null", "external global ptr"),
    ("__TVMBackendAllocWorkspace", "global ptr null", "external global ptr"),
    ("__TVMBackendFreeWorkspace", "global ptr null", "external global ptr"),
    ("__TVMBackendParallelLaunch", "global ptr null", "external global ptr"),
    ("__tvm_module_ctx", "global ptr null", "external global ptr"),
    (PACKED_LIBRARY_MARKER, "constant i32 1", "external constant i32"),
)


def prelude_ir(definitions: bool = True) -> str:
    """The prelude's IR text (hooks, markers, helpers, messages and their strings); without
    ``definitions`` the exported variables are only declared (a later part of a library
    compiled in parts).
    """
    hooks = _HOOKS.replace(" COLD {", f" {COLD} {{").replace(" HOOK {", f" {HOOK} {{")
    variables = "".join(
        f"@{name} = {defined if definitions else declared}\n"
        for name, defined, declared in _EXPORTED_VARIABLES
    )
    hooks = hooks.replace("EXPORTED_VARIABLES\n", variables)
    return hooks + "\n" + messages_ir() + arg_checks_ir()
