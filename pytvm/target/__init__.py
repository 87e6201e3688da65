"""Targets: what a kernel is compiled for (``Target("c")``, ``Target("llvm -mcpu=native")``)."""

from __future__ import annotations

from .target import Target, TargetKind, host_simd_bits

__all__ = ["Target", "TargetKind", "host_simd_bits"]
