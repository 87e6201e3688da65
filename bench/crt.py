"""The C runtime and its device paths: code size, call latency and copy bandwidth, pinned cores.

Sections:

1. code size: ``.text``, ``.data`` and ``.bss`` (``size``, Berkeley format: text counts
   ``.rodata`` too) of the object files of the CRT core (``CRT_LIB_SRCS``), the MinRPC server
   (``MINRPC_SRCS``) and the serial framing and session layer (``SERIAL_SRCS``), built with
   ``-Os`` and a small configuration (``-DTVM_CRT_MEMORY_POOL_LOG2=16``: a 64 KiB pool) by gcc
   and by clang. The file lists and flags are the CRT Makefile's own (read from it with
   ``make --eval``), less ``-Werror``. Also the largest ``.bss`` symbols (the memory pool) and
   the state an integrator places itself (``pytvm_minrpc_server``, the serial stream);
   then one row per target (``x86-64``, ``cortex-m4``) and configuration (``minimal``, ``full``):
   ``.text`` + ``.rodata`` of the device image (CRT + MinRPC + framing/session + a bare-metal
   main, one object linked with ``--gc-sections``; ``make -C pytvm/src/crt crt-image-sizes``),
   and what it takes from the C library; the cortex-m4 rows need ``arm-none-eabi-gcc``
   (``make crt-cross-compiler``);
2. round trip of ``pytvm.device.echo(1)``, us/call, over each path:
   one hop    the client straight to ``pytvm-device`` over two pipes (``rpc.PopenSession``);
   board      two hops, host -> board -> accelerator: a pytvm board server
              (``python -m pytvm.contrib.hexagon.board``) whose session constructor
              ``pytvm.hexagon.create_session`` starts ``pytvm-device --hexagon`` behind it;
   server     two hops through a plain pytvm RPC server and ``["rpc.PopenSession", binary]``;
   tcp only   reference: the same plain server's own ``rpc.test.addone`` (the TCP hop alone);
3. copy bandwidth host->device (``.copyfrom``) and device->host (``.numpy()``), MiB/s, for
   arrays on ``cpu()`` and ``hexagon(0)`` (the emulator's own pool) on each path, with the
   two-hop figures as ratios of the one-hop figure on the same device. ``pytvm-device``'s CPU
   pool is 64 MiB (``TVM_CRT_MEMORY_POOL_LOG2=26``), so 64 MiB arrays exist only on hexagon
   (a 128 MiB pool) and on the plain server; other 64 MiB cells read n/a;
4. session setup: from opening the session to the first ``echo`` returning, ms.

The board server, the plain server and (through a ``taskset`` wrapper script) every one-hop
``pytvm-device`` run on the first usable core, started with ``taskset -c``; what they start
(the server's per-session worker, the device behind it) inherits that core. This (client)
process pins itself with ``os.sched_setaffinity`` to that same core, then to another one.
Figures 2-3 are the best of several timed batches, the paths' batches taken in turn. Run:
``python bench/crt.py``; ``--quick`` is a smoke run (tiny sizes and counts, the client on the
second core only, servers allowed on every core).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import fcntl
import gc
import math
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from _harness import (
    MIB,
    REPO,
    Fleet,
    Proc,
    choose_pinnings,
    cpu_model,
    interleaved_best,
    mib_per_s_by_op,
    pin,
    size_name,
)

CRT_DIR = REPO / "pytvm" / "src" / "crt"
F_GETPIPE_SZ = getattr(fcntl, "F_GETPIPE_SZ", 1032)  # Linux
COMPONENTS = (
    ("CRT core", "CRT_LIB_SRCS"),
    ("MinRPC", "MINRPC_SRCS"),
    ("serial framing+session", "SERIAL_SRCS"),
)
IMAGE_LINE = re.compile(
    r"^image (\S+) (\S+) text=(\d+) rodata=(\d+) total=(\d+) needs=(\S*)$", re.MULTILINE
)
ECHO = "pytvm.device.echo"
CONSTRUCTOR = "pytvm.hexagon.create_session"

# ---------------------------------------------------------------------------- subprocesses


class _Fleet(Fleet):
    """The board, the plain server and the pipe peers of the device benchmark."""

    def __init__(self, cores: str, workdir: Path) -> None:
        super().__init__(cores, workdir)
        self.plain: list[subprocess.Popen[bytes]] = []

    def board(self) -> Proc:
        argv = [sys.executable, "-m", "pytvm.contrib.hexagon.board", "--host", "127.0.0.1"]
        argv += ["--port", "0", "--port-end", "1"]
        return self.start("board", argv, r"board server listening on [\d.]+:(\d+)")

    def pinned_binary(self, binary: Path, name: str, *flags: str) -> Path:
        """A wrapper script that starts ``binary`` under ``taskset -c <cores>`` (the file
        descriptors PopenSession passes survive the two ``exec``).
        """
        path = self.workdir / name
        args = " ".join(flags)
        path.write_text(f'#!/bin/sh\nexec taskset -c {self.cores} "{binary}" {args} "$@"\n')
        path.chmod(0o755)
        return path

    def pipe_echo(self) -> subprocess.Popen[bytes]:
        """``cat`` between two pipes: the floor of a pipe round trip (section 2)."""
        proc = subprocess.Popen(
            ["taskset", "-c", self.cores, "cat"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            bufsize=0,
            start_new_session=True,
        )
        self.plain.append(proc)
        return proc

    def stop_all(self) -> None:
        super().stop_all()
        for popen in self.plain:
            for pipe in (popen.stdin, popen.stdout):
                if pipe is not None:
                    pipe.close()
            try:
                popen.wait(5)
            except subprocess.TimeoutExpired:
                popen.kill()
                popen.wait(5)


# ---------------------------------------------------------------------------- 1. code size


def _make_vars(names: list[str], pool_log2: int, workdir: Path) -> dict[str, str]:
    """Variables of the CRT Makefile and its fragments, for an ``-Os`` build."""
    cmd = ["make", "-s", "-C", str(CRT_DIR), f"O={workdir / 'make'}", "OPT=-Os"]
    cmd += [f"CRT_CONFIG_FLAGS=-DTVM_CRT_MEMORY_POOL_LOG2={pool_log2}"]
    cmd += ["--eval", "print-%: ; @echo '$*=$($*)'", *(f"print-{n}" for n in names)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    found = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    missing = [n for n in names if not found.get(n, "").strip()]
    if missing:
        raise RuntimeError(f"the CRT Makefile defines no {missing}; make printed:\n{out}")
    return found


def _cc_version(cc: str) -> str:
    out = subprocess.run([cc, "--version"], capture_output=True, text=True, check=True).stdout
    first = out.splitlines()[0]
    match = re.search(r"(\d+\.\d+(\.\d+)?)", first)
    return f"{Path(cc).name} {match.group(1) if match else first}"


def _sizes(objs: list[Path]) -> dict[Path, tuple[int, int, int]]:
    """``{object: (text, data, bss)}`` from ``size`` (Berkeley format)."""
    out = subprocess.run(["size", *map(str, objs)], capture_output=True, text=True, check=True)
    result: dict[Path, tuple[int, int, int]] = {}
    for line in out.stdout.splitlines()[1:]:
        fields = line.split(None, 5)
        result[Path(fields[5])] = (int(fields[0]), int(fields[1]), int(fields[2]))
    return result


def _bss_symbols(objs: list[Path]) -> list[tuple[int, str, str]]:
    """``(size, symbol, object)`` of every ``.bss`` symbol of ``objs``, largest first."""
    found = []
    for obj in objs:
        out = subprocess.run(["nm", "-S", str(obj)], capture_output=True, text=True, check=True)
        for line in out.stdout.splitlines():
            fields = line.split()
            if len(fields) == 4 and fields[2] in ("b", "B", "C"):
                found.append((int(fields[1], 16), fields[3], obj.stem))
    return sorted(found, reverse=True)


_PROBE_C = r"""
#include "pytvm_crt/minrpc_server.h"
#include "pytvm_crt/serial_framing.h"
#include "pytvm_crt/serial_stream.h"
char probe_pytvm_minrpc_server[sizeof(pytvm_minrpc_server)];
char probe_pytvm_serial_stream[sizeof(pytvm_serial_stream)];
char probe_PYTVM_SERIAL_DEFAULT_MAX_PAYLOAD[PYTVM_SERIAL_DEFAULT_MAX_PAYLOAD];
char probe_MINRPC_MAX_PACKET[MINRPC_MAX_PACKET];
char probe_MINRPC_STAGE_BYTES[MINRPC_STAGE_BYTES];
"""


def _probe(cc: str, flags: list[str], workdir: Path) -> dict[str, int]:
    """Sizes of types and limits, read back from ``nm`` (no program is run)."""
    src = workdir / "probe.c"
    src.write_text(_PROBE_C)
    obj = workdir / f"probe-{Path(cc).name}.o"
    subprocess.run([cc, *flags, "-c", str(src), "-o", str(obj)], check=True, capture_output=True)
    return {name[len("probe_") :]: size for size, name, _ in _bss_symbols([obj])}


def _code_size(
    compilers: list[str], pool_log2: int, workdir: Path, jobs: int
) -> tuple[dict[str, Any], list[str], dict[str, list[Path]]]:
    """Compile every component with each compiler; return the figures, the flags and sources."""
    made = _make_vars(["CRT_CFLAGS", *(var for _, var in COMPONENTS)], pool_log2, workdir)
    flags = [f for f in made["CRT_CFLAGS"].split() if f != "-Werror"] + [f"-I{CRT_DIR}"]
    sources = {name: [Path(p) for p in made[var].split()] for name, var in COMPONENTS}

    def compile_one(cc: str, src: Path) -> Path:
        obj = workdir / Path(cc).name / src.relative_to(CRT_DIR).with_suffix(".o")
        obj.parent.mkdir(parents=True, exist_ok=True)
        cmd = [cc, *flags, "-c", str(src), "-o", str(obj)]
        result = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{result.stderr}")
        return obj

    figures: dict[str, Any] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {
            (cc, name): [pool.submit(compile_one, cc, src) for src in srcs]
            for cc in compilers
            for name, srcs in sources.items()
        }
        objs = {key: [f.result() for f in fs] for key, fs in futures.items()}
    for cc in compilers:
        every = [obj for name in sources for obj in objs[cc, name]]
        sizes = _sizes(every)
        parts = {
            name: tuple(sum(sizes[o][i] for o in objs[cc, name]) for i in range(3))
            for name in sources
        }
        parts["total"] = tuple(sum(p[i] for p in parts.values()) for i in range(3))
        figures[cc] = {
            "version": _cc_version(cc),
            "parts": parts,
            "bss": _bss_symbols(every),
            "probe": _probe(cc, flags, workdir),
        }
    return figures, flags, sources


def _report_code_size(
    figures: dict[str, Any], flags: list[str], sources: dict[str, list[Path]], pool_log2: int
) -> None:
    compilers = list(figures)
    print(
        f"\n1. code size, bytes (`size`, Berkeley: text includes .rodata), -Os, "
        f"TVM_CRT_MEMORY_POOL_LOG2={pool_log2} ({(1 << pool_log2) // 1024} KiB pool), every "
        "other limit the default of crt_config.h / minrpc_server.h / serial_framing.h"
    )
    print(
        "compile line (the Makefile's CRT_CFLAGS with OPT=-Os, less -Werror): <cc> "
        + " ".join(f.replace(str(REPO) + "/", "") for f in flags)
    )
    files = "; ".join(
        f"{name}: " + " ".join(p.relative_to(CRT_DIR).as_posix() for p in srcs)
        for name, srcs in sources.items()
    )
    print(f"sources (pytvm/src/crt/): {files}")
    columns = [
        f"{figures[cc]['version'].split()[0]} {sec}"
        for cc in compilers
        for sec in (".text", ".data", ".bss")
    ]
    rows: list[tuple[str, list[float | None]]] = []
    names = [*(name for name, _ in COMPONENTS), "total"]
    for name in names:
        values: list[float | None] = []
        for cc in compilers:
            values += list(figures[cc]["parts"][name])
        if len(compilers) == 2:
            a, b = (figures[cc]["parts"][name][0] for cc in compilers)
            values.append(b / a if a else None)
        label = name if name == "total" else f"{name} ({len(sources[name])} files)"
        rows.append((label, values))
    fmts = ["d"] * (3 * len(compilers))
    if len(compilers) == 2:
        columns.append(f"{columns[3].split()[0]}/{columns[0].split()[0]} text")
        fmts.append(".2f")
    _table("", columns, rows, fmts, width=11)
    for cc in compilers:
        fig = figures[cc]
        bss_total = fig["parts"]["total"][2]
        top = ", ".join(
            f"{sym} ({obj}.o) {size} = {100 * size / bss_total:.1f}%"
            for size, sym, obj in fig["bss"][:3]
        )
        print(f"{fig['version']}: .bss {bss_total}; largest: {top}")
    fig = figures[compilers[0]]
    pool = sum(size for size, sym, obj in fig["bss"] if obj == "page_allocator")
    print(
        f".bss is dominated by the memory pool: page_allocator.o's {pool} B (g_pool_storage, "
        f"the pool plus one page of alignment slack, and its page table) are "
        f"{100 * pool / fig['parts']['total'][2]:.0f}% of it ({fig['version']}); it scales as "
        f"2^TVM_CRT_MEMORY_POOL_LOG2 (pytvm-device uses 26: 64 MiB)"
    )
    probe = fig["probe"]
    print(
        f"not in the figures above: the state an integrator places itself -- "
        f"pytvm_minrpc_server {probe['pytvm_minrpc_server']} B (rx buffer, allocation and "
        "handle tables), "
        f"pytvm_serial_stream {probe['pytvm_serial_stream']} B + its frame buffer "
        f"{probe['PYTVM_SERIAL_DEFAULT_MAX_PAYLOAD']} B (device_framing.c); and MinRPC's "
        f"per-packet arena, taken from the pool unless given: up to MINRPC_MAX_PACKET "
        f"{probe['MINRPC_MAX_PACKET']} B + MINRPC_STAGE_BYTES {probe['MINRPC_STAGE_BYTES']} B "
        "(so this 64 KiB-pool configuration takes packets of a few tens of KiB only)"
    )
    sys.stdout.flush()


def _image_sizes(workdir: Path) -> list[tuple[str, str, int, int, int, str]]:
    """``(target, config, text, rodata, total, needs)`` per device image the Makefile builds."""
    targets = ["image-size-x86-64-full", "image-size-x86-64-minimal"]
    if shutil.which("arm-none-eabi-gcc"):
        targets += ["image-size-cortex-m4-full", "image-size-cortex-m4-minimal"]
    cmd = ["make", "-s", "-C", str(CRT_DIR), f"O={workdir / 'image'}", *targets]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    rows = [
        (t, c, int(text), int(ro), int(total), needs)
        for t, c, text, ro, total, needs in IMAGE_LINE.findall(out)
    ]
    return sorted(rows, key=lambda r: (r[0] != "x86-64", r[1] != "minimal"))


def _report_image_sizes(rows: list[tuple[str, str, int, int, int, str]]) -> None:
    print(
        "\ndevice image, bytes: CRT + MinRPC + serial framing/session + bare-metal main "
        "(image/board_image.c), -ffunction-sections with -Os (full) or -Oz -fno-jump-tables "
        "(minimal), one object linked with --gc-sections from main (C library not included: "
        "`needs`)"
    )
    header = (
        f"{'target':10} {'config':8} {'.text':>7} {'.rodata':>8} {'total':>7} {'KiB':>6}  needs"
    )
    print(header)
    print("-" * len(header))
    for target, config, text, rodata, total, needs in rows:
        print(
            f"{target:10} {config:8} {text:7d} {rodata:8d} {total:7d} {total / 1024:6.1f}  {needs}"
        )
    if not any(r[0] == "cortex-m4" for r in rows):
        print("cortex-m4: n/a (no arm-none-eabi-gcc; `make crt-cross-compiler` installs it)")
    sys.stdout.flush()


# ---------------------------------------------------------------------------- timing


def _close(sess: Any) -> None:
    close = getattr(sess, "close", None)
    if close is not None:
        close()
    gc.collect()


# ---------------------------------------------------------------------------- the paths


class _Paths:
    """How to open a session on each path; ``open_all`` keeps one of each for sections 2-3."""

    # (column, session, device) of section 3; session keys are those of ``opener``
    ARRAYS = (
        ("1hop cpu", "one hop", "cpu"),
        ("1hop hex", "one hop hex", "hexagon"),
        ("board cpu", "board", "cpu"),
        ("board hex", "board", "hexagon"),
        ("srv cpu", "server", "cpu"),
        ("tcp only", "tcp only", "cpu"),
    )
    # two-hop column -> the one-hop column it is compared with
    RATIOS = (("board cpu", "1hop cpu"), ("board hex", "1hop hex"), ("srv cpu", "1hop cpu"))

    def __init__(
        self, binary: Path, one_hop: Path, one_hop_hex: Path, board: int, server: int
    ) -> None:
        from pytvm import rpc

        self.rpc = rpc
        self.binary, self.one_hop, self.one_hop_hex = binary, one_hop, one_hop_hex
        self.board, self.server = board, server
        self.sessions: dict[str, Any] = {}

    def opener(self, key: str) -> Callable[[], Any]:
        rpc = self.rpc
        return {
            "one hop": lambda: rpc.PopenSession(str(self.one_hop)),
            "one hop hex": lambda: rpc.PopenSession(str(self.one_hop_hex)),
            "board": lambda: rpc.connect(
                "127.0.0.1", self.board, session_constructor_args=[CONSTRUCTOR, "bench", 16384]
            ),
            "server": lambda: rpc.connect(
                "127.0.0.1",
                self.server,
                session_constructor_args=["rpc.PopenSession", str(self.binary)],
            ),
            "tcp only": lambda: rpc.connect("127.0.0.1", self.server),
        }[key]

    def open_all(self) -> None:
        for key in ("one hop", "one hop hex", "board", "server", "tcp only"):
            self.sessions[key] = self.opener(key)()

    def close_all(self) -> None:
        for sess in self.sessions.values():
            _close(sess)
        self.sessions.clear()

    def device(self, session: str, kind: str) -> Any:
        sess = self.sessions[session]
        return sess.hexagon(0) if kind == "hexagon" else sess.cpu()


# the rows of section 2: (label, session, function); "pipe floor" is the `cat` peer
_LATENCY_ROWS = (
    ("one hop: client -> pytvm-device (pipes)", "one hop", ECHO),
    ("board: client -> board -> device --hexagon", "board", ECHO),
    ("server: client -> server -> device", "server", ECHO),
    ("tcp only: client -> server addone", "tcp only", "rpc.test.addone"),
    ("pipe floor: 1 byte to `cat` and back", "pipe floor", ""),
)


def _latency(
    paths: _Paths, cat: subprocess.Popen[bytes], opts: argparse.Namespace
) -> dict[str, float]:
    """``{session: us/call}`` of the rows of ``_LATENCY_ROWS``, batches taken in turn."""
    fns: dict[str, Callable[[], object]] = {}
    for _, key, name in _LATENCY_ROWS:
        if key == "pipe floor":
            continue
        func = paths.sessions[key].get_function(name)
        expect = 2 if name == "rpc.test.addone" else 1
        assert func(1) == expect, (key, name)
        fns[key] = lambda f=func: f(1)
    assert cat.stdin is not None and cat.stdout is not None
    to_cat, from_cat = cat.stdin.fileno(), cat.stdout.fileno()

    def pipe_round_trip() -> None:
        os.write(to_cat, b"x")
        if os.read(from_cat, 1) != b"x":
            raise RuntimeError("the cat peer answered something else")

    fns["pipe floor"] = pipe_round_trip
    best = interleaved_best(fns, batch_s=opts.batch_s, rounds=opts.rounds, budget_s=opts.budget_s)
    return {key: t * 1e6 for key, t in best.items()}


_COPY_OPS = ("host->device copyfrom", "device->host numpy()")


def _bandwidths(
    paths: _Paths, sizes: list[int], opts: argparse.Namespace
) -> dict[tuple[str, str, int], float | None]:
    """``{(column, op, size): MiB/s}``; None where the array does not fit the device's pool."""
    import pytvm

    out: dict[tuple[str, str, int], float | None] = {}
    rng = np.random.default_rng(0)
    for size in sizes:
        host = rng.integers(0, 256, size, dtype=np.uint8)
        fns: dict[tuple[str, str, int], Callable[[], object]] = {}
        remotes = {}
        for column, session, kind in _Paths.ARRAYS:
            try:
                remote = pytvm.nd.empty((size,), "uint8", paths.device(session, kind))
            except Exception as err:  # the pool is too small for it
                if "out of memory" not in str(err) and "alloc" not in str(err).lower():
                    raise
                out[column, _COPY_OPS[0], size] = out[column, _COPY_OPS[1], size] = None
                continue
            remotes[column] = remote
            remote.copyfrom(host)
            assert np.array_equal(remote.numpy(), host), f"{column}: round trip differs"
            fns[column, _COPY_OPS[0], size] = lambda r=remote: r.copyfrom(host)
            fns[column, _COPY_OPS[1], size] = remote.numpy
        out.update(mib_per_s_by_op(fns, _COPY_OPS, size, opts))
        del fns, remotes
        gc.collect()
    return out


