"""An RPC server whose kernels fail, for the measuring tests: ``python faulty_rpc_server.py
--tracker HOST:PORT --key KEY --fault die|hang|wrong``.

It is pytvm's server (registered with the tracker as ``python -m pytvm.exec.rpc_server``
does) with ``runtime.module.loadfile_so`` replaced in each session worker: the library loads as
usual, and its kernel ``default_function``

* ``die``: kills the whole server process (``SIGKILL``) and its session worker;
* ``hang``: never returns (the server's session timeout ends the session);
* ``wrong``: runs, then adds 1 to its last argument (the output).
"""

from __future__ import annotations

import argparse
import functools
import os
import signal
import sys
import threading
from typing import Any


def install_fault(fault: str, server_pid: int) -> None:
    """In a session worker: replace the shared-object loader by a faulty one."""
    from pytvm.ffi.registry import get_global_func, register_func
    from pytvm.runtime.module import Module

    real = get_global_func("runtime.module.loadfile_so")

    def load(path: str) -> Module:
        kernel = real(path).get_function("default_function")

        def run(*args: Any) -> None:
            if fault == "die":
                os.kill(server_pid, signal.SIGKILL)
                os._exit(1)
            if fault == "hang":
                threading.Event().wait()  # forever: the session timeout must end it
            kernel(*args)
            out = args[-1]
            out.copyfrom(out.numpy() + 1)

        return Module.from_functions("faulty", {"default_function": run})

    register_func("runtime.module.loadfile_so", load, override=True)


def main() -> int:
    """Serve until SIGTERM."""
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--tracker", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--fault", choices=["die", "hang", "wrong"], required=True)
    args = p.parse_args()
    from pytvm.rpc.services.server import Server

    host, port = args.tracker.rsplit(":", 1)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with Server(
        host="127.0.0.1",
        port=0,
        key=args.key,
        tracker_addr=(host, int(port)),
        silent=True,
        server_init_callback=functools.partial(install_fault, args.fault, os.getpid()),
    ):
        stop.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
