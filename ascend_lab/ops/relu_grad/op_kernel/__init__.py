"""ReluGrad kernels, one module per flavour (design §8).

* ``experimental`` -- ops-nn ``experimental/activation/relu_grad/op_kernel/relu_grad.h``, the custom package
  registered for ascend910b (``kernel_flavours.md`` §4): its own class, constants and per-dtype sequences.
"""

from .experimental import BUFFER_NUM, KernelReluGrad, launch, relu_grad, template_args

__all__ = ["BUFFER_NUM", "KernelReluGrad", "launch", "relu_grad", "template_args"]
