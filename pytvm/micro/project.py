"""TVM v0.18's microTVM projects: a template (``host``, ``qemu-cortex-m4``) filled with a model
becomes a standalone folder that builds the device, flashes it and opens its transport.

A generated project holds everything it builds from: ``runtime/`` (the C runtime's sources and
pytvm's C headers, as TVM's standalone CRT), ``model/src`` + ``model/include`` (the module's C),
``app/`` (the I/O buffers, ``pytvm_aot_model`` and ``pytvm_app_init``: ``pytvm.micro.app_sources``),
the template's own files (its ``Makefile``, sources), ``project.mk`` (the sources and options
the Makefile reads) and ``project.json`` (template, options, the model's inputs and outputs).

``module`` is either a source module of kernels built with ``--system-lib`` (served by
``Session.get_system_lib()``) or an AOT executor factory / Model Library Format model (served
by ``Session.create_aot_executor()``).

Options (``options=``; TVM's names where TVM has one; unknown names are refused):
``verbose`` (bool: echo the build's commands), ``build_timeout`` (seconds, default 300),
``cc`` (host: the C compiler), ``memory_pool_log2`` (host: log2 of the CRT's array pool),
``workspace_size_bytes`` (host: the CRT's workspace stack for kernels' scratch),
``icount_shift`` (qemu: QEMU's ``-icount shift``; 0 makes the device timer count instructions),
``board`` (qemu: the board folder, ``mps2-an386``), ``connect_timeout`` (qemu: seconds for
QEMU's UART and the handshake), ``config_main_stack_size`` (qemu: the main stack's bytes).

Examples
--------
>>> project = tvm.micro.generate_project(                        # doctest: +SKIP
...     tvm.micro.get_microtvm_template_projects("crt"), factory, "/tmp/proj")
>>> project.build()                                              # doctest: +SKIP
>>> with tvm.micro.Session(project.transport()) as sess:        # doctest: +SKIP
...     sess.create_aot_executor().run()
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..ffi.errors import TVMTypeError, TVMValueError
from ..ffi.libinfo import include_dir, source_dir
from . import platforms
from .app_sources import app_sources
from .transport import SessionTransport

__all__ = [
    "GeneratedProject",
    "TemplateProject",
    "generate_project",
    "generate_project_from_mlf",
    "get_microtvm_template_projects",
]

TEMPLATES_DIR = Path(__file__).resolve().parent / "templates"
#: TVM's platform names -> template folders.
_PLATFORMS = {"crt": "host", "host": "host", "qemu-cortex-m4": "qemu-cortex-m4"}
_TEMPLATE_FILE = "template.json"
_PROJECT_FILE = "project.json"


def get_microtvm_template_projects(platform: str) -> str:
    """The template folder of ``platform`` (``"crt"``/``"host"``, ``"qemu-cortex-m4"``)."""
    if platform not in _PLATFORMS:
        raise TVMValueError(
            f"no microTVM template for platform {platform!r}; expected one of {sorted(_PLATFORMS)}"
        )
    return str(TEMPLATES_DIR / _PLATFORMS[platform])


class TemplateProject:
    """A template folder (``template.json``, its Makefile and sources)."""

    def __init__(self, template_dir: Path, info: dict[str, Any]) -> None:
        self.template_dir = template_dir
        self._info = info

    @classmethod
    def from_directory(cls, template_project_dir: str | os.PathLike[str]) -> TemplateProject:
        """The template at ``template_project_dir`` (or a platform name, e.g. ``"host"``)."""
        text = os.fspath(template_project_dir)
        path = Path(get_microtvm_template_projects(text)) if text in _PLATFORMS else Path(text)
        info_file = path / _TEMPLATE_FILE
        if not info_file.is_file():
            raise TVMValueError(
                f"{path} is not a microTVM template project (no {_TEMPLATE_FILE}); use "
                f"get_microtvm_template_projects(platform) with one of {sorted(_PLATFORMS)}"
            )
        return cls(path, json.loads(info_file.read_text()))

    def info(self) -> dict[str, Any]:
        """The template's description: ``name``, ``platform``, ``options`` (name -> spec)."""
        return dict(self._info)

    def resolve_options(self, options: Mapping[str, Any] | None) -> dict[str, Any]:
        """``options`` checked against the template's, with the defaults of the others."""
        specs: dict[str, dict[str, Any]] = self._info["options"]
        given = dict(options or {})
        unknown = sorted(set(given) - set(specs))
        if unknown:
            raise TVMValueError(
                f"template {self._info['name']!r} has no option(s) {unknown}; its options are "
                f"{sorted(specs)}"
            )
        return {name: given.get(name, spec["default"]) for name, spec in specs.items()}

    def generate_project(
        self, module: Any, project_dir: str | os.PathLike[str], options: Mapping[str, Any] | None
    ) -> GeneratedProject:
        """Write the project for ``module`` into the new folder ``project_dir``."""
        opts = self.resolve_options(options)
        model = _ModelParts.of(module)
        out = Path(project_dir)
        if out.exists() and any(out.iterdir()):
            raise TVMValueError(
                f"generate_project: {out} exists and is not empty; give a new folder"
            )
        out.mkdir(parents=True, exist_ok=True)
        shutil.copytree(
            self.template_dir,
            out,
            dirs_exist_ok=True,
            ignore=shutil.ignore_patterns(_TEMPLATE_FILE),
        )
        _copy_runtime(out / "runtime")
        _write_all(out / "model" / "src", model.sources)
        _write_all(out / "model" / "include", model.headers)
        _write_all(out / "app", app_sources(model.mod_name, model.inputs, model.outputs))
        platform = _platform_of(self._info["platform"])
        (out / "project.mk").write_text(platform.project_mk(model.make_vars(), opts))
        description = {
            "template": self._info["name"],
            "platform": self._info["platform"],
            "options": opts,
            "model": model.describe(),
        }
        (out / _PROJECT_FILE).write_text(json.dumps(description, indent=2) + "\n")
        return GeneratedProject(out, opts)

    def generate_project_from_mlf(
        self,
        model_library_format_path: str | os.PathLike[str],
        project_dir: str | os.PathLike[str],
        options: Mapping[str, Any] | None,
    ) -> GeneratedProject:
        """Write the project for a Model Library Format archive or folder."""
        from .model_library_format import read_model_library_format

        model = read_model_library_format(Path(model_library_format_path))
        return self.generate_project(model, project_dir, options)


