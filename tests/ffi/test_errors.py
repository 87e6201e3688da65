from __future__ import annotations

import pytest

import pytvm
from pytvm.ffi.errors import TVMError, format_error, parse_error, register_error

KINDS = [ValueError, TypeError, AttributeError, IndexError, KeyError, RuntimeError, MemoryError]


@pytest.mark.parametrize("kind", KINDS)
def test_error_kind_survives_text_round_trip(kind: type[BaseException]) -> None:
    try:
        raise kind("something broke")
    except BaseException as exc:
        text = format_error(exc)
    err = parse_error(text)
    assert isinstance(err, kind) and isinstance(err, pytvm.TVMError)
    assert str(err) == "something broke"
    assert "test_error_kind_survives_text_round_trip" in err.traceback


def test_untagged_text_becomes_plain_tvm_error() -> None:
    err = parse_error("no kind here: at all")
    assert type(err) is TVMError and str(err) == "no kind here: at all"


def test_custom_error_kind_registers() -> None:
    @register_error("TestDeviceError")
    class TestDeviceError(TVMError):
        pass

    err = parse_error(format_error(TestDeviceError("dsp fault")))
    assert type(err) is TestDeviceError and str(err) == "dsp fault"


def test_context_prefixes_message() -> None:
    assert str(parse_error("ValueError: bad", context="remote[0]")) == "remote[0]: bad"


def test_unknown_kind_keeps_whole_text() -> None:
    err = parse_error("FooError: boom")
    assert type(err) is TVMError and str(err) == "FooError: boom"


def test_builtin_subclass_kind_maps_to_registered_base() -> None:
    try:
        raise FileNotFoundError("weights.bin")
    except OSError as exc:
        text = format_error(exc)
    err = parse_error(text)
    assert isinstance(err, OSError) and isinstance(err, TVMError)
    assert str(err) == "FileNotFoundError: weights.bin"  # the exact kind still shows
