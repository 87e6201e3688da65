"""Knobs of the CPU matrix-product schedules (AutoTVM templates ``<row>.x86`` of the strategy
table's dense, matmul and batch_matmul rows): every sampled point of a space builds a kernel
that matches numpy, the fallback configuration builds the same code as a configuration set to
the knobs' defaults, and the template names the rows share with TVM's entry points
(``dense_pack.x86``, ``batch_matmul.x86``) keep each kind's workloads apart.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

import pytvm
from pytvm import autotvm, te, topi
from pytvm.autotvm.measure import MeasureInput, MeasureResult
from pytvm.autotvm.task import Task
from pytvm.autotvm.task.space import ConfigEntity, ConfigSpace, FallbackConfigEntity
from pytvm.autotvm.task.task import TASK_TABLE
from pytvm.ffi.errors import TVMValueError
from pytvm.target import Target
from pytvm.testing.autotvm import fallback_point
from pytvm.topi.x86 import strategy
from pytvm.topi.x86.strategy import OpWorkload
from pytvm.topi.x86.tunable import attrs_key

F32 = "float32"
#: Configurations built per product (drawn from its space, the first included).
_SAMPLES = 8
_KNOBS = ["tile_y", "tile_x", "tile_k", "columns_outer"]


@dataclasses.dataclass(frozen=True)
class Product:
    """A matrix product: the graph operator, its operands' shapes and attributes, whether the
    right operand is a constant (packed by AlterOpLayout), and the row the table picks.
    """

    row: str
    op: str
    a: tuple[int, ...]
    b: tuple[int, ...]
    attrs: tuple[tuple[str, Any], ...] = ()
    constant: bool = False
    samples: int = _SAMPLES


PRODUCTS = [
    # a classifier's head: one row, 1000 columns (the last panel half padding)
    Product("dense_pack", "nn.dense", (1, 512), (1000, 512), constant=True),
    # BERT's feed-forward up-projection: 128 tokens
    Product("dense_pack", "nn.dense", (128, 768), (3072, 768), constant=True, samples=6),
    # attention scores, right operand computed ([batch, K, N])
    Product(
        "batch_matmul_pack",
        "nn.batch_matmul",
        (12, 128, 64),
        (12, 64, 128),
        (("transpose_b", False),),
    ),
    # a computed right operand whose columns need panels (50: no vector divides it)
    Product("matmul_pack", "nn.matmul", (40, 64), (64, 50)),
    Product("matmul", "nn.matmul", (1, 64), (64, 48)),  # columns contiguous: vectorized
    Product("dense", "nn.dense", (2, 40), (32, 40)),  # one row: [N, K] unrolled columns
    Product("batch_matmul", "nn.batch_matmul", (6, 1, 64), (6, 24, 64), (("transpose_b", True),)),
]


def _pack(w: np.ndarray, bn: int) -> np.ndarray:
    """``w [N, K]`` in zero-filled panels ``[ceil(N / bn), K, bn]`` (layout ``NK<bn>n``)."""
    n, k = w.shape
    panels = -(-n // bn)
    full = np.zeros((panels * bn, k), w.dtype)
    full[:n] = w
    return np.ascontiguousarray(full.reshape(panels, bn, k).transpose(0, 2, 1))


class Built:
    """A product's row and workload (the weight packed where the row packs it), its arrays and
    numpy reference, and its configuration space.
    """

    def __init__(self, p: Product) -> None:
        self.p = p
        rng = np.random.default_rng(0)
        self.a = rng.standard_normal(p.a).astype(F32)
        self.b = rng.standard_normal(p.b).astype(F32)
        attrs = dict(p.attrs)
        wl = OpWorkload(p.op, p.a, p.b, F32, F32, attrs, p.constant)
        with Target("llvm"):
            row = strategy.select(p.op, wl)
            assert row.name == p.row, f"{p}: the table picks {row.name}"
            self.bk = self.b
            if row.weight_layout is not None:
                layout = row.weight_layout(wl)
                self.bk = _pack(self.b, int(layout[2:-1]))
                attrs = {**attrs, "weight_layout": layout, "units": p.b[0]}
                wl = dataclasses.replace(wl, weight_shape=self.bk.shape, attrs=attrs)
                assert strategy.select(p.op, wl).name == p.row
        self.row, self.wl = row, wl
        transpose_b = p.op == "nn.dense" or attrs.get("transpose_b", False)
        b = np.swapaxes(self.b, -1, -2) if transpose_b else self.b
        self.want = np.matmul(self.a, b)
        self.bias = np.linspace(-1, 1, self.want.shape[-1], dtype=F32)
        self.space = ConfigSpace()
        with Target("llvm"), autotvm.ApplyConfig(self.space):
            self.schedule()

    def schedule(self) -> tuple[Any, list[Any]]:
        """The row's kernel (through a bias and relu, as the graph fuses them) under the current
        dispatch context: ``(schedule, tensors)``.
        """
        a = te.placeholder(self.a.shape, F32, "a")
        b = te.placeholder(self.bk.shape, F32, "b")
        bias = te.placeholder(self.bias.shape, F32, "bias")
        out = topi.nn.relu(topi.add(self.row.compute(a, b, self.wl), bias))
        return self.row.schedule([out]), [a, b, bias, out]

    def build(self, config: Any) -> Any:
        """The kernel built under ``config`` (a point of the space, or a fallback)."""
        with Target("llvm"), autotvm.ApplyConfig(config):
            s, args = self.schedule()
            return pytvm.build(s, args, target="llvm", name="product")

    def check(self, mod: Any, config: Any) -> None:
        got = pytvm.nd.empty(self.want.shape, F32)
        args = [pytvm.nd.array(x) for x in (self.a, self.bk, self.bias)]
        mod["product"](*args, got)
        want = np.maximum(self.want + self.bias, 0)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-3, err_msg=str(config))

    def defaults(self) -> ConfigEntity:
        """The point of the space whose knobs hold the fallback's values."""
        return fallback_point(self.space, self.schedule)


