"""``pytvm info``: report the versions, C compiler, device APIs and global functions found."""

from __future__ import annotations

import argparse
import json
import platform
import sys
from typing import Any

__all__ = ["add_parser", "collect", "run"]


def add_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    """Register ``info`` on ``subparsers`` and return its parser."""
    parser = subparsers.add_parser(
        "info",
        help="show versions, C compiler, device APIs and global functions",
        description="Show what this pytvm installation has found.",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    return parser


def collect() -> dict[str, Any]:
    """Return the report as a JSON-ready dict."""
    import numpy

    import pytvm
    from pytvm.ffi import libinfo
    from pytvm.runtime import device_api

    cc_path = libinfo.find_cc()
    cc = None if cc_path is None else {"path": cc_path, "version": libinfo.cc_version(cc_path)}
    try:
        runtime_lib: str | None = str(libinfo.runtime_library_path())
    except pytvm.TVMError:
        runtime_lib = None
    fastcall = libinfo.fastcall_extension_path() if runtime_lib else None
    return {
        "version": pytvm.__version__,
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "cc": cc,
        "device_apis": list(device_api.registered_device_apis()),
        "global_functions": len(pytvm.list_global_func_names()),
        "runtime_library": runtime_lib,
        "call_path": "fast-call extension" if fastcall else "ctypes",
    }


def _format_text(report: dict[str, Any]) -> str:
    cc = report["cc"]
    rows = [
        ("pytvm", report["version"]),
        ("python", report["python"]),
        ("numpy", report["numpy"]),
        ("cc", "not found" if cc is None else f"{cc['path']} ({cc['version']})"),
        ("device apis", ", ".join(report["device_apis"]) or "none"),
        ("global functions", str(report["global_functions"])),
        ("runtime library", report["runtime_library"] or "cannot be built (no C compiler)"),
        ("python->C calls", report["call_path"]),
    ]
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"{name + ':':<{width + 1}} {value}" for name, value in rows)


def run(args: argparse.Namespace) -> int:
    """Print the report, as text or as JSON with ``--json``."""
    report = collect()
    print(json.dumps(report, indent=2) if args.json else _format_text(report))
    return 0


if __name__ == "__main__":
    from typing import cast

    from pytvm.cli import _command

    # Runs through the shared error handling without importing pytvm.cli.main.
    this = cast(_command.Subcommand, sys.modules[__name__])
    sys.exit(_command.main(["info", *sys.argv[1:]], [this]))
