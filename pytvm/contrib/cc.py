"""TVM 0.18's ``tvm.contrib.cc``: the names of :mod:`pytvm.support.cc` (TVM 0.27's path).

Examples
--------
>>> from pytvm.contrib import cc
>>> cc.create_shared.output_format
'so'
"""

from __future__ import annotations

from ..support.cc import (
    CompileFunction,
    create_executable,
    create_shared,
    create_staticlib,
    cross_compiler,
    get_cc,
    get_global_symbol_section_map,
    get_target_by_dump_machine,
)

__all__ = [
    "CompileFunction",
    "create_executable",
    "create_shared",
    "create_staticlib",
    "cross_compiler",
    "get_cc",
    "get_global_symbol_section_map",
    "get_target_by_dump_machine",
]
