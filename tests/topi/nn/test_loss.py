"""topi.nn.nll_loss against numpy: reductions, ignore_index, multi-dimensional and 1-d input."""

from __future__ import annotations

import numpy as np
import pytest

import pytvm as tvm
from pytvm import te, topi
from pytvm.ffi.errors import TVMValueError


def _reference(
    p: np.ndarray, t: np.ndarray, w: np.ndarray, reduction: str, ignore: int
) -> np.ndarray:
    if p.ndim == 1:
        p, t = p[None], t[None]
    cls = np.where(t == ignore, 0, t)
    picked = np.take_along_axis(p, cls[:, None], axis=1)[:, 0]
    keep = t != ignore
    losses = np.where(keep, -picked * w[cls], 0)
    if reduction == "none":
        return losses if t.ndim > 1 or p.shape[0] > 1 else losses[0]
    if reduction == "sum":
        return np.array(losses.sum())
    return np.array(losses.sum() / np.where(keep, w[cls], 0).sum())


@pytest.mark.parametrize(
    ("shape", "reduction", "ignore"),
    [
        ((10, 5), "mean", -100),
        ((10, 5, 2, 2), "mean", -100),
        ((10, 5), "sum", 3),
        ((10, 5, 3), "none", 2),
        ((5,), "none", -100),
        ((5,), "mean", -100),
    ],
)
def test_nll_loss_matches_numpy(shape: tuple[int, ...], reduction: str, ignore: int) -> None:
    classes = shape[1] if len(shape) > 1 else shape[0]
    tshape = [shape[0], *shape[2:]] if len(shape) > 1 else []
    p = te.placeholder(shape, name="p")
    t = te.placeholder(tshape, "int32", "t")
    w = te.placeholder((classes,), name="w")
    out_t = topi.nn.nll_loss(p, t, w, reduction, ignore)
    f = tvm.build(te.create_schedule(out_t.op), [p, t, w, out_t], "llvm")
    pn = np.random.uniform(size=shape).astype("float32")
    tn = np.random.randint(0, classes, tshape).astype("int32")
    wn = np.random.uniform(size=classes).astype("float32")
    want = _reference(pn, tn, wn, reduction, ignore)
    out = tvm.nd.array(np.zeros(want.shape, "float32"))
    f(tvm.nd.array(pn), tvm.nd.array(tn), tvm.nd.array(wn), out)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-6)


def test_nll_loss_refuses_an_unknown_reduction() -> None:
    p, t, w = te.placeholder((2, 3)), te.placeholder((2,), "int32"), te.placeholder((3,))
    with pytest.raises(TVMValueError, match="nll_loss: bad reduction 'avg'"):
        topi.nn.nll_loss(p, t, w, "avg", -100)
