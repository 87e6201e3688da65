"""A target's vector width comes from its CPU's features: ``-mcpu`` names a CPU other than
this machine's, ``-mattr`` edits the features, and a cross CPU the compiler does not know has
no vectors.
"""

from __future__ import annotations

import pytest

from pytvm.target import Target
from pytvm.target.cpu_features import apply_mattr, cpu_features, generic_cpu


@pytest.mark.parametrize(
    ("text", "bits"),
    [
        ("llvm -mcpu=haswell", 256),
        ("llvm -mcpu=znver3", 256),
        ("llvm -mcpu=skylake-avx512", 512),
        ("llvm -mcpu=znver4", 512),
        ("c -mattr=+avx2", 256),
        ("c -mattr=+avx512f", 512),
        ("llvm -mcpu=skylake-avx512 -mattr=-avx512f", 256),
        ("llvm -mcpu=x86-64", 128),
        ("c -mcpu=cortex-m4 -mtriple=thumbv7em-none-eabihf", 32),
        ("llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72", 128),
    ],
)
def test_vector_width_follows_the_named_cpu(text: str, bits: int) -> None:
    if generic_cpu() != "x86-64" and "cortex" not in text:
        pytest.skip("x86 CPU names are known to the C compiler of an x86 machine")
    assert Target(text).vector_width_bits == bits
    assert Target(text).vector_lanes("float32") == max(1, bits // 32)


def test_a_named_cpu_is_not_this_machine() -> None:
    if generic_cpu() != "x86-64":
        pytest.skip("x86 CPU names are known to the C compiler of an x86 machine")
    assert "avx512f" not in Target("llvm -mcpu=znver3").features
    assert {"avx2", "fma"} <= Target("llvm -mcpu=znver3").features
    assert "avx512vnni" in Target("llvm -mcpu=icelake-server").features


def test_a_host_target_without_cpu_is_this_machine() -> None:
    assert Target("llvm").features == cpu_features("native")
    assert Target("c -mcpu=native").features == cpu_features("native")


def test_mattr_adds_and_removes() -> None:
    assert apply_mattr(frozenset({"avx2"}), "+fma, -avx2,+avx512f") == {"fma", "avx512f"}
    assert cpu_features("no-such-cpu-anywhere") == frozenset()
