"""``pytvm compile``: an ONNX model to one shared object (kernels, graph and parameters).

In the style of TVM's ``tvmc compile``::

    pytvm compile model.onnx -o net.so --target llvm --input-shapes "x:[1,3,224,224]"
"""

from __future__ import annotations

import argparse
import logging
import math
import re
import sys
import time
from typing import Any

from pytvm.ffi.errors import TVMValueError

__all__ = ["add_parser", "byte_count", "import_model", "parse_input_shapes", "run"]

_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def add_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    """Register ``compile`` on ``subparsers`` and return its parser."""
    parser = subparsers.add_parser(
        "compile",
        help="compile an ONNX model into one shared object",
        description="Import an ONNX model, optimize and fuse it, compile its kernels and write "
        "one shared object that pytvm.runtime.load_module (and `pytvm run`) loads.",
    )
    parser.add_argument("model", help="the ONNX file")
    parser.add_argument("-o", "--output", default="module.so", help="the shared object to write")
    parser.add_argument("--target", default="llvm", help="compilation target")
    parser.add_argument(
        "--input-shapes",
        default="",
        help='shapes of inputs with dynamic dimensions: "name:[1,3,224,224] other:[1,10]"',
    )
    parser.add_argument("--opt-level", type=int, default=3, help="graph optimization level")
    parser.add_argument(
        "--max-constant-bytes",
        type=byte_count,
        metavar="N",
        help="the largest constant the import or constant folding may make, in bytes (K, M, "
        "G suffixes: KiB, MiB, GiB; default: 512M); a larger one is refused at import and "
        "left to run time by folding",
    )
    parser.add_argument(
        "--memory-planner",
        choices=("arena", "storage_token"),
        default="arena",
        help="arena: offsets in one buffer per device; storage_token: TVM's planner",
    )
    parser.add_argument("--dump-ir", action="store_true", help="print the fused graph IR")
    return parser


def parse_input_shapes(text: str) -> dict[str, list[int]]:
    """``"x:[1,3,224,224] y:[1,10]"`` (spaces or commas between inputs) as a dict."""
    from pytvm.graph.ty import MAX_ELEMENTS  # the most elements a tensor may have

    shapes: dict[str, list[int]] = {}
    for name, dims in re.findall(r"([^\s:,]+)\s*:\s*\[([^\]]*)\]", text):
        try:
            shapes[name] = [int(d) for d in dims.replace(" ", "").split(",") if d]
        except ValueError:
            raise TVMValueError(
                f"--input-shapes: {name}:[{dims}] has a non-integer dimension"
            ) from None
        if any(d < 0 for d in shapes[name]):
            raise TVMValueError(
                f"--input-shapes: input {name!r} has a negative dimension in [{dims}]; "
                "dimensions are >= 0"
            )
        count = math.prod(shapes[name])
        if count > MAX_ELEMENTS:
            raise TVMValueError(
                f"--input-shapes: input {name!r} of shape [{dims}] has {count} elements, over "
                f"the limit of {MAX_ELEMENTS} (2**63 - 1); give the input's real shape"
            )
    leftover = re.sub(r"([^\s:,]+)\s*:\s*\[([^\]]*)\]", "", text).strip(" ,")
    if leftover:
        raise TVMValueError(
            f"--input-shapes: cannot read {leftover!r}; write name:[d0,d1,...] per input"
        )
    return shapes


def byte_count(text: str) -> int:
    """``--max-constant-bytes``: ``536870912``, ``512M``, ``2G`` (1024-based units).

    Examples
    --------
    >>> byte_count("512M"), byte_count("1024")
    (536870912, 1024)
    """
    match = re.fullmatch(r"\s*(\d+)\s*([KMGT]?)(?:i?B)?\s*", text, re.IGNORECASE)
    if match is None:
        raise argparse.ArgumentTypeError(
            f"expected a number of bytes, optionally with K, M, G or T (e.g. 512M), got {text!r}"
        )
    return int(match.group(1)) * _UNITS[match.group(2).upper()]


def import_model(
    path: str, input_shapes: str = "", max_constant_bytes: int | None = None
) -> tuple[Any, dict[str, Any]]:
    """``from_onnx`` of the ONNX file ``path`` with ``--input-shapes`` text; a clear error for
    a file that is not ONNX.
    """
    import onnx

    from pytvm.frontend import from_onnx
    from pytvm.frontend.onnx.specialize import ValueSpecializedModule

    try:
        model = onnx.load(path)
    except Exception as err:
        raise TVMValueError(f"{path} is not a readable ONNX model: {err}") from None
    shapes = parse_input_shapes(input_shapes) if input_shapes else None
    mod, params = from_onnx(model, shape_dict=shapes, max_constant_bytes=max_constant_bytes)
    if isinstance(mod, ValueSpecializedModule):  # shapes from input values: none given here
        raise mod.required_error(f"pytvm compile {path}")
    return mod, params


def run(args: argparse.Namespace) -> int:
    """Compile ``args.model`` to ``args.output``."""
    from pytvm import graph
    from pytvm.transform import PassContext

    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    start = time.perf_counter()
    mod, params = import_model(args.model, args.input_shapes, args.max_constant_bytes)
    config = {}
    if args.max_constant_bytes is not None:
        config["graph.max_constant_bytes"] = args.max_constant_bytes
    with PassContext(opt_level=args.opt_level, config=config):
        if args.dump_ir:
            print(graph.transform.optimize(_bound(mod, params)))
        lib = graph.build(
            mod, target=args.target, params=params, memory_planner=args.memory_planner
        )
    lib.export_library(args.output)
    print(f"wrote {args.output} in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return 0


def _bound(mod: Any, params: dict[str, Any]) -> Any:
    from pytvm.graph.transform import bind_params

    return mod.with_function(bind_params(mod["main"], params), "main")
