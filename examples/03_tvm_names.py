"""Code written for Apache TVM 0.27 runs on pytvm unchanged: only ``import tvm`` becomes
``import pytvm as tvm``.

Run: ``python examples/03_tvm_names.py``. When apache-tvm is installed too, the same client
function also runs with it, against the same pytvm server (the wire protocol is TVM's).
"""

from __future__ import annotations

from types import ModuleType

import numpy as np

import pytvm as tvm  # the one line that differs from a TVM script


def client(tvm: ModuleType, port: int) -> None:
    """A TVM 0.27 client: every name below is TVM's."""
    remote = tvm.rpc.connect("127.0.0.1", port)
    addone = remote.get_function("rpc.test.addone")  # functions every TVM server offers
    echo = remote.get_function("testing.echo")
    print(f"  rpc.test.addone(41) = {addone(41)}, testing.echo('hi') = {echo('hi')}")

    dev = remote.cpu(0)
    x = tvm.runtime.tensor(np.arange(6, dtype="float32").reshape(2, 3), dev)
    dev.sync()
    print(f"  runtime.tensor on the remote cpu: shape {tuple(x.shape)}, sum {x.numpy().sum()}")
    print(f"  DataType('float32').bits = {tvm.DataType('float32').bits}")

    try:
        remote.get_function("rpc.test.except")("bad input")  # raises ValueError on the server
    except tvm.error.RPCError as err:
        where = [line for line in str(err).splitlines() if "bad input" in line]
        print(f"  the server's error arrives as tvm.error.RPCError: {where[-1].strip()}")


def main() -> None:
    """Serve on a free loopback port and run the client with pytvm (and apache-tvm if present)."""
    server = tvm.rpc.Server(host="127.0.0.1", port=0, silent=True)
    try:
        print(f"pytvm server on 127.0.0.1:{server.port}")
        print("client with import pytvm as tvm:")
        client(tvm, server.port)
        try:
            import tvm as apache_tvm
        except ImportError:
            print("apache-tvm is not installed: the client ran with pytvm only")
        else:
            print(f"client with import tvm (apache-tvm {apache_tvm.__version__}):")
            client(apache_tvm, server.port)
    finally:
        server.terminate()


if __name__ == "__main__":
    main()
