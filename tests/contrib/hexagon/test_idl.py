"""The hexagon_rpc IDL (``pytvm/contrib/hexagon/hexagon_rpc.idl``), its stub and generated skel:
parser errors, deterministic generation, generated C under strict warnings, stub/skel round
trips against test implementations in C, and ``pytvm-device --hexagon --skel`` behind
:class:`pytvm.contrib.hexagon.StubTransport`.
"""

from __future__ import annotations

import dataclasses
import doctest
import os
import re
import shutil
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pytvm
from pytvm.contrib.hexagon import StubTransport, idl
from pytvm.contrib.hexagon.stub import (
    HexagonRpcStub,
    StatusError,
    Stub,
    StubError,
    hexagon_rpc_interface,
)
from pytvm.contrib.hexagon.transport import DEVICE_MAX_MESSAGE, IDL_PATH
from pytvm.ffi.device import Device
from pytvm.ffi.errors import TVMOSError
from pytvm.rpc.sessions.client import RPCSession
from pytvm.rpc.wire.protocol import (
    RPCCode,
    encode_init_server,
    encode_shutdown,
    encode_syscall,
)

ROOT = Path(__file__).resolve().parents[3]
IDL_TOOL = [sys.executable, "-m", "pytvm.contrib.hexagon.idl"]
CRT_DIR = ROOT / "pytvm" / "src" / "crt"
COMPILERS = [cc for cc in ("gcc", "clang") if shutil.which(cc)]
WARN = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]
STRICT = (
    "-Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wconversion -Wsign-conversion "
    "-Wcast-align -Wundef -Wpointer-arith -Wwrite-strings -Wvla -Wold-style-definition "
    "-Wredundant-decls -Wswitch-default"
).split()
MAX_PACKET = 256 * 1024  # MINRPC_MAX_PACKET of the default device build

needs_cc = pytest.mark.skipif(not COMPILERS, reason="needs gcc or clang")


@pytest.fixture(scope="module")
def hexagon_rpc() -> idl.Interface:
    return idl.parse_file(IDL_PATH)


# ------------------------------------------------------------------------- the parser


