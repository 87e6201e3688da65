from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest
import tvm

import pytvm
from pytvm.runtime import _dlpack_capsule


def test_numpy_views_pytvm_memory_without_copy() -> None:
    a = pytvm.nd.array(np.zeros(4, "float32"))
    view = np.from_dlpack(a)
    view[2] = 9.0
    assert a.numpy()[2] == 9.0


def test_pytvm_views_numpy_memory_without_copy() -> None:
    host = np.zeros(3, "int64")
    a = pytvm.nd.from_dlpack(host)
    host[0] = 11
    assert a.numpy()[0] == 11


def test_zero_copy_with_apache_tvm_both_ways() -> None:
    a = pytvm.nd.array(np.zeros(3, "float32"))
    t = tvm.runtime.from_dlpack(a)
    np.from_dlpack(t)[1] = 5.0
    assert a.numpy()[1] == 5.0
    src = tvm.runtime.tensor(np.zeros(2, "int32"))
    b = pytvm.nd.from_dlpack(src)
    np.from_dlpack(src)[0] = 4
    assert b.numpy().tolist() == [4, 0]


def test_legacy_capsule_and_unconsumed_capsule_release() -> None:
    a = pytvm.nd.array(np.arange(3, dtype="float32"))
    b = pytvm.nd.from_dlpack(a.__dlpack__())
    assert b.numpy().tolist() == [0, 1, 2]
    before = len(_dlpack_capsule.EXPORTED)
    capsule = a.__dlpack__()
    assert len(_dlpack_capsule.EXPORTED) == before + 1
    del capsule
    gc.collect()
    assert len(_dlpack_capsule.EXPORTED) == before
    del b
    gc.collect()
    assert len(_dlpack_capsule.EXPORTED) == 0


def test_strided_producer_is_rejected() -> None:
    strided = np.arange(12, dtype="float32").reshape(3, 4)[:, ::2]
    with pytest.raises(ValueError, match="strides"):
        pytvm.nd.from_dlpack(strided)


def test_producer_released_when_array_dies() -> None:
    host = np.zeros(5, "float32")
    ref = weakref.ref(host)
    a = pytvm.nd.from_dlpack(host)
    del host
    gc.collect()
    assert ref() is not None  # the NDArray keeps its producer alive
    del a
    gc.collect()
    assert ref() is None


def test_read_only_flag_survives_re_export() -> None:
    host = np.arange(3, dtype="float32")
    host.flags.writeable = False
    a = pytvm.nd.from_dlpack(host)
    view = np.from_dlpack(a)
    assert not view.flags.writeable and view.tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match="read-only"):
        a.__dlpack__()  # a legacy capsule cannot carry the flag


@pytest.mark.parametrize("shape", [(0,), (0, 3), (2, 0, 4)])
def test_zero_size_arrays_cross_both_ways(shape: tuple[int, ...]) -> None:
    host = np.zeros(shape, "float32")  # numpy exports strides 0 here: still compact
    assert pytvm.nd.from_dlpack(host).shape == shape
    assert np.from_dlpack(pytvm.nd.array(host)).shape == shape
