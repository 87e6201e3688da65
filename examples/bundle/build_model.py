"""Compile an ONNX model with pytvm's AOT executor into the files of a standalone C program.

Run: ``python examples/bundle/build_model.py --model kws_cnn --out examples/bundle/build/kws_cnn``
(the Makefile does). ``--model`` is a model of ``models/make_mcu_models.py`` (``kws_cnn``,
``person_detect_cnn``), of ``models/make_models.py`` (``cnn_small``, ``mlp``) or a path to an
``.onnx`` file of one input. It writes into ``--out``:

model/src/*.c, model/include/*.h
    the model's C: kernels, ``tvmgen_default_run``, the static workspace, the weights as const
    arrays (the AOT factory's ``export_library("model.tar")``, or with ``--mlf`` the
    ``codegen/host`` part of a Model Library Format archive, ``model.mlf.tar``)
model/host_cflags, model/board_cflags
    the module's compiler flags for the machine its target names (the other file empty)
bundle_data.h
    the input arrays (from ``--input FILE.npy``, else the model script's ``input_for``), the
    output buffers, their descriptions and ``bundle_bind()`` for ``main.c``
input.npy, input0.bin
    the input as an array and as raw bytes (``bundle input0.bin`` reads it on the host)
expected_output.npy
    ONNX Runtime's output for that input (when onnxruntime is installed)
model.json
    the model's figures: workspace, constant and I/O bytes, kernels, the output's quantization
    step (int8 models)
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import sys
import tarfile
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[2]
MODEL_SCRIPTS = (REPO / "models" / "make_mcu_models.py", REPO / "models" / "make_models.py")
DEFAULT_TARGET = "c -mcpu=cortex-m4"
# element type of bundle_data.h per dtype: (C type, bundle_dtype enumerator)
C_TYPES = {
    "float32": ("float", "BUNDLE_FLOAT32"),
    "int8": ("int8_t", "BUNDLE_INT8"),
    "uint8": ("uint8_t", "BUNDLE_UINT8"),
    "int32": ("int32_t", "BUNDLE_INT32"),
}


def _script(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_model(name: str, seed: int) -> tuple[Any, str, np.ndarray]:
    """``(onnx model, input name, input array)`` of a model script's model or an ONNX file."""
    import onnx

    for path in MODEL_SCRIPTS:
        script = _script(path)
        if name in script.MODELS:
            model = script.MODELS[name]()
            inp, x = script.input_for(model, seed)
            return model, inp, x
    if not name.endswith(".onnx") or not Path(name).is_file():
        known = sorted(k for p in MODEL_SCRIPTS for k in _script(p).MODELS)
        raise ValueError(f"--model {name!r}: neither a model of {known} nor an .onnx file")
    model = onnx.load(name)
    inp = model.graph.input[0]
    shape = [d.dim_value for d in inp.type.tensor_type.shape.dim]
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return model, inp.name, x


def build_aot(model: Any, target: str) -> Any:
    """The AOT executor factory of ``model`` (TVM's ``relay.build`` with the AOT executor)."""
    from pytvm import relay, transform
    from pytvm.frontend import from_onnx
    from pytvm.relay import backend

    mod, params = from_onnx(model)
    executor = backend.Executor(
        "aot", {"interface-api": "c", "unpacked-api": True, "link-params": True}
    )
    runtime = backend.Runtime("crt", {"system-lib": True})
    with transform.PassContext(opt_level=3):
        return relay.build(
            mod,
            target=target,
            executor=executor,
            runtime=runtime,
            params=params,
            mod_name="default",
        )


def export_model(factory: Any, out: Path, mlf: bool) -> Path:
    """Unpack the model's C into ``out/model/{src,include}``; the directory."""
    model_dir = out / "model"
    shutil.rmtree(model_dir, ignore_errors=True)
    if mlf:
        from pytvm.micro import export_model_library_format

        archive = out / "model.mlf.tar"
        export_model_library_format(factory, str(archive))
        prefix = "codegen/host/"
    else:
        archive = out / "model.tar"
        factory.export_library(str(archive))
        prefix = ""
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            name = member.name.removeprefix("./")
            if not member.isfile() or not name.startswith(prefix):
                continue
            rel = name[len(prefix) :]
            if not rel.startswith(("src/", "include/")):
                continue
            data = tar.extractfile(member)
            assert data is not None
            dest = model_dir / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data.read())
    if not list((model_dir / "src").glob("*.c")):
        raise RuntimeError(f"{archive} holds no {prefix}src/*.c")
    return model_dir


