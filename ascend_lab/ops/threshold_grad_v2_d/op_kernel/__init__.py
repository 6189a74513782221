"""ThresholdGradV2D kernels, one module per flavour (design §8); the AscendC one is C++ in a folder of its own.

* ``experimental`` -- ``experimental/`` (ops-nn ``experimental/activation/threshold_grad_v2_d/op_kernel/``): the
  256-byte-block kernel the seed articles describe, built only as a custom package, registered for ascend910b.
* ``main`` -- the 950 kernel, a DAG on the atvoss template; ``tbe`` -- the legacy TBE kernel.

The package's own names are the experimental kernel's (``op_kernel.threshold_grad_v2_d`` is its entry).
"""

from .experimental import BUFFER_NUM, SOURCE_DIR, launch, template_args, threshold_grad_v2_d

__all__ = ["BUFFER_NUM", "SOURCE_DIR", "launch", "template_args", "threshold_grad_v2_d"]
