"""HardSwishGrad's one kernel, flavour ``experimental``: C++ in ``experimental/hard_swish_grad.cpp``, through
the C++ front end; :func:`launch` runs it on the L0 graph's tensors (phase 2)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ....ascendc import KernelRun
from ....ascendc import launch as _launch
from ....ascendc.cxx import KernelFile
from ....base.platform import get_soc
from ....dtypes import bfloat16
from ...common.kernel_args import gm_arg, launch_options
from ..op_host import BUFFER_NUM, tiling_dtype

__all__ = ["ARGS", "kernel_file", "launch", "hard_swish_grad", "template_args"]

ARGS = ("dy", "x", "dx")
_CPP = Path(__file__).parent / "experimental" / "hard_swish_grad.cpp"
_FILES: dict[int, KernelFile] = {}


def kernel_file(arch: int = 2201) -> KernelFile:
    """The ``__global__`` entry built for one architecture (``-D __NPU_ARCH__=<arch>``: the kernel's Atlas-training
    branch needs it), compiled per dtype on first launch; ``bufferNum`` overrides BUFFER_NUM."""
    f = _FILES.get(arch)
    if f is None:
        f = _FILES[arch] = KernelFile(_CPP, entry="hard_swish_grad",
                                      knobs={"bufferNum": "BUFFER_NUM"}, dtype_macros={"dtype": "DTYPE_DY"},
                                      defines={"__NPU_ARCH__": arch})
    return f


#: The entry as built for Atlas A2/A3 (what the tools show).
hard_swish_grad = kernel_file()


def template_args(td: Any, dtype: Any, buffer_num: int = BUFFER_NUM) -> dict[str, Any]:
    """``schMode`` (one schedule), ``DTYPE_DY`` from the tiling key, BUFFER_NUM."""
    name = tiling_dtype(td)
    return {"schMode": 0, "dtype": np.dtype(bfloat16 if name == "bfloat16" else name), "bufferNum": buffer_num}


def launch(td: Any, *tensors: Any, record: bool | None = None, buffer_num: int | None = None,
           cores: Any = None) -> KernelRun:
    """Launch on ``td.blockDim`` cores with the GM tensors ``dy, x, dx`` and the SoC last."""
    *gm, soc = tensors
    rec, bn = launch_options(record, buffer_num, BUFFER_NUM)
    args = [gm_arg(t, name) for t, name in zip(gm, ARGS, strict=True)]
    arch = int(get_soc(soc).npu_arch) if isinstance(soc, str) else int(soc.npu_arch)
    return _launch(kernel_file(arch), td.blockDim, args, td.to_bytes(), soc, outputs=(len(args) - 1,), record=rec,
                   kernel_name="HardSwishGrad", tiling_data=td, cores=cores, **template_args(td, None, bn))
