"""Launching an operator built on the atvoss template with the L0 graph's aclTensors (phase 2).

Every template operator launches the same way -- ``BroadcastSch<schMode, Dag>`` on the inputs with their own
shapes -- so the operators' ``op_kernel/main.py`` share this one function instead of each carrying a copy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ...acl.tensor import aclTensor
from ...ascendc import KernelRun
from ...ascendc import launch as _launch
from ...atvoss import BroadcastBaseTilingData
from ...atvoss.kernel import TemplateOp
from .kernel_args import gm_arg, launch_options

__all__ = ["launch_template"]


def launch_template(op: TemplateOp, entry: Callable[..., None], td: Any, inputs: Sequence[aclTensor],
                    out: aclTensor, soc: Any, names: Sequence[str], *, record: bool | None = None,
                    cores: Any = None, **attrs: Any) -> KernelRun:
    """Launch ``entry`` on ``td.blockDim`` cores. When the inputs' shapes differ from the output's (a broadcast)
    and ``td`` is the one-dim tiling of the element count, the tiling is redone on the shapes, as the real host
    tiling reads each input's shape; ``attrs`` are the op's tiling attributes for that. The template's
    buffering is its ping/pong slots, so there is no BUFFER_NUM to pass."""
    rec, _ = launch_options(record, None, 2)
    shapes = [tuple(t.shape) for t in inputs]
    if any(s != tuple(out.shape) for s in shapes) and not isinstance(td, BroadcastBaseTilingData):
        td = op.tiling_for_shapes(shapes, tuple(out.shape), inputs[0].dtype, soc.vector_core_num,
                                  soc.core_mem_size_ub, **attrs)
    args = [gm_arg(t, name) for t, name in zip((*inputs, out), names, strict=True)]
    return _launch(entry, td.blockDim, args, td.to_bytes(), soc, outputs=(len(inputs),), record=rec,
                   kernel_name=op.name, tiling_data=td, cores=cores, **op.template_args(td, inputs[0].dtype))