def test_the_shipped_idl_declares_the_four_calls(hexagon_rpc: idl.Interface) -> None:
    iface = hexagon_rpc
    assert iface.name == "hexagon_rpc" and iface.source == "hexagon_rpc.idl"
    assert [(m.name, m.method_id) for m in iface.methods] == [
        ("open", 0),
        ("send", 1),
        ("receive", 2),
        ("close", 3),
    ]
    sig = {m.name: [(p.direction, p.type, p.name) for p in m.params] for m in iface.methods}
    assert sig == {
        "open": [("in", "string", "uri"), ("in", "int32", "stack_size"), ("out", "handle", "h")],
        "send": [("in", "handle", "h"), ("in", "bytes", "data")],
        "receive": [("in", "handle", "h"), ("in", "uint32", "max"), ("out", "bytes", "data")],
        "close": [("in", "handle", "h")],
    }
    assert [p.name for p in iface.method("receive").outs] == ["data"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        iface.name = "x"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        iface.methods[0].params[0].type = "bytes"  # type: ignore[misc]


def test_the_parser_docstring_example_runs() -> None:
    from pytvm.contrib.hexagon import idl_parser

    result = doctest.testmod(idl_parser, verbose=False)
    assert result.attempted >= 2 and result.failed == 0


def test_comments_and_layout_are_free() -> None:
    text = "// c\ninterface  k{# c\nint32 f ( ) ;int32 g(in bytes b,out int32 n);}"
    iface = idl.parse(text)
    assert [m.name for m in iface.methods] == ["f", "g"] and iface.methods[1].line == 3


BAD = [
    ("", 1, "expected 'interface'"),
    ("interface k {\n  int32 f(in float a);\n};", 2, "unknown parameter type 'float'"),
    ("interface k {\n  int32 f(int32 a);\n};", 2, "expected 'in' or 'out'"),
    ("interface k {\n\n  void f();\n};", 3, "return type 'int32'"),
    ("interface k {\n  int32 f();\n  int32 f();\n};", 3, "declared twice (first on line 2)"),
    ("interface k {\n  int32 f(in int32 a,\n        in uint32 a);\n};", 3, "appears twice"),
    ("interface k {\n  int32 f(out string s);\n};", 2, "strings are in-only"),
    ("interface k {\n  int32 f(out bytes a, out bytes b);\n};", 2, "at most one 'out bytes'"),
    ("interface k {\n  int32 f(in bytes d, in uint32 d_len);\n};", 2, "C name 'd_len'"),
    ("interface k {\n  int32 f(in int32 int);\n};", 2, "reserved word"),
    ("interface k {\n  int32 f(in int32 lambda);\n};", 2, "reserved word"),
    ("interface k {\n  int32 f(in int32 self);\n};", 2, "reserved word"),
    ("interface k {\n  int32 f(in int32 bytes);\n};", 2, "reserved word"),
    ("interface k {\n  int32 Run();\n};", 2, "must match [a-z][a-z0-9_]*"),
    ("interface k {\n  int32 f(in int32 size_t);\n};", 2, "not end in '_t'"),
    ("interface k {\n  int32 skel_serve();\n};", 2, "names starting 'skel' are reserved"),
    ("interface k {\n  int32 f()\n};", 3, "expected ';' after method 'f'"),
    ("interface k {\n  int32 f(in int32 a b);\n};", 2, "expected ')'"),
    ("interface k {\n  int32 f();\n", 3, "is not closed"),
    ("interface k {\n};", 2, "declares no methods"),
    ("interface k {\n  int32 f();\n};\n\nextra", 5, "unexpected 'extra'"),
    ("interface k {\n  int32 f(in int32 a);\n  @\n};", 3, "unexpected character '@'"),
]


@pytest.mark.parametrize(("text", "line", "message"), BAD)
def test_bad_input_is_reported_with_its_line(text: str, line: int, message: str) -> None:
    with pytest.raises(idl.IDLError) as info:
        idl.parse(text, "bad.idl")
    assert info.value.line == line
    assert message in info.value.message
    assert str(info.value).startswith(f"bad.idl:{line}: ")


def test_the_command_line_reports_errors_and_fails(tmp_path: Path) -> None:
    bad = tmp_path / "bad.idl"
    bad.write_text("interface k {\n  int32 f(in float a);\n};\n")
    proc = subprocess.run(
        [*IDL_TOOL, "--skel-c", str(tmp_path / "x.c"), str(bad)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert proc.returncode == 1 and f"{bad}:2: unknown parameter type" in proc.stderr
    assert not (tmp_path / "x.c").exists()


# ------------------------------------------------------------------------- determinism


def _generate_all(iface: idl.Interface) -> tuple[str, str]:
    return (idl.generate_skel_header(iface), idl.generate_skel_c(iface))


def test_generation_is_deterministic(tmp_path: Path, hexagon_rpc: idl.Interface) -> None:
    first = _generate_all(hexagon_rpc)
    assert first == _generate_all(idl.parse_file(IDL_PATH))
    # the command line, in fresh interpreters with different hash seeds, writes the same bytes
    for seed in ("0", "1", "12345"):
        out = tmp_path / seed
        subprocess.run(
            [*IDL_TOOL, "--skel-h", str(out / "s.h"), "--skel-c", str(out / "s.c"), str(IDL_PATH)],
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
            cwd=ROOT,
        )
        written = tuple((out / n).read_text() for n in ("s.h", "s.c"))
        assert written == first
    # nothing depends on where the file lives
    copy = tmp_path / "elsewhere" / "hexagon_rpc.idl"
    copy.parent.mkdir()
    copy.write_bytes(IDL_PATH.read_bytes())
    assert _generate_all(idl.parse_file(copy)) == first
    # the digest in every banner follows the text
    assert hexagon_rpc.digest in first[0] and hexagon_rpc.digest in first[1]
    edited = idl.parse(IDL_PATH.read_text() + "\n# edited\n", "hexagon_rpc.idl")
    assert edited.digest != hexagon_rpc.digest


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_the_build_generates_the_same_skel(tmp_path: Path, hexagon_rpc: idl.Interface) -> None:
    subprocess.run(
        [
            "make",
            "-s",
            "-C",
            str(CRT_DIR),
            f"BUILD={tmp_path}",
            f"PYTHON={sys.executable}",
            "hexagon-rpc-skel",
        ],
        check=True,
        capture_output=True,
    )
    assert (tmp_path / "gen" / "hexagon_rpc_skel.h").read_text() == idl.generate_skel_header(
        hexagon_rpc
    )
    assert (tmp_path / "gen" / "hexagon_rpc_skel.c").read_text() == idl.generate_skel_c(hexagon_rpc)


def test_the_transport_uses_the_stub_of_the_shipped_idl(hexagon_rpc: idl.Interface) -> None:
    iface = hexagon_rpc_interface()
    assert iface is hexagon_rpc_interface()  # parsed once per process
    read_fd, write_fd = os.pipe()
    try:
        stub = HexagonRpcStub(read_fd, write_fd)
    finally:
        os.close(read_fd)
        os.close(write_fd)
    assert stub.interface.digest == hexagon_rpc.digest
    assert stub.method_ids == {"open": 0, "send": 1, "receive": 2, "close": 3}
    assert stub.max_message == idl.DEFAULT_MAX_MESSAGE == DEVICE_MAX_MESSAGE
    skel_buffer = (CRT_DIR / "device" / "hexagon_rpc_impl.h").read_text()
    assert "#define PYTVM_HEXAGON_RPC_SKEL_BUFFER_BYTES (1024u * 1024u)" in skel_buffer


def test_the_typed_stub_refuses_an_idl_it_does_not_marshal() -> None:
    text = IDL_PATH.read_text()
    changed = text.replace("in uint32 max, out bytes data", "out bytes data, in uint32 max")
    assert changed != text
    with pytest.raises(
        ValueError,
        match=r"hexagon_rpc.idl:\d+: int32 receive\(in handle h, out bytes data, in uint32 max\)",
    ):
        HexagonRpcStub(0, 1, interface=idl.parse(changed, "hexagon_rpc.idl"))
    missing = idl.parse(
        "interface hexagon_rpc { int32 open(in string uri, in int32 stack_size, out handle h); };",
        "x.idl",
    )
    with pytest.raises(
        ValueError, match=re.escape("x.idl: interface 'hexagon_rpc' lacks method 'send'")
    ):
        HexagonRpcStub(0, 1, interface=missing)


def test_the_stub_refuses_unknown_methods_and_wrong_arity() -> None:
    stub = Stub(idl.parse(KITCHEN_IDL, "kitchen.idl"), -1, -1)
    with pytest.raises(
        ValueError, match=re.escape("kitchen.idl declares no such method: nothing, scalars")
    ):
        stub.call("missing")
    with pytest.raises(TypeError, match=r"kitchen_scalars takes 3 arguments \(a, b, c\), got 1"):
        stub.call("scalars", 1)
    # nothing was written: the descriptors are invalid, so any write would have failed
    with pytest.raises(StubError, match="cannot write to the skel"):
        stub.call("nothing")


# ------------------------------------------------------------------------- generated C

KITCHEN_IDL = """
# every type in every position the generator allows
interface kitchen {
    int32 nothing();
    int32 scalars(in int32 a, in uint32 b, in handle c, out int32 na, out uint32 nb,
                  out handle nc);
    int32 mixed(in string s, in bytes b, in int32 k, out uint32 n, out bytes echo,
                out int32 neg_k);
};
"""

HEXAGON_RPC_TEST_IMPL = r"""
/* A stand-in for hexagon_rpc_impl.c: sends are stored, receives hand them back in order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hexagon_rpc_skel.h"

#define STORE_BYTES (4u * 1024u * 1024u)
static uint8_t g_store[STORE_BYTES];
static size_t g_head = 0u;
static size_t g_tail = 0u;
static uint32_t g_handle = 0u;

static int32_t Push(const uint8_t* p, size_t n) {
  if (n > (STORE_BYTES - g_tail)) {
    return -6;
  }
  if (n > 0u) {
    (void)memcpy(g_store + g_tail, p, n);
  }
  g_tail += n;
  return 0;
}

int32_t hexagon_rpc_open(const char* uri, int32_t stack_size, uint32_t* h) {
  char text[600];
  int n;
  if (strcmp(uri, "fail") == 0) {
    return -42;
  }
  if (g_handle != 0u) {
    return -2;
  }
  n = snprintf(text, sizeof(text), "open %s %ld", uri, (long)stack_size);
  if ((n < 0) || ((size_t)n >= sizeof(text))) {
    return -3;
  }
  g_handle = 7u;
  *h = g_handle;
  return Push((const uint8_t*)text, (size_t)n);
}

int32_t hexagon_rpc_send(uint32_t h, const uint8_t* data, uint32_t data_len) {
  if ((h == 0u) || (h != g_handle)) {
    return -1;
  }
  return Push(data, (size_t)data_len);
}

int32_t hexagon_rpc_receive(uint32_t h, uint32_t max, uint8_t* data, uint32_t data_cap,
                            uint32_t* data_len) {
  size_t n = g_tail - g_head;
  if ((h == 0u) || (h != g_handle)) {
    return -1;
  }
  if (max == 0xFFFFFFFFu) {
    *data_len = data_cap + 1u; /* a misbehaving implementation */
    return 0;
  }
  if (n > (size_t)max) {
    n = (size_t)max;
  }
  if (n > (size_t)data_cap) {
    n = (size_t)data_cap;
  }
  if (n > 0u) {
    (void)memcpy(data, g_store + g_head, n);
  }
  g_head += n;
  if (g_head == g_tail) {
    g_head = 0u;
    g_tail = 0u;
  }
  *data_len = (uint32_t)n;
  return 0;
}

int32_t hexagon_rpc_close(uint32_t h) {
  if ((h == 0u) || (h != g_handle)) {
    return -1;
  }
  g_handle = 0u;
  g_head = 0u;
  g_tail = 0u;
  return 0;
}
"""

KITCHEN_TEST_IMPL = r"""
#include <string.h>

#include "kitchen_skel.h"

static uint32_t g_nothing_calls = 0u;

static int32_t Negate(int32_t v) { return (v == INT32_MIN) ? INT32_MAX : -v; }

int32_t kitchen_nothing(void) {
  g_nothing_calls += 1u;
  return (g_nothing_calls == 3u) ? 3 : 0; /* the third call fails */
}

int32_t kitchen_scalars(int32_t a, uint32_t b, uint32_t c, int32_t* na, uint32_t* nb,
                        uint32_t* nc) {
  *na = Negate(a);
  *nb = ~b;
  *nc = c + 1u;
  return (a == 13) ? -13 : 0;
}

int32_t kitchen_mixed(const char* s, const uint8_t* b, uint32_t b_len, int32_t k, uint32_t* n,
                      uint8_t* echo, uint32_t echo_cap, uint32_t* echo_len, int32_t* neg_k) {
  uint32_t i;
  if (b_len > echo_cap) {
    return -5;
  }
  for (i = 0u; i < b_len; ++i) {
    echo[i] = b[b_len - 1u - i];
  }
  *echo_len = b_len;
  *n = (uint32_t)strlen(s);
  *neg_k = Negate(k);
  return 0;
}
"""

HARNESS_MAIN = r"""
#include <stdlib.h>

/* <read_fd> <write_fd> <buffer bytes>: serve; exit 0 clean end, 10 read, 11 write, 3 other */
int main(int argc, char** argv) {
  static uint8_t buffer[4u * 1024u * 1024u];
  unsigned long bytes;
  int32_t rc;
  if (argc != 4) {
    return 2;
  }
  bytes = strtoul(argv[3], NULL, 10);
  if (bytes > sizeof(buffer)) {
    return 2;
  }
  rc = SERVE(atoi(argv[1]), atoi(argv[2]), buffer, (size_t)bytes);
  if (rc == 0) {
    return 0;
  }
  return (rc == EREAD) ? 10 : ((rc == EWRITE) ? 11 : 3);
}
"""


def _sanitizer_flags(cc: str, tmp: Path) -> list[str]:
    flags = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all"]
    probe = tmp / "probe.c"
    probe.write_text("int main(void) { return 0; }\n")
    exe = tmp / "probe"
    ok = subprocess.run([cc, *flags, str(probe), "-o", str(exe)], capture_output=True, check=False)
    if (
        ok.returncode != 0
        or subprocess.run([str(exe)], capture_output=True, check=False).returncode != 0
    ):
        return []
    return flags


def build_harness(
    out: Path, iface: idl.Interface, impl: str, cc: str, extra: list[str] | None = None
) -> Path:
    """Generated skel + test implementation + a main serving on argv's descriptors."""
    out.mkdir(parents=True, exist_ok=True)
    up = iface.name.upper()
    (out / f"{iface.name}_skel.h").write_text(idl.generate_skel_header(iface))
    (out / f"{iface.name}_skel.c").write_text(idl.generate_skel_c(iface))
    main = (
        HARNESS_MAIN.replace("SERVE", f"{iface.name}_skel_serve")
        .replace("EREAD", f"{up}_SKEL_EREAD")
        .replace("EWRITE", f"{up}_SKEL_EWRITE")
    )
    (out / "impl.c").write_text(impl + main)
    exe = out / "harness"
    cmd = [cc, *WARN, *STRICT, *(extra or []), "-I", str(out), "-O1", "-g"]
    cmd += [str(out / f"{iface.name}_skel.c"), str(out / "impl.c"), "-o", str(exe)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    return exe


class Harness:
    """A harness process and the generated stub talking to it over two pipes."""

    def __init__(
        self, exe: Path, iface: idl.Interface, buffer: int = 1 << 20, max_message: int = 0
    ) -> None:
        child_read, parent_write = os.pipe()
        parent_read, child_write = os.pipe()
        env = {**os.environ, "ASAN_OPTIONS": "halt_on_error=1", "UBSAN_OPTIONS": "halt_on_error=1"}
        self.proc = subprocess.Popen(
            [str(exe), str(child_read), str(child_write), str(buffer)],
            pass_fds=(child_read, child_write),
            stderr=subprocess.PIPE,
            env=env,
        )
        os.close(child_read)
        os.close(child_write)
        self.read_fd, self.write_fd = parent_read, parent_write
        size = max_message or buffer
        self.stub: Any = (
            HexagonRpcStub(parent_read, parent_write, size, iface)
            if iface.name == "hexagon_rpc"
            else Stub(iface, parent_read, parent_write, size)
        )

    def raw(self, data: bytes) -> tuple[int, bytes]:
        """Write raw bytes; read one reply: (status, out-parameter bytes)."""
        os.write(self.write_fd, data)
        (size,) = struct.unpack("<I", self._read(4))
        body = self._read(size)
        return struct.unpack_from("<i", body)[0], body[4:]

    def _read(self, n: int) -> bytes:
        out = b""
        while len(out) < n:
            chunk = os.read(self.read_fd, n - len(out))
            assert chunk, "the harness closed its pipe"
            out += chunk
        return out

    def finish(self, tail: bytes = b"") -> tuple[int, str]:
        """Write ``tail``, close the pipes; the harness's exit status and stderr."""
        if tail:
            os.write(self.write_fd, tail)
        os.close(self.write_fd)
        _, err = self.proc.communicate(timeout=30)
        os.close(self.read_fd)
        return self.proc.returncode, err.decode(errors="replace")


@needs_cc
@pytest.mark.parametrize("cc", COMPILERS)
def test_generated_c_compiles_under_strict_warnings(
    tmp_path: Path, cc: str, hexagon_rpc: idl.Interface
) -> None:
    for iface, impl in (
        (hexagon_rpc, HEXAGON_RPC_TEST_IMPL),
        (idl.parse(KITCHEN_IDL, "kitchen.idl"), KITCHEN_TEST_IMPL),
    ):
        out = tmp_path / iface.name
        build_harness(out, iface, impl, cc)
        # the header compiles on its own
        probe = out / "probe.c"
        probe.write_text(f'#include "{iface.name}_skel.h"\ntypedef int probe_t;\n')
        subprocess.run(
            [cc, *WARN, *STRICT, "-fsyntax-only", "-I", str(out), str(probe)], check=True
        )


@pytest.fixture(scope="module")
def sanitize(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    if not COMPILERS:
        pytest.fail("these tests need gcc or clang on PATH")
    return _sanitizer_flags(COMPILERS[0], tmp_path_factory.mktemp("probe"))


@pytest.fixture(scope="module")
def rpc_harness(
    tmp_path_factory: pytest.TempPathFactory, hexagon_rpc: idl.Interface, sanitize: list[str]
) -> Path:
    out = tmp_path_factory.mktemp("hexagon_rpc")
    return build_harness(out, hexagon_rpc, HEXAGON_RPC_TEST_IMPL, COMPILERS[0], sanitize)


@pytest.fixture(scope="module")
def kitchen_harness(tmp_path_factory: pytest.TempPathFactory, sanitize: list[str]) -> Path:
    out = tmp_path_factory.mktemp("kitchen")
    iface = idl.parse(KITCHEN_IDL, "kitchen.idl")
    return build_harness(out, iface, KITCHEN_TEST_IMPL, COMPILERS[0], sanitize)


# ------------------------------------------------------------------------- stub <-> skel


def test_every_hexagon_rpc_method_round_trips(
    rpc_harness: Path, hexagon_rpc: idl.Interface
) -> None:
    h = Harness(rpc_harness, hexagon_rpc)
    stub = h.stub
    handle = stub.open("pytvm_hexagon_rpc_skel.so?domain=cdsp", 16384)
    assert handle == 7
    assert stub.receive(handle, 1000) == b"open pytvm_hexagon_rpc_skel.so?domain=cdsp 16384"
    assert stub.receive(handle, 1000) == b""
    stub.send(handle, b"ping")
    stub.send(handle, bytearray(b"-"))
    stub.send(handle, memoryview(b"xpongx")[1:5])
    stub.send(handle, b"")
    assert stub.receive(handle, 3) == b"pin"
    assert stub.receive(handle, 100) == b"g-pong"
    # a large send, taken back in pieces no larger than max
    big = np.random.default_rng(1).integers(0, 256, 1_000_000, dtype=np.uint8).tobytes()
    stub.send(handle, big)
    got = b"".join(stub.receive(handle, 300_000) for _ in range(4))
    assert got == big
    with pytest.raises(StatusError) as info:
        stub.send(handle + 1, b"x")  # the implementation's status comes back
    assert info.value.status == -1 and info.value.method == "send"
    assert stub.close(handle) is None
    with pytest.raises(StatusError, match="returned status -1"):
        stub.close(handle)
    with pytest.raises(StatusError) as info:
        stub.open("fail", 0)
    assert info.value.status == -42
    assert stub.open("grüße ✓", -5) == 7  # UTF-8 and a negative int32 arrive intact
    assert stub.receive(7, 100) == "open grüße ✓ -5".encode()
    assert h.finish() == (0, "")


def test_kitchen_sink_round_trips(kitchen_harness: Path) -> None:
    iface = idl.parse(KITCHEN_IDL, "kitchen.idl")
    h = Harness(kitchen_harness, iface)
    stub = h.stub
    assert stub.call("nothing") is None
    assert stub.call("scalars", 5, 0, 0xFFFFFFFF) == (-5, 0xFFFFFFFF, 0)
    assert stub.call("scalars", -(1 << 31), 0x12345678, 41) == ((1 << 31) - 1, 0xEDCBA987, 42)
    with pytest.raises(StatusError) as info:
        stub.call("scalars", 13, 0, 0)
    assert info.value.status == -13
    n, echo, neg_k = stub.call("mixed", "héllo", b"abc\x00def", 7)
    assert (n, echo, neg_k) == (len("héllo".encode()), b"fed\x00cba", -7)
    assert stub.call("mixed", "", b"", -(1 << 31)) == (0, b"", (1 << 31) - 1)
    assert stub.call("nothing") is None
    with pytest.raises(StatusError, match="kitchen_nothing returned status 3"):
        stub.call("nothing")
    assert h.finish() == (0, "")


def test_the_stub_checks_arguments_before_sending(
    rpc_harness: Path, hexagon_rpc: idl.Interface
) -> None:
    h = Harness(rpc_harness, hexagon_rpc, buffer=4096)
    stub = h.stub
    with pytest.raises(ValueError, match="NUL"):
        stub.open("a\0b", 0)
    with pytest.raises(ValueError, match="outside"):
        stub.open("a", 1 << 31)
    with pytest.raises(ValueError, match="outside"):
        stub.send(-1, b"")
    with pytest.raises(TypeError, match="int"):
        stub.send(True, b"")
    with pytest.raises(TypeError, match="str"):
        stub.open(b"a", 0)
    with pytest.raises(TypeError, match="bytes-like"):
        stub.send(1, "text")
    with pytest.raises(ValueError, match="over the 4096 limit"):
        stub.send(1, bytes(5000))
    assert stub.open("ok", 1) == 7  # nothing was sent by the refused calls
    assert h.finish() == (0, "")


def test_the_skel_answers_bad_requests_and_stays_in_step(
    rpc_harness: Path, hexagon_rpc: idl.Interface
) -> None:
    h = Harness(rpc_harness, hexagon_rpc, buffer=4096, max_message=1 << 20)
    stub = h.stub
    skel = {name: value for name, (value, _) in idl.SKEL_STATUSES.items()}
    assert stub.open("u", 0) == 7
    stub.receive(7, 100)
    # a request larger than the skel's buffer is read, dropped and answered
    with pytest.raises(StatusError, match="ETOOBIG") as info:
        stub.send(7, bytes(100_000))
    assert info.value.status == skel["ETOOBIG"]
    assert h.raw(struct.pack("<II", 4, 99)) == (skel["EMETHOD"], b"")
    assert h.raw(struct.pack("<I", 2) + b"\x01\x00") == (skel["EBADMSG"], b"")
    assert h.raw(struct.pack("<I", 0)) == (skel["EBADMSG"], b"")

    # strings: NUL-terminated, one NUL only
    def request(method: int, *fields: bytes) -> bytes:
        body = struct.pack("<I", method) + b"".join(fields)
        return struct.pack("<I", len(body)) + body

    def string(raw: bytes) -> bytes:
        return struct.pack("<I", len(raw)) + raw

    stack = struct.pack("<i", 0)
    assert h.raw(request(0, string(b"ab"), stack)) == (skel["EBADMSG"], b"")
    assert h.raw(request(0, string(b"a\0\0"), stack)) == (skel["EBADMSG"], b"")
    assert h.raw(request(0, string(b""), stack)) == (skel["EBADMSG"], b"")
    # a bytes length past the end, a missing parameter, a trailing byte
    h7 = struct.pack("<I", 7)
    assert h.raw(request(1, h7, struct.pack("<I", 5))) == (skel["EBADMSG"], b"")
    assert h.raw(request(2, h7)) == (skel["EBADMSG"], b"")
    assert h.raw(request(3, h7, b"\0")) == (skel["EBADMSG"], b"")
    # a well-formed raw request is answered normally
    assert h.raw(request(2, h7, struct.pack("<I", 0))) == (0, struct.pack("<I", 0))
    # the implementation claiming more out-bytes than their capacity is caught
    with pytest.raises(StatusError, match="EIMPL"):
        stub.receive(7, 0xFFFFFFFF)
    # after all that, the stream is still in step
    stub.send(7, b"still here")
    assert stub.receive(7, 100) == b"still here"
    assert stub.close(7) is None
    assert h.finish() == (0, "")


def test_a_truncated_request_ends_the_skel_with_a_read_error(
    rpc_harness: Path, hexagon_rpc: idl.Interface
) -> None:
    h = Harness(rpc_harness, hexagon_rpc)
    status, err = h.finish(struct.pack("<III", 100, 1, 7))
    assert status == 10, err


def test_a_vanished_skel_breaks_the_stub(rpc_harness: Path, hexagon_rpc: idl.Interface) -> None:
    h = Harness(rpc_harness, hexagon_rpc)
    h.proc.kill()
    h.proc.wait()
    with pytest.raises(StubError):
        h.stub.open("u", 0)
    with pytest.raises(StubError, match="broken"):
        h.stub.close(7)
    os.close(h.read_fd)
    os.close(h.write_fd)


# ------------------------------------------------------------------------- the device binary


@pytest.fixture(scope="module")
def device() -> Path:
    if not COMPILERS:
        pytest.fail("these tests need a C compiler (gcc or clang) on PATH")
    from pytvm.crt.build import device_binary

    return device_binary()


@pytest.fixture
def transport(device: Path) -> Iterator[StubTransport]:
    t = StubTransport(device)
    t.open("pytvm_hexagon_rpc_skel.so?domain=cdsp", 4096)
    yield t
    t.close()


def read_packets(t: StubTransport, count: int = 1) -> list[tuple[int, bytes]]:
    """``count`` reply packets from the device, all that is pending: (code, body after it)."""
    buf = b""
    packets: list[tuple[int, bytes]] = []
    while len(packets) < count:
        chunk = t.receive(1 << 16)
        assert chunk, "the device ended the stream"
        buf += chunk
        while len(buf) >= 8 and len(buf) >= 8 + struct.unpack_from("<Q", buf)[0]:
            end = 8 + struct.unpack_from("<Q", buf)[0]
            packets.append((struct.unpack_from("<i", buf, 8)[0], buf[12:end]))
            buf = buf[end:]
    assert len(packets) == count and buf == b"", "more replies than expected"
    return packets


def test_device_serves_packets_fed_in_pieces(transport: StubTransport) -> None:
    init = encode_init_server()
    transport.send(init[:5])
    with pytest.raises(TVMOSError, match="waits for the rest of a request"):
        transport.receive(100)
    transport.send(init[5:9])
    transport.send(init[9:])
    [(code, _)] = read_packets(transport)
    assert code == RPCCode.RETURN
    # two requests in one send: two replies, in order
    cpu_exists = encode_syscall(RPCCode.DEV_GET_ATTR, [Device(1, 0), 0])
    transport.send(cpu_exists + cpu_exists)
    replies = read_packets(transport, 2)
    assert [code for code, _ in replies] == [RPCCode.RETURN, RPCCode.RETURN]
    assert replies[0] == replies[1]
    # kShutdown: the stream ends; nothing more is taken
    transport.send(encode_shutdown())
    assert transport.receive(100) == b""
    with pytest.raises(TVMOSError, match="has ended"):
        transport.send(cpu_exists)


def test_device_answers_an_oversized_packet_then_ends(transport: StubTransport) -> None:
    transport.send(encode_init_server())
    assert read_packets(transport)[0][0] == RPCCode.RETURN
    transport.send(struct.pack("<Q", MAX_PACKET + 1))
    [(code, body)] = read_packets(transport)
    assert code == RPCCode.EXCEPTION and b"kAllocError" in body
    assert transport.receive(100) == b""


def test_device_rejects_bad_handles_and_a_second_open(transport: StubTransport) -> None:
    assert transport.stub is not None
    with pytest.raises(StatusError) as info:
        transport.stub.send(transport.handle + 1, b"x")
    assert info.value.status == -1
    with pytest.raises(StatusError) as info:
        transport.stub.open("second", 0)
    assert info.value.status == -2


@pytest.mark.parametrize(("uri", "stack"), [("", 0), ("u", -1), ("x" * 300, 0)])
def test_device_refuses_bad_open_arguments(device: Path, uri: str, stack: int) -> None:
    t = StubTransport(device)
    with pytest.raises(TVMOSError, match="bad uri or stack size"):
        t.open(uri, stack)
    assert t.process is None and t.stub is None  # the emulator was reaped


def test_close_reaps_the_emulator_cleanly(device: Path) -> None:
    t = StubTransport(device)
    t.open("u", 0)
    proc = t.process
    assert proc is not None
    t.close()
    assert proc.returncode == 0 and t.process is None
    t.close()  # twice is harmless
    with pytest.raises(TVMOSError, match="not open"):
        t.send(b"x")


def test_a_session_over_the_stub_and_skel(device: Path) -> None:
    from pytvm.contrib.hexagon.session import DEFAULT_URI, open_accelerator_session

    sess = RPCSession(open_accelerator_session("stub-skel", 12345).session)
    try:
        info = sess.get_function("pytvm.hexagon.skel_info")()
        assert info == f"uri={DEFAULT_URI};stack_size=12345;handle=1"
        assert "skel=on" in sess.get_function("pytvm.device.info")()
        echo = sess.get_function("pytvm.device.echo")
        assert echo(b"\x01" * 200_000) == b"\x01" * 200_000  # replies larger than one receive
        x = np.random.default_rng(2).random((4 << 20) // 4, dtype=np.float32)
        A = pytvm.nd.array(x, sess.hexagon(0))
        np.testing.assert_array_equal(A.numpy(), x)
        base, size = (
            int(v) for v in str(sess.get_function("pytvm.hexagon.pool_range")()).split(",")
        )
        assert base <= A.data_ptr < base + size
    finally:
        sess.close()
