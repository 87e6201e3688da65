"""What TVM's executor and runtime configurations share: a kind name and checked options.

Each kind has TVM v0.18's option names, types and defaults (``src/relay/backend/executor.cc``
and ``runtime.cc``): ``graph`` takes ``link-params`` (default False); ``aot`` takes
``link-params`` (default True), ``unpacked-api``, ``interface-api``,
``workspace-byte-alignment`` and ``constant-byte-alignment``; both runtimes (``cpp``, ``crt``)
take ``system-lib``. ``attrs`` holds the options given plus those with a default, as TVM's;
an unknown kind, an unknown option or a value of the wrong type raises ``TVMValueError`` /
``TVMTypeError`` naming it and what is allowed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any, ClassVar

from ...ffi.errors import TVMTypeError, TVMValueError

__all__ = ["Config", "OptionTable"]

#: Option name -> (type, default or None when TVM gives none), per kind.
OptionTable = dict[str, dict[str, tuple[type, Any]]]


class Config(Mapping[str, Any]):
    """A kind name and its checked options (read like a dict: ``config["option"]``)."""

    flag_registry_name: ClassVar[str] = ""
    _table: ClassVar[OptionTable] = {}

    def __init__(self, name: str, options: Mapping[str, Any] | None = None) -> None:
        what = self.flag_registry_name
        if not isinstance(name, str) or name not in self._table:
            raise TVMValueError(
                f"{what} {name!r} is not registered; choose one of {sorted(self._table)}"
            )
        table = self._table[name]
        attrs = {k: default for k, (_, default) in table.items() if default is not None}
        for key, given in (options or {}).items():
            if key not in table:
                raise TVMValueError(
                    f"{what} {name!r} has no option {key!r}; its options are {sorted(table)}"
                )
            kind = table[key][0]
            value = given
            ok = isinstance(value, kind) and (kind is bool or not isinstance(value, bool))
            if kind is bool and isinstance(value, int) and value in (0, 1):
                value, ok = bool(value), True
            if not ok:
                raise TVMTypeError(
                    f"{what} {name!r} option {key!r} takes a {kind.__name__}, got "
                    f"{type(value).__name__} {value!r}"
                )
            attrs[key] = value
        self.name = name
        self.attrs: Mapping[str, Any] = MappingProxyType(attrs)

    def __getitem__(self, key: str) -> Any:
        return self.attrs[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.attrs)

    def __len__(self) -> int:
        return len(self.attrs)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, type(self))
            and other.name == self.name
            and dict(other.attrs) == dict(self.attrs)
        )

    def __hash__(self) -> int:
        return hash((self.name, tuple(sorted(self.attrs.items()))))

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, {dict(self.attrs)!r})"

    @classmethod
    def list_registered(cls) -> list[str]:
        """The registered kinds."""
        return sorted(cls._table)

    @classmethod
    def list_registered_options(cls, name: str) -> dict[str, str]:
        """Option name -> type name of kind ``name``."""
        if name not in cls._table:
            raise TVMValueError(
                f"{cls.flag_registry_name} {name!r} is not registered; choose one of "
                f"{sorted(cls._table)}"
            )
        return {k: t.__name__ for k, (t, _) in cls._table[name].items()}
