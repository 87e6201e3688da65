"""TVM's ``topi.intel_graphics`` (Intel graphics schedules), for dispatch tables that name them.

pytvm does not compile for Intel graphics: every function named here raises
:class:`~pytvm.ffi.errors.TVMError` when called (:mod:`pytvm.topi._other_targets`).
"""

from __future__ import annotations

from ._other_targets import namespace_getattr

__getattr__ = namespace_getattr(
    "intel_graphics", "pytvm has no Intel graphics code generator; it compiles for CPUs"
)
