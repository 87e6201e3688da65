"""The wire's tables are written once per language and compared here: the C runtime's RPC codes,
type indices, server statuses, code and status names and protocol version (parsed from its
sources) against pytvm's Python enums. A renumbered, renamed, missing or extra entry on either
side fails, naming both values.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from enum import IntEnum
from pathlib import Path

import pytest

import pytvm
from pytvm.ffi.type_index import TypeIndex
from pytvm.rpc.sessions import hop
from pytvm.rpc.wire.base import PROTOCOL_VERSION
from pytvm.rpc.wire.protocol import RPCCode, ServerStatus

PKG = Path(pytvm.__file__).resolve().parent
CRT = PKG / "src" / "crt"
MINRPC_INTERNAL_H = CRT / "minrpc" / "minrpc_internal.h"
MINRPC_SERVER_H = CRT / "include" / "pytvm_crt" / "minrpc_server.h"
MINRPC_NAMES_C = CRT / "minrpc" / "minrpc_names.c"
SERIAL_RPC_C = CRT / "serial" / "serial_rpc.c"
C_RUNTIME_API_H = PKG / "include" / "pytvm" / "c_runtime_api.h"

#: c_runtime_api.h keeps TVM's C names for the type indices; each one's tvm-ffi name.
C_TYPE_CODE_NAMES = {
    "kTVMNullptr": "NONE",
    "kTVMArgInt": "INT",
    "kTVMArgBool": "BOOL",
    "kTVMArgFloat": "FLOAT",
    "kTVMOpaqueHandle": "OPAQUE_PTR",
    "kTVMDataType": "DATA_TYPE",
    "kDLDeviceTypeCode": "DEVICE",
    "kTVMDLTensorHandle": "DL_TENSOR_PTR",
    "kTVMStr": "RAW_STR",
    "kTVMBytes": "BYTE_ARRAY_PTR",
    "kTVMObjectHandle": "OBJECT",
    "kTVMStrObject": "STR",
    "kTVMBytesObject": "BYTES",
    "kTVMPackedFuncHandle": "FUNCTION",
    "kTVMShapeHandle": "SHAPE",
    "kTVMNDArrayHandle": "TENSOR",
    "kTVMModuleHandle": "MODULE",
    "kTVMDynObjectBegin": "DYN_OBJECT_BEGIN",
}

# ------------------------------------------------------------------ parsing C


def _strip_comments(text: str) -> str:
    return re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.DOTALL)


def c_defines(text: str, prefix: str) -> dict[str, int]:
    """``#define <prefix><NAME> <int>`` lines as {NAME: value} (a ``u`` suffix is allowed)."""
    pattern = rf"^\s*#\s*define\s+{re.escape(prefix)}(\w+)\s+\(?(\d+)u?\)?\s*$"
    return {m[1]: int(m[2]) for m in re.finditer(pattern, _strip_comments(text), re.MULTILINE)}


def c_enum(text: str, type_name: str) -> dict[str, int]:
    """The enumerators of ``typedef enum { ... } <type_name>;``, each with an explicit value."""
    body = re.search(
        rf"typedef\s+enum\s*\{{(?P<body>[^}}]*)\}}\s*{re.escape(type_name)}\s*;",
        _strip_comments(text),
    )
    if body is None:
        raise AssertionError(f"no `typedef enum {{...}} {type_name};` found")
    found = {}
    for item in body["body"].split(","):
        if item.strip():
            name, _, value = item.partition("=")
            if not value.strip():
                raise AssertionError(f"{type_name}: {name.strip()} has no explicit value")
            found[name.strip()] = int(value.strip(), 0)
    return found


def c_string_table(text: str, array: str) -> list[str]:
    """The string literals of ``... <array>[] = { "a", "b", ... };`` in order."""
    body = re.search(rf"\b{re.escape(array)}\[\]\s*=\s*\{{(?P<body>.*?)\}};", text, re.DOTALL)
    if body is None:
        raise AssertionError(f"no `{array}[] = {{...}};` table found")
    return re.findall(r'"((?:[^"\\]|\\.)*)"', _strip_comments(body["body"]))


def c_string_define(text: str, name: str) -> str:
    match = re.search(rf'^\s*#\s*define\s+{re.escape(name)}\s+"([^"]*)"', text, re.MULTILINE)
    if match is None:
        raise AssertionError(f'no `#define {name} "..."` found')
    return match[1]


# ------------------------------------------------------------------ comparing


def value_drift(
    where: str, c_values: Mapping[str, int], enum: type[IntEnum], skip: Iterable[str] = ()
) -> list[str]:
    """Differences between C entries {NAME: value} and a Python enum (by member name)."""
    problems = []
    for name, value in sorted(c_values.items()):
        member = enum.__members__.get(name)
        if member is None:
            problems.append(f"{where}: C has {name} = {value}, {enum.__name__} has no {name}")
        elif int(member) != value:
            problems.append(
                f"{where}: {name} is {value} in C but {enum.__name__}.{name} = {int(member)}"
            )
    for name, member in enum.__members__.items():
        if name not in c_values and name not in skip and member.name == name:
            problems.append(f"{where}: {enum.__name__}.{name} = {int(member)} is missing in C")
    return problems


