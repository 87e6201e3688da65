r"""Run Apache TVM v0.18's compiler tests and tutorials against pytvm (``import pytvm as tvm``).

TVM v0.18 is the last release with ``te.create_schedule``, Relay and the graph executor. Its
files are not part of pytvm; take them from a TVM checkout, for example::

    git -C tvm archive v0.18.0 conftest.py tests/python/te tests/python/topi \
        tests/python/frontend/onnx tests/python/relay/utils gallery | tar -x -C /tmp/tvm018

and, for microTVM and AOT (``tests/python/micro``, ``tests/python/relay/aot``; their helpers
``tvm.testing.aot`` and ``tvm.micro.testing`` are pytvm's own ``pytvm.testing.aot`` and
``pytvm.micro.testing``)::

    git -C tvm archive v0.18.0 conftest.py tests/python/micro tests/python/relay/aot \
        | tar -x -C /tmp/tvm018

and, for AutoTVM (``tests/python/autotvm``, ``tests/python/relay/test_autotvm_task_extraction.py``;
the helper ``tvm.testing.autotvm`` is pytvm's ``pytvm.testing.autotvm``), with the tutorials
``autotvm_matmul_x86`` and ``tune_relay_x86``::

    git -C tvm archive v0.18.0 conftest.py tests/python/autotvm \
        tests/python/relay/test_autotvm_task_extraction.py gallery | tar -x -C /tmp/tvm018

Then::

    python scripts/run_tvm_compiler_tests.py /tmp/tvm018 [--jobs 2] [--only PATTERN] [-v]

Every file is copied to a temporary directory with its imports renamed from ``tvm`` to
``pytvm`` (``tvm_test_harness.substitute``) and nothing else changed, so a module or name pytvm
lacks fails its tests. TVM's root ``conftest.py`` loads the pytest plugin ``tvm.testing.plugin``
(the ``target``/``dev`` fixtures and the ``requires_*`` marks); the conftest written here loads
``pytvm.testing.plugin`` in its place. Targets are limited to ``llvm`` (``TVM_TEST_TARGETS``),
so TVM's own marks skip what needs a GPU.

Run:
- each test file (``tests/python/te``, ``tests/python/topi``, the ONNX frontend's
  ``test_forward.py``, ``tests/python/micro``, ``tests/python/relay/aot``,
  ``tests/python/autotvm``) in its own pytest
  subprocess, ``--jobs`` at a time, with a per-test alarm
  and a per-file wall-clock limit;
- each tutorial (``tensor_expr_get_started``, ``relay_quick_start``, ``from_onnx``,
  ``autotvm_matmul_x86``, ``tune_relay_x86``) as a script;
  it passes when it exits with 0; one that declares ``sphinx_gallery_requires_cuda = True`` (its
  own mark that it needs a GPU) is skipped.

:data:`SKIPS` lists what is skipped besides TVM's own marks, each with its reason; the reasons
are limited to GPU targets, ``tensorize``, AutoTVM and MetaSchedule tuning, microTVM's Cortex-M
kernels, PyTorch, the internet, TVM's AOT-internal TIR passes, USMP memory pools and Ethos-U /
CMSIS-NN offloading.
The script prints one row per file (passed / failed / error / skipped), the totals, the share of
the tests that were not skipped which passed, and the most frequent failure lines. It exits with
0 only when nothing failed.
"""

from __future__ import annotations

import argparse
import collections
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tvm_test_harness import (
    Row,
    imported_pytvm_ok,
    run_pytest,
    substitute,
    write_conftest,
)

#: The test files, relative to the TVM tree, as glob patterns.
TEST_GLOBS = (
    "tests/python/te/test_*.py",
    "tests/python/topi/test_*.py",
    "tests/python/frontend/onnx/test_forward.py",
    "tests/python/micro/test_*.py",
    "tests/python/relay/aot/test_*.py",
    "tests/python/autotvm/test_*.py",
    "tests/python/relay/test_autotvm_task_extraction.py",
)
#: Modules the test files import from their own folder.
HELPER_GLOBS = ("tests/python/topi/common.py",)
#: Helper folders the test files import as packages (``from relay.utils.tag_span import ...``,
#: with ``tests/python`` on the path), and where they go beside the copied test file.
HELPER_TREES = {"tests/python/relay/utils": "relay/utils"}
TUTORIALS = (
    "gallery/tutorial/tensor_expr_get_started.py",
    "gallery/tutorial/relay_quick_start.py",
    "gallery/how_to/compile_models/from_onnx.py",
    "gallery/tutorial/autotvm_matmul_x86.py",
    "gallery/how_to/tune_with_autotvm/tune_relay_x86.py",
)