_SETUP_ROWS = (
    ("one hop (PopenSession, taskset wrapper)", "one hop", ECHO),
    ("board (connect + create_session)", "board", ECHO),
    ("server (connect + rpc.PopenSession)", "server", ECHO),
    ("tcp only (connect)", "tcp only", "rpc.test.addone"),
)


def _setup_ms(paths: _Paths, reps: int) -> dict[str, list[float]]:
    """Milliseconds from opening each kind of session to its first call returning."""
    out: dict[str, list[float]] = {key: [] for _, key, _ in _SETUP_ROWS}
    for _ in range(reps):
        for _, key, name in _SETUP_ROWS:
            time.sleep(0.1)  # let a server fork its spare worker
            t0 = time.perf_counter()
            sess = paths.opener(key)()
            sess.get_function(name)(1)
            out[key].append((time.perf_counter() - t0) * 1e3)
            _close(sess)
            del sess
    return out


# ---------------------------------------------------------------------------- report


def _table(
    title: str,
    columns: list[str],
    rows: list[tuple[str, list[float | None]]],
    fmts: list[str],
    width: int = 10,
) -> None:
    """Print ``rows``, column ``i`` in ``fmts[i]``; None prints as n/a."""
    name_width = max([28, *(len(name) for name, _ in rows)])
    width = max([width, *(len(c) for c in columns)])
    if title:
        print(f"\n{title}")
    header = f"{'case':{name_width}}" + "".join(f" {c:>{width}}" for c in columns)
    print(header)
    print("-" * len(header))
    for name, values in rows:
        cells = "".join(
            f" {'n/a':>{width}}" if v is None or math.isnan(v) else f" {v:>{width}{fmt}}"
            for v, fmt in zip(values, fmts)
        )
        print(f"{name:{name_width}}{cells}")
    sys.stdout.flush()


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or not b else a / b