def _c_array(values: np.ndarray) -> str:
    """The elements as C initializers, 8 a line (floats exact: 9 significant digits)."""
    flat = values.reshape(-1)
    if flat.dtype == np.float32:
        items = [f"{float(v):.9g}F" if np.isfinite(v) else "0.0F" for v in flat]
    else:
        items = [str(int(v)) for v in flat]
    lines = [", ".join(items[i : i + 8]) for i in range(0, len(items), 8)]
    return "    " + ",\n    ".join(lines)


def _c_type(dtype: str, where: str) -> tuple[str, str]:
    if dtype not in C_TYPES:
        raise ValueError(f"{where}: dtype {dtype} has no C type here; supported: {sorted(C_TYPES)}")
    return C_TYPES[dtype]


def bundle_data_header(model_name: str, factory: Any, inputs: list[np.ndarray]) -> str:
    """``bundle_data.h``: input arrays, output buffers, descriptions and ``bundle_bind``."""
    lines = [
        "/* Generated by examples/bundle/build_model.py: the bundle's inputs and outputs. */",
        "#ifndef BUNDLE_DATA_H_",
        "#define BUNDLE_DATA_H_",
        "#include <stddef.h>",
        "#include <stdint.h>",
        "",
        f'#include "tvmgen_{factory.mod_name}.h"',
        "",
        f'#define BUNDLE_MODEL_NAME "{model_name}"',
        f"#define BUNDLE_NUM_INPUTS {len(factory.inputs)}U",
        f"#define BUNDLE_NUM_OUTPUTS {len(factory.outputs)}U",
        "",
        "typedef enum { BUNDLE_FLOAT32, BUNDLE_INT8, BUNDLE_UINT8, BUNDLE_INT32 } bundle_dtype;",
        "typedef struct {",
        "  const char* name;",
        "  const char* dtype_name;",
        "  bundle_dtype dtype;",
        "  size_t count;",
        "  size_t nbytes;",
        "  void* data;",
        "} bundle_tensor;",
        "",
    ]
    binds, in_descs, out_descs = [], [], []
    for i, (info, value) in enumerate(zip(factory.inputs, inputs, strict=True)):
        ctype, enum = _c_type(info.dtype, f"input {info.name!r}")
        if tuple(value.shape) != tuple(info.shape) or str(value.dtype) != info.dtype:
            raise ValueError(
                f"input {info.name!r}: the array is {value.dtype}{list(value.shape)}, the model"
                f" takes {info.dtype}{list(info.shape)}"
            )
        count = int(np.prod(info.shape))
        lines += [f"static {ctype} bundle_input{i}[{count}] = {{", _c_array(value), "};"]
        desc = f'"{info.name}", "{info.dtype}", {enum}, {count}U, {info.nbytes}U'
        in_descs.append(f"  {{{desc}, bundle_input{i}}}")
        binds.append(f"  inputs->{info.c_name} = bundle_input{i};")
    for i, info in enumerate(factory.outputs):
        ctype, enum = _c_type(info.dtype, f"output {info.name!r}")
        count = int(np.prod(info.shape))
        lines.append(f"static {ctype} bundle_output{i}[{count}];")
        desc = f'"{info.name}", "{info.dtype}", {enum}, {count}U, {info.nbytes}U'
        out_descs.append(f"  {{{desc}, bundle_output{i}}}")
        binds.append(f"  outputs->{info.c_name} = bundle_output{i};")
    mod = factory.mod_name
    lines += [
        "",
        "static const bundle_tensor bundle_inputs[] = {",
        ",\n".join(in_descs),
        "};",
        "static const bundle_tensor bundle_outputs[] = {",
        ",\n".join(out_descs),
        "};",
        "",
        "/*! \\brief Point the run function's structs at the arrays above. */",
        f"static void bundle_bind(struct tvmgen_{mod}_inputs* inputs,",
        f"                        struct tvmgen_{mod}_outputs* outputs) {{",
        *binds,
        "}",
        "",
        "#endif /* BUNDLE_DATA_H_ */",
        "",
    ]
    return "\n".join(lines)


