"""``autotvm.task.code_hash`` (TVM's ``attach_code_hash`` / ``attach_code_hash_to_arg``): the
schedule a decorated function fills carries the CRC-32 of the function's source.
"""

from __future__ import annotations

import inspect
import zlib

import pytest

from pytvm import te
from pytvm.autotvm.task.code_hash import attach_code_hash, attach_code_hash_to_arg
from pytvm.ffi.errors import TVMTypeError


def _schedule() -> tuple[te.Schedule, te.Tensor]:
    a = te.placeholder((16,), name="a")
    b = te.compute((16,), lambda i: a[i] * 2.0, name="b")
    return te.create_schedule(b.op), b


def _split(s: te.Schedule, b: te.Tensor) -> None:
    s[b].split(b.op.axis[0], factor=4)


def test_attach_code_hash_sets_the_hash_of_the_source() -> None:
    s, b = _schedule()
    attach_code_hash(s)(_split)(s, b)
    expected = format(zlib.crc32("".join(inspect.getsourcelines(_split)[0]).encode()), "x")
    assert vars(s)["code_hash"] == expected


def test_attach_code_hash_to_arg_checks_the_argument() -> None:
    s, b = _schedule()
    attach_code_hash_to_arg(0)(_split)(s, b)
    assert isinstance(vars(s)["code_hash"], str) and vars(s)["code_hash"]
    s, b = _schedule()
    with pytest.raises(TVMTypeError, match="not a Schedule"):
        attach_code_hash_to_arg(1)(_split)(s, b)
