"""Parameter dicts in TVM's byte format: byte for byte with apache-tvm 0.27, both ways, and bad
bytes refused with the offset and the field.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
import tvm

import pytvm
from pytvm.runtime import load_param_dict, save_param_dict
from pytvm.runtime.graph_executor.params import (
    ARRAY_MAGIC,
    LIST_MAGIC,
    load_param_dict_from_file,
    read_param_names,
    save_param_dict_to_file,
)


def _sample() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(3)
    return {
        "conv.weight": rng.standard_normal((2, 3, 3)).astype("float32"),
        "b": np.arange(5, dtype="int64"),
        "mask": np.array([True, False, True]),
        "h": rng.standard_normal(4).astype("float16"),
        "scalar": np.array(2.5, dtype="float64"),
        "empty": np.zeros((0, 3), dtype="int8"),
    }


def test_saved_bytes_equal_apache_tvms() -> None:
    params = _sample()
    ours = save_param_dict(params)
    theirs = bytes(
        tvm.runtime.save_param_dict({k: tvm.runtime.tensor(v) for k, v in params.items()})
    )
    assert ours == theirs


def test_apache_tvm_loads_what_pytvm_saves() -> None:
    params = _sample()
    loaded = tvm.runtime.load_param_dict(bytearray(save_param_dict(params)))
    assert sorted(loaded.keys()) == sorted(params)
    for name, value in params.items():
        np.testing.assert_array_equal(loaded[name].numpy(), value)
        assert str(loaded[name].dtype) == str(value.dtype)


def test_pytvm_loads_what_apache_tvm_saves() -> None:
    params = _sample()
    blob = tvm.runtime.save_param_dict({k: tvm.runtime.tensor(v) for k, v in params.items()})
    loaded = load_param_dict(bytes(blob))
    assert list(loaded) == list(params)
    for name, value in params.items():
        assert isinstance(loaded[name], pytvm.nd.NDArray)
        assert loaded[name].shape == value.shape and loaded[name].dtype == str(value.dtype)
        np.testing.assert_array_equal(loaded[name].numpy(), value)


def test_ndarrays_and_big_endian_arrays_save_like_native_numpy() -> None:
    a = np.arange(6, dtype="float32").reshape(2, 3)
    assert save_param_dict({"a": pytvm.nd.array(a)}) == save_param_dict({"a": a})
    assert save_param_dict({"a": a.astype(">f4")}) == save_param_dict({"a": a})
    assert save_param_dict({"a": a.T}) == save_param_dict({"a": np.ascontiguousarray(a.T)})


def test_files_and_names_round_trip(tmp_path: Path) -> None:
    params = _sample()
    save_param_dict_to_file(params, tmp_path / "p.params")
    loaded = load_param_dict_from_file(tmp_path / "p.params")
    assert read_param_names((tmp_path / "p.params").read_bytes()) == list(params)
    for name, value in params.items():
        np.testing.assert_array_equal(loaded[name].numpy(), value)
    assert load_param_dict(save_param_dict({})) == {}
    assert pytvm.runtime.save_param_dict is save_param_dict


def test_vector_dtypes_are_refused_rather_than_truncated() -> None:
    with pytest.raises(ValueError, match=r"parameter 'v' has vector type float32x4"):
        save_param_dict({"v": pytvm.nd.empty((2,), "float32x4")})


def test_every_truncation_names_the_field_and_offset() -> None:
    blob = save_param_dict({"w": np.arange(3, dtype="float32"), "b": np.ones(2, "int32")})
    for cut in range(len(blob)):
        with pytest.raises(ValueError, match=r"load_param_dict: .*offset \d+"):
            load_param_dict(blob[:cut])
    with pytest.raises(ValueError, match=r"data of array 'b' at offset 158 needs 8 bytes, only 4"):
        load_param_dict(blob[:-4])


def test_wrong_magics_are_named() -> None:
    blob = bytearray(save_param_dict({"w": np.arange(3, dtype="float32")}))
    bad = bytes(8) + blob[8:]
    with pytest.raises(
        ValueError, match=r"offset 0: list magic is 0x0, expected 0xf7e58d4f05049cb7"
    ):
        load_param_dict(bad)
    at = blob.index(struct.pack("<Q", ARRAY_MAGIC))
    blob[at] ^= 0xFF
    with pytest.raises(ValueError, match=rf"offset {at}: array 'w': magic is 0x"):
        load_param_dict(bytes(blob))


def test_absurd_sizes_are_refused_before_allocating() -> None:
    header = struct.pack("<QQ", LIST_MAGIC, 0)
    with pytest.raises(ValueError, match=r"offset 16: 1152921504606846976 names cannot fit"):
        load_param_dict(header + struct.pack("<Q", 1 << 60))
    with pytest.raises(ValueError, match=r"name 0 at offset 32 needs 4294967296 bytes, only 0"):
        load_param_dict(header + struct.pack("<QQ", 1, 1 << 32))
    good = save_param_dict({"w": np.arange(3, dtype="float32")})
    shape_at = len(good) - 12 - 8 - 8  # data (12), byte size (8), shape (8)
    huge = good[:shape_at] + struct.pack("<qq", 1 << 40, 4 << 40)
    with pytest.raises(
        ValueError, match=r"data of array 'w' at offset \d+ needs 4398046511104 bytes"
    ):
        load_param_dict(huge)
    wrong = good[:shape_at] + struct.pack("<qq", 3, 16) + good[-12:]
    with pytest.raises(ValueError, match=r"byte size 16 does not match shape \(3,\) float32 \(12"):
        load_param_dict(wrong)
    ndim_at = shape_at - 4 - 4  # dtype (4), ndim (4)
    with pytest.raises(ValueError, match=r"ndim 100000 is not in 0\.\.64"):
        load_param_dict(good[:ndim_at] + struct.pack("<i", 100000) + good[ndim_at + 4 :])


def test_other_corruptions_are_named() -> None:
    good = save_param_dict({"w": np.arange(3, dtype="float32")})
    with pytest.raises(ValueError, match=r"3 unexpected bytes after the arrays"):
        load_param_dict(good + b"abc")
    twice = save_param_dict({"w": np.zeros(1, "float32")})
    names_end = 8 + 8 + 8 + 8 + 1
    doubled = (
        struct.pack("<QQQ", LIST_MAGIC, 0, 2)
        + twice[24:names_end] * 2
        + struct.pack("<Q", 2)
        + twice[names_end + 8 :] * 2
    )
    with pytest.raises(ValueError, match=r"parameter name 'w' appears twice"):
        load_param_dict(doubled)
    not_utf8 = struct.pack("<QQQQ", LIST_MAGIC, 0, 1, 1) + b"\xff"
    with pytest.raises(ValueError, match=r"offset 24: name 0 is not UTF-8"):
        load_param_dict(not_utf8)
    with pytest.raises(TypeError, match="expects bytes, got str"):
        load_param_dict("not bytes")  # type: ignore[arg-type]
