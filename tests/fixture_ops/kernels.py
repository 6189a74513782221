"""Launching a fixture operator's C++ kernel with the L0 graph's aclTensors (phase 2), as ``ops/*/op_kernel`` do."""

from __future__ import annotations

from typing import Any

import numpy as np

from ascend_lab.ascendc import KernelRun
from ascend_lab.ascendc import launch as _launch
from ascend_lab.ascendc.cxx import KernelFile
from ascend_lab.ops.common.kernel_args import gm_arg, launch_options

from .common import BUFFER_NUM


def template_args(td: Any, dtype: Any, buffer_num: int = BUFFER_NUM) -> dict[str, Any]:
    """``schMode`` (unused: one schedule), ``DTYPE_X`` from the tiling key, BUFFER_NUM."""
    return {"schMode": 0, "dtype": np.dtype(np.float32 if td.tilingKey == 0 else np.float16), "bufferNum": buffer_num}


def launcher(entry: KernelFile, op_type: str, names: tuple[str, ...]) -> Any:
    """The ``KernelSpec.launch`` of a kernel whose GM arguments are ``names`` (the inputs, then the output)."""
    def launch(td: Any, *tensors: Any, record: bool | None = None, buffer_num: int | None = None,
               cores: Any = None) -> KernelRun:
        *gm, soc = tensors
        rec, bn = launch_options(record, buffer_num, BUFFER_NUM)
        args = [gm_arg(t, name) for t, name in zip(gm, names, strict=True)]
        return _launch(entry, td.blockDim, args, td.to_bytes(), soc, outputs=(len(args) - 1,), record=rec,
                       kernel_name=op_type, tiling_data=td, cores=cores, **template_args(td, None, bn))
    return launch
