"""Targets: what a kernel is compiled for (``Target("c")``, ``Target("llvm -mcpu=native")``)."""

from __future__ import annotations

from .target import GPU_KINDS, Target, TargetKind, cuda, host_simd_bits

__all__ = ["GPU_KINDS", "Target", "TargetKind", "cuda", "host_simd_bits"]