def onnxruntime_output(model: Any, name: str, x: np.ndarray) -> np.ndarray | None:
    """ONNX Runtime's first output for ``{name: x}``, or None without onnxruntime."""
    if importlib.util.find_spec("onnxruntime") is None:
        return None
    import onnxruntime

    sess = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    return np.asarray(sess.run(None, {name: x})[0])


def build(
    model_name: str,
    out: Path,
    *,
    target: str = DEFAULT_TARGET,
    seed: int = 1,
    input_path: Path | None = None,
    mlf: bool = False,
) -> Any:
    """Build the model's C and the bundle's data into ``out``; the AOT executor factory."""
    model, inp_name, x = load_model(model_name, seed)
    if input_path is not None:
        x = np.load(input_path)
    name = Path(model_name).stem if model_name.endswith(".onnx") else model_name
    out.mkdir(parents=True, exist_ok=True)
    factory = build_aot(model, target)
    model_dir = export_model(factory, out, mlf)
    # the module's flags (-march=native for "c", -mcpu=cortex-m4 ... for a Cortex-M4) for the
    # build of the machine the model was compiled for; -I flags are the Makefile's
    flags = " ".join(f for f in factory.lib.cflags if not f.startswith("-I"))
    is_host = bool(factory.target.is_host)
    (model_dir / "host_cflags").write_text((flags if is_host else "") + "\n")
    (model_dir / "board_cflags").write_text(("" if is_host else flags) + "\n")
    np.save(out / "input.npy", x)
    (out / "input0.bin").write_bytes(np.ascontiguousarray(x).tobytes())
    expected = onnxruntime_output(model, inp_name, x)
    if expected is not None:
        np.save(out / "expected_output.npy", expected)

    def tensors(infos: Any) -> list[dict[str, Any]]:
        return [{"name": t.name, "shape": list(t.shape), "dtype": t.dtype} for t in infos]

    figures = {
        "model": name,
        "target": str(factory.target),
        "workspace_bytes": int(factory.workspace_bytes),
        "constant_bytes": int(factory.constant_bytes),
        "io_bytes": int(factory.io_bytes),
        # an int8 output's quantization step (0.0 for float): builds may differ by one step
        "output_step": float(_script(MODEL_SCRIPTS[0]).output_step(model)),
        "kernels": [k.name for k in factory.kernels],
        "inputs": tensors(factory.inputs),
        "outputs": tensors(factory.outputs),
    }
    (out / "model.json").write_text(json.dumps(figures, indent=1) + "\n")
    # last: the Makefile takes this file as the sign that the model is built
    (out / "bundle_data.h").write_text(bundle_data_header(name, factory, [x]))
    sources = sorted(p.name for p in (model_dir / "src").glob("*.c"))
    print(
        f"{name}: {len(factory.kernels)} kernels, workspace {factory.workspace_bytes} B,"
        f" constants {factory.constant_bytes} B, I/O {factory.io_bytes} B -> {model_dir}"
        f" ({', '.join(sources)})"
    )
    if expected is not None:
        print(f"onnxruntime: top class {int(expected.argmax())} -> {out / 'expected_output.npy'}")
    return factory


def main(argv: list[str] | None = None) -> int:
    """Build the model's C and the bundle's data into ``--out``."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--model", default="kws_cnn", help="model name or .onnx path")
    ap.add_argument("--out", type=Path, required=True, help="output directory")
    ap.add_argument("--target", default=DEFAULT_TARGET, help=f"default {DEFAULT_TARGET!r}")
    ap.add_argument("--input", type=Path, help="input .npy (default: the model's input_for)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the default input")
    ap.add_argument("--mlf", action="store_true", help="take the C from a Model Library Format")
    args = ap.parse_args(argv)
    build(
        args.model,
        args.out,
        target=args.target,
        seed=args.seed,
        input_path=args.input,
        mlf=args.mlf,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
