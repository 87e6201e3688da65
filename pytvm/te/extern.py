"""Extern operations (TVM's ``te.extern``): outputs a loop-IR statement computes from buffers.

``te.extern(shape, inputs, fcompute)`` hands ``fcompute`` one buffer per input and per output
and takes back the statement (or call expression) that fills the outputs, e.g. a
``tir.call_packed`` of a library function or an ``ir_builder`` program. Lowering binds those
buffers to the tensors' real ones.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from ..ffi.errors import TVMTypeError, TVMValueError
from ..tir import stmt as S
from ..tir.buffer import decl_buffer
from ..tir.expr import Buffer, ExprLike, PrimExpr, convert
from .tag import current_tag
from .tensor import Operation, Tensor

__all__ = ["ExternOp", "extern"]


@dataclass(frozen=True, slots=True, eq=False)
class ExternOp(Operation):
    """Outputs written by ``body``, which reads ``input_placeholders`` and writes
    ``output_placeholders`` (the buffers of ``inputs`` and of the outputs, TVM's ``ExternOp``).
    """

    name: str
    tag: str
    attrs: Mapping[str, Any]
    inputs: tuple[Tensor, ...]
    input_placeholders: tuple[Buffer, ...]
    output_placeholders: tuple[Buffer, ...]
    body: S.Stmt  # type: ignore[assignment]

    def __post_init__(self) -> None:
        object.__setattr__(self, "attrs", MappingProxyType(dict(self.attrs)))
        if len(self.inputs) != len(self.input_placeholders):
            raise TVMValueError(
                f"extern {self.name!r}: {len(self.inputs)} inputs but "
                f"{len(self.input_placeholders)} input buffers"
            )

    @property
    def num_outputs(self) -> int:
        """One output per output buffer."""
        return len(self.output_placeholders)

    @property
    def input_tensors(self) -> tuple[Tensor, ...]:
        """The tensors the statement reads."""
        return self.inputs

    def output_shape(self, index: int) -> tuple[PrimExpr, ...]:
        """The shape of output buffer ``index``."""
        return self.output_placeholders[index].shape

    def output_dtype(self, index: int) -> str:
        """The element type of output buffer ``index``."""
        return self.output_placeholders[index].dtype


def _shapes(value: Any) -> list[tuple[ExprLike, ...]]:
    """One shape per output, from a shape or a list of shapes."""
    if not isinstance(value, (list, tuple)):
        return [(value,)]
    if not any(isinstance(d, (list, tuple)) for d in value):
        return [tuple(value)]
    return [tuple(s) if isinstance(s, (list, tuple)) else (s,) for s in value]


def extern(
    shape: ExprLike | Sequence[ExprLike] | Sequence[Sequence[ExprLike]],
    inputs: Sequence[Tensor],
    fcompute: Callable[[list[Buffer], list[Buffer]], S.Stmt | PrimExpr],
    name: str = "extern",
    dtype: str | Sequence[str] | None = None,
    in_buffers: Buffer | Sequence[Buffer] | None = None,
    out_buffers: Buffer | Sequence[Buffer] | None = None,
    tag: str = "",
    attrs: Mapping[str, Any] | None = None,
) -> Tensor | list[Tensor]:
    """Tensors computed by the statement ``fcompute(input_buffers, output_buffers)``.

    ``shape`` is one output's shape or a list of shapes; ``dtype`` (one, or one per output)
    defaults to the first input's type. Returns a tensor, or a list for several outputs.

    Examples
    --------
    >>> from pytvm import te, tir
    >>> A = te.placeholder((4,), name="A")
    >>> B = te.extern((4,), [A], lambda ins, outs: tir.call_packed("f", ins[0].data, outs[0].data))
    >>> B.op.name, [str(d) for d in B.shape], B.op.input_tensors == (A,)
    ('extern', ['4'], True)
    """
    shapes = _shapes(shape)
    ins = list(inputs)
    for t in ins:
        if not isinstance(t, Tensor):
            raise TVMTypeError(f"extern {name!r}: inputs must be tensors, got {t!r}")
    default = ins[0].dtype if ins else "float32"
    dtypes = [dtype] * len(shapes) if dtype is None or isinstance(dtype, str) else list(dtype)
    if len(dtypes) != len(shapes):
        raise TVMValueError(f"extern {name!r}: {len(dtypes)} dtypes for {len(shapes)} outputs")
    in_bufs = _buffers(in_buffers, [(t.shape, t.dtype, t.op.name) for t in ins], name, "in")
    out_bufs = _buffers(
        out_buffers,
        [(s, d or default, name) for s, d in zip(shapes, dtypes, strict=True)],
        name,
        "out",
    )
    body = fcompute(list(in_bufs), list(out_bufs))
    if isinstance(body, (PrimExpr, int)):
        body = S.Evaluate(convert(body))
    if not isinstance(body, S.Stmt):
        raise TVMTypeError(
            f"extern {name!r}: fcompute must return a statement or a call, got {body!r}"
        )
    op = ExternOp(
        name, current_tag(tag, name), dict(attrs or {}), tuple(ins), in_bufs, out_bufs, body
    )
    outputs = [op.output(k) for k in range(op.num_outputs)]
    return outputs[0] if len(outputs) == 1 else outputs


def _buffers(
    given: Buffer | Sequence[Buffer] | None,
    specs: list[tuple[Sequence[ExprLike], str, str]],
    name: str,
    what: str,
) -> tuple[Buffer, ...]:
    if given is None:
        return tuple(decl_buffer(s, d, n) for s, d, n in specs)
    bufs = (given,) if isinstance(given, Buffer) else tuple(given)
    if len(bufs) != len(specs):
        raise TVMValueError(f"extern {name!r}: {len(bufs)} {what}_buffers for {len(specs)} tensors")
    for b, (_, d, _) in zip(bufs, specs, strict=True):
        if b.dtype != d:
            raise TVMValueError(
                f"extern {name!r}: {what}_buffer {b.name} has dtype {b.dtype}, the tensor {d}"
            )
    return bufs