def name_table_drift(where: str, c_names: list[str], expected: list[str]) -> list[str]:
    """Differences between a C table of names indexed by value and the expected names."""
    problems = [
        f"{where}[{i}]: C has {c!r}, Python has {py!r}"
        for i, (c, py) in enumerate(zip(c_names, expected, strict=False))
        if c != py
    ]
    if len(c_names) != len(expected):
        problems.append(
            f"{where}: C has {len(c_names)} entries, Python {len(expected)} "
            f"(C extra: {c_names[len(expected) :]}, Python extra: {expected[len(c_names) :]})"
        )
    return problems


def _squash(name: str) -> str:
    """``kInvalidDLTensorFieldStride`` and ``INVALID_DLTENSOR_FIELD_STRIDE`` alike."""
    return re.sub(r"^k|_", "", name).lower()


def rpc_code_drift(internal_h: str, names_c: str) -> list[str]:
    """MINRPC_CODE_* and the C code-name table against RPCCode and hop.code_name."""
    problems = value_drift(
        "MINRPC_CODE_*", c_defines(internal_h, "MINRPC_CODE_"), RPCCode, {"NONE"}
    )
    expected = [hop.code_name(code) for code in sorted(int(c) for c in RPCCode)]
    if expected != [hop.code_name(i) for i in range(len(expected))]:
        problems.append(f"RPCCode is not numbered 0..{len(expected) - 1}: {list(RPCCode)}")
    problems += name_table_drift("kCodeNames", c_string_table(names_c, "kCodeNames"), expected)
    return problems


def status_drift(server_h: str, names_c: str) -> list[str]:
    """pytvm_minrpc_status and the C status-name table against ServerStatus."""
    enum = {
        _squash(k.removeprefix("kMinRPC")): v
        for k, v in c_enum(server_h, "pytvm_minrpc_status").items()
    }
    by_squashed = {_squash(m.name): m for m in ServerStatus}
    problems = []
    for key, value in sorted(enum.items(), key=lambda kv: kv[1]):
        member = by_squashed.get(key)
        if member is None:
            problems.append(f"pytvm_minrpc_status: C has {key} = {value}, ServerStatus has none")
        elif int(member) != value:
            problems.append(
                f"pytvm_minrpc_status: {key} is {value} in C but ServerStatus.{member.name} = "
                f"{int(member)}"
            )
    problems += [
        f"pytvm_minrpc_status: ServerStatus.{m.name} = {int(m)} is missing in C"
        for key, m in by_squashed.items()
        if key not in enum
    ]
    c_names = c_string_table(names_c, "kStatusNames")
    ordered = sorted(ServerStatus, key=int)
    problems += [
        f"kStatusNames[{i}]: C has {c!r}, ServerStatus({i}) is {m.name}"
        for i, (c, m) in enumerate(zip(c_names, ordered, strict=False))
        if _squash(c) != _squash(m.name) or int(m) != i
    ]
    if len(c_names) != len(ordered):
        problems.append(f"kStatusNames: C has {len(c_names)} entries, ServerStatus {len(ordered)}")
    return problems


def type_code_drift(c_runtime_api_h: str, internal_h: str) -> list[str]:
    """c_runtime_api.h's TVMArgTypeCode and MINRPC_TYPE_* against TypeIndex."""
    codes = c_enum(c_runtime_api_h, "TVMArgTypeCode")
    problems = [
        f"TVMArgTypeCode: {name} = {value} has no tvm-ffi name in this test's table"
        for name, value in codes.items()
        if name not in C_TYPE_CODE_NAMES
    ]
    problems += [
        f"TVMArgTypeCode: {c_name} = {codes[c_name]} in C but TypeIndex.{py} = {int(TypeIndex[py])}"
        for c_name, py in C_TYPE_CODE_NAMES.items()
        if c_name in codes and codes[c_name] != int(TypeIndex[py])
    ]
    problems += [
        f"TVMArgTypeCode: {c_name} (TypeIndex.{py}) is missing in C"
        for c_name, py in C_TYPE_CODE_NAMES.items()
        if c_name not in codes
    ]
    minrpc_types = c_defines(internal_h, "MINRPC_TYPE_")
    problems += value_drift(
        "MINRPC_TYPE_*", minrpc_types, TypeIndex, skip=set(TypeIndex.__members__)
    )
    return problems


def serial_answer_drift(serial_rpc_c: str) -> list[str]:
    """The serial packet layer's own kException constants (it builds without MinRPC)."""
    problems = value_drift(
        "serial_rpc.c RPC_CODE_*",
        c_defines(serial_rpc_c, "RPC_CODE_"),
        RPCCode,
        skip=set(RPCCode.__members__),
    )
    problems += value_drift(
        "serial_rpc.c TYPE_INDEX_*",
        c_defines(serial_rpc_c, "TYPE_INDEX_"),
        TypeIndex,
        skip=set(TypeIndex.__members__),
    )
    return problems


