"""The C runtime's own C unit tests, built and run by its Makefile under gcc and clang, plain and
under AddressSanitizer and UndefinedBehaviorSanitizer (no Python is linked into them).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

import pytvm

pytestmark = pytest.mark.needs_cc

CRT_DIR = Path(pytvm.__file__).resolve().parent / "src" / "crt"
COMPILERS = ["gcc", "clang"]
VARIANTS = ["host", "asan", "ubsan"]
SUMMARY = re.compile(r"^(\d+) tests, (\d+) failed$", re.MULTILINE)


def _require(compiler: str) -> None:
    if shutil.which(compiler) is None:
        pytest.fail(
            f"{compiler} is not on PATH; the C runtime is tested with both gcc and clang: "
            f"install {compiler} (make test installs it)"
        )
    if shutil.which("make") is None:
        pytest.fail("make is not on PATH; install make to build the C runtime")


def _make(build: Path, compiler: str, *targets: str, config: str = "") -> str:
    """Run the CRT Makefile (core only: no other components' fragments); return its output."""
    cmd = [
        "make",
        "-C",
        str(CRT_DIR),
        "-j4",
        f"CC={compiler}",
        f"O={build}",
        "CRT_FRAGMENTS=",
        f"CRT_CONFIG_FLAGS={config}",
        *targets,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    out = proc.stdout + proc.stderr
    if proc.returncode != 0:
        if "libclang_rt" in out:
            pytest.fail(
                f"{compiler}'s sanitizer runtime is missing (libclang_rt.*): install the "
                f"compiler-rt package of this clang (Debian: libclang-rt-14-dev)\n{out[-4000:]}"
            )
        pytest.fail(f"{' '.join(cmd)} exited with {proc.returncode}:\n{out[-8000:]}")
    return out


def _expect_all_passed(out: str) -> None:
    summaries = SUMMARY.findall(out)
    assert len(summaries) == 2, f"expected the unit-test and POSIX-host summaries:\n{out}"
    for run, failed in summaries:
        assert int(run) > 0 and int(failed) == 0, out
    assert "FAIL " not in out, out


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("compiler", COMPILERS)
def test_crt_unit_tests_pass(
    compiler: str, variant: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    _require(compiler)
    build = tmp_path_factory.mktemp(f"crt-{compiler}-{variant}")
    out = _make(build, compiler, "crt-check-headers", f"crt-test-{variant}")
    _expect_all_passed(out)
    assert (build / variant / "libpytvm_crt.a").is_file()


def test_crt_unit_tests_pass_with_an_overridden_config(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    _require("gcc")
    build = tmp_path_factory.mktemp("crt-small")
    config = (
        "-DTVM_CRT_MEMORY_POOL_LOG2=16 -DTVM_CRT_PAGE_BITS=10 -DTVM_CRT_MAX_REGISTERED_FUNCTIONS=8 "
        "-DTVM_CRT_MAX_REGISTERED_MODULES=2 -DTVM_CRT_MAX_ERROR_MESSAGE_BYTES=128 -DTVM_CRT_DEBUG=1"
    )
    out = _make(build, "gcc", "crt-test-host", config=config)
    _expect_all_passed(out)
    assert "-DTVM_CRT_MEMORY_POOL_LOG2=16" in (build / "host" / "flags.stamp").read_text()


def test_crt_build_refuses_to_write_into_the_package(tmp_path: Path) -> None:
    _require("gcc")
    proc = subprocess.run(
        ["make", "-C", str(CRT_DIR), f"O={CRT_DIR / 'build'}", "CRT_FRAGMENTS=", "lib"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode != 0
    assert "inside the package source tree" in proc.stderr
    assert not (CRT_DIR / "build").exists()
