"""``topi.cuda``, ``topi.arm_cpu`` ...: TVM's per-target names resolve (dispatch tables name
them at import) and calling one raises, naming the target pytvm does not compile for.
"""

from __future__ import annotations

import pytest

from pytvm import te, topi
from pytvm.ffi.errors import TVMError


@pytest.mark.parametrize("namespace", ["cuda", "gpu", "rocm", "mali", "hls", "arm_cpu"])
def test_calling_a_name_of_another_target_raises(namespace: str) -> None:
    module = getattr(topi, namespace)
    A = te.placeholder((4,), name="A")
    with pytest.raises(TVMError, match=rf"topi\.{namespace}\.schedule_softmax: pytvm has no"):
        module.schedule_softmax([topi.nn.softmax(A)])


@pytest.mark.parametrize("name", ["__wrapped__", "pytest_plugins", "setup_module", "test_x"])
def test_private_and_tool_names_are_missing(name: str) -> None:
    with pytest.raises(AttributeError):
        getattr(topi.cuda, name)
