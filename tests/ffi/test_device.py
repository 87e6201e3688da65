from __future__ import annotations

import pytest

import pytvm
from pytvm import Device


def test_device_constructors_and_names() -> None:
    assert pytvm.cpu(0) == pytvm.device("cpu", 0) == Device(1, 0)
    assert pytvm.device("hexagon", 0).device_type == 16
    assert pytvm.ext_dev(1).device_type == 12
    assert pytvm.device("cuda:1") == Device(2, 1)
    assert str(pytvm.hexagon(1)) == "hexagon(1)"


def test_rpc_masked_device_prints_session() -> None:
    assert str(Device(129, 0)) == "remote[0]:cpu(0)"
    remote = Device(16 + 256, 2)
    assert str(remote) == "remote[1]:hexagon(2)"
    assert remote.rpc_session_index == 1 and remote.is_remote
    assert remote.without_session() == pytvm.hexagon(2)
    assert pytvm.hexagon(2).with_session(1) == remote


def test_unknown_device_name_lists_known_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown device name 'tpu'.*hexagon"):
        pytvm.device("tpu")


def test_sdaccel_is_tvms_name_of_opencl_on_an_fpga() -> None:
    assert pytvm.device("sdaccel").device_type == pytvm.device("opencl").device_type