def _is_host_c_module(module: Any) -> bool:
    """A C module compiled for this machine that kept its source (``pytvm.build(...,
    target='c ...')``, or ``'llvm ...'`` built through C); TVM's C source module of a ``c``
    target plays this part.
    """
    return (
        getattr(module, "type_key", None) in ("c", "library")
        and callable(getattr(module, "get_source", None))
        and isinstance(getattr(module, "target", None), str)
        and not isinstance(getattr(module, "sources", None), dict)
        and str(module.target).split()[:1] in (["c"], ["llvm"])  # llvm: built through C
    )


class _ModelParts:
    """What a project needs of a module: its C, flags, and the model's I/O (None: kernels)."""

    def __init__(self, module: Any) -> None:
        lib = module.lib if _is_aot_model(module) else module
        if _is_host_c_module(lib):  # built for this machine from C: its source serves the CRT
            self.sources: dict[str, str] = {"lib0.c": lib.get_source()}
        else:
            self.sources = dict(lib.sources)
        self.headers: dict[str, str] = dict(getattr(lib, "headers", {}) or {})
        self.cflags: list[str] = list(getattr(lib, "cflags", []) or [])
        self.mod_name: str | None = str(module.mod_name) if _is_aot_model(module) else None
        self.inputs = list(module.inputs) if self.mod_name is not None else []
        self.outputs = list(module.outputs) if self.mod_name is not None else []

    @classmethod
    def of(cls, module: Any) -> _ModelParts:
        if _is_host_c_module(module) and "--system-lib" not in str(module.target):
            raise TVMValueError(
                f"generate_project: the kernels were built for {module.target!r}, not as a "
                "system library: build with runtime=Runtime('crt', {'system-lib': True}) or "
                "target '... --system-lib'"
            )
        if (
            not _is_aot_model(module)
            and not _is_host_c_module(module)
            and not isinstance(getattr(module, "sources", None), dict)
        ):
            raise TVMTypeError(
                f"generate_project needs C sources: a source module (pytvm.build(..., "
                f"target='c ... --system-lib') for a non-host target, or target='c'), an AOT "
                f"executor factory (relay.build(..., executor=Executor('aot', ...))) or a Model "
                f"Library Format model; got {type(module).__name__}"
            )
        parts = cls(module)
        if not parts.sources:
            raise TVMValueError("generate_project: the module holds no C sources")
        return parts

    def make_vars(self) -> dict[str, str]:
        """The Makefile variables of the model: its sources, app sources, flags, syslib."""
        model_srcs = [f"model/src/{n}" for n in sorted(self.sources) if n.endswith(".c")]
        app_srcs = ["app/app_init.c"] + (["app/model_io.c"] if self.mod_name else [])
        has_syslib = any("TVMSystemLibEntryPoint" in text for text in self.sources.values())
        syslib = "" if has_syslib else "runtime/src/crt/platform/empty_system_lib.c"
        # Defines only: the board's Makefile gives the CPU flags, the host needs none.
        defines = [f for f in self.cflags if f.startswith(("-D", "-U"))]
        return {
            "MODEL_SRCS": " ".join(model_srcs),
            "APP_SRCS": " ".join(app_srcs),
            "SYSLIB_SRCS": syslib,
            "MODEL_CFLAGS": " ".join(defines),
        }

    def describe(self) -> dict[str, Any]:
        def tensors(items: list[Any]) -> list[dict[str, Any]]:
            return [
                {"name": t.name, "dtype": str(t.dtype), "shape": [int(d) for d in t.shape]}
                for t in items
            ]

        return {
            "mod_name": self.mod_name,
            "executor": "aot" if self.mod_name is not None else "system-lib",
            "inputs": tensors(self.inputs),
            "outputs": tensors(self.outputs),
            "sources": sorted(self.sources),
        }


