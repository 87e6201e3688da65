"""A device process that never answers: ``popen_session(timeout=...)`` raises instead of
waiting forever, naming the process, and no process is left behind.
"""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import pytest

from pytvm.rpc.sessions.client import RPCSession
from pytvm.rpc.sessions.forwarding_session import popen_session


@pytest.fixture
def silent_device(tmp_path: Path) -> Path:
    """An executable that takes the two pipe descriptors and never writes to the second."""
    script = tmp_path / "silent-device"
    # reads the requests until the host closes the pipe; answers nothing
    script.write_text(
        f"#!{sys.executable}\nimport os, sys\nwhile os.read(int(sys.argv[1]), 65536):\n    pass\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def test_a_silent_process_times_out_naming_it(silent_device: Path) -> None:
    with pytest.raises(
        TimeoutError, match=r"process \d+ \(.*silent-device\): no reply within 0.5 s"
    ):
        RPCSession(popen_session(silent_device, timeout=0.5)).get_function("anything")


def test_a_live_process_answers_within_the_timeout() -> None:
    from pytvm.crt import device_binary

    sess = RPCSession(popen_session(device_binary(), timeout=30.0))
    try:
        assert sess.get_function("pytvm.device.echo")(7) == 7
    finally:
        sess.close()
