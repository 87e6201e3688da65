"""topi.einsum against numpy.einsum: traces, ellipses, broadcasting, implicit output, symbolic
extents.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import pytvm as tvm
from pytvm import te, topi
from pytvm.ffi.errors import TVMValueError


@pytest.mark.parametrize(
    ("equation", "shapes", "sizes"),
    [
        ("ii", [(5, 5)], {}),
        ("ij->i", [(5, 5)], {}),
        ("..., ...", [(), (2, 3)], {}),
        ("ij, ij -> i", [(1, 4), (2, 4)], {}),
        ("...ik, ...jk, ...hk -> i...jh", [(3, 4, 4), (1, 5, 3, 8, 4), (2, 5, 3, 6, 4)], {}),
        ("ij,jk,km->im", [(2, 3), (3, 4), (4, 5)], {}),
        ("ij,jk->ik", [(2, "K"), ("K2", "N")], {"K": 3, "N": 4, "K2": 1}),
    ],
)
def test_einsum_matches_numpy(equation: str, shapes: list[Any], sizes: dict[str, int]) -> None:
    names: dict[str, Any] = {}
    ins = [
        te.placeholder([names.setdefault(d, te.var(d)) if isinstance(d, str) else d for d in s])
        for s in shapes
    ]
    arrays = [
        np.random.uniform(-1, 1, [sizes.get(d, d) for d in s]).astype("float32") for s in shapes
    ]
    want = np.einsum(equation, *arrays)
    out_t = topi.einsum(equation, *ins)
    f = tvm.build(te.create_schedule([out_t.op]), [*ins, out_t], "llvm")
    out = tvm.nd.array(np.zeros(want.shape, "float32"))
    f(*[tvm.nd.array(a) for a in arrays], out)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-5)


def test_einsum_refuses_a_term_of_the_wrong_rank() -> None:
    with pytest.raises(TVMValueError, match="einsum: bad subscripts term 'ijk'"):
        topi.einsum("ijk->i", te.placeholder((2, 3)))