_GPU = "GPU targets: out of scope (targets are limited to llvm)"
_TENSORIZE = "tensorize / decl_tensor_intrin: out of scope"
_AUTOTVM = "AutoTVM tuning: out of scope here"
_MICRO = "microTVM (Arm Cortex-M code generation): out of scope here"
_TORCH = "needs PyTorch"
_INTERNET = "downloads from the internet"
_META_SCHEDULE = "MetaSchedule tuning: out of scope here"
_USMP = (
    "USMP (memory pools, tvm.tir.usmp): pytvm's AOT plans one static workspace with its arena "
    "planner"
)
_AOT_PASSES = "TVM's internal TIR passes of AOT lowering (not user API): pytvm lowers differently"
_ETHOS_CMSIS = "Ethos-U / CMSIS-NN offloading (ethosu.vela, TensorFlow, tflite): out of scope"

#: file name -> {test id pattern (fnmatch, on the node id or name): reason}. A whole file is
#: ``"*"``. Only the reasons above.
SKIPS: dict[str, dict[str, str]] = {
    "test_te_schedule_tensorize.py": {"*": _TENSORIZE},
    "test_te_schedule_tensor_core.py": {"*": _GPU},
    "test_te_schedule_postproc_rewrite_for_tensor_core.py": {"*": _GPU},
    "test_topi_batch_matmul_tensorcore.py": {"*": _GPU},
    "test_topi_conv2d_hwnc_tensorcore.py": {"*": _GPU},
    "test_topi_conv2d_nhwc_tensorcore.py": {"*": _GPU},
    "test_topi_conv3d_ndhwc_tensorcore.py": {"*": _GPU},
    "test_topi_dense_tensorcore.py": {"*": _GPU},
    "test_topi_conv2d_tensordot_opts.py": {"*": _MICRO},
    "from_onnx.py": {"*": _INTERNET},
    "test_micro_ms_tuning.py": {"*": _META_SCHEDULE},
    "test_crt_aot_usmp.py": {"*": _USMP},
    "test_aot_create_executor_metadata.py": {"*": _AOT_PASSES},
    "test_aot_create_function_metadata.py": {"*": _AOT_PASSES},
    "test_pass_aot_lower_main.py": {"*": _AOT_PASSES},
    "test_aot_legalize_packed_call.py": {"*": _AOT_PASSES},
    "test_c_device_api.py": {"*": _ETHOS_CMSIS},
    "test_crt_forward_declarations.py": {"*": _ETHOS_CMSIS},
    "test_autotvm_dispatch_context.py": {"test_tophub_kinds_match": _INTERNET},
    "test_autotvm_feature.py": {"test_feature_shape": _GPU},
    "test_autotvm_task_extraction.py": {"test_task_extraction_for_dense_int8_cuda": _GPU},
}


@dataclass(frozen=True)
class FileResult:
    """The rows of one file, and a note when it did not run to the end."""

    name: str
    rows: list[Row]
    note: str = ""


def _skips_for(name: str) -> dict[str, str]:
    return SKIPS.get(name, {})


def _copy_renamed(files: list[tuple[Path, Path]]) -> None:
    for source, destination in files:
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_text(substitute(source.read_text()))


def _run_test_file(
    source: Path, helpers: list[tuple[Path, str]], root: Path, limit: int, total: int, tmp: Path
) -> FileResult:
    work = Path(tempfile.mkdtemp(prefix=source.stem + "_", dir=tmp))
    _copy_renamed([(source, work / source.name), *[(p, work / rel) for p, rel in helpers]])
    skips = _skips_for(source.name)
    where = write_conftest(work, limit=limit, skips=skips, plugins=["pytvm.testing.plugin"])
    if skips.get("*"):
        return FileResult(source.name, [Row(source.name, "skipped", skips["*"])])
    run = run_pytest(
        work,
        [source.name],
        pytvm_root=root,
        total_timeout=total,
        extra_env={"TVM_TEST_TARGETS": "llvm"},
        quiet_output=True,
    )
    ok, used = imported_pytvm_ok(where, root)
    rows = run.rows
    note = run.note
    if where.exists() and not ok:
        note = f"imported pytvm from {used}, not from {root}"
        rows = [Row(r.test, "error", note) for r in rows] or [Row(source.name, "error", note)]
    if not rows:
        rows = [Row(source.name, "error", note or "no tests ran")]
    return FileResult(source.name, rows, note)


