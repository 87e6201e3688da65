"""``pytvm viz``: pictures of what the compiler decided (``pytvm viz memory``).

``pytvm viz memory model.onnx -o plan.svg [--planner arena|storage_token]`` draws the memory
plan of a model: every intermediate entry as a box over the steps it lives, at its bytes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

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
    return parser


def run(args: argparse.Namespace) -> int:
    """Draw the picture ``args.picture`` asks for."""
    from pytvm import graph
    from pytvm.cli.compile_model import import_model
    from pytvm.viz import memory_plan_svg

    mod, params = import_model(args.model, args.input_shapes)
    plan = graph.plan_memory(mod, params, planner=args.planner)
    Path(args.output).write_text(memory_plan_svg(plan, Path(args.model).stem))
    print(plan, file=sys.stderr)
    print(f"wrote {args.output}", file=sys.stderr)
    return 0
