"""ThresholdGradV2D kernels, one module per flavour (design §8).

* ``experimental`` -- ops-nn ``experimental/activation/threshold_grad_v2_d/op_kernel/``: the 256-byte-block
  kernel the seed articles describe, built only as a custom package, registered for ascend910b.

The package's own names are the experimental kernel's, so ``op_kernel.KernelThresholdGradV2D`` keeps working.
"""

from .experimental import (
    BACK_MODE,
    BUFFER_NUM,
    KernelThresholdGradV2D,
    launch,
    template_args,
    threshold_grad_v2_d,
)

__all__ = ["BACK_MODE", "BUFFER_NUM", "KernelThresholdGradV2D", "launch", "template_args", "threshold_grad_v2_d"]
