"""Cross targets: a Cortex-M (or any CPU that is not this machine) is not the host, has one
lane, one core, a few registers, and the float ABI, FPU and DSP extension its CPU implies.
"""

from __future__ import annotations

import pytest

from pytvm.target import Target
from pytvm.target.cross import cpu_arch, host_arch, is_bare_metal

M4_TRIPLE = "c -mcpu=cortex-m4 -mtriple=thumbv7em-none-eabihf --system-lib"


@pytest.mark.parametrize(
    "text",
    [
        "c -mcpu=cortex-m4",
        M4_TRIPLE,
        "c -mcpu=cortex-m0",
        "c -mcpu=cortex-m7",
        "c -mcpu=cortex-m33",
        "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72",
        "c -mtriple=riscv32-unknown-elf",
        "c -mtriple=armv7a-linux-gnueabihf",
    ],
)
def test_a_foreign_cpu_is_not_the_host(text: str) -> None:
    if host_arch() != "x86_64":
        pytest.skip("the foreign CPUs listed are foreign to an x86-64 machine")
    t = Target(text)
    assert not t.is_host
    assert t.num_cores == 1
    assert t.backend == "c"


def test_host_targets_stay_host() -> None:
    for text in ("c", "llvm", "c -mcpu=native", "c --system-lib"):
        assert Target(text).is_host, text
    if host_arch() == "x86_64":
        assert Target("llvm -mtriple=x86_64-linux-gnu").is_host
        assert Target("llvm -mcpu=znver3").is_host


@pytest.mark.parametrize("text", ["c -mcpu=cortex-m4", M4_TRIPLE])
def test_cortex_m4_is_one_lane_one_core_with_hard_float_and_dsp(text: str) -> None:
    t = Target(text)
    assert t.arch == "arm" and t.bare_metal
    assert t.features == frozenset()
    assert {t.vector_lanes(d) for d in ("float32", "int8", "int16", "int32")} == {1}
    assert t.num_cores == 1
    assert t.num_registers == 8
    assert t.float_abi == "hard" and t.fpu == "fpv4-sp-d16" and t.has_hard_float
    assert t.has_dsp
    assert t.cflags == [
        "-mcpu=cortex-m4",
        "-mthumb",
        "-mfloat-abi=hard",
        "-mfpu=fpv4-sp-d16",
        "-ffp-contract=fast",
        "-DPYTVM_CRT=1",
    ]


def test_float_abi_and_fpu_follow_triple_cpu_and_options() -> None:
    soft = Target("c -mcpu=cortex-m4 -mtriple=thumbv7em-none-eabi")
    assert soft.float_abi == "soft" and soft.fpu == "" and not soft.has_hard_float
    assert "-mfloat-abi=soft" in soft.cflags
    m0 = Target("c -mcpu=cortex-m0")
    assert m0.float_abi == "soft" and not m0.has_dsp and not m0.has_hard_float
    softfp = Target("c -mcpu=cortex-m7 -mfloat-abi=softfp")
    assert softfp.float_abi == "softfp" and softfp.fpu == "fpv5-d16"
    m33 = Target("c -mcpu=cortex-m33 -mfpu=fpv5-sp-d16")
    assert m33.fpu == "fpv5-sp-d16" and m33.has_dsp


def test_target_text_round_trips() -> None:
    for text in (
        "c -mcpu=cortex-m4",
        "c -mcpu=cortex-m4 -mtriple=thumbv7em-none-eabihf --system-lib",
        "c -mcpu=cortex-m7 -mfloat-abi=softfp -mfpu=fpv5-sp-d16",
    ):
        t = Target(text)
        assert str(Target(str(t))) == str(t)
        assert Target(str(t)) == t
    assert str(Target(M4_TRIPLE)) == "c -mcpu=cortex-m4 -mtriple=thumbv7em-none-eabihf --system-lib"


def test_architecture_from_triple_then_cpu() -> None:
    assert cpu_arch("", "thumbv7em-none-eabihf") == "arm"
    assert cpu_arch("cortex-a72", "") == "aarch64"
    assert cpu_arch("cortex-a7", "") == "arm"
    assert cpu_arch("", "riscv64-unknown-linux-gnu") == "riscv64"
    assert cpu_arch("", "") == host_arch()
    assert is_bare_metal("", "riscv32-unknown-elf")
    assert not is_bare_metal("cortex-a72", "aarch64-linux-gnu")
