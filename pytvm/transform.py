"""TVM's ``tvm.transform`` names: ``PassContext`` (compilation options) and ``Pass``.

Examples
--------
>>> import pytvm
>>> with pytvm.transform.PassContext(opt_level=3, config={"tir.disable_vectorize": True}):
...     pytvm.transform.PassContext.current().get("tir.disable_vectorize")
True
"""

from __future__ import annotations

from .ir.transform import Pass, PassContext, PassInstrument, Sequential, sequential

__all__ = ["Pass", "PassContext", "PassInstrument", "Sequential", "sequential"]
