"""Requantization's rounding on a Cortex-M4: ``tir.round`` of float32 (ONNX's round half to
even) lowered to exact arithmetic (``tir.transform.lower_intrin.round_half_even``) where the
FPU has no rounding instruction (FPv4: libm's ``rintf`` was a fifth of an int8 model's
instructions), a libm call elsewhere; the arithmetic matching ``numpy.rint`` bit for bit.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pytvm
from pytvm import te, topi
from pytvm.driver.source_build import compile_for_host
from pytvm.runtime.source_module import SourceModule, crt_include_dirs
from pytvm.target import Target
from pytvm.testing.cortex_m_int8 import ARM_GCC, arm_compile, newlib_symbols
from pytvm.tir.transform.lower_intrin import round_half_even
from pytvm.topi.generic.injective import schedule_injective

needs_arm_gcc = pytest.mark.skipif(ARM_GCC is None, reason="arm-none-eabi-gcc is not installed")

_F32_INTEGRAL = 2.0**23


def _values() -> np.ndarray:
    """Ties of both parities and signs, signed zeros, neighbours of ``2 ** 23``, the largest
    floats, infinities, NaN, and random values over many magnitudes.
    """
    special = [0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999997, -0.49999997, 127.5]
    special += [-128.5, 4194304.5, -4194304.5, _F32_INTEGRAL - 0.5, -_F32_INTEGRAL + 0.5]
    special += [_F32_INTEGRAL, -_F32_INTEGRAL, _F32_INTEGRAL + 2, 3.4e38, -3.4e38, 1e-40]
    special += [np.inf, -np.inf, np.nan]
    rng = np.random.default_rng(11)
    scale = 10.0 ** rng.integers(-3, 9, 512)
    rand = rng.standard_normal(512) * scale
    halves = rng.integers(-1000, 1000, 64) + 0.5
    return np.concatenate([special, rand, halves]).astype(np.float32)


def test_round_half_even_matches_numpy_rint_on_the_host() -> None:
    x = _values()
    a = te.placeholder(x.shape, "float32", name="a")
    out = te.compute(x.shape, lambda i: round_half_even(a[i]), name="r")
    mod = pytvm.build(schedule_injective(out), [a, out], target="c", name="rne")
    got = pytvm.nd.empty(x.shape, "float32")
    mod["rne"](pytvm.nd.array(x), got)
    want = np.rint(x)
    np.testing.assert_array_equal(got.numpy(), want)  # NaN where NaN
    assert np.array_equal(np.signbit(got.numpy()), np.signbit(want))  # -0.0 stays -0.0


def _round_kernel(target: str) -> SourceModule:
    with Target(target):
        a = te.placeholder((67,), "float32", name="a")
        out = topi.round(a)
        mod = pytvm.build(schedule_injective(out), [a, out], target=target, name="round")
    assert isinstance(mod, SourceModule)
    return mod


@pytest.mark.parametrize(
    ("target", "inline"),
    [
        ("c -mcpu=cortex-m4", True),  # FPv4: no VRINTR
        ("c -mcpu=cortex-m7", False),  # FPv5 rounds in one instruction
        ("c -mcpu=cortex-m33", False),
        ("c -mcpu=cortex-m0", False),  # no FPU: both are software
    ],
)
def test_round_lowers_to_arithmetic_only_without_a_rounding_instruction(
    target: str, inline: bool
) -> None:
    source = _round_kernel(target).get_source()
    assert ("nearbyintf" not in source) is inline
    assert ("copysignf" in source) is inline


def test_inline_round_of_a_cortex_m4_matches_numpy_on_the_host() -> None:
    x = _values()[:67]  # the special values and some random ones
    mod = _round_kernel("c -mcpu=cortex-m4")
    got = pytvm.nd.empty(x.shape, "float32")
    compile_for_host(mod)["round"](pytvm.nd.array(x), got)
    np.testing.assert_array_equal(got.numpy(), np.rint(x))


def test_host_round_is_still_libm() -> None:
    a = te.placeholder((8,), "float32", name="a")
    out = topi.round(a)
    mod = pytvm.build(schedule_injective(out), [a, out], target="c", name="round_host")
    assert "nearbyintf" in mod.get_source()


@needs_arm_gcc
def test_inline_round_calls_no_libm_on_cortex_m4(tmp_path: Path) -> None:
    mod = _round_kernel("c -mcpu=cortex-m4")
    flags = [*mod.cflags, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2"]
    undefined, asm = arm_compile(
        mod.get_source(), flags, list(map(str, crt_include_dirs())), tmp_path
    )
    assert not {"rintf", "nearbyintf", "copysignf"} & undefined
    assert undefined <= newlib_symbols(tuple(mod.cflags)) | {
        "TVMAPISetLastError",
        "TVMBackendAllocWorkspace",
        "TVMBackendFreeWorkspace",
    }
    assert "\tvadd.f32\t" in asm and "\tvsub.f32\t" in asm
