"""TVM v0.18's ``tvm.micro.Session``: an RPC session with a device reached through a project's
transport, and the executors that run there.

``Session(transport_context_manager)`` enters the context manager (``project.transport()``),
asks the transport for the RPC session and exposes the device's ``cpu(0)`` as ``device``;
``get_system_lib()`` returns the device's system library (kernels by name),
``create_aot_executor()`` the AOT executor of the model linked into the device (an
:class:`~pytvm.runtime.executor.AotModule`). Leaving the session closes the RPC session and
the transport, which ends the device.

Examples
--------
>>> with tvm.micro.Session(project.transport()) as sess:          # doctest: +SKIP
...     executor = sess.create_aot_executor()
...     executor.run(input=np.zeros((1, 3, 32, 32), "float32"))
...     executor.get_output(0).numpy()
"""

from __future__ import annotations

import sys
from contextlib import AbstractContextManager
from types import TracebackType
from typing import Any

from ..ffi import Device
from ..ffi.errors import TVMError, TVMTypeError
from ..rpc import RPCSession
from ..runtime.executor.aot_executor import AotModule
from ..runtime.module import Module
from .transport import SessionTransport, TransportTimeouts

__all__ = ["Session", "SessionTerminatedError", "create_local_aot_executor"]


class SessionTerminatedError(TVMError):
    """The device ended the session (TVM's name)."""


class Session:
    """A microTVM device session (TVM v0.18's constructor).

    Parameters
    ----------
    transport_context_manager : context manager giving a Transport
        ``GeneratedProject.transport()``; entered by ``__enter__``, left by ``__exit__``.
    session_name : str
        Names the session in messages.
    timeout_override : TransportTimeouts, optional
        Timeouts instead of the transport's own.
    """

    def __init__(
        self,
        transport_context_manager: AbstractContextManager[SessionTransport] | None = None,
        session_name: str = "micro-rpc",
        timeout_override: TransportTimeouts | None = None,
    ) -> None:
        if transport_context_manager is None:
            raise TVMTypeError(
                "Session needs a transport: pass project.transport() of a generated project "
                "(pytvm.micro.generate_project)"
            )
        self.transport_context_manager = transport_context_manager
        self.session_name = session_name
        self.timeout_override = timeout_override
        self.transport: SessionTransport | None = None
        self._rpc: RPCSession | None = None
        self._device: Device | None = None
        self._exit_called = False

    # ------------------------------------------------------------------ life cycle

    def __enter__(self) -> Session:
        """Open the transport and the RPC session with the device's server."""
        self.transport = self.transport_context_manager.__enter__()
        try:
            timeouts = self.timeout_override or self.transport.timeouts()
            self._rpc = self.transport.open_session(self.session_name, timeouts)
            self._device = self._rpc.cpu(0)
        except BaseException:
            self.transport_context_manager.__exit__(*sys.exc_info())
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Close the RPC session and the transport (ending the device); once."""
        if self._exit_called or self.transport is None:
            return
        self._exit_called = True
        try:
            if self._rpc is not None:
                self._rpc.close()
        finally:
            self.transport_context_manager.__exit__(exc_type, exc_value, traceback)

    def close(self) -> None:
        """Same as leaving the ``with`` block."""
        self.__exit__(None, None, None)

    # ------------------------------------------------------------------ device

    @property
    def rpc(self) -> RPCSession:
        """The RPC session (inside the ``with`` block)."""
        if self._rpc is None or self._exit_called:
            raise TVMError(f"session {self.session_name!r} is not open: use it in a with block")
        return self._rpc

    @property
    def device(self) -> Device:
        """The device's CPU, for arrays and ``time_evaluator``."""
        _ = self.rpc  # raises when the session is not open
        assert self._device is not None
        return self._device

    def cpu(self, dev_id: int = 0) -> Device:
        """The device's CPU ``dev_id``."""
        return self.rpc.cpu(dev_id)

    def get_function(self, name: str) -> Any:
        """The device's global function ``name``."""
        return self.rpc.get_function(name)

    def get_system_lib(self) -> Module:
        """The device's system library (``runtime.SystemLib``): kernels by name."""
        module = self.rpc.get_function("runtime.SystemLib")()
        if not isinstance(module, Module):
            raise TVMTypeError(f"runtime.SystemLib returned {type(module).__name__}, not a module")
        return module

    def create_aot_executor(self, mod_name: str = "default") -> AotModule:
        """The AOT executor of the model ``mod_name`` linked into the device."""
        try:
            create = self.rpc.get_function("tvm.aot_executor.create")
        except AttributeError as err:
            raise TVMError(
                "the device serves no AOT executor (no tvm.aot_executor.create): generate the "
                "project from an AOT executor factory (relay.build(..., executor="
                "Executor('aot', ...))) or a Model Library Format model"
            ) from err
        module = create(self.get_system_lib(), self.device, mod_name)
        return AotModule(module, self.device)


def create_local_aot_executor(session: Session) -> AotModule:
    """TVM's helper: the session's AOT executor (``session.create_aot_executor()``)."""
    return session.create_aot_executor()
