"""TVM's ``topi.arm_cpu`` (Arm CPU schedules), for dispatch tables that name them.

pytvm does not compile for Arm CPU: every function named here raises
:class:`~pytvm.ffi.errors.TVMError` when called (:mod:`pytvm.topi._other_targets`).
"""

from __future__ import annotations

from ._other_targets import namespace_getattr

__getattr__ = namespace_getattr(
    "arm_cpu", "pytvm has no Arm CPU schedules; on an x86 host use topi.x86"
)