def main() -> None:
    """Parse the options, start the fleet of pinned processes and print the report."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="tiny sizes and counts (smoke run)")
    parser.add_argument("--reps", type=int, default=5, help="session setup repetitions")
    parser.add_argument(
        "--pool-log2", type=int, default=16, help="TVM_CRT_MEMORY_POOL_LOG2 of section 1"
    )
    parser.add_argument(
        "--pinning",
        choices=("both", "same", "split"),
        help="client on the servers' core, on another core, or both in turn (default: both; "
        "--quick: split)",
    )
    opts = parser.parse_args()
    if opts.quick:
        opts.sizes, opts.batch_s, opts.rounds, opts.budget_s = [1024, 256 * 1024], 0.005, 2, 0.1
        opts.reps = min(opts.reps, 1)
        opts.pinning = opts.pinning or "split"
    else:
        opts.sizes = [1024, MIB, 16 * MIB, 64 * MIB]
        opts.batch_s, opts.rounds, opts.budget_s = 0.2, 5, 3.0
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    cores, pinnings = choose_pinnings(opts.pinning)
    server_core = cores[0]
    server_cores = ",".join(map(str, cores)) if opts.quick else str(server_core)
    with tempfile.TemporaryDirectory(prefix="pytvm-bench-crt-") as tmp:
        fleet = _Fleet(server_cores, Path(tmp))
        try:
            _run(fleet, pinnings, cores, opts)
        finally:
            fleet.stop_all()


def _run(
    fleet: _Fleet, pinnings: list[tuple[str, int]], cores: list[int], opts: argparse.Namespace
) -> None:
    """Start the board and server, take every section's figures and print the report."""
    from pytvm.crt import device_binary
    from pytvm.ffi.libinfo import find_cc

    binary = device_binary()  # built (once, cached) before the board or server asks for it
    device_cc = find_cc() or "cc"
    board = fleet.board()
    server = fleet.pytvm_server(popen_executables=[str(binary)])
    # meanwhile, on every core: the objects of section 1
    compilers = [cc for cc in ("gcc", "clang") if shutil.which(cc)]
    if not compilers:
        raise RuntimeError("section 1 needs gcc or clang")
    workdir = fleet.workdir / "size"
    workdir.mkdir()
    figures, flags, sources = _code_size(compilers, opts.pool_log2, workdir, len(cores))
    images = _image_sizes(workdir)
    paths = _Paths(
        binary,
        fleet.pinned_binary(binary, "pytvm-device-pinned"),
        fleet.pinned_binary(binary, "pytvm-device-hexagon-pinned", "--hexagon"),
        board.wait_ready(),
        server.wait_ready(),
    )
    pin(pinnings[-1][1])

    _print_header(fleet, pinnings, cores, figures, compilers, paths, device_cc)
    if opts.quick:
        print("--quick: tiny sizes and counts; the numbers mean nothing")

    _report_code_size(figures, flags, sources, opts.pool_log2)
    _report_image_sizes(images)

    cat = fleet.pipe_echo()
    assert cat.stdin is not None
    pipe_bytes = fcntl.fcntl(cat.stdin.fileno(), F_GETPIPE_SZ)
    paths.open_all()
    try:
        lat: dict[str, dict[str, float]] = {}
        bw: dict[str, dict[tuple[str, str, int], float | None]] = {}
        for pin_name, core in pinnings:
            pin(core)
            lat[pin_name] = _latency(paths, cat, opts)
            bw[pin_name] = _bandwidths(paths, opts.sizes, opts)
    finally:
        paths.close_all()

    _report_latency(lat, pinnings, opts)
    _report_bandwidth(bw, pinnings, opts, fleet.cores, pipe_bytes)
    _report_setup(paths, pinnings, opts)


