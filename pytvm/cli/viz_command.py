"""``pytvm viz``: pictures of what the compiler decided (``pytvm viz memory``, ``pytvm viz ram``).

``pytvm viz memory model.onnx -o plan.svg [--planner arena|storage_token]`` draws the memory
plan of a model: every intermediate entry as a box over the steps it lives, at its bytes.

``pytvm viz ram model.tar -o ram.svg [--map stm32f4] [--format svg|text]`` draws the static
workspace of an AOT model (a Model Library Format tar, or an ONNX file built with
``--target``) over its kernel calls and, with ``--map``, the memory report's regions.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

__all__ = ["add_parser", "run"]


def add_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    """Register ``viz`` and its pictures on ``subparsers`` and return its parser."""
    parser = subparsers.add_parser(
        "viz",
        help="draw what the compiler decided (memory plans)",
        description="Draw pictures of compiled models.",
    )
    pictures = parser.add_subparsers(dest="picture", metavar="PICTURE", required=True)
    memory = pictures.add_parser(
        "memory",
        help="the memory plan of an ONNX model (SVG)",
        description="Draw each intermediate tensor as a box over the steps it lives, at the "
        "bytes the planner gave it.",
    )
    memory.add_argument("model", help="the ONNX file")
    memory.add_argument("-o", "--output", default="memory_plan.svg", help="the SVG to write")
    memory.add_argument(
        "--planner", choices=("arena", "storage_token"), default="arena", help="memory planner"
    )
    memory.add_argument("--input-shapes", default="", help='e.g. "x:[1,3,224,224]"')
    ram = pictures.add_parser(
        "ram",
        help="the RAM plan of an AOT model (MLF tar or ONNX) and its memory report (SVG, text)",
        description="Draw each buffer of the AOT model's static workspace at its offset over "
        "the kernel calls it lives, and with --map the board's regions filled by section.",
    )
    ram.add_argument("model", help="a Model Library Format tar, or an ONNX file (built for AOT)")
    ram.add_argument("-o", "--output", help="the file to write (default: print the text form)")
    ram.add_argument("--format", choices=("svg", "text"), help="default: from -o's suffix")
    ram.add_argument("--map", help="memory map: mps2-an386, stm32f4, nrf52840 or a JSON file")
    ram.add_argument(
        "--target", default="c -mcpu=cortex-m4", help="target of an ONNX model's AOT build"
    )
    ram.add_argument("--input-shapes", default="", help='e.g. "x:[1,3,224,224]"')
    return parser


def _aot_module(args: argparse.Namespace) -> Any:
    """The AOT model of ``args.model``: an MLF tar read back, or an ONNX file built for AOT."""
    if args.model.endswith(".tar"):
        from pytvm.micro import read_model_library_format

        return read_model_library_format(args.model)
    from pytvm import relay
    from pytvm.cli.compile_model import import_model

    mod, params = import_model(args.model, args.input_shapes)
    return relay.build(
        mod,
        target=args.target,
        executor=relay.backend.Executor("aot", {"interface-api": "c", "unpacked-api": True}),
        runtime=relay.backend.Runtime("crt", {"system-lib": True}),
        params=params,
    )


def _ram(args: argparse.Namespace) -> int:
    from pytvm.viz import memory_report_text, ram_plan_svg, ram_plan_text

    module = _aot_module(args)
    report = None
    if args.map:
        from pytvm.micro import memory_report

        report = memory_report(module, args.map, check=False)
    fmt = args.format or ("svg" if (args.output or "").endswith(".svg") else "text")
    if fmt == "svg":
        text = ram_plan_svg(module, report, Path(args.model).stem)
    else:
        text = ram_plan_text(module)
        if report is not None:
            text += "\n" + memory_report_text(report) + "\n" + str(report)
    if args.output:
        Path(args.output).write_text(text)
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        print(text)
    return 0


def run(args: argparse.Namespace) -> int:
    """Draw the picture ``args.picture`` asks for."""
    if args.picture == "ram":
        return _ram(args)
    from pytvm import graph
    from pytvm.cli.compile_model import import_model
    from pytvm.viz import memory_plan_svg

    mod, params = import_model(args.model, args.input_shapes)
    plan = graph.plan_memory(mod, params, planner=args.planner)
    Path(args.output).write_text(memory_plan_svg(plan, Path(args.model).stem))
    print(plan, file=sys.stderr)
    print(f"wrote {args.output}", file=sys.stderr)
    return 0
