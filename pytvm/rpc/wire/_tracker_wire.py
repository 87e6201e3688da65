"""Parsing and bounds-checking of the tracker's JSON requests (``PUT``, ``REQUEST``,
``UPDATE_INFO``) into typed records.

Every value from the wire is checked where it is parsed: ports in 1..65535, priorities finite
numbers within ±2**31, keys and hosts non-empty strings of bounded length, info dicts small.
A violation raises :class:`~pytvm.rpc.wire.base.ProtocolError` naming the field, the value and the
accepted range; the tracker answers it with ``[-1, message]`` and keeps the connection.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from .base import ProtocolError

__all__ = [
    "MAX_HOST_CHARS",
    "MAX_INFO_BYTES",
    "MAX_KEY_CHARS",
    "MAX_MATCH_KEY_CHARS",
    "MAX_PORT",
    "MAX_PRIORITY",
    "Put",
    "Req",
    "parse_put",
    "parse_request",
    "parse_update_info",
]

#: Longest rpc key.
MAX_KEY_CHARS = 256
#: Longest match key (``<key>:<random>``).
MAX_MATCH_KEY_CHARS = 512
#: Longest host name or address.
MAX_HOST_CHARS = 255
#: Largest priority magnitude.
MAX_PRIORITY = 2**31
#: Largest UPDATE_INFO dict, as JSON.
MAX_INFO_BYTES = 4096
#: Largest TCP port.
MAX_PORT = 65535
#: Positions in a request list (element 0 is the code).
_KEY, _PORT_PAIR, _ADDR = 1, 2, 3  # PUT: [3, key, [port, match_key], addr]
_USER, _PRIORITY, _OPTIONS = 2, 3, 4  # REQUEST: [4, key, user, priority, options]
#: ``[port, match_key]`` in PUT and ``[host, port]`` in UPDATE_INFO.
_PAIR_LEN = 2


@dataclass(frozen=True, slots=True)
class Put:
    """``[3, key, [port, match_key], addr]``."""

    key: str
    port: int
    match_key: str
    addr: str | None


@dataclass(frozen=True, slots=True)
class Req:
    """``[4, key, user, priority]`` plus pytvm's optional ``{"if_unknown": "fail"|"wait"}``."""

    key: str
    priority: int | float
    fail_if_unknown: bool


def _text(value: Any, what: str, limit: int) -> str:
    if not isinstance(value, str) or not value or len(value) > limit:
        raise ProtocolError(f"{what} must be a string of 1..{limit} characters, got {value!r:.80}")
    return value


def _port(value: Any, what: str, low: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= MAX_PORT:
        raise ProtocolError(
            f"{what} must be an integer port in {low}..{MAX_PORT}, got {value!r:.80}"
        )
    return value


def _at(msg: list[Any], index: int, default: Any) -> Any:
    """Element ``index`` of ``msg``, or ``default`` where the message ends before it."""
    return msg[index] if len(msg) > index else default


def parse_put(msg: list[Any]) -> Put:
    """Check a PUT request; the key, port, match key and address must all be well formed."""
    pair = _at(msg, _PORT_PAIR, None)
    if not isinstance(pair, list) or len(pair) != _PAIR_LEN:
        raise ProtocolError(f"PUT must be [3, key, [port, match_key], addr], got {msg!r:.120}")
    key = _text(msg[_KEY], "PUT key", MAX_KEY_CHARS)
    port = _port(pair[0], "PUT port")
    match_key = _text(pair[1], "PUT match key", MAX_MATCH_KEY_CHARS)
    addr = _at(msg, _ADDR, None)
    if addr is not None:
        addr = _text(addr, "PUT address", MAX_HOST_CHARS)
    return Put(key, port, match_key, addr)


def parse_request(msg: list[Any]) -> Req:
    """Check a REQUEST; the priority must be a finite number (a NaN would break the ordering)."""
    if len(msg) <= _KEY:
        raise ProtocolError(f"REQUEST must be [4, key, user, priority], got {msg!r:.120}")
    key = _text(msg[_KEY], "REQUEST key", MAX_KEY_CHARS)
    user = _at(msg, _USER, "")
    if user is not None and (not isinstance(user, str) or len(user) > MAX_KEY_CHARS):
        raise ProtocolError(f"REQUEST user must be a string, got {user!r:.80}")
    priority = _at(msg, _PRIORITY, 1)
    if (
        isinstance(priority, bool)
        or not isinstance(priority, int | float)
        or not math.isfinite(priority)
        or abs(priority) > MAX_PRIORITY
    ):
        raise ProtocolError(
            f"REQUEST priority must be a finite number within ±{MAX_PRIORITY}, got {priority!r:.80}"
        )
    options = _at(msg, _OPTIONS, {})
    if not isinstance(options, dict) or options.get("if_unknown", "wait") not in ("wait", "fail"):
        raise ProtocolError(
            f'REQUEST options must be {{"if_unknown": "wait" or "fail"}}, got {options!r:.80}'
        )
    return Req(key, priority, options.get("if_unknown") == "fail")


def parse_update_info(msg: list[Any]) -> dict[str, Any]:
    """Check an UPDATE_INFO: a small dict; ``key`` a string, ``addr`` ``[host or null, port]``."""
    raw = _at(msg, 1, None)
    if not isinstance(raw, dict):
        raise ProtocolError(f"UPDATE_INFO must be [5, {{info}}], got {msg!r:.120}")
    info: dict[str, Any] = dict(raw)
    size = len(json.dumps(info))
    if size > MAX_INFO_BYTES:
        raise ProtocolError(f"UPDATE_INFO dict is {size} bytes as JSON; at most {MAX_INFO_BYTES}")
    if "key" in info:
        _text(info["key"], "UPDATE_INFO key", MAX_MATCH_KEY_CHARS)
    if "addr" in info:
        addr = info["addr"]
        if not isinstance(addr, list) or len(addr) != _PAIR_LEN:
            raise ProtocolError(f"UPDATE_INFO addr must be [host, port], got {addr!r:.80}")
        if addr[0] is not None:
            _text(addr[0], "UPDATE_INFO host", MAX_HOST_CHARS)
        _port(addr[1], "UPDATE_INFO port", low=0)
    return info