def _print_header(
    fleet: _Fleet,
    pinnings: list[tuple[str, int]],
    cores: list[int],
    figures: dict[str, Any],
    compilers: list[str],
    paths: _Paths,
    device_cc: str,
) -> None:
    """The report's opening lines: machine, pinning, versions and the devices behind each hop."""
    import pytvm

    pin_text = ", ".join(f"{name}: client on core {core}" for name, core in pinnings)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print("C runtime (CRT) + MinRPC: code size, and device round trips over one and two hops")
    print(f"CPU: {cpu_model()}; {os.cpu_count()} cores, {len(cores)} usable; load average {load}")
    print(
        f"pinning: board server, plain server and one-hop pytvm-device `taskset -c {fleet.cores}` "
        f"(their workers and devices inherit it); the client (this process) "
        f"os.sched_setaffinity: {pin_text}"
    )
    print(
        f"versions: python {platform.python_version()}, numpy {np.__version__}, "
        f"pytvm {pytvm.__version__}, " + ", ".join(figures[cc]["version"] for cc in compilers)
    )
    infos = {}
    for key in ("one hop hex", "board"):
        probe = paths.opener(key)()
        infos[key] = probe.get_function("pytvm.device.info")()
        _close(probe)
        del probe
    print(
        f"pytvm-device: {paths.binary} (built by {_cc_version(device_cc)} with the Makefile's "
        f"default -O2 -g); one hop --hexagon: {infos['one hop hex']!r}; behind the board: "
        f"{infos['board']!r}"
    )


