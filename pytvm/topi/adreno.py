"""TVM's ``topi.adreno`` (Adreno GPU schedules), for dispatch tables that name them.

pytvm does not compile for Adreno GPU: every function named here raises
:class:`~pytvm.ffi.errors.TVMError` when called (:mod:`pytvm.topi._other_targets`).
"""

from __future__ import annotations

from ._other_targets import namespace_getattr

__getattr__ = namespace_getattr(
    "adreno", "pytvm has no Adreno GPU code generator; it compiles for CPUs"
)
