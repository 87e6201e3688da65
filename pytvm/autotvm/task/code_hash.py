"""Code hashes of schedule functions (TVM's ``autotvm.task.code_hash``): a record's
``config.code_hash`` says which version of a template's schedule code it was measured with.

The hash is the CRC-32 of the decorated function's source lines, in hexadecimal without the
``0x``, set as the schedule's ``code_hash`` attribute after the function ran.
"""

from __future__ import annotations

import functools
import inspect
import zlib
from collections.abc import Callable
from typing import Any

from ...ffi.errors import TVMTypeError
from ...te.schedule.schedule import Schedule

__all__ = ["attach_code_hash", "attach_code_hash_to_arg", "code_hash_of"]


def code_hash_of(func: Callable[..., Any]) -> str:
    """The code hash of ``func``: CRC-32 of its source lines, hexadecimal.

    Examples
    --------
    >>> def f():
    ...     pass
    >>> len(code_hash_of(f)) <= 8
    True
    """
    return format(zlib.crc32("".join(inspect.getsourcelines(func)[0]).encode()), "x")


def attach_code_hash(s: Any) -> Callable[[Callable[..., Any]], Callable[..., None]]:
    """Decorate a function scheduling ``s``: after each call, ``s.code_hash`` is its hash."""

    def decorator(func: Callable[..., Any]) -> Callable[..., None]:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> None:
            func(*args, **kwargs)
            s.code_hash = code_hash_of(func)

        return wrapper

    return decorator


def attach_code_hash_to_arg(
    arg_idx: int = 1,
) -> Callable[[Callable[..., Any]], Callable[..., None]]:
    """Decorate a function whose argument ``arg_idx`` is the schedule it fills: after each
    call, that schedule's ``code_hash`` is the function's hash.
    """

    def decorator(func: Callable[..., Any]) -> Callable[..., None]:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> None:
            func(*args, **kwargs)
            if arg_idx >= len(args) or not isinstance(args[arg_idx], Schedule):
                raise TVMTypeError(
                    f"attach_code_hash_to_arg({arg_idx}): argument {arg_idx} of "
                    f"{func.__name__} is not a Schedule"
                )
            args[arg_idx].code_hash = code_hash_of(func)

        return wrapper

    return decorator
