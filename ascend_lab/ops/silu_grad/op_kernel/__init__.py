"""SiluGrad's one kernel, flavour ``experimental``: C++ in ``experimental/silu_grad.cpp`` (+ ``.h``), through the
C++ front end; :func:`launch` runs it on the L0 graph's tensors (phase 2)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ....ascendc import KernelRun
from ....ascendc import launch as _launch
from ....ascendc.cxx import KernelFile
from ....dtypes import bfloat16
from ...common.kernel_args import gm_arg, launch_options
from ..op_host import BUFFER_NUM, tiling_dtype

__all__ = ["ARGS", "launch", "silu_grad", "template_args"]

ARGS = ("dy", "x", "dx")
#: The ``__global__`` entry, compiled per dtype on first launch; ``bufferNum`` overrides BUFFER_NUM.
silu_grad = KernelFile(Path(__file__).parent / "experimental" / "silu_grad.cpp", entry="silu_grad",
                       knobs={"bufferNum": "BUFFER_NUM"}, dtype_macros={"dtype": "DTYPE_DY"})


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
    return _launch(silu_grad, td.blockDim, args, td.to_bytes(), soc, outputs=(len(args) - 1,), record=rec,
                   kernel_name="SiluGrad", tiling_data=td, cores=cores, **template_args(td, None, bn))
