"""The C runtime's minimal configuration (a microcontroller's): it serves MinRPC, and its device
image builds warning-free for x86-64 and a Cortex-M4 without printf or 64-bit division.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import pytvm
from pytvm import rpc
from pytvm.crt import device_binary

pytestmark = pytest.mark.needs_cc

CRT_DIR = Path(pytvm.__file__).resolve().parent / "src" / "crt"
SIZE_LINE = re.compile(
    r"^image (?P<target>\S+) (?P<config>\S+) text=(?P<text>\d+) rodata=(?P<rodata>\d+) "
    r"total=(?P<total>\d+) needs=(?P<needs>\S*)$",
    re.MULTILINE,
)
CROSS_CC = "arm-none-eabi-gcc"
# Cortex-M4: 12 KiB until the serial handshake carried frame limits (+71 B), now 12.5 KiB.
MINIMAL_BUDGETS = {"cortex-m4": 12 * 1024 + 512, "x86-64": 16 * 1024}


def test_minimal_device_serves_echo_copies_and_calls() -> None:
    sess = rpc.PopenSession(str(device_binary(minimal=True)))
    try:
        info = sess.get_function("pytvm.device.info")()
        assert "config=minimal" in info and "max_packet=2048" in info, info
        echo = sess.get_function("pytvm.device.echo")
        assert echo(7) == 7 and echo("hi") == "hi"
        # 4000 bytes: the copies are split into packets of the device's 2 KiB limit
        data = np.arange(1000, dtype="float32")
        arr = pytvm.nd.empty((1000,), "float32", sess.cpu())
        arr.copyfrom(data)
        np.testing.assert_array_equal(arr.numpy(), data)
        sess.get_function("pytvm.device.scale_f32")(arr, 2.0)
        np.testing.assert_array_equal(arr.numpy(), 2 * data)
        # kCopyAmongRemote: made in place (the minimal build has no accelerator path)
        other = pytvm.nd.empty((1000,), "float32", sess.cpu())
        arr.copyto(other)
        np.testing.assert_array_equal(other.numpy(), 2 * data)
        # a failing request is answered with the short error text, and the device keeps serving
        with pytest.raises(Exception, match="MemoryError"):
            pytvm.nd.empty((1 << 20,), "uint8", sess.cpu())
        assert echo(8) == 8
    finally:
        sess.close()


def test_minimal_device_refuses_the_accelerator() -> None:
    with pytest.raises(pytvm.ffi.errors.TVMError, match="without accelerator support"):
        device_binary(hexagon=True, minimal=True)


def _image_sizes(build: Path, *targets: str) -> dict[tuple[str, str], dict[str, str]]:
    cmd = ["make", "-s", "-C", str(CRT_DIR), "-j4", f"O={build}", *targets]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, f"{' '.join(cmd)}:\n{proc.stdout[-4000:]}{proc.stderr[-4000:]}"
    found = {(m["target"], m["config"]): m.groupdict() for m in SIZE_LINE.finditer(proc.stdout)}
    assert found, proc.stdout
    return found


def test_images_build_warning_free_without_printf_or_division_helpers(tmp_path: Path) -> None:
    if shutil.which(CROSS_CC) is None:
        pytest.fail(f"{CROSS_CC} is not on PATH: `make crt-cross-compiler` installs it")
    sizes = _image_sizes(tmp_path, "crt-image-sizes")
    assert set(sizes) == {(t, c) for t in ("x86-64", "cortex-m4") for c in ("full", "minimal")}, (
        sizes
    )
    for (target, config), row in sizes.items():
        needs = row["needs"].split(",")
        assert not [n for n in needs if "printf" in n or "divmod" in n or "malloc" in n], row
        assert int(row["total"]) == int(row["text"]) + int(row["rodata"])
    for target in ("x86-64", "cortex-m4"):
        assert int(sizes[target, "minimal"]["total"]) < int(sizes[target, "full"]["total"])
    # the minimal configuration's code budgets (.text + .rodata, C library excluded)
    for target, budget in MINIMAL_BUDGETS.items():
        assert int(sizes[target, "minimal"]["total"]) <= budget, (target, sizes[target, "minimal"])
