"""Target's host: ``Target(t, host=...)``, ``target.host``, equality and the context."""

from __future__ import annotations

import pytest

from pytvm.ffi.errors import TVMValueError
from pytvm.target import Target, cuda


def test_host_is_a_target_of_its_own() -> None:
    t = Target("llvm", host="llvm")
    assert t.host == Target("llvm") and t.host.host is None
    assert Target(target="c").host is None
    assert str(t) == "llvm" and "host=" in repr(t)


def test_host_takes_part_in_equality_and_copies() -> None:
    assert Target("llvm", host="c") != Target("llvm")
    assert Target(Target("llvm", host="c")) == Target("llvm", host="c")
    assert Target("llvm").with_host("c").host == Target("c")
    assert Target({"kind": "llvm", "host": "c"}).host == Target("c")


def test_a_host_with_a_host_is_refused() -> None:
    with pytest.raises(TVMValueError, match="host"):
        Target("llvm", host=Target("llvm", host="c"))


def test_target_is_the_current_one_inside_with() -> None:
    assert Target.current() is None
    with Target("llvm", host="llvm") as t:
        assert Target.current() is t
    assert Target.current() is None


def test_a_gpu_target_is_described_but_not_built() -> None:
    t = cuda(arch="sm_80")
    assert t.kind.name == "cuda" and t.keys == ("cuda", "gpu") and not t.is_host
    assert Target("cuda", host="llvm").host == Target("llvm")
    with pytest.raises(TVMValueError, match="no cuda code generator"):
        t.check_buildable()
    with pytest.raises(TVMValueError, match="no cuda code generator"):
        _ = t.backend


def test_device_option_puts_its_key_first() -> None:
    from pytvm.target import Target

    assert Target("llvm -device=arm_cpu").keys == ("arm_cpu", "cpu")
    assert Target("opencl -device=mali").keys == ("mali", "opencl", "gpu")
    assert Target("llvm").keys == ("cpu",)
    assert Target("llvm -device=arm_cpu").attrs["device"] == "arm_cpu"
