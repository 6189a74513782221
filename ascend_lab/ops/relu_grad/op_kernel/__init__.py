"""ReluGrad kernels, one module per flavour (design §8); the AscendC one is C++ in a folder of its own.

* ``experimental`` -- ``experimental/`` (ops-nn ``experimental/activation/relu_grad/op_kernel/``), the custom package
  registered for ascend910b (``kernel_flavours.md`` §4): its own class, constants and per-dtype sequences.
* ``main`` -- the 950 kernel, a DAG on the atvoss template; ``tbe`` -- the legacy TBE kernel.
"""

from .experimental import BUFFER_NUM, SOURCE_DIR, launch, relu_grad, template_args

__all__ = ["BUFFER_NUM", "SOURCE_DIR", "launch", "relu_grad", "template_args"]
