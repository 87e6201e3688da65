"""Matrix products of text models at 1 and 2 threads: pytvm against ONNX Runtime.

GPT-2's tied LM head (768 -> 50257, a 154 MB constant weight) at 1, 16 and 64 tokens, BERT's
feed-forward and projection products (128 tokens) and an attention batch matmul, each as a
one-node ONNX model measured by :func:`ops.measure` in a worker pinned with ``taskset``
(1 thread: core 1; 2 threads: cores 0,1; pytvm and ONNX Runtime given the same thread count).
Run: ``python bench/matrix_products.py --threads 1 2`` (``--only 50257``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile

from _harness import run_worker
from ops import Case, _dense, _matmul, _row, measure
from real_models import CORES, cpu_description

CASES: tuple[Case, ...] = (
    _dense(1, 768, 50257),
    _dense(16, 768, 50257),
    _dense(64, 768, 50257),
    _dense(128, 512, 2048),
    _dense(128, 768, 3072),
    _dense(128, 3072, 768),
    _matmul(8, 128, 64, 128),
)


def main() -> None:
    """Measure every case (or ``--only`` ones) at each thread count and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", nargs="+", help="cases whose name contains one of these")
    parser.add_argument("--threads", nargs="+", type=int, default=[1, 2], choices=sorted(CORES))
    parser.add_argument("--min-seconds", type=float, default=1.0, help="time per case and peer")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.worker:
        case = next(c for c in CASES if c.name == opts.worker)
        print(json.dumps(measure(case, opts.threads[0], opts.min_seconds)))
        return
    cases = [c for c in CASES if not opts.only or any(o in c.name for o in opts.only)]
    print(f"CPU: {cpu_description()}")
    for threads in opts.threads:
        print(f"\n{threads} thread(s), cores {CORES[threads]}; ratio = pytvm / ONNX Runtime")
        print(f"{'case':46} {'pytvm ms':>9} {'ORT ms':>9} {'pytvm GF/s':>10} {'ORT GF/s':>9}")
        for case in cases:
            argv = [sys.executable, __file__, "--worker", case.name, "--threads", str(threads)]
            argv += ["--min-seconds", str(opts.min_seconds)]
            with tempfile.TemporaryDirectory(prefix="pytvm-cold-cache-") as cache:
                got = run_worker(argv, threads, CORES[threads], {"XDG_CACHE_HOME": cache})
            r = {"note": f"worker died: {got}"[:160]} if isinstance(got, str) else got
            print(_row(case, r, 1e-4), flush=True)


if __name__ == "__main__":
    main()
