"""ReluGrad kernels, one module per flavour (design §8).

* ``experimental`` -- ops-nn ``experimental/activation/relu_grad/op_kernel/``, registered for ascend910b
  (modelled today on ThresholdGradV2D's skeleton; see the module's note).
"""

from .experimental import BUFFER_NUM, launch, relu_grad, template_args

__all__ = ["BUFFER_NUM", "launch", "relu_grad", "template_args"]
