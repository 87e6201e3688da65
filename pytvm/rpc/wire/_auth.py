"""Shared-secret proofs: the tracker token and the auth token of tracker-assigned sessions.

Two secrets exist, and neither is ever sent in clear to a party that might not hold it:

* The **tracker token** guards registration. A tracker made with ``token=...`` accepts ``PUT``
  (and a ``server...`` ``UPDATE_INFO``) only on a connection that proved the token: the peer sends
  ``HELLO`` (``[1, {"client": "pytvm"}]``, a PING with an argument, which TVM's tracker answers
  with a plain ``0``); the pytvm tracker answers ``[0, {"tracker": "pytvm", "features": [...],
  "nonce": <hex>}]``; the peer sends ``[AUTH, hmac_sha256(token, "pytvm-tracker-auth:" +
  nonce)]`` and gets ``0`` or ``[-1, why]``. A pytvm server or proxy takes the token from its
  ``tracker_token`` argument, else from ``$PYTVM_TRACKER_TOKEN``, else from the file named by
  ``$PYTVM_TRACKER_TOKEN_FILE`` (so it need not appear on a command line). Without a token the
  tracker accepts everyone, stock TVM servers included.
* A client's **auth token** for a server it got from the tracker is presented as
  ``-tokenmac=hmac_sha256(token, "pytvm-session:" + match_key)`` instead of ``-token=<token>``:
  the match key is one-time, so a server that does not hold the token learns nothing it can
  replay or use. A pytvm server checks the MAC against the match key of the client's key.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...ffi.errors import TVMOSError
from .base import ProtocolError, TrackerCode

__all__ = [
    "AUTH_CODE",
    "HELLO",
    "TOKEN_ENV",
    "TOKEN_FILE_ENV",
    "authenticate",
    "resolve_token",
    "session_mac",
    "session_mac_refusal",
    "tracker_mac",
]

#: Tracker request code of the token proof (pytvm only; TVM's codes end at 7).
AUTH_CODE = 100
#: The PING argument that asks a pytvm tracker for its features and a nonce.
HELLO: dict[str, Any] = {"client": "pytvm"}
#: Environment variable holding a tracker token.
TOKEN_ENV = "PYTVM_TRACKER_TOKEN"
#: Environment variable naming a file whose first line is a tracker token.
TOKEN_FILE_ENV = "PYTVM_TRACKER_TOKEN_FILE"

#: A tracker reply carrying a value: ``[code, value]``.
_REPLY_LEN = 2


def resolve_token(token: str | None = None, token_file: str | None = None) -> str | None:
    """The tracker token: ``token``, else the first line of ``token_file``, else
    ``$PYTVM_TRACKER_TOKEN``, else the first line of ``$PYTVM_TRACKER_TOKEN_FILE``; None if
    none is set. An empty token counts as none.

    Examples
    --------
    >>> resolve_token("s3cret")
    's3cret'
    """
    if token:
        return token
    if token_file:
        return _read_token(token_file)
    if os.environ.get(TOKEN_ENV):
        return os.environ[TOKEN_ENV]
    if os.environ.get(TOKEN_FILE_ENV):
        return _read_token(os.environ[TOKEN_FILE_ENV])
    return None


def _read_token(path: str) -> str | None:
    try:
        with Path(path).open(encoding="utf-8") as f:
            return f.readline().strip() or None
    except OSError as err:
        raise TVMOSError(f"cannot read the tracker token file {path!r}: {err}") from err


def tracker_mac(token: str, nonce: str) -> str:
    """The proof of ``token`` for a tracker's ``nonce``."""
    return _mac(token, "pytvm-tracker-auth:" + nonce)


def session_mac(token: str, match_key: str) -> str:
    """The proof of ``token`` a client presents (``-tokenmac=``) for a one-time match key.

    Examples
    --------
    >>> len(session_mac("t", "board:0.5")), session_mac("t", "a") != session_mac("t", "b")
    (64, True)
    """
    return _mac(token, "pytvm-session:" + match_key)


def session_mac_refusal(token: str, head: str, mac: str) -> str | None:
    """Why ``-tokenmac=<mac>`` does not prove ``token`` for the client key ``head``
    (``client:<match_key>``), or None when it does.
    """
    match_key = head[len("client:") :] if head.startswith("client:") else head
    if not hmac.compare_digest(mac.encode(), session_mac(token, match_key).encode()):
        return "wrong auth token (its MAC does not match this session's key)"
    return None


def authenticate(call: Callable[[list[Any]], Any], token: str, where: str) -> None:
    """Prove ``token`` to the tracker behind ``call`` (one request, one reply per call).

    Raises
    ------
    ProtocolError
        If the tracker is not a pytvm tracker or refuses the token; the message names ``where``.
    """
    reply = call([TrackerCode.PING, HELLO])
    if not (
        isinstance(reply, list)
        and len(reply) == _REPLY_LEN
        and reply[0] == TrackerCode.SUCCESS
        and isinstance(reply[1], dict)
        and isinstance(reply[1].get("nonce"), str)
    ):
        raise ProtocolError(
            f"tracker {where} answered the token handshake with {reply!r}: it does not take "
            "tracker tokens (a stock TVM tracker?); remove the tracker token"
        )
    reply = call([AUTH_CODE, tracker_mac(token, reply[1]["nonce"])])
    if reply != TrackerCode.SUCCESS:
        why = reply[1] if isinstance(reply, list) and len(reply) == _REPLY_LEN else reply
        raise ProtocolError(f"tracker {where} refused the tracker token: {why}")


def _mac(token: str, message: str) -> str:
    return hmac.new(token.encode(), message.encode(), hashlib.sha256).hexdigest()
