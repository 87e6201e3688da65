"""The mps2-an386 board image (Cortex-M4F) in QEMU: RPC over its UART, a system-lib kernel
compiled into the image, time_evaluator on the device, frame limits from the handshake.

Skipped only when qemu-system-arm or arm-none-eabi-gcc is missing (`make mcu` installs both).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import pytvm
from pytvm import te
from pytvm.crt.qemu import QemuBoard, QemuBoardError

ROOT = Path(__file__).resolve().parents[2]
CRT = ROOT / "pytvm" / "src" / "crt"
TOOLS = ("qemu-system-arm", "arm-none-eabi-gcc")
pytestmark = pytest.mark.skipif(
    any(shutil.which(tool) is None for tool in TOOLS),
    reason="needs qemu-system-arm and arm-none-eabi-gcc (`make mcu` installs them)",
)

ECHO_APP = r"""
#include "board_image.h"
#include "pytvm_crt/crt.h"

static int echo(TVMValue* args, int* codes, int num_args, TVMValue* ret, int* ret_code,
                void* resource) {
  (void)resource;
  if (num_args != 1 || codes[0] != (int)kTVMArgInt) {
    TVMAPISetLastError("TypeError: board.echo takes one integer");
    return -1;
  }
  *ret = args[0];
  *ret_code = codes[0];
  return 0;
}

int pytvm_app_init(void) { return pytvm_crt_func_register_global("board.echo", echo, 1); }
"""

N = 4096


def build_image(out: Path, app_srcs: list[Path], *settings: str) -> Path:
    proc = subprocess.run(
        [
            "make",
            "-s",
            "-C",
            str(CRT),
            "board-image",
            "BOARD=mps2-an386",
            f"O={out}",
            "APP_SRCS=" + " ".join(str(p) for p in app_srcs),
            *settings,
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1].startswith("image mps2-an386 text=")
    return out / "board" / "mps2-an386" / "image.elf"


@pytest.fixture(scope="module")
def app_srcs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """An echo function (through pytvm_app_init) and a system-lib kernel B = A * 2 + 1."""
    src = tmp_path_factory.mktemp("app")
    (src / "echo_app.c").write_text(ECHO_APP)
    A = te.placeholder((N,), name="A", dtype="float32")
    B = te.compute((N,), lambda i: A[i] * 2.0 + 1.0, name="B")
    mod = pytvm.build(te.create_schedule(B.op), [A, B], target="c --system-lib", name="scale_add")
    (src / "scale_add.c").write_text(mod.get_source())
    return [src / "echo_app.c", src / "scale_add.c"]


@pytest.fixture(scope="module")
def image(tmp_path_factory: pytest.TempPathFactory, app_srcs: list[Path]) -> Path:
    return build_image(tmp_path_factory.mktemp("board"), app_srcs)


def test_image_layout(image: Path) -> None:
    size = (image.parent / "image.size").read_text()
    fields = dict(word.split("=") for word in size.split()[2:])
    assert int(fields["stack"]) == 65536 and int(fields["ram"]) < 4 << 20
    assert "__stack_size" in (image.parent / "image.map").read_text()


def test_rpc_kernel_and_timing_on_the_board(image: Path) -> None:
    with QemuBoard(image, icount_shift=0) as board:
        sess = board.connect_session()
        assert sess.get_function("board.echo")(-12345) == -12345
        dev = sess.cpu(0)
        payload = np.random.default_rng(0).integers(0, 256, 1 << 16, dtype=np.uint8)
        np.testing.assert_array_equal(pytvm.nd.array(payload, dev).numpy(), payload)  # 64 KiB
        x = np.random.default_rng(1).random(N, dtype=np.float32)
        a, b = pytvm.nd.array(x, dev), pytvm.nd.empty((N,), "float32", dev)
        sess.system_lib()["scale_add"](a, b)
        np.testing.assert_allclose(b.numpy(), x * 2 + 1, rtol=1e-6)
        timer = sess.system_lib().time_evaluator("scale_add", dev, number=4, repeat=2)
        result = timer(a, b)
        assert all(t > 0 for t in result.results)


def test_small_frame_board_and_large_frame_host(
    tmp_path_factory: pytest.TempPathFactory, app_srcs: list[Path]
) -> None:
    elf = build_image(tmp_path_factory.mktemp("small"), app_srcs[:1], "BOARD_FRAME_SIZE=1024")
    with QemuBoard(elf) as board:
        sess = board.connect_session(frame_size=1 << 16)
        dev = sess.cpu(0)
        data = np.random.default_rng(2).integers(0, 256, 1 << 16, dtype=np.uint8)
        np.testing.assert_array_equal(pytvm.nd.array(data, dev).numpy(), data)
        assert sess.get_function("board.echo")(5) == 5


def test_missing_qemu_names_make_mcu(image: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(QemuBoardError, match="make mcu"):
        QemuBoard(image).start()