def _platform_of(name: str) -> platforms.Platform:
    """The platform of a template's ``platform`` field (QEMU's loaded only when used)."""
    if name == "host":
        return platforms.HostPlatform()
    if name == "qemu":
        from .qemu_platform import QemuPlatform

        return QemuPlatform()
    raise TVMValueError(f"unknown microTVM template platform {name!r}; expected 'host' or 'qemu'")


def _is_aot_model(module: Any) -> bool:
    return all(hasattr(module, a) for a in ("lib", "mod_name", "inputs", "outputs"))


def _write_all(folder: Path, files: Mapping[str, str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        if Path(name).name != name:
            raise TVMValueError(f"generate_project: source name {name!r} is not a plain file name")
        (folder / name).write_text(text)


def _copy_runtime(runtime: Path) -> None:
    """The C runtime's sources and pytvm's C headers, laid out as in the package."""
    ignore = shutil.ignore_patterns("__pycache__", "*.o", "*.a")
    shutil.copytree(source_dir() / "crt", runtime / "src" / "crt", ignore=ignore)
    shutil.copytree(include_dir(), runtime / "include", ignore=ignore)


class GeneratedProject:
    """A generated project folder: ``build()``, ``flash()``, ``transport()``."""

    def __init__(self, project_dir: str | os.PathLike[str], options: Mapping[str, Any]) -> None:
        self.project_dir = Path(project_dir)
        info_file = self.project_dir / _PROJECT_FILE
        if not info_file.is_file():
            raise TVMValueError(f"{self.project_dir} is not a generated microTVM project")
        self._info: dict[str, Any] = json.loads(info_file.read_text())
        self._options = {**self._info["options"], **dict(options)}
        self._platform = _platform_of(self._info["platform"])
        self._device: platforms.FlashedDevice | None = None

    @classmethod
    def from_directory(
        cls, project_dir: str | os.PathLike[str], options: Mapping[str, Any] | None = None
    ) -> GeneratedProject:
        """The project already generated in ``project_dir`` (``options`` override its own)."""
        return cls(project_dir, options or {})

    @property
    def options(self) -> dict[str, Any]:
        """The project's options (the template's defaults filled in)."""
        return dict(self._options)

    def info(self) -> dict[str, Any]:
        """``project.json``: template, platform, options and the model's inputs and outputs."""
        return dict(self._info)

    def build(self) -> None:
        """Build the device (``make``); ``TVMError`` with the compiler's output on failure."""
        self._platform.build(self.project_dir, self._options)

    def flash(self) -> None:
        """Put the build on the device: the host has nothing to flash; QEMU is started."""
        if self._device is None:
            self._device = self._platform.flash(self.project_dir, self._options)

    @contextmanager
    def transport(self) -> Iterator[SessionTransport]:
        """A context manager giving the device's transport (flashing first if needed); leaving
        it ends the device (the process, the emulator).
        """
        self.flash()
        assert self._device is not None
        device, self._device = self._device, None
        transport = device.transport()
        try:
            yield transport
        finally:
            transport.close()

    def close(self) -> None:
        """Stop a flashed device that no transport took over."""
        if self._device is not None:
            device, self._device = self._device, None
            device.transport().close()


def generate_project(
    template_project_dir: str | os.PathLike[str],
    module: Any,
    generated_project_dir: str | os.PathLike[str],
    options: Mapping[str, Any] | None = None,
) -> GeneratedProject:
    """Generate a project for ``module`` from a template (TVM v0.18's signature).

    Parameters
    ----------
    template_project_dir : str or PathLike
        A template folder (``get_microtvm_template_projects(platform)``) or platform name.
    module : SourceModule, AOTExecutorFactoryModule or a Model Library Format model
        The C to build: kernels with a system library, or a whole AOT-compiled model.
    generated_project_dir : str or PathLike
        A new (or empty) folder for the project.
    options : dict, optional
        Template options (see the module docstring).

    Returns
    -------
    GeneratedProject
    """
    template = TemplateProject.from_directory(template_project_dir)
    return template.generate_project(module, generated_project_dir, options)


def generate_project_from_mlf(
    template_project_dir: str | os.PathLike[str],
    project_dir: str | os.PathLike[str],
    mlf_path: str | os.PathLike[str],
    options: Mapping[str, Any] | None = None,
) -> GeneratedProject:
    """Generate a project from a Model Library Format archive (TVM v0.18's signature)."""
    template = TemplateProject.from_directory(template_project_dir)
    return template.generate_project_from_mlf(mlf_path, project_dir, options)
