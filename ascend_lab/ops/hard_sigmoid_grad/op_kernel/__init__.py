"""HardSigmoidGrad kernels, one module per flavour (design §8).

* ``experimental`` -- ops-nn ``experimental/activation/hard_sigmoid_grad/op_kernel/arch35/``: the kernel the
  seed articles describe, built only as a custom package, registered for ascend950.
* ``main`` -- ops-nn ``activation/hard_sigmoid_grad/op_kernel/arch35/``: the built-in kernel a stock CANN runs
  on ascend950 (fp16/bf16 computed in fp32 with alpha 1/6f, rounded back once); import it as
  ``op_kernel.main``.

The package's own names are the experimental kernel's, so ``op_kernel.KernelHardSigmoidGrad`` keeps working.
"""

from .experimental import BUFFER_NUM, REPEAT_BYTES, KernelHardSigmoidGrad, hard_sigmoid_grad, launch, template_args

__all__ = ["BUFFER_NUM", "REPEAT_BYTES", "KernelHardSigmoidGrad", "hard_sigmoid_grad", "launch", "template_args"]
