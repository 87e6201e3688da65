r"""Run Apache TVM's own RPC test file against pytvm (``import pytvm as tvm``) and tabulate it.

The TVM file is not part of pytvm; fetch it from Apache TVM first, for example::

    mkdir -p /tmp/tvm_tests
    git -C tvm show v0.27.dev0:tests/python/runtime/test_runtime_rpc.py \
        > /tmp/tvm_tests/test_runtime_rpc.py

Then::

    python scripts/run_tvm_rpc_tests.py /tmp/tvm_tests/test_runtime_rpc.py [--pytvm-root DIR]

The file is copied to a temporary directory with its imports renamed from ``tvm`` to ``pytvm``,
and nothing else changed (:func:`substitute`):

- ``import tvm`` -> ``import pytvm as tvm``; ``import tvm.x`` -> ``import pytvm.x, pytvm as tvm``
  (so ``tvm.x.y`` works); ``import tvm.x as y`` -> ``import pytvm.x as y``;
- ``from tvm import a`` / ``from tvm.x import a`` -> ``from pytvm import a`` /
  ``from pytvm.x import a``;
- ``import tvm_ffi`` -> ``import pytvm.ffi as tvm_ffi``; ``from tvm_ffi import a`` ->
  ``from pytvm.ffi import a``.

A module or name pytvm lacks therefore fails the run: the collection error is a row of the
table and the exit status is non-zero. The tests in :data:`KNOWN_GAPS` are marked skipped, each
with the reason (something pytvm does not have); every other test runs (``--run-known-gaps``
runs those too).

pytest runs in a subprocess with ``PYTHONPATH`` set to ``--pytvm-root`` (default: this checkout),
a per-test alarm (``--per-test-timeout``), a faulthandler backstop and a wall-clock limit for the
whole run, so a hanging test cannot hang the script. The script checks which ``pytvm`` the
subprocess imported, prints one row per test id (passed / failed / error / skipped, with the
reason) and the totals, and exits with 0 only when no test failed or errored.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tvm_test_harness import (
    Row,
    exit_status,
    imported_pytvm_ok,
    print_table,
    run_pytest,
    substitute,
    write_conftest,
)

__all__ = ["KNOWN_GAPS", "Row", "exit_status", "main", "substitute"]

#: Tests of TVM's file that need something pytvm does not have, and what it is. Each was run
#: first; they fail for exactly this reason.
KNOWN_GAPS: dict[str, str] = {
    "test_rpc_return_remote_object": (
        "its minrpc part (run since rpc.CreatePipeClient exists) asks the C MinRPC server for "
        "ffi.Shape and rpc.testing.GetShapeElem/GetShapeSize, and the C runtime has no object "
        "system; it then starts that server through rpc.Server() with the executable's bytes, "
        "which a pytvm server refuses unless started with allow_popen_binary=True"
    ),
}


def main(argv: list[str] | None = None) -> int:
    """Run the renamed TVM test file under pytest and print its table; return the exit status."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("tvm_test_file", type=Path)
    parser.add_argument("--pytvm-root", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--per-test-timeout", type=int, default=60)
    parser.add_argument("--total-timeout", type=int, default=900)
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    parser.add_argument(
        "--run-known-gaps", action="store_true", help="run the KNOWN_GAPS tests too (no skips)"
    )
    args = parser.parse_args(argv)

    root = args.pytvm_root.resolve()
    work = Path(tempfile.mkdtemp(prefix="pytvm_tvm_rpc_"))
    try:
        test_file = work / args.tvm_test_file.name
        test_file.write_text(substitute(args.tvm_test_file.read_text()))
        skips = {} if args.run_known_gaps else KNOWN_GAPS
        where = write_conftest(
            work,
            limit=args.per_test_timeout,
            skips={name: "pytvm lacks it: " + why for name, why in skips.items()},
        )
        run = run_pytest(work, [test_file.name], pytvm_root=root, total_timeout=args.total_timeout)
        if run.note:
            print(run.note)
        ok, used = imported_pytvm_ok(where, root)
        print(f"\npytvm imported by the tests: {used}")
        if not ok:
            print(f"error: expected pytvm from {root}")
            return 2
        if not run.rows:
            return 1
        print_table(run.rows)
        return exit_status(run.rows, run.returncode)
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
