"""Former home of :mod:`pytvm.rpc.wire.serial_channel`: the serial protocol lives in the RPC wire
layer now (so ``pytvm.rpc.connect_serial`` can use it); its public names stay importable here.
"""

from __future__ import annotations

from ..rpc.wire.serial_channel import SerialChannel

__all__ = ["SerialChannel"]
