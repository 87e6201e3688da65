"""``pytvm compile``: an ONNX model to one shared object (kernels, graph and parameters), or
to Model Library Format for a microcontroller.

In the style of TVM's ``tvmc compile``::

    pytvm compile model.onnx -o net.so --target llvm --input-shapes "x:[1,3,224,224]"
    pytvm compile model.onnx --target "c -mcpu=cortex-m4" --executor aot --runtime crt \
        --executor-aot-interface-api c --executor-aot-unpacked-api 1 --output-format mlf \
        -o model.tar

``--executor aot`` builds the model ahead of time (one C entry ``tvmgen_<mod>_run``, a static
workspace, the weights as const arrays); its options are tvmc's ``--executor-aot-<option>``
flags or ``--executor-options key=value,...``. ``--pass-config key=value`` (repeatable) sets
``PassContext`` options. ``--output-format mlf`` writes Model Library Format (a ``.tar``).
``--tuning-records records.json`` builds under ``autotvm.apply_history_best`` of that log (what
``pytvm tune`` wrote): each tunable kernel takes its fastest recorded configuration.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import math
import re
import sys
import time
from pathlib import Path
from typing import Any

from pytvm.ffi.errors import TVMValueError

__all__ = ["add_parser", "byte_count", "import_model", "parse_input_shapes", "run"]

_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
#: tvmc's ``--executor-aot-<option>`` flags (TVM's AOT executor options).
_AOT_OPTIONS = {
    "interface-api": "c (structs of inputs/outputs) or packed",
    "unpacked-api": "1: call kernels with plain pointers (TVM's unpacked API)",
    "link-params": "1: weights as const arrays in the C",
    "workspace-byte-alignment": "alignment of the static workspace in bytes",
    "constant-byte-alignment": "alignment of the constant arrays in bytes",
}


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
    parser.add_argument(
        "-o", "--output", help="the file to write (default: module.so, or module.tar for mlf)"
    )
    parser.add_argument(
        "--output-format",
        choices=("so", "mlf"),
        default="so",
        help="so: one shared object; mlf: Model Library Format tar (a C target)",
    )
    parser.add_argument(
        "--executor", choices=("graph", "aot"), default="graph", help="the executor (tvmc's)"
    )
    for option, help_text in _AOT_OPTIONS.items():
        parser.add_argument(f"--executor-aot-{option}", metavar="VALUE", help=help_text)
    parser.add_argument(
        "--executor-options",
        default="",
        metavar="K=V,...",
        help="executor options as key=value pairs, e.g. interface-api=c,unpacked-api=1",
    )
    parser.add_argument("--runtime", choices=("cpp", "crt"), help="the runtime (tvmc's)")
    parser.add_argument(
        "--runtime-crt-system-lib", metavar="VALUE", help="crt runtime option system-lib (0/1)"
    )
    parser.add_argument(
        "--pass-config",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a PassContext option (repeatable), e.g. tir.disable_vectorize=1",
    )
    parser.add_argument("--module-name", default="default", help="the model's name (mod_name)")
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
    parser.add_argument(
        "--tuning-records",
        metavar="PATH",
        help="an AutoTVM log (pytvm tune's --output): each kernel uses its fastest record",
    )
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


def _option_value(text: str) -> Any:
    """``"1"`` -> 1, ``"true"`` -> True, ``"c"`` -> ``"c"`` (typed by the option's schema later)."""
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    if re.fullmatch(r"-?\d+", low):
        return int(low)
    return text.strip()


def _pairs(items: list[str], flag: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise TVMValueError(f"{flag} {item!r}: write key=value")
        out[key.strip()] = _option_value(value)
    return out


def _executor_options(args: argparse.Namespace) -> dict[str, Any]:
    given = [p for p in args.executor_options.split(",") if p.strip()]
    options = _pairs(given, "--executor-options")
    for option in _AOT_OPTIONS:
        value = getattr(args, "executor_aot_" + option.replace("-", "_"))
        if value is not None:
            if args.executor != "aot":
                raise TVMValueError(f"--executor-aot-{option} needs --executor aot")
            options[option] = _option_value(value)
    return options


def _build(args: argparse.Namespace, mod: Any, params: dict[str, Any]) -> Any:
    """The factory ``args`` ask for: graph.build, or relay.build with Executor/Runtime."""
    from pytvm import graph

    if args.executor == "graph" and args.runtime is None and not args.executor_options:
        return graph.build(
            mod,
            target=args.target,
            params=params,
            memory_planner=args.memory_planner,
            mod_name=args.module_name,
        )
    from pytvm import relay

    runtime_options: dict[str, Any] = {}
    if args.runtime_crt_system_lib is not None:
        runtime_options["system-lib"] = _option_value(args.runtime_crt_system_lib)
    runtime_name = args.runtime or ("crt" if args.executor == "aot" else "cpp")
    return relay.build(
        mod,
        target=args.target,
        executor=relay.backend.Executor(args.executor, _executor_options(args)),
        runtime=relay.backend.Runtime(runtime_name, runtime_options),
        params=params,
        mod_name=args.module_name,
    )


def run(args: argparse.Namespace) -> int:
    """Compile ``args.model`` to ``args.output``."""
    from pytvm import graph
    from pytvm.transform import PassContext

    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    start = time.perf_counter()
    output = args.output or ("module.tar" if args.output_format == "mlf" else "module.so")
    if args.output_format == "mlf" and not output.endswith(".tar"):
        raise TVMValueError(f"--output-format mlf writes a .tar; got -o {output}")
    _executor_options(args)  # refuse bad options before the import
    records = _tuning_records(args.tuning_records)
    mod, params = import_model(args.model, args.input_shapes, args.max_constant_bytes)
    config = _pairs(args.pass_config, "--pass-config")
    if args.max_constant_bytes is not None:
        config["graph.max_constant_bytes"] = args.max_constant_bytes
    with PassContext(opt_level=args.opt_level, config=config):
        if args.dump_ir:
            print(graph.transform.optimize(_bound(mod, params)))
        with records:
            lib = _build(args, mod, params)
    if args.output_format == "mlf":
        from pytvm.micro import export_model_library_format

        export_model_library_format(lib, output)
    else:
        lib.export_library(output)
    print(f"wrote {output} in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return 0


def _tuning_records(path: str | None) -> contextlib.AbstractContextManager[Any]:
    """``autotvm.apply_history_best(path)`` (nothing to apply without a path)."""
    if path is None:
        return contextlib.nullcontext()
    if not Path(path).is_file():
        raise TVMValueError(f"--tuning-records {path}: no such file")
    from pytvm import autotvm

    return autotvm.apply_history_best(path)


def _bound(mod: Any, params: dict[str, Any]) -> Any:
    from pytvm.graph.transform import bind_params

    return mod.with_function(bind_params(mod["main"], params), "main")
