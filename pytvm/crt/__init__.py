"""The C runtime shipped with pytvm and its host-side helpers (device binary, serial framing)."""

from __future__ import annotations

from .build import device_binary

__all__ = ["device_binary"]