def _report_latency(
    lat: dict[str, dict[str, float]], pinnings: list[tuple[str, int]], opts: argparse.Namespace
) -> None:
    """Section 2: round trips per session, and where a two-hop call's time goes."""
    rows: list[tuple[str, list[float | None]]] = []
    for pin_name, _ in pinnings:
        for label, key, _ in _LATENCY_ROWS:
            value = lat[pin_name][key]
            rows.append((f"{pin_name}, {label}", [value, _ratio(value, lat[pin_name]["one hop"])]))
    _table(
        f"2. round trip, us/call (best of {opts.rounds} batches): pytvm.device.echo(1) on the "
        "device; 'tcp only': the plain server's own rpc.test.addone (no device behind it); "
        "'pipe floor': a pipe round trip with no RPC at all",
        ["us/call", "x one hop"],
        rows,
        [".1f", ".2f"],
    )
    if "same core" in lat:
        # the board's worker and its device always share the servers' core, so the device hop
        # of a two-hop call costs what a one-hop call costs with client and device on one core
        hop = lat["same core"]["one hop"]
        for pin_name, _ in pinnings:
            two, tcp = lat[pin_name]["board"], lat[pin_name]["tcp only"]
            print(
                f"{pin_name}: board {two:.1f} us = tcp only {tcp:.1f} + the device hop (one "
                f"hop on one core) {hop:.1f} + {two - tcp - hop:.1f} us left for the board's "
                "forwarding (its transport to the device included)"
            )


