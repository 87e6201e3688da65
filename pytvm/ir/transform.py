"""TVM's ``tvm.ir.transform`` names: ``PassContext`` (compilation options), ``Pass`` and
``Sequential``-style composition (``sequential``), as :mod:`pytvm.tir.transform` defines them.

Examples
--------
>>> from pytvm.ir import transform
>>> with transform.PassContext(opt_level=3):
...     transform.PassContext.current().opt_level
3
"""

from __future__ import annotations

from ..tir.transform.pass_infra import Pass, PassContext, sequential

__all__ = ["Pass", "PassContext", "sequential"]