@pytest.fixture(scope="module", params=PRODUCTS, ids=lambda p: f"{p.row}-{p.a}-{p.b}")
def built(request: pytest.FixtureRequest) -> Built:
    return Built(request.param)


def test_space_declares_the_product_knobs(built: Built) -> None:
    assert list(built.space.space_map) == _KNOBS
    assert len(built.space) > 1, built.space
    cols = built.want.shape[-1]
    for entity in built.space.space_map["tile_x"].entities:
        # panel products tile their padded columns, others divide theirs
        assert built.row.tag == topi.tag.DENSE_PACK or cols % entity.val == 0


def test_points_of_the_space_match_numpy(built: Built) -> None:
    n = len(built.space)
    rng = np.random.default_rng(1)
    picks = sorted({0, n - 1, *rng.integers(0, n, 4 * built.p.samples).tolist()})
    checked = 0
    for i in picks:
        config = built.space.get(i)
        try:
            mod = built.build(config)
        except TVMValueError as err:  # a tile whose accumulators exceed the registers
            assert "vector registers" in str(err), err
            continue
        built.check(mod, config)
        checked += 1
        if checked == built.p.samples:
            break
    assert checked == min(built.p.samples, n), picks


def test_fallback_builds_the_defaults_kernel(built: Built) -> None:
    untuned = built.build(FallbackConfigEntity())
    built.check(untuned, "fallback")
    defaults = built.defaults()
    assert untuned.get_source("ll") == built.build(defaults).get_source("ll")


def test_a_knob_changes_the_kernel() -> None:
    built = Built(PRODUCTS[3])
    defaults = built.defaults()
    other = next(
        built.space.get(i)
        for i in range(len(built.space))
        if built.space.get(i)["tile_k"].val != defaults["tile_k"].val
    )
    assert built.build(defaults).get_source("ll") != built.build(other).get_source("ll")


# --- the names shared by a strategy row and TVM's entry point ------------------------------


def _row_task_args(built: Built) -> tuple[Any, ...]:
    wl = built.wl
    a = te.placeholder(built.a.shape, F32, "a")
    b = te.placeholder(built.bk.shape, F32, "b")
    return (a, b, wl.op, attrs_key(wl.attrs), wl.weight_constant)


