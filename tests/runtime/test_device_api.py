"""``DeviceAPI.get``: typed as never None unless ``allow_missing``, and a clear error for a
device with no device API (callers rely on the error, not on an ``assert``).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from mypy import api as mypy_api

from pytvm.ffi import Device
from pytvm.ffi.errors import TVMValueError
from pytvm.runtime.device_api import DeviceAPI

ROOT = Path(__file__).resolve().parents[2]
EXT_DEV = Device(12, 0)  # no device API is registered for ext_dev by default

CALLERS = """\
from __future__ import annotations

from pytvm.ffi import Device
from pytvm.runtime.device_api import DeviceAPI


def required(dev: Device) -> str:
    return DeviceAPI.get(dev).name


def optional(dev: Device) -> str:
    return DeviceAPI.get(dev, allow_missing=True).name
"""


def test_get_is_optional_only_with_allow_missing(tmp_path: Path) -> None:
    snippet = tmp_path / "device_api_callers.py"
    snippet.write_text(CALLERS)
    # the cache of `make typecheck`, so a warm tree checks in about a second
    cache = str(ROOT / ".mypy_cache")
    args = ["--strict", "--follow-imports=silent", "--cache-dir", cache, str(snippet)]
    report, _, status = mypy_api.run(args)
    # (a warm cache may replay the errors under the path the snippet had then)
    errors = [line for line in report.splitlines() if "device_api_callers.py:" in line]
    assert status == 1 and len(errors) == 1, report
    assert 'device_api_callers.py:12: error: Item "None"' in errors[0], report
    assert "union-attr" in errors[0]


def test_a_missing_device_api_is_an_error_naming_the_device() -> None:
    assert DeviceAPI.get(EXT_DEV, allow_missing=True) is None
    with pytest.raises(TVMValueError, match=r"no device API for ext_dev\(0\).*device_api\.ext_dev"):
        DeviceAPI.get(EXT_DEV)


def test_callers_raise_the_clear_error_under_python_O() -> None:
    code = textwrap.dedent(
        """
        import pytvm
        try:
            pytvm.nd.empty((2,), "int32", pytvm.Device(12, 0))
        except ValueError as err:
            print(type(err).__name__, err)
        """
    )
    out = subprocess.run(
        [sys.executable, "-O", "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("TVMValueError no device API for ext_dev(0)"), out.stdout
