"""The ONNX element types pytvm computes with, and their numpy dtypes.

Only these convert; any other (strings, bfloat16, the float8/float4/int4 kinds) is refused by
name. The list is explicit on purpose: older onnx packages map the float8 kinds to a float32
storage dtype, and taking that mapping would compute float32 where the model asks for float8.

Examples
--------
>>> from onnx import TensorProto
>>> element_dtype(TensorProto.FLOAT16), element_dtype(TensorProto.FLOAT8E4M3FN)
('float16', None)
"""

from __future__ import annotations

__all__ = ["element_dtype", "element_type_name"]

# TensorProto.DataType code -> numpy dtype name (the codes are fixed by the ONNX standard).
_SUPPORTED = {
    1: "float32",  # FLOAT
    2: "uint8",
    3: "int8",
    4: "uint16",
    5: "int16",
    6: "int32",
    7: "int64",
    9: "bool",
    10: "float16",
    11: "float64",  # DOUBLE
    12: "uint32",
    13: "uint64",
}


def element_dtype(code: int) -> str | None:
    """The numpy dtype name of ONNX element type ``code``, or ``None`` when pytvm lacks it."""
    return _SUPPORTED.get(int(code))


def element_type_name(code: int) -> str:
    """The ONNX name of element type ``code`` (``FLOAT8E4M3FN``), or the number."""
    from onnx import TensorProto

    try:
        return str(TensorProto.DataType.Name(int(code)))
    except ValueError:
        return str(code)
