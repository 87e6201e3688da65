"""``pytvm.contrib.pickle_memoize``: results cached by arguments and closed-over values, kept
across runs only through a verified file in a private cache folder.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytvm.contrib.pickle_memoize import memoize

_SCRIPT = """
import sys
from pytvm.contrib.pickle_memoize import memoize

def reference(n):
    @memoize("tests.pickle_memoize", save_at_exit=True)
    def compute():
        print("computed", n)
        return [n] * n
    return compute()

print(reference(int(sys.argv[1])))
"""


def _run(tmp_path: Path, n: int) -> str:
    script = tmp_path / "memo.py"
    script.write_text(_SCRIPT)
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"), PYTHONPATH=str(root))
    out = subprocess.run(
        [sys.executable, str(script), str(n)], env=env, capture_output=True, text=True,
        check=True, timeout=120,
    )  # fmt: skip
    return out.stdout


def test_closure_values_are_part_of_the_key() -> None:
    def make(shape: tuple[int, ...]) -> tuple[int, ...]:
        @memoize("tests.closure")
        def ref() -> tuple[int, ...]:
            return tuple(2 * s for s in shape)

        return ref()

    assert make((1, 2)) == (2, 4)
    assert make((3,)) == (6,)


def test_unhashable_arguments_are_refused() -> None:
    @memoize("tests.refused")
    def f(x: object) -> object:
        return x

    with pytest.raises(TypeError, match="str, int, float"):
        f([1, 2])


def test_results_saved_at_exit_are_reused_and_a_damaged_file_is_not_loaded(
    tmp_path: Path,
) -> None:
    assert _run(tmp_path, 3) == "computed 3\n[3, 3, 3]\n"
    assert _run(tmp_path, 3) == "[3, 3, 3]\n"  # read back, not computed
    saved = next((tmp_path / "cache").rglob("tests.pickle_memoize.compute.pkl"))
    assert saved.stat().st_mode & 0o077 == 0
    saved.write_bytes(saved.read_bytes()[:-3] + b"!!!")
    assert _run(tmp_path, 3) == "computed 3\n[3, 3, 3]\n"  # checksum mismatch: recomputed