def _code(name: str, args: tuple[Any, ...]) -> str:
    """The kernel of template ``name``'s compute and schedule in ``TASK_TABLE`` over ``args``
    (under the current dispatch context).
    """
    with Target("llvm"):
        out = TASK_TABLE[name]["compute"](*args)
        s = TASK_TABLE[name]["schedule"]([out])
        tensors = [a for a in args if isinstance(a, te.Tensor)]
        return str(pytvm.build(s, [*tensors, out], "llvm").get_source("ll"))


def test_shared_names_take_both_kinds_of_arguments_and_keep_their_records_apart() -> None:
    built = Built(PRODUCTS[0])
    row_args = _row_task_args(built)
    tvm_args = (
        te.placeholder(built.a.shape, F32, "a"),
        te.placeholder(built.b.shape, F32, "w"),
        None,
        F32,
    )
    with Target("llvm"):
        row_wl = autotvm.task.get_workload(TASK_TABLE["dense_pack.x86"]["compute"](*row_args))
        tvm_wl = autotvm.task.get_workload(TASK_TABLE["dense_pack.x86"]["compute"](*tvm_args))
    assert row_wl[0] == tvm_wl[0] == "dense_pack.x86"
    assert row_wl[3] == "nn.dense" and tvm_wl[3] is None
    assert row_wl[2][1] == built.bk.shape and tvm_wl[2][1] == built.b.shape  # packed / plain
    untuned_row, untuned_tvm = _code("dense_pack.x86", row_args), _code("dense_pack.x86", tvm_args)

    # a record of TVM's kind, at a point other than the defaults, applies to its kind only
    space = ConfigSpace()
    with Target("llvm"), autotvm.ApplyConfig(space):
        _code("dense_pack.x86", tvm_args)
    point = space.get(len(space) - 1)
    assert point["tile_k"].val != 1
    task = Task("dense_pack.x86", tvm_wl[1:])
    record = (MeasureInput(Target("llvm"), task, point), MeasureResult((1e-3,), 0, 0.1, 0.0))
    with autotvm.apply_history_best([record]):
        tuned_tvm, row_code = _code("dense_pack.x86", tvm_args), _code("dense_pack.x86", row_args)
    with autotvm.ApplyConfig(point):
        assert tuned_tvm == _code("dense_pack.x86", tvm_args)
    assert tuned_tvm != untuned_tvm
    assert row_code == untuned_row


def test_batch_matmul_name_takes_both_kinds_of_arguments() -> None:
    built = Built(PRODUCTS[-1])
    x = te.placeholder(built.a.shape, F32, "x")
    y = te.placeholder(built.b.shape, F32, "y")
    compute = TASK_TABLE["batch_matmul.x86"]["compute"]
    with Target("llvm"):
        tvm_wl = autotvm.task.get_workload(compute(x, y, None, F32, False, True))
        row_wl = autotvm.task.get_workload(compute(*_row_task_args(built)))
    assert tvm_wl[0] == row_wl[0] == "batch_matmul.x86"
    assert tvm_wl != row_wl and row_wl[3] == "nn.batch_matmul"


@pytest.mark.parametrize("name", ["dense_nopack.x86", "dense_dynamic.x86"])
def test_tvm_dense_templates_have_their_schedule(name: str) -> None:
    rng = np.random.default_rng(2)
    a, w = rng.standard_normal((3, 40)).astype(F32), rng.standard_normal((24, 40)).astype(F32)
    args = (te.placeholder(a.shape, F32, "a"), te.placeholder(w.shape, F32, "w"), None, F32)
    with Target("llvm"):
        out = TASK_TABLE[name]["compute"](*args)
        s = TASK_TABLE[name]["schedule"]([out])
        mod = pytvm.build(s, [*args[:2], out], "llvm")
    got = pytvm.nd.empty((3, 24), F32)
    mod(pytvm.nd.array(a), pytvm.nd.array(w), got)
    np.testing.assert_allclose(got.numpy(), a @ w.T, rtol=1e-5, atol=1e-5)