# ------------------------------------------------------------------ the real sources


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_rpc_codes_and_code_names_match_rpccode() -> None:
    problems = rpc_code_drift(_read(MINRPC_INTERNAL_H), _read(MINRPC_NAMES_C))
    assert problems == []
    # every syscall and request code is defined in C (kNone is not a request)
    assert set(c_defines(_read(MINRPC_INTERNAL_H), "MINRPC_CODE_")) == set(RPCCode.__members__) - {
        "NONE"
    }


def test_server_statuses_match_serverstatus() -> None:
    assert status_drift(_read(MINRPC_SERVER_H), _read(MINRPC_NAMES_C)) == []


def test_type_codes_match_typeindex() -> None:
    assert type_code_drift(_read(C_RUNTIME_API_H), _read(MINRPC_INTERNAL_H)) == []
    assert c_defines(_read(MINRPC_INTERNAL_H), "MINRPC_TYPE_"), "no MINRPC_TYPE_* parsed"


def test_protocol_version_matches() -> None:
    c_version = c_string_define(_read(MINRPC_SERVER_H), "MINRPC_PROTOCOL_VERSION")
    assert c_version == PROTOCOL_VERSION, f"C {c_version!r}, Python {PROTOCOL_VERSION!r}"


def test_serial_answer_constants_match() -> None:
    text = _read(SERIAL_RPC_C)
    assert c_defines(text, "RPC_CODE_") and c_defines(text, "TYPE_INDEX_")
    assert serial_answer_drift(text) == []


# ------------------------------------------------------------------ a drift is caught


def test_a_renumbered_code_is_reported_with_both_values() -> None:
    text = _read(MINRPC_INTERNAL_H).replace(
        "#define MINRPC_CODE_CALL_FUNC 3", "#define MINRPC_CODE_CALL_FUNC 4"
    )
    assert rpc_code_drift(text, _read(MINRPC_NAMES_C)) == [
        "MINRPC_CODE_*: CALL_FUNC is 4 in C but RPCCode.CALL_FUNC = 3"
    ]


def test_a_missing_code_and_name_are_reported() -> None:
    header = re.sub(
        r"^#define MINRPC_CODE_DEV_SET_STREAM 20\n", "", _read(MINRPC_INTERNAL_H), flags=re.M
    )
    names = _read(MINRPC_NAMES_C).replace('"kDevSetStream",\n', "")
    problems = rpc_code_drift(header, names)
    assert "MINRPC_CODE_*: RPCCode.DEV_SET_STREAM = 20 is missing in C" in problems
    assert "kCodeNames[20]: C has 'kDevGetCurrentStream', Python has 'kDevSetStream'" in problems
    assert any(p.startswith("kCodeNames: C has 21 entries, Python 22") for p in problems)


def test_a_drifted_type_code_status_and_name_are_reported() -> None:
    api = _read(C_RUNTIME_API_H).replace("kTVMModuleHandle = 73", "kTVMModuleHandle = 72")
    assert type_code_drift(api, _read(MINRPC_INTERNAL_H)) == [
        "TVMArgTypeCode: kTVMModuleHandle = 72 in C but TypeIndex.MODULE = 73"
    ]
    internal = _read(MINRPC_INTERNAL_H).replace(
        "#define MINRPC_TYPE_RPC_OBJECT_REF 115", "#define MINRPC_TYPE_RPC_OBJECT_REF 116"
    )
    assert type_code_drift(_read(C_RUNTIME_API_H), internal) == [
        "MINRPC_TYPE_*: RPC_OBJECT_REF is 116 in C but TypeIndex.RPC_OBJECT_REF = 115"
    ]
    server = _read(MINRPC_SERVER_H).replace("kMinRPCWriteError = 11", "kMinRPCWriteError = 13")
    names = _read(MINRPC_NAMES_C).replace('"kReadError"', '"kReadErr"')
    problems = status_drift(server, names)
    assert (
        "pytvm_minrpc_status: writeerror is 13 in C but ServerStatus.WRITE_ERROR = 11" in problems
    )
    assert "kStatusNames[10]: C has 'kReadErr', ServerStatus(10) is READ_ERROR" in problems


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "#define RPC_CODE_EXCEPTION 6u\n",
            ["serial_rpc.c RPC_CODE_*: EXCEPTION is 6 in C but RPCCode.EXCEPTION = 5"],
        ),
        (
            "#define TYPE_INDEX_RAW_STRING 8u\n",
            ["serial_rpc.c TYPE_INDEX_*: C has RAW_STRING = 8, TypeIndex has no RAW_STRING"],
        ),
    ],
)
def test_a_drifted_serial_constant_is_reported(text: str, expected: list[str]) -> None:
    assert serial_answer_drift(text) == expected
