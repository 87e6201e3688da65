"""Measured sizes of compiled C: sections by ``size -A`` and the deepest stack by GCC's call graph.

:func:`measure_sources` compiles C text for a target with its compiler (``arm-none-eabi-gcc``
for bare-metal Arm, the host ``cc`` for the host), ``-Os -ffunction-sections
-fdata-sections -fcallgraph-info=su``, and returns the bytes of ``.text``, ``.rodata``,
``.data`` and ``.bss`` with the stack of the deepest call chain from given roots (GCC's
``-fcallgraph-info=su`` frame sizes summed along the call graph; calls into the C library and
through function pointers add nothing). :func:`measure_crt_image` does the same for the C
runtime's device image (``make -C pytvm/src/crt image-<arch>-<config>``), built once per
compiler into pytvm's cache folder.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..ffi.errors import TVMError, TVMValueError
from ..ffi.libinfo import cache_dir, include_dir, source_dir

__all__ = ["Measured", "compiler_for", "measure_crt_image", "measure_sources"]

_SIZE_FLAGS = ("-Os", "-ffunction-sections", "-fdata-sections", "-fcallgraph-info=su")
_TIMEOUT_S = 600


@dataclass(frozen=True)
class Measured:
    """Section bytes of some objects and the stack of their deepest call chain."""

    text: int
    rodata: int
    data: int
    bss: int
    stack: int
    frames: dict[str, int]

    def deepest(self, root: str) -> int:
        """The stack bytes of the deepest chain from ``root`` (0 if unknown)."""
        return self.frames.get(root, 0)


def compiler_for(target: Any) -> tuple[str, str]:
    """``(C compiler, size tool)`` that make code for ``target`` (a ``Target``)."""
    if target.is_host:
        return "cc", "size"
    if target.arch == "arm" and target.bare_metal:
        cc = "arm-none-eabi-gcc"
        if shutil.which(cc) is None:
            raise TVMError(
                f"measuring code for target '{target}' needs {cc}, which is not installed "
                "(Debian: apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi, or "
                "`make mcu`)"
            )
        return cc, "arm-none-eabi-size"
    raise TVMValueError(
        f"no cross compiler known for target '{target}' (arch {target.arch}); memory reports "
        "measure bare-metal Arm (arm-none-eabi-gcc) and host targets"
    )


def _run(cmd: list[str], cwd: Path | None = None) -> str:
    try:
        done = subprocess.run(
            cmd, cwd=cwd, capture_output=True, text=True, timeout=_TIMEOUT_S, check=False
        )
    except FileNotFoundError:
        raise TVMError(f"{cmd[0]} not found; it measures compiled code") from None
    if done.returncode != 0:
        raise TVMError(
            f"{' '.join(cmd[:3])} ... failed with status {done.returncode}:\n"
            f"{(done.stderr or done.stdout)[-3000:]}"
        )
    return done.stdout


def _sections(size_tool: str, objects: list[Path]) -> dict[str, int]:
    totals = {"text": 0, "rodata": 0, "data": 0, "bss": 0}
    for line in _run([size_tool, "-A", *map(str, objects)]).splitlines():
        name, _, rest = line.partition(" ")
        size = rest.split()[0] if rest.split() else ""
        if not name.startswith(".") or not size.isdigit():
            continue
        for kind in totals:
            if name == f".{kind}" or name.startswith(f".{kind}."):
                totals[kind] += int(size)
    return totals


_NODE = re.compile(r'node: \{ title: "([^"]+)" label: "[^"]*\\n(\d+) bytes \((\w+)')
_EDGE = re.compile(r'edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)"')


def _call_graph(ci_files: list[Path]) -> tuple[dict[str, int], dict[str, set[str]]]:
    frames: dict[str, int] = {}
    calls: dict[str, set[str]] = {}
    for path in ci_files:
        text = path.read_text(errors="replace")
        for name, size, _kind in _NODE.findall(text):
            frames[name] = max(frames.get(name, 0), int(size))
        for src, dst in _EDGE.findall(text):
            calls.setdefault(src, set()).add(dst)
    return frames, calls


def _deepest(frames: dict[str, int], calls: dict[str, set[str]]) -> dict[str, int]:
    """Per function, its frame plus the deepest callee chain (a cycle counts each frame once)."""
    memo: dict[str, int] = {}

    def walk(name: str, on_path: frozenset[str]) -> int:
        if name in memo:
            return memo[name]
        if name in on_path:
            return 0
        inner = on_path | {name}
        best = max((walk(c, inner) for c in calls.get(name, ())), default=0)
        memo[name] = frames.get(name, 0) + best
        return memo[name]

    for name in frames:
        walk(name, frozenset())
    return memo


def _measure(objects: list[Path], size_tool: str, root: str | None = None) -> Measured:
    """Sections of ``objects``; stack: the deepest chain from ``root``, else from anywhere."""
    sections = _sections(size_tool, objects)
    ci = sorted({p for o in objects for p in o.parent.rglob("*.ci")})
    frames, calls = _call_graph(ci)
    deepest = _deepest(frames, calls)
    stack = deepest.get(root, 0) if root else max(deepest.values(), default=0)
    return Measured(**sections, stack=stack, frames=deepest)


def measure_sources(
    sources: dict[str, str], headers: dict[str, str], cflags: list[str], target: Any
) -> Measured:
    """Compile ``sources`` (with ``headers`` beside them) for ``target`` and measure them."""
    cc, size_tool = compiler_for(target)
    key = hashlib.sha256(
        repr((sorted(sources.items()), sorted(headers.items()), cflags, cc)).encode()
    )
    return _measure_cached(key.hexdigest(), sources, headers, tuple(cflags), cc, size_tool)


def _measure_cached(
    key: str,
    sources: dict[str, str],
    headers: dict[str, str],
    cflags: tuple[str, ...],
    cc: str,
    size_tool: str,
) -> Measured:
    if key in _MEMO:
        return _MEMO[key]
    includes = [f"-I{include_dir()}", f"-I{source_dir() / 'crt' / 'include'}"]
    with tempfile.TemporaryDirectory(prefix="pytvm-size-") as tmp:
        work = Path(tmp)
        for name, text in {**headers, **sources}.items():
            (work / name).write_text(text)
        objects = []
        for name in sources:
            obj = work / (Path(name).stem + ".o")
            _run(
                [
                    cc,
                    "-std=gnu99",
                    *cflags,
                    *_SIZE_FLAGS,
                    f"-I{work}",
                    *includes,
                    "-c",
                    name,
                    "-o",
                    obj.name,
                ],
                cwd=work,
            )
            objects.append(obj)
        result = _measure(objects, size_tool)
    _MEMO[key] = result
    return result


_MEMO: dict[str, Measured] = {}

_IMAGE_TARGETS = {"arm": "cortex-m4", "x86_64": "x86-64"}


def measure_crt_image(target: Any, config: str = "full") -> Measured:
    """The C runtime's device image for ``target``'s architecture (``config``: ``"full"`` or
    ``"minimal"``): MinRPC, serial framing and the runtime, linked with ``--gc-sections``
    from ``main`` (C library excluded), plus the CRT's AOT executor when the tree has one.
    Built with ``make`` into ``<cache>/micro-crt/<source tree>/`` once per compiler (one folder
    per CRT source tree: make's dependency files name the sources' absolute paths, so two
    checkouts never share one); ``make`` rebuilds on a change.
    """
    if config not in ("full", "minimal"):
        raise TVMValueError(f"CRT image config {config!r}; expected 'full' or 'minimal'")
    cc, size_tool = compiler_for(target)
    image = _IMAGE_TARGETS.get(target.arch)
    if image is None:
        raise TVMValueError(f"no CRT image for arch {target.arch} (images: {list(_IMAGE_TARGETS)})")
    tree = hashlib.sha256(str(source_dir().resolve()).encode()).hexdigest()[:16]
    out = cache_dir() / "micro-crt" / tree / image
    var = "CROSS_CC" if image == "cortex-m4" else "CC"
    _run(
        [
            "make",
            "-s",
            "-j2",
            "-C",
            str(source_dir() / "crt"),
            f"O={out}",
            f"{var}={cc} -fcallgraph-info=su",
            f"image-{image}-{config}",
        ]
    )
    folder = out / "image" / f"{image}-{config}"
    objects = [folder / "image.o"]
    executor = sorted((source_dir() / "crt" / "aot_executor").glob("*.c"))
    if executor:
        sources = {p.name: p.read_text() for p in executor}
        headers = {
            p.name: p.read_text() for p in (source_dir() / "crt" / "aot_executor").glob("*.h")
        }
        flags = list(target.cflags) or []
        extra = measure_sources(sources, headers, [*flags, "-DPYTVM_CRT=1"], target)
        base = _measure(objects, size_tool, root="main")
        return Measured(
            text=base.text + extra.text,
            rodata=base.rodata + extra.rodata,
            data=base.data + extra.data,
            bss=base.bss + extra.bss,
            stack=base.stack + extra.stack,
            frames={**base.frames, **extra.frames},
        )
    return _measure(objects, size_tool, root="main")
