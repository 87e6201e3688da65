"""Int8 kernels of a Cortex-M (``topi.cortex_m``): the DSP extension's dual 16-bit
multiply-accumulate as extern helpers the C code generator defines (one instruction each under
``__ARM_FEATURE_DSP``, portable C on the host), the int8 convolution through them matching numpy
on the host and compiling to ``SMLAD`` for the Cortex-M4, and the strategy rows that pick the
DSP kernel or the int32 one on one-lane targets.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pytvm
from pytvm import te
from pytvm.driver.source_build import compile_for_host
from pytvm.runtime.source_module import SourceModule, crt_include_dirs
from pytvm.target import Target
from pytvm.testing.cortex_m_int8 import ARM_GCC, arm_compile, newlib_symbols
from pytvm.tir.expr import IntImm
from pytvm.tir.stmt import Allocate
from pytvm.tir.stmt_functor import pre_order_visit
from pytvm.topi.cortex_m import conv2d_nchw_int8_dsp, dot4_u8s8, schedule_conv2d_nchw_int8_dsp
from pytvm.topi.generic.injective import schedule_injective
from pytvm.topi.nn import conv2d_int8_kernel_pack
from pytvm.topi.x86.strategy import OpWorkload, select

needs_arm_gcc = pytest.mark.skipif(ARM_GCC is None, reason="arm-none-eabi-gcc is not installed")
M4 = Target("c -mcpu=cortex-m4")
STRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-Os"]
CRT_API = frozenset({"TVMAPISetLastError", "TVMBackendAllocWorkspace", "TVMBackendFreeWorkspace"})

# (data dtype, zero point, C, F, K, stride, padding, weight prepacked)
CASES: dict[str, tuple[str, int, int, int, int, int, int | tuple[int, ...], bool]] = {
    "int8_3x3": ("int8", -5, 8, 8, 3, 1, 1, True),
    "uint8_3x3_stride2_odd_channels": ("uint8", 131, 6, 6, 3, 2, 1, False),
    "uint8_1x1": ("uint8", 0, 16, 12, 1, 1, 0, True),
    "int8_10x4": ("int8", 3, 4, 8, 4, 2, (4, 1, 5, 2), True),
    # fewer filters than a block (a classifier's 1x1): the accumulators' region is written with
    # the output's channel loop, and their buffer takes its largest size
    "int8_1x1_two_filters": ("int8", 2, 8, 2, 1, 1, 0, True),
}


def _reference(
    x: np.ndarray, w: np.ndarray, zp: int, stride: int, pad: int | tuple[int, ...]
) -> np.ndarray:
    top, left, bottom, right = pad if isinstance(pad, tuple) else (pad,) * 4
    xs = np.pad(x.astype(np.int64) - zp, ((0, 0), (0, 0), (top, bottom), (left, right)))
    f, _, kh, kw = w.shape
    oh = (xs.shape[2] - kh) // stride + 1
    ow = (xs.shape[3] - kw) // stride + 1
    out = np.zeros((x.shape[0], f, oh, ow), np.int64)
    for i in range(kh):
        for j in range(kw):
            patch = xs[:, :, i : i + stride * oh : stride, j : j + stride * ow : stride]
            out += np.einsum("nchw,fc->nfhw", patch, w[:, :, i, j].astype(np.int64))
    return out.astype(np.int32)


def _build(case: str) -> tuple[SourceModule, np.ndarray, np.ndarray, np.ndarray]:
    dtype, zp, c, f, k, stride, pad, prepacked = CASES[case]
    kh, kw = (10, 4) if case == "int8_10x4" else (k, k)
    rng = np.random.default_rng(abs(hash(case)) % 1000)
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max + 1, (1, c, 11, 9)).astype(dtype)
    w = rng.integers(-128, 128, (f, c, kh, kw)).astype("int8")
    weight = conv2d_int8_kernel_pack(w, 4) if prepacked else w
    with M4:
        data = te.placeholder(x.shape, dtype, name="x")
        kern = te.placeholder(weight.shape, str(weight.dtype), name="w")
        out = conv2d_nchw_int8_dsp(data, kern, stride, pad, 1, f, zp)
        s = schedule_conv2d_nchw_int8_dsp(out)
        mod = pytvm.build(s, [data, kern, out], target=M4, name=case)
    assert isinstance(mod, SourceModule)
    return mod, x, weight, _reference(x, w, zp, stride, pad)


@pytest.mark.parametrize("case", list(CASES))
def test_dsp_conv_matches_numpy_on_the_host(case: str) -> None:
    mod, x, weight, want = _build(case)
    source = mod.get_source()
    assert "pytvm_smlad(" in source and "vector_size" not in source
    got = pytvm.nd.empty(want.shape, "int32")
    compile_for_host(mod)[case](pytvm.nd.array(x), pytvm.nd.array(weight), got)
    np.testing.assert_array_equal(got.numpy(), want)


@needs_arm_gcc
@pytest.mark.parametrize("case", ["int8_3x3", "uint8_3x3_stride2_odd_channels"])
def test_dsp_conv_compiles_to_smlad_for_cortex_m4(case: str, tmp_path: Path) -> None:
    mod, _, _, _ = _build(case)
    flags = [*mod.cflags, *STRICT]
    undefined, asm = arm_compile(
        mod.get_source(), flags, list(map(str, crt_include_dirs())), tmp_path
    )
    for insn in ("smlad", "smuad", "sxtb16", "uxtb16"):
        assert f"\t{insn}\t" in asm, insn
    assert "ror #8" in asm  # the rotated byte extension is one instruction
    assert "TVMBackendParallelLaunch" not in undefined  # one core: no parallel loop
    allowed = newlib_symbols(tuple(mod.cflags)) | CRT_API
    assert undefined <= allowed, undefined - allowed


def test_dot4_helpers_match_byte_products_on_the_host() -> None:
    """The portable helpers: four u8 x s8 byte products summed, for every byte pattern."""
    rng = np.random.default_rng(4)
    a = rng.integers(0, 2**32, 257, dtype=np.uint64).astype(np.uint32)
    w = rng.integers(0, 2**32, 257, dtype=np.uint64).astype(np.uint32)
    a[:2], w[:2] = 0xFFFFFFFF, [0x80808080, 0x7F7F7F7F]  # the extreme bytes
    with M4:
        ta = te.placeholder((257,), "uint32", name="a")
        tw = te.placeholder((257,), "int32", name="w")
        out = te.compute((257,), lambda i: dot4_u8s8(ta[i], tw[i]), name="dot")
        mod = pytvm.build(schedule_injective(out), [ta, tw, out], target=M4, name="dot4")
    assert isinstance(mod, SourceModule)
    got = pytvm.nd.empty((257,), "int32")
    compile_for_host(mod)["dot4"](pytvm.nd.array(a), pytvm.nd.array(w.view(np.int32)), got)
    want = (a.view(np.uint8).reshape(-1, 4).astype(np.int64)
            * w.view(np.int8).reshape(-1, 4).astype(np.int64)).sum(axis=1)  # fmt: skip
    np.testing.assert_array_equal(got.numpy(), want.astype(np.int32))


def _qnn_workload(channels: int, kernel: int = 3) -> OpWorkload:
    attrs = {
        "strides": (1, 1), "padding": (1, 1, 1, 1), "dilation": (1, 1), "groups": 1,
        "input_zero_point": 7, "kernel_zero_point": 0, "out_dtype": "int32",
    }  # fmt: skip
    return OpWorkload(
        "qnn.conv2d", (1, channels, 12, 12), (16, channels, kernel, kernel), "uint8", "int8",
        attrs, weight_constant=True,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("target", "channels", "row"),
    [
        ("c -mcpu=cortex-m4", 16, "qnn_conv2d_nchw_int8_dsp"),
        ("c -mcpu=cortex-m7", 4, "qnn_conv2d_nchw_int8_dsp"),
        # too few channels for the words
        ("c -mcpu=cortex-m4", 3, "qnn_conv2d_nchw_int8_one_lane"),
        ("c -mcpu=cortex-m4 -mattr=-dsp", 16, "qnn_conv2d_nchw_int8_one_lane"),
        ("c -mcpu=cortex-m3", 16, "qnn_conv2d_nchw_int8_one_lane"),
        ("c -mcpu=cortex-m0", 16, "qnn_conv2d_nchw_int8_one_lane"),
    ],
)
def test_one_lane_targets_pick_the_dsp_or_int32_kernel(
    target: str, channels: int, row: str
) -> None:
    with Target(target):
        picked = select("qnn.conv2d", _qnn_workload(channels))
    assert picked.name == row
    if picked.weight_layout is not None:
        assert picked.weight_layout(_qnn_workload(channels)) == "OIHW4o4i"


@pytest.mark.parametrize("target", ["llvm -mcpu=haswell", "llvm -mcpu=cascadelake"])
def test_vector_targets_keep_their_int8_rows(target: str) -> None:
    with Target(target):
        picked = select("qnn.conv2d", _qnn_workload(16))
    assert picked.name not in ("qnn_conv2d_nchw_int8_dsp", "qnn_conv2d_nchw_int8_one_lane")


def test_scratch_of_a_block_wider_than_the_filters_has_a_constant_size() -> None:
    """The AOT executor's static workspace needs every allocation's size as a constant."""
    with M4:
        data = te.placeholder((1, 8, 11, 9), "int8", name="x")
        kern = te.placeholder((2, 8, 1, 1), "int8", name="w")
        out = conv2d_nchw_int8_dsp(data, kern, 1, 0, 1, 2, 2)
        lowered = pytvm.lower(schedule_conv2d_nchw_int8_dsp(out), [data, kern, out], name="k")
    shapes: list[tuple[object, ...]] = []
    pre_order_visit(
        lowered["k"].body,
        lambda n: shapes.append(tuple(n.buffer.shape)) if isinstance(n, Allocate) else None,
    )
    assert shapes and all(isinstance(d, IntImm) for shape in shapes for d in shape), shapes