def _report_bandwidth(
    bw: dict[str, dict[tuple[str, str, int], float | None]],
    pinnings: list[tuple[str, int]],
    opts: argparse.Namespace,
    fleet_cores: str,
    pipe_bytes: int,
) -> None:
    """Section 3: copy bandwidth per device path, and two-hop over one-hop ratios."""
    columns = [c for c, _, _ in _Paths.ARRAYS]
    ratio_names = [f"{two.split()[0][0]}{two.split()[1][0]}/1hop" for two, _ in _Paths.RATIOS]
    rows: list[tuple[str, list[float | None]]] = []
    for pin_name, _ in pinnings:
        for op in _COPY_OPS:
            for size in opts.sizes:
                values = [bw[pin_name][c, op, size] for c in columns]
                values += [
                    _ratio(bw[pin_name][two, op, size], bw[pin_name][one, op, size])
                    for two, one in _Paths.RATIOS
                ]
                rows.append((f"{pin_name}, {op}, {size_name(size)}", values))
    _table(
        f"3. copy bandwidth, MiB/s (best of {opts.rounds} batches; of 2 where they take "
        f"{opts.budget_s:g} s); ratios: two-hop MiB/s over one-hop MiB/s on the same kind of "
        f"device ({', '.join(f'{n} = {t}/{o}' for n, (t, o) in zip(ratio_names, _Paths.RATIOS))})",
        columns + ratio_names,
        rows,
        [".1f"] * len(columns) + [".2f"] * len(ratio_names),
    )
    if any(v is None for b in bw.values() for v in b.values()):
        print("n/a: the array does not fit the device's pool (pytvm-device's CPU pool is 64 MiB)")
    if "2 cores" in bw and "," not in fleet_cores:
        print(
            f"2 cores: a one-hop device is on the other core from the client, while a two-hop "
            f"path's board worker and device share a core; a pipe holds {pipe_bytes // 1024} "
            f"KiB here, so a copy across cores over a pipe wakes its peer every "
            f"{pipe_bytes // 1024} KiB (a cross-core wake-up: see the pipe floor of section 2)"
        )


def _report_setup(paths: _Paths, pinnings: list[tuple[str, int]], opts: argparse.Namespace) -> None:
    """Section 4: measure and print session setup to first call under each pinning."""
    rows: list[tuple[str, list[float | None]]] = []
    for pin_name, core in pinnings:
        pin(core)
        setup = _setup_ms(paths, opts.reps)
        one_hop = statistics.median(setup["one hop"])
        for label, key, _ in _SETUP_ROWS:
            values = setup[key]
            stats = [statistics.median(values), min(values), max(values)]
            rows.append((f"{pin_name}, {label}", [*stats, _ratio(stats[0], one_hop)]))
    _table(
        f"4. session setup to first call, ms over {opts.reps} repetitions (open the session, "
        "get_function, call; closed after each); ratio: median over the one-hop median",
        ["median", "min", "max", "x one hop"],
        rows,
        [".2f", ".2f", ".2f", ".2f"],
    )


if __name__ == "__main__":
    main()