def _run_tutorial(source: Path, root: Path, total: int, tmp: Path) -> FileResult:
    skips = _skips_for(source.name)
    if skips.get("*"):
        return FileResult(source.name, [Row(source.stem, "skipped", skips["*"])])
    if re.search(r"^# sphinx_gallery_requires_cuda = True", source.read_text(), re.M):
        why = f"{_GPU}; the tutorial declares sphinx_gallery_requires_cuda"
        return FileResult(source.name, [Row(source.stem, "skipped", why)])
    work = Path(tempfile.mkdtemp(prefix=source.stem + "_", dir=tmp))
    script = work / source.name
    script.write_text(substitute(source.read_text()))
    env = dict(os.environ, PYTHONPATH=str(root), TVM_TEST_TARGETS="llvm", MPLBACKEND="Agg")
    try:
        proc = subprocess.run(
            [sys.executable, script.name], cwd=work, env=env, capture_output=True, text=True,
            timeout=total, start_new_session=True, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return FileResult(source.name, [Row(source.stem, "failed", f"ran past {total} s")])
    if proc.returncode == 0:
        return FileResult(source.name, [Row(source.stem, "passed")])
    lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
    return FileResult(source.name, [Row(source.stem, "failed", (lines or ["?"])[-1][:300])])


def collect(tree: Path, only: str | None) -> tuple[list[Path], list[tuple[Path, str]], list[Path]]:
    """The test files, the helper modules (with where each goes beside a copied test file) and
    the tutorials found under ``tree``, filtered by ``only``.
    """
    tests = sorted(p for g in TEST_GLOBS for p in tree.glob(g))
    helpers = [(p, p.name) for g in HELPER_GLOBS for p in sorted(tree.glob(g))]
    for folder, dest in HELPER_TREES.items():
        helpers += [(p, f"{dest}/{p.name}") for p in sorted((tree / folder).glob("*.py"))]
    tutorials = [tree / t for t in TUTORIALS if (tree / t).exists()]
    if only:
        tests = [p for p in tests if fnmatch.fnmatch(p.name, only)]
        tutorials = [p for p in tutorials if fnmatch.fnmatch(p.name, only)]
    return tests, helpers, tutorials


def summarize(results: list[FileResult], top: int = 25, verbose: bool = False) -> dict[str, int]:
    """Print the per-file table, the totals and the most frequent failures; return the totals."""
    kinds = ("passed", "failed", "error", "skipped")
    width = max([len(r.name) for r in results] + [10])
    print(f"\n{'file':<{width}}  " + "  ".join(f"{k:>7}" for k in kinds))
    totals = collections.Counter[str]()
    failures = collections.Counter[str]()
    for result in results:
        counts = collections.Counter(r.outcome for r in result.rows)
        totals.update(counts)
        print(f"{result.name:<{width}}  " + "  ".join(f"{counts[k]:>7}" for k in kinds)
              + (f"  ({result.note})" if result.note else ""))  # fmt: skip
        for r in result.rows:
            if r.outcome in ("failed", "error"):
                failures[r.detail] += 1
            if verbose:
                print(f"    {r.test}  {r.outcome}" + (f" ({r.detail})" if r.detail else ""))
    print(f"{'total':<{width}}  " + "  ".join(f"{totals[k]:>7}" for k in kinds))
    ran = totals["passed"] + totals["failed"] + totals["error"]
    if ran:
        print(f"\npassed {totals['passed']} of {ran} tests not skipped "
              f"({100.0 * totals['passed'] / ran:.1f}%)")  # fmt: skip
    if failures:
        print(f"\nmost frequent failures (top {top}):")
        for detail, n in failures.most_common(top):
            print(f"{n:>6}  {detail}")
    return dict(totals)


def main(argv: list[str] | None = None) -> int:
    """Run the files found under the TVM tree, print the tables; return the exit status."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("tvm_tree", type=Path, help="a TVM v0.18 source tree (or its parts)")
    parser.add_argument("--pytvm-root", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--jobs", type=int, default=2, help="files run at once")
    parser.add_argument("--only", help="run only files whose name matches this glob")
    parser.add_argument("--per-test-timeout", type=int, default=120)
    parser.add_argument("--per-file-timeout", type=int, default=1800)
    parser.add_argument("--json", type=Path, help="write every row here")
    parser.add_argument("--top", type=int, default=25, help="how many failure lines to list")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every test's row")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args(argv)

    root = args.pytvm_root.resolve()
    tests, helpers, tutorials = collect(args.tvm_tree, args.only)
    if not tests and not tutorials:
        print(f"no TVM test files or tutorials under {args.tvm_tree}")
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="pytvm_tvm_compiler_"))
    try:
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futures = [
                pool.submit(_run_test_file, p, helpers, root, args.per_test_timeout,
                            args.per_file_timeout, tmp)
                for p in tests
            ] + [
                pool.submit(_run_tutorial, p, root, args.per_file_timeout, tmp)
                for p in tutorials
            ]  # fmt: skip
            results = [f.result() for f in futures]
        totals = summarize(results, args.top, args.verbose)
        if args.json:
            args.json.write_text(json.dumps(
                {r.name: [row.__dict__ for row in r.rows] for r in results}, indent=1
            ))  # fmt: skip
        return 1 if totals.get("failed") or totals.get("error") else 0
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
