"""AutoTVM's global switches (TVM's ``autotvm.env``): whether a tuner is running, and whether
fallback configurations are reported.
"""

from __future__ import annotations

__all__ = ["GLOBAL_SCOPE", "AutotvmGlobalScope"]


class AutotvmGlobalScope:
    """The switches one process shares.

    ``in_tuning``: a tuner is measuring candidates (templates must not fall back silently).
    ``silent``: do not log "a fallback configuration is used" warnings.
    ``cuda_target_arch``: kept for TVM's name; pytvm compiles for CPUs only.
    """

    current: AutotvmGlobalScope | None = None

    def __init__(self) -> None:
        self._old = AutotvmGlobalScope.current
        AutotvmGlobalScope.current = self
        self.cuda_target_arch: str | None = None
        self.in_tuning = False
        self.silent = False

    def deep_copy(self, global_scope: AutotvmGlobalScope) -> None:
        """Take every switch of ``global_scope``."""
        self.cuda_target_arch = global_scope.cuda_target_arch
        self.in_tuning = global_scope.in_tuning
        self.silent = global_scope.silent


#: The process's switches (``autotvm.GLOBAL_SCOPE.silent = True``).
GLOBAL_SCOPE = AutotvmGlobalScope()
