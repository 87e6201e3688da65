"""RPC over loopback: pytvm against apache-tvm 0.27, same run, pinned cores.

Every server, tracker and socket peer is a subprocess started with ``taskset -c <server core>``
(the first usable core); this (client) process pins itself with ``os.sched_setaffinity`` first
to that same core, then to another one, so each figure is given for "client and server on one
core" and "client and server on two cores" (on loopback the two differ a lot: on one core a
round trip is two context switches, on two it is two cross-core wake-ups). Sections:

1. round-trip latency of ``rpc.test.addone(1)``, each client against each server, us/call;
   pytvm with its C codec (the default) and, as the "before" figure, with the pure-Python
   reference codec on both sides (``PYTVM_RPC_CODEC=python`` server, client switched with
   ``pytvm.rpc.wire._c_codec.use_c_codec``; every pytvm batch sets its client's codec first);
2. copy bandwidth host->remote (``.copyfrom`` into a remote array, and ``nd.array(x, dev)``,
   which allocates on the server too) and remote->host (``.numpy()``), MiB/s;
3. the plain-socket ceiling: ``sendall``/``recv_into`` of the largest size over loopback TCP
   between two pinned processes, beside the RPC copies of section 2;
4. tracker request to first call: from ``connect_tracker(...)`` and ``.request(key)`` to the
   first ``addone`` returning, each library with its own tracker and one registered server;
   median (and min, max) ms.

5. two hops over TCP: ``copyfrom`` and ``numpy()`` of the largest size through a pytvm server
   whose session forwards to another one (``session_constructor_args=["rpc.Connect", ...]``),
   beside one hop to such a server: the hop passing each copy on as it arrives (pytvm's
   forwarding) and, as the "before" figure, a hop that stores each copy packet whole first (the
   same server with ``copy_to_remote_streamed``/``copy_from_remote_streamed`` removed). These
   hop peers are plain serving loops (``pytvm.testing.rpc.thread_server``), one per path.

Figures 1-3 and 5 are the best of several timed batches, the two libraries' batches taken in turn.
A TVM client holds the GIL while it waits on its socket, so no pytvm server or tracker ever runs
in this process. Run: ``python bench/rpc.py``; ``--quick`` is a smoke run (tiny sizes and
counts, the client on the second core only, servers allowed on every core so they start fast).
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import signal
import socket
import statistics
import struct
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from _harness import (
    MIB,
    Fleet,
    Proc,
    choose_pinnings,
    cpu_model,
    free_port,
    interleaved_best,
    mib_per_s_by_op,
    pin,
    size_name,
)

KEY = "bench"
_HDR = struct.Struct("<cQ")  # raw peer request: op ("w": client writes, "r": client reads), size


# ---------------------------------------------------------------------------- subprocesses


class _Fleet(Fleet):
    """The servers and trackers of the RPC benchmark."""

    def pytvm_tracker(self, name: str) -> Proc:
        port = free_port()
        argv = [sys.executable, "-m", "pytvm.cli", "rpc", "tracker", "--host", "127.0.0.1"]
        argv += ["--port", str(port), "--port-end", str(port + 100), "--silent"]
        return self.start(name, argv, r"tracker listening on [\d.]+:(\d+)")

    def pytvm_python_codec_server(self, name: str) -> Proc:
        """A plain pytvm server on the pure-Python codec (``PYTVM_RPC_CODEC=python``)."""
        port = free_port()
        argv = ["env", "PYTVM_RPC_CODEC=python", sys.executable, "-m", "pytvm.cli", "rpc"]
        argv += ["server", "--host", "127.0.0.1", "--port", str(port), "--port-end"]
        argv += [str(port + 100), "--silent"]
        return self.start(name, argv, r"server listening on [\d.]+:(\d+)")

    def tvm_server(self, name: str, tracker: int | None = None) -> Proc:
        port = free_port()
        argv = [sys.executable, "-m", "tvm.exec.rpc_server", "--host", "127.0.0.1"]
        argv += ["--port", str(port), "--port-end", str(port + 100)]
        if tracker is not None:
            argv += ["--key", KEY, "--tracker", f"127.0.0.1:{tracker}"]
        return self.start(name, argv, r"bind to [\d.]+:(\d+)")

    def tvm_tracker(self, name: str) -> Proc:
        port = free_port()
        argv = [sys.executable, "-m", "tvm.exec.rpc_tracker", "--host", "127.0.0.1"]
        argv += ["--port", str(port), "--port-end", str(port + 100)]
        return self.start(name, argv, r"bind to [\d.]+:(\d+)")

    def hop_server(self, name: str, stored: bool = False) -> Proc:
        argv = [sys.executable, str(Path(__file__).resolve()), "--hop-server"]
        argv += ["stored" if stored else "streamed"]
        return self.start(name, argv, r"hop server listening on [\d.]+:(\d+)")

    def raw_peer(self, name: str) -> Proc:
        argv = [sys.executable, str(Path(__file__).resolve()), "--raw-peer"]
        return self.start(name, argv, r"raw peer listening on [\d.]+:(\d+)")


# ---------------------------------------------------------------------------- raw socket peer


def _recv_exact(sock: socket.socket, view: memoryview) -> None:
    got = 0
    while got < len(view):
        n = sock.recv_into(view[got:])
        if not n:
            raise ConnectionError("peer closed")
        got += n


def _raw_peer() -> None:
    """Serve raw transfers for section 3: "w" reads ``size`` bytes and acks one byte, "r" sends
    ``size`` bytes. One connection at a time, until killed.
    """
    listen = socket.socket()
    listen.bind(("127.0.0.1", 0))
    listen.listen(4)
    print(f"raw peer listening on 127.0.0.1:{listen.getsockname()[1]}", flush=True)
    buf = bytearray(1)
    while True:
        conn, _ = listen.accept()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with conn:
            head = memoryview(bytearray(_HDR.size))
            try:
                while True:
                    _recv_exact(conn, head)
                    op, size = _HDR.unpack(head)
                    if len(buf) < size:
                        buf = bytearray(size)
                    view = memoryview(buf)[:size]
                    if op == b"w":
                        _recv_exact(conn, view)
                        conn.sendall(b"k")
                    else:
                        conn.sendall(view)
            except ConnectionError:
                pass


def _hop_server(stored: bool) -> None:
    """Serve pytvm RPC sessions one after another until killed; ``stored``: forward copies the
    way a hop did before it streamed them (each packet received whole, then sent on).
    """
    from pytvm.rpc.sessions.forwarding_session import ForwardingSession
    from pytvm.testing.rpc import thread_server

    if stored:
        del ForwardingSession.copy_to_remote_streamed
        del ForwardingSession.copy_from_remote_streamed
    with thread_server(sessions=1 << 20) as port:
        print(f"hop server listening on 127.0.0.1:{port}", flush=True)
        signal.sigwait({signal.SIGTERM, signal.SIGINT})


# ---------------------------------------------------------------------------- timing


# ---------------------------------------------------------------------------- the two libraries


class _Lib:
    """What the benchmark needs from one library, so the sections read the same for both."""

    def __init__(self, name: str) -> None:
        self.name = name
        if name == "pytvm":
            import pytvm
            from pytvm import rpc

            self.rpc = rpc
            self.array: Callable[[np.ndarray, Any], Any] = pytvm.nd.array
            self.empty: Callable[[Any, str, Any], Any] = pytvm.nd.empty
            self.version = pytvm.__version__
        else:
            import tvm
            from tvm import rpc

            self.rpc = rpc
            self.array = tvm.runtime.tensor
            self.empty = tvm.runtime.empty
            self.version = tvm.__version__

    def connect(self, port: int) -> Any:
        return self.rpc.connect("127.0.0.1", port)

    def connect_tracker(self, port: int) -> Any:
        return self.rpc.connect_tracker("127.0.0.1", port)


def _close(sess: Any) -> None:
    close = getattr(sess, "close", None)
    if close is not None:
        close()
    gc.collect()


# ---------------------------------------------------------------------------- sections


def _latency(
    libs: dict[str, _Lib], servers: dict[str, int], opts: argparse.Namespace
) -> dict[tuple[str, str], float]:
    """``{(client, server): us/call}`` for the four pairs.

    A TVM server serves one session at a time, so the pairs run in two groups, the sessions of
    a group open together and their batches taken in turn: the three pairs that need at most one
    session on the TVM server, then the pytvm client with the TVM server.
    """
    group = [("pytvm", "pytvm"), ("tvm", "tvm"), ("tvm", "pytvm"), ("pytvm-py", "pytvm-py")]
    out = _latency_group(libs, servers, group, opts)
    gc.collect()  # a TVM session ends when its last reference goes
    out.update(_latency_group(libs, servers, [("pytvm", "tvm")], opts))
    gc.collect()
    return out


def _latency_group(
    libs: dict[str, _Lib],
    servers: dict[str, int],
    group: list[tuple[str, str]],
    opts: argparse.Namespace,
) -> dict[tuple[str, str], float]:
    from pytvm.rpc.wire._c_codec import use_c_codec

    sessions = {pair: _lib_of(libs, pair[0]).connect(servers[pair[1]]) for pair in group}
    try:
        calls = {pair: sess.get_function("rpc.test.addone") for pair, sess in sessions.items()}
        fns: dict[tuple[str, str], Callable[[], object]] = {}
        for pair, addone in calls.items():
            if pair[0].startswith("pytvm"):
                use_c = pair[0] == "pytvm"
                # the codec switch is part of every pytvm call, so both codecs pay for it
                fns[pair] = lambda f=addone, c=use_c: (use_c_codec(c), f(1))
            else:
                fns[pair] = lambda f=addone: f(1)
            fns[pair]()
            assert addone(1) == 2, pair
        best = interleaved_best(
            fns, batch_s=opts.batch_s, rounds=opts.rounds, budget_s=opts.budget_s
        )
        return {pair: t * 1e6 for pair, t in best.items()}
    finally:
        use_c_codec(True)
        for sess in sessions.values():
            _close(sess)


def _lib_of(libs: dict[str, _Lib], client: str) -> _Lib:
    """The library of a client name (``pytvm-py``: pytvm on its Python codec)."""
    return libs["pytvm" if client.startswith("pytvm") else client]


_COPY_OPS = ("host->remote copyfrom", "host->remote nd.array", "remote->host numpy()")


def _bandwidths(
    libs: dict[str, _Lib], servers: dict[str, int], sizes: list[int], opts: argparse.Namespace
) -> dict[tuple[str, str, int], float]:
    """``{(lib, op, size): MiB/s}``, each client with its own server, the two in turn."""
    out: dict[tuple[str, str, int], float] = {}
    sessions = {name: lib.connect(servers[name]) for name, lib in libs.items()}
    try:
        devs = {name: sess.cpu() for name, sess in sessions.items()}
        rng = np.random.default_rng(0)
        for size in sizes:
            host = rng.integers(0, 256, size, dtype=np.uint8)
            fns: dict[tuple[str, str, int], Callable[[], object]] = {}
            remotes = {}
            for name, lib in libs.items():
                dev = devs[name]
                remote = remotes[name] = lib.empty((size,), "uint8", dev)
                remote.copyfrom(host)
                assert np.array_equal(remote.numpy(), host), f"{name}: round trip differs"
                fns[name, _COPY_OPS[0], size] = lambda r=remote: r.copyfrom(host)
                fns[name, _COPY_OPS[1], size] = lambda lib=lib, dev=dev: lib.array(host, dev)
                fns[name, _COPY_OPS[2], size] = remote.numpy
            out.update(mib_per_s_by_op(fns, _COPY_OPS, size, opts))
            del fns, remotes
            gc.collect()
        del devs
        return out
    finally:
        for sess in sessions.values():
            _close(sess)


def _raw_bandwidth(port: int, size: int, opts: argparse.Namespace) -> dict[str, float]:
    """``{op: MiB/s}`` of plain ``sendall``/``recv_into`` with the raw peer."""
    buf = bytearray(size)
    view = memoryview(buf)
    ack = memoryview(bytearray(1))
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def write() -> None:
            sock.sendall(_HDR.pack(b"w", size))
            sock.sendall(view)
            _recv_exact(sock, ack)

        def read() -> None:
            sock.sendall(_HDR.pack(b"r", size))
            _recv_exact(sock, view)

        fns = {_COPY_OPS[0]: write, _COPY_OPS[2]: read}
        best = interleaved_best(
            fns, batch_s=opts.batch_s, rounds=opts.rounds, budget_s=opts.budget_s
        )
        return {op: size / MIB / per for op, per in best.items()}


def _wait_free(tracker_port: int, timeout: float = 30.0) -> None:
    """Poll a tracker (either kind: the protocol is the same) until a ``KEY`` server is free."""
    from pytvm.rpc.sessions.tracker_client import connect_tracker

    deadline = time.monotonic() + timeout
    with connect_tracker("127.0.0.1", tracker_port, connect_timeout=timeout) as tracker:
        while time.monotonic() < deadline:
            info = tracker.summary().get("queue_info", {}).get(KEY, {})
            if info.get("free", 0) >= 1:
                return
            time.sleep(0.002)
    raise RuntimeError(f"no free {KEY!r} server on tracker port {tracker_port}")


def _first_call_ms(lib: _Lib, tracker_port: int) -> float:
    """Milliseconds from ``connect_tracker`` to the first ``addone`` returning."""
    _wait_free(tracker_port)
    time.sleep(0.05)  # let the server settle (a pytvm server forks a spare when idle)
    t0 = time.perf_counter()
    tracker = lib.connect_tracker(tracker_port)
    sess = tracker.request(KEY)
    assert sess.get_function("rpc.test.addone")(1) == 2
    elapsed = time.perf_counter() - t0
    _close(sess)
    del sess
    _close(tracker)
    del tracker
    gc.collect()
    return elapsed * 1e3


# ---------------------------------------------------------------------------- report


def _table(title: str, columns: list[str], rows: list[tuple[str, list[float]]], fmt: str) -> None:
    """Print ``rows``; every value but the last (a ratio, two decimals) in ``fmt``."""
    width = max([28, *(len(name) for name, _ in rows)])
    print(f"\n{title}")
    header = f"{'case':{width}}" + "".join(f" {c:>13}" for c in columns)
    print(header)
    print("-" * len(header))
    for name, values in rows:
        cells = "".join(f" {v:>13{fmt}}" for v in values[:-1]) + f" {values[-1]:>13.2f}"
        print(f"{name:{width}}{cells}")
    sys.stdout.flush()


def main() -> None:
    """Parse the options, then run as the raw peer or start the fleet and print the report."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="tiny sizes and counts (smoke run)")
    parser.add_argument("--reps", type=int, default=10, help="tracker request repetitions")
    parser.add_argument(
        "--pinning",
        choices=("both", "same", "split"),
        help="client on the servers' core, on another core, or both in turn (default: both; "
        "--quick: split)",
    )
    parser.add_argument("--raw-peer", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--hop-server", choices=("streamed", "stored"), help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.raw_peer:
        _raw_peer()
        return
    if opts.hop_server:
        _hop_server(opts.hop_server == "stored")
        return
    if opts.quick:
        opts.sizes, opts.batch_s, opts.rounds, opts.budget_s = [1024, 256 * 1024], 0.005, 2, 0.1
        opts.reps = min(opts.reps, 2)
        opts.pinning = opts.pinning or "split"
    else:
        opts.sizes, opts.batch_s, opts.rounds, opts.budget_s = [1024, MIB, 64 * MIB], 0.2, 5, 3.0
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    cores, pinnings = choose_pinnings(opts.pinning)
    server_core = cores[0]
    pin(pinnings[-1][1])  # off the servers' core while they start
    # --quick: the servers may start on every core (their imports are most of a smoke run)
    server_cores = ",".join(map(str, cores)) if opts.quick else str(server_core)
    with tempfile.TemporaryDirectory(prefix="pytvm-bench-rpc-") as tmp:
        fleet = _Fleet(server_cores, Path(tmp))
        try:
            _run(fleet, pinnings, len(cores), opts)
        finally:
            fleet.stop_all()


def _run(
    fleet: _Fleet,
    pinnings: list[tuple[str, int]],
    usable: int,
    opts: argparse.Namespace,
) -> None:
    """Start the trackers and servers, take every section's figures and print the report."""
    # Trackers first (a TVM server waits 5 s before it retries a refused tracker connection).
    py_trk = fleet.pytvm_tracker("pytvm-tracker")
    tvm_trk = fleet.tvm_tracker("tvm-tracker")
    plain = {
        "pytvm": fleet.pytvm_server("pytvm-server"),
        "tvm": fleet.tvm_server("tvm-server"),
        "pytvm-py": fleet.pytvm_python_codec_server("pytvm-python-codec-server"),
    }
    raw = fleet.raw_peer("raw-peer")
    libs = {"pytvm": _Lib("pytvm"), "tvm": _Lib("tvm")}  # meanwhile, on the other core
    py_tsrv = fleet.pytvm_server("pytvm-tracked-server", tracker=py_trk.wait_ready())
    tvm_tsrv = fleet.tvm_server("tvm-tracked-server", tracker=tvm_trk.wait_ready())
    for proc in (*plain.values(), raw, py_tsrv, tvm_tsrv):
        proc.wait_ready()
    _wait_free(py_trk.port)
    _wait_free(tvm_trk.port)

    _print_header(fleet, pinnings, usable, libs, opts)
    servers = {name: proc.port for name, proc in plain.items()}
    _report_latency(libs, servers, pinnings, opts)
    del servers["pytvm-py"]  # the copies are each library's own (default) path

    # 2. copies, each client with its own server; 3. the raw socket
    big = opts.sizes[-1]
    bw: dict[str, dict[tuple[str, str, int], float]] = {}
    raw_bw: dict[str, dict[str, float]] = {}
    for pin_name, core in pinnings:
        pin(core)
        bw[pin_name] = _bandwidths(libs, servers, opts.sizes, opts)
        raw_bw[pin_name] = _raw_bandwidth(raw.port, big, opts)
    _report_copies(bw, raw_bw, pinnings, opts)
    _report_tracker(libs, (py_trk.port, tvm_trk.port), pinnings, opts)
    _report_hops(fleet, pinnings, opts)


def _print_header(
    fleet: _Fleet,
    pinnings: list[tuple[str, int]],
    usable: int,
    libs: dict[str, _Lib],
    opts: argparse.Namespace,
) -> None:
    """The report's opening lines: machine, pinning and versions."""
    pin_text = ", ".join(f"{name}: client on core {core}" for name, core in pinnings)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print("RPC over loopback TCP, pytvm vs apache-tvm 0.27, same run")
    print(f"CPU: {cpu_model()}; {os.cpu_count()} cores, {usable} usable; load average {load}")
    print(
        f"pinning: servers, trackers and raw peer `taskset -c {fleet.cores}`; the client (this "
        f"process) os.sched_setaffinity: {pin_text}"
    )
    print(
        f"versions: python {platform.python_version()}, numpy {np.__version__}, "
        f"pytvm {libs['pytvm'].version}, apache-tvm {libs['tvm'].version}"
    )
    if opts.quick:
        print("--quick: tiny sizes and counts; the numbers mean nothing")


def _report_latency(
    libs: dict[str, _Lib],
    servers: dict[str, int],
    pinnings: list[tuple[str, int]],
    opts: argparse.Namespace,
) -> None:
    """Section 1: measure and print addone round trips, each client against each server."""
    rows: list[tuple[str, list[float]]] = []
    for pin_name, core in pinnings:
        pin(core)
        lat = _latency(libs, servers, opts)
        for label, (mine, peer) in (
            ("own server", (lat["pytvm", "pytvm"], lat["tvm", "tvm"])),
            ("pytvm server", (lat["pytvm", "pytvm"], lat["tvm", "pytvm"])),
            ("tvm server", (lat["pytvm", "tvm"], lat["tvm", "tvm"])),
            ("own server, Python codec", (lat["pytvm-py", "pytvm-py"], lat["tvm", "tvm"])),
        ):
            rows.append((f"{pin_name}, {label}", [mine, peer, mine / peer]))
    _table(
        f"1. addone(1) round trip, us/call (best of {opts.rounds} batches); columns name the "
        "client; 'own server': each client with its own library's server",
        ["pytvm", "apache-tvm", "pytvm/tvm"],
        rows,
        ".1f",
    )


def _report_copies(
    bw: dict[str, dict[tuple[str, str, int], float]],
    raw_bw: dict[str, dict[str, float]],
    pinnings: list[tuple[str, int]],
    opts: argparse.Namespace,
) -> None:
    """Sections 2 and 3: the two clients' copy bandwidth, then beside it the raw socket's."""
    big = opts.sizes[-1]
    rows: list[tuple[str, list[float]]] = []
    for pin_name, _ in pinnings:
        for op in _COPY_OPS:
            for size in opts.sizes:
                mine, peer = bw[pin_name]["pytvm", op, size], bw[pin_name]["tvm", op, size]
                rows.append((f"{pin_name}, {op}, {size_name(size)}", [mine, peer, mine / peer]))
    _table(
        f"2. copy bandwidth, MiB/s (best of {opts.rounds} batches; of 2 where they take "
        f"{opts.budget_s:g} s), each client with its own server",
        ["pytvm", "apache-tvm", "pytvm/tvm"],
        rows,
        ".1f",
    )
    rows = []
    for pin_name, _ in pinnings:
        for op, label in ((_COPY_OPS[0], "send"), (_COPY_OPS[2], "recv")):
            ceiling = raw_bw[pin_name][op]
            mine, peer = bw[pin_name]["pytvm", op, big], bw[pin_name]["tvm", op, big]
            row = [ceiling, mine, peer, mine / ceiling]
            rows.append((f"{pin_name}, {label} {size_name(big)}", row))
    _table(
        "3. plain-socket ceiling (sendall/recv_into, TCP_NODELAY), MiB/s, beside the RPC copies "
        "of section 2 (send: copyfrom, recv: numpy())",
        ["raw socket", "pytvm", "apache-tvm", "pytvm/raw"],
        rows,
        ".1f",
    )


def _report_tracker(
    libs: dict[str, _Lib],
    tracker_ports: tuple[int, int],
    pinnings: list[tuple[str, int]],
    opts: argparse.Namespace,
) -> None:
    """Section 4: tracker request to first addone (pytvm's tracker, then TVM's), ms."""
    py_port, tvm_port = tracker_ports
    rows: list[tuple[str, list[float]]] = []
    for pin_name, core in pinnings:
        pin(core)
        mine, peer = [], []
        for _ in range(opts.reps):
            mine.append(_first_call_ms(libs["pytvm"], py_port))
            peer.append(_first_call_ms(libs["tvm"], tvm_port))
        for label, stat in (("median", statistics.median), ("min", min), ("max", max)):
            row = [stat(mine), stat(peer)]
            rows.append((f"{pin_name}, {label}", [*row, row[0] / row[1]]))
    _table(
        f"4. tracker request to first addone, ms over {opts.reps} repetitions (connect_tracker + "
        "request + get_function + call), each client with its own tracker and server",
        ["pytvm", "apache-tvm", "pytvm/tvm"],
        rows,
        ".2f",
    )


_HOP_PATHS = ("one hop", "two hops, streamed", "two hops, stored")
_HOP_OPS = ("host->remote copyfrom", "remote->host numpy()")


def _report_hops(fleet: _Fleet, pinnings: list[tuple[str, int]], opts: argparse.Namespace) -> None:
    """Section 5: copies through a forwarding hop against one hop, MiB/s and ratios."""
    import pytvm
    from pytvm import rpc

    size = opts.sizes[-1]
    inner = {path: fleet.hop_server(f"hop-inner-{i}") for i, path in enumerate(_HOP_PATHS)}
    outer = {
        _HOP_PATHS[1]: fleet.hop_server("hop-outer-streamed"),
        _HOP_PATHS[2]: fleet.hop_server("hop-outer-stored", stored=True),
    }
    for proc in (*inner.values(), *outer.values()):
        proc.wait_ready()
    host = np.random.default_rng(5).integers(0, 256, size, dtype=np.uint8)
    rows = []
    for pin_name, core in pinnings:
        pin(core)
        sessions = {_HOP_PATHS[0]: rpc.connect("127.0.0.1", inner[_HOP_PATHS[0]].port)}
        for path, proc in outer.items():
            args = ["rpc.Connect", "127.0.0.1", inner[path].port, "", False]
            sessions[path] = rpc.connect("127.0.0.1", proc.port, session_constructor_args=args)
        try:
            fns: dict[tuple[str, str, int], Callable[[], object]] = {}
            for path, sess in sessions.items():
                remote = pytvm.nd.empty((size,), "uint8", sess.cpu())
                remote.copyfrom(host)
                assert np.array_equal(remote.numpy(), host), f"{path}: round trip differs"
                fns[path, _HOP_OPS[0], size] = lambda r=remote: r.copyfrom(host)
                fns[path, _HOP_OPS[1], size] = remote.numpy
            rates = mib_per_s_by_op(fns, _HOP_OPS, size, opts)
            del fns, remote
        finally:
            for sess in sessions.values():
                _close(sess)
        for op in _HOP_OPS:
            one, streamed, stored = (rates[path, op, size] for path in _HOP_PATHS)
            rows.append((f"{pin_name}, {op}, {size_name(size)}", one, streamed, stored))
    print(
        f"\n5. two hops over TCP (client -> pytvm server -> pytvm server, rpc.Connect), MiB/s "
        f"(best of {opts.rounds} batches); 'stored': the hop receives each copy packet whole "
        "before sending it on (before); 'streamed': it passes each piece on as it arrives"
    )
    header = f"{'case':40}" + "".join(
        f" {c:>13}" for c in ("one hop", "streamed", "stored", "streamed/1hop", "stored/1hop")
    )
    print(header)
    print("-" * len(header))
    for name, one, streamed, stored in rows:
        cells = f" {one:>13.1f} {streamed:>13.1f} {stored:>13.1f}"
        print(f"{name:40}{cells} {streamed / one:>13.2f} {stored / one:>13.2f}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
